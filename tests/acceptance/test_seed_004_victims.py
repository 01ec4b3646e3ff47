"""Seed 004 (hierarchical queues on capacity), story 4: "when job A performs reclaim or preempt actions, the
system should first consider job B (belonging to the same parent queue a), and then consider job C (belonging to
the same parent queue root)".

    root
    |-- a  (deserved 4 cpu)
    |   |-- qa  (deserved 2)  job A: wants 2 pods
    |   `-- qb  (deserved 2)  job B: 3 pods running, one above its deserved
    `-- c  (deserved 4 cpu)
        `-- qc  (deserved 2)  job C: 5 pods running, three above its deserved

All eight pods share one 8-cpu node, so only the victim order decides.
"""

from __future__ import annotations

from engine.objects import Snapshot
from engine.policy.policy import Policy
from engine.session.run import run_session
from tests.unit.test_session_support import (
    Q,
    evicted,
    node,
    pipelined,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)


def tree(capacity: Policy, b_running: int = 3, c_running: int = 5) -> Snapshot:
    return snapshot(
        nodes=[node("n1", "8", "64Gi")],
        queues=[
            queue("a", deserved=rl("4")),
            queue("qa", parent="a", deserved=rl("2")),
            queue("qb", parent="a", deserved=rl("2")),
            queue("c", deserved=rl("4")),
            queue("qc", parent="c", deserved=rl("2")),
        ],
        podgroups=[
            podgroup("ns", "A", "qa", 2),
            podgroup("ns", "B", "qb", 1, phase=Q.RUNNING),
            podgroup("ns", "C", "qc", 1, phase=Q.RUNNING),
        ],
        pods=[
            *(pod("ns", f"A-{i}", "A", "1", None) for i in range(2)),
            *(running("ns", f"B-{i}", "B", "n1", "1", None) for i in range(b_running)),
            *(running("ns", f"C-{i}", "C", "n1", "1", None) for i in range(c_running)),
        ],
        policy=capacity,
    )


HIERARCHY = policy("reclaim", ["gang", "conformance", plugin("capacity", enableHierarchy=True)], ["predicates"])
FLAT = policy("reclaim", ["gang", "conformance", "capacity"], ["predicates"])


def test_sibling_job_b_before_cousin_job_c() -> None:
    result = run_session(tree(HIERARCHY), now=0.0)
    victims = evicted(result)
    assert len(victims) == 2
    assert victims[0].startswith("ns/B-")  # B first: qb shares parent a with qa
    assert victims[1].startswith("ns/C-")  # then C: B is back at its deserved, C (via root) is next
    assert sorted(pipelined(result)) == ["ns/A-0", "ns/A-1"]
    assert all(e.preemptor is not None and e.preemptor.startswith("ns/A-") for e in result.evictions)


def test_cousin_is_taken_when_the_sibling_is_within_its_deserved() -> None:
    result = run_session(tree(HIERARCHY, b_running=2, c_running=6), now=0.0)
    assert all(v.startswith("ns/C-") for v in evicted(result))
    assert len(evicted(result)) == 2


def test_without_hierarchy_the_higher_share_goes_first() -> None:
    # flat capacity: victims in reverse queue order; qc's share (5/2) is above qb's (3/2), so C goes first
    result = run_session(tree(FLAT), now=0.0)
    victims = evicted(result)
    assert len(victims) == 2
    assert victims[0].startswith("ns/C-")
