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

from collections.abc import Mapping
from dataclasses import dataclass

from engine.fairshare.drs import FairTree, FlavorResource, Share

__all__ = ["Head", "less", "next_head"]


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
    the shares of the children that offer them, each with its head admitted? An exact tie is False (the first met
    stays)."""
    a_borrows = any(a.usage.get(fr, 0) > 0 for fr in a_share.borrowed_on)
    b_borrows = any(b.usage.get(fr, 0) > 0 for fr in b_share.borrowed_on)
    if a_borrows != b_borrows:
        return not a_borrows
    a_key, b_key = a_share.key(), b_share.key()
    if a_key != b_key:
        return a_key < b_key
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.created < b.created


def _shares(tree: FairTree, root: str, heads: Mapping[str, Head]) -> dict[tuple[str, str], Share]:
    """Kueue's ``computeDRS``: per (Cohort, head), the share of the Cohort's child on the head's path, with the head's
    usage added to its ClusterQueue."""
    out: dict[tuple[str, str], Share] = {}
    for queue in tree.cluster_queues(root):
        head = heads.get(queue)
        if head is None:
            continue
        with tree.trying(queue, {fr: v for fr, v in head.usage.items() if v}):
            share = tree.share(queue)
            for ancestor in tree.path_to_root(queue):
                out[(ancestor, head.key)] = share
                share = tree.share(ancestor)
    return out


def _winner(
    tree: FairTree, cohort: str, heads: Mapping[str, Head], shares: Mapping[tuple[str, str], Share]
) -> Head | None:
    """Kueue's ``runTournament`` below ``cohort``: the head it nominates, or None when its subtree has none left."""
    kids = tree.children[cohort]
    candidates = [w for c in kids if tree.nodes[c].cohort and (w := _winner(tree, c, heads, shares)) is not None]
    candidates += [heads[c] for c in kids if not tree.nodes[c].cohort and c in heads]
    if not candidates:
        return None
    best = candidates[0]
    for current in candidates[1:]:
        if less(current, shares[(cohort, current.key)], best, shares[(cohort, best.key)]):
            best = current
    return best


def next_head(tree: FairTree, heads: Mapping[str, Head]) -> Head:
    """The head Kueue's Fair Sharing takes next among ``heads`` (by ClusterQueue, each a ClusterQueue of ``tree``),
    on the tree's usage as it stands. ``heads`` must not be empty."""
    root = min(tree.root_of(queue) for queue in heads)
    if not tree.nodes[root].cohort:
        return heads[root]
    winner = _winner(tree, root, heads, _shares(tree, root, heads))
    assert winner is not None  # the root was taken from a head's path
    return winner
