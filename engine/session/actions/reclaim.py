"""``reclaim``: a queue below its entitlement takes resources back from queues above theirs (Volcano
``actions/reclaim``).

Taken part: jobs that are not Pending, valid, in an existing queue; a *starving* job (the plugins'
``job_starving``: gang ``ready + pipelined < minMember``, priority ``< all pods``) is a reclaimer. Queues in
queue order, overused ones skipped; for each starving job of the queue, one statement: while it is starving,
its next pending pod (a pod with ``preemptionPolicy: Never`` is skipped) must pass the queue's ``preemptive``
gate (proportion: within deserved; capacity: within realCapability and some requested resource within
deserved); then, node by node (in name order, among the nodes that pass the predicates and could hold it with
what evicting every pod the plugins' victim tests let through would free: ``actions.common.VictimRoom``), the
candidates are the Running, preemptable pods of *other* queues whose queue is
``reclaimable`` (``reclaimable: false`` protects a queue) and, with a minimum runtime (``minRuntime``, see
``actions.common.MinRuntime``), that started at least that long ago or are of a lower priority than the pod
(unless the reclaimer's queue stays within its guarantee with the pod; ``minRuntimeHigherPriority`` narrows the
priority exception: ``lastResort`` tries the job without it first, ``wait`` drops it); the plugins choose the victims (``reclaimable``:
gang keeps its minimum, conformance spares critical pods, proportion / capacity take only from queues above
their deserved, never below a guarantee); the node must then hold the pod with its future idle plus the victims;
victims are evicted in victim order (capacity's hierarchy: siblings first, seed 004) until the pod fits, and the
pod is pipelined there. A node that ends up unused keeps its pods (per-node statement). The job's statement is
committed when the job is pipelined, else discarded. A pod that would take its job's user (or one of its groups)
over a per-user limit (``engine.session.userlimits``) reclaims nothing, as allocate would not place it.

With ``wholeGangs: true`` in the action's configuration the victims on a node are chosen with gangs in mind
(``actions.gangvictims``: spare pods first, then the least-waste set of whole gangs; the ``gang`` plugin's victim
rule is left out, every other filter stays), and the job's statement is committed only when its own gang minimum is
met too.

When a plugin chooses the victims as one set across the reclaimer's own queue and the others
(``Framework.reclaims_within_queue``: Kueue's classical preemption, with ``withinClusterQueue`` and
``reclaimWithinCohort`` both allowing some), the Running pods of the queue's other jobs are candidates too, under
preempt's rules (a best-effort pod takes only best-effort pods; the minimum runtime, its exception the strictly higher
priority), whatever the queue's ``reclaimable``; such a victim is recorded as preempted within its queue. When a
plugin's victims are one set to take whole (``Framework.victims_are_a_set``: Kueue's classical preemption, which counts
quota, not nodes), a node's set is evicted whole, with every other pod of its jobs, and the pod is pipelined there only
if it then fits the node *and* passes its queue's allocatable gates (else the node's evictions are undone).

A pod identical to one of its queue that found nothing (same shape, priority, quota group; any job of the queue: the
candidates are other queues' pods; of the same job when the queue's own jobs are candidates too) is not searched again while the session has not changed since (Fairway, for
speed: the same decisions).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from engine.objects import TaskStatus
from engine.resources import sorted_resources
from engine.session.actions.common import (
    I64,
    KeyedHeap,
    MinRuntime,
    VictimRoom,
    attempt_key,
    fits,
    free_room_holds,
    rows_with_room,
)
from engine.session.actions.gangvictims import GANG_RULE, GangVictims, free_first, gang_met, whole_gang_words
from engine.session.decisions import Blocker
from engine.session.reasons import GateRefusal, qty
from engine.session.session import JobState, Session, TaskState
from engine.session.statement import Statement
from engine.vocabulary import BlockerKind

_RUNNING = frozenset({TaskStatus.RUNNING})


def victim_blocker(ssn: Session, victim: TaskState) -> tuple[Blocker | None, str]:
    """The victim's queue against its deserved, on the first resource it uses where it is above it."""
    book = ssn.queue_book
    queue = victim.queue
    if book is None or queue not in book:
        return None, f"queue {queue}"
    st = book.state(queue)
    for r in sorted_resources(victim.req):
        allocated, deserved = st.allocated.get(r, 0), st.deserved.get(r, 0)
        if allocated > deserved:
            text = f"queue {queue} holds {qty(allocated, r)} {r}, above its deserved {qty(deserved, r)}"
            if st.kept_off.get(r, 0) > 0:
                text += f" ({qty(st.kept_off[r], r)} kept by other queues' lending limits)"
            return Blocker(BlockerKind.QUEUE, queue, r, allocated, deserved, "deserved"), text
    for r in sorted_resources(victim.req):
        allocated, real = st.allocated.get(r, 0), st.real_capability.get(r, 0)
        if allocated > real and st.kept_off.get(r, 0) > 0:
            # within its deserved, but holding what another queue's lending limit keeps (set after it was lent)
            text = (
                f"queue {queue} holds {qty(allocated, r)} {r}, above its realCapability {qty(real, r)} "
                f"({qty(st.kept_off[r], r)} kept by other queues' lending limits)"
            )
            return Blocker(BlockerKind.QUEUE, queue, r, allocated, real, "realCapability"), text
    first = next(iter(sorted_resources(victim.req)), None)
    if first is None:
        return Blocker(BlockerKind.QUEUE, queue, limit="deserved"), f"queue {queue}"
    allocated, deserved = st.allocated.get(first, 0), st.deserved.get(first, 0)
    text = f"queue {queue} holds {qty(allocated, first)} {first} (deserved {qty(deserved, first)})"
    return Blocker(BlockerKind.QUEUE, queue, first, allocated, deserved, "deserved"), text


_RECLAIMABLE = "reclaimable queues"  # the victim room's scope of every reclaimable queue's pods (``_victims_room``)


def _queue_pods(ssn: Session, queues: Iterable[str]) -> Iterator[TaskState]:
    """The preemptable pods of the jobs of ``queues``, status aside (the victims are Running)."""
    for name in queues:
        for job in ssn.jobs_by_queue.get(name, ()):
            for t in job.tasks:
                if t.preemptable:
                    yield t


def _victims_room(ssn: Session, room: VictimRoom, task: TaskState, job: JobState, within: bool) -> I64:
    """Per node, what the pods a reclaimer of ``job``'s queue may take free at most (``VictimRoom``): those of
    every other queue that exists and is reclaimable; ``within``: of the queue's own other jobs too (one set across
    both, ``Framework.reclaims_within_queue``). Counted as the room of every reclaimable queue's pods (one table
    for all the action's reclaimers, not one per queue, each nearly the whole cluster's pods), less the queue's own
    (or, ``within``, plus them if it is not reclaimable, less the job's own): the sums are per node, so they add."""
    queues, queue = ssn.snapshot.queues, job.queue

    def reclaimable() -> Iterator[TaskState]:  # (listed once per action: the room keeps the scope's table)
        return _queue_pods(ssn, [n for n in ssn.jobs_by_queue if n in queues and queues[n].reclaimable])

    def own() -> Iterator[TaskState]:
        return _queue_pods(ssn, (queue,))

    if not within:
        extra = room.room(_RECLAIMABLE, reclaimable, task)
        return extra - room.room(("queue", queue), own, task) if queues[queue].reclaimable else extra
    # the job's own pods taken off by the room itself (``without``)
    extra = room.room(_RECLAIMABLE, reclaimable, task, without=[t for t in job.tasks if t.preemptable])
    return extra if queues[queue].reclaimable else extra + room.room(("queue", queue), own, task)


def _evict(ssn: Session, stmt: Statement, task: TaskState, job: JobState, victim: TaskState, gang: str = "") -> None:
    if victim.queue == job.queue:  # a victim of the reclaimer's own queue, in one set with the others'
        vjob = victim.pg
        stmt.evict(
            victim,
            action="reclaim",
            reason="Preempted",
            message=(
                f"preempted by {task.uid} (job {job.key} priority {job.priority}) within queue {job.queue}, in one "
                f"set with the other queues' victims; victim job priority {vjob.priority if vjob else 0}{gang}"
            ),
            preemptor=task.uid,
            blocker=Blocker(BlockerKind.QUEUE, job.queue, limit="priority"),
        )
        return
    blocker, why = victim_blocker(ssn, victim)
    stmt.evict(
        victim,
        action="reclaim",
        reason="Reclaimed",
        message=f"reclaimed for {task.uid} of queue {job.queue}: {why}{gang}",
        preemptor=task.uid,
        blocker=blocker,
    )


def _node_victims(
    ssn: Session, node_stmt: Statement, task: TaskState, row: int, victims: list[TaskState], gangs: GangVictims | None
) -> list[TaskState] | None:
    """The victims on node ``row`` (in victim order) to evict until ``task`` fits; None when even all of them leave
    no room. With gangs in mind (``gangs``), the whole gangs the plan takes are evicted into ``node_stmt`` first."""
    if gangs is None:
        total = ssn.nodes.future_idle(row)
        for v in victims:
            total += v.vec
        return victims if fits(task, total) else None
    plan = gangs.plan(row, victims)
    if plan is None:
        return None
    job = task.pg
    assert job is not None
    for whole in plan.gangs:
        words = whole_gang_words(whole)
        for victim in whole:
            _evict(ssn, node_stmt, task, job, victim, words)
    return list(plan.spare)


def _evict_set(
    ssn: Session,
    node_stmt: Statement,
    task: TaskState,
    job: JobState,
    row: int,
    victims: list[TaskState],
    holds: Callable[[TaskState], bool],
) -> bool:
    """Evict the victims and every other pod of their jobs ``holds`` accepts (whole workloads, wherever they run);
    whether ``task`` then fits node ``row`` and passes its queue's allocatable gates (the quota the set freed)."""
    taken = {id(v) for v in victims}
    pods = list(victims)
    for vjob in {id(v.pg): v.pg for v in victims if v.pg is not None}.values():
        pods += [t for t in vjob.tasks if id(t) not in taken and holds(t)]
    for victim in pods:
        _evict(ssn, node_stmt, task, job, victim)
    return fits(task, ssn.nodes.future_idle(row)) and ssn.framework.allocatable(job.queue, task) is None


def _take_set(
    ssn: Session,
    node_stmt: Statement,
    task: TaskState,
    job: JobState,
    row: int,
    victims: list[TaskState],
    sort_victims: Callable[[list[TaskState]], list[TaskState]],
    holds: Callable[[TaskState], bool],
) -> bool:
    """Whether ``task`` goes to node ``row`` with the plugin's victims taken as one set: at once where the free room
    holds it (``free_room_holds``), else with the set evicted whole (``_evict_set``); none without a set."""
    if free_room_holds(ssn, task, row, job.queue):
        return True
    return bool(victims) and _evict_set(ssn, node_stmt, task, job, row, sort_victims(victims), holds)


def _holder(
    ssn: Session, task: TaskState, job: JobState, guard: MinRuntime, strict: bool, within: bool
) -> Callable[[TaskState], bool]:
    """The test of the pods ``task`` may take: Running, preemptable, of a reclaimable other queue (a young one only
    while the reclaimer's queue stays within its guarantee), or, ``within``, of another job of its own queue under
    preempt's rules (best-effort pods for a best-effort pod, the minimum runtime)."""
    queues = ssn.snapshot.queues
    # a lender taking back up to its guarantee is never delayed by the victims' minimum runtime
    young_ok = not guard.active or guard.within_guarantee(task, job.queue)

    def holds(t: TaskState) -> bool:
        if t.status != TaskStatus.RUNNING or not t.preemptable or t.pg is None or t.pg.queue not in queues:
            return False
        if t.pg.queue == job.queue:
            return (
                within
                and t.pg is not job
                and (t.best_effort or not task.best_effort)
                and not guard.protects(t, task, strict)
            )
        return queues[t.pg.queue].reclaimable and (young_ok or not guard.protects(t, task, strict))

    return holds


def _reclaim_for_task(
    ssn: Session,
    stmt: Statement,
    task: TaskState,
    job: JobState,
    room: VictimRoom,
    guard: MinRuntime,
    strict: bool = False,
) -> bool:
    fw = ssn.framework
    table = ssn.nodes
    # one set across the reclaimer's own queue and the others (Kueue's classical preemption): its other jobs' pods
    # are candidates too, as in preempt
    within = fw.reclaims_within_queue(job.queue)
    # only nodes where the future idle plus every pod the plugins could choose there might hold the pod
    extra = _victims_room(ssn, room, task, job, within)
    sort_victims = fw.victim_sorter(task)  # nothing changes until a node takes the pod
    skip = room.skip  # the gang plugin's rule, when victims are chosen with gangs in mind (``wholeGangs``)
    holds, whole_set = _holder(ssn, task, job, guard, strict, within), fw.victims_are_a_set("reclaimable", job.queue)
    gangs = None
    if skip:
        gangs = GangVictims(ssn, task, _RUNNING, holds, lambda pods: fw.reclaimable(task, pods, skip), sort_victims)
    rows = rows_with_room(ssn, task, extra)
    for row in rows if gangs is None else free_first(ssn, task, rows):
        reclaimees = [t for t in table.tasks[row].values() if holds(t)]
        if not reclaimees and ((gangs is None and not whole_set) or not fits(task, table.future_idle(row))):
            continue
        # Volcano hands the plugins the node's pods in map order (random); the plugins walk them with running
        # totals (gang's minimum, proportion's allocated), so the order decides who is chosen. Fairway hands
        # them over in victim order, so the least important candidates are the ones chosen.
        reclaimees = sort_victims(sorted(reclaimees, key=lambda t: t.uid))
        victims = fw.reclaimable(task, reclaimees, skip)
        node_stmt = Statement(ssn)
        if whole_set:  # the plugin's victims are one set, evicted whole (Kueue counts quota), or the free room
            if _take_set(ssn, node_stmt, task, job, row, victims, sort_victims, holds):
                node_stmt.pipeline(task, row)
                stmt.merge(node_stmt)
                return True
            node_stmt.discard()
            continue
        ordered = _node_victims(ssn, node_stmt, task, row, sort_victims(victims), gangs)
        if ordered is None:
            continue
        available = table.future_idle(row)
        for victim in ordered:
            if fits(task, available):
                break
            _evict(ssn, node_stmt, task, job, victim)
            available += victim.vec
        if not fits(task, available):
            node_stmt.discard()
            continue
        node_stmt.pipeline(task, row)
        stmt.merge(node_stmt)
        return True
    return False


def _starving(
    ssn: Session,
) -> tuple[dict[str, KeyedHeap[JobState]], dict[str, deque[TaskState]], set[str]]:
    """The starving jobs by queue (in job order), each one's pending pods (in task order), and the queues with jobs
    taking part (valid, not Pending, in an existing queue)."""
    fw = ssn.framework
    preemptors: dict[str, KeyedHeap[JobState]] = {}
    tasks: dict[str, deque[TaskState]] = {}
    with_jobs: set[str] = set()
    for key in sorted(ssn.jobs):
        job = ssn.jobs[key]
        if job.is_pending() or fw.job_valid(job) is not None or job.queue not in ssn.snapshot.queues:
            continue
        with_jobs.add(job.queue)
        if fw.job_starving(job):
            preemptors.setdefault(job.queue, KeyedHeap(fw.job_key)).push(job)
            tasks[key] = deque(sorted((t for t in job.tasks if t.status == TaskStatus.PENDING), key=fw.task_key))
    return preemptors, tasks, with_jobs


def reclaim(ssn: Session) -> None:
    """Run the reclaim action (see the module docstring)."""
    fw = ssn.framework
    room = VictimRoom(ssn, "reclaimable", _RUNNING, GANG_RULE if ssn.policy.whole_gangs("reclaim") else frozenset())
    guard = MinRuntime(ssn, "reclaim")
    preemptors, tasks, with_jobs = _starving(ssn)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(with_jobs))
    # (queue, pod shape) -> the epoch at which an identical pod of that queue found nothing, and the gate's refusal
    # if that was why: the candidates are other queues' pods, so a pod of another job of the queue finds the same
    failed: dict[tuple[object, ...], tuple[int, GateRefusal | None]] = {}
    while order:
        queue = order.pop()
        if fw.overused(queue) is not None:
            continue
        jobs = preemptors.get(queue)
        # Volcano puts the queue back while it has starving jobs and keeps serving it in the same loop: every
        # starving job of the queue is served now, in job order.
        while jobs:
            ssn.checkpoint()
            job = jobs.pop()
            ssn.release_holds(job)
            todo = tasks[job.key]
            # minRuntimeHigherPriority: lastResort: first without cutting any minimum runtime short
            if guard.last_resort and _reclaim_job(ssn, job, deque(todo), room, guard, failed, True):
                continue
            _reclaim_job(ssn, job, todo, room, guard, failed, False)


def _reclaim_job(
    ssn: Session,
    job: JobState,
    todo: deque[TaskState],
    room: VictimRoom,
    guard: MinRuntime,
    failed: dict[tuple[object, ...], tuple[int, GateRefusal | None]],
    strict: bool,
) -> bool:
    """One try for a starving ``job`` (``strict``: no pod within its minimum runtime is a victim, whatever the
    priorities); whether it was committed (else it is discarded, the session as it was)."""
    fw = ssn.framework
    queue = job.queue
    mark = room.mark()
    stmt = Statement(ssn)
    within = fw.reclaims_within_queue(queue)
    while fw.job_starving(job) and todo:
        task = todo.popleft()
        if task.info.preemption_policy == "Never":
            continue
        # the candidates are other queues' pods, or with one set also the queue's other jobs': then per job
        attempt = (queue, strict, *attempt_key(task, job=within))
        found = failed.get(attempt)
        if found is not None and found[0] == ssn.epoch:
            # an identical pod found nothing and nothing has changed since
            job.allocate_refusal = job.allocate_refusal or found[1]
            continue
        refusal = fw.preemptive(queue, task)
        if refusal is not None:
            job.allocate_refusal = job.allocate_refusal or refusal
            failed[attempt] = (ssn.epoch, refusal)
            continue
        # per-user limits: the job's user, not the queue, so not remembered for the queue's identical pods
        refusal = fw.user_limit_allocatable(queue, task)
        if refusal is not None:
            job.allocate_refusal = job.allocate_refusal or refusal
            continue
        if not _reclaim_for_task(ssn, stmt, task, job, room, guard, strict):
            failed[attempt] = (ssn.epoch, None)
    # with whole gangs, the beneficiary's own gang minimum too, whatever the policy's gang switches say
    if fw.job_pipelined(job) and (not room.skip or gang_met(job)):
        stmt.commit()
        return True
    stmt.discard()
    room.restored(mark)
    return False
