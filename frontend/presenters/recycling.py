"""The recycling warnings as the team page and the job page show them: the sentences of
``scheduling.recycle_outlook`` (the one computation, also behind ``fairway job why``), picked for the page's team or
job, with the link to the quota group."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from frontend.presenters import trees
from frontend.presenters.links import node_url
from quotas.access import TeamScope
from scheduling.recycle_outlook import RecycleWarning, recycle_warnings


def _row(w: RecycleWarning, mine: int | None, whose: str, visible: Collection[str] | None) -> dict[str, Any]:
    return {
        "group": w.group,
        "url": node_url("quota", w.group) if visible is None or w.group in visible else "",
        "sentence": w.sentence,
        "why": w.reason,
        "pods": w.pods,
        "seconds_left": w.seconds_left,
        "mine": mine,
        "whose": whose,
    }


def for_team(
    warnings: Sequence[RecycleWarning],
    groups: trees.Tree,
    owned: Iterable[str],
    scope: TeamScope,
    visible: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """The warnings of a team: those of the quota groups in the subtrees of the groups it owns (``owned``, in the
    quota tree ``groups``), and those that would take pods of its jobs (``scope``, ``quotas.access.team_scope``),
    with how many of them are its jobs' when the group is not the team's. ``visible``: the quota groups the reader
    may open (None: all); another is named, not linked."""
    mine_groups = {n for name in owned for n in groups.subtree(name)}
    out = []
    for w in warnings:
        if w.group in mine_groups or (scope.kind == "quota" and w.group in scope.names):
            out.append(_row(w, None, "", visible))
            continue
        mine = sum(1 for v in w.victims if v.queue in scope.names) if scope.kind == "queue" else 0
        if mine:
            out.append(_row(w, mine, "your team's", visible))
    return out


def for_job(
    warnings: Sequence[RecycleWarning], job: str, visible: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """The warnings that would take pods of ``job`` (``namespace/name``), with how many of them are its own
    (``visible``: as for :func:`for_team`)."""
    return [_row(w, w.of_jobs({job}), "this job's", visible) for w in warnings if w.of_jobs({job})]


def warnings_of(state: Any, now: datetime) -> list[RecycleWarning]:
    """The recycling warnings of the page's cluster (``frontend.views.common.State``: its snapshot and values, so
    the engine's quota values are not computed again), as at ``now``."""
    if state.cluster is None or state.snapshot is None:
        return []
    return recycle_warnings(state.cluster, now=now, snapshot=state.snapshot, quotas=state.values.quotas)
