"""The records' retention (quota samples thinned, old sessions and removed jobs' rows dropped) and reading a
recorded session's decisions back."""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import RowNumber, TruncHour, TruncMinute

from scheduling.evictions import expire as expire_evictions
from scheduling.history import prune as prune_job_history
from scheduling.models import (
    Cluster,
    QuotaSample,
    SchedulingSession,
    SessionStatus,
)
from scheduling.recording import prune as prune_session_records
from scheduling.store.db import split_uid

logger = logging.getLogger(__name__)


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
    """Thin the quota samples (full resolution for an hour, then one per minute, then one per hour after a day, none
    past ``FAIRWAY_SAMPLE_RETENTION_DAYS``),
    drop old session rows (skipped or empty ones after an hour, every one after a week), the job history past
    ``FAIRWAY_JOB_HISTORY_DAYS``, the sessions' recorded inputs past ``FAIRWAY_SESSION_RECORD_RETENTION_HOURS``
    (``scheduling.recording.prune``: a chain of records as a whole), and the removed jobs and
    evictions past their retention (``scheduling.evictions.expire``)."""
    minute_cut, hour_cut = now - SAMPLE_FULL_RESOLUTION, now - SAMPLE_MINUTE_RESOLUTION
    samples = QuotaSample.objects.filter(cluster=cluster)
    retention = timedelta(days=int(settings.FAIRWAY["SAMPLE_RETENTION_DAYS"]))
    expired_samples = samples.filter(time__lt=now - retention)._raw_delete(QuotaSample.objects.db)
    by_minute = _thin(samples.filter(time__lt=minute_cut, time__gte=hour_cut), TruncMinute("time"))
    by_hour = _thin(samples.filter(time__lt=hour_cut), TruncHour("time"))
    sessions = SchedulingSession.objects.filter(cluster=cluster)
    empty = Q(status=SessionStatus.SKIPPED) | Q(status=SessionStatus.OK, bound=0, pipelined=0, evicted=0)
    dropped, _ = sessions.filter(empty, started__lt=now - EMPTY_SESSION_RETENTION).delete()
    old, _ = sessions.filter(started__lt=now - SESSION_RETENTION).delete()
    expired = expire_evictions(cluster, now)
    job_records = prune_job_history(cluster, now)
    session_records = prune_session_records(cluster, now)
    return {
        "job_records": job_records,
        "session_records": session_records,
        "samples_by_minute": by_minute,
        "samples_by_hour": by_hour,
        "samples_expired": expired_samples,
        "sessions": dropped + old,
        "removed_jobs": expired["removed_jobs"],
        "evictions": expired["evictions"],
    }


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
        return namespaces is None or split_uid(uid)[0] in namespaces

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
