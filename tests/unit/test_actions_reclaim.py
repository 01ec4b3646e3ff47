"""The reclaim action: Volcano's reclaim_test.go cases, lent resources coming back within two sessions,
``reclaimable: false`` queues, gang minimums and the eviction records."""

from __future__ import annotations

from typing import Any

import pytest

from engine.objects import PodGroupPhase, Snapshot
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    Q,
    bound,
    evicted,
    node,
    pipelined,
    pod,
    podgroup,
    policy,
    queue,
    running,
    snapshot,
    volcano_tier,
)

# reclaim_test.go's tier: every plugin's listed switches on, the others off
_TIER = {
    "conformance": ["enableReclaimable"],
    "gang": ["enableReclaimable", "enableJobStarving"],
    "proportion": ["enableReclaimable", "enableQueueOrder", "enablePreemptive"],
    "capacity": ["enableReclaimable", "enableQueueOrder", "enablePreemptive"],
    "priority": ["enableReclaimable", "enableJobOrder", "enableTaskOrder"],
}


def volcano_reclaim(*plugins: str) -> Any:
    return policy("reclaim", volcano_tier({name: _TIER[name] for name in plugins}))


LOW, MID, HIGH = 100, 500, 1000
CGP = ("conformance", "gang", "proportion")

VOLCANO_CASES: list[tuple[str, tuple[str, ...], dict[str, Any], list[str]]] = [
    (
        "Two Queue with one Queue overusing resource, should reclaim",
        CGP,
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 1), podgroup("c1", "pg2", "q2", 1)],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=False),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee3", "pg1", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "3", "3Gi", pods=10)],
            "queues": [queue("q1"), queue("q2")],
        },
        ["c1/preemptee2"],
    ),
    (
        "sort reclaimees when reclaiming from overusing queue",
        (*CGP, "priority"),
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, priority=MID),
                podgroup("c1", "pg2", "q2", 1, priority=LOW),
                podgroup("c1", "pg3", "q3", 1, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1-1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee1-2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2-1", "pg2", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2-2", "pg2", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg3", "1", "1G"),
            ],
            "nodes": [node("n1", "4", "4Gi", pods=10)],
            "queues": [queue("q1"), queue("q2"), queue("q3")],
        },
        ["c1/preemptee2-1"],
    ),
    (
        "sort reclaimees when reclaiming from overusing queues with different queue priority",
        CGP,
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1),
                podgroup("c1", "pg2", "q2", 1),
                podgroup("c1", "pg3", "q3", 1),
            ],
            "pods": [
                running("c1", "preemptee1-1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee1-2", "pg1", "n1", "1", "1G", preemptable=False),
                running("c1", "preemptee2-1", "pg2", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2-2", "pg2", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg3", "1", "1G"),
            ],
            "nodes": [node("n1", "4", "4Gi", pods=10)],
            "queues": [queue("q1", priority=5), queue("q2", priority=10), queue("q3", priority=1)],
        },
        ["c1/preemptee1-1"],
    ),
    (
        "can not reclaim resources when task preemption policy is never",
        CGP,
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 0, priority=LOW), podgroup("c1", "pg2", "q2", 0, priority=HIGH)],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "1", "1G", preemption_policy="Never"),
            ],
            "nodes": [node("n1", "1", "1Gi", pods=1)],
            "queues": [queue("q1", 5), queue("q2", 10)],
        },
        [],
    ),
    (
        "can not reclaim resources when queue is not open (proportion plugin)",
        CGP,
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 1, phase=Q.RUNNING), podgroup("c1", "pg2", "q2", 1)],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=False),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee3", "pg1", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "3", "3Gi", pods=10)],
            "queues": [queue("q1"), queue("q2", state="Closed")],
        },
        [],
    ),
    (
        "can not reclaim resources when queue is not open (capacity plugin)",
        ("conformance", "gang", "capacity"),
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 1, phase=Q.RUNNING), podgroup("c1", "pg2", "q2", 1)],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=False),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee3", "pg1", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "3", "3Gi", pods=10)],
            "queues": [queue("q1"), queue("q2", state="Closed")],
        },
        [],
    ),
    (
        "Node available resources should be included in reclaimed resources",
        (*CGP, "priority"),
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 0, phase=Q.RUNNING, priority=MID),
                podgroup("c1", "pg2", "q2", 0, phase=Q.RUNNING, priority=MID),
                podgroup("c1", "pg3", "q3", 1, priority=MID),
            ],
            "pods": [
                running("c1", "preemptee1-1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2-1", "pg2", "n1", "1", "1G", preemptable=True),
                pod("c1", "preemptor1", "pg3", "2", "1G"),
            ],
            "nodes": [node("n1", "10", "2Gi", pods=10)],
            "queues": [queue("q1", priority=1), queue("q2", priority=2), queue("q3", 3)],
        },
        ["c1/preemptee1-1"],  # cpu is idle enough; 1G of memory must be freed
    ),
    (
        "Reclaim succeeds for second task when first task has PreemptionPolicy=Never",
        (*CGP, "priority"),
        {
            "podgroups": [
                podgroup("c1", "pg-victim", "q1", 1, phase=Q.RUNNING, priority=100),
                podgroup("c1", "pg-preemptor", "q2", 2, priority=1000),
            ],
            "pods": [
                running("c1", "victim-pod-no", "pg-victim", "n1", "1", "1G", preemptable=False),
                running("c1", "victim-pod", "pg-victim", "n1", "1", "1G", preemptable=True),
                pod("c1", "preemptor-task1-non-preemptable", "pg-preemptor", "1", "1G", preemption_policy="Never"),
                pod("c1", "preemptor-task2-preemptable", "pg-preemptor", "1", "1G"),
            ],
            "nodes": [node("n1", "2", "2G", pods=10)],
            "queues": [queue("q1"), queue("q2")],
        },
        ["c1/victim-pod"],
    ),
    (
        "only commit evictions on the node where reclaim succeeds",
        CGP,
        {
            "podgroups": [
                podgroup("c1", "pg-victim", "q1", 0, phase=Q.RUNNING),
                podgroup("c1", "pg-preemptor", "q2", 1),
            ],
            "pods": [
                running("c1", "victim-n1", "pg-victim", "n1", "2", "2G", preemptable=True),
                pod("c1", "preemptor1", "pg-preemptor", "3", "3G"),
            ],
            "nodes": [node("n1", "10", "10G", pods=10)],
            "queues": [queue("q1", 1), queue("q2", 9)],
        },
        [],
    ),
]


@pytest.mark.parametrize(("name", "plugins", "objects", "expected"), VOLCANO_CASES, ids=[c[0] for c in VOLCANO_CASES])
def test_volcano_reclaim_cases(
    name: str, plugins: tuple[str, ...], objects: dict[str, Any], expected: list[str]
) -> None:
    result = run_session(snapshot(policy=volcano_reclaim(*plugins), **objects), now=0.0)
    assert evicted(result) == expected
    for eviction in result.evictions:
        assert eviction.action == "reclaim" and eviction.reason == "Reclaimed" and eviction.preemptor


def test_eviction_record_names_the_queue_above_its_deserved() -> None:
    case = VOLCANO_CASES[0]
    result = run_session(snapshot(policy=volcano_reclaim(*case[1]), **case[2]), now=0.0)
    (eviction,) = result.evictions
    assert eviction.preemptor == "c1/preemptor1"
    assert eviction.message == "reclaimed for c1/preemptor1 of queue q2: queue q1 holds 3 cpu, above its deserved 2"
    assert eviction.blocker is not None
    assert (eviction.blocker.kind, eviction.blocker.name, eviction.blocker.requested, eviction.blocker.available) == (
        "queue",
        "q1",
        3000,
        2000,
    )
    assert pipelined(result) == {"c1/preemptor1": "n1"}


# -- lending and taking back --------------------------------------------------------------------------------------

RECLAIM_POLICY = policy(
    "enqueue, allocate, backfill, reclaim",
    ["priority", "gang", "conformance"],
    ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
)


def lent_cluster(reclaimable: bool = True) -> Snapshot:
    """Queue a (weight 1) is idle and lends; queue b (weight 1) borrows the whole 8 cpu: 8 one-cpu pods."""
    return snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "4", "16Gi")],
        queues=[queue("a"), queue("b", reclaimable=reclaimable)],
        podgroups=[podgroup("ns-b", "borrower", "b", 1, phase=Q.RUNNING)],
        pods=[running("ns-b", f"borrower-{i}", "borrower", "n1" if i < 4 else "n2", "1", "1Gi") for i in range(8)],
        policy=RECLAIM_POLICY,
    )


def test_reclaim_returns_lent_resources_within_two_sessions() -> None:
    snap = lent_cluster()
    # a's job arrives: 4 pods, a gang of 4
    snap = snap.with_podgroups([podgroup("ns-a", "job", "a", 4, phase=Q.PENDING)]).with_tasks(
        [pod("ns-a", f"job-{i}", "job", "1", "1Gi") for i in range(4)]
    )
    first = run_session(snap, now=0.0)
    assert bound(first) == {}  # allocate finds no room
    assert len(evicted(first)) == 4  # b is above its deserved of 4 cpu by 4
    assert all(uid.startswith("ns-b/borrower-") for uid in evicted(first))
    assert sorted(pipelined(first)) == [f"ns-a/job-{i}" for i in range(4)]
    assert all(e.blocker is not None and e.blocker.name == "b" for e in first.evictions)
    snap = apply_result(snap, first, now=0.0)
    second = run_session(snap, now=1.0)
    assert second.evictions == []  # b is back at its deserved: nothing more to take
    assert second.podgroups["ns-a/job"].phase == PodGroupPhase.RUNNING
    assert second.podgroups["ns-b/borrower"].phase == PodGroupPhase.RUNNING
    assert sum(1 for t in apply_result(snap, second, now=1.0).tasks.values() if t.namespace == "ns-a") == 4


def test_reclaimable_false_protects_a_queue() -> None:
    snap = lent_cluster(reclaimable=False)
    snap = snap.with_podgroups([podgroup("ns-a", "job", "a", 4, phase=Q.PENDING)]).with_tasks(
        [pod("ns-a", f"job-{i}", "job", "1", "1Gi") for i in range(4)]
    )
    result = run_session(snap, now=0.0)
    assert result.evictions == [] and result.bindings == []
    status = result.podgroups["ns-a/job"]
    assert status.phase == PodGroupPhase.INQUEUE and status.reason == "NotEnoughResources"


def test_reclaim_keeps_the_gang_minimum_of_the_victim() -> None:
    # b's gang needs all 8 pods (minMember 8): no pod of it may be reclaimed
    snap = snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "4", "16Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("ns-b", "borrower", "b", 8, phase=Q.RUNNING), podgroup("ns-a", "job", "a", 1)],
        pods=[
            *(running("ns-b", f"borrower-{i}", "borrower", "n1" if i < 4 else "n2", "1", "1Gi") for i in range(8)),
            pod("ns-a", "job-0", "job", "1", "1Gi"),
        ],
        policy=policy("reclaim", ["gang", "conformance", "proportion", "predicates"]),
    )
    assert run_session(snap, now=0.0).evictions == []


def test_conformance_never_evicts_critical_pods() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "16Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("kube-system", "sys", "b", 0, phase=Q.RUNNING), podgroup("ns-a", "job", "a", 1)],
        pods=[
            running("kube-system", "sys-0", "sys", "n1", "1", "1Gi"),
            running("kube-system", "sys-1", "sys", "n1", "1", "1Gi"),
            pod("ns-a", "job-0", "job", "1", "1Gi"),
        ],
        policy=policy("reclaim", ["gang", "conformance", "proportion", "predicates"]),
    )
    assert run_session(snap, now=0.0).evictions == []


def test_conformance_in_a_higher_tier_decides_alone() -> None:
    # Volcano's tier rule: the first tier with victims decides. With gang and conformance alone in tier 1 the
    # queue plugin of tier 2 is never asked, so a queue that is not above its deserved loses a pod (Volcano issue
    # #5896); in one tier together, proportion's filter applies. Three queues deserve 1 cpu each: c holds 1
    # (on n1, the first node tried), b holds 2 (on n2), a wants 1.
    objects: dict[str, Any] = {
        "nodes": [node("n1", "1", "16Gi"), node("n2", "2", "16Gi")],
        "queues": [queue("a"), queue("b"), queue("c")],
        "podgroups": [
            podgroup("ns", "b", "b", 0, phase=Q.RUNNING),
            podgroup("ns", "c", "c", 0, phase=Q.RUNNING),
            podgroup("ns", "a", "a", 1),
        ],
        "pods": [
            running("ns", "c-0", "c", "n1", "1", None),
            running("ns", "b-0", "b", "n2", "1", None),
            running("ns", "b-1", "b", "n2", "1", None),
            pod("ns", "a-0", "a", "1", None),
        ],
    }
    together = policy("reclaim", ["gang", "conformance", "proportion", "predicates"])
    assert evicted(run_session(snapshot(policy=together, **objects), now=0.0)) == ["ns/b-1"]
    apart = policy("reclaim", ["gang", "conformance"], ["proportion", "predicates"])
    assert evicted(run_session(snapshot(policy=apart, **objects), now=0.0)) == ["ns/c-0"]
