"""The dashboard's view of the two trees: one ``TreeNode`` per queue or quota group with its configured and
computed values side by side, built from an engine snapshot and its ``QuotaValues`` (never recomputed here).

The two trees use different words for the same four ideas; the pages show them side by side:

========== ============ =============
idea       queue        quota group
========== ============ =============
floor      guarantee    min
entitled   deserved     runtime
used       allocated    used
cap        capability   max
========== ============ =============

Beside ``used``, every node carries what admitted, not yet fully allocated jobs ``reserved`` (and how many jobs,
``reserved_jobs``) and what pipelined pods request (``pipelined``, ``pipelined_pods``): the engine's own numbers
(``engine.values``), the ones its admission gates count.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.objects import ALLOCATED_STATUSES, TaskStatus
from engine.resources import ResourceList
from frontend.presenters import units
from frontend.presenters.ledger import Loan, attribute

Kind = Literal["queue", "quota"]
KINDS: tuple[Kind, ...] = ("queue", "quota")
TERMS: dict[str, dict[str, str]] = {
    "queue": {"floor": "guarantee", "entitled": "deserved", "used": "allocated", "cap": "capability"},
    "quota": {"floor": "min", "entitled": "runtime", "used": "used", "cap": "max"},
}
TITLES = {"queue": "Queue", "quota": "Quota group"}
PLURAL = {"queue": "queues", "quota": "quota groups"}
SIZE_BY = ("cap", "entitled", "floor", "used")


@dataclass(frozen=True)
class TreeNode:
    """One node of a tree with every number the pages show (base units)."""

    kind: Kind
    name: str
    parent: str | None
    depth: int
    children: tuple[str, ...]
    floor: Mapping[str, int]
    entitled: Mapping[str, int]
    used: Mapping[str, int]
    cap: Mapping[str, int]  # as configured; a missing resource is unlimited
    request: Mapping[str, int]
    borrowed: Mapping[str, int]
    lent: Mapping[str, int]
    state: str = ""
    weight: int | None = None
    builtin_outside: bool = False  # the quota groups system and default (outside the distribution)
    extra: Mapping[str, Any] = field(default_factory=dict)
    reserved: Mapping[str, int] = field(default_factory=dict)  # by admitted jobs not yet fully allocated
    reserved_jobs: int = 0
    reserving: Mapping[str, int] = field(default_factory=dict)  # per resource, how many jobs reserve some
    pipelined: Mapping[str, int] = field(default_factory=dict)  # requested by pods pipelined onto a node
    pipelined_pods: int = 0
    # the engine's spec as configured: every field of ``engine.treefields`` by name, for the page to show
    spec: Any = None

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def balance(self, resource: str) -> int:
        """borrowed - lent of ``resource`` (positive: a net borrower)."""
        return self.borrowed.get(resource, 0) - self.lent.get(resource, 0)


@dataclass(frozen=True)
class Tree:
    """A tree (or the visible part of it) in depth-first order."""

    kind: Kind
    nodes: Mapping[str, TreeNode]
    order: tuple[str, ...]
    roots: tuple[str, ...]
    total: Mapping[str, int]
    policy: str = ""

    @property
    def resources(self) -> list[str]:
        names: set[str] = set(self.total)
        for n in self.nodes.values():
            names.update(n.cap, n.entitled, n.floor, n.used)
        return units.resource_order(names)

    def subtree(self, name: str) -> list[str]:
        """``name`` and its descendants, depth first."""
        out: list[str] = []
        stack = [name]
        while stack:
            current = stack.pop()
            if current not in self.nodes:
                continue
            out.append(current)
            stack.extend(reversed(self.nodes[current].children))
        return out

    def ancestors(self, name: str) -> list[str]:
        """The parents of ``name`` from the top down (only those in this tree)."""
        out: list[str] = []
        node = self.nodes.get(name)
        while node is not None and node.parent is not None and node.parent in self.nodes:
            out.append(node.parent)
            node = self.nodes[node.parent]
        return out[::-1]


def _rl(value: Mapping[str, int] | None) -> Mapping[str, int]:
    """``value`` as a plain mapping of ints: a ``ResourceList`` (immutable, ints) lends its own dict, read-only like
    the node (a thousand-node tree reads thirteen lists per node after every change); anything else is copied."""
    if value is None:
        return {}
    if type(value) is ResourceList:
        return value.raw
    return {k: int(v) for k, v in value.items()}


def _layout(
    parents: Mapping[str, str | None], visible: set[str] | None
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...], tuple[str, ...], dict[str, int]]:
    names = [n for n in parents if visible is None or n in visible]
    shown = set(names)
    children: dict[str, list[str]] = {n: [] for n in names}
    roots: list[str] = []
    for n in names:
        p = parents[n]
        if p is not None and p in shown:
            children[p].append(n)
        else:
            roots.append(n)
    kids = {n: tuple(sorted(v)) for n, v in children.items()}
    order: list[str] = []
    depth: dict[str, int] = {}
    stack = [(r, 0) for r in sorted(roots, reverse=True)]
    while stack:
        n, d = stack.pop()
        order.append(n)
        depth[n] = d
        stack.extend((c, d + 1) for c in reversed(kids[n]))
    return kids, tuple(order), tuple(sorted(roots)), depth


def queue_tree(snapshot: Any, values: Any, visible: set[str] | None = None) -> Tree:
    """The queue tree of ``snapshot`` with the values the engine computed for it."""
    specs = snapshot.queues
    parents = {name: spec.parent for name, spec in specs.items()}
    kids, order, roots, depth = _layout(parents, visible)
    nodes: dict[str, TreeNode] = {}
    book = values.queues
    for name in order:
        spec = specs[name]
        q = book.get(name)
        nodes[name] = TreeNode(
            kind="queue",
            name=name,
            parent=spec.parent,
            depth=depth[name],
            children=kids[name],
            floor=_rl(spec.guarantee),
            entitled=_rl(q.deserved if q else None),
            used=_rl(q.allocated if q else None),
            cap=_rl(spec.capability),
            request=_rl(q.request if q else None),
            borrowed=_rl(q.borrowed if q else None),
            lent=_rl(q.lent if q else None),
            state=str(spec.state),
            weight=spec.weight,
            extra={
                "real_capability": _rl(q.real_capability if q else None),
                "share": float(q.share) if q else 0.0,
                "participating": bool(q.participating) if q else False,
                "reclaimable": spec.reclaimable,
                "priority": spec.priority,
                "configured_deserved": _rl(spec.deserved),
                "borrowing_limit": _rl(spec.borrowing_limit),
                "lending_limit": _rl(spec.lending_limit),
            },
            reserved=_rl(q.inqueue if q else None),
            reserved_jobs=q.reserved_jobs if q else 0,
            reserving=dict(q.reserving) if q else {},
            pipelined=_rl(q.pipelined if q else None),
            pipelined_pods=q.pipelined_pods if q else 0,
            spec=spec,
        )
    return Tree("queue", nodes, order, roots, _rl(values.total), str(values.queue_policy))


def quota_tree(snapshot: Any, values: Any, visible: set[str] | None = None) -> Tree:
    """The quota forest of ``snapshot`` with the elastic runtimes the engine computed for it."""
    specs = snapshot.quota_groups
    parents = {name: spec.parent for name, spec in specs.items()}
    kids, order, roots, depth = _layout(parents, visible)
    result = values.quotas
    held = values.reservations
    special = {"system", "default"}
    nodes: dict[str, TreeNode] = {}
    for name in order:
        spec = specs[name]
        g = result.get(name)
        nodes[name] = TreeNode(
            kind="quota",
            name=name,
            parent=spec.parent,
            depth=depth[name],
            children=kids[name],
            floor=_rl(spec.min),
            entitled=_rl(g.runtime if g else None),
            used=_rl(g.used if g else None),
            cap=_rl(spec.max),
            request=_rl(g.request if g else None),
            borrowed=_rl(g.borrowed if g else None),
            lent=_rl(g.lent if g else None),
            builtin_outside=name in special and spec.parent == "root",
            extra={
                "auto_scaled_min": _rl(g.auto_scaled_min if g else None),
                "limited_request": _rl(g.limited_request if g else None),
                "shared_weight": _rl(spec.shared_weight),
                "allow_lent": spec.allow_lent,
                "is_parent": spec.is_parent,
                "tree_id": spec.tree_id,
                "borrowing_limit": _rl(spec.borrowing_limit),
                "lending_limit": _rl(spec.lending_limit),
            },
            reserved=_rl(held.amounts.get(name)),
            reserved_jobs=held.jobs.get(name, 0),
            reserving=dict(held.reserving.get(name, {})),
            pipelined=_rl(held.pipelined.get(name)),
            pipelined_pods=held.pipelined_pods.get(name, 0),
            spec=spec,
        )
    return Tree("quota", nodes, order, roots, _rl(values.total), "elastic")


def build(kind: Kind, snapshot: Any, values: Any, visible: set[str] | None = None) -> Tree:
    """The tree of ``kind`` ("queue" or "quota")."""
    return queue_tree(snapshot, values, visible) if kind == "queue" else quota_tree(snapshot, values, visible)


_BUILT_LOCK = threading.RLock()  # re-entrant: a values object may die, and its entry go, while the lock is held
_BUILT: dict[tuple[Kind, int], tuple[weakref.ref[Any], Tree]] = {}  # (kind, id(values)) -> (values, its tree)
_BUILT_MAX = 8  # trees kept at most: a few clusters' worth of both kinds


def whole(kind: Kind, snapshot: Any, values: Any) -> Tree:
    """The whole tree of ``kind`` for ``values``, built once per values object: the value cache hands every
    request the same object while the database is unchanged, so a tree is built once per change. The trees are
    kept here, in the presenter, keyed by the identity of the values object and for as long as it lives (a weak
    reference: when the value cache lets go of the values after a change, their trees go with them at once, not
    after the next trees pushed them out, which kept eight sets of values, 250,000 objects, for the cyclic
    collector to walk again); at most ``_BUILT_MAX`` are kept."""
    key = (kind, id(values))
    with _BUILT_LOCK:
        hit = _BUILT.get(key)
        if hit is not None and hit[0]() is values:
            return hit[1]
    tree = build(kind, snapshot, values)
    ref = weakref.ref(values, functools.partial(_drop_built, key))
    with _BUILT_LOCK:
        _BUILT[key] = (ref, tree)
        while len(_BUILT) > _BUILT_MAX:
            del _BUILT[next(iter(_BUILT))]
    return tree


def _drop_built(key: tuple[Kind, int], ref: weakref.ref[Any]) -> None:
    """The values behind ``ref`` are gone: their tree goes too (unless the key already holds a newer one)."""
    with _BUILT_LOCK:
        hit = _BUILT.get(key)
        if hit is not None and hit[0] is ref:
            del _BUILT[key]


# -- derived readings -------------------------------------------------------------------------------------------


def effective_cap(tree: Tree, name: str, resource: str) -> int:
    """The most ``name`` may hold of ``resource`` as configured: its own cap, else the nearest ancestor's, else
    the cluster total (unlimited sentinels count as unset)."""
    node: TreeNode | None = tree.nodes.get(name)
    while node is not None:
        amount = node.cap.get(resource)
        if amount is not None and not units.is_unlimited(amount):
            return amount
        node = tree.nodes.get(node.parent) if node.parent else None
    return tree.total.get(resource, 0)


MIN_SHARE = 0.02  # the part of its parent's sector an unlimited node that deserves and uses nothing still gets


def claim(node: TreeNode, resource: str) -> int:
    """What an unlimited node stands for in a "sized by capability" figure: the most of what it is entitled to,
    guaranteed and uses (its capability says nothing about its size: unlimited is the whole cluster)."""
    return max(node.entitled.get(resource, 0), node.floor.get(resource, 0), node.used.get(resource, 0))


def sizes(tree: Tree, resource: str, size_by: str = "cap") -> dict[str, float]:
    """Sector sizes for a sunburst/icicle with ``branchvalues="total"``: a root gets its amount of ``size_by``,
    each child the part of its parent's sector its own amount is of the parent's (or, when the children together
    claim more than the parent, of the children's sum). Children never add up to more than their parent.

    Sized by capability, a node below a tree root that sets no capability of ``resource`` (unlimited, like the
    built-in ``default`` queue) is sized by what it deserves, guarantees or uses (``claim``), not by the cluster
    it could take: an idle unlimited node would otherwise take as much of the ring as the whole cluster. One that
    claims nothing keeps a sliver (``MIN_SHARE`` of its parent's sector) so that it can still be found and opened.
    """

    def own_cap(node: TreeNode) -> int | None:
        amount = node.cap.get(resource)
        return None if amount is None or units.is_unlimited(amount) else amount

    def amount(node: TreeNode) -> float:
        if size_by == "cap":
            if node.builtin_outside:
                return float(node.used.get(resource, 0))
            if node.parent is None or node.parent not in tree.nodes:
                return float(effective_cap(tree, node.name, resource))
            cap = own_cap(node)
            return float(claim(node, resource) if cap is None else cap)
        value = getattr(node, size_by).get(resource, 0)
        return 0.0 if units.is_unlimited(value) else float(value)

    out: dict[str, float] = {}
    for name in tree.order:
        node = tree.nodes[name]
        if node.parent is None or node.parent not in tree.nodes:
            out[name] = amount(node)
    for name in tree.order:
        node = tree.nodes[name]
        if not node.children:
            continue
        own = out.get(name, 0.0)
        claims = {c: amount(tree.nodes[c]) for c in node.children}
        if size_by == "cap":
            # a sliver of the parent's sector; when neither the parent nor any child claims anything (a chain of
            # unlimited nodes below a sliver), the children that claim nothing share the parent's sector equally,
            # so that every level of the chain is drawn and can be zoomed into
            floor = MIN_SHARE * max(amount(node), sum(claims.values())) or 1.0
            for c, value in claims.items():
                child = tree.nodes[c]
                if value <= 0 and own_cap(child) is None and not child.builtin_outside:
                    claims[c] = floor
        base = max(amount(node), sum(claims.values()))
        for c, value in claims.items():
            out[c] = own * value / base * (1 - 1e-9) if base > 0 else 0.0
    return out


def depth_below(tree: Tree, name: str) -> int:
    """How many levels ``name``'s subtree has below it (0 for a leaf)."""
    deepest = 0
    stack = [(name, 0)]
    while stack:
        current, d = stack.pop()
        deepest = max(deepest, d)
        node = tree.nodes.get(current)
        if node is not None:
            stack.extend((c, d + 1) for c in node.children if c in tree.nodes)
    return deepest


def _flat(tree: Tree) -> bool:
    return tree.kind == "queue" and tree.policy != "capacity-hierarchy"


def sibling_set(tree: Tree, name: str) -> list[str]:
    """The members of the sibling set in which ``name`` borrows and lends (empty for a tree root)."""
    node = tree.nodes.get(name)
    if node is None or node.builtin_outside:
        return []
    if _flat(tree):
        return (
            sorted(n for n, x in tree.nodes.items() if x.extra.get("participating"))
            if node.extra.get("participating")
            else []
        )
    if node.parent is None or node.parent not in tree.nodes:
        return []
    return [c for c in tree.nodes[node.parent].children if not tree.nodes[c].builtin_outside]


def node_loans(tree: Tree, name: str) -> tuple[list[Loan], list[Loan]]:
    """(what ``name`` borrows and from whom, what it lends and to whom), attributed within its sibling set."""
    members = sibling_set(tree, name)
    if not members:
        return [], []
    borrowed = {n: tree.nodes[n].borrowed for n in members}
    lent = {n: tree.nodes[n].lent for n in members}
    found = attribute(borrowed, lent, members, only=name)
    return [x for x in found if x.borrower == name], [x for x in found if x.lender == name]


_USAGE: dict[int, tuple[weakref.ref[Any], tuple[dict[str, int], dict[str, int]]]] = {}  # id(values) -> sums


def cluster_usage(snapshot: Any, values: Any = None) -> tuple[dict[str, int], dict[str, int]]:
    """(allocated, requested) over the snapshot's live pods, per resource: what running pods hold and what
    every pod that is not finished asks for. Given the ``values`` the value cache pairs with ``snapshot``, the
    sums are kept for as long as those values live (a loop over every pod: about 0.1 s on 50,000 pods)."""
    if values is None:
        return _cluster_usage(snapshot)
    key = id(values)
    with _BUILT_LOCK:
        hit = _USAGE.get(key)
        if hit is not None and hit[0]() is values:
            return dict(hit[1][0]), dict(hit[1][1])
    sums = _cluster_usage(snapshot)
    ref = weakref.ref(values, functools.partial(_drop_usage, key))
    with _BUILT_LOCK:
        _USAGE[key] = (ref, sums)
        while len(_USAGE) > _BUILT_MAX:
            del _USAGE[next(iter(_USAGE))]
    return dict(sums[0]), dict(sums[1])


def _drop_usage(key: int, ref: weakref.ref[Any]) -> None:
    with _BUILT_LOCK:
        hit = _USAGE.get(key)
        if hit is not None and hit[0] is ref:
            del _USAGE[key]


def _cluster_usage(snapshot: Any) -> tuple[dict[str, int], dict[str, int]]:
    done = {TaskStatus.SUCCEEDED, TaskStatus.FAILED}
    allocated: dict[str, int] = {}
    requested: dict[str, int] = {}
    for task in snapshot.tasks.values():
        if task.status in done:
            continue
        for r, v in task.request.items():
            requested[r] = requested.get(r, 0) + v
            if task.status in ALLOCATED_STATUSES:
                allocated[r] = allocated.get(r, 0) + v
    return allocated, requested
