"""``overcommit``: admit podgroups while the cluster, over-committed by a factor, has room (Volcano
``plugins/overcommit``; seed 003's "enough idle resources for minResources").

At open: ``idle = total * factor - used`` (``used`` is what the nodes' allocated and releasing pods hold;
``factor`` is the ``overcommit-factor`` argument, 1.2 by default, below 1 read as 1.2) and ``inqueue`` is the sum
of the ``minResources`` of Inqueue podgroups plus, for Running podgroups with at least ``minMember`` allocated
pods, the part of ``minResources`` not yet allocated. A podgroup with ``minResources`` is admitted when
``inqueue + minResources <= idle`` on the resources ``minResources`` asks for (strictly, as Volcano's
``LessEqualWithDimensionAndResourcesName``); once admitted its ``minResources`` joins ``inqueue``. A podgroup
without ``minResources`` is always admitted.

The factor is applied exactly: ``1.2`` is the fraction 6/5 and ``total * 6 // 5`` is an integer (Volcano
multiplies float64s).
"""

from __future__ import annotations

from fractions import Fraction

from engine.objects import PodGroupPhase
from engine.policy.policy import PluginOption
from engine.resources import sorted_resources
from engine.session.carry import KeptDerived
from engine.session.framework import PERMIT, REJECT, Plugin
from engine.session.plugins.overcommit.arguments import OVERCOMMIT
from engine.session.reasons import GateRefusal, qty
from engine.session.registry import register
from engine.session.session import JobState, Session, add_into
from engine.vocabulary import BlockerKind


@register
class OvercommitPlugin(Plugin):
    name = "overcommit"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        factor = session.policy.arguments_of(OVERCOMMIT)
        self.factor = Fraction(repr(factor))
        table = session.nodes
        used_cols = (table.alloc - table.idle).sum(axis=0).tolist()
        used = {r: int(v) for r, v in zip(table.resources, used_cols, strict=True) if v}
        self.capacity: dict[str, int] = {
            r: (v * self.factor.numerator) // self.factor.denominator for r, v in session.total.items()
        }
        self.idle: dict[str, int] = dict(self.capacity)
        add_into(self.idle, used, -1)
        # what the podgroups reserve at open: a pass over every podgroup, or with a carry the sum kept from the last
        # session, redone for the podgroups that changed (``KeptDerived``; a part is a function of the podgroup's
        # state at open, which the carry keeps for every podgroup it did not move)
        self.inqueue: dict[str, int] = KeptDerived.current(session.carry, self.name, session.jobs, self._reserved)

    def _reserved(self, job: JobState) -> dict[str, int] | None:
        """What ``job`` reserves at open: an Inqueue podgroup its ``minResources``, a Running one with at least
        ``minMember`` allocated pods the part of it not yet allocated."""
        mr = job.min_resources
        if mr is None:
            return None
        if job.phase == PodGroupPhase.INQUEUE:
            return dict(mr)
        if job.phase == PodGroupPhase.RUNNING and job.allocated_num() >= job.min_member:
            allocated = self.session.job_usage(job).allocated
            return {r: v - allocated[r] for r, v in mr.items() if v > allocated[r]}
        return None

    def _check(self, job: JobState, include_job: bool) -> GateRefusal | None:
        mr = job.min_resources or {}
        for r in sorted_resources(r for r, v in mr.items() if v > 0):
            want = self.inqueue.get(r, 0) + (mr[r] if include_job else 0)
            limit = self.idle.get(r, 0)
            if want > limit:
                reserved = self.inqueue.get(r, 0) - (0 if include_job else mr[r])
                return GateRefusal(
                    BlockerKind.CLUSTER,
                    "",
                    "overcommit",
                    r,
                    mr[r],
                    max(0, limit - reserved),
                    message=f"idle {qty(max(0, self.idle.get(r, 0)), r)} with overcommit-factor "
                    f"{float(self.factor):g}, of which {qty(max(0, reserved), r)} is reserved by admitted podgroups",
                )
        return None

    def job_enqueueable(self, job: JobState) -> tuple[int, GateRefusal | None]:
        if job.min_resources is None:
            return PERMIT, None
        refusal = self._check(job, include_job=True)
        return (REJECT, refusal) if refusal is not None else (PERMIT, None)

    def job_enqueued(self, job: JobState) -> None:
        if job.min_resources is not None:
            add_into(self.inqueue, job.min_resources)

    def reservation_excess(self, job: JobState) -> GateRefusal | None:
        if job.min_resources is None:
            return None
        return self._check(job, include_job=False)

    def release_reservation(self, job: JobState) -> None:
        if job.min_resources is not None:
            add_into(self.inqueue, job.min_resources, -1)
