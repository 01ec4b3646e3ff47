"""Namespace fair share inside queues (seed 000; Volcano's drf plugin up to v1.7, volcano.md section 4.2).

The model
---------
* A namespace has an integer **weight** >= 1, recorded in its ResourceQuotas under
  ``spec.hard["volcano.sh/namespace.weight"]``: the highest over its quotas wins, a quota without the key
  counts as 1, and an invalid value (not a quantity, < 1) is ignored, so the weight is never below 1
  (``namespace_weight``). Volcano read the quantity with ``Value()``, rounding a fraction up.
* Within each queue, the queue's **deserved** (from the proportion or capacity computation) is shared among the
  namespaces that have jobs in that queue by weighted water-filling (``waterfill.water_fill``): each namespace
  gets ``weight / open weight`` of what is left of every resource, never more than it requests in that queue;
  what a satisfied namespace leaves goes to the others. The amounts are exact integers that add up to at most
  the queue's deserved.
* A namespace's **share** is its dominant share of the cluster, ``max over the cluster's resources (> 0) of
  allocated / total``, summed over all its jobs (in every queue), divided by its weight. Namespaces are served
  in ascending weighted share (``compare_namespaces``): ``6 cpu / weight 2 = 3 < 3 cpu / weight 1``.
* **Preemption** (``namespace_preemption``, then job DRF): a task of namespace A may take the place of a task
  of another namespace B when A's weighted share *after* adding the preemptor is strictly lower than B's
  weighted share *after* removing the preemptee (B is walked with a running allocation, so removing several of
  its tasks lowers its share step by step); when A's share is higher by more than 1e-6 the task is protected;
  otherwise (a tie within 1e-6, or the same namespace) the job shares decide: the preemptee is a victim when the
  preemptor job's share after the move is lower than, or within 1e-6 of, the preemptee job's share after it
  (``drf_preemptable``).

Seed 000's tables (16 cpu): both queues weight 1 -> 8/8, namespaces (1,1) requesting 5 and 10 -> 4/4, and
(1,1) requesting 10 and 2 -> 6/2; queues weights 1 and 3 -> 4/12, namespaces (3,1) -> 3/1, (2,6) requesting 10
and 2 -> 10/2; a namespace requesting 5 and one requesting 20 with weights (2,6) in a 12 cpu queue -> 3/9.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter
from typing import Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from engine.amounts import ShapedSums, add_into, dominant_share, raw, trusted_resource_list
from engine.collector import paused, paused_during
from engine.fairshare.queues import Explanation, JobUsage, TraceEntry, render_trace
from engine.fairshare.waterfill import SETTLED_CAP, FillResult, water_fill
from engine.resources import QuantityError, ResourceList, parse_quantity

__all__ = [
    "DEFAULT_NAMESPACE_WEIGHT",
    "NAMESPACE_WEIGHT_KEY",
    "SHARE_DELTA",
    "NamespacePairs",
    "NamespacePreemption",
    "NamespaceQuota",
    "NamespaceShares",
    "PairTable",
    "compare_namespaces",
    "compute_namespace_shares",
    "drf_preemptable",
    "namespace_order",
    "namespace_preemption",
    "namespace_share",
    "namespace_weight",
]

NAMESPACE_WEIGHT_KEY = "volcano.sh/namespace.weight"
DEFAULT_NAMESPACE_WEIGHT = 1
SHARE_DELTA = 1e-6  # Volcano drf's shareDelta


def _weight_value(value: object) -> int | None:
    """One weight as Kubernetes ``Quantity.Value()`` reads it (a fraction rounds up), or None if invalid."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value >= 1 else None
    try:
        # memory's base unit is 1 and parse_quantity rounds up, which is exactly Quantity.Value()
        amount = parse_quantity(value, "memory", NAMESPACE_WEIGHT_KEY)
    except QuantityError:
        return None
    return amount if amount >= 1 else None


def namespace_weight(values: Iterable[object]) -> int:
    """A namespace's weight from the ``volcano.sh/namespace.weight`` values of its ResourceQuotas: the highest
    valid one, and never less than 1 (no value, or only invalid ones, gives 1)."""
    best = DEFAULT_NAMESPACE_WEIGHT
    for value in values:
        w = _weight_value(value)
        if w is not None and w > best:
            best = w
    return best


def _clean_weight(value: object) -> int:
    w = _weight_value(value)
    return w if w is not None else DEFAULT_NAMESPACE_WEIGHT


def namespace_share(allocated: Mapping[str, int], total: Mapping[str, int], weight: int = 1) -> float:
    """Dominant share of the cluster divided by the weight (``nsShare / weight``)."""
    return dominant_share(allocated, total)[1] / max(1, weight)


def compare_namespaces(
    left_allocated: Mapping[str, int],
    left_weight: int,
    right_allocated: Mapping[str, int],
    right_weight: int,
    total: Mapping[str, int],
) -> int:
    """Volcano's NamespaceOrderFn: negative when the left namespace (lower weighted share) goes first."""
    ls = namespace_share(left_allocated, total, left_weight)
    rs = namespace_share(right_allocated, total, right_weight)
    if ls == rs:
        return 0
    return -1 if ls < rs else 1


def namespace_order(
    allocated: Mapping[str, Mapping[str, int]], weights: Mapping[str, int], total: Mapping[str, int]
) -> list[str]:
    """Namespaces in serving order (ascending weighted share; ties by name)."""

    def key(ns: str) -> tuple[float, str]:
        return (namespace_share(allocated[ns], total, _clean_weight(weights.get(ns, 1))), ns)

    return sorted(allocated, key=key)


@dataclass(frozen=True)
class NamespaceQuota:
    """One namespace within one queue."""

    queue: str
    namespace: str
    weight: int
    request: ResourceList  # of its jobs in this queue
    allocated: ResourceList  # of its jobs in this queue
    deserved: ResourceList  # its part of the queue's deserved
    share: float  # namespace-wide dominant share of the cluster / weight (the order key)
    dominant_share: float  # namespace-wide unweighted dominant share of the cluster
    dominant_resource: str
    # the queue's split among its namespaces (shared by them; it replays the water-fillings for an explanation)
    # and this namespace's index in it
    split: _QueueSplit | None = field(default=None, repr=False, compare=False)
    index: int = field(default=0, repr=False, compare=False)
    queue_known: bool = field(default=True, repr=False, compare=False)

    @property
    def fills(self) -> tuple[tuple[str, FillResult], ...]:
        """How each deserved amount settled: the queue's water-filling per resource."""
        return self.split.fills() if self.split is not None else ()

    def explain(self) -> Explanation:
        """How the deserved amounts and the share were reached."""
        entries: list[TraceEntry] = []
        if not self.queue_known:
            entries.append(("deserved", None, None, "ns.noqueue", 0, (self.queue,)))
        i = self.index
        for resource, fill in self.fills:
            value, rnd = fill.values[i], fill.settled_round[i]
            if fill.settled[i] == SETTLED_CAP:
                entries.append(("deserved", resource, value, "des.cap.request", rnd, (fill.caps[i] or 0,)))
            else:
                budget, open_weight = fill.level or (fill.amount, sum(fill.weights))
                args = (str(fill.weights[i]), str(open_weight), budget)
                entries.append(("deserved", resource, value, "ns.fill", rnd, args))
        args2 = (self.dominant_resource or "-", f"{self.dominant_share:.6g}", str(self.weight))
        entries.append(("share", None, self.share, "ns.share", 0, args2))
        return Explanation(f"{self.queue}/{self.namespace}", tuple(render_trace(e) for e in entries))


class _QueueSplit:
    """One queue's deserved split among its namespaces: the inputs, and the values per resource (``values[r][i]``
    for the i-th member). The water-fillings themselves (``FillResult``, for explanations) are replayed on request."""

    __slots__ = ("_fills", "amounts", "members", "requests", "resources", "values", "weights")

    def __init__(
        self,
        members: tuple[str, ...],
        weights: list[int],
        requests: list[dict[str, int]],
        amounts: Mapping[str, int] | None,
        values: Mapping[str, list[int]],
    ) -> None:
        self.members = members
        self.weights = weights
        self.requests = requests
        self.amounts = amounts  # the queue's deserved (raw), None when the queue is unknown
        self.resources = () if amounts is None else tuple(sorted(set(amounts).union(*requests)))
        zeros = [0] * len(members)  # a resource nobody could get a part of (the queue has none of it)
        self.values = [values.get(r, zeros) for r in self.resources]
        self._fills: tuple[tuple[str, FillResult], ...] | None = None

    def deserved(self, i: int) -> dict[str, int]:
        return {r: v[i] for r, v in zip(self.resources, self.values, strict=True) if v[i]}

    def fills(self) -> tuple[tuple[str, FillResult], ...]:
        if self._fills is None:
            amounts = self.amounts or {}
            fills = []
            for r, values in zip(self.resources, self.values, strict=True):
                fill = water_fill(
                    amounts.get(r, 0), self.members, self.weights, [req.get(r, 0) for req in self.requests]
                )
                if list(fill.values) != values:  # pragma: no cover - the two computations are one rule
                    raise AssertionError(f"namespace split of {r} differs from its replay")
                fills.append((r, fill))
            self._fills = tuple(fills)
        return self._fills


class _Pair:
    """The summed amounts of a (queue, namespace) with several jobs."""

    __slots__ = ("allocated", "request")

    def __init__(self, request: dict[str, int], allocated: dict[str, int]) -> None:
        self.request = request
        self.allocated = allocated


@dataclass(slots=True)
class _Pairs:
    """The (queue, namespace) pairs that have jobs, in queue then namespace order. Pair ``p`` is named by its
    first job, ``jobs[order[p]]``; queue ``b`` (``queues[b]``) holds pairs ``starts[b]`` to ``starts[b + 1]``,
    its namespaces being ``members[b]``. A pair of several jobs has its sums in ``summed`` (by its first job's
    index). A namespace's allocated over all its queues, for its share, is gathered when a first entry needs it
    (``ns_allocated``): its one job's, or the sum of its jobs'."""

    jobs: Sequence[JobUsage]
    queues: list[str]
    members: list[tuple[str, ...]]
    starts: list[int]
    order: list[int]
    summed: dict[int, _Pair]
    ns_held: dict[str, int | dict[str, int]] | None = None

    def request(self, first: int) -> dict[str, int]:
        pair = self.summed.get(first)
        return pair.request if pair is not None else _dict(self.jobs[first].request)

    def allocated(self, first: int) -> dict[str, int]:
        pair = self.summed.get(first)
        return pair.allocated if pair is not None else _dict(self.jobs[first].allocated)

    def ns_allocated(self, ns: str) -> Mapping[str, int]:
        if self.ns_held is None:
            self.ns_held = _held_by_namespace(self.jobs)
        held = self.ns_held[ns]
        return held if type(held) is dict else raw(self.jobs[held].allocated)  # type: ignore[index]

    def __len__(self) -> int:
        return len(self.order)

    def request_at(self, p: int) -> dict[str, int]:
        """The request of pair ``p`` (in pair order)."""
        return self.request(self.order[p])

    def allocated_at(self, p: int) -> dict[str, int]:
        return self.allocated(self.order[p])

    def read(self, weights: Mapping[str, int]) -> tuple[list[int], list[dict[str, int]], npt.NDArray[np.intp]]:
        return _read_pairs(self, weights)


@dataclass(frozen=True, slots=True)
class PairTable:
    """The (queue, namespace) pairs as ``NamespacePairs`` kept them, as ``_Pairs`` has them from the jobs: ``queues``
    in name order, ``members[b]`` the namespaces of queue ``b`` by name, its pairs ``starts[b]`` to
    ``starts[b + 1]``; each pair's request and allocated sums, and each namespace's allocated over all its queues.
    Nothing in it changes once made (a later change of the keeper makes new dicts and lists)."""

    queues: list[str]
    members: list[tuple[str, ...]]
    starts: list[int]
    requests: list[dict[str, int]]
    allocateds: list[dict[str, int]]
    held: Mapping[str, Mapping[str, int]]

    def __len__(self) -> int:
        return len(self.requests)

    def request_at(self, p: int) -> dict[str, int]:
        return self.requests[p]

    def allocated_at(self, p: int) -> dict[str, int]:
        return self.allocateds[p]

    def ns_allocated(self, ns: str) -> Mapping[str, int]:
        return self.held[ns]

    def read(self, weights: Mapping[str, int]) -> tuple[list[int], list[dict[str, int]], npt.NDArray[np.intp]]:
        """(the pairs' weights and requests, in pair order; each pair's position there: itself)."""
        names = chain.from_iterable(self.members)
        ws = _clean_weights(list(map(weights.get, names, repeat(DEFAULT_NAMESPACE_WEIGHT, len(self.requests)))))
        return ws, self.requests, np.arange(len(ws), dtype=np.intp)


class _PairSums(ShapedSums):
    """One pair's request (dict 0) and allocated (dict 1) sums, kept by adding and removing its jobs."""

    __slots__ = ("jobs", "sums_made")

    def __init__(self) -> None:
        super().__init__(2)
        self.jobs = 0
        self.sums_made: list[dict[str, int]] | None = None  # ``made()`` until a job comes or goes

    def add(self, job: JobUsage, sign: int) -> None:
        self.jobs += sign
        request, allocated = raw(job.request), raw(job.allocated)
        self._add(0, tuple(request), request, sign)
        self._add(1, tuple(allocated), allocated, sign)
        self.sums_made = None

    def kept_sums(self) -> list[dict[str, int]] | None:
        if self.sums_made is None:
            self.sums_made = self.made()
        return self.sums_made


class NamespacePairs:
    """The (queue, namespace) pairs' sums that ``compute_namespace_shares`` adds up over every job, kept by adding
    and removing jobs (``add``), for a caller that keeps the jobs between computations (``engine.session.carry``).

    A pair's sums are the same exact integers; a dict's resource names are in the order they first appear among the
    pair's jobs, which is the longest name order whatever the jobs' order when every job's is a prefix of it
    (``ShapedSums``); when not, ``table`` is None and the caller computes from the jobs. The namespaces' allocated
    over all their queues (for their shares, whose resources are read by name) are exact sums too."""

    __slots__ = ("_counts", "_held", "_layout", "_pairs")

    def __init__(self) -> None:
        self._pairs: dict[tuple[str, str], _PairSums] = {}
        self._counts: dict[str, int] = {}  # namespace -> its jobs
        self._held: dict[str, dict[str, int]] = {}  # namespace -> its allocated (a new dict at every change)
        self._layout: tuple[list[str], list[tuple[str, ...]], list[int], list[_PairSums]] | None = None

    def add(self, job: JobUsage, sign: int) -> None:
        """Count ``job`` in (``sign`` 1) or out (-1)."""
        key = (job.queue, job.namespace)
        pair = self._pairs.get(key)
        if pair is None:
            pair = self._pairs[key] = _PairSums()
            self._layout = None
        pair.add(job, sign)
        if not pair.jobs:
            del self._pairs[key]
            self._layout = None
        ns = job.namespace
        n = self._counts.get(ns, 0) + sign
        if not n:
            del self._counts[ns], self._held[ns]
            return
        self._counts[ns] = n
        held = dict(self._held.get(ns, ()))
        add_into(held, raw(job.allocated), sign)
        self._held[ns] = held

    def table(self) -> PairTable | None:
        """The pairs as ``compute_namespace_shares`` takes them, or None when a pair's name orders depend on its
        jobs' order."""
        if self._layout is None:
            keys = sorted(self._pairs)
            queues: list[str] = []
            members: list[tuple[str, ...]] = []
            starts: list[int] = []
            for i, (queue, _) in enumerate(keys):
                if not queues or queues[-1] != queue:
                    queues.append(queue)
                    starts.append(i)
            starts.append(len(keys))
            for b in range(len(queues)):
                members.append(tuple(ns for _, ns in keys[starts[b] : starts[b + 1]]))
            self._layout = (queues, members, starts, list(map(self._pairs.__getitem__, keys)))
        queues, members, starts, pairs = self._layout
        requests: list[dict[str, int]] = []
        allocateds: list[dict[str, int]] = []
        for pair in pairs:
            made = pair.kept_sums()
            if made is None:
                return None
            requests.append(made[0])
            allocateds.append(made[1])
        return PairTable(queues, members, starts, requests, allocateds, self._held.copy())


class NamespaceShares(Mapping[tuple[str, str], NamespaceQuota]):
    """``compute_namespace_shares``' result: a mapping ``(queue, namespace) -> NamespaceQuota`` ordered by queue
    then namespace, with the explanations at hand. The water-fillings run, all at once, when the first entry is read,
    and an entry is built on first access (tens of thousands of namespaces are computed in one pass; many callers
    read a few, and a session reads none unless a plugin orders namespaces)."""

    def __init__(
        self,
        pairs: _Pairs | PairTable,
        amounts: list[Mapping[str, int] | None],
        weights: Mapping[str, int],
        total: Mapping[str, int],
    ) -> None:
        self._pairs = pairs  # (nothing in it changes once made)
        self._queues = pairs.queues  # in name order
        self._amounts = amounts  # each queue's deserved (raw), None when the queue is unknown
        self._ns_weights = weights  # namespace -> weight, as given
        # each pair's namespace weight and, per resource, each pair's deserved amount, in pair order: ``_filled``
        self._filled: tuple[_Ints, dict[str, _Ints]] | None = None
        self._total = total
        self._block: dict[str, int] | None = None  # queue -> its index, on the first lookup by key
        self._index: list[dict[str, int] | None] = [None] * len(self._queues)
        self._splits: list[_QueueSplit | None] = [None] * len(self._queues)
        self._dominant: dict[str, tuple[str, float]] = {}
        self._cache: dict[tuple[int, int], NamespaceQuota] = {}

    def __getitem__(self, key: tuple[str, str]) -> NamespaceQuota:
        block, index = self._locate(key)
        hit = self._cache.get((block, index))
        return hit if hit is not None else self._entry(block, index)

    def _locate(self, key: tuple[str, str]) -> tuple[int, int]:
        if self._block is None:
            self._block = {q: i for i, q in enumerate(self._queues)}
        try:
            queue, ns = key
            block = self._block[queue]
        except (KeyError, TypeError, ValueError):
            raise KeyError(key) from None
        positions = self._index[block]
        if positions is None:
            positions = self._index[block] = {n: i for i, n in enumerate(self._pairs.members[block])}
        index = positions.get(ns)
        if index is None:
            raise KeyError(key)
        return block, index

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for queue, members in zip(self._queues, self._pairs.members, strict=True):
            for ns in members:
                yield (queue, ns)

    def __len__(self) -> int:
        return len(self._pairs)

    def __contains__(self, key: object) -> bool:
        try:
            self._locate(key)  # type: ignore[arg-type]
        except KeyError:
            return False
        return True

    def __repr__(self) -> str:
        return f"NamespaceShares({dict(self.items())!r})"

    def _entries(self, block: int) -> Iterator[NamespaceQuota]:
        cache = self._cache
        for index in range(len(self._pairs.members[block])):
            hit = cache.get((block, index))
            yield hit if hit is not None else self._entry(block, index)

    def values(self) -> Iterator[NamespaceQuota]:  # type: ignore[override]
        for block in range(len(self._queues)):
            yield from self._entries(block)

    def items(self) -> Iterator[tuple[tuple[str, str], NamespaceQuota]]:  # type: ignore[override]
        for block, queue in enumerate(self._queues):
            for entry in self._entries(block):
                yield (queue, entry.namespace), entry

    def _split(self, block: int) -> _QueueSplit:
        split = self._splits[block]
        if split is None:
            pairs = self._pairs
            start, stop = pairs.starts[block], pairs.starts[block + 1]
            if self._filled is None:
                with paused():  # (as the call that made this: ``compute_namespace_shares``)
                    self._filled = _split_queues(pairs, self._ns_weights, self._amounts)
            weights, filled = self._filled
            split = self._splits[block] = _QueueSplit(
                pairs.members[block],
                _int_list(weights[start:stop]),
                list(map(pairs.request_at, range(start, stop))),
                self._amounts[block],
                {r: _int_list(values[start:stop]) for r, values in filled.items()},
            )
        return split

    def _entry(self, block: int, index: int) -> NamespaceQuota:
        split = self._split(block)
        ns = split.members[index]
        dominant = self._dominant.get(ns)
        if dominant is None:
            dominant = self._dominant[ns] = dominant_share(self._pairs.ns_allocated(ns), self._total)
        weight = split.weights[index]
        at = self._pairs.starts[block] + index
        entry = NamespaceQuota(
            queue=self._queues[block],
            namespace=ns,
            weight=weight,
            request=trusted_resource_list(split.requests[index]),
            allocated=trusted_resource_list(self._pairs.allocated_at(at)),
            deserved=trusted_resource_list(split.deserved(index)),
            share=dominant[1] / weight,
            dominant_share=dominant[1],
            dominant_resource=dominant[0],
            split=split,
            index=index,
            queue_known=split.amounts is not None,
        )
        self._cache[(block, index)] = entry
        return entry

    def explain(self, key: tuple[str, str]) -> Explanation:
        """How one namespace's deserved amounts in one queue and its share were reached."""
        return self[key].explain()

    def in_queue(self, queue: str) -> list[NamespaceQuota]:
        """The namespaces of one queue, by name."""
        block = bisect_left(self._queues, queue)
        if block == len(self._queues) or self._queues[block] != queue:
            return []
        return list(self._entries(block))


def _dict(amounts: Mapping[str, int]) -> dict[str, int]:
    """A ResourceList's own dictionary (read, never written), or a copy of another mapping."""
    return amounts._data if type(amounts) is ResourceList else dict(amounts)


@paused_during
def compute_namespace_shares(
    queue_deserved: Mapping[str, ResourceList],
    jobs: Sequence[JobUsage],
    weights: Mapping[str, int],
    total: ResourceList,
    pairs: PairTable | None = None,
) -> NamespaceShares:
    """Namespace deserved amounts within each queue, and every namespace's weighted share.

    ``weights`` maps namespace -> weight (missing or invalid: 1; see ``namespace_weight`` for the rule that
    reduces several ResourceQuotas to one weight). One entry per (queue, namespace) that has jobs.

    Built for many namespaces (every job its own): one pass over the jobs groups them (a pair of one job keeps
    that job's own amounts), the pairs' weights and requests are read in the jobs' own order (the order they lie
    in memory), all the water-fillings run in one numpy computation (when the first entry is read), and the entries
    are built on first access, with the namespaces' totals over their queues (for their shares) gathered for the
    first. The cyclic collector is paused meanwhile (``engine.collector``): its young collections walked
    the growing dictionaries of every job; one pass after the call remains.

    ``pairs``: the pairs of ``jobs`` as a caller kept them (``NamespacePairs.table``), instead of the pass over
    ``jobs``: the same sums, in the same orders."""
    table = pairs if pairs is not None else _pair_jobs(jobs)
    amounts = [None if qd is None else raw(qd) for qd in map(queue_deserved.get, table.queues)]
    return NamespaceShares(table, amounts, dict(weights), raw(total))


def _pair_jobs(jobs: Sequence[JobUsage]) -> _Pairs:
    """The jobs grouped into (queue, namespace) pairs, in queue then namespace order."""
    by_queue, summed = _group_jobs(jobs)
    queues = sorted(by_queue)
    members: list[tuple[str, ...]] = []
    order: list[int] = []
    starts = [0]
    for queue in queues:
        firsts = by_queue[queue]
        names = sorted(firsts)
        members.append(tuple(names))
        order.extend(map(firsts.__getitem__, names))
        starts.append(len(order))
    return _Pairs(jobs, queues, members, starts, order, summed)


def _group_jobs(jobs: Sequence[JobUsage]) -> tuple[dict[str, dict[str, int]], dict[int, _Pair]]:
    """(queue -> namespace -> the index of its first job; a pair's sums by its first job, where it has several): one
    pass that keeps a job's own amounts for a pair it is alone in."""
    by_queue: dict[str, dict[str, int]] = {}
    more: list[int] = []  # jobs after the first of their pair
    in_queue, later = by_queue.get, more.append
    for i, job in enumerate(jobs):
        queue = job.queue
        members = in_queue(queue)
        if members is None:
            members = by_queue[queue] = {}
        if members.setdefault(job.namespace, i) != i:
            later(i)
    summed: dict[int, _Pair] = {}
    for i in more:
        job = jobs[i]
        first = by_queue[job.queue][job.namespace]
        pair = summed.get(first)
        if pair is None:
            pair = summed[first] = _Pair(dict(raw(jobs[first].request)), dict(raw(jobs[first].allocated)))
        _add(pair.request, raw(job.request))
        _add(pair.allocated, raw(job.allocated))
    return by_queue, summed


def _held_by_namespace(jobs: Sequence[JobUsage]) -> dict[str, int | dict[str, int]]:
    """Namespace -> the index of its one job, or the sum of its jobs' allocated (in every queue)."""
    held: dict[str, int | dict[str, int]] = {}
    more: list[int] = []
    first, later = held.setdefault, more.append
    for i, ns in enumerate(map(_NAMESPACE, jobs)):
        if first(ns, i) != i:
            later(i)
    for i in more:
        job = jobs[i]
        sums = held[job.namespace]
        if type(sums) is not dict:
            sums = held[job.namespace] = dict(raw(jobs[sums].allocated))  # type: ignore[index]
        _add(sums, raw(job.allocated))
    return held


def _add(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount


# Per-pair integers: a numpy array from the numpy water-filling, a list from the Python one.
_Ints = npt.NDArray[np.int64] | list[int]


def _int_list(values: _Ints) -> list[int]:
    return values.tolist() if isinstance(values, np.ndarray) else values


# Exact integer arithmetic in int64 holds while every product below stays under this bound.
_INT64_SAFE = 2**62
_NAMESPACE = attrgetter("namespace")


def _split_queues(
    pairs: _Pairs | PairTable, weights: Mapping[str, int], amounts: list[Mapping[str, int] | None]
) -> tuple[_Ints, dict[str, _Ints]]:
    """Every queue's deserved split among its namespaces by weight, each capped at its request, one water-filling
    per (queue, resource) (``waterfill.water_fill`` with caps and no floors): (each pair's weight, resource -> each
    pair's deserved amount), both in pair order. A resource no queue has any of is left out (its amounts are 0).

    The water-fillings all run at once in numpy, and their values stay there until a queue's entries are read;
    with Python integers when an amount is too large for int64."""
    ws, requests, where = pairs.read(weights)
    n = len(ws)
    resources = sorted({r for a in amounts if a is not None for r, v in a.items() if v > 0})
    sizes = np.diff(np.array(pairs.starts, dtype=np.int64))
    try:
        w = np.array(ws, dtype=np.int64)[where]
        lens = np.fromiter(map(len, requests), dtype=np.int64, count=n)
        count = int(lens.sum())
        index = {r: k for k, r in enumerate(resources)}
        # each request read twice, for its names then its amounts, rather than once for every resource
        keys = np.fromiter(
            map(index.get, chain.from_iterable(requests), repeat(-1, count)), dtype=np.int64, count=count
        )
        request_amounts = np.fromiter(chain.from_iterable(map(dict.values, requests)), dtype=np.int64, count=count)
        kept = keys >= 0
        caps = np.zeros((len(resources), n), dtype=np.int64)
        caps[keys[kept], np.repeat(np.arange(n), lens)[kept]] = request_amounts[kept]
        caps = caps[:, where]
        budget = np.array([[0 if a is None else a.get(r, 0) for a in amounts] for r in resources], dtype=np.int64)
    except OverflowError:
        exact = False
    else:
        biggest = max(int(budget.max(initial=0)), int(caps.max(initial=0)), 1)
        exact = biggest * int(w.max(initial=1)) * int(sizes.max(initial=1)) < _INT64_SAFE
    if exact:
        matrix = _fill_numpy(caps.ravel(), np.tile(w, len(resources)), budget.ravel(), np.tile(sizes, len(resources)))
        return w, dict(zip(resources, matrix.reshape(len(resources), n), strict=True))
    back = where.tolist()
    in_order = [ws[i] for i in back]
    return in_order, _fill_python(pairs, [requests[i] for i in back], in_order, amounts, resources)


def _read_pairs(
    pairs: _Pairs, weights: Mapping[str, int]
) -> tuple[list[int], list[dict[str, int]], npt.NDArray[np.intp]]:
    """(the weights and the requests of the pairs, in their first jobs' order; the position there of each pair of
    the pair order). Read in the jobs' order, the order they lie in memory: read queue by queue and namespace by
    namespace, the same jobs cost twice as much."""
    firsts: Sequence[JobUsage] = pairs.jobs
    where = np.fromiter(pairs.order, dtype=np.intp, count=len(pairs.order))
    summed: list[tuple[int, _Pair]] = []  # a pair of several jobs: its position, and its sums
    if len(where) < len(firsts):  # some pairs have several jobs (else pair p's first job is job where[p])
        ascending = np.sort(where)
        where = np.searchsorted(ascending, where)
        firsts = list(map(firsts.__getitem__, ascending.tolist()))
        at = np.searchsorted(ascending, np.fromiter(pairs.summed, dtype=np.intp, count=len(pairs.summed)))
        summed = list(zip(at.tolist(), pairs.summed.values(), strict=True))
    ws = _clean_weights(list(map(weights.get, map(_NAMESPACE, firsts), repeat(DEFAULT_NAMESPACE_WEIGHT, len(firsts)))))
    requests = [r._data if type(r) is ResourceList else _dict(r) for r in [job.request for job in firsts]]
    for i, pair in summed:
        requests[i] = pair.request
    return ws, requests, where


def _clean_weights(ws: list[int]) -> list[int]:
    """The weights read, each cleaned up as ``_clean_weight`` does (rare: checked in bulk first)."""
    if ws and (set(map(type, ws)) != {int} or min(ws) < 1):
        ws = [w if type(w) is int and w >= 1 else _clean_weight(w) for w in ws]
    return ws


def _fill_python(
    pairs: _Pairs | PairTable,
    requests: list[dict[str, int]],
    weights: list[int],
    amounts: list[Mapping[str, int] | None],
    resources: list[str],
) -> dict[str, _Ints]:
    """``_split_queues``' water-fillings one by one with Python integers (amounts too large for int64)."""
    out: dict[str, _Ints] = {}
    for r in resources:
        values: list[int] = []
        out[r] = values
        for block, members in enumerate(pairs.members):
            start, stop = pairs.starts[block], pairs.starts[block + 1]
            amount = amounts[block]
            caps = [req.get(r, 0) for req in requests[start:stop]]
            values.extend(
                water_fill(0 if amount is None else amount.get(r, 0), members, weights[start:stop], caps).values
            )
    return out


def _fill_numpy(
    cap: npt.NDArray[np.int64], w: npt.NDArray[np.int64], budget: npt.NDArray[np.int64], size: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """``water_fill`` with caps (no floors, weights >= 1) of many groups at once: group g holds ``size[g]``
    consecutive claimants and shares ``budget[g]`` (a group with nothing to share gives zeros). The rounds are
    ``water_fill``'s: in each, the open claimants whose weighted share reaches their cap (``budget * w >= cap *
    open_weight``) settle at it; when none does, the budget left is split among the open ones by largest
    remainder, ties to the name that sorts first."""
    budget = budget.copy()
    group = np.repeat(np.arange(size.size), size)
    # a group whose caps add up to no more than its budget settles every claimant at its cap (some claimant
    # reaches its cap in every round, as the caps left never exceed the budget left): at once
    whole = np.add.reduceat(cap, np.cumsum(size) - size) <= budget
    values = np.where(np.repeat(whole, size), cap, 0)
    idx = np.flatnonzero(np.repeat((budget > 0) & ~whole, size))  # the open claimants of the groups still settling
    last: list[npt.NDArray[np.int64]] = []  # the open claimants of the groups whose last round has come
    while idx.size:
        g = group[idx]
        first = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
        open_weight = np.add.reduceat(w[idx], first)
        capped = budget[g] * w[idx] >= cap[idx] * np.repeat(open_weight, np.diff(np.append(first, idx.size)))
        settled = idx[capped]
        values[settled] = cap[settled]
        np.subtract.at(budget, group[settled], cap[settled])
        moved = np.zeros(size.size, dtype=np.bool_)
        moved[group[settled]] = True
        last.append(idx[~capped & ~moved[g]])  # a round that caps nobody is the group's last
        idx = idx[~capped & moved[g]]
    idx = np.sort(np.concatenate(last)) if last else idx
    if idx.size:
        g = group[idx]
        first = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
        open_weight = np.repeat(np.add.reduceat(w[idx], first), np.diff(np.append(first, idx.size)))
        share, rest = np.divmod(budget[g] * w[idx], open_weight)
        values[idx] = share
        left = budget.copy()
        np.subtract.at(left, g, share)
        # largest remainder first, then the name that sorts first, group by group: a group's claimants are in name
        # order, and the sort is stable
        order = np.lexsort((-rest, g))
        ordered = idx[order]
        og = group[ordered]
        starts = np.flatnonzero(np.concatenate(([True], og[1:] != og[:-1])))
        position = np.arange(ordered.size) - np.repeat(starts, np.diff(np.append(starts, ordered.size)))
        values[ordered[position < left[og]]] += 1
    return values


class NamespacedTask(Protocol):
    @property
    def namespace(self) -> str: ...

    @property
    def request(self) -> Mapping[str, int]: ...


class JobTask(NamespacedTask, Protocol):
    @property
    def job(self) -> str: ...


N = TypeVar("N", bound=NamespacedTask)
J = TypeVar("J", bound=JobTask)


@dataclass(frozen=True)
class NamespacePreemption(Generic[N]):
    """The namespace rule's verdict on each preemptee."""

    victims: tuple[N, ...]  # the preemptor's namespace stays poorer: may be preempted
    undecided: tuple[N, ...]  # tie within 1e-6 or same namespace: the job shares decide
    protected: tuple[N, ...]  # the preemptee's namespace would end up poorer: keep


def namespace_preemption(
    preemptor_namespace: str,
    preemptor_request: Mapping[str, int],
    preemptees: Sequence[N],
    namespace_allocated: Mapping[str, Mapping[str, int]],
    weights: Mapping[str, int],
    total: Mapping[str, int],
) -> NamespacePreemption[N]:
    """Seed 000's preemption rule between namespaces (see the module docstring)."""
    left_alloc = dict(raw(namespace_allocated.get(preemptor_namespace, {})))
    add_into(left_alloc, preemptor_request)
    left = namespace_share(left_alloc, total, _clean_weight(weights.get(preemptor_namespace, 1)))
    running: dict[str, dict[str, int]] = {}
    victims: list[N] = []
    undecided: list[N] = []
    protected: list[N] = []
    for task in preemptees:
        if task.namespace == preemptor_namespace:
            undecided.append(task)
            continue
        alloc = running.get(task.namespace)
        if alloc is None:
            alloc = running[task.namespace] = dict(raw(namespace_allocated.get(task.namespace, {})))
        add_into(alloc, task.request, -1)
        right = namespace_share(alloc, total, _clean_weight(weights.get(task.namespace, 1)))
        if left < right:
            victims.append(task)
        elif left - right > SHARE_DELTA:
            protected.append(task)
        else:
            undecided.append(task)
    return NamespacePreemption(tuple(victims), tuple(undecided), tuple(protected))


def drf_preemptable(
    preemptor: J,
    preemptees: Sequence[J],
    namespace_allocated: Mapping[str, Mapping[str, int]],
    job_allocated: Mapping[str, Mapping[str, int]],
    weights: Mapping[str, int],
    total: Mapping[str, int],
    *,
    namespace_order_enabled: bool = True,
) -> list[J]:
    """Volcano drf's PreemptableFn with namespace order: the namespace rule first, then job DRF on the
    undecided preemptees (``ls < rs or |ls - rs| <= 1e-6``). Returns the victims in the order given."""
    candidates: Sequence[J] = preemptees
    chosen: set[int] = set()
    if namespace_order_enabled:
        verdict = namespace_preemption(
            preemptor.namespace, preemptor.request, preemptees, namespace_allocated, weights, total
        )
        chosen.update(id(t) for t in verdict.victims)
        candidates = verdict.undecided
    left_alloc = dict(raw(job_allocated.get(preemptor.job, {})))
    add_into(left_alloc, preemptor.request)
    _, ls = dominant_share(left_alloc, total)
    running: dict[str, dict[str, int]] = {}
    for task in candidates:
        alloc = running.get(task.job)
        if alloc is None:
            alloc = running[task.job] = dict(raw(job_allocated.get(task.job, {})))
        add_into(alloc, task.request, -1)
        _, rs = dominant_share(alloc, total)
        if ls < rs or abs(ls - rs) <= SHARE_DELTA:
            chosen.add(id(task))
    return [t for t in preemptees if id(t) in chosen]
