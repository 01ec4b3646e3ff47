"""The preempt action: Volcano's preempt_test.go cases (priority within a queue, gang minimums, preemptable
labels, queue gates after evictions, per-node statements) and preemption between the pods of one job."""

from __future__ import annotations

from typing import Any

import pytest

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
    volcano_tier,
)

VOLCANO_PREEMPT = policy(
    "preempt",
    volcano_tier(
        {
            "conformance": ["enablePreemptable"],
            "gang": ["enablePreemptable", "enableJobPipelined", "enableJobStarving"],
            "priority": [
                "enableTaskOrder",
                "enableJobOrder",
                "enablePreemptable",
                "enableJobPipelined",
                "enableJobStarving",
            ],
            "proportion": ["enabledOverused", "enabledAllocatable", "enableQueueOrder"],
        }
    ),
)
HIGH, LOW = 100000, 10

VOLCANO_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "do not preempt if there are enough idle resources",
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 3, min_task_member={"": 3})],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G"),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G"),
                pod("c1", "preemptor1", "pg1", "1", "1G"),
            ],
            "nodes": [node("n1", "10", "10G", pods=10)],
            "queues": [queue("q1")],
        },
        [],
    ),
    (
        "do not preempt if job is pipelined",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, min_task_member={"": 2}),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 2}),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G"),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G"),
                running("c1", "preemptee3", "pg2", "n1", "1", "1G"),
                pod("c1", "preemptor2", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "3", "3G", pods=10)],
            "queues": [queue("q1")],
        },
        [],
    ),
    (
        "preempt one task of different job to fit both jobs on one node",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, min_task_member={"": 2}, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 2}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg2", "1", "1G"),
                pod("c1", "preemptor2", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "2", "2G", pods=10)],
            "queues": [queue("q1")],
        },
        ["c1/preemptee1"],
    ),
    (
        "preempt enough tasks to fit large task of different job",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, min_task_member={"": 3}, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee3", "pg1", "n1", "1", "1G", preemptable=False),
                pod("c1", "preemptor1", "pg2", "5", "5G"),
            ],
            "nodes": [node("n1", "6", "6G", pods=10)],
            "queues": [queue("q1")],
        },
        ["c1/preemptee2", "c1/preemptee1"],
    ),
    (
        "preempt low priority job in same queue",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 0, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "3", "3G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "3", "3G"),
            ],
            "nodes": [node("n1", "12", "12G", pods=10)],
            "queues": [queue("q1", capability=rl("4", "4G"))],
        },
        ["c1/preemptee1"],
    ),
    (
        "preempt low priority job in same queue: allocatable and has enough resource, don't preempt",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "3", "3G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "3", "3G"),
            ],
            "nodes": [node("n1", "12", "12G", pods=10)],
            "queues": [queue("q1", capability=rl("6", "6G"))],
        },
        [],
    ),
    (
        "preempt low priority job in same queue but not pod with preemptable=false or higher priority",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=False),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee3", "pg1", "n1", "1", "1G", preemptable=True, priority=HIGH),
                pod("c1", "preemptor1", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "12", "12G", pods=10)],
            "queues": [queue("q1", capability=rl("3", "3G"))],
        },
        ["c1/preemptee2"],
    ),
    (
        "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 0, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", None, None, preemptable=True),
                pod("c1", "preemptor1", "pg2", "3", "3G"),
            ],
            "nodes": [node("n1", "12", "12G", pods=1)],
            "queues": [queue("q1", capability=rl("6", "6G"))],
        },
        ["c1/preemptee1"],
    ),
    (
        "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 0, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", None, None, preemptable=True),
                pod("c1", "preemptor1", "pg2", None, None),
            ],
            "nodes": [node("n1", "12", "12G", pods=1)],
            "queues": [queue("q1", capability=rl("6", "6G"))],
        },
        ["c1/preemptee1"],
    ),
    (
        "can not preempt resources when task preemption policy is never",
        {
            "podgroups": [podgroup("c1", "pg1", "q1", 0, priority=LOW), podgroup("c1", "pg2", "q1", 1, priority=HIGH)],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "1", "1G", preemption_policy="Never"),
            ],
            "nodes": [node("n1", "1", "1Gi", pods=1)],
            "queues": [queue("q1")],
        },
        [],
    ),
    (
        "rollback evictions when preemptor exceeds queue capacity after evicting victims",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, min_task_member={"": 2}, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2", "pg1", "n1", "1", "1G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "4", "4G"),
            ],
            "nodes": [node("n1", "10", "10G", pods=10)],
            "queues": [queue("q1", capability=rl("3", "3G"))],
        },
        [],
    ),
    (
        "only commit evictions on the node where preemption succeeds",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 0, priority=LOW),
                podgroup("c1", "pg2", "q1", 1, min_task_member={"": 1}, priority=HIGH),
                podgroup("c1", "pg3", "q1", 0, priority=LOW),
            ],
            "pods": [
                running("c1", "preemptee1", "pg1", "n1", "1", "1G", preemptable=True),
                running("c1", "preemptee2", "pg3", "n2", "4", "4G", preemptable=True),
                pod("c1", "preemptor1", "pg2", "3", "3G"),
            ],
            "nodes": [node("n1", "3", "3G", pods=10), node("n2", "4", "4G", pods=10)],
            "queues": [queue("q1", capability=rl("6", "6G"))],
        },
        ["c1/preemptee2"],
    ),
    (
        "multi-queue: preemptorTasks must not be overwritten by intra-job preemption of another queue",
        {
            "podgroups": [
                podgroup("c1", "pg1", "q1", 1, min_task_member={"": 1}),
                podgroup("c1", "pg2", "q2", 0, priority=LOW),
                podgroup("c1", "pg3", "q2", 1, min_task_member={"": 1}, priority=HIGH),
            ],
            "pods": [
                running("c1", "q1-runner1", "pg1", "n1", "1", "1G"),
                running("c1", "q2-preemptee1", "pg2", "n1", "1", "1G", preemptable=True),
                pod("c1", "q2-preemptor1", "pg3", "1", "1G"),
            ],
            "nodes": [node("n1", "2", "2G", pods=10)],
            "queues": [queue("q1"), queue("q2", capability=rl("4", "4G"))],
        },
        ["c1/q2-preemptee1"],
    ),
]


@pytest.mark.parametrize(("name", "objects", "expected"), VOLCANO_CASES, ids=[c[0] for c in VOLCANO_CASES])
def test_volcano_preempt_cases(name: str, objects: dict[str, Any], expected: list[str]) -> None:
    result = run_session(snapshot(policy=VOLCANO_PREEMPT, **objects), now=0.0)
    assert evicted(result) == expected
    for eviction in result.evictions:
        assert eviction.action == "preempt" and eviction.reason == "Preempted" and eviction.preemptor


def test_preempt_by_priority_within_a_queue_records_why() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],
        queues=[queue("q")],
        podgroups=[
            podgroup("ns", "low", "q", 1, phase=Q.RUNNING, priority=1),
            podgroup("ns", "high", "q", 1, priority=9),
        ],
        pods=[
            running("ns", "low-0", "low", "n1", "1", "1Gi"),
            running("ns", "low-1", "low", "n1", "1", "1Gi"),
            pod("ns", "high-0", "high", "1", "1Gi"),
        ],
        policy=policy("allocate, preempt", ["priority", "gang", "conformance"], ["drf", "predicates", "proportion"]),
    )
    result = run_session(snap, now=0.0)
    assert evicted(result) == ["ns/low-1"]
    assert pipelined(result) == {"ns/high-0": "n1"}
    (eviction,) = result.evictions
    assert eviction.message == (
        "preempted by ns/high-0 (job ns/high priority 9, pod priority 0) in queue q; victim job priority 1, "
        "pod priority 0"
    )


def test_equal_priority_never_preempts() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],
        queues=[queue("q")],
        podgroups=[podgroup("ns", "a", "q", 1, phase=Q.RUNNING, priority=5), podgroup("ns", "b", "q", 1, priority=5)],
        pods=[running("ns", "a-0", "a", "n1", "2", "1Gi"), pod("ns", "b-0", "b", "1", "1Gi")],
        policy=policy("preempt", ["priority", "gang", "conformance"], ["predicates", "proportion"]),
    )
    assert run_session(snap, now=0.0).evictions == []


def test_preemption_between_the_pods_of_one_job() -> None:
    # a job whose low-priority pod holds the node; its high-priority pod (same job) takes the place. (With gang
    # this never happens: a job is starving only below minMember, and then gang lets none of its pods go.)
    snap = snapshot(
        nodes=[node("n1", "1", "8Gi")],
        queues=[queue("q")],
        podgroups=[podgroup("ns", "job", "q", 2, phase=Q.RUNNING)],
        pods=[
            running("ns", "job-low", "job", "n1", "1", "1Gi", priority=1),
            running("ns", "job-mid", "job", "n1", "0", "1Gi", priority=2),
            pod("ns", "job-high", "job", "1", "1Gi", priority=10),
        ],
        policy=policy("preempt", ["priority", "conformance"], ["predicates"]),
    )
    result = run_session(snap, now=0.0)
    assert evicted(result) == ["ns/job-low"]
    assert pipelined(result) == {"ns/job-high": "n1"}
