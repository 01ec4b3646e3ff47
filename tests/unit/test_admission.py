"""Admission that cannot deadlock (issue 8): enqueue consults the quota groups and whether any node could hold the
pods, an admitted podgroup that cannot be placed gives its reservation back after a few sessions and backs off,
and a gang whose members were evicted is waiting, not Completed."""

from __future__ import annotations

import pytest

from engine.objects import Snapshot
from engine.policy.policy import EnqueueArgs, PolicyError, parse_enqueue_args
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    ST,
    Q,
    group,
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)

QUOTA_POLICY = policy(
    "enqueue, allocate, backfill",
    ["priority", "gang", "conformance", "proportion", plugin("elasticquota")],
    ["overcommit", "drf", "predicates", "nodeorder"],
)
DEFAULT_TIERS = (["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"])


def _run(snap: Snapshot, sessions: int, start: float = 1000.0) -> tuple[Snapshot, list]:  # type: ignore[type-arg]
    results = []
    now = start
    for _ in range(sessions):
        result = run_session(snap, now=now)
        results.append(result)
        snap = apply_result(snap, result, now=now)
        now += 1.0
    return snap, results


def _gang(name: str, size: int, quota: str | None, gpus: int = 1, created: float = 0.0) -> tuple[list, object]:  # type: ignore[type-arg]
    pods = [pod("t", f"{name}-{i}", name, "1", "1Gi", gpu=gpus, quota=quota) for i in range(size)]
    pg = podgroup(
        "t",
        name,
        "q",
        size,
        phase=Q.PENDING,
        min_resources=rl(str(size), f"{size}Gi", gpu=size * gpus),
        created=created,
    )
    return pods, pg


def test_a_job_its_quota_group_can_never_hold_does_not_block_one_that_fits() -> None:
    """One queue of 6 GPUs; job A (4 x 1 GPU) in a quota group whose max is 2 GPUs, job B alike in a group with
    room: A was admitted forever and B never (the issue's first offline case)."""
    a_pods, a = _gang("a", 4, "ga", created=1)
    b_pods, b = _gang("b", 4, "gb", created=2)
    snap = snapshot(
        nodes=[node("n1", "32", "128Gi", gpu=3), node("n2", "32", "128Gi", gpu=3)],
        pods=[*a_pods, *b_pods],
        podgroups=[a, b],
        queues=[queue("q", capability=rl("64", "256Gi", gpu=6))],
        groups=[group("ga", max=rl("64", "256Gi", gpu=2)), group("gb", max=rl("64", "256Gi", gpu=6))],
        policy=QUOTA_POLICY,
    )
    snap, results = _run(snap, 4)
    first = results[0].podgroups
    assert first["t/b"].phase == Q.RUNNING and len(results[0].bindings) == 4
    assert first["t/a"].phase == Q.PENDING
    assert "quota group ga max: insufficient nvidia.com/gpu, requested 4, available 2" in first["t/a"].message
    assert first["t/a"].blocker is not None and (first["t/a"].blocker.kind, first["t/a"].blocker.limit) == (
        "quota",
        "max",
    )
    assert all(r.podgroups["t/a"].phase == Q.PENDING for r in results)


def test_a_pod_no_node_can_hold_is_not_admitted() -> None:
    """Two nodes of 3 GPUs; job A is one pod of 4 GPUs, job B two pods of 2 GPUs: B runs, A waits and says why
    (the issue's second offline case)."""
    snap = snapshot(
        nodes=[node("n1", "32", "128Gi", gpu=3), node("n2", "32", "128Gi", gpu=3)],
        pods=[pod("t", "a-0", "a", "1", "1Gi", gpu=4), *(pod("t", f"b-{i}", "b", "1", "1Gi", gpu=2) for i in range(2))],
        podgroups=[
            podgroup("t", "a", "q", 1, phase=Q.PENDING, min_resources=rl("1", "1Gi", gpu=4), created=1),
            podgroup("t", "b", "q", 2, phase=Q.PENDING, min_resources=rl("2", "2Gi", gpu=4), created=2),
        ],
        queues=[queue("q")],
        policy=policy("enqueue, allocate, backfill", *DEFAULT_TIERS),
    )
    _, results = _run(snap, 2)
    status = results[0].podgroups
    assert status["t/b"].phase == Q.RUNNING
    assert status["t/a"].phase == Q.PENDING
    assert "cluster nodes allocatable: insufficient nvidia.com/gpu, requested 4, available 3" in status["t/a"].message
    assert "no node can ever hold one of its pods" in status["t/a"].message


def _fragmented(requeue: dict[str, object] | None = None) -> Snapshot:
    """8 GPUs on two nodes, 2 busy on each: job A (one pod of 4 GPUs) fits the aggregate but no node; job B (two
    pods of 1 GPU) fits, but the over-committed idle (4 x 1.2 = 5.6... minus A's 4) refuses it while A reserves."""
    configurations = {"enqueue": requeue} if requeue is not None else {}
    return snapshot(
        nodes=[node("n1", "32", "128Gi", gpu=4), node("n2", "32", "128Gi", gpu=4)],
        pods=[
            running("t", "r1", "r", "n1", "1", "1Gi", gpu=2),
            running("t", "r2", "r", "n2", "1", "1Gi", gpu=2),
            pod("t", "a-0", "a", "1", "1Gi", gpu=4),
            *(pod("t", f"b-{i}", "b", "1", "1Gi", gpu=1) for i in range(2)),
        ],
        podgroups=[
            podgroup("t", "r", "q", 2, phase=Q.RUNNING, min_resources=rl("2", "2Gi", gpu=4)),
            podgroup("t", "a", "q", 1, phase=Q.PENDING, min_resources=rl("1", "1Gi", gpu=4), created=1),
            podgroup("t", "b", "q", 2, phase=Q.PENDING, min_resources=rl("2", "2Gi", gpu=2), created=2),
        ],
        queues=[queue("q")],
        policy=policy("enqueue, allocate, backfill", *DEFAULT_TIERS, **configurations),
    )


def test_an_admitted_job_that_cannot_be_placed_gives_its_reservation_back() -> None:
    _, results = _run(_fragmented(), 8)
    a = [r.podgroups["t/a"] for r in results]
    b = [r.podgroups["t/b"] for r in results]
    # sessions 1-2: A is Inqueue and unplaced, B refused admission by A's reservation
    assert [s.phase for s in a[:2]] == [Q.INQUEUE, Q.INQUEUE] and [s.unplaced_sessions for s in a[:2]] == [1, 2]
    assert b[0].phase == Q.PENDING and "reserved by admitted podgroups" in b[0].message
    # session 3: A goes back to Pending, with its reason and a backoff
    assert (a[2].phase, a[2].reason, a[2].requeues, a[2].unplaced_sessions) == (Q.PENDING, "Requeued", 1, 0)
    assert a[2].backoff_until == pytest.approx(1002.0 + 4.0)
    assert "not placed in 3 sessions" in a[2].message and "the largest idle node has 2" in a[2].message
    # session 4: B is admitted and runs; A waits out its backoff with the same message
    assert b[3].phase == Q.RUNNING
    assert (a[3].phase, a[3].reason, a[3].message) == (Q.PENDING, "Requeued", a[2].message)
    # after the backoff A is considered again (and refused: the GPUs are taken now)
    assert a[6].phase == Q.PENDING and a[6].reason == "Unschedulable"


def test_an_admitted_job_whose_pods_are_awaited_keeps_its_reservation() -> None:
    """A job admitted before its pods exist (a Kueue Job the adapter resumes: ``AdmissionLevers.pods_awaited``) has
    nothing to place while its controller makes them: no session counts against it. The same job not awaited gives
    its reservation back after three sessions, as any admitted job that places nothing."""
    import dataclasses

    base = snapshot(
        nodes=[node("n1", "8", "32Gi")],
        podgroups=[podgroup("t", "c", "q", 2, phase=Q.PENDING, min_resources=rl("2", "2Gi"))],
        queues=[queue("q")],
        policy=policy("enqueue, allocate, backfill", *DEFAULT_TIERS),
    )
    awaited = base.replace(admission=dataclasses.replace(base.admission, pods_awaited=("t/c",)))
    _, results = _run(awaited, 5)
    assert [(r.podgroups["t/c"].phase, r.podgroups["t/c"].unplaced_sessions) for r in results] == [(Q.INQUEUE, 0)] * 5
    _, results = _run(base, 3)
    assert [r.podgroups["t/c"].phase for r in results] == [Q.INQUEUE, Q.INQUEUE, Q.PENDING]
    assert results[2].podgroups["t/c"].reason == "Requeued"


def test_requeue_after_sessions_zero_keeps_volcanos_reservation() -> None:
    _, results = _run(_fragmented({"requeueAfterSessions": 0}), 6)
    assert all(r.podgroups["t/a"].phase == Q.INQUEUE for r in results)
    assert all(r.podgroups["t/b"].phase == Q.PENDING for r in results)


def test_the_backoff_doubles_up_to_its_cap() -> None:
    args = EnqueueArgs()
    assert [args.backoff(n) for n in (1, 2, 3, 4, 5, 6, 50)] == [4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert parse_enqueue_args({"requeueAfterSessions": 5, "requeueBackoff": "1s", "requeueBackoffMax": "2m"}) == (
        EnqueueArgs(5, 1.0, 120.0)
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"requeueAfterSessions": -1}, "requeueAfterSessions: expected a whole number >= 0"),
        ({"requeueAfterSessions": True}, "requeueAfterSessions: expected a whole number >= 0"),
        ({"requeueBackoff": "soon"}, "requeueBackoff"),
        ({"requeueBackoff": "10s", "requeueBackoffMax": "5s"}, "requeueBackoffMax (5s) is below requeueBackoff"),
    ],
)
def test_bad_enqueue_arguments_are_refused_when_the_policy_is_read(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        policy("enqueue, allocate", ["gang"], enqueue=arguments)


def test_an_admitted_job_over_its_quota_groups_runtime_goes_back_when_the_runtime_shrinks() -> None:
    """A quota group lends while its sibling is idle; the sibling's demand comes back and the runtime shrinks
    under the reservation: the reservation is released at once (not after three sessions)."""
    lender_pods = [pod("t", f"l-{i}", "l", "4", "1Gi", quota="gl") for i in range(4)]
    snap = snapshot(
        nodes=[node("n1", "16", "64Gi")],
        pods=[
            *(running("t", f"u-{i}", "u", "n1", "4", "1Gi", quota="gb") for i in range(2)),
            *(pod("t", f"w-{i}", "w", "4", "1Gi", quota="gb") for i in range(2)),
        ],
        podgroups=[
            podgroup("t", "u", "q", 2, phase=Q.RUNNING, min_resources=rl("8", "2Gi")),
            podgroup("t", "w", "q", 2, phase=Q.INQUEUE, min_resources=rl("8", "2Gi")),
        ],
        queues=[queue("q")],
        groups=[
            group("gb", min=rl("8", "32Gi"), max=rl("16", "64Gi")),
            group("gl", min=rl("8", "32Gi"), max=rl("16", "64Gi")),
        ],
        policy=QUOTA_POLICY,
    )
    first = run_session(snap, now=0.0)
    assert first.podgroups["t/w"].phase == Q.RUNNING  # the lender is idle: gb's runtime is 16
    # the lender's demand arrives before w ran: gb's runtime falls back to 8, which u already uses
    snap = snap.with_tasks(lender_pods).with_podgroups(
        [podgroup("t", "l", "q", 4, phase=Q.PENDING, min_resources=rl("16", "4Gi"), created=5)]
    )
    second = run_session(snap, now=1.0)
    assert second.podgroups["t/w"].phase == Q.PENDING
    assert second.podgroups["t/w"].reason == "Requeued"
    assert "quota group gb runtime" in second.podgroups["t/w"].message


def test_a_gang_whose_members_were_all_evicted_is_waiting_not_completed() -> None:
    """Failed pods never count as scheduled: four evicted members and their four Pending replacements."""
    members = [pod("t", f"g-{i}", "g", "1", "1Gi", status=ST.FAILED, node="n1") for i in range(4)]
    replacements = [pod("t", f"g-{i}-r1", "g", "1", "1Gi") for i in range(4)]
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],  # room for two: the gang of four cannot run now
        pods=[*members, *replacements],
        podgroups=[podgroup("t", "g", "q", 4, phase=Q.RUNNING, min_resources=rl("4", "4Gi"))],
        queues=[queue("q")],
        policy=policy("enqueue, allocate, backfill", *DEFAULT_TIERS),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["t/g"].phase in (Q.PENDING, Q.INQUEUE)
    assert result.podgroups["t/g"].reason


def test_a_podgroup_is_completed_only_when_nothing_is_left_to_run() -> None:
    done = [pod("t", f"d-{i}", "d", "1", "1Gi", status=ST.SUCCEEDED, node="n1") for i in range(2)]
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],
        pods=[*done, pod("t", "d-2", "d", "1", "1Gi")],
        podgroups=[podgroup("t", "d", "q", 2, phase=Q.RUNNING)],
        queues=[queue("q")],
        policy=policy("enqueue, allocate, backfill", *DEFAULT_TIERS),
    )
    assert run_session(snap, now=0.0).podgroups["t/d"].phase == Q.RUNNING  # its last pod is still to run
    finished = snap.with_tasks([pod("t", "d-2", "d", "1", "1Gi", status=ST.SUCCEEDED, node="n1")])
    assert run_session(finished, now=1.0).podgroups["t/d"].phase == Q.COMPLETED
