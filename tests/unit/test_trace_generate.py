"""``fairway trace generate`` (``engine.replay.workload.generate``): the demo's workload generator run offline against
the replay writes a trace of any length without a database; deterministic for a seed; replaying it with no change
gives the starts it wrote. (The same generator on the database against a soak: ``tests/integration/
test_replay_fidelity.py``.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane.cli import main
from engine.replay import read_trace, replay
from engine.replay.workload import GPU_TOLERATION, submitter

TREE = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {weight: 1, deserved: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: b}
spec: {weight: 1, deserved: {cpu: "32", memory: 128Gi}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-a, annotations: {scheduling.volcano.sh/queue-name: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-b, annotations: {scheduling.volcano.sh/queue-name: b}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "4", pods: "110"}}
"""


def generated(tmp_path: Path, seed: int, name: str) -> Path:
    tree = tmp_path / "tree.yaml"
    tree.write_text(TREE)
    out = tmp_path / name
    args = ["trace", "generate", "--tree", str(tree), "--hours", "1", "--period", "60", "--seed", str(seed)]
    assert main([*args, "-o", str(out)]) == 0
    return out


def test_the_generator_writes_a_trace_offline_deterministic_for_a_seed(tmp_path: Path) -> None:
    path = generated(tmp_path, 3, "one.jsonl")
    trace = read_trace(path.read_text().splitlines())
    h = trace.header
    assert (h.source, h.cluster, h.period, h.end - h.start) == ("generator", "default", 60, 3540)
    assert len(trace.jobs) > 20 and {j.queue for j in trace.jobs} == {"a", "b"}
    assert all((j.submit - h.start) % 60 == 0 and j.runtime is not None and j.runtime % 60 == 0 for j in trace.jobs)
    gpu = [j for j in trace.jobs if j.roles[0].request.get("nvidia.com/gpu")]
    assert gpu and all(j.roles[0].tolerations == GPU_TOLERATION for j in gpu)
    assert all(j.min_resources is not None and j.min_member == j.pods for j in trace.jobs)
    assert sum(1 for j in trace.jobs if j.start is not None) > 0.8 * len(trace.jobs)
    # each job submitted by one of its team's people, as the live generator names them (the audit's submitters)
    assert all(j.user == submitter(j.queue, j.name) for j in trace.jobs)
    assert {j.user for j in trace.jobs if j.queue == "a"} == {"a-ana", "a-ben", "a-chen"} and h.version == 4
    # the same seed writes the same file; another seed another workload
    assert generated(tmp_path, 3, "two.jsonl").read_text() == path.read_text()
    assert generated(tmp_path, 4, "other.jsonl").read_text() != path.read_text()


def test_replaying_a_generated_trace_gives_its_starts(tmp_path: Path) -> None:
    trace = read_trace(generated(tmp_path, 5, "t.jsonl").read_text().splitlines())
    run = replay(trace)
    assert run.warnings == []
    assert {k: o.start for k, o in run.outcomes.items()} == {j.key: j.start for j in trace.jobs}
    assert {k: o.finish for k, o in run.outcomes.items()} == {j.key: j.finish for j in trace.jobs}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--period", "3"], "--period: must be a multiple of the generator's beat, 2 s, got 3"),
        (["--hours", "0"], "--hours: must be a number of hours greater than 0, got 0.0"),
        (["--start", "soon"], "--start: 'soon' is not an RFC 3339 time"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    tree = tmp_path / "tree.yaml"
    tree.write_text(TREE)
    assert main(["trace", "generate", "--tree", str(tree), "--hours", "1", *extra]) == 2
    assert message in capsys.readouterr().err
    assert main(["trace", "generate", "--tree", str(tmp_path / "none.yaml"), "--hours", "1"]) == 2
    assert "--tree: " in capsys.readouterr().err
