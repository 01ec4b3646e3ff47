"""Volcano's ``proportion`` plugin: weight-based fair share between queues (seed 002, volcano.md section 2).

The model
---------
Only queues that have at least one job in the snapshot take part (a queue without podgroups has no say and its
weight is ignored). For each participating queue and each resource:

* ``realCapability = (total - sum of the guarantees of all queues)+ + own guarantee``, capped by the queue's
  capability (a capability that leaves a resource out, or sets cpu/memory to <= 0, is unlimited there);
* ``deserved`` is the weighted water-filling of the cluster total (``waterfill.water_fill``): every queue
  receives ``weight / open weight`` of what is left, never more than its realCapability nor its request (a
  resource absent from the request reads as 0, Volcano's ``Zero`` default, so a queue deserves nothing of a
  resource it does not ask for), and never less than its guarantee; what a satisfied or capped queue cannot
  use goes to the others in the next round. ``spec.deserved`` is ignored (Volcano issue #5814).
* ``share = max over deserved's resources (> 0) of allocated / deserved`` (the dominant share).

Volcano computes this in float64; here the rounds are exact and a fractional split is apportioned by largest
remainder (ties by queue name), so the deserved amounts add up to the total. Volcano's floor is applied after
each round's share and can over-commit the cluster when guarantees are large; here a guarantee is a floor
*within* the water level (see ``waterfill``). The values are otherwise the fixed point Volcano's rounds reach.

The gates (what ``OnSessionOpen`` registers)
-------------------------------------------
* ``compare_queues``: higher ``priority`` first, then lower share.
* ``overused(q)``: ``deserved <= allocated`` on every dimension of deserved (the allocate and reclaim actions
  skip such queues).
* ``allocatable(q, req)`` / ``preemptive(q, req)``: the queue is Open and ``allocated + req <= deserved`` on the
  resources the request asks for, *strictly* (no borrowing beyond deserved in allocate).
* ``enqueueable(job)``: the queue is Open; a job without ``minResources`` is admitted; otherwise
  ``minResources + allocated + inqueue - elastic <= realCapability`` on the resources minResources asks for.
  ``on_enqueued(job)`` then reserves minResources in ``inqueue``.
* ``reclaimable(reclaimer, reclaimees)``: walking the reclaimees in order with a running copy of each victim
  queue's allocated, a task is a victim while its queue is above deserved in some dimension
  (``not allocated <= deserved``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from engine.amounts import ZERO, add_into, less_equal, raw, to_resource_list
from engine.fairshare.queue_order import proportion_compare
from engine.fairshare.queues import (
    JobSummary,
    JobUsage,
    QueueAccount,
    QueueBook,
    apply_jobs,
    collect_resources,
    index_specs,
    set_flat_limits,
    unknown_queue_warnings,
)
from engine.fairshare.verdicts import ALLOWED, TaskLike, Verdict, VictimSelection, refuse
from engine.fairshare.verdicts import T as _T
from engine.fairshare.waterfill import SETTLED_CAP, SETTLED_FLOOR, FillResult, water_fill
from engine.objects import QueueSpec
from engine.resources import ResourceList
from engine.usage import SCALE, adjusted_weights, clamp

__all__ = ["ProportionResult", "compute_proportion"]


class ProportionResult(QueueBook):
    """``result[name] -> QueueQuota`` plus the proportion plugin's gates (see the module docstring)."""

    policy = "proportion"
    honours_lending_limits = False

    def _export_deserved(self, st: QueueAccount) -> ResourceList:
        return to_resource_list(st.deserved, drop_zero=True)

    # -- order -------------------------------------------------------------------------------------------
    def compare_queues(self, left: str, right: str) -> int:
        """Volcano's QueueOrderFn for proportion (``queue_order.proportion_compare``)."""
        return proportion_compare(self._states[left], self._states[right], self.past_ratio)

    # -- gates ---------------------------------------------------------------------------------------------
    def overused(self, queue: str) -> bool:
        """``deserved <= allocated`` in every dimension of deserved (Volcano ``LessEqual`` with ``Zero``)."""
        st = self._states.get(queue)
        if st is None:
            return False
        return less_equal(st.deserved, st.allocated, ZERO)

    def _allocation_limits(self, st: QueueAccount) -> Sequence[tuple[QueueAccount, Mapping[str, int]]] | None:
        return [(st, st.deserved)] if st.is_open else None

    def allocatable(self, queue: str, request: Mapping[str, int]) -> Verdict:
        """May a task with this request be allocated in ``queue``? (``allocated + req <= deserved``)"""
        found = self._lookup(queue)
        if not isinstance(found, QueueAccount):
            return refuse(found)
        if not found.is_open:
            return refuse(self._closed(found))
        reasons = self._quota_refusals(found.name, "deserved", found.allocated, found.deserved, request, found)
        return refuse(*reasons) if reasons else ALLOWED

    def preemptive(self, queue: str, request: Mapping[str, int]) -> Verdict:
        """May ``queue`` reclaim for tasks with this total request? Same test as ``allocatable``."""
        return self.allocatable(queue, request)

    def enqueueable(self, job: JobUsage) -> Verdict:
        """May this job leave Pending? (``minResources + allocated + inqueue - elastic <= realCapability``)"""
        found = self._lookup(job.queue)
        if not isinstance(found, QueueAccount):
            return refuse(found)
        if not found.is_open:
            return refuse(self._closed(found))
        if job.min_resources is None:
            return ALLOWED
        base = dict(found.allocated)
        add_into(base, found.inqueue)
        add_into(base, found.elastic, -1)
        reasons = self._quota_refusals(
            found.name, "realCapability", base, found.real_capability, job.min_resources, found, reserved=True
        )
        return refuse(*reasons) if reasons else ALLOWED

    def reclaimable(self, reclaimer: TaskLike, reclaimees: Sequence[_T]) -> VictimSelection[_T]:
        """Which of ``reclaimees`` (in the order given) may be evicted for ``reclaimer``: a task is a victim
        while its queue's running allocated is above deserved in some dimension."""

        def decide(task: _T, allocations: dict[str, dict[str, int]]) -> str | None:
            st = self._states[task.queue]
            allocated = allocations.get(task.queue)
            if allocated is None:
                allocated = allocations[task.queue] = dict(st.allocated)
            if less_equal(allocated, st.deserved, ZERO):
                return f"queue {task.queue} is not above its deserved"
            add_into(allocated, task.request, -1)
            return None

        return self._selection(reclaimer, reclaimees, decide)


def compute_proportion(
    queues: Sequence[QueueSpec],
    jobs: Sequence[JobUsage] | JobSummary,
    total: ResourceList,
    *,
    past_ratios: Mapping[str, Fraction | None] | None = None,
) -> ProportionResult:
    """Compute every queue's realCapability, deserved and share under Volcano's proportion policy.

    ``queues`` may include queues without jobs (reported with ``participating=False`` and nothing deserved);
    jobs naming an unknown queue are ignored and listed in ``result.warnings``. ``jobs`` may be a
    ``summarize_jobs`` summary, to sum the jobs once for several what-ifs.

    ``past_ratios``: fairness over time (``engine.usage``), each queue's past-usage ratio; the water-filling then
    runs on the effective weights ``weight x 1000 / ratio`` (guarantees stay its floors). None: Volcano's numbers.
    """
    specs = index_specs(queues)
    states = {name: QueueAccount(spec=spec, guarantee=dict(raw(spec.guarantee))) for name, spec in specs.items()}
    summary = apply_jobs(jobs, states)
    warnings = unknown_queue_warnings(summary, states)

    resources = collect_resources(total, specs.values(), states.values())
    total_raw = raw(total)
    _set_limits(specs, states, total_raw, resources)

    participants = sorted(name for name, st in states.items() if st.participating)
    members = [states[n] for n in participants]
    weights, labels = _fill_weights(participants, members, past_ratios)
    _fill_deserved(resources, total_raw, participants, members, weights, labels)
    for st in states.values():
        if not st.participating:
            st.trace.append(("deserved", None, None, "des.absent", 0, ()))

    result = ProportionResult(states, total_raw, resources, warnings=warnings)
    if past_ratios is not None:
        result.past_ratios = {name: clamp(past_ratios.get(name)) for name in states}
    for st in states.values():
        result._update_share(st)
    return result


def _set_limits(
    specs: Mapping[str, QueueSpec],
    states: Mapping[str, QueueAccount],
    total_raw: Mapping[str, int],
    resources: Sequence[str],
) -> None:
    """Every queue's capability and realCapability, against the guarantees of all queues."""
    total_guarantee: dict[str, int] = {}
    for spec in specs.values():
        add_into(total_guarantee, spec.guarantee)
    for st in states.values():
        # deserved is computed here, so a borrowing limit is measured against the guarantee (and a lending limit
        # changes nothing: a guarantee is never lent under proportion)
        nominal = st.guarantee if st.spec.borrowing_limit else None
        set_flat_limits(st, total_raw, total_guarantee, resources, nominal, label="guarantee")


def _fill_weights(
    participants: Sequence[str], members: Sequence[QueueAccount], past_ratios: Mapping[str, Fraction | None] | None
) -> tuple[list[int], list[str]]:
    """The weights the water-filling shares by, and each as the trace shows it: the queues' own weights, or with
    fairness over time the effective weights (shown as a person reads them) when the past ratios move them."""
    # Volcano's webhook turns a weight of 0 into 1 and the CRD's minimum is 1
    weights = [max(1, st.spec.weight) for st in members]
    labels = [str(w) for w in weights]
    if past_ratios is not None:
        effective = adjusted_weights(dict(zip(participants, weights, strict=True)), past_ratios)
        if list(effective.values()) != weights:
            weights = [effective[n] for n in participants]
            labels = [f"{w / SCALE:.2f}" for w in weights]
    return weights, labels


def _fill_deserved(
    resources: Sequence[str],
    total_raw: Mapping[str, int],
    participants: Sequence[str],
    members: Sequence[QueueAccount],
    weights: Sequence[int],
    labels: Sequence[str],
) -> None:
    """Each participating queue's deserved, resource by resource: the weighted water-filling of the total, each
    queue held at its guarantee and capped by the lesser of its request and its realCapability."""
    total_weight = sum(weights)
    for r in resources:
        amount = total_raw.get(r, 0)
        caps: list[int | None] = []
        floors: list[int] = []
        from_request: list[bool] = []
        for st in members:
            # Volcano caps with MinDimensionResource(request, Zero): a scalar the request lacks reads as 0, so a
            # queue deserves nothing of a resource it does not ask for (pods included: tasks never request it)
            req = st.request.get(r, 0)
            rc = st.real_capability[r]
            caps.append(min(req, rc))
            from_request.append(req <= rc)
            floors.append(st.guarantee.get(r, 0))
        fill = water_fill(amount, participants, weights, caps, floors)
        _trace_fill(r, members, fill, caps, floors, from_request, weights, labels, (amount, total_weight))


def _trace_fill(
    r: str,
    members: Sequence[QueueAccount],
    fill: FillResult,
    caps: Sequence[int | None],
    floors: Sequence[int],
    from_request: Sequence[bool],
    weights: Sequence[int],
    labels: Sequence[str],
    whole: tuple[int, int],
) -> None:
    """Set each queue's deserved of ``r`` from the water-filling, with the trace step saying how it settled: held
    at its guarantee, stopped at its request or realCapability, or its weighted share of the final level (of
    ``whole``, the amount and the total weight, when the filling has no level)."""
    for i, st in enumerate(members):
        value = fill.values[i]
        st.deserved[r] = value
        how = fill.settled[i]
        rnd = fill.settled_round[i]
        if how == SETTLED_CAP:
            if floors[i] >= (caps[i] or 0) and floors[i] > 0:
                st.trace.append(("deserved", r, value, "des.floor", rnd, (floors[i],)))
            elif from_request[i]:
                st.trace.append(("deserved", r, value, "des.cap.request", rnd, (caps[i] or 0,)))
            else:
                st.trace.append(("deserved", r, value, "des.cap.rc", rnd, (caps[i] or 0,)))
        elif how == SETTLED_FLOOR:
            st.trace.append(("deserved", r, value, "des.floor", rnd, (floors[i],)))
        else:
            budget, open_weight = fill.level or whole
            shown = str(open_weight) if labels[i] == str(weights[i]) else f"{open_weight / SCALE:.2f}"
            st.trace.append(("deserved", r, value, "des.fill", rnd, (labels[i], shown, budget)))
