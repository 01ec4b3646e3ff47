"""``fairway simulate`` reads Volcano's hierarchical-DRF annotations (``volcano.sh/hierarchy`` and
``volcano.sh/hierarchy-weights``) as the queue tree, and says when the input has no nodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests

HIERARCHY = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "16", memory: 64Gi}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: eng-prod
  annotations: {volcano.sh/hierarchy: root/eng/prod, volcano.sh/hierarchy-weights: 1/2/8}
spec: {weight: 1, deserved: {cpu: "4"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: eng-dev
  annotations: {volcano.sh/hierarchy: eng/dev, volcano.sh/hierarchy-weights: 2/2.5}
spec: {deserved: {cpu: "2"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: sci-gpu-a
  annotations: {volcano.sh/hierarchy: root/sci/gpu/a, volcano.sh/hierarchy-weights: 1/8/3/1}
"""


def simulate(tmp_path: Path, capsys: Any, text: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json", *extra])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out else {}, out.err


def test_hierarchy_annotations_make_the_tree(tmp_path: Path, capsys: Any) -> None:
    code, doc, err = simulate(tmp_path, capsys, HIERARCHY)
    assert code == 0, err
    queues = doc["queues"]
    parents = {name: q["parent"] for name, q in queues.items()}
    assert parents["eng"] == "root" and parents["sci"] == "root" and parents["sci-gpu"] == "sci"
    assert (parents["eng-prod"], parents["eng-dev"], parents["sci-gpu-a"]) == ("eng", "eng", "sci-gpu")
    weights = {name: q["weight"] for name, q in queues.items()}
    assert (weights["eng"], weights["sci"], weights["sci-gpu"]) == (2, 8, 3)
    assert (weights["eng-prod"], weights["eng-dev"], weights["sci-gpu-a"]) == (8, 3, 1)  # the path's last weight
    from engine.manifests import load_manifests

    made = load_manifests([("cluster.yaml", HIERARCHY)]).snapshot.queues["eng"]
    assert made.deserved == {"cpu": 6000} and not made.capability  # what its children deserve together
    assert "weight 2.5 of eng-dev read as 3" in err  # "eng/dev" is prefixed with root/ and 1/, as Volcano's webhook
    assert "no nodes" not in err


def test_a_path_on_another_queues_path_is_refused(tmp_path: Path, capsys: Any) -> None:
    text = HIERARCHY + (
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: deep\n  annotations:"
        " {volcano.sh/hierarchy: root/sci/gpu/a/b, volcano.sh/hierarchy-weights: 1/8/3/1/1}\n"
    )
    code, _, err = simulate(tmp_path, capsys, text)
    assert code == 2
    assert err.strip().endswith("a queue cannot be in the sub path of another")
    assert "(Queue deep)" in err and len(err.strip().splitlines()) == 1


def test_an_explicit_parent_wins_over_the_annotations(tmp_path: Path, capsys: Any) -> None:
    text = HIERARCHY + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: other}\n"
    text = text.replace('spec: {deserved: {cpu: "2"}}', "spec: {parent: other}")
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0, err
    assert doc["queues"]["eng-dev"]["parent"] == "other"
    assert "spec.parent is set; the volcano.sh/hierarchy annotations are ignored" in err


def test_no_nodes_is_noted_on_stderr(tmp_path: Path, capsys: Any) -> None:
    text = HIERARCHY.split("---\n", 1)[1]  # without the Node
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0 and doc["queues"]["eng"]["parent"] == "root"
    assert "note: the input has no nodes; every job waits for capacity" in err


@needs_peer_manifests
def test_volcanos_hierarchical_example_loads_as_a_tree(tmp_path: Path, capsys: Any) -> None:
    path: Path = PEER_MANIFESTS / "volcano" / "example__hierarchical-jobs__queues.yaml"
    code, doc, err = simulate(tmp_path, capsys, path.read_text())
    assert code == 0, err
    tree = {name: (q["parent"], q["weight"]) for name, q in doc["queues"].items()}
    assert tree["eng"] == ("root", 2) and tree["sci"] == ("root", 8)
    assert tree["root-eng-prod"] == ("eng", 8) and tree["root-eng-dev"] == ("eng", 2)
    assert tree["root-sci-prod"] == ("sci", 8) and tree["root-sci-dev"] == ("sci", 2)
    assert (
        err.strip() == "note: the input has no nodes; every job waits for capacity (add Node documents to place pods)"
    )
    # and in the table, which a person reads
    assert main(["simulate", "-f", str(path)]) == 0
    table = capsys.readouterr().out
    assert any(line.split()[:4] == ["root-eng-prod", "Open", "eng", "8"] for line in table.splitlines())


@pytest.mark.parametrize("flag_first", [True, False])
def test_simulate_takes_the_global_output_flag_anywhere(tmp_path: Path, capsys: Any, flag_first: bool) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(HIERARCHY)
    argv = ["-o", "json", "simulate", "-f", str(path)] if flag_first else ["simulate", "-f", str(path), "-o", "json"]
    assert main(argv) == 0
    assert "queues" in json.loads(capsys.readouterr().out)
    assert main(["simulate", "-f", str(path), "-o", "yaml"]) == 2
