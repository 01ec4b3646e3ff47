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

Usage (the body always runs inside ``transaction.atomic()`` when the lock was acquired)::

    with cluster_lock(SCHEDULING_SESSION_LOCK, cluster.pk, ttl=300) as acquired:
        if not acquired:
            return "skipped"
        ...
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
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
def cluster_lock(key: int, cluster_id: int, *, ttl: float = 300.0, using: str = DEFAULT_DB_ALIAS) -> Iterator[bool]:
    """Try to take lock ``key`` for ``cluster_id`` without waiting; yield whether it was taken.

    When taken, the body runs inside ``transaction.atomic()`` and the lock is released when that transaction
    ends. ``ttl`` (seconds) bounds how long a dead holder keeps the SQLite lease; PostgreSQL needs none.
    """
    if uses_advisory_locks(using):
        with transaction.atomic(using=using):
            with connections[using].cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [key, cluster_id])
                (acquired,) = cursor.fetchone()
            yield bool(acquired)
        return
    owner = uuid.uuid4().hex
    if not _take_lease(key, cluster_id, owner, ttl, using):
        yield False
        return
    try:
        with transaction.atomic(using=using):
            yield True
    finally:
        _release_lease(key, cluster_id, owner, using)


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
