"""Volcano's ``capacity`` plugin: elastic queues with deserved / capability / guarantee, flat or hierarchical
(seed 004; volcano.md section 3; Volcano ``pkg/scheduler/plugins/capacity/capacity.go``).

Semantics: ``capability`` is the hard maximum, ``deserved`` the entitlement a queue may lend and reclaim,
``guarantee`` a floor that is never reclaimed. Unlike proportion, deserved is given per resource by the admin.
Queues *borrow* idle resources up to their real capability (allocatable checks realCapability, not deserved);
the reclaim action takes the excess back. This module is the policy's book (``CapacityResult``: the gates, the
reclaim decisions, the lending limits' checks); the values it gates with are computed in ``engine.fairshare.deserved``
and the queue order in ``engine.fairshare.queue_order``. The whole rule, as the modes below state it:

Flat mode (``hierarchy=False``)
-------------------------------
* Only queues with jobs take part (others are reported with ``participating=False``).
* ``realCapability = (total - sum of all guarantees)+ + own guarantee``, capped by capability (a resource the
  capability leaves out, or cpu/memory <= 0, is unlimited).
* ``deserved = max(min(spec.deserved, realCapability), guarantee)`` per resource.
* ``share``: a queue without deserved is *best effort* and its share is fixed at 1; otherwise the dominant
  ``allocated / deserved``. Queue order: priority desc, share asc, and on a tie a queue with deserved first.

Hierarchical mode (``hierarchy=True``)
--------------------------------------
* Every queue gets values (not only those with jobs). A queue's parent is ``spec.parent`` (empty: ``root``); if
  no ``root`` queue is given an unlimited one is assumed, as the scheduler cache creates it.
* Root's capability is its spec, a resource it leaves out being unlimited, and ``realCapability = capability``:
  the root is not limited by the current cluster size. A child that leaves a resource out of its capability
  (or sets cpu/memory <= 0) inherits its parent's value.
* Top down, for the children of each node: ``deserved = max(spec.deserved, guarantee)``;
  ``realCapability = min((node.realCapability - sum of the children's guarantees)+ + own guarantee,
  capability)``; root's deserved and guarantee are the sums over its children.
* Only leaves hold jobs; allocated, request, inqueue and elastic roll up to every ancestor (and so do
  ``on_allocate`` / ``on_deallocate`` / ``on_enqueued``).
* Queue order: priority desc; leaves before inner queues; two inner queues by share; two leaves by comparing
  the two children of their lowest common ancestor that lie on their paths (share, then has-deserved), and
  only those: a tie there is a tie (``engine.fairshare.queue_order``, the rule's home).
* Victim queue order: victims from the queue sharing the *deepest* common ancestor with the preemptor come
  first (siblings before cousins before distant queues).
* ``allocatable`` and ``enqueueable`` check the leaf and then every ancestor up to root.
* Consistency: a cycle, a missing parent, a job in a queue that has children, children whose deserved or
  guarantee add up to more than their parent's (a resource the parent leaves out counts as 0), or a child
  capability above its parent's are listed in ``problems``; then ``ready_to_schedule`` is False and every
  gate refuses. (Volcano refuses for the first three and only logs the last two; the design of seed 004 asks
  that the session not schedule on an inconsistent tree, which is what happens here.)

Gates (both modes)
------------------
* ``allocatable(q, req)``: Open; (leaf); ``allocated + req <= realCapability`` on the request's resources,
  strictly, for the queue and (hierarchy) every ancestor.
* ``enqueueable(job)``: (leaf); Open; no minResources: admitted; else ``minResources + allocated + inqueue -
  elastic <= realCapability`` on minResources' resources, for the queue and (hierarchy) every ancestor.
* ``preemptive(q, req)`` (may the queue reclaim?): Open; ``allocated + req <= realCapability`` for the queue
  itself (only the leaf, as in Volcano: checking the ancestors too would forbid every reclaim between two
  siblings of a full parent); and *some* requested resource would stay within deserved
  (``LessEqualPartlyWithDimensionZeroFiltered``). With ``ancestor_reclaim_level = L > 0`` in a hierarchy, if
  the leaf fails the deserved test its ancestors at depth 1..L (root excluded) may pass it instead.
* ``reclaimable(reclaimer, reclaimees)``: in the order given (the session sorts by victim order), with running
  copies of the victims' queues' allocated: skip a task sharing no resource with the reclaimer; skip it if its
  queue would drop below its guarantee; accept it if it is an *immediate* victim (it uses nothing its queue
  deserves) or its queue is *exceeding* (allocated > deserved on a resource the task uses and deserved
  defines). With ``ancestor_reclaim_level = L > 0``: an immediate victim under a shared non-root ancestor
  (within L levels) is spared when the reclaimer's own leaf deserves nothing of what it asks; and for each
  level 1..L where the victim's ancestor is not root and differs from the reclaimer's, that ancestor must be
  immediate or exceeding as well.
* ``overused`` is not registered by capacity: always False.

Lending limits at every depth (Kueue's rule, ``pkg/cache/scheduler/resource_node.go``: a node keeps
``localQuota = max(0, subtreeQuota - lendingLimit)`` for its subtree and a cohort's pool takes from each child only what
the child may lend, so what a queue keeps never reaches any ancestor): each queue's subtree *withholds*, per resource,
``max(keep, sum of its children's withheld)`` (``keep = (deserved - lendingLimit)+``, the deserved of a queue being
the nominal quota of its subtree); the withheld amount replaces the guarantee in the realCapability formula of its
parent's children, and what a subtree withholds and does not use now (``unused_reserves``: each keeper's own part
less the use its subtree puts on it, Kueue's usage that does not reach the parent) comes off every ancestor's room for
an allocation or admission off its path (check ``lendingLimit``). ``tests/unit/test_kueue_lending_depth.py`` holds the
gates to Kueue's arithmetic on random trees.

Borrowing and lending limits (see ``queues``): a reclaimer whose queue is short of its lending-limit reserve may also
take tasks of a queue that holds more than its realCapability on what the task uses, though that queue is within its
deserved (the reserve was lent before the limit was set); and it takes from such queues *first* (the victim queue
order, flat or hierarchical, puts them before every other queue: a lender reclaims what it lent beyond its limit
first). In a hierarchy a queue is short too where an ancestor's own reserve (a cohort's lending limit) is unused.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from engine.amounts import (
    IGNORED_SCALARS,
    ZERO,
    add_into,
    greater_partly_with_relevant_dimensions,
    insufficient_resources,
    intersection,
    is_empty,
    less_equal,
    less_equal_partly_with_dimension_zero_filtered,
    raw,
)
from engine.fairshare.queue_order import QueueOrderKey, Step, capacity_order_key, order_step, victim_order
from engine.fairshare.queues import MINUS, JobUsage, QueueAccount, QueueBook, decompose, fmt
from engine.fairshare.verdicts import ALLOWED, Refusal, TaskLike, Verdict, VictimSelection, refuse
from engine.fairshare.verdicts import T as _T
from engine.objects import ROOT_QUEUE
from engine.resources import is_unlimited

__all__ = ["CapacityResult"]


# whether a reclaimee may be evicted (None) or why not, given the running allocated of the queues
_Decide = Callable[[TaskLike, dict[str, dict[str, int]]], str | None]


class CapacityResult(QueueBook):
    """``result[name] -> QueueQuota`` plus the capacity plugin's gates (see the module docstring)."""

    policy = "capacity"

    def __init__(
        self,
        states: dict[str, QueueAccount],
        total: Mapping[str, int],
        resources: tuple[str, ...],
        *,
        hierarchy: bool,
        ancestor_reclaim_level: int = 0,
        problems: Sequence[str] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        super().__init__(states, total, resources, hierarchy=hierarchy, problems=problems, warnings=warnings)
        self.ancestor_reclaim_level = max(0, ancestor_reclaim_level)
        # the queues whose subtree keeps something by a lending limit, by name (a session's copy of the book has
        # accounts of its own); in a hierarchy their ancestors are among them, so a reserve counts at every level
        self._keepers = tuple(sorted(name for name, st in states.items() if st.withheld))
        self._keeper_parents = frozenset(states[k].parent for k in self._keepers)  # hierarchy: where reserves sit
        self._empty_deserved: dict[str, tuple[Mapping[str, int], bool]] = {}  # ``_best_effort``'s answers

    # -- structure ---------------------------------------------------------------------------------------------
    def is_leaf(self, queue: str) -> bool:
        return not self._states[queue].children

    def ancestors(self, queue: str) -> tuple[str, ...]:
        """Root first, not including the queue (empty in flat mode)."""
        return self._states[queue].ancestors

    def _sibling_sets(self) -> list[tuple[list[QueueAccount], Mapping[str, int]]]:
        if not self.hierarchy:
            return super()._sibling_sets()
        out: list[tuple[list[QueueAccount], Mapping[str, int]]] = []
        for st in self._states.values():
            if st.children:
                pool = raw(self.total) if st.name == ROOT_QUEUE else st.deserved
                out.append(([self._states[c] for c in st.children], pool))
        return out

    # -- shares and order ----------------------------------------------------------------------------------------
    def _best_effort(self, st: QueueAccount) -> bool:
        """Whether the queue deserves nothing (``is_empty``), kept with the deserved dict it was found for: a share
        moves at every allocation, its deserved is fixed once the book is computed (a new dict otherwise)."""
        deserved = st.deserved
        kept = self._empty_deserved.get(st.name)
        if kept is not None and kept[0] is deserved:
            return kept[1]
        empty = is_empty(deserved)
        self._empty_deserved[st.name] = (deserved, empty)
        return empty

    def __deepcopy__(self, memo: dict[int, Any]) -> CapacityResult:
        clone = super().__deepcopy__(memo)
        assert isinstance(clone, CapacityResult)
        clone._empty_deserved = {}  # (the copy's accounts have dicts of their own)
        return clone

    def queue_order_key(self, name: str) -> QueueOrderKey:
        """Volcano's QueueOrderFn as a sort key, taken from the current shares (``queue_order.capacity_order_key``).

        Kept until a share moves (``_update_share`` drops every kept key: an ancestor's share is part of its leaves'
        keys) or the past-usage ratios are replaced; what else a key reads (priority, deserved, the tree) is fixed
        once the book is computed."""
        if self._steps_ratios is not self.past_ratios:
            self._steps, self._keys = {}, {}
            self._steps_ratios = self.past_ratios
        found: QueueOrderKey | None = self._keys.get(name)
        if found is not None:
            return found
        st = self._states.get(name)
        path: tuple[QueueAccount, ...] = ()
        if st is not None and self.hierarchy and not st.children:
            path = (*(self._states[a] for a in st.ancestors[1:]), st)
        found = capacity_order_key(st, path, hierarchy=self.hierarchy, past_ratio=self.past_ratio, step=self._step)
        self._keys[name] = found
        return found

    def _step(self, st: QueueAccount) -> Step:
        """``st``'s step of a queue order key (``queue_order.order_step``), kept until its share moves
        (``_update_share`` drops it); the deserved it reads is fixed once the book is computed (its share is set
        after it)."""
        found = self._steps.get(st.name)
        if found is None:
            found = self._steps[st.name] = order_step(st, self.past_ratio)
        return found

    def compare_queues(self, left: str, right: str) -> int:
        lk, rk = self.queue_order_key(left), self.queue_order_key(right)
        if lk < rk:
            return -1
        return 1 if rk < lk else 0

    def victim_queue_order(self, preemptor: str, left: str, right: str) -> int:
        """Volcano's VictimQueueOrderFn for capacity (``queue_order.victim_order``)."""
        states = self._states
        return victim_order(
            states[preemptor],
            states[left],
            states[right],
            hierarchy=self.hierarchy,
            beyond=self._beyond_reserve(preemptor),
        )

    def _beyond_reserve(self, preemptor: str) -> Callable[[str], bool] | None:
        """When ``preemptor``'s queue is short of its lending-limit reserve: whether a queue holds more than its
        realCapability on a resource it is short of (None when it is not short, or has no reserve)."""
        short = self._short_of_reserve(preemptor)
        if not short:
            return None
        states = self._states

        def beyond(queue: str) -> bool:
            st = states[queue]
            return any(st.allocated.get(r, 0) > st.real_capability.get(r, 0) for r in short)

        return beyond

    # -- what lending limits keep, now ------------------------------------------------------------------------------
    def _held(self, st: QueueAccount, unused: dict[str, list[tuple[str, int]]]) -> dict[str, int]:
        """Per resource, how much of its subtree's use the lending-limit reserves in it hold (Kueue's usage that does
        not reach the parent): ``min(children's + own reserve part, allocated)``, its own part being what its own
        lending limit keeps beyond its children's reserves (Kueue's ``localQuota``). Each reserve its subtree leaves
        unused is added to ``unused`` as ``(holder, amount)``."""
        below: dict[str, int] = {}
        kids_withheld: dict[str, int] = {}
        for c in st.children:
            child = self._states[c]
            if child.withheld:
                add_into(below, self._held(child, unused))
                add_into(kids_withheld, child.withheld)
        out: dict[str, int] = {}
        for r, w in st.withheld.items():
            own = w - kids_withheld.get(r, 0)
            held_below = below.get(r, 0)
            out[r] = min(held_below + own, st.allocated.get(r, 0))
            left = own - (out[r] - held_below)
            if left > 0:
                unused.setdefault(r, []).append((st.name, left))
        return out

    def unused_reserves(self, name: str) -> dict[str, list[tuple[str, int]]]:
        """Per resource, the queues of ``name``'s subtree (itself included) whose lending limit keeps something the
        subtree does not use now, and how much; what they add up to is kept from every queue outside the subtree."""
        st = self._states[name]
        unused: dict[str, list[tuple[str, int]]] = {}
        if st.withheld:
            self._held(st, unused)
        return unused

    def unused_withheld(self, name: str) -> dict[str, int]:
        """Per resource, what the lending limits in ``name``'s subtree keep from the rest of the tree and the subtree
        does not use now (a leaf: ``(keep - allocated)+``)."""
        return {r: sum(a for _, a in holders) for r, holders in self.unused_reserves(name).items()}

    def unused_kept(self, members: Iterable[QueueAccount]) -> dict[str, dict[str, int]] | None:
        if not self.hierarchy:
            return None
        return {m.name: self.unused_withheld(m.name) for m in members if m.withheld}

    def kept_below(self, name: str) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.hierarchy:
            for c in self._states[name].children:
                add_into(out, self.unused_withheld(c))
        return out

    def _short_of_reserve(self, queue: str) -> dict[str, int]:
        """Per resource, how far ``queue`` — or, in a hierarchy, an ancestor whose lending limit keeps quota for its
        subtree — is short of its lending-limit reserve (``(keep - what the subtree uses of it)+``, the reserve it
        may take back)."""
        st = self._states.get(queue)
        if st is None or not self._keepers or (not st.keep and not self.hierarchy):
            return {}
        if not self.hierarchy:
            return {r: k - st.allocated.get(r, 0) for r, k in st.keep.items() if k > st.allocated.get(r, 0)}
        out: dict[str, int] = {}
        for node in self.chain(queue):
            if not node.keep or node.name == ROOT_QUEUE:
                continue
            for r, holders in self.unused_reserves(node.name).items():
                own = sum(a for holder, a in holders if holder == node.name)
                if own > 0:
                    out[r] = out.get(r, 0) + own
        return out

    def sorted_victim_queues(self, preemptor: str, queues: Sequence[str]) -> list[str]:
        """``queues`` in victim order for ``preemptor`` (ties by name)."""

        def order(left: str, right: str) -> int:
            return self.victim_queue_order(preemptor, left, right)

        return sorted(sorted(queues), key=functools.cmp_to_key(order))

    # -- gates ----------------------------------------------------------------------------------------------------
    def overused(self, queue: str) -> bool:
        """Capacity registers no Overused function: never overused."""
        return False

    def _not_ready(self, queue: str) -> Refusal:
        first = self.problems[0] if self.problems else ""
        return Refusal(queue, "hierarchy", message=f"queue tree is inconsistent ({first}); nothing is scheduled")

    def _allocation_limits(self, st: QueueAccount) -> Sequence[tuple[QueueAccount, Mapping[str, int]]] | None:
        if not st.is_open or not self.ready_to_schedule or (self.hierarchy and st.children):
            return None
        limits: list[tuple[QueueAccount, Mapping[str, int]]] = [
            (node, node.real_capability) for node in self.chain(st.name)
        ]
        if self._keepers:
            limits.extend((node, limit) for node, limit, _, _ in self._reserve_checks(st))
        return limits

    # -- lending limits -------------------------------------------------------------------------------------------
    def _reserve_checks(
        self, st: QueueAccount
    ) -> list[tuple[QueueAccount, dict[str, int], str, dict[str, list[tuple[str, int]]]]]:
        """The checks lending limits add for an allocation in ``st``: what other queues keep by their lending limit
        and do not use, ``(keep - allocated)+``, is not available to ``st``. In a hierarchy, at each ancestor, for
        the reserves in its subtree off ``st``'s path (in the subtrees of the path's siblings at that level and
        below: a cousin's reserve counts as a sibling's); flat, for every other queue against the cluster.

        Each check is ``(node, limit, label, kept)``: the node whose ``allocated + request`` is compared, its
        realCapability (or the cluster total) less the reserves, the label of that amount, and the reserves per
        resource by holder. Empty when no queue has a lending-limit reserve (every number is Volcano's then)."""
        if not self._keepers:
            return []
        out: list[tuple[QueueAccount, dict[str, int], str, dict[str, list[tuple[str, int]]]]] = []
        if self.hierarchy:
            # at each ancestor, every reserve of its subtree off the path counts: a sibling's, and a cousin's below
            kept: dict[str, list[tuple[str, int]]] = {}
            for below, node in itertools.pairwise(self.chain(st.name)):
                if node.name in self._keeper_parents:
                    more = self._unused_reserves_of(c for c in node.children if c != below.name)
                    if more:
                        kept = {r: sorted([*kept.get(r, []), *more.get(r, [])]) for r in {*kept, *more}}
                if kept:
                    out.append((node, _less_kept(node.real_capability, kept), "realCapability", kept))
            return out
        kept = _unused_reserves(self._states[k] for k in self._keepers if k != st.name)
        if not kept:
            return []
        cluster = QueueAccount(spec=st.spec)
        for other in self._states.values():
            add_into(cluster.allocated, other.allocated)
            add_into(cluster.inqueue, other.inqueue)
            add_into(cluster.elastic, other.elastic)
        out.append((cluster, _less_kept(raw(self.total), kept), "cluster", kept))
        return out

    def _unused_reserves_of(self, names: Iterable[str]) -> dict[str, list[tuple[str, int]]]:
        """Per resource, the queues in the subtrees of ``names`` whose lending limit keeps something unused, and how
        much (``unused_reserves``), by name."""
        out: dict[str, list[tuple[str, int]]] = {}
        for name in sorted(names):
            for r, holders in self.unused_reserves(name).items():
                out.setdefault(r, []).extend(holders)
        for holders in out.values():
            holders.sort()
        return out

    def _reserve_refusals(
        self, st: QueueAccount, request: Mapping[str, int], *, reserved: bool = False
    ) -> list[Refusal]:
        """Refusals of ``_reserve_checks``, each saying whose lending limit keeps what (check ``lendingLimit``)."""
        for node, limit, label, kept in self._reserve_checks(st):
            base = dict(node.allocated)
            if reserved:
                add_into(base, node.inqueue)
                add_into(base, node.elastic, -1)
            used = dict(base)
            add_into(used, request)
            out = []
            rr = raw(request)
            for r in insufficient_resources(used, limit, request):
                whole = (raw(self.total) if label == "cluster" else node.real_capability).get(r, 0)
                available = max(0, limit.get(r, 0) - base.get(r, 0))
                parts = [f"{fmt(whole, r)} {label}"]
                for amount, word in (
                    (node.allocated.get(r, 0), "allocated"),
                    (node.inqueue.get(r, 0) if reserved else 0, "reserved"),
                ):
                    if amount:
                        parts.append(f"{MINUS} {fmt(amount, r)} {word}")
                if reserved and node.elastic.get(r, 0):
                    parts.append(f"+ {fmt(node.elastic[r], r)} elastic")
                holders = kept.get(r, [])
                for holder, amount in holders[:3]:
                    parts.append(f"{MINUS} {fmt(amount, r)} kept for {holder} by its lending limit")
                if len(holders) > 3:
                    rest = sum(a for _, a in holders[3:])
                    parts.append(
                        f"{MINUS} {fmt(rest, r)} kept for {len(holders) - 3} more queues by their lending limits"
                    )
                text = " ".join(parts)
                if whole - base.get(r, 0) - sum(a for _, a in holders) < 0:
                    text = f"max(0, {text})"
                name = node.name if self.hierarchy else st.name
                out.append(Refusal(name, "lendingLimit", r, rr.get(r, 0), available, breakdown=text))
            if out:
                return out
        return []

    def allocatable(self, queue: str, request: Mapping[str, int]) -> Verdict:
        """May a task with this request be allocated in ``queue``? (``allocated + req <= realCapability``)"""
        found = self._lookup(queue)
        if not isinstance(found, QueueAccount):
            return refuse(found)
        if not found.is_open:
            return refuse(self._closed(found))
        if not self.ready_to_schedule:
            return refuse(self._not_ready(queue))
        if self.hierarchy and found.children:
            return refuse(Refusal(queue, "leaf", message="only leaf queues hold jobs"))
        for node in self.chain(found.name):
            reasons = self._quota_refusals(
                node.name, "realCapability", node.allocated, node.real_capability, request, node
            )
            if reasons:
                return refuse(*reasons)
        reasons = self._reserve_refusals(found, request)
        return refuse(*reasons) if reasons else ALLOWED

    def enqueueable(self, job: JobUsage) -> Verdict:
        """May this job leave Pending? (``minResources + allocated + inqueue - elastic <= realCapability``)"""
        found = self._lookup(job.queue)
        if not isinstance(found, QueueAccount):
            return refuse(found)
        if not self.ready_to_schedule:
            return refuse(self._not_ready(job.queue))
        if self.hierarchy and found.children:
            return refuse(Refusal(job.queue, "leaf", message="only leaf queues hold jobs"))
        if not found.is_open:
            return refuse(self._closed(found))
        if job.min_resources is None:
            return ALLOWED
        chain = self.chain(found.name)
        if not _reservation_fits(chain, job.min_resources):  # the refusals' words only when one refuses
            for node in chain:
                base = dict(node.allocated)
                add_into(base, node.inqueue)
                add_into(base, node.elastic, -1)
                reasons = self._quota_refusals(
                    node.name, "realCapability", base, node.real_capability, job.min_resources, node, reserved=True
                )
                if reasons:
                    return refuse(*reasons)
        reasons = self._reserve_refusals(found, job.min_resources, reserved=True)
        return refuse(*reasons) if reasons else ALLOWED

    def preemptive(self, queue: str, request: Mapping[str, int]) -> Verdict:
        """May ``queue`` reclaim for tasks with this total request?"""
        found = self._lookup(queue)
        if not isinstance(found, QueueAccount):
            return refuse(found)
        if not self.ready_to_schedule:
            return refuse(self._not_ready(queue))
        if not found.is_open:
            return refuse(self._closed(found))
        reasons = self._quota_refusals(queue, "realCapability", found.allocated, found.real_capability, request, found)
        if reasons:
            return refuse(*reasons)
        future = dict(found.allocated)
        add_into(future, request)
        ok, _ = less_equal_partly_with_dimension_zero_filtered(future, found.deserved, request)
        if ok:
            return ALLOWED
        if self.hierarchy and self.ancestor_reclaim_level > 0:
            for level in range(1, self.ancestor_reclaim_level + 1):
                if len(found.ancestors) < level:
                    continue
                ancestor = self._states[found.ancestors[-level]]
                if ancestor.name == ROOT_QUEUE:
                    continue
                future_ancestor = dict(ancestor.allocated)
                add_into(future_ancestor, request)
                ok, _ = less_equal_partly_with_dimension_zero_filtered(future_ancestor, ancestor.deserved, request)
                if ok:
                    return ALLOWED
        rr = raw(request)
        refusals = [
            Refusal(
                queue,
                "deserved",
                r,
                rr[r],
                max(0, found.deserved.get(r, 0) - found.allocated.get(r, 0)),
                breakdown=decompose(found, "deserved", found.deserved.get(r, 0), r, reserved=False),
            )
            for r in sorted(rr)
            if rr[r] > 0 and r != "pods"
        ]
        return refuse(*refusals)

    def _ancestor_to_check(self, reclaimer: QueueAccount, victim: QueueAccount, level: int) -> tuple[str | None, bool]:
        """Volcano ``getReclaimeeAncestorToCheck``: the victim's ancestor ``level`` steps up, if it is not root and
        differs from the reclaimer's ancestor at that level."""
        if len(victim.ancestors) < level:
            return None, False
        victim_ancestor = victim.ancestors[-level]
        if victim_ancestor == ROOT_QUEUE:
            return None, False
        if len(reclaimer.ancestors) >= level and reclaimer.ancestors[-level] == victim_ancestor:
            return None, False
        return victim_ancestor, True

    def _shares_non_root_ancestor(self, a: QueueAccount, b: QueueAccount) -> bool:
        depth = self.ancestor_reclaim_level
        sa = {x for x in a.ancestors[-depth:] if x != ROOT_QUEUE} if depth else set()
        sb = set(b.ancestors[-depth:]) if depth else set()
        return bool(sa & sb)

    def reclaimable(self, reclaimer: TaskLike, reclaimees: Sequence[_T]) -> VictimSelection[_T]:
        """Which of ``reclaimees`` (in the order given) may be evicted for ``reclaimer``."""
        if not self.ready_to_schedule:
            return VictimSelection(
                (), tuple((t, "queue tree is inconsistent") for t in reclaimees), self._not_ready(reclaimer.queue)
            )
        rst = self._states.get(reclaimer.queue)
        if rst is None:
            refusal = Refusal(reclaimer.queue, "unknown", message="no such queue in this computation")
            return VictimSelection((), tuple((t, str(refusal)) for t in reclaimees), refusal)
        return self._selection(reclaimer, reclaimees, self._reclaim_decision(reclaimer, rst))

    def _reclaim_decision(self, reclaimer: TaskLike, rst: QueueAccount) -> _Decide:
        """The test ``_selection`` puts each reclaimee to: None when the task may be evicted for ``reclaimer``
        (whose queue is ``rst``), and its request is then taken off the running allocated of its queue and of the
        ancestors checked; otherwise why not."""
        level_limit = self.ancestor_reclaim_level if self.hierarchy else 0
        short = self._short_of_reserve(rst.name)

        def decide(task: TaskLike, allocations: dict[str, dict[str, int]]) -> str | None:
            st = self._states[task.queue]
            if not intersection(task.request, reclaimer.request, ignore_pods=True):
                return "shares no resource with the reclaimer"
            allocated = allocations.get(task.queue)
            if allocated is None:
                allocated = allocations[task.queue] = dict(st.allocated)
            remaining = dict(allocated)
            add_into(remaining, task.request, -1)
            if not less_equal(st.guarantee, remaining, ZERO):
                return f"queue {task.queue} would drop below its guarantee"
            if not intersection(task.request, st.deserved):
                # immediate victim: its queue deserves nothing of what it uses
                if (
                    level_limit > 0
                    and self._shares_non_root_ancestor(rst, st)
                    and not intersection(reclaimer.request, rst.deserved)
                ):
                    return "no real contention under a shared ancestor (neither leaf deserves what is asked)"
            else:
                exceeds, _ = greater_partly_with_relevant_dimensions(allocated, st.deserved, task.request)
                if not exceeds and not _holds_reserve(short, st, allocated, task.request):
                    return f"queue {task.queue} is not above its deserved on what the task uses"
            checked: list[dict[str, int]] = []
            for level in range(1, level_limit + 1):
                ancestor_name, need = self._ancestor_to_check(rst, st, level)
                if not need or ancestor_name is None:
                    continue
                ancestor = self._states[ancestor_name]
                ancestor_allocated = allocations.get(ancestor_name)
                if ancestor_allocated is None:
                    ancestor_allocated = allocations[ancestor_name] = dict(ancestor.allocated)
                checked.append(ancestor_allocated)
                if not intersection(task.request, ancestor.deserved):
                    continue
                exceeds, _ = greater_partly_with_relevant_dimensions(
                    ancestor_allocated, ancestor.deserved, task.request
                )
                if not exceeds:
                    return f"ancestor {ancestor_name} is not above its deserved on what the task uses"
            add_into(allocated, task.request, -1)
            for ancestor_allocated in checked:
                add_into(ancestor_allocated, task.request, -1)
            return None

        return decide


def _holds_reserve(
    short: Mapping[str, int], st: QueueAccount, allocated: Mapping[str, int], request: Mapping[str, int]
) -> bool:
    """The reclaimer's queue is ``short`` of its lending-limit reserve on a resource the task uses, and the task's
    queue holds more than its realCapability there: what it holds beyond is the lender's own."""
    return any(
        r in short and allocated.get(r, 0) > st.real_capability.get(r, 0) for r, v in raw(request).items() if v > 0
    )


def _unused_reserves(queues: Iterable[QueueAccount]) -> dict[str, list[tuple[str, int]]]:
    """Per resource, the queues whose lending-limit reserve is not used up, and by how much: ``(keep -
    allocated)+`` (a reserve below the guarantee counts too: the guarantee itself is Volcano's, checked statically)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for q in sorted(queues, key=lambda q: q.name):
        for r, k in q.keep.items():
            left = k - q.allocated.get(r, 0)
            if left > 0:
                out.setdefault(r, []).append((q.name, left))
    return out


def _less_kept(limit: Mapping[str, int], kept: Mapping[str, list[tuple[str, int]]]) -> dict[str, int]:
    out = dict(raw(limit))
    for r, holders in kept.items():
        if r in out and not is_unlimited(out[r]):
            out[r] = max(0, out[r] - sum(a for _, a in holders))
    return out


def _reservation_fits(chain: Sequence[QueueAccount], request: Mapping[str, int]) -> bool:
    """``allocated + inqueue - elastic + request <= realCapability`` on every resource the request asks for (> 0,
    ``pods`` aside; a limit it does not name reads as 0), for every node of ``chain``: what ``enqueueable``'s
    ``_quota_refusals`` finds nothing against, tested without building the sums or the refusals."""
    asked = [(r, v) for r, v in raw(request).items() if v > 0 and r not in IGNORED_SCALARS]
    for node in chain:
        allocated, inqueue, elastic, limit = node.allocated, node.inqueue, node.elastic, node.real_capability
        for r, v in asked:
            if allocated.get(r, 0) + inqueue.get(r, 0) - elastic.get(r, 0) + v > limit.get(r, 0):
                return False
    return True
