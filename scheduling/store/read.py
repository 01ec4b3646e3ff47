"""Rows -> the engine's ``Snapshot``.

Reading (``load_snapshot``) takes a handful of queries whatever the cluster size: one each for the namespaces,
queues, quota groups, nodes, podgroups and pods, read with ``values_list`` (JSON columns as text, parsed once per
distinct value, since thousands of pods share a handful of requests) and turned straight into the engine's
dataclasses. What goes in:

* every node of the cluster with its ``ready`` flag (a NotReady or cordoned node is in the snapshot, so the pods
  on it still count, but it adds nothing to the total and takes no new pods);
* every podgroup that is not Completed, and every pod that is not finished, plus the finished pods of those
  podgroups (gang counts include Succeeded and Failed members, as in Volcano);
* a pod without a podgroup gets its own (``own_podgroup_name``: minMember 1, its namespace's default queue, else
  ``default``), as Volcano's controller creates one for a plain pod. Such podgroups have no row, so their phase
  and reason are not written back;
* a **Pipelined** pod is read back as Pending without a node: pipelining is decided afresh by every session
  (in Volcano it never leaves the session either);
* ``Pod.preemptible`` false sets both ``volcano.sh/preemptable: false`` and Koordinator's quota
  ``preemptible: false``;
* the cluster's scheduler policy (``Cluster.scheduler_policy``, Volcano's format);
* Kueue's levers of the queues (their ``kueue`` field) and the cluster's Kueue Configuration, as the snapshot's
  admission levers, preemption policies and policy (``engine.manifests.kueuestored.with_stored_levers``);
* Kueue's ResourceFlavors (``quotas.ResourceFlavor``, read only when some queue has quota in one): the nodes and the
  pods on them counted per flavor as ``fairway simulate`` counts them (``with_stored_flavors``);
* Kueue's LocalQueues (``quotas.LocalQueue``, one query): their weights and what the Kueue export writes; the live
  session adds each job's LocalQueue and the usage it keeps (``scheduling.store.localqueues``);
* Kueue's pod groups that wait for their pods (``PodGroup.kueue_pod_group_count`` set, fewer of its pods that can run
  than that and none on a node): the admission's ``pod_group_waits`` (``with_pod_group_waits``), as ``fairway
  simulate`` reads them, so that no session admits such a group (``NotEnoughPods``) until its last pod arrives.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from django.conf import settings
from django.db.models import Q

from engine import collector, treefields
from engine.admission import LocalQueueSpec, label_pairs
from engine.manifests.kueuegroups import pod_group_wait
from engine.manifests.kueuejobs import job_wait, template_pod
from engine.manifests.kueuepodsets import pod_set_template_pods
from engine.manifests.kueuestored import with_stored_flavors, with_stored_levers
from engine.objects import (
    BUILTIN_PRIORITY_CLASSES,
    DEFAULT_QUEUE,
    NamespaceInfo,
    NodeInfo,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    QueueSpec,
    QuotaGroupSpec,
    ResourceFlavorSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    own_podgroup_name,
)
from engine.policy.policy import Policy
from engine.session.reasons import Reason
from engine.usage import UsageHistory as PastUsage
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup, ResourceFlavor
from scheduling.choices import PodGroupPhase as DbPhase
from scheduling.choices import PodStatus
from scheduling.models import (
    Cluster,
    Node,
    Pod,
    PodGroup,
    UsageHistory,
)
from scheduling.store.db import (
    FINISHED_DB_STATUSES,
    Epoch,
    JsonCache,
    RowIds,
    as_text,
    fetch_all,
    parse_time,
    timestamp,
)

logger = logging.getLogger(__name__)


T = TypeVar("T")


def _conditions_in(raw: object) -> tuple[PodGroupCondition, ...]:
    if not isinstance(raw, list):
        return ()
    out = []
    for c in raw:
        if isinstance(c, dict) and c.get("type"):
            out.append(
                PodGroupCondition(
                    type=str(c["type"]),
                    status=str(c.get("status", "True")),
                    reason=str(c.get("reason", "")),
                    message=str(c.get("message", "")),
                    transition_id=str(c.get("transitionID", "")),
                    last_transition_time=parse_time(c.get("lastTransitionTime")),
                )
            )
    return tuple(out)


_TASK_STATUS = {s.value: s for s in TaskStatus}
_FINISHED = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})


_PG_PHASE = {p.value: p for p in PodGroupPhase}


def load_snapshot(cluster: Cluster) -> Snapshot:
    """The cluster as the engine sees it, read in seven queries (see the module docstring for what goes in)."""
    return read_cluster(cluster)[0]


class _Namespaces(NamedTuple):
    names: dict[int, str]  # by primary key
    default_queue: dict[str, str]
    infos: list[NamespaceInfo]
    by_quota_group: dict[str, list[str]]  # which quota group takes each namespace's pods


class _Pods(NamedTuple):
    tasks: list[TaskInfo]
    ids: dict[str, int]  # pod uid -> primary key
    own: dict[str, PodGroupInfo]  # the podgroup of each pod that has none, one per pod


@collector.paused_during
def read_cluster(cluster: Cluster) -> tuple[Snapshot, RowIds]:
    """``load_snapshot`` plus the primary keys of its pods and nodes (for ``apply_decisions(ids=...)``)."""
    cache = JsonCache()
    namespaces = read_namespaces(cache)
    group_names, groups = read_quota_groups(cache)
    node_names, node_ids, nodes = _read_nodes(cluster, cache)
    pg_keys, podgroups, kueue_counts = _read_podgroups(cluster, cache, namespaces.names)
    pods = _read_pods(cluster, cache, namespaces, group_names, node_names, pg_keys, podgroups)
    snapshot = Snapshot.build(
        nodes=nodes,
        tasks=pods.tasks,
        podgroups=[*podgroups.values(), *pods.own.values()],
        queues=read_queues(cache),
        quota_groups=groups,
        namespaces=namespaces.infos,
        policy=cluster.policy,
        quota_namespaces=namespaces.by_quota_group,
        past_usage=read_past_usage(cluster),
        node_bound=settings.FAIRWAY_LIMITS.max_node_amount,
    )
    levered = with_stored_levers(snapshot, cluster.kueue_config, read_local_queues())
    flavored = with_stored_flavors(levered, read_resource_flavors)
    return with_pod_group_waits(flavored, kueue_counts), RowIds(pods=pods.ids, nodes=node_ids)


def read_resource_flavors() -> dict[str, ResourceFlavorSpec]:
    """Kueue's ResourceFlavors stored beside the trees, by name (one query)."""
    return {f.name: f.to_spec() for f in ResourceFlavor.objects.all()}


def read_local_queues() -> list[LocalQueueSpec]:
    """Kueue's LocalQueues stored beside the trees (one query): their weights, which Admission Fair Sharing reads,
    and what the Kueue export writes."""
    return services.local_queue_specs()


def fairness_on(policy: Policy) -> bool:
    """Whether the policy turns fairness over time on for either tree (``engine.usage``)."""
    return policy.queue_fairness().enabled or policy.quota_fairness().enabled


def read_past_usage(cluster: Cluster) -> PastUsage | None:
    """The cluster's recorded past usage for its snapshot (one query), or None when its policy has fairness over time
    off (the row is then neither read nor written). No row yet: an empty record (the first session starts it)."""
    if not fairness_on(cluster.policy):
        return None
    row = UsageHistory.objects.filter(cluster=cluster).values_list("updated", "nodes").first()
    if row is None:
        return PastUsage()
    updated, nodes = row
    return PastUsage.from_json({"updated": updated.timestamp(), "nodes": nodes})


def read_namespaces(cache: JsonCache) -> _Namespaces:
    ns_names: dict[int, str] = {}
    ns_default_queue: dict[str, str] = {}
    namespaces: list[NamespaceInfo] = []
    quota_namespaces: dict[str, list[str]] = {}
    for pk, name, weight, queue, group, hard, labels in Namespace.objects.values_list(
        "id", "name", "weight", "default_queue__name", "quota_group__name", as_text("hard"), as_text("labels")
    ):
        ns_names[pk] = name
        if queue:
            ns_default_queue[name] = queue
        if group:
            quota_namespaces.setdefault(group, []).append(name)
        namespaces.append(
            NamespaceInfo(
                name=name,
                weight=weight,
                queue=queue,
                hard=cache.resource_list(hard) if hard else None,
                labels=label_pairs(cache.value(labels)) if labels and labels != "{}" else (),
            )
        )

    return _Namespaces(ns_names, ns_default_queue, namespaces, quota_namespaces)


class SpecMemo:
    """The tree specs of the last read, by the row each was built from: a row read again unchanged gives back the
    same (frozen) spec without its JSON parsed again, so reading the trees after one node was edited costs the query
    and the one new spec (a mirror keeps one; the rows of the last read only, so it never grows)."""

    def __init__(self) -> None:
        self._tables: dict[str, dict[tuple[Any, ...], Any]] = {}

    def specs(self, table: str, rows: Iterable[tuple[Any, ...]], build: Callable[[tuple[Any, ...]], T]) -> list[T]:
        """``build(row)`` for each of ``rows``, or what it gave for the same row at the last read of ``table``."""
        previous: dict[tuple[Any, ...], T] = self._tables.get(table, {})
        fresh: dict[tuple[Any, ...], T] = {}
        for row in rows:
            spec = previous.get(row)
            fresh[row] = build(row) if spec is None else spec
        self._tables[table] = fresh
        return list(fresh.values())


def _tree_columns(table: Sequence[treefields.TreeField]) -> tuple[Any, ...]:
    """The columns of a tree kind's fields (``engine.treefields``): resource lists and user limits read as text (a
    row is a key of ``SpecMemo``)."""
    return tuple(as_text(f.name) if f.kind in _AS_TEXT else f.name for f in table)


_JSON_KINDS = {treefields.FieldKind.USER_LIMITS, treefields.FieldKind.KUEUE}  # JSON read as text, parsed once
_AS_TEXT = treefields.LIST_KINDS | _JSON_KINDS


def _tree_values(table: Sequence[treefields.TreeField], values: Sequence[Any], cache: JsonCache) -> dict[str, Any]:
    """The spec keywords of a row's ``values`` read with ``_tree_columns(table)``."""
    return {
        f.name: treefields.from_stored(f, cache.value(v) if f.kind in _JSON_KINDS and v else v, cache.resource_list)
        for f, v in zip(table, values, strict=True)
    }


QUEUE_COLUMNS = ("name", "parent__name", *_tree_columns(treefields.QUEUE_FIELDS))


def _queue_spec(row: tuple[Any, ...], cache: JsonCache) -> QueueSpec:
    """The engine's queue of a row read with ``QUEUE_COLUMNS``."""
    return QueueSpec(name=row[0], parent=row[1], **_tree_values(treefields.QUEUE_FIELDS, row[2:], cache))


def read_queues(cache: JsonCache | None = None, memo: SpecMemo | None = None) -> list[QueueSpec]:
    texts = cache or JsonCache()
    rows = Queue.objects.values_list(*QUEUE_COLUMNS)
    return (memo or SpecMemo()).specs("queues", rows, lambda row: _queue_spec(row, texts))


GROUP_COLUMNS = ("id", "name", "parent__name", *_tree_columns(treefields.QUOTA_GROUP_FIELDS))


def _group_spec(row: tuple[Any, ...], cache: JsonCache) -> tuple[int, QuotaGroupSpec]:
    """(primary key, the engine's quota group) of a row read with ``GROUP_COLUMNS``."""
    values = _tree_values(treefields.QUOTA_GROUP_FIELDS, row[3:], cache)
    return row[0], QuotaGroupSpec(name=row[1], parent=row[2], **values)


def read_quota_groups(
    cache: JsonCache | None = None, memo: SpecMemo | None = None
) -> tuple[dict[int, str], list[QuotaGroupSpec]]:
    texts = cache or JsonCache()
    rows = QuotaGroup.objects.values_list(*GROUP_COLUMNS)
    found = (memo or SpecMemo()).specs("groups", rows, lambda row: _group_spec(row, texts))
    return {pk: spec.name for pk, spec in found}, [spec for _, spec in found]


NODE_COLUMNS = ("id", "name", as_text("allocatable"), as_text("labels"), as_text("taints"), "unschedulable", "ready")


def node_info(row: Sequence[Any], cache: JsonCache) -> NodeInfo:
    """The engine's node of a row read with ``NODE_COLUMNS``."""
    _pk, name, alloc, labels, taints, unschedulable, ready = row
    return NodeInfo(
        name=name,
        allocatable=cache.resource_list(alloc),
        labels=cache.value(labels) or {},
        taints=tuple(
            Taint(key=t.get("key", ""), value=t.get("value", "") or "", effect=t.get("effect", "NoSchedule"))
            for t in (cache.value(taints) or [])
        ),
        unschedulable=unschedulable,
        ready=ready,
    )


def _read_nodes(cluster: Cluster, cache: JsonCache) -> tuple[dict[int, str], dict[str, int], list[NodeInfo]]:
    node_names: dict[int, str] = {}
    node_ids: dict[str, int] = {}
    nodes: list[NodeInfo] = []
    for row in Node.objects.filter(cluster=cluster).values_list(*NODE_COLUMNS):
        node_names[row[0]] = row[1]
        node_ids[row[1]] = row[0]
        nodes.append(node_info(row, cache))

    return node_names, node_ids, nodes


PODGROUP_COLUMNS = (
    "id",
    "namespace_id",
    "name",
    "queue__name",
    "min_member",
    as_text("min_task_member"),
    as_text("min_resources"),
    "priority",
    "priority_class_name",
    "phase",
    "created",
    "conditions",
    "unplaced_sessions",
    "requeues",
    "backoff_until",
    "suspended_at",
    "user",
    "user_groups",
    # not in ``PodGroupInfo``: ``kueue_count``, ``with_pod_group_waits``
    "kueue_pod_group_count",
    "kueue_job",
    "kueue_admitted_count",
)


class KueueCount(NamedTuple):
    """What a podgroup row keeps of a Kueue pod group or Job: its pod count; for a Job (``engine.manifests.kueuejobs``)
    what the adapter read of it (``{"minCount", "suspended"}``) and the count a session admitted it with in part."""

    count: int
    job: Mapping[str, Any] | None = None
    admitted: int | None = None


def kueue_count(row: Sequence[Any]) -> KueueCount | None:
    """A Kueue pod group's or Job's count, of a podgroup row read with ``PODGROUP_COLUMNS`` (None: any other
    podgroup)."""
    count, job, admitted = row[-3:]
    if count is None:
        return None
    return KueueCount(count, job if isinstance(job, Mapping) else None, admitted)


def with_pod_group_waits(snapshot: Snapshot, counts: Mapping[str, KueueCount], now: float | None = None) -> Snapshot:
    """``snapshot`` with those of the Kueue pod groups and Jobs ``counts`` (podgroup key -> ``kueue_count``) that wait
    for their pods as its admission's ``pod_group_waits``, by the rules ``fairway simulate`` reads them with
    (``engine.manifests.kueuegroups.pod_group_wait``, ``engine.manifests.kueuejobs.job_wait``): the sessions admit none
    of them; and the Jobs' partial admission (``partial_admission``: their ``job-min-parallelism``;
    ``partial_admitted``: the count an earlier session admitted one with), which ``engine.partial`` sizes and keeps;
    and the Kueue Jobs admitted whose pods their controller is still making (``pods_awaited``, ``_awaited``), and any
    other admitted podgroup whose controller is still making its pods (``_growing``).
    The snapshot itself when none waits or is partial or awaited, and none was. ``now``: the time (default: the
    clock's)."""
    waits, least, admitted, awaited, templates = [], [], [], [], []
    clock, grace = time.time() if now is None else now, settings.FAIRWAY["POD_CREATION_SECONDS"]
    flavor_groups = snapshot.kueue_flavors.groups if snapshot.kueue_flavors is not None else {}
    for key, kc in counts.items():
        if key not in snapshot.podgroups:
            continue
        tasks = snapshot.podgroup_tasks(key)
        if kc.job is None:
            why = pod_group_wait(kc.count, tasks)
        else:
            suspended, pg = bool(kc.job.get("suspended")), snapshot.podgroups[key]
            template = _template(pg, kc.job) if suspended else None
            pod_sets = _pod_set_templates(pg, kc.job) if not tasks else None  # (a workload's, while it has no pods)
            why = job_wait(
                kc.count,
                tasks,
                suspended,
                str(kc.job.get("kind") or "Job"),
                untemplated=template is None and pod_sets is None and pg.queue in flavor_groups,
                limit_range=_text(kc.job.get("limitRange")),
            )
            if why is None and template is not None:
                templates.append((key, template))
            if pod_sets is not None and (why is None or pg.phase != PodGroupPhase.PENDING):
                templates.append((key, pod_sets))  # (admitted, resumed: its pod sets' parts keep their flavors)
            if _awaited(pg, kc, tasks, clock, grace):
                awaited.append(key)
            # sized on its pods, or while suspended on its template (``engine.partial``)
            if isinstance(kc.job.get("minCount"), int) and (not suspended or template is not None):
                least.append((key, int(kc.job["minCount"])))
                if kc.admitted is not None:
                    admitted.append((key, kc.admitted))
        if why is not None:
            waits.append((key, why))
    levers = snapshot.admission
    before = (
        levers.pod_group_waits
        or levers.partial_admission
        or levers.partial_admitted
        or levers.pods_awaited
        or levers.templates
    )
    awaited.extend(_growing(snapshot, counts, clock, grace))
    if not (waits or least or awaited or templates or before):
        return snapshot
    changed = replace(
        levers,
        pod_group_waits=tuple(sorted(waits)),
        partial_admission=tuple(sorted(least)),
        partial_admitted=tuple(sorted(admitted)),
        pods_awaited=tuple(sorted(awaited)),
        templates=tuple(sorted(templates, key=lambda item: item[0])),
    )
    return snapshot.replace(admission=changed)


def _text(value: object) -> str | None:
    """A stored Job's text field (None when absent or not text)."""
    return value if isinstance(value, str) and value else None


def _template(pg: PodGroupInfo, job: Mapping[str, Any]) -> TaskInfo | None:
    """The pod a suspended Kueue Job's stored template stands for (``engine.manifests.kueuejobs.template_pod``), or
    None when the row keeps none (written before templates were kept) or one that cannot be read (logged)."""
    placement = job.get("template")
    if not isinstance(placement, Mapping):
        return None
    try:
        return template_pod(pg, placement)
    except ValueError as exc:
        logger.warning("podgroup %s: its stored pod template cannot be read: %s", pg.key, exc)
        return None


def _pod_set_templates(pg: PodGroupInfo, job: Mapping[str, Any]) -> tuple[TaskInfo, ...] | None:
    """The pods a workload's stored pod set templates stand for (``engine.manifests.kueuepodsets.
    pod_set_template_pods``), or None when the row keeps none (a Job's, or written before they were kept) or some that
    cannot be read (logged)."""
    stored = job.get("podSetTemplates")
    if not isinstance(stored, list) or not stored:
        return None
    try:
        return pod_set_template_pods(pg, [t if isinstance(t, Mapping) else {} for t in stored])
    except ValueError as exc:
        logger.warning("podgroup %s: its stored pod set templates cannot be read: %s", pg.key, exc)
        return None


def _awaited(pg: PodGroupInfo, kc: KueueCount, tasks: Sequence[TaskInfo], now: float, grace: float) -> bool:
    """Whether a Kueue Job a session admitted (Inqueue) has its pods awaited: not all there yet, none on a node, while
    the adapter is to resume it (still suspended) or its controller is still making them: less than ``grace``
    (``FAIRWAY_POD_CREATION_SECONDS``) since the resume (its ``resumedAt``; a time ahead of the clock counts for
    nothing) or since the newest of its pods was stored (its row's time, not one its owner writes), whichever is
    later, so a large Job whose controller makes a pod at least every ``grace`` seconds is awaited until its last. The requeue rule does not count these sessions
    as sessions that placed nothing."""
    if kc.job is None or pg.phase != PodGroupPhase.INQUEUE or len(tasks) >= kc.count:
        return False
    if any(t.node is not None for t in tasks):
        return False
    if kc.job.get("suspended"):
        return True
    resumed = kc.job.get("resumedAt")
    if not isinstance(resumed, int | float) or now < float(resumed):
        return False
    made = (t.creation_timestamp for t in tasks if t.creation_timestamp is not None and t.creation_timestamp <= now)
    return now - max((float(resumed), *made)) < grace


def _growing(snapshot: Snapshot, counts: Mapping[str, KueueCount], now: float, grace: float) -> Iterator[str]:
    """The admitted (Inqueue) podgroups other than Kueue's (``counts``) whose controller is still making their pods
    (Volcano's job controller makes a vcjob's pods once its PodGroup is Inqueue, seed 003): fewer pods than their
    minimum, none on a node, and the newest stored less than ``grace`` (``FAIRWAY_POD_CREATION_SECONDS``) before
    ``now`` (its row's time). The requeue rule does not count these sessions as sessions that placed nothing, so a
    large job on a slow control plane keeps its reservation while its pods keep coming; one whose pods stop coming
    is counted again after ``grace``. One none of whose pods exists yet (a vcjob's PodGroup just admitted: its
    controller makes the first once it is Inqueue) is awaited for ``grace`` after it began waiting for them (its
    condition's time while its reason is ``NotEnoughPods``, which the session that admitted it wrote)."""
    for key, pg in snapshot.podgroups.items():
        if pg.phase != PodGroupPhase.INQUEUE or key in counts:
            continue
        tasks = [t for t in snapshot.podgroup_tasks(key) if t.status not in _FINISHED]
        if len(tasks) >= pg.min_member or any(t.node is not None for t in tasks):
            continue
        made = [t.creation_timestamp for t in tasks if t.creation_timestamp is not None and t.creation_timestamp <= now]
        if not tasks and (since := _short_since(pg)) is not None and since <= now:
            made.append(since)
        if made and now - max(made) < grace:
            yield key


def _short_since(pg: PodGroupInfo) -> float | None:
    """Since when the admitted podgroup ``pg`` has been short of its pods: its last condition's transition time while
    that condition's reason is ``NotEnoughPods`` (kept while the reason stays), else None."""
    last = pg.conditions[-1] if pg.conditions else None
    return last.last_transition_time if last is not None and last.reason == Reason.NOT_ENOUGH_PODS else None


def podgroup_info(row: Sequence[Any], cache: JsonCache, ns_names: Mapping[int, str]) -> PodGroupInfo:
    """The engine's podgroup of a row read with ``PODGROUP_COLUMNS``."""
    (
        _pk,
        ns_id,
        name,
        queue,
        min_member,
        mtm,
        min_res,
        prio,
        pclass,
        phase,
        created,
        conditions,
        unplaced,
        requeues,
        backoff_until,
        suspended_at,
        user,
        user_groups,
        _kueue_count,
        _kueue_job,
        _kueue_admitted,
    ) = row
    return PodGroupInfo(
        namespace=ns_names[ns_id],
        name=name,
        queue=queue,
        min_member=min_member,
        min_task_member=cache.value(mtm) or {},
        min_resources=cache.resource_list(min_res) if min_res not in (None, "null") else None,
        priority=prio,
        priority_class=pclass,
        phase=_PG_PHASE.get(phase, PodGroupPhase.PENDING),
        creation_timestamp=created.timestamp(),
        conditions=_conditions_in(conditions),
        unplaced_sessions=unplaced,
        requeues=requeues,
        backoff_until=timestamp(backoff_until),
        suspended=suspended_at is not None,
        user=user or "",
        user_groups=tuple(user_groups or ()),
        # a Kueue workload of several pod sets read live (``engine.manifests.kueuepodsets``): each its own flavors
        pod_sets=tuple(_kueue_job.get("podSets") or ()) if isinstance(_kueue_job, Mapping) else (),
    )


def _read_podgroups(
    cluster: Cluster, cache: JsonCache, ns_names: Mapping[int, str]
) -> tuple[dict[int, str], dict[str, PodGroupInfo], dict[str, KueueCount]]:
    """The podgroups still to schedule (a Completed one is not read), their keys by primary key, and the pod counts
    of the Kueue pod groups among them (``kueue_count``) by key."""
    pg_keys: dict[int, str] = {}
    podgroups: dict[str, PodGroupInfo] = {}
    counts: dict[str, KueueCount] = {}
    for row in PodGroup.objects.filter(cluster=cluster).exclude(phase=DbPhase.COMPLETED).values_list(*PODGROUP_COLUMNS):
        info = podgroup_info(row, cache, ns_names)
        pg_keys[row[0]] = info.key
        podgroups[info.key] = info
        count = kueue_count(row)
        if count is not None:
            counts[info.key] = count

    return pg_keys, podgroups, counts


POD_COLUMNS = (
    "id",
    "namespace_id",
    "name",
    "podgroup_id",
    "task_name",
    as_text("request"),
    "priority",
    "preemptible",
    "quota_group_id",
    "status",
    "node_id",
    as_text("node_selector"),
    as_text("tolerations"),
    as_text("labels"),
    as_text("node_affinity"),
    Epoch("created"),
    Epoch("started"),
    "user",
    "user_groups",
)


LIVE_POD_STATUSES = frozenset(s for s in PodStatus.values if s not in FINISHED_DB_STATUSES)


def pod_task(
    row: Sequence[Any],
    cache: JsonCache,
    ns_names: Mapping[int, str],
    group_names: Mapping[int, str],
    node_names: Mapping[int, str],
    pg_keys: Mapping[int, str],
) -> TaskInfo:
    """The engine's task of a row read with ``POD_COLUMNS`` (a Pipelined pod reads back Pending, without a node;
    a pod without a podgroup is in its own, ``own_podgroup``)."""
    (
        _pk,
        ns_id,
        name,
        pg_id,
        role,
        request,
        prio,
        preemptible,
        group_id,
        status,
        node_id,
        selector,
        tolerations,
        labels,
        affinity,
        created,
        started,
        _user,
        _user_groups,
    ) = row
    ns = ns_names[ns_id]
    task_status = _TASK_STATUS.get(status, TaskStatus.UNKNOWN)
    node = node_names.get(node_id) if node_id is not None else None
    pipelined = task_status is TaskStatus.PIPELINED
    nominated = None
    if pipelined:  # the next session decides anew (holding the node for it); the values count it apart
        task_status, node, nominated = TaskStatus.PENDING, None, node
    if pg_id is not None:
        pg_key = pg_keys.get(pg_id) or f"{ns}/?completed-{pg_id}"  # a Completed podgroup is not scheduled
    else:
        pg_key = f"{ns}/{own_podgroup_name(name)}"
    preemptible = bool(preemptible)
    return TaskInfo(
        namespace=ns,
        name=name,
        podgroup=pg_key,
        request=cache.resource_list(request),
        priority=prio,
        volcano_preemptable=None if preemptible else False,
        quota_preemptible=preemptible,
        quota_group=group_names.get(group_id) if group_id is not None else None,
        status=task_status,
        node=node,
        node_selector=cache.value(selector) or {},
        tolerations=cache.toleration_tuple(tolerations),
        labels=cache.value(labels) or {},
        task_role=role,
        creation_timestamp=created,
        start_timestamp=started,
        pipelined=pipelined,
        nominated=nominated,
        node_affinity=cache.node_affinity(affinity),
    )


def job_infos(podgroup: PodGroup) -> tuple[PodGroupInfo, list[TaskInfo], int | None]:
    """One podgroup as the engine sees it, with all its pods (finished ones too) and the value of its priority
    class when that is a built-in one (``scheduling.job_actions.manifests``; a Completed podgroup included)."""
    cache = JsonCache()
    row = PodGroup.objects.filter(pk=podgroup.pk).values_list(*PODGROUP_COLUMNS).get()
    pods = list(Pod.objects.filter(podgroup_id=podgroup.pk).order_by("name").values_list(*POD_COLUMNS))
    ns_names = dict(Namespace.objects.filter(pk__in={row[1], *(p[1] for p in pods)}).values_list("id", "name"))
    group_names = dict(
        QuotaGroup.objects.filter(pk__in={p[8] for p in pods if p[8] is not None}).values_list("id", "name")
    )
    node_names = dict(Node.objects.filter(pk__in={p[10] for p in pods if p[10] is not None}).values_list("id", "name"))
    info = podgroup_info(row, cache, ns_names)
    tasks = [pod_task(p, cache, ns_names, group_names, node_names, {podgroup.pk: info.key}) for p in pods]
    klass = BUILTIN_PRIORITY_CLASSES.get(info.priority_class)
    return info, tasks, None if klass is None else klass.value


def pod_user(row: Sequence[Any]) -> tuple[str, tuple[str, ...]]:
    """(user, groups) of a pod row read with ``POD_COLUMNS``: who submitted a pod of no podgroup."""
    return row[-2] or "", tuple(row[-1] or ())


def own_podgroup(
    task: TaskInfo, default_queue: Mapping[str, str], user: tuple[str, tuple[str, ...]] = ("", ())
) -> PodGroupInfo:
    """The podgroup of a pod that has none (Volcano's controller makes one per plain pod); ``user``: the pod's
    (``pod_user``)."""
    return PodGroupInfo(
        namespace=task.namespace,
        name=own_podgroup_name(task.name),
        queue=default_queue.get(task.namespace, DEFAULT_QUEUE),
        min_member=1,
        min_resources=task.request,
        priority=task.priority,
        phase=PodGroupPhase.PENDING if task.status is TaskStatus.PENDING else PodGroupPhase.RUNNING,
        creation_timestamp=task.creation_timestamp,
        user=user[0],
        user_groups=user[1],
    )


def _read_pods(
    cluster: Cluster,
    cache: JsonCache,
    namespaces: _Namespaces,
    group_names: Mapping[int, str],
    node_names: Mapping[int, str],
    pg_keys: Mapping[int, str],
    podgroups: Mapping[str, PodGroupInfo],
) -> _Pods:
    """The live pods, and every pod of a podgroup still to schedule; a pod without a podgroup gets one of its own."""
    live = Q(status__in=sorted(LIVE_POD_STATUSES))
    in_open_group = Q(podgroup__isnull=False) & ~Q(podgroup__phase=DbPhase.COMPLETED)
    tasks: list[TaskInfo] = []
    pod_ids: dict[str, int] = {}
    own: dict[str, PodGroupInfo] = {}
    rows = fetch_all(
        Pod.objects.filter(cluster=cluster).filter(live | in_open_group).order_by().values_list(*POD_COLUMNS)
    )
    for row in rows:
        task = pod_task(row, cache, namespaces.names, group_names, node_names, pg_keys)
        if row[3] is None and task.podgroup not in podgroups and task.podgroup not in own:
            own[task.podgroup] = own_podgroup(task, namespaces.default_queue, pod_user(row))
        tasks.append(task)
        pod_ids[task.uid] = row[0]
    return _Pods(tasks, pod_ids, own)
