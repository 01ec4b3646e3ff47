"""``preempt``: within a queue, higher-priority jobs take the place of lower-priority ones (Volcano
``actions/preempt``).

Taken part: starving jobs that are not Pending, valid, in an existing queue. Queues in queue order; for each:

* between jobs: each starving job, in job order, in one statement: while it is starving, its next pending pod
  looks for a node (nodes that pass the predicates, best score first) whose Bound/Running preemptable pods of
  *other jobs of the same queue* the plugins accept as victims (``preemptable``: priority needs a strictly lower
  job priority, gang keeps minimums, conformance spares critical pods, drf applies seed 000's namespace rule and
  job shares, elasticquota keeps to the same quota group); victims are evicted in victim order until the pod
  fits the node *and* passes the queue's allocatable gates (evicting pods of the queue lowers its usage), then
  the pod is pipelined there. The statement is committed when the job is pipelined, else discarded.
* within a job: each starving job's pending pods, in task order, may evict lower-priority pods of the same job;
  the first failure ends that job; its successes are committed when the job is pipelined (Volcano commits each
  at once, see the comment in ``preempt``).

With ``wholeGangs: true`` in the action's configuration the victims of the first phase are chosen with gangs in mind
(``actions.gangvictims``: spare pods first, then the least-waste set of whole gangs; the ``gang`` plugin's victim
rule is left out, every other filter stays), and the job's statement is committed only when its own gang minimum is
met too. The second phase (a job's own pods) is unchanged.

With a minimum runtime (``minRuntime``, ``actions.common.MinRuntime``) a pod that started less than that long ago is
not a victim unless the preemptor's priority is strictly higher; ``minRuntimeHigherPriority`` narrows that exception
(``lastResort``: the job is first tried without it, and with it only if that does not place it; ``wait``: none). A best-effort pod only preempts best-effort pods; a pod with ``preemptionPolicy: Never`` never preempts. Nodes where
even every candidate the plugins' victim tests let through could not make room are skipped without asking the
plugins (``actions.common.VictimRoom``; the decisions are those of trying them).

When the plugins' victims are one set to take whole (``Framework.victims_are_a_set``: Kueue's classical preemption,
which counts quota), the first phase evicts a node's set whole, with its jobs' other pods, and pipelines the pod there
only if it then fits the node and passes its queue's gates (else the node's evictions are undone).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from engine.objects import TaskStatus
from engine.session.actions.common import (
    KeyedHeap,
    MinRuntime,
    VictimRoom,
    attempt_key,
    evictable_of,
    fits,
    free_room_holds,
    rows_with_room,
)
from engine.session.actions.gangvictims import (
    GANG_RULE,
    GangVictims,
    NodePlan,
    free_first,
    gang_met,
    whole_gang_words,
)
from engine.session.decisions import Blocker
from engine.session.session import JobState, Session, TaskState
from engine.session.statement import Statement
from engine.vocabulary import BlockerKind

_PREEMPTABLE = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})
I64 = npt.NDArray[np.int64]


def _fits_on_node(ssn: Session, queue: str, task: TaskState, row: int) -> bool:
    """Volcano ``preemptorFitsOnNode``: the queue gates pass and the node's future idle holds the pod."""
    if ssn.framework.allocatable(queue, task) is not None:
        return False
    return fits(task, ssn.nodes.future_idle(row))


def _evict(stmt: Statement, task: TaskState, victim: TaskState, gang: str = "") -> None:
    job = task.pg
    assert job is not None
    vjob = victim.pg
    vprio = vjob.priority if vjob is not None else 0
    stmt.evict(
        victim,
        action="preempt",
        reason="Preempted",
        message=(
            f"preempted by {task.uid} (job {job.key} priority {job.priority}, pod priority "
            f"{task.priority}) in queue {job.queue}; victim job priority {vprio}, pod priority "
            f"{victim.priority}{gang}"
        ),
        preemptor=task.uid,
        blocker=Blocker(BlockerKind.QUEUE, job.queue, limit="priority"),
    )


def _evict_gangs(stmt: Statement, task: TaskState, plan: NodePlan) -> None:
    for whole in plan.gangs:
        words = whole_gang_words(whole)
        for victim in whole:
            _evict(stmt, task, victim, words)


def _could_fit(ssn: Session, task: TaskState, row: int, victims: list[TaskState]) -> bool:
    total = ssn.nodes.future_idle(row)
    for v in victims:
        total += v.vec
    return fits(task, total)


def _evict_set(
    ssn: Session,
    stmt: Statement,
    task: TaskState,
    row: int,
    victims: list[TaskState],
    keep: Callable[[TaskState], bool],
) -> bool:
    """Evict the victims and every other pod of their jobs that ``keep`` accepts (whole workloads); whether ``task``
    then fits node ``row`` and passes its queue's gates."""
    taken = {id(v) for v in victims}
    pods = list(victims)
    for vjob in {id(v.pg): v.pg for v in victims if v.pg is not None}.values():
        pods += [t for t in vjob.tasks if id(t) not in taken and keep(t)]
    for victim in pods:
        _evict(stmt, task, victim)
    job = task.pg
    assert job is not None
    return _fits_on_node(ssn, job.queue, task, row)


def _take_set(
    ssn: Session,
    stmt: Statement,
    task: TaskState,
    row: int,
    victims: list[TaskState],
    sort_victims: Callable[[list[TaskState]], list[TaskState]],
    keep: Callable[[TaskState], bool],
) -> bool:
    """Whether ``task`` goes to node ``row`` with a node's victims taken as one set (Kueue's): at once where the free
    room holds it (``free_room_holds``), else with the set evicted whole (``_evict_set``); none without a set."""
    job = task.pg
    assert job is not None
    if free_room_holds(ssn, task, row, job.queue):
        return True
    return bool(victims) and _evict_set(ssn, stmt, task, row, sort_victims(victims), keep)


def _scored_rows(ssn: Session, task: TaskState, extra: I64) -> list[int]:
    """The nodes that pass the predicates and could hold ``task`` with ``extra`` freed, best score first."""
    mask = np.zeros(len(ssn.nodes), dtype=np.bool_)
    mask[rows_with_room(ssn, task, extra)] = True
    return list(ssn.placement.candidates_by_score(task, mask))


def _preempt(
    ssn: Session,
    stmt: Statement,
    task: TaskState,
    keep: Callable[[TaskState], bool],
    extra: Callable[[], I64],
    skip: frozenset[str] = frozenset(),
    whole_set: bool = False,
) -> bool:
    """Find a node for ``task`` by evicting pods that ``keep`` accepts; ``extra()``: per node, at least what the
    victims the plugins could choose among them request (nodes where even that leaves no room are passed over).
    ``skip``: ``GANG_RULE`` for victims chosen with gangs in mind (``actions.gangvictims``); ``whole_set``: a node's
    victims are one set, evicted whole (``_take_set``)."""
    if task.info.preemption_policy == "Never":
        return False
    job = task.pg
    assert job is not None
    fw = ssn.framework
    rows = _scored_rows(ssn, task, extra())
    if not rows:
        return False
    queue_ok = fw.allocatable(job.queue, task) is None  # evictions on a node change it; nothing else does
    sort_victims = fw.victim_sorter(task)  # taken again after a node's evictions are undone
    gangs = None
    if skip:
        gangs = GangVictims(ssn, task, _PREEMPTABLE, keep, lambda pods: fw.preemptable(task, pods, skip), sort_victims)
        rows = free_first(ssn, task, rows)
    for row in rows:
        # in victim order, as for reclaim (Volcano: map order)
        preemptees = sort_victims(sorted((t for t in ssn.nodes.tasks[row].values() if keep(t)), key=lambda t: t.uid))
        victims = fw.preemptable(task, preemptees, skip)
        node_stmt = Statement(ssn)
        if whole_set:
            ok = _take_set(ssn, node_stmt, task, row, victims, sort_victims, keep)
            ordered: list[TaskState] = []
        elif gangs is not None:
            plan = gangs.plan(row, sort_victims(victims))
            if plan is None:
                continue
            _evict_gangs(node_stmt, task, plan)
            ordered, ok = list(plan.spare), _fits_on_node(ssn, job.queue, task, row)
        else:
            if not _could_fit(ssn, task, row, victims):
                continue
            ordered, ok = sort_victims(victims), queue_ok and fits(task, ssn.nodes.future_idle(row))
        for victim in ordered:
            if ok:
                break
            _evict(node_stmt, task, victim)
            ok = _fits_on_node(ssn, job.queue, task, row)
        if ok:
            node_stmt.pipeline(task, row)
            stmt.merge(node_stmt)
            return True
        if node_stmt.ops:
            node_stmt.discard()
            sort_victims = fw.victim_sorter(task)
            if gangs is not None:
                gangs.sort = sort_victims
    return False


def preempt(ssn: Session) -> None:
    """Run the preempt action (see the module docstring)."""
    fw = ssn.framework
    room = VictimRoom(ssn, "preemptable", _PREEMPTABLE, GANG_RULE if ssn.policy.whole_gangs("preempt") else frozenset())
    guard = MinRuntime(ssn, "preempt")
    preemptors: dict[str, KeyedHeap[JobState]] = {}
    under_request: dict[str, list[JobState]] = {}
    tasks: dict[str, deque[TaskState]] = {}
    for key in sorted(ssn.jobs):
        job = ssn.jobs[key]
        if job.is_pending() or fw.job_valid(job) is not None or job.queue not in ssn.snapshot.queues:
            continue
        if not fw.job_starving(job):
            continue
        preemptors.setdefault(job.queue, KeyedHeap(fw.job_key)).push(job)
        under_request.setdefault(job.queue, []).append(job)
        tasks[key] = deque(_pending_tasks(ssn, job))
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(preemptors))
    while order:
        queue = order.pop()
        jobs = preemptors[queue]
        while jobs:
            ssn.checkpoint()
            _preempt_between_jobs(ssn, jobs.pop(), tasks, queue, room, guard)
        for job in under_request[queue]:
            ssn.checkpoint()
            _preempt_within_job(ssn, job, guard)


def _pending_tasks(ssn: Session, job: JobState) -> list[TaskState]:
    return sorted((t for t in job.tasks if t.status == TaskStatus.PENDING), key=ssn.framework.task_key)


def _queue_candidates(jobs: list[JobState], best_effort: bool) -> Iterator[TaskState]:
    """The pods of ``jobs`` a pod (best-effort or not) may preempt, status and plugins aside: preemptable,
    best-effort ones only for a best-effort pod."""
    for job in jobs:
        for t in job.tasks:
            if t.preemptable and (t.best_effort or not best_effort):
                yield t


def _preempt_between_jobs(
    ssn: Session, pjob: JobState, tasks: dict[str, deque[TaskState]], queue: str, room: VictimRoom, guard: MinRuntime
) -> None:
    """The first phase for one starving job: its pending pods take from other jobs of its queue, while it starves;
    committed only if the job is then pipelined. With ``minRuntimeHigherPriority: lastResort`` the job first tries
    without cutting any minimum runtime short, and only when that does not place it, with the strictly-higher-priority
    exception."""
    ssn.release_holds(pjob)
    todo = tasks[pjob.key]
    if guard.last_resort and _between_pass(ssn, pjob, deque(todo), queue, room, guard, strict=True):
        return
    _between_pass(ssn, pjob, todo, queue, room, guard, strict=False)


def _between_pass(
    ssn: Session,
    pjob: JobState,
    todo: deque[TaskState],
    queue: str,
    room: VictimRoom,
    guard: MinRuntime,
    strict: bool,
) -> bool:
    """One try of the first phase for ``pjob`` (``strict``: no pod within its minimum runtime is a victim, whatever
    the priorities); whether it was committed (else it is discarded, the session as it was)."""
    fw = ssn.framework
    jobs = ssn.jobs_by_queue.get(queue, [])
    whole_set = fw.victims_are_a_set("preemptable", queue)  # Kueue's classical set, evicted whole
    if not whole_set and _gang_out_of_reach(ssn, pjob, todo, jobs, room):
        return False  # the pass would be discarded: nothing tried, nothing to undo
    mark = room.mark()
    stmt = Statement(ssn)
    failed: dict[tuple[object, ...], int] = {}
    while fw.job_starving(pjob) and todo:
        task = todo.popleft()
        attempt = attempt_key(task)
        if failed.get(attempt) == ssn.epoch:
            continue  # an identical pod found no victims and nothing has changed since

        def between(t: TaskState, task: TaskState = task) -> bool:
            return (
                t.status in _PREEMPTABLE
                and (t.best_effort or not task.best_effort)
                and t.preemptable
                and t.pg is not None
                and t.pg.queue == pjob.queue
                and t.pg is not pjob
                and not guard.protects(t, task, strict)
            )

        def extra(task: TaskState = task) -> I64:
            # the queue's candidates (cached while nothing changes) less the job's own
            be = task.best_effort
            return room.room(
                (queue, be),
                lambda: _queue_candidates(jobs, be),
                task,
                without=_queue_candidates([pjob], be),
            )

        if not _preempt(ssn, stmt, task, between, extra, room.skip, whole_set):
            failed[attempt] = ssn.epoch
    # with whole gangs, the beneficiary's own gang minimum too, whatever the policy's gang switches say
    if fw.job_pipelined(pjob) and (not room.skip or gang_met(pjob)):
        stmt.commit()
        return True
    stmt.discard()
    room.restored(mark)
    return False


def _gang_decides(ssn: Session, whole_gangs: bool) -> bool:
    """Whether a pass commits only for a job holding its gang minimum with its pipelined pods: with whole gangs always
    (``gang_met``), else when the ``gang`` plugin votes in the first tier of ``job_pipelined`` votes (its refusal
    there is final: ``Framework.job_pipelined``)."""
    return whole_gangs or any(p.name == "gang" for p in ssn.framework.first_voters("job_pipelined"))


def _gang_out_of_reach(
    ssn: Session, pjob: JobState, todo: deque[TaskState], jobs: list[JobState], room: VictimRoom
) -> bool:
    """Whether a first-phase pass for ``pjob`` is sure to be discarded (``_out_of_reach``): the victims of each kind
    of pod it would try (``attempt_key``: its request and what the victim tests read of it) free at most what the
    pods of the queue's other jobs on each node that pass the victim test for it request (``VictimRoom``, as the
    pass's own bound: no victims the plugins choose free more). A pass whose commit does not wait for the gang
    (``_gang_decides``) is always tried."""
    if not _gang_decides(ssn, bool(room.skip)) or not _short(pjob, todo):
        return False
    kinds = {attempt_key(task): task for task in todo}
    freed: I64 = np.zeros_like(ssn.nodes.idle)
    for task in kinds.values():
        be = task.best_effort
        freed += room.room((pjob.queue, be), partial(_queue_candidates, jobs, be), task, _queue_candidates([pjob], be))
    return _out_of_reach(ssn, pjob, todo, freed)


def _short(job: JobState, todo: Sequence[TaskState]) -> int:
    """How many more pipelined pods ``job`` needs to hold its gang minimum (0: none), when it has pods to try."""
    return max(0, job.min_member - job.ready_num() - job.waiting_num() - job.pending_be) if todo else 0


def _out_of_reach(ssn: Session, job: JobState, todo: Sequence[TaskState], freed: I64) -> bool:
    """Whether ``job`` cannot get the ``k`` more pipelined pods its gang needs (``_short``) from the pods ``todo``,
    when evictions free at most ``freed`` on each node: a pod pipelined on a node fits the node's future idle, which
    only the evictions there raise (evicting the job's own pods only lowers what it holds). Pods all of one request:
    at most ``(future idle + freed) // request`` of them on each node their predicates allow; else, per resource,
    the ``k`` smallest requests against the sum over the nodes."""
    need = _short(job, todo)
    if need > len(todo):
        return True
    table = ssn.nodes
    offer = np.maximum(table.idle + table.releasing - table.pipelined, 0) + freed
    first = todo[0]
    if all(t.vkey == first.vkey and t.sig == first.sig for t in todo):
        cols = np.flatnonzero(first.vec > 0)
        if not cols.size:
            return False
        each = (offer[:, cols] // first.vec[cols]).min(axis=1)
        return int(each[ssn.placement.static_mask(first.sig)].sum()) < need
    asked = np.sort(np.stack([t.vec for t in todo]), axis=0)[:need].sum(axis=0)
    return bool((asked > offer.sum(axis=0)).any())


def _preempt_within_job(ssn: Session, job: JobState, guard: MinRuntime) -> None:
    """The second phase for one job under its request: its pending pods take from its own lower-priority pods.
    Volcano commits each success of this phase at once. A committed pipeline is a real decision in Fairway (the pod
    runs once its victims are gone), so the job's successes are gathered in one statement and committed only if the
    job is then pipelined (its gang met): all or nothing. Without a gang (no pipelined vote) that is Volcano's
    outcome."""
    todo = _pending_tasks(ssn, job)
    decides = _gang_decides(ssn, False) and _short(job, todo)
    if decides and _out_of_reach(ssn, job, todo, evictable_of(ssn, [job], _PREEMPTABLE)):
        return  # the statement would be discarded: nothing tried, nothing to undo
    stmt = Statement(ssn)
    for task in todo:

        def within(t: TaskState, task: TaskState = task) -> bool:
            return (
                t.status in _PREEMPTABLE
                and (t.best_effort or not task.best_effort)
                and t.preemptable
                and t.pg is job
                and not guard.protects(t, task)
            )

        if not _preempt(ssn, stmt, task, within, lambda: evictable_of(ssn, [job], _PREEMPTABLE)):
            break
    if ssn.framework.job_pipelined(job):
        stmt.commit()
    else:
        stmt.discard()
