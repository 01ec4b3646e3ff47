"""Queue rules (Volcano's queue webhook and controller): limits, hierarchy, root protection, delete, open/close."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from engine.objects import CLOSED_QUEUE_STATES, DEFAULT_QUEUE, QUEUE_STATES, ROOT_QUEUE, QueueSpec
from engine.resources import ResourceList
from engine.rules.common import (
    _NO_QUEUE_FACT,
    _NO_QUEUE_FACTS,
    MAX_PRIORITY,
    MAX_WEIGHT,
    NON_FIELD,
    FieldError,
    QueueFacts,
    RuleViolation,
    _names,
    _q,
    check,
    text_errors,
    validate_dns_label,
)
from engine.rules.tree import (
    CHECKPOINT_EVERY,
    _borrowing_lending_errors,
    _dedupe,
    _negative_errors,
    _sum_errors,
    _TreeView,
)
from engine.treefields import QUEUE_FIELDS
from engine.wording import plural

_INF = float("inf")


class _QueueView(_TreeView[QueueSpec]):
    """The queue tree as it would be after the change."""

    root = ROOT_QUEUE

    def __init__(self, specs: dict[str, QueueSpec], alias: Mapping[str, str] | None = None) -> None:
        super().__init__(specs, alias)
        self._totals: dict[tuple[str, str], ResourceList] = {}
        self._subtree_caps: dict[tuple[str, str], tuple[int, str] | None] = {}
        self._nearest_caps: dict[tuple[str, str], tuple[int, str] | None] = {}

    def descendants(self, name: str) -> list[tuple[str, int]]:
        """Every descendant with its distance below ``name`` (cycle-safe), breadth first."""
        out: list[tuple[str, int]] = []
        seen = {name}
        frontier = [(name, 0)]
        while frontier:
            nxt: list[tuple[str, int]] = []
            for node, dist in frontier:
                for child in self.children.get(node, ()):
                    if child not in seen:
                        seen.add(child)
                        out.append((child, dist + 1))
                        nxt.append((child, dist + 1))
            frontier = nxt
        return out

    def subtree_capability(self, name: str, resource: str) -> tuple[int, str] | None:
        """Volcano's ``findSubtreeMaxCapability``: the queue's own capability if it sets ``resource``,
        else the largest among its children's subtrees; ``(amount, queue that sets it)`` or ``None``.

        Memoised per (queue, resource) and computed children first without recursion, so asking it of every queue
        of a whole tree visits each queue once per resource."""
        memo = self._subtree_caps
        key = (name, resource)
        if key in memo:
            return memo[key]
        stack: list[tuple[str, bool]] = [(name, False)]
        open_nodes: set[str] = set()  # entered, children not summed yet (a cycle's guard)
        while stack:
            node, children_done = stack.pop()
            if (node, resource) in memo:
                continue
            capability = self.specs[node].capability
            if resource in capability:
                memo[(node, resource)] = (capability[resource], node)
                continue
            kids = self.children.get(node, ())
            if not children_done:
                open_nodes.add(node)
                stack.append((node, True))
                stack.extend((kid, False) for kid in kids if (kid, resource) not in memo and kid not in open_nodes)
                continue
            best: tuple[int, str] | None = None
            for kid in kids:
                found = memo.get((kid, resource))
                if found is not None and (
                    best is None or found[0] > best[0] or (found[0] == best[0] and found[1] < best[1])
                ):
                    best = found
            memo[(node, resource)] = best
            open_nodes.discard(node)
        return memo[key]

    def nearest_capability(self, name: str, resource: str) -> tuple[int, str] | None:
        """The capability on ``resource`` of the nearest ancestor of ``name`` that sets it (root last, as Volcano
        reads root's limits), as ``(amount, ancestor)``; ``None`` when none does. Memoised: a whole tree's checks
        walk each chain once. Only for queues whose chain reaches root (``place(name).stop is None``)."""
        memo = self._nearest_caps
        path: list[str] = []
        node = name
        found: tuple[int, str] | None = None
        while True:
            if (node, resource) in memo:
                found = memo[(node, resource)]
                break
            path.append(node)
            parent = self.parent_of(node)
            if parent is None or parent == ROOT_QUEUE or parent not in self.specs:
                root = self.specs.get(ROOT_QUEUE)
                if node != ROOT_QUEUE and root is not None and resource in root.capability:
                    found = (root.capability[resource], ROOT_QUEUE)
                break
            capability = self.specs[parent].capability
            if resource in capability:
                found = (capability[resource], parent)
                break
            node = parent
        for member in path:
            memo[(member, resource)] = found
        return found

    def state(self, name: str) -> str:
        spec = self.specs.get(name)
        return spec.state if spec is not None else "Open"

    def children_total(self, parent: str, kind: str) -> ResourceList:
        """Sum of the children's ``guarantee`` or ``deserved`` (memoised: whole-tree checks ask once per child)."""
        key = (parent, kind)
        if key not in self._totals:
            kids = (self.specs[c] for c in self.children.get(parent, ()))
            self._totals[key] = ResourceList.total(k.guarantee if kind == "guarantee" else k.deserved for k in kids)
        return self._totals[key]


def _queue_scalar_errors(new: QueueSpec) -> list[FieldError]:
    obj = f"queue {new.name}"
    errors: list[FieldError] = text_errors(obj, new, QUEUE_FIELDS)
    if isinstance(new.weight, bool) or not isinstance(new.weight, int):
        errors.append(FieldError("weight", f"{obj}: weight must be an integer, got {new.weight!r}", "invalid"))
    elif not 1 <= new.weight <= MAX_WEIGHT:
        errors.append(
            FieldError("weight", f"{obj}: weight {new.weight} must be between 1 and {MAX_WEIGHT}", "out_of_range")
        )
    if isinstance(new.priority, bool) or not isinstance(new.priority, int):
        errors.append(FieldError("priority", f"{obj}: priority must be an integer, got {new.priority!r}", "invalid"))
    elif new.priority < 0:
        errors.append(
            FieldError("priority", f"{obj}: priority {new.priority} must be greater than or equal to 0", "negative")
        )
    elif new.priority > MAX_PRIORITY:
        errors.append(
            FieldError("priority", f"{obj}: priority {new.priority} must be at most {MAX_PRIORITY}", "out_of_range")
        )
    if new.state not in QUEUE_STATES:
        errors.append(
            FieldError(
                "state",
                f"{obj}: state {new.state!r} must be one of {', '.join(QUEUE_STATES)}",
                "invalid_choice",
            )
        )
    return errors + _min_runtime_errors(new)


def _min_runtime_errors(new: QueueSpec) -> list[FieldError]:
    """A queue's minimum runtime: unset (None: the nearest ancestor's, else the policy's ``minRuntime``) or whole
    seconds, 0 or more (0: no minimum for this subtree)."""
    value = new.min_runtime
    if value is None:
        return []
    obj = f"queue {new.name}"
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value in (_INF, -_INF):
        return [FieldError("min_runtime", f"{obj}: min_runtime must be a number of seconds, got {value!r}", "invalid")]
    if value < 0:
        return [
            FieldError(
                "min_runtime",
                f"{obj}: min_runtime {value:g} s must be 0 or more seconds (leave it unset for the policy's minRuntime)",
                "negative",
            )
        ]
    if value != int(value):
        return [FieldError("min_runtime", f"{obj}: min_runtime {value:g} s must be whole seconds", "invalid")]
    return []


def _queue_limit_errors(new: QueueSpec) -> list[FieldError]:
    """Volcano rules 1-3: quantities >= 0, guarantee <= deserved <= capability per resource."""
    obj = f"queue {new.name}"
    errors = (
        _negative_errors(obj, "capability", new.capability)
        + _negative_errors(obj, "deserved", new.deserved)
        + _negative_errors(obj, "guarantee", new.guarantee)
    )
    for name in sorted(new.guarantee):
        guarantee = new.guarantee[name]
        if name not in new.deserved:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} must be set and >= guarantee {name} {_q(guarantee, name)}",
                    "guarantee_exceeds_deserved",
                )
            )
        elif new.deserved[name] < guarantee:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} {_q(new.deserved[name], name)} must be >= "
                    f"guarantee {name} {_q(guarantee, name)}",
                    "guarantee_exceeds_deserved",
                )
            )
    for name in sorted(new.deserved):
        # A capability that leaves the resource unset does not restrict it (Volcano rule 3).
        if name in new.capability and new.deserved[name] > new.capability[name]:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} {_q(new.deserved[name], name)} must be <= "
                    f"capability {name} {_q(new.capability[name], name)}",
                    "deserved_exceeds_capability",
                )
            )
    top = "the root queue" if new.name == ROOT_QUEUE else ""
    return errors + _borrowing_lending_errors(
        obj, "deserved", new.deserved, new.borrowing_limit, new.lending_limit, top=top
    )


def queue_field_errors(new: QueueSpec) -> list[FieldError]:
    """The checks of a queue's own fields, which need no tree: weight, priority, state, the limits' order."""
    return _queue_scalar_errors(new) + _queue_limit_errors(new)


def _limits(spec: QueueSpec) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    # Plain dicts: ResourceList equality reads a missing name as 0, but "unset" and "0" differ for a limit.
    return spec.capability.to_dict(), spec.deserved.to_dict(), spec.guarantee.to_dict()


def _check_queue(
    view: _QueueView,
    new: QueueSpec,
    old: QueueSpec | None,
    *,
    facts: Mapping[str, QueueFacts],
    max_depth: int,
    protect_root: bool,
    whole_tree: bool = False,
) -> list[FieldError]:
    """All queue rules for ``new`` inside ``view`` (the tree after the change).

    With ``whole_tree`` every queue is checked in turn, so a queue's subtree is left to its own members.
    """
    obj = f"queue {new.name}"
    errors = _queue_scalar_errors(new) + _queue_limit_errors(new)

    if new.name == ROOT_QUEUE:
        # Volcano's needsValidateHierarchicalQueue skips root: its limits describe the cluster.
        return errors + _root_queue_errors(new, old, protect_root=protect_root)
    if new.parent is None:
        errors.append(
            FieldError("parent", f"{obj}: parent is required (use {ROOT_QUEUE!r} for a top-level queue)", "required")
        )
        return errors

    renamed = old is not None and old.name != new.name
    moved = old is None or renamed or old.parent != new.parent
    limits_changed = moved or old is None or _limits(old) != _limits(new)
    parent_name = new.parent
    structure_ok = True
    if moved:
        if parent_name == new.name:
            errors.append(FieldError("parent", f"{obj}: a queue cannot use itself as its parent", "self_parent"))
            return errors
        placement = _queue_placement_errors(view, new, parent_name, max_depth=max_depth, whole_tree=whole_tree)
        structure_ok = placement.structure_ok
        errors += placement.errors
        if structure_ok and parent_name != ROOT_QUEUE:
            errors += _parent_with_podgroups_errors(view, new.name, parent_name, facts)
    if new.state == "Open" and (moved or old is None or old.state != "Open"):
        parent_state = view.state(parent_name)
        if parent_name != ROOT_QUEUE and parent_state in CLOSED_QUEUE_STATES:
            errors.append(
                FieldError(
                    "state",
                    f"{obj}: cannot be Open while its parent queue {parent_name} is {parent_state}; "
                    "open the parent queue first",
                    "parent_closed",
                )
            )
    if limits_changed and structure_ok:
        errors += _queue_hierarchy_errors(view, new, subtree=moved and not whole_tree)
    return errors


def _root_queue_errors(new: QueueSpec, old: QueueSpec | None, *, protect_root: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    if new.parent is not None:
        errors.append(FieldError("parent", f"queue {new.name}: the root queue cannot have a parent", "protected"))
    if protect_root and old is not None and old.name == ROOT_QUEUE and _limits(old) != _limits(new):
        errors.append(
            FieldError(
                NON_FIELD,
                f"queue {new.name}: the root queue's capability, deserved and guarantee cannot be modified",
                "protected",
            )
        )
    return errors


@dataclass(frozen=True)
class _Placement:
    errors: list[FieldError]
    structure_ok: bool  # the parent chain reaches root (no cycle, no missing ancestor)


def _queue_placement_errors(
    view: _QueueView, new: QueueSpec, parent_name: str, *, max_depth: int, whole_tree: bool
) -> _Placement:
    """A created, renamed or moved queue's parent chain: no cycle, every ancestor exists, the depth fits.

    In a whole-tree check only the first queue past the depth on its branch is refused (its descendants are left
    out, their chains are not checked further): the answer names the queue where the tree goes too deep."""
    obj = f"queue {new.name}"
    place = view.place(new.name)
    if place.stop == "cycle":
        loop = view.loop_text(new.name, parent_name)
        error = FieldError(
            "parent",
            f"{obj}: parent {parent_name} makes the parent chain loop ({loop}): "
            "a queue cannot be placed under its own descendant",
            "cycle",
        )
        return _Placement([error], structure_ok=False)
    if place.stop is not None and place.orphan == new.name:
        error = FieldError("parent", f"{obj}: parent queue {parent_name} does not exist", "parent_not_found")
        return _Placement([error], structure_ok=False)
    if place.stop is not None:
        missing = place.stop.split(":", 1)[1]
        error = FieldError(
            "parent",
            f"{obj}: ancestor queue {missing} (parent of {place.orphan}) does not exist",
            "parent_not_found",
        )
        return _Placement([error], structure_ok=False)
    depth = place.depth
    if depth > max_depth:
        if whole_tree and depth > max_depth + 1:
            return _Placement([], structure_ok=False)  # below the queue that is refused for its depth
        error = FieldError(
            "parent",
            f"{obj}: depth {depth} under parent {parent_name} exceeds the maximum allowed depth of {max_depth}",
            "depth",
        )
        return _Placement([error], structure_ok=True)
    below = 0 if whole_tree else max((dist for _, dist in view.descendants(new.name)), default=0)
    if depth + below > max_depth:
        deepest = min(n for n, d in view.descendants(new.name) if d == below)
        error = FieldError(
            "parent",
            f"{obj}: under parent {parent_name} its descendant queue {deepest} would be at depth "
            f"{depth + below}, beyond the maximum allowed depth of {max_depth}",
            "depth",
        )
        return _Placement([error], structure_ok=True)
    return _Placement([], structure_ok=True)


def _parent_with_podgroups_errors(
    view: _QueueView, name: str, parent_name: str, facts: Mapping[str, QueueFacts]
) -> list[FieldError]:
    """A queue becomes a parent only while it has no podgroups and no allocated pods (checked for its first child)."""
    children = view.children.get(parent_name, ())
    has_siblings = len(children) > (1 if name in view.specs and view.parent_of(name) == parent_name else 0)
    parent_facts = facts.get(parent_name, _NO_QUEUE_FACT)
    if has_siblings or (parent_facts.podgroups == 0 and parent_facts.allocated_pods == 0):
        return []
    return [
        FieldError(
            "parent",
            f"queue {name}: queue {parent_name} cannot become its parent because it has "
            f"{plural(parent_facts.podgroups, 'podgroup')} and {plural(parent_facts.allocated_pods, 'allocated pod')}; "
            "only a queue without podgroups can have child queues",
            "has_podgroups",
        )
    ]


def _queue_hierarchy_errors(view: _QueueView, new: QueueSpec, *, subtree: bool) -> list[FieldError]:
    """Volcano's validateHierarchicalQueueResources, per resource and collecting every violation.

    With ``subtree`` (a moved queue) its descendants' capabilities are held against the new ancestors too.
    """
    errors = _capability_vs_ancestors(view, new, subtree=subtree)
    # The siblings' guarantee/deserved (including this queue) <= the parent's.
    parent_name = new.parent or ROOT_QUEUE
    parent = view.specs.get(parent_name)
    if parent is not None:
        unlimited = parent_name == ROOT_QUEUE  # root is unlimited where it sets nothing
        owner = f"queue {parent_name}"
        for kind in ("guarantee", "deserved"):
            limits = parent.guarantee if kind == "guarantee" else parent.deserved
            total = view.children_total(parent_name, kind)
            errors += _sum_errors(owner, limits, kind, total, unset_is_unlimited=unlimited)
    return errors + _children_limit_errors(view, new)


def _capability_vs_ancestors(view: _QueueView, new: QueueSpec, *, subtree: bool) -> list[FieldError]:
    """Capability <= the nearest ancestor that sets it, for the queue and (``subtree``) its whole subtree."""
    obj = f"queue {new.name}"
    errors: list[FieldError] = []
    resources = set(new.capability)
    if subtree:
        for descendant, _dist in view.descendants(new.name):
            resources.update(view.specs[descendant].capability)
    for name in sorted(resources):
        found = view.subtree_capability(new.name, name) if subtree else (new.capability[name], new.name)
        if found is None:
            continue
        amount, holder = found
        limit = view.nearest_capability(new.name, name)
        if limit is not None and amount > limit[0]:
            whose = "" if holder == new.name else f" of its descendant queue {holder}"
            errors.append(
                FieldError(
                    f"capability.{name}",
                    f"{obj}: capability {name} {_q(amount, name)}{whose} exceeds the capability {name} "
                    f"{_q(limit[0], name)} of its ancestor queue {limit[1]}",
                    "capability_exceeds_ancestor",
                )
            )
    return errors


def _children_limit_errors(view: _QueueView, new: QueueSpec) -> list[FieldError]:
    """A parent's capability >= every child subtree's capability, and its children's sums <= its own."""
    obj = f"queue {new.name}"
    errors: list[FieldError] = []
    children = [view.specs[c] for c in view.children.get(new.name, ())]
    if not children:
        return []
    for name in sorted(new.capability):
        best: tuple[int, str] | None = None
        for child in children:
            found = view.subtree_capability(child.name, name)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is not None and new.capability[name] < best[0]:
            errors.append(
                FieldError(
                    f"capability.{name}",
                    f"{obj}: capability {name} {_q(new.capability[name], name)} is smaller than its descendants' "
                    f"largest capability {name} {_q(best[0], name)} (queue {best[1]})",
                    "capability_below_descendants",
                )
            )
    errors += _sum_errors(
        obj, new.guarantee, "guarantee", view.children_total(new.name, "guarantee"), unset_is_unlimited=False
    )
    errors += _sum_errors(
        obj, new.deserved, "deserved", view.children_total(new.name, "deserved"), unset_is_unlimited=False
    )
    return errors


def validate_queue(
    tree: Mapping[str, QueueSpec],
    new: QueueSpec,
    old: QueueSpec | None,
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    max_depth: int = 5,
    protect_root: bool = True,
) -> list[FieldError]:
    """Check creating (``old=None``), updating or renaming a queue against ``tree`` (the queues before it).

    ``facts`` holds podgroup and allocated-pod counts by queue name; ``max_depth`` is Volcano's
    ``--max-queue-depth`` (a child of root is at depth 1); ``protect_root`` forbids changing root's limits.
    """
    errors = validate_dns_label(new.name, what="queue name")
    if old is None:
        if new.name in tree:
            errors.append(FieldError("name", f"queue {new.name} already exists", "exists"))
    elif old.name != new.name:
        if old.name in (ROOT_QUEUE, DEFAULT_QUEUE):
            errors.append(FieldError("name", f"the {old.name} queue cannot be renamed", "protected"))
        if new.name in tree:
            errors.append(
                FieldError(
                    "name", f"queue {old.name} cannot be renamed to {new.name}: that queue already exists", "exists"
                )
            )
    if errors and any(e.code in ("exists", "protected") for e in errors):
        # the tree cannot hold the change, but its own fields can still be checked: every problem at once
        return errors + queue_field_errors(new)
    view = _QueueView.after(tree, new, old)
    return errors + _check_queue(view, new, old, facts=facts, max_depth=max_depth, protect_root=protect_root)


def validate_queue_tree(
    queues: Mapping[str, QueueSpec],
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    max_depth: int = 5,
    checkpoint: Callable[[], None] | None = None,
) -> list[FieldError]:
    """Check a whole snapshot at once (importer, simulate): every queue as if created, cycles, missing parents.

    A violation seen from several queues (a parent and each child) is reported once. Linear in the queues (times
    their resources): the depth is known from one walk of each chain, the largest capabilities below a queue and
    above it are computed once per queue. ``checkpoint`` (a deadline's ``check``) is called every
    ``CHECKPOINT_EVERY`` queues.
    """
    return _dedupe(
        e
        for _, errors in queue_tree_errors(queues, facts=facts, max_depth=max_depth, checkpoint=checkpoint)
        for e in errors
    )


def queue_tree_errors(
    queues: Mapping[str, QueueSpec],
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    max_depth: int = 5,
    checkpoint: Callable[[], None] | None = None,
) -> Iterator[tuple[str, list[FieldError]]]:
    """``validate_queue_tree``'s errors queue by queue, in name order, as ``(queue, its errors)`` for each queue that
    has any; lazily, so a caller that wants the first offending queue stops checking there. Below a queue refused
    for its depth, the queues are not checked (they are reported through it)."""
    for key, spec in sorted(queues.items()):
        if key != spec.name:
            yield key, [FieldError("name", f"queue {spec.name} is listed under the name {key!r}", "invalid")]
    view = _QueueView(dict(queues))
    for i, name in enumerate(sorted(queues)):
        if checkpoint is not None and i % CHECKPOINT_EVERY == 0:
            checkpoint()
        spec = queues[name]
        errors = validate_dns_label(spec.name, what="queue name")
        errors += _check_queue(view, spec, None, facts=facts, max_depth=max_depth, protect_root=False, whole_tree=True)
        if errors:
            yield name, errors


def validate_queue_delete(
    tree: Mapping[str, QueueSpec],
    name: str,
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    cascade: bool = False,
    force: bool = False,
) -> list[FieldError]:
    """Check deleting a queue: never root or default; children only with ``cascade`` (deleted first,
    seed 004); podgroups (its own or, with ``cascade``, any descendant's) only with ``force``, in which
    case the caller deletes those podgroups and their pods (seed 002)."""
    if name in (ROOT_QUEUE, DEFAULT_QUEUE):
        return [FieldError(NON_FIELD, f"the {name} queue cannot be deleted", "protected")]
    if name not in tree:
        return [FieldError("name", f"queue {name} does not exist", "not_found")]
    view = _QueueView(dict(tree))
    errors: list[FieldError] = []
    children = view.children.get(name, [])
    doomed = [name]
    if children:
        if not cascade:
            errors.append(
                FieldError(
                    NON_FIELD,
                    f"queue {name} cannot be deleted because it has {plural(len(children), 'child queue')}: "
                    f"{_names(children)}; delete {'it' if len(children) == 1 else 'them'} first or delete with cascade",
                    "has_children",
                )
            )
        else:
            doomed += [n for n, _ in view.descendants(name)]
            protected = sorted({DEFAULT_QUEUE} & set(doomed))
            if protected:
                errors.append(
                    FieldError(
                        NON_FIELD,
                        f"queue {name} cannot be deleted with cascade because its subtree holds the "
                        f"{protected[0]} queue",
                        "protected",
                    )
                )
    if not force:
        busy = {n: facts[n] for n in doomed if n in facts and (facts[n].podgroups > 0 or facts[n].allocated_pods > 0)}
        for queue_name in sorted(busy):
            counts = busy[queue_name]
            whose = f"queue {name}" if queue_name == name else f"queue {name}'s descendant queue {queue_name}"
            errors.append(
                FieldError(
                    NON_FIELD,
                    f"{whose} still has {plural(counts.podgroups, 'podgroup')} and "
                    f"{plural(counts.allocated_pods, 'allocated pod')}; "
                    "delete them first or delete with force (which deletes those podgroups and their pods)",
                    "has_podgroups",
                )
            )
    return errors


def plan_queue_delete(tree: Mapping[str, QueueSpec], name: str, *, cascade: bool = False) -> list[str]:
    """The queues to delete, in order: deepest descendants first (then by name), ``name`` last.

    Without ``cascade`` only ``name``. Call ``validate_queue_delete`` first; this only orders.
    """
    if name not in tree:
        raise RuleViolation([FieldError("name", f"queue {name} does not exist", "not_found")])
    if not cascade:
        return [name]
    view = _QueueView(dict(tree))
    below = sorted(view.descendants(name), key=lambda item: (-item[1], item[0]))
    return [n for n, _ in below] + [name]


# -- queue state --------------------------------------------------------------------------------------


def settle_queue_state(state: str, podgroups: int) -> str:
    """The state a queue settles in after a sync (volcano.md §7.1): Closing becomes Closed once no
    podgroup points at it; an empty state reads as Open; every other state stays."""
    if state == "":
        return "Open"
    if state == "Closing" and podgroups <= 0:
        return "Closed"
    return state


def _closed_state(current: str, podgroups: int) -> str:
    # Volcano's state machine for CloseQueue: Closed stays Closed; Open/Closing/Unknown become Closed
    # when no podgroups remain, else Closing.
    if current == "Closed":
        return "Closed"
    return "Closed" if podgroups <= 0 else "Closing"


def validate_queue_action(
    tree: Mapping[str, QueueSpec],
    states: Mapping[str, str],
    name: str,
    action: str,
) -> list[FieldError]:
    """Check an open/close action: the queue exists, root never closes, a child opens only under an open parent."""
    if action not in ("open", "close"):
        return [FieldError("action", f"action {action!r} must be 'open' or 'close'", "invalid_choice")]
    if name not in tree:
        return [FieldError("name", f"queue {name} does not exist", "not_found")]
    if action == "close":
        if name == ROOT_QUEUE:
            return [FieldError("state", "the root queue cannot be closed", "protected")]
        return []
    parent = tree[name].parent
    if parent is not None and parent != ROOT_QUEUE and parent in tree:
        parent_state = states.get(parent, tree[parent].state)
        if parent_state in CLOSED_QUEUE_STATES:
            return [
                FieldError(
                    "state",
                    f"queue {name} cannot be opened because its parent queue {parent} is {parent_state}; "
                    "open the parent queue first",
                    "parent_closed",
                )
            ]
    return []


def plan_queue_action(
    tree: Mapping[str, QueueSpec],
    states: Mapping[str, str],
    closed_by_parent: Mapping[str, bool],
    name: str,
    action: str,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
) -> dict[str, tuple[str, bool]]:
    """The new ``(state, closed_by_parent)`` of every queue an open/close action changes.

    ``states`` and ``closed_by_parent`` give the current values (falling back to the spec's state and to
    ``facts``); ``facts`` gives podgroup counts. Raises ``RuleViolation`` when ``validate_queue_action``
    refuses.
    """
    check(validate_queue_action(tree, states, name, action))
    view = _QueueView(dict(tree))

    def state_of(queue: str) -> str:
        return states.get(queue, tree[queue].state) or "Open"

    def flag_of(queue: str) -> bool:
        if queue in closed_by_parent:
            return closed_by_parent[queue]
        return facts.get(queue, _NO_QUEUE_FACT).closed_by_parent

    def podgroups_of(queue: str) -> int:
        return facts.get(queue, _NO_QUEUE_FACT).podgroups

    planned: dict[str, tuple[str, bool]] = {}
    if action == "close":
        # Deliberate: the explicit close clears the queue's own closed-by-parent mark (see module docstring).
        planned[name] = (_closed_state(state_of(name), podgroups_of(name)), False)
        frontier = [name]
        while frontier:
            nxt: list[str] = []
            for parent in frontier:
                for child in view.children.get(parent, ()):
                    if child in planned:
                        continue
                    # Volcano closes every child not already Closed/Closing and marks it closed-by-parent;
                    # a child already closed keeps its state and mark, and its own children are visited too.
                    if state_of(child) not in CLOSED_QUEUE_STATES:
                        planned[child] = (_closed_state(state_of(child), podgroups_of(child)), True)
                    else:
                        planned[child] = (state_of(child), flag_of(child))
                    nxt.append(child)
            frontier = nxt
    else:
        planned[name] = ("Open", False)
        frontier = [name]
        while frontier:
            nxt = []
            for parent in frontier:
                for child in view.children.get(parent, ()):
                    # Only the children this queue's close marked come back (Volcano's openHierarchicalQueue).
                    if child not in planned and flag_of(child) and state_of(child) in CLOSED_QUEUE_STATES:
                        planned[child] = ("Open", False)
                        nxt.append(child)
            frontier = nxt
    return {q: value for q, value in planned.items() if value != (state_of(q), flag_of(q))}
