"""What a tree node borrows and lends, per resource, as the pages show it (the node page, the team page and the
overview's top borrowers and lenders share these rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.fairshare.waterfill import hamilton
from frontend.presenters import details, trees, units
from frontend.presenters.ledger import POOL, Loan
from frontend.presenters.links import node_url


def balance(node: trees.TreeNode, r: str, *, unit: bool = True) -> dict[str, Any]:
    """What ``node`` borrows and lends of ``r`` (printed, empty when none) and the css class of the larger."""
    b, lent = node.borrowed.get(r, 0), node.lent.get(r, 0)
    return {
        "borrowed": units.human(b, r, unit=unit) if b else "",
        "lent": units.human(lent, r, unit=unit) if lent else "",
        "css": "borrows" if b > lent else "lends" if lent > b else "",
    }


def limits_text(node: trees.TreeNode, r: str, *, unit: bool = True) -> str:
    """The node's borrowing and lending limits on ``r`` in words (``borrows ≤ 2 · lends ≤ 1``), empty when none."""
    parts = []
    for key, word in (("borrowing_limit", "borrows"), ("lending_limit", "lends")):
        amount = (node.extra.get(key) or {}).get(r)
        if amount is not None:
            parts.append(f"{word} ≤ {units.human(amount, r, unit=unit)}")
    return " · ".join(parts)


def _whole_amounts(items: Sequence[Loan]) -> dict[int, int]:
    """For the loans of a resource that comes only whole (GPUs: anything read in whole units, not cores or bytes),
    their pro-rata amounts rounded to whole units so that they still add up to the (whole) total: largest
    remainder, by position in ``items``."""
    out: dict[int, int] = {}
    by_resource: dict[str, list[int]] = {}
    for i, loan in enumerate(items):
        if units.unit_of(loan.resource)[1] not in ("cores", "GiB"):
            by_resource.setdefault(loan.resource, []).append(i)
    for resource, positions in by_resource.items():
        per_unit = int(units.unit_of(resource)[0])
        weights = [round(items[i].amount) for i in positions]
        whole = hamilton(round(sum(weights) / per_unit), weights)
        out.update({i: n * per_unit for i, n in zip(positions, whole, strict=True)})
    return out


def loan_rows(items: Sequence[Loan], borrowing: bool, kind: str, visible: set[str] | None) -> list[dict[str, Any]]:
    """Loans as rows: the other party (linked when the user may open it), the resource and the amount (GPUs and
    other resources that come whole in whole units, still adding up to the node's borrowed or lent)."""
    rows = []
    order = {r: i for i, r in enumerate(units.resource_order({x.resource for x in items}))}
    ordered = sorted(items, key=lambda x: (order.get(x.resource, 99), -x.amount))
    whole = _whole_amounts(ordered)
    for i, loan in enumerate(ordered):
        if loan.resource in units.HIDDEN_RESOURCES:
            continue
        other = loan.lender if borrowing else loan.borrower
        amount = whole.get(i, round(loan.amount))
        text = "≈ " + units.human(amount, loan.resource)
        if amount == 0 < loan.amount:
            text = "< " + units.human(int(units.unit_of(loan.resource)[0]), loan.resource)
        rows.append(
            {
                "other": other or "unreserved capacity",
                "url": node_url(kind, other) if other != POOL and (visible is None or other in visible) else "",
                "resource": loan.resource,
                "amount": text,
            }
        )
    return rows


def resource_rows(tree: trees.Tree, node: trees.TreeNode, resources: Sequence[str]) -> list[dict[str, Any]]:
    """One row per resource: floor, entitled, used, cap, effective cap, request, the kind's extra value and the
    balance, printed with units."""
    rows = []
    for r in resources:
        cap = node.cap.get(r)
        extra_key = "real_capability" if node.kind == "queue" else "auto_scaled_min"
        extra = node.extra.get(extra_key, {}).get(r)
        rows.append(
            {
                "resource": r,
                "unit": units.unit_of(r)[1],
                "floor": units.human(node.floor.get(r, 0), r),
                "floor_scaled": _scaled_floor(node, r, extra),
                "entitled": units.human(node.entitled.get(r, 0), r),
                "used": units.human(node.used.get(r, 0), r),
                "cap": units.human(cap, r) if cap is not None else "unlimited",
                "effective_cap": units.human(trees.effective_cap(tree, node.name, r), r),
                "request": units.human(node.request.get(r, 0), r),
                "extra": units.human(extra, r) if extra is not None else "—",
                "limits": limits_text(node, r),
                **balance(node, r),
                **details.holding(node, r),
            }
        )
    return rows


def _scaled_floor(node: trees.TreeNode, r: str, scaled: int | None) -> str:
    """``scaled to 94.5 cores`` when a quota group's min was scaled down (Koordinator scales the mins of siblings that
    claim more than their parent has): borrowing is counted from the scaled min, so the reader needs it."""
    if node.kind != "quota" or scaled is None or scaled >= node.floor.get(r, 0):
        return ""
    return f"scaled to {units.human(scaled, r)}"


def children_rows(kind: str, children: Sequence[trees.TreeNode], resources: Sequence[str]) -> list[dict[str, Any]]:
    """A node's children with their page and what each borrows and lends per resource."""
    return [
        {"name": c.name, "url": node_url(kind, c.name), "items": [{"resource": x, **balance(c, x)} for x in resources]}
        for c in children
    ]
