"""What-if for team members: they propose changes only inside their subtrees and see only what they may read.

Admins propose anything and see every tree node. A team member (``quotas.access``):

* may change, move, delete or create (under a parent of theirs) only the queues and quota groups of its subtrees,
  set the weight only of its namespaces, and add podgroups only in its namespaces and queues; anything else is
  refused at ``changes.<i>.<field>`` with "… is not in your team's subtree" — the same answer whether the node
  exists or not, so the refusal tells nothing about other teams. Node changes (add, remove, drain) are open to
  everyone who may read the nodes;
* gets ``before``, ``after`` and ``diff`` only for the tree nodes of its subtrees (as they are before the proposal
  and as they would be after it, including nodes it creates), namespace shares only inside those queues, and in
  ``impact`` only its podgroups (by queue) and the evictions of pods it may read — the same nodes and jobs that the
  tree, explain and list endpoints show it.

Nodes it cannot read are absent, not blanked: the answer has the shape of an admin's, with fewer keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine import rules
from engine.changes import ProposalError
from quotas.access import is_admin, visible_namespace_ids
from quotas.models import Namespace, Queue, QuotaGroup


@dataclass(frozen=True)
class Scope:
    """What one team member may touch in a proposal: the roots of its subtrees and its namespaces, by name."""

    queue_roots: frozenset[str]
    group_roots: frozenset[str]
    namespaces: frozenset[str]


def scope_of(user: Any) -> Scope | None:
    """The user's scope; ``None`` for admins (no restriction)."""
    if is_admin(user):
        return None
    return Scope(
        queue_roots=frozenset(Queue.objects.filter(teams__user=user).values_list("name", flat=True)),
        group_roots=frozenset(QuotaGroup.objects.filter(teams__user=user).values_list("name", flat=True)),
        namespaces=frozenset(
            Namespace.objects.filter(pk__in=visible_namespace_ids(user) or set()).values_list("name", flat=True)
        ),
    )


def subtree(tree: Mapping[str, Any], roots: Iterable[str]) -> set[str]:
    """Names of ``roots`` (those present in ``tree``) and all their descendants (``tree``: name -> spec with
    ``parent``)."""
    children: dict[str | None, list[str]] = {}
    for name, spec in tree.items():
        children.setdefault(spec.parent, []).append(name)
    seen: set[str] = set()
    stack = [r for r in roots if r in tree]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(children.get(name, ()))
    return seen


def _outside(i: int, field: str, what: str, name: Any) -> ProposalError:
    return ProposalError(
        [
            rules.FieldError(
                f"changes.{i}.{field}",
                f"{what} {name} is not in your team's subtree; you may propose changes only there",
                "permission_denied",
            )
        ]
    )


def check_changes(snapshot: Any, changes: Any, scope: Scope) -> set[str]:
    """Refuse (``ProposalError``) the first change outside ``scope``; return the names of the tree nodes the
    proposal creates or renames to (they are the member's). Malformed changes are left to
    ``engine.changes.apply_changes``, which reports them."""
    if not isinstance(changes, list):
        return set()
    queues = subtree(snapshot.queues, scope.queue_roots)
    groups = subtree(snapshot.quota_groups, scope.group_roots)
    created: set[str] = set()
    for i, change in enumerate(changes):
        if not isinstance(change, Mapping):
            continue
        kind, op = change.get("kind"), change.get("op")
        spec = change.get("spec") if isinstance(change.get("spec"), Mapping) else {}
        if kind in ("queue", "quota_group"):
            mine, what = (queues, "queue") if kind == "queue" else (groups, "quota group")
            if op == "create":
                parent = spec.get("parent", "root")
                if not isinstance(parent, str) or parent not in mine:
                    raise _outside(i, "spec.parent", f"parent {what}", parent)
            elif op in ("update", "delete", "move"):
                name = change.get("name")
                if isinstance(name, str) and name not in mine:
                    raise _outside(i, "name", what, name)
                if op == "move" and (not isinstance(change.get("parent"), str) or change["parent"] not in mine):
                    raise _outside(i, "parent", f"parent {what}", change.get("parent"))
                if (
                    op == "update"
                    and "parent" in spec
                    and (not isinstance(spec["parent"], str) or spec["parent"] not in mine)
                ):
                    raise _outside(i, "spec.parent", f"parent {what}", spec["parent"])
            new_name = spec.get("name")
            if op in ("create", "update") and isinstance(new_name, str):
                mine.add(new_name)
                created.add(f"{kind}:{new_name}")
        elif kind == "namespace":
            name = change.get("name")
            if isinstance(name, str) and name not in scope.namespaces:
                raise _outside(i, "name", "namespace", name)
        elif kind == "podgroup":
            ns, queue = spec.get("namespace"), spec.get("queue")
            if isinstance(ns, str) and ns not in scope.namespaces:
                raise _outside(i, "spec.namespace", "namespace", ns)
            if isinstance(ns, str) and not queue:
                queue = snapshot.namespace(ns).queue or "default"
            if isinstance(queue, str) and queue not in queues:
                raise _outside(i, "spec.queue", "queue", queue)
    return created


def filter_result(result: dict[str, Any], scope: Scope, before: Any, after: Any, created: set[str]) -> dict[str, Any]:
    """``result`` (``before``/``after``/``diff``/``impact``) with only what the member may read (new dicts; the
    cached ``before`` is not touched)."""
    new_queues = {n.split(":", 1)[1] for n in created if n.startswith("queue:")}
    new_groups = {n.split(":", 1)[1] for n in created if n.startswith("quota_group:")}
    queues = subtree(before.queues, scope.queue_roots) | subtree(after.queues, scope.queue_roots | new_queues)
    groups = subtree(before.quota_groups, scope.group_roots) | subtree(
        after.quota_groups, scope.group_roots | new_groups
    )

    def keep(section: str, key: str) -> bool:
        if section == "queues":
            return key in queues
        if section == "quota_groups":
            return key in groups
        return key.split("/", 1)[0] in queues  # namespaces: "<queue>/<namespace>", the queue's breakdown

    out: dict[str, Any] = {}
    for part in ("before", "after", "diff"):
        values = result.get(part) or {}
        out[part] = {section: {k: v for k, v in nodes.items() if keep(section, k)} for section, nodes in values.items()}
    impact = result.get("impact")
    if impact is not None:

        def podgroup_queue(key: str) -> str | None:
            pg = after.podgroups.get(key) or before.podgroups.get(key)
            return pg.queue if pg is not None else None

        def readable_pod(uid: str) -> bool:
            task = after.tasks.get(uid) or before.tasks.get(uid)
            if task is None:
                return False
            return (
                podgroup_queue(task.podgroup) in queues
                or task.quota_group in groups
                or task.namespace in scope.namespaces
            )

        out["impact"] = {
            **impact,
            "podgroups": {k: v for k, v in impact.get("podgroups", {}).items() if podgroup_queue(k) in queues},
            "evictions": [e for e in impact.get("evictions", []) if readable_pod(e["task"])],
        }
    else:
        out["impact"] = None
    return out
