"""A gang below its minimum is made whole or let go (issue 26 item 2, ``engine.session.gangrepair``)."""

from __future__ import annotations

import dataclasses
import math

from engine.objects import PodGroupCondition, PodGroupPhase, Snapshot
from engine.session.clock import time_horizon
from engine.session.run import run_session
from tests.unit.test_session_support import Q, evicted, node, pod, podgroup, policy, queue, running, snapshot

GPU = "nvidia.com/gpu"
TIERS = (["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"])


def broken(*, since: float = 100.0, reason: str = "Unknown", free_gpus: int = 0, **enqueue: object) -> Snapshot:
    """Gang train (4 pods of 4 GPUs, minMember 4) lost one pod; its replacement waits. Three pods still run on
    three 4-GPU nodes; a fourth node has ``free_gpus`` GPUs. The podgroup turned Unknown at ``since``."""
    cond = PodGroupCondition("Unschedulable", reason=reason, message="3 pods running", last_transition_time=since)
    pg = dataclasses.replace(podgroup("ml", "train", "q", 4, phase=Q.UNKNOWN), conditions=(cond,))
    gpu = {GPU: "4"}
    pods = [running("ml", f"train-{i}", "train", f"n{i}", "1", "1Gi", started=0.0, **gpu) for i in range(3)]  # type: ignore[arg-type]
    pods.append(pod("ml", "train-3-r1", "train", "1", "1Gi", **{GPU: "4"}))  # type: ignore[arg-type]
    nodes = [node(f"n{i}", "8", "32Gi", **{GPU: "4"}) for i in range(3)]  # type: ignore[arg-type]
    nodes.append(node("n3", "8", "32Gi", **{GPU: str(free_gpus)}))  # type: ignore[arg-type]
    pol = policy("enqueue, allocate, backfill", *TIERS, **({"enqueue": enqueue} if enqueue else {}))
    return snapshot(nodes=nodes, queues=[queue("q")], podgroups=[pg], pods=pods, policy=pol)


def test_a_gang_below_its_minimum_past_the_timeout_is_released_whole() -> None:
    snap = broken()
    kept = run_session(snap, now=104.0)  # 4 s below its minimum: within the default 5 s
    assert evicted(kept) == [] and kept.podgroups["ml/train"].phase == PodGroupPhase.UNKNOWN
    result = run_session(snap, now=106.0)
    assert sorted(evicted(result)) == ["ml/train-0", "ml/train-1", "ml/train-2"]
    assert {(e.action, e.reason) for e in result.evictions} == {("gang-release", "GangBroken")}
    status = result.podgroups["ml/train"]
    assert status.phase == PodGroupPhase.PENDING and status.reason == "GangReleased"
    # 3 pods x 4 GPUs x 6 s
    assert status.released_idle_gpu_seconds == 72
    assert "72 GPU-seconds held idle" in status.message and "gangRepairTimeout 5s" in status.message


def test_a_gang_made_whole_in_time_is_kept() -> None:
    result = run_session(broken(free_gpus=4), now=200.0)  # its replacement fits: placed, the gang is whole
    assert evicted(result) == [] and [b.task for b in result.bindings] == ["ml/train-3-r1"]
    assert result.podgroups["ml/train"].released_idle_gpu_seconds is None


def test_the_timeout_is_a_setting_and_zero_keeps_volcanos_behaviour() -> None:
    assert evicted(run_session(broken(gangRepairTimeout="30s"), now=120.0)) == []
    assert len(evicted(run_session(broken(gangRepairTimeout="30s"), now=131.0))) == 3
    assert evicted(run_session(broken(gangRepairTimeout=0), now=1e6)) == []


def test_a_pipelined_gang_or_one_without_a_recorded_time_is_not_released() -> None:
    assert evicted(run_session(broken(reason="Pipelined"), now=1e6)) == []
    snap = broken()
    pg = dataclasses.replace(snap.podgroups["ml/train"], conditions=())
    assert evicted(run_session(snap.with_podgroups([pg]), now=1e6)) == []


def test_the_reused_result_ends_at_the_repair_deadline() -> None:
    assert time_horizon(broken(), 101.0) == 105.0
    assert time_horizon(broken(gangRepairTimeout=0), 101.0) == math.inf
