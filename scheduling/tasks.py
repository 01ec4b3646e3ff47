"""Celery tasks of the cluster: thin wrappers that take the cluster's lock and call one store / agent function.

Every task takes a cluster id (JSON-serialisable), is ``acks_late`` with explicit time limits, and takes its own
per-cluster lock (``scheduling/locks.py``: a PostgreSQL advisory transaction lock, a lease row on SQLite), so two
workers never run the same job on the same cluster at once; the loser returns ``"skipped"`` (a session also
leaves a ``skipped`` row). A session waits for its lock first, up to ``FAIRWAY_SESSION_LOCK_WAIT_SECONDS`` (1 s,
its beat's period, by default): the beat's next message, taken by another worker process while the previous session
still runs (a session longer than its period), runs as soon as that one commits instead of being skipped. A skipped
session therefore means a holder that ran past the period and the wait (or a stuck one), not one slow second. The
work is idempotent (compare-and-swap writes), so a task redelivered after a worker died simply runs again.
Results: ``"ran"``, ``"skipped"``, ``"failed"`` (recorded as a failed session row), ``"disabled"`` (simulation tasks
on a cluster that is not simulated) or ``"gone"`` (the cluster was deleted).

No automatic retries: each task runs again on its next beat a second later, which is the retry.

**Schedules** (``ensure_schedules``, called when a cluster is saved and by ``manage.py ensure_schedules``): one
django-celery-beat ``PeriodicTask`` per cluster and job, named ``"<cluster>: <job>"`` and editable in the admin
(interval, enabled). Defaults (``CLUSTER_SCHEDULES``): the session and the recycling every second, the simulated
agent every second and the workload generator every 2 s (enabled only while the cluster is ``simulated``), the
heartbeat check every 5 s, compaction every 10 min. Each entry's ``expire_seconds`` is below its period where
django-celery-beat's whole seconds allow it (period - 1), and 1 s for the 1-second jobs: a message older than
that is dropped by the worker instead of piling up behind a slow session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scheduling import agent, ownership, sessions, store
from scheduling.feed import affinity, standby
from scheduling.feed.mirror import prune_changes
from scheduling.locks import (
    AGENT_TICK_LOCK,
    COMPACTION_LOCK,
    NODE_CHECK_LOCK,
    RECYCLE_LOCK,
    SCHEDULING_SESSION_LOCK,
    WORKLOAD_LOCK,
    cluster_lock,
)
from scheduling.models import Cluster, SchedulingSession, SessionKind, SessionStatus
from security import records as security_records

__all__ = [
    "CLUSTER_SCHEDULES",
    "agent_tick",
    "check_nodes",
    "compact_records",
    "delete_schedules",
    "ensure_schedules",
    "generate_workload",
    "recycle",
    "run_session",
]

logger = logging.getLogger(__name__)

SESSION_TIME_LIMIT = 120
SHORT_TIME_LIMIT = 30
COMPACTION_TIME_LIMIT = 600


@dataclass(frozen=True)
class Schedule:
    task: str
    label: str
    every: int  # seconds
    simulated_only: bool = False

    @property
    def expire_seconds(self) -> int:
        return max(1, self.every - 1)


CLUSTER_SCHEDULES: tuple[Schedule, ...] = (
    Schedule("scheduling.tasks.run_session", "scheduling session", 1),
    Schedule("scheduling.tasks.recycle", "recycling", 1),
    Schedule("scheduling.tasks.check_nodes", "node heartbeat check", 5),
    Schedule("scheduling.tasks.compact_records", "record compaction", 600),
    Schedule("scheduling.tasks.agent_tick", "simulated agent", 1, simulated_only=True),
    Schedule("scheduling.tasks.generate_workload", "workload generator", 2, simulated_only=True),
)


def _cluster(cluster_id: int) -> Cluster | None:
    return Cluster.objects.filter(pk=cluster_id).first()


def _skipped(cluster: Cluster, what: str) -> str:
    logger.info("%s of cluster %s skipped: another worker holds its lock", what, cluster.name)
    return "skipped"


def _locked(
    cluster_id: int,
    lock: int,
    ttl: int,
    what: str,
    work: Callable[[Cluster], str],
    *,
    simulated_only: bool = False,
    on_skip: Callable[[Cluster], None] | None = None,
    wait: float = 0.0,
) -> str:
    """The common body of every task: find the cluster, take its lock for ``what``, run ``work`` under it.

    A cluster being deleted (``scheduling.ownership.delete_cluster`` holds every one of its locks until it commits) is
    ``"gone"``: the task that got its lock after the delete finds no row any more, and a skipped one waits for the
    delete before it records its skip (a record of a cluster that is no longer there could not commit). ``wait``:
    seconds to wait for a lock held elsewhere before skipping (``scheduling.locks``)."""
    cluster = _cluster(cluster_id)
    if cluster is None:
        return "gone"
    if simulated_only and not cluster.simulated:
        return "disabled"
    with cluster_lock(lock, cluster.pk, ttl=ttl, wait=wait) as acquired:
        if not acquired:
            if on_skip is not None:
                if not ownership.keep_cluster(cluster.pk):
                    return "gone"
                on_skip(cluster)
            return _skipped(cluster, what)
        if not Cluster.objects.filter(pk=cluster_id).exists():  # deleted before the lock was ours
            return "gone"
        return work(cluster)


_SHORT = {"acks_late": True, "time_limit": SHORT_TIME_LIMIT, "soft_time_limit": SHORT_TIME_LIMIT - 5}
_LONG = {"acks_late": True, "time_limit": SESSION_TIME_LIMIT, "soft_time_limit": SESSION_TIME_LIMIT - 20}


@shared_task(name="scheduling.tasks.run_session", **_LONG)
def run_session(cluster_id: int, forwarded: bool = False) -> str:
    """One scheduling session of the cluster: snapshot, engine, decisions committed (``store``). Sent on to the
    worker process whose copy of the cluster is current when that is another one (``scheduling.feed.affinity``;
    ``"forwarded"``), unless it was sent on already; this process then brings its standby copy of the cluster up to
    date (``scheduling.feed.standby``), as it does when another process holds the session's lock (``"skipped"``)."""
    if not forwarded:
        queue = affinity.warm_elsewhere(cluster_id)
        if queue is not None:
            run_session.apply_async((cluster_id,), {"forwarded": True}, queue=queue, expires=affinity.FORWARD_EXPIRES)
            _keep_warm(cluster_id)
            return "forwarded"
    affinity.hold_beacon()  # before the session records this process as the cluster's holder

    def work(cluster: Cluster) -> str:
        with standby.running_session(cluster.pk):
            session = sessions.run_scheduling_session(cluster)
        return "ran" if session.status == SessionStatus.OK else "failed"

    waited: list[float] = []

    def wait() -> float:  # asked only when another process holds the lock
        seconds = 0.0 if _outlasted_a_wait(cluster_id) else lock_wait()
        waited.append(seconds)
        return seconds

    def skipped(cluster: Cluster) -> None:
        why = ""  # FAIRWAY_SESSION_LOCK_WAIT_SECONDS=0: the plain sentence
        if waited and waited[0] > 0:
            why = f"another worker held this cluster's lock for the whole wait ({waited[0]:g} s)"
        elif lock_wait() > 0:
            why = "another worker still holds this cluster's lock, past an earlier session's wait"
        store.record_skipped(cluster.pk, SessionKind.SESSION, why=why)
        _keep_warm(cluster.pk)  # another process runs it (a holder slower than the window): keep up meanwhile

    return _locked(cluster_id, SCHEDULING_SESSION_LOCK, SESSION_TIME_LIMIT, "session", work, on_skip=skipped, wait=wait)


def lock_wait() -> float:
    """``FAIRWAY_SESSION_LOCK_WAIT_SECONDS``: how long a session waits for a lock that another process holds."""
    return float(settings.FAIRWAY["SESSION_LOCK_WAIT_SECONDS"])


def _outlasted_a_wait(cluster_id: int) -> bool:
    """Whether a session of the cluster was skipped since the last one that ran finished: the session holding the
    lock now has already outlasted a whole wait (or the lock is stuck), so another wait would only keep this worker
    process from its other tasks. Such a message is skipped at once until the holder ends (its row then finishes
    after those skipped ones, and the next message waits again)."""
    rows = SchedulingSession.objects.filter(cluster_id=cluster_id, kind=SessionKind.SESSION)
    last = (
        rows.exclude(status=SessionStatus.SKIPPED)
        .exclude(finished=None)
        .order_by("-started")
        .values_list("finished", flat=True)
        .first()
    )
    skipped = rows.filter(status=SessionStatus.SKIPPED)
    return (skipped if last is None else skipped.filter(started__gt=last)).exists()


def _keep_warm(cluster_id: int) -> None:
    """This process's standby copy of a cluster whose session it sent on (``scheduling.feed.standby``); a failure
    is logged, the copy dropped (its next use reads in full), and the message counts as sent on all the same."""
    if not standby.enabled():
        return
    cluster = _cluster(cluster_id)
    if cluster is None:
        return
    try:
        done = standby.keep_warm(cluster)
    except Exception:
        logger.exception("cluster %s: the standby copy could not be brought up to date", cluster.name)
        return
    if done:  # a full read is worth a line (a worker's first message for the cluster); a catch-up is not
        logger.log(
            logging.INFO if done.startswith("full") else logging.DEBUG, "cluster %s: standby copy: %s", cluster.pk, done
        )


@shared_task(name="scheduling.tasks.recycle", **_LONG)
def recycle(cluster_id: int) -> str:
    """One overuse-revoke pass (Koordinator's recycling) with its debounce state in the database."""

    def work(cluster: Cluster) -> str:
        session = sessions.run_recycle_pass(cluster)
        return "failed" if session is not None and session.status == SessionStatus.FAILED else "ran"

    return _locked(cluster_id, RECYCLE_LOCK, SESSION_TIME_LIMIT, "recycling", work)


@shared_task(name="scheduling.tasks.agent_tick", **_SHORT)
def agent_tick(cluster_id: int) -> str:
    """The simulated node agents of a simulated cluster: heartbeat, start, finish, confirm evictions."""

    def work(cluster: Cluster) -> str:
        agent.agent_tick(cluster, timezone.now())
        return "ran"

    return _locked(cluster_id, AGENT_TICK_LOCK, SHORT_TIME_LIMIT, "simulated agent", work, simulated_only=True)


@shared_task(name="scheduling.tasks.generate_workload", **_SHORT)
def generate_workload(cluster_id: int, seed: int = 0, ticks: int = 1) -> str:
    """Submit the demo teams' jobs to a simulated cluster (seeded), and collect finished ones; ``ticks`` plays
    several of the generator's 2-second beats at once."""

    def work(cluster: Cluster) -> str:
        agent.generate_workload(cluster, timezone.now(), seed=seed, ticks=max(1, min(int(ticks), 3600)))
        return "ran"

    return _locked(cluster_id, WORKLOAD_LOCK, SHORT_TIME_LIMIT, "workload generator", work, simulated_only=True)


@shared_task(name="scheduling.tasks.check_nodes", **_SHORT)
def check_nodes(cluster_id: int) -> str:
    """The node lifecycle: nodes that missed their heartbeats for longer than the cluster's timeout turn NotReady
    (not when the check itself could not run), pods of nodes NotReady beyond the pod eviction timeout are lost,
    and podgroups whose pods have all finished are Completed."""

    def work(cluster: Cluster) -> str:
        now = timezone.now()
        stale = agent.mark_stale_nodes(cluster, now)
        if stale:
            logger.warning("cluster %s: nodes turned NotReady (no heartbeat): %s", cluster.name, ", ".join(stale))
        agent.evict_lost_nodes(cluster, now)
        agent.complete_finished_podgroups(cluster, now)
        return "ran"

    return _locked(cluster_id, NODE_CHECK_LOCK, SHORT_TIME_LIMIT, "node heartbeat check", work)


@shared_task(
    name="scheduling.tasks.compact_records",
    acks_late=True,
    time_limit=COMPACTION_TIME_LIMIT,
    soft_time_limit=COMPACTION_TIME_LIMIT - 60,
)
def compact_records(cluster_id: int) -> str:
    """Thin the quota samples and drop old session rows (``store.compact_records``); prune the change feed
    (``mirror.prune_changes``) and the security log's rows past their retention (``security.records.prune``: not a
    cluster's, so every cluster's compaction deletes the same old rows, the first one finding them)."""

    def work(cluster: Cluster) -> str:
        store.compact_records(cluster, timezone.now())
        prune_changes(cluster)
        security_records.prune(timezone.now())
        return "ran"

    return _locked(cluster_id, COMPACTION_LOCK, COMPACTION_TIME_LIMIT, "compaction", work)


# -- schedules ------------------------------------------------------------------------------------------------


def _args(cluster_id: int) -> str:
    return json.dumps([cluster_id])


@transaction.atomic
def ensure_schedules(cluster: Cluster) -> list[Any]:
    """Create the cluster's periodic tasks if missing; keep the simulation ones enabled only while the cluster is
    simulated. An admin's edits (interval, expiry, enabled) of an existing entry are left alone otherwise."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    out = []
    for entry in CLUSTER_SCHEDULES:
        task = PeriodicTask.objects.filter(task=entry.task, args=_args(cluster.pk)).first()
        if task is None:
            interval, _ = IntervalSchedule.objects.get_or_create(every=entry.every, period=IntervalSchedule.SECONDS)
            name = f"{cluster.name}: {entry.label}"
            if PeriodicTask.objects.filter(name=name).exists():  # a renamed cluster's old name is taken
                name = f"{name} ({cluster.pk})"
            task = PeriodicTask.objects.create(
                name=name,
                task=entry.task,
                args=_args(cluster.pk),
                interval=interval,
                expire_seconds=entry.expire_seconds,
                enabled=cluster.simulated or not entry.simulated_only,
                description=f"Fairway: {entry.label} of cluster {cluster.name} every {entry.every} s",
            )
        elif entry.simulated_only and task.enabled != cluster.simulated:
            task.enabled = cluster.simulated
            task.save(update_fields=["enabled"])
        out.append(task)
    return out


def delete_schedules(cluster_id: int) -> int:
    """Remove a deleted cluster's periodic tasks; returns how many."""
    from django_celery_beat.models import PeriodicTask

    n = 0
    for entry in CLUSTER_SCHEDULES:
        n += PeriodicTask.objects.filter(task=entry.task, args=_args(cluster_id)).delete()[0]
    return n
