"""Preempt passes for a gang the nodes cannot take (issue 29 item 4): a first-phase pass whose job needs more pipelined
pods than the nodes could hold, even with every pod the victim tests let through evicted, is not tried
(``engine.session.actions.preempt._gang_out_of_reach``); every decision stays the one of trying it."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import Snapshot, TaskInfo
from engine.session.run import run_session
from tests.support.examples import examples
from tests.unit.test_gang_victims_actions import TIERS, preempt_policy
from tests.unit.test_session_support import Q, node, pipelined, pod, podgroup, policy, queue, running, snapshot

PREEMPT = importlib.import_module("engine.session.actions.preempt")


def _world(
    nodes: int, victims: list[tuple[int, int]], gang: tuple[int, int, int], whole: bool | None, own: int = 0
) -> Snapshot:
    """``nodes`` 8-GPU nodes; ``own`` running pods of the gang (pod priority -1, below its pending ones) on the first nodes, then victim jobs
    (pods, GPUs a pod) of priority 1 spread over them where they fit; the gang (minMember, pending pods, GPUs a pod)
    of priority ``100`` in the same queue."""
    minimum, count, gpu = gang
    free = [8] * nodes
    pods: list[TaskInfo] = []
    for i in range(own):
        n = i % nodes
        if free[n] >= gpu:
            free[n] -= gpu
            pods.append(running("p", f"job-r{i}", "job", f"n{n}", "1", "1Gi", gpu=gpu, started=0.0, priority=-1))
    groups = []
    turn = 0
    for j, (size, each) in enumerate(victims):
        groups.append(podgroup("v", f"j{j}", "q1", 1, phase=Q.RUNNING, priority=1))
        for i in range(size):
            for k in range(nodes):
                n = (turn + k) % nodes
                if free[n] >= each:
                    free[n] -= each
                    pods.append(running("v", f"j{j}-{i}", f"j{j}", f"n{n}", "1", "1Gi", gpu=each, started=0.0))
                    break
            turn += 1
    groups.append(podgroup("p", "job", "q1", minimum, phase=Q.RUNNING if own else Q.INQUEUE, priority=100))
    pods += [pod("p", f"job-{i}", "job", "1", "1Gi", gpu=gpu) for i in range(count)]
    return snapshot(
        nodes=[node(f"n{n}", "32", "128Gi", gpu=8) for n in range(nodes)],
        queues=[queue("q1")],
        podgroups=groups,
        pods=pods,
        policy=preempt_policy(whole),
    )


def _tried(monkeypatch: pytest.MonkeyPatch, phase: int = 1) -> list[str]:
    """The preemptor pods a phase searches victims for (the first, other jobs' pods: the search is given the pass's
    victim options; the second, the job's own: it is not), recorded."""
    calls: list[str] = []
    search = PREEMPT._preempt

    def recorded(ssn: Any, stmt: Any, task: Any, *args: Any, **kwargs: Any) -> bool:
        if (len(args) > 2) == (phase == 1):
            calls.append(task.uid)
        result: bool = search(ssn, stmt, task, *args, **kwargs)
        return result

    monkeypatch.setattr(PREEMPT, "_preempt", recorded)
    return calls


def test_a_gang_the_nodes_cannot_hold_is_not_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    # three nodes, each full of victims: four pods of 8 GPUs need four nodes
    snap = _world(3, [(3, 8)], (4, 4, 8), True)
    tried = _tried(monkeypatch)
    result = run_session(snap, now=100.0)
    assert result.evictions == [] and pipelined(result) == {}
    assert [t for t in tried if t.startswith("p/job-")] == []


def test_a_gang_the_nodes_can_hold_is_tried_and_placed(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _world(4, [(4, 8)], (4, 4, 8), True)
    tried = _tried(monkeypatch)
    result = run_session(snap, now=100.0)
    assert len(pipelined(result)) == 4 and len(result.evictions) == 4
    assert tried[:4] == [f"p/job-{i}" for i in range(4)]


def test_without_the_gang_plugins_final_vote_every_pass_is_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    # the gang plugin's job-pipelined vote off (and victims pod by pod): a partial gang may keep its evictions, so the
    # pass is tried whatever the nodes hold
    tiers = (["priority", {"name": "gang", "enableJobPipelined": False}, "conformance"], TIERS[1])
    snap = _world(3, [(3, 8)], (4, 4, 8), None).replace(policy=policy("preempt", *tiers))
    tried = _tried(monkeypatch)
    result = run_session(snap, now=100.0)
    assert [t for t in tried if t.startswith("p/job-")]
    assert pipelined(result) and result.evictions  # what trying decides: part of the gang pipelined over evictions


def test_a_gang_its_own_pods_cannot_make_room_for_is_not_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    # one pod of the gang runs on n0 (a lower pod priority than its pending ones); n1 is full of a more important job: evicting its own pod
    # makes room for one of the two pods the gang still needs
    snap = _world(2, [], (3, 2, 8), None, own=1)
    important = running("v", "top-0", "top", "n1", "1", "1Gi", gpu=8, started=0.0, priority=1000)
    snap = snap.with_podgroups([podgroup("v", "top", "q1", 1, phase=Q.RUNNING, priority=1000)]).with_tasks([important])
    tried = _tried(monkeypatch, phase=2)
    result = run_session(snap, now=100.0)
    assert result.evictions == [] and pipelined(result) == {}
    assert tried == []
    with pytest.MonkeyPatch.context() as patch:  # tried, the same outcome: its own pod evicted, then undone
        patch.setattr(PREEMPT, "_out_of_reach", lambda *args: False)
        assert run_session(snap, now=100.0).evictions == []
        assert tried


@settings(max_examples=examples(120), deadline=None)
@given(
    st.integers(2, 4),
    st.lists(st.tuples(st.integers(1, 4), st.sampled_from([1, 2, 4, 8])), min_size=1, max_size=6),
    st.tuples(st.integers(1, 5), st.integers(0, 2), st.sampled_from([1, 2, 3, 4, 8])),
    st.sampled_from([True, None]),
    st.integers(0, 3),
)
def test_the_decisions_are_those_of_trying_every_pass(
    nodes: int, victims: list[tuple[int, int]], gang: tuple[int, int, int], whole: bool | None, own: int
) -> None:
    minimum, extra, gpu = gang
    snap = _world(nodes, victims, (minimum + own, minimum + extra, gpu), whole, own)
    bounded = run_session(snap, now=100.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PREEMPT, "_out_of_reach", lambda *args: False)
        tried = run_session(snap, now=100.0)
    assert bounded.evictions == tried.evictions
    assert bounded.bindings == tried.bindings
    assert bounded.podgroups == tried.podgroups
