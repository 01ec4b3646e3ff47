"""An applied change request's effect as it happened: the waits of the jobs of the queues and quota groups it changed
(their subtrees' jobs included) submitted in the days before it was applied, against those submitted in as many days
since (at most ``MAX_DAYS`` each way), counted as the audit counts them (``planning.audit.recorded_jobs``,
``engine.waits``). Its replay said what it would have done; this says what it did."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from engine.waits import NodeWaits, lineage, node_waits
from engine.wording import duration
from planning.audit import recorded_jobs
from planning.values_api import cached_values
from scheduling.models import Cluster

MAX_DAYS = 7
_TREES = {"queue": ("queue", "queue"), "quota_group": ("quota", "quota group")}


def _changed_nodes(changes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (tree, name) of each queue and quota group the changes name, once each, in their order."""
    out: dict[tuple[str, str], None] = {}
    for change in changes:
        tree = _TREES.get(str(change.get("kind")))
        name = (change.get("spec") or {}).get("name") if change.get("op") == "create" else change.get("name")
        if tree is not None and isinstance(name, str):
            out[(tree[0], name)] = None
    return list(out)


def _figures(w: NodeWaits | None) -> dict[str, Any]:
    def say(seconds: float | None) -> str:
        return "—" if seconds is None else duration(seconds)

    if w is None:
        return {"started": 0, "waiting": 0, "p50": "—", "p95": "—", "longest": "—"}
    return {"started": w.started, "waiting": w.waiting, "p50": say(w.p50), "p95": say(w.p95), "longest": say(w.longest)}


def effect(obj: Any, may_read: Callable[[str, str], bool], now: datetime) -> dict[str, Any] | None:
    """For an applied (or applied and returned) request: a row per node it changed that ``may_read(tree, name)``
    allows, with the waits before and since, and the span compared; None for a request never applied, or whose
    cluster is gone."""
    if obj.status not in ("applied", "returned") or obj.decided is None:
        return None
    cluster = Cluster.objects.filter(name=obj.cluster).first()
    if cluster is None:
        return None
    snapshot, _ = cached_values(cluster.name)
    parents = {
        "queue": {name: q.parent for name, q in snapshot.queues.items()},
        "quota": {name: g.parent for name, g in snapshot.quota_groups.items()},
    }
    nodes = [(t, n) for t, n in _changed_nodes(obj.changes) if n in parents[t] and may_read(t, n)]
    if not nodes:
        return None
    applied = obj.decided
    span = min(timedelta(days=MAX_DAYS), max(now - applied, timedelta(0)))
    subtree = {
        tree: {name for name in parents[tree] if {n for t, n in nodes if t == tree} & set(lineage(name, parents[tree]))}
        for tree in parents
    }
    scope = {"queues": subtree["queue"], "quota_groups": subtree["quota"]}
    before = node_waits(
        recorded_jobs(cluster, applied - span, applied, **scope),
        parents["queue"],
        parents["quota"],
        applied.timestamp(),
    )
    since = node_waits(
        recorded_jobs(cluster, applied, applied + span, **scope),
        parents["queue"],
        parents["quota"],
        (applied + span).timestamp(),
    )
    rows = [
        {
            "tree": dict(_TREES.values())[t],
            "name": n,
            "before": _figures(before.get((t, n))),
            "since": _figures(since.get((t, n))),
        }
        for t, n in nodes
    ]
    return {"rows": rows, "span": duration(span.total_seconds()), "short": span < timedelta(days=1)}
