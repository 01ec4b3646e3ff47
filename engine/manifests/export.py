"""The trees of a snapshot as the peers' manifests: what ``fairway export`` and ``GET /api/v1/export/`` write.

Three formats, each the inverse of what ``load_manifests`` reads (so that ``fairway simulate`` on an export gives
back the same trees, and the same values on the same cluster):

* ``volcano``: the queue tree as ``scheduling.volcano.sh/v1beta1`` Queues (``spec.parent``, ``weight``,
  ``capability``, ``deserved``, ``guarantee.resource``, ``reclaimable``, ``priority``; a Closed queue carries
  ``status.state``, which Volcano keeps in the status; Fairway's borrowing / lending limits, minimum runtime and
  the annotated fields of ``engine.treefields`` (the description) in its ``fairway.io/`` annotations), and the
  namespaces as ``v1`` Namespaces (their queue in the ``scheduling.volcano.sh/queue-name`` annotation, the
  ``volcano.sh/hierarchy`` annotations of Volcano's hierarchical DRF) with a ``ResourceQuota`` holding the
  namespace weight (``volcano.sh/namespace.weight``) and the hard limits.
* ``koordinator``: the quota trees as ``scheduling.sigs.k8s.io/v1alpha1`` ElasticQuotas with Koordinator's labels
  (parent, is-parent, allow-lent-resource, tree-id, is-root) and annotations (shared-weight, namespaces; the
  annotated fields of ``engine.treefields`` under ``fairway.io/``); the built-in ``root``/``system``/``default``
  groups under Koordinator's names.
* ``kueue``: the queue tree as ``kueue.x-k8s.io/v1beta2`` objects (the inverse of ``engine.manifests.kueue``): one
  ``ResourceFlavor`` (``default-flavor``) holding every quota of a resource read in one flavor, and the
  ResourceFlavors read (labels, taints, tolerations) holding the quota of the resources read per flavor
  (``cpu@spot``), in each ClusterQueue's resource groups as read, with its ``flavorFungibility``; an inner queue is a ``Cohort`` (``spec.parentName``),
  with its own ``resourceGroups`` quota where it deserves more than its children (Kueue's cohort quota is its own
  plus its children's); a leaf is a ``ClusterQueue`` (``spec.cohortName``, one resource group covering the resources
  it has quota or limits for: ``nominalQuota`` = deserved, ``borrowingLimit``, ``lendingLimit``;
  ``fairSharing.weight``; ``stopPolicy: Hold`` when Closed or Closing; ``preemption`` as read; every namespace may use
  it); a namespace on a
  ClusterQueue gets a ``LocalQueue`` named ``default`` pointing at it (Kueue's default LocalQueue of a namespace).
  What Kueue cannot hold is said by ``export_notes`` (guarantee, a capability other than deserved plus the borrowing
  limit, the limits of a top-level queue, priority, reclaimable, a description, namespace weights and hard limits,
  quota groups, …).

Built-in queues and groups are written only where they differ from the built-ins (or carry namespaces or a
hierarchy). The documents are plain ``dict`` s, in tree order (a parent before its children), ready for YAML or JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from engine.manifests.common import (
    _TO_KOORD,
    FAIRWAY_BORROWING_LIMIT,
    FAIRWAY_LENDING_LIMIT,
    FAIRWAY_MIN_RUNTIME,
    FAIRWAY_MIN_SCALE_EXEMPT,
    FAIRWAY_PRIORITY,
    FAIRWAY_SUSPENDED,
    FAIRWAY_USER_LIMITS,
    GROUP_NAME_ANNOTATION,
    HIERARCHY_ANNOTATION,
    HIERARCHY_WEIGHTS_ANNOTATION,
    KOORD_ALLOW_LENT,
    KOORD_IS_PARENT,
    KOORD_IS_ROOT,
    KOORD_NAMESPACES,
    KOORD_PARENT,
    KOORD_PREEMPTIBLE,
    KOORD_QUOTA_NAME,
    KOORD_ROOT,
    KOORD_SHARED_WEIGHT,
    KOORD_TREE_ID,
    NAMESPACE_WEIGHT_KEY,
    PREEMPTABLE_KEY,
    QUEUE_NAME_ANNOTATION,
    TASK_SPEC_ANNOTATION,
    YUNIKORN_USER_INFO,
    _format_time,
)
from engine.manifests.core import _hard_base_resource
from engine.manifests.kueuelevers import FAIRWAY_KUEUE
from engine.objects import (
    BUILTIN_QUEUES,
    BUILTIN_QUOTA_GROUPS,
    DEFAULT_QUEUE,
    ROOT_GROUP,
    ROOT_QUEUE,
    FlavorGroup,
    KueuePreemption,
    NamespaceInfo,
    NodeAffinity,
    PodGroupInfo,
    QueueHierarchy,
    QueueSpec,
    QuotaGroupSpec,
    ResourceFlavorSpec,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.policy.arguments import format_duration
from engine.resources import (
    FLAVOR_MARK,
    ResourceList,
    format_exact_quantity,
    format_quantity,
    resource_sort_key,
    split_flavor,
)
from engine.treefields import QUEUE_FIELDS, QUOTA_GROUP_FIELDS, annotations_of
from engine.userlimits import UserLimit, user_limits_json

__all__ = [
    "FORMATS",
    "POD_PHASE",
    "export_notes",
    "export_trees",
    "job_manifests",
    "namespace_manifests",
    "placement_spec",
    "queue_manifest",
    "quota_group_manifest",
    "resource_flavor_manifest",
]

VOLCANO_QUEUE_API = "scheduling.volcano.sh/v1beta1"
ELASTIC_QUOTA_API = "scheduling.sigs.k8s.io/v1alpha1"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_FLAVOR = "default-flavor"
KUEUE_LOCAL_QUEUE = "default"  # the LocalQueue Kueue uses for a namespace's jobs without a queue-name label


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
    if queue.min_runtime is not None:
        annotations[FAIRWAY_MIN_RUNTIME] = format_duration(queue.min_runtime)
    annotations.update(annotations_of(QUEUE_FIELDS, queue))
    annotations.update(_user_limit_annotations(queue.user_limits))
    if queue.kueue:  # Kueue's levers (``engine.kueuepolicy``), read back by the Volcano reader
        annotations[FAIRWAY_KUEUE] = json.dumps(queue.kueue, separators=(",", ":"))
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


def _user_limit_annotations(limits: tuple[UserLimit, ...]) -> dict[str, str]:
    """A node's per-user limits as ``fairway.io/user-limits`` (the API's JSON list), none when it has none."""
    return {FAIRWAY_USER_LIMITS: json.dumps(user_limits_json(limits))} if limits else {}


def _format_weight(weight: float) -> str:
    return str(int(weight)) if weight == int(weight) else repr(weight)


def namespace_manifests(ns: NamespaceInfo) -> list[dict[str, Any]]:
    """A namespace (its queue in Volcano's annotation), and a ResourceQuota with its weight and hard limits when it
    has either."""
    meta: dict[str, Any] = {"name": ns.name}
    if ns.labels:
        meta["labels"] = ns.label_map()
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
    annotations.update(annotations_of(QUOTA_GROUP_FIELDS, group))
    annotations.update(_user_limit_annotations(group.user_limits))
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


def _kueue_group(
    resources: list[str], rows: Mapping[str, dict[str, Any]], snapshot: Snapshot | None = None, name: str = ""
) -> list[dict[str, Any]]:
    """One resource group covering ``resources`` in the one flavor (no group when there is nothing to cover); the
    resources read per flavor (``cpu@spot``) in their own groups, each flavor in the order read (the ClusterQueue's
    groups as read; for a Cohort one group over them), a flavor without a row of a covered resource at quota 0."""
    plain = [r for r in resources if FLAVOR_MARK not in r]
    out = []
    if plain:
        flavor = {"name": KUEUE_FLAVOR, "resources": [{"name": r, **rows[r]} for r in plain]}
        out.append({"coveredResources": plain, "flavors": [flavor]})
    keyed = [split_flavor(r) for r in resources if FLAVOR_MARK in r]
    if not keyed:
        return out
    flavors = snapshot.kueue_flavors if snapshot is not None else None
    read = list(flavors.groups.get(name, ())) if flavors is not None else []
    left = sorted({r for r, _ in keyed} - {r for g in read for r in g.resources}, key=resource_sort_key)
    if left:
        order = [f for r in left for f in (flavors.resources.get(r, ()) if flavors is not None else ())]
        order += [f for _, f in keyed]
        read.append(FlavorGroup(resources=tuple(left), flavors=tuple(dict.fromkeys(order))))
    for group in read:
        covered = list(group.resources)
        used = [f for f in group.flavors if any(f"{r}{FLAVOR_MARK}{f}" in rows for r in covered)]
        if not used:
            continue
        out.append(
            {
                "coveredResources": covered,
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": r, **rows.get(f"{r}{FLAVOR_MARK}{f}", {"nominalQuota": "0"})} for r in covered
                        ],
                    }
                    for f in used
                ],
            }
        )
    return out


def resource_flavor_manifest(spec: ResourceFlavorSpec) -> dict[str, Any]:
    """A ResourceFlavor as read: its node labels, node taints, tolerations and topology name."""
    out: dict[str, Any] = {}
    if spec.node_labels:
        out["nodeLabels"] = dict(spec.node_labels)
    if spec.node_taints:
        out["nodeTaints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in spec.node_taints
        ]
    if spec.tolerations:
        out["tolerations"] = [
            {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect)) if v}
            | ({"tolerationSeconds": t.toleration_seconds} if t.toleration_seconds is not None else {})
            for t in spec.tolerations
        ]
    if spec.topology_name:
        out["topologyName"] = spec.topology_name
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": spec.name}, "spec": out}


def _kueue_rows(nominal: Mapping[str, int], queue: QueueSpec, top: bool) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The covered resources (those with quota or limits) and each one's quota row, in Kueue's quantities."""
    limits = () if top else ((queue.borrowing_limit, "borrowingLimit"), (queue.lending_limit, "lendingLimit"))
    names = sorted(set(nominal).union(*(lim for lim, _ in limits)))
    rows: dict[str, dict[str, Any]] = {}
    for r in names:
        row: dict[str, Any] = {"nominalQuota": format_quantity(nominal.get(r, 0), r)}
        for lim, key in limits:
            if r in lim:
                row[key] = format_quantity(lim[r], r)
        rows[r] = row
    return names, rows


def _amount(resource: str, amount: int) -> str:
    return f"{resource} {format_quantity(amount, resource)}"


def _kueue_queue_notes(queue: QueueSpec, top: bool, inner: bool, snapshot: Snapshot) -> list[str]:
    """What Kueue cannot hold of one exported queue."""
    name, notes = queue.name, []
    what = "cohort" if inner else "ClusterQueue"
    if queue.guarantee:
        rl = ", ".join(_amount(r, v) for r, v in sorted(queue.guarantee.items()))
        notes.append(f"queue {name}: guarantee ({rl}) has no Kueue counterpart (a lending limit keeps quota)")
    # a borrowing limit of 0 on a quota of 0 cpu or memory is how a tree's top holding none is read: nothing lost
    held_zero = {r for r, v in queue.borrowing_limit.items() if not v and r in queue.deserved and not queue.deserved[r]}
    if top and (set(queue.borrowing_limit) - held_zero or queue.lending_limit):
        notes.append(
            f"queue {name}: borrowing and lending limits dropped: a {what} without a parent has no one to borrow "
            "from or lend to"
        )
    if top:
        free = sorted(
            r for r in set(queue.deserved) | set(queue.capability) if queue.capability.get(r) != queue.deserved.get(r)
        )
        if free or not queue.deserved:
            notes.append(
                f"queue {name}: at the top of a Kueue tree it uses at most its nominal quota (Fairway lets it borrow "
                "the cluster's idle resources up to its capability)"
            )
    else:
        lost = []
        for r, cap in sorted(queue.capability.items()):
            reach = queue.deserved.get(r, 0) + queue.borrowing_limit[r] if r in queue.borrowing_limit else None
            if reach is None or cap < reach:
                lost.append((r, cap, max(cap - queue.deserved.get(r, 0), 0)))
        if lost:
            caps = ", ".join(_amount(r, cap) for r, cap, _ in lost)
            fix = ", ".join(_amount(r, room) for r, _, room in lost)
            notes.append(
                f"queue {name}: capability ({caps}) is not deserved plus a borrowing limit, the only cap Kueue has "
                f"(a borrowing limit of {fix} would keep it)"
            )
    if queue.state != "Open":
        if inner:
            notes.append(f"queue {name}: {queue.state}, and a Kueue cohort cannot be stopped")
        elif queue.state == "Closing":
            notes.append(f"queue {name}: Closing written as stopPolicy Hold, which Fairway reads back as Closed")
        elif queue.state != "Closed":
            notes.append(f"queue {name}: state {queue.state} written as Open")
    if queue.priority:
        notes.append(f"queue {name}: priority {queue.priority} has no Kueue counterpart")
    if not queue.reclaimable:
        notes.append(f"queue {name}: not reclaimable, which Kueue cannot say of a queue (its lending limit can)")
    if queue.min_runtime is not None:
        notes.append(f"queue {name}: min_runtime {queue.min_runtime:g} s has no Kueue counterpart")
    if name in snapshot.queue_hierarchy:
        notes.append(f"queue {name}: Volcano's hierarchy annotations are not written (the tree is the cohorts)")
    return notes


def _kueue_children(queues: Mapping[str, QueueSpec], notes: list[str]) -> dict[str, list[str]]:
    """Each queue's children (the cohorts of the Kueue tree are the queues that have some), noting the built-in
    queues Kueue cannot hold and the queues moved to the top from under the default queue."""
    for builtin in (ROOT_QUEUE, DEFAULT_QUEUE):
        if builtin in queues and queues[builtin] != BUILTIN_QUEUES[builtin]:
            notes.append(f"queue {builtin}: Fairway's built-in; its settings have no Kueue counterpart")
    children: dict[str, list[str]] = {}
    for name, queue in queues.items():
        if queue.parent is not None and name != ROOT_QUEUE:
            children.setdefault(queue.parent, []).append(name)
    for name in sorted(children.get(DEFAULT_QUEUE, ())):
        notes.append(f"queue {name}: under the built-in default queue, which is not written; it is put at the top")
    return children


def _kueue_own_quota(
    name: str, queue: QueueSpec, children: list[str], queues: Mapping[str, QueueSpec], notes: list[str]
) -> dict[str, int]:
    """A cohort's own quota: what the queue deserves beyond its children, since Kueue's cohort quota is its own
    plus its children's (noted where the queue deserves less than its children together)."""
    below: dict[str, int] = {}
    for child in children:
        for r, v in queues[child].deserved.items():
            below[r] = below.get(r, 0) + v
    own: dict[str, int] = {}
    for r in sorted(set(below) | set(queue.deserved)):
        mine, theirs = queue.deserved.get(r, 0), below.get(r, 0)
        if mine < theirs or (r not in queue.deserved and theirs):
            notes.append(
                f"queue {name}: deserves {_amount(r, mine)}, less than its children's {_amount(r, theirs)}; "
                f"a Kueue cohort holds at least its children's quota ({_amount(r, theirs)})"
            )
        elif mine > theirs or (r in queue.deserved and not theirs):
            own[r] = mine - theirs
    return own


def _kueue_queue(name: str, children: Mapping[str, list[str]], snapshot: Snapshot, notes: list[str]) -> dict[str, Any]:
    """One queue as a Kueue ``Cohort`` (a queue with children) or ``ClusterQueue`` (a leaf), noting what Kueue
    cannot hold of it."""
    queue = snapshot.queues[name]
    parent = queue.parent if queue.parent not in (None, ROOT_QUEUE, DEFAULT_QUEUE) else None
    top = parent is None
    inner = name in children
    notes.extend(_kueue_queue_notes(queue, top, inner, snapshot))
    spec: dict[str, Any] = {}
    if inner:
        own = _kueue_own_quota(name, queue, children[name], snapshot.queues, notes)
        if parent is not None:
            spec["parentName"] = _kueue_name(snapshot, parent, "Cohort")
        covered, rows = _kueue_rows(own, queue, top)
    else:
        if parent is not None:
            spec["cohortName"] = _kueue_name(snapshot, parent, "Cohort")
        selector = snapshot.admission.namespace_selectors.get(name)
        # every namespace, as a Fairway queue takes any namespace's jobs, unless a selector was read
        spec["namespaceSelector"] = {} if selector is None else selector.to_manifest()
        if name in snapshot.admission.strict_fifo:
            spec["queueingStrategy"] = "StrictFIFO"
        # the stored lever too (without a Configuration's admissionFairSharing the snapshot does not apply it)
        if name in snapshot.admission.fair_sharing_queues or (queue.kueue or {}).get("admissionScope"):
            spec["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        covered, rows = _kueue_rows(dict(queue.deserved), queue, top)
    groups = _kueue_group(covered, rows, snapshot, name)
    if groups:
        spec["resourceGroups"] = groups
    fungibility = snapshot.kueue_flavors.fungibility.get(name) if snapshot.kueue_flavors is not None else None
    if fungibility is not None and not inner:
        spec["flavorFungibility"] = {
            "whenCanBorrow": fungibility.when_can_borrow,
            "whenCanPreempt": fungibility.when_can_preempt,
            "preference": fungibility.preference,
        }
    exact = snapshot.kueue_weights.get(name)
    # Kueue's weight is a quantity: the exact one read (0.75, 0) where the whole weight was scaled from it
    spec["fairSharing"] = {"weight": queue.weight if exact is None else format_exact_quantity(exact)}
    if not inner and queue.state in ("Closed", "Closing"):
        # admitted workloads run on, nothing new is admitted; drained when it was read so
        spec["stopPolicy"] = "HoldAndDrain" if name in snapshot.admission.draining else "Hold"
    preemption = None if inner else snapshot.kueue_preemption.get(name)
    if preemption is not None:  # the ClusterQueue's preemption policies as read (the kueuefair plugin's)
        spec["preemption"] = _kueue_preemption(preemption)
    kind = "Cohort" if inner else "ClusterQueue"
    doc = {"apiVersion": KUEUE_API, "kind": kind, "metadata": {"name": _kueue_name(snapshot, name, kind)}}
    return {**doc, "spec": spec}


def _kueue_preemption(preemption: KueuePreemption) -> dict[str, Any]:
    borrow: dict[str, Any] = {"policy": preemption.borrow_within_cohort}
    if preemption.max_priority_threshold is not None:
        borrow["maxPriorityThreshold"] = preemption.max_priority_threshold
    return {
        "reclaimWithinCohort": preemption.reclaim_within_cohort,
        "borrowWithinCohort": borrow,
        "withinClusterQueue": preemption.within_cluster_queue,
    }


def _kueue_name(snapshot: Snapshot, queue: str, kind: str) -> str:
    """The name of ``queue`` as a Kueue ``kind``: the Kueue name it was read under when its identity differs from
    it (a Cohort named ``root``), else its own."""
    kueue = snapshot.kueue_names.get(queue)
    return kueue.name if kueue is not None and kueue.kind == kind else queue


def _local_queue_doc(snapshot: Snapshot, namespace: str, name: str, queue: str, weight: Fraction) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterQueue": _kueue_name(snapshot, queue, "ClusterQueue")}
    if weight != 1:
        spec["fairSharing"] = {"weight": format_exact_quantity(weight)}
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _kueue_local_queues(
    snapshot: Snapshot, leaves: set[str], notes: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The LocalQueues: those the snapshot keeps (``AdmissionLevers.local_queue_specs``: read from Kueue or stored,
    with their weights) on a ClusterQueue, and a ``default`` one in each namespace without one of that name whose
    queue is a ClusterQueue; and the namespaces left on the default queue (noting the namespace settings Kueue cannot
    hold and the namespaces on a cohort)."""
    queues = snapshot.queues
    local: list[dict[str, Any]] = []
    unplaced: list[str] = []
    kept = {s.key: s for s in snapshot.admission.local_queue_specs}
    for spec in sorted(kept.values(), key=lambda s: s.key):
        if spec.queue in leaves:
            local.append(_local_queue_doc(snapshot, spec.namespace, spec.name, spec.queue, spec.weight))
        else:
            notes.append(f"LocalQueue {spec.namespace}/{spec.name}: its queue {spec.queue} is not a ClusterQueue")
    for ns_name in sorted(snapshot.namespaces):
        ns = snapshot.namespaces[ns_name]
        if ns.weight != 1 or ns.hard:
            notes.append(f"namespace {ns_name}: its weight and ResourceQuota hard limits are not written")
        if ns.queue in leaves:
            if (ns_name, KUEUE_LOCAL_QUEUE) not in kept:
                local.append(_local_queue_doc(snapshot, ns_name, KUEUE_LOCAL_QUEUE, ns.queue, Fraction(1)))
        elif ns.queue and ns.queue in queues and ns.queue not in (DEFAULT_QUEUE, ROOT_QUEUE):
            notes.append(f"namespace {ns_name}: its queue {ns.queue} is a cohort, which no LocalQueue can point at")
        elif not any(ns_name == key[0] for key in kept):
            unplaced.append(ns_name)
    local.sort(key=lambda d: (d["metadata"]["namespace"], d["metadata"]["name"]))
    return local, unplaced


def _kueue_export(snapshot: Snapshot) -> tuple[list[dict[str, Any]], list[str]]:
    """The Kueue documents of ``snapshot``'s queue tree (none without a queue to write) and what Kueue cannot hold
    of it, one note each, in the tree's order."""
    queues = snapshot.queues
    notes: list[str] = []
    children = _kueue_children(queues, notes)
    cohorts: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    for name in _tree_order({n: q.parent for n, q in queues.items()}):
        if name in (ROOT_QUEUE, DEFAULT_QUEUE):
            continue
        (cohorts if name in children else members).append(_kueue_queue(name, children, snapshot, notes))
    leaves = {n for n in queues if n not in children and n not in (ROOT_QUEUE, DEFAULT_QUEUE)}
    local, unplaced = _kueue_local_queues(snapshot, leaves, notes)
    if unplaced and (cohorts or members):
        notes.append(
            f"namespaces {', '.join(unplaced)}: on the default queue: no LocalQueue (Kueue leaves their jobs alone)"
        )
    for f in QUEUE_FIELDS:
        annotated = f.annotation is not None or f.name == "user_limits"  # fairway.io/user-limits (by hand)
        carrying = [n for n, q in queues.items() if annotated and getattr(q, f.name)]
        if carrying:
            notes.append(
                f"{f.name} of queues {', '.join(sorted(carrying))}: Kueue has no place for it (export them with "
                "--format volcano, which keeps it in an annotation)"
            )
    groups_written = [n for n, g in snapshot.quota_groups.items() if BUILTIN_QUOTA_GROUPS.get(n) != g]
    if groups_written:
        notes.append(
            f"quota groups ({len(groups_written)}): Koordinator's tree has no Kueue counterpart "
            "(export them with --format koordinator)"
        )
    flavor = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": KUEUE_FLAVOR}, "spec": {}}
    read = snapshot.kueue_flavors.flavors if snapshot.kueue_flavors is not None else {}
    flavors = [flavor] if KUEUE_FLAVOR not in read else []
    flavors += [resource_flavor_manifest(read[f]) for f in sorted(read)]  # several flavors per resource, as read
    # the namespaces' labels, which the ClusterQueues' namespaceSelectors match
    labelled = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns.name, "labels": ns.label_map()}}
        for _, ns in sorted(snapshot.namespaces.items())
        if ns.labels
    ]
    docs = [*flavors, *labelled, *cohorts, *members, *local] if cohorts or members else []
    return docs, notes


def _kueue(snapshot: Snapshot) -> list[dict[str, Any]]:
    return _kueue_export(snapshot)[0]


FORMATS: dict[str, Callable[[Snapshot], list[dict[str, Any]]]] = {
    "volcano": _volcano,
    "koordinator": _koordinator,
    "kueue": _kueue,
}


def export_trees(snapshot: Snapshot, fmt: str) -> list[dict[str, Any]]:
    """The trees of ``snapshot`` as the manifests of ``fmt`` (a key of ``FORMATS``)."""
    try:
        write = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}") from None
    return write(snapshot)


def export_notes(snapshot: Snapshot, fmt: str) -> list[str]:
    """What the manifests of ``fmt`` cannot express of ``snapshot``'s trees, one line each (Volcano's and
    Koordinator's formats hold their trees whole, except a Kueue ResourceFlavor's quota: one line)."""
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "kueue":
        return _kueue_export(snapshot)[1]
    flavored = sorted(
        name
        for name, q in snapshot.queues.items()
        if any(FLAVOR_MARK in key for amounts in (q.deserved, q.capability, q.guarantee) for key in amounts or ())
    )
    if fmt == "volcano" and flavored:
        return [
            f"queues {', '.join(flavored)}: their quota per Kueue ResourceFlavor (cpu@spot) is written as is; Volcano "
            "reads each such key as a resource of its own, which no node offers (export --format kueue keeps them)"
        ]
    return []


# -- one job ------------------------------------------------------------------------------------------------------

# a pod's phase as its manifest says it (None: no status.phase, read back Pending)
POD_PHASE: dict[TaskStatus, str | None] = {
    TaskStatus.PENDING: None,
    TaskStatus.PIPELINED: None,
    TaskStatus.ALLOCATED: "Pending",
    TaskStatus.BINDING: "Pending",
    TaskStatus.BOUND: "Pending",
    TaskStatus.RUNNING: "Running",
    TaskStatus.RELEASING: "Running",
    TaskStatus.SUCCEEDED: "Succeeded",
    TaskStatus.FAILED: "Failed",
    TaskStatus.UNKNOWN: "Unknown",
}


def job_manifests(
    podgroup: PodGroupInfo, tasks: Sequence[TaskInfo], class_priority: int | None
) -> list[dict[str, Any]]:
    """One job as the manifests ``fairway simulate`` reads back to the same podgroup and pods (the job page's YAML,
    ``GET /api/v1/podgroups/{id}/manifest/``): its Volcano ``PodGroup`` (queue, minMember, minTaskMember,
    minResources, priority class; the priority in ``fairway.io/priority`` when it is not its class's
    ``class_priority``; ``fairway.io/suspended`` when suspended; the phase and conditions in its status), then each
    pod (``scheduling.k8s.io/group-name``, its role, quota group and preemptibility, requests, placement
    constraints, node and phase), by name."""
    meta: dict[str, Any] = {"name": podgroup.name, "namespace": podgroup.namespace}
    if podgroup.creation_timestamp:
        meta["creationTimestamp"] = _format_time(podgroup.creation_timestamp)
    annotations: dict[str, str] = {}
    if podgroup.priority != (class_priority or 0):
        annotations[FAIRWAY_PRIORITY] = str(podgroup.priority)
    if podgroup.suspended:
        annotations[FAIRWAY_SUSPENDED] = "true"
    if podgroup.user:
        annotations[YUNIKORN_USER_INFO] = json.dumps({"user": podgroup.user, "groups": list(podgroup.user_groups)})
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"minMember": podgroup.min_member, "queue": podgroup.queue}
    if podgroup.min_task_member:
        spec["minTaskMember"] = dict(podgroup.min_task_member)
    if podgroup.min_resources is not None:
        spec["minResources"] = podgroup.min_resources.to_quantities()
    if podgroup.priority_class:
        spec["priorityClassName"] = podgroup.priority_class
    status: dict[str, Any] = {"phase": podgroup.phase.value}
    if podgroup.conditions:
        status["conditions"] = [
            {
                "type": c.type,
                "status": c.status,
                **({"reason": c.reason} if c.reason else {}),
                **({"message": c.message} if c.message else {}),
                **({"transitionID": c.transition_id} if c.transition_id else {}),
                **(
                    {"lastTransitionTime": _format_time(c.last_transition_time)}
                    if c.last_transition_time is not None
                    else {}
                ),
            }
            for c in podgroup.conditions
        ]
    docs: list[dict[str, Any]] = [
        {"apiVersion": VOLCANO_QUEUE_API, "kind": "PodGroup", "metadata": meta, "spec": spec, "status": status}
    ]
    docs.extend(_pod_manifest(task, podgroup.name) for task in sorted(tasks, key=lambda t: t.name))
    return docs


def placement_spec(task: TaskInfo) -> dict[str, Any]:
    """What a pod's spec says of where it may run, as the spec writes it: its ``nodeSelector``, required node
    ``affinity`` and ``tolerations`` (those it has; ``engine.manifests.core.read_placement`` reads them back)."""
    spec: dict[str, Any] = {}
    if task.node_selector:
        spec["nodeSelector"] = dict(task.node_selector)
    if task.node_affinity:
        spec["affinity"] = node_affinity_spec(task.node_affinity)
    if task.tolerations:
        spec["tolerations"] = [
            {
                "operator": t.operator,
                **({"key": t.key} if t.key else {}),
                **({"value": t.value} if t.value else {}),
                **({"effect": t.effect} if t.effect else {}),
                **({"tolerationSeconds": t.toleration_seconds} if t.toleration_seconds is not None else {}),
            }
            for t in task.tolerations
        ]
    return spec


def node_affinity_spec(terms: NodeAffinity) -> dict[str, Any]:
    """A pod's required node affinity as its spec writes it (``affinity``: ``nodeAffinity``'s required terms)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_selector_terms(terms)}
        }
    }


def node_selector_terms(terms: NodeAffinity) -> list[dict[str, Any]]:
    """The ``nodeSelectorTerms`` of a required node affinity, each term's ``matchExpressions`` and ``matchFields``."""
    out: list[dict[str, Any]] = []
    for term in terms:
        written: dict[str, Any] = {}
        for e in term:
            entry = {"key": e.key, "operator": e.operator, **({"values": list(e.values)} if e.values else {})}
            written.setdefault("matchFields" if e.match_field else "matchExpressions", []).append(entry)
        out.append(written)
    return out


def _pod_manifest(task: TaskInfo, group: str) -> dict[str, Any]:
    labels = dict(task.labels)
    if task.quota_group is not None:
        labels[KOORD_QUOTA_NAME] = _TO_KOORD.get(task.quota_group, task.quota_group)
    if not task.quota_preemptible:
        labels[KOORD_PREEMPTIBLE] = "false"
    annotations = {GROUP_NAME_ANNOTATION: group}
    if task.task_role:
        annotations[TASK_SPEC_ANNOTATION] = task.task_role
    if task.volcano_preemptable is not None:
        annotations[PREEMPTABLE_KEY] = "true" if task.volcano_preemptable else "false"
    meta: dict[str, Any] = {"name": task.name, "namespace": task.namespace}
    if labels:
        meta["labels"] = labels
    meta["annotations"] = annotations
    if task.creation_timestamp is not None:
        meta["creationTimestamp"] = _format_time(task.creation_timestamp)
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": task.request.to_quantities()}}],
        "priority": task.priority,
    }
    if task.priority_class:
        spec["priorityClassName"] = task.priority_class
    placed = task.node is not None and task.status not in (TaskStatus.PENDING, TaskStatus.PIPELINED)
    if placed:
        spec["nodeName"] = task.node
    spec.update(placement_spec(task))
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    phase = POD_PHASE[task.status] if placed or task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED) else None
    pod_status: dict[str, Any] = {}
    if phase is not None:
        pod_status["phase"] = phase
    if task.start_timestamp is not None:
        pod_status["startTime"] = _format_time(task.start_timestamp)
    if pod_status:
        doc["status"] = pod_status
    return doc
