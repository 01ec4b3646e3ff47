"""``fairway simulate``: a pod's required node affinity decides the node the session binds it to, and a pod that no
node matches waits, its podgroup saying so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controlplane.cli import main


def _node(name: str, zone: str) -> str:
    return (
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{zone: {zone}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
    )


def _pod(name: str, terms: str) -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n"
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        f"{{nodeSelectorTerms: {terms}}}}}}}\n"
        '  containers: [{name: c, resources: {requests: {cpu: "1"}}}]\n'
    )


def test_the_session_binds_each_pod_to_a_node_its_affinity_matches(tmp_path: Path, capsys: Any) -> None:
    text = (
        _node("n1", "a")
        + _node("n2", "b")
        + _node("n3", "c")
        + _pod("zoned", "[{matchExpressions: [{key: zone, operator: NotIn, values: [a, c]}]}]")
        # a DaemonSet's pod: its controller pins it with matchFields on the node's name
        + _pod("pinned", "[{matchFields: [{key: metadata.name, operator: In, values: [n3]}]}]")
        + _pod("nowhere", "[{matchExpressions: [{key: zone, operator: In, values: [d]}]}, {}]")
    )
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["bindings"] == {"default/zoned": "n2", "default/pinned": "n3"}
    waiting = doc["podgroups"]["default/podgroup-nowhere"]
    assert waiting["phase"] == "Pending"
    assert waiting["message"].endswith(
        "no ready node passes the predicates (node selector, node affinity, taints, cordon) of 3 nodes; "
        "node affinity: 3 nodes do not match"
    )
