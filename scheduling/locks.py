"""One leader per cluster: the locks that keep two workers from running the same periodic job at once.

**PostgreSQL** (production and tests): ``pg_try_advisory_xact_lock(key, cluster_id)``, the two-integer form,
with ``key`` one of the named constants below. The lock belongs to the transaction that the context manager
opens: it is released at COMMIT or ROLLBACK, and when a worker dies mid-session its connection drops and the
server releases the lock with it, so a crashed worker can never leave a cluster locked (stack.md §3, verified).
The work done under the lock commits in that same transaction.

**SQLite** (the embedded default) has no advisory locks, and ``select_for_update`` is a no-op there, so the
fallback is a lease row (``ClusterLease``) taken by compare-and-swap in its own short transaction::

    UPDATE lease SET owner = <me>, expires = now + ttl WHERE cluster = c AND key = k AND (expires IS NULL
    OR expires < now)

One updated row means the lease is ours; it is released (``expires = NULL``) when the work ends, and a worker
that dies while holding it loses it when ``ttl`` passes (the task's time limit). The work itself then runs in a
transaction of its own (SQLite serialises writers anyway).

**Waiting** (``wait`` seconds; 0, the default, does not wait): the scheduling session waits for its lock up to
``FAIRWAY_SESSION_LOCK_WAIT_SECONDS`` (``scheduling.tasks.run_session``), so that a message arriving while the
previous session still runs queues behind it instead of being skipped. On PostgreSQL the wait is the server's
own: ``pg_advisory_xact_lock`` under ``SET LOCAL lock_timeout`` in a savepoint, granted the moment the holder's
transaction ends (or its connection drops: a dead holder's waiter runs at once), and given up at the timeout (the
savepoint rolls back, ``lock_timeout`` is restored for the work). On SQLite the lease row is tried again every
``FAIRWAY_SESSION_LOCK_POLL_SECONDS`` until the wait has passed; a dead holder's lease frees at its ``ttl``, so a
waiter there gives up first. (A holder's work transaction also holds SQLite's one write lock, ``IMMEDIATE``: a
waiter's try of the lease waits for that commit in SQLite's busy timeout first, as every writer there does; the
polling covers the moment between the holder's commit and its release of the lease.) Either way the waiter holds
nothing while it waits. ``wait`` may be a function, asked only when the lock is found held (what it reads costs
nothing while nobody else holds the lock).

Usage (the body always runs inside ``transaction.atomic()`` when the lock was acquired)::

    with cluster_lock(SCHEDULING_SESSION_LOCK, cluster.pk, ttl=300, wait=1.0) as acquired:
        if not acquired:
            return "skipped"
        ...
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, OperationalError, connections, transaction
from django.db.models import Q
from django.utils import timezone

from core.locks import (
    AGENT_TICK_LOCK,
    CLUSTER_LOCK_NAMES,
    COMPACTION_LOCK,
    NODE_CHECK_LOCK,
    RECYCLE_LOCK,
    SCHEDULING_SESSION_LOCK,
    SIMULATION_SLOT_LOCK,
    WORKLOAD_LOCK,
)

__all__ = [
    "AGENT_TICK_LOCK",
    "COMPACTION_LOCK",
    "LOCK_NAMES",
    "NODE_CHECK_LOCK",
    "RECYCLE_LOCK",
    "SCHEDULING_SESSION_LOCK",
    "SIMULATION_SLOT_LOCK",
    "WORKLOAD_LOCK",
    "cluster_lock",
    "uses_advisory_locks",
]

# The keys live with every other app's in one table (core.locks); LOCK_NAMES: a cluster's locks, in the order
# deleting the cluster takes them.
LOCK_NAMES = CLUSTER_LOCK_NAMES


def uses_advisory_locks(using: str = DEFAULT_DB_ALIAS) -> bool:
    """True on PostgreSQL (advisory locks); False elsewhere (the lease fallback)."""
    return connections[using].vendor == "postgresql"


@contextmanager
def cluster_lock(
    key: int,
    cluster_id: int,
    *,
    ttl: float = 300.0,
    wait: float | Callable[[], float] = 0.0,
    using: str = DEFAULT_DB_ALIAS,
) -> Iterator[bool]:
    """Take lock ``key`` for ``cluster_id``, waiting up to ``wait`` seconds for its holder (0: not at all); yield
    whether it was taken.

    When taken, the body runs inside ``transaction.atomic()`` and the lock is released when that transaction
    ends. ``ttl`` (seconds) bounds how long a dead holder keeps the SQLite lease; PostgreSQL needs none.
    """
    if uses_advisory_locks(using):
        with transaction.atomic(using=using):
            yield _advisory_lock(key, cluster_id, wait, using)
        return
    owner = uuid.uuid4().hex
    if not _wait_for_lease(key, cluster_id, owner, ttl, wait, using):
        yield False
        return
    try:
        with transaction.atomic(using=using):
            yield True
    finally:
        _release_lease(key, cluster_id, owner, using)


_LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for a lock wait that reached lock_timeout


def _seconds(wait: float | Callable[[], float]) -> float:
    return float(wait()) if callable(wait) else float(wait)


def _advisory_lock(key: int, cluster_id: int, wait: float | Callable[[], float], using: str) -> bool:
    """The transaction's advisory lock (inside the caller's ``atomic``): tried at once, then, when held elsewhere and
    ``wait`` is above 0, waited for under ``lock_timeout`` in a savepoint."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [key, cluster_id])
        (acquired,) = cursor.fetchone()
        if acquired:
            return True
        seconds = _seconds(wait)
        if seconds <= 0:
            return False
        cursor.execute("SELECT current_setting('lock_timeout')")
        (previous,) = cursor.fetchone()
        try:
            with transaction.atomic(using=using):  # a timeout rolls back to here, its SET LOCAL with it
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{max(1, round(seconds * 1000))}ms"])
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [key, cluster_id])
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                raise
            return False
        # taken: the work that follows waits for its row locks as it would have without this
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])
        return True


def _wait_for_lease(
    key: int, cluster_id: int, owner: str, ttl: float, wait: float | Callable[[], float], using: str
) -> bool:
    """The SQLite lease, tried again every ``FAIRWAY_SESSION_LOCK_POLL_SECONDS`` until ``wait`` has passed."""
    if _take_lease(key, cluster_id, owner, ttl, using):
        return True
    deadline = _clock() + _seconds(wait)
    while (left := deadline - _clock()) > 0:
        _pause(min(float(settings.FAIRWAY["SESSION_LOCK_POLL_SECONDS"]), left))
        if _take_lease(key, cluster_id, owner, ttl, using):
            return True
    return False


def _clock() -> float:
    return time.monotonic()


def _pause(seconds: float) -> None:
    """Between two tries of a lease (functions of their own, so that tests can follow the tries and the clock)."""
    time.sleep(seconds)


def _take_lease(key: int, cluster_id: int, owner: str, ttl: float, using: str) -> bool:
    from scheduling.models import ClusterLease

    now = timezone.now()
    with transaction.atomic(using=using):
        try:
            with transaction.atomic(using=using):
                ClusterLease.objects.using(using).get_or_create(cluster_id=cluster_id, key=key)
        except IntegrityError:  # created by a racing worker in between: fine, the row is there
            pass
        taken = (
            ClusterLease.objects.using(using)
            .filter(cluster_id=cluster_id, key=key)
            .filter(Q(expires__isnull=True) | Q(expires__lt=now))
            .update(owner=owner, expires=now + timedelta(seconds=ttl))
        )
    return taken == 1


def _release_lease(key: int, cluster_id: int, owner: str, using: str) -> None:
    from scheduling.models import ClusterLease

    with transaction.atomic(using=using):
        ClusterLease.objects.using(using).filter(cluster_id=cluster_id, key=key, owner=owner).update(
            owner="", expires=None
        )
