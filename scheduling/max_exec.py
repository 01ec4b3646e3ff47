"""Kueue's maximum execution time: a Kueue Job, JobSet, Kubeflow job or MPIJob, a Kueue pod group or a plain pod
Kueue manages, labelled ``kueue.x-k8s.io/max-exec-time-seconds: "N"`` (a pod group: on its pods), that has been
admitted (Inqueue, Running or Unknown) for N seconds in all is suspended, as Kueue deactivates such a workload
(``MaximumExecutionTimeExceeded``): its pods that hold a node are evicted, no session admits or places it again, and a
person resumes it (the job action) to give it a new N. A Job's pods go, as its Job is suspended again; a pod group's
or plain pod's go all, placed or not (a pod has no suspend: the adapter deletes each, as Kueue stops every pod of such
a workload that is not gated).

The time admitted is read from the job's history (``PodGroupReason``: a row each time its phase or reason changed),
since the last time a person resumed it (Kueue clears the accumulated time when a workload is reactivated): the
intervals it spent in an admitted phase, the current one up to ``now`` included, as Kueue adds a workload's past
admissions (``accumulatedPastExecutionTimeSeconds``) to the current one. Read live: the label is on the cluster's
objects (``engine.manifests.common.max_exec``), kept with the job's row (``PodGroup.kueue_max_exec_seconds``); the
Kubernetes adapter checks each pass (``scheduling.kube.mirror_out.Sender.enforce_max_exec_time``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from engine.vocabulary import PodGroupPhase
from engine.wording import duration
from scheduling import job_actions
from scheduling.models import PodGroup, PodGroupReason

REASON = "MaximumExecutionTimeExceeded"  # Kueue's
_BY = f"Fairway ({REASON}"  # how a suspension by this rule starts its ``suspended_by``
_ADMITTED = (PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN)


def admitted_seconds(history: Iterable[tuple[datetime, str, str]], phase: str, now: datetime) -> float:
    """The seconds a job spent admitted: ``history`` its (time, phase, reason) rows oldest first, ``phase`` its phase
    now. Counted from the last row a person's resume wrote (``job_actions.RESUMED``), if any."""
    total, since = 0.0, None
    for time, row_phase, reason in history:
        if reason == job_actions.RESUMED:
            total, since = 0.0, None
            continue
        if row_phase in _ADMITTED and since is None:
            since = time
        elif row_phase not in _ADMITTED and since is not None:
            total += (time - since).total_seconds()
            since = None
    if since is not None and phase in _ADMITTED:
        total += max(0.0, (now - since).total_seconds())
    return total


def budget(pg: PodGroup, now: datetime) -> dict[str, Any] | None:
    """A job's maximum execution time as its team reads it (the job page, ``fairway job why``, the why endpoint):
    ``limit_seconds``, ``admitted_seconds`` (since the last resume), ``left_seconds`` (0 once used up) and ``text``
    (*12 min of its 1 h admitted, 48 min left*); None for a job without one."""
    limit = pg.kueue_max_exec_seconds
    if limit is None:
        return None
    rows = PodGroupReason.objects.filter(podgroup=pg).order_by("time", "id").values_list("time", "phase", "reason")
    used = admitted_seconds(rows, pg.phase, now)
    left = max(0.0, limit - used)
    text = f"{duration(used)} of its {duration(limit)} admitted, {duration(left)} left"
    if pg.suspended_at is not None and pg.suspended_by and pg.suspended_by.startswith(_BY):
        text = f"used up: suspended at {pg.suspended_at:%H:%M:%S} UTC ({REASON}); a resume gives it {duration(limit)}"
    elif pg.phase not in _ADMITTED:
        text += " (counted while admitted)"
    return {"limit_seconds": limit, "admitted_seconds": round(used, 1), "left_seconds": round(left, 1), "text": text}


def overdue(cluster_id: int, now: datetime) -> list[tuple[PodGroup, int, float]]:
    """The cluster's admitted jobs with a maximum execution time that have used it up: (job, its maximum, the
    seconds admitted)."""
    rows = PodGroup.objects.filter(
        cluster_id=cluster_id,
        phase__in=_ADMITTED,
        suspended_at=None,
        deletion_requested_at=None,
        kueue_max_exec_seconds__isnull=False,
    ).select_related("cluster", "namespace", "queue")
    limited = [(pg, pg.kueue_max_exec_seconds) for pg in rows]
    histories: dict[int, list[tuple[datetime, str, str]]] = {pg.pk: [] for pg, _ in limited}
    reasons = PodGroupReason.objects.filter(podgroup_id__in=histories).order_by("podgroup_id", "time", "id")
    for podgroup_id, time, phase, reason in reasons.values_list("podgroup_id", "time", "phase", "reason"):
        histories[podgroup_id].append((time, phase, reason))  # every job's history in one query
    out = []
    for pg, limit in limited:
        used = admitted_seconds(histories[pg.pk], pg.phase, now)
        if used >= limit:
            out.append((pg, limit, used))
    return out


def enforce(cluster_id: int, now: datetime) -> list[Any]:
    """Suspend the jobs ``overdue`` finds, each as a job action by Fairway naming the rule; returns what each
    action did (``job_actions.Done``). A job that is suspended, completed or deleted meanwhile is left."""
    done = []
    for pg, limit, used in overdue(cluster_id, now):
        by = f"{_BY}: admitted {used:,.0f} s of its maximum execution time of {limit:,} s)"
        try:
            # a pod group or plain pod (no Job to suspend): Kueue stops every pod of it that is not gated, deleting it
            done.append(job_actions.suspend(pg, None, now, by=by[:150], every=pg.kueue_job is None))
        except job_actions.JobActionRefused:
            continue
    return done
