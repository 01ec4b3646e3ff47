"""Session affinity: a cluster's sessions go to the worker process that ran its last one.

A worker process keeps each cluster's snapshot in memory between sessions (``scheduling.feed.mirror``); a session run by
another process reads the whole cluster instead (0.35 s at 1,000 nodes, more with a cold engine). The beat's
message goes to whichever worker is free, so with several worker processes about half of the sessions were cold.

Here, a worker process that keeps one memory for all its tasks (the solo or threads pool, or prefork with one child;
prefork's children each keep their own, and one queue cannot name a child) consumes a queue of its own besides the
shared ones (``fairway.session.<node name>``, added when the worker starts). The session's transaction records that
queue and the time in ``ClusterFeed`` (``last_queue``, ``last_session_at``). A process that receives a cluster's
session while another process ran its last one less than ``window()`` seconds ago sends the message on to that
process's queue (once: a forwarded message runs wherever it lands) and returns ``"forwarded"``. A worker that
stopped, or fell so far behind that it ran none of the cluster's sessions for ``window()`` seconds, no longer holds
the cluster: the next process that receives its session runs it, reading in full, and holds it from then on. A
forwarded message expires like the beat's (``FORWARD_EXPIRES``), so sessions sent to a process that just died are
dropped, not piled up; at most ``window()`` seconds of a cluster's sessions are lost that way.

The embedded broker (``make run``'s filesystem transport, one worker process) has no queue per process: affinity is
off there, as in any process without a queue of its own.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from celery import signals

__all__ = ["ENV", "FORWARD_EXPIRES", "own_queue", "queue_of", "warm_elsewhere", "window"]

logger = logging.getLogger(__name__)

ENV = "FAIRWAY_SESSION_QUEUE"  # this process's own queue (set in the worker's main process, inherited by its child)
FORWARD_EXPIRES = 1.0  # seconds, as the beat's one-second messages


def window() -> float:
    """Seconds: a process that ran a cluster's session that recently still holds the cluster
    (``FAIRWAY_AFFINITY_WINDOW_SECONDS``, 3 by default: three of beat's one-second periods)."""
    from django.conf import settings

    return float(settings.FAIRWAY["AFFINITY_WINDOW_SECONDS"])


def queue_of(nodename: str) -> str:
    return f"fairway.session.{nodename}"


def own_queue() -> str:
    """This process's own queue, or "" when it has none (affinity off)."""
    return os.environ.get(ENV, "")


def _one_memory(worker: Any) -> bool:
    """Whether every task of ``worker`` runs in one process's memory."""
    module = getattr(worker.pool_cls, "__module__", "")
    return not module.endswith(".prefork") or int(worker.concurrency or 0) == 1


def _routed_queues_only(worker: Any) -> bool:
    """Whether ``worker`` consumes only the queues that ``CELERY_TASK_ROUTES`` sends other tasks to (``replay``, ...):
    no session reaches it, so it needs no queue of its own."""
    routes = worker.app.conf.task_routes or {}
    routed = {r["queue"] for r in routes.values() if isinstance(r, dict) and "queue" in r}
    consumed = set(worker.app.amqp.queues.consume_from)
    return bool(consumed) and consumed <= routed


@signals.celeryd_after_setup.connect
def _consume_own_queue(sender: str, instance: Any, **_: Any) -> None:
    if not _one_memory(instance):
        logger.info("session affinity off: the %s pool's children each keep their own copies", "prefork")
        return
    if str(instance.app.conf.broker_url or "").startswith("filesystem"):
        return
    if _routed_queues_only(instance):
        return  # the replay worker (or another of routed tasks only): it runs no session
    name = queue_of(sender)
    instance.app.amqp.queues.select_add(name)
    os.environ[ENV] = name
    logger.info("session affinity: this worker also consumes %s", name)


def warm_elsewhere(cluster_id: int) -> str | None:
    """The queue of the process that holds the cluster's copy, when that is another live process; else None."""
    mine = own_queue()
    if not mine:
        return None
    from django.utils import timezone

    from scheduling.models import ClusterFeed

    row = ClusterFeed.objects.filter(cluster_id=cluster_id).values_list("last_queue", "last_session_at").first()
    if row is None:
        return None
    queue, at = row
    if not queue or queue == mine or at is None or at < timezone.now() - timedelta(seconds=window()):
        return None
    return str(queue)
