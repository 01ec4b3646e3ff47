"""The node page's content: the engine's explanation of a queue's or a quota group's values, its namespaces'
shares, its recorded samples for the time series, in display form."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.utils import timezone

from engine.values import QuotaValues
from engine.wording import plural
from frontend import figures
from frontend.presenters import trees, units
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, QuotaSample

WINDOWS = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
DEFAULT_WINDOW = "1h"
MAX_POINTS = 1500


def explain(values: QuotaValues | None, kind: str, name: str) -> dict[str, Any]:
    """The engine's explanation of a node's values: a queue's steps grouped by quantity, or a quota group's
    per-resource text, numbers and water-filling rounds, amounts printed."""
    if values is None:
        return {}
    if kind == "queue":
        if name not in values.queues:
            return {}
        groups: dict[str, list[str]] = {}
        for step in values.queues.explain(name).steps:
            if step.resource in units.HIDDEN_RESOURCES:
                continue
            groups.setdefault(step.quantity, []).append(str(step))
        return {"queue": [{"quantity": q, "steps": s} for q, s in groups.items()]}
    if name not in values.quotas:
        return {}
    raw = values.quotas.explain(name)
    if raw.get("outside_tree"):
        return {"quota_text": raw.get("text", "")}
    out = []
    for r, e in (raw.get("resources") or {}).items():
        details = [
            ("min", e.get("min")),
            ("auto-scaled min (floor)", e.get("auto_scaled_min")),
            ("request", e.get("request")),
            ("limited request", e.get("limited_request")),
            ("max", e.get("max")),
            ("parent runtime", e.get("parent_runtime")),
            ("runtime", e.get("runtime")),
            ("used", e.get("used")),
        ]
        out.append(
            {
                "resource": r,
                "text": e.get("text", ""),
                "state": e.get("state", ""),
                "bound_by": e.get("bound_by", ""),
                "details": [
                    (k, units.quantity(v, r) if v is not None else "unlimited")
                    for k, v in details
                    if k != "parent runtime" or v is not None
                ],
                "rounds": [
                    {
                        "round": rd["round"],
                        "pool": units.quantity(rd["pool"], r),
                        "share": units.quantity(rd["share"], r),
                        # a shared weight is an amount of the resource (max by default): 1200Gi, not its bytes
                        "weight": units.quantity(rd["weight"], r),
                        "total_weight": units.quantity(rd["total_weight"], r),
                        "capped": rd["capped"],
                    }
                    for rd in e.get("rounds", [])
                ],
            }
        )
    return {"quota": out}


def holding(node: trees.TreeNode, r: str) -> dict[str, Any]:
    """What ``node`` holds of ``r`` beside its allocation, printed: what admitted jobs reserve (and how many jobs)
    and what pipelined pods request (and how many pods); empty texts when nothing."""
    reserved, jobs = node.reserved.get(r, 0), node.reserving.get(r, 0)
    pipelined, pods = node.pipelined.get(r, 0), node.pipelined_pods
    return {
        "reserved_amount": reserved,
        "pipelined_amount": pipelined,
        "reserved_h": units.human(reserved, r) if reserved else "",
        "pipelined_h": units.human(pipelined, r) if pipelined else "",
        "pipelined_short": units.human(pipelined, r, unit=False) if pipelined else "",
        "reserved": f"{units.human(reserved, r)} by {plural(jobs, 'admitted job')}" if reserved else "",
        "pipelined": f"{units.human(pipelined, r)} in {plural(pods, 'pod')}" if pipelined else "",
    }


def holding_note(node: trees.TreeNode) -> str:
    """One sentence on what the node's reserved and pipelined columns count (empty when both are empty)."""
    parts = []
    if node.reserved_jobs:
        parts.append(f"reserved by {plural(node.reserved_jobs, 'admitted job')} not fully placed yet")
    if node.pipelined_pods:
        parts.append(f"{plural(node.pipelined_pods, 'pipelined pod')} waiting for resources being freed")
    return (
        ("Beside what is " + ("allocated" if node.kind == "queue" else "used") + ": " + "; ".join(parts) + ".")
        if parts
        else ""
    )


def samples(cluster: Cluster | None, kind: str, name: str, window: str) -> list[figures.Point]:
    """The node's recorded samples in ``window`` (thinned to at most ``MAX_POINTS``) as figure points."""
    if cluster is None:
        return []
    since = timezone.now() - WINDOWS[window]
    rows = list(
        QuotaSample.objects.filter(cluster=cluster, kind=kind, name=name, time__gte=since)
        .order_by("time", "id")
        .values_list("time", "request", "allocated", "deserved", "borrowed", "lent")
    )
    if len(rows) > MAX_POINTS:
        step = -(-len(rows) // MAX_POINTS)
        rows = rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else [])
    return [
        figures.Point(t, req or {}, use or {}, ent or {}, b or {}, lent or {}) for t, req, use, ent, b, lent in rows
    ]


def namespace_rows(values: QuotaValues | None, queue: str) -> list[dict[str, Any]]:
    """The namespaces sharing ``queue``: weight, request, allocated, deserved (base units) and share."""
    if values is None:
        return []
    rows = []
    for v in values.namespaces.in_queue(queue):  # in name order; the other queues' entries are never built
        rows.append(
            {
                "namespace": v.namespace,
                "weight": v.weight,
                "request": dict(v.request),
                "allocated": dict(v.allocated),
                "deserved": dict(v.deserved),
                "share": round(float(v.share), 3),
            }
        )
    return rows


def version(kind: str, name: str) -> int | None:
    """The node's row version (for the page's edit buttons), None when it is gone."""
    model = Queue if kind == "queue" else QuotaGroup
    return model.objects.filter(name=name).values_list("version", flat=True).first()


def namespace_display(rows: Sequence[dict[str, Any]], resources: Sequence[str]) -> list[dict[str, Any]]:
    """``namespace_rows`` with their request, deserved and allocated amounts printed for the table."""

    def printed(amounts: dict[str, int]) -> str:
        return ", ".join(units.in_list(v, k) for k, v in amounts.items() if k in resources)

    return [
        {
            **row,
            "request_h": printed(row["request"]),
            "deserved_h": printed(row["deserved"]),
            "allocated_h": printed(row["allocated"]),
        }
        for row in rows
    ]


def namespaces_of(kind: str, name: str) -> list[dict[str, Any]]:
    """The namespaces whose default queue (``kind`` "queue") or quota group is ``name``, with weight and version
    (the weight forms of an admin's node page)."""
    rows = (
        Namespace.objects.filter(default_queue__name=name)
        if kind == "queue"
        else Namespace.objects.filter(quota_group__name=name)
    )
    return list(rows.values("name", "weight", "version"))
