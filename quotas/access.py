"""Who may see and change what.

* Staff users (admins) read and change everything.
* Team members are users in a Django group linked to tree nodes (``Queue.teams``, ``QuotaGroup.teams``); they read
  the subtrees under their linked nodes and submit jobs to the leaf queues there, in the namespaces whose default
  queue or quota group lies there, with the leaf quota groups there (or their namespace's own group). They change
  and delete only jobs whose queue *and* namespace lie in their subtrees.
* A department lead is such a member whose team is linked to an inner node (``research``): the teams whose nodes all
  lie in its subtrees are the teams below it (``teams_below``); it reads their pages and evictions
  (``may_read_team``), their side-by-side view and the fairness audit of its subtrees.
* Everyone else is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group

from quotas.models import Namespace, Queue, QuotaGroup


def _descendants(edges: Iterable[tuple[int, int | None]], roots: set[int]) -> set[int]:
    children: dict[int | None, list[int]] = {}
    for pk, parent in edges:
        children.setdefault(parent, []).append(pk)
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        pk = stack.pop()
        if pk in seen:
            continue
        seen.add(pk)
        stack.extend(children.get(pk, ()))
    return seen


def is_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(user and user.is_authenticated and user.is_staff)


def visible_queue_ids(user: AbstractBaseUser | AnonymousUser) -> set[int] | None:
    """Queue ids the user may read; ``None`` means all (admins)."""
    if is_admin(user):
        return None
    if not user.is_authenticated:
        return set()
    roots = set(Queue.objects.filter(teams__user=user).values_list("id", flat=True))
    if not roots:
        return set()
    return _descendants(Queue.objects.values_list("id", "parent_id"), roots)


def visible_group_ids(user: AbstractBaseUser | AnonymousUser) -> set[int] | None:
    """Quota group ids the user may read; ``None`` means all (admins)."""
    if is_admin(user):
        return None
    if not user.is_authenticated:
        return set()
    roots = set(QuotaGroup.objects.filter(teams__user=user).values_list("id", flat=True))
    if not roots:
        return set()
    return _descendants(QuotaGroup.objects.values_list("id", "parent_id"), roots)


def visible_names(user: AbstractBaseUser | AnonymousUser, kind: Literal["queue", "quota"]) -> set[str] | None:
    """Names of the queues (``kind`` "queue") or quota groups ("quota") the user may read; ``None`` means all."""
    ids = visible_queue_ids(user) if kind == "queue" else visible_group_ids(user)
    if ids is None:
        return None
    model = Queue if kind == "queue" else QuotaGroup
    return set(model.objects.filter(pk__in=ids).values_list("name", flat=True))


def is_team_member(user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated:
        return False
    return Queue.objects.filter(teams__user=user).exists() or QuotaGroup.objects.filter(teams__user=user).exists()


def visible_namespace_ids(user: AbstractBaseUser | AnonymousUser) -> set[int] | None:
    """Namespaces whose default queue or quota group lies in the user's subtrees."""
    queues = visible_queue_ids(user)
    if queues is None:
        return None
    groups = visible_group_ids(user) or set()
    return set(Namespace.objects.filter(default_queue_id__in=queues).values_list("id", flat=True)) | set(
        Namespace.objects.filter(quota_group_id__in=groups).values_list("id", flat=True)
    )


def submittable_queue_ids(user: AbstractBaseUser | AnonymousUser) -> set[int] | None:
    """Leaf queues the user may submit podgroups to; ``None`` means any (admins)."""
    queues = visible_queue_ids(user)
    if queues is None:
        return None
    parents = set(Queue.objects.filter(parent_id__in=queues).values_list("parent_id", flat=True))
    return queues - parents


def usable_group_ids(user: AbstractBaseUser | AnonymousUser) -> set[int] | None:
    """Quota groups a team member may name for its pods: the leaf (non-parent) groups of its quota subtrees;
    ``None`` means any leaf group (admins). (A pod that names no group counts against its namespace's.)"""
    groups = visible_group_ids(user)
    if groups is None:
        return None
    return set(QuotaGroup.objects.filter(pk__in=groups, is_parent=False).values_list("id", flat=True))


def may_change_job(user: AbstractBaseUser | AnonymousUser, queue_id: int | None, namespace_id: int) -> bool:
    """Whether ``user`` may change or delete a podgroup or pod that sits in queue ``queue_id`` and namespace
    ``namespace_id``: admins always; team members when both lie in their subtrees (seeing a job, e.g. through a
    quota group it counts against, is not owning it)."""
    if is_admin(user):
        return True
    queues = visible_queue_ids(user) or set()
    namespaces = visible_namespace_ids(user) or set()
    return queue_id in queues and namespace_id in namespaces


def _team_nodes(team: Group) -> tuple[set[int], set[int]]:
    """The ids of the queues and of the quota groups linked to ``team``."""
    return (
        set(Queue.objects.filter(teams=team).values_list("id", flat=True)),
        set(QuotaGroup.objects.filter(teams=team).values_list("id", flat=True)),
    )


def may_read_team(user: AbstractBaseUser | AnonymousUser, team: Group) -> bool:
    """Whether ``user`` may read the team ``team`` (its page, its evictions): admins, its members, and the leads of
    a team above it (a department lead: every queue and quota group of ``team`` lies in the subtrees it reads)."""
    if is_admin(user):
        return True
    if not user.is_authenticated:
        return False
    if user.groups.filter(pk=team.pk).exists():  # type: ignore[union-attr]
        return True
    queues, groups = _team_nodes(team)
    if not queues and not groups:
        return False
    return queues <= (visible_queue_ids(user) or set()) and groups <= (visible_group_ids(user) or set())


def team_subtree_ids(team: Group) -> tuple[set[int], set[int]]:
    """The ids of the queues and of the quota groups in the subtrees of ``team``'s nodes (its own nodes included)."""
    queue_roots, group_roots = _team_nodes(team)
    queues = _descendants(Queue.objects.values_list("id", "parent_id"), queue_roots) if queue_roots else set()
    groups = _descendants(QuotaGroup.objects.values_list("id", "parent_id"), group_roots) if group_roots else set()
    return queues, groups


def teams_below(team: Group) -> list[Group]:
    """The teams below ``team`` (a department's teams), by name: the other teams that own a tree node, all of whose
    queues and quota groups lie in the subtrees of ``team``'s nodes, not all of them ``team``'s own nodes."""
    queue_roots, group_roots = _team_nodes(team)
    if not queue_roots and not group_roots:
        return []
    queues, groups = team_subtree_ids(team)
    owned: dict[int, tuple[set[int], set[int]]] = {}
    for team_id, pk in Queue.objects.filter(teams__isnull=False).values_list("teams__id", "id"):
        owned.setdefault(team_id, (set(), set()))[0].add(pk)
    for team_id, pk in QuotaGroup.objects.filter(teams__isnull=False).values_list("teams__id", "id"):
        owned.setdefault(team_id, (set(), set()))[1].add(pk)
    below = [
        team_id
        for team_id, (q, g) in owned.items()
        if team_id != team.pk and q <= queues and g <= groups and not (q <= queue_roots and g <= group_roots)
    ]
    return list(Group.objects.filter(pk__in=below).order_by("name"))


@dataclass(frozen=True)
class TeamScope:
    """Whose jobs are a team's: those of its queues and their subtrees (``kind`` "queue"), or, when it has no
    queue, those whose pods count against its quota groups and their subtrees (``kind`` "quota"). ``names``: the
    tree nodes of that kind (empty when the team owns no node)."""

    kind: Literal["queue", "quota"]
    names: frozenset[str]


def team_scope(team: Group) -> TeamScope:
    """The one definition of a team's jobs, used by the team page's jobs and evictions and by the evictions API's
    ``team`` filter (three queries at most)."""
    for kind, model in (("queue", Queue), ("quota", QuotaGroup)):
        roots = set(model.objects.filter(teams=team).values_list("id", flat=True))  # type: ignore[attr-defined]
        if roots:
            rows = list(model.objects.values_list("id", "parent_id", "name"))  # type: ignore[attr-defined]
            ids = _descendants(((pk, parent) for pk, parent, _ in rows), roots)
            return TeamScope(kind, frozenset(name for pk, _, name in rows if pk in ids))  # type: ignore[arg-type]
    return TeamScope("queue", frozenset())
