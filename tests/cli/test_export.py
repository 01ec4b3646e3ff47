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

    from security.tokens import create_token

    User = get_user_model()

    lead = create_token(User.objects.get(username="nlp-lead"), "test")[1]
    code, _, err = cli("export", "--format", "volcano", token=lead)
    assert code == 1 and "export volcano: only admins may export the trees" in err
    admin = create_token(User.objects.get(username="ops"), "test")[1]
    headers = {"Authorization": f"Token {admin}"}
    r = requests.get(f"{live_server.url}/api/v1/export/", params={"format": "slurm"}, headers=headers, timeout=30)
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


def test_kueue_export_then_simulate_gives_the_trees_quota_limits_and_weights(
    cli: Run, world: None, tmp_path: Path
) -> None:
    for args in (
        ("research", "-w", "2", "--borrowing-limit", "cpu=8"),
        ("nlp", "-w", "3", "--borrowing-limit", "cpu=4,memory=16Gi", "--lending-limit", "cpu=0"),
        ("vision", "--lending-limit", "cpu=8"),
        ("analytics", "-w", "5", "--borrowing-limit", "cpu=16"),
    ):
        code, _, err = cli("queue", "update", *args)
        assert code == 0, err
    kueue, nodes = tmp_path / "kueue.yaml", tmp_path / "nodes.yaml"
    code, _, err = cli("export", "--format", "kueue", "-f", str(kueue))
    assert code == 0 and "manifests written to" in err, err
    # the departments are the tops of their trees: Kueue lets them use no more than their quota, and says so
    assert "warning: queue research: at the top of a Kueue tree it uses at most its nominal quota" in err
    assert "warning: queue research: borrowing and lending limits dropped" in err
    text = kueue.read_text()
    assert text.startswith("# Not expressible as kueue manifests:\n# - queue operations: at the top")
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["ResourceFlavor", *["Cohort"] * 2, *["ClusterQueue"] * 3, *["LocalQueue"] * 6]
    cohorts = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "Cohort"}
    # research deserves 64 cpu and 256Gi, its teams 16 cpu and 64Gi each: the cohort holds the other half itself
    own = cohorts["research"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert own == [{"name": "cpu", "nominalQuota": "32"}, {"name": "memory", "nominalQuota": "128Gi"}]
    local = {(d["metadata"]["namespace"], d["spec"]["clusterQueue"]) for d in docs if d["kind"] == "LocalQueue"}
    assert local == {(f"{t}{s}", t) for t in ("nlp", "vision", "analytics") for s in ("", "-dev")}
    nodes.write_text(NODES)
    code, out, err = cli("simulate", "-f", str(kueue), "-f", str(nodes), "-o", "json")
    assert code == 0, err
    simulated = json.loads(out)["queues"]
    for name in ("research", "operations", "nlp", "vision", "analytics"):
        code, out, _ = cli("queue", "view", name, "-o", "json")
        tree = json.loads(out)
        assert simulated[name]["deserved"] == tree["deserved"], name
        assert simulated[name]["weight"] == tree["weight"], name
        if tree["parent"] != "root":  # the tops of Kueue's trees have no one to borrow from or lend to
            assert simulated[name]["borrowingLimit"] == (tree["borrowing_limit"] or {}), name
            assert simulated[name]["lendingLimit"] == (tree["lending_limit"] or {}), name
    assert simulated["nlp"]["lendingLimit"] == {"cpu": "0"} and simulated["nlp"]["weight"] == 3


def test_api_kueue_export_says_what_kueue_cannot_hold(cli: Run, world: None, live_server: Any) -> None:
    import requests
    from django.contrib.auth import get_user_model

    from security.tokens import create_token

    url = f"{live_server.url}/api/v1/export/"
    lead = create_token(get_user_model().objects.get(username="nlp-lead"), "test")[1]
    r = requests.get(url, params={"format": "kueue"}, headers={"Authorization": f"Token {lead}"}, timeout=30)
    assert r.status_code == 403
    headers = {"Authorization": f"Token {create_token(get_user_model().objects.get(username='ops'), 'test')[1]}"}
    r = requests.get(url, params={"format": "kueue"}, headers=headers, timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/yaml")
    notes = json.loads(r.headers["Fairway-Export-Notes"])
    assert "quota groups (5): Koordinator's tree has no Kueue counterpart (export them with --format koordinator)" in (
        notes
    )
    assert r.text.startswith(f"# Not expressible as kueue manifests ({len(notes)}):\n")
    assert all(f"# - {note}\n" in r.text for note in notes)
    docs = list(yaml.safe_load_all(r.text))
    assert {d["apiVersion"] for d in docs} == {"kueue.x-k8s.io/v1beta2"}
    as_json = requests.get(url, params={"format": "kueue", "output": "json"}, headers=headers, timeout=30)
    assert as_json.json() == docs and json.loads(as_json.headers["Fairway-Export-Notes"]) == notes
    # Volcano's format holds the queue tree whole: no notes
    assert (
        "Fairway-Export-Notes"
        not in requests.get(url, params={"format": "volcano"}, headers=headers, timeout=30).headers
    )
    code, out, err = cli("export", "--format", "kueue", "-o", "json")
    assert code == 0 and json.loads(out) == docs
    assert err.splitlines() == [f"warning: {note}" for note in notes]
