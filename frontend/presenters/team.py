"""The team page's sections: one per queue or quota group of the team, with its values, loans and figure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from frontend import figures
from frontend.presenters import details, trees, units
from frontend.presenters.balances import loan_rows, resource_rows
from frontend.presenters.links import node_url


@dataclass
class TeamView:
    """What the team page shows: ``sections`` (quota groups first, then queues), their figures by section key,
    and the subtrees whose jobs the page lists."""

    sections: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    job_queues: set[str] = field(default_factory=set)
    job_groups: set[str] = field(default_factory=set)


def team_view(
    owned: Sequence[tuple[trees.Kind, trees.Tree, Sequence[str]]],
    visible: Callable[[trees.Kind], set[str] | None],
) -> TeamView:
    """The sections of the nodes a team owns (``owned``: kind, the whole tree, the team's node names);
    ``visible(kind)`` is the set of names the user may open (None: all)."""
    out = TeamView()
    for kind, tree, names in owned:
        for name in names:
            if name not in tree.nodes:
                continue
            node = tree.nodes[name]
            resources = units.resources_of(node.cap, node.floor, node.entitled, node.used) or ["cpu"]
            borrows, lends = trees.node_loans(tree, name)
            (out.job_queues if kind == "queue" else out.job_groups).update(tree.subtree(name))
            key = f"{kind}-{name}".replace(".", "-")
            out.figures[key] = figures.resources_figure(
                node, resources, {x: trees.effective_cap(tree, name, x) for x in resources}
            )
            out.sections.append(
                {
                    "key": key,
                    "kind": kind,
                    "kind_title": trees.TITLES[kind],
                    "name": name,
                    "url": node_url(kind, name),
                    "terms": trees.TERMS[kind],
                    "resource_rows": resource_rows(tree, node, resources),
                    "holding_note": details.holding_note(node),
                    "borrows": loan_rows(borrows, True, kind, visible(kind)),
                    "lends": loan_rows(lends, False, kind, visible(kind)),
                    "children": len(node.children),
                }
            )
    return out
