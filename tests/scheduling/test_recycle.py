"""Recycling (Koordinator's overuse revoke, seed 001) through the store and the Celery task: the debounce lives in
the database, so it survives worker restarts; evictions are recorded like a session's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from quotas.models import Namespace
from scheduling import sessions, tasks
from scheduling.models import Eviction, Pod, QuotaOverState, SchedulingSession
from tests.scheduling.conftest import World, build_world, rl

pytestmark = pytest.mark.django_db

RECYCLING_POLICY = """\
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
  - name: elasticquota
    arguments:
      monitorAllQuotas: true
      delayEvictTime: 120s
"""
T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


def _overused_world(policy: str = RECYCLING_POLICY) -> World:
    """qa and qb (min 12 cpu each, max 24) share 24 cpu. qa runs 5 pods of 4 cpu (used 20) while qb asks for 12:
    qa's runtime is 12, so qa is 8 cpu over and two of its pods must go. a-4 is the least important but is not
    preemptible; a-1 started after a-0 at the same priority, so it goes first."""
    world = build_world(nodes=3)
    world.cluster.scheduler_policy = policy
    world.cluster.save()
    Pod.objects.filter(cluster=world.cluster).delete()
    ns_a, ns_b = Namespace.objects.get(name="ns-a"), Namespace.objects.get(name="ns-b")
    placement = ["n1", "n1", "n2", "n2", "n3"]
    priorities = [0, 0, 10, 50, 0]
    for k in range(5):
        Pod.objects.create(
            cluster=world.cluster,
            namespace=ns_a,
            name=f"a-{k}",
            request=rl(cpu="4"),
            quota_group=ns_a.quota_group,
            status="Running",
            node=world.nodes[placement[k]],
            priority=priorities[k],
            preemptible=k != 4,
            started=T0 - timedelta(seconds=100 - 10 * k),
        )
    for k in range(3):
        Pod.objects.create(
            cluster=world.cluster, namespace=ns_b, name=f"b-{k}", request=rl(cpu="4"), quota_group=ns_b.quota_group
        )
    return world


def test_debounce_then_least_important_pods_are_evicted() -> None:
    world = _overused_world()
    cid = world.cluster.pk
    with time_machine.travel(T0, tick=False) as clock:
        assert tasks.recycle(cid) == "ran"
        state = QuotaOverState.objects.get(cluster=world.cluster)
        assert (state.name, state.over_since) == ("qa", T0)
        clock.shift(timedelta(seconds=119))
        assert tasks.recycle(cid) == "ran"
        assert not Eviction.objects.exists()
        assert QuotaOverState.objects.get(name="qa").over_since == T0  # kept, not moved
        clock.shift(timedelta(seconds=2))  # 121 s over: longer than delayEvictTime
        assert tasks.recycle(cid) == "ran"
        evicted = list(Eviction.objects.order_by("pod_uid").values_list("pod_uid", "action"))
        assert evicted == [("ns-a/a-0", "recycle"), ("ns-a/a-1", "recycle")]
        assert set(Pod.objects.filter(status="Releasing").values_list("name", flat=True)) == {"a-0", "a-1"}
        assert Pod.objects.get(name="a-4").status == "Running"  # not preemptible: never a victim
        row = SchedulingSession.objects.get(kind="recycle")
        assert (row.status, row.evicted) == ("ok", 2)
        assert all(e.message for e in Eviction.objects.all())
        # the clock restarts after a trigger; a second pass evicts nothing new (the victims are Releasing)
        clock.shift(timedelta(seconds=1))
        assert tasks.recycle(cid) == "ran"
        assert Eviction.objects.count() == 2


def test_a_gang_is_recycled_whole_through_the_store() -> None:
    """a-0..a-3 form one gang (minMember 4): evicting a-0 and a-1 alone would leave a-2 and a-3 holding 8 cpu for
    a job that cannot run, so the four go together (qa then uses 4 cpu of its runtime 12)."""
    from scheduling.models import PodGroup

    world = _overused_world(RECYCLING_POLICY + "      revokeWholeGangs: true\n")
    pg = world.podgroups["ns-a/pg-a"]
    PodGroup.objects.filter(pk=pg.pk).update(min_member=4, min_resources=None, phase="Running")
    Pod.objects.filter(cluster=world.cluster, name__in=[f"a-{k}" for k in range(4)]).update(podgroup=pg)
    with time_machine.travel(T0, tick=False) as clock:
        assert tasks.recycle(world.cluster.pk) == "ran"
        clock.shift(timedelta(seconds=121))
        assert tasks.recycle(world.cluster.pk) == "ran"
    evicted = sorted(Eviction.objects.values_list("pod_uid", flat=True))
    assert evicted == [f"ns-a/a-{k}" for k in range(4)]
    assert "evicted with its gang ns-a/pg-a (4 of its 4 ready pods): fewer than minMember 4 cannot run" in (
        Eviction.objects.get(pod_uid="ns-a/a-2").message
    )
    assert Pod.objects.get(name="a-4").status == "Running"


def test_a_restarted_worker_keeps_the_debounce(fake_engine: Any) -> None:
    """The state handed to the engine is the one the previous pass stored, whatever process ran it."""
    world = _overused_world()

    def answer(snapshot: Any, now: float, over_since: dict[str, float]) -> tuple[list[Any], dict[str, float]]:
        return [], {"qa": over_since.get("qa", now)}

    fake_engine.recycle_answer = answer
    with time_machine.travel(T0, tick=False) as clock:
        sessions.run_recycle_pass(world.cluster)
        clock.shift(timedelta(seconds=30))
        sessions.run_recycle_pass(world.cluster)
    assert fake_engine.recycle_calls == [{}, {"qa": T0.timestamp()}]
    fake_engine.recycle_answer = lambda snapshot, now, over: ([], {})  # qa no longer over: the row goes
    sessions.run_recycle_pass(world.cluster)
    assert not QuotaOverState.objects.exists()


def test_recycling_is_off_unless_the_policy_monitors_quotas(fake_engine: Any) -> None:
    world = _overused_world(policy="")  # Volcano's default: no elasticquota plugin
    QuotaOverState.objects.create(cluster=world.cluster, name="qa", over_since=timezone.now())
    assert tasks.recycle(world.cluster.pk) == "ran"
    assert fake_engine.recycle_calls == [] and not QuotaOverState.objects.exists()


def test_pods_an_admin_made_non_preemptible_above_min_are_still_recycled(admin_api: Any) -> None:
    """Issue 25, item 3: qa borrowed with preemptible pods (20 cpu against a min and runtime of 12), then every pod
    was made non-preemptible. A team member can no longer do that (tests/api/test_job_priority.py); an admin can,
    and still only what fits within min is protected: the most important pods up to 12 cpu (a-3, a-2, then a-0,
    the earliest started of priority 0) stay, and the borrowed 8 cpu is recycled when the lender needs it."""
    world = _overused_world()
    for pod in Pod.objects.filter(cluster=world.cluster, namespace__name="ns-a"):
        r = admin_api.patch(f"/api/v1/pods/{pod.pk}/", {"preemptible": False}, format="json")
        assert r.status_code == 200, r.content
    assert not Pod.objects.filter(namespace__name="ns-a", preemptible=True).exists()
    with time_machine.travel(T0, tick=False) as clock:
        assert tasks.recycle(world.cluster.pk) == "ran"
        clock.shift(timedelta(seconds=121))
        assert tasks.recycle(world.cluster.pk) == "ran"
    assert sorted(Eviction.objects.values_list("pod_uid", flat=True)) == ["ns-a/a-1", "ns-a/a-4"]
    assert "non-preemptible, but above the group's min" in Eviction.objects.get(pod_uid="ns-a/a-4").message
    assert set(Pod.objects.filter(status="Running").values_list("name", flat=True)) == {"a-0", "a-2", "a-3"}
