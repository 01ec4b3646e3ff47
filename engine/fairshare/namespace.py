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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

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
    # how each deserved amount settled: the queue's water-filling per resource (shared by the queue's
    # namespaces) and this namespace's index in them
    fills: tuple[tuple[str, FillResult], ...] = field(default=(), repr=False, compare=False)
    index: int = field(default=0, repr=False, compare=False)
    queue_known: bool = field(default=True, repr=False, compare=False)

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


class NamespaceShares(dict[tuple[str, str], NamespaceQuota]):
    """``compute_namespace_shares``' result: a dict ``(queue, namespace) -> NamespaceQuota`` ordered by queue
    then namespace, with the explanations at hand."""

    def explain(self, key: tuple[str, str]) -> Explanation:
        """How one namespace's deserved amounts in one queue and its share were reached."""
        return self[key].explain()

    def in_queue(self, queue: str) -> list[NamespaceQuota]:
        """The namespaces of one queue, by name."""
        return [v for (q, _), v in self.items() if q == queue]


def compute_namespace_shares(
    queue_deserved: Mapping[str, ResourceList],
    jobs: Sequence[JobUsage],
    weights: Mapping[str, int],
    total: ResourceList,
) -> NamespaceShares:
    """Namespace deserved amounts within each queue, and every namespace's weighted share.

    ``weights`` maps namespace -> weight (missing or invalid: 1; see ``namespace_weight`` for the rule that
    reduces several ResourceQuotas to one weight). One entry per (queue, namespace) that has jobs.
    """
    usage, ns_allocated = _namespace_usage(jobs)
    ns_weight = {ns: _clean_weight(weights.get(ns, DEFAULT_NAMESPACE_WEIGHT)) for ns in ns_allocated}
    total_raw = raw(total)
    ns_dominant = {ns: dominant_share(a, total_raw) for ns, a in ns_allocated.items()}

    by_queue: dict[str, list[str]] = {}
    for queue, ns in usage:
        by_queue.setdefault(queue, []).append(ns)

    out = NamespaceShares()
    for queue in sorted(by_queue):
        members = sorted(by_queue[queue])
        keys = [(queue, ns) for ns in members]
        qd = queue_deserved.get(queue)
        requests = [usage[key][0] for key in keys]
        deserved, fills = _split_queue(qd, members, requests, [ns_weight[ns] for ns in members])
        for i, key in enumerate(keys):
            ns = key[1]
            dom_name, dom = ns_dominant[ns]
            weight = ns_weight[ns]
            req, alloc = usage[key]
            out[key] = NamespaceQuota(
                queue=queue,
                namespace=ns,
                weight=weight,
                request=trusted_resource_list(req),
                allocated=trusted_resource_list(alloc),
                deserved=trusted_resource_list(deserved[i]),
                share=dom / weight,
                dominant_share=dom,
                dominant_resource=dom_name,
                fills=fills,
                index=i,
                queue_known=qd is not None,
            )
    return out  # ordered by (queue, namespace)


_Usage = dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]]


def _namespace_usage(jobs: Sequence[JobUsage]) -> tuple[_Usage, dict[str, dict[str, int]]]:
    """Per (queue, namespace): (request, allocated) summed over its jobs; per namespace: allocated in every queue."""
    usage: _Usage = {}
    ns_allocated: dict[str, dict[str, int]] = {}
    for job in jobs:
        key = (job.queue, job.namespace)
        entry = usage.get(key)
        if entry is None:
            entry = usage[key] = ({}, {})
        req, alloc = entry
        for name, amount in raw(job.request).items():
            req[name] = req.get(name, 0) + amount
        held = raw(job.allocated)
        for name, amount in held.items():
            alloc[name] = alloc.get(name, 0) + amount
        nsa = ns_allocated.get(job.namespace)
        if nsa is None:
            nsa = ns_allocated[job.namespace] = {}
        for name, amount in held.items():
            nsa[name] = nsa.get(name, 0) + amount
    return usage, ns_allocated


def _split_queue(
    queue_deserved: ResourceList | None,
    members: list[str],
    requests: list[dict[str, int]],
    weights: list[int],
) -> tuple[list[dict[str, int]], tuple[tuple[str, FillResult], ...]]:
    """A queue's deserved split among its namespaces by weight, each capped at its request, one water-filling per
    resource; nothing when the queue is unknown."""
    deserved: list[dict[str, int]] = [{} for _ in members]
    fills: list[tuple[str, FillResult]] = []
    if queue_deserved is None:
        return deserved, ()
    qd_raw = raw(queue_deserved)
    resources: set[str] = set(qd_raw)
    for req in requests:
        resources.update(req)
    for r in sorted(resources):
        caps: list[int | None] = [req.get(r, 0) for req in requests]
        fill = water_fill(qd_raw.get(r, 0), members, weights, caps)
        fills.append((r, fill))
        for i, value in enumerate(fill.values):
            if value:
                deserved[i][r] = value
    return deserved, tuple(fills)


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
