"""``/metrics``: evictions per tree node by action and the thrash among them (issue 26 item 4), cumulative in the
database (``scheduling.counters``) like the session counters, so every process answers the same and they outlive
the eviction rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.conf import settings
from django.db import transaction
from django.test import override_settings

from engine.session import decisions
from quotas.models import Namespace
from scheduling import agent, store, tasks
from scheduling.models import Eviction, Node, Pod
from security.tokens import create_token
from tests.api.test_metrics import scrape, value
from tests.scheduling.conftest import rl
from tests.scheduling.test_recycle import T0, _overused_world

pytestmark = pytest.mark.django_db


def _evict(cluster: Any, now: Any, *evictions: tuple[str, str]) -> None:
    """Write a session that evicts these pods (uid, action), as the engine's decisions are written."""
    result = decisions.SessionResult(
        evictions=[
            decisions.Eviction(task=uid, action=action, reason="Test", message="test") for uid, action in evictions
        ]
    )
    store.apply_decisions(cluster, result, now)


def test_every_kind_of_eviction_is_counted_per_tree_node_and_thrash_apart(client: Any, make_user: Any) -> None:
    world = _overused_world()
    cluster = world.cluster
    ns_a, ns_b = Namespace.objects.get(name="ns-a"), Namespace.objects.get(name="ns-b")
    now = T0 + timedelta(seconds=130)
    with time_machine.travel(T0, tick=False) as clock:  # recycling: a-0 and a-1, running 100 and 90 s at T0
        assert tasks.recycle(cluster.pk) == "ran"
        clock.shift(timedelta(seconds=121))
        assert tasks.recycle(cluster.pk) == "ran"
    # in team-a / qa: a pod running for 10 s and one bound but never started (both thrash if evicted), in pg-a a pod
    # running for 5 minutes (a gang released: not thrash); in team-b / qb a pod running 20 s on n3 (lost with it)
    Pod.objects.create(
        cluster=cluster, namespace=ns_a, name="fresh", request=rl(cpu="1"), quota_group=ns_a.quota_group,
        status="Running", node=world.nodes["n1"], started=now - timedelta(seconds=10),
    )  # fmt: skip
    Pod.objects.create(
        cluster=cluster, namespace=ns_a, name="bound", request=rl(cpu="1"), quota_group=ns_a.quota_group,
        status="Bound", node=world.nodes["n1"],
    )  # fmt: skip
    Pod.objects.create(
        cluster=cluster, namespace=ns_a, name="gang-0", podgroup=world.podgroups["ns-a/pg-a"], request=rl(cpu="1"),
        quota_group=ns_a.quota_group, status="Running", node=world.nodes["n2"], started=now - timedelta(minutes=5),
    )  # fmt: skip
    Pod.objects.create(
        cluster=cluster, namespace=ns_b, name="lost", request=rl(cpu="1"), quota_group=ns_b.quota_group,
        status="Running", node=world.nodes["n3"], started=now - timedelta(seconds=20),
    )  # fmt: skip

    _evict(cluster, now, ("ns-a/fresh", "reclaim"), ("ns-a/bound", "preempt"), ("ns-a/a-2", "preempt"))
    _evict(cluster, now, ("ns-a/gang-0", "gang-release"))
    try:  # a rolled-back session counts nothing
        with transaction.atomic():
            _evict(cluster, now, ("ns-a/a-3", "reclaim"))
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    n3 = Node.objects.get(cluster=cluster, name="n3")
    on_n3 = Pod.objects.filter(node=n3, status__in=["Running", "Bound"]).count()  # a-4 and lost
    Node.objects.filter(pk=n3.pk).update(ready=False, not_ready_since=now - timedelta(hours=1))
    assert agent.evict_lost_nodes(cluster, now)["lost"] == on_n3 == 2
    assert Eviction.objects.filter(cluster=cluster).count() == 2 + 3 + 1 + 2
    Eviction.objects.all().delete()  # retention: the counters outlive the rows

    token = create_token(make_user("admin", staff=True), "test")[1]
    metrics = scrape(client, Authorization=f"Token {token}")

    def evictions(kind: str, name: str, action: str, thrash: bool = False) -> float | None:
        metric = f"fairway_{kind}_{'thrash_evictions' if thrash else 'evictions'}_total"
        return value(metrics, metric, cluster="c1", **{kind: name}, action=action)

    for kind, a, b in (("queue", "team-a", "team-b"), ("quota_group", "qa", "qb")):
        assert evictions(kind, a, "recycle") == 2
        assert evictions(kind, a, "reclaim") == 1  # fresh (a-3's session was rolled back)
        assert evictions(kind, a, "preempt") == 2  # bound and a-2
        assert evictions(kind, a, "gang-release") == 1
        assert evictions(kind, a, "node-lost") == 1  # a-4
        assert evictions(kind, b, "node-lost") == 1  # lost
        # thrash: fresh (10 s) and bound (never started); not a-2 (running 210 s), the recycled pods (100, 90 s),
        # the gang (5 min), nor a node lost (not a scheduling decision)
        assert evictions(kind, a, "reclaim", thrash=True) == 1
        assert evictions(kind, a, "preempt", thrash=True) == 1
        assert evictions(kind, a, "recycle", thrash=True) is None
        assert evictions(kind, a, "gang-release", thrash=True) is None
        assert evictions(kind, b, "node-lost", thrash=True) is None
    assert value(metrics, "fairway_evictions_total", cluster="c1", action="preempt") == 2

    def subtree(kind: str, name: str, action: str, thrash: bool = False) -> float | None:
        metric = f"fairway_{kind}_{'subtree_thrash_evictions' if thrash else 'subtree_evictions'}_total"
        return value(metrics, metric, cluster="c1", **{kind: name}, action=action)

    # per subtree: a leaf's own counts; its department's (dept > team-a, team-b; qdept > qa, qb) add both teams'
    for kind, leaf, dept, top in (("queue", "team-a", "dept", "root"), ("quota_group", "qa", "qdept", None)):
        for action in ("recycle", "reclaim", "preempt", "gang-release", "node-lost"):
            assert subtree(kind, leaf, action) == evictions(kind, leaf, action)
        assert subtree(kind, dept, "node-lost") == 2  # a-4 (team-a) and lost (team-b)
        assert subtree(kind, dept, "preempt") == 2 and subtree(kind, dept, "preempt", thrash=True) == 1
        if top is not None:  # Queue dept's parent is the root queue
            assert subtree(kind, top, "node-lost") == 2
    assert subtree("queue", "team-b", "preempt") is None


@override_settings(FAIRWAY={**settings.FAIRWAY, "THRASH_WINDOW_SECONDS": 300.0})
def test_the_thrash_window_is_a_setting(client: Any, make_user: Any) -> None:
    world = _overused_world()
    now = T0 + timedelta(seconds=130)
    _evict(world.cluster, now, ("ns-a/a-2", "preempt"))  # started T0 - 80 s: 210 s before, within 300 s
    token = create_token(make_user("admin", staff=True), "test")[1]
    metrics = scrape(client, Authorization=f"Token {token}")
    assert value(metrics, "fairway_queue_thrash_evictions_total", cluster="c1", queue="team-a", action="preempt") == 1
