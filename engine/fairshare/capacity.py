"""Volcano's ``capacity`` plugin: elastic queues with deserved / capability / guarantee, flat or hierarchical
(seed 004; volcano.md section 3; Volcano ``pkg/scheduler/plugins/capacity/capacity.go``).

Semantics: ``capability`` is the hard maximum, ``deserved`` the entitlement a queue may lend and reclaim,
``guarantee`` a floor that is never reclaimed. Unlike proportion, deserved is given per resource by the admin.
Queues *borrow* idle resources up to their real capability (allocatable checks realCapability, not deserved);
the reclaim action takes the excess back.

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
  only those: a tie there is a tie (``QueueOrderKey``, which the session's capacity plugin uses too).
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

Borrowing and lending limits (see ``queues``): a reclaimer whose queue is short of its lending-limit reserve may also
take tasks of a queue that holds more than its realCapability on what the task uses, though that queue is within its
deserved (the reserve was lent before the limit was set); and it takes from such queues *first* (the victim queue
order, flat or hierarchical, puts them before every other queue: a lender reclaims what it lent beyond its limit
first).
"""

from __future__ import annotations

import functools
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from engine.fairshare.queues import (
    ALLOWED,
    MINUS,
    ROOT_QUEUE,
    STANDARD_RESOURCES,
    ZERO,
    JobSummary,
    JobUsage,
    QueueAccount,
    QueueBook,
    QueueSpec,
    Refusal,
    TaskLike,
    Verdict,
    VictimSelection,
    add_into,
    apply_jobs,
    cap_by_borrowing,
    collect_resources,
    decompose,
    fmt,
    greater_partly_with_relevant_dimensions,
    index_specs,
    insufficient_resources,
    intersection,
    is_empty,
    less_equal,
    less_equal_partly_with_dimension_zero_filtered,
    note_kept_off,
    raw,
    refuse,
    reserve_of,
    set_flat_limits,
    set_keep,
    total_reserve,
    unknown_queue_warnings,
)
from engine.fairshare.queues import T as _T
from engine.resources import UNLIMITED, ResourceList, is_unlimited

__all__ = ["CapacityResult", "QueueOrderKey", "compute_capacity"]


class QueueOrderKey:
    """The capacity plugin's queue order as a sort key (Volcano ``plugins/capacity``, QueueOrderFn).

    ``head`` is compared first: the negated queue priority and, in a hierarchy, 0 for a leaf and 1 for an inner
    queue. Then the two paths of ``(queue, share, best effort)`` steps are compared at the first step where
    they name different queues, by lower share and then by a queue with a deserved before a best-effort one;
    nothing after that step counts. Two keys that tie there are equal, as Volcano's comparison returns 0
    (the session then orders such queues by name).

    Built from the shares of one moment: a key taken before an allocation does not follow it.
    """

    __slots__ = ("head", "path")

    def __init__(self, head: tuple[int, ...], path: tuple[tuple[str, float, int, float], ...]) -> None:
        self.head = head
        self.path = path

    def _parting(self, other: QueueOrderKey) -> tuple[tuple[float, int, float], tuple[float, int, float]] | None:
        """The (share, best effort, past-usage ratio) of both paths at the first step naming different queues, if any."""
        for mine, theirs in zip(self.path, other.path, strict=False):
            if mine[0] != theirs[0]:
                return mine[1:], theirs[1:]
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueueOrderKey):
            return NotImplemented
        if self.head != other.head:
            return False
        parting = self._parting(other)
        return parting is None or parting[0] == parting[1]

    def __lt__(self, other: QueueOrderKey) -> bool:
        if self.head != other.head:
            return self.head < other.head
        parting = self._parting(other)
        return parting is not None and parting[0] < parting[1]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"QueueOrderKey({self.head!r}, {self.path!r})"


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
        # the queues with a lending-limit reserve, by name (a session's copy of the book has accounts of its own)
        self._keepers = tuple(sorted(name for name, st in states.items() if st.keep))
        self._keeper_parents = frozenset(states[k].parent for k in self._keepers)  # hierarchy: where reserves sit

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
        return is_empty(st.deserved)

    @staticmethod
    def _common_level(a: QueueAccount, b: QueueAccount) -> int:
        """Volcano's ``getQueueLevel``: the index (in the root-first ancestor lists) of the deepest common
        ancestor; compares ancestors only, not the queues themselves."""
        level = 0
        for i in range(min(len(a.ancestors), len(b.ancestors))):
            if a.ancestors[i] != b.ancestors[i]:
                return level
            level = i
        return level

    def _share_step(self, st: QueueAccount) -> tuple[str, float, int, float]:
        # the last element: fairness over time's clamped past-usage ratio (1.0 when off), less past usage first
        return (st.name, st.share, 1 if is_empty(st.deserved) else 0, float(self.past_ratio(st.name)))

    def queue_order_key(self, name: str) -> QueueOrderKey:
        """Volcano's QueueOrderFn as a sort key, taken from the current shares (see ``QueueOrderKey``).

        Flat, and for an inner queue of a hierarchy, the path is the queue alone; for a leaf of a hierarchy it
        runs from the level below root down to the leaf, so two leaves are compared through the children of
        their lowest common ancestor that lie on their paths.
        """
        st = self._states.get(name)
        if st is None:
            return QueueOrderKey((0,), ())
        if not self.hierarchy:
            return QueueOrderKey((-st.spec.priority,), (self._share_step(st),))
        if st.children:
            return QueueOrderKey((-st.spec.priority, 1), (self._share_step(st),))
        path = [self._states[a] for a in st.ancestors[1:]]
        path.append(st)
        return QueueOrderKey((-st.spec.priority, 0), tuple(self._share_step(s) for s in path))

    def compare_queues(self, left: str, right: str) -> int:
        lk, rk = self.queue_order_key(left), self.queue_order_key(right)
        if lk < rk:
            return -1
        return 1 if rk < lk else 0

    def victim_queue_order(self, preemptor: str, left: str, right: str) -> int:
        """A lender short of its lending-limit reserve takes back first from the queues holding more than their
        realCapability on a resource it is short of (what they hold beyond it is the part lent beyond the limit);
        then, in a hierarchy, victims whose queue shares the deeper common ancestor with ``preemptor`` first."""
        beyond = self._beyond_reserve(preemptor)
        if beyond is not None:
            lb, rb = beyond(left), beyond(right)
            if lb != rb:
                return -1 if lb else 1
        if not self.hierarchy:
            return 0
        p = self._states[preemptor]
        llevel = self._common_level(self._states[left], p)
        rlevel = self._common_level(self._states[right], p)
        if llevel == rlevel:
            return 0
        return -1 if llevel > rlevel else 1

    def _beyond_reserve(self, preemptor: str) -> Callable[[str], bool] | None:
        """When ``preemptor``'s queue is short of its lending-limit reserve: whether a queue holds more than its
        realCapability on a resource it is short of (None when it is not short, or has no reserve)."""
        p = self._states.get(preemptor)
        if p is None or not p.keep:
            return None
        short = [r for r, k in p.keep.items() if k > p.allocated.get(r, 0)]
        if not short:
            return None
        states = self._states

        def beyond(queue: str) -> bool:
            st = states[queue]
            return any(st.allocated.get(r, 0) > st.real_capability.get(r, 0) for r in short)

        return beyond

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
        the reserves of the siblings of the path's child; flat, for every other queue against the cluster.

        Each check is ``(node, limit, label, kept)``: the node whose ``allocated + request`` is compared, its
        realCapability (or the cluster total) less the reserves, the label of that amount, and the reserves per
        resource by holder. Empty when no queue has a lending-limit reserve (every number is Volcano's then)."""
        if not self._keepers:
            return []
        out: list[tuple[QueueAccount, dict[str, int], str, dict[str, list[tuple[str, int]]]]] = []
        if self.hierarchy:
            chain = self.chain(st.name)
            for below, node in itertools.pairwise(chain):
                if node.name not in self._keeper_parents:
                    continue
                kept = _unused_reserves(self._states[c] for c in node.children if c != below.name)
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
        for node in self.chain(found.name):
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
        short = {r: k - rst.allocated.get(r, 0) for r, k in rst.keep.items() if k > rst.allocated.get(r, 0)}

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


# ------------------------------------------------------------------------------------------------------------
# Computation
# ------------------------------------------------------------------------------------------------------------


def _flat_deserved(st: QueueAccount) -> None:
    """``max(min(spec.deserved, realCapability), guarantee)``, keeping the keys the spec and guarantee name."""
    rc = st.real_capability
    deserved: dict[str, int] = {}
    for r, v in raw(st.spec.deserved).items():
        limit = rc.get(r, UNLIMITED)
        st.trace.append(("deserved", r, v, "des.spec", 0, (v,)))
        if v > limit:
            v = limit
            st.trace.append(("deserved", r, v, "des.capped", 0, (limit,)))
        deserved[r] = v
    _raise_to_guarantee(st, deserved)
    st.deserved = deserved


def _raise_to_guarantee(st: QueueAccount, deserved: dict[str, int], *, trace: bool = True) -> None:
    for r, g in st.guarantee.items():
        if r not in deserved or g > deserved[r]:
            if trace and g > deserved.get(r, 0):
                st.trace.append(("deserved", r, g, "des.raised", 0, (g,)))
            deserved[r] = max(g, deserved.get(r, 0))


def compute_capacity(
    queues: Sequence[QueueSpec],
    jobs: Sequence[JobUsage] | JobSummary,
    total: ResourceList,
    *,
    hierarchy: bool = False,
    ancestor_reclaim_level: int = 0,
) -> CapacityResult:
    """Compute every queue's capability, realCapability, deserved and share under Volcano's capacity policy.

    ``ancestor_reclaim_level`` is the plugin argument ``ancestorReclaimLevel`` (hierarchy only; < 0 means 0).
    ``jobs`` may be a ``summarize_jobs`` summary, to sum the jobs once for several what-ifs.
    """
    specs = index_specs(queues)
    warnings: list[str] = []
    if hierarchy and ROOT_QUEUE not in specs:
        specs[ROOT_QUEUE] = QueueSpec(name=ROOT_QUEUE, parent=None, reclaimable=False)
        warnings.append("no root queue given: an unlimited root was assumed")
    states = {name: QueueAccount(spec=spec, guarantee=dict(raw(spec.guarantee))) for name, spec in specs.items()}
    summary = apply_jobs(jobs, states)
    warnings.extend(unknown_queue_warnings(summary, states))
    resources = collect_resources(total, specs.values(), states.values())
    total_raw = raw(total)

    if not hierarchy:
        return _flat_capacity(specs, states, total_raw, resources, warnings)

    problems = _build_tree(states)
    _check_jobs_in_leaves(states, summary, problems)
    _roll_up(states)
    problems.extend(_derive_tree_values(states, resources))
    result = CapacityResult(
        states,
        total_raw,
        resources,
        hierarchy=True,
        ancestor_reclaim_level=ancestor_reclaim_level,
        problems=problems,
        warnings=warnings,
    )
    for st in states.values():
        result._update_share(st)
    return result


def _flat_capacity(
    specs: Mapping[str, QueueSpec],
    states: dict[str, QueueAccount],
    total_raw: Mapping[str, int],
    resources: tuple[str, ...],
    warnings: list[str],
) -> CapacityResult:
    """The values outside a hierarchy: each queue's limits against the guarantees of all queues (or, when some
    queue has a lending or borrowing limit, against the reserves nobody else may take), and its deserved from its
    spec."""
    nominals: dict[str, dict[str, int]] = {}
    for st in states.values():
        if st.spec.lending_limit or st.spec.borrowing_limit:
            nominal = dict(raw(st.spec.deserved))
            _raise_to_guarantee(st, nominal, trace=False)
            nominals[st.name] = nominal
            set_keep(st, nominal)
    kept = any(st.keep for st in states.values())
    total_guarantee: dict[str, int] = {}
    if kept:
        total_guarantee = total_reserve(states.values())
    else:
        for spec in specs.values():
            add_into(total_guarantee, spec.guarantee)
    if kept:
        note_kept_off(states.values())
    for st in states.values():
        set_flat_limits(st, total_raw, total_guarantee, resources, nominals.get(st.name), kept=kept)
        _flat_deserved(st)
    result = CapacityResult(states, total_raw, resources, hierarchy=False, warnings=warnings)
    for st in states.values():
        result._update_share(st)
    return result


def _build_tree(states: dict[str, QueueAccount]) -> list[str]:
    """Link parents and children; queues on a cycle or under a missing parent are detached and reported."""
    problems: list[str] = []
    parent_of: dict[str, str] = {}
    for name, st in states.items():
        if name != ROOT_QUEUE:
            parent_of[name] = st.spec.parent or ROOT_QUEUE
    status: dict[str, bool] = {ROOT_QUEUE: True}
    for name in sorted(parent_of):
        path: list[str] = []
        on_path: set[str] = set()
        cur = name
        ok = True
        while cur not in status:
            if cur in on_path:
                problems.append(f"cycle detected in queue hierarchy for queue {cur}")
                ok = False
                break
            on_path.add(cur)
            path.append(cur)
            parent = parent_of[cur]
            if parent not in states:
                problems.append(f"the queue {cur} has invalid parent queue {parent}")
                ok = False
                break
            cur = parent
        else:
            ok = status[cur]
        for q in path:
            status[q] = ok
    for name in sorted(parent_of):
        if status.get(name):
            st = states[name]
            st.parent = parent_of[name]
            states[st.parent].children.append(name)
    for st in states.values():
        st.children.sort()
        st.participating = status.get(st.name, False)
    # ancestors, root first
    queue: deque[str] = deque([ROOT_QUEUE])
    while queue:
        node = states[queue.popleft()]
        for child in node.children:
            states[child].ancestors = (*node.ancestors, node.name)
            queue.append(child)
    return problems


def _check_jobs_in_leaves(states: dict[str, QueueAccount], summary: JobSummary, problems: list[str]) -> None:
    """One problem per inner queue holding jobs, naming its first job (by namespace/name, not input order)."""
    for queue, totals in sorted(summary.totals.items()):
        st = states.get(queue)
        if st is not None and st.children:
            namespace, name = totals.first_job
            label = f"job {namespace}/{name}" if name else f"a job of namespace {namespace}"
            problems.append(f"the queue {queue} of {label} is not a leaf queue")


def _bfs(states: dict[str, QueueAccount]) -> list[QueueAccount]:
    order: list[QueueAccount] = []
    queue: deque[str] = deque([ROOT_QUEUE])
    while queue:
        node = states[queue.popleft()]
        order.append(node)
        queue.extend(node.children)
    return order


def _roll_up(states: dict[str, QueueAccount]) -> None:
    """Add every queue's totals to its parent, deepest first, so each node holds its subtree's sums."""
    for st in reversed(_bfs(states)):
        if st.parent is None:
            continue
        parent = states[st.parent]
        add_into(parent.allocated, st.allocated)
        add_into(parent.request, st.request)
        add_into(parent.inqueue, st.inqueue)
        add_into(parent.elastic, st.elastic)
        add_into(parent.reserving, st.reserving)
        parent.reserved_jobs += st.reserved_jobs
        add_into(parent.pipelined, st.pipelined)
        parent.pipelined_pods += st.pipelined_pods


def _no_capability(amount: int | None, resource: str) -> bool:
    """A capability entry that limits nothing: left out, or cpu/memory <= 0 (Volcano reads those as unset)."""
    return amount is None or (resource in STANDARD_RESOURCES and amount <= 0)


def _derive_tree_values(states: dict[str, QueueAccount], resources: tuple[str, ...]) -> list[str]:
    """Capability, deserved, guarantee and real capability of every queue, top-down from the root (detached
    queues get their own values); returns the problems found on the way, in words."""
    problems: list[str] = []
    _root_values(states[ROOT_QUEUE], resources)
    for node in _bfs(states):
        kids = [states[c] for c in node.children]
        if not kids:
            continue
        sum_deserved, sum_guarantee = _children_limits(node, kids, resources, problems)
        if node.name == ROOT_QUEUE:
            node.guarantee = dict(sum_guarantee)
            node.deserved = dict(sum_deserved)
            for r, v in sorted(sum_guarantee.items()):
                node.trace.append(("guarantee", r, v, "g.sum", 0, ()))
            for r, v in sorted(sum_deserved.items()):
                node.trace.append(("deserved", r, v, "des.sum", 0, ()))
        kept = False
        for child in kids:
            if child.spec.lending_limit:
                set_keep(child, child.deserved)
                kept = kept or bool(child.keep)
        sum_reserve = total_reserve(kids) if kept else sum_guarantee
        if kept:
            note_kept_off(kids)
        for child in kids:
            _real_capability(node, child, sum_reserve, resources, kept=kept)
        for label, own, summed in (
            ("deserved", node.deserved, sum_deserved),
            ("guarantee", node.guarantee, sum_guarantee),
        ):
            for r in sorted(summed):
                if own.get(r, 0) < summed[r]:
                    problems.append(
                        f"sum of queue {node.name}'s children's {label} {r} {fmt(summed[r], r)} exceeds its "
                        f"{label} {fmt(own.get(r, 0), r)}"
                    )
    _detached_values(states, resources)
    return problems


def _root_values(root: QueueAccount, resources: tuple[str, ...]) -> None:
    """The root's capability and real capability: its spec where set. Volcano reads an empty root capability as
    infinite but a root capability naming only cpu as memory 0, which blocks everything; here every resource the
    root leaves out (or cpu/memory <= 0) is unlimited."""
    root_cap = raw(root.spec.capability)
    cap: dict[str, int] = {}
    for r in resources:
        v = root_cap.get(r)
        if _no_capability(v, r):
            cap[r] = UNLIMITED
            root.trace.append(("capability", r, UNLIMITED, "cap.root", 0, ()))
        else:
            assert v is not None
            cap[r] = v
            root.trace.append(("capability", r, v, "cap.spec", 0, ()))
    root.capability = cap
    root.real_capability = dict(cap)
    for r in resources:
        root.trace.append(("realCapability", r, cap[r], "rc.root", 0, ()))


def _children_limits(
    node: QueueAccount, kids: list[QueueAccount], resources: tuple[str, ...], problems: list[str]
) -> tuple[dict[str, int], dict[str, int]]:
    """Each child's deserved (raised to its guarantee) and capability (its own, else the parent's); returns the
    sums of the children's deserved and guarantees."""
    sum_guarantee: dict[str, int] = {}
    sum_deserved: dict[str, int] = {}
    for child in kids:
        deserved: dict[str, int] = {}
        for r, v in raw(child.spec.deserved).items():
            deserved[r] = v
            child.trace.append(("deserved", r, v, "des.spec", 0, (v,)))
        _raise_to_guarantee(child, deserved)
        child.deserved = deserved
        add_into(sum_deserved, deserved)
        add_into(sum_guarantee, child.guarantee)
        spec_cap = raw(child.spec.capability)
        child_cap: dict[str, int] = {}
        for r in resources:
            own = spec_cap.get(r)
            if _no_capability(own, r):
                child_cap[r] = node.capability[r]
                child.trace.append(("capability", r, child_cap[r], "cap.inherit", 0, (node.name,)))
                continue
            assert own is not None
            child_cap[r] = own
            child.trace.append(("capability", r, own, "cap.spec", 0, ()))
            if own > node.capability[r]:
                problems.append(
                    f"queue {child.name} capability {r} {fmt(own, r)} exceeds its parent {node.name}'s "
                    f"{fmt(node.capability[r], r)}"
                )
        child.capability = child_cap
    return sum_deserved, sum_guarantee


def _real_capability(
    node: QueueAccount,
    child: QueueAccount,
    sum_guarantee: Mapping[str, int],
    resources: tuple[str, ...],
    *,
    kept: bool = False,
) -> None:
    """A child's real capability: what its parent's real capability leaves beyond its siblings' guarantees, plus
    its own guarantee, at most its capability (Volcano's capacity plugin). With lending limits among the siblings
    (``kept``), a sibling's lending-limit reserve counts where it is above its guarantee (``reserve_of``); with a
    borrowing limit, the result is at most ``deserved + borrowingLimit``."""
    rc: dict[str, int] = {}
    rule = "rc.tree.kept" if kept else "rc.tree"
    borrowing = bool(child.spec.borrowing_limit)
    for r in resources:
        parent_rc = node.real_capability[r]
        sg = sum_guarantee.get(r, 0)
        g = reserve_of(child, r)
        base = max(0, parent_rc - sg) + g
        if is_unlimited(base):
            base = UNLIMITED
        value = min(base, child.capability[r])
        child.trace.append(("realCapability", r, base, rule, 0, (node.name, parent_rc, sg, g)))
        if value < base:
            child.trace.append(("realCapability", r, value, "rc.capability", 0, (child.capability[r],)))
        if borrowing:
            value = cap_by_borrowing(child, r, value, child.deserved)
        rc[r] = value
    child.real_capability = rc


def _detached_values(states: dict[str, QueueAccount], resources: tuple[str, ...]) -> None:
    """Queues detached from the tree (a cycle or a missing parent): their own capability, nothing derived."""
    for st in states.values():
        if st.participating or st.name == ROOT_QUEUE:
            continue
        spec_cap = raw(st.spec.capability)
        st.capability = {r: UNLIMITED if _no_capability(spec_cap.get(r), r) else spec_cap[r] for r in resources}
        st.real_capability = dict(st.capability)
        for r in resources:
            st.trace.append(("realCapability", r, st.real_capability[r], "rc.detached", 0, ()))
        deserved = dict(raw(st.spec.deserved))
        _raise_to_guarantee(st, deserved)
        st.deserved = deserved
