"""A cluster's cumulative session counters (``ClusterCounters``): every session, recycling pass, skip and failure
counted, with its duration in a histogram, the binds and the evictions by action.

``add`` is called inside the transaction that writes what it counts (the session row, the evictions), so a
rolled-back session counts nothing and a committed one counts once. It locks the cluster's counters row: sessions
of one cluster are serialised by the cluster's lock already, and a skip or a node check waits at most for the
commit of the session in flight.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from scheduling.models import ClusterCounters

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
) -> None:
    """Count one session of ``kind`` ending in ``status`` (its duration when it ran), and what it did."""
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
        row.counts = counts
        row.save(update_fields=["counts"])


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
