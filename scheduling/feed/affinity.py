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
the cluster: the next process that receives its session runs it (from its standby copy, or reading in full) and
holds it from then on. A
forwarded message expires like the beat's (``FORWARD_EXPIRES``), so sessions sent to a process that just died are
dropped, not piled up; at most ``window()`` seconds of a cluster's sessions are lost that way.

On PostgreSQL a process that died does not hold its clusters for the window: each process with a queue of its own
holds a beacon (``hold_beacon``), a session-level advisory lock keyed by its queue on a connection of its own, taken
before its first session commits and held for the process's life. The server frees it the moment the process's
connection closes (a crash, SIGKILL, a stop), so a process that receives a cluster's session whose holder's beacon is
free (``alive``) runs it at once: the takeover waits for the next beat's message, not for the window. The window
still decides for a holder that is alive but ran none of the cluster's sessions for that long (stuck, or its host
gone without closing its connection: the beacon's TCP keepalives notice that after about the window), and on other
databases. The process that takes over starts from its standby copy of the cluster when it kept one
(``scheduling.feed.standby``).

The embedded broker (``make run``'s filesystem transport, one worker process) has no queue per process: affinity is
off there, as in any process without a queue of its own.
"""

from __future__ import annotations

import logging
import os
import threading
import zlib
from datetime import timedelta
from typing import Any

from celery import signals

from core.locks import WORKER_BEACON_LOCK

__all__ = ["ENV", "FORWARD_EXPIRES", "alive", "hold_beacon", "own_queue", "queue_of", "warm_elsewhere", "window"]

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
    if not alive(str(queue)):
        return None
    return str(queue)


# -- the beacon: a process's advisory lock, held while it lives (PostgreSQL) -------------------------------------

_beacon_guard = threading.Lock()
_beacon: dict[str, Any] = {}  # queue -> the connection holding its beacon, in this process


def _beacon_key(queue: str) -> int:
    """The beacon's second int4: the queue's name hashed (CRC-32, made non-negative)."""
    return zlib.crc32(queue.encode()) & 0x7FFF_FFFF


def _on_postgresql() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


def hold_beacon() -> bool:
    """Hold this process's beacon (taken on first call, checked on each later one: a connection lost is made again);
    True when held. Nothing (False) without a queue of its own or off PostgreSQL."""
    queue = own_queue()
    if not queue or not _on_postgresql():
        return False
    from django.db import DEFAULT_DB_ALIAS, Error, connections

    with _beacon_guard:
        conn = _beacon.pop(queue, None)
        # (``conn.connection`` first: Django would open a new connection, without the lock, for a closed one)
        if conn is not None and conn.connection is not None and not conn.connection.closed:
            try:
                with conn.cursor() as cursor:
                    cursor.execute("SELECT 1")
                _beacon[queue] = conn
                return True
            except Error:
                pass  # lost with its connection: taken again below
        if conn is not None:
            conn.close()
        conn = connections.create_connection(DEFAULT_DB_ALIAS)  # its own connection, in autocommit
        try:
            with conn.cursor() as cursor:
                # a host gone without closing the connection is noticed after about the window
                idle = max(1, int(window()))
                cursor.execute(
                    "SELECT set_config('tcp_keepalives_idle', %s, false), "
                    "set_config('tcp_keepalives_interval', '1', false), set_config('tcp_keepalives_count', '2', false)",
                    [str(idle)],
                )
                cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [WORKER_BEACON_LOCK, _beacon_key(queue)])
                (taken,) = cursor.fetchone()
        except Error as exc:
            conn.close()
            logger.warning("session affinity: this worker's beacon could not be taken (%s)", exc)
            return False
        if not taken:
            conn.close()
            logger.warning(
                "session affinity: another live process holds the beacon of %s (two workers, one name?)", queue
            )
            return False
        _beacon[queue] = conn
        return True


def alive(queue: str) -> bool:
    """Whether the process of ``queue`` holds its beacon (PostgreSQL; elsewhere True: the window alone decides)."""
    if not _on_postgresql():
        return True
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
            "AND classid = %s AND objid = %s AND database = (SELECT oid FROM pg_database WHERE datname = "
            "current_database()))",
            [WORKER_BEACON_LOCK, _beacon_key(queue)],
        )
        (held,) = cursor.fetchone()
    return bool(held)
