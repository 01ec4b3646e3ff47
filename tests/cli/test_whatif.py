"""``fairway whatif -f changes.yaml`` against a live server: the diff as a table, ``-o json`` raw, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from quotas.models import Namespace, Queue
from tests.cli.conftest import Run

CHANGES = """\
# the same change language as POST /api/v1/whatif/
- {op: update, kind: queue, name: nlp, spec: {deserved: {cpu: "24", memory: 64Gi}}}
- {op: set_weight, kind: namespace, name: nlp, weight: 3}
- {op: add, kind: node, spec: {name: cpu-09, allocatable: {cpu: "32", memory: 128Gi}}}
"""


def test_whatif_prints_the_changes_before_and_after(cli: Run, world: None, tmp_path: Path) -> None:
    path = tmp_path / "changes.yaml"
    path.write_text(CHANGES)
    code, out, err = cli("whatif", "-f", str(path))
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == ["Kind", "Name", "Value", "Before", "After", "Change"]
    cells = [r.split() for r in rows]
    # the node adds 32 cores and 128Gi to every realCapability and to the quota root's runtime
    row = ["queue", "nlp", "realCapability", "cpu=128,memory=512Gi", "cpu=160,memory=640Gi", "cpu=+32,memory=+128Gi"]
    assert row in cells, out
    assert next(c[:3] for c in cells if c[0] == "quota-group") == ["quota-group", "root", "runtime"], out
    assert Queue.objects.get(name="nlp").deserved["cpu"] == 16000  # nothing written
    assert Namespace.objects.get(name="nlp").weight == 1

    code, out, _ = cli("whatif", "-f", str(path), "-o", "json")
    result = json.loads(out)
    assert result["diff"]["queues"]["nlp"]["real_capability"] == {"cpu": "32", "memory": "128Gi"}
    assert set(result) >= {"before", "after", "diff"}

    path.write_text(json.dumps({"changes": [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 0}}]}))
    code, _, err = cli("whatif", "-f", str(path))
    assert code == 1 and err.startswith(f"error: what-if {path}: changes.0.") and "weight" in err, err
    path.write_text("changes: [")
    code, _, err = cli("whatif", "-f", str(path))
    assert code == 2 and "invalid YAML" in err
    assert cli("whatif", "-f", str(tmp_path / "absent.yaml"))[0] == 2


def test_whatif_with_a_session(cli: Run, world: None, tmp_path: Path) -> None:
    path = tmp_path / "changes.yaml"
    path.write_text("changes:\n- {op: add, kind: podgroup, spec: {namespace: nlp, name: sweep, replicas: 2,"
                    " request: {cpu: '4'}}}\nsession: true\n")  # fmt: skip
    code, out, err = cli("whatif", "-f", str(path))
    assert code == 0, err
    assert "nlp/sweep" in out and "Running (2 pods placed)" in out, out
