"""The trees of a snapshot as the peers' manifests: what ``fairway export`` and ``GET /api/v1/export/`` write.

Two formats, each the inverse of what ``load_manifests`` reads (so that ``fairway simulate`` on an export gives
back the same trees, and the same values on the same cluster):

* ``volcano``: the queue tree as ``scheduling.volcano.sh/v1beta1`` Queues (``spec.parent``, ``weight``,
  ``capability``, ``deserved``, ``guarantee.resource``, ``reclaimable``, ``priority``; a Closed queue carries
  ``status.state``, which Volcano keeps in the status), and the namespaces as ``v1`` Namespaces (their queue in the
  ``scheduling.volcano.sh/queue-name`` annotation, the ``volcano.sh/hierarchy`` annotations of Volcano's
  hierarchical DRF) with a ``ResourceQuota`` holding the namespace weight (``volcano.sh/namespace.weight``) and
  the hard limits.
* ``koordinator``: the quota trees as ``scheduling.sigs.k8s.io/v1alpha1`` ElasticQuotas with Koordinator's labels
  (parent, is-parent, allow-lent-resource, tree-id, is-root) and annotations (shared-weight, namespaces); the
  built-in ``root``/``system``/``default`` groups under Koordinator's names.

Built-in queues and groups are written only where they differ from the built-ins (or carry namespaces or a
hierarchy). The documents are plain ``dict`` s, in tree order (a parent before its children), ready for YAML or JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from engine.fairshare.elastic import ROOT_GROUP, QuotaGroupSpec
from engine.fairshare.queues import ROOT_QUEUE, QueueSpec
from engine.manifests.common import (
    _TO_KOORD,
    FAIRWAY_BORROWING_LIMIT,
    FAIRWAY_LENDING_LIMIT,
    FAIRWAY_MIN_SCALE_EXEMPT,
    HIERARCHY_ANNOTATION,
    HIERARCHY_WEIGHTS_ANNOTATION,
    KOORD_ALLOW_LENT,
    KOORD_IS_PARENT,
    KOORD_IS_ROOT,
    KOORD_NAMESPACES,
    KOORD_PARENT,
    KOORD_ROOT,
    KOORD_SHARED_WEIGHT,
    KOORD_TREE_ID,
    NAMESPACE_WEIGHT_KEY,
    QUEUE_NAME_ANNOTATION,
)
from engine.manifests.core import _hard_base_resource
from engine.objects import BUILTIN_QUEUES, BUILTIN_QUOTA_GROUPS, NamespaceInfo, QueueHierarchy, Snapshot
from engine.resources import ResourceList, format_quantity

__all__ = [
    "FORMATS",
    "export_trees",
    "namespace_manifests",
    "queue_manifest",
    "quota_group_manifest",
]

VOLCANO_QUEUE_API = "scheduling.volcano.sh/v1beta1"
ELASTIC_QUOTA_API = "scheduling.sigs.k8s.io/v1alpha1"


def queue_manifest(queue: QueueSpec, hierarchy: QueueHierarchy | None = None) -> dict[str, Any]:
    """One queue as a Volcano Queue (``status.state`` always written: Volcano reads it back from a cluster)."""
    spec: dict[str, Any] = {"weight": queue.weight, "reclaimable": queue.reclaimable}
    if queue.parent is not None and queue.name != ROOT_QUEUE:
        spec["parent"] = queue.parent
    if queue.capability:
        spec["capability"] = queue.capability.to_quantities()
    if queue.deserved:
        spec["deserved"] = queue.deserved.to_quantities()
    if queue.guarantee:
        spec["guarantee"] = {"resource": queue.guarantee.to_quantities()}
    if queue.priority:
        spec["priority"] = queue.priority
    meta: dict[str, Any] = {"name": queue.name}
    annotations: dict[str, str] = _limit_annotations(queue.borrowing_limit, queue.lending_limit)
    if hierarchy is not None:
        annotations[HIERARCHY_ANNOTATION] = "/".join(hierarchy.path)
        annotations[HIERARCHY_WEIGHTS_ANNOTATION] = "/".join(_format_weight(w) for w in hierarchy.weights)
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": VOLCANO_QUEUE_API,
        "kind": "Queue",
        "metadata": meta,
        "spec": spec,
        "status": {"state": queue.state},
    }


def _limit_annotations(borrowing: ResourceList, lending: ResourceList) -> dict[str, str]:
    """The borrowing and lending limits as Fairway's annotations (zeros kept: a lending limit of 0 lends nothing)."""
    out: dict[str, str] = {}
    for key, limits in ((FAIRWAY_BORROWING_LIMIT, borrowing), (FAIRWAY_LENDING_LIMIT, lending)):
        if limits:
            out[key] = json.dumps({name: format_quantity(amount, name) for name, amount in sorted(limits.items())})
    return out


def _format_weight(weight: float) -> str:
    return str(int(weight)) if weight == int(weight) else repr(weight)


def namespace_manifests(ns: NamespaceInfo) -> list[dict[str, Any]]:
    """A namespace (its queue in Volcano's annotation), and a ResourceQuota with its weight and hard limits when it
    has either."""
    meta: dict[str, Any] = {"name": ns.name}
    if ns.queue:
        meta["annotations"] = {QUEUE_NAME_ANNOTATION: ns.queue}
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}]
    hard: dict[str, Any] = {}
    if ns.weight != 1:
        hard[NAMESPACE_WEIGHT_KEY] = str(ns.weight)
    for key, amount in sorted((ns.hard or ResourceList()).items()):
        hard[key] = format_quantity(amount, _hard_base_resource(key))
    if hard:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "fairway", "namespace": ns.name},
                "spec": {"hard": hard},
            }
        )
    return docs


def quota_group_manifest(
    group: QuotaGroupSpec, namespaces: tuple[str, ...] = (), home: str = "default"
) -> dict[str, Any]:
    """One quota group as a Koordinator ElasticQuota in namespace ``home``, governing ``namespaces``."""
    labels: dict[str, str] = {
        KOORD_IS_PARENT: "true" if group.is_parent else "false",
        KOORD_ALLOW_LENT: "true" if group.allow_lent else "false",
    }
    if group.parent is not None:
        labels[KOORD_PARENT] = _TO_KOORD.get(group.parent, group.parent)
    elif group.name != ROOT_GROUP:
        labels[KOORD_PARENT] = KOORD_ROOT
        labels[KOORD_IS_ROOT] = "true"
    if group.tree_id or group.parent not in (None, ROOT_GROUP):
        labels[KOORD_TREE_ID] = group.tree_id  # written even when empty, so that nothing is inherited on reading
    annotations: dict[str, str] = _limit_annotations(group.borrowing_limit, group.lending_limit)
    if group.shared_weight is not None:
        annotations[KOORD_SHARED_WEIGHT] = json.dumps(group.shared_weight.to_quantities())
    if namespaces:
        annotations[KOORD_NAMESPACES] = json.dumps(list(namespaces))
    if group.min_scale_exempt:
        annotations[FAIRWAY_MIN_SCALE_EXEMPT] = "true"
    meta: dict[str, Any] = {"name": _TO_KOORD.get(group.name, group.name), "namespace": home, "labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": ELASTIC_QUOTA_API,
        "kind": "ElasticQuota",
        "metadata": meta,
        "spec": {"min": group.min.to_quantities(), "max": group.max.to_quantities()},
    }


def _tree_order(parents: Mapping[str, str | None]) -> list[str]:
    """Names with every parent before its children, siblings by name (a node whose parent is unknown is a root)."""
    children: dict[str | None, list[str]] = {}
    for name, parent in parents.items():
        children.setdefault(parent if parent in parents else None, []).append(name)
    order: list[str] = []
    stack = sorted(children.get(None, ()), reverse=True)
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(sorted(children.get(name, ()), reverse=True))
    return order


def _volcano(snapshot: Snapshot) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    queues = snapshot.queues
    for name in _tree_order({n: q.parent for n, q in queues.items()}):
        queue = queues[name]
        if BUILTIN_QUEUES.get(name) == queue and name not in snapshot.queue_hierarchy:
            continue
        docs.append(queue_manifest(queue, snapshot.queue_hierarchy.get(name)))
    for ns_name in sorted(snapshot.namespaces):
        docs.extend(namespace_manifests(snapshot.namespaces[ns_name]))
    return docs


def _koordinator(snapshot: Snapshot) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    groups = snapshot.quota_groups
    for name in _tree_order({n: g.parent for n, g in groups.items()}):
        group = groups[name]
        namespaces = tuple(snapshot.quota_namespaces.get(name, ()))
        if BUILTIN_QUOTA_GROUPS.get(name) == group and not namespaces:
            continue
        home = name if name in snapshot.namespaces else "default"
        docs.append(quota_group_manifest(group, namespaces, home))
    return docs


FORMATS: dict[str, Callable[[Snapshot], list[dict[str, Any]]]] = {"volcano": _volcano, "koordinator": _koordinator}


def export_trees(snapshot: Snapshot, fmt: str) -> list[dict[str, Any]]:
    """The trees of ``snapshot`` as the manifests of ``fmt`` (a key of ``FORMATS``)."""
    try:
        write = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}") from None
    return write(snapshot)
