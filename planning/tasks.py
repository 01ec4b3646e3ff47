"""Celery tasks of planning: the replay of a cluster's recent window (``planning.replay.execute``), on a queue of its
own (``replay``, ``CELERY_TASK_ROUTES``) that only the replay worker consumes: a replay takes minutes of CPU and must
never hold up the scheduling sessions."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

__all__ = ["ESTIMATES_QUEUE", "REPLAY_QUEUE", "WALL_PER_CPU", "estimate_starts", "run_replay"]

REPLAY_QUEUE = "replay"

_LIMIT = float(settings.FAIRWAY["REPLAY_TIME_LIMIT_SECONDS"])


@shared_task(
    name="planning.tasks.run_replay",
    acks_late=True,
    soft_time_limit=_LIMIT,
    time_limit=_LIMIT + 30,
)
def run_replay(run_id: int) -> str:
    """Run one ``ReplayRun``: ``"done"``, ``"failed"``, ``"cancelled"`` or ``"gone"`` (the row was deleted)."""
    from planning import replay

    return replay.execute(run_id)


ESTIMATES_QUEUE = "estimates"
# A round stops at its budget of CPU time, or at this many times that budget of wall-clock time when the worker gets
# less than half a core (``planning.estimates.budget_clock``): on a loaded machine it writes what its draws found
# instead of running into this task's time limit and writing nothing.
WALL_PER_CPU = 2.0
# the budget's wall-clock bound, then reading and writing
_ESTIMATE_LIMIT = WALL_PER_CPU * float(settings.FAIRWAY["START_ESTIMATE_BUDGET_SECONDS"]) + 60


@shared_task(
    name="planning.tasks.estimate_starts",
    acks_late=True,
    soft_time_limit=_ESTIMATE_LIMIT,
    time_limit=_ESTIMATE_LIMIT + 30,
)
def estimate_starts(cluster_id: int) -> str:
    """A round of start estimates of the cluster's waiting jobs (``planning.estimates.refresh``), on the ``estimates``
    queue: ``"ran"``, or ``"gone"`` (the cluster was deleted)."""
    from planning import estimates
    from scheduling.models import Cluster

    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return "gone"
    estimates.refresh(cluster)
    return "ran"
