"""The recycling warning (issue 26 item 4): what recycling will take unless usage falls, computed once
(``scheduling.recycle_outlook``) from the engine's own victim choice, with the numbers at a fixed ``now``."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from scheduling import tasks
from scheduling.models import Eviction, Pod, QuotaOverState
from scheduling.recycle_outlook import recycle_warnings
from tests.scheduling.test_recycle import RECYCLING_POLICY, T0, _overused_world

pytestmark = pytest.mark.django_db


def _recorded(world: object) -> None:
    """A recycling pass at T0 records qa as over (the time the warning counts from)."""
    with time_machine.travel(T0, tick=False):
        assert tasks.recycle(world.cluster.pk) == "ran"  # type: ignore[attr-defined]
    assert QuotaOverState.objects.get().over_since == T0


def test_the_warning_counts_the_pods_the_amount_and_the_time_left() -> None:
    world = _overused_world()
    _recorded(world)
    [w] = recycle_warnings(world.cluster, now=T0 + timedelta(seconds=20))
    assert w.group == "qa"
    assert sorted(v.pod for v in w.victims) == ["ns-a/a-0", "ns-a/a-1"]  # a-4 is not preemptible, a-2/a-3 matter more
    assert w.falls_to == {"cpu": 12000} and w.used == {"cpu": 20000}
    assert w.seconds_left == 100.0
    assert w.sentence == "2 pods will be recycled in about 1 min 40 s unless usage falls to 12 cores"
    assert w.detail == "quota group qa uses 20 cores, above its runtime 12 cores, for 20 s (delayEvictTime 2 min)"


def test_the_warning_names_the_pods_recycling_then_takes() -> None:
    """The dry run and the pass are one victim choice: the pods warned about are the pods evicted."""
    world = _overused_world()
    _recorded(world)
    [w] = recycle_warnings(world.cluster, now=T0 + timedelta(seconds=121))
    assert w.seconds_left == 0.0 and w.when == "any moment now"
    assert w.sentence == "2 pods will be recycled any moment now unless usage falls to 12 cores"
    with time_machine.travel(T0 + timedelta(seconds=121), tick=False):
        assert tasks.recycle(world.cluster.pk) == "ran"
    assert sorted(Eviction.objects.values_list("pod_uid", flat=True)) == sorted(v.pod for v in w.victims)
    # the victims are leaving: usage is within the runtime and the warning is gone
    assert recycle_warnings(world.cluster, now=T0 + timedelta(seconds=122)) == []


def test_no_warning_once_usage_falls_to_the_runtime() -> None:
    world = _overused_world()
    _recorded(world)
    Pod.objects.filter(cluster=world.cluster, name__in=["a-0", "a-1"]).update(status="Succeeded")
    assert QuotaOverState.objects.exists()  # the pass has not run since: the recorded time alone warns of nothing
    assert recycle_warnings(world.cluster, now=T0 + timedelta(seconds=20)) == []


def test_one_pod_falling_short_still_leaves_one_to_take() -> None:
    world = _overused_world()
    _recorded(world)
    Pod.objects.filter(cluster=world.cluster, name="a-1").update(status="Succeeded")  # used 16, runtime 12
    [w] = recycle_warnings(world.cluster, now=T0 + timedelta(seconds=30))
    assert [v.pod for v in w.victims] == ["ns-a/a-0"]
    assert w.sentence == "1 pod will be recycled in about 1 min 30 s unless usage falls to 12 cores"


def test_nothing_is_said_before_a_pass_records_the_group_or_when_recycling_is_off() -> None:
    world = _overused_world()
    assert recycle_warnings(world.cluster, now=T0) == []  # no pass has seen it over yet
    _recorded(world)
    world.cluster.scheduler_policy = RECYCLING_POLICY.replace("monitorAllQuotas: true", "monitorAllQuotas: false")
    world.cluster.save()
    assert recycle_warnings(world.cluster, now=T0 + timedelta(seconds=20)) == []


def test_the_api_gives_the_warning_to_the_jobs_it_would_take_pods_of(admin_api: object) -> None:
    from scheduling.models import PodGroup

    world = _overused_world()
    pg = world.podgroups["ns-a/pg-a"]
    PodGroup.objects.filter(pk=pg.pk).update(phase="Running")
    Pod.objects.filter(cluster=world.cluster, name__in=["a-1", "a-2"]).update(podgroup=pg)
    _recorded(world)
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        data = admin_api.get(f"/api/v1/podgroups/{pg.pk}/why/").json()  # type: ignore[attr-defined]
    [w] = data["recycling"]
    assert w["sentence"] == "2 pods will be recycled in about 1 min 40 s unless usage falls to 12 cores"
    assert (w["quota_group"], w["pods"], w["job_pods"], w["victims"]) == ("qa", 2, 1, ["ns-a/a-1"])
    assert w["resources"] == [
        {"resource": "cpu", "used": 20000, "runtime": 12000, "used_text": "20 cores", "runtime_text": "12 cores"}
    ]
    assert w["seconds_left"] == 100.0
