"""The team page's waits: how long the team's jobs waited to start over the last days, one row per node of the team
(its subtree's jobs included), from what happened (``planning.audit.recorded_jobs``, counted by ``engine.waits`` as
the audit and the replay count them); the audit has other windows and the other teams beside it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from engine.waits import TreeParents, node_waits
from engine.wording import duration_or
from planning.audit import recorded_jobs
from scheduling.models import Cluster

DAYS = 7
_TREES = {"queue": "queue", "quota": "quota group"}


def team_waits(
    cluster: Cluster | None, snapshot: Any, nodes: Iterable[tuple[str, str]], now: datetime
) -> dict[str, Any]:
    """The waits of the last ``DAYS`` days of the jobs of ``nodes`` ((kind, name): "queue" or "quota") and their
    subtrees, under the keys the page reads (``waits``: a row per node, ``waits_days``)."""
    nodes = list(nodes)
    if cluster is None or snapshot is None or not nodes:
        return {"waits": [], "waits_days": DAYS}
    parents = TreeParents.of(snapshot)
    queues = parents.subtree("queue", [name for kind, name in nodes if kind == "queue"])
    groups = parents.subtree("quota", [name for kind, name in nodes if kind == "quota"])
    jobs = recorded_jobs(cluster, now - timedelta(days=DAYS), now, queues=queues, quota_groups=groups)
    figures = node_waits(jobs, parents, now.timestamp())
    rows = []
    for kind, name in nodes:
        w = figures.get((kind, name))
        rows.append(
            {
                "tree": _TREES[kind],
                "name": name,
                "started": w.started if w else 0,
                "p50": duration_or(w.p50 if w else None, "—"),
                "p95": duration_or(w.p95 if w else None, "—"),
                "longest": duration_or(w.longest if w else None, "—"),
                "waiting": w.waiting if w else 0,
                "preempted": w.preempted if w else 0,
                "recycled": w.recycled if w else 0,
            }
        )
    return {"waits": rows, "waits_days": DAYS}
