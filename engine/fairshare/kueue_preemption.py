"""Kueue's Fair Sharing preemption: which admitted workloads an incoming one preempts (Kueue at commit ff69552,
``pkg/scheduler/preemption/preemption.go`` ``fairPreemptions`` and ``preemption/fairsharing/``), on a
``engine.fairshare.drs.FairTree``.

Given the preemptor's ClusterQueue and request, and the candidates (already filtered by the ClusterQueues' preemption
policies and sorted in Kueue's candidate order, ``candidate_key``), ``fair_targets``:

1. adds the request to the preemptor's ClusterQueue (every share below includes it);
2. walks the target ClusterQueues in Kueue's order: from the top of the tree, at each Cohort the child with the
   highest share (a ClusterQueue that borrows nothing is pruned, but the preemptor's own; a Cohort that borrows
   nothing is pruned unless it is on the preemptor's path; ties between ClusterQueues go to the better first candidate,
   between Cohorts to the later one), until a ClusterQueue comes out;
3. takes from it: a candidate of the preemptor's own ClusterQueue at once; any candidate while the preemptor stays
   within its nominal quota on what it asks (``FairSharingPreemptWithinNominal``); otherwise the first candidate that
   passes the first strategy, comparing the shares of the two children of the lowest common Cohort on the two paths
   (``LessThanOrEqualToFinalShare``: the preemptor's with its request ≤ the target's without the candidate;
   ``LessThanInitialShare``: the preemptor's < the target's as it is), and then the target is chosen again; a
   candidate that fails is kept for the second strategy. A preemptor with an infinite share (weight 0) passes no
   strategy against a finite target: its candidates there go to the second strategy untried;
4. with a second strategy (``LessThanInitialShare``) and no fit yet: the kept candidates, ClusterQueue by ClusterQueue
   in the same order, at most the first of each, when the preemptor's share is below the target's;
5. stops as soon as the request fits (``FairTree.available`` of every flavor-resource, the request itself taken out
   again), then gives back, from the second-to-last taken to the first, every target the request still fits without.

The tree is left as it was. The answer is the targets and whether the request fits; Kueue preempts nothing when it
does not fit.

Without fair sharing, ``classical_targets`` is Kueue's classical preemption (``classicalPreemptions`` and
``preemption/classical/``) on the same tree: see its docstring.

A caller that simulates many preemptions on one set of admitted workloads (Kueue's flavor assigner) indexes them once
(``CandidateIndex``: by flavor-resource and ClusterQueue, in Kueue's candidate order) and passes the index: the
searches then take candidates only from the ClusterQueues that may give some, one at a time, to the same answers.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.fairshare.drs import NO_SHARE, FairTree, FlavorResource, Share
from engine.objects import KueuePreemption

__all__ = [
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "Candidate",
    "CandidateIndex",
    "candidate_key",
    "classical_targets",
    "fair_targets",
    "find_candidates",
    "hierarchical_advantage",
    "order_key",
    "satisfies",
]

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


@dataclass(frozen=True)
class Candidate:
    """An admitted workload that may be preempted: its ClusterQueue and usage, priority, and when it was admitted
    (``admitted``: later is newer); ``ref`` is whatever the caller needs back."""

    name: str
    queue: str
    usage: Mapping[FlavorResource, int]
    priority: int = 0
    admitted: float = 0.0
    created: float = 0.0
    ref: Any = field(default=None, compare=False)


def candidate_key(preemptor_queue: str) -> Callable[[Candidate], tuple[Any, ...]]:
    """Kueue's ``CandidatesOrdering`` as a sort key: other ClusterQueues' workloads first, then the lower priority,
    then the newer admission, then the name."""
    return lambda c: (c.queue == preemptor_queue, c.priority, -c.admitted, c.name)


def order_key(c: Candidate) -> tuple[Any, ...]:
    """``candidate_key`` without its first term (the preemptor's ClusterQueue): an order of the candidates that any
    preemptor can use, its own workloads put last by the caller."""
    return (c.priority, -c.admitted, c.name)


class CandidateIndex:
    """The admitted workloads as candidates, made once for many preemptions on one set of them (Kueue's flavor
    assigner simulates one per flavor tried): for each flavor-resource, the workloads that use it in ``order_key``
    order (``of``, for ``find_candidates(presorted=True)``), and the same by ClusterQueue (``grouped``, for
    ``classical_targets(grouped=...)``)."""

    __slots__ = ("_grouped", "using")

    def __init__(self, admitted: Iterable[Candidate]) -> None:
        self.using: dict[FlavorResource, list[Candidate]] = {}
        self._grouped: dict[FlavorResource, dict[str, list[Candidate]]] = {}
        for c in sorted(admitted, key=order_key):
            for fr, v in c.usage.items():
                if v > 0:
                    self.using.setdefault(fr, []).append(c)
                    self._grouped.setdefault(fr, {}).setdefault(c.queue, []).append(c)

    def of(self, fr: FlavorResource) -> list[Candidate]:
        """The workloads using ``fr``, in ``order_key`` order."""
        return self.using.get(fr, [])

    def grouped(self, fr: FlavorResource) -> dict[str, list[Candidate]]:
        """The workloads using ``fr`` by ClusterQueue, each ClusterQueue's in ``order_key`` order."""
        return self._grouped.get(fr, {})


def satisfies(policy: str, candidate: Candidate, priority: int, created: float) -> bool:
    """Kueue's ``SatisfiesPreemptionPolicy``: may a workload of ``priority`` created at ``created`` preempt
    ``candidate`` under ``policy`` (Never, LowerPriority, LowerOrNewerEqualPriority, Any)?"""
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return candidate.priority < priority
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority < priority or (candidate.priority == priority and candidate.created > created)
    return False


def find_candidates(
    tree: FairTree,
    preemptor: str,
    request: Mapping[FlavorResource, int],
    admitted: Sequence[Candidate],
    policy: KueuePreemption,
    priority: int,
    created: float = 0.0,
    presorted: bool = False,
) -> list[Candidate]:
    """Kueue's ``findCandidates``: the preemptor's ClusterQueue's workloads its ``withinClusterQueue`` allows, and,
    when it is in a Cohort and ``reclaimWithinCohort`` is not Never, the workloads that policy allows of the other
    ClusterQueues of its tree that borrow on a flavor-resource of the request; only workloads using one of those; in
    ``candidate_key`` order (``presorted``: ``admitted`` is in ``order_key`` order, so no sort is needed)."""
    needed = {fr for fr, v in request.items() if v > 0}

    def uses(c: Candidate) -> bool:
        return any(c.usage.get(fr, 0) > 0 for fr in needed)

    own: list[Candidate] = []
    if policy.within_cluster_queue != "Never":
        own = [
            c
            for c in admitted
            if c.queue == preemptor and uses(c) and satisfies(policy.within_cluster_queue, c, priority, created)
        ]
    others: list[Candidate] = []
    if tree.nodes[preemptor].parent is not None and policy.reclaim_within_cohort != "Never":
        lenders = {
            q
            for q in tree.cluster_queues(tree.root_of(preemptor))
            if q != preemptor and tree.nodes[q].parent is not None and tree.borrowing(q, needed)
        }
        others = [
            c
            for c in admitted
            if c.queue in lenders and uses(c) and satisfies(policy.reclaim_within_cohort, c, priority, created)
        ]
    # (``candidate_key`` puts the other ClusterQueues' first: in ``order_key`` order, each part is in order)
    return others + own if presorted else sorted(own + others, key=candidate_key(preemptor))


class _Ordering:
    """Kueue's ``TargetClusterQueueOrdering``: the candidates by ClusterQueue and the pruned nodes."""

    def __init__(self, tree: FairTree, preemptor: str, candidates: Sequence[Candidate]) -> None:
        self.tree = tree
        self.preemptor = preemptor
        self.on_path = set(tree.path_to_root(preemptor))
        self.by_queue: dict[str, list[Candidate]] = {}
        for c in candidates:
            self.by_queue.setdefault(c.queue, []).append(c)
        self.pruned: set[str] = set()
        self.key = candidate_key(preemptor)

    def has(self, queue: str) -> bool:
        return bool(self.by_queue.get(queue))

    def pop(self, queue: str) -> Candidate:
        return self.by_queue[queue].pop(0)

    def targets(self) -> Any:
        tree = self.tree
        if tree.nodes[self.preemptor].parent is None:
            while self.preemptor not in self.pruned and self.has(self.preemptor):
                yield self.preemptor
            return
        root = tree.root_of(self.preemptor)
        while root not in self.pruned:
            target = self._next(root)
            if target is not None:
                yield target

    def _next(self, cohort: str) -> str | None:
        tree = self.tree
        best_cq: str | None = None
        best_cq_share = NO_SHARE
        best_cohort: str | None = None
        best_cohort_share = NO_SHARE
        for child in tree.children[cohort]:
            if child in self.pruned:
                continue
            share = tree.share(child)
            if tree.nodes[child].cohort:
                if not share.borrowing and child not in self.on_path:
                    self.pruned.add(child)
                elif share.key() >= best_cohort_share.key():
                    best_cohort, best_cohort_share = child, share
                continue
            if (not share.borrowing and child != self.preemptor) or not self.has(child):
                self.pruned.add(child)
            elif share.key() == best_cq_share.key():
                assert best_cq is not None
                if self.key(self.by_queue[child][0]) < self.key(self.by_queue[best_cq][0]):
                    best_cq = child
            elif share.key() > best_cq_share.key():
                best_cq, best_cq_share = child, share
        if best_cohort is None and best_cq is None:
            self.pruned.add(cohort)
            return None
        if best_cohort is not None and best_cohort_share.key() >= best_cq_share.key():
            return self._next(best_cohort)
        return best_cq


def _almost_lcas(tree: FairTree, preemptor: str, target: str) -> tuple[str, str]:
    """The children of the lowest common Cohort of the two on each one's path (Kueue's ``getAlmostLCAs``); a
    ClusterQueue and itself: itself twice."""
    mine = [preemptor, *tree.path_to_root(preemptor)]
    theirs = [target, *tree.path_to_root(target)]
    for i, node in enumerate(theirs[1:], start=1):
        if node in mine[1:]:
            return mine[mine.index(node) - 1], theirs[i - 1]
    return preemptor, target


def _passes(strategy: str, preemptor_new: Share, target_old: Share, target_new: Share) -> bool:
    if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return preemptor_new.key() <= target_new.key()
    return preemptor_new.key() < target_old.key()


def fair_targets(
    tree: FairTree,
    preemptor: str,
    request: Mapping[FlavorResource, int],
    candidates: Sequence[Candidate],
    strategies: Sequence[str] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
) -> tuple[list[Candidate], bool]:
    """The workloads Kueue's fair sharing preempts for ``request`` in ClusterQueue ``preemptor`` among
    ``candidates`` (sorted by ``candidate_key``), and whether the request then fits (the module docstring)."""
    taken: list[Candidate] = []

    def fits() -> bool:
        tree.add_usage(preemptor, request, -1)
        try:
            return all(v <= tree.available(preemptor, fr) for fr, v in request.items() if v > 0)
        finally:
            tree.add_usage(preemptor, request)

    def take(c: Candidate) -> bool:
        tree.add_usage(c.queue, c.usage, -1)
        taken.append(c)
        return fits()

    tree.add_usage(preemptor, request)
    try:
        done, retry = _first_strategy(tree, preemptor, request, candidates, strategies[0], take)
        if not done and len(strategies) > 1:
            done = _second_strategy(tree, preemptor, retry, take)
        if not done:
            return list(taken), False
        # give back what is not needed, the second-to-last taken first
        for c in reversed(taken[:-1]):
            tree.add_usage(c.queue, c.usage)
            if fits():
                taken.remove(c)
            else:
                tree.add_usage(c.queue, c.usage, -1)
        return list(taken), True
    finally:
        for c in taken:
            tree.add_usage(c.queue, c.usage)
        tree.add_usage(preemptor, request, -1)


def _first_strategy(
    tree: FairTree,
    preemptor: str,
    request: Mapping[FlavorResource, int],
    candidates: Sequence[Candidate],
    strategy: str,
    take: Callable[[Candidate], bool],
) -> tuple[bool, list[Candidate]]:
    ordering = _Ordering(tree, preemptor, candidates)
    retry: list[Candidate] = []
    within_nominal = not tree.borrowing(preemptor, request)
    for target in ordering.targets():
        if target == preemptor or within_nominal:
            if take(ordering.pop(target)):
                return True, []
            continue
        mine, theirs = _almost_lcas(tree, preemptor, target)
        preemptor_new, target_old = tree.share(mine), tree.share(theirs)
        if preemptor_new.infinite and not target_old.infinite:
            while ordering.has(target):
                retry.append(ordering.pop(target))
            continue
        while ordering.has(target):
            c = ordering.pop(target)
            tree.add_usage(target, c.usage, -1)
            target_new = tree.share(theirs)
            tree.add_usage(target, c.usage)
            if _passes(strategy, preemptor_new, target_old, target_new):
                if take(c):
                    return True, []
                break  # the shares changed: choose the target again
            retry.append(c)
    return False, retry


def _second_strategy(
    tree: FairTree, preemptor: str, retry: Sequence[Candidate], take: Callable[[Candidate], bool]
) -> bool:
    ordering = _Ordering(tree, preemptor, retry)
    for target in ordering.targets():
        mine, theirs = _almost_lcas(tree, preemptor, target)
        passed = tree.share(mine).key() < tree.share(theirs).key()
        c = ordering.pop(target)
        if passed and take(c):
            return True
        ordering.pruned.add(target)  # at most once per ClusterQueue
    return False


# -- classical preemption (no fair sharing) ------------------------------------------------------------------------
# Kueue's ``classicalPreemptions`` (``preemption.go``) with ``preemption/classical/``: how a candidate may be taken.
_WITHIN_CQ = "WithinClusterQueue"
_HIERARCHICAL = "HierarchicalReclaim"  # the preemptor is closer to the quota the candidate uses: any priority
_WITHOUT_BORROWING = "ReclaimWithoutBorrowing"  # only while the preemptor then fits without borrowing
_WHILE_BORROWING = "ReclaimWhileBorrowing"  # borrowWithinCohort allows it: the preemptor may borrow


def _within_nominal(tree: FairTree, name: str, frs: Iterable[FlavorResource]) -> bool:
    usage, quota = tree.usage_of(name), tree.subtree[name]
    return all(usage.get(fr, 0) <= quota.get(fr, 0) for fr in frs)


def _fit_in_quota(
    tree: FairTree, name: str, request: Mapping[FlavorResource, int]
) -> tuple[bool, dict[FlavorResource, int]]:
    """Kueue's ``QuantitiesFitInQuota``: whether ``request`` fits in ``name``'s subtree quota as used now, and what of
    it is left for the parent once the node's own unused local quota is taken."""
    usage, quota = tree.usage_of(name), tree.subtree[name]
    fits = all(usage.get(fr, 0) + v <= quota.get(fr, 0) for fr, v in request.items())
    left = {fr: max(0, v - max(0, tree.local_quota(name, fr) - usage.get(fr, 0))) for fr, v in request.items()}
    return fits, left


def hierarchical_advantage(tree: FairTree, queue: str, request: Mapping[FlavorResource, int]) -> bool:
    """Whether ``request`` fits the quota of ClusterQueue ``queue`` or of a Cohort on its path below the top of its
    tree (what each node below keeps unused taken first): Kueue may then take it back from any ClusterQueue outside
    that subtree that borrows, whatever ``borrowWithinCohort`` says."""
    fits, left = _fit_in_quota(tree, queue, request)
    for cohort in tree.path_to_root(queue)[:-1]:
        if fits:
            return True
        fits, left = _fit_in_quota(tree, cohort, left)
    return fits


def classical_targets(
    tree: FairTree,
    preemptor: str,
    request: Mapping[FlavorResource, int],
    admitted: Sequence[Candidate],
    policy: KueuePreemption,
    priority: int,
    created: float = 0.0,
    grouped: Mapping[str, Sequence[Candidate]] | None = None,
) -> list[Candidate]:
    """The workloads Kueue's classical preemption (fair sharing off) evicts so that ``request`` fits in ClusterQueue
    ``preemptor``, among ``admitted`` (every admitted workload of the tree); empty when no set makes it fit.

    The candidates use a flavor-resource of the request, and their ClusterQueue's policy for the preemptor allows
    them (``withinClusterQueue`` for its own, ``reclaimWithinCohort`` for the others). Another ClusterQueue's
    candidate is one of three kinds: the preemptor has a hierarchical advantage over it (the request fits the quota
    of the preemptor's ClusterQueue, or of a Cohort on its path below the one it shares with the candidate): any such
    candidate may go; otherwise, with ``borrowWithinCohort: LowerPriority``, a candidate of a lower priority than the
    preemptor's and at most ``maxPriorityThreshold`` may go even if the preemptor then borrows; any other only if the
    preemptor then fits without borrowing. A candidate of another ClusterQueue counts only while that ClusterQueue
    and each Cohort between it and the one it shares with the preemptor are above their nominal quota. The order: the other ClusterQueues' hierarchical candidates, then their other ones, then the
    preemptor's own, each by ``candidate_key``. The attempts (borrowing allowed or not, in Kueue's order) take
    candidates until the request fits, then give back, from the second-to-last taken to the first, every one it still
    fits without. The tree is left as it was.

    ``grouped``: ``admitted`` by ClusterQueue, each in ``order_key`` order (``CandidateIndex.grouped``, made once for
    many calls): the candidates are then gathered from the ClusterQueues that may give some alone, without sorting
    them all, and the other ClusterQueues' ones an attempt cannot take are not listed, to the same answer."""
    search = _Classical(tree, preemptor, request, policy, priority, created)
    if grouped is not None:
        return search.from_groups(grouped)
    hierarchy, others, own = search.candidates(admitted)
    key = candidate_key(preemptor)
    ordered = [e for group in (hierarchy, others, own) for e in sorted(group, key=lambda e: key(e[0]))]
    for borrow in search.attempts(bool(hierarchy), bool(others)):
        taken = search.attempt(ordered, borrow)
        if taken:
            return taken
    return []


# (candidate, kind, the Cohort shared with the preemptor: None for its own ClusterQueue)
_Entry = tuple[Candidate, str, str | None]


class _Classical:
    """The steps of ``classical_targets`` for one preemptor and request."""

    def __init__(
        self,
        tree: FairTree,
        preemptor: str,
        request: Mapping[FlavorResource, int],
        policy: KueuePreemption,
        priority: int,
        created: float,
    ) -> None:
        self.tree, self.preemptor, self.request, self.policy = tree, preemptor, request, policy
        self.priority, self.created = priority, created
        self.need = [fr for fr, v in request.items() if v > 0]
        self.node = tree.nodes[preemptor]
        self.forbidden = policy.borrow_within_cohort != "LowerPriority"
        self.threshold = policy.max_priority_threshold
        self.by_queue: dict[str, list[Candidate]] = {}

    def _uses(self, c: Candidate) -> bool:
        return any(c.usage.get(fr, 0) > 0 for fr in self.need)

    def kind(self, c: Candidate, advantage: bool) -> str | None:
        same = c.queue == self.preemptor
        rule = self.policy.within_cluster_queue if same else self.policy.reclaim_within_cohort
        if not self._uses(c) or not satisfies(rule, c, self.priority, self.created):
            return None
        if same:
            return _WITHIN_CQ
        if advantage:
            return _HIERARCHICAL
        threshold = self.threshold
        if self.forbidden or c.priority >= self.priority or (threshold is not None and c.priority > threshold):
            return _WITHOUT_BORROWING
        return _WHILE_BORROWING

    def candidates(self, admitted: Sequence[Candidate]) -> tuple[list[_Entry], list[_Entry], list[_Entry]]:
        """The other ClusterQueues' candidates the preemptor has a hierarchical advantage over, their others, and
        the preemptor's own, each with its kind and shared Cohort."""
        for c in admitted:
            self.by_queue.setdefault(c.queue, []).append(c)
        hierarchy: list[_Entry] = []
        others: list[_Entry] = []
        own: list[_Entry] = []
        if self.policy.within_cluster_queue != "Never":
            own = [
                (c, k, None) for c in self.by_queue.get(self.preemptor, ()) if (k := self.kind(c, False)) is not None
            ]
        if self.node.parent is not None and self.policy.reclaim_within_cohort != "Never":
            advantage, left = _fit_in_quota(self.tree, self.preemptor, self.request)
            previous: str | None = None
            for cohort in self.tree.path_to_root(self.preemptor):
                self._collect(cohort, cohort, previous, advantage, hierarchy if advantage else others)
                fits_here, left = _fit_in_quota(self.tree, cohort, left)
                advantage = advantage or fits_here
                previous = cohort
        return hierarchy, others, own

    def from_groups(self, grouped: Mapping[str, Sequence[Candidate]]) -> list[Candidate]:
        """``classical_targets`` on the candidates by ClusterQueue (``grouped``): where each other ClusterQueue
        stands is found once by walking the tree; the candidates of the ClusterQueues with a hierarchical advantage
        and the preemptor's own are listed; the others only as far as an attempt may take them: with
        ``borrowWithinCohort`` forbidding it, an attempt that lets the preemptor borrow cannot take any."""
        places: dict[str, tuple[str, bool]] = {}  # another ClusterQueue -> the Cohort it shares, advantage
        if self.node.parent is not None and self.policy.reclaim_within_cohort != "Never":
            advantage, left = _fit_in_quota(self.tree, self.preemptor, self.request)
            previous: str | None = None
            for cohort in self.tree.path_to_root(self.preemptor):
                self._place(cohort, cohort, previous, advantage, places)
                fits_here, left = _fit_in_quota(self.tree, cohort, left)
                advantage = advantage or fits_here
                previous = cohort
        own: list[_Entry] = []
        if self.policy.within_cluster_queue != "Never":
            own = [(c, k, None) for c in grouped.get(self.preemptor, ()) if (k := self.kind(c, False)) is not None]
        near = {q: top for q, (top, adv) in places.items() if adv}
        plain = {q: top for q, (top, adv) in places.items() if not adv}
        found = [any(self.kind(c, adv) is not None for q in qs for c in grouped.get(q, ())) for qs, adv in
                 ((near, True), (plain, False))]  # fmt: skip
        for borrow in self.attempts(*found):
            spent: set[str] = set()
            ordered = self._stream(grouped, near, True, spent)
            if not (borrow and self.forbidden):  # (else every other one is ReclaimWithoutBorrowing: not valid here)
                ordered = itertools.chain(ordered, self._stream(grouped, plain, False, spent))
            taken = self.attempt(itertools.chain(ordered, own), borrow, spent)
            if taken:
                return taken
        return []

    def _stream(
        self, grouped: Mapping[str, Sequence[Candidate]], tops: Mapping[str, str], advantage: bool, spent: set[str]
    ) -> Iterator[_Entry]:
        """The candidates of the ClusterQueues of ``tops`` (to the Cohort each shares with the preemptor) with their
        kind, in ``order_key`` order, each looked at only when the attempt comes to it; a ClusterQueue put in
        ``spent`` (by ``attempt``) gives no more."""
        heap = [(order_key(cs[0]), q, 0) for q in tops if (cs := grouped.get(q))]
        heapq.heapify(heap)
        while heap:
            _, q, i = heapq.heappop(heap)
            if q in spent:
                continue
            cs = grouped[q]
            if i + 1 < len(cs):
                heapq.heappush(heap, (order_key(cs[i + 1]), q, i + 1))
            k = self.kind(cs[i], advantage)
            if k is not None:
                yield cs[i], k, tops[q]

    def _place(
        self, cohort: str, top: str, skip: str | None, advantage: bool, out: dict[str, tuple[str, bool]]
    ) -> None:
        """``_collect``'s walk, noting where each ClusterQueue it reaches stands instead of gathering candidates
        (``_within_nominal`` unrolled for one flavor-resource: every ClusterQueue of the tree passes here)."""
        tree, need = self.tree, self.need
        one = need[0] if len(need) == 1 else None
        for child in tree.children[cohort]:
            if child == skip or child == self.preemptor:
                continue
            if one is not None:
                if tree.usage_of(child).get(one, 0) <= tree.subtree[child].get(one, 0):
                    continue
            elif _within_nominal(tree, child, need):
                continue
            if tree.nodes[child].cohort:
                self._place(child, top, skip, advantage, out)
            else:
                out[child] = (top, advantage)

    def _collect(self, cohort: str, top: str, skip: str | None, advantage: bool, out: list[_Entry]) -> None:
        for child in self.tree.children[cohort]:
            if child in (skip, self.preemptor) or _within_nominal(self.tree, child, self.need):
                continue
            if self.tree.nodes[child].cohort:
                self._collect(child, top, skip, advantage, out)
            else:
                out += [(c, k, top) for c in self.by_queue.get(child, ()) if (k := self.kind(c, advantage)) is not None]

    def attempts(self, hierarchy: bool, others: bool) -> list[bool]:
        """Whether each attempt may leave the preemptor borrowing, in Kueue's order."""
        under_nominal = all(
            self.tree.usage_of(self.preemptor).get(fr, 0) < self.node.nominal.get(fr, 0) for fr in self.need
        )
        if (not hierarchy and not others) or (self.forbidden and not under_nominal):
            return [True]
        if self.forbidden and not hierarchy:
            return [False, True]
        return [True, False]

    def _valid(self, c: Candidate, k: str, top: str | None, borrow: bool) -> bool:
        if c.queue == self.preemptor:
            return True
        if borrow and k == _WITHOUT_BORROWING:
            return False
        if _within_nominal(self.tree, c.queue, self.need):
            return False
        for up in self.tree.path_to_root(c.queue):
            if up == top:
                break
            if _within_nominal(self.tree, up, self.need):
                return False
        return True

    def _fits(self, borrow: bool) -> bool:
        tree, preemptor = self.tree, self.preemptor
        usage, quota = tree.usage_of(preemptor), tree.subtree[preemptor]
        for fr, v in self.request.items():
            if not borrow and usage.get(fr, 0) + v > quota.get(fr, 0):
                return False
            if v > tree.available(preemptor, fr):
                return False
        return True

    def attempt(self, ordered: Iterable[_Entry], borrow: bool, spent: set[str] | None = None) -> list[Candidate]:
        """Candidates taken in order until the request fits, then every one it still fits without given back (from
        the second-to-last taken to the first); empty when it never fits. The tree is left as it was. ``spent``
        (the fast path's; None: every candidate looked at): where to note the other ClusterQueues found within their
        nominal quota (or below a Cohort that is): they stay so while candidates are taken (usage only goes down), so
        their other candidates are passed over."""
        tree = self.tree
        taken: list[Candidate] = []
        try:
            for c, k, top in ordered:
                if spent is not None and c.queue in spent:
                    continue
                if not self._valid(c, k, top, borrow):
                    if spent is not None and c.queue != self.preemptor and not (borrow and k == _WITHOUT_BORROWING):
                        spent.add(c.queue)
                    continue
                tree.add_usage(c.queue, c.usage, -1)
                taken.append(c)
                if self._fits(borrow):
                    for back in reversed(taken[:-1]):  # give back what is not needed
                        tree.add_usage(back.queue, back.usage)
                        if self._fits(borrow):
                            taken.remove(back)
                        else:
                            tree.add_usage(back.queue, back.usage, -1)
                    return list(taken)
            return []
        finally:
            for c in taken:
                tree.add_usage(c.queue, c.usage)
