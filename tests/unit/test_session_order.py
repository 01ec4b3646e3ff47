"""``engine.session.order``: the waiting jobs of each queue in the order a session opened on the snapshot serves
them (the framework's own job key, not a second ordering), with only the job-ordering plugins built."""

from __future__ import annotations

import pytest

from engine.objects import PodGroupPhase, TaskStatus
from engine.policy.policy import DEFAULT_POLICY, Policy
from engine.session.order import job_order, ordering_policy
from engine.session.session import Session
from engine.values import compute_values
from tests.unit.test_session_support import node, pod, podgroup, queue, running, snapshot

P, Q, R, U = PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN
DRF_FIRST = Policy.from_yaml(
    """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: drf
  - name: priority
  - name: gang
- plugins:
  - name: proportion
  - name: predicates
  - name: nodeorder
"""
)


def cluster() -> object:
    """Two queues; in q, jobs of several priorities, phases and submission times, some with pods running."""
    return snapshot(
        nodes=[node("n1", cpu="16")],
        queues=[queue("q"), queue("r")],
        podgroups=[
            podgroup("ns", "late", "q", phase=P, created=3.0),
            podgroup("ns", "early", "q", phase=Q, created=1.0),
            podgroup("ns", "urgent", "q", phase=P, priority=5, created=9.0),
            podgroup("ns", "halfway", "q", 3, phase=Q, created=2.0),
            podgroup("ns", "busy", "q", phase=R, created=0.5),
            podgroup("ns", "other", "r", phase=P, created=0.1),
        ],
        pods=[
            pod("ns", "late-0", "late"),
            pod("ns", "early-0", "early"),
            pod("ns", "urgent-0", "urgent"),
            running("ns", "halfway-0", "halfway", "n1", cpu="4"),
            pod("ns", "halfway-1", "halfway"),
            pod("ns", "halfway-2", "halfway"),
            running("ns", "busy-0", "busy", "n1"),
            pod("ns", "other-0", "other"),
        ],
    )


def test_priority_first_then_submission_and_only_waiting_jobs() -> None:
    """Volcano's default tiers: priority, then gang (ready jobs after those that are not), then drf (the job with
    the smaller dominant share first: halfway already runs a pod, so it comes after late), then submission."""
    order = job_order(cluster(), now=10.0)  # type: ignore[arg-type]
    assert order.of("q") == ("ns/urgent", "ns/early", "ns/late", "ns/halfway")
    assert order.ahead_of("q", "ns/halfway") == ("ns/urgent", "ns/early", "ns/late")
    assert order.ahead_of("q", "ns/urgent") == ()
    assert order.ahead_of("q", "ns/busy") == order.of("q")  # not waiting: every waiting job is ahead
    assert order.of("r") == ("ns/other",) and order.of("nowhere") == ()


@pytest.mark.parametrize("policy", [DEFAULT_POLICY, DRF_FIRST], ids=["default", "drf-first"])
def test_the_order_is_the_full_sessions(policy: Policy) -> None:
    """The same order as a session opened with the whole policy (every plugin built, values computed at open)."""
    snap = cluster().with_policy(policy)  # type: ignore[attr-defined]
    full = Session(snap, policy, 10.0)
    expected = {
        q: tuple(
            j.key
            for j in sorted(
                (j for j in jobs if j.phase in ("Pending", "Inqueue") or j.counts[TaskStatus.PENDING]),
                key=full.framework.job_key,
            )
        )
        for q, jobs in full.jobs_by_queue.items()
    }
    assert dict(job_order(snap, now=10.0).queues) == expected
    assert dict(job_order(snap, now=10.0, values=compute_values(snap)).queues) == expected
    kept = [p.name for tier in ordering_policy(policy).tiers for p in tier]
    assert set(kept) <= {"drf", "priority", "gang"} and ordering_policy(policy).actions == ()


def test_a_gang_partly_placed_or_with_evicted_pods_still_waits_in_its_queue() -> None:
    """A job whose gang runs in part (Unknown) or runs with pods still to place is walked again by allocate: it has
    a place in the order; a running job with every pod placed has none."""
    snap = snapshot(
        nodes=[node("n1", cpu="16")],
        queues=[queue("q")],
        podgroups=[
            podgroup("ns", "part", "q", 2, phase=U, created=1.0),
            podgroup("ns", "fresh", "q", phase=P, created=2.0),
            podgroup("ns", "done", "q", phase=R, created=0.5),
            podgroup("ns", "more", "q", 1, phase=R, created=3.0),
        ],
        pods=[
            running("ns", "part-0", "part", "n1"),
            pod("ns", "part-1", "part"),
            pod("ns", "fresh-0", "fresh"),
            running("ns", "done-0", "done", "n1"),
            running("ns", "more-0", "more", "n1"),
            pod("ns", "more-1", "more"),
        ],
    )
    order = job_order(snap, now=10.0)
    assert set(order.of("q")) == {"ns/part", "ns/fresh", "ns/more"}
    assert "ns/done" not in order.of("q")
