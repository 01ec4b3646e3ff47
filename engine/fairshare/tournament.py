"""Kueue's Fair Sharing order of a scheduling cycle's heads (``pkg/scheduler/fair_sharing_iterator.go`` at the pinned
commit ff69552): the tournament over the Cohort tree.

Each ClusterQueue offers one head (its first waiting workload) with what the head would use on its flavors. The
next head taken is found per tree (a ClusterQueue without a Cohort gives its head at once): every head is counted as
admitted in turn, and the dominant resource share of each node on its path is read with it; then, from the bottom,
each Cohort picks one head among its children's (a child Cohort's winner, a child ClusterQueue's head), comparing
the children's shares with that head admitted:

1. a child that would not borrow on what the head asks comes first (Kueue's ``FairSharingPrioritizeNonBorrowing``,
   on by default in v0.17: a child borrowing only on flavor-resources the head does not ask for is not borrowing);
2. the lower share (``CompareDRS``: weight 0 with something borrowed ranks above every finite share);
3. the higher priority (``PrioritySortingWithinCohort``, on by default);
4. the older (creation).

The winner of the top Cohort is taken; the shares are computed again for the next one, on the usage the heads before
it added. Where Kueue leaves the order open, it is fixed here: the trees are taken in the order of their top's name
(Kueue takes any ClusterQueue's tree first), and two heads equal on all four go by the children's order Kueue lists
them in (Cohorts before ClusterQueues), each by name. Kueue's ``PrioritizePreemptorWorkloads`` (alpha, off by
default) is not read.

Plain Python on ``engine.fairshare.drs.FairTree``; exact integers and Fractions.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine.fairshare.drs import FairTree, FlavorResource, Share

__all__ = ["Head", "Tournament", "less", "next_head"]


@dataclass(frozen=True, slots=True)
class Head:
    """A ClusterQueue's head in the cycle: its workload key, ClusterQueue, what it would use (flavor-resource ->
    amount), priority and creation (seconds)."""

    key: str
    queue: str
    usage: Mapping[FlavorResource, int]
    priority: int = 0
    created: float = 0.0


def less(a: Head, a_share: Share, b: Head, b_share: Share) -> bool:
    """Kueue's ``entryComparer.less`` at one Cohort: is ``a`` taken before ``b``, ``a_share`` and ``b_share`` being
    the shares of the children that offer them, each with its head admitted? In order: not borrowing on what the head
    asks, the lower share, the higher priority, the older. An exact tie is False (the first met stays)."""
    return _key(a, a_share) < _key(b, b_share)


def _key(head: Head, share: Share) -> tuple[bool, tuple[int, Fraction], int, float]:
    """``less`` as a sort key: ``less(a, sa, b, sb)`` is ``_key(a, sa) < _key(b, sb)``."""
    return (any(head.usage.get(fr, 0) > 0 for fr in share.borrowed_on), share.key(), -head.priority, head.created)


class Tournament:
    """Kueue's Fair Sharing iterator over ``heads`` (by ClusterQueue, each a ClusterQueue of ``tree``): ``pop`` takes
    the next head on the tree's usage as it stands; a caller that adds usage to a ClusterQueue says so (``changed``),
    so that only what depends on it is computed again (the shares of the nodes on its path, the nominees of the
    Cohorts above them)."""

    def __init__(self, tree: FairTree, heads: Mapping[str, Head]) -> None:
        self.tree = tree
        self.by_root: dict[str, dict[str, Head]] = {}
        self._path: dict[str, tuple[str, ...]] = {}  # by head key: its ClusterQueue and the Cohorts above it
        self._under: dict[str, set[str]] = {}  # by node below a top: the heads whose path passes it
        for queue, head in heads.items():
            self.by_root.setdefault(tree.root_of(queue), {})[queue] = head
            path = self._path[head.key] = (queue, *tree.path_to_root(queue))
            for node in path[:-1]:
                self._under.setdefault(node, set()).add(head.key)
        self._keys: dict[str, dict[str, tuple[Any, ...]]] = {}  # by head key, per Cohort on its path: ``_key``
        self._nominee: dict[str, Head | None] = {}  # by Cohort: ``_winner``

    def __bool__(self) -> bool:
        return bool(self.by_root)

    def _keys_of(self, head: Head) -> dict[str, tuple[Any, ...]]:
        """Kueue's ``computeDRS`` for one head, as ``less``'s keys: per Cohort on its path, with the share of the
        Cohort's child on the path, the head's usage added to its ClusterQueue."""
        known = self._keys.get(head.key)
        if known is None:
            tree = self.tree
            known = {}
            with tree.trying(head.queue, {fr: v for fr, v in head.usage.items() if v}):
                path = self._path[head.key]
                for child, cohort in itertools.pairwise(path):
                    known[cohort] = _key(head, tree.share(child))
            self._keys[head.key] = known
        return known

    def _winner(self, cohort: str, heads: Mapping[str, Head]) -> Head | None:
        """Kueue's ``runTournament`` below ``cohort``: the head it nominates (the least by ``less``, the first met on
        a tie), or None when its subtree has none left."""
        if cohort in self._nominee:
            return self._nominee[cohort]
        tree = self.tree
        kids = tree.children[cohort]
        candidates = [w for c in kids if tree.nodes[c].cohort and (w := self._winner(c, heads)) is not None]
        candidates += [heads[c] for c in kids if not tree.nodes[c].cohort and c in heads]
        best = None
        if candidates:
            at = min(range(len(candidates)), key=lambda i: (self._keys_of(candidates[i])[cohort], i))
            best = candidates[at]
        self._nominee[cohort] = best
        return best

    def _forget(self, key: str) -> None:
        """A head's keys and the nominees of the Cohorts above it are computed again."""
        self._keys.pop(key, None)
        for cohort in self._path[key][1:]:
            self._nominee.pop(cohort, None)

    def pop(self) -> Head:
        """The head Kueue's Fair Sharing takes next (the trees by the name of their top), taken out."""
        root = min(self.by_root)
        heads = self.by_root[root]
        winner = heads[root] if not self.tree.nodes[root].cohort else self._winner(root, heads)
        assert winner is not None  # the root was taken from a head's path
        del heads[winner.queue]
        if not heads:
            del self.by_root[root]
        self._forget(winner.key)
        for node in self._path[winner.key][:-1]:
            self._under[node].discard(winner.key)
        return winner

    def changed(self, queue: str) -> None:
        """Usage was added to (or taken from) ``queue``: the heads whose path below the top shares a node with its
        path are compared again."""
        for node in (queue, *self.tree.path_to_root(queue)):
            for key in self._under.get(node, ()):
                if key in self._keys:
                    self._forget(key)


def next_head(tree: FairTree, heads: Mapping[str, Head]) -> Head:
    """The head Kueue's Fair Sharing takes next among ``heads`` (by ClusterQueue, each a ClusterQueue of ``tree``),
    on the tree's usage as it stands. ``heads`` must not be empty."""
    return Tournament(tree, heads).pop()
