"""The team page's sections: one per queue or quota group of the team, with its values, loans and figure."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count

from engine.vocabulary import WAITING_PHASES
from frontend import figures
from frontend.presenters import details, trees, units
from frontend.presenters.balances import loan_rows, resource_rows
from frontend.presenters.links import node_url
from frontend.presenters.runtime_note import runtime_note
from quotas.models import Queue, QuotaGroup
from scheduling.models import Pod, PodGroup


@dataclass
class TeamView:
    """What the team page shows: ``sections`` (quota groups first, then queues) and their figures by section key.
    (Whose jobs and evictions the page lists is ``quotas.access.team_scope``.)"""

    sections: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


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
                    "runtime_note": runtime_note(node, resources),
                    "borrows": loan_rows(borrows, True, kind, visible(kind)),
                    "lends": loan_rows(lends, False, kind, visible(kind)),
                    "children": len(node.children),
                }
            )
    return out


def _tops(tree: trees.Tree, names: Sequence[str]) -> list[str]:
    """``names`` that are in ``tree`` and not below another of ``names`` (so that nothing is counted twice)."""
    shown = [n for n in names if n in tree.nodes]
    inside = set(shown)
    return [n for n in shown if not any(a in inside for a in tree.ancestors(n))]


def team_cards(
    teams: Sequence[Any],
    owned: Mapping[int, Mapping[trees.Kind, Sequence[str]]],
    kinds: Mapping[trees.Kind, trees.Tree],
    waiting: Mapping[trees.Kind, Mapping[str, int]],
) -> list[dict[str, Any]]:
    """One summary card per team (Django group): per kind of node it owns, per resource its deserved (runtime),
    what it uses, borrows and lends, summed over its topmost nodes; and its waiting jobs (``waiting``: per kind, the
    waiting jobs counted per queue or per quota group). ``owned``: team id -> kind -> names of its nodes."""
    cards = []
    for team in teams:
        mine = owned.get(team.id, {})
        blocks = []
        jobs_waiting = None
        for kind in ("queue", "quota"):
            tree = kinds[kind]
            tops = _tops(tree, sorted(mine.get(kind, ())))
            if not tops:
                continue
            nodes = [tree.nodes[n] for n in tops]
            sums: dict[str, dict[str, int]] = {}
            for key in ("entitled", "used", "borrowed", "lent"):
                sums[key] = {}
                for node in nodes:
                    for r, v in getattr(node, key).items():
                        if not units.is_unlimited(v):
                            sums[key][r] = sums[key].get(r, 0) + v
            shown = [r for r in units.resources_of(*sums.values()) if any(sums[k].get(r) for k in sums)]
            terms = trees.TERMS[kind]
            blocks.append(
                {
                    "kind": kind,
                    "title": trees.PLURAL[kind] if len(tops) > 1 else trees.TITLES[kind].lower(),
                    "nodes": [{"name": n, "url": node_url(kind, n)} for n in tops],
                    "entitled_term": terms["entitled"],
                    "rows": [
                        {
                            "resource": r,
                            "entitled": units.human(sums["entitled"].get(r, 0), r),
                            "used": units.human(sums["used"].get(r, 0), r),
                            "borrowed": units.human(sums["borrowed"][r], r) if sums["borrowed"].get(r) else "",
                            "lent": units.human(sums["lent"][r], r) if sums["lent"].get(r) else "",
                        }
                        for r in shown
                    ],
                }
            )
            if jobs_waiting is None:  # the jobs of its queues, or of its quota groups when it has no queue
                counts = waiting.get(kind, {})
                jobs_waiting = sum(counts.get(n, 0) for top in tops for n in tree.subtree(top))
        cards.append({"name": team.name, "blocks": blocks, "waiting": jobs_waiting or 0})
    return cards


def owned_nodes(teams: Sequence[Any]) -> dict[int, dict[trees.Kind, list[str]]]:
    """team id -> kind -> the names of the queues and quota groups linked to it (two queries for all teams)."""

    ids = [t.id for t in teams]
    out: dict[int, dict[trees.Kind, list[str]]] = {i: {"queue": [], "quota": []} for i in ids}
    for kind, model in (("queue", Queue), ("quota", QuotaGroup)):
        for team_id, name in model.objects.filter(teams__in=ids).values_list("teams__id", "name"):
            out[team_id][kind].append(name)  # type: ignore[index]
    return out


def waiting_counts(cluster: Any) -> dict[trees.Kind, dict[str, int]]:
    """Waiting jobs (Pending, Inqueue, Unknown) per queue, and per quota group their pods count in (two queries)."""

    if cluster is None:
        return {"queue": {}, "quota": {}}
    by_queue = (
        PodGroup.objects.filter(cluster=cluster, phase__in=WAITING_PHASES)
        .values_list("queue__name")
        .annotate(n=Count("id"))
        .order_by()
    )
    by_group = (
        Pod.objects.filter(cluster=cluster, podgroup__phase__in=WAITING_PHASES, quota_group__isnull=False)
        .values_list("quota_group__name")
        .annotate(n=Count("podgroup", distinct=True))
        .order_by()
    )
    return {"queue": dict(by_queue), "quota": dict(by_group)}  # type: ignore[arg-type]
