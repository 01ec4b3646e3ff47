"""``engine.replay``: the trace format, the replay in virtual time on a small hand-made trace (numbers computed by
hand in the comments), ``--changes`` side by side, determinism, and ``fairway replay``'s errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controlplane.cli import main
from engine.replay import TraceError, read_trace, render_table, replay_document, trace_lines

ROOT = Path(__file__).resolve().parents[2]

HEADER = {
    "kind": "FairwayTrace",
    "version": 1,
    "cluster": "c",
    "from": "2026-03-02T08:00:00Z",
    "to": "2026-03-02T10:00:00Z",
    "period": 60,
    "source": "hand",
}
TREE = {
    "kind": "Tree",
    "objects": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4", "pods": "110"}},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "a"},
            "spec": {"weight": 1},
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "b"},
            "spec": {"weight": 1},
        },
    ],
}


def job(name: str, queue: str, submit: str, gpus: int, runtime: float) -> dict[str, object]:
    return {
        "kind": "Job",
        "namespace": "ns",
        "name": name,
        "queue": queue,
        "submit": submit,
        "roles": [{"name": "w", "pods": 1, "request": {"cpu": "1", "nvidia.com/gpu": str(gpus)}}],
        "runtime": runtime,
    }


# j1 takes the node's 4 GPUs at 08:00 for 30 min; j2 (2 GPUs) arrives at 08:00:30 and waits. j1 finishes at 08:30:00,
# on the grid: the session of that instant ran before the finish was reported, so j2 starts at the next, 08:31.
LINES = [
    HEADER,
    TREE,
    job("j1", "a", "2026-03-02T08:00:00Z", 4, 1800),
    job("j2", "b", "2026-03-02T08:00:30Z", 2, 3600),
]


def text(lines: list[dict[str, object]]) -> list[str]:
    return [json.dumps(line) for line in lines]


def test_the_replay_of_a_small_trace_gives_the_numbers_worked_out_by_hand() -> None:
    doc = replay_document(read_trace(text(LINES)))
    base = doc["baseline"]
    assert base["jobs"]["ns/j1"]["start"] == "2026-03-02T08:00:00Z"
    assert base["jobs"]["ns/j1"]["finish"] == "2026-03-02T08:30:00Z"
    assert base["jobs"]["ns/j2"]["start"] == "2026-03-02T08:31:00Z"
    assert base["jobs"]["ns/j2"]["finish"] == "2026-03-02T09:31:00Z"
    a, b = base["teams"]["queue/a"], base["teams"]["queue/b"]
    assert a["waiting"] == {"p50": 0.0, "p95": 0.0, "max": 0.0}
    assert b["waiting"] == {"p50": 1830.0, "p95": 1830.0, "max": 1830.0}  # 08:00:30 -> 08:31:00
    assert a["jobs"] == {"started": 1, "finished": 1, "waiting": 0}
    assert a["gpuHours"]["used"] == 2.0 and b["gpuHours"]["used"] == 2.0  # 4 GPUs x 0.5 h, 2 GPUs x 1 h
    # from 08:01 to 08:31 a holds 4 GPUs with a deserved of 2 (b asks for 2): 2 GPUs x 0.5 h borrowed, lent by b
    assert a["gpuHours"]["borrowed"] == 1.0 and b["gpuHours"]["lent"] == 1.0
    assert base["teams"]["queue/root"]["jobs"]["finished"] == 2
    assert [r for r in base["roots"] if r.startswith("queue/")] == ["queue/root"]  # the cluster's row, not a team
    table = render_table(doc)
    assert "queue/root (every job)" in table and "queue/a (every job)" not in table
    assert base["cluster"]["completedJobs"] == 2 and base["cluster"]["gpuHoursUsed"] == 4.0
    gpu = base["cluster"]["utilisation"]["nvidia.com/gpu"]
    assert gpu[0] == ["2026-03-02T08:00:00Z", 1.0] and ["2026-03-02T08:31:00Z", 0.5] in gpu
    # sessions only where something changes: far fewer than the 121 grid points of two hours
    assert base["sessions"] < 60 and base["periodsSkipped"] == 121 - base["sessions"]


def test_changes_run_side_by_side_and_the_differences_are_per_team() -> None:
    node = {
        "op": "add",
        "kind": "node",
        "name": "n2",
        "spec": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "4", "pods": "110"}},
    }
    doc = replay_document(read_trace(text(LINES)), changes=[node])
    assert doc["proposal"]["jobs"]["ns/j2"]["start"] == "2026-03-02T08:01:00Z"  # on n2 at the first session after
    diff = doc["differences"]["teams"]["queue/b"]["waiting.p50"]
    assert diff == {"before": 1830.0, "after": 30.0, "change": -1800.0}
    assert "queue/a" not in doc["differences"]["teams"] or "waiting.p50" not in doc["differences"]["teams"]["queue/a"]


def test_the_trace_round_trips_and_names_the_line_and_field_of_bad_input() -> None:
    trace = read_trace(text(LINES))
    again = read_trace(list(trace_lines(trace)))
    assert again.jobs == trace.jobs and again.header == trace.header
    first = json.loads(next(trace_lines(trace)))
    assert first["kind"] == "FairwayTrace" and first["version"] == 1
    bad = job("j3", "a", "2026-03-02T08:00:00Z", 1, 10)
    bad["roles"][0]["request"]["cpu"] = "lots"  # type: ignore[index]
    with pytest.raises(TraceError, match=r"line 3 \(Job ns/j3\): roles\[0\]\.request\.cpu"):
        read_trace(text([HEADER, TREE, bad]))
    with pytest.raises(TraceError, match="line 1: version: 9 is newer"):
        read_trace(text([HEADER | {"version": 9}]))
    with pytest.raises(TraceError, match=r"line 2 .*: submit"):
        read_trace(text([HEADER, job("j", "a", "yesterday", 1, 1)]))


def test_fairway_replay_exits_2_naming_the_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(text([HEADER, TREE, job("j", "a", "2026-03-02T08:00:00Z", 1, 1) | {"minMember": 3}])))
    assert main(["replay", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line 3 (Job ns/j): minMember: 3 is more than its 1 pods" in err
    changes = tmp_path / "c.yaml"
    changes.write_text("- op: update\n  kind: queue\n  name: nope\n  spec: {weight: 2}\n")
    path.write_text("\n".join(text(LINES)))
    assert main(["replay", "-f", str(path), "--changes", str(changes)]) == 2
    assert "--changes: changes.0.name: queue nope does not exist" in capsys.readouterr().err
    assert main(["replay", "-f", str(path), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["baseline"]["cluster"]["completedJobs"] == 2


def test_the_replay_is_deterministic_for_a_seed_whatever_the_hash_seed(tmp_path: Path) -> None:
    # jobs without a runtime draw one from their queue's recorded runtimes, seeded: two processes with different
    # hash seeds (set and dict orders) print the same document
    lines = (
        [*LINES]
        + [
            {**job(f"x{i}", "ab"[i % 2], f"2026-03-02T08:{i:02d}:00Z", 1 + i % 3, 0), "runtime": None}
            for i in range(1, 20)
        ]
        + [job(f"r{i}", "ab"[i % 2], f"2026-03-02T08:{i:02d}:10Z", 1, 300 + 60 * i) for i in range(1, 9)]
    )
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(text(lines)))
    outs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-m", "controlplane.cli", "replay", "-f", str(path), "--seed", "7", "-o", "json"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert doc["seed"] == 7 and sum(1 for j in doc["baseline"]["jobs"].values() if j["finish"]) > 10


PREEMPTING = """\
actions: "enqueue, allocate, preempt"
configurations:
- name: preempt
  arguments: {wholeGangs: true}
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: predicates
  - name: capacity
  - name: nodeorder
"""


def test_an_evicted_job_restarts_its_work_and_finishes_later_by_the_time_lost() -> None:
    from engine.policy.policy import Policy

    # queue a deserves more than the node, so a higher-priority job of a preempts within it: low (4 GPUs, 30 min of
    # work) runs from 08:00; high (priority 100, 4 GPUs, 10 min) arrives at 08:10 and preempts it; high is pipelined
    # onto the freed node and bound at 08:11, finishes at 08:21; low, Pending again, restarts at the next session
    # (08:22) from the beginning: it finishes at 08:52 instead of 08:30, 22 min later: the 10 min of work it lost and
    # the 12 min it waited
    tree = json.loads(json.dumps(TREE))
    for obj in tree["objects"]:
        if obj["kind"] == "Queue" and obj["metadata"]["name"] == "a":
            obj["spec"]["deserved"] = {"cpu": "16", "nvidia.com/gpu": "8"}
    low = job("low", "a", "2026-03-02T08:00:00Z", 4, 1800)
    high = job("high", "a", "2026-03-02T08:10:00Z", 4, 600) | {"priority": 100}
    policy = Policy.from_yaml(PREEMPTING)
    alone = replay_document(read_trace(text([HEADER, tree, low])), policy=policy)["baseline"]
    assert alone["jobs"]["ns/low"]["finish"] == "2026-03-02T08:30:00Z"
    base = replay_document(read_trace(text([HEADER, tree, low, high])), policy=policy)["baseline"]
    jobs = base["jobs"]
    assert jobs["ns/high"]["start"] == "2026-03-02T08:11:00Z" and jobs["ns/high"]["finish"] == "2026-03-02T08:21:00Z"
    assert jobs["ns/low"]["start"] == "2026-03-02T08:00:00Z"  # its first start; the restart is at 08:22
    assert jobs["ns/low"]["finish"] == "2026-03-02T08:52:00Z"
    assert base["teams"]["queue/a"]["evictions"]["preempted"] == 1
    # the GPU-hours of a count the lost run too: 4 GPUs x (10 min lost + 30 min + 10 min of high)
    assert base["teams"]["queue/a"]["gpuHours"]["used"] == pytest.approx(4 * 50 / 60, abs=0.01)


def test_placement_min_resources_and_pod_runtimes_round_trip_and_are_checked() -> None:
    rich = job("g", "a", "2026-03-02T08:00:00Z", 1, 600) | {
        "minMember": 2,
        "minResources": {"cpu": "2", "nvidia.com/gpu": "2"},
        "roles": [
            {
                "name": "w",
                "pods": 2,
                "request": {"cpu": "1", "nvidia.com/gpu": "1"},
                "nodeSelector": {"accelerator": "a100"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            }
        ],
        "podRuntimes": [300, 600],
    }
    trace = read_trace(text([HEADER, TREE, rich]))
    (g,) = trace.jobs
    assert g.pod_runtimes == (300.0, 600.0) and g.min_resources is not None and g.min_resources.get("cpu") == 2000
    assert g.roles[0].node_selector == {"accelerator": "a100"} and g.roles[0].tolerations[0].operator == "Exists"
    assert read_trace(list(trace_lines(trace))).jobs == trace.jobs
    # the node n1 has no label accelerator: the job never starts (its selector is obeyed)
    assert replay_document(trace)["baseline"]["jobs"]["ns/g"]["start"] is None
    with pytest.raises(TraceError, match=r"podRuntimes: 1 runtimes for its 2 pods"):
        read_trace(text([HEADER, rich | {"podRuntimes": [1]}]))
    bad = json.loads(json.dumps(rich))
    bad["roles"][0]["tolerations"][0]["operator"] = "Maybe"
    with pytest.raises(TraceError, match=r"roles\[0\]: tolerations\[0\]\.operator: must be Equal or Exists"):
        read_trace(text([HEADER, bad]))


def test_each_pod_runs_its_own_runtime() -> None:
    # two pods of one job on the node's 4 GPUs (2 each), 10 and 30 min: the first frees its 2 GPUs at 08:10, so b's
    # 2-GPU job starts at 08:11, not when the whole job ends at 08:30
    two = job("two", "a", "2026-03-02T08:00:00Z", 2, 1800) | {"podRuntimes": [600, 1800]}
    two["roles"][0]["pods"] = 2  # type: ignore[index]
    later = job("later", "b", "2026-03-02T08:05:00Z", 2, 600)
    jobs = replay_document(read_trace(text([HEADER, TREE, two, later])))["baseline"]["jobs"]
    assert jobs["ns/two"]["finish"] == "2026-03-02T08:30:00Z"
    assert jobs["ns/later"]["start"] == "2026-03-02T08:11:00Z"


def test_the_table_leaves_out_differences_it_cannot_show_and_counts_them() -> None:
    """``fairway replay --changes`` printed ``queue/x waiting.p50: 0 s -> 0 s`` for waits that moved by less than a
    second; such a difference is counted, not listed (``-o json`` keeps every one)."""
    from engine.replay import render_table, replay_result

    def report(p50: float, p95: float, started: int) -> dict[str, object]:
        team = {
            "waiting": {"p50": p50, "p95": p95, "max": p95},
            "jobs": {"started": started, "finished": started, "waiting": 0},
            "gpuHours": {"used": 1.0, "borrowed": 0.0, "lent": 0.0},
            "evictions": {"preempted": 0, "recycled": 0},
            "share": [],
        }
        cluster = {"completedJobs": started, "gpuHoursUsed": 1.0, "idleGpuHoursWhileWaiting": 0.0, "utilisation": {}}
        return {"sessions": 1, "periodsSkipped": 0, "teams": {"queue/x": team}, "cluster": cluster}

    doc = replay_result(report(0.2, 100.0, 3), report(0.4, 160.0, 3))
    assert set(doc["differences"]["teams"]["queue/x"]) == {"waiting.p50", "waiting.p95", "waiting.max"}  # type: ignore[index]
    head = render_table(doc).split("\n\nBASELINE")[0].splitlines()
    assert head == [
        "DIFFERENCES (baseline -> proposal)",
        "  queue/x waiting.p95: 1 min 40 s -> 2 min 40 s",
        "  queue/x waiting.max: 1 min 40 s -> 2 min 40 s",
        "  (and 1 under a second or below the shown precision)",
    ]
    same = render_table(replay_result(report(0.2, 100.0, 3), report(0.2, 100.0, 3)))
    assert same.split("\n\nBASELINE")[0].splitlines() == ["DIFFERENCES (baseline -> proposal)", "  none"]


def test_a_trace_keeps_who_submitted_each_job_and_the_replay_holds_them_to_their_limits() -> None:
    """Queue a lets each user run one job (``fairway.io/user-limits``). ann's and bob's jobs, in the same namespace,
    both start at once; read without their submitters (a trace of version 3), the namespace counts as the user of
    both, and the second waits for the first to finish. The submitter makes the trace version 4, and reads back."""
    import copy

    tree = copy.deepcopy(TREE)
    tree["objects"][1]["metadata"]["annotations"] = {"fairway.io/user-limits": '[{"user": "*", "max_jobs": 1}]'}
    jobs = [job("j1", "a", "2026-03-02T08:00:00Z", 1, 1800), job("j2", "a", "2026-03-02T08:00:00Z", 1, 1800)]
    jobs[0].update(user="ann", userGroups=["ml"])
    jobs[1]["user"] = "bob"
    trace = read_trace(text([{**HEADER, "version": 4}, tree, *jobs]))
    assert [(j.user, j.user_groups) for j in trace.jobs] == [("ann", ("ml",)), ("bob", ())]
    written = list(trace_lines(trace))
    assert json.loads(written[0])["version"] == 4 and read_trace(written).jobs == trace.jobs
    starts = {k: j["start"] for k, j in replay_document(trace)["baseline"]["jobs"].items()}
    assert starts == {"ns/j1": "2026-03-02T08:00:00Z", "ns/j2": "2026-03-02T08:00:00Z"}
    anonymous = [{k: v for k, v in j.items() if k not in ("user", "userGroups")} for j in jobs]
    unnamed = read_trace(text([HEADER, tree, *anonymous]))
    assert json.loads(next(iter(trace_lines(unnamed))))["version"] == 1
    starts = {k: j["start"] for k, j in replay_document(unnamed)["baseline"]["jobs"].items()}
    assert starts["ns/j1"] == "2026-03-02T08:00:00Z" and starts["ns/j2"] > "2026-03-02T08:30:00Z"
    with pytest.raises(TraceError, match=r"Job ns/j1\): user: must be a name"):
        read_trace(text([{**HEADER, "version": 4}, tree, {**jobs[0], "user": ""}]))
