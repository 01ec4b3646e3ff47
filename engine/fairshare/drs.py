"""Kueue's dominant resource share (Fair Sharing, ``pkg/cache/scheduler/fair_sharing.go`` and ``resource_node.go``
at the pinned commit ff69552), exactly, in integers and Fractions.

A Kueue tree is Cohorts and ClusterQueues; each node has, per flavor and resource (a ``FlavorResource``), a nominal
quota and optional borrowing and lending limits, and a fair-sharing weight (a quantity; 0 is an infinite share).

* **Subtree quota**: a ClusterQueue's is its nominal quota; a Cohort's is its own nominal quota plus, from each
  child, the child's subtree quota less what the child keeps (its *local quota*, ``max(0, subtree - lendingLimit)``
  when it has a lending limit, else 0).
* **Usage**: a ClusterQueue's is what its admitted workloads use; a Cohort's is, from each child, the part of the
  child's usage above the child's local quota.
* **Potential available** of a node: the root's subtree quota; below it, the node's local quota plus its parent's
  potential available, at most ``subtree + borrowingLimit`` when the node has a borrowing limit.
* **Dominant resource share** of a node that has a parent: per resource name, what it borrows (usage above subtree
  quota, summed over the resource's flavors) times 1000 over what its parent could lend (the parent's potential
  available, summed over the flavors the root knows), the greatest such ratio (ties go to the alphabetically first
  resource), divided by the node's weight. A node without a parent, or borrowing nothing, has a share of 0; a node
  of weight 0 that borrows has an infinite share, and ranks above every finite one (two such compare by their
  unweighted ratios), as ``CompareDRS`` does.

Kueue computes the ratio in floating point and rounds the weighted share up to an integer for its status
(``roundedWeightedShare``); here it is an exact Fraction, and ``Share.rounded`` is that integer. The module knows
nothing of the session: ``engine.session.plugins.kueuefair`` builds the tree from a snapshot's queues and moves
the usage as pods are placed and evicted.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from engine.objects import ROOT_QUEUE, Snapshot
from engine.resources import format_amount, format_exact_quantity, split_flavor

__all__ = ["FLAVOR", "NO_SHARE", "FairNode", "FairTree", "FlavorResource", "Share", "flavor_resource", "kueue_tree"]

FlavorResource = tuple[str, str]  # (flavor, resource name)
FLAVOR = ""  # the flavor of a resource read in one flavor (a flavored key ``cpu@spot`` names its own)


@dataclass(frozen=True, slots=True)
class FairNode:
    """One Cohort (``cohort=True``) or ClusterQueue of a Kueue tree; ``parent`` is a Cohort's name or None."""

    name: str
    parent: str | None = None
    cohort: bool = False
    nominal: Mapping[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: Mapping[FlavorResource, int] = field(default_factory=dict)
    lending_limit: Mapping[FlavorResource, int] = field(default_factory=dict)
    weight: Fraction = Fraction(1)


@dataclass(frozen=True, slots=True)
class Share:
    """A node's dominant resource share: the unweighted ratio (borrowed * 1000 / lendable, of the dominant resource),
    the weight, and which flavor-resources it borrows on."""

    ratio: Fraction = Fraction(0)
    weight: Fraction = Fraction(1)
    resource: str = ""
    borrowed_on: tuple[FlavorResource, ...] = ()
    borrowed: int = 0  # of the dominant resource: what the node uses above its quota
    lendable: int = 0  # and what its parent could lend
    _key: tuple[int, Fraction] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # CompareDRS's order, taken once: shares are compared far more often than made
        if self.weight == 0 and self.ratio != 0:
            key = (1, self.ratio)
        else:
            key = (0, Fraction(0) if self.ratio == 0 else self.ratio / self.weight)
        object.__setattr__(self, "_key", key)

    @property
    def borrowing(self) -> bool:
        """Its usage exceeds its subtree quota on some flavor-resource (even where nothing can be lent)."""
        return bool(self.borrowed_on)

    @property
    def infinite(self) -> bool:
        """Weight 0 and a share above 0: Kueue's infinite share."""
        return self.weight == 0 and self.ratio != 0

    @property
    def value(self) -> Fraction | None:
        """The weighted share, exactly; None when it is infinite."""
        if self.ratio == 0:
            return Fraction(0)
        if self.weight == 0:
            return None
        return self.ratio / self.weight

    def rounded(self) -> int | None:
        """Kueue's status value: the weighted share rounded up (None: infinite, Kueue's MaxInt64)."""
        value = self.value
        return None if value is None else math.ceil(value)

    def key(self) -> tuple[int, Fraction]:
        """A sort key in ``CompareDRS``'s order: lower is admitted first, higher is preempted first."""
        return self._key

    def text(self) -> str:
        """The weighted share as people read it: ``"∞"`` or the value (a fraction to 3 decimals, e.g. ``"66.667"``)."""
        value = self.value
        if value is None:
            return "∞"
        if value.denominator == 1:
            return str(value.numerator)
        return f"{float(value):.3f}".rstrip("0").rstrip(".")

    def explain(self) -> str:
        """How the share was reached, with its numbers in people's units."""
        if not self.borrowing:
            return "uses no more than its quota: share 0"
        if self.ratio == 0:
            return "borrows only what its parent cannot lend: share 0"
        r = self.resource
        weight = format_exact_quantity(self.weight)
        return (
            f"{r}: {format_amount(self.borrowed, r)} above its quota x 1000 / {format_amount(self.lendable, r)} its "
            f"parent could lend / weight {weight} = {self.text()}"
        )


NO_SHARE = Share(ratio=Fraction(-1))  # Kueue's NegativeDRS: below every share, a starting point for a maximum


class FairTree:
    """A Kueue tree (or a forest) with the ClusterQueues' usage, answering each node's dominant resource share.

    ``usage`` holds the ClusterQueues' own usage; the Cohorts' follows from it (``usage_of``), recomputed after each
    change. Raises ``ValueError`` for a parent that is not a Cohort of the tree, or a cycle."""

    def __init__(self, nodes: Iterable[FairNode], usage: Mapping[str, Mapping[FlavorResource, int]] | None = None):
        self.nodes: dict[str, FairNode] = {n.name: n for n in nodes}
        self.children: dict[str, list[str]] = {n: [] for n in self.nodes}
        for node in self.nodes.values():
            if node.parent is not None:
                parent = self.nodes.get(node.parent)
                if parent is None or not parent.cohort:
                    raise ValueError(f"{node.name}: parent {node.parent!r} is not a Cohort of the tree")
                self.children[node.parent].append(node.name)
        for kids in self.children.values():
            kids.sort()
        self._depth: dict[str, int] = {}
        for name in self.nodes:
            seen, cur, d = {name}, self.nodes[name].parent, 0
            while cur is not None:
                if cur in seen:
                    raise ValueError(f"{name}: cohorts form a cycle through {cur!r}")
                seen.add(cur)
                cur, d = self.nodes[cur].parent, d + 1
            self._depth[name] = d
        self.subtree: dict[str, dict[FlavorResource, int]] = {}
        for name in sorted(self.nodes, key=lambda n: -self._depth[n]):  # deepest first
            node = self.nodes[name]
            total = dict(node.nominal)
            for c in self.children[name]:
                for fr, q in self.subtree[c].items():
                    total[fr] = total.get(fr, 0) + q - self.local_quota(c, fr)
            self.subtree[name] = total
        # every node's usage (a Cohort's: its children's above what each keeps), kept up to date by ``add_usage``
        self._usage: dict[str, dict[FlavorResource, int]] = {n: {} for n in self.nodes}
        self._lendable: dict[str, dict[str, int]] = {}  # by node: it depends on the quotas alone
        self._members: dict[str, list[str]] = {}  # by node: its subtree's ClusterQueues
        self.version = 0  # moves with every change of usage (callers keep answers while it stays)
        # the shares known, by node: a change of usage forgets those of the nodes whose usage it changed (a node's
        # share depends on its own usage and on quotas alone), so a cohort's other members keep theirs
        self._shares: dict[str, Share] = {}
        self._over: dict[str, frozenset[FlavorResource]] = {}  # the same for what each node borrows (``borrowing``)
        for name, amounts in (usage or {}).items():
            self.add_usage(name, amounts)

    # -- structure ------------------------------------------------------------------------------------------------
    def root_of(self, name: str) -> str:
        while (parent := self.nodes[name].parent) is not None:
            name = parent
        return name

    def path_to_root(self, name: str) -> list[str]:
        """``name``'s ancestors, its parent first."""
        out = []
        while (parent := self.nodes[name].parent) is not None:
            out.append(parent)
            name = parent
        return out

    def cluster_queues(self, name: str) -> list[str]:
        """The ClusterQueues of ``name``'s subtree, by name."""
        members = self._members.get(name)
        if members is None:
            if not self.nodes[name].cohort:
                members = [name]
            else:
                members = sorted(q for c in self.children[name] for q in self.cluster_queues(c))
            self._members[name] = members
        return members

    # -- quota ----------------------------------------------------------------------------------------------------
    def local_quota(self, name: str, fr: FlavorResource) -> int:
        """What the node keeps for its subtree: ``max(0, subtree - lendingLimit)``, 0 without a lending limit."""
        limit = self.nodes[name].lending_limit.get(fr)
        if limit is None:
            return 0
        return max(0, self.subtree[name].get(fr, 0) - limit)

    def potential_available(self, name: str, fr: FlavorResource) -> int:
        node = self.nodes[name]
        if node.parent is None:
            return self.subtree[name].get(fr, 0)
        avail = self.local_quota(name, fr) + self.potential_available(node.parent, fr)
        limit = node.borrowing_limit.get(fr)
        if limit is not None:
            avail = min(avail, self.subtree[name].get(fr, 0) + limit)
        return avail

    def available(self, name: str, fr: FlavorResource) -> int:
        """What ``name`` may still take of ``fr`` now: its unused local quota plus what its parent has for it, at most
        what its borrowing limit leaves (Kueue's ``available``)."""
        node = self.nodes[name]
        quota = self.subtree[name].get(fr, 0)
        usage = self.usage_of(name).get(fr, 0)
        if node.parent is None:
            return quota - usage
        from_parent = self.available(node.parent, fr)
        limit = node.borrowing_limit.get(fr)
        lq = self.local_quota(name, fr)
        if limit is not None:
            stored = quota - lq
            used = max(0, usage - lq)
            from_parent = min(from_parent, stored - used + limit)
        return max(0, lq - usage) + from_parent

    def lendable(self, name: str) -> dict[str, int]:
        """Per resource name, what ``name`` could lend (its potential available summed over the flavors)."""
        out = self._lendable.get(name)
        if out is None:
            out = {}
            for fr in self.subtree[self.root_of(name)]:
                out[fr[1]] = out.get(fr[1], 0) + self.potential_available(name, fr)
            self._lendable[name] = out
        return out

    # -- usage ----------------------------------------------------------------------------------------------------
    def add_usage(self, queue: str, amounts: Mapping[FlavorResource, int], sign: int = 1) -> None:
        """Add (``sign=-1``: remove) ``amounts`` to the ClusterQueue ``queue``'s usage, and to its Cohorts' what
        passes beyond what each node on the way keeps (Kueue's ``addUsage`` / ``removeUsage``)."""
        self.version += 1
        for fr, v in amounts.items():
            delta = sign * v
            name: str | None = queue
            while delta and name is not None:
                own = self._usage[name]
                old = own.get(fr, 0)
                new = old + delta
                if new:
                    own[fr] = new
                else:
                    own.pop(fr, None)
                self._shares.pop(name, None)
                self._over.pop(name, None)
                lq = self.local_quota(name, fr)
                delta = max(0, new - lq) - max(0, old - lq)
                name = self.nodes[name].parent

    @contextlib.contextmanager
    def trying(self, queue: str, amounts: Mapping[FlavorResource, int]) -> Iterator[None]:
        """``amounts`` added to ``queue`` while the block runs (Kueue's ``SimulateUsageAddition``); afterwards the
        tree is as it was, its ``version`` and the shares it knew included."""
        kept = (self.version, dict(self._shares), dict(self._over))
        self.add_usage(queue, amounts)
        try:
            yield
        finally:
            self.add_usage(queue, amounts, -1)
            self.version, self._shares, self._over = kept

    def usage_of(self, name: str) -> dict[FlavorResource, int]:
        """``name``'s usage now (read-only)."""
        return self._usage[name]

    # -- shares ---------------------------------------------------------------------------------------------------
    def share(self, name: str, extra: Mapping[FlavorResource, int] | None = None) -> Share:
        """``name``'s dominant resource share, with ``extra`` added to its own usage (Kueue's ``wlReq``)."""
        if extra:
            return self._share(name, extra)
        found = self._shares.get(name)
        if found is None:
            found = self._shares[name] = self._share(name, None)
        return found

    def _share(self, name: str, extra: Mapping[FlavorResource, int] | None) -> Share:
        node = self.nodes[name]
        weight = node.weight
        if node.parent is None:
            return Share(weight=weight)
        usage = self.usage_of(name)
        borrowed: dict[str, int] = {}
        on: list[FlavorResource] = []
        for fr, quota in sorted(self.subtree[name].items()):
            b = (extra or {}).get(fr, 0) + usage.get(fr, 0) - quota
            if b > 0:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) + b
                on.append(fr)
        if not borrowed:
            return Share(weight=weight)
        lendable = self.lendable(node.parent)
        ratio, dominant = Fraction(0), ""
        for resource in sorted(borrowed):
            lend = lendable.get(resource, 0)
            if lend > 0:
                r = Fraction(borrowed[resource] * 1000, lend)
                if r > ratio:
                    ratio, dominant = r, resource
        return Share(
            ratio=ratio,
            weight=weight,
            resource=dominant,
            borrowed_on=tuple(on),
            borrowed=borrowed.get(dominant, 0),
            lendable=lendable.get(dominant, 0),
        )

    def shares(self) -> dict[str, Share]:
        """Every node's share now, by name."""
        return {n: self.share(n) for n in sorted(self.nodes)}

    def borrowing(self, name: str, frs: Iterable[FlavorResource] | None = None) -> bool:
        """Whether ``name``'s usage is above its subtree quota (on one of ``frs``, when given)."""
        over = self._over.get(name)
        if over is None:
            usage = self.usage_of(name)
            over = frozenset(fr for fr, quota in self.subtree[name].items() if usage.get(fr, 0) > quota)
            self._over[name] = over
        if frs is None:
            return bool(over)
        return any(fr in over for fr in frs)


def flavor_resource(key: str) -> FlavorResource:
    """A snapshot's resource key as Kueue's (flavor, resource): ``cpu@spot`` is ``("spot", "cpu")``, a resource read
    in one flavor ``(FLAVOR, name)``."""
    resource, flavor = split_flavor(key)
    return (flavor or FLAVOR, resource)


def kueue_tree(snapshot: Snapshot, usage: Mapping[str, Mapping[str, int]] | None = None) -> FairTree:
    """Kueue's tree from a snapshot's queues: every queue but ``root`` (``root``'s children are the tops of the
    trees); a queue with children is a Cohort whose own nominal quota is its deserved less its children's (the Kueue
    reader gives a Cohort its subtree's nominal quota), a leaf a ClusterQueue with its deserved; the limits as given;
    the weight Kueue's exact ``fairSharing.weight`` where the reader kept it, else the whole weight. ``usage``: each
    ClusterQueue's usage by resource (only what it has quota for counts, as in Kueue)."""
    children = snapshot.queue_children
    nodes = []
    for name, spec in snapshot.queues.items():
        if name == ROOT_QUEUE:
            continue
        kids = children.get(name, ())
        nominal = dict(spec.deserved.items())
        for c in kids:
            for r, v in snapshot.queues[c].deserved.items():
                nominal[r] = nominal.get(r, 0) - v
        nodes.append(
            FairNode(
                name=name,
                parent=None if spec.parent in (None, ROOT_QUEUE) or spec.parent not in snapshot.queues else spec.parent,
                cohort=bool(kids),
                nominal={flavor_resource(r): max(0, v) for r, v in nominal.items()},
                borrowing_limit={flavor_resource(r): v for r, v in spec.borrowing_limit.items()},
                lending_limit={flavor_resource(r): v for r, v in spec.lending_limit.items()},
                weight=snapshot.kueue_weights.get(name, Fraction(spec.weight)),
            )
        )
    tree = FairTree(nodes)
    for name, amounts in (usage or {}).items():
        node = tree.nodes.get(name)
        if node is not None and not node.cohort:
            quota = tree.subtree[name]
            tree.add_usage(name, {flavor_resource(r): v for r, v in amounts.items() if flavor_resource(r) in quota})
    return tree
