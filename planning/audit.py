"""``GET /api/v1/audit/``: the fairness audit (``engine.audit``) of a cluster's trees, now and over a window.

The values now come from the value cache (the same as every page); the history from the samples the sessions
record per tree node (``QuotaSample``: a queue's allocated and deserved, a quota group's used and runtime); the waits
from the jobs submitted in the window (their history rows, ``JobRecord``, and the podgroups still there) and the
evictions of their pods in it (``recorded_jobs``). Admins
read every node; a team member (a department lead above all) reads the audit of its own subtrees, the nodes it may
read (``scope``): rows of other nodes are left out, and so are the borrowers it may not read. ``?team=`` narrows the
audit to one team's subtrees (a team the caller may read: ``quotas.access.may_read_team``). Amounts are Kubernetes quantities (``4``, ``16Gi``, whole
GPUs); averages are decimals in the resource's unit (``average_used_decimal``: ``47.976`` GPUs, beside the deprecated
quantity ``47976m``); a ratio of use to entitlement is a plain number.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Collection, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.db.models import Case, Exists, F, FloatField, Max, Min, OuterRef, Q, Value, When, Window
from django.db.models.functions import Coalesce, RowNumber, TruncMinute
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import permissions, serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.audit import QUEUE, QUOTA, Audit, JobWait, NodeWaits, Sample, audit
from engine.limits import brief
from engine.resources import format_quantity, unit_decimal, unit_name, whole_gpus
from planning.values_api import cached_values
from quotas.access import is_admin, may_read_team, team_subtree_ids, visible_group_ids, visible_queue_ids
from quotas.models import Queue, QuotaGroup
from scheduling import store
from scheduling.choices import PodGroupPhase
from scheduling.models import (
    Cluster,
    Eviction,
    EvictionAction,
    JobRecord,
    Pod,
    PodGroup,
    QuotaSample,
    SampleKind,
)
from scheduling.store.db import Epoch, fetch_all

MAX_DAYS = 31


class AuditQuerySerializer(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="The cluster (default: the default cluster)")
    days = serializers.IntegerField(
        required=False, default=7, min_value=1, max_value=MAX_DAYS, help_text="The window of the history, in days"
    )
    team = serializers.CharField(
        required=False,
        help_text="A team (Django group): only the subtrees of its queues and quota groups (a team you may read)",
    )


def history(cluster: Cluster, since: Any) -> dict[tuple[str, str], list[Sample]]:
    """Every tree node's samples recorded since ``since``, oldest first, each led by its last sample before
    ``since`` (the state at the window's start), at most one a minute: the samples of the last hour, which
    compaction has not thinned yet (a session a second), are read as the latest of each minute, as compaction keeps
    them afterwards (``store.compact_records``). A session writes every node's sample at one time, so the last
    samples before the window share a handful of times: one query finds them, one reads them."""
    samples = QuotaSample.objects.filter(cluster=cluster)
    columns = ("kind", "name", "time", "allocated", "deserved")
    before = samples.filter(time__lt=since).values("kind", "name").annotate(last=Max("time")).order_by()
    last = {(row["kind"], row["name"]): row["last"] for row in before}
    out: dict[tuple[str, str], list[Sample]] = {}

    def keep(kind: str, name: str, time: Any, used: Any, entitled: Any) -> None:
        tree = QUEUE if kind == SampleKind.QUEUE else QUOTA
        out.setdefault((tree, name), []).append(Sample(time.timestamp(), used or {}, entitled or {}))

    if last:
        for kind, name, time, used, entitled in samples.filter(time__in=set(last.values())).values_list(*columns):
            if last.get((kind, name)) == time:
                keep(kind, name, time, used, entitled)
                last.pop((kind, name))  # one per node, should two share a time
    recent = max(since, timezone.now() - store.SAMPLE_FULL_RESOLUTION)
    older = samples.filter(time__gte=since, time__lt=recent)
    latest_of_minute = (
        samples.filter(time__gte=recent)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("kind"), F("name"), TruncMinute("time")],
                order_by=[F("time").desc(), F("id").desc()],
            )
        )
        .filter(rank=1)
    )
    for part in (older, latest_of_minute):
        for row in part.order_by("time", "id").values_list(*columns).iterator(chunk_size=5000):
            keep(*row)
    return out


_PREEMPTED = (EvictionAction.PREEMPT, EvictionAction.RECLAIM)


def recorded_jobs(
    cluster: Cluster,
    since: Any,
    now: Any,
    *,
    queues: Collection[str] | None = None,
    quota_groups: Collection[str] | None = None,
) -> list[JobWait]:
    """The jobs submitted in [since, now] as they happened: the history rows of those removed since (``JobRecord``)
    and the podgroups still there, each with its queue, quota group, submission (moved to its first start for a job
    mirrored already running, as its trace does), first start, whether it finished, and its pods preempted (or
    reclaimed) and recycled in the window. Times are read as seconds (``Epoch``): a week of a busy cluster is a
    hundred thousand rows. ``queues`` and ``quota_groups`` (either or both): only the jobs of those queues or
    counted in those quota groups (a team's page)."""
    evictions = (
        Eviction.objects.filter(
            cluster=cluster, created__gte=since, created__lte=now, action__in=(*_PREEMPTED, EvictionAction.RECYCLE)
        )
        .exclude(job="")
        .filter(_scope_of_records(queues, quota_groups))  # (an eviction is stamped with its queue and quota group)
        .annotate(at=Epoch("created"))
        .order_by()
        .values_list("namespace", "job", "action", "at")
    )
    removed = (
        JobRecord.objects.filter(cluster=cluster, submitted__gte=since, submitted__lte=now)
        .filter(_scope_of_records(queues, quota_groups))
        .annotate(submit=Epoch("submitted"), start=Epoch("started"), done=Epoch("finished"))
        .order_by()
        .values_list("namespace", "name", "queue", "quota_group", "submit", "start", "done", "user", "gpu_seconds")
    )
    there = PodGroup.objects.filter(cluster=cluster, created__gte=since, created__lte=now).filter(
        _scope_of_podgroups(queues, quota_groups)
    )
    live = (
        there.annotate(
            submit=Epoch("created"),
            start=Epoch(Min("pods__started")),
            group=Coalesce(Min("pods__quota_group__name"), "namespace__quota_group__name"),
            done=Case(When(phase=PodGroupPhase.COMPLETED, then=Value(1.0)), default=None, output_field=FloatField()),
        )
        .order_by()
        .values_list("namespace__name", "name", "queue__name", "group", "submit", "start", "done", "user", "id")
    )
    jobs = [*fetch_all(removed)]
    held = _gpu_seconds_held(there, now.timestamp())
    jobs += [(*row[:8], held.get(row[8], 0.0)) for row in fetch_all(live)]
    evicted = _evictions_per_job(jobs, fetch_all(evictions))
    out: list[JobWait] = []
    for i, (namespace, _name, queue, group, submit, start, done, user, gpu_seconds) in enumerate(jobs):
        preempted, recycled = evicted.get(i, (0, 0))
        if start is not None:
            submit = min(submit, start)
        finished = done is not None and start is not None
        who = user or f"namespace {namespace}"  # no user known: its namespace counts as its user, as for the limits
        out.append(JobWait(queue, group or None, submit, start, finished, preempted, recycled, who, gpu_seconds))
    return out


def _gpu_seconds_held(podgroups: Any, now: float) -> dict[int, float]:
    """Per podgroup of ``podgroups`` (a queryset), the GPUs its pods held while they ran (until now for a running one),
    in whole GPUs x seconds: what its history row will say once it is removed (``scheduling.history``)."""
    pods = (
        Pod.objects.filter(podgroup__in=podgroups.values("id"), started__isnull=False)
        .annotate(begun=Epoch("started"), ended=Epoch("finished"))
        .order_by()
        .values_list("podgroup_id", "request", "begun", "ended")
    )
    out: dict[int, float] = {}
    for podgroup, request, begun, ended in pods:  # (through the ORM: the requests read as resource lists)
        gpus = whole_gpus(request)
        if gpus:
            out[podgroup] = out.get(podgroup, 0.0) + gpus * max(0.0, (now if ended is None else ended) - begun)
    return out


def _evictions_per_job(jobs: list[tuple[Any, ...]], evictions: Iterable[tuple[Any, ...]]) -> dict[int, list[int]]:
    """Each job's pods preempted (or reclaimed) and recycled, by its index in ``jobs``: a name used again in the
    window (a job deleted and submitted anew) is several jobs one after the other, and an eviction belongs to the
    last of them submitted by its time (to none when it predates them all: a job of that name submitted before the
    window)."""
    rows = list(evictions)
    submits: dict[tuple[str, str], list[tuple[float, int]]] = {(ns, job): [] for ns, job, _, _ in rows}
    for i, (namespace, name, _queue, _group, submit, start, *_) in enumerate(jobs):
        if (times := submits.get((namespace, name))) is not None:  # (only the names evicted in the window)
            times.append((submit if start is None else min(submit, start), i))  # one mirrored running: its start
    for times in submits.values():
        times.sort()
    counts: dict[int, list[int]] = {}
    for namespace, job, action, at in rows:
        times = submits[namespace, job]
        k = bisect_right(times, (at, len(jobs))) - 1
        if k >= 0:
            counts.setdefault(times[k][1], [0, 0])[action == EvictionAction.RECYCLE] += 1
    return counts


def _scope_of_records(queues: Collection[str] | None, groups: Collection[str] | None) -> Q:
    if queues is None and groups is None:
        return Q()
    return Q(queue__in=sorted(queues or ())) | Q(quota_group__in=sorted(groups or ()))


def _scope_of_podgroups(queues: Collection[str] | None, groups: Collection[str] | None) -> Q:
    """A podgroup of one of ``queues``, or counted in one of ``groups`` (a pod of it there, or, before it has pods,
    its namespace's quota group), as the job lists read a quota group's jobs."""
    if queues is None and groups is None:
        return Q()
    named = sorted(groups or ())
    counted = Pod.objects.filter(podgroup=OuterRef("pk"), quota_group__name__in=named)
    return Q(queue__name__in=sorted(queues or ())) | Q(Exists(counted)) | Q(namespace__quota_group__name__in=named)


def run(cluster: Cluster, days: int) -> tuple[Any, Audit]:
    """The cluster's snapshot and its audit over the last ``days``."""
    snapshot, values = cached_values(cluster.name)
    now = timezone.now()
    since = now - timedelta(days=days)
    found = history(cluster, since)
    return snapshot, audit(
        values,
        snapshot.quota_groups,
        found,
        now=now.timestamp(),
        window=days * 86400.0,
        jobs=recorded_jobs(cluster, since, now),
        queue_parents={name: q.parent for name, q in snapshot.queues.items()},
    )


Scope = dict[str, set[str]]  # tree (QUEUE, QUOTA) -> the names of the nodes the audit keeps

NOT_A_MEMBER = (
    "Only admins and team members may read the fairness audit: a team member reads the audit of its own subtrees."
)


def not_yours(team: str) -> str:
    return (
        f"You may not read the audit of team {brief(team)}: you may read the audit of your own teams and of the "
        "teams below them only."
    )


def _names(queue_ids: set[int], group_ids: set[int]) -> Scope:
    return {
        QUEUE: set(Queue.objects.filter(pk__in=queue_ids).values_list("name", flat=True)),
        QUOTA: set(QuotaGroup.objects.filter(pk__in=group_ids).values_list("name", flat=True)),
    }


def scope(user: Any, team: str | None) -> Scope | None:
    """The nodes whose rows ``user`` reads (None: every node, an admin's audit of the whole cluster): with ``team``,
    the subtrees of that team's nodes (a team the user may read, else ``PermissionDenied`` saying so); without, an
    admin's everything or a team member's readable subtrees (none: ``PermissionDenied``)."""
    if team:
        group = Group.objects.filter(name=team).first()
        if group is None and is_admin(user):
            raise serializers.ValidationError({"team": [f"no team is named {brief(team)}"]})
        if group is None or not may_read_team(user, group):
            raise PermissionDenied(not_yours(team))
        return _names(*team_subtree_ids(group))
    if is_admin(user):
        return None
    queues, groups = visible_queue_ids(user) or set(), visible_group_ids(user) or set()
    if not queues and not groups:
        raise PermissionDenied(NOT_A_MEMBER)
    return _names(queues, groups)


def within(result: Audit, nodes: Scope | None) -> Audit:
    """``result`` with only the rows of ``nodes`` (and, of a starved node's borrowers, those in ``nodes``)."""
    if nodes is None:
        return result

    def mine(tree: str, name: str) -> bool:
        return name in nodes.get(tree, ())

    return dataclasses.replace(
        result,
        starved=tuple(
            dataclasses.replace(s, borrowers=tuple(b for b in s.borrowers if mine(s.tree, b[0])))
            for s in result.starved
            if mine(s.tree, s.name)
        ),
        lending=tuple(x for x in result.lending if mine(x.tree, x.name)),
        idle=tuple(i for i in result.idle if mine(i.tree, i.name)),
        usage=tuple(u for u in result.usage if mine(u.tree, u.name)),
        waits=tuple(w for w in result.waits if mine(w.tree, w.name)),
        trend={node: points for node, points in result.trend.items() if mine(*node)},
        # the submitters of the jobs of ``nodes`` only, counted again: their other jobs are not the reader's
        submitters=result.scoped(j for j in result.jobs if mine(QUEUE, j.queue) or mine(QUOTA, j.group or "")),
    )


def _q(amount: int, resource: str) -> str:
    return format_quantity(amount, resource)


def _d(amount: int, resource: str) -> str | None:
    """An average as a decimal in the resource's unit (``47.976`` GPUs, never ``47976m``)."""
    return unit_decimal(amount, resource)


def as_json(result: Audit) -> dict[str, Any]:
    return {
        "window_days": round(result.window / 86400.0, 3),
        "starved": [
            {
                "tree": s.tree,
                "name": s.name,
                "parent": s.parent,
                "resource": s.resource,
                "waiting": _q(s.waiting, s.resource),
                "held": _q(s.held, s.resource),
                "entitled": _q(s.entitled, s.resource),
                "shortfall": _q(s.shortfall, s.resource),
                "borrowers": [{"name": n, "borrowed": _q(v, s.resource)} for n, v in s.borrowers],
            }
            for s in result.starved
        ],
        "lending": [
            {
                "tree": x.tree,
                "name": x.name,
                "resource": x.resource,
                "lent": _q(x.lent, x.resource),
                "lendable_now": _q(x.lendable, x.resource),
            }
            for x in result.lending
        ],
        "idle_guarantees": [
            {
                "tree": i.tree,
                "name": i.name,
                "resource": i.resource,
                "unit": unit_name(i.resource),
                "guaranteed": _q(i.guaranteed, i.resource),
                "average_used": _q(i.average, i.resource),
                "average_used_decimal": _d(i.average, i.resource),
                "peak_used": _q(i.peak, i.resource),
                "freeable": _q(i.freeable, i.resource),
                "covered_hours": round(i.covered / 3600.0, 2),
            }
            for i in result.idle
        ],
        "usage_over_time": [
            {
                "tree": u.tree,
                "name": u.name,
                "resource": u.resource,
                "unit": unit_name(u.resource),
                "average_used": _q(u.average, u.resource),
                "average_entitled": _q(u.entitled, u.resource),
                "average_used_decimal": _d(u.average, u.resource),
                "average_entitled_decimal": _d(u.entitled, u.resource),
                "ratio": None if u.ratio is None else round(u.ratio, 3),
                "covered_hours": round(u.covered / 3600.0, 2),
            }
            for u in result.usage
        ],
        "waits": [_waits(w) for w in result.waits],
        "waits_trend": [_trend(w.tree, w.name, result.trend.get((w.tree, w.name), ())) for w in result.waits],
        "submitters": [_submitter(w) for w in result.submitters],
    }


def _submitter(w: NodeWaits) -> dict[str, Any]:
    figures = _waits(w)
    del figures["tree"]
    return {**figures, "gpu_hours": round(w.gpu_hours, 2)}


def _trend(tree: str, name: str, points: Any) -> dict[str, Any]:
    return {
        "tree": tree,
        "name": name,
        "points": [
            {
                "start": _iso(p.time),
                "jobs_started": p.started,
                "jobs_waiting": p.waiting,
                "wait_p50_seconds": _seconds(p.p50),
                "wait_p95_seconds": _seconds(p.p95),
            }
            for p in points
        ],
    }


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _waits(w: NodeWaits) -> dict[str, Any]:
    return {
        "tree": w.tree,
        "name": w.name,
        "jobs_started": w.started,
        "jobs_finished": w.finished,
        "jobs_waiting": w.waiting,
        "wait_p50_seconds": _seconds(w.p50),
        "wait_p95_seconds": _seconds(w.p95),
        "wait_max_seconds": _seconds(w.longest),
        "preempted_pods": w.preempted,
        "recycled_pods": w.recycled,
    }


class _BorrowerSerializer(serializers.Serializer):
    name = serializers.CharField()
    borrowed = serializers.CharField(help_text="A quantity (40, 16Gi, 2 for GPUs)")


class _NodeSerializer(serializers.Serializer):
    tree = serializers.ChoiceField(choices=[QUEUE, QUOTA], help_text="queue, or quota (a quota group)")
    name = serializers.CharField()
    resource = serializers.CharField()


class _StarvedSerializer(_NodeSerializer):
    parent = serializers.CharField()
    waiting = serializers.CharField(help_text="What its jobs ask beyond what it holds")
    held = serializers.CharField(help_text="What it holds: allocated and reserved")
    entitled = serializers.CharField(help_text="A queue's deserved, a quota group's min")
    shortfall = serializers.CharField()
    borrowers = _BorrowerSerializer(many=True, help_text="Siblings borrowing the resource now, most first")


class _LendingSerializer(_NodeSerializer):
    lent = serializers.CharField()
    lendable_now = serializers.CharField()


_DECIMAL = "An average as a decimal string in the resource's unit (cores, GiB, GPUs; see unit): 47.976"
_DEPRECATED = "Deprecated: a Kubernetes quantity of an average (47976m for 47.976 GPUs); read {}"
_UNIT = "The unit of the *_decimal fields: cores (cpu), GiB (byte resources), GPUs, pods, or the resource's short name"


@extend_schema_serializer(deprecate_fields=["average_used"])
class _IdleSerializer(_NodeSerializer):
    unit = serializers.CharField(help_text=_UNIT)
    guaranteed = serializers.CharField(help_text="A queue's guarantee, a quota group's min")
    average_used = serializers.CharField(help_text=_DEPRECATED.format("average_used_decimal"))
    average_used_decimal = serializers.CharField(allow_null=True, help_text=_DECIMAL)
    peak_used = serializers.CharField()
    freeable = serializers.CharField(help_text="guaranteed - peak_used")
    covered_hours = serializers.FloatField(help_text="Hours of the window the recorded samples cover")


@extend_schema_serializer(deprecate_fields=["average_used", "average_entitled"])
class _UsageSerializer(_NodeSerializer):
    unit = serializers.CharField(help_text=_UNIT)
    average_used = serializers.CharField(help_text=_DEPRECATED.format("average_used_decimal"))
    average_entitled = serializers.CharField(help_text=_DEPRECATED.format("average_entitled_decimal"))
    average_used_decimal = serializers.CharField(allow_null=True, help_text=_DECIMAL)
    average_entitled_decimal = serializers.CharField(allow_null=True, help_text=_DECIMAL)
    ratio = serializers.FloatField(allow_null=True, help_text="average_used / average_entitled; null when entitled 0")
    covered_hours = serializers.FloatField()


class _WaitsSerializer(serializers.Serializer):
    tree = serializers.ChoiceField(choices=[QUEUE, QUOTA], help_text="queue, or quota (a quota group)")
    name = serializers.CharField()
    jobs_started = serializers.IntegerField(help_text="Jobs submitted in the window that started")
    jobs_finished = serializers.IntegerField(help_text="Of those, the jobs that finished")
    jobs_waiting = serializers.IntegerField(help_text="Jobs submitted in the window that have not started")
    wait_p50_seconds = serializers.FloatField(allow_null=True, help_text="Half the started jobs waited at most this")
    wait_p95_seconds = serializers.FloatField(allow_null=True, help_text="95 in 100 started jobs waited at most this")
    wait_max_seconds = serializers.FloatField(
        allow_null=True, help_text="The longest wait, a job still waiting counted with its wait so far"
    )
    preempted_pods = serializers.IntegerField(help_text="Pods of these jobs preempted or reclaimed in the window")
    recycled_pods = serializers.IntegerField(help_text="Pods of these jobs recycled in the window")


class _SubmitterSerializer(_WaitsSerializer):
    tree = None  # type: ignore[assignment]  # (a submitter is no tree node)
    name = serializers.CharField(help_text="Who submitted the jobs: a user, or 'namespace NAME' where none is known")
    gpu_hours = serializers.FloatField(
        help_text="The GPUs the jobs' pods held while they ran, in whole GPUs x hours (evicted runs included)"
    )


class _TrendPointSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="The period's start (a whole hour or day, UTC)")
    jobs_started = serializers.IntegerField(help_text="Jobs submitted in the period that started")
    jobs_waiting = serializers.IntegerField(help_text="Jobs submitted in the period that have not started")
    wait_p50_seconds = serializers.FloatField(allow_null=True)
    wait_p95_seconds = serializers.FloatField(allow_null=True)


class _TrendSerializer(serializers.Serializer):
    tree = serializers.ChoiceField(choices=[QUEUE, QUOTA], help_text="queue, or quota (a quota group)")
    name = serializers.CharField()
    points = _TrendPointSerializer(many=True, help_text="Periods in which the node had a job, oldest first")


class AuditSerializer(serializers.Serializer):
    window_days = serializers.FloatField()
    starved = _StarvedSerializer(many=True)
    lending = _LendingSerializer(many=True)
    idle_guarantees = _IdleSerializer(many=True)
    usage_over_time = _UsageSerializer(many=True)
    waits = _WaitsSerializer(
        many=True,
        help_text="How long the jobs submitted in the window waited to start, per node (a job counts for its queue, "
        "its quota group and their ancestors), longest waits first",
    )
    waits_trend = _TrendSerializer(
        many=True,
        help_text="Each node of waits, its waits by when the jobs were submitted: hour by hour in a window of up to "
        "two days, else day by day",
    )
    submitters = _SubmitterSerializer(
        many=True,
        help_text="Per submitter of the jobs submitted in the window (of the nodes you may read), their waits and "
        "GPU-hours, the most GPU-hours first",
    )


class AuditView(APIView):
    """Who is starved and who borrows from the same parent, who lends and what could be lent now, which guarantees
    sat idle over the window, and each node's use against its share over the window. Admins read every node; a team
    member (a department lead) the nodes of its own subtrees; ``team`` narrows it to one team's subtrees."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        tags=["audit"],
        parameters=[
            OpenApiParameter("cluster", str, required=False),
            OpenApiParameter("days", int, required=False, description=f"1 to {MAX_DAYS}, default 7"),
            OpenApiParameter(
                "team", str, required=False, description="Only this team's subtrees (a team you may read)"
            ),
        ],
        responses={200: AuditSerializer},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        query = AuditQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        nodes = scope(request.user, query.validated_data.get("team"))
        name = query.validated_data.get("cluster") or settings.FAIRWAY["DEFAULT_CLUSTER"]
        cluster = Cluster.objects.filter(name=name).first()
        if cluster is None:
            raise serializers.ValidationError({"cluster": [f"cluster {brief(name)} does not exist"]})
        _, result = run(cluster, query.validated_data["days"])
        return Response(as_json(within(result, nodes)))
