"""The entry points: run_session (policy default, values at open, warnings), apply_result (the next session's
snapshot), and the engine's purity (no Django)."""

from __future__ import annotations

import subprocess
import sys

from engine.objects import PodGroupPhase, TaskStatus
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    Q,
    bound,
    node,
    pipelined,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    running,
    snapshot,
)


def test_policy_defaults_to_the_snapshot_policy() -> None:
    objects = {
        "nodes": [node("n1", "1", "4Gi")],
        "podgroups": [podgroup("ns", "pg", phase=Q.PENDING)],
        "pods": [pod("ns", "p-0", "pg")],
    }
    snap = snapshot(policy=policy("enqueue", ["gang"], ["proportion"]), **objects)  # type: ignore[arg-type]
    assert run_session(snap, now=0.0).bindings == []  # enqueue only
    other = policy("enqueue, allocate", ["gang"], ["proportion", "predicates"])
    assert bound(run_session(snap, now=0.0, policy=other)) == {"ns/p-0": "n1"}


def test_queue_values_are_those_computed_at_open() -> None:
    snap = snapshot(
        nodes=[node("n1", "4", "8Gi")],
        queues=[queue("q")],
        podgroups=[podgroup("ns", "pg", "q", 0)],
        pods=[pod("ns", f"p-{i}", "pg") for i in range(3)],
        policy=policy("allocate", ["gang"], ["proportion", "predicates"]),
    )
    result = run_session(snap, now=0.0)
    assert len(result.bindings) == 3
    values = result.queue_values["q"]
    assert values.allocated == {} or values.allocated["cpu"] == 0  # not the session's end state
    assert values.deserved["cpu"] == 3000 and values.request["cpu"] == 3000
    assert result.namespace_values[("q", "ns")].deserved["cpu"] == 3000


def test_apply_result_runs_bound_and_pipelined_pods_and_drops_evicted_ones() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("ns", "b", "b", 1, phase=Q.RUNNING), podgroup("ns", "a", "a", 1)],
        pods=[running("ns", f"b-{i}", "b", "n1") for i in range(2)] + [pod("ns", "a-0", "a")],
        policy=policy(
            "enqueue, allocate, reclaim", ["priority", "gang", "conformance"], ["drf", "predicates", "proportion"]
        ),
    )
    result = run_session(snap, now=5.0)
    assert pipelined(result) == {"ns/a-0": "n1"} and [e.task for e in result.evictions] == ["ns/b-1"]
    after = apply_result(snap, result, now=7.0)
    moved = after.tasks["ns/a-0"]
    assert (moved.status, moved.node, moved.start_timestamp) == (TaskStatus.RUNNING, "n1", 7.0)
    assert "ns/b-1" not in after.tasks
    assert after.podgroups["ns/a"].phase == PodGroupPhase.RUNNING
    assert snap.tasks["ns/a-0"].status == TaskStatus.PENDING  # the input is untouched


def test_apply_result_keeps_reasons_as_conditions() -> None:
    snap = snapshot(
        nodes=[node("n1", "1", "4Gi")],
        podgroups=[podgroup("ns", "pg", min_member=2)],
        pods=[pod("ns", f"p-{i}", "pg") for i in range(2)],
        policy=policy("allocate", ["gang"], ["predicates"]),
    )
    result = run_session(snap, now=0.0)
    after = apply_result(snap, result, now=3.0)
    (condition,) = after.podgroups["ns/pg"].conditions
    assert condition.type == "Unschedulable"
    assert condition.reason == "NotEnoughResources" and condition.last_transition_time == 3.0
    assert condition.message == result.podgroups["ns/pg"].message


def test_policy_warnings_reach_the_result() -> None:
    snap = snapshot(
        podgroups=[podgroup("ns", "pg")],
        policy=policy("reclaim", ["gang", "conformance", plugin("sla")], ["proportion"]),
    )
    warnings = run_session(snap, now=0.0).warnings
    assert any("sla" in w for w in warnings)
    assert any("victim filters sit in 2 tiers" in w for w in warnings)


def test_the_engine_imports_no_django() -> None:
    modules = [
        "engine.session.run",
        "engine.session.session",
        "engine.session.statement",
        "engine.session.framework",
        "engine.session.recycle",
        "engine.session.plugins",
        "engine.session.actions",
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
