"""Why a job waits: its current reason with the numbers, the tree nodes that govern it with the one that blocks it
marked, since when, and the evictions of its pods. Read-only; the API's ``podgroups/{id}/why/`` serves it, and a
page can render the same dictionary.

The governing nodes are the queue and its ancestors (root first), the quota groups of its pods with their ancestors,
and its namespace. A node the reader may not read (an ancestor above a team's subtree) is given by name only.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from controlplane.fields import ResourceListField
from engine.session.decisions import blocker_json
from engine.usage import QUEUE, QUOTA, UsageHistory, past_text
from quotas.access import visible_group_ids, visible_queue_ids
from quotas.models import Queue, QuotaGroup
from scheduling.models import Eviction, Pod, PodGroup
from scheduling.recycle_outlook import recycle_warnings
from scheduling.store import read_past_usage

EVICTIONS_SHOWN = 20
QUEUE_BLOCKERS = ("queue", "ancestor")

_rl = ResourceListField().to_representation


def _chain(rows: dict[int, Any], start: Any) -> list[Any]:
    """``start`` and its ancestors, root first (``rows``: every row of the tree by id)."""
    out, seen, node = [], set(), start
    while node is not None and node.pk not in seen:
        seen.add(node.pk)
        out.append(node)
        node = rows.get(node.parent_id) if node.parent_id is not None else None
    return out[::-1]


def _queue_entry(q: Queue, visible: set[int] | None, blocking: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": "queue", "name": q.name, "blocking": q.name == blocking}
    if visible is None or q.pk in visible:
        entry.update(
            weight=q.weight,
            state=q.state,
            capability=_rl(q.capability),
            deserved=_rl(q.deserved),
            guarantee=_rl(q.guarantee),
        )
    else:
        entry["hidden"] = True
    return entry


def _group_entry(g: QuotaGroup, visible: set[int] | None, blocking: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": "quota_group", "name": g.name, "blocking": g.name == blocking}
    if visible is None or g.pk in visible:
        entry.update(min=_rl(g.min), max=_rl(g.max))
    else:
        entry["hidden"] = True
    return entry


def _blocking_node(blocker: dict[str, Any] | None) -> dict[str, str] | None:
    """The tree node the blocker names (``{"kind": "queue"|"quota_group"|"namespace", "name"}``), or ``None`` when
    the job is held by the cluster, its gang or the policy rather than by a node of a tree."""
    if not blocker:
        return None
    kind, name = blocker.get("kind"), blocker.get("name")
    if not name:
        return None
    if kind in QUEUE_BLOCKERS:
        return {"kind": "queue", "name": name}
    if kind == "quota":
        return {"kind": "quota_group", "name": name}
    if kind == "namespace":
        return {"kind": "namespace", "name": name}
    return None


def why_podgroup(
    pg: PodGroup, user: Any, evictions: int = EVICTIONS_SHOWN, *, now: datetime | None = None
) -> dict[str, Any]:
    """Everything ``fairway job why`` and a job page say about why ``pg`` is where it is (a handful of queries), and
    the recycling warnings that take some of its pods unless usage falls (``recycling``: ``recycle_outlook``, as
    at ``now``)."""
    blocker = pg.blocker or None
    node = _blocking_node(blocker)
    blocking_queue = node["name"] if node and node["kind"] == "queue" else None
    blocking_group = node["name"] if node and node["kind"] == "quota_group" else None

    queues = {q.pk: q for q in Queue.objects.all()}
    queue_path = [_queue_entry(q, visible_queue_ids(user), blocking_queue) for q in _chain(queues, queues[pg.queue_id])]

    group_ids = set(pg.pods.exclude(quota_group=None).values_list("quota_group_id", flat=True).distinct())
    groups_visible = visible_group_ids(user)
    quota_paths: list[list[dict[str, Any]]] = []
    if group_ids:
        groups = {g.pk: g for g in QuotaGroup.objects.all()}
        for gid in sorted(group_ids, key=lambda i: groups[i].name):
            quota_paths.append([_group_entry(g, groups_visible, blocking_group) for g in _chain(groups, groups[gid])])

    history = read_past_usage(pg.cluster)  # fairness over time: None (no query) when the policy has it off
    if history is not None:
        policy = pg.cluster.policy
        if policy.queue_fairness().enabled:
            _add_past_usage(queue_path, QUEUE, history, policy.queue_fairness().window)
        if policy.quota_fairness().enabled:
            for path in quota_paths:
                _add_past_usage(path, QUOTA, history, policy.quota_fairness().window)

    ns = pg.namespace
    namespace = {
        "name": ns.name,
        "weight": ns.weight,
        "hard": _rl(ns.hard),
        "blocking": bool(node and node["kind"] == "namespace" and node["name"] == ns.name),
    }

    since = None
    for row in pg.reasons.order_by("-time", "-id").values("time", "phase", "reason")[:200]:
        if (row["phase"], row["reason"]) != (pg.phase, pg.reason):
            break
        since = row["time"]

    pods = dict(pg.pods.values_list("status").annotate(n=Count("id")).order_by("status"))
    return {
        "id": pg.pk,
        "namespace": ns.name,
        "name": pg.name,
        "queue": pg.queue.name,
        "phase": pg.phase,
        "reason": pg.reason,
        "message": pg.message,
        "blocker": blocker_json(blocker),  # with its amounts as Kubernetes quantities (requested_quantity, ...)
        "blocking_node": node,
        "since": since,
        "min_member": pg.min_member,
        "min_resources": _rl(pg.min_resources),
        "pods": pods,
        "queue_path": queue_path,
        "quota_paths": quota_paths,
        "namespace_detail": namespace,
        "evictions": _evictions(Eviction.objects.filter(pod__podgroup=pg).order_by("-created", "-id")[:evictions]),
        "recycling": _recycling(pg, now or timezone.now()),
    }


def _recycling(pg: PodGroup, now: datetime) -> list[dict[str, Any]]:
    """The recycling warnings of ``pg``'s cluster that would take some of its pods (``job_pods`` of them)."""
    job = {f"{pg.namespace.name}/{pg.name}"}
    return [w.to_dict(jobs=job) for w in recycle_warnings(pg.cluster, now=now) if w.of_jobs(job)]


def _add_past_usage(path: list[dict[str, Any]], kind: str, history: UsageHistory, window: float) -> None:
    """Each readable node's recorded past usage against its share, in words (``past usage 1.8x its share over 7
    days``), and the ratio (None without a record)."""
    for entry in path:
        if entry.get("hidden"):
            continue
        ratio = history.ratio(kind, entry["name"])
        entry["past_usage_ratio"] = None if ratio is None else round(float(ratio), 4)
        entry["past_usage"] = past_text(ratio, window)


def _evictions(rows: Iterable[Eviction]) -> list[dict[str, Any]]:
    """The evictions with, for each preemptor pod still known, its job and queue (one query for all)."""
    rows = list(rows)
    wanted = {tuple(e.preemptor.split("/", 1)) for e in rows if "/" in e.preemptor}
    took: dict[str, tuple[str | None, str | None]] = {}
    if wanted:
        match = Q()
        for ns, name in wanted:
            match |= Q(namespace__name=ns, name=name)
        for ns, name, job, queue in Pod.objects.filter(match).values_list(
            "namespace__name", "name", "podgroup__name", "podgroup__queue__name"
        ):
            took[f"{ns}/{name}"] = (f"{ns}/{job}" if job else None, queue)
    return [
        {
            "preemptor_job": took.get(e.preemptor, (None, None))[0],
            "preemptor_queue": took.get(e.preemptor, (None, None))[1],
            "time": e.created,
            "pod": e.pod_uid,
            "node": e.node,
            "action": e.action,
            "reason": e.reason,
            "message": e.message,
            "preemptor": e.preemptor,
        }
        for e in rows
    ]
