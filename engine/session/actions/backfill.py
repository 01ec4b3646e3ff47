"""``backfill``: place best-effort pods (no request) on any node that passes the predicates (Volcano
``actions/backfill``).

Taken part: best-effort pods that are pending, or pipelined (they are un-pipelined first), of jobs that are not
Pending, valid, and in an existing queue; ordered by queue, job and task order. No queue gate and no gang
statement: each pod goes to the best-scored node that passes the predicates (and has a pod slot when nodes
declare ``pods``); it is bound at once when its job is ready, as Volcano's ``Session.Allocate`` dispatches.
"""

from __future__ import annotations

from engine.objects import TaskStatus
from engine.session.actions.common import KeyedHeap
from engine.session.session import JobState, Session, TaskState
from engine.session.statement import Statement


def backfill(ssn: Session) -> None:
    """Run the backfill action (see the module docstring)."""
    fw = ssn.framework
    per_job: dict[str, list[TaskState]] = {}
    by_queue: dict[str, KeyedHeap[JobState]] = {}
    for key in ssn.live_keys():  # a quiet podgroup has no pod waiting
        job = ssn.jobs[key]
        # the cheapest test first: most jobs of a big cluster have no pod waiting (the tests have no side effect)
        if not (job.counts[TaskStatus.PENDING] or job.counts[TaskStatus.PIPELINED]):
            continue
        if job.is_pending() or fw.job_valid(job) is not None or job.queue not in ssn.snapshot.queues:
            continue
        tasks: list[TaskState] = []
        for t in job.tasks:
            if not t.best_effort:
                continue
            if t.status == TaskStatus.PIPELINED:
                ssn.unpipeline_task(t)
            if t.status == TaskStatus.PENDING:
                tasks.append(t)
        if not tasks:
            continue
        tasks.sort(key=fw.task_key)
        per_job[key] = tasks
        by_queue.setdefault(job.queue, KeyedHeap(fw.job_key)).push(job)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(by_queue))
    pending: list[TaskState] = []
    while order:
        jobs = by_queue[order.pop()]
        while jobs:
            pending.extend(per_job[jobs.pop().key])
    for task in pending:
        ssn.checkpoint()
        owner = task.pg
        assert owner is not None
        pick = ssn.placement.best(task)
        if pick is None:
            owner.fit_failure = ssn.placement.failure(task)
            continue
        stmt = Statement(ssn)
        stmt.allocate(task, pick[0])
        if fw.job_ready(owner):
            stmt.commit()
