"""Slots for the expensive computations (simulate and what-if): at most ``FAIRWAY_MAX_CONCURRENT_SIMULATIONS`` at once
in the whole deployment, whatever the number of web processes and hosts. A request takes a slot without waiting or
gets none (the view answers 503 ``busy`` with ``Retry-After``), so no web thread ever queues behind another's
computation.

Where the slots are counted (``settings.FAIRWAY_SIMULATION_SLOTS``, ``FAIRWAY_SIMULATION_SLOTS``):

* **Redis** (a ``redis://`` URL; the default when the Celery broker is Redis): slot ``i`` is the key
  ``fairway:simulation-slot:<i>``, taken with redis-py's ``Lock`` (``SET NX PX`` with a random token; released by a
  script that deletes it only while the token is ours). Each is a lease of ``FAIRWAY_SIMULATION_LEASE_SECONDS``: a web
  process killed while it holds one frees it when the lease runs out. The lease must be longer than the request
  budget (``FAIRWAY_REQUEST_BUDGET_SECONDS``), which stops the computation in time; the settings refuse a shorter one.
* **the database** (``database``; the default on PostgreSQL when the broker is not Redis): slot ``i`` is the
  session-level advisory lock ``(SIMULATION_SLOT_LOCK, i)``, taken with ``pg_try_advisory_lock`` on a connection of the
  slot's own (not the request's, whose transaction and reuse must not decide when the slot frees), closed with the
  slot. A process that dies loses its connection and the server frees the lock with it; TCP keepalives on that
  connection (idle time: the lease) let the server notice a host that vanished without closing it.
* **the process** (``process``; the default on SQLite, whose embedded deployment runs one web process): a bounded
  semaphore of this process.

An unreachable Redis or database is ``SlotsUnavailable`` (the view answers 503 too: the computation is not run
uncounted).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from scheduling.locks import SIMULATION_SLOT_LOCK

log = logging.getLogger(__name__)

REDIS_KEY = "fairway:simulation-slot:{}"


class SlotsUnavailable(Exception):
    """The store that counts the slots (Redis, the database) cannot be reached."""


class Held(Protocol):
    def release(self) -> None: ...


class Slots(Protocol):
    def try_acquire(self) -> Held | None:
        """A slot, or ``None`` when every slot is taken (raises ``SlotsUnavailable``)."""
        ...


# -- Redis -------------------------------------------------------------------------------------------------------
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _redis_client(url: str) -> Any:
    import redis

    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        return client


class _RedisHeld:
    def __init__(self, lock: Any) -> None:
        self.lock = lock

    def release(self) -> None:
        import redis

        try:
            self.lock.release()
        except redis.exceptions.LockError:  # the lease ran out first (then the slot is free already)
            log.warning("simulation slot %s: its lease ran out before the computation ended", self.lock.name)
        except redis.exceptions.RedisError as exc:  # the lease frees it
            log.warning("simulation slot %s not released (%s); its lease frees it", self.lock.name, exc)


class RedisSlots:
    def __init__(self, url: str, count: int, lease_seconds: float) -> None:
        self.url, self.count, self.lease = url, count, lease_seconds

    def try_acquire(self) -> Held | None:
        import redis

        client = _redis_client(self.url)
        try:
            for i in range(self.count):
                lock = client.lock(REDIS_KEY.format(i), timeout=self.lease, blocking=False, thread_local=False)
                if lock.acquire(blocking=False):
                    return _RedisHeld(lock)
        except redis.exceptions.RedisError as exc:
            raise SlotsUnavailable(f"Redis cannot be reached ({exc})") from exc
        return None


# -- PostgreSQL advisory locks -----------------------------------------------------------------------------------
class _DatabaseHeld:
    def __init__(self, conn: Any, slot: int) -> None:
        self.conn, self.slot = conn, slot

    def release(self) -> None:
        try:
            with self.conn.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SIMULATION_SLOT_LOCK, self.slot])
        except DatabaseError as exc:  # closing the connection below frees it anyway
            log.warning("simulation slot %s not unlocked (%s); closing its connection frees it", self.slot, exc)
        finally:
            self.conn.close()


class DatabaseSlots:
    def __init__(self, count: int, lease_seconds: float, using: str = DEFAULT_DB_ALIAS) -> None:
        self.count, self.lease, self.using = count, lease_seconds, using

    def try_acquire(self) -> Held | None:
        conn = connections.create_connection(self.using)  # its own connection, in autocommit
        try:
            with conn.cursor() as cursor:
                idle = max(1, int(self.lease))
                cursor.execute(
                    "SELECT set_config('tcp_keepalives_idle', %s, false), "
                    "set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false)",
                    [str(idle)],
                )
                for i in range(self.count):
                    cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [SIMULATION_SLOT_LOCK, i])
                    (taken,) = cursor.fetchone()
                    if taken:
                        return _DatabaseHeld(conn, i)
        except DatabaseError as exc:
            conn.close()
            raise SlotsUnavailable(f"the database cannot be reached ({exc})") from exc
        conn.close()
        return None


# -- this process ------------------------------------------------------------------------------------------------
class _ProcessHeld:
    def __init__(self, semaphore: threading.BoundedSemaphore) -> None:
        self.semaphore = semaphore

    def release(self) -> None:
        self.semaphore.release()


class ProcessSlots:
    def __init__(self, count: int) -> None:
        self.semaphore = threading.BoundedSemaphore(count)

    def try_acquire(self) -> Held | None:
        return _ProcessHeld(self.semaphore) if self.semaphore.acquire(blocking=False) else None


_process: tuple[int, ProcessSlots] | None = None  # (the count it was made for, the slots)
_process_lock = threading.Lock()


def configured() -> Slots:
    """The slots the settings choose (read on every call: tests and a changed setting take effect at once)."""
    global _process
    where = str(settings.FAIRWAY_SIMULATION_SLOTS)
    limits = settings.FAIRWAY_LIMITS
    count, lease = limits.max_concurrent_simulations, limits.simulation_lease_seconds
    if where.startswith(("redis://", "rediss://", "unix://")):
        return RedisSlots(where, count, lease)
    if where == "database":
        return DatabaseSlots(count, lease)
    with _process_lock:
        if _process is None or _process[0] != count:
            _process = (count, ProcessSlots(count))
        return _process[1]


@contextmanager
def slot() -> Iterator[bool]:
    """Hold a slot for the block; yields whether one was free (``False``: every slot is taken, the block should
    answer busy at once). Raises ``SlotsUnavailable`` when the slots cannot be counted."""
    held = configured().try_acquire()
    try:
        yield held is not None
    finally:
        if held is not None:
            held.release()
