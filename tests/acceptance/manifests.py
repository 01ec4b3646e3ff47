"""Small builders of Kubernetes manifests for the acceptance tests (YAML text, as users would write it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

# The peers' own manifests live beside the repository (``../shared/fixtures/manifests``), not in it: a clone with
# nothing beside it skips the tests that read them, with this reason in the summary (``-ra``).
# ``FAIRWAY_PEER_MANIFESTS`` points elsewhere (the test of this skip uses it).
PEER_MANIFESTS = Path(
    os.environ.get("FAIRWAY_PEER_MANIFESTS")
    or Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "manifests"
)
needs_peer_manifests = pytest.mark.skipif(
    not PEER_MANIFESTS.is_dir(),
    reason=f"the peers' manifests are absent ({PEER_MANIFESTS}): they live beside the repository, not in it",
)


def node(name: str, **allocatable: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {k.replace("_", "."): v for k, v in allocatable.items()}},
    }


def queue(name: str, weight: int = 1, parent: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"weight": weight, **spec}
    if parent:
        body["parent"] = parent
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": body}


def namespace(name: str, weight: int | None = None) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}]
    if weight is not None:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "weight", "namespace": name},
                "spec": {"hard": {"volcano.sh/namespace.weight": str(weight)}},
            }
        )
    return docs


def podgroup(ns: str, name: str, queue_name: str, min_member: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"queue": queue_name, "minMember": min_member, **spec},
    }


def pod(
    ns: str,
    name: str,
    *,
    group: str | None = None,
    quota: str | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    **requests: str,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": {}, "annotations": {}}
    if group:
        meta["annotations"]["scheduling.k8s.io/group-name"] = group
    if quota:
        meta["labels"]["quota.scheduling.koordinator.sh/name"] = quota
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {k.replace("_", "."): v for k, v in requests.items()}},
            }
        ]
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def elastic_quota(
    name: str,
    *,
    min: dict[str, str],
    max: dict[str, str],
    parent: str | None = None,
    is_parent: bool = False,
    shared_weight: dict[str, str] | None = None,
    allow_lent: bool = True,
) -> dict[str, Any]:
    labels = {"quota.scheduling.koordinator.sh/is-parent": str(is_parent).lower()}
    if parent:
        labels["quota.scheduling.koordinator.sh/parent"] = parent
    if not allow_lent:
        labels["quota.scheduling.koordinator.sh/allow-lent-resource"] = "false"
    annotations = {}
    if shared_weight:
        import json

        annotations["quota.scheduling.koordinator.sh/shared-weight"] = json.dumps(shared_weight)
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": "default", "labels": labels, "annotations": annotations},
        "spec": {"min": min, "max": max},
    }


def dump(*docs: Any) -> str:
    flat: list[Any] = []
    for d in docs:
        flat.extend(d if isinstance(d, list) else [d])
    return yaml.safe_dump_all(flat, sort_keys=False)
