"""The engine's values of a cluster, computed once per change of the database rather than once per request.

``planning.values_api.current_values`` loads the snapshot and runs the engine; for a 1,000-node tree that is about
half a second, more than a page may take. The snapshot is a pure function of a handful of tables (the trees,
the cluster's nodes, podgroups and pods, and its scheduler policy), and every writer of those tables moves
their ``updated`` column (the services and the scheduler's store set it on bulk updates too). So a cheap
fingerprint — per table, the row count and the newest ``updated`` — tells whether the last computed values are
still exactly the current ones; on any change (an edit, a session, an agent report) they are computed again.
The cache lives in the process (one entry per cluster) and also keeps the trees built from those values.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max

from engine.values import compute_values
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Node, Pod, PodGroup
from scheduling.store import load_snapshot

_lock = threading.Lock()
_entries: dict[int, _Entry] = {}


@dataclass
class _Entry:
    fingerprint: tuple[Any, ...]
    snapshot: Any
    values: Any
    extras: dict[Any, Any] = field(default_factory=dict)


def fingerprint(cluster: Cluster) -> tuple[Any, ...]:
    """(count, newest ``updated``) of every table the snapshot reads, and the scheduler policy's hash."""
    parts: list[Any] = [hashlib.sha256((cluster.scheduler_policy or "").encode()).hexdigest()[:16]]
    for qs in (
        Queue.objects.all(),
        QuotaGroup.objects.all(),
        Namespace.objects.all(),
        Node.objects.filter(cluster=cluster),
        PodGroup.objects.filter(cluster=cluster),
        Pod.objects.filter(cluster=cluster),
    ):
        agg = qs.order_by().aggregate(n=Count("id"), t=Max("updated"))
        parts.append((agg["n"], agg["t"].isoformat() if agg["t"] else None))
    return tuple(parts)


def current(cluster: Cluster) -> tuple[Any, Any, dict[Any, Any]]:
    """(snapshot, values, extras) of ``cluster`` now; ``extras`` is a per-fingerprint scratch dict for things
    derived from the values (the pages keep their built trees there)."""
    fp = fingerprint(cluster)
    with _lock:
        entry = _entries.get(cluster.pk)
        if entry is not None and entry.fingerprint == fp:
            return entry.snapshot, entry.values, entry.extras
    snapshot = load_snapshot(cluster)
    values = compute_values(snapshot)
    entry = _Entry(fp, snapshot, values)
    with _lock:
        _entries[cluster.pk] = entry
    return entry.snapshot, entry.values, entry.extras


def clear() -> None:
    """Forget every cached value (tests call it between cases)."""
    with _lock:
        _entries.clear()
