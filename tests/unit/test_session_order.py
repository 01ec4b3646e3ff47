"""``engine.session.order``: the waiting jobs of a queue in the order a session opened on the snapshot serves them
(the framework's own keys, not a second ordering)."""

from __future__ import annotations

from engine.objects import PodGroupPhase
from engine.session.order import queue_order
from tests.unit.test_session_support import node, pod, podgroup, queue, running, snapshot


def test_priority_first_then_submission_and_only_waiting_jobs() -> None:
    snap = snapshot(
        nodes=[node("n1", cpu="8")],
        queues=[queue("q"), queue("r")],
        podgroups=[
            podgroup("ns", "late", "q", phase=PodGroupPhase.PENDING, created=3.0),
            podgroup("ns", "early", "q", phase=PodGroupPhase.INQUEUE, created=1.0),
            podgroup("ns", "urgent", "q", phase=PodGroupPhase.PENDING, priority=5, created=9.0),
            podgroup("ns", "busy", "q", phase=PodGroupPhase.RUNNING, created=0.5),
            podgroup("ns", "other", "r", phase=PodGroupPhase.PENDING, created=0.1),
        ],
        pods=[
            pod("ns", "late-0", "late"),
            pod("ns", "early-0", "early"),
            pod("ns", "urgent-0", "urgent"),
            running("ns", "busy-0", "busy", "n1"),
            pod("ns", "other-0", "other"),
        ],
    )
    order = queue_order(snap, "q", now=10.0)
    assert order.jobs == ("ns/urgent", "ns/early", "ns/late")
    assert order.ahead_of("ns/late") == ("ns/urgent", "ns/early")
    assert order.ahead_of("ns/urgent") == ()
    assert order.ahead_of("ns/busy") == order.jobs  # not waiting: every waiting job is ahead
    assert set(order.queues) == {"q", "r"} and order.queue_rank in (1, 2)
    assert queue_order(snap, "nowhere", now=10.0).queue_rank is None
