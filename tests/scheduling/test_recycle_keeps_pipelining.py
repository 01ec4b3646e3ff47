"""A recycling pass leaves the last session's pipelining alone (issue 29 item 3).

A session pipelines a pod onto a node whose room is being freed (``Pipelined``, its nominated node); the next
session reads it Pending with that node nominated and holds the node for it until its job's turn. A recycling pass
that evicted something between the two sessions used to write its evictions through the session's binding path,
which first puts every Pipelined pod back to Pending without a node: the next session then saw no nomination and
placed the pod wherever it fitted first. In the soak's hour with the demo's quotas (ml-research at 32 GPUs) that
moved two GPU pods from gpu-08 to gpu-06 and gpu-05, and 81 of 1,035 jobs started more than a period off the
replay's (which keeps the nomination, as the product means to)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from engine.session.decisions import Binding, SessionResult
from engine.session.decisions import Eviction as EvictionDecision
from scheduling import store
from scheduling.models import Pod, PodStatus, SessionKind
from scheduling.store.read import load_snapshot
from tests.scheduling.conftest import World


def _pipelined(world: World) -> None:
    """solo Running on n2, a-0 Running on n1, a-1 pipelined onto n1 by the last session."""
    t0 = timezone.now() - timedelta(minutes=5)
    store.apply_decisions(
        world.cluster, SessionResult(bindings=[Binding("ns-a/a-0", "n1"), Binding("ns-b/solo", "n2")]), t0
    )
    Pod.objects.filter(cluster=world.cluster, status=PodStatus.BOUND).update(status=PodStatus.RUNNING)
    store.apply_decisions(
        world.cluster, SessionResult(bindings=[Binding("ns-a/a-1", "n1", pipelined=True)]), t0 + timedelta(minutes=1)
    )


def test_a_recycling_pass_keeps_the_pods_the_last_session_pipelined(world: World) -> None:
    _pipelined(world)
    recycled = EvictionDecision("ns-b/solo", "recycle", "Recycled", "quota group qb uses 1 core above its runtime")
    row = store.apply_decisions(
        world.cluster, SessionResult(evictions=[recycled]), timezone.now(), kind=SessionKind.RECYCLE
    )
    assert row.evicted == 1 and row.bindings == []
    a1 = Pod.objects.get(cluster=world.cluster, name="a-1")
    assert (a1.status, a1.node.name if a1.node else None) == (PodStatus.PIPELINED, "n1")
    task = load_snapshot(world.cluster).tasks["ns-a/a-1"]
    assert (task.pipelined, task.nominated, task.node) == (True, "n1", None)  # the next session holds n1 for it


def test_the_next_session_still_decides_the_pipelining_anew(world: World) -> None:
    _pipelined(world)
    store.apply_decisions(world.cluster, SessionResult(), timezone.now())
    a1 = Pod.objects.get(cluster=world.cluster, name="a-1")
    assert (a1.status, a1.node) == (PodStatus.PENDING, None)
