"""An applied change request's effect as it happened: the waits of the jobs of the queues and quota groups it changed
(their subtrees' jobs included) submitted in the days before it was applied, against those submitted in as many days
since (at most ``MAX_DAYS`` each way), counted as the fairness audit counts them (``planning.audit.recorded_jobs``,
``engine.waits``). Its replay said what it would have done; this says what it did. Read by the request's page and by
``GET /api/v1/change-requests/{id}/effect/`` (``fairway request show``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from changerequests.choices import RequestStatus
from changerequests.models import ChangeRequest
from engine.waits import NodeWaits, TreeParents, node_waits
from planning.audit import recorded_jobs
from planning.values_api import cached_values
from quotas.access import visible_names
from scheduling.models import Cluster

MAX_DAYS = 7
_TREES = {"queue": "queue", "quota_group": "quota"}  # a change's kind -> its tree


@dataclass(frozen=True)
class NodeEffect:
    tree: str  # "queue" | "quota"
    name: str
    before: NodeWaits | None  # None: no job of it was submitted then
    since: NodeWaits | None


@dataclass(frozen=True)
class Effect:
    applied: datetime
    span: timedelta  # the days compared each way
    nodes: list[NodeEffect]


def changed_nodes(changes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (tree, name) of each queue and quota group the changes name, once each, in their order."""
    out: dict[tuple[str, str], None] = {}
    for change in changes:
        tree = _TREES.get(str(change.get("kind")))
        name = (change.get("spec") or {}).get("name") if change.get("op") == "create" else change.get("name")
        if tree is not None and isinstance(name, str):
            out[(tree, name)] = None
    return list(out)


def reader(user: Any) -> Callable[[str, str], bool]:
    """Whether ``user`` may read a tree node ("queue" or "quota", by name)."""
    visible = {tree: visible_names(user, tree) for tree in ("queue", "quota")}  # type: ignore[arg-type]

    def may_read(tree: str, name: str) -> bool:
        names = visible[tree]
        return names is None or name in names

    return may_read


def effect(obj: ChangeRequest, may_read: Callable[[str, str], bool], now: datetime) -> Effect | None:
    """For an applied (or applied and returned) request, each node it changed that ``may_read`` allows, with its
    waits before and since; None for a request never applied, whose cluster is gone, or none of whose nodes the
    reader may read."""
    if obj.status not in (RequestStatus.APPLIED, RequestStatus.RETURNED) or obj.decided is None:
        return None
    cluster = Cluster.objects.filter(name=obj.cluster).first()
    if cluster is None:
        return None
    snapshot, _ = cached_values(cluster.name)
    parents = TreeParents.of(snapshot)
    nodes = [(t, n) for t, n in changed_nodes(obj.changes) if n in parents.tree(t) and may_read(t, n)]
    if not nodes:
        return None
    applied = obj.decided
    span = min(timedelta(days=MAX_DAYS), max(now - applied, timedelta(0)))
    queues = parents.subtree("queue", [n for t, n in nodes if t == "queue"])
    groups = parents.subtree("quota", [n for t, n in nodes if t == "quota"])

    def waits(since: datetime, until: datetime) -> dict[tuple[str, str], NodeWaits]:
        jobs = recorded_jobs(cluster, since, until, queues=queues, quota_groups=groups)
        return node_waits(jobs, parents, until.timestamp())

    before, after = waits(applied - span, applied), waits(applied, applied + span)
    return Effect(applied, span, [NodeEffect(t, n, before.get((t, n)), after.get((t, n))) for t, n in nodes])
