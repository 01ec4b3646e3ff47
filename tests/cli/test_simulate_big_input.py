"""``fairway simulate`` on inputs of real size (issue 24, item 6): the server's input limits do not bind a local run
unless given as options (and a refusal names the option); a big ``kubectl get -o yaml`` List is read item by item
with ``managedFields`` and most of ``status`` left out, giving the same snapshot as the lean input; a FIFO or a device
given as ``-f`` is refused with one line instead of blocking."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.manifests import ManifestError, liststream, load_manifests
from engine.manifests.liststream import list_items
from tests.acceptance import manifests as m
from tests.acceptance.simulate_runner import problems, run_simulate

MANAGED = [
    {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {".": {}, "f:labels": {".": {}, 'k:{"name":"main"}': {}}}},
        "manager": "kubelet",
        "operation": "Update",
        "time": "2026-11-20T08:00:00Z",
    }
]


def _managed() -> list[dict[str, Any]]:
    return json.loads(json.dumps(MANAGED))  # a copy per object: shared, the dumper would write an anchor


def _node(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}, "managedFields": _managed()},
        "spec": {"podCIDR": "10.0.0.0/24"},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "images": [{"names": [f"img{k}"], "sizeBytes": 1000 + k} for k in range(5)],
            "nodeInfo": {"kubeletVersion": "v1.31.0"},
            "addresses": [{"type": "InternalIP", "address": f"10.0.0.{i}"}],
        },
    }


def _pod(i: int) -> dict[str, Any]:
    running = i % 3 == 0
    status: dict[str, Any] = {
        "phase": "Running" if running else "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True" if running else "False"}],
        "qosClass": "Burstable",
    }
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
    }
    if running:
        spec["nodeName"] = f"n{i % 4}"
        status["startTime"] = "2026-11-20T08:00:00Z"
        status["containerStatuses"] = [{"name": "main", "ready": True, "state": {"running": {}}}]
    meta = {
        "name": f"p{i}",
        "namespace": "ns1",
        "creationTimestamp": "2026-11-20T07:00:00Z",
        "managedFields": _managed(),
    }
    if i % 2:
        meta["annotations"] = {"scheduling.k8s.io/group-name": f"g{i % 5}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _podgroup(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"g{i}", "namespace": "ns1", "managedFields": _managed()},
        "spec": {"minMember": 1, "queue": "default"},
        "status": {"phase": "Pending"},
    }


def _objects() -> list[dict[str, Any]]:
    return [*(_node(i) for i in range(4)), *(_podgroup(i) for i in range(5)), *(_pod(i) for i in range(40))]


def _lean(obj: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].pop("managedFields")
    keep = {"Pod": ("phase", "startTime"), "Node": ("allocatable", "conditions")}.get(out["kind"])
    if keep is not None:
        out["status"] = {k: v for k, v in out["status"].items() if k in keep}
    return out


def _dump_all(docs: list[dict[str, Any]]) -> str:
    """``yaml.safe_dump_all`` by libyaml's emitter: the same text, four times faster on the big inputs here."""
    return yaml.dump_all(docs, Dumper=yaml.CSafeDumper)


def _list_text(objects: list[dict[str, Any]], indented: bool = False) -> str:
    text = _dump_all([{"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}}])
    if indented:  # "items:\n  - ..." as some tools write it
        head, _, rest = text.partition("items:\n")
        body, _, tail = rest.partition("kind: List\n")
        text = head + "items:\n" + "".join("  " + line if line else line for line in body.splitlines(True))
        text += "kind: List\n" + tail
    return text


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming for any text, in pieces of a few items: the small instance takes the path of a big one."""
    monkeypatch.setattr(liststream, "STREAM_MIN_CHARS", 0)
    monkeypatch.setattr(liststream, "PIECE_CHARS", 2000)


@pytest.mark.parametrize("indented", [False, True], ids=["kubectl", "indented"])
def test_a_list_streams_to_the_snapshot_of_the_lean_input(small_pieces: None, indented: bool) -> None:
    objects = _objects()
    text = _list_text(objects, indented)
    found = list_items(text, 64)
    assert found is not None
    header, items = found
    assert header == {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    read = list(items)
    assert [n for n, _ in read] == list(range(1, len(objects) + 1))
    assert [item for _, item in read] == [_lean(o) for o in objects]  # managedFields and most of status gone
    streamed = load_manifests([("full.yaml", text)])
    lean = load_manifests([("lean.yaml", _dump_all([_lean(o) for o in objects]))])
    assert streamed.snapshot == lean.snapshot
    assert streamed.warnings == lean.warnings
    assert streamed.origins[("Pod", "ns1/p7")] == ("full.yaml", 1, 4 + 5 + 8)


def test_managed_fields_leave_before_the_pieces_are_built(small_pieces: None, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = liststream.load_manifest_documents

    def spy(text: str, max_depth: int) -> Any:
        seen.append(text)
        return real(text, max_depth)

    monkeypatch.setattr(liststream, "load_manifest_documents", spy)
    found = list_items(_list_text(_objects()), 64)
    assert found is not None
    assert len(list(found[1])) == 49
    pieces = seen[1:]  # the first text read is the List without its items
    assert len(pieces) > 3 and not any("managedFields" in piece or "fieldsV1" in piece for piece in pieces)


def test_what_a_cut_could_break_is_read_whole(small_pieces: None) -> None:
    text = _list_text(_objects())
    assert list_items(text.replace("name: p3\n", "name: &a p3\n"), 64) is None  # an anchor
    assert list_items("---\n" + text + "---\nkind: Node\n", 64) is None  # more documents
    assert list_items(_dump_all([_lean(o) for o in _objects()]), 64) is None  # not a List
    # the same text through load_manifests: read the usual way, same snapshot
    aliased = text.replace("name: p3\n", "name: &a p3\n")
    assert load_manifests([("a.yaml", aliased)]).snapshot == load_manifests([("a.yaml", text)]).snapshot


def test_errors_are_those_of_the_whole_text(small_pieces: None, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _list_text(_objects())
    lines = text.splitlines(True)
    at = max(i for i, line in enumerate(lines) if "name: p39" in line)
    broken = "".join([*lines[:at], '    name: "p39\n', *lines[at + 1 :]])  # an unterminated quote in the last piece
    bad_item = text.replace("  kind: Pod\n", "  kind: 5\n", 1)
    both = bad_item.replace("name: p39\n", 'name: "p39\n')
    errors = {}
    for name, case in (("broken", broken), ("item", bad_item), ("both", both)):
        with pytest.raises(ManifestError) as streamed:
            load_manifests([("f.yaml", case)])
        errors[name] = str(streamed.value)
    monkeypatch.setattr(liststream, "STREAM_MIN_CHARS", 10**12)  # the usual way
    for name, case in (("broken", broken), ("item", bad_item), ("both", both)):
        with pytest.raises(ManifestError) as whole:
            load_manifests([("f.yaml", case)])
        assert errors[name] == str(whole.value)
    assert "line" in errors["broken"] and errors["both"] == errors["broken"]
    assert "item 10" in errors["item"] and "kind: expected a string" in errors["item"]


def test_the_cli_gives_the_same_answer_for_the_dump_and_the_lean_input(tmp_path: Path) -> None:
    """Over STREAM_MIN_CHARS the command streams; the answer equals the lean input's. 6,400 pods make a list of
    about 4.4 MiB, a tenth over the 4 MiB where streaming starts: being over it is the point, not by how much (making
    and dumping the text is most of this test's CPU)."""
    objects = _objects()
    pods = [_pod(i) for i in range(40, 40 + 6400)]
    text = _list_text([*objects, *pods])
    assert len(text) > liststream.STREAM_MIN_CHARS
    full, lean = tmp_path / "full.yaml", tmp_path / "lean.yaml"
    full.write_text(text)
    lean.write_text(_dump_all([_lean(o) for o in [*objects, *pods]]))
    outputs = []
    for path in (full, lean):
        run = run_simulate(["-f", str(path), "-o", "json"], timeout=300)
        assert problems(run) == [] and run.code == 0, run.stderr[-2000:]
        outputs.append(run.stdout)
    assert _timeless(outputs[0]) == _timeless(outputs[1])


def _timeless(output: str) -> Any:
    """The JSON document without the sessions' durations (wall clock)."""
    document = json.loads(output)
    for session in document["sessions"]:
        session.pop("duration_ms")
    return document


# -- limits: the server's, not the command's ----------------------------------------------------------------------
def _pods_file(tmp_path: Path) -> Path:
    path = tmp_path / "pods.yaml"
    path.write_text(m.dump(m.node("n1", cpu="8"), *(m.pod("ns1", f"p{i}", cpu="1") for i in range(30))))
    return path


def test_the_servers_input_limits_do_not_bind_a_local_run(tmp_path: Path) -> None:
    path = _pods_file(tmp_path)
    env = {
        "FAIRWAY_MAX_PODS": "25",
        "FAIRWAY_MAX_PODGROUPS": "25",
        "FAIRWAY_MAX_MANIFEST_BYTES": "100",
        "FAIRWAY_MAX_SESSIONS": "2",
    }
    run = run_simulate(["-f", str(path), "--sessions", "3", "-o", "json"], env=env)
    assert problems(run) == [] and run.code == 0, run.stderr


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--max-pods", "25"], "the snapshot would hold 26 pods, more than 25 (--max-pods)"),
        (["--max-podgroups", "20"], "more than 20 (--max-podgroups)"),
        (["--max-manifest-bytes", "100"], "the input is larger than 100 bytes in all (--max-manifest-bytes)"),
        (["--sessions", "3", "--max-sessions", "2"], "--sessions 3 is more than 2 (--max-sessions)"),
        (["--max-pods", "none"], "argument --max-pods: 'none' is not a whole number"),
    ],
    ids=["pods", "podgroups", "bytes", "sessions", "usage"],
)
def test_a_limit_given_as_an_option_is_named_when_exceeded(tmp_path: Path, options: list[str], expected: str) -> None:
    run = run_simulate(["-f", str(_pods_file(tmp_path)), *options])
    assert "Traceback" not in run.stderr and run.signal is None, run.stderr
    assert run.code == 2 and expected in run.stderr, run.stderr


def test_replicas_stay_bounded_and_the_option_lifts_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: big, namespace: ns1}
spec:
  minAvailable: 1
  tasks:
  - replicas: 12000
    name: worker
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
"""
    )
    run = run_simulate(["-f", str(path)])
    assert run.code == 2 and "is more than 10000 (FAIRWAY_MAX_REPLICAS)" in run.stderr, run.stderr
    run = run_simulate(["-f", str(path), "--max-replicas", "11000"])
    assert run.code == 2 and "12000 is more than 11000 (--max-replicas)" in run.stderr, run.stderr
    run = run_simulate(["-f", str(path), "--max-replicas", "12000", "-o", "json"], timeout=120)
    assert problems(run) == [] and run.code == 0, run.stderr[-2000:]


def test_the_budget_is_off_unless_asked_for(tmp_path: Path) -> None:
    path = _pods_file(tmp_path)
    run = run_simulate(["-f", str(path), "--budget", "0.000001"])
    assert run.code == 2 and "stopped after the budget of 1e-06 s of computation" in run.stderr, run.stderr
    assert "(--budget)" in run.stderr
    run = run_simulate(["-f", str(path), "-o", "json"])
    assert run.code == 0, run.stderr


# -- what -f may name ------------------------------------------------------------------------------------------------
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    run = run_simulate(["-f", str(fifo)], timeout=30)
    assert not run.timed_out and problems(run) == [], run.stderr
    assert run.code == 2
    assert run.stderr.strip().splitlines() == [
        f"fairway simulate: {fifo}: a FIFO: -f takes a regular file, or - for standard input"
    ]


def test_a_device_and_a_directory_are_refused(tmp_path: Path) -> None:
    for path, what in (("/dev/zero", "a device"), (str(tmp_path), "a directory")):
        run = run_simulate(["-f", path], timeout=30)
        assert not run.timed_out and run.code == 2, run.stderr
        assert f"{path}: {what}: -f takes a regular file" in run.stderr


def test_standard_input_is_read(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.acceptance.simulate_runner import REPO

    text = _pods_file(tmp_path).read_text()
    done = subprocess.run(
        [sys.executable, "-m", "controlplane.cli", "simulate", "-f", "-", "-o", "json"],
        input=text,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["bindings"]) == 8
