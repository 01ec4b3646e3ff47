"""Kueue's ResourceFlavors in traces and replays (issue 28 item 7 with issue 29): a trace whose Tree holds
ResourceFlavors and ClusterQueues with quota per flavor replays with its waiting jobs given their flavors by the
live session's function (``engine.flavors.assign_flavors``) and placed on that flavor's nodes; a job's ``flavors``
(version 2) reads and round-trips; a version-1 trace still reads, replays and is written as version 1."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from engine.replay import TraceError, read_trace, replay_document, trace_lines
from engine.replay.loop import replay
from tests.scheduling.test_kueue_flavors_live import FLAVORS, NODES
from tests.unit.test_replay import LINES, text

HEADER = {
    "kind": "FairwayTrace",
    "version": 2,
    "cluster": "k",
    "from": "2026-03-02T08:00:00Z",
    "to": "2026-03-02T10:00:00Z",
    "period": 60,
    "source": "hand",
}
TREE = {"kind": "Tree", "objects": [o for o in yaml.safe_load_all(FLAVORS + NODES) if o]}


def job(name: str, submit: str, cpu: int, runtime: float, flavors: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "Job",
        "namespace": "team-a",
        "name": name,
        "queue": "team-a",
        "submit": submit,
        "roles": [{"name": "", "pods": 1, "request": {"cpu": str(cpu), "memory": "1Gi"}}],
        "runtime": runtime,
    }
    if flavors is not None:
        out["flavors"] = flavors
    return out


# team-a: on-demand 4 cpu (node od-1, 4 cpu), spot 8 cpu (node spot-1, tainted; the flavor gives the toleration),
# whenCanBorrow: TryNextFlavor. a (3 cpu, 08:00) fits on-demand; at 08:01 b (3 cpu) fits there no more and goes to
# spot, and so does c (2 cpu: on-demand has 1 cpu left, spot 5); huge (20 cpu) fits in no flavor and waits
LINES_V2 = [
    HEADER,
    TREE,
    job("a", "2026-03-02T08:00:00Z", 3, 1800, {"cpu": "on-demand", "memory": "on-demand"}),
    job("b", "2026-03-02T08:00:10Z", 3, 1800, {"cpu": "spot", "memory": "spot"}),
    job("c", "2026-03-02T08:00:20Z", 2, 600),
    job("huge", "2026-03-02T08:00:30Z", 20, 600),
]


def test_a_flavored_trace_replays_its_waiting_jobs_on_their_flavors() -> None:
    trace = read_trace(text(LINES_V2))
    run = replay(trace)
    out = run.outcomes
    assert out["team-a/a"].flavors == {"cpu": "on-demand", "memory": "on-demand"}
    assert out["team-a/b"].flavors == {"cpu": "spot", "memory": "spot"}
    assert out["team-a/c"].flavors == {"cpu": "spot", "memory": "spot"}  # on-demand: 1 cpu left
    assert out["team-a/a"].start == trace.header.start  # the session at 08:00
    assert out["team-a/b"].start == out["team-a/c"].start == trace.header.start + 60  # the next on the grid
    assert out["team-a/huge"].start is None  # fits in no flavor (at most 8 cpu): it waits
    # the runs and samples per resource, the flavors added up: 3 + 3 + 2 cpu running after the first session
    first = next(s for s in run.samples if s.time == trace.header.start + 60)
    assert first.used["cpu"] == 8_000 and first.capacity["cpu"] == 12_000 and "cpu@spot" not in first.used
    assert {r[5]["cpu"] for r in run.runs} == {3_000, 2_000}
    doc = replay_document(trace)["baseline"]["jobs"]
    assert doc["team-a/b"]["flavors"] == {"cpu": "spot", "memory": "spot"}
    assert doc["team-a/b"]["recordedFlavors"] == {"cpu": "spot", "memory": "spot"}
    assert "recordedFlavors" not in doc["team-a/c"]


def test_the_flavors_round_trip_and_the_version_is_the_lowest_that_holds_them() -> None:
    trace = read_trace(text(LINES_V2))
    assert trace.jobs[0].flavors == {"cpu": "on-demand", "memory": "on-demand"}
    lines = list(trace_lines(trace))
    assert json.loads(lines[0])["version"] == 2
    assert read_trace(lines).jobs == trace.jobs
    assert "flavors" not in json.loads(lines[-1])  # a job without flavors: the field left out (compact)
    bad = job("d", "2026-03-02T08:00:00Z", 1, 10, {"cpu": 3})  # type: ignore[dict-item]
    with pytest.raises(TraceError, match=r"line 3 \(Job team-a/d\): flavors: must be an object"):
        read_trace(text([HEADER, TREE, bad]))


def test_an_old_format_trace_still_replays_and_is_written_as_version_1() -> None:
    trace = read_trace(text(LINES))  # version 1: no flavors, a Volcano tree
    assert trace.header.version == 1 and all(j.flavors is None for j in trace.jobs)
    assert json.loads(next(trace_lines(trace)))["version"] == 1
    doc = replay_document(trace)["baseline"]["jobs"]
    assert doc["ns/j1"]["start"] == "2026-03-02T08:00:00Z" and doc["ns/j2"]["start"] == "2026-03-02T08:31:00Z"
    assert "flavors" not in doc["ns/j1"]


def test_fairway_replay_with_a_kueue_tree_keeps_its_flavors(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``fairway replay -f TRACE --tree kueue.yaml``: the tree's ResourceFlavors are kept (the replay assigns them),
    so the waiting jobs of a trace without a Tree of its own are placed on their flavors."""
    from controlplane.cli import main

    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(text([{**HEADER, "version": 1}, *LINES_V2[2:]])))
    tree = tmp_path / "tree.yaml"
    tree.write_text(FLAVORS + NODES)
    assert main(["replay", "-f", str(trace), "--tree", str(tree), "-o", "json"]) == 0
    jobs = json.loads(capsys.readouterr().out)["baseline"]["jobs"]
    assert jobs["team-a/b"]["flavors"] == {"cpu": "spot", "memory": "spot"}
    assert jobs["team-a/b"]["start"] == "2026-03-02T08:01:00Z"


def test_fairway_replay_with_changes_gives_the_same_document_in_one_process_or_two(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--changes`` with ``--tree`` and so its policy: the proposal replayed in a second process (its tree and
    policy sent there) makes the document one process makes."""
    from controlplane.cli import main

    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(text([{**HEADER, "version": 1}, *LINES_V2[2:]])))
    tree = tmp_path / "tree.yaml"
    tree.write_text(FLAVORS + NODES)
    changes = tmp_path / "changes.yaml"
    changes.write_text("- {op: remove, kind: node, name: spot-1}\n")
    outs = []
    for processes in ("1", "2"):
        args = ["replay", "-f", str(trace), "--tree", str(tree), "--changes", str(changes), "--processes", processes]
        assert main([*args, "-o", "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1]
    jobs = outs[1]["proposal"]["jobs"]
    # b and c, given spot at 08:01 as before, keep their flavor once admitted and no node offers it any more
    assert jobs["team-a/b"]["start"] is None and jobs["team-a/c"]["start"] is None
    assert outs[1]["baseline"]["jobs"]["team-a/b"]["start"] == "2026-03-02T08:01:00Z"
