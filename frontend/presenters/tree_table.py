"""The tree page's table: one row per node in tree order, amounts of one resource without their unit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontend.presenters import trees, units
from frontend.presenters.balances import balance, limits_text


def tree_rows(tree: trees.Tree, r: str, urls: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every node of ``tree`` in order with its indent, state, weight and amounts of ``r``."""
    rows = []
    for name in tree.order:
        node = tree.nodes[name]
        cap = node.cap.get(r)
        rows.append(
            {
                "name": name,
                "url": urls[name],
                "depth": node.depth,
                "indent": node.depth * 14,
                "leaf": node.is_leaf,
                "state": node.state,
                "weight": node.weight,
                "cap": units.human(cap, r, unit=False) if cap is not None else "unlimited",
                "floor": units.human(node.floor.get(r, 0), r, unit=False),
                "limits": limits_text(node, r, unit=False),
                "entitled": units.human(node.entitled.get(r, 0), r, unit=False),
                "used": units.human(node.used.get(r, 0), r, unit=False),
                "request": units.human(node.request.get(r, 0), r, unit=False),
                **balance(node, r, unit=False),
            }
        )
    return rows
