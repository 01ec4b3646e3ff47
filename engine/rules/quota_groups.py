"""Quota-group rules (Koordinator's elastic quota webhook, seed 001 "Configuration Limit")."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Final

from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import ResourceList
from engine.rules.common import (
    _NO_GROUP_FACT,
    _NO_GROUP_FACTS,
    NON_FIELD,
    FieldError,
    GroupFacts,
    _names,
    _q,
    text_errors,
    validate_dns_label,
    validate_dns_subdomain,
)
from engine.rules.tree import (
    CHECKPOINT_EVERY,
    _borrowing_lending_errors,
    _dedupe,
    _negative_errors,
    _sum_errors,
    _TreeView,
)
from engine.treefields import QUOTA_GROUP_FIELDS
from engine.wording import plural

_BUILTIN_GROUPS: Final = (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP)
DEFAULT_MAX_DEPTH: Final = 10  # levels below root (a child of root, or a separate tree's root, is at 1)
_DEFAULT_GROUP_EDITABLE: Final = ("min", "max", "shared_weight", "allow_lent", "min_scale_exempt")


class _GroupView(_TreeView[QuotaGroupSpec]):
    """The quota-group tree as it would be after the change."""

    root = ROOT_GROUP

    def __init__(self, specs: dict[str, QuotaGroupSpec], alias: Mapping[str, str] | None = None) -> None:
        super().__init__(specs, alias)
        self._min_totals: dict[str, ResourceList] = {}
        self._owners: tuple[Mapping[str, GroupFacts], dict[str, list[str]]] | None = None
        self._min_errors: dict[str, list[FieldError]] = {}

    def deepest_below(self, name: str) -> tuple[int, str]:
        """How many levels the subtree of ``name`` goes below it, and its deepest group (the first by name)."""
        depth, deepest, level, seen = 0, "", [name], {name}
        while True:
            nxt = sorted(c for n in level for c in self.children.get(n, ()) if c not in seen)
            if not nxt:
                return depth, deepest
            seen.update(nxt)
            depth, deepest, level = depth + 1, nxt[0], nxt

    def namespace_owners(self, facts: Mapping[str, GroupFacts]) -> dict[str, list[str]]:
        """Namespace -> the groups of this tree that ``facts`` bind it to, by name (built once per ``facts``)."""
        if self._owners is None or self._owners[0] is not facts:
            index: dict[str, list[str]] = {}
            for group in sorted(facts):
                if group in self.specs:
                    for namespace in facts[group].namespaces:
                        index.setdefault(namespace, []).append(group)
            self._owners = (facts, index)
        return self._owners[1]

    def children_min_errors(self, parent: str) -> list[FieldError]:
        """The parent's min against its children's min added up (asked by the parent and by each child: once)."""
        if parent not in self._min_errors:
            self._min_errors[parent] = _sum_errors(
                f"quota group {parent}",
                self.specs[parent].min,
                "min",
                self.children_min(parent),
                unset_is_unlimited=False,
            )
        return list(self._min_errors[parent])

    def children_min(self, parent: str) -> ResourceList:
        """Sum of the children's min (memoised for whole-tree checks)."""
        if parent not in self._min_totals:
            self._min_totals[parent] = ResourceList.total(self.specs[c].min for c in self.children.get(parent, ()))
        return self._min_totals[parent]


def fill_quota_group_defaults(tree: Mapping[str, QuotaGroupSpec], spec: QuotaGroupSpec) -> QuotaGroupSpec:
    """Koordinator's mutating defaults (``fillQuotaDefaultInformation``) as a new spec.

    An empty parent becomes ``root``; an empty ``tree_id`` is inherited from an existing non-root parent;
    ``shared_weight`` defaults to ``max``, and a given one is normalised to exactly max's keys (missing
    keys copied from max, extra keys dropped). ``root`` itself is returned unchanged.
    """
    if spec.name == ROOT_GROUP:
        return spec
    parent = ROOT_GROUP if spec.parent == "" else spec.parent
    tree_id = spec.tree_id
    if not tree_id and parent is not None and parent != ROOT_GROUP and parent in tree:
        tree_id = tree[parent].tree_id
    if not spec.shared_weight:
        shared_weight = spec.max
    else:
        given = spec.shared_weight
        # ResourceList reads a missing name as 0, so Mapping.get(n, default) would never use the default.
        shared_weight = ResourceList({n: (given[n] if n in given else a) for n, a in spec.max.items()})  # noqa: SIM401
    return replace(spec, parent=parent, tree_id=tree_id, shared_weight=shared_weight)


def _group_fields(spec: QuotaGroupSpec) -> tuple[object, ...]:
    # Plain dicts, so that "unset" and an explicit 0 differ (ResourceList equality reads missing as 0).
    weight = None if spec.shared_weight is None else spec.shared_weight.to_dict()
    return (
        spec.name,
        spec.parent,
        spec.is_parent,
        spec.min.to_dict(),
        spec.max.to_dict(),
        weight,
        spec.allow_lent,
        spec.tree_id,
        spec.min_scale_exempt,
    )


def _group_builtin_errors(new: QuotaGroupSpec, old: QuotaGroupSpec | None) -> list[FieldError]:
    obj = f"quota group {new.name}"
    errors: list[FieldError] = []
    if old is not None and old.name in (ROOT_GROUP, SYSTEM_GROUP) and _group_fields(old) != _group_fields(new):
        # Koordinator's IsForbiddenModify: the system and root quotas are managed, never edited.
        errors.append(FieldError(NON_FIELD, f"the {old.name} quota group cannot be modified", "protected"))
        return errors
    if old is not None and old.name == DEFAULT_GROUP:
        for name in ("parent", "is_parent", "tree_id"):
            if getattr(old, name) != getattr(new, name):
                errors.append(
                    FieldError(
                        name,
                        f"{obj}: the default quota group's {name} cannot be changed "
                        f"(only {', '.join(_DEFAULT_GROUP_EDITABLE)} can)",
                        "protected",
                    )
                )
    if new.name == ROOT_GROUP and new.parent is not None:
        errors.append(FieldError("parent", f"{obj}: the root quota group cannot have a parent", "protected"))
    if new.name in (SYSTEM_GROUP, DEFAULT_GROUP):
        if new.parent != ROOT_GROUP:
            errors.append(
                FieldError("parent", f"{obj}: the {new.name} quota group must stay directly under root", "protected")
            )
        if new.is_parent:
            errors.append(
                FieldError("is_parent", f"{obj}: the {new.name} quota group cannot be a parent group", "protected")
            )
    return errors


def _group_self_errors(new: QuotaGroupSpec) -> list[FieldError]:
    """Koordinator's validateQuotaSelfItem: values >= 0, min keys within max keys, min <= max."""
    obj = f"quota group {new.name}"
    errors = text_errors(obj, new, QUOTA_GROUP_FIELDS)
    errors += _negative_errors(obj, "min", new.min) + _negative_errors(obj, "max", new.max)
    if new.shared_weight is not None:
        errors += _negative_errors(obj, "shared_weight", new.shared_weight)
    mx = new.max
    for name in sorted([n for n, amount in new.min.items() if n not in mx or amount > mx[n]]):
        if name not in new.max:
            errors.append(
                FieldError(
                    f"min.{name}",
                    f"{obj}: min sets {name} {_q(new.min[name], name)} but max does not set {name}; "
                    "every resource in min must also be in max",
                    "min_key_not_in_max",
                )
            )
        elif new.min[name] > new.max[name]:
            errors.append(
                FieldError(
                    f"min.{name}",
                    f"{obj}: min {name} {_q(new.min[name], name)} must be <= max {name} {_q(new.max[name], name)}",
                    "min_exceeds_max",
                )
            )
    top = ""
    if new.parent is None or new.name in (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP):
        top = "a tree root" if new.name != ROOT_GROUP and new.parent is None else f"the {new.name} quota group"
    return errors + _borrowing_lending_errors(obj, "min", new.min, new.borrowing_limit, new.lending_limit, top=top)


def group_field_errors(new: QuotaGroupSpec) -> list[FieldError]:
    """The checks of a quota group's own fields, which need no tree: values >= 0, min within max."""
    return _group_self_errors(new)


def _check_group(
    view: _GroupView,
    new: QuotaGroupSpec,
    old: QuotaGroupSpec | None,
    facts: Mapping[str, GroupFacts],
    *,
    max_depth: int,
    whole_tree: bool = False,
) -> list[FieldError]:
    obj = f"quota group {new.name}"
    errors = _group_builtin_errors(new, old)
    if errors and errors[0].code == "protected" and errors[0].field == NON_FIELD:
        return errors
    errors += _group_self_errors(new)
    own_facts = facts.get(new.name, _NO_GROUP_FACT)
    children = [view.specs[c] for c in view.children.get(new.name, ())]
    errors += _is_parent_errors(obj, new, old, children, own_facts.pods)
    # tree_id: immutable, and equal to the parent's and the children's.
    if old is not None and old.tree_id != new.tree_id:
        errors.append(
            FieldError(
                "tree_id",
                f"{obj}: tree_id cannot change (from {old.tree_id!r} to {new.tree_id!r})",
                "immutable",
            )
        )
    errors += _group_namespace_errors(obj, view, new.name, facts)
    if new.name == ROOT_GROUP:
        # Koordinator never validates the root's topology: first-level groups may carry any tree_id.
        return errors
    for child in children:
        if child.tree_id != new.tree_id:
            errors.append(
                FieldError(
                    "tree_id",
                    f"{obj}: tree_id {new.tree_id!r} differs from its child group {child.name}'s {child.tree_id!r}",
                    "tree_id",
                )
            )
    moved = whole_tree or old is None or old.name != new.name or old.parent != new.parent
    placement = _group_placement_errors(obj, view, new, max_depth, check_depth=moved, whole_tree=whole_tree)
    if placement is not None:
        return errors + placement
    if new.parent is not None and new.parent != ROOT_GROUP:  # placed: a parent chain up to a tree root
        errors += _group_parent_errors(obj, view, new, new.parent)
    return errors + _group_children_errors(obj, view, new, children)


def _is_parent_errors(
    obj: str, new: QuotaGroupSpec, old: QuotaGroupSpec | None, children: list[QuotaGroupSpec], pods: int
) -> list[FieldError]:
    """is_parent (Koordinator checkIsParentChange, extended to creation and whole-tree checks)."""
    errors: list[FieldError] = []
    if not new.is_parent and children and new.name != ROOT_GROUP:
        turned = old is not None and old.is_parent
        errors.append(
            FieldError(
                "is_parent",
                f"{obj}: "
                + ("is_parent cannot be set to false" if turned else "must be a parent group (is_parent true)")
                + f" while it has {plural(len(children), 'child group')}: {_names(c.name for c in children)}",
                "is_parent",
            )
        )
    if new.is_parent and pods > 0:
        turned = old is not None and not old.is_parent
        errors.append(
            FieldError(
                "is_parent",
                f"{obj}: "
                + ("is_parent cannot be set to true" if turned else "cannot be a parent group")
                + f" while {plural(pods, 'pod')} {'is' if pods == 1 else 'are'} bound to it",
                "is_parent",
            )
        )
    return errors


def _group_namespace_errors(obj: str, view: _GroupView, name: str, facts: Mapping[str, GroupFacts]) -> list[FieldError]:
    """The group's namespaces: DNS labels, each bound to one group only."""
    errors: list[FieldError] = []
    seen_ns: set[str] = set()
    for namespace in facts.get(name, _NO_GROUP_FACT).namespaces:
        ns_errors = validate_dns_label(namespace, what="namespace", field="namespaces")
        if ns_errors:
            errors += ns_errors
            continue
        if namespace in seen_ns:
            errors.append(FieldError("namespaces", f"{obj}: namespace {namespace} is listed twice", "invalid"))
            continue
        seen_ns.add(namespace)
        owners = [g for g in view.namespace_owners(facts).get(namespace, ()) if g != name]
        if owners:
            errors.append(
                FieldError(
                    "namespaces",
                    f"{obj}: namespace {namespace} is already bound to quota group {owners[0]}",
                    "namespace_taken",
                )
            )
    return errors


def _group_placement_errors(
    obj: str, view: _GroupView, new: QuotaGroupSpec, max_depth: int, *, check_depth: bool, whole_tree: bool
) -> list[FieldError] | None:
    """Where the group sits: ``None`` when it has a parent chain up to a tree root (within ``max_depth`` when
    ``check_depth``: a group created, moved or renamed, or every group of a whole tree), else the errors that end its
    checks (an empty list for a tree root that is fine: no parent, no min sums to check; and, in a whole-tree check,
    for a group below the one refused for its depth, which is reported through that one). A tree root (no parent)
    is at depth 1, as a child of ``root`` is."""
    parent_name = new.parent
    if parent_name is None:
        # The root of another quota tree (Koordinator's is-root groups): no parent, min sums not checked.
        if not new.tree_id:
            return [FieldError("tree_id", f"{obj}: a quota tree root (no parent) must have a tree_id", "tree_id")]
        return []
    if parent_name == new.name:
        return [FieldError("parent", f"{obj}: a quota group cannot use itself as its parent", "self_parent")]
    place = view.place(new.name)
    if place.stop == "cycle":
        return [
            FieldError(
                "parent",
                f"{obj}: parent {parent_name} makes the parent chain loop ({view.loop_text(new.name, parent_name)}): "
                "a quota group cannot be placed under its own descendant",
                "cycle",
            )
        ]
    if place.stop is not None and place.orphan == new.name:
        return [FieldError("parent", f"{obj}: parent quota group {parent_name} does not exist", "parent_not_found")]
    if place.stop is not None:
        return [
            FieldError(
                "parent",
                f"{obj}: ancestor quota group {place.stop.split(':', 1)[1]} (parent of {place.orphan}) does not exist",
                "parent_not_found",
            )
        ]
    if not check_depth:
        return None
    if place.depth > max_depth:
        if whole_tree and place.depth > max_depth + 1:
            return []
        return [
            FieldError(
                "parent",
                f"{obj}: depth {place.depth} under parent {parent_name} exceeds the maximum allowed depth of "
                f"{max_depth}",
                "depth",
            )
        ]
    below, deepest = (0, "") if whole_tree else view.deepest_below(new.name)
    if place.depth + below > max_depth:
        return [
            FieldError(
                "parent",
                f"{obj}: under parent {parent_name} its descendant quota group {deepest} would be at depth "
                f"{place.depth + below}, beyond the maximum allowed depth of {max_depth}",
                "depth",
            )
        ]
    return None


def _group_parent_errors(obj: str, view: _GroupView, new: QuotaGroupSpec, parent_name: str) -> list[FieldError]:
    """The group against its parent (not root): a parent group, the same tree_id, max keys, the siblings' min."""
    parent = view.specs[parent_name]
    errors: list[FieldError] = []
    if not parent.is_parent:
        errors.append(
            FieldError(
                "parent",
                f"{obj}: quota group {parent_name} is not a parent group (is_parent false) and cannot have "
                "child groups",
                "parent_not_parent",
            )
        )
    if new.tree_id != parent.tree_id:
        errors.append(
            FieldError(
                "tree_id",
                f"{obj}: tree_id {new.tree_id!r} differs from its parent {parent_name}'s {parent.tree_id!r}",
                "tree_id",
            )
        )
    extra_keys = new.max.keys() - parent.max.keys()
    if extra_keys:
        extra = sorted(extra_keys)
        errors.append(
            FieldError(
                f"max.{extra[0]}",
                f"{obj}: max sets {', '.join(extra)} but its parent quota group {parent_name}'s max does not; "
                "add the resource to the parent first",
                "resource_keys",
            )
        )
    # Seed 001: the children's min add up to at most the parent's min, except directly under root.
    return errors + view.children_min_errors(parent_name)


def _group_children_errors(
    obj: str, view: _GroupView, new: QuotaGroupSpec, children: list[QuotaGroupSpec]
) -> list[FieldError]:
    """The group against its children: their max keys within its own, their min within its min."""
    errors: list[FieldError] = []
    for child in children:
        extra_keys = child.max.keys() - new.max.keys()
        if extra_keys:
            extra = sorted(extra_keys)
            errors.append(
                FieldError(
                    f"max.{extra[0]}",
                    f"{obj}: its child quota group {child.name} sets max {', '.join(extra)}, "
                    "which its own max does not",
                    "resource_keys",
                )
            )
    if children:
        # Koordinator applies this one to first-level groups too.
        errors += view.children_min_errors(new.name)
    return errors


def validate_quota_group(
    tree: Mapping[str, QuotaGroupSpec],
    new: QuotaGroupSpec,
    old: QuotaGroupSpec | None,
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[FieldError]:
    """Check creating (``old=None``), updating or renaming a quota group against ``tree`` (before the change).

    A group created, moved or renamed must sit, with its whole subtree, within ``max_depth`` levels of its tree's
    root (``FAIRWAY_MAX_QUOTA_GROUP_DEPTH``; Koordinator sets no bound, a 20,000-level chain would cost every
    computation on the tree).

    Pass ``new`` through ``fill_quota_group_defaults`` first, as Koordinator's mutating webhook does.
    ``facts[new.name].namespaces`` are the namespaces proposed for ``new``; other entries are the
    current bindings and pod counts.
    """
    errors = validate_dns_subdomain(new.name, what="quota group name")
    if old is None:
        if new.name in tree:
            errors.append(FieldError("name", f"quota group {new.name} already exists", "exists"))
    elif old.name != new.name:
        if old.name in _BUILTIN_GROUPS:
            errors.append(FieldError("name", f"the {old.name} quota group cannot be renamed", "protected"))
        if new.name in tree:
            errors.append(
                FieldError(
                    "name",
                    f"quota group {old.name} cannot be renamed to {new.name}: that group already exists",
                    "exists",
                )
            )
    if any(e.code in ("exists", "protected") for e in errors):
        return errors + group_field_errors(new)  # the group's own fields still tell their problems
    view = _GroupView.after(tree, new, old)
    return errors + _check_group(view, new, old, facts, max_depth=max_depth)


def validate_quota_tree(
    groups: Mapping[str, QuotaGroupSpec],
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    checkpoint: Callable[[], None] | None = None,
) -> list[FieldError]:
    """Check a whole snapshot of quota groups at once: every group as if created, cycles, missing parents, depth.

    Linear in the groups (times their resources and namespaces); ``checkpoint`` (a deadline's ``check``) is called
    every ``CHECKPOINT_EVERY`` groups."""
    found = quota_tree_errors(groups, facts=facts, max_depth=max_depth, checkpoint=checkpoint)
    return _dedupe(e for _, errors in found for e in errors)


def quota_tree_errors(
    groups: Mapping[str, QuotaGroupSpec],
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    checkpoint: Callable[[], None] | None = None,
) -> Iterator[tuple[str, list[FieldError]]]:
    """``validate_quota_tree``'s errors group by group, in name order, as ``(group, its errors)`` for each group that
    has any; lazily, so a caller that wants the first offending group stops checking there."""
    for key, spec in sorted(groups.items()):
        if key != spec.name:
            yield key, [FieldError("name", f"quota group {spec.name} is listed under the name {key!r}", "invalid")]
    view = _GroupView(dict(groups))
    for i, name in enumerate(sorted(groups)):
        if checkpoint is not None and i % CHECKPOINT_EVERY == 0:
            checkpoint()
        spec = groups[name]
        errors = validate_dns_subdomain(spec.name, what="quota group name")
        errors += _check_group(view, spec, None, facts, max_depth=max_depth, whole_tree=True)
        if errors:
            yield name, errors


def validate_quota_group_delete(
    tree: Mapping[str, QuotaGroupSpec],
    name: str,
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
) -> list[FieldError]:
    """Check deleting a quota group: never a built-in, and only without child groups and without pods."""
    if name in _BUILTIN_GROUPS:
        return [FieldError(NON_FIELD, f"the {name} quota group cannot be deleted", "protected")]
    if name not in tree:
        return [FieldError("name", f"quota group {name} does not exist", "not_found")]
    errors: list[FieldError] = []
    children = sorted(g for g, spec in tree.items() if spec.parent == name and g != name)
    if children:
        errors.append(
            FieldError(
                NON_FIELD,
                f"quota group {name} cannot be deleted because it has {plural(len(children), 'child group')}: "
                f"{_names(children)}",
                "has_children",
            )
        )
    pods = facts.get(name, _NO_GROUP_FACT).pods
    if pods > 0:
        errors.append(
            FieldError(
                NON_FIELD,
                f"quota group {name} cannot be deleted because {plural(pods, 'pod')} {'is' if pods == 1 else 'are'} "
                "still bound to it",
                "has_pods",
            )
        )
    return errors


def validate_pod_quota_group(tree: Mapping[str, QuotaGroupSpec], group_name: str) -> list[FieldError]:
    """Check a pod's quota group: it must exist and be a leaf (Koordinator: pods never link to a parent group).

    An empty name means the default group and is accepted.
    """
    if group_name in ("", DEFAULT_GROUP):
        return []
    spec = tree.get(group_name)
    if spec is None and group_name != ROOT_GROUP:
        return [FieldError("quota_group", f"quota group {group_name} does not exist", "not_found")]
    if group_name == ROOT_GROUP or (spec is not None and spec.is_parent):
        return [
            FieldError(
                "quota_group",
                f"pods cannot be bound to quota group {group_name} because it is a parent group; "
                "use one of its leaf groups",
                "parent_group",
            )
        ]
    return []
