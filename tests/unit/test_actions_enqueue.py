"""The enqueue action: Volcano's enqueue_test.go cases, votes, queue state, round-robin between queues.
(Seed 003's state table is in tests/acceptance/test_seed_003_enqueue.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from engine.objects import PodGroupPhase
from engine.session.run import run_session
from tests.unit.test_session_support import (
    ST,
    Q,
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    snapshot,
    volcano_tier,
)

VOLCANO_ENQUEUE = policy(
    "enqueue",
    volcano_tier(
        {
            "drf": ["enableJobOrder", "enableJobEnqueued"],
            "proportion": ["enableQueueOrder", "enableJobEnqueued"],
            "gang": ["enableJobOrder"],
        }
    ),
)

VOLCANO_CASES: list[tuple[str, dict[str, Any], dict[str, PodGroupPhase]]] = [
    (
        "when podgroup status is inqueue",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 2)],
            "pods": [pod("c1", "p1", "pg1", "1", "1G"), pod("c1", "p2", "pg1", "1", "1G")],
            "queues": [queue("c1", capability=rl("4", "4G")), queue("c2", capability=rl("4", "4G"))],
        },
        {"c1/pg1": Q.INQUEUE},
    ),
    (
        "when podgroup status is pending",
        {
            "podgroups": [
                podgroup("c1", "pg1", "c1", 1, phase=Q.PENDING),
                podgroup("c1", "pg2", "c2", 1, phase=Q.PENDING),
            ],
            "pods": [pod("c1", "p1", "pg1", "3", "1G"), pod("c1", "p2", "pg2", "1", "1G")],
            "queues": [queue("c1", capability=rl("4", "4G")), queue("c2", capability=rl("4", "4G"))],
        },
        {"c1/pg1": Q.INQUEUE, "c1/pg2": Q.INQUEUE},
    ),
    (
        "when podgroup status is running",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 2, phase=Q.RUNNING)],
            "pods": [
                pod("c1", "p1", "pg1", "1", "1G", status=ST.RUNNING, node="n1"),
                pod("c1", "p2", "pg1", "1", "1G", status=ST.RUNNING, node="n1"),
            ],
            "nodes": [node("n1", "4", "4G")],
            "queues": [queue("c1", capability=rl("4", "4G"))],
        },
        {"c1/pg1": Q.RUNNING},
    ),
    (
        "podgroup cannot enqueue because queue resources are less than podgroup MinResources",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 1, phase=Q.PENDING, min_resources=rl("8", "8G"))],
            "queues": [queue("c1", capability=rl("1", "1G"))],
        },
        {"c1/pg1": Q.PENDING},
    ),
]


@pytest.mark.parametrize(("name", "objects", "expected"), VOLCANO_CASES, ids=[c[0] for c in VOLCANO_CASES])
def test_volcano_enqueue_cases(name: str, objects: dict[str, Any], expected: dict[str, PodGroupPhase]) -> None:
    result = run_session(snapshot(policy=VOLCANO_ENQUEUE, **objects), now=0.0)
    assert {k: s.phase for k, s in result.podgroups.items()} == expected


def test_podgroup_of_a_missing_queue_is_not_enqueued() -> None:
    # Volcano: "the specified queue is c1, but there is only c2"
    snap = snapshot(
        queues=[queue("c2", capability=rl("4", "4G"))],
        podgroups=[podgroup("c1", "pg1", "c1", 0, phase=Q.PENDING)],
        policy=VOLCANO_ENQUEUE,
    )
    status = run_session(snap, now=0.0).podgroups["c1/pg1"]
    assert status.phase == PodGroupPhase.PENDING
    assert status.reason == "QueueNotFound"
    assert status.blocker is not None and status.blocker.name == "c1"


def test_closed_queue_refuses_podgroups_with_min_resources() -> None:
    snap = snapshot(
        nodes=[node("n1", "8", "8Gi")],
        queues=[queue("q", state="Closed")],
        podgroups=[
            podgroup("ns", "with", "q", phase=Q.PENDING, min_resources=rl("1")),
            podgroup("ns", "without", "q", phase=Q.PENDING),
        ],
        policy=policy("enqueue", ["gang"], ["proportion"]),
    )
    result = run_session(snap, now=0.0)
    status = result.podgroups["ns/with"]
    assert (status.phase, status.reason) == (PodGroupPhase.PENDING, "QueueClosed")
    assert "queue q state: queue is Closed, not Open" in status.message
    # Volcano admits a podgroup without minResources without asking any plugin
    assert result.podgroups["ns/without"].phase == PodGroupPhase.INQUEUE


@pytest.mark.parametrize(
    ("q2_priority", "expected"),
    [(0, ["ns/q1-0", "ns/q1-1", "ns/q1-2"]), (1, ["ns/q2-0", "ns/q2-1", "ns/q2-2"])],
)
def test_queue_order_decides_who_is_admitted_first(q2_priority: int, expected: list[str]) -> None:
    # 6 cpu with the factor 1.0, six podgroups of 2 cpu: three fit. The queue goes back after each admission
    # with the same order key (admitting changes no share), so the first queue in queue order (priority, then
    # share, then name) keeps its turn, as in Volcano
    groups = [
        podgroup("ns", f"{q}-{i}", q, phase=Q.PENDING, min_resources=rl("2"), created=float(i))
        for q in ("q1", "q2")
        for i in range(3)
    ]
    snap = snapshot(
        nodes=[node("n1", "6", "8Gi")],
        queues=[queue("q1"), queue("q2", priority=q2_priority)],
        podgroups=groups,
        policy=policy("enqueue", ["gang"], [plugin("overcommit", arguments={"overcommit-factor": 1.0}), "proportion"]),
    )
    result = run_session(snap, now=0.0)
    assert sorted(k for k, s in result.podgroups.items() if s.phase == PodGroupPhase.INQUEUE) == expected


def test_enqueued_reservation_is_seen_by_the_next_podgroup() -> None:
    snap = snapshot(
        nodes=[node("n1", "100", "8Gi")],
        queues=[queue("q", capability=rl("5"))],
        podgroups=[
            podgroup("ns", "a", "q", phase=Q.PENDING, min_resources=rl("3"), created=1.0),
            podgroup("ns", "b", "q", phase=Q.PENDING, min_resources=rl("3"), created=2.0),
        ],
        policy=policy("enqueue", ["gang"], ["proportion"]),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["ns/a"].phase == PodGroupPhase.INQUEUE
    assert "queue q realCapability: insufficient cpu, requested 3, available 2" in result.podgroups["ns/b"].message
