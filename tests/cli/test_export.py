"""``fairway export`` and ``GET /api/v1/export/``: the trees as the peers' manifests, for admins only; simulate on
the export (with the cluster's nodes) gives the values the control plane shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import Run

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: cpu-0{i}}}
status: {{allocatable: {{cpu: "32", memory: 128Gi}}}}
"""
    for i in range(1, 5)
)


def test_export_then_simulate_gives_the_values_of_the_control_plane(cli: Run, world: None, tmp_path: Path) -> None:
    queues, quotas, nodes = tmp_path / "queues.yaml", tmp_path / "quotas.yaml", tmp_path / "nodes.yaml"
    code, _, err = cli("export", "--format", "volcano", "-f", str(queues))
    assert code == 0 and "manifests written to" in err, err
    code, _, err = cli("export", "--format", "koordinator", "-f", str(quotas))
    assert code == 0, err
    docs = list(yaml.safe_load_all(queues.read_text()))
    assert {d["kind"] for d in docs} == {"Queue", "Namespace"}
    nlp = next(d for d in docs if d["kind"] == "Queue" and d["metadata"]["name"] == "nlp")
    assert nlp["spec"]["parent"] == "research" and nlp["spec"]["deserved"] == {"cpu": "16", "memory": "64Gi"}
    elastic = {d["metadata"]["name"]: d for d in yaml.safe_load_all(quotas.read_text())}
    assert elastic["nlp"]["metadata"]["labels"]["quota.scheduling.koordinator.sh/parent"] == "research"
    assert json.loads(elastic["nlp"]["metadata"]["annotations"]["quota.scheduling.koordinator.sh/namespaces"]) == [
        "nlp",
        "nlp-dev",
    ]
    nodes.write_text(NODES)
    code, out, err = cli("simulate", "-f", str(queues), "-f", str(quotas), "-f", str(nodes), "-o", "json")
    assert code == 0, err
    simulated = json.loads(out)
    code, out, _ = cli("queue", "tree", "-o", "json")
    shown = {}

    def walk(node: dict[str, Any]) -> None:
        shown[node["name"]] = node.get("values") or {}
        for child in node.get("children", []):
            walk(child)

    for root in json.loads(out):
        walk(root)
    for name in ("research", "nlp", "vision", "operations", "analytics"):
        assert simulated["queues"][name]["deserved"] == shown[name]["deserved"], name
    assert simulated["quotas"]["nlp"]["runtime"] is not None


def test_export_is_for_admins_and_names_its_bad_parameters(cli: Run, world: None, live_server: Any) -> None:
    import requests
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    User = get_user_model()

    lead = Token.objects.create(user=User.objects.get(username="nlp-lead")).key
    code, _, err = cli("export", "--format", "volcano", token=lead)
    assert code == 1 and "export volcano: only admins may export the trees" in err
    admin = Token.objects.get(user__username="ops").key
    headers = {"Authorization": f"Token {admin}"}
    r = requests.get(f"{live_server.url}/api/v1/export/", params={"format": "kueue"}, headers=headers, timeout=30)
    assert r.status_code == 400 and r.json()["errors"][0]["attr"] == "format"
    r = requests.get(
        f"{live_server.url}/api/v1/export/",
        params={"format": "volcano", "cluster": "nope"},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 400 and r.json()["errors"][0]["attr"] == "cluster"
    r = requests.get(f"{live_server.url}/api/v1/export/", params={"format": "koordinator"}, headers=headers, timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/yaml")
    assert all(d["kind"] == "ElasticQuota" for d in yaml.safe_load_all(r.text))
    code, out, _ = cli("export", "--format", "koordinator", "-o", "json")
    assert code == 0 and [d["kind"] for d in json.loads(out)] == [d["kind"] for d in yaml.safe_load_all(r.text)]
    assert (
        requests.get(f"{live_server.url}/api/v1/export/", params={"format": "volcano"}, timeout=30).status_code == 401
    )
