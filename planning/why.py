"""Why a job waits, for the API (``podgroups/{id}/why/``), the job page and ``fairway job why``: its reason with the
numbers, since when, the evictions of its pods, and its **governing path**, built here once for all three.

The governing path is the chain of tree nodes that decide whether the job can start: its queue and the queue's
ancestors (root first), the quota groups of its pods (or, before it has any pod in one, its namespace's) with their
ancestors, its namespace, and the cluster when idle resources or node predicates hold it. The node the job's blocker
names (``engine.session.reasons`` made it) is marked ``blocking``; a node outside the reader's subtrees is named, not
opened (``hidden``). Read-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from core.fields import ResourceListSerializerField
from engine.flavors import flavors_sentence
from engine.session.decisions import blocker_json
from engine.usage import QUEUE, QUOTA, UsageHistory, past_text
from engine.vocabulary import BLOCKER_TREE, BlockerKind
from planning import valuecache
from planning.estimates import estimate_of
from quotas.access import visible_group_ids, visible_queue_ids
from quotas.models import Queue, QuotaGroup
from scheduling import max_exec
from scheduling.models import Eviction, Pod, PodGroup
from scheduling.recycle_outlook import recycle_warnings
from scheduling.store import read_past_usage

EVICTIONS_SHOWN = 20
TITLES = {"queue": "Queue", "quota": "Quota group", "namespace": "Namespace", "cluster": "Cluster"}
API_KIND = {"queue": "queue", "quota": "quota_group", "namespace": "namespace"}  # the API's word for each tree

_rl = ResourceListSerializerField().to_representation


@dataclass(frozen=True)
class PathNode:
    """One node of the governing path: ``kind`` is ``queue``, ``quota``, ``namespace`` or ``cluster``; ``depth`` 0
    is the top of its chain; ``row`` the model row (a ``Queue``, ``QuotaGroup``, ``Namespace`` or ``Cluster``)."""

    kind: str
    name: str
    depth: int
    blocking: bool
    hidden: bool
    row: Any

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "depth": self.depth,
            "blocking": self.blocking,
            "hidden": self.hidden,
        }


@dataclass(frozen=True)
class Section:
    """One chain of the path: the queue chain, one quota group chain, the namespace, the cluster."""

    kind: str
    nodes: tuple[PathNode, ...]

    @property
    def title(self) -> str:
        return TITLES[self.kind]


@dataclass(frozen=True)
class GoverningPath:
    """The chains of tree nodes that decide whether a job can start, the blocking node marked."""

    sections: tuple[Section, ...]
    blocking: dict[str, str] | None  # the tree node the blocker names ({"kind": API_KIND, "name"}), else None

    def of(self, kind: str) -> list[Section]:
        return [s for s in self.sections if s.kind == kind]

    def to_list(self) -> list[dict[str, Any]]:
        """As the API gives it: ``[{"title", "nodes": [{"kind", "name", "depth", "blocking", "hidden"}]}]``."""
        return [{"title": s.title, "nodes": [n.to_dict() for n in s.nodes]} for s in self.sections]


def _chain(rows: dict[int, Any], start: Any) -> list[Any]:
    """``start`` and its ancestors, root first (``rows``: every row of the tree by id)."""
    out, seen, node = [], set(), start
    while node is not None and node.pk not in seen:
        seen.add(node.pk)
        out.append(node)
        node = rows.get(node.parent_id) if node.parent_id is not None else None
    return out[::-1]


def blocked_node(blocker: dict[str, Any] | None) -> tuple[str, str] | None:
    """(tree, name) of the tree node a recorded blocker names (``tree``: ``queue``, ``quota`` or ``namespace``), or
    None when the cluster, the gang or the policy holds the job."""
    if not blocker or not blocker.get("name"):
        return None
    tree = BLOCKER_TREE.get(str(blocker.get("kind") or ""))
    return (tree, str(blocker["name"])) if tree is not None else None


def governing_path(pg: PodGroup, user: Any) -> GoverningPath:
    """The governing path of ``pg`` as ``user`` may read it (a handful of queries, whatever the trees' size)."""
    blocker = pg.blocker or None
    node = blocked_node(blocker)
    sections = []

    def chain(kind: str, rows: dict[int, Any], start: Any, visible: set[int] | None) -> Section:
        nodes = tuple(
            PathNode(kind, r.name, depth, node == (kind, r.name), visible is not None and r.pk not in visible, r)
            for depth, r in enumerate(_chain(rows, start))
        )
        return Section(kind, nodes)

    queues = {q.pk: q for q in Queue.objects.all()}
    sections.append(chain("queue", queues, queues[pg.queue_id], visible_queue_ids(user)))
    group_ids = set(pg.pods.exclude(quota_group=None).values_list("quota_group_id", flat=True).distinct())
    if not group_ids and pg.namespace.quota_group_id is not None:
        group_ids = {pg.namespace.quota_group_id}
    if group_ids:
        groups = {g.pk: g for g in QuotaGroup.objects.all()}
        visible = visible_group_ids(user)
        for gid in sorted(group_ids, key=lambda i: groups[i].name):
            sections.append(chain("quota", groups, groups[gid], visible))
    ns = pg.namespace
    sections.append(
        Section("namespace", (PathNode("namespace", ns.name, 0, node == ("namespace", ns.name), False, ns),))
    )
    if blocker and blocker.get("kind") == BlockerKind.CLUSTER:
        sections.append(Section("cluster", (PathNode("cluster", pg.cluster.name, 0, True, False, pg.cluster),)))
    return GoverningPath(tuple(sections), {"kind": API_KIND[node[0]], "name": node[1]} if node else None)


def _queue_entry(n: PathNode) -> dict[str, Any]:
    q = n.row
    entry: dict[str, Any] = {"kind": "queue", "name": n.name, "blocking": n.blocking}
    if n.hidden:
        entry["hidden"] = True
    else:
        entry.update(
            weight=q.weight,
            state=q.state,
            capability=_rl(q.capability),
            deserved=_rl(q.deserved),
            guarantee=_rl(q.guarantee),
        )
    return entry


def _group_entry(n: PathNode) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": "quota_group", "name": n.name, "blocking": n.blocking}
    if n.hidden:
        entry["hidden"] = True
    else:
        entry.update(min=_rl(n.row.min), max=_rl(n.row.max))
    return entry


def why_podgroup(
    pg: PodGroup, user: Any, evictions: int = EVICTIONS_SHOWN, *, now: datetime | None = None
) -> dict[str, Any]:
    """Everything ``fairway job why`` and the API say about why ``pg`` is where it is (a handful of queries), the
    recycling warnings that take some of its pods unless usage falls (``recycling``: ``recycle_outlook``, as at
    ``now``), and for a waiting job when it will likely start (``start_estimate``: ``planning.estimates``)."""
    path = governing_path(pg, user)
    [queues] = path.of("queue")
    queue_path = [_queue_entry(n) for n in queues.nodes]
    quota_paths = [[_group_entry(n) for n in s.nodes] for s in path.of("quota")]

    history = read_past_usage(pg.cluster)  # fairness over time: None (no query) when the policy has it off
    if history is not None:
        policy = pg.cluster.policy
        if policy.queue_fairness().enabled:
            _add_past_usage(queue_path, QUEUE, history, policy.queue_fairness().window)
        if policy.quota_fairness().enabled:
            for chain in quota_paths:
                _add_past_usage(chain, QUOTA, history, policy.quota_fairness().window)

    [namespace_section] = path.of("namespace")
    ns, ns_node = pg.namespace, namespace_section.nodes[0]
    namespace = {"name": ns.name, "weight": ns.weight, "hard": _rl(ns.hard), "blocking": ns_node.blocking}

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
        "blocker": blocker_json(pg.blocker or None),  # with its amounts as quantities (requested_quantity, ...)
        "blocking_node": path.blocking,
        "since": since,
        "min_member": pg.min_member,
        "min_resources": _rl(pg.min_resources),
        "pods": pods,
        # Kueue's ResourceFlavors the sessions gave it (resource -> flavor), in words, and why those (the flavors the
        # assignment tried and what each gave); null when its queue has no resource in several flavors
        "flavors": pg.flavors,
        "pod_set_flavors": pg.pod_set_flavors,  # each pod set's, when a workload's pod sets were given different ones
        "flavors_text": flavors_sentence(pg.flavors or {}, pg.pod_set_flavors) or None,
        "flavor_assignment": pg.flavor_assignment,
        # Kueue's maximum execution time: the admitted time it has used and has left (None: no maximum)
        "max_exec": max_exec.budget(pg, now or timezone.now()),
        "governing_path": path.to_list(),
        "queue_path": queue_path,
        "quota_paths": quota_paths,
        "namespace_detail": namespace,
        "evictions": _evictions(Eviction.objects.filter(pod__podgroup=pg).order_by("-created", "-id")[:evictions]),
        "recycling": _recycling(pg, now or timezone.now()),
        # when a waiting job will likely start (planning.estimates: a forward replay with drawn runtimes); None when
        # it does not wait
        "start_estimate": estimate_of(pg, now or timezone.now()),
        # where it stands among the waiting jobs of its queue and of its LocalQueue; None when it has none to place
        "queue_position": queue_position(pg),
    }


def queue_position(pg: PodGroup) -> dict[str, Any] | None:
    """Where a waiting job stands, as Kueue's visibility API says it of a pending workload: its place (1: served
    first) among its queue's waiting jobs in the order the next session takes them (the engine's order on the
    cluster's state now, ``planning.valuecache.order_of``), the jobs ahead of it, and, for a job submitted to a
    LocalQueue, its place among that LocalQueue's. None when it has no pod left to place."""
    snapshot, values = valuecache.current(pg.cluster)
    return place_among(pg, valuecache.order_of(pg.cluster, snapshot, values).of(pg.queue.name))


def place_among(pg: PodGroup, jobs: Sequence[str]) -> dict[str, Any] | None:
    """``queue_position`` of ``pg`` among ``jobs``, its queue's waiting jobs in the engine's order (the job page
    passes the order it holds)."""
    key = f"{pg.namespace.name}/{pg.name}"
    if key not in jobs:
        return None
    position = jobs.index(key) + 1
    out: dict[str, Any] = {"position": position, "ahead": position - 1, "waiting": len(jobs)}
    out["local_queue"] = out["local_queue_position"] = None
    if pg.local_queue:
        same = PodGroup.objects.filter(
            cluster_id=pg.cluster_id, queue_id=pg.queue_id, namespace_id=pg.namespace_id, local_queue=pg.local_queue
        ).values_list("name", flat=True)
        mine = {f"{pg.namespace.name}/{name}" for name in same}
        out["local_queue"] = f"{pg.namespace.name}/{pg.local_queue}"
        out["local_queue_position"] = sum(1 for k in jobs[:position] if k in mine)
    return out


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
