"""The only bridge between the database and the engine: rows -> ``Snapshot``, decisions -> rows.

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
* the cluster's scheduler policy (``Cluster.scheduler_policy``, Volcano's format).

Writing (``apply_decisions``) happens in ONE ``transaction.atomic()``:

1. a ``SchedulingSession`` row (its id is the Volcano ``transitionID`` of the conditions written below);
2. pods pipelined by the previous session go back to Pending; then each binding is a compare-and-swap from
   Pending (``UPDATE … WHERE status = 'Pending'``), to Bound on its node or Pipelined on its nominated node, so
   a replayed result binds nothing twice. On PostgreSQL all bindings are one ``UPDATE … FROM unnest(…)`` joined
   on the namespace and node names (``RETURNING`` tells which took effect); elsewhere one ``UPDATE`` per node;
3. each eviction is a compare-and-swap from an allocated status to Releasing (reason ``Evicted``) plus an
   ``Eviction`` row with its action, reason, message, preemptor and blocker, only for pods that changed;
4. podgroup phases, reasons and Volcano conditions (``Unschedulable`` with the reason and message, or
   ``Scheduled``), for changed podgroups only, never touching one already Completed; a ``PodGroupReason``
   history row when the phase, the reason or the blocking tree node / resource changed (not when only the
   numbers in the message moved, or the history would grow every second);
5. one ``QuotaSample`` per queue and per quota group with its computed values in base units;
6. the session's counts and timings.

``scheduling.sessions`` glues these and the process's mirror of the cluster (``scheduling.mirror``) to the engine
for the Celery tasks; ``record_failure`` and ``record_skipped`` write the rows of sessions that failed or did not run.
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from queue import Empty, SimpleQueue
from time import perf_counter
from typing import Any, NamedTuple, TypeVar

import orjson
import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import F, FloatField, Func, Q, QuerySet, TextField, Window
from django.db.models.functions import Cast, RowNumber, TruncHour, TruncMinute
from django.utils import timezone

from engine import collector
from engine.fairshare.elastic import QuotaGroupSpec
from engine.fairshare.queues import DEFAULT_QUEUE, QueueSpec
from engine.objects import (
    BUILTIN_PRIORITY_CLASSES,
    NamespaceInfo,
    NodeInfo,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
    own_podgroup_name,
)
from engine.resources import ResourceList
from engine.session import decisions
from engine.session.policy import Policy
from engine.usage import UsageHistory as PastUsage
from quotas.models import Namespace, Queue, QuotaGroup, Revision
from scheduling import counters
from scheduling.choices import PodGroupPhase as DbPhase
from scheduling.choices import PodStatus
from scheduling.evictions import expire as expire_evictions
from scheduling.models import (
    Cluster,
    Eviction,
    Node,
    Pod,
    PodGroup,
    PodGroupReason,
    QuotaSample,
    SampleKind,
    SchedulingSession,
    SessionKind,
    SessionStatus,
    UsageHistory,
)

__all__ = [
    "ALLOCATED_DB_STATUSES",
    "FINISHED_DB_STATUSES",
    "BindingStream",
    "RowIds",
    "apply_decisions",
    "compact_records",
    "job_infos",
    "load_snapshot",
    "read_cluster",
    "record_failure",
    "record_skipped",
    "save_past_usage",
    "session_decisions",
]

logger = logging.getLogger(__name__)

FINISHED_DB_STATUSES = (PodStatus.SUCCEEDED, PodStatus.FAILED)
# Statuses that hold resources on a node and may be evicted into Releasing.
ALLOCATED_DB_STATUSES = (PodStatus.ALLOCATED, PodStatus.BINDING, PodStatus.BOUND, PodStatus.RUNNING)
SCHEDULED_CONDITION_REASON = "tasks in gang are ready to be scheduled"  # Volcano gang plugin's wording
_BATCH = 500


# -- reading --------------------------------------------------------------------------------------------------


class _JsonCache:
    """Parse each distinct JSON text once (pods share a few requests, selectors and tolerations)."""

    def __init__(self) -> None:
        self.values: dict[str | None, Any] = {None: None, "{}": {}, "[]": []}
        self.resources: dict[str | None, ResourceList] = {None: ResourceList(), "{}": ResourceList()}
        self.tolerations: dict[str | None, tuple[Toleration, ...]] = {None: (), "[]": ()}

    def value(self, text: str | None) -> Any:
        try:
            return self.values[text]
        except KeyError:
            parsed = json.loads(text)  # type: ignore[arg-type]
            self.values[text] = parsed
            return parsed

    def resource_list(self, text: str | None) -> ResourceList:
        try:
            return self.resources[text]
        except KeyError:
            data = self.value(text) or {}
            rl = ResourceList({str(k): int(v) for k, v in data.items()})
            self.resources[text] = rl
            return rl

    def toleration_tuple(self, text: str | None) -> tuple[Toleration, ...]:
        try:
            return self.tolerations[text]
        except KeyError:
            out = tuple(
                Toleration(
                    key=t.get("key", "") or "",
                    operator=t.get("operator", "Equal") or "Equal",
                    value=t.get("value", "") or "",
                    effect=t.get("effect", "") or "",
                    toleration_seconds=t.get("toleration_seconds", t.get("tolerationSeconds")),
                )
                for t in (self.value(text) or [])
            )
            self.tolerations[text] = out
            return out


def _text(field: str) -> Cast:
    return Cast(field, output_field=TextField())


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _parse_time(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


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
                    last_transition_time=_parse_time(c.get("lastTransitionTime")),
                )
            )
    return tuple(out)


_TASK_STATUS = {s.value: s for s in TaskStatus}
_PG_PHASE = {p.value: p for p in PodGroupPhase}


@dataclass(frozen=True)
class RowIds:
    """Primary keys of what a snapshot holds, so that writing its decisions needs no name lookups."""

    pods: Mapping[str, int]  # task uid -> Pod pk
    nodes: Mapping[str, int]  # node name -> Node pk


class _Epoch(Func):
    """A datetime column as float seconds since the epoch (much cheaper to read than datetimes)."""

    output_field = FloatField()

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # SQLite and others
        sql, params = compiler.compile(self.source_expressions[0])
        return f"((julianday({sql}) - 2440587.5) * 86400.0)", list(params)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return f"EXTRACT(EPOCH FROM {sql})::float8", list(params)


def _fetch_all(qs: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of a ``values_list`` queryset in one ``fetchall`` (no per-row converters: every column read this
    way is an int, a bool, a float or text)."""
    sql, params = qs.query.get_compiler(using=qs.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class _SharedConnectionThread:
    """A thread that works on the starting thread's database connection, inside its open transaction (Django's
    thread sharing, as its live-server tests use): its ORM and ``connection`` are the starter's. The starter must
    not use the connection from ``start`` until ``join`` has returned; a PostgreSQL connection runs one statement
    at a time, so the two take turns, the thread's statements running while the starter computes."""

    def __init__(self, name: str, work: Callable[[], None]) -> None:
        self._connection = connections[DEFAULT_DB_ALIAS]
        self._work = work
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.joined = False

    def start(self) -> None:
        self._connection.inc_thread_sharing()
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> None:
        if not self.joined:
            self._thread.join()
            self.joined = True
            self._connection.dec_thread_sharing()

    def _run(self) -> None:
        connections[DEFAULT_DB_ALIAS] = self._connection
        self._work()


@contextmanager
def fetched_meanwhile(qs: QuerySet[Any], chunk: int = 5000) -> Iterator[Iterator[list[tuple[Any, ...]]]]:
    """The rows of a ``values_list`` queryset (as ``_fetch_all``), ``chunk`` at a time, fetched by a thread while
    the caller works on the chunks already there: on PostgreSQL through a server-side cursor, so that the server
    produces the next rows while the caller turns the last ones into objects (a full read of 50,000 pods waited
    0.1 s for the query before it began). The thread uses the caller's connection and transaction; the caller must
    not use that connection inside the block. Elsewhere, or where server-side cursors are off (a transaction-mode
    connection pooler: Django's ``DISABLE_SERVER_SIDE_CURSORS``), one ``fetchall``."""
    if not _is_postgres() or connection.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"):
        yield iter([_fetch_all(qs)])
        return
    sql, params = qs.query.get_compiler(using=qs.db).as_sql()
    out: SimpleQueue[Any] = SimpleQueue()
    stop = threading.Event()

    def fetch() -> None:
        try:
            with connection.chunked_cursor() as cursor:
                cursor.execute(sql, params)
                while not stop.is_set():
                    rows = cursor.fetchmany(chunk)
                    if not rows:
                        break
                    out.put(rows)
        except BaseException as exc:  # raised again in the caller's thread
            out.put(exc)
        out.put(_END)

    def chunks() -> Iterator[list[tuple[Any, ...]]]:
        while (item := out.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item

    thread = _SharedConnectionThread("fairway-read", fetch)
    thread.start()
    try:
        yield chunks()
    finally:
        stop.set()
        thread.join()


def load_snapshot(cluster: Cluster) -> Snapshot:
    """The cluster as the engine sees it, read in six queries (see the module docstring for what goes in)."""
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
    cache = _JsonCache()
    namespaces = _read_namespaces(cache)
    group_names, groups = _read_quota_groups(cache)
    node_names, node_ids, nodes = _read_nodes(cluster, cache)
    pg_keys, podgroups = _read_podgroups(cluster, cache, namespaces.names)
    pods = _read_pods(cluster, cache, namespaces, group_names, node_names, pg_keys, podgroups)
    snapshot = Snapshot.build(
        nodes=nodes,
        tasks=pods.tasks,
        podgroups=[*podgroups.values(), *pods.own.values()],
        queues=_read_queues(cache),
        quota_groups=groups,
        namespaces=namespaces.infos,
        policy=cluster.policy,
        quota_namespaces=namespaces.by_quota_group,
        past_usage=read_past_usage(cluster),
        node_bound=settings.FAIRWAY_LIMITS.max_node_amount,
    )
    return snapshot, RowIds(pods=pods.ids, nodes=node_ids)


# -- fairness over time ----------------------------------------------------------------------------------------


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


def save_past_usage(cluster: Cluster, history: PastUsage) -> None:
    """Keep the record a session brought forward: ONE row per cluster, written in the caller's transaction."""
    stored = history.to_json()
    updated = datetime.fromtimestamp(history.updated if history.updated is not None else 0.0, tz=UTC)
    UsageHistory.objects.update_or_create(cluster=cluster, defaults={"updated": updated, "nodes": stored["nodes"]})


def _read_namespaces(cache: _JsonCache) -> _Namespaces:
    ns_names: dict[int, str] = {}
    ns_default_queue: dict[str, str] = {}
    namespaces: list[NamespaceInfo] = []
    quota_namespaces: dict[str, list[str]] = {}
    for pk, name, weight, queue, group, hard in Namespace.objects.values_list(
        "id", "name", "weight", "default_queue__name", "quota_group__name", _text("hard")
    ):
        ns_names[pk] = name
        if queue:
            ns_default_queue[name] = queue
        if group:
            quota_namespaces.setdefault(group, []).append(name)
        namespaces.append(
            NamespaceInfo(name=name, weight=weight, queue=queue, hard=cache.resource_list(hard) if hard else None)
        )

    return _Namespaces(ns_names, ns_default_queue, namespaces, quota_namespaces)


T = TypeVar("T")


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


QUEUE_COLUMNS = (
    "name",
    "parent__name",
    "weight",
    _text("capability"),
    _text("deserved"),
    _text("guarantee"),
    "reclaimable",
    "priority",
    "state",
    _text("borrowing_limit"),
    _text("lending_limit"),
    "min_runtime",
)


def _queue_spec(row: tuple[Any, ...], cache: _JsonCache) -> QueueSpec:
    """The engine's queue of a row read with ``QUEUE_COLUMNS``."""
    name, parent, weight, capability, deserved, guarantee, reclaimable, priority, state, borrowing, lending = row[:11]
    window = row[11]  # min_runtime: whole seconds, or None (unset)
    return QueueSpec(
        name=name,
        parent=parent,
        weight=weight,
        capability=cache.resource_list(capability),
        deserved=cache.resource_list(deserved),
        guarantee=cache.resource_list(guarantee),
        reclaimable=reclaimable,
        priority=priority,
        state=state,
        borrowing_limit=cache.resource_list(borrowing),
        lending_limit=cache.resource_list(lending),
        min_runtime=float(window) if window is not None else None,
    )


def _read_queues(cache: _JsonCache | None = None, memo: SpecMemo | None = None) -> list[QueueSpec]:
    texts = cache or _JsonCache()
    rows = Queue.objects.values_list(*QUEUE_COLUMNS)
    return (memo or SpecMemo()).specs("queues", rows, lambda row: _queue_spec(row, texts))


GROUP_COLUMNS = (
    "id",
    "name",
    "parent__name",
    "is_parent",
    _text("min"),
    _text("max"),
    _text("shared_weight"),
    "allow_lent",
    "tree_id",
    "min_scale_exempt",
    _text("borrowing_limit"),
    _text("lending_limit"),
)


def _group_spec(row: tuple[Any, ...], cache: _JsonCache) -> tuple[int, QuotaGroupSpec]:
    """(primary key, the engine's quota group) of a row read with ``GROUP_COLUMNS``."""
    pk, name, parent, is_parent, mn, mx, shared, lent, tree, exempt, borrowing, lending = row
    return pk, QuotaGroupSpec(
        name=name,
        parent=parent,
        is_parent=is_parent,
        min=cache.resource_list(mn),
        max=cache.resource_list(mx),
        shared_weight=None if shared is None else cache.resource_list(shared),
        allow_lent=lent,
        tree_id=tree,
        min_scale_exempt=exempt,
        borrowing_limit=cache.resource_list(borrowing),
        lending_limit=cache.resource_list(lending),
    )


def _read_quota_groups(
    cache: _JsonCache | None = None, memo: SpecMemo | None = None
) -> tuple[dict[int, str], list[QuotaGroupSpec]]:
    texts = cache or _JsonCache()
    rows = QuotaGroup.objects.values_list(*GROUP_COLUMNS)
    found = (memo or SpecMemo()).specs("groups", rows, lambda row: _group_spec(row, texts))
    return {pk: spec.name for pk, spec in found}, [spec for _, spec in found]


NODE_COLUMNS = ("id", "name", _text("allocatable"), _text("labels"), _text("taints"), "unschedulable", "ready")


def node_info(row: Sequence[Any], cache: _JsonCache) -> NodeInfo:
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


def _read_nodes(cluster: Cluster, cache: _JsonCache) -> tuple[dict[int, str], dict[str, int], list[NodeInfo]]:
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
    _text("min_task_member"),
    _text("min_resources"),
    "priority",
    "priority_class_name",
    "phase",
    "created",
    "conditions",
    "unplaced_sessions",
    "requeues",
    "backoff_until",
    "suspended_at",
)


def podgroup_info(row: Sequence[Any], cache: _JsonCache, ns_names: Mapping[int, str]) -> PodGroupInfo:
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
        backoff_until=_ts(backoff_until),
        suspended=suspended_at is not None,
    )


def _read_podgroups(
    cluster: Cluster, cache: _JsonCache, ns_names: Mapping[int, str]
) -> tuple[dict[int, str], dict[str, PodGroupInfo]]:
    """The podgroups still to schedule (a Completed one is not read) and their keys by primary key."""
    pg_keys: dict[int, str] = {}
    podgroups: dict[str, PodGroupInfo] = {}
    for row in PodGroup.objects.filter(cluster=cluster).exclude(phase=DbPhase.COMPLETED).values_list(*PODGROUP_COLUMNS):
        info = podgroup_info(row, cache, ns_names)
        pg_keys[row[0]] = info.key
        podgroups[info.key] = info

    return pg_keys, podgroups


POD_COLUMNS = (
    "id",
    "namespace_id",
    "name",
    "podgroup_id",
    "task_name",
    _text("request"),
    "priority",
    "preemptible",
    "quota_group_id",
    "status",
    "node_id",
    _text("node_selector"),
    _text("tolerations"),
    _text("labels"),
    _Epoch("created"),
    _Epoch("started"),
)
LIVE_POD_STATUSES = frozenset(s for s in PodStatus.values if s not in FINISHED_DB_STATUSES)


def pod_task(
    row: Sequence[Any],
    cache: _JsonCache,
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
        created,
        started,
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
    )


def job_infos(podgroup: PodGroup) -> tuple[PodGroupInfo, list[TaskInfo], int | None]:
    """One podgroup as the engine sees it, with all its pods (finished ones too) and the value of its priority
    class when that is a built-in one (``scheduling.job_actions.manifests``; a Completed podgroup included)."""
    cache = _JsonCache()
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


def own_podgroup(task: TaskInfo, default_queue: Mapping[str, str]) -> PodGroupInfo:
    """The podgroup of a pod that has none (Volcano's controller makes one per plain pod)."""
    return PodGroupInfo(
        namespace=task.namespace,
        name=own_podgroup_name(task.name),
        queue=default_queue.get(task.namespace, DEFAULT_QUEUE),
        min_member=1,
        min_resources=task.request,
        priority=task.priority,
        phase=PodGroupPhase.PENDING if task.status is TaskStatus.PENDING else PodGroupPhase.RUNNING,
        creation_timestamp=task.creation_timestamp,
    )


def _read_pods(
    cluster: Cluster,
    cache: _JsonCache,
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
    rows = _fetch_all(
        Pod.objects.filter(cluster=cluster).filter(live | in_open_group).order_by().values_list(*POD_COLUMNS)
    )
    for row in rows:
        task = pod_task(row, cache, namespaces.names, group_names, node_names, pg_keys)
        if row[3] is None and task.podgroup not in podgroups and task.podgroup not in own:
            own[task.podgroup] = own_podgroup(task, namespaces.default_queue)
        tasks.append(task)
        pod_ids[task.uid] = row[0]
    return _Pods(tasks, pod_ids, own)


# -- writing --------------------------------------------------------------------------------------------------


def _split_uid(uid: str) -> tuple[str, str]:
    ns, _, name = uid.partition("/")
    return ns, name


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def _array(values: Iterable[Any]) -> str:
    """A PostgreSQL array literal (``{1,2,"text",NULL}``) of ints, strings, datetimes or None, to be cast to an
    array type in the query: one string parameter instead of a list the driver would quote element by element
    (the bindings of a 50,000-pod session spent a fifth of their time there)."""
    parts: list[str] = []
    add = parts.append
    for v in values:
        if v is None:
            add("NULL")
        elif type(v) is int:
            add(str(v))
        else:
            text = v.isoformat() if isinstance(v, datetime) else str(v)
            add('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "{" + ",".join(parts) + "}"


def _int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def _apply_bindings(
    cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime, ids: RowIds | None
) -> list[list[Any]]:
    """Pipelined pods back to Pending, then CAS each binding from Pending; returns those that took effect."""
    _pipelined_back(cluster, now)
    if not bindings:
        return []
    if _is_postgres():
        if ids:
            return _bind_by_key(_by_key(cluster, bindings, now, ids.pods, _nodes_still_there(cluster, ids)))
        return _bind_postgres(cluster, bindings, now)
    return _bind_generic_by_id(cluster, bindings, now, ids) if ids else _bind_generic(cluster, bindings, now)


def _pipelined_back(cluster: Cluster, now: datetime) -> None:
    """The pods the last session pipelined are Pending again: every session decides pipelining afresh."""
    Pod.objects.filter(cluster=cluster, status=PodStatus.PIPELINED).update(
        status=PodStatus.PENDING, node=None, updated=now
    )


def _nodes_still_there(cluster: Cluster, ids: RowIds) -> dict[str, int]:
    """``ids.nodes`` without the nodes deleted since the read. The pod's node has no foreign key in the database
    (``Pod.node``), so the by-key writers bind only to these. Read inside ``apply_decisions``'s transaction, after
    it locked the cluster's revision: a node deleted by ``ClusterRow.delete`` (which takes that lock first, then
    sets its pods' node to NULL, then deletes it) is either gone here already or waits for this commit. One query
    of the cluster's node keys, not a join in the binding statement (planned on a fresh table's statistics, a join
    with the nodes became a nested loop of minutes)."""
    there = set(Node.objects.filter(cluster=cluster).values_list("id", flat=True))
    return {name: pk for name, pk in ids.nodes.items() if pk in there}


# The pod table's change feed trigger (migration 0016) logs the rows of a statement run with this setting on
# without comparing them with their old versions: only for a statement that changes a logged column of every row
# it updates, as a binding's compare-and-swap from Pending does.
_EVERY_ROW_CHANGED = "fairway.feed_every_row_changed"


@contextmanager
def _every_row_changed(cursor: Any) -> Iterator[None]:
    """The statements run inside, on PostgreSQL, change a column the change feed logs in every row they update
    (the setting is transaction-local: a failed statement's transaction, or savepoint, takes it back with it)."""
    cursor.execute("SELECT set_config(%s, 'on', true)", [_EVERY_ROW_CHANGED])
    yield
    cursor.execute("SELECT set_config(%s, '', true)", [_EVERY_ROW_CHANGED])


class _ByKey(NamedTuple):
    """The parameters of one by-key compare-and-swap statement (``_by_key``), and which binding each pod's is."""

    params: list[Any]
    uid_of: dict[int, tuple[str, str, bool]]


def _by_key(
    cluster: Cluster,
    bindings: Sequence[decisions.Binding],
    now: datetime,
    pods: Mapping[str, int],
    nodes: Mapping[str, int],
) -> _ByKey:
    """``bindings`` by key: ``pods`` (task uid -> pk) and ``nodes`` (name -> pk, only the nodes still there:
    ``_nodes_still_there``); a binding whose pod or node is not among them is left out."""
    # The snapshot's own primary keys: a plain join on the pod's primary key, whatever the table statistics.
    # The rows go in primary key order, the order they were inserted in: the table's pages and its indexes are
    # then written one after the other, not at random (50,000 bindings in the engine's order took 830 ms against
    # 690 ms so; 1,050 ms shuffled). The applied bindings are reported in the engine's order.
    uid_of: dict[int, tuple[str, str, bool]] = {}
    rows: list[tuple[int, int, str]] = []
    for b in bindings:
        pk, node_pk = pods.get(b.task), nodes.get(b.node)
        if pk is None or node_pk is None:
            continue
        rows.append((pk, node_pk, PodStatus.PIPELINED.value if b.pipelined else PodStatus.BOUND.value))
        uid_of[pk] = (b.task, b.node, b.pipelined)
    rows.sort()
    params = [
        now,
        _int_array(r[0] for r in rows),
        _int_array(r[1] for r in rows),
        _array(r[2] for r in rows),
        cluster.pk,
        PodStatus.PENDING.value,
    ]
    return _ByKey(params, uid_of)


_BIND_BY_KEY = f"""
    UPDATE {Pod._meta.db_table} AS p
       SET status = v.status, node_id = v.node_id, updated = %s
      FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[]) AS v(id, node_id, status)
     WHERE p.id = v.id AND p.cluster_id = %s AND p.status = %s
    RETURNING p.id
"""


def _bind_by_key(prepared: _ByKey) -> list[list[Any]]:
    """Run one by-key compare-and-swap statement; the bindings that took effect, in the engine's order."""
    with connection.cursor() as cursor, _every_row_changed(cursor):
        cursor.execute(_BIND_BY_KEY, prepared.params)
        done = {pk for (pk,) in cursor.fetchall()}
    return [list(binding) for pk, binding in prepared.uid_of.items() if pk in done]


def _bind_postgres(cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime) -> list[list[Any]]:
    ns_col, name_col, node_col, status_col = [], [], [], []
    for b in bindings:
        ns, name = _split_uid(b.task)
        ns_col.append(ns)
        name_col.append(name)
        node_col.append(b.node)
        status_col.append(PodStatus.PIPELINED.value if b.pipelined else PodStatus.BOUND.value)
    pod, nsp, node = Pod._meta.db_table, Namespace._meta.db_table, Node._meta.db_table
    sql = f"""
        UPDATE {pod} AS p
           SET status = v.status, node_id = n.id, updated = %s
          FROM unnest(%s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[]) AS v(ns, name, node, status)
          JOIN {nsp} AS ns ON ns.name = v.ns
          JOIN {node} AS n ON n.cluster_id = %s AND n.name = v.node
         WHERE p.cluster_id = %s AND p.namespace_id = ns.id AND p.name = v.name AND p.status = %s
        RETURNING ns.name, p.name, n.name, p.status
    """
    with connection.cursor() as cursor, _every_row_changed(cursor):
        cursor.execute(
            sql,
            [
                now,
                _array(ns_col),
                _array(name_col),
                _array(node_col),
                _array(status_col),
                cluster.pk,
                cluster.pk,
                PodStatus.PENDING.value,
            ],
        )
        rows = cursor.fetchall()
    return [[f"{ns}/{name}", node_name, status == PodStatus.PIPELINED] for ns, name, node_name, status in rows]


def _bind_generic_by_id(
    cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime, ids: RowIds
) -> list[list[Any]]:
    """SQLite and others, with the snapshot's primary keys: one prepared compare-and-swap from Pending per binding,
    each one's row count telling whether it took, rather than reading every Pending pod of the cluster and updating
    node by node (650 ms for 900 bindings on the large demo's SQLite, most of it the read; 25 ms this way)."""
    stamp = connection.ops.adapt_datetimefield_value(now)
    pending, bound, pipelined = PodStatus.PENDING.value, PodStatus.BOUND.value, PodStatus.PIPELINED.value
    sql = (
        f"UPDATE {Pod._meta.db_table} SET status = %s, node_id = %s, updated = %s "
        "WHERE id = %s AND cluster_id = %s AND status = %s"
    )
    applied: list[list[Any]] = []
    nodes = _nodes_still_there(cluster, ids)
    with connection.cursor() as cursor:
        for b in bindings:
            pk, node_pk = ids.pods.get(b.task), nodes.get(b.node)
            if pk is None or node_pk is None:
                continue
            cursor.execute(sql, [pipelined if b.pipelined else bound, node_pk, stamp, pk, cluster.pk, pending])
            if cursor.rowcount:
                applied.append([b.task, b.node, b.pipelined])
    return applied


def _bind_generic(cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime) -> list[list[Any]]:
    # SQLite and others: writers are serialised, so read the Pending pods, then update them per node.
    pending = {
        f"{ns}/{name}": pk
        for pk, ns, name in Pod.objects.filter(cluster=cluster, status=PodStatus.PENDING).values_list(
            "id", "namespace__name", "name"
        )
    }
    node_ids = dict(Node.objects.filter(cluster=cluster).values_list("name", "id"))
    groups: dict[tuple[int, bool], list[int]] = {}
    applied: list[list[Any]] = []
    for b in bindings:
        pk, node_id = pending.pop(b.task, None), node_ids.get(b.node)
        if pk is None or node_id is None:
            continue
        groups.setdefault((node_id, b.pipelined), []).append(pk)
        applied.append([b.task, b.node, b.pipelined])
    for (node_id, pipelined), pks in groups.items():
        status = PodStatus.PIPELINED if pipelined else PodStatus.BOUND
        for i in range(0, len(pks), _BATCH):
            Pod.objects.filter(pk__in=pks[i : i + _BATCH], status=PodStatus.PENDING).update(
                status=status, node_id=node_id, updated=now
            )
    return applied


class BindingStream:
    """A session's bindings written while its engine still runs: the engine's ``on_bindings``
    (``decisions.BindingSink``), for the PostgreSQL by-key writer.

    The engine hands over each statement's bindings as it commits them, final. A thread of this stream writes them
    with the same compare-and-swap as ``apply_decisions`` (``_bind_by_key``), a batch at a time, on the
    connection of the thread that opened the stream and in its open transaction, while the engine goes on: the
    database's work on the rows, the larger part of writing a big session, runs beside the engine instead of after
    it (Volcano too binds a job's pods when its statement commits, not when the session ends). Its first batch
    first does what ``apply_decisions`` does before its bindings: the cluster's revision locked, then the pods the
    last session pipelined back to Pending, then the nodes still there read. A session that hands over nothing
    starts no thread and writes nothing here.

    The opening thread must not use the connection from the first binding handed over until ``finish`` returns;
    leaving the ``with`` block without ``finish`` (the engine raised) stops the thread after the statement it is in,
    and the transaction's rollback takes back what it wrote. A failed statement is raised by ``finish``.
    """

    MIN_BATCH = 300  # bindings per statement at least, until the engine is done (a statement costs ~1 ms)
    MAX_BATCH = 6000

    def __init__(self, cluster: Cluster, now: datetime, ids: RowIds) -> None:
        self._cluster, self._now, self._ids = cluster, now, ids
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._thread: _SharedConnectionThread | None = None
        self._stopping = False
        self._ended = False
        self._last_sent = threading.Event()
        self._error: BaseException | None = None
        self._applied: list[list[Any]] = []

    @staticmethod
    def usable(ids: RowIds | None) -> bool:
        """Whether a session read with ``ids`` may stream its bindings (PostgreSQL's by-key writer)."""
        return ids is not None and _is_postgres()

    def __enter__(self) -> BindingStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping = True
        self._join()

    def __call__(self, bindings: Sequence[decisions.Binding]) -> None:
        if self._thread is None:
            self._thread = _SharedConnectionThread("fairway-bindings", self._write)
            self._thread.start()
        self._queue.put(bindings)

    def finish(self) -> list[list[Any]] | None:
        """Wait until every binding handed over is written; those that took effect, in the session's order, or
        None when none was handed over."""
        if self._thread is None:
            return None
        self._end()
        # The cyclic collector's pass over what the engine allocated (``collector.collect_young``), while the
        # thread waits on the database for its last statement, not after: it holds the interpreter for tens of
        # milliseconds, which the thread would otherwise wait for between two statements.
        while self._thread.is_alive():
            if self._last_sent.wait(0.002):
                collector.collect_young()
                break
        self._join()
        if self._error is not None:
            raise self._error
        return self._applied

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._queue.put(_END)

    def _join(self) -> None:
        """End the thread (after what was handed over; when stopping, after the statement it is in) and wait."""
        if self._thread is not None:
            self._end()
            self._thread.join()

    def _write(self) -> None:
        try:
            cluster, now = self._cluster, self._now
            Revision.objects.bump(Revision.cluster_key(cluster.pk))
            _pipelined_back(cluster, now)
            nodes = _nodes_still_there(cluster, self._ids)
            for batch, last in self._batches():
                if self._stopping:
                    return
                prepared = _by_key(cluster, batch, now, self._ids.pods, nodes)
                if last:
                    self._last_sent.set()
                self._applied += _bind_by_key(prepared)
        except BaseException as exc:  # raised again by ``finish``, in the opening thread
            self._error = exc

    def _batches(self) -> Iterator[tuple[list[decisions.Binding], bool]]:
        """What the engine handed over, ``MIN_BATCH`` to ``MAX_BATCH`` at a time, then all the rest at once (with
        True: the last)."""
        batch: list[decisions.Binding] = []
        end = False
        while batch or not end:
            wait = not end and len(batch) < self.MIN_BATCH
            while not end:  # take what has come (waiting for the first when the batch is too small)
                try:
                    item = self._queue.get() if wait else self._queue.get_nowait()
                except Empty:
                    break
                wait = False
                if item is _END:
                    end = True
                else:
                    batch += item
            if end:
                if batch:
                    yield batch, True
                return
            if len(batch) >= self.MIN_BATCH:
                yield batch[: self.MAX_BATCH], False
                del batch[: self.MAX_BATCH]


_END = object()


def _find_pods(cluster: Cluster, uids: Iterable[str], statuses: Sequence[str]) -> dict[str, tuple[int, str, str]]:
    """uid -> (pk, status, node name) of the cluster's pods among ``uids`` in one of ``statuses``."""
    by_ns: dict[str, list[str]] = {}
    for uid in uids:
        ns, name = _split_uid(uid)
        by_ns.setdefault(ns, []).append(name)
    out: dict[str, tuple[int, str, str]] = {}
    for ns, names in by_ns.items():
        for i in range(0, len(names), _BATCH):
            for pk, name, status, node in Pod.objects.filter(
                cluster=cluster, namespace__name=ns, name__in=names[i : i + _BATCH], status__in=statuses
            ).values_list("id", "name", "status", "node__name"):
                out[f"{ns}/{name}"] = (pk, status, node or "")
    return out


def _apply_evictions(
    cluster: Cluster, session: SchedulingSession | None, evictions: Sequence[decisions.Eviction], now: datetime
) -> Counter[str]:
    """CAS each victim from an allocated status to Releasing; an Eviction row for each one that changed. Returns
    how many per action."""
    if not evictions:
        return Counter()
    found = _find_pods(cluster, (e.task for e in evictions), ALLOCATED_DB_STATUSES)
    rows: list[Eviction] = []
    done: set[str] = set()
    for e in evictions:
        hit = found.get(e.task)
        if hit is None or e.task in done:
            continue
        pk, status, node = hit
        changed = Pod.objects.filter(pk=pk, status=status).update(
            status=PodStatus.RELEASING, reason="Evicted", message=e.message[:2000], updated=now
        )
        if not changed:
            continue
        done.add(e.task)
        rows.append(
            Eviction(
                cluster=cluster,
                session=session,
                pod_id=pk,
                pod_uid=e.task,
                namespace=_split_uid(e.task)[0],
                node=node,
                action=e.action,
                reason=e.reason[:63],
                message=e.message,
                preemptor=e.preemptor or "",
                blocker=e.blocker.to_dict() if e.blocker is not None else None,
                created=now,
            )
        )
    Eviction.stamp_owners(rows)
    Eviction.objects.bulk_create(rows, batch_size=_BATCH)
    if rows:  # per tree node and as thrash (the totals by action: apply_decisions)
        counters.add(cluster.pk, evicted=rows)
    return Counter(str(row.action) for row in rows)


def _conditions_out(
    old: list[dict[str, Any]], status: decisions.PodGroupStatus, session_id: int, now: datetime
) -> list[dict[str, Any]] | None:
    """Volcano's condition for the new status (keeping the old transition when type and reason are the same);
    None keeps the old conditions."""
    if status.phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED):
        ctype, reason, message = "Scheduled", SCHEDULED_CONDITION_REASON, ""
    elif status.reason:
        ctype, reason, message = "Unschedulable", status.reason, status.message
    else:
        return None
    previous = old[-1] if old else None
    same = bool(previous) and previous.get("type") == ctype and previous.get("reason") == reason  # type: ignore[union-attr]
    return [
        {
            "type": ctype,
            "status": "True",
            "reason": reason,
            "message": message,
            "transitionID": previous.get("transitionID", "") if same else str(session_id),  # type: ignore[union-attr]
            "lastTransitionTime": previous.get("lastTransitionTime", _iso(now)) if same else _iso(now),  # type: ignore[union-attr]
        }
    ]


def _history_key(phase: str, reason: str, blocker: Mapping[str, Any] | None) -> tuple[Any, ...]:
    b = blocker or {}
    return (phase, reason, b.get("kind"), b.get("name"), b.get("resource"), b.get("limit"))


def _apply_podgroup_statuses(
    cluster: Cluster, session: SchedulingSession, statuses: Mapping[str, decisions.PodGroupStatus], now: datetime
) -> dict[str, int]:
    """Write changed phases / reasons / conditions; history rows on change; returns podgroups per phase."""
    # conditions as text, parsed only for the podgroups that change (most keep their status every second)
    current: dict[str, tuple[int, str, str, str, Any, str | None, tuple[int, int, float | None]]] = {}
    for pk, ns, name, phase, reason, message, blocker, conditions, unplaced, requeues, until in (
        PodGroup.objects.filter(cluster=cluster)
        .exclude(phase=DbPhase.COMPLETED)
        .annotate(conditions_text=_text("conditions"))
        .values_list(
            "id",
            "namespace__name",
            "name",
            "phase",
            "reason",
            "message",
            "blocker",
            "conditions_text",
            "unplaced_sessions",
            "requeues",
            "backoff_until",
        )
    ):
        moment = None if until is None else round(until.timestamp(), 3)
        current[f"{ns}/{name}"] = (pk, phase, reason, message, blocker, conditions, (unplaced, requeues, moment))
    counts: Counter[str] = Counter(row[1] for row in current.values())
    updates: dict[int, dict[str, Any]] = {}
    history: list[tuple[int, str, str, str, dict[str, Any] | None]] = []  # (podgroup, phase, reason, message, blocker)
    for key, st in statuses.items():
        row = current.get(key)
        if row is None:  # a pod's own podgroup, a Completed or deleted one
            continue
        pk, phase, reason, message, blocker, conditions_text, requeue = row
        new_phase = str(st.phase)
        new_reason = "" if new_phase in (DbPhase.RUNNING, DbPhase.COMPLETED) else st.reason
        new_message = "" if not new_reason else st.message
        new_blocker = st.blocker.to_dict() if st.blocker is not None and new_reason else None
        until = None if st.backoff_until is None else datetime.fromtimestamp(st.backoff_until, tz=UTC)
        new_requeue = (st.unplaced_sessions, st.requeues, None if until is None else round(st.backoff_until, 3))
        if (new_phase, new_reason, new_message, new_blocker, new_requeue) == (
            phase,
            reason,
            message,
            blocker,
            requeue,
        ):
            continue
        conditions: list[dict[str, Any]] = json.loads(conditions_text) if conditions_text else []
        conditions = conditions or []
        new_conditions = _conditions_out(conditions, st, session.pk, now)
        updates[pk] = {
            "phase": new_phase,
            "reason": new_reason[:63],
            "message": new_message,
            "blocker": new_blocker,
            "conditions": conditions if new_conditions is None else new_conditions,
            "unplaced_sessions": st.unplaced_sessions,
            "requeues": st.requeues,
            "backoff_until": until,
        }
        counts[phase] -= 1
        counts[new_phase] += 1
        if _history_key(new_phase, new_reason, new_blocker) != _history_key(phase, reason, blocker):
            history.append((pk, new_phase, new_reason[:63], new_message, new_blocker))
    if updates:
        (_update_podgroups_postgres if _is_postgres() else _update_podgroups_by_row)(updates, now)
    _write_history(session, history, now)
    return {phase: n for phase, n in sorted(counts.items()) if n > 0}


def _record_gang_releases(cluster: Cluster, statuses: Mapping[str, decisions.PodGroupStatus], now: datetime) -> None:
    """Count each gang released whole (``engine.session.gangrepair``) on its podgroup, with the GPU-seconds it held
    idle and why: its page and the API show them after its status has moved on."""
    for key, st in statuses.items():
        if st.released_idle_gpu_seconds is None:
            continue
        ns, name = _split_uid(key)
        PodGroup.objects.filter(cluster=cluster, namespace__name=ns, name=name).update(
            gang_releases=F("gang_releases") + 1,
            idle_gpu_seconds=F("idle_gpu_seconds") + st.released_idle_gpu_seconds,
            released_at=now,
            release_reason=st.message,
        )


def _write_history(
    session: SchedulingSession, rows: Sequence[tuple[int, str, str, str, dict[str, Any] | None]], now: datetime
) -> None:
    """The ``PodGroupReason`` rows: one ``INSERT … SELECT FROM unnest(…)`` on PostgreSQL (no model instance per
    row), ``bulk_create`` elsewhere."""
    if not rows:
        return
    if not _is_postgres():
        PodGroupReason.objects.bulk_create(
            (
                PodGroupReason(
                    podgroup_id=pk, session=session, time=now, phase=phase, reason=reason, message=message, blocker=b
                )
                for pk, phase, reason, message, b in rows
            ),
            batch_size=_BATCH,
        )
        return
    sql = f"""
        INSERT INTO {PodGroupReason._meta.db_table} (podgroup_id, session_id, time, phase, reason, message, blocker)
        SELECT v.podgroup, %s, %s, v.phase, v.reason, v.message, v.blocker::jsonb
          FROM unnest(%s::bigint[], %s::varchar[], %s::varchar[], %s::text[], %s::text[])
               AS v(podgroup, phase, reason, message, blocker)
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                session.pk,
                now,
                _int_array(r[0] for r in rows),
                _array(r[1] for r in rows),
                _array(r[2] for r in rows),
                _array(r[3] for r in rows),
                _array(None if r[4] is None else json.dumps(r[4]) for r in rows),
            ],
        )


def _update_podgroups_postgres(updates: Mapping[int, Mapping[str, Any]], now: datetime) -> None:
    """One ``UPDATE … FROM unnest(…)`` for every changed podgroup, never overwriting one that turned Completed."""
    ids, phases, reasons, messages, blockers, conditions = [], [], [], [], [], []
    unplaced, requeues, until = [], [], []
    for pk, row in updates.items():
        ids.append(pk)
        phases.append(row["phase"])
        reasons.append(row["reason"])
        messages.append(row["message"])
        blockers.append(None if row["blocker"] is None else json.dumps(row["blocker"]))
        conditions.append(json.dumps(row["conditions"]))
        unplaced.append(row["unplaced_sessions"])
        requeues.append(row["requeues"])
        until.append(row["backoff_until"])
    table = PodGroup._meta.db_table
    sql = f"""
        UPDATE {table} AS g
           SET phase = v.phase, reason = v.reason, message = v.message, blocker = v.blocker::jsonb,
               conditions = v.conditions::jsonb, unplaced_sessions = v.unplaced, requeues = v.requeues,
               backoff_until = v.until, updated = %s
          FROM unnest(%s::bigint[], %s::varchar[], %s::varchar[], %s::text[], %s::text[], %s::text[],
                      %s::integer[], %s::integer[], %s::timestamptz[])
               AS v(id, phase, reason, message, blocker, conditions, unplaced, requeues, until)
         WHERE g.id = v.id AND g.phase <> %s
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                now,
                _int_array(ids),
                _array(phases),
                _array(reasons),
                _array(messages),
                _array(blockers),
                _array(conditions),
                _int_array(unplaced),
                _int_array(requeues),
                _array(until),
                DbPhase.COMPLETED.value,
            ],
        )


def _update_podgroups_by_row(updates: Mapping[int, Mapping[str, Any]], now: datetime) -> None:
    """SQLite and others: one prepared UPDATE per changed podgroup (``executemany``), never overwriting a podgroup
    that turned Completed meanwhile. (One UPDATE per batch with a CASE per column costs the batch's size squared in
    comparisons: 2.5 s for a thousand podgroups on the large demo's SQLite.)"""
    fields = ("phase", "reason", "message", "blocker", "conditions", "unplaced_sessions", "requeues", "backoff_until")
    columns = [PodGroup._meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in columns)
    sql = (
        f"UPDATE {connection.ops.quote_name(PodGroup._meta.db_table)} SET {assignments}, "
        f"{connection.ops.quote_name('updated')} = %s WHERE id = %s AND phase <> %s"
    )
    stamp = connection.ops.adapt_datetimefield_value(now)
    rows = []
    for pk, values in updates.items():
        row = [None if values[f.name] is None else f.get_db_prep_save(values[f.name], connection) for f in columns]
        rows.append([*row, stamp, pk, DbPhase.COMPLETED.value])
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _amounts(value: Any) -> dict[str, int]:
    if not value:
        return {}
    return {str(k): int(v) for k, v in sorted(value.items())}


_SAMPLE_COLUMNS = ("cluster", "time", "kind", "name", "request", "allocated", "deserved", "borrowed", "lent")


def _write_samples(cluster: Cluster, result: decisions.SessionResult, now: datetime) -> int:
    """One ``QuotaSample`` per queue and per quota group of ``result``. On PostgreSQL the rows go in with one
    ``COPY`` (a few milliseconds for hundreds of rows, where building and inserting model instances took a tenth
    of a second at 5,000 nodes); the rows are the same either way."""
    rows: list[tuple[str, str, dict[str, int], dict[str, int], dict[str, int], dict[str, int], dict[str, int]]] = []
    if result.queue_values is not None:
        for name in result.queue_values:
            q = result.queue_values[name]
            rows.append(
                (
                    SampleKind.QUEUE,
                    name,
                    _amounts(q.request),
                    _amounts(q.allocated),
                    _amounts(q.deserved),
                    _amounts(q.borrowed),
                    _amounts(q.lent),
                )
            )
    if result.quota_values is not None:
        for name in result.quota_values:
            g = result.quota_values[name]
            rows.append(
                (
                    SampleKind.QUOTA,
                    name,
                    _amounts(g.request),
                    _amounts(g.used),
                    _amounts(g.runtime),
                    _amounts(g.borrowed),
                    _amounts(g.lent),
                )
            )
    if not rows:
        return 0
    if connection.vendor != "postgresql":
        fields = _SAMPLE_COLUMNS[2:]
        QuotaSample.objects.bulk_create(
            [QuotaSample(cluster=cluster, time=now, **dict(zip(fields, row, strict=True))) for row in rows],
            batch_size=_BATCH,
        )
        return len(rows)
    meta = QuotaSample._meta
    columns = ", ".join(connection.ops.quote_name(meta.get_field(f).column) for f in _SAMPLE_COLUMNS)
    sql = f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for kind, name, *amounts in rows:
            copy.write_row((cluster.pk, now, str(kind), name, *(json.dumps(a) for a in amounts)))
    return len(rows)


def apply_decisions(
    cluster: Cluster,
    result: decisions.SessionResult,
    now: datetime,
    *,
    kind: str = SessionKind.SESSION,
    started: datetime | None = None,
    timings: Mapping[str, float] | None = None,
    pending_pods: int = 0,
    ids: RowIds | None = None,
    phases: Mapping[str, int] | None = None,
    bound: list[list[Any]] | None = None,
) -> SchedulingSession:
    """Write everything ``result`` decided, in one transaction, and return the session row.

    Idempotent: the bindings and evictions are compare-and-swaps, so applying the same result twice binds and
    evicts nothing the second time (the second session row records zero of each). ``ids`` (from
    ``read_cluster``) lets the bindings address pods and nodes by primary key instead of by name. ``phases``
    (podgroups per phase) says the podgroup statuses of ``result`` are in the database already (a session that
    reuses its last result on unchanged rows, ``scheduling.mirror``): they are not read and compared again.
    ``bound``: the bindings a ``BindingStream`` already wrote in this transaction (``finish``), with the revision
    and the pipelined pods before them; they are not written again.
    """
    t0 = perf_counter()
    with transaction.atomic():
        # First, so that the session's writes (some of them raw SQL) move the cluster's revision with them.
        if bound is None:
            Revision.objects.bump(Revision.cluster_key(cluster.pk))
        session = SchedulingSession.objects.create(
            cluster=cluster,
            kind=kind,
            status=SessionStatus.OK,
            started=started or now,
            pending_pods=pending_pods,
            warnings=list(result.warnings)[:100],
        )
        applied = _apply_bindings(cluster, result.bindings, now, ids) if bound is None else bound
        evicted = _apply_evictions(cluster, session, result.evictions, now)
        if phases is None:
            phases = _apply_podgroup_statuses(cluster, session, result.podgroups, now) if result.podgroups else {}
            _record_gang_releases(cluster, result.podgroups, now)
        _write_samples(cluster, result, now)
        session.bindings = applied
        session.bound = sum(1 for a in applied if not a[2])
        session.pipelined = len(applied) - session.bound
        session.evicted = evicted.total()
        session.podgroups = phases
        session.finished = timezone.now()
        write_ms = (perf_counter() - t0) * 1000.0
        session.timings = {**(timings or {}), "write_ms": round(write_ms, 3)}
        session.duration_ms = round(sum(v for k, v in session.timings.items() if k.endswith("_ms")), 3)
        _save_session(session)
        counters.add(
            cluster.pk,
            kind=kind,
            status=SessionStatus.OK,
            seconds=session.duration_ms / 1000.0,
            binds=session.bound,
            pipelined=session.pipelined,
            evictions=evicted,
        )
    return session


def _save_session(session: SchedulingSession) -> None:
    """``session.save()``. On PostgreSQL its bindings (50,000 after a big session) go as one JSON parameter bound
    on the server, written by orjson, into a column compressed with lz4 (migration 0018): 35 ms for 50,000, where
    the ORM's save took 130 (the JSON quoted into the statement's text, parsed back out of it, then compressed with
    pglz)."""
    if not _is_postgres():
        session.save()
        return
    session.save(update_fields=_SESSION_FIELDS)
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"UPDATE {SchedulingSession._meta.db_table} SET bindings = %s::jsonb WHERE id = %s",
            [orjson.dumps(session.bindings).decode(), session.pk],
        )


_SESSION_FIELDS = [
    f.name for f in SchedulingSession._meta.concrete_fields if not f.primary_key and f.name != "bindings"
]


def record_skipped(cluster_id: int, kind: str = SessionKind.SESSION, *, why: str = "") -> SchedulingSession:
    """A session row for a run that found the cluster locked by another worker."""
    now = timezone.now()
    with transaction.atomic():
        counters.add(cluster_id, kind=kind, status=SessionStatus.SKIPPED)
        return SchedulingSession.objects.create(
            cluster_id=cluster_id,
            kind=kind,
            status=SessionStatus.SKIPPED,
            started=now,
            finished=now,
            error=why or "another worker holds this cluster's lock",
        )


def record_failure(cluster: Cluster, kind: str, started: datetime, exc: BaseException) -> SchedulingSession:
    """A session row for a run that raised (its other writes were rolled back)."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    finished = timezone.now()
    with transaction.atomic():
        counters.add(cluster.pk, kind=kind, status=SessionStatus.FAILED, seconds=(finished - started).total_seconds())
        return SchedulingSession.objects.create(
            cluster=cluster,
            kind=kind,
            status=SessionStatus.FAILED,
            started=started,
            finished=finished,
            error=text[:4000],
        )


# -- compaction and retention ----------------------------------------------------------------------------------

SAMPLE_FULL_RESOLUTION = timedelta(hours=1)
SAMPLE_MINUTE_RESOLUTION = timedelta(days=1)
EMPTY_SESSION_RETENTION = timedelta(hours=1)
SESSION_RETENTION = timedelta(days=7)


def _thin(qs: QuerySet[QuotaSample], bucket: Any) -> int:
    """Keep the latest sample of each (kind, node, bucket) in ``qs``; returns how many were deleted."""
    ranked = qs.annotate(
        rank=Window(
            RowNumber(),
            partition_by=[F("kind"), F("name"), bucket],
            order_by=[F("time").desc(), F("id").desc()],
        )
    ).filter(rank__gt=1)
    doomed = list(ranked.values_list("id", flat=True))
    deleted = 0
    for i in range(0, len(doomed), 5000):
        deleted += QuotaSample.objects.filter(pk__in=doomed[i : i + 5000])._raw_delete(QuotaSample.objects.db)
    return deleted


def compact_records(cluster: Cluster, now: datetime) -> dict[str, int]:
    """Thin the quota samples (full resolution for an hour, then one per minute, then one per hour after a day),
    drop old session rows (skipped or empty ones after an hour, every one after a week), and the removed jobs and
    evictions past their retention (``scheduling.evictions.expire``)."""
    minute_cut, hour_cut = now - SAMPLE_FULL_RESOLUTION, now - SAMPLE_MINUTE_RESOLUTION
    samples = QuotaSample.objects.filter(cluster=cluster)
    by_minute = _thin(samples.filter(time__lt=minute_cut, time__gte=hour_cut), TruncMinute("time"))
    by_hour = _thin(samples.filter(time__lt=hour_cut), TruncHour("time"))
    sessions = SchedulingSession.objects.filter(cluster=cluster)
    empty = Q(status=SessionStatus.SKIPPED) | Q(status=SessionStatus.OK, bound=0, pipelined=0, evicted=0)
    dropped, _ = sessions.filter(empty, started__lt=now - EMPTY_SESSION_RETENTION).delete()
    old, _ = sessions.filter(started__lt=now - SESSION_RETENTION).delete()
    expired = expire_evictions(cluster, now)
    return {
        "samples_by_minute": by_minute,
        "samples_by_hour": by_hour,
        "sessions": dropped + old,
        "removed_jobs": expired["removed_jobs"],
        "evictions": expired["evictions"],
    }


# -- reading the records --------------------------------------------------------------------------------------


def session_decisions(
    session: SchedulingSession, namespaces: Collection[str] | None = None, kind: str | None = None
) -> list[dict[str, Any]]:
    """A session's decisions, bindings first, then evictions, then podgroup changes (``DecisionSerializer``'s
    shape); only those in ``namespaces`` when given, only of ``kind`` when given."""
    blank: dict[str, Any] = {
        "pod": None,
        "podgroup": None,
        "node": None,
        "phase": None,
        "action": None,
        "reason": "",
        "message": "",
        "preemptor": None,
        "blocker": None,
    }

    def visible(uid: str) -> bool:
        return namespaces is None or _split_uid(uid)[0] in namespaces

    out: list[dict[str, Any]] = []
    if kind in (None, "bind", "pipeline"):
        bindings = session.bindings
        if bindings is None:
            bindings = SchedulingSession.objects.filter(pk=session.pk).values_list("bindings", flat=True).first()
        for uid, node, pipelined in bindings or []:
            what = "pipeline" if pipelined else "bind"
            if (kind is None or kind == what) and visible(uid):
                out.append({**blank, "kind": what, "pod": uid, "node": node})
    if kind in (None, "evict"):
        for e in session.eviction_rows.order_by("id"):
            if visible(e.pod_uid):
                out.append(
                    {
                        **blank,
                        "kind": "evict",
                        "pod": e.pod_uid,
                        "node": e.node or None,
                        "action": e.action,
                        "reason": e.reason,
                        "message": e.message,
                        "preemptor": e.preemptor or None,
                        "blocker": e.blocker,
                    }
                )
    if kind in (None, "podgroup"):
        for r in session.reason_rows.select_related("podgroup__namespace").order_by("id"):
            key = f"{r.podgroup.namespace.name}/{r.podgroup.name}"
            if visible(key):
                out.append(
                    {
                        **blank,
                        "kind": "podgroup",
                        "podgroup": key,
                        "phase": r.phase,
                        "reason": r.reason,
                        "message": r.message,
                        "blocker": r.blocker,
                    }
                )
    return out
