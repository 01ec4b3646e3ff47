"""No thrash (issue 26 item 3): the minimum runtime of reclaim and preempt victims (KAI's min-runtime), and a
reclaim or preemption whose beneficiary cannot be placed is discarded with its evictions."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from engine.objects import Snapshot
from engine.policy.policy import PolicyError
from engine.session.clock import time_horizon
from engine.session.run import run_session
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


def reclaim_policy(**reclaim: Any) -> Any:
    return policy("enqueue, allocate, backfill, reclaim", *TIERS, **({"reclaim": reclaim} if reclaim else {}))


def lent(pol: Any, *, a_guarantee: str | None = None, b_window: float | None = None, prio: int = 0) -> Snapshot:
    """Queue b borrows all 8 cpu with pods started at 0; queue a's job (4 one-cpu pods, pod priority ``prio``)
    arrives and reclaims."""
    a = queue("a", guarantee=rl(a_guarantee, None) if a_guarantee else None)
    b = dataclasses.replace(queue("b"), min_runtime=b_window)
    return snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "4", "16Gi")],
        queues=[a, b],
        podgroups=[podgroup("ns-b", "borrower", "b", 1, phase=Q.RUNNING), podgroup("ns-a", "job", "a", 4)],
        pods=[
            *(running("ns-b", f"borrower-{i}", "borrower", "n1" if i < 4 else "n2", "1", "1Gi", started=0.0)
              for i in range(8)),
            *(pod("ns-a", f"job-{i}", "job", "1", "1Gi", priority=prio) for i in range(4)),
        ],
        policy=pol,
    )  # fmt: skip


def test_reclaim_waits_for_the_victims_minimum_runtime() -> None:
    snap = lent(reclaim_policy(minRuntime="60s"))
    assert evicted(run_session(snap, now=30.0)) == []  # started 30 s ago: within the minimum runtime
    assert len(evicted(run_session(snap, now=61.0))) == 4
    # off by default (Volcano): taken at once
    assert len(evicted(run_session(lent(reclaim_policy()), now=30.0))) == 4


def test_a_strictly_higher_priority_cuts_the_minimum_runtime_short() -> None:
    assert len(evicted(run_session(lent(reclaim_policy(minRuntime="60s"), prio=5), now=30.0))) == 4


def test_a_lender_reclaiming_up_to_its_guarantee_is_never_delayed() -> None:
    snap = lent(reclaim_policy(minRuntime="60s"), a_guarantee="4")
    assert len(evicted(run_session(snap, now=30.0))) == 4


def test_a_queue_setting_overrides_the_policy() -> None:
    assert len(evicted(run_session(lent(reclaim_policy(minRuntime="60s"), b_window=0.0), now=30.0))) == 4
    assert evicted(run_session(lent(reclaim_policy(), b_window=60.0), now=30.0)) == []
    # a child queue inherits its parent's window
    snap = lent(reclaim_policy())
    parent = dataclasses.replace(queue("top"), min_runtime=60.0)
    child = dataclasses.replace(snap.queues["b"], parent="top")
    snap = snap.replace(queues={**snap.queues, "top": parent, "b": child})
    assert evicted(run_session(snap, now=30.0)) == []


def _preempt_world(pol: Any, pod_priority: int) -> Snapshot:
    return snapshot(
        nodes=[node("n1", "2", "8Gi")],
        queues=[queue("q1")],
        podgroups=[podgroup("c1", "low", "q1", 1, phase=Q.RUNNING, priority=1),
                   podgroup("c1", "high", "q1", 1, priority=100)],
        pods=[running("c1", f"low-{i}", "low", "n1", "1", "1Gi", started=0.0) for i in range(2)]
        + [pod("c1", "high-0", "high", "1", "1Gi", priority=pod_priority)],
        policy=pol,
    )  # fmt: skip


def test_preempt_keeps_young_pods_unless_the_preemptor_pod_is_more_important() -> None:
    pol = policy("preempt", *TIERS, preempt={"minRuntime": "1m"})
    # the job is more important, but the pods are of equal priority: the victims are kept for a minute
    assert evicted(run_session(_preempt_world(pol, 0), now=30.0)) == []
    assert evicted(run_session(_preempt_world(pol, 0), now=60.0)) == ["c1/low-1"]
    assert evicted(run_session(_preempt_world(pol, 10), now=30.0)) == ["c1/low-1"]
    assert evicted(run_session(_preempt_world(policy("preempt", *TIERS), 0), now=30.0)) == ["c1/low-1"]


def test_a_bound_pod_without_a_start_time_counts_as_just_placed() -> None:
    pol = policy("preempt", *TIERS, preempt={"minRuntime": "1m"})
    snap = _preempt_world(pol, 0)
    snap = snap.with_tasks([dataclasses.replace(t, start_timestamp=None) for t in snap.tasks.values() if t.node])
    assert evicted(run_session(snap, now=1e9)) == []


@pytest.mark.parametrize(("value", "words"), [("soon", "configurations reclaim: minRuntime"), (-1, "negative")])
def test_a_bad_min_runtime_is_refused_naming_the_key(value: object, words: str) -> None:
    with pytest.raises(PolicyError, match=words):
        reclaim_policy(minRuntime=value)


def test_a_reclaim_whose_gang_cannot_be_placed_is_discarded_with_its_evictions() -> None:
    # a's gang needs 3 pods of 3 cpu; b's borrowed pods on two 4-cpu nodes can make room for only 2 of them (a node
    # holds one 3-cpu pod): nothing is evicted, nothing pipelined
    snap = snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "4", "16Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("ns-b", "borrower", "b", 1, phase=Q.RUNNING), podgroup("ns-a", "job", "a", 3)],
        pods=[
            *(running("ns-b", f"borrower-{i}", "borrower", "n1" if i < 4 else "n2", "1", "1Gi") for i in range(8)),
            *(pod("ns-a", f"job-{i}", "job", "3", "1Gi") for i in range(3)),
        ],
        policy=reclaim_policy(),
    )
    result = run_session(snap, now=0.0)
    assert evicted(result) == [] and pipelined(result) == {}


def test_a_reused_result_ends_when_a_victims_minimum_runtime_does() -> None:
    # the borrowers started at 0 with a 60 s window: a session at 30 may not be reused at 60 or later
    assert time_horizon(lent(reclaim_policy(minRuntime="60s")), 30.0) == 60.0
    assert time_horizon(lent(reclaim_policy(minRuntime="60s")), 61.0) == math.inf
    assert time_horizon(lent(reclaim_policy()), 30.0) == math.inf
