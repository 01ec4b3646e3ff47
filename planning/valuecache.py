"""The engine's values of a cluster, computed once per change of the database rather than once per request.

Loading the snapshot and running the engine takes about half a second for a 1,000-node tree, more than a page
may take. The snapshot is a pure function of the trees and of the cluster's own rows (its settings, nodes,
podgroups and pods), and the database keeps a revision counter for each (``core.models.Revision``: ``trees``
and ``cluster-<id>``), moved in the transaction of every write of those rows, bulk writes and the scheduler's
session included. The counters are read before the rows, so a write that lands in between makes the entry
stale at once rather than wrong for long: the values are kept for exactly as long as both counters stay the same.
The cache lives in the process (one entry per cluster); what the pages derive from the values, their presenters keep.
The snapshot comes from the process's mirror of the cluster (``scheduling.feed.mirror``), which reads only the rows
changed since its last use, so the first request after a change pays for those rows and the values, not for
reading the whole cluster again; after a change of the trees alone, the values also reuse the pods' aggregates,
and after a change of some pods the aggregates are brought up to date for those pods only, by the same
``SessionCarry`` a worker keeps between sessions (one per cluster here, apart from any session's). One request
per cluster refreshes at a time; the others that arrive meanwhile wait for its values instead of computing their own.
When the revisions moved but the snapshot read equals the one the values were computed from (a node's heartbeat
moves its cluster's revision without changing anything the engine reads), the values are kept as they are, under the
new revisions: the same object, so that what is derived from it (``planning.metrics``) is kept too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from core.models import Revision
from engine.session.carry import SessionCarry
from engine.session.order import JobOrder, job_order
from engine.values import QuotaValues, compute_values
from scheduling.feed.mirror import forget, mirror_of
from scheduling.models import Cluster

_lock = threading.Lock()
_entries: dict[int, _Entry] = {}
_refreshing: dict[int, threading.Lock] = {}  # cluster id -> held while its values are refreshed
_carries: dict[int, SessionCarry] = {}  # cluster id -> the pods' aggregates kept between refreshes


@dataclass
class _Entry:
    fingerprint: tuple[int, ...]
    snapshot: Any
    values: Any


def fingerprint(cluster: Cluster) -> tuple[int, ...]:
    """The revisions of the trees and of ``cluster`` now (one query)."""
    return Revision.objects.values_of(Revision.TREES, Revision.cluster_key(cluster.pk))


def current(cluster: Cluster) -> tuple[Any, Any]:
    """(snapshot, values) of ``cluster`` now."""
    fp = fingerprint(cluster)
    with _lock:
        entry = _entries.get(cluster.pk)
        if entry is not None and entry.fingerprint == fp:
            return entry.snapshot, entry.values
        refreshing = _refreshing.setdefault(cluster.pk, threading.Lock())
    with refreshing:
        with _lock:  # another request may have refreshed them while this one waited
            entry = _entries.get(cluster.pk)
            if entry is not None and entry.fingerprint == fp:
                return entry.snapshot, entry.values
        fresh = Cluster.objects.get(pk=cluster.pk)  # the settings as they are at ``fp`` or later
        snapshot, _ = mirror_of(cluster.pk).read(fresh)
        if entry is not None and _same_inputs(entry.snapshot, snapshot):
            entry = _Entry(fp, entry.snapshot, entry.values)  # e.g. heartbeats: the revision moved, nothing else
        else:
            entry = _Entry(fp, snapshot, _values(cluster.pk, snapshot, entry))
        with _lock:
            _entries[cluster.pk] = entry
    return entry.snapshot, entry.values


def _same_inputs(before: Any, now: Any) -> bool:
    """Whether the snapshot ``now`` equals ``before``, so that its values are those already computed (the engine is a
    pure function of the snapshot). A heartbeat moves the cluster's revision but not the change feed: the mirror then
    hands back the very same pods and podgroups (the identity test is what keeps this cheap: the same dictionaries
    mean no row changed), and the rest (nodes, trees, policy, past usage, node bound) is compared, mostly by
    identity too."""
    return before.tasks is now.tasks and before.podgroups is now.podgroups and bool(before == now)


def _values(cluster_id: int, snapshot: Any, before: _Entry | None) -> QuotaValues:
    """The values of ``snapshot``. After a change of the trees only, the mirror hands back the same pods and
    podgroups and their aggregates are reused (``compute_values`` checks that they are the very same dictionaries);
    otherwise the cluster's carry brings the aggregates up to date for the pods that changed (or builds them in
    full, e.g. the first time)."""
    if (
        before is not None
        and before.snapshot.tasks is snapshot.tasks
        and before.snapshot.podgroups is snapshot.podgroups
    ):
        return compute_values(snapshot, base=before.values)
    carry = _carries.setdefault(cluster_id, SessionCarry())
    return compute_values(snapshot, aggregates=carry.open(snapshot, []).aggregates)


def clear() -> None:
    """Forget every cached value and mirror (tests call it between cases)."""
    with _lock:
        _entries.clear()
        _carries.clear()
    forget()


_orders_lock = threading.Lock()
_orders: dict[int, tuple[Any, JobOrder]] = {}  # cluster id -> (the snapshot it was computed on, its order)


def order_of(cluster: Cluster, snapshot: Any, values: Any) -> JobOrder:
    """The engine's order of the waiting jobs of every queue (``engine.session.order``), computed once per
    snapshot: ``current`` hands out the same snapshot object while the database does not change."""
    with _orders_lock:
        cached = _orders.get(cluster.pk)
        if cached is not None and cached[0] is snapshot:
            return cached[1]
    order = job_order(snapshot, now=time.time(), values=values)
    with _orders_lock:
        _orders[cluster.pk] = (snapshot, order)
    return order
