"""The backfill action: best-effort pods go to any node that passes the predicates, in queue / job / task order
(Volcano's backfill_test.go order), without queue gates; pods that request something are left alone."""

from __future__ import annotations

from engine.session.run import run_session
from tests.unit.test_session_support import (
    ST,
    Q,
    bound,
    node,
    pod,
    podgroup,
    policy,
    queue,
    running,
    snapshot,
    volcano_tier,
)


def test_best_effort_pod_is_backfilled_where_nothing_else_fits() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "4Gi", pods=10)],
        queues=[queue("q")],
        podgroups=[podgroup("ns", "full", "q", 1, phase=Q.RUNNING), podgroup("ns", "be", "q", 1)],
        pods=[running("ns", "full-0", "full", "n1", "2", "4Gi"), pod("ns", "be-0", "be", None, None)],
        policy=policy("allocate, backfill", ["priority", "gang"], ["drf", "predicates", "proportion", "nodeorder"]),
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {"ns/be-0": "n1"}
    assert result.podgroups["ns/be"].phase == "Running"


def test_allocate_alone_leaves_best_effort_pods() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "4Gi", pods=10)],
        podgroups=[podgroup("ns", "be", "default", 0)],
        pods=[pod("ns", "be-0", "be", None, None)],
        policy=policy("allocate", ["priority", "gang"], ["predicates", "proportion"]),
    )
    assert run_session(snap, now=0.0).bindings == []


def test_backfill_respects_predicates_and_pod_slots() -> None:
    snap = snapshot(
        nodes=[
            node("n1", "2", "4Gi", pods=1, labels={"zone": "a"}),
            node("n2", "2", "4Gi", pods=1, labels={"zone": "b"}),
        ],
        podgroups=[podgroup("ns", "be", "default", 0)],
        pods=[pod("ns", f"be-{i}", "be", None, None, selector={"zone": "a"}) for i in range(2)],
        policy=policy("backfill", ["priority", "gang"], ["predicates"]),
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {"ns/be-0": "n1"}  # one slot on the only matching node


def test_volcano_backfill_pick_order() -> None:
    # Volcano actions/backfill/backfill_test.go: two jobs (priority 1 and 2) of one queue, best-effort and
    # non-best-effort pods of priorities 1-4, those of priority 2 and 4 pipelined on node1 first. Backfill takes
    # only the best-effort ones (un-pipelining them), job by job priority, pod by pod priority.
    pods = []
    for job in ("pg1", "pg2"):
        for prio in (1, 2, 3, 4):
            status = ST.PIPELINED if prio in (2, 4) else ST.PENDING
            where = "node1" if status == ST.PIPELINED else None
            pods.append(
                pod(
                    "default",
                    f"{job}-besteffort-task-{prio}",
                    job,
                    None,
                    None,
                    priority=prio,
                    status=status,
                    node=where,
                )
            )
            pods.append(
                pod(
                    "default",
                    f"{job}-unbesteffort-task-{prio}",
                    job,
                    "500m",
                    None,
                    priority=prio,
                    status=status,
                    node=where,
                )
            )
    snap = snapshot(
        nodes=[node("node1", "64", "64Gi", pods=100)],
        queues=[queue("q1")],
        podgroups=[
            podgroup("default", "pg1", "q1", 1, min_task_member={"": 3}, priority=1),
            podgroup("default", "pg2", "q1", 1, min_task_member={"": 3}, priority=2),
        ],
        pods=pods,
        policy=policy(
            "backfill",
            volcano_tier(
                {"priority": ["enablePreemptable", "enableTaskOrder", "enableJobOrder"], "drf": ["enableQueueOrder"]}
            ),
        ),
    )
    result = run_session(snap, now=0.0)
    assert [b.task.split("/")[1] for b in result.bindings] == [
        "pg2-besteffort-task-4",
        "pg2-besteffort-task-3",
        "pg2-besteffort-task-2",
        "pg2-besteffort-task-1",
        "pg1-besteffort-task-4",
        "pg1-besteffort-task-3",
        "pg1-besteffort-task-2",
        "pg1-besteffort-task-1",
    ]
    assert all(not b.pipelined for b in result.bindings)
