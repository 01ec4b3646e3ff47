"""No pod evicted twice in a minute (issue 26's last goal): ``minRuntimeHigherPriority`` on ``preempt`` / ``reclaim``
says what a strictly higher priority may do to a pod within its minimum runtime: ``cut`` it short (the default),
only as a ``lastResort`` (when its job cannot be placed otherwise), or ``wait``
(``engine.session.actions.common.MinRuntime``).

The pattern the soak counted: a gang preempted whole, its replacements placed at once in the room the preemptor did
not need, then preempted whole again seconds later by the next more important job, because the replacements,
just started, lose the least work (the least-waste cover) while older pods of the same priority could have gone."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from engine.objects import Snapshot
from engine.policy.policy import PolicyError
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    Q,
    evicted,
    node,
    pipelined,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)

TIERS = (["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"])


def preempt_policy(higher: str | None) -> Any:
    args: dict[str, Any] = {"minRuntime": "60s", "wholeGangs": True}
    if higher is not None:
        args["minRuntimeHigherPriority"] = higher
    return policy("allocate, preempt", *TIERS, preempt=args)


def _start(pol: Any) -> Snapshot:
    """t = 0. n1 (4 cpu) runs gang ``v`` (2 x 2 cpu, priority 0, 100 s old); n2 (8 cpu) runs gang ``old`` (2 x 2
    cpu, priority 0, 1000 s old) and ``x`` (4 cpu, priority 20, about to finish). ``p1`` (4 cpu, priority 10)
    arrives."""
    return snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "8", "32Gi")],
        queues=[queue("q1")],
        podgroups=[
            podgroup("t", "v", "q1", 2, phase=Q.RUNNING),
            podgroup("t", "old", "q1", 2, phase=Q.RUNNING),
            podgroup("t", "x", "q1", 1, phase=Q.RUNNING, priority=20),
            podgroup("t", "p1", "q1", 1, priority=10),
        ],
        pods=[
            *(running("t", f"v-{i}", "v", "n1", "2", "1Gi", started=-100.0) for i in range(2)),
            *(running("t", f"old-{i}", "old", "n2", "2", "1Gi", started=-1000.0) for i in range(2)),
            running("t", "x-0", "x", "n2", "4", "1Gi", started=-1000.0, priority=20),
            pod("t", "p1-0", "p1", "4", "1Gi", priority=10),
        ],
        policy=pol,
    )


def _thirty_seconds_later(pol: Any) -> tuple[Snapshot, list[str]]:
    """Three sessions as the store would see them: at 0 ``p1`` preempts ``v`` whole (its pods are the younger, less
    work lost); ``x`` then finishes and ``v``'s job controller creates replacements, which the session at 10 places
    in x's room on n2; at 30 ``p2`` (4 cpu, priority 10) arrives. Returns the snapshot at 30 and the first
    session's evictions."""
    snap = _start(pol)
    first = run_session(snap, now=0.0)
    snap = apply_result(snap, first, now=0.0)
    tasks = {uid: t for uid, t in snap.tasks.items() if uid != "t/x-0"}
    for i in range(2):
        replacement = pod("t", f"v-{i}-r1", "v", "2", "1Gi")
        tasks[replacement.uid] = replacement
    groups = {k: g for k, g in snap.podgroups.items() if k != "t/x"}
    groups["t/v"] = dataclasses.replace(groups["t/v"], phase=Q.INQUEUE, conditions=())
    snap = snap.replace(tasks=tasks, podgroups=groups)
    second = run_session(snap, now=10.0)
    assert {b.task: b.node for b in second.bindings} == {"t/v-0-r1": "n2", "t/v-1-r1": "n2"}
    snap = apply_result(snap, second, now=10.0)
    p2 = pod("t", "p2-0", "p2", "4", "1Gi", priority=10)
    snap = snap.replace(
        tasks={**snap.tasks, p2.uid: p2},
        podgroups={**snap.podgroups, "t/p2": podgroup("t", "p2", "q1", 1, priority=10)},
    )
    return snap, sorted(evicted(first))


def test_without_the_option_the_replacements_of_a_gang_just_preempted_are_preempted_again() -> None:
    snap, first = _thirty_seconds_later(preempt_policy(None))
    assert first == ["t/v-0", "t/v-1"]
    # the same tasks of v evicted again 30 s after the first time: the soak's "evicted twice in a minute"
    assert sorted(evicted(run_session(snap, now=30.0))) == ["t/v-0-r1", "t/v-1-r1"]


@pytest.mark.parametrize("higher", ["lastResort", "wait"])
def test_with_the_option_the_preemptor_takes_pods_past_their_minimum_runtime(higher: str) -> None:
    snap, first = _thirty_seconds_later(preempt_policy(higher))
    assert first == ["t/v-0", "t/v-1"]  # v is past its minimum runtime: the same first choice
    result = run_session(snap, now=30.0)
    assert sorted(evicted(result)) == ["t/old-0", "t/old-1"]
    assert pipelined(result) == {"t/p2-0": "n2"}


def _only_young_victims(pol: Any) -> Snapshot:
    """The snapshot at 30 with ``old`` as important as ``p2``: only v's young replacements could make room."""
    snap, _ = _thirty_seconds_later(pol)
    tasks = {u: dataclasses.replace(t, priority=10) if u.startswith("t/old-") else t for u, t in snap.tasks.items()}
    groups = {**snap.podgroups, "t/old": dataclasses.replace(snap.podgroups["t/old"], priority=10)}
    return snap.replace(tasks=tasks, podgroups=groups)


@pytest.mark.parametrize("higher", [None, "lastResort"])
def test_a_minimum_runtime_is_cut_short_when_nothing_else_places_the_preemptor(higher: str | None) -> None:
    result = run_session(_only_young_victims(preempt_policy(higher)), now=30.0)
    assert sorted(evicted(result)) == ["t/v-0-r1", "t/v-1-r1"]
    assert pipelined(result) == {"t/p2-0": "n2"}


def test_with_wait_the_preemptor_waits_for_the_minimum_runtime() -> None:
    snap = _only_young_victims(preempt_policy("wait"))
    result = run_session(snap, now=30.0)
    assert evicted(result) == [] and pipelined(result) == {}
    # once v's replacements (placed at 10) have run their minute, they go
    assert sorted(evicted(run_session(snap, now=70.0))) == ["t/v-0-r1", "t/v-1-r1"]


def _lent(pol: Any) -> Snapshot:
    """Queue b borrows both nodes: on n1 pods started 20 s ago, on n2 pods started 1000 s ago; queue a's pod of
    priority 5 (higher than b's) reclaims 1 cpu at now = 0 (each of b's jobs can spare one pod)."""
    return snapshot(
        nodes=[node("n1", "2", "8Gi"), node("n2", "2", "8Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[
            podgroup("ns-b", "young", "b", 1, phase=Q.RUNNING),
            podgroup("ns-b", "older", "b", 1, phase=Q.RUNNING),
            podgroup("ns-a", "job", "a", 1),
        ],
        pods=[
            *(running("ns-b", f"young-{i}", "young", "n1", "1", "1Gi", started=-20.0) for i in range(2)),
            *(running("ns-b", f"older-{i}", "older", "n2", "1", "1Gi", started=-1000.0) for i in range(2)),
            pod("ns-a", "job-0", "job", "1", "1Gi", priority=5),
        ],
        policy=pol,
    )


@pytest.mark.parametrize(("higher", "victims"), [(None, "young"), ("lastResort", "older"), ("wait", "older")])
def test_reclaim_takes_pods_past_their_minimum_runtime_first(higher: str | None, victims: str) -> None:
    args: dict[str, Any] = {"minRuntime": "60s"}
    if higher is not None:
        args["minRuntimeHigherPriority"] = higher
    result = run_session(_lent(policy("enqueue, allocate, reclaim", *TIERS, reclaim=args)), now=0.0)
    assert [e.split("/")[1].split("-")[0] for e in evicted(result)] == [victims]


def test_wait_never_delays_a_lender_reclaiming_up_to_its_guarantee() -> None:
    pol = policy(
        "enqueue, allocate, reclaim", *TIERS, reclaim={"minRuntime": "60s", "minRuntimeHigherPriority": "wait"}
    )
    snap = _lent(pol)
    # only young borrowers: a waits for them, unless it reclaims within its guarantee
    tasks = {
        u: dataclasses.replace(t, start_timestamp=-20.0) if u.startswith("ns-b/") else t for u, t in snap.tasks.items()
    }
    assert evicted(run_session(snap.replace(tasks=tasks), now=0.0)) == []
    guaranteed = {**snap.queues, "a": dataclasses.replace(snap.queues["a"], guarantee=rl("1", None))}
    assert len(evicted(run_session(snap.replace(tasks=tasks, queues=guaranteed), now=0.0))) == 1


@pytest.mark.parametrize("action", ["reclaim", "preempt"])
def test_a_bad_value_is_refused_naming_the_key(action: str) -> None:
    with pytest.raises(PolicyError, match=f"configurations {action}: minRuntimeHigherPriority: expected one of"):
        policy(action, *TIERS, **{action: {"minRuntimeHigherPriority": "yes"}})
