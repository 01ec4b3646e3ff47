"""The nodes pages: every node of a cluster with what its pods take of it, and one node with its pods.

What a node's amounts mean (the same words on the pages, in docs/dashboard.md and in the tests):

* **allocatable** — what the node offers (its agent's report);
* **allocated** — what the pods running on it ask: ``Running``, and ``Releasing`` until they are gone (a leaving pod
  still holds the node; it is no longer in any queue's allocated);
* **reserved** — what pods placed on it but not running yet ask: bound and not started (``Allocated``,
  ``Binding``, ``Bound``) and pipelined to it (``Pipelined``: waiting there for releasing pods to leave);
* **free** — allocatable - allocated - reserved (never below zero).

Reads are two queries whatever the number of nodes: the nodes, then the pods on them (with their podgroup's queue
and their quota group). Sorting, search and filters run on those rows in Python; only the shown page is printed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import TextField
from django.db.models.functions import Cast
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

from engine.vocabulary import PLACED_NOT_STARTED, STARTED_ON_NODE, TaskStatus
from engine.wording import plural
from frontend.presenters import units
from scheduling.models import Cluster, Node, Pod

ON_NODE_STATUSES = STARTED_ON_NODE + PLACED_NOT_STARTED
PER_PAGE = 50
STATES = {"": "any state", "ready": "Ready", "notready": "NotReady", "cordoned": "cordoned"}
FIXED_SORTS = ("name", "state", "heartbeat", "pods")


@dataclass
class NodeUse:
    """One node and what its pods take of it (amounts in base units)."""

    id: int
    name: str
    allocatable: dict[str, int]
    taints: list[str]
    ready: bool
    unschedulable: bool
    last_heartbeat: datetime | None
    pool: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    allocated: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)
    pods: int = 0
    running: int = 0
    waiting: int = 0  # reserved pods (bound, not running yet, or pipelined)
    queues: set[str] = field(default_factory=set)
    quota_groups: set[str] = field(default_factory=set)
    set_aside: str | None = None  # why it offers nothing (a report above the per-node bound), None when it offers

    @property
    def state(self) -> str:
        if not self.ready:
            return "NotReady"
        if self.set_aside:
            return "set aside"
        return "cordoned" if self.unschedulable else "Ready"

    def share(self, resource: str) -> float:
        """(allocated + reserved) / allocatable of ``resource`` (0 when the node offers none)."""
        total = self.allocatable.get(resource, 0)
        if total <= 0:
            return 0.0
        return (self.allocated.get(resource, 0) + self.reserved.get(resource, 0)) / total


def _taint_text(taint: Any) -> str:
    if not isinstance(taint, Mapping):
        return str(taint)
    key, value, effect = taint.get("key", ""), taint.get("value", ""), taint.get("effect", "")
    return f"{key}{'=' + str(value) if value else ''}{':' + str(effect) if effect else ''}"


def _add(into: dict[str, int], amounts: Mapping[str, Any] | None) -> None:
    for resource, amount in (amounts or {}).items():
        if isinstance(amount, int):
            into[resource] = into.get(resource, 0) + amount


def _text(name: str) -> Cast:
    """A JSON column read as its text (parsed here, each distinct text once: pods share a few requests)."""
    return Cast(name, output_field=TextField())


def read(cluster: Cluster | None, names: Iterable[str] | None = None) -> list[NodeUse]:
    """Every node of ``cluster`` (or only ``names``) with what its pods take: two queries."""
    if cluster is None:
        return []
    parsed: dict[str | None, Any] = {None: {}, "{}": {}, "[]": []}

    def load(text: str | None) -> Any:
        if text not in parsed:
            parsed[text] = json.loads(text)  # type: ignore[arg-type]
        return parsed[text]

    nodes_qs = Node.objects.filter(cluster=cluster)
    if names is not None:
        nodes_qs = nodes_qs.filter(name__in=list(names))
    rows = nodes_qs.annotate(a=_text("allocatable"), t=_text("taints"), lb=_text("labels")).values_list(
        "id", "name", "a", "t", "ready", "unschedulable", "last_heartbeat", "pool", "lb", "set_aside"
    )
    nodes = {
        pk: NodeUse(
            id=pk,
            name=name,
            allocatable=dict(load(alloc) or {}),
            taints=[_taint_text(t) for t in load(taints) or []],
            ready=ready,
            unschedulable=cordoned,
            last_heartbeat=beat,
            pool=pool,
            labels=dict(load(labels) or {}),
            set_aside=aside,
        )
        for pk, name, alloc, taints, ready, cordoned, beat, pool, labels, aside in rows
    }
    if not nodes:
        return []
    pods = Pod.objects.filter(cluster=cluster, status__in=ON_NODE_STATUSES, node__isnull=False)
    if names is not None:
        pods = pods.filter(node_id__in=list(nodes))
    for node_id, status, request, queue, group in pods.annotate(r=_text("request")).values_list(
        "node_id", "status", "r", "podgroup__queue__name", "quota_group__name"
    ):
        node = nodes.get(node_id)
        if node is None:
            continue
        node.pods += 1
        if status in STARTED_ON_NODE:
            _add(node.allocated, load(request))
            node.running += status == TaskStatus.RUNNING
        else:
            _add(node.reserved, load(request))
            node.waiting += 1
        if queue:
            node.queues.add(queue)
        if group:
            node.quota_groups.add(group)
    return sorted(nodes.values(), key=lambda n: n.name)


def resources(nodes: Sequence[NodeUse]) -> list[str]:
    """The resources the nodes offer, in display order (``pods`` left out)."""
    return units.resources_of(*(n.allocatable for n in nodes))


def sorts(resource_names: Sequence[str]) -> list[str]:
    """The sort keys the list accepts (each also with a leading ``-`` for the reverse order)."""
    return [*FIXED_SORTS, *resource_names]


def _sort_key(key: str) -> Any:
    if key == "state":
        return lambda n: ({"NotReady": 0, "set aside": 1, "cordoned": 2, "Ready": 3}[n.state], n.name)
    if key == "heartbeat":  # the longest silent first; never heard of first of all
        return lambda n: (n.last_heartbeat is not None, n.last_heartbeat or datetime.min, n.name)
    if key == "pods":
        return lambda n: (-n.pods, n.name)
    if key == "name":
        return lambda n: n.name
    return lambda n: (-n.share(key), n.name)  # a resource: the fullest first


def select(nodes: Sequence[NodeUse], *, query: str = "", state: str = "", sort: str = "name") -> list[NodeUse]:
    """The nodes that match ``query`` (in the name or pool, or the exact name of a queue or quota group using the
    node) and ``state`` (a key of :data:`STATES`), in the order of ``sort`` (a key of :func:`sorts`, ``-`` to
    reverse)."""
    q = query.strip().lower()
    out = [
        n
        for n in nodes
        if (not q or q in n.name.lower() or (n.pool and q in n.pool.lower()) or q in n.queues or q in n.quota_groups)
        and (not state or n.state.lower() == state)
    ]
    reverse = sort.startswith("-")
    out.sort(key=_sort_key(sort.lstrip("-")), reverse=reverse)
    return out


def heartbeat(when: datetime | None, now: datetime | None = None) -> dict[str, str]:
    """A heartbeat for people: ``{"ago": "12 seconds ago", "exact": "2026-11-25 09:30:12 UTC", "iso": …}``."""
    if when is None:
        return {"ago": "never", "exact": "no heartbeat received", "iso": ""}
    now = now or timezone.now()
    seconds = int((now - when).total_seconds())
    if seconds < 1:
        ago = "just now"
    elif seconds < 60:  # timesince counts whole minutes only
        ago = f"{plural(seconds, 'second')} ago"
    else:
        ago = f"{timesince(when, now, depth=1)} ago"
    return {
        "ago": ago.replace("\xa0", " "),
        "exact": when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "iso": when.isoformat(timespec="seconds"),
    }


def cells(node: NodeUse, resource_names: Sequence[str]) -> list[dict[str, Any]]:
    """Per resource: allocated, reserved, free and allocatable printed, and the bar's percentages."""
    out = []
    for r in resource_names:
        total = node.allocatable.get(r, 0)
        used, held = node.allocated.get(r, 0), node.reserved.get(r, 0)
        free = max(0, total - used - held)
        pct_used = min(100.0, 100.0 * used / total) if total > 0 else 0.0
        pct_held = min(100.0 - pct_used, 100.0 * held / total) if total > 0 else 0.0
        out.append(
            {
                "resource": r,
                "offered": total > 0,
                "allocatable": units.human(total, r),
                "allocated": units.human(used, r),
                "allocated_n": units.human(used, r, unit=False),
                "reserved": units.human(held, r) if held else "",
                "free": units.human(free, r),
                "pct_used": round(pct_used, 1),
                "pct_reserved": round(pct_held, 1),
                "over": total > 0 and used + held > total,
            }
        )
        out[-1]["html"] = meter_html(out[-1])
    return out


def meter_html(cell: Mapping[str, Any]) -> str:
    """A resource cell of the nodes table: the bar (allocated solid, reserved hatched) and the numbers. Built here
    rather than by an include per cell: the template engine would spend most of the page's time on them."""
    if not cell["offered"]:
        return format_html('<span class="muted">{}</span>', "—")
    reserved = (
        format_html('<div class="small muted nowrap">+ {} reserved</div>', cell["reserved"]) if cell["reserved"] else ""
    )
    return format_html(
        '<div class="meter{}" aria-hidden="true"><span class="m-used" style="width:{}%"></span>'
        '<span class="m-reserved" style="width:{}%"></span></div><span class="nowrap">{} of {}</span>{}',
        " over" if cell["over"] else "",
        f"{cell['pct_used']:.1f}",
        f"{cell['pct_reserved']:.1f}",
        cell["allocated_n"],
        cell["allocatable"],
        reserved,
    )


def url_prefixes() -> dict[str, str]:
    """The addresses the rows link to, with ``__name__`` for the name (one ``reverse`` each per page, not per link)."""

    return {
        "queue": reverse("frontend:queue", args=["__name__"]),
        "quota": reverse("frontend:quota", args=["__name__"]),
        "node": reverse("frontend:cluster-node", args=["__name__"]),
    }


def row(
    node: NodeUse,
    resource_names: Sequence[str],
    visible: Mapping[str, set[str] | None],
    now: datetime,
    prefixes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A node as the table prints it; queues and quota groups come with a link when the user may open them."""
    links = prefixes or url_prefixes()

    def named(kind: str, names: set[str]) -> list[dict[str, str]]:
        shown = visible.get(kind)
        return [
            {"name": n, "url": links[kind].replace("__name__", n) if shown is None or n in shown else ""}
            for n in sorted(names)
        ]

    return {
        "name": node.name,
        "url": links["node"].replace("__name__", node.name),
        "state": node.state,
        "set_aside": node.set_aside or "",
        "pool": node.pool,
        "heartbeat": heartbeat(node.last_heartbeat, now),
        "pods": node.pods,
        "running": node.running,
        "waiting": node.waiting,
        "taints": node.taints,
        "cells": cells(node, resource_names),
        "queues": named("queue", node.queues),
        "quota_groups": named("quota", node.quota_groups),
    }


def page_of(items: Sequence[NodeUse], number: Any, per_page: int = PER_PAGE) -> Page:
    """The page ``number`` of ``items`` (the last page when past it, the first when not a number)."""
    return Paginator(items, per_page, allow_empty_first_page=True).get_page(number)


def totals(nodes: Sequence[NodeUse], resource_names: Sequence[str]) -> list[dict[str, str]]:
    """The cluster's sums per resource over schedulable (Ready, not cordoned) nodes, for the page's head."""
    out = []
    for r in resource_names:
        live = [n for n in nodes if n.state == "Ready"]
        total = sum(n.allocatable.get(r, 0) for n in live)
        used = sum(n.allocated.get(r, 0) for n in live)
        held = sum(n.reserved.get(r, 0) for n in live)
        out.append(
            {
                "resource": r,
                "allocatable": units.human(total, r),
                "allocated": units.human(used, r),
                "reserved": units.human(held, r),
                "free": units.human(max(0, total - used - held), r),
            }
        )
    return out


def pod_rows(cluster: Cluster, node_id: int, queues: set[str] | None) -> tuple[list[dict[str, Any]], int]:
    """The pods on a node, those of ``queues`` (None: all) as rows, the others only counted: (rows, others)."""
    rows, others = [], 0
    qs = (
        Pod.objects.filter(cluster=cluster, node_id=node_id, status__in=ON_NODE_STATUSES)
        .order_by("namespace__name", "name")
        .values(
            "name",
            "namespace__name",
            "podgroup__name",
            "podgroup__queue__name",
            "quota_group__name",
            "status",
            "request",
            "started",
        )
    )
    for pod in qs:
        queue = pod["podgroup__queue__name"]
        if queues is not None and queue not in queues:
            others += 1
            continue
        request = pod["request"] or {}
        rows.append(
            {
                "name": pod["name"],
                "namespace": pod["namespace__name"],
                "job": pod["podgroup__name"] or "",
                "queue": queue or "",
                "quota_group": pod["quota_group__name"] or "",
                "status": pod["status"],
                "kind": "allocated" if pod["status"] in STARTED_ON_NODE else "reserved",
                "request": ", ".join(units.in_list(request[r], r) for r in units.resource_order(request)),
                "started": heartbeat(pod["started"]) if pod["started"] else None,
            }
        )
    return rows, others
