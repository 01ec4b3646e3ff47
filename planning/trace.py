"""``GET /api/v1/trace/?cluster=NAME&since=…``: what happened on a cluster as a trace (``engine.replay.trace``,
``docs/replay.md``), written by ``fairway trace export``.

The jobs are the history rows of the removed jobs (``scheduling.history``) and the jobs still there, submitted in
the window; the tree is the queues, quota groups and namespaces as they were at the window's start (their
django-simple-history rows) with the nodes as they are now; the tree edits are those history rows after the start, in
the what-if change language. A cluster whose queues have quota per Kueue ResourceFlavor (``cpu@spot``) writes its queue
tree as Kueue's objects (its ResourceFlavors as they were at that moment, the ClusterQueues with their quota per flavor
and resource groups, Cohorts, LocalQueues: ``export_trees(..., "kueue")``) in place of Volcano Queues, which cannot
hold a flavor, and each job's flavors (``PodGroup.flavors``, kept on its history row). Admins only (a trace is the
whole cluster's work).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Max
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from engine.limits import brief
from engine.manifests.common import SCHEDULER_CONF_KEY, SCHEDULER_CONFIGMAP
from engine.manifests.export import export_trees
from engine.manifests.kueuestored import with_stored_flavors
from engine.objects import NamespaceInfo, NodeInfo, QueueSpec, QuotaGroupSpec, ResourceFlavorSpec, Snapshot
from engine.replay.trace import (
    Trace,
    TraceEdit,
    TraceHeader,
    TraceJob,
    TraceRole,
    read_affinity,
    read_tolerations,
    trace_lines,
)
from engine.resources import ResourceList
from planning.export import AdminsOnly
from quotas.models import Namespace, Queue, QuotaGroup, ResourceFlavor
from scheduling.history import job_facts, usual_min_resources
from scheduling.models import Cluster, JobRecord, Node, PodGroup
from scheduling.tasks import CLUSTER_SCHEDULES

__all__ = ["TraceView", "build_trace"]


def session_period() -> float:
    """The beat's session period (seconds)."""
    return float(next(s.every for s in CLUSTER_SCHEDULES if s.task.endswith(".run_session")))


def _queue_spec(row: Any, names: dict[int, str]) -> QueueSpec:
    return row.to_spec(parent_name=names.get(row.parent_id) if row.parent_id else None)


def _tree_at(
    at: datetime,
) -> tuple[dict[str, QueueSpec], dict[str, QuotaGroupSpec], list[NamespaceInfo], dict[str, list[str]]]:
    queues = list(Queue.history.as_of(at))
    groups = list(QuotaGroup.history.as_of(at))
    q_names = {q.pk: q.name for q in queues}
    g_names = {g.pk: g.name for g in groups}
    namespaces, members = [], {}
    for ns in Namespace.history.as_of(at):
        namespaces.append(
            NamespaceInfo(
                name=ns.name,
                weight=ns.weight,
                queue=q_names.get(ns.default_queue_id),
                hard=ns.hard or None,
                labels=ns.label_pairs(),
            )
        )
        if ns.quota_group_id in g_names:
            members.setdefault(g_names[ns.quota_group_id], []).append(ns.name)
    return (
        {q.name: _queue_spec(q, q_names) for q in queues},
        {g.name: _queue_spec(g, g_names) for g in groups},
        namespaces,
        members,
    )


def _flavors_at(at: datetime) -> dict[str, ResourceFlavorSpec]:
    """The ResourceFlavors as they were at ``at`` (their history rows), by name."""
    return {f.name: f.to_spec() for f in ResourceFlavor.history.as_of(at)}


def _tree_objects(cluster: Cluster, at: datetime) -> list[dict[str, Any]]:
    queues, groups, namespaces, members = _tree_at(at)
    nodes = [
        (
            NodeInfo(name=name, allocatable=ResourceList(alloc or {}), labels=labels or {}, unschedulable=unsched),
            taints or [],
        )
        for name, alloc, labels, taints, unsched in Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("name", "allocatable", "labels", "taints", "unschedulable")
    ]
    snapshot = Snapshot(
        queues=queues,
        quota_groups=groups,
        namespaces={n.name: n for n in namespaces},
        quota_namespaces={g: tuple(sorted(ns)) for g, ns in members.items()},
    )
    # Kueue's ResourceFlavors (some queue has quota per flavor): the queue tree as Kueue's objects, which hold them
    flavored = with_stored_flavors(snapshot, lambda: _flavors_at(at))
    queue_format = "kueue" if flavored.kueue_flavors is not None else "volcano"
    objects = export_trees(flavored, queue_format) + export_trees(snapshot, "koordinator")
    if queue_format == "kueue":  # the namespaces and their quotas, as Volcano's export writes them
        objects += [o for o in export_trees(snapshot, "volcano") if o.get("kind") != "Queue"]
    if cluster.scheduler_policy.strip():
        # the cluster's scheduler policy as it is now (its changes are not in the history)
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": SCHEDULER_CONFIGMAP, "namespace": "volcano-system"},
                "data": {SCHEDULER_CONF_KEY: cluster.scheduler_policy},
            }
        )
    for node, taints in nodes:
        spec: dict[str, Any] = {"unschedulable": node.unschedulable}
        if taints:
            spec["taints"] = [
                {"key": t.get("key", ""), "value": t.get("value", "") or "", "effect": t.get("effect", "NoSchedule")}
                for t in taints
            ]
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node.name, "labels": dict(node.labels)},
                "spec": spec,
                "status": {"allocatable": node.allocatable.to_quantities()},
            }
        )
    return objects


_QUEUE_FIELDS = ("weight", "priority", "reclaimable")
_QUEUE_AMOUNTS = ("capability", "deserved", "guarantee", "borrowing_limit", "lending_limit")
_GROUP_FIELDS = ("is_parent", "allow_lent", "tree_id", "min_scale_exempt")
_GROUP_AMOUNTS = ("min", "max", "shared_weight", "borrowing_limit", "lending_limit")


def _spec(row: Any, names: dict[int, str], scalars: tuple[str, ...], amounts: tuple[str, ...]) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": row.name, "parent": names.get(row.parent_id) if row.parent_id else None}
    for f in scalars:
        spec[f] = getattr(row, f)
    for f in amounts:
        value = getattr(row, f)
        spec[f] = None if value is None else ResourceList(value).to_quantities()
    return spec


def _edits(start: datetime, end: datetime) -> list[TraceEdit]:
    """The tree's history rows in the window as changes (create, update, delete; a namespace's weight)."""
    edits: list[TraceEdit] = []
    q_names = dict(Queue.history.values_list("id", "name").distinct())
    g_names = dict(QuotaGroup.history.values_list("id", "name").distinct())
    for model, kind, names, scalars, amounts in (
        (Queue, "queue", q_names, _QUEUE_FIELDS, _QUEUE_AMOUNTS),
        (QuotaGroup, "quota_group", g_names, _GROUP_FIELDS, _GROUP_AMOUNTS),
    ):
        for row in model.history.filter(history_date__gt=start, history_date__lte=end).order_by("history_date", "pk"):
            op = {"+": "create", "~": "update", "-": "delete"}[row.history_type]
            change: dict[str, Any] = {"op": op, "kind": kind}
            if op != "create":
                change["name"] = row.name
            if op != "delete":
                change["spec"] = _spec(row, names, scalars, amounts)
            edits.append(TraceEdit(time=row.history_date.timestamp(), change=change))
    for row in Namespace.history.filter(history_date__gt=start, history_date__lte=end, history_type="~").order_by(
        "history_date", "pk"
    ):
        change = {"op": "set_weight", "kind": "namespace", "name": row.name, "weight": row.weight}
        edits.append(TraceEdit(time=row.history_date.timestamp(), change=change))
    return sorted(edits, key=lambda e: e.time)


def _role(row: list[Any]) -> TraceRole:
    """A history row's role: ``[name, pods, request]`` and, where its pods have them, ``{nodeSelector, tolerations,
    nodeAffinity}``."""
    placement = row[3] if len(row) > 3 else {}
    return TraceRole(
        name=row[0],
        pods=row[1],
        request=ResourceList(row[2]),
        node_selector=placement.get("nodeSelector") or {},
        tolerations=read_tolerations(placement.get("tolerations"), "tolerations"),
        node_affinity=read_affinity(placement.get("nodeAffinity"), "nodeAffinity"),
    )


def _min_resources(f: dict[str, Any]) -> ResourceList | None:
    value = f["min_resources"]
    if value is None:
        value = usual_min_resources(f["roles"], f["min_member"])
    return ResourceList(value) if value else None


def _job(f: dict[str, Any]) -> TraceJob:
    created = submit = f["submitted"].timestamp()
    if f["started"] is not None:  # a job mirrored from a cluster already running: its row is younger than its pods
        submit = min(submit, f["started"].timestamp())
    return TraceJob(
        # the live sessions order it by its row's creation: the trace keeps it where the submit moved before it
        created=created if created != submit else None,
        namespace=f["namespace"],
        name=f["name"],
        queue=f["queue"],
        submit=submit,
        roles=tuple(_role(r) for r in f["roles"]),
        quota_group=f["quota_group"] or None,
        priority=f["priority"],
        preemptible=f["preemptible"],
        min_member=min(f["min_member"], sum(r[1] for r in f["roles"])),
        min_resources=_min_resources(f),
        start=f["started"].timestamp() if f["started"] else None,
        # a finish is written with its start only (a job whose pods never reported a start has neither)
        finish=f["finished"].timestamp() if f["finished"] and f["started"] else None,
        runtime=f["runtime"] if f["finished"] and f["started"] else None,
        pod_runtimes=tuple(f["pod_runtimes"]) if f["pod_runtimes"] and f["finished"] and f["started"] else None,
        evictions=f["evictions"],
        flavors=f.get("flavors") or None,
        user=f.get("user") or None,  # (a row written before it was kept, or no user known: its namespace counts)
        user_groups=tuple(f.get("user_groups") or ()),
    )


def build_trace(
    cluster: Cluster,
    since: datetime,
    now: datetime | None = None,
    *,
    period: float | None = None,
    source: str = "export",
    tree_at: datetime | None = None,
) -> Trace:
    """The trace of ``cluster`` from ``since`` to ``now``; its tree as it was at ``tree_at`` (default ``since``)."""
    now = now or timezone.now()
    header = TraceHeader(
        cluster=cluster.name,
        start=since.timestamp(),
        end=now.timestamp(),
        period=period or session_period(),
        source=source,
        # the simulated job controller replaces an evicted pod by a new one, ``<name>-r<N>`` (``agent.replace_members``);
        # elsewhere a job controller makes it again, under its own name on Kubernetes (Volcano's), keeping its row
        replacements="new" if cluster.simulated else "same",
    )
    jobs: dict[str, TraceJob] = {}
    fields = (
        "namespace",
        "name",
        "queue",
        "quota_group",
        "priority",
        "preemptible",
        "min_member",
        "roles",
        "submitted",
        "started",
        "finished",
        "runtime",
        "evictions",
        "min_resources",
        "pod_runtimes",
        "flavors",
        "user",
        "user_groups",
    )
    for values in (
        JobRecord.objects.filter(cluster=cluster, submitted__gte=since, submitted__lte=now)
        .order_by("submitted", "id")
        .values(*fields)
    ):
        if values["roles"]:
            job = _job(values)
            jobs[job.key] = job  # a name used again: the latest
    live = PodGroup.objects.filter(cluster=cluster, created__gte=since, created__lte=now).values_list("id", flat=True)
    for f in job_facts(live):
        if f["roles"]:
            job = _job(f)
            jobs[job.key] = job
    reference = tree_at or _tree_complete(since, now, {job.namespace for job in jobs.values()})
    edits = [e for e in _edits(since, now) if e.time > reference.timestamp()]  # the earlier ones are in the tree
    return Trace(header=header, jobs=list(jobs.values()), edits=edits, tree=_tree_objects(cluster, reference))


def _tree_complete(since: datetime, now: datetime, namespaces: set[str]) -> datetime:
    """When the tree holds every namespace the window's jobs ran in: ``since``, or — when some were created during
    the window (a tree built then, the demo's) — the last of those creations, so that the replay knows every job's
    namespace, queue and quota group from its start (the change language cannot create a namespace). The tree is
    then as it was at that moment for the whole window, and the edits before it are in it."""
    existing = {ns.name for ns in Namespace.history.as_of(since)}
    missing = namespaces - existing
    if not missing:
        return since
    created = Namespace.history.filter(name__in=missing, history_type="+", history_date__lte=now).aggregate(
        latest=Max("history_date")
    )["latest"]
    return max(since, created) if created is not None else since


class TraceQuerySerializer(serializers.Serializer):
    since = serializers.DateTimeField(help_text="The window's start (ISO 8601); the window ends now.")
    cluster = serializers.CharField(required=False, help_text="Which cluster (default: the default cluster)")
    period = serializers.FloatField(required=False, min_value=0.001, help_text="The session period written (seconds)")


class TraceView(APIView):
    """The cluster's trace since a moment, as JSON Lines (``application/x-ndjson``)."""

    permission_classes = [AdminsOnly]

    @extend_schema(
        tags=["export"],
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, required=True),
            OpenApiParameter("cluster", str, required=False),
            OpenApiParameter("period", float, required=False),
        ],
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        query = TraceQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        name = query.validated_data.get("cluster")
        try:
            cluster = Cluster.objects.get(name=name or settings.FAIRWAY["DEFAULT_CLUSTER"])
        except Cluster.DoesNotExist:
            raise serializers.ValidationError({"cluster": [f"cluster {brief(name or '')} does not exist"]}) from None
        now = timezone.now()
        since = query.validated_data["since"]
        if since > now:
            raise serializers.ValidationError({"since": ["since must be in the past"]})
        trace = build_trace(cluster, since, now, period=query.validated_data.get("period"))
        return StreamingHttpResponse(_lines(trace), content_type="application/x-ndjson")


def _lines(trace: Trace) -> Iterator[str]:
    for line in trace_lines(trace):
        yield line + "\n"
