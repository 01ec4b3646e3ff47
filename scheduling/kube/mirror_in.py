"""The API server's objects -> Fairway's rows, through the same readers and write paths as everything else.

The informers' caches (every kind of ``client.KINDS``) are read by ``engine.manifests.load_objects``, the readers
``fairway simulate`` uses (quantities, Volcano Queue and PodGroup fields, Koordinator's labels and annotations, a
pod's queue and quota group, priority classes), into a ``Snapshot``; then each object is written as one write of its
own, checked by the same rules as the API's:

* **trees** (only when the cluster owns them, ``tree_source=kubernetes``): queues and quota groups through
  ``quotas.services`` (``engine.rules``: guarantee <= deserved <= capability, children within parents, cycles, ...),
  parents first, deleted children first; namespaces' weight, hard limits and default queue. Otherwise only the
  namespaces the pods need are created;
* **Kueue's ResourceFlavors** (with ``tree_source=kubernetes``): stored as ``quotas.ResourceFlavor`` rows (created
  and changed before the queues that name them, deleted after), and each queue keeps its quota per flavor
  (``cpu@spot``) with its resource groups and ``flavorFungibility`` in its ``kueue`` field;
* **Kueue's LocalQueues** (with ``tree_source=kubernetes``): stored as ``quotas.LocalQueue`` rows (namespace, name,
  ClusterQueue, ``fairSharing.weight``), deleted before the queues they point at may go; Kueue's record of a
  LocalQueue's usage (its status) seeds the cluster's kept usage the first time it is seen
  (``store.seed_local_queue_usage``), and a podgroup keeps its pods' LocalQueue (``PodGroup.local_queue``);
* **Kueue's Configuration** (its ConfigMap, ``FAIRWAY_KUEUE_CONFIGMAP`` in ``FAIRWAY_KUEUE_NAMESPACE``): kept as the
  cluster's ``kueue_configuration``, which the sessions apply as ``fairway simulate`` applies a Configuration file;
* **nodes**: allocatable, labels, taints, unschedulable, Ready (a node the API server deleted is deleted); an
  allocatable above what one node may have sets the node aside (``scheduling.agent.offer``), and at most
  ``FAIRWAY_MAX_NODES`` nodes are mirrored (those already mirrored first, then by name): the others are left out with
  one problem that says how many and which, and their pods are not applied (``_within_node_cap``);
* **podgroups** (Volcano PodGroups): queue, minMember, minTaskMember, minResources, priority, checked with
  ``engine.rules.validate_podgroup`` when created or when their queue or minimum changes; the phase, reasons and
  conditions are the sessions' (they are written back, not read); Kueue's plain-Pod groups are podgroups too, which
  keep their pod count (``PodGroup.kueue_pod_group_count``, cleared when the group becomes something else): the
  sessions do not admit one while it waits for its pods (``store.with_pod_group_waits``);
* **Kueue's batch/v1 Jobs** (labelled with a LocalQueue; read live, ``engine.manifests.kueuejobs``): the pods a Job
  controls are one podgroup ``<namespace>/<job>`` owned by the Job, which keeps its pod count and what is read of the
  Job (``PodGroup.kueue_job``: its ``job-min-parallelism``, whether it is suspended): the sessions wait for its pods as
  for a pod group's, and size its partial admission (``engine.partial``);
* **Kueue's JobSets, Kubeflow's jobs and MPIJobs** (labelled with a LocalQueue; read live,
  ``engine.manifests.kueuepodsets``): the pods their controllers made are one podgroup owned by the object, of all
  its pod sets' pods, kept and waited for as a Job's (never admitted in part);
* **pods** with the cluster's ``schedulerName``: request, priority, preemptible, quota group, placement constraints;
  their status follows what the cluster reports, as a node agent's reports do (``scheduling.agent``): a node name
  with phase Pending is Bound, Running, Succeeded, Failed; a ``deletionTimestamp`` is Releasing; a pod gone from the
  API server is deleted, or, when it was being evicted, confirmed gone (Failed, Evicted). What the last session
  decided and the adapter has not sent yet (a pod Bound here and not yet there, an eviction not yet done) is kept.

**An object that cannot be applied** (a field the readers refuse, a rule it breaks, a pod naming a podgroup or a
quota group that is not there) writes nothing — the rows keep what its last valid version made of them — and is
recorded as a ``KubeObjectProblem`` row with the reason (``mirror_out.send_problem_events`` then creates a
Kubernetes Event on the object); the row goes when the object is fixed or deleted.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from core import tree_owner
from engine import rules, treefields
from engine.admission import LocalQueueSpec
from engine.flavors import unflavored
from engine.manifests import load_objects
from engine.manifests.common import KUEUE_QUEUE_LABEL
from engine.manifests.export import node_selector_terms
from engine.manifests.kueueconfig import KUEUE_CONFIG_KEY
from engine.manifests.kueuepodsets import KUBEFLOW_KINDS
from engine.objects import (
    DEFAULT_QUEUE,
    ROOT_QUEUE,
    PodGroupInfo,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    TaskInfo,
    TaskStatus,
    own_podgroup_name,
)
from engine.resources import ResourceList, format_exact_quantity
from quotas import services
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor
from scheduling import evictions, store
from scheduling.agent import EVICTED_REASON, NODE_LOST_REASON, confirm_gone, offer
from scheduling.choices import FINISHED_POD_STATUSES, PodStatus
from scheduling.models import (
    Cluster,
    KubeObjectProblem,
    Node,
    Pod,
    PodGroup,
    RemovalCause,
    parse_kueue_configuration,
)

__all__ = ["Report", "mirror"]

logger = logging.getLogger(__name__)

ProblemKey = tuple[str, str, str]  # kind, namespace, name
_ON_NODE = (PodStatus.ALLOCATED, PodStatus.BINDING, PodStatus.BOUND, PodStatus.RUNNING)
_PLACED_BY_SESSION = (PodStatus.BOUND, PodStatus.PIPELINED, PodStatus.ALLOCATED, PodStatus.BINDING)
NEW_PODS_BATCH = 2000  # new pod rows per INSERT


@dataclass
class Report:
    """What one mirror pass did: rows written per kind and the objects it could not apply."""

    written: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)
    problems: dict[ProblemKey, str] = field(default_factory=dict)
    # objects applied but held to their queue's range of priority and preemptibility, with what was changed
    held: dict[ProblemKey, str] = field(default_factory=dict)


def mirror(cluster: Cluster, objects: Sequence[Mapping[str, Any]], now: datetime) -> Report:
    """Apply the cluster's objects (every kind the informers watch) to the rows; see the module docstring."""
    result, invalid = load_objects(objects, source=f"cluster {cluster.name}", live=True)
    # the queues keep their quota per ResourceFlavor (``cpu@spot``); the nodes and pods their plain resources, which
    # the sessions count per flavor as they read them (``engine.manifests.kueuestored.with_stored_flavors``)
    snap = unflavored(result.snapshot)
    report = Report()
    for bad in invalid:
        report.problems[(bad.kind, bad.namespace, bad.name)] = bad.message
    versions = {_key_of(o): str((o.get("metadata") or {}).get("resourceVersion") or "") for o in objects}
    local_queues = {s.key: s for s in result.snapshot.admission.local_queue_specs}
    if cluster.owns_trees:
        with tree_owner.from_cluster():
            flavors = _sync_resource_flavors(objects, report)
            # before the queues they point at may go; one the readers refused keeps its row (its last valid version)
            refused = {(b.namespace, b.name) for b in invalid if b.kind == "LocalQueue"}
            _delete_local_queues(local_queues, refused, report)
            _sync_queues(result.snapshot, report)
            _delete_resource_flavors(flavors, report)
            _sync_quota_groups(snap, report)
            _sync_namespaces(snap, report)
            _sync_local_queues(cluster, result.snapshot, local_queues, report)
    _sync_kueue_configuration(cluster, objects, report)
    _ensure_namespaces({t.namespace for t in snap.tasks.values()} | {p.namespace for p in snap.podgroups.values()})
    left_out = _sync_nodes(cluster, snap, report)
    pg_docs = {key for (kind, key) in result.origins if kind == "PodGroup"} - set(
        _auto_podgroups(snap, result.kueue_max_exec)
    )
    pg_local = _podgroup_local_queues(snap, local_queues)
    # Kueue's batch/v1 Jobs, JobSets, Kubeflow's jobs and MPIJobs: their podgroups' pod count, owner and LocalQueue
    jobs = result.kueue_jobs
    owners = {**_controllers(objects), **{key: job.owner(key.split("/", 1)[1]) for key, job in jobs.items()}}
    pg_local.update({k: j.local_queue for k, j in jobs.items() if (k.split("/", 1)[0], j.local_queue) in local_queues})
    kueue = {key: (count, None) for key, count in result.kueue_pod_groups.items()}
    kueue.update({key: (job.count, job.stored()) for key, job in jobs.items()})
    _sync_podgroups(cluster, snap, pg_docs, report, now, owners, pg_local, kueue, result.kueue_max_exec)
    _sync_pods(cluster, snap, report, now, left_out)
    _pods_of_refused_jobs(snap, invalid, report)
    _record_problems(cluster, report.problems, versions, now, report.held)
    return report


# the kinds of Kueue's workloads read live, whose pods join the object's podgroup
WORKLOAD_KINDS = ("Job", "JobSet", *KUBEFLOW_KINDS)


def _pods_of_refused_jobs(snap: Snapshot, invalid: Iterable[Any], report: Report) -> None:
    """A pod of a Kueue Job (or JobSet, Kubeflow job, MPIJob) the readers refused is not applied either (it is not
    made a job of its own): its problem names the object and why it was refused."""
    refused = {f"{b.namespace}/{b.name}": (b.kind, b.message) for b in invalid if b.kind in WORKLOAD_KINDS}
    for task in snap.tasks.values():
        key = ("Pod", task.namespace, task.name)
        if task.podgroup in refused and key in report.problems:
            kind, why = refused[task.podgroup]
            report.problems[key] = f"not applied: its {kind} {task.podgroup} was refused ({why})"


def _key_of(obj: Mapping[str, Any]) -> ProblemKey:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _controllers(objects: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each PodGroup's controller (its ``ownerReference`` with ``controller: true``), as ``Kind name (apiVersion)``,
    by ``namespace/name`` (``PodGroup.kube_owner``: such a PodGroup is deleted through its owner)."""
    out = {}
    for obj in objects:
        if obj.get("kind") != "PodGroup":
            continue
        meta = obj.get("metadata") or {}
        refs = meta.get("ownerReferences") or []
        ref = next((r for r in refs if isinstance(r, Mapping) and r.get("controller")), None)
        if ref is not None:
            key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
            out[key] = f"{ref.get('kind', '?')} {ref.get('name', '?')} ({ref.get('apiVersion', '?')})"[:400]
    return out


def _auto_podgroups(snap: Snapshot, kept: Container[str] = ()) -> list[str]:
    """The podgroups a plain pod gets (``podgroup-<pod>``) that the store makes again as they are (its namespace's
    default queue): rows of no podgroup. One in another queue of Fairway's tree, which the pod names (Volcano's queue
    annotation, a Kueue LocalQueue's label), is written as a podgroup row, so that its queue is kept; so is one of
    ``kept`` (a plain pod Kueue manages with a maximum execution time: the row keeps it)."""
    defaults = dict(Namespace.objects.values_list("name", "default_queue__name"))
    queues = set(Queue.objects.values_list("name", flat=True))
    out = []
    for t in snap.tasks.values():
        pg = snap.podgroups.get(t.podgroup)
        if t.podgroup != f"{t.namespace}/{own_podgroup_name(t.name)}" or t.podgroup in kept:
            continue
        if pg is None or pg.queue not in queues or pg.queue == (defaults.get(t.namespace) or DEFAULT_QUEUE):
            out.append(t.podgroup)
    return out


# -- Kueue's Configuration ------------------------------------------------------------------------------------


def _sync_kueue_configuration(cluster: Cluster, objects: Sequence[Mapping[str, Any]], report: Report) -> None:
    """Kueue's Configuration from its ConfigMap (``FAIRWAY_KUEUE_CONFIGMAP`` in ``FAIRWAY_KUEUE_NAMESPACE``, key
    ``controller_manager_config.yaml``) as the cluster's ``kueue_configuration``: the sessions apply it
    (``engine.manifests.kueuestored``); no ConfigMap, none. One that cannot be read keeps the last good one and is a
    problem of the ConfigMap."""
    name, namespace = settings.FAIRWAY["KUEUE_CONFIGMAP"], settings.FAIRWAY["KUEUE_NAMESPACE"]
    text = ""
    for obj in objects:
        if _key_of(obj) == ("ConfigMap", namespace, name):
            data = obj.get("data")
            value = data.get(KUEUE_CONFIG_KEY) if isinstance(data, Mapping) else None
            text = value if isinstance(value, str) else ""
    try:
        parse_kueue_configuration(text)
    except ValueError as exc:
        report.problems[("ConfigMap", namespace, name)] = f"data[{KUEUE_CONFIG_KEY!r}]: {exc}"
        return
    if text != cluster.kueue_configuration:
        cluster.kueue_configuration = text
        cluster.save(update_fields=["kueue_configuration"])
        report.written["KueueConfiguration"] += 1


# -- Kueue's ResourceFlavors -----------------------------------------------------------------------------------


def _sync_resource_flavors(objects: Sequence[Mapping[str, Any]], report: Report) -> set[str]:
    """Create or change the ResourceFlavor rows as the cluster has them (``services.save_resource_flavor``, the API's
    checks); one it refuses is a problem of the object. Returns the names the cluster has."""
    current = {f.name: f for f in ResourceFlavor.objects.all()}
    names = set()
    for obj in objects:
        if obj.get("kind") != "ResourceFlavor" or not str(obj.get("apiVersion") or "").startswith("kueue.x-k8s.io/"):
            continue
        key = _key_of(obj)
        names.add(key[2])
        spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
        data = {f: spec.get(k) or services.RESOURCE_FLAVOR_EMPTY[f] for f, k in services.RESOURCE_FLAVOR_FIELDS.items()}
        row = current.get(key[2])
        if row is not None and all(getattr(row, f) == v for f, v in data.items()):
            continue
        data["name"] = key[2]
        try:
            services.save_resource_flavor(row, data)
            report.written["ResourceFlavor"] += 1
        except rules.RuleViolation as exc:
            _refused(report, key, exc)
    return names


def _delete_resource_flavors(keep: set[str], report: Report) -> None:
    """Delete the ResourceFlavor rows the cluster no longer has (after the queues stopped naming them)."""
    for row in ResourceFlavor.objects.exclude(name__in=keep):
        try:
            services.delete_resource_flavor(row)
            report.deleted["ResourceFlavor"] += 1
        except rules.RuleViolation as exc:
            _refused(report, ("ResourceFlavor", "", row.name), exc)


# -- Kueue's LocalQueues --------------------------------------------------------------------------------------


def _delete_local_queues(
    keep: Mapping[tuple[str, str], LocalQueueSpec], refused: set[tuple[str, str]], report: Report
) -> None:
    """Delete the LocalQueue rows the cluster no longer has (or that point at another queue now: written again after
    the queues), before the queues they point at may be deleted; ``refused``: LocalQueues the readers could not
    read, whose rows stay as their last valid version made them."""
    for row in LocalQueue.objects.select_related("namespace", "queue"):
        key = (row.namespace.name, row.name)
        spec = keep.get(key)
        if key in refused or (spec is not None and spec.queue == row.queue.name):
            continue
        services.delete_local_queue(row)
        report.deleted["LocalQueue"] += int(spec is None)


def _sync_local_queues(
    cluster: Cluster, snap: Snapshot, specs: Mapping[tuple[str, str], LocalQueueSpec], report: Report
) -> None:
    """Create or change the LocalQueue rows as the cluster has them (``services.save_local_queue``, the API's checks;
    one it refuses is a problem of the object), and seed the cluster's kept usage of a LocalQueue it has none of
    from Kueue's status (``store.seed_local_queue_usage``)."""
    _ensure_namespaces({ns for ns, _ in specs})
    current = {(r.namespace.name, r.name): r for r in LocalQueue.objects.select_related("namespace", "queue")}
    for key, spec in sorted(specs.items()):
        try:
            weight = format_exact_quantity(spec.weight)
        except ValueError:  # more digits than Python writes out
            report.problems[("LocalQueue", key[0], key[1])] = "spec.fairSharing.weight: too large to keep"
            continue
        row = current.get(key)
        if row is not None and row.queue.name == spec.queue and row.weight == weight:
            continue
        data = {"namespace": key[0], "name": key[1], "queue": spec.queue, "weight": weight}
        try:
            services.save_local_queue(row, data)
            report.written["LocalQueue"] += 1
        except rules.RuleViolation as exc:
            _refused(report, ("LocalQueue", key[0], key[1]), exc)
    recorded = {key: usage.consumed for key, usage in snap.admission.local_queues.items() if key in specs}
    store.seed_local_queue_usage(cluster, recorded)


def _podgroup_local_queues(snap: Snapshot, specs: Mapping[tuple[str, str], LocalQueueSpec]) -> dict[str, str]:
    """Each podgroup's LocalQueue: its pods' ``kueue.x-k8s.io/queue-name`` label, when the LocalQueue exists."""
    out: dict[str, str] = {}
    for task in snap.tasks.values():
        lq = task.labels.get(KUEUE_QUEUE_LABEL)
        if lq and (task.namespace, lq) in specs:
            out.setdefault(task.podgroup, lq)
    return out


# -- trees --------------------------------------------------------------------------------------------------


def _parents_first(specs: Mapping[str, Any]) -> list[str]:
    """The names with every parent before its children (a loop's members in the order reached), without recursion
    and walking each chain once: a 20,000-level chain mirrored from a cluster is ordered, not a RecursionError."""
    order: list[str] = []
    seen: set[str] = set()
    for start in sorted(specs):
        path: list[str] = []
        on_path: set[str] = set()
        name: str | None = start
        while name is not None and name in specs and name not in seen and name not in on_path:
            path.append(name)
            on_path.add(name)
            name = specs[name].parent
        for member in reversed(path):
            seen.add(member)
            order.append(member)
    return order


def _refused(report: Report, key: ProblemKey, exc: Exception) -> None:
    errors = getattr(exc, "errors", None)
    report.problems[key] = "; ".join(e.message for e in errors) if errors else str(exc)


def _sync_queues(snap: Snapshot, report: Report) -> None:
    current = services.queue_specs()
    for name in _parents_first(snap.queues):
        spec = snap.queues[name]
        if name == ROOT_QUEUE or (name in current and _same_queue(current[name], spec)):
            continue
        data = {k: getattr(spec, k) for k in (*services.QUEUE_FIELDS, "name", "parent")}
        try:
            services.save_queue(Queue.objects.filter(name=name).first(), data)
            report.written["Queue"] += 1
        except (rules.RuleViolation, Queue.DoesNotExist) as exc:
            _refused(report, ("Queue", "", name), exc)
    gone = [n for n in reversed(_parents_first(current)) if n not in snap.queues and n not in Queue.BUILTIN]
    for name in gone:
        try:
            services.delete_queue(Queue.objects.get(name=name))
            report.deleted["Queue"] += 1
        except rules.RuleViolation as exc:
            _refused(report, ("Queue", "", name), exc)


def _same_queue(a: QueueSpec, b: QueueSpec) -> bool:
    return all(getattr(a, k) == getattr(b, k) for k in (*services.QUEUE_FIELDS, "parent"))


def _sync_quota_groups(snap: Snapshot, report: Report) -> None:
    current = services.group_specs()
    members = dict(Namespace.objects.filter(quota_group__isnull=False).values_list("name", "quota_group__name"))
    for name in _parents_first(snap.quota_groups):
        spec = snap.quota_groups[name]
        namespaces = sorted(snap.quota_namespaces.get(name, ()))
        if name in QuotaGroup.BUILTIN:
            continue
        if name in current and _same_group(current[name], spec, namespaces, members):
            continue
        data: dict[str, Any] = {k: getattr(spec, k) for k in (*services.GROUP_FIELDS, "name", "parent")}
        data["namespaces"] = namespaces
        try:
            services.save_quota_group(QuotaGroup.objects.filter(name=name).first(), data)
            report.written["ElasticQuota"] += 1
        except (rules.RuleViolation, QuotaGroup.DoesNotExist) as exc:
            _refused(report, ("ElasticQuota", "", name), exc)
    gone = [n for n in reversed(_parents_first(current)) if n not in snap.quota_groups]
    for name in gone:
        if name in QuotaGroup.BUILTIN:
            continue
        try:
            services.delete_quota_group(QuotaGroup.objects.get(name=name))
            report.deleted["ElasticQuota"] += 1
        except rules.RuleViolation as exc:
            _refused(report, ("ElasticQuota", "", name), exc)


def _same_group(a: QuotaGroupSpec, b: QuotaGroupSpec, namespaces: list[str], members: Mapping[str, str]) -> bool:
    for f in treefields.QUOTA_GROUP_FIELDS:
        if f.kind is treefields.FieldKind.WEIGHTS and getattr(b, f.name) is None:
            continue  # left to the default the rules fill in (shared weight: max)
        if getattr(a, f.name) != getattr(b, f.name):
            return False
    if a.parent != b.parent:
        return False
    return sorted(ns for ns, g in members.items() if g == a.name) == namespaces


@transaction.atomic
def _sync_namespaces(snap: Snapshot, report: Report) -> None:
    """Namespaces' weight (``volcano.sh/namespace.weight``), hard limits, default queue and labels, from the
    cluster."""
    services.lock_tree_writes()
    queues = dict(Queue.objects.values_list("name", "id"))
    for name, info in sorted(snap.namespaces.items()):
        row, _ = Namespace.objects.get_or_create(name=name)
        queue_id = queues.get(info.queue) if info.queue else None
        if info.queue and queue_id is None:
            report.problems[("Namespace", "", name)] = f"annotation queue-name: queue {info.queue} does not exist"
        changes = {
            "weight": info.weight,
            "hard": info.hard or None,
            "default_queue_id": queue_id,
            "labels": info.label_map(),
        }
        if any(getattr(row, k) != v for k, v in changes.items()):
            for k, v in changes.items():
                setattr(row, k, v)
            row.save()
            report.written["Namespace"] += 1


def _ensure_namespaces(names: Iterable[str]) -> None:
    missing = set(names) - set(Namespace.objects.filter(name__in=set(names)).values_list("name", flat=True))
    if not missing:
        return
    with transaction.atomic():
        services.lock_tree_writes()
        for name in sorted(missing):
            Namespace.objects.get_or_create(name=name)


# -- nodes, podgroups, pods -----------------------------------------------------------------------------------


NODE_CAP_NAMES_SHOWN = 5  # the names a node-cap problem quotes


def _within_node_cap(cluster: Cluster, names: Iterable[str], rows: Mapping[str, Node], report: Report) -> set[str]:
    """The nodes beyond ``FAIRWAY_MAX_NODES`` (the nodes already mirrored are kept first, then the others by name), as
    the agents' registrations are refused past it: with at most that many nodes of at most ``FAIRWAY_MAX_NODE_AMOUNT``
    each, the cluster's total stays below 2**62. They are reported as one problem (on the first of them, hence one
    Kubernetes Event, whatever their number) and logged; nothing of them is written."""
    most = settings.FAIRWAY_LIMITS.max_nodes
    ordered = sorted(names, key=lambda name: (name not in rows, name))
    beyond = ordered[most:]
    if not beyond:
        return set()
    shown = ", ".join(beyond[:NODE_CAP_NAMES_SHOWN]) + (", …" if len(beyond) > NODE_CAP_NAMES_SHOWN else "")
    message = (
        f"not mirrored: the cluster lists {len(ordered):,} nodes, more than the {most:,} one cluster may have "
        f"(FAIRWAY_MAX_NODES); {len(beyond):,} are left out ({shown}) and offer nothing to Fairway, nor are their "
        "pods applied, until the cluster lists fewer nodes or the limit is raised"
    )
    report.problems[("Node", "", beyond[0])] = message
    logger.warning("cluster %s: %s", cluster.name, message)
    return set(beyond)


def _sync_nodes(cluster: Cluster, snap: Snapshot, report: Report) -> set[str]:
    """Write the nodes (see the module docstring); returns the names left out by the node cap."""
    rows = {n.name: n for n in Node.objects.filter(cluster=cluster)}
    left_out = _within_node_cap(cluster, snap.nodes, rows, report)
    for name, info in snap.nodes.items():
        if name in left_out:
            continue
        # an allocatable above what one node may have sets the node aside (it offers nothing) with a problem row,
        # hence a Kubernetes Event on the Node, until the cluster reports one within the bound
        offered = Node(name=name, cluster=cluster)
        offer(offered, info.allocatable, "the cluster")
        if offered.set_aside:
            report.problems[("Node", "", name)] = offered.set_aside
        values = {
            "allocatable": offered.allocatable,
            "set_aside": offered.set_aside,
            "labels": dict(info.labels),
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in info.taints],
            "unschedulable": info.unschedulable,
            "ready": info.ready,
        }
        row = rows.get(name)
        if row is None:
            Node(cluster=cluster, name=name, **values).save()
        elif any(getattr(row, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(row, k, v)
            row.save()
        else:
            continue
        report.written["Node"] += 1
    for name in set(rows) - (set(snap.nodes) - left_out):
        rows[name].delete()
        report.deleted["Node"] += 1
    return left_out


def _sync_podgroups(
    cluster: Cluster,
    snap: Snapshot,
    keys: set[str],
    report: Report,
    now: datetime,
    owners: Mapping[str, str],
    local_queues: Mapping[str, str],
    kueue: Mapping[str, tuple[int, dict[str, Any] | None]],
    max_exec: Mapping[str, int],
) -> None:
    """Create, update or delete the podgroup rows of ``keys``; ``kueue``: the pod count of each Kueue pod group that
    waits for all its pods (``LoadResult.kueue_pod_groups``) and of each Kueue Job, with what is read of a Job
    (``LoadResult.kueue_jobs``), kept as ``PodGroup.kueue_pod_group_count`` and ``PodGroup.kueue_job``; ``max_exec``:
    each Kueue workload's maximum execution time (``LoadResult.kueue_max_exec``), kept as
    ``PodGroup.kueue_max_exec_seconds``."""
    rows = {f"{p.namespace.name}/{p.name}": p for p in PodGroup.objects.filter(cluster=cluster).select_related(
        "namespace", "queue")}  # fmt: skip
    specs = services.queue_specs()
    ranges = services.priority_ranges()
    for key in sorted(keys):
        info, notes = _held_podgroup(snap.podgroups[key], ranges)
        row = rows.get(key)
        local_queue, (count, job), limit = local_queues.get(key), kueue.get(key, (None, None)), max_exec.get(key)
        changed = (
            row is None
            or _changed(row, info)
            or (row.local_queue, row.kueue_pod_group_count, row.kueue_job, row.kueue_max_exec_seconds)
            != (local_queue, count, job, limit)
        )
        try:
            _write_podgroup(cluster, info, row, specs, owners.get(key), local_queue, (count, job), limit)
        except rules.RuleViolation as exc:
            _refused(report, ("PodGroup", info.namespace, info.name), exc)
            continue
        if notes:
            report.held[("PodGroup", info.namespace, info.name)] = "; ".join(notes)
        report.written["PodGroup"] += int(changed)
    gone = [rows[key] for key in sorted(set(rows) - keys)]
    asked = [pg for pg in gone if pg.deletion_requested_at is not None]  # a person's job action (``job_actions``)
    for pg in asked:
        report.deleted["PodGroup"] += evictions.remove_podgroups(
            PodGroup.objects.filter(pk=pg.pk),
            now,
            RemovalCause.DELETED,
            f"deleted by {pg.deletion_requested_by or 'a person'} (job action), through the API server of the "
            f"Kubernetes cluster {cluster.name}",
        )
    others = [pg.pk for pg in gone if pg.deletion_requested_at is None]
    if others:  # recorded as removed jobs, with their evictions (``scheduling.evictions``)
        report.deleted["PodGroup"] += evictions.remove_podgroups(
            PodGroup.objects.filter(pk__in=others),
            now,
            RemovalCause.KUBERNETES,
            f"its PodGroup was deleted from the Kubernetes cluster {cluster.name}",
        )


def _held_podgroup(info: PodGroupInfo, ranges: Mapping[str, rules.PriorityRange]) -> tuple[PodGroupInfo, list[str]]:
    """The podgroup with its priority held to its queue's range (``engine.rules.hold_to_range``), and what changed."""
    rng = ranges.get(info.queue or DEFAULT_QUEUE)
    if rng is None:
        return info, []
    priority, _, notes = rules.hold_to_range(f"podgroup {info.key}", rng, priority=info.priority)
    return (replace(info, priority=priority) if notes else info), notes


def _changed(row: PodGroup, info: PodGroupInfo) -> bool:
    return (row.queue.name, row.min_member, row.min_resources, row.priority, row.user or "",
            tuple(row.user_groups or ())) != (
        info.queue, info.min_member, info.min_resources, info.priority, info.user, info.user_groups)  # fmt: skip


@transaction.atomic
def _write_podgroup(
    cluster: Cluster,
    info: PodGroupInfo,
    row: PodGroup | None,
    specs: Mapping[str, Any],
    owner: str | None,
    local_queue: str | None = None,
    kueue: tuple[int | None, dict[str, Any] | None] = (None, None),
    max_exec: int | None = None,
) -> None:
    """Create or update one podgroup; the rules of ``POST podgroups/`` when it is new or moves queue or minimum.
    ``local_queue``: its Kueue LocalQueue (its pods' label), which Admission Fair Sharing orders it by;
    ``kueue``: a Kueue pod group's or Job's pod count, which the sessions wait for, and what is read of a Job
    (``PodGroup.kueue_job``); (None, None): any other podgroup, or a group or Job that stopped being one;
    ``max_exec``: a Kueue workload's maximum execution time (``PodGroup.kueue_max_exec_seconds``)."""
    if (
        row is not None
        and not _changed(row, info)
        and row.min_task_member == dict(info.min_task_member)
        and row.kube_owner == owner
        and row.local_queue == local_queue
        and (row.kueue_pod_group_count, row.kueue_job) == kueue
        and row.kueue_max_exec_seconds == max_exec
    ):
        return
    if row is None or row.queue.name != info.queue or row.min_resources != info.min_resources:
        ns = Namespace.objects.get(name=info.namespace)
        others = PodGroup.objects.filter(namespace=ns).exclude(pk=getattr(row, "pk", None))
        rules.check(
            rules.validate_podgroup(
                specs, info.queue, min_member=info.min_member, min_resources=info.min_resources or ResourceList(),
                namespace=info.namespace, namespace_hard=ns.hard, name=info.name,
                other_min_resources=ResourceList.total(m for m in others.values_list("min_resources", flat=True) if m),
            )
        )  # fmt: skip
    values = {
        "queue": Queue.objects.get(name=info.queue or DEFAULT_QUEUE),
        "min_member": info.min_member,
        "min_task_member": dict(info.min_task_member),
        "min_resources": info.min_resources,
        "priority": info.priority,
        "priority_class_name": info.priority_class,
        "kube_owner": owner,
        # who submitted it (``yunikorn.apache.org/user.info`` or ``fairway.io/user``; none: its namespace)
        "user": info.user or None,
        "user_groups": list(info.user_groups) or None,
        "local_queue": local_queue,
        "kueue_pod_group_count": kueue[0],
        "kueue_job": kueue[1],
        "kueue_max_exec_seconds": max_exec,
    }
    if (kueue[1] or {}).get("minCount") is None:  # not (or no longer) a Job that may be admitted in part
        values["kueue_admitted_count"] = None
    if row is None:
        row = PodGroup(cluster=cluster, namespace=Namespace.objects.get(name=info.namespace), name=info.name)
        fields = None
    else:  # only what the object says: a person's job action meanwhile (``PodGroup.suspended_at``, ...) stays
        fields = [*values, "updated"]
    for k, v in values.items():
        setattr(row, k, v)
    row.save(update_fields=fields)


def _sync_pods(cluster: Cluster, snap: Snapshot, report: Report, now: datetime, left_out: set[str]) -> None:
    # only the namespace, for the key: the rows are compared by their ids (node_id, podgroup_id, ...), and reading
    # the other related rows with every pod is most of the pass at 10,000 pods
    rows = {f"{p.namespace.name}/{p.name}": p for p in Pod.objects.filter(cluster=cluster).select_related("namespace")}
    refs = _References.read(cluster)
    ranges = services.priority_ranges()
    new: list[Pod] = []
    for uid, task in sorted(snap.tasks.items()):
        if task.node and task.node in left_out:
            # left as it is: a pod the session saw pending here could be bound elsewhere while it runs there
            report.problems[("Pod", task.namespace, task.name)] = (
                f"not applied: it is on node {task.node}, which is not mirrored (the cluster lists more nodes than "
                "FAIRWAY_MAX_NODES)"
            )
            continue
        try:
            values = refs.pod_values(task)
        except ValueError as exc:
            report.problems[("Pod", task.namespace, task.name)] = str(exc)
            continue
        pg = snap.podgroups.get(task.podgroup)
        if values["podgroup_id"] is None and pg is not None:  # a pod of its own podgroup carries its user
            values["user"], values["user_groups"] = pg.user or None, list(pg.user_groups) or None
        rng = ranges.get((pg.queue if pg is not None else "") or DEFAULT_QUEUE)
        if rng is not None:
            values["priority"], values["preemptible"], notes = rules.hold_to_range(
                f"pod {uid}", rng, priority=values["priority"], preemptible=values["preemptible"]
            )
            if notes:
                report.held[("Pod", task.namespace, task.name)] = "; ".join(notes)
        if _write_pod(cluster, task, rows.get(uid), values, refs, now, new):
            report.written["Pod"] += 1
    if new:  # the pods new to Fairway in one statement per batch (thousands arrive at once when jobs are submitted)
        Pod.objects.bulk_create(new, batch_size=NEW_PODS_BATCH)
    for uid in set(rows) - set(snap.tasks):
        if _pod_gone(rows[uid], now):
            report.deleted["Pod"] += 1


@dataclass
class _References:
    """The rows a pod points at, by name (read once per pass)."""

    nodes: dict[str, int]
    podgroups: dict[str, int]
    groups: dict[str, tuple[int, bool]]  # name -> (id, is_parent)
    ns_ids: dict[str, int]
    ns_groups: dict[str, int | None]

    @classmethod
    def read(cls, cluster: Cluster) -> _References:
        namespaces = list(Namespace.objects.values_list("name", "id", "quota_group_id"))
        podgroups = PodGroup.objects.filter(cluster=cluster).values_list("namespace__name", "name", "id")
        return cls(
            nodes=dict(Node.objects.filter(cluster=cluster).values_list("name", "id")),
            podgroups={f"{ns}/{n}": pk for ns, n, pk in podgroups},
            groups={n: (pk, parent) for n, pk, parent in QuotaGroup.objects.values_list("name", "id", "is_parent")},
            ns_ids={n: pk for n, pk, _ in namespaces},
            ns_groups={n: g for n, _, g in namespaces},
        )

    def pod_values(self, task: TaskInfo) -> dict[str, Any]:
        """The pod's row fields but its status; ``ValueError`` naming what it refers to and is not there."""
        podgroup_id = self.podgroups.get(task.podgroup)  # its own podgroup has a row when it is in another queue
        if podgroup_id is None and task.podgroup != f"{task.namespace}/{own_podgroup_name(task.name)}":
            raise ValueError(f"annotation scheduling.k8s.io/group-name: podgroup {task.podgroup} is not mirrored")
        group_id = self.ns_groups.get(task.namespace)
        if task.quota_group is not None:
            found = self.groups.get(task.quota_group)
            if found is None or found[1]:
                why = "does not exist" if found is None else "is a parent group; pods go to leaf groups"
                raise ValueError(f"label quota.scheduling.koordinator.sh/name: quota group {task.quota_group} {why}")
            group_id = found[0]
        return {
            "namespace_id": self.ns_ids[task.namespace],
            "podgroup_id": podgroup_id,
            "task_name": task.task_role[:63],
            "request": task.request,
            "priority": task.priority,
            "preemptible": task.volcano_preemptable is not False and task.quota_preemptible,
            "quota_group_id": group_id,
            "node_selector": dict(task.node_selector),
            "node_affinity": node_selector_terms(task.node_affinity),
            "tolerations": [_toleration(t) for t in task.tolerations],
            "labels": dict(task.labels),
        }


def _toleration(t: Any) -> dict[str, Any]:
    out = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    if t.toleration_seconds is not None:
        out["toleration_seconds"] = t.toleration_seconds
    return out


def _write_pod(
    cluster: Cluster,
    task: TaskInfo,
    row: Pod | None,
    values: dict[str, Any],
    refs: _References,
    now: datetime,
    new: list[Pod],
) -> bool:
    """Update one pod row, or add a new one to ``new`` (created in bulk by the caller); returns whether it wrote."""
    node_id = refs.nodes.get(task.node) if task.node else None
    if row is None:
        status, node = _initial_status(task, node_id)
        new.append(Pod(cluster=cluster, name=task.name, status=status, node_id=node, started=now if status ==
                       PodStatus.RUNNING else None, finished=now if status in FINISHED_POD_STATUSES else None, **values))  # fmt: skip
        return True
    changes = {k: v for k, v in values.items() if getattr(row, k) != v}
    changes.update(_status_change(row, task, node_id, now))
    if not changes:
        return False
    changes["updated"] = now
    return bool(Pod.objects.filter(pk=row.pk, status=row.status).update(**changes))


def _initial_status(task: TaskInfo, node_id: int | None) -> tuple[str, int | None]:
    if task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
        return task.status.value, node_id
    if task.node is None or node_id is None:
        return PodStatus.PENDING, None
    if task.status is TaskStatus.RELEASING:
        return PodStatus.RELEASING, node_id
    return (PodStatus.BOUND if task.status is TaskStatus.BOUND else PodStatus.RUNNING), node_id


def _status_change(row: Pod, task: TaskInfo, node_id: int | None, now: datetime) -> dict[str, Any]:
    """What the cluster's report of a pod changes in its row (see the module docstring)."""
    k8s, db = task.status, row.status
    if k8s in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
        if db in FINISHED_POD_STATUSES:
            return {}
        return {"status": k8s.value, "finished": now, "node_id": node_id or row.node_id}
    if k8s is TaskStatus.PENDING:
        if db in FINISHED_POD_STATUSES or (db == PodStatus.RELEASING and row.node_id is None):
            # a pod of the same name made again: a new incarnation waits
            return {"status": PodStatus.PENDING, "node_id": None, "reason": "", "message": "", "started": None,
                    "finished": None}  # fmt: skip
        return {}  # Pending there: a binding not yet sent (Bound here) or nothing to do
    if node_id is None:
        return {}  # on a node Fairway does not know (yet)
    if k8s is TaskStatus.RELEASING:
        return {"status": PodStatus.RELEASING, "node_id": node_id} if db in _ON_NODE or db == PodStatus.PENDING else {}
    if db == PodStatus.RELEASING or db in FINISHED_POD_STATUSES:
        return {}  # an eviction under way, or finished here
    target = PodStatus.RUNNING if k8s is TaskStatus.RUNNING else PodStatus.BOUND
    if db == target and row.node_id == node_id:
        return {}
    if db == PodStatus.RUNNING and target == PodStatus.BOUND:
        return {} if row.node_id == node_id else {"node_id": node_id}
    change: dict[str, Any] = {"status": target, "node_id": node_id}
    if target == PodStatus.RUNNING and row.started is None:
        change["started"] = now
    return change


def _pod_gone(row: Pod, now: datetime) -> bool:
    """A pod the API server no longer has: confirmed gone when it was being evicted, kept when it was evicted or
    lost before (its history), deleted otherwise. Returns whether the row changed."""
    if row.status == PodStatus.RELEASING:
        confirm_gone(row, now)
        return True
    if row.status == PodStatus.FAILED and row.reason in (EVICTED_REASON, NODE_LOST_REASON):
        return False
    row.delete()
    return True


# -- problems -----------------------------------------------------------------------------------------------


@transaction.atomic
def _record_problems(
    cluster: Cluster,
    problems: Mapping[ProblemKey, str],
    versions: Mapping[ProblemKey, str],
    now: datetime,
    held: Mapping[ProblemKey, str] | None = None,
) -> None:
    """One row per object that could not be applied (reason ``FairwayInvalid``) or was held to its queue's range
    (``FairwayHeldToRange``); rows of objects now fine (or gone) are deleted."""
    rows = {(p.kind, p.namespace, p.name): p for p in KubeObjectProblem.objects.filter(cluster=cluster)}
    notices = [(key, m, KubeObjectProblem.INVALID) for key, m in problems.items()]
    notices += [(key, m, KubeObjectProblem.HELD_TO_RANGE) for key, m in (held or {}).items() if key not in problems]
    for key, message, reason in notices:
        row = rows.get(key)
        if row is None:
            KubeObjectProblem.objects.create(
                cluster=cluster, kind=key[0], namespace=key[1], name=key[2], message=message, reason=reason,
                resource_version=versions.get(key, ""), first_seen=now, last_seen=now,
            )  # fmt: skip
            what = "not applied" if reason == KubeObjectProblem.INVALID else "held to its queue's range"
            logger.warning("cluster %s: %s %s/%s %s: %s", cluster.name, *key, what, message)
            continue
        row.last_seen, row.resource_version = now, versions.get(key, row.resource_version)
        if row.message != message or row.reason != reason:
            row.message, row.reason, row.event_sent = message, reason, False
        row.save()
    stale = [row.pk for key, row in rows.items() if key not in problems and key not in (held or {})]
    if stale:
        KubeObjectProblem.objects.filter(pk__in=stale).delete()
