"""``deploy/kubernetes/`` as a real API server reads it: every object is server-side applied with a dry run and
strict field validation, so an unknown or misspelt field, a wrong type or a value the server's validation refuses
fails here, as it would at ``kubectl apply``. The namespace is created for real first (a dry-run namespace does
not exist for the objects in it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.support.kube_apiserver import ControlPlane

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "kubernetes"


def _documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _apply(api: Any, doc: dict[str, Any], *, dry_run: bool) -> tuple[int, str, list[str]]:
    """Server-side apply of one object: the status, the server's message (on a refusal) and its warnings."""
    from kubernetes import dynamic

    resource = dynamic.DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    meta = doc["metadata"]
    path = resource.path(name=meta["name"], namespace=meta.get("namespace") if resource.namespaced else None)
    query = [("fieldManager", "fairway-deploy-test"), ("fieldValidation", "Strict"), ("force", "true")]
    if dry_run:
        query.append(("dryRun", "All"))
    request = api.param_serialize(
        "PATCH",
        path,
        query_params=query,
        header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
        body=doc,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(*request)
    body = response.read()
    warnings = [v for k, v in response.getheaders().items() if k.lower() == "warning"]
    message = ""
    if response.status >= 400:
        message = json.loads(body).get("message", body.decode(errors="replace"))
    return response.status, message, warnings


def test_every_manifest_passes_a_strict_server_side_dry_run(control_plane: ControlPlane) -> None:
    docs = _documents()
    namespaces = [d for d in docs if d["kind"] == "Namespace"]
    assert [n["metadata"]["name"] for n in namespaces] == ["fairway"]
    refused: list[str] = []
    with control_plane.api_client() as api:
        status, message, _ = _apply(api, namespaces[0], dry_run=False)
        assert status in (200, 201), message
        for doc in docs:
            if doc["kind"] == "Namespace":
                continue
            where = f"{doc['kind']}/{doc['metadata']['name']}"
            status, message, warnings = _apply(api, doc, dry_run=True)
            if status not in (200, 201):
                refused.append(f"{where}: {status} {message}")
            assert not warnings, f"{where}: {warnings}"
    assert not refused, "\n".join(refused)


def test_a_misspelt_field_is_refused(control_plane: ControlPlane) -> None:
    """The check above can fail: the same dry run of the web Deployment with one field misspelt is a 4xx."""
    web = next(d for d in _documents() if d["kind"] == "Deployment" and d["metadata"]["name"] == "fairway-web")
    container = web["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with control_plane.api_client() as api:
        _apply(api, next(d for d in _documents() if d["kind"] == "Namespace"), dry_run=False)
        status, message, _ = _apply(api, web, dry_run=True)
    # server-side apply answers a field outside the schema with 500 "failed to create typed patch object" (1.34)
    assert status >= 400, (status, message)
    assert "readinesProbe: field not declared in schema" in message
