"""``priority``: task and job order by priority, priority-driven preemption (Volcano ``plugins/priority``).

* Task order: higher pod priority first. Job order: higher podgroup priority (its PriorityClass value) first.
* Preemptable: a pod of another job is a victim when its job's priority is strictly lower than the preemptor's
  job's; a pod of the same job when its own priority is strictly lower than the preemptor pod's.
* Job starving: ready + pipelined pods < all the job's pods (the job still wants more).
* No reclaimable function: reclaim is fairness-driven, not priority-driven, as in Volcano.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from engine.session.framework import ONE_CLASS, Plugin, VictimTest
from engine.session.registry import register
from engine.session.session import JobState, TaskState


def _nobody(task: TaskState) -> bool:
    return False


@register
class PriorityPlugin(Plugin):
    name = "priority"

    def task_order_key(self, task: TaskState) -> int:
        return -task.priority

    def job_order_key(self, job: JobState) -> int:
        return -job.priority

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        pj = preemptor.pg
        if pj is None:
            return []
        victims: list[TaskState] = []
        for t in preemptees:
            tj = t.pg
            if tj is None:
                continue
            if tj is not pj:
                if tj.priority < pj.priority:
                    victims.append(t)
            elif t.priority < preemptor.priority:
                victims.append(t)
        return victims

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        if hook != "preemptable":
            return None
        pj = preemptor.pg
        if pj is None:
            return ("priority", None), _nobody
        priority = pj.priority

        def lower(t: TaskState) -> bool:  # a pod of another job: its job's priority is strictly lower
            return t.pg is not None and t.pg.priority < priority

        return ("priority", priority), lower

    def victim_job_bound(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        pj = preemptor.pg
        if hook != "preemptable" or pj is None:
            return None
        priority = pj.priority
        return lambda job: job.priority < priority

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        return ONE_CLASS  # the pod test is the job test of the pod's job

    def job_starving(self, job: JobState) -> bool:
        return job.ready_num() + job.waiting_num() < len(job.tasks)
