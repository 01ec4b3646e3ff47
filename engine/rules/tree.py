"""A tree (queues or quota groups) as it would be after a change, and the resource checks both trees share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, Generic, NamedTuple, Self, TypeVar

from engine.objects import QueueSpec, QuotaGroupSpec
from engine.rules.common import (
    FieldError,
    _q,
)

_Spec = TypeVar("_Spec", QueueSpec, QuotaGroupSpec)

#: A whole-tree check calls its ``checkpoint`` (a request's deadline) once every this many nodes.
CHECKPOINT_EVERY = 256


class Place(NamedTuple):
    """A node's place in its tree: ``depth`` (a child of the root is at depth 1; a node whose chain never reaches
    the root counts the levels walked) and ``stop``: ``None`` when the chain reaches the root (or a node without a
    parent), ``"cycle"`` when it loops, ``"missing:<name>"`` when an ancestor does not exist, with ``orphan`` the
    node whose parent it is (the node itself, or the ancestor of it that names the missing parent)."""

    depth: int
    stop: str | None = None
    orphan: str = ""

    def below(self) -> Place:
        """The place of a child of the node placed here."""
        return self if self.stop == "cycle" else Place(self.depth + 1, self.stop, self.orphan)


class _TreeView(Generic[_Spec]):
    """A tree (queues or quota groups) as it would be after the change: specs by name, children by parent."""

    root: ClassVar[str]  # the name of the tree's root (each subclass sets it)

    def __init__(self, specs: dict[str, _Spec], alias: Mapping[str, str] | None = None) -> None:
        self.specs: dict[str, _Spec] = specs
        self.alias: dict[str, str] = dict(alias or {})  # old name -> new name while a node is being renamed
        self.children: dict[str, list[str]] = {}
        for name in sorted(specs):
            parent = self.parent_of(name)
            if parent is not None:
                self.children.setdefault(parent, []).append(name)
        self._places: dict[str, Place] = {}  # memo of ``place``

    @classmethod
    def after(cls, tree: Mapping[str, _Spec], new: _Spec, old: _Spec | None) -> Self:
        specs: dict[str, _Spec] = dict(tree)
        alias: dict[str, str] = {}
        if old is not None and old.name != new.name:
            specs.pop(old.name, None)
            alias[old.name] = new.name
        specs[new.name] = new
        return cls(specs, alias)

    def parent_of(self, name: str) -> str | None:
        spec = self.specs.get(name)
        if spec is None or spec.parent is None:
            return None
        return self.alias.get(spec.parent, spec.parent)

    def chain(self, name: str, limit: int | None = None) -> tuple[list[str], str | None]:
        """Ancestors of ``name`` (parent first, root excluded) and why the walk stopped early, if it did.

        The reason is ``"cycle"`` or ``"missing:<name>"``; ``None`` means the chain reached root. With ``limit`` the
        walk stops after that many ancestors (reason ``"limit"``): a message never walks a whole 20,000-long chain.
        """
        out: list[str] = []
        seen = {name}
        current = self.parent_of(name)
        while current is not None and current != self.root:
            if current in seen:
                return out, "cycle"
            if current not in self.specs:
                return out, f"missing:{current}"
            if limit is not None and len(out) >= limit:
                return out, "limit"
            seen.add(current)
            out.append(current)
            current = self.parent_of(current)
        return out, None

    def place(self, name: str) -> Place:
        """Where ``name`` sits: its depth, or why its parent chain never reaches the root (``Place``).

        Linear over the whole tree: each walk up stops at the first node already placed and places every node it
        passed, so checking every node of a 20,000-long chain walks the chain once (not 20,000 times).
        """
        found = self._places.get(name)
        if found is not None:
            return found
        path: list[str] = []
        on_path: set[str] = set()
        node = name
        while True:
            path.append(node)
            on_path.add(node)
            parent = self.parent_of(node)
            if parent is None or parent == self.root:
                base = Place(1)
                break
            above = self._places.get(parent)
            if above is not None:
                base = above.below()
                break
            if parent in on_path:  # every node from the repeated one on is in the loop, the others hang below it
                for member in path:
                    self._places[member] = Place(0, "cycle")
                return self._places[name]
            if parent not in self.specs:
                base = Place(1, f"missing:{parent}", node)
                break
            node = parent
        # ``base`` is the place of the last node of the path; the ones before it are its descendants, one level each
        for steps, member in enumerate(reversed(path)):
            self._places[member] = base if steps == 0 else self._places[path[len(path) - steps]].below()
        return self._places[name]

    def loop_text(self, name: str, parent_name: str, limit: int = 12) -> str:
        """The parent chain of ``name`` (whose parent field is ``parent_name``) as far as it loops back
        (``a -> b -> c -> a``), cut after ``limit`` names (``a -> b -> ...``)."""
        walked: tuple[list[str], str | None] = self.chain(name, limit)
        shown: list[str] = [name, *walked[0]]
        if walked[1] == "cycle":
            return " -> ".join([*shown, str(self.parent_of(shown[-1]) if len(shown) > 1 else parent_name)])
        return " -> ".join([*shown, "..."])


# --------------------------------------------------------------------------------------------------------
# Shared resource checks
# --------------------------------------------------------------------------------------------------------


def _negative_errors(obj: str, field_prefix: str, resources: Mapping[str, int]) -> list[FieldError]:
    if min(resources.values(), default=0) >= 0:  # the usual case, at C speed: a whole tree asks it per node
        return []
    return [
        FieldError(
            f"{field_prefix}.{name}",
            f"{obj}: {field_prefix} {name} {_q(amount, name)} must be greater than or equal to 0",
            "negative",
        )
        for name, amount in sorted(resources.items())
        if amount < 0
    ]


def _borrowing_lending_errors(
    obj: str,
    entitlement_label: str,
    entitlement: Mapping[str, int],
    borrowing: Mapping[str, int],
    lending: Mapping[str, int],
    *,
    top: str = "",
) -> list[FieldError]:
    """Borrowing and lending limits (Kueue's meaning): values >= 0; each limit on a resource the node's entitlement
    (``entitlement_label``: a queue's deserved, a quota group's min) sets, since a limit is measured against it; a
    lending limit at most the entitlement (it cannot lend what it does not have). ``top`` (not empty) names why the
    node can have no limit at all (the root: nothing above it to borrow from, no sibling to lend to)."""
    if not borrowing and not lending:
        return []
    errors = _negative_errors(obj, "borrowing_limit", borrowing) + _negative_errors(obj, "lending_limit", lending)
    if top:
        field = "borrowing_limit" if borrowing else "lending_limit"
        return [*errors, FieldError(field, f"{obj}: {top} has no borrowing or lending limit", "protected")]
    for field, words, limits in (
        ("borrowing_limit", "borrowing limit", borrowing),
        ("lending_limit", "lending limit", lending),
    ):
        for name, amount in sorted(limits.items()):
            if name not in entitlement:
                errors.append(
                    FieldError(
                        f"{field}.{name}",
                        f"{obj}: {words} {name} {_q(amount, name)} is set but {entitlement_label} does not set "
                        f"{name}; a limit is measured against the {entitlement_label}, so set {entitlement_label} "
                        f"{name} (0 is allowed) or drop the limit",
                        "limit_without_entitlement",
                    )
                )
            elif field == "lending_limit" and amount > entitlement[name]:
                errors.append(
                    FieldError(
                        f"{field}.{name}",
                        f"{obj}: lending limit {name} {_q(amount, name)} must be <= {entitlement_label} {name} "
                        f"{_q(entitlement[name], name)} (it cannot lend more than it is entitled to)",
                        "lending_exceeds_entitlement",
                    )
                )
    return errors


def _sum_errors(
    owner: str,
    owner_limits: Mapping[str, int],
    kind: str,
    total: Mapping[str, int],
    *,
    unset_is_unlimited: bool,
) -> list[FieldError]:
    """Children's ``kind`` adding up to more than the owner's, per resource (a missing amount reads as 0)."""
    errors: list[FieldError] = []
    for name in sorted(total):
        amount = total[name]
        if amount <= 0:
            continue
        if name not in owner_limits:
            if unset_is_unlimited:
                continue
            limit, note = 0, f" (it does not set {kind} {name})"
        else:
            limit, note = owner_limits[name], ""
        if amount > limit:
            errors.append(
                FieldError(
                    f"{kind}.{name}",
                    f"{owner}: the sum of its children's {kind} {name} {_q(amount, name)} exceeds "
                    f"its {kind} {name} {_q(limit, name)}{note}",
                    "children_sum_exceeds_parent",
                )
            )
    return errors


def _dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    seen: set[FieldError] = set()
    out: list[FieldError] = []
    for error in errors:
        if error not in seen:
            seen.add(error)
            out.append(error)
    return out
