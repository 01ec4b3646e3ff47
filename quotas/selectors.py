"""Read side of the trees: phase counts, nested trees in one call."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db.models import Count

from quotas.models import Queue


def queue_phase_counts(queue_ids: Iterable[int] | None = None) -> dict[int, dict[str, int]]:
    """PodGroups per phase for each queue, counted from the podgroups themselves (never a stale counter; through
    the queues' reverse relation, so this module needs no model of the scheduling app)."""
    qs = Queue.objects.filter(podgroups__isnull=False)
    if queue_ids is not None:
        qs = qs.filter(pk__in=list(queue_ids))
    out: dict[int, dict[str, int]] = {}
    rows = qs.values_list("pk", "podgroups__phase").annotate(n=Count("podgroups")).order_by()
    for queue_id, phase, n in rows:
        out.setdefault(queue_id, {})[phase.lower()] = n
    return out


def build_tree(
    rows: list[Any], serialize: Callable[[Any], dict[str, Any]], *, visible: set[int] | None = None
) -> list[dict[str, Any]]:
    """Nest rows (with ``pk`` and ``parent_id``) into ``{..., "children": [...]}`` dicts, sorted by name.

    With ``visible``, only those rows appear; a visible row whose parent is hidden becomes a top-level node.
    """
    nodes = {r.pk: {**serialize(r), "children": []} for r in rows if visible is None or r.pk in visible}
    tops: list[dict[str, Any]] = []
    for r in rows:
        if r.pk not in nodes:
            continue
        parent = nodes.get(r.parent_id)
        (parent["children"] if parent is not None else tops).append(nodes[r.pk])
    for node in nodes.values():
        node["children"].sort(key=lambda n: n["name"])
    tops.sort(key=lambda n: n["name"])
    return tops
