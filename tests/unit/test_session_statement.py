"""Statements: operations change the session at once; discard restores it exactly; commit yields decisions."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import TaskStatus
from engine.session.session import Session
from engine.session.statement import Statement
from tests.support.examples import examples
from tests.unit.test_session_support import (
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


def make_session() -> Session:
    snap = snapshot(
        nodes=[node("n1", "8", "16Gi", pods=20), node("n2", "8", "16Gi", pods=20), node("n3", "4", "8Gi", pods=20)],
        queues=[queue("q1"), queue("q2", 2)],
        groups=[group("g", min=rl("4"), max=rl("16"))],
        podgroups=[
            podgroup("ns1", "run", "q1", 2, phase="Running"),  # type: ignore[arg-type]
            podgroup("ns1", "wait", "q1", 2),
            podgroup("ns2", "other", "q2", 1),
        ],
        pods=[
            running("ns1", "run-0", "run", "n1", "2", "2Gi", quota="g"),
            running("ns1", "run-1", "run", "n2", "1", "1Gi"),
            running("ns1", "run-2", "run", "n3", "1", "1Gi", quota="g"),
            *(pod("ns1", f"wait-{i}", "wait", "1", "1Gi", quota="g") for i in range(3)),
            *(pod("ns2", f"other-{i}", "other", "2", "4Gi") for i in range(3)),
        ],
        policy=policy(
            "allocate", ["priority", "gang"], ["drf", "proportion", "predicates", "nodeorder", plugin("elasticquota")]
        ),
    )
    return Session(snap, snap.policy, 0.0)


def fingerprint(ssn: Session) -> dict[str, Any]:
    t = ssn.nodes
    book = ssn.queue_book
    assert book is not None
    eq = ssn.framework.plugin("elasticquota")
    return {
        "idle": t.idle.tolist(),
        "releasing": t.releasing.tolist(),
        "pipelined": t.pipelined.tolist(),
        "evictable": t.evictable.tolist(),
        "future_ops": t.future_ops,
        "tasks": {u: (x.status, x.node) for u, x in ssn.tasks.items()},
        "on_node": [sorted(d) for d in t.tasks],
        "jobs": {
            k: (dict(j.counts), {r: v for r, v in j.allocated.items() if v}, j.pending_be) for k, j in ssn.jobs.items()
        },
        "ns": {k: {r: v for r, v in d.items() if v} for k, d in ssn.ns_allocated.items() if any(d.values())},
        "queues": {q: ({r: v for r, v in book.state(q).allocated.items() if v}, book.state(q).share) for q in book},
        "quota": {g: {r: v for r, v in d.items() if v} for g, d in getattr(eq, "used", {}).items() if any(d.values())},
    }


ops = st.lists(
    st.tuples(st.sampled_from(["allocate", "pipeline", "evict"]), st.integers(0, 50), st.integers(0, 2)), max_size=12
)


def apply(ssn: Session, stmt: Statement, plan: list[tuple[str, int, int]]) -> int:
    done = 0
    for kind, pick, row in plan:
        if kind == "evict":
            running_tasks = sorted(u for u, t in ssn.tasks.items() if t.status == TaskStatus.RUNNING)
            if not running_tasks:
                continue
            task = ssn.tasks[running_tasks[pick % len(running_tasks)]]
            stmt.evict(task, action="reclaim", reason="Test", message="test")
        else:
            pending = sorted(u for u, t in ssn.tasks.items() if t.status == TaskStatus.PENDING)
            if not pending:
                continue
            task = ssn.tasks[pending[pick % len(pending)]]
            if kind == "allocate":
                stmt.allocate(task, row)
            else:
                stmt.pipeline(task, row)
        done += 1
    return done


@settings(max_examples=examples(150), deadline=None)
@given(ops)
def test_discard_restores_the_session_exactly(plan: list[tuple[str, int, int]]) -> None:
    ssn = make_session()
    before = fingerprint(ssn)
    stmt = Statement(ssn)
    apply(ssn, stmt, plan)
    stmt.discard()
    assert fingerprint(ssn) == before
    assert ssn.bindings == [] and ssn.evictions == []
    # the placement cache, fed by the node change log, agrees with a fresh computation afterwards
    for uid in ("ns1/wait-0", "ns2/other-0"):
        task = ssn.tasks[uid]
        cached = ssn.placement.best(task)
        entry = ssn.placement._entry(task)
        fresh = np.where(entry.static, ssn.placement._compute(entry.shape, slice(None)), -np.inf)
        assert cached is None or cached[0] == int(np.argmax(fresh))


@settings(max_examples=examples(100), deadline=None)
@given(ops)
def test_commit_turns_every_operation_into_a_decision(plan: list[tuple[str, int, int]]) -> None:
    ssn = make_session()
    stmt = Statement(ssn)
    done = apply(ssn, stmt, plan)
    kinds = [op.kind for op in stmt.ops]
    stmt.commit()
    assert len(ssn.bindings) + len(ssn.evictions) == done
    assert [b.pipelined for b in ssn.bindings] == [k == "pipeline" for k in kinds if k != "evict"]
    for b in ssn.bindings:
        expected = TaskStatus.PIPELINED if b.pipelined else TaskStatus.BINDING
        assert ssn.tasks[b.task].status == expected
    for e in ssn.evictions:
        assert ssn.tasks[e.task].status == TaskStatus.RELEASING


def test_operations_move_the_plugins_at_once() -> None:
    ssn = make_session()
    book = ssn.queue_book
    assert book is not None
    before = book.state("q1").allocated.get("cpu", 0)
    stmt = Statement(ssn)
    stmt.allocate(ssn.tasks["ns1/wait-0"], 0)
    assert book.state("q1").allocated["cpu"] == before + 1000
    assert ssn.jobs["ns1/wait"].ready_num() == 1
    eq = ssn.framework.plugin("elasticquota")
    assert eq is not None and eq.used["g"]["cpu"] == 3000 + 1000  # type: ignore[attr-defined]
    stmt.evict(ssn.tasks["ns1/run-0"], action="reclaim", reason="Test", message="test")
    assert book.state("q1").allocated["cpu"] == before + 1000 - 2000
    assert ssn.nodes.releasing[0, ssn.nodes.col["cpu"]] == 2000
    stmt.discard()
    assert book.state("q1").allocated["cpu"] == before


def test_merge_moves_operations() -> None:
    ssn = make_session()
    outer, inner = Statement(ssn), Statement(ssn)
    inner.pipeline(ssn.tasks["ns1/wait-1"], 2)
    outer.merge(inner)
    assert len(inner) == 0 and len(outer) == 1
    outer.commit()
    assert [(b.task, b.node, b.pipelined) for b in ssn.bindings] == [("ns1/wait-1", "n3", True)]
