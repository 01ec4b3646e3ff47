"""A team's evictions for its page, and the page of a removed job: rows with times and reasons as people read them.

The evictions are the scheduler's records (``scheduling.evictions``); which are a team's is the team page's own
definition of its jobs (``quotas.access.team_scope``), so the list, the API's ``?team=`` and ``fairway eviction
list --team`` agree. The list is capped (``TEAM_EVICTION_ROWS``, newest first); the rest are one link away in the
API, and the CLI command that lists them all is printed beside it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone

from engine.wording import EVICTED, duration, plural
from frontend.presenters.job_page import RULES
from frontend.presenters.links import job_url
from quotas.access import TeamScope
from scheduling.evictions import of_team, retention
from scheduling.models import Cluster, Eviction, RemovalCause, RemovedJob

TEAM_EVICTION_ROWS = 25
REMOVED_WORDS = {
    RemovalCause.GARBAGE_COLLECTED: "finished and removed",
    RemovalCause.DELETED: "deleted",
    RemovalCause.KUBERNETES: "removed with its Kubernetes PodGroup",
}


def ago(moment: datetime, now: datetime) -> str:
    """How long ago ``moment`` was, as a person says it ("4 min ago")."""
    return f"{duration((now - moment).total_seconds())} ago"


def eviction_row(e: Eviction, now: datetime, can_open: Any) -> dict[str, Any]:
    """One eviction for a table: when (and how long ago), the job (linked when ``can_open(e)``), pod, node, what
    happened in words, the rule that allowed it and the scheduler's sentence with its numbers."""
    removed = e.removed_job
    job = f"{e.namespace}/{e.job}" if e.job else ""
    return {
        "created": e.created,
        "ago": ago(e.created, now),
        "job": job,
        "job_url": job_url(e.namespace, e.job) if job and can_open(e) else "",
        "job_removed_at": removed.removed_at if removed is not None else None,
        "job_removed": REMOVED_WORDS.get(removed.cause, "removed") if removed is not None else "",
        "queue": e.queue,
        "pod": e.pod_uid.partition("/")[2] or e.pod_uid,
        "node": e.node,
        "action": e.action,
        "what": EVICTED.get(e.action, e.action),
        "rule": RULES.get(e.action, ""),
        "message": e.message,
    }


def team_evictions(
    cluster: Cluster | None,
    team: str,
    scope: TeamScope,
    can_open: Any,
    *,
    limit: int = TEAM_EVICTION_ROWS,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The team's evictions in ``cluster``, newest first, ``limit`` at most, with their total, the API address
    that lists all of them and the CLI command that prints them (two queries)."""
    now = now or timezone.now()
    qs = of_team(cluster, scope)
    rows = list(qs.select_related("removed_job")[:limit])
    total = len(rows) if len(rows) < limit else qs.count()
    params = {"team": team, **({"cluster": cluster.name} if cluster is not None else {})}
    return {
        "evictions": [eviction_row(e, now, can_open) for e in rows],
        "evictions_total": total,
        "evictions_more": max(0, total - len(rows)),
        "evictions_api": f"{reverse('eviction-list', kwargs={'version': 'v1'})}?{urlencode(params)}",
        "evictions_cli": f"fairway eviction list --team {team}"
        + (f" --cluster {cluster.name}" if cluster is not None else ""),
        "evictions_kept": plural(retention().days, "day"),
    }


def removed_job_view(record: RemovedJob, can_open: Any, now: datetime | None = None) -> dict[str, Any]:
    """The page of a removed job: what it was, when and why it was removed, and its evictions (newest first)."""
    now = now or timezone.now()
    evictions = list(record.evictions.select_related("removed_job").order_by("-created", "-id"))
    headline = REMOVED_WORDS.get(record.cause, "removed")
    return {
        "record": record,
        "headline": headline,
        "removed_ago": ago(record.removed_at, now),
        "kept_until": record.removed_at + retention(),
        "evictions": [eviction_row(e, now, can_open) for e in evictions],
        "quota_groups": ", ".join(record.quota_groups),
    }


def may_open(queues: set[str] | None, groups: set[str] | None) -> Any:
    """``can_open(eviction)``: whether the user may open the eviction's job page (admins: all; a team member the
    jobs of its queues and those counted against its quota groups, as the job page decides)."""

    def can_open(e: Eviction) -> bool:
        return queues is None or e.queue in queues or groups is None or e.quota_group in groups

    return can_open
