"""A department lead's teams side by side on its team page (``planning.department``): one block of rows per team,
one row per resource, amounts as people read them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.urls import reverse

from engine.wording import plural
from frontend.presenters import trees
from frontend.presenters.links import node_url
from frontend.presenters.past_usage import half_life_of, sentence
from frontend.presenters.units import human
from planning.department import TeamLine


def department_rows(lines: Sequence[TeamLine], snapshot: Any) -> list[dict[str, Any]]:
    """Per team: its name and page, the tree its numbers come from and its nodes there, per resource its entitlement
    (a queue's deserved, a quota group's runtime quota), use, borrowing and lending, its waiting jobs, evictions and,
    when fairness over time is on, what its past usage does to it."""
    out = []
    for line in lines:
        half_life = half_life_of(snapshot, line.kind)
        resources = [
            {
                "resource": r,
                "entitled": human(a["entitled"], r),
                "used": human(a["used"], r),
                "borrowed": human(a["borrowed"], r) if a["borrowed"] else "",
                "lent": human(a["lent"], r) if a["lent"] else "",
                "over": a["used"] > a["entitled"],
            }
            for r, a in line.amounts.items()
        ]
        out.append(
            {
                "name": line.team,
                "url": reverse("frontend:team-detail", args=[line.team]),
                "kind": line.kind,
                "entitled_term": trees.TERMS[line.kind]["entitled"],
                "nodes": [{"name": n, "url": node_url(line.kind, n)} for n in line.nodes],
                "resources": resources or [{"resource": "", "empty": True}],
                "span": max(1, len(resources)),
                "waiting": line.waiting,
                "waiting_text": plural(line.waiting, "waiting job"),
                "evictions": line.evictions,
                "evictions_text": plural(line.evictions, "eviction"),
                "past": [
                    sentence(share, line.team if len(line.nodes) == 1 else f"{line.team}'s {node}", half_life)
                    for node, share in line.past.items()
                ],
            }
        )
    return out
