"""``allocate``: place pending pods on nodes, gang by gang (Volcano ``actions/allocate``).

Jobs taken part: not Pending (when the policy has no ``enqueue`` action, Pending podgroups are made Inqueue here,
as Volcano does), valid (gang), in an existing queue, with pending pods that request something (best-effort pods
are left to ``backfill``). The loop:

* pick the queue first in queue order (proportion: priority, then lowest share); an overused queue is dropped
  for the rest of the action; with drf's ``enableNamespaceOrder`` (seed 000) the queue's namespace with the
  lowest weighted share is picked next;
* pick that queue's first job in job order (priority, gang not-ready first, drf share, then FCFS);
* in one statement, walk the job's pending pods in task order: each must pass the queue's allocatable gates
  (proportion's deserved, capacity's realCapability, the elastic quota runtime, ...), then goes to the best node
  whose idle fits (``Placement``), or is pipelined onto a node whose future idle fits; a pod whose role already
  failed the predicates is skipped; after a predicate failure the job goes on only while the gang can still be
  met (``NeedContinueAllocating``); stop as soon as the job is ready;
* ready: commit (bindings) and, if pods remain, put the job back; pipelined: keep the statement (resources stay
  reserved for this session, nothing is decided); otherwise discard: all or nothing;
* put the queue (or namespace) back with its new share.
"""

from __future__ import annotations

from collections import deque

from engine.objects import PodGroupPhase, TaskStatus
from engine.session.actions.common import KeyedHeap
from engine.session.admission import namespace_refusal
from engine.session.reasons import GateRefusal
from engine.session.session import JobState, Session, TaskState
from engine.session.statement import Statement
from engine.vocabulary import BlockerKind


def _worksheets(ssn: Session) -> dict[str, deque[TaskState]]:
    fw = ssn.framework
    enqueue_on = "enqueue" in ssn.policy.actions
    sheets: dict[str, deque[TaskState]] = {}
    for key in ssn.live_keys():  # a quiet podgroup has no pod waiting and passes the gang's check: no sheet
        job = ssn.jobs[key]
        if job.info.suspended:  # held until resumed (``PodGroupInfo.suspended``): none of its pods is placed
            continue
        if job.is_pending():
            if enqueue_on:
                continue
            mismatch = namespace_refusal(ssn, job) if ssn.snapshot.admission else None
            if mismatch is not None:  # its queue's namespace selector (``engine.session.admission``)
                job.enqueue_refusal = mismatch  # it stays Pending: said as a refused admission
                continue
            job.phase = PodGroupPhase.INQUEUE
        refusal = fw.job_valid(job)
        if refusal is not None:
            job.skip_refusal = refusal
            continue
        if job.queue not in ssn.snapshot.queues:
            job.skip_refusal = GateRefusal(BlockerKind.QUEUE, job.queue, "exists", message="the queue does not exist")
            continue
        if not job.counts[TaskStatus.PENDING]:
            continue
        tasks = [t for t in job.tasks if t.status == TaskStatus.PENDING and not t.best_effort]
        if not tasks:
            continue
        tasks.sort(key=fw.task_key)
        sheets[key] = deque(tasks)
    return sheets


def allocate_job(ssn: Session, queue: str, job: JobState, tasks: deque[TaskState]) -> bool:
    """One turn of a job: returns True when it was committed with pods left (put it back). What its own pods held
    (their nominated nodes) is free for it first."""
    fw = ssn.framework
    placement = ssn.placement
    ssn.release_holds(job)
    stmt = Statement(ssn)
    while tasks:
        task = tasks.popleft()
        refusal = fw.allocatable(queue, task)
        if refusal is not None:
            job.allocate_refusal = refusal
            continue
        if task.role and task.role in job.failed_roles:
            continue
        pick = placement.best(task)
        if pick is None:
            job.fit_failure = placement.failure(task)
            job.failed_roles.add(task.role)
            if job.need_continue_allocating():
                continue
            break
        row, pipelined = pick
        if pipelined:
            stmt.pipeline(task, row)
        else:
            stmt.allocate(task, row)
        if fw.job_ready(job):
            break
    if fw.job_ready(job):
        stmt.commit()
        return bool(tasks)
    if fw.job_pipelined(job):
        job.pipelined_kept = True
        return False
    job.placed_before_discard = job.ready_num() + job.waiting_num()
    stmt.discard()
    return False


def _skip_all(ssn: Session, jobs: KeyedHeap[JobState], refusal: GateRefusal) -> None:
    for job in jobs.items():
        ssn.release_holds(job)  # no turn for it in this action: the room it held goes to whoever can use it
        if job.skip_refusal is None:
            job.skip_refusal = refusal


def allocate(ssn: Session) -> None:
    """Run the allocate action (see the module docstring)."""
    fw = ssn.framework
    sheets = _worksheets(ssn)
    for key in [k for k in ssn.holds if k not in sheets]:
        ssn.release_holds(ssn.jobs[key])  # a job that takes no part holds nothing
    if fw.namespace_order_enabled:
        _by_namespace(ssn, sheets)
        return
    by_queue: dict[str, KeyedHeap[JobState]] = {}
    for key, _ in sheets.items():
        job = ssn.jobs[key]
        by_queue.setdefault(job.queue, KeyedHeap(fw.job_key)).push(job)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(by_queue))
    while order:
        ssn.checkpoint()
        queue = order.pop()
        jobs = by_queue[queue]
        overused = fw.overused(queue)
        if overused is not None:
            _skip_all(ssn, jobs, overused)
            continue
        if not jobs:
            continue
        job = jobs.pop()
        if allocate_job(ssn, queue, job, sheets[job.key]):
            jobs.push(job)
        order.push(queue)


def _by_namespace(ssn: Session, sheets: dict[str, deque[TaskState]]) -> None:
    """Seed 000's loop: the queue first (queue order), then within it the namespace with the lowest weighted share
    (drf's namespace order, live: a namespace's share moves whenever any of its jobs gets a pod), then that
    namespace's first job. Volcano up to v1.7 picked the namespace first and then its best queue; queues being the
    outer share here (a namespace's deserved is its part of its queue's, as ``compute_namespace_shares`` has it),
    Fairway picks the queue first. The seed's tables come out the same either way."""
    fw = ssn.framework
    per_queue: dict[str, dict[str, KeyedHeap[JobState]]] = {}
    for key in sheets:
        job = ssn.jobs[key]
        per_queue.setdefault(job.queue, {}).setdefault(job.namespace, KeyedHeap(fw.job_key)).push(job)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(per_queue))
    while order:
        ssn.checkpoint()
        queue = order.pop()
        namespaces = per_queue[queue]
        overused = fw.overused(queue)
        if overused is not None:
            for jobs in namespaces.values():
                _skip_all(ssn, jobs, overused)
            continue
        waiting = [ns for ns, jobs in namespaces.items() if jobs]
        if not waiting:
            continue
        namespace = min(waiting, key=fw.namespace_key)
        jobs = namespaces[namespace]
        job = jobs.pop()
        if allocate_job(ssn, queue, job, sheets[job.key]):
            jobs.push(job)
        order.push(queue)
