"""The overview page's rows: cluster capacity per resource and the top borrowers and lenders of both trees."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from frontend.presenters import trees, units
from frontend.presenters.balances import balance


def top_balances(tree: trees.Tree, resources: Sequence[str], n: int = 8) -> list[trees.TreeNode]:
    """The ``n`` nodes that borrow or lend the most, each resource weighed by its share of the cluster."""
    total = tree.total

    def weight(node: trees.TreeNode) -> float:
        return sum((node.borrowed.get(r, 0) + node.lent.get(r, 0)) / total[r] for r in resources if total.get(r, 0) > 0)

    ranked = [tree.nodes[nm] for nm in tree.order if tree.nodes[nm].parent is not None]
    ranked = [x for x in ranked if weight(x) > 0]
    ranked.sort(key=lambda x: (-weight(x), x.name))
    return ranked[:n]


def capacity_rows(
    resources: Sequence[str], total: Mapping[str, int], allocated: Mapping[str, int], requested: Mapping[str, int]
) -> list[dict[str, Any]]:
    """Per resource: the cluster's total, what is allocated and requested, and the allocated percentage."""
    return [
        {
            "resource": r,
            "total": units.human(total.get(r, 0), r),
            "allocated": units.human(allocated.get(r, 0), r),
            "requested": units.human(requested.get(r, 0), r),
            "pct": round(100.0 * allocated.get(r, 0) / total[r], 1) if total.get(r) else 0.0,
        }
        for r in resources
    ]


def top_rows(
    tops: Sequence[tuple[str, Sequence[trees.TreeNode], Mapping[str, str]]], resources: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per top node (``tops``: the kind's label, its nodes and their page addresses) with what it
    borrows or lends per resource."""
    return [
        {
            "kind": kind_label,
            "name": node.name,
            "url": urls[node.name],
            "items": [
                {"resource": r, **balance(node, r)} for r in resources if node.borrowed.get(r, 0) or node.lent.get(r, 0)
            ],
        }
        for kind_label, nodes_, urls in tops
        for node in nodes_
    ]
