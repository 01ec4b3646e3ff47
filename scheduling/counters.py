"""A cluster's cumulative session counters (``ClusterCounters``): every session, recycling pass, skip and failure
counted, with its duration in a histogram, the binds and the evictions by action; and, per tree node (the evicted
pod's queue and quota group), the evictions by action and the thrash among them (``THRASH_ACTIONS``: an eviction of
a pod that had run for less than ``FAIRWAY_THRASH_WINDOW_SECONDS`` since it started, or had not started yet), both
also per subtree (a node's own and every descendant's, by the tree when they were counted: a department's total).

``add`` is called inside the transaction that writes what it counts (the session row, the evictions), so a
rolled-back session counts nothing and a committed one counts once. It locks the cluster's counters row: sessions
of one cluster are serialised by the cluster's lock already, and a skip or a node check waits at most for the
commit of the session in flight.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import ClusterCounters, Eviction, EvictionAction, Pod

# The actions whose evictions may be thrash: the scheduler's own decisions (a node lost is not one).
THRASH_ACTIONS = frozenset(
    {EvictionAction.RECLAIM, EvictionAction.PREEMPT, EvictionAction.RECYCLE, EvictionAction.GANG_RELEASE}
)

# Upper bounds of the session duration histogram, in seconds (Prometheus' ``le``; +Inf after them).
BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def add(
    cluster_id: int,
    *,
    kind: str | None = None,
    status: str | None = None,
    seconds: float | None = None,
    binds: int = 0,
    pipelined: int = 0,
    evictions: Mapping[str, int] | None = None,
    evicted: Sequence[Eviction] = (),
) -> None:
    """Count one session of ``kind`` ending in ``status`` (its duration when it ran), and what it did; ``evicted``:
    eviction rows just written (their job, queue and quota group stamped), counted per tree node and as thrash."""
    by_node = _by_node(evicted)
    with transaction.atomic():
        row, _ = ClusterCounters.objects.select_for_update().get_or_create(cluster_id=cluster_id)
        counts: dict[str, Any] = row.counts or {}
        if kind is not None and status is not None:
            sessions = counts.setdefault("sessions", {})
            sessions[f"{kind}:{status}"] = sessions.get(f"{kind}:{status}", 0) + 1
        if kind is not None and seconds is not None:
            histogram = counts.setdefault("duration", {}).setdefault(kind, {"buckets": [0] * (len(BUCKETS) + 1)})
            histogram["buckets"][_bucket(seconds)] += 1
            histogram["sum"] = histogram.get("sum", 0.0) + seconds
        if binds:
            counts["binds"] = counts.get("binds", 0) + binds
        if pipelined:
            counts["pipelined"] = counts.get("pipelined", 0) + pipelined
        for action, n in (evictions or {}).items():
            if n:
                by_action = counts.setdefault("evictions", {})
                by_action[action] = by_action.get(action, 0) + n
        for key, (node_kind, name, action) in by_node:
            nodes = counts.setdefault(key, {}).setdefault(node_kind, {}).setdefault(name, {})
            nodes[action] = nodes.get(action, 0) + 1
        row.counts = counts
        row.save(update_fields=["counts"])


def thrash_window() -> timedelta:
    """How soon after its start an eviction counts as thrash (``FAIRWAY_THRASH_WINDOW_SECONDS``)."""
    return timedelta(seconds=float(settings.FAIRWAY["THRASH_WINDOW_SECONDS"]))


def _by_node(rows: Sequence[Eviction]) -> list[tuple[str, tuple[str, str, str]]]:
    """One entry per count to add: ("tree_evictions" or "tree_thrash", (node kind, node name, action)). A pod
    without a podgroup counts in its namespace's default queue (as the engine places it); a row without a quota group
    is not counted by quota group. Thrash: a ``THRASH_ACTIONS`` eviction of a pod that started less than the thrash
    window before, or had not started (bound, not yet running: the minimum-runtime rule counts it as just placed).
    One query for the pods' start times, one more only for pods without a podgroup."""
    if not rows:
        return []
    ids = [r.pod_id for r in rows if r.pod_id is not None and r.action in THRASH_ACTIONS]
    started = dict(Pod.objects.filter(pk__in=ids).values_list("id", "started")) if ids else {}
    plain = {r.namespace for r in rows if not r.queue}
    default_queue: dict[str, str] = {}
    if plain:
        default_queue = {
            ns: q or "default"
            for ns, q in Namespace.objects.filter(name__in=plain).values_list("name", "default_queue__name")
        }
    window = thrash_window()
    parents = {"queue": _parents(Queue), "quota_group": _parents(QuotaGroup)}
    out: list[tuple[str, tuple[str, str, str]]] = []
    for row in rows:
        action = str(row.action)
        names = {"queue": row.queue or default_queue.get(row.namespace, "default"), "quota_group": row.quota_group}
        when = started.get(row.pod_id) if row.pod_id is not None else None
        thrash = action in THRASH_ACTIONS and (when is None or row.created - when < window)
        for node_kind, name in names.items():
            if not name:
                continue
            out.append(("tree_evictions", (node_kind, name, action)))
            if thrash:
                out.append(("tree_thrash", (node_kind, name, action)))
            for node in _up(name, parents[node_kind]):  # the node itself and each ancestor: its subtree's counts
                out.append(("subtree_evictions", (node_kind, node, action)))
                if thrash:
                    out.append(("subtree_thrash", (node_kind, node, action)))
    return out


def _parents(model: type[Queue] | type[QuotaGroup]) -> dict[str, str]:
    """Each tree node's parent, by name (the tree as it is when the evictions are counted)."""
    return {name: parent for name, parent in model.objects.values_list("name", "parent__name") if parent}


def _up(name: str, parents: Mapping[str, str]) -> list[str]:
    """``name`` and its ancestors up to the root (a cycle, which the trees' rules forbid, stops the walk)."""
    out = [name]
    while (parent := parents.get(out[-1])) is not None and parent not in out:
        out.append(parent)
    return out


def _bucket(seconds: float) -> int:
    for i, bound in enumerate(BUCKETS):
        if seconds <= bound:
            return i
    return len(BUCKETS)


def cumulative(buckets: list[int]) -> list[tuple[str, int]]:
    """The histogram's buckets as Prometheus writes them: (``le``, how many at or below it), ending with +Inf."""
    out, total = [], 0
    for bound, n in zip((*(repr(b) for b in BUCKETS), "+Inf"), buckets, strict=False):
        total += n
        out.append((bound, total))
    return out
