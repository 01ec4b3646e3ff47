"""The fairness audit: across both trees, who is starved, who borrows, who lends, and where guarantees sit idle.

The question admins ask and no peer's UI answers ("across the hierarchy, who is over quota, borrowing, or starved?",
"where can I reclaim GPUs this week?"), answered from the values every page shows (``engine.values``) and the
history the sessions record (one sample per tree node per session):

* **starved**: a node with waiting demand (request above what it holds) while it holds less than it is entitled to
  now (a queue's deserved, a quota group's min), with the siblings under the same parent that borrow that
  resource now: who holds what the starved node is owed;
* **lending**: every node that lends now (its entitlement used by others) and what it could lend now
  (``engine.lending``, Kueue #12282's definition);
* **idle guarantees**: a queue's guarantee or a quota group's min against what the node used over the window: the
  peak use is what it needed, the rest could be freed without ever having squeezed it; ranked, per resource, by
  what could be freed, GPUs first;
* **usage over time**: each node's average use over the window against its average entitlement (deserved /
  runtime), time-weighted across the samples (each sample stands until the next one), so a node that held twice
  its share all week reads 2.0;
* **waiting to start**: how long the jobs submitted in the window waited for their first pod to start, per node
  (``engine.waits``: a job counts for its queue, its quota group and their ancestors; the roots have no row, as in
  the other tables), longest waits first; and each of those nodes' waits hour by hour (a window of up to two days)
  or day by day, by when the jobs were submitted: did a change help? And the same per submitter (the user who
  submitted each job, or its namespace), with the GPU-hours its jobs' pods held: who uses the cluster most.

Amounts are in base units (milli-units, bytes), as every value of ``engine.values``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.lending import lendable_groups, lendable_queues
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, ROOT_QUEUE, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import ResourceList, is_unlimited
from engine.values import QuotaValues
from engine.waits import (
    QUEUE,
    QUOTA,
    JobWait,
    NodeWaits,
    TreeParents,
    WaitPoint,
    node_waits,
    submitter_waits,
    waits_by_period,
)

__all__ = [
    "QUEUE",
    "QUOTA",
    "Audit",
    "IdleGuarantee",
    "JobWait",
    "Lending",
    "NodeWaits",
    "Sample",
    "Starved",
    "UsageShare",
    "WaitPoint",
    "audit",
]

TREND_HOUR, TREND_DAY = 3600.0, 86400.0
_TREE_ROOTS = {(QUEUE, ROOT_QUEUE), (QUOTA, ROOT_GROUP), (QUOTA, SYSTEM_GROUP), (QUOTA, DEFAULT_GROUP)}


@dataclass(frozen=True, slots=True)
class Sample:
    """One recorded session's figures of a node: when (epoch seconds), what it used, what it was entitled to."""

    time: float
    used: Mapping[str, int]
    entitled: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Starved:
    tree: str  # "queue" | "quota"
    name: str
    parent: str
    resource: str
    waiting: int  # request - held
    held: int
    entitled: int  # deserved (queue) or min (quota group)
    borrowers: tuple[tuple[str, int], ...]  # siblings borrowing the resource now: (name, borrowed), most first

    @property
    def shortfall(self) -> int:
        return self.entitled - self.held


@dataclass(frozen=True, slots=True)
class Lending:
    tree: str
    name: str
    resource: str
    lent: int
    lendable: int


@dataclass(frozen=True, slots=True)
class IdleGuarantee:
    tree: str
    name: str
    resource: str
    guaranteed: int  # guarantee (queue) or min (quota group)
    average: int  # time-weighted average use over the covered window
    peak: int
    covered: float  # seconds of the window the samples cover

    @property
    def freeable(self) -> int:
        return max(0, self.guaranteed - self.peak)


@dataclass(frozen=True, slots=True)
class UsageShare:
    tree: str
    name: str
    resource: str
    average: int
    entitled: int  # time-weighted average entitlement
    covered: float

    @property
    def ratio(self) -> float | None:
        return None if self.entitled <= 0 else self.average / self.entitled


@dataclass(frozen=True, slots=True)
class Audit:
    window: float  # seconds
    starved: tuple[Starved, ...]
    lending: tuple[Lending, ...]
    idle: tuple[IdleGuarantee, ...]
    usage: tuple[UsageShare, ...]
    waits: tuple[NodeWaits, ...] = ()
    # per node of ``waits``, its waits hour by hour (a window of up to two days) or day by day (``engine.waits``)
    trend: Mapping[tuple[str, str], tuple[WaitPoint, ...]] = dataclasses.field(default_factory=dict)
    # per submitter of the jobs, their waits and GPU-hours, the most GPU-hours first (``engine.waits``)
    submitters: tuple[NodeWaits, ...] = ()
    jobs: tuple[JobWait, ...] = ()  # the window's jobs the figures above count (``scoped`` counts a subset again)
    end: float = 0.0  # the window's end (epoch seconds)

    def scoped(self, jobs: Iterable[JobWait]) -> tuple[NodeWaits, ...]:
        """The submitters' figures of ``jobs`` only (some of ``self.jobs``: those of the nodes a reader may read)."""
        return tuple(submitter_waits(jobs, self.end))


def _resource_rank(resource: str) -> tuple[int, str]:
    """GPUs first (the scarcest thing to reclaim), then cpu, memory, the rest by name."""
    if "gpu" in resource:
        return (0, resource)
    return ({"cpu": 1, "memory": 2}.get(resource, 3), resource)


def _over_window(
    samples: Sequence[Sample], start: float, end: float
) -> tuple[dict[str, int], dict[str, int], dict[str, int], float]:
    """Time-weighted averages of used and entitled over [start, end], each sample standing until the next one (the
    last one before ``start`` is the state at the start), the peak use while a sample stood in the window, and the
    seconds the samples cover (a node recorded only for the last hour covers an hour)."""
    used: dict[str, float] = {}
    entitled: dict[str, float] = {}
    peak: dict[str, int] = {}
    covered = 0.0
    ordered = sorted(samples, key=lambda s: s.time)
    for i, s in enumerate(ordered):
        until = ordered[i + 1].time if i + 1 < len(ordered) else end
        lo, hi = max(s.time, start), min(until, end)
        if hi <= lo:
            continue
        span = hi - lo
        covered += span
        for r, v in s.used.items():
            used[r] = used.get(r, 0.0) + v * span
            peak[r] = max(peak.get(r, 0), v)
        for r, v in s.entitled.items():
            entitled[r] = entitled.get(r, 0.0) + v * span
    if covered <= 0:
        return {}, {}, {}, 0.0
    return (
        {r: round(v / covered) for r, v in used.items()},
        {r: round(v / covered) for r, v in entitled.items()},
        peak,
        covered,
    )


def audit(
    values: QuotaValues,
    groups: Mapping[str, QuotaGroupSpec],
    history: Mapping[tuple[str, str], Sequence[Sample]],
    *,
    now: float,
    window: float,
    jobs: Iterable[JobWait] = (),
    queue_parents: Mapping[str, str | None] | None = None,
) -> Audit:
    """The audit of ``values`` (now) and ``history`` (per (tree, name), the node's samples) over ``window``
    seconds before ``now``. A sample older than the window counts only as the state at its start (the last one
    before it; older ones stand for nothing in the window). ``jobs``: those submitted in the window, for the waits
    (``queue_parents``: each queue's parent; the quota groups' come from ``groups``)."""
    start = now - window
    starved = _starved_queues(values) + _starved_groups(values, groups)
    lending = _lending(values, groups)
    idle, usage = _over_history(values, groups, history, start, now)
    starved.sort(key=lambda s: (_resource_rank(s.resource), -s.waiting, s.tree, s.name))
    idle.sort(key=lambda i: (_resource_rank(i.resource), -i.freeable, i.tree, i.name))
    usage.sort(key=lambda u: (_resource_rank(u.resource), -(u.ratio or 0.0), u.tree, u.name))
    parents = TreeParents(queue_parents or {}, {name: spec.parent for name, spec in groups.items()})
    listed = tuple(jobs)
    waits, trend = _waits(list(listed), parents, now, window)
    submitters = tuple(submitter_waits(listed, now))
    return Audit(
        window, tuple(starved), tuple(lending), tuple(idle), tuple(usage), tuple(waits), trend, submitters, listed, now
    )


def _waits(
    jobs: list[JobWait], parents: TreeParents, now: float, window: float
) -> tuple[list[NodeWaits], dict[tuple[str, str], tuple[WaitPoint, ...]]]:
    """The nodes' waits over the window, longest first, and each one's hour by hour or day by day."""
    waits = [  # the nodes of the trees now (a job of a queue deleted since counts for no row), but their roots
        w
        for key, w in node_waits(jobs, parents, now).items()
        if key not in _TREE_ROOTS and key[1] in parents.tree(key[0])
    ]
    waits.sort(key=lambda w: (w.p95 is None, -(w.p95 or 0.0), -(w.longest or 0.0), w.tree, w.name))
    step = TREND_HOUR if window <= 2 * TREND_DAY else TREND_DAY
    by_period = waits_by_period(jobs, parents, now, step, [(w.tree, w.name) for w in waits])
    return waits, {node: tuple(points) for node, points in by_period.items()}


def _starved_queues(values: QuotaValues) -> list[Starved]:
    """The queues holding less of a resource than they deserve while more of it waits (held: allocated and in
    queue), each with the siblings that borrow it now."""
    starved: list[Starved] = []
    book = values.queues
    parents = {name: book.spec(name).parent or "" for name in book}
    for name in sorted(book):
        if (QUEUE, name) in _TREE_ROOTS:
            continue  # the whole cluster: what it lacks is capacity, not a share
        q = book[name]
        held = ResourceList({r: q.allocated.get(r, 0) + q.inqueue.get(r, 0) for r in set(q.allocated) | set(q.inqueue)})
        siblings = [s for s in book if s != name and parents[s] == parents[name]]
        starved.extend(_starved(QUEUE, name, parents[name], q.request, held, q.deserved, siblings, book))
    return starved


def _starved_groups(values: QuotaValues, groups: Mapping[str, QuotaGroupSpec]) -> list[Starved]:
    """The quota groups holding less of a resource than their min while more of it waits (held: used and
    reserved), each with the siblings that borrow it now."""
    starved: list[Starved] = []
    for name in sorted(groups):
        if name not in values.quotas or (QUOTA, name) in _TREE_ROOTS:
            continue
        g, spec = values.quotas[name], groups[name]
        parent = spec.parent or ""
        siblings = [s for s in groups if s != name and (groups[s].parent or "") == parent and s in values.quotas]
        held_g = values.reservations.amounts.get(name, {})
        held = ResourceList({r: g.used.get(r, 0) + held_g.get(r, 0) for r in set(g.used) | set(held_g)})
        starved.extend(_starved(QUOTA, name, parent, g.request, held, spec.min, siblings, values.quotas))
    return starved


def _lending(values: QuotaValues, groups: Mapping[str, QuotaGroupSpec]) -> list[Lending]:
    """Every node of both trees that lends now, per resource: what it lent and what it could lend."""
    book = values.queues
    lending: list[Lending] = []
    lenders: list[tuple[str, Mapping[str, ResourceList], Mapping[str, ResourceList]]] = [
        (QUEUE, lendable_queues(values), {n: book[n].lent for n in book}),
        (QUOTA, lendable_groups(values, groups), {n: values.quotas[n].lent for n in groups if n in values.quotas}),
    ]
    for tree, lendable, lent_of in lenders:
        for name in sorted(lent_of):
            lent, could = lent_of[name], lendable.get(name, ResourceList())
            for r in sorted(lent, key=_resource_rank):
                if lent[r] > 0:
                    lending.append(Lending(tree, name, r, lent[r], could.get(r, 0)))
    return lending


def _over_history(
    values: QuotaValues,
    groups: Mapping[str, QuotaGroupSpec],
    history: Mapping[tuple[str, str], Sequence[Sample]],
    start: float,
    end: float,
) -> tuple[list[IdleGuarantee], list[UsageShare]]:
    """From each node's samples over [start, end]: the guarantees (a queue's guarantee, a quota group's min) above
    its peak use, and its average use against its average entitlement."""
    book = values.queues
    idle: list[IdleGuarantee] = []
    usage: list[UsageShare] = []
    guaranteed: dict[tuple[str, str], Mapping[str, int]] = {(QUEUE, n): book[n].guarantee for n in book}
    guaranteed.update({(QUOTA, n): groups[n].min for n in groups if n in values.quotas})
    for key, samples in sorted(history.items()):
        tree, name = key
        if key in _TREE_ROOTS:
            continue  # the cluster itself, or Koordinator's system and default groups: not a team's share
        average, entitled, peak, covered = _over_window(samples, start, end)
        if covered <= 0:
            continue
        for r in sorted(set(average) | set(entitled), key=_resource_rank):
            if is_unlimited(entitled.get(r, 0)) or is_unlimited(average.get(r, 0)):
                continue
            if entitled.get(r, 0) > 0 or average.get(r, 0) > 0:
                usage.append(UsageShare(tree, name, r, average.get(r, 0), entitled.get(r, 0), covered))
        for r, amount in (guaranteed.get(key) or {}).items():
            if amount > 0 and not is_unlimited(amount) and amount > peak.get(r, 0):
                idle.append(IdleGuarantee(tree, name, r, amount, average.get(r, 0), peak.get(r, 0), covered))
    return idle, usage


def _starved(
    tree: str,
    name: str,
    parent: str,
    request: Mapping[str, int],
    held: Mapping[str, int],
    entitled: Mapping[str, int],
    siblings: Sequence[str],
    book: Mapping[str, Any],
) -> list[Starved]:
    out = []
    for r in sorted(request, key=_resource_rank):
        waiting = request[r] - held.get(r, 0)
        if waiting <= 0 or held.get(r, 0) >= entitled.get(r, 0):
            continue
        borrowers = []
        for s in siblings:
            borrowed = book[s].borrowed.get(r, 0)
            if borrowed > 0:
                borrowers.append((s, borrowed))
        borrowers.sort(key=lambda b: (-b[1], b[0]))
        out.append(Starved(tree, name, parent, r, waiting, held.get(r, 0), entitled.get(r, 0), tuple(borrowers)))
    return out
