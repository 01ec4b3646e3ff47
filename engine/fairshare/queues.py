"""Queue-tree types and helpers shared by the proportion, capacity and namespace fair-share policies.

The queue model (Volcano semantics, ``scheduling.volcano.sh/v1beta1`` Queue and PodGroup)
-----------------------------------------------------------------------------------------
A queue has a ``weight`` (proportion), a ``capability`` (hard maximum), a ``deserved`` amount (capacity: the
entitlement it may lend and reclaim), a ``guarantee`` (a floor that is never reclaimed), a ``priority`` and a
``state`` (only ``Open`` queues admit and schedule work). Jobs (podgroups) are summarised as ``JobUsage``:
what they request, what they hold, their ``minResources`` gang minimum and their phase.

From these a policy computes per queue (``QueueQuota``), all in exact integer base units:

* ``request`` / ``allocated``: the sums over the queue's jobs (and, in a hierarchy, over its subtree);
* ``inqueue``: what admitted-but-not-yet-running gangs reserve: ``(minResources - allocated)+`` of ``Inqueue``
  jobs, and of ``Running`` jobs that have at least ``minMember`` tasks allocated;
  (``reserved`` on the pages and in the API; ``reserved_jobs`` counts the jobs that reserve, ``reserving`` the
  same per resource, for the reasons' decomposition);
* ``pipelined``: what pods a session pipelined onto a node (waiting for resources being freed) request, with
  ``pipelined_pods`` their number: shown apart, counted in neither ``allocated`` nor ``inqueue``;
* ``elastic``: what jobs hold beyond their gang minimum, ``(allocated - minResources)+`` (a job without
  ``minResources`` counts entirely); enqueue admission subtracts it;
* ``real_capability``: the most the queue may ever use, ``(total - sum of all guarantees)+ + own guarantee``
  capped by the capability (proportion and flat capacity), or derived down the tree (hierarchical capacity);
* ``deserved`` and ``share`` (dominant ``allocated / deserved``), computed by the policy;
* ``borrowed``: ``(allocated - deserved)+``;
* ``lent``: the part of a queue's unused entitlement ``(deserved - allocated)+`` that other queues' borrowing
  actually consumes. Within one set of sibling queues (all participating queues in flat mode, the children of
  one parent in a hierarchy), per resource: borrowers first consume the capacity nobody is entitled to,
  ``free = (pool - sum of the siblings' deserved)+`` where ``pool`` is the cluster total (flat, and the
  children of ``root``) or the parent's deserved; what they borrow beyond that,
  ``min((sum of borrowed - free)+, sum of unused)``, is split among the lenders in proportion to their unused
  entitlement by largest remainder (name ascending breaks ties), so it adds up exactly; in whole units of a
  resource that comes whole (GPUs, pods) when the amounts are whole units (``engine.resources.split_unit``).

Borrowing and lending limits (Kueue's meaning, optional per resource, a resource left out is unlimited)
------------------------------------------------------------------------------------------------------
They are measured against a queue's *nominal* amount: its deserved raised to its guarantee (capacity) or its
guarantee (proportion, where deserved is computed). ``borrowing_limit``: realCapability is at most ``nominal +
limit`` (a binding limit is traced and named in the refusals: ``9 deserved + 1 borrowing limit - 10 allocated``).
``lending_limit``: ``keep = (nominal - limit)+`` stays the queue's own; where it is above the guarantee it replaces
the guarantee in the realCapability formulas (the siblings' realCapability shrinks by it), and while the queue does
not use it, no other queue may count on it: the capacity gates check each ancestor (flat: the cluster) against its
realCapability less the siblings' unused reserves (refusal check ``lendingLimit``). ``lent`` never passes the
limit. Without limits every value is Volcano's.

Amounts in ``capability`` and ``real_capability``: a resource *missing* from the exported list is unlimited;
an explicit ``0`` means none. Internally "unlimited" is the integer sentinel ``UNLIMITED``.

Volcano's resource comparisons
------------------------------
Volcano keeps quantities in float64 and compares them with a 0.1 epsilon on "<=" (``l < r or |l - r| < 0.1``)
but *strictly* in the quota checks (``LessEqualWithDimensionAndResourcesName``). On integer base units the
epsilon means plain ``<=``; the strict checks are plain ``>``. A missing dimension reads as ``Zero`` or
``Infinity`` depending on the call, and only for scalar resources: ``cpu`` and ``memory`` are struct fields in
Volcano and always "present" (0 when unset). The helpers below reproduce those rules on plain mappings, with
the same names, because several of Volcano's test outcomes depend on them. The resource ``pods`` is ignored by
the quota checks (every pod requests one; tasks never carry it), as in Volcano.

Results
-------
``QueueBook`` is the common base of the proportion and capacity results: a read-only mapping
``name -> QueueQuota`` (snapshots) plus the session's gates and mutators. Gates return a ``Verdict`` that is
truthy when allowed and otherwise carries ``Refusal`` reasons naming the tree node, the resource and the
numbers, e.g. ``queue q1 realCapability: insufficient memory, requested 3Gi, available 2Gi``.
``explain(name)`` lists how every value of a queue was reached.

The policies take the jobs either as ``JobUsage`` objects or as a ``JobSummary`` (``summarize_jobs``), the
per-queue sums that every computation starts with; a series of what-ifs over the same jobs sums them once.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from engine.amounts import (
    IGNORED_SCALARS,
    STANDARD_RESOURCES,
    add_into,
    dominant_share,
    exceeded_part,
    insufficient_resources,
    plain,
    raw,
    to_resource_list,
)
from engine.fairshare.verdicts import Refusal, T, TaskLike, VictimSelection
from engine.fairshare.waterfill import hamilton
from engine.objects import OPEN, QueueSpec
from engine.resources import UNLIMITED, ResourceList, format_amount, is_unlimited, split_unit
from engine.vocabulary import PodGroupPhase
from engine.wording import plural

__all__ = [
    "UNLIMITED",
    "Explanation",
    "JobSummary",
    "JobUsage",
    "QueueAccount",
    "QueueBook",
    "QueueQuota",
    "QueueTotals",
    "TraceStep",
    "job_elastic",
    "job_inqueue",
    "summarize_jobs",
]


_ONE = Fraction(1)


# ------------------------------------------------------------------------------------------------------------
# Types the rest of the project imports
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobUsage:
    """One podgroup's aggregate as a session or snapshot sees it."""

    queue: str
    namespace: str
    request: ResourceList  # sum of all its tasks' requests (pending + allocated)
    allocated: ResourceList  # sum of its allocated tasks' requests
    min_resources: ResourceList | None = None
    phase: str = PodGroupPhase.PENDING  # a PodGroupPhase
    min_member: int = 0
    allocated_tasks: int = 0
    name: str = ""
    pipelined: ResourceList | None = None  # what its pipelined pods request (counted apart, see the module docstring)
    pipelined_tasks: int = 0


@dataclass(frozen=True)
class QueueQuota:
    """The computed values of one queue (a snapshot; see the module docstring for each field)."""

    name: str
    request: ResourceList
    allocated: ResourceList
    inqueue: ResourceList
    elastic: ResourceList
    deserved: ResourceList
    guarantee: ResourceList
    capability: ResourceList  # a missing resource is unlimited
    real_capability: ResourceList  # a missing resource is unlimited
    share: float
    borrowed: ResourceList
    lent: ResourceList
    # proportion / flat capacity: the queue has jobs and takes part; hierarchy: the queue is attached to root
    participating: bool = True
    reserved_jobs: int = 0  # admitted jobs whose reservation is in ``inqueue``
    reserving: Mapping[str, int] = field(default_factory=dict)  # per resource, how many of them reserve some
    pipelined: ResourceList = field(default_factory=ResourceList)
    pipelined_pods: int = 0

    @property
    def reserved(self) -> ResourceList:
        """What admitted, not yet fully allocated jobs reserve: ``inqueue``, the amount the enqueue gate counts."""
        return self.inqueue


@dataclass(frozen=True)
class TraceStep:
    """One step in how a value was reached."""

    quantity: str  # "deserved", "realCapability", "capability", "share", ...
    resource: str | None
    value: int | float | None
    rule: str
    round: int = 0
    detail: str = ""

    def __str__(self) -> str:
        if self.value is None:
            shown = "-"
        elif isinstance(self.value, float):
            shown = f"{self.value:.6g}"
        elif is_unlimited(self.value):
            shown = "unlimited"
        else:
            shown = format_amount(self.value, self.resource or "cpu")
        where = f"[{self.resource}]" if self.resource else ""
        rnd = f", round {self.round}" if self.round else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.quantity}{where} = {shown} ({self.rule}{rnd}){detail}"


@dataclass(frozen=True)
class Explanation:
    """How every value of one queue (or namespace) was reached."""

    name: str
    steps: tuple[TraceStep, ...]

    def __str__(self) -> str:
        return "\n".join([self.name, *(f"  {s}" for s in self.steps)])

    def for_quantity(self, quantity: str, resource: str | None = None) -> list[TraceStep]:
        return [s for s in self.steps if s.quantity == quantity and (resource is None or s.resource == resource)]


# ------------------------------------------------------------------------------------------------------------
# Plain-dict helpers (hot paths use dict[str, int], never ResourceList arithmetic)
# ------------------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------------------
# Volcano's comparison functions (pkg/scheduler/api/resource_info.go), on integer base units
# ------------------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------------------
# Job accounting
# ------------------------------------------------------------------------------------------------------------


def job_inqueue(job: JobUsage) -> dict[str, int]:
    """What a gang reserves in its queue beyond what it already holds (Volcano ``GetInqueueResource``):
    ``(minResources - allocated)+`` for ``Inqueue`` jobs, and for ``Running`` jobs that have at least
    ``minMember`` tasks allocated (a finished driver of a still-running Spark job must not reserve again)."""
    mr = job.min_resources
    if mr is None:
        return {}
    if job.phase == PodGroupPhase.INQUEUE or (
        job.phase == PodGroupPhase.RUNNING and job.allocated_tasks >= job.min_member
    ):
        return exceeded_part(mr, job.allocated)
    return {}


def job_elastic(job: JobUsage) -> dict[str, int]:
    """``(allocated - minResources)+``; a job without ``minResources`` is elastic in full (Volcano
    ``GetElasticResources`` reads a missing minResources as empty)."""
    return exceeded_part(job.allocated, job.min_resources or {})


def _count_reservation(st: QueueAccount, amounts: Mapping[str, int], sign: int) -> None:
    """A job's reservation enters (``sign`` 1) or leaves (-1) ``st``: the job counts, per resource it reserves."""
    touched = False
    for name, amount in raw(amounts).items():
        if amount > 0:
            st.reserving[name] = st.reserving.get(name, 0) + sign
            touched = True
    if touched:
        st.reserved_jobs += sign


_LIMIT_LABELS = {"realCapability": "capability"}
MINUS = "\u2212"  # the minus sign of the reasons' decompositions


def decompose(st: QueueAccount, check: str, limit: int, resource: str, *, reserved: bool) -> str:
    """How a gate's ``available`` on ``resource`` was reached, in people's units, zero terms left out:
    ``32 capability - 12 allocated - 18 reserved by 3 admitted jobs`` (``reserved``: the enqueue gate, which also
    gives back what jobs hold above their minimum, ``+ 2 elastic``). When the terms add up below zero, the
    available amount is 0: ``max(0, …)``."""
    label = _LIMIT_LABELS.get(check, check)
    allocated = st.allocated.get(resource, 0)
    parts = [f"{fmt(limit, resource)} {label}"]
    bound = st.borrow_bound.get(resource)
    if check == "realCapability" and bound is not None and bound[0] + bound[1] == limit:
        # the borrowing limit is what binds: say so, with its numbers
        parts = [f"{fmt(bound[0], resource)} {bound[2]} + {fmt(bound[1], resource)} borrowing limit"]
    elif check == "deserved" and bound is not None and bound[0] + bound[1] == limit:
        # proportion: the water-filling stopped at a realCapability the borrowing limit set
        parts = [
            f"{fmt(limit, resource)} deserved (capped by {fmt(bound[0], resource)} {bound[2]} + "
            f"{fmt(bound[1], resource)} borrowing limit)"
        ]
    elif check == "realCapability" and st.kept_off.get(resource, 0) > 0 and limit == st.real_capability.get(resource):
        kept = fmt(st.kept_off[resource], resource)
        parts = [f"{fmt(limit, resource)} {label} (after {kept} kept by other queues' lending limits)"]
    rest = limit - allocated
    if allocated:
        parts.append(f"{MINUS} {fmt(allocated, resource)} allocated")
    if reserved:
        inqueue, elastic = st.inqueue.get(resource, 0), st.elastic.get(resource, 0)
        rest += elastic - inqueue
        if inqueue:
            jobs = st.reserving.get(resource, 0)
            by = f" by {plural(jobs, 'admitted job')}" if jobs > 0 else ""
            parts.append(f"{MINUS} {fmt(inqueue, resource)} reserved{by}")
        if elastic:
            parts.append(f"+ {fmt(elastic, resource)} elastic")
    text = " ".join(parts)
    return text if rest >= 0 else f"max(0, {text})"


# ------------------------------------------------------------------------------------------------------------
# Per-queue state and the common result base
# ------------------------------------------------------------------------------------------------------------

TraceEntry = tuple[str, str | None, int | float | None, str, int, tuple[object, ...]]


@dataclass(slots=True)
class QueueAccount:
    """The mutable account of one queue while its values are computed: what it holds, asks and deserves (plain
    dicts of base units). Not to be confused with ``engine.objects.QueueState``, a queue's Open/Closed state."""

    spec: QueueSpec
    participating: bool = False
    allocated: dict[str, int] = field(default_factory=dict)
    request: dict[str, int] = field(default_factory=dict)
    inqueue: dict[str, int] = field(default_factory=dict)
    elastic: dict[str, int] = field(default_factory=dict)
    reserving: dict[str, int] = field(default_factory=dict)  # per resource, how many jobs reserve some of it
    reserved_jobs: int = 0
    pipelined: dict[str, int] = field(default_factory=dict)
    pipelined_pods: int = 0
    deserved: dict[str, int] = field(default_factory=dict)
    guarantee: dict[str, int] = field(default_factory=dict)
    capability: dict[str, int] = field(default_factory=dict)  # UNLIMITED where unlimited
    real_capability: dict[str, int] = field(default_factory=dict)  # UNLIMITED where unlimited
    share: float = 0.0
    parent: str | None = None
    ancestors: tuple[str, ...] = ()  # root first, not including the queue itself
    children: list[str] = field(default_factory=list)
    trace: list[TraceEntry] = field(default_factory=list)
    # lending limit: per resource, the part of its entitlement nobody else may take, ``(nominal - limit)+``
    keep: dict[str, int] = field(default_factory=dict)
    # per resource, what its subtree keeps from every queue outside it by lending limits (Kueue's ``localQuota``
    # summed down the subtree): ``max(keep, sum of the children's withheld)``; a leaf's is its keep
    withheld: dict[str, int] = field(default_factory=dict)
    # borrowing limit: per resource whose realCapability it bounds, (nominal, limit)
    borrow_bound: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    # per resource, how much other queues' lending-limit reserves (beyond their guarantees) took off realCapability
    kept_off: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_open(self) -> bool:
        return self.spec.state == OPEN


_ACCOUNT_FIELDS = tuple(f.name for f in fields(QueueAccount))


@dataclass(slots=True)
class QueueTotals:
    """The summed usage of the jobs of one queue (its own jobs only, before any roll-up)."""

    allocated: dict[str, int] = field(default_factory=dict)
    request: dict[str, int] = field(default_factory=dict)
    inqueue: dict[str, int] = field(default_factory=dict)
    elastic: dict[str, int] = field(default_factory=dict)
    reserving: dict[str, int] = field(default_factory=dict)
    reserved_jobs: int = 0
    pipelined: dict[str, int] = field(default_factory=dict)
    pipelined_pods: int = 0
    jobs: int = 0
    first_job: tuple[str, str] = ("", "")  # the smallest (namespace, name), for messages


@dataclass(frozen=True)
class JobSummary:
    """Per-queue totals of a set of jobs (``summarize_jobs``). The policies accept it in place of the jobs,
    so a series of what-ifs that change only the queues sums the jobs once."""

    totals: Mapping[str, QueueTotals]
    job_count: int


def summarize_jobs(jobs: Iterable[JobUsage]) -> JobSummary:
    """Sum every job's allocated, request, inqueue (``job_inqueue``) and elastic (``job_elastic``) per queue.

    This is the hottest loop of a what-if (tens of thousands of jobs), so the two helpers are inlined and the
    ResourceLists' backing dicts are read directly (see ``raw``).
    """
    totals: dict[str, QueueTotals] = {}
    resource_list = ResourceList
    count = 0
    for job in jobs:
        count += 1
        queue = job.queue
        st = totals.get(queue)
        if st is None:
            st = totals[queue] = QueueTotals(first_job=(job.namespace, job.name))
        elif (job.namespace, job.name) < st.first_job:
            st.first_job = (job.namespace, job.name)
        st.jobs += 1
        rl = job.allocated
        allocated = rl._data if type(rl) is resource_list else rl
        rl = job.request
        request = rl._data if type(rl) is resource_list else rl
        acc = st.allocated
        for name, amount in allocated.items():
            acc[name] = acc.get(name, 0) + amount
        acc = st.request
        for name, amount in request.items():
            acc[name] = acc.get(name, 0) + amount
        if job.pipelined_tasks:
            st.pipelined_pods += job.pipelined_tasks
            acc = st.pipelined
            for name, amount in raw(job.pipelined or {}).items():
                acc[name] = acc.get(name, 0) + amount
        min_rl = job.min_resources
        acc = st.elastic
        if min_rl is None:
            for name, amount in allocated.items():
                if amount > 0:
                    acc[name] = acc.get(name, 0) + amount
            continue
        minimum = min_rl._data if type(min_rl) is resource_list else min_rl
        for name, amount in allocated.items():
            extra = amount - minimum.get(name, 0)
            if extra > 0:
                acc[name] = acc.get(name, 0) + extra
        phase = job.phase
        if phase == PodGroupPhase.INQUEUE or (phase == PodGroupPhase.RUNNING and job.allocated_tasks >= job.min_member):
            acc = st.inqueue
            counts = st.reserving
            reserves = False
            for name, amount in minimum.items():
                reserve = amount - allocated.get(name, 0)
                if reserve > 0:
                    acc[name] = acc.get(name, 0) + reserve
                    counts[name] = counts.get(name, 0) + 1
                    reserves = True
            if reserves:
                st.reserved_jobs += 1
    return JobSummary(totals, count)


def apply_jobs(jobs: Iterable[JobUsage] | JobSummary, states: Mapping[str, QueueAccount]) -> JobSummary:
    """Copy the job totals into the queues' states (marking them participating); returns the summary."""
    summary = jobs if isinstance(jobs, JobSummary) else summarize_jobs(jobs)
    for queue, totals in summary.totals.items():
        st = states.get(queue)
        if st is None:
            continue
        st.participating = True
        st.allocated = dict(totals.allocated)
        st.request = dict(totals.request)
        st.inqueue = dict(totals.inqueue)
        st.elastic = dict(totals.elastic)
        st.reserving = dict(totals.reserving)
        st.reserved_jobs = totals.reserved_jobs
        st.pipelined = dict(totals.pipelined)
        st.pipelined_pods = totals.pipelined_pods
    return summary


def unknown_queue_warnings(summary: JobSummary, states: Mapping[str, QueueAccount]) -> list[str]:
    return [
        f"{plural(t.jobs, 'job')} name{'s' if t.jobs == 1 else ''} queue {q!r}, which does not exist; ignored"
        for q, t in sorted(summary.totals.items())
        if q not in states
    ]


def index_specs(queues: Iterable[QueueSpec]) -> dict[str, QueueSpec]:
    """Queues by name; a name given twice is an error (a what-if must not silently drop one)."""
    out: dict[str, QueueSpec] = {}
    for spec in queues:
        if spec.name in out:
            raise ValueError(f"queue {spec.name!r} is given twice")
        out[spec.name] = spec
    return out


def collect_resources(
    total: Mapping[str, int], specs: Iterable[QueueSpec], states: Iterable[QueueAccount]
) -> tuple[str, ...]:
    """Every resource name that appears anywhere, plus cpu and memory, sorted."""
    names: set[str] = set(STANDARD_RESOURCES)
    names.update(raw(total))
    for spec in specs:
        names.update(raw(spec.capability))
        names.update(raw(spec.deserved))
        names.update(raw(spec.guarantee))
    for st in states:
        names.update(st.request)
        names.update(st.allocated)
        names.update(st.inqueue)
    return tuple(sorted(names))


def fmt(amount: int | float, resource: str) -> str:
    if isinstance(amount, float):
        return f"{amount:.6g}"
    if is_unlimited(amount):
        return "unlimited"
    return format_amount(amount, resource)


def borrowed_and_lent(
    members: Sequence[QueueAccount],
    pool: Mapping[str, int],
    *,
    lending_limits: bool = True,
    kept: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Borrowed and lent amounts within one sibling set (see the module docstring for the definition); with
    ``lending_limits`` a member lends at most its lending limit of its unused deserved, and, where ``kept`` gives a
    member's unused lending-limit reserves in its subtree (a hierarchy), nothing of those."""
    borrowed: dict[str, dict[str, int]] = {m.name: {} for m in members}
    lent: dict[str, dict[str, int]] = {m.name: {} for m in members}
    names: set[str] = set()
    for m in members:
        names.update(m.deserved)
        names.update(m.allocated)
    ordered = sorted(members, key=lambda m: m.name)
    for r in sorted(names):
        if r in IGNORED_SCALARS:
            continue
        sum_borrowed = sum_deserved = sum_unused = 0
        unused: list[int] = []
        for m in ordered:
            d = m.deserved.get(r, 0)
            a = m.allocated.get(r, 0)
            sum_deserved += d
            if a > d:
                borrowed[m.name][r] = a - d
                sum_borrowed += a - d
                unused.append(0)
            else:
                # a lending limit bounds what of the unused part others may take
                lendable = d - a
                if lending_limits and kept is not None and m.name in kept:
                    lendable = max(0, lendable - kept[m.name].get(r, 0))
                if lending_limits and r in m.spec.lending_limit:
                    lendable = min(lendable, m.spec.lending_limit[r])
                unused.append(lendable)
                sum_unused += lendable
        if not sum_borrowed or not sum_unused:
            continue
        free = max(0, pool.get(r, 0) - sum_deserved)
        consumed = min(max(0, sum_borrowed - free), sum_unused)
        if consumed:
            parts = _split_lent(r, consumed, unused, [m.name for m in ordered])
            for m, part in zip(ordered, parts, strict=True):
                if part:
                    lent[m.name][r] = part
    return borrowed, lent


def _split_lent(resource: str, consumed: int, unused: list[int], names: list[str]) -> list[int]:
    """``consumed`` split among the lenders by largest remainder in proportion to ``unused``: in whole units of a
    resource that comes whole (a GPU) when the amounts are whole units, so no lender is said to lend 0.4 GPUs
    (each part is still at most its lender's unused amount); in base units otherwise (fractional entitlements)."""
    unit = split_unit(resource)
    if unit > 1 and consumed % unit == 0 and all(u % unit == 0 for u in unused):
        return [part * unit for part in hamilton(consumed // unit, [u // unit for u in unused], names)]
    return hamilton(consumed, unused, names)


_RULES: dict[str, str] = {
    # realCapability
    "rc.cluster": "(cluster {0} - all queues' guarantees {1})+ + own guarantee {2}",
    "rc.capability": "capped by capability {0}",
    "rc.cluster.kept": "(cluster {0} - all queues' guarantees and lending-limit reserves {1})+ + own reserve {2}",
    "rc.tree.kept": "(parent {0} realCapability {1} - siblings' guarantees and lending-limit reserves {2})+ "
    "+ own reserve {3}",
    "rc.borrowing.deserved": "capped by deserved {0} + borrowing limit {1}",
    "rc.borrowing.guarantee": "capped by guarantee {0} + borrowing limit {1}",
    "rc.tree": "(parent {0} realCapability {1} - siblings' guarantees {2})+ + own guarantee {3}",
    "rc.root": "root: its capability (unlimited where unset; not limited by the cluster size)",
    "rc.detached": "not attached to root: its capability",
    # capability
    "cap.spec": "set on the queue",
    "cap.nonpositive": "cpu/memory <= 0 means unlimited (Volcano)",
    "cap.inherit": "not set: inherited from parent {0}",
    "cap.root": "not set on root: unlimited",
    # deserved
    "des.fill": "weight {0} of {1} sharing {2} (largest remainder)",
    "des.cap.request": "stopped at its request {0}",
    "des.cap.rc": "stopped at its realCapability {0}",
    "des.floor": "held at its guarantee {0}",
    "des.absent": "no jobs: takes no part in the share",
    "des.spec": "deserved set on the queue: {0}",
    "des.capped": "capped by realCapability {0}",
    "des.raised": "raised to guarantee {0}",
    "des.sum": "root: sum of its children's deserved",
    # namespaces
    "ns.fill": "namespace weight {0} of {1} sharing {2} of the queue's deserved (largest remainder)",
    "ns.noqueue": "queue {0} has no deserved in the given mapping",
    "ns.share": "namespace-wide dominant share {1} on {0}, divided by weight {2}",
    # guarantee
    "g.sum": "root: sum of its children's guarantees",
    # share
    "share.dominant": "dominant allocated/deserved",
    "share.none": "nothing deserved",
    "share.besteffort": "no deserved: best-effort queue, share fixed at 1 (capacity)",
}


def set_keep(st: QueueAccount, nominal: Mapping[str, int]) -> None:
    """The lending limit's reserve (Kueue's meaning): per resource the limit names, ``(nominal - lendingLimit)+``
    of the queue's entitlement stays its own, unused or not; ``nominal`` is what the policy measures the limits
    against (capacity: deserved raised to the guarantee; proportion: the guarantee, which is never lent anyway)."""
    nr = raw(nominal)
    st.keep = {r: max(0, nr.get(r, 0) - v) for r, v in raw(st.spec.lending_limit).items()}
    st.withheld = {r: k for r, k in st.keep.items() if k > 0}


def reserve_of(st: QueueAccount, resource: str) -> int:
    """What no queue outside its subtree may count on: the guarantee, or what the lending limits in its subtree keep
    (``withheld``: its own reserve, or its children's together) when that is larger."""
    g = st.guarantee.get(resource, 0)
    k = st.withheld.get(resource, 0)
    return k if k > g else g


def total_reserve(states: Iterable[QueueAccount]) -> dict[str, int]:
    """Per resource, the sum of ``reserve_of`` over ``states`` (the guarantees when no queue has a lending limit)."""
    out: dict[str, int] = {}
    for st in states:
        for r in set(st.guarantee) | set(st.withheld):
            out[r] = out.get(r, 0) + reserve_of(st, r)
    return out


def note_kept_off(members: Iterable[QueueAccount]) -> None:
    """Per member and resource, how much the other members' lending-limit reserves beyond their guarantees took off
    its realCapability (``kept_off``, for the reasons' wording)."""
    members = list(members)
    extra: dict[str, int] = {}
    for st in members:
        for r in st.withheld:
            more = reserve_of(st, r) - st.guarantee.get(r, 0)
            if more > 0:
                extra[r] = extra.get(r, 0) + more
    for st in members:
        for r, x in extra.items():
            own = reserve_of(st, r) - st.guarantee.get(r, 0)
            if x - own > 0:
                st.kept_off[r] = x - own


def cap_by_borrowing(
    st: QueueAccount, resource: str, value: int, nominal: Mapping[str, int], label: str = "deserved"
) -> int:
    """``value`` (a realCapability) at most ``nominal + borrowingLimit`` when the queue has a borrowing limit on
    ``resource``; a binding limit is traced and remembered for the reasons' wording (``borrow_bound``). ``label``
    names the nominal amount: ``deserved`` (capacity) or ``guarantee`` (proportion)."""
    limits = raw(st.spec.borrowing_limit)
    if resource not in limits:
        return value
    n = raw(nominal).get(resource, 0)
    cap = n + limits[resource]
    if cap < value:
        st.trace.append(("realCapability", resource, cap, f"rc.borrowing.{label}", 0, (n, limits[resource])))
        st.borrow_bound[resource] = (n, limits[resource], label)
        return cap
    return value


def set_flat_limits(
    st: QueueAccount,
    total: Mapping[str, int],
    total_guarantee: Mapping[str, int],
    resources: Iterable[str],
    nominal: Mapping[str, int] | None = None,
    *,
    kept: bool = False,
    label: str = "deserved",
) -> None:
    """Capability and realCapability of a queue outside a hierarchy (proportion, flat capacity).

    capability: a resource the spec leaves out is unlimited; cpu or memory set to <= 0 is unlimited too
    (Volcano replaces them with MaxFloat64); any other explicit value, 0 included, is a limit.
    realCapability = (total - guarantees of *all* queues)+ + own guarantee, capped by the capability. A resource
    the cluster does not have is 0 here: Volcano reads a missing dimension of realCapability as 0 in the
    quota checks (it keeps an uncapped deserved for it, which changes no outcome since nothing can use it).

    Borrowing and lending limits: ``total_guarantee`` is then the sum of every queue's ``reserve_of`` (``kept``
    says some queue has a lending limit), the queue's own reserve replaces its guarantee, and the result is at
    most ``nominal + borrowingLimit`` (``cap_by_borrowing``).
    """
    spec_cap = raw(st.spec.capability)
    tr, tgr = raw(total), raw(total_guarantee)
    cap: dict[str, int] = {}
    rc: dict[str, int] = {}
    trace = st.trace
    rule = "rc.cluster.kept" if kept else "rc.cluster"
    for r in resources:
        limit = spec_cap.get(r)
        if limit is None:
            cap[r] = UNLIMITED
        elif r in STANDARD_RESOURCES and limit <= 0:
            cap[r] = UNLIMITED
            trace.append(("capability", r, UNLIMITED, "cap.nonpositive", 0, ()))
        else:
            cap[r] = limit
            trace.append(("capability", r, limit, "cap.spec", 0, ()))
        t, tg, g = tr.get(r, 0), tgr.get(r, 0), reserve_of(st, r)
        base = max(0, t - tg) + g
        value = min(base, cap[r])

        trace.append(("realCapability", r, base, rule, 0, (t, tg, g)))
        if value < base:
            trace.append(("realCapability", r, value, "rc.capability", 0, (cap[r],)))
        if nominal is not None:
            value = cap_by_borrowing(st, r, value, nominal, label)
        rc[r] = value
    st.capability = cap
    st.real_capability = rc


def _copy_account(st: QueueAccount) -> QueueAccount:
    """``st`` with copies of its mutable parts: its dicts hold ints and its lists strings or tuples, so one level
    is the whole depth."""
    values: dict[str, Any] = {}
    for name in _ACCOUNT_FIELDS:
        value = getattr(st, name)
        if isinstance(value, dict):
            value = dict(value)
        elif isinstance(value, list):
            value = list(value)
        values[name] = value
    return QueueAccount(**values)


def render_trace(entry: TraceEntry) -> TraceStep:
    """Turn a compact trace entry into a ``TraceStep`` (int arguments become quantities of the resource)."""
    quantity, resource, value, rule, rnd, args = entry
    template = _RULES.get(rule, "{0}" if args else rule)
    shown = [fmt(a, resource or "cpu") if isinstance(a, int) and not isinstance(a, bool) else a for a in args]
    return TraceStep(quantity, resource, value, rule, rnd, template.format(*shown))


class QueueBook(Mapping[str, QueueQuota]):
    """Common base of the proportion and capacity results: ``result[name] -> QueueQuota`` and the gates.

    The gates read and the mutators change the per-queue state, so a session can keep the values current as
    it allocates (``on_allocate`` / ``on_deallocate``) and admits jobs (``on_enqueued``). Snapshots returned
    by ``result[name]`` are recomputed after a change.
    """

    policy = "queues"
    honours_lending_limits = True  # proportion: False (a guarantee is never lent; deserved is computed)

    def __init__(
        self,
        states: dict[str, QueueAccount],
        total: Mapping[str, int],
        resources: tuple[str, ...],
        *,
        hierarchy: bool = False,
        problems: Sequence[str] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        self._states = states
        self._names = tuple(sorted(states))
        self.total = ResourceList(dict(raw(total)))
        self.resources = resources
        self.hierarchy = hierarchy
        self.problems: tuple[str, ...] = tuple(problems)
        self.warnings: tuple[str, ...] = tuple(warnings)
        self._snapshots: dict[str, QueueQuota] = {}  # built on first read, per queue
        self._flows: tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]] | None = None
        self._chains: dict[str, tuple[QueueAccount, ...]] = {}  # built on first use, per queue
        # fairness over time (``engine.usage``): each queue's clamped past-usage ratio; empty when it is off
        self.past_ratios: dict[str, Fraction] = {}
        # the queue order's steps (capacity), each dropped when its queue's share moves; for these ratios
        self._steps: dict[str, tuple[str, float, int, float]] = {}
        self._keys: dict[str, Any] = {}  # and the keys made of them (capacity's ``queue_order_key``)
        self._steps_ratios: dict[str, Fraction] | None = None

    def past_ratio(self, queue: str) -> Fraction:
        """The queue's clamped past-usage ratio (1 without fairness over time or a record): the queue orders'
        last tie-break, less past usage first, so reclaim (the reverse order) takes from more past usage first."""
        return self.past_ratios.get(queue, _ONE)

    def __deepcopy__(self, memo: dict[int, Any]) -> QueueBook:
        """A copy whose mutable state is its own (a session copies the values it opened with before moving them).

        Each queue's account gets fresh dicts of its amounts; what no mutator changes (the specs, the totals, the
        resource names, the trace entries, which are tuples) is shared, and the caches start empty: the generic
        deep copy walked all of that too and took a tenth of a 50,000-pod session's opening."""
        clone = copy.copy(self)
        memo[id(self)] = clone
        clone._states = {name: _copy_account(st) for name, st in self._states.items()}
        clone._snapshots = {}
        clone._flows = None
        clone._chains = {}
        clone._steps, clone._keys = {}, {}
        return clone

    # -- mapping ----------------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> QueueQuota:
        return self._snapshot_of(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._states

    @property
    def ready_to_schedule(self) -> bool:
        """False when the tree is inconsistent: every gate then refuses (see ``problems``)."""
        return not self.problems

    def state(self, name: str) -> QueueAccount:
        """The live state of one queue (read-only use)."""
        return self._states[name]

    def spec(self, name: str) -> QueueSpec:
        return self._states[name].spec

    # -- snapshots ----------------------------------------------------------------------------------------------
    def _sibling_sets(self) -> list[tuple[list[QueueAccount], Mapping[str, int]]]:
        members = [st for st in self._states.values() if st.participating]
        return [(members, raw(self.total))]

    def _borrowed_and_lent(self) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        if self._flows is None:
            borrowed: dict[str, dict[str, int]] = {}
            lent: dict[str, dict[str, int]] = {}
            for members, pool in self._sibling_sets():
                b, lt = borrowed_and_lent(
                    members, pool, lending_limits=self.honours_lending_limits, kept=self.unused_kept(members)
                )
                borrowed.update(b)
                lent.update(lt)
            self._flows = (borrowed, lent)
        return self._flows

    def _snapshot_of(self, name: str) -> QueueQuota:
        snap = self._snapshots.get(name)
        if snap is None:
            st = self._states[name]  # KeyError for an unknown queue, as a mapping should
            borrowed, lent = self._borrowed_and_lent()
            snap = self._snapshots[name] = self._snapshot(st, borrowed.get(name, {}), lent.get(name, {}))
        return snap

    def unused_kept(self, members: Iterable[QueueAccount]) -> dict[str, dict[str, int]] | None:
        """Per member, what the lending limits in its subtree keep and its subtree leaves unused (None: the members'
        own lending limits say it all, as outside a hierarchy)."""
        return None

    def kept_below(self, name: str) -> dict[str, int]:
        """What the lending limits below ``name`` keep and leave unused, per resource (nothing outside a
        hierarchy): ``name``'s children may use it, no one else."""
        return {}

    def _export_deserved(self, st: QueueAccount) -> ResourceList:
        return to_resource_list(st.deserved)

    def plain_values(self, name: str) -> dict[str, Any]:
        """``self[name]``'s amounts as plain dictionaries without zeros or unlimited entries, plus its share and
        counts (what a what-if compares), read from the queue's account without building its ``QueueQuota``."""
        st = self._states[name]
        borrowed, lent = self._borrowed_and_lent()
        return {
            "request": plain(st.request),
            "allocated": plain(st.allocated),
            "deserved": plain(st.deserved),
            "guarantee": plain(st.guarantee),
            "real_capability": plain(st.real_capability),
            "share": round(st.share, 6),
            "borrowed": plain(borrowed.get(name, {})),
            "lent": plain(lent.get(name, {})),
            "reserved": plain(st.inqueue),
            "reserved_jobs": st.reserved_jobs,
            "pipelined": plain(st.pipelined),
            "pipelined_pods": st.pipelined_pods,
        }

    def flows_of(self, name: str) -> tuple[ResourceList, ResourceList, ResourceList, ResourceList]:
        """``self[name]``'s allocated, deserved, borrowed and lent as its ``QueueQuota`` has them, without building its
        other values (a replay's report reads these four of every queue in every session's values)."""
        snap = self._snapshots.get(name)
        if snap is not None:
            return snap.allocated, snap.deserved, snap.borrowed, snap.lent
        st = self._states[name]
        borrowed, lent = self._borrowed_and_lent()
        return (
            to_resource_list(st.allocated),
            self._export_deserved(st),
            to_resource_list(borrowed.get(name, {})),
            to_resource_list(lent.get(name, {})),
        )

    def sample_inputs(self, name: str) -> tuple[object, ...]:
        """What ``self[name]``'s request, allocated, deserved, borrowed and lent are exported from, without building
        its ``QueueQuota``: the book's class (which exports deserved) and the queue's raw amounts (read-only; a
        caller that keeps them copies them). Equal inputs export equal values, so a writer of quota samples can skip
        a queue whose inputs did not change since its last sample."""
        st = self._states[name]
        borrowed, lent = self._borrowed_and_lent()
        return (type(self), st.request, st.allocated, st.deserved, borrowed.get(name, {}), lent.get(name, {}))

    def deserved_of(self, name: str) -> ResourceList:
        """``self[name].deserved`` without building the queue's other values (namespace shares need only this)."""
        snap = self._snapshots.get(name)
        return snap.deserved if snap is not None else self._export_deserved(self._states[name])

    def _snapshot(self, st: QueueAccount, borrowed: dict[str, int], lent: dict[str, int]) -> QueueQuota:
        return QueueQuota(
            name=st.name,
            request=to_resource_list(st.request),
            allocated=to_resource_list(st.allocated),
            inqueue=to_resource_list(st.inqueue),
            elastic=to_resource_list(st.elastic),
            deserved=self._export_deserved(st),
            guarantee=to_resource_list(st.guarantee),
            capability=to_resource_list(st.capability),
            real_capability=to_resource_list(st.real_capability),
            share=st.share,
            borrowed=to_resource_list(borrowed),
            lent=to_resource_list(lent),
            participating=st.participating,
            reserved_jobs=st.reserved_jobs,
            reserving={k: v for k, v in st.reserving.items() if v > 0},
            pipelined=to_resource_list(st.pipelined),
            pipelined_pods=st.pipelined_pods,
        )

    def _changed(self) -> None:
        self._snapshots = {}
        self._flows = None

    # -- explanations -------------------------------------------------------------------------------------------
    def explain(self, name: str) -> Explanation:
        """Every step that produced this queue's values (realCapability, deserved, share, borrowed, lent)."""
        st = self._states[name]
        steps = [render_trace(e) for e in st.trace]
        share_name, _ = self._share_basis(st)
        if self._best_effort(st):
            steps.append(TraceStep("share", None, st.share, "share.besteffort", 0, _RULES["share.besteffort"]))
        elif share_name:
            steps.append(
                TraceStep(
                    "share",
                    None,
                    st.share,
                    "share.dominant",
                    0,
                    f"dominant allocated/deserved, on {share_name}: "
                    f"{fmt(st.allocated.get(share_name, 0), share_name)} / "
                    f"{fmt(st.deserved.get(share_name, 0), share_name)}",
                )
            )
        else:
            steps.append(TraceStep("share", None, st.share, "share.none", 0, _RULES["share.none"]))
        snap = self[name]
        for r, v in snap.borrowed.items():
            steps.append(TraceStep("borrowed", r, v, "borrowed", 0, "(allocated - deserved)+"))
        for r, v in snap.lent.items():
            steps.append(
                TraceStep(
                    "lent", r, v, "lent", 0, "unused deserved consumed by siblings' borrowing (largest remainder)"
                )
            )
        return Explanation(name, tuple(steps))

    # -- shares ---------------------------------------------------------------------------------------------------
    def _best_effort(self, st: QueueAccount) -> bool:
        return False

    def _share_basis(self, st: QueueAccount) -> tuple[str, float]:
        # Volcano ranges over deserved.ResourceNames(): names with a value > 0, pods included
        return dominant_share(st.allocated, st.deserved)

    def _update_share(self, st: QueueAccount) -> None:
        st.share = 1.0 if self._best_effort(st) else self._share_basis(st)[1]
        self._steps.pop(st.name, None)
        self._keys.clear()

    # -- mutators ------------------------------------------------------------------------------------------------
    def chain(self, name: str) -> tuple[QueueAccount, ...]:
        """The queue, then (hierarchy) its ancestors up to root: the nodes an allocation or a reservation in
        ``name`` moves, and the nodes a hierarchical gate checks."""
        chain = self._chains.get(name)
        if chain is None:
            st = self._states[name]
            chain = (st, *(self._states[a] for a in reversed(st.ancestors))) if self.hierarchy else (st,)
            self._chains[name] = chain
        return chain

    def on_allocate(self, queue: str, request: Mapping[str, int]) -> None:
        """A task of ``queue`` was allocated (Volcano's AllocateFunc event): allocated and share move."""
        for st in self.chain(queue):
            add_into(st.allocated, request)
            self._update_share(st)
        self._changed()

    def on_deallocate(self, queue: str, request: Mapping[str, int]) -> None:
        """A task of ``queue`` was evicted or its allocation discarded (DeallocateFunc)."""
        for st in self.chain(queue):
            add_into(st.allocated, request, -1)
            self._update_share(st)
        self._changed()

    def on_enqueued(self, job: JobUsage) -> None:
        """A job was admitted (JobEnqueued, called only after every plugin permitted): its ``minResources``
        is reserved in ``inqueue`` so later jobs of the same enqueue pass see it."""
        if job.min_resources is None or job.queue not in self._states:
            return
        for st in self.chain(job.queue):
            add_into(st.inqueue, job.min_resources)
            _count_reservation(st, job.min_resources, 1)
        self._changed()

    def on_dequeued(self, job: JobUsage) -> None:
        """Undo ``on_enqueued`` (a statement discarded, or a reservation released): its ``minResources`` leaves
        ``inqueue`` on the queue and (hierarchy) every ancestor."""
        if job.min_resources is None or job.queue not in self._states:
            return
        for st in self.chain(job.queue):
            add_into(st.inqueue, job.min_resources, -1)
            _count_reservation(st, job.min_resources, -1)
        self._changed()

    # -- ordering ----------------------------------------------------------------------------------------------
    def compare_queues(self, left: str, right: str) -> int:
        """Volcano's QueueOrderFn: negative when ``left`` goes first, 0 when this policy has no preference."""
        raise NotImplementedError

    def queue_order_key(self, name: str) -> Any:
        """A sort key wrapping ``compare_queues`` (ties keep the input order: ``sorted`` is stable)."""
        return functools.cmp_to_key(self.compare_queues)(name)

    def sorted_queues(self, names: Iterable[str] | None = None) -> list[str]:
        """Queues in scheduling order; ties (which Volcano breaks by creation time) go by name."""
        pool = sorted(self._names if names is None else names)
        return sorted(pool, key=self.queue_order_key)

    def victim_queue_order(self, preemptor: str, left: str, right: str) -> int:
        """Volcano's VictimQueueOrderFn; 0 (no preference) unless a policy registers one."""
        return 0

    def _allocation_limits(self, st: QueueAccount) -> Sequence[tuple[QueueAccount, Mapping[str, int]]] | None:
        """The nodes ``allocatable`` checks for ``st`` and the limit of each; None when it refuses before any
        check (a closed queue, say)."""
        raise NotImplementedError

    def fits(self, queue: str, request: Mapping[str, int]) -> bool:
        """True when ``allocatable(queue, request)`` allows, found without building a verdict (the session
        asks this for every task it places); False when it may refuse, and then ``allocatable`` says why.

        The test: ``allocated + request <= limit`` on every requested resource but pods, for every node of
        ``_allocation_limits``; a resource the limit does not name counts as 0 here, so such a request falls
        back to ``allocatable``.
        """
        st = self._states.get(queue)
        if st is None:
            return False
        checks = self._allocation_limits(st)
        if checks is None:
            return False
        for node, limit in checks:
            allocated = node.allocated
            for r, v in request.items():
                if r != "pods" and allocated.get(r, 0) + v > limit.get(r, 0):
                    return False
        return True

    # -- helpers for gates ------------------------------------------------------------------------------------
    def _lookup(self, queue: str) -> QueueAccount | Refusal:
        st = self._states.get(queue)
        if st is None:
            return Refusal(queue, "unknown", message="no such queue in this computation")
        return st

    @staticmethod
    def _closed(st: QueueAccount) -> Refusal:
        return Refusal(st.name, "state", message=f"queue is {st.spec.state or 'not Open'}, not Open")

    @staticmethod
    def _quota_refusals(
        node: str,
        check: str,
        base: Mapping[str, int],
        limit: Mapping[str, int],
        request: Mapping[str, int],
        st: QueueAccount | None = None,
        *,
        reserved: bool = False,
    ) -> list[Refusal]:
        """Refusals for ``base + request <= limit`` (strict, on the request's dimensions). With the queue's state
        ``st``, each refusal says how its ``available`` was reached (``decompose``): ``base`` is then ``st``'s
        allocated, plus its inqueue minus its elastic when ``reserved`` (the enqueue gate)."""
        br, rr, lr = raw(base), raw(request), raw(limit)
        used = {n: br.get(n, 0) + rr.get(n, 0) for n in set(br) | set(rr)}
        out = []
        for r in insufficient_resources(used, limit, request):
            available = max(0, lr.get(r, 0) - br.get(r, 0))
            text = "" if st is None else decompose(st, check, lr.get(r, 0), r, reserved=reserved)
            out.append(Refusal(node, check, r, rr.get(r, 0), available, breakdown=text))
        return out

    def _selection(
        self,
        reclaimer: TaskLike | None,
        reclaimees: Sequence[T],
        decide: Callable[[T, dict[str, dict[str, int]]], str | None],
    ) -> VictimSelection[T]:
        """Walk reclaimees in order with per-queue running ``allocated`` copies; ``decide`` returns None to
        accept (and must subtract the request itself) or the reason for skipping."""
        victims: list[T] = []
        skipped: list[tuple[T, str]] = []
        allocations: dict[str, dict[str, int]] = {}
        for task in reclaimees:
            st = self._states.get(task.queue)
            if st is None:
                skipped.append((task, f"queue {task.queue} is not in this computation"))
                continue
            if not st.spec.reclaimable:
                # the reclaim action's own filter (reclaimable: false), applied here too for what-if callers
                skipped.append((task, f"queue {task.queue} is not reclaimable"))
                continue
            reason = decide(task, allocations)
            if reason is None:
                victims.append(task)
            else:
                skipped.append((task, reason))
        return VictimSelection(tuple(victims), tuple(skipped))
