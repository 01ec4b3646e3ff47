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
from itertools import repeat
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from engine.collector import paused_during
from engine.fairshare.queues import (
    Explanation,
    JobUsage,
    TraceEntry,
    add_into,
    dominant_share,
    raw,
    render_trace,
    trusted_resource_list,
)
from engine.fairshare.waterfill import SETTLED_CAP, FillResult, water_fill
from engine.resources import QuantityError, ResourceList, parse_quantity

__all__ = [
    "DEFAULT_NAMESPACE_WEIGHT",
    "NAMESPACE_WEIGHT_KEY",
    "SHARE_DELTA",
    "NamespacePreemption",
    "NamespaceQuota",
    "NamespaceShares",
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
    ) -> None:
        self.members = members
        self.weights = weights
        self.requests = requests
        self.amounts = amounts  # the queue's deserved (raw), None when the queue is unknown
        self.resources = () if amounts is None else tuple(sorted(set(amounts).union(*requests)))
        self.values: list[list[int]] = []
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
    """The jobs of one (queue, namespace): the first one's amounts until a second job comes, then their sums."""

    __slots__ = ("allocated", "request")

    def __init__(self, request: dict[str, int], allocated: dict[str, int]) -> None:
        self.request = request
        self.allocated = allocated


class NamespaceShares(Mapping[tuple[str, str], NamespaceQuota]):
    """``compute_namespace_shares``' result: a mapping ``(queue, namespace) -> NamespaceQuota`` ordered by queue
    then namespace, with the explanations at hand. An entry is built on first access (tens of thousands of
    namespaces are computed in one pass; many callers read a few)."""

    def __init__(
        self,
        queues: list[str],
        splits: list[_QueueSplit],
        pairs: list[list[Any]],
        ns_allocated: Mapping[str, Any],
        ns_weight: Mapping[str, int],
        total: Mapping[str, int],
    ) -> None:
        self._queues = queues  # in name order, each with its split and its pairs (in namespace order)
        self._splits = splits
        self._pairs = pairs
        self._ns_allocated = ns_allocated
        self._ns_weight = ns_weight
        self._total = total
        self._len = sum(len(split.members) for split in splits)
        self._block: dict[str, int] | None = None  # queue -> its index, on the first lookup by key
        self._index: list[dict[str, int] | None] = [None] * len(queues)
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
            positions = self._index[block] = {n: i for i, n in enumerate(self._splits[block].members)}
        index = positions.get(ns)
        if index is None:
            raise KeyError(key)
        return block, index

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for queue, split in zip(self._queues, self._splits, strict=True):
            for ns in split.members:
                yield (queue, ns)

    def __len__(self) -> int:
        return self._len

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
        for index in range(len(self._splits[block].members)):
            hit = cache.get((block, index))
            yield hit if hit is not None else self._entry(block, index)

    def values(self) -> Iterator[NamespaceQuota]:  # type: ignore[override]
        for block in range(len(self._queues)):
            yield from self._entries(block)

    def items(self) -> Iterator[tuple[tuple[str, str], NamespaceQuota]]:  # type: ignore[override]
        for block, queue in enumerate(self._queues):
            for entry in self._entries(block):
                yield (queue, entry.namespace), entry

    def _entry(self, block: int, index: int) -> NamespaceQuota:
        split = self._splits[block]
        ns = split.members[index]
        dominant = self._dominant.get(ns)
        if dominant is None:
            dominant = self._dominant[ns] = dominant_share(_amounts(self._ns_allocated[ns]), self._total)
        weight = split.weights[index]
        pair = self._pairs[block][index]
        request, allocated = (
            (pair.request, pair.allocated) if type(pair) is _Pair else (_dict(pair.request), _dict(pair.allocated))
        )
        entry = NamespaceQuota(
            queue=self._queues[block],
            namespace=ns,
            weight=weight,
            request=trusted_resource_list(request),
            allocated=trusted_resource_list(allocated),
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


def _amounts(held: Any) -> Mapping[str, int]:
    """A namespace's allocated: its one job's, or the sum of its jobs'."""
    return held if type(held) is dict else raw(held.allocated)


def _dict(amounts: Mapping[str, int]) -> dict[str, int]:
    """A ResourceList's own dictionary (read, never written), or a copy of another mapping."""
    return amounts._data if type(amounts) is ResourceList else dict(amounts)


@paused_during
def compute_namespace_shares(
    queue_deserved: Mapping[str, ResourceList],
    jobs: Sequence[JobUsage],
    weights: Mapping[str, int],
    total: ResourceList,
) -> NamespaceShares:
    """Namespace deserved amounts within each queue, and every namespace's weighted share.

    ``weights`` maps namespace -> weight (missing or invalid: 1; see ``namespace_weight`` for the rule that
    reduces several ResourceQuotas to one weight). One entry per (queue, namespace) that has jobs.

    Built for many namespaces (every job its own): one pass over the jobs that keeps a job's own amounts for a
    pair or a namespace it is alone in, all the water-fillings in one numpy computation, and the entries built on
    first access. The cyclic collector is paused meanwhile (``engine.collector``): its young collections walked
    the growing dictionaries of every job, 3.9 ms of a call with 20,000 one-job namespaces; one pass after the call
    remains (2.3 ms)."""
    by_queue, ns_held = _group_jobs(jobs)
    queues = sorted(by_queue)
    splits: list[_QueueSplit] = []
    pairs: list[list[Any]] = []
    ns_weight: dict[str, int] = {}
    for queue in queues:
        members = by_queue[queue]
        names = sorted(members)
        entries = list(map(members.__getitem__, names))
        ws = list(map(weights.get, names, repeat(DEFAULT_NAMESPACE_WEIGHT, len(names))))
        if set(map(type, ws)) != {int} or min(ws) < 1:  # a weight to clean up: rare, so checked in bulk first
            ws = [w if type(w) is int and w >= 1 else _clean_weight(w) for w in ws]
        ns_weight.update(zip(names, ws, strict=True))
        requests = [  # ``_dict`` of each pair's request, its common case inline (20,000 calls saved)
            e.request if type(e) is _Pair else e.request._data if type(e.request) is ResourceList else _dict(e.request)
            for e in entries
        ]
        qd = queue_deserved.get(queue)
        splits.append(_QueueSplit(tuple(names), ws, requests, None if qd is None else raw(qd)))
        pairs.append(entries)
    _split_queues(splits)
    return NamespaceShares(queues, splits, pairs, ns_held, ns_weight, raw(total))


def _group_jobs(jobs: Sequence[JobUsage]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(queue -> namespace -> its first job, or a ``_Pair`` summing its jobs; namespace -> its first job, or the sum
    of its jobs' allocated): one pass that keeps a job's own amounts for a pair or a namespace it is alone in."""
    by_queue: dict[str, dict[str, Any]] = {}  # queue -> namespace -> its first job, or a _Pair once summed
    ns_held: dict[str, Any] = {}  # namespace -> its first job, or the sum of its jobs' allocated
    more: list[JobUsage] = []  # jobs after the first of their pair or of their namespace
    in_queue, held_first, later = by_queue.get, ns_held.setdefault, more.append
    for job in jobs:
        queue = job.queue
        members = in_queue(queue)
        if members is None:
            members = by_queue[queue] = {}
        ns = job.namespace
        if members.setdefault(ns, job) is not job or held_first(ns, job) is not job:
            later(job)
    for job in more:
        members = by_queue[job.queue]
        ns = job.namespace
        pair = members[ns]
        if pair is not job:
            if type(pair) is not _Pair:
                pair = members[ns] = _Pair(dict(raw(pair.request)), dict(raw(pair.allocated)))
            _add(pair.request, raw(job.request))
            _add(pair.allocated, raw(job.allocated))
        held = ns_held[ns]
        if held is not job:
            if type(held) is not dict:
                held = ns_held[ns] = dict(raw(held.allocated))
            _add(held, raw(job.allocated))
    return by_queue, ns_held


def _add(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount


# Exact integer arithmetic in int64 holds while every product below stays under this bound.
_INT64_SAFE = 2**62


def _split_queues(splits: list[_QueueSplit]) -> None:
    """Every queue's deserved split among its namespaces by weight, each capped at its request, one water-filling
    per (queue, resource) (``waterfill.water_fill`` with caps and no floors): all of them at once in numpy, round by
    round, exactly as ``water_fill`` rounds them; Python integers when an amount is too large for int64."""
    caps: list[int] = []
    weights: list[int] = []
    amounts: list[int] = []
    sizes: list[int] = []
    for split in splits:
        if split.amounts is None:
            continue
        k = len(split.members)
        n = len(split.resources)
        for r in split.resources:  # C loops: some 80,000 lookups with 20,000 one-job namespaces
            caps.extend(map(dict.get, split.requests, repeat(r, k), repeat(0, k)))
        weights.extend(split.weights * n)
        amounts.extend([split.amounts.get(r, 0) for r in split.resources])
        sizes.extend([k] * n)
    if not sizes:
        for split in splits:
            split.values = [[0] * len(split.members) for _ in split.resources]
        return
    biggest = max(max(amounts), max(caps), 1)
    if biggest * max(max(weights), 1) * max(sizes) >= _INT64_SAFE:
        names = [m for split in splits if split.amounts is not None for _ in split.resources for m in split.members]
        values = _fill_python(caps, weights, names, amounts, sizes)
    else:
        values = _fill_numpy(caps, weights, amounts, sizes)
    at = 0
    for split in splits:
        if split.amounts is None:
            split.values = [[0] * len(split.members) for _ in split.resources]
            continue
        k = len(split.members)
        split.values = [values[at + j * k : at + (j + 1) * k] for j in range(len(split.resources))]
        at += k * len(split.resources)


def _fill_python(
    caps: list[int], weights: list[int], names: list[str], amounts: list[int], sizes: list[int]
) -> list[int]:
    out: list[int] = []
    at = 0
    for amount, k in zip(amounts, sizes, strict=True):
        fill = water_fill(amount, names[at : at + k], weights[at : at + k], caps[at : at + k])
        out.extend(fill.values)
        at += k
    return out


def _fill_numpy(caps: list[int], weights: list[int], amounts: list[int], sizes: list[int]) -> list[int]:
    """``water_fill`` with caps (no floors, weights >= 1) of many groups at once: group g holds ``sizes[g]``
    consecutive claimants and shares ``amounts[g]``. The rounds are ``water_fill``'s: in each, the open claimants
    whose weighted share reaches their cap (``budget * w >= cap * open_weight``) settle at it; when none does, the
    budget left is split among the open ones by largest remainder, ties to the name that sorts first."""
    # fromiter: the amounts are scattered over the jobs' dictionaries, and it reads them faster than array
    cap = np.fromiter(caps, dtype=np.int64, count=len(caps))
    w = np.fromiter(weights, dtype=np.int64, count=len(weights))
    size = np.array(sizes, dtype=np.int64)
    group = np.repeat(np.arange(len(sizes)), size)
    budget = np.array(amounts, dtype=np.int64)
    values = np.zeros(len(caps), dtype=np.int64)
    idx = np.arange(len(caps))  # the open claimants of the groups still settling some, group by group
    last: list[npt.NDArray[np.int64]] = []  # the open claimants of the groups whose last round has come
    while idx.size:
        g = group[idx]
        first = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
        open_weight = np.add.reduceat(w[idx], first)
        capped = budget[g] * w[idx] >= cap[idx] * np.repeat(open_weight, np.diff(np.append(first, idx.size)))
        settled = idx[capped]
        values[settled] = cap[settled]
        np.subtract.at(budget, group[settled], cap[settled])
        moved = np.zeros(len(sizes), dtype=np.bool_)
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
    out: list[int] = values.tolist()
    return out


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
