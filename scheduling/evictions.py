"""Evictions a team can read after the fact: the record of a removed job, how long evictions are kept, and which
evictions are a team's.

* **Whose an eviction was.** Each ``Eviction`` row keeps its job, queue and quota group by name
  (``Eviction.stamp_owners``, written with the row), so it still says whose it was once its pod and podgroup rows
  are deleted.
* **A removed job** (``remove_podgroups``): every deletion of podgroups by Fairway — the garbage collection of
  finished jobs, a delete through the API, a podgroup gone from its Kubernetes cluster — goes through here. In the
  deleting transaction it writes one ``RemovedJob`` per podgroup (its queue, the quota groups its pods counted
  against, its phase, when it was submitted and finished, the removal time and why), points the job's evictions at
  it, then deletes the podgroups (their pods go with them). The job's page reads that record once the podgroup is
  gone ("finished and removed at T").
* **Retention** (``expire``, from the periodic record compaction): a removed job and its evictions are kept
  ``FAIRWAY_EVICTION_RETENTION_DAYS`` (default 7) after the removal, then deleted together; an eviction whose pod
  is gone with no record of its job's removal (a pod deleted on its own, or rows from before removals were
  recorded) is kept that long after it happened. The evictions of a job that still exists are kept while it does.
* **A team's evictions** (``of_team``): those of the team's jobs as the team page counts them
  (``quotas.access.team_scope``): the evictions in its queues' subtrees, or, for a team without queues, those
  whose pods counted against its quota groups' subtrees.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, QuerySet

from engine.wording import duration as say_duration
from quotas.access import TeamScope
from scheduling import history
from scheduling.models import Cluster, Eviction, Pod, PodGroup, RemovalCause, RemovedJob

__all__ = ["expire", "gc_reason", "of_team", "remove_podgroups", "removed_job", "retention", "team_q"]

_CHUNK = 1000


def retention() -> timedelta:
    """How long the evictions of a removed job are kept after it went (``FAIRWAY_EVICTION_RETENTION_DAYS``)."""
    return timedelta(days=int(settings.FAIRWAY["EVICTION_RETENTION_DAYS"]))


def gc_reason(ttl_seconds: int) -> str:
    """Why the garbage collection removed a job, in a sentence."""
    return f"it had finished, and finished jobs are removed {say_duration(ttl_seconds)} after they finish"


def remove_podgroups(podgroups: QuerySet[PodGroup], now: datetime, cause: RemovalCause, reason: str) -> int:
    """Delete ``podgroups`` (their pods go with them), recording each as a ``RemovedJob`` removed at ``now`` for
    ``cause`` (``reason``: the sentence its page shows) and pointing its evictions at that record, in one
    transaction. Returns how many podgroups were deleted."""
    with transaction.atomic():
        rows = list(
            podgroups.order_by("id").values_list(
                "id",
                "cluster_id",
                "namespace__name",
                "name",
                "queue__name",
                "phase",
                "created",
                "namespace__quota_group__name",
            )
        )
        if not rows:
            return 0
        ids = [row[0] for row in rows]
        history.record_removed(ids)  # the job's history row (issue 29), kept longer than the podgroup
        groups: dict[int, set[str]] = {}
        finished: dict[int, datetime | None] = {}
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            for pg, group in (
                Pod.objects.filter(podgroup_id__in=chunk, quota_group__isnull=False)
                .values_list("podgroup_id", "quota_group__name")
                .distinct()
                .order_by()
            ):
                groups.setdefault(pg, set()).add(group)
            finished.update(
                Pod.objects.filter(podgroup_id__in=chunk)
                .values_list("podgroup_id")
                .annotate(last=Max("finished"))
                .order_by()
                .values_list("podgroup_id", "last")
            )
        records = RemovedJob.objects.bulk_create(
            RemovedJob(
                cluster_id=cluster_id,
                namespace=ns,
                name=name,
                queue=queue,
                quota_groups=sorted(groups.get(pk) or ({ns_group} if ns_group else set())),
                phase=phase,
                submitted=created,
                finished=finished.get(pk),
                removed_at=now,
                cause=cause,
                reason=reason,
            )
            for pk, cluster_id, ns, name, queue, phase, created, ns_group in rows
        )
        record_of = {row[0]: record.pk for row, record in zip(rows, records, strict=True)}
        _attach_evictions(rows, record_of)
        deleted = 0
        for i in range(0, len(ids), _CHUNK):
            deleted += PodGroup.objects.filter(pk__in=ids[i : i + _CHUNK]).delete()[1].get(PodGroup._meta.label, 0)
        return deleted


def _attach_evictions(rows: list[tuple[Any, ...]], record_of: dict[int, int]) -> None:
    """Point the evictions of each removed podgroup at its record: those of its pods, and those of pods deleted
    before it that name it (same cluster, namespace and job, not yet attached to an earlier removal)."""
    by_record: dict[int, list[int]] = {}
    ids = [row[0] for row in rows]
    for i in range(0, len(ids), _CHUNK):
        for eviction, pg in Eviction.objects.filter(pod__podgroup_id__in=ids[i : i + _CHUNK]).values_list(
            "id", "pod__podgroup_id"
        ):
            by_record.setdefault(record_of[pg], []).append(eviction)
    by_name = {(cluster_id, ns, name): record_of[pk] for pk, cluster_id, ns, name, *_ in rows}
    orphans = Eviction.objects.filter(
        cluster_id__in={key[0] for key in by_name},
        namespace__in={key[1] for key in by_name},
        job__in={key[2] for key in by_name},
        pod__isnull=True,
        removed_job__isnull=True,
    ).values_list("id", "cluster_id", "namespace", "job")
    for eviction, *key in orphans:
        record = by_name.get(tuple(key))  # type: ignore[arg-type]
        if record is not None:
            by_record.setdefault(record, []).append(eviction)
    for record, evictions in by_record.items():
        if evictions:
            Eviction.objects.filter(pk__in=evictions).update(removed_job_id=record)


def expire(cluster: Cluster, now: datetime, keep: timedelta | None = None) -> dict[str, int]:
    """Delete the removed jobs of ``cluster`` removed more than ``keep`` (default :func:`retention`) before
    ``now``, with their evictions, and the evictions whose pod is gone with no record of its job, older than that.
    Returns how many of each were deleted."""
    cutoff = now - (retention() if keep is None else keep)
    _, jobs = RemovedJob.objects.filter(cluster=cluster, removed_at__lt=cutoff).delete()
    orphans, _ = Eviction.objects.filter(
        cluster=cluster, pod__isnull=True, removed_job__isnull=True, created__lt=cutoff
    ).delete()
    return {
        "removed_jobs": jobs.get(RemovedJob._meta.label, 0),
        "evictions": jobs.get(Eviction._meta.label, 0) + orphans,
    }


def team_q(scope: TeamScope) -> Q:
    """The evictions of a team's jobs (``quotas.access.team_scope``): by queue, or by quota group for a team
    without queues; none for a team that owns no tree node."""
    if not scope.names:
        return Q(pk__in=[])
    field = "queue__in" if scope.kind == "queue" else "quota_group__in"
    return Q(**{field: sorted(scope.names)})


def of_team(cluster: Cluster | None, scope: TeamScope) -> QuerySet[Eviction]:
    """The team's evictions in ``cluster``, newest first."""
    if cluster is None:
        return Eviction.objects.none()
    return Eviction.objects.filter(team_q(scope), cluster=cluster).order_by("-created", "-id")


def removed_job(cluster: Cluster | None, namespace: str, name: str) -> RemovedJob | None:
    """The latest record of the removal of the job ``namespace/name`` of ``cluster``, or None."""
    if cluster is None:
        return None
    return (
        RemovedJob.objects.filter(cluster=cluster, namespace=namespace, name=name)
        .order_by("-removed_at", "-id")
        .first()
    )
