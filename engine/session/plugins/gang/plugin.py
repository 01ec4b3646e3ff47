"""``gang``: all-or-nothing podgroups (Volcano ``plugins/gang``).

* Job valid: every role has at least its ``minTaskMember`` pods (when ``minMember`` is not below their sum), and
  the podgroup has at least ``minMember`` pods that are pending, pipelined or allocated; otherwise it is skipped
  (Volcano's ``NotEnoughTasks`` / ``NotEnoughPodsOfTask``).
* Job ready: ``ready + pending best-effort >= minMember`` and every role's ``minTaskMember`` is met; the
  allocate action commits a gang's statement only then.
* Job pipelined: the same with pipelined pods counted (Permit), else Reject.
* Job starving: ``ready + pipelined < minMember``.
* Job order: podgroups that are not ready go first.
* Reclaimable / preemptable: a job's pods are victims only while the job keeps more than ``minMember`` ready
  pods (walking the candidates in order with a running count), so no gang is cut below its minimum.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from engine.session.framework import ONE_CLASS, PERMIT, REJECT, Plugin, VictimTest
from engine.session.reasons import GateRefusal
from engine.session.registry import register
from engine.session.session import JobState, TaskState
from engine.vocabulary import BlockerKind
from engine.wording import plural


def _above_minimum(job: JobState) -> bool:
    return job.ready_num() > job.min_member


@register
class GangPlugin(Plugin):
    name = "gang"

    def job_unschedulable(self, job: JobState) -> bool:
        return bool(job.tasks) and not job.is_ready()

    def job_valid(self, job: JobState) -> GateRefusal | None:
        if not job.check_task_valid():
            wanted = ", ".join(f"{role or 'default'} {n}" for role, n in sorted(job.min_task_member.items()) if n)
            return GateRefusal(
                BlockerKind.GANG,
                job.key,
                "minTaskMember",
                message=f"not enough pods of each role for gang scheduling (minTaskMember: {wanted}; "
                f"{plural(len(job.tasks), 'pod')} {'exists' if len(job.tasks) == 1 else 'exist'})",
            )
        valid = job.valid_num()
        if valid < job.min_member:
            return GateRefusal(
                BlockerKind.GANG,
                job.key,
                "minMember",
                message=f"{valid} of minMember {job.min_member} pods exist (pods are created once the podgroup "
                "is Inqueue)",
            )
        return None

    def _keep_minimum(self, candidates: Sequence[TaskState]) -> list[TaskState]:
        occupied: dict[str, int] = {}
        victims: list[TaskState] = []
        for t in candidates:
            job = t.pg
            if job is None:
                continue
            left = occupied.get(job.key)
            if left is None:
                left = job.ready_num()
            if left > job.min_member:
                left -= 1
                victims.append(t)
            occupied[job.key] = left
        return victims

    def reclaimable(self, reclaimer: TaskState, reclaimees: Sequence[TaskState]) -> list[TaskState] | None:
        return self._keep_minimum(reclaimees)

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        # the running count only goes down: a pod is a victim only if its job has more than minMember ready now
        # (asked once per job: the test is used at once, in the state it was made in)
        above: dict[int, bool] = {}

        def above_minimum(t: TaskState) -> bool:
            job = t.pg
            if job is None:
                return False
            hit = above.get(id(job))
            if hit is None:
                hit = above[id(job)] = job.ready_num() > job.min_member
            return hit

        return ("gang",), above_minimum

    def victim_job_bound(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        return _above_minimum

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        return ONE_CLASS  # the pod test is the job test of the pod's job

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        return self._keep_minimum(preemptees)

    def job_order_key(self, job: JobState) -> int:
        return 1 if job.is_ready() else 0

    def job_ready(self, job: JobState) -> bool:
        return job.is_ready() and job.check_task_ready()

    def job_pipelined(self, job: JobState) -> int:
        return PERMIT if job.is_pipelined() and job.check_task_pipelined() else REJECT

    def job_starving(self, job: JobState) -> bool:
        return job.is_starving()
