"""The deployment as shipped: the compose file and the Kubernetes manifests start what they name, with probes
that the application answers, as a non-root user, and never two `migrate` at once.

Their server-side dry run against a real kube-apiserver is in ``tests/kube/real/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import get_commands
from django.test import Client

ROOT = Path(__file__).resolve().parent.parent
KUBE = ROOT / "deploy" / "kubernetes"


def manifests() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(KUBE.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def pod_templates() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for doc in manifests():
        if doc["kind"] in {"Deployment", "Job", "StatefulSet", "DaemonSet"}:
            out.append((f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"]))
    return out


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def test_every_workload_the_issue_names_is_there() -> None:
    names = {name for name, _ in pod_templates()}
    assert {
        "Deployment/fairway-web",
        "Deployment/fairway-worker",
        "Deployment/fairway-beat",
        "Deployment/fairway-adapter",
        "Job/fairway-migrate",
    } <= names
    kinds = {(d["kind"], d["metadata"]["name"]) for d in manifests()}
    assert ("Service", "fairway-web") in kinds
    assert ("ConfigMap", "fairway-config") in kinds


@pytest.mark.parametrize("name,spec", pod_templates(), ids=[n for n, _ in pod_templates()])
def test_every_container_is_bounded_and_unprivileged(name: str, spec: dict[str, Any]) -> None:
    assert spec["securityContext"]["runAsNonRoot"] is True, name
    assert spec["securityContext"]["runAsUser"] != 0, name
    for c in containers(spec):
        where = f"{name} container {c['name']}"
        requests = c.get("resources", {}).get("requests", {})
        assert {"cpu", "memory"} <= set(requests), f"{where}: resource requests"
        assert "memory" in c["resources"].get("limits", {}), f"{where}: a memory limit"
        sc = c.get("securityContext", {})
        assert sc.get("readOnlyRootFilesystem") is True, where
        assert sc.get("allowPrivilegeEscalation") is False, where
        assert sc.get("capabilities", {}).get("drop") == ["ALL"], where
        mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
        assert {"/app/var", "/tmp"} <= mounts, f"{where}: a writable var/ and /tmp"


@pytest.mark.parametrize("name,spec", pod_templates(), ids=[n for n, _ in pod_templates()])
def test_every_command_exists(name: str, spec: dict[str, Any]) -> None:
    known = set(get_commands())
    for c in containers(spec):
        command = " ".join(c["command"])
        if "manage.py" in command:
            sub = command.split("manage.py", 1)[1].split()[0]
            assert sub in known, f"{name}: manage.py {sub} is not a command"
        assert c["image"] == "fairway:0.1.0", name


def test_only_the_job_migrates_and_the_others_wait_for_it() -> None:
    for name, spec in pod_templates():
        mains = " ".join(" ".join(c["command"]) for c in spec["containers"])
        if name == "Job/fairway-migrate":
            assert "migrate --noinput" in mains
            continue
        assert "migrate --noinput" not in mains, f"{name} must not run migrate: replicas would race"
        inits = " ".join(" ".join(c["command"]) for c in spec.get("initContainers", []))
        assert "migrate --check" in inits, f"{name} must wait for the migrations"


def test_the_web_probes_ask_paths_the_application_answers_for_any_host(db: None) -> None:
    web = dict(pod_templates())["Deployment/fairway-web"]["containers"][0]
    client = Client(HTTP_HOST="10.244.3.17:8000")  # a kubelet's probe names the pod's IP
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        path = web[probe]["httpGet"]["path"]
        response = client.get(path)
        assert response.status_code == 200, (probe, path, response.content)
        assert response.json() == {"status": "ok"}


def test_workloads_with_replicas_have_a_disruption_budget() -> None:
    budgets = [d for d in manifests() if d["kind"] == "PodDisruptionBudget"]
    for doc in manifests():
        if doc["kind"] == "Deployment" and doc["spec"].get("replicas", 1) > 1:
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert any(
                all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items()) for b in budgets
            ), doc["metadata"]["name"]


def test_the_adapter_runs_as_the_service_account_the_rbac_grants() -> None:
    adapter = next(d for d in manifests() if d["kind"] == "Deployment" and d["metadata"]["name"] == "fairway-adapter")
    account = adapter["spec"]["template"]["spec"]["serviceAccountName"]
    namespace = adapter["metadata"]["namespace"]
    accounts = {
        (d["metadata"]["namespace"], d["metadata"]["name"]) for d in manifests() if d["kind"] == "ServiceAccount"
    }
    assert (namespace, account) in accounts
    bound = [
        s
        for d in manifests()
        if d["kind"] in {"ClusterRoleBinding", "RoleBinding"}
        for s in d["subjects"]
        if s["kind"] == "ServiceAccount"
    ]
    assert all((s["namespace"], s["name"]) == (namespace, account) for s in bound)
    leases = [d for d in manifests() if d["kind"] == "Role" and any("leases" in r["resources"] for r in d["rules"])]
    assert [r["metadata"]["namespace"] for r in leases] == [namespace], "the Lease lives where the adapter runs"


def test_compose_restarts_services_and_checks_their_health() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        if name == "migrate":
            assert service["restart"] == "no"
            assert "migrate" in service["command"]
            continue
        assert service["restart"] == "unless-stopped", name
        assert service.get("healthcheck"), name
        assert "migrate" not in str(service.get("command", "")), f"{name} must not run migrate"
        if "build" in service:
            assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name


def test_readyz_answers_503_until_every_migration_is_applied(tmp_path: Path) -> None:
    """In a process of its own on a fresh database: not ready, then migrate, then ready (and live throughout)."""
    script = textwrap.dedent(
        """
        import django, json
        django.setup()
        from django.core.management import call_command
        from django.test import Client
        c = Client(HTTP_HOST="10.0.0.9")
        before = c.get("/readyz"); live = c.get("/healthz")
        call_command("migrate", verbosity=0)
        after = c.get("/readyz")
        print(json.dumps([before.status_code, before.json(), live.status_code, after.status_code]))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATABASE_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.sqlite3'}", FAIRWAY_VAR_DIR=str(tmp_path / "var"))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    import json

    before, body, live, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == 503 and "migrations not applied yet" in body["reason"]
    assert live == 200
    assert after == 200
