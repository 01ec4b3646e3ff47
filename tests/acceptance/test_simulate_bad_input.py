"""``fairway simulate`` on the inputs of issue 9 that crashed it, printed tracebacks or ran away: each is now exit 2
with one line on stderr naming the file (and the document, kind and name where there is one), in a subprocess under
a memory limit (``simulate_runner``), never a signal, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acceptance import manifests as m
from tests.acceptance.simulate_runner import problems, run_simulate

NODE = m.dump(m.node("n1", cpu="8", memory="32Gi"))

VCJOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: bomb, namespace: ns1}}
spec:
  minAvailable: 1
  tasks:
  - replicas: {replicas}
    name: worker
    template:
      spec:
        containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]
"""


def _queue(capability_cpu: str) -> str:
    return m.dump(m.node("n1", cpu="8"), m.queue("q1", capability={"cpu": capability_cpu}))


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("brackets", "[" * 100_000 + "]" * 100_000, "brackets.yaml: document 1: nested more than 64 levels deep"),
        ("compact", "- " * 50_000 + "x\n", "compact.yaml: document 1: nested more than 64 levels deep"),
        ("flow-map", "{a: " * 50_000 + "1" + "}" * 50_000, "flow-map.yaml: document 1: nested more than 64 levels"),
        ("digits", NODE.replace("cpu: '8'", "cpu: " + "9" * 5000), "digits.yaml: document 1: invalid YAML: an integer"),
        ("exponent", _queue("1e999999999"), "exponent.yaml: document 2 (Queue q1): spec.capability.cpu: '1e999999999'"),
        ("replicas", VCJOB.format(replicas=3_000_000), "replicas.yaml: document 1 (Job ns1/bomb): spec.tasks[0]"),
        ("date", NODE.replace("name: n1", "name: n1\n  creationTimestamp: 2024-13-45"), "invalid YAML: '2024-13-45'"),
        ("alias", "a: &a [1, *a]\n", "alias.yaml: document 1: alias *a refers to itself"),
        ("not-utf8", "kind: Node\nmetadata: {name: \udcff}\n", "not-utf8.yaml: not UTF-8 text"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 12 else "",
)
def test_bad_manifests_exit_2_with_one_line(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    run = run_simulate(["-f", str(path)])
    assert problems(run) == [], run.stderr[-2000:]
    assert run.code == 2
    assert expected in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("name", "policy", "expected"),
    [
        ("latin1", b'actions: "enqueue\xff"\n', "latin1.conf: not UTF-8 text"),
        ("deep", b"actions: enqueue\nx: " + b"[" * 100_000 + b"]" * 100_000, "deep.conf: invalid YAML: nested more"),
        ("mapping", b"actions: enqueue\nx:\n" + b"- " * 100_000 + b"a\n", "mapping.conf: invalid YAML: nested more"),
    ],
    ids=["latin1", "deep", "mapping"],
)
def test_bad_policies_exit_2_with_one_line(tmp_path: Path, name: str, policy: bytes, expected: str) -> None:
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(NODE)
    path = tmp_path / f"{name}.conf"
    path.write_bytes(policy)
    run = run_simulate(["-f", str(snapshot), "--policy", str(path)])
    assert problems(run) == [], run.stderr[-2000:]
    assert run.code == 2 and expected in run.stderr, run.stderr


def test_limits_come_from_the_options(tmp_path: Path) -> None:
    """A local run is not bound by the server's input limits (FAIRWAY_MAX_*); given as options they hold, and the
    refusal names the option (tests/cli/test_simulate_big_input.py has the rest)."""
    path = tmp_path / "pods.yaml"
    path.write_text(m.dump(m.node("n1", cpu="8"), *(m.pod("ns1", f"p{i}", cpu="1") for i in range(30))))
    run = run_simulate(["-f", str(path), "--max-pods", "25"], env={"FAIRWAY_MAX_PODS": "1000"})
    assert run.code == 2, run.stderr
    assert "the snapshot would hold 26 pods, more than 25 (--max-pods)" in run.stderr
    assert "pods.yaml: document 27 (Pod ns1/p25)" in run.stderr

    run = run_simulate(["-f", str(path), "--sessions", "21", "--max-sessions", "20"])
    assert run.code == 2 and "--sessions 21 is more than 20 (--max-sessions)" in run.stderr

    run = run_simulate(["-f", str(path), "--max-manifest-bytes", "100"])
    assert run.code == 2 and "the input is larger than 100 bytes in all (--max-manifest-bytes)" in run.stderr

    run = run_simulate(["-f", str(path)], env={"FAIRWAY_MAX_YAML_DEPTH": "lots"})
    assert run.code == 2 and "FAIRWAY_MAX_YAML_DEPTH='lots': expected a whole number" in run.stderr

    run = run_simulate(["-f", str(path), "-o", "json"], env={"FAIRWAY_MAX_PODS": "25"})
    assert problems(run) == [] and run.code == 0, run.stderr


def test_a_run_over_its_budget_stops_with_exit_2(tmp_path: Path) -> None:
    docs = [m.node(f"n{i}", cpu="4", memory="16Gi") for i in range(50)]
    docs += [m.podgroup("ns1", f"pg{i}", "default", min_member=2) for i in range(400)]
    docs += [m.pod("ns1", f"pg{i}-{k}", group=f"pg{i}", cpu="3") for i in range(400) for k in range(2)]
    path = tmp_path / "busy.yaml"
    path.write_text(m.dump(*docs))
    run = run_simulate(["-f", str(path), "--sessions", "20"], env={"FAIRWAY_CLI_BUDGET_SECONDS": "0.001"})
    assert problems(run) == [], run.stderr
    assert run.code == 2
    assert "stopped after the budget of 0.001 s of computation" in run.stderr
    assert "(FAIRWAY_CLI_BUDGET_SECONDS)" in run.stderr
