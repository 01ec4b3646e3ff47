"""Replaying one recorded session (``fairway replay session ID``; ``docs/replay.md``): its inputs rebuilt from the
records (``scheduling.recording``: the chain's keyframe and its deltas up to the session), the engine run on them
again with the session's own ``now``, its decisions compared with the recorded ones, and, asked for one job or pod,
the explanation of what the session decided about it: the decision's own reason and numbers (the engine's words,
as ``fairway job why`` and the evictions list show them), the pod that needed the room and its job and queue, the
other victims of that pod in the session's order, and the steps that gave the queues concerned their values when the
session opened (the explain endpoint's, ``planning.values_api.explain_queue``).

The API (admins only: a session's inputs are the whole cluster's):

    GET /api/v1/sessions/recorded/?cluster=NAME[&before=T][&limit=N]   the recorded sessions, newest first
    GET /api/v1/sessions/{id}/replay/[?explain=NS/NAME]                 replay one
    GET /api/v1/sessions/replay/?at=T[&cluster=NAME][&explain=NS/NAME] the session in force at T
"""

from __future__ import annotations

from datetime import datetime, timedelta
from time import process_time
from typing import Any

from django.conf import settings
from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.limits import brief
from engine.objects import Snapshot
from engine.replay.recorded import (
    RecordError,
    compact_decisions,
    decisions_digest,
    differences,
    load_decisions,
    rebuild,
)
from engine.session import run
from engine.session.decisions import SessionResult
from planning.values_api import explain_queue, heavy_work
from quotas.access import is_admin
from scheduling import recording
from scheduling.models import Cluster, Eviction, RecordKind, SessionRecord

__all__ = [
    "RecordedSessionsView",
    "ReplayProblem",
    "SessionReplayAtView",
    "SessionReplayView",
    "explain",
    "find_record",
    "recorded_sessions",
    "replay_record",
]

SETTING = "FAIRWAY_SESSION_RECORD_RETENTION_HOURS"


class ReplayProblem(exceptions.APIException):
    """A session that cannot be replayed: not recorded (404), recording off (409), a broken record (409)."""

    def __init__(self, detail: str, code: int = status.HTTP_404_NOT_FOUND) -> None:
        self.status_code = code
        super().__init__(detail=detail)


def _off() -> ReplayProblem:
    return ReplayProblem(
        f"sessions are not recorded: {SETTING} is 0 (set it to the hours of sessions to keep, e.g. 24)",
        status.HTTP_409_CONFLICT,
    )


def _cluster(name: str | None) -> Cluster:
    try:
        return Cluster.objects.get(name=name or settings.FAIRWAY["DEFAULT_CLUSTER"])
    except Cluster.DoesNotExist:
        raise serializers.ValidationError({"cluster": [f"cluster {brief(name or '')} does not exist"]}) from None


def _not_recorded(what: str, cluster: Cluster | None) -> ReplayProblem:
    rows = SessionRecord.objects.all() if cluster is None else SessionRecord.objects.filter(cluster=cluster)
    oldest = rows.order_by("time").values_list("time", flat=True).first()
    kept = f"{SETTING} keeps {recording.retention_hours():g} hours"
    since = f"; the oldest record is of {oldest.isoformat()}" if oldest else "; none is recorded yet"
    return ReplayProblem(f"{what} is not recorded ({kept}{since})")


def find_record(session_id: int | None = None, *, cluster: Cluster | None = None, at: datetime | None = None) -> Any:
    """The record of session ``session_id`` (of ``cluster`` when given), or of the last session of ``cluster`` that
    opened at or before ``at``; raises ``ReplayProblem``."""
    rows = SessionRecord.objects.defer("payload", "decisions")
    if cluster is not None:
        rows = rows.filter(cluster=cluster)
    if session_id is not None:
        found = rows.filter(session_id=session_id).select_related("cluster").first()
        what = f"session {session_id}" + (f" of cluster {cluster.name}" if cluster is not None else "")
    else:
        assert at is not None and cluster is not None
        found = rows.filter(time__lte=at).order_by("-time", "-session_id").select_related("cluster").first()
        what = f"a session of cluster {cluster.name} at or before {at.isoformat()}"
    if found is None:
        if not recording.enabled():
            raise _off()
        raise _not_recorded(what, cluster)
    return found


def _chain(record: Any) -> list[Any]:
    """The records from the chain's keyframe to ``record``, in order (payloads loaded)."""
    links = dict(
        SessionRecord.objects.filter(
            cluster_id=record.cluster_id, keyframe_session=record.keyframe_session, time__lte=record.time
        ).values_list("session_id", "parent_session")
    )
    path = [record.session_id]
    while path[-1] != record.keyframe_session:
        parent = links.get(path[-1])
        if parent is None or len(path) > len(links):
            raise ReplayProblem(
                f"the records of session {record.session_id} are incomplete: the record of session {path[-1]} "
                f"names no earlier one, and session {record.keyframe_session}'s keyframe was not reached",
                status.HTTP_409_CONFLICT,
            )
        path.append(parent)
    path.reverse()
    rows = {r.session_id: r for r in SessionRecord.objects.filter(session_id__in=path)}
    missing = [s for s in path if s not in rows]
    if missing:
        raise ReplayProblem(
            f"the records of session {record.session_id} are incomplete: session {missing[0]}'s is gone",
            status.HTTP_409_CONFLICT,
        )
    chain = [rows[s] for s in path]
    if chain[0].kind != RecordKind.KEYFRAME:
        raise ReplayProblem(
            f"the records of session {record.session_id} do not start with a keyframe", status.HTTP_409_CONFLICT
        )
    return chain


def rebuild_inputs(record: Any) -> tuple[Snapshot, list[Any]]:
    """The snapshot session ``record`` was fed, and its chain of records (keyframe first); raises ``ReplayProblem``."""
    chain = _chain(record)
    try:
        snapshot = rebuild(bytes(chain[0].payload), [bytes(r.payload) for r in chain[1:]])
    except RecordError as exc:
        raise ReplayProblem(
            f"the records of session {record.session_id} cannot be read: {exc}", status.HTTP_409_CONFLICT
        ) from None
    return snapshot, chain


def recorded_decisions(chain: list[Any]) -> dict[str, Any]:
    """The decisions of the chain's last session: its own, or (a session that reused its predecessor's result
    stores none) those of the latest record before it that has some."""
    for row in reversed(chain):
        data = bytes(row.decisions)
        if data:
            try:
                return load_decisions(data)
            except RecordError as exc:
                raise ReplayProblem(f"session {row.session_id}: {exc}", status.HTTP_409_CONFLICT) from None
    raise ReplayProblem(
        f"session {chain[-1].session_id}: no record of its chain holds decisions", status.HTTP_409_CONFLICT
    )


def _counts(decisions: dict[str, Any]) -> dict[str, int]:
    bindings = decisions.get("bindings", [])
    return {
        "bound": sum(1 for b in bindings if not b[2]),
        "pipelined": sum(1 for b in bindings if b[2]),
        "evicted": len(decisions.get("evictions", [])),
        "podgroups": len(decisions.get("podgroups", {})),
    }


def replay_record(record: Any, explain_target: str | None = None) -> dict[str, Any]:
    """Rebuild the session's inputs, run the engine on them, compare; with ``explain_target`` (a job ``NS/NAME`` or
    a pod's ``NS/NAME``), the explanation of what the session decided about it."""
    t0 = process_time()
    snapshot, chain = rebuild_inputs(record)
    t1 = process_time()
    result = run.run_session(snapshot, now=record.now)
    t2 = process_time()
    replayed = compact_decisions(result, snapshot)
    recorded = recorded_decisions(chain)
    diffs = differences(recorded, replayed)
    if decisions_digest(recorded) != record.digest:
        diffs.insert(0, "the recorded decisions do not match the digest written with them: the record was altered")
    doc: dict[str, Any] = {
        "session": record.session_id,
        "cluster": record.cluster.name,
        "time": record.time.isoformat(),
        "now": record.now,
        "inputs": {
            "keyframe": record.keyframe_session,
            "deltas": len(chain) - 1,
            "nodes": len(snapshot.nodes),
            "pods": len(snapshot.tasks),
            "podgroups": len(snapshot.podgroups),
        },
        "identical": not diffs,
        "differences": diffs,
        "recorded": _counts(recorded),
        "replayed": _counts(replayed),
        "cpu_ms": {"rebuild": round((t1 - t0) * 1000.0, 1), "engine": round((t2 - t1) * 1000.0, 1)},
    }
    if explain_target:
        doc["explain"] = explain(snapshot, result, explain_target, record)
    return doc


def _job_and_pods(snapshot: Snapshot, target: str, record: Any) -> tuple[str, list[str]]:
    if target in snapshot.podgroups:
        return target, [uid for uid, t in snapshot.tasks.items() if t.podgroup == target]
    task = snapshot.tasks.get(target)
    if task is not None:
        return task.podgroup, [target]
    raise serializers.ValidationError(
        {
            "explain": [
                f"{brief(target)} is neither a job nor a pod of the session's inputs (give NAMESPACE/NAME)"
                + _evicted_elsewhere(record, target)
            ]
        }
    )


def _evicted_elsewhere(record: Any, target: str) -> str:
    """Where a job or pod the session never saw was evicted, nearest in time (any cluster: session ids are the
    control plane's): a lead from an eviction list that did not say its cluster, or from a time given to the
    second, to the session that evicted it; "" when none was within an hour."""
    if "/" not in target:
        return ""
    namespace, name = target.split("/", 1)
    found = _nearest_evictions(record, Q(pod_uid=target) | Q(namespace=namespace, job=name), any_cluster=True)
    if not found:
        return ""
    nearest = found[0]
    where = "" if nearest["cluster_id"] == record.cluster_id else f" of cluster {nearest['cluster__name']}"
    return (
        f"; it was evicted ({nearest['action']}) in session {nearest['session_id']}{where} at "
        f"{nearest['created'].isoformat()}: fairway replay session {nearest['session_id']} --explain {target}"
    )


def _queue_of(snapshot: Snapshot, job: str | None) -> str | None:
    pg = snapshot.podgroups.get(job) if job else None
    return pg.queue if pg is not None else None


def explain(snapshot: Snapshot, result: SessionResult, target: str, record: Any) -> dict[str, Any]:
    """What session ``record`` decided about the job or pod ``target`` and why (see the module docstring)."""
    job, pods = _job_and_pods(snapshot, target, record)
    wanted = set(pods)
    queue = _queue_of(snapshot, job)
    when = f"session {record.session_id} at {record.time.isoformat()}"
    lines: list[str] = []
    bindings = [{"pod": b.task, "node": b.node, "pipelined": b.pipelined} for b in result.bindings if b.task in wanted]
    for b in bindings:
        lines.append(f"{when}: {b['pod']} {'pipelined' if b['pipelined'] else 'bound'} to node {b['node']}")
    evictions = []
    queues = {queue} if queue else set()
    by_preemptor: dict[str | None, list[str]] = {}
    for e in result.evictions:
        by_preemptor.setdefault(e.preemptor, []).append(e.task)
    for e in result.evictions:
        if e.task not in wanted:
            continue
        took = snapshot.tasks.get(e.preemptor) if e.preemptor else None
        took_job = took.podgroup if took is not None else None
        took_queue = _queue_of(snapshot, took_job)
        if took_queue:
            queues.add(took_queue)
        order = by_preemptor.get(e.preemptor, []) if e.preemptor else []
        evictions.append(
            {
                "pod": e.task,
                "action": e.action,
                "reason": e.reason,
                "message": e.message,
                "blocker": e.blocker.to_dict() if e.blocker is not None else None,
                "preemptor": e.preemptor,
                "preemptor_job": took_job,
                "preemptor_queue": took_queue,
                "victims_of_preemptor": order,
                "victim_rank": order.index(e.task) + 1 if e.task in order else None,
            }
        )
        line = f"{when}: {e.task} evicted by {e.action}: {e.message}"
        if e.preemptor and len(order) > 1:
            line += f" (victim {order.index(e.task) + 1} of {len(order)} taken for {e.preemptor}, in this order)"
        lines.append(line)
    status_of = result.podgroups.get(job) if job else None
    job_status = None
    if status_of is not None:
        job_status = {
            "phase": status_of.phase,
            "reason": status_of.reason,
            "message": status_of.message,
            "blocker": status_of.blocker.to_dict() if status_of.blocker is not None else None,
        }
        text = f"{when}: job {job} left {status_of.phase}"
        if status_of.reason:
            text += f": {status_of.reason}" + (f": {status_of.message}" if status_of.message else "")
        lines.append(text)
    nearby = _evictions_nearby(record, target, job)
    if not bindings and not evictions and status_of is None:
        lines.append(f"{when} decided nothing about {target}")
    if not evictions:  # evicted in another session near this one (``--at`` picked the session in force then)
        for e in nearby:
            if e["recorded"]:
                lines.append(
                    f"its pod {e['pod']} was evicted ({e['action']}) in session {e['session']} at {e['time']}: "
                    f"fairway replay session {e['session']} --explain {target}"
                )
            else:  # a recycling pass (not recorded), or a session past the records' retention
                lines.append(
                    f"its pod {e['pod']} was evicted ({e['action']}) in session {e['session']} at {e['time']} "
                    f"(not recorded): {e['message']}"
                )
    values = result.values_at_open
    steps = {}
    if values is not None:
        for name in sorted(queues):
            if name in values.queues:
                steps[name] = explain_queue(values, name)
    return {
        "target": target,
        "job": job,
        "queue": queue,
        "session": record.session_id,
        "time": record.time.isoformat(),
        "bindings": bindings,
        "evictions": evictions,
        "status": job_status,
        "queue_values": steps,
        "evictions_nearby": nearby,
        "sentences": lines,
    }


def _evictions_nearby(record: Any, target: str, job: str | None) -> list[dict[str, Any]]:
    """The evictions of ``target``'s pods (of its job, for a job) nearest in time to the session, within an hour
    either side (at most 5): the session that evicted it when ``--at`` picked another one."""
    if job is None or "/" not in job:
        return []
    namespace, name = job.split("/", 1)
    found = _nearest_evictions(record, Q(pod_uid=target) if target != job else Q(namespace=namespace, job=name))
    recorded = set(
        SessionRecord.objects.filter(session_id__in=[r["session_id"] for r in found]).values_list(
            "session_id", flat=True
        )
    )
    return [
        {
            "session": r["session_id"],
            "time": r["created"].isoformat(),
            "action": r["action"],
            "pod": r["pod_uid"],
            "message": r["message"],
            "recorded": r["session_id"] in recorded,
        }
        for r in found
    ]


def _nearest_evictions(record: Any, matching: Q, *, any_cluster: bool = False) -> list[dict[str, Any]]:
    """The evictions ``matching`` made by a session within an hour either side of ``record``'s, of its cluster (or
    ``any_cluster``), nearest in time first (at most 5)."""
    span = timedelta(hours=1)
    rows = Eviction.objects.filter(matching, session__isnull=False)
    if not any_cluster:
        rows = rows.filter(cluster_id=record.cluster_id)
    rows = rows.filter(created__gte=record.time - span, created__lte=record.time + span)
    fields = ("session_id", "created", "action", "pod_uid", "message", "cluster_id", "cluster__name")
    return sorted(
        rows.values(*fields)[:50],
        key=lambda r: (abs((r["created"] - record.time).total_seconds()), r["session_id"]),
    )[:5]


def recorded_sessions(cluster: Cluster, before: datetime | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """The cluster's recorded sessions, newest first (``limit`` of them, opened before ``before`` when given)."""
    if not recording.enabled() and not SessionRecord.objects.filter(cluster=cluster).exists():
        raise _off()
    rows = SessionRecord.objects.filter(cluster=cluster).defer("payload", "decisions")
    if before is not None:
        rows = rows.filter(time__lt=before)
    return [
        {
            "session": r.session_id,
            "time": r.time.isoformat(),
            "kind": r.kind,
            "keyframe": r.keyframe_session,
            "bound": r.bound,
            "evicted": r.evicted,
            "digest": r.digest,
            "record_ms": r.record_ms,
        }
        for r in rows.order_by("-time", "-session_id")[:limit]
    ]


# -- API ----------------------------------------------------------------------------------------------------------


class AdminsOnly(BasePermission):
    message = "Only admins may replay sessions: a session's inputs hold the whole cluster."

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated and is_admin(request.user))


class _ListQuery(serializers.Serializer):
    cluster = serializers.CharField(required=False, allow_blank=True)
    before = serializers.DateTimeField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=50)


class _ReplayQuery(serializers.Serializer):
    cluster = serializers.CharField(required=False, allow_blank=True)
    at = serializers.DateTimeField(required=False)
    explain = serializers.CharField(required=False, allow_blank=False, max_length=320)


class RecordedSessionsView(APIView):
    """The cluster's recorded sessions (newest first), to find the one to replay."""

    permission_classes = [AdminsOnly]

    @extend_schema(
        tags=["replay"],
        parameters=[
            OpenApiParameter("cluster", str, required=False),
            OpenApiParameter("before", OpenApiTypes.DATETIME, required=False),
            OpenApiParameter("limit", int, required=False),
        ],
        responses={200: OpenApiTypes.OBJECT},
        operation_id="v1_sessions_recorded_retrieve",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        query = _ListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        cluster = _cluster(query.validated_data.get("cluster"))
        sessions = recorded_sessions(cluster, query.validated_data.get("before"), query.validated_data["limit"])
        return Response({"cluster": cluster.name, "retention_hours": recording.retention_hours(), "sessions": sessions})


def _replay(request: Request, session_id: int | None) -> Response:
    query = _ReplayQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    name = data.get("cluster")
    cluster = _cluster(name) if name or session_id is None else None
    if session_id is None and data.get("at") is None:
        raise serializers.ValidationError({"at": ["give the moment whose session to replay (or its id in the path)"]})
    record = find_record(session_id, cluster=cluster, at=data.get("at"))
    # one of the simulations at once (``FAIRWAY_MAX_CONCURRENT_SIMULATIONS``: 503 beyond), but not cut by the request
    # budget: a session of a big cluster takes seconds to rebuild and run again, and a replay cut short says nothing
    with heavy_work(request):
        return Response(replay_record(record, data.get("explain")))


_EXPLAIN = OpenApiParameter(
    "explain", str, required=False, description="A job or pod (NAMESPACE/NAME): what the session decided about it."
)


class SessionReplayView(APIView):
    """Replay one recorded session: the same decisions as recorded (``identical``) or the differences; with
    ``explain``, what it decided about one job or pod and why."""

    permission_classes = [AdminsOnly]

    @extend_schema(
        tags=["replay"],
        operation_id="v1_sessions_replay_retrieve",
        parameters=[OpenApiParameter("cluster", str, required=False), _EXPLAIN],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, id: int, *args: Any, **kwargs: Any) -> Response:
        return _replay(request, id)


class SessionReplayAtView(APIView):
    """Replay the cluster's session in force at a moment (the last one that opened at or before it)."""

    permission_classes = [AdminsOnly]

    @extend_schema(
        tags=["replay"],
        operation_id="v1_sessions_replay_at_retrieve",
        parameters=[
            OpenApiParameter("at", OpenApiTypes.DATETIME, required=True),
            OpenApiParameter("cluster", str, required=False),
            _EXPLAIN,
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _replay(request, None)
