"""The job page: one podgroup with its pods, its reasons over time, the evictions of its pods, the tree nodes that
govern it (the blocking one marked) and its place in its queue's order.

Nothing is decided here: the reason and its blocker are the ones the last session wrote
(``PodGroup.reason/message/blocker``, their history in ``PodGroupReason``), the evictions are the scheduler's
records, and the order is the engine's (``engine.session.order``). A fixed number of queries per page, whatever
the job's size: the podgroup, its pods, its reasons, its evictions, the preemptors of those evictions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.utils import timezone

from engine.flavors import flavored, flavors_sentence
from engine.resources import split_flavor
from engine.session.reasons import BLOCKER_WORDS
from engine.vocabulary import WAITING_PHASES, PodGroupPhase, TaskStatus
from engine.wording import plural
from frontend.presenters import jobs, trees, units
from frontend.presenters.links import job_url, node_url
from planning import why
from planning.valuecache import order_of
from scheduling import max_exec
from scheduling.models import Cluster, Eviction, Pod, PodGroup

REASON_ROWS = 100
EVICTION_ROWS = 200
AHEAD_ROWS = 25

# the rule that allowed an eviction, by action, said of the evicted job
RULES = {
    "reclaim": "its queue held more than it deserves, and another queue needed its share back",
    "preempt": "a job of higher priority in its queue needed the room",
    "recycle": "its quota group used more than its runtime quota",
    "node-lost": "the node stopped answering for longer than the cluster's eviction timeout",
    "gang-release": "its gang stayed below its minimum longer than the repair timeout, so all its pods were let go",
    "suspend": "a person suspended the job (a job action)",
    "requeue": "a person requeued the job (a job action)",
}


def amounts(rl: Mapping[str, int] | None) -> str:
    """A resource list as people read it (``2 GPUs, 16 cores, 64 GiB``); ``—`` when empty."""
    if not rl:
        return "—"
    names = units.resource_order(rl)
    return ", ".join(units.in_list(rl[name], name) for name in names) or "—"


def find(cluster: Cluster | None, namespace: str, name: str) -> PodGroup | None:
    """The podgroup ``namespace/name`` of ``cluster`` (one query), or None."""
    if cluster is None:
        return None
    return (
        PodGroup.objects.select_related("namespace", "namespace__quota_group", "queue")
        .filter(cluster=cluster, namespace__name=namespace, name=name)
        .first()
    )


def pod_rows(pods: Sequence[Pod]) -> list[dict[str, Any]]:
    return [
        {
            "name": p.name,
            "status": p.status,
            "node": p.node.name if p.node is not None else "",
            "quota_group": p.quota_group.name if p.quota_group is not None else "",
            "request": amounts(p.request),
            "created": p.created,
            "started": p.started,
            "finished": p.finished,
            "reason": p.reason,
            "message": p.message,
        }
        for p in pods
    ]


def _blocker_text(blocker: Mapping[str, Any] | None) -> str:
    if not blocker:
        return ""
    kind, name = str(blocker.get("kind") or ""), str(blocker.get("name") or "")
    text = f"{BLOCKER_WORDS.get(kind, kind)} {name}".strip()
    resource = blocker.get("resource")
    if resource:
        text += f" ({resource}"
        if blocker.get("limit"):
            text += f", {blocker['limit']}"
        text += ")"
    elif blocker.get("limit"):
        text += f" ({blocker['limit']})"
    return text


def reason_rows(podgroup: PodGroup) -> list[dict[str, Any]]:
    rows = podgroup.reasons.order_by("-time", "-id").values("time", "phase", "reason", "message", "blocker")
    return [{**row, "blocker_text": _blocker_text(row["blocker"])} for row in rows[:REASON_ROWS]]


def _preemptors(cluster: Cluster, uids: Iterable[str]) -> dict[str, dict[str, str]]:
    """For each preemptor pod uid (``namespace/name``): its job and queue (one query)."""
    q = Q()
    for uid in set(uids):
        ns, _, name = uid.partition("/")
        q |= Q(namespace__name=ns, name=name)
    if not q:
        return {}
    rows = Pod.objects.filter(q, cluster=cluster).values(
        "namespace__name", "name", "podgroup__name", "podgroup__namespace__name", "podgroup__queue__name"
    )
    out = {}
    for row in rows:
        job = ""
        if row["podgroup__name"]:
            job = f"{row['podgroup__namespace__name']}/{row['podgroup__name']}"
        out[f"{row['namespace__name']}/{row['name']}"] = {"job": job, "queue": row["podgroup__queue__name"] or ""}
    return out


def eviction_rows(
    cluster: Cluster, podgroup: PodGroup, pods: Sequence[Pod], can_open: set[str] | None
) -> list[dict[str, Any]]:
    """Every eviction of the job's pods (also of pods since deleted, by their uid), newest first, with the job and
    queue that took the room and the rule that allowed it. ``can_open``: the queues whose jobs the user may open
    (None: all); another team's job is named, not linked."""
    uids = [f"{p.namespace.name}/{p.name}" for p in pods]
    rows = list(
        # not those of an earlier job of the same name, removed since (``scheduling.evictions``)
        Eviction.objects.filter(
            Q(pod__podgroup=podgroup) | Q(pod_uid__in=uids, removed_job__isnull=True), cluster=cluster
        )
        .order_by("-created", "-id")
        .values("created", "pod_uid", "node", "action", "reason", "message", "preemptor", "blocker")[:EVICTION_ROWS]
    )
    who = _preemptors(cluster, (r["preemptor"] for r in rows if r["preemptor"]))
    out = []
    for row in rows:
        by = who.get(row["preemptor"], {})
        job = by.get("job", "")
        out.append(
            {
                **row,
                "pod": row["pod_uid"].partition("/")[2],
                "by_job": job,
                "by_job_url": job_url(*job.split("/", 1))
                if job and (can_open is None or by.get("queue") in can_open)
                else "",
                "by_queue": by.get("queue", ""),
                "action_label": row["action"].replace("-", " "),
                "rule": RULES.get(row["action"], ""),
                "blocker_text": _blocker_text(row["blocker"]),
            }
        )
    return out


@dataclass
class PathNode:
    """One node of the job's governing path as the page shows it (queue or ancestor, quota group or ancestor,
    namespace, cluster), with its values."""

    kind: str  # queue | quota | namespace | cluster
    kind_title: str
    name: str
    depth: int
    url: str = ""
    values: list[dict[str, str]] = field(default_factory=list)
    blocking: bool = False
    hidden: bool = False  # outside the user's subtrees: named, not opened


def _values(tree: trees.Tree, name: str, resources: Sequence[str]) -> list[dict[str, str]]:
    """A tree node's used, entitled and cap of each resource, in its tree's words; none when the tree (the values
    of the cluster shown) does not hold it."""
    node = tree.nodes.get(name)
    if node is None:
        return []
    terms = trees.TERMS[tree.kind]
    return [
        {
            "resource": r,
            "used": f"{terms['used']} {units.human(node.used.get(r, 0), r)}",
            "entitled": f"{terms['entitled']} {units.human(node.entitled.get(r, 0), r)}",
            "cap": f"{terms['cap']} {units.human(trees.effective_cap(tree, name, r), r)}",
        }
        for r in resources
    ]


def governing_path(
    path: why.GoverningPath,
    podgroup: PodGroup,
    queue_tree: trees.Tree,
    quota_tree: trees.Tree,
    resources: Sequence[str],
) -> list[dict[str, Any]]:
    """The sections of the job's governing path (``planning.why.governing_path``: the queue chain root first, the
    quota group chains of its pods or of its namespace, its namespace, the cluster when it holds the job), each
    readable node with its values now; the node named by the current blocker is marked ``blocking``."""
    tree_of = {"queue": queue_tree, "quota": quota_tree}
    ns = podgroup.namespace
    sections = []
    for section in path.sections:
        nodes = []
        for n in section.nodes:
            values: list[dict[str, str]] = []
            if n.kind in tree_of and not n.hidden:
                values = _values(tree_of[n.kind], n.name, resources)
            elif n.kind == "namespace":
                plain = dict.fromkeys(split_flavor(r)[0] for r in resources)  # hard limits are of the plain ones
                values = [
                    {"resource": r, "used": "", "entitled": "", "cap": f"hard {units.human(ns.hard[r], r)}"}
                    for r in plain
                    if ns.hard and r in ns.hard
                ]
            url = node_url(n.kind, n.name) if n.kind in tree_of and not n.hidden else ""
            title = trees.TITLES.get(n.kind, section.title)
            nodes.append(PathNode(n.kind, title, n.name, n.depth, url, values, n.blocking, n.hidden))
        sections.append({"title": section.title, "nodes": nodes})
    return sections


def _asks(snapshot: Any, keys: Sequence[str]) -> dict[str, dict[str, int]]:
    """What each job asks: its minResources when it has them, else the requests of its pods that wait."""
    wanted = set(keys)
    out: dict[str, dict[str, int]] = {}
    for key in wanted:
        pg = snapshot.podgroups.get(key)
        if pg is not None and pg.min_resources is not None:
            out[key] = {k: int(v) for k, v in pg.min_resources.items()}
    rest = wanted - set(out)
    if rest:
        for task in snapshot.tasks.values():
            if task.podgroup in rest and task.status in (TaskStatus.PENDING, TaskStatus.PIPELINED):
                acc = out.setdefault(task.podgroup, {})
                for k, v in task.request.items():
                    acc[k] = acc.get(k, 0) + int(v)
    return out


def place_in_queue(
    cluster: Cluster, snapshot: Any, values: Any, podgroup: PodGroup, can_open: set[str] | None
) -> dict[str, Any] | None:
    """Where the job stands in its queue: the waiting jobs the next session serves before it (the engine's
    order), what they ask in all, and how many of them are admitted (their reservations held). ``None`` when the job
    has no pod left to place (it is not in the order) or the cluster has no snapshot. ``can_open``: the queues whose jobs the user may open."""
    key = f"{podgroup.namespace.name}/{podgroup.name}"
    if snapshot is None or key not in snapshot.podgroups:
        return None
    order = order_of(cluster, snapshot, values)
    if key not in order.of(podgroup.queue.name):
        return None
    ahead = order.ahead_of(podgroup.queue.name, key)
    asks = _asks(snapshot, ahead)
    total: dict[str, int] = {}
    for amounts_of in asks.values():
        for k, v in amounts_of.items():
            total[k] = total.get(k, 0) + v
    rows = []
    for k in ahead[:AHEAD_ROWS]:
        pg = snapshot.podgroups[k]
        ns, _, name = k.partition("/")
        rows.append(
            {
                "key": k,
                "url": job_url(ns, name) if can_open is None or pg.queue in can_open else "",
                "phase": str(pg.phase),
                "priority": pg.priority,
                "asks": amounts(asks.get(k)),
            }
        )
    admitted = sum(1 for k in ahead if snapshot.podgroups[k].phase == PodGroupPhase.INQUEUE)
    # every admitted job of the queue holds a reservation (its minResources) until its pods are placed
    holders = [
        pg
        for k, pg in snapshot.podgroups.items()
        if k != key and pg.queue == podgroup.queue.name and pg.phase == PodGroupPhase.INQUEUE and pg.min_resources
    ]
    held: dict[str, int] = {}
    for pg in holders:
        for k, v in pg.min_resources.items():
            held[k] = held.get(k, 0) + int(v)
    local = why.place_among(podgroup, order.of(podgroup.queue.name)) if podgroup.local_queue else None
    return {
        "local_queue": local["local_queue"] if local else None,
        "local_queue_position": local["local_queue_position"] if local else None,
        "reserving": len(holders),
        "reserving_text": plural(len(holders), "admitted job"),
        "reserved": amounts(held),
        "position": len(ahead) + 1,
        "ahead": len(ahead),
        "ahead_text": plural(len(ahead), "job") + (" ahead of it" if ahead else " ahead of it: it is served first"),
        "admitted_ahead": admitted,
        "rows": rows,
        "more": max(0, len(ahead) - AHEAD_ROWS),
        "total": amounts(total),
    }


def header(podgroup: PodGroup, pods: Sequence[Pod], sessions_ran: bool) -> dict[str, Any]:
    row = {
        "phase": podgroup.phase,
        "reason": podgroup.reason,
        "message": podgroup.message,
        "conditions": podgroup.conditions,
    }
    reason, message = jobs._why(row, sessions_ran)
    counts = {key: sum(1 for p in pods if p.status in statuses) for key, statuses in jobs.POD_COUNTS}
    finished = sum(1 for p in pods if p.status in ("Succeeded", "Failed"))
    return {
        "key": f"{podgroup.namespace.name}/{podgroup.name}",
        "name": podgroup.name,
        "namespace": podgroup.namespace.name,
        "queue": podgroup.queue.name,
        "user": podgroup.user or "",  # who submitted it (the per-user limits count it for them); "": its namespace
        "phase": podgroup.phase,
        "waiting": podgroup.phase in WAITING_PHASES,
        "reason": reason,
        "message": message,
        "blocker_text": _blocker_text(podgroup.blocker),
        "priority": podgroup.priority,
        "min_member": podgroup.min_member,
        "min_resources": amounts(podgroup.min_resources) if podgroup.min_resources else "",
        "created": podgroup.created,
        "age": jobs._age(timezone.now() - podgroup.created),
        "pods": len(pods),
        "pods_text": plural(len(pods), "pod"),
        "counts": counts,
        "finished": finished,
        "requeues": podgroup.requeues,
        "backoff_until": podgroup.backoff_until,
        "gang_releases": podgroup.gang_releases,
        "idle_gpu_seconds": podgroup.idle_gpu_seconds,
        "released_at": podgroup.released_at,
        "release_reason": podgroup.release_reason,
        # Kueue's ResourceFlavors the sessions gave it ("spot for cpu, memory"), and why those
        "flavors_text": flavors_sentence(podgroup.flavors or {}, podgroup.pod_set_flavors),
        "flavor_assignment": podgroup.flavor_assignment or "",
        # Kueue's maximum execution time, used and left ("12 min of its 1 h admitted, 48 min left"); None: none
        "max_exec": max_exec.budget(podgroup, timezone.now()),
    }


def resources_of_job(podgroup: PodGroup, pods: Sequence[Pod]) -> list[str]:
    """The resources the job asks for (the blocker's first), in display order; a resource it was given a Kueue
    ResourceFlavor for under its flavored key (``cpu@spot``: the tree nodes' quota in that flavor)."""
    names: set[str] = set(podgroup.min_resources or {})
    for p in pods:
        names.update(p.request or {})
    given = podgroup.flavors or {}
    names = {
        flavored(split_flavor(n)[0], given[split_flavor(n)[0]]) if split_flavor(n)[0] in given else n for n in names
    }
    ordered = units.resource_order(names)
    blocked = (podgroup.blocker or {}).get("resource")
    if blocked and blocked in ordered:
        ordered.remove(blocked)
        ordered.insert(0, blocked)
    elif blocked and blocked not in units.HIDDEN_RESOURCES:
        ordered.insert(0, blocked)
    return ordered or ["cpu"]
