"""``proportion``: weight-based queue fair share (Volcano ``plugins/proportion``; the math is
``engine.fairshare.proportion``, computed once when the session opens).

* Queue order: higher queue priority first, then lower share (dominant allocated / deserved).
* Overused: allocated has reached deserved in every resource deserved names; allocate and reclaim skip it.
* Allocatable / preemptive: the queue is Open and ``allocated + request <= deserved`` on the request's resources.
* Job enqueueable: ``minResources + allocated + inqueue - elastic <= realCapability``; job enqueued reserves
  ``minResources`` in the queue's ``inqueue``.
* Reclaimable: pods of queues above their deserved, walking the candidates with a running allocated.
* Events keep each queue's allocated and share current as the session allocates, pipelines and evicts.

``QueueGates`` holds what proportion and capacity share.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Hashable, Sequence

from engine.fairshare.capacity import CapacityResult
from engine.fairshare.proportion import ProportionResult, compute_proportion
from engine.fairshare.queues import QueueBook
from engine.policy.policy import PluginOption
from engine.resources import ResourceList, is_unlimited, resource_sort_key, sorted_resources
from engine.session.framework import PERMIT, REJECT, Plugin, VictimTest
from engine.session.reasons import GateRefusal, qty, refusal_from_verdict
from engine.session.registry import register
from engine.session.session import JobState, Session, TaskState
from engine.vocabulary import BlockerKind


def _queue_request(t: TaskState) -> Hashable:
    """All the book's reclaim decision for a pod alone reads of it: its queue and its request."""
    return (t.queue, t.vkey) if "pods" not in t.req else (t.queue, tuple(sorted(t.req.items())))


class QueueGates(Plugin):
    """The hooks proportion and capacity share; ``book`` is the fairshare result they delegate to."""

    book: ProportionResult | CapacityResult

    def queue_book(self) -> QueueBook | None:
        return self.book

    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        if self.book.fits(queue, task.req):  # the common "yes", without building a verdict
            return None
        return refusal_from_verdict(self.book.allocatable(queue, task.req), queue)

    def preemptive(self, queue: str, task: TaskState) -> GateRefusal | None:
        return refusal_from_verdict(self.book.preemptive(queue, task.req), queue)

    def job_enqueueable(self, job: JobState) -> tuple[int, GateRefusal | None]:
        verdict = self.book.enqueueable(self.session.job_usage(job))
        refusal = refusal_from_verdict(verdict, job.queue)
        return (REJECT, refusal) if refusal is not None else (PERMIT, None)

    def job_enqueued(self, job: JobState) -> None:
        self.book.on_enqueued(self.session.job_usage(job))

    def reservation_excess(self, job: JobState) -> GateRefusal | None:
        """Is the queue (or, in a hierarchy, an ancestor) reserving more than its realCapability on a resource
        this Inqueue job reserves? ``allocated + inqueue - elastic > realCapability``."""
        if job.min_resources is None or job.queue not in self.book:
            return None
        for st in self.book.chain(job.queue):
            name = st.name
            for r in sorted_resources(job.min_resources):
                if job.min_resources[r] <= 0:
                    continue
                limit = st.real_capability.get(r, 0)
                if is_unlimited(limit):
                    continue
                held = st.allocated.get(r, 0) + st.inqueue.get(r, 0) - st.elastic.get(r, 0)
                if held > limit:
                    kind = BlockerKind.QUEUE if name == job.queue else BlockerKind.ANCESTOR
                    return GateRefusal(
                        kind,
                        name,
                        "realCapability",
                        r,
                        job.min_resources[r],
                        max(0, limit - (held - job.min_resources[r])),
                        message=f"the queue now holds and reserves {qty(held, r)} against a realCapability of "
                        f"{qty(limit, r)}",
                    )
        return None

    def release_reservation(self, job: JobState) -> None:
        if job.min_resources is None or job.queue not in self.book:
            return
        # its minResources leaves inqueue (and the job the reserving count) on the queue and every ancestor
        usage = self.session.job_usage(job)
        self.book.on_dequeued(dataclasses.replace(usage, min_resources=ResourceList.trusted(dict(job.min_resources))))

    def reclaimable(self, reclaimer: TaskState, reclaimees: Sequence[TaskState]) -> list[TaskState] | None:
        selection = self.book.reclaimable(reclaimer, reclaimees)
        return list(selection.victims)

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        """Reclaim: the book's own decision for the pod alone. Walking a list, the running allocated of each queue
        (and ancestor) only goes down, and every test (above deserved, guarantee kept) only gets harder, so a pod
        the book refuses alone it refuses in any list. The answer depends on the pod's queue and request only."""
        if hook != "reclaimable":
            return None
        book = self.book
        answers: dict[Hashable, bool] = {}

        def alone(t: TaskState) -> bool:
            key = _queue_request(t)
            hit = answers.get(key)
            if hit is None:
                hit = answers[key] = bool(book.reclaimable(preemptor, (t,)).victims)
            return hit

        return (self.name, id(self), preemptor.queue, tuple(sorted(preemptor.req.items()))), alone

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        return _queue_request

    def on_allocate(self, task: TaskState) -> None:
        if task.pg is not None and task.pg.queue in self.book:
            self.book.on_allocate(task.pg.queue, task.req)

    def on_deallocate(self, task: TaskState) -> None:
        if task.pg is not None and task.pg.queue in self.book:
            self.book.on_deallocate(task.pg.queue, task.req)


@register
class ProportionPlugin(QueueGates):
    name = "proportion"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        opened = session.values.queues
        if isinstance(opened, ProportionResult):
            # a copy: the session's allocations move this book, the values it opened with stay as they were
            self.book = copy.deepcopy(opened)
        else:  # capacity is enabled too and the values follow it
            snap = session.snapshot
            self.book = compute_proportion(list(snap.queues.values()), session.job_usages(), snap.total_allocatable)
        session.warnings.extend(self.book.warnings)

    def queue_order_key(self, queue: str) -> tuple[int, float, float]:
        if queue not in self.book:
            return (0, 0.0, 1.0)
        st = self.book.state(queue)
        # the last element: fairness over time's clamped past-usage ratio (1.0 when off), less past usage first
        return (-st.spec.priority, st.share, float(self.book.past_ratio(queue)))

    def overused(self, queue: str) -> GateRefusal | None:
        if queue not in self.book or not self.book.overused(queue):
            return None
        st = self.book.state(queue)
        parts = [
            f"{r} {qty(st.allocated.get(r, 0), r)} of {qty(v, r)}"
            for r, v in sorted(st.deserved.items(), key=lambda kv: resource_sort_key(kv[0]))
            if v > 0 and r != "pods"
        ]
        first = next((r for r in sorted_resources(st.deserved) if st.deserved[r] > 0), None)
        return GateRefusal(
            BlockerKind.QUEUE,
            queue,
            "deserved",
            first,
            available=None if first is None else 0,
            message="overused: allocated has reached deserved (" + ", ".join(parts) + ")",
        )
