"""Helpers the actions share: priority queues with keys taken at push time, and resource-fit tests."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from engine.objects import TaskStatus
from engine.session.framework import ONE_CLASS, VictimFactor
from engine.session.session import JobState, Session, TaskState

T = TypeVar("T")
I64 = npt.NDArray[np.int64]
BOOL = npt.NDArray[np.bool_]


class KeyedHeap(Generic[T]):
    """A min-heap whose order key is computed when an item is pushed (Volcano's heaps compare on push/pop)."""

    __slots__ = ("_count", "_heap", "_key")

    def __init__(self, key: Callable[[T], Any], items: Iterable[T] = ()) -> None:
        self._key = key
        self._count = itertools.count()
        self._heap: list[tuple[Any, int, T]] = [(key(x), next(self._count), x) for x in items]
        heapq.heapify(self._heap)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, (self._key(item), next(self._count), item))

    def pop(self) -> T:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def items(self) -> list[T]:
        return [x for _, _, x in self._heap]


def fits(task: TaskState, available: I64) -> bool:
    """``task``'s request (and pod slot) <= ``available`` on every resource it needs (Volcano ``LessEqual``)."""
    cols = task.vec > 0
    return bool((task.vec[cols] <= available[cols]).all())


def free_room_holds(ssn: Session, task: TaskState, row: int, queue: str) -> bool:
    """Whether node ``row``'s free room (its future idle) and ``queue``'s allocatable gates hold ``task`` without any
    eviction. With a plugin whose victims are one set (Kueue's, ``Framework.victims_are_a_set``) a pod goes there at
    once: Kueue preempts for a whole workload, so of a workload of several pods, those that fit where room is free
    take it and the victims are found for the others (a pod that fits needs none, so asking for its victims alone
    would find nothing for any of them)."""
    return fits(task, ssn.nodes.future_idle(row)) and ssn.framework.allocatable(queue, task) is None


_EVICTABLE = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND})


def evictable_of(ssn: Session, jobs: Iterable[JobState], statuses: frozenset[TaskStatus] = _EVICTABLE) -> I64:
    """Per node, what the preemptable pods of ``jobs`` in ``statuses`` request: an upper bound of what evicting
    them can free, to skip nodes where no eviction could make room."""
    out: I64 = np.zeros_like(ssn.nodes.idle)
    for job in jobs:
        for t in job.tasks:
            if t.node >= 0 and t.preemptable and t.status in statuses:
                out[t.node] += t.vec
    return out


def rows_with_room(ssn: Session, task: TaskState, extra: I64) -> list[int]:
    """Rows (name order) passing the predicates where future idle plus ``extra`` could hold ``task``."""
    table = ssn.nodes
    mask = ssn.placement.static_mask(task.sig).copy()
    cols = np.flatnonzero(task.vec > 0)
    if cols.size:
        room = table.idle[:, cols] + table.releasing[:, cols] - table.pipelined[:, cols] + extra[:, cols]
        mask &= (room >= task.vec[cols]).all(axis=1)
    rows: list[int] = np.flatnonzero(mask).tolist()
    return rows


def attempt_key(task: TaskState, *, job: bool = True) -> tuple[Any, ...]:
    """What a victim search depends on besides the session state (the plugins read these of the preemptor);
    ``job=False`` for a search whose candidates never include the preemptor's job (reclaim's: other queues)."""
    key = (task.sig, task.vkey, task.priority, task.quota_group, task.quota_preemptible, task.best_effort)
    return (*key, task.job) if job else key


class _Candidates:
    """A scope's candidates (the pods in the room's statuses or Releasing when the scope was first asked for: no other
    pod becomes Bound or Running during an action), their rows, requests and jobs (each pod's index into ``jobs``;
    -1 for a pod without a job), and whether each is in the room's statuses now (``ok``, kept current from the
    session's log of status changes, ``Session.touched``, read up to ``pos``)."""

    __slots__ = ("classes", "job_of", "job_where", "jobs", "listed", "ok", "pos", "rows", "vecs", "where")

    def __init__(self, ssn: Session, listed: list[TaskState], statuses: frozenset[TaskStatus]) -> None:
        self.listed = listed
        self.rows: I64 = np.fromiter((t.node for t in listed), np.int64, len(listed))
        self.vecs: I64 = (
            np.stack([t.vec for t in listed]) if listed else np.zeros((0, ssn.nodes.idle.shape[1]), np.int64)
        )
        self.where: dict[int, int] = {id(t): i for i, t in enumerate(listed)}
        self.job_where: dict[int, int] = {}
        self.jobs: list[JobState] = []
        for t in listed:
            if t.pg is not None and id(t.pg) not in self.job_where:
                self.job_where[id(t.pg)] = len(self.jobs)
                self.jobs.append(t.pg)
        where = self.job_where
        self.job_of: I64 = np.fromiter((-1 if t.pg is None else where[id(t.pg)] for t in listed), np.int64, len(listed))
        self.ok: BOOL = np.fromiter((t.status in statuses for t in listed), np.bool_, len(listed))
        self.pos = len(ssn.touched)
        self.classes: dict[str, tuple[I64, int]] = {}  # plugin -> each pod's class (numbered), how many classes

    def catch_up(self, ssn: Session, statuses: frozenset[TaskStatus]) -> None:
        """``ok`` for the present state: only the pods whose status changed since are looked at again."""
        touched = ssn.touched
        where = self.where
        for t in touched[self.pos :]:
            i = where.get(id(t))
            if i is not None:
                self.ok[i] = t.status in statuses
        self.pos = len(touched)

    def changed_jobs(self, ssn: Session, pos: int) -> set[int]:
        """The jobs (indices) with a pod whose status changed since ``pos`` of the session's log (any of their
        pods: the job tests read the counts of all)."""
        where = self.job_where
        return {where[id(t.pg)] for t in ssn.touched[pos:] if t.pg is not None and id(t.pg) in where}

    def classes_of(self, factor: VictimFactor) -> tuple[I64, int]:
        """Each pod's class under ``factor``'s plugin (``Plugin.victim_class``: fixed through a session), numbered."""
        found = self.classes.get(factor.plugin)
        if found is None:
            assert factor.pod_class is not None
            number: dict[Hashable, int] = {}
            of = factor.pod_class
            cls: I64 = np.fromiter(
                (number.setdefault(of(t), len(number)) for t in self.listed), np.int64, len(self.listed)
            )
            found = self.classes[factor.plugin] = (cls, len(number))
        return found


def _ask_classes(c: _Candidates, factor: VictimFactor, eligible: BOOL) -> BOOL:
    """Which of the ``eligible`` pods pass ``factor``'s test, asked once per class present among them, of its first
    pod (``Plugin.victim_class``: every pod of the class answers the same); ``ONE_CLASS``: once in all."""
    index = np.flatnonzero(eligible)
    if not index.size:
        return eligible
    test = factor.test
    if factor.pod_class is ONE_CLASS:
        return eligible if test(c.listed[int(index[0])]) else np.zeros_like(eligible)
    cls, count = c.classes_of(factor)
    present, first = np.unique(cls[index], return_index=True)
    answer = np.zeros(count, np.bool_)
    answer[present] = [test(c.listed[i]) for i in index[first].tolist()]
    return eligible & answer[cls]


def _ask_each(c: _Candidates, factor: VictimFactor, eligible: BOOL) -> BOOL:
    """Which of the ``eligible`` pods pass ``factor``'s test, asked pod by pod (a plugin without a pod class)."""
    out = eligible.copy()
    test, listed = factor.test, c.listed
    for i in np.flatnonzero(eligible).tolist():
        out[i] = test(listed[i])
    return out


class VictimRoom:
    """Per node, what the pods that could be victims of a preemptor request: the sum over the candidates of
    ``scope`` that pass the framework's victim test (``Framework.victim_bound``) for the preemptor. No set of
    victims the plugins choose on a node frees more, so a node where the future idle plus this cannot hold the pod
    is one the action would pass over; skipping it changes no decision.

    One per action run; candidates are the scope's pods in ``statuses``. The sums are kept per (scope, test key)
    while the session is unchanged (every change to pods, nodes and the plugins' state goes through the session's
    status changes, which log the node), and computed again once it has changed, over the pods that were
    candidates (or Releasing) when the scope was first asked for: no other pod becomes Bound or Running during an
    action. An action that discards a statement (which puts the session back as it was when the statement
    began) says so with ``mark`` / ``restored``, and the sums of that state serve again.

    Computing them again asks the test in parts (``Framework.victim_factors``): each plugin's job test once per job
    whose pods changed status since it was last asked for the key (it reads only the job's counts and fixed
    fields, ``Plugin.victim_job_bound``), and its pod test once per pod class present (``Plugin.victim_class``), so
    a session's worth of reclaimers does not ask the tests of every candidate each time one is placed."""

    def __init__(
        self, ssn: Session, hook: str, statuses: frozenset[TaskStatus], skip: frozenset[str] = frozenset()
    ) -> None:
        self.ssn = ssn
        self.hook = hook
        self.statuses = statuses
        self.skip = skip  # plugins left out of the victim test (``gang`` when the action takes whole gangs)
        self._version = -1  # the length of the session's change log the sums are for
        self._sums: dict[tuple[Any, ...], I64] = {}
        self._marked: tuple[int, dict[tuple[Any, ...], I64]] = (-1, {})
        self._pods: dict[Any, _Candidates] = {}
        # (scope, test key, tier) -> the position of the session's log of status changes the answers are for, and
        # each job's answer to the tier's job tests
        self._jobs: dict[tuple[Any, ...], tuple[int, BOOL]] = {}

    def mark(self) -> int:
        """Remember the present state's sums (computed so far or later, until the session changes)."""
        version = len(self.ssn.nodes.log)
        if version != self._version:
            self._version, self._sums = version, {}
        self._marked = (version, self._sums)
        return version

    def restored(self, mark: int) -> None:
        """The session is back in the state it had at ``mark`` (everything since was discarded)."""
        version, sums = self._marked
        if version == mark:
            self._version, self._sums = len(self.ssn.nodes.log), sums

    def _scope(self, scope: Any, pods: Callable[[], Iterable[TaskState]]) -> _Candidates:
        """The scope's candidates, their status kept current."""
        found = self._pods.get(scope)
        if found is None:
            keep = self.statuses | {TaskStatus.RELEASING}  # an evicted pod comes back when its statement is discarded
            listed = [t for t in pods() if t.status in keep and t.node >= 0]
            found = self._pods[scope] = _Candidates(self.ssn, listed, self.statuses)
        else:
            found.catch_up(self.ssn, self.statuses)
        return found

    def _job_answers(self, c: _Candidates, memo: tuple[Any, ...], tests: list[Callable[[JobState], bool]]) -> BOOL:
        """Each job's answer to all of ``tests`` (a tier's job tests for one test key, ``memo``): the answers kept
        for the key, asked again for the jobs whose pods changed status since (``Plugin.victim_job_bound``: a job
        test reads only the job's counts and fixed fields, and of the preemptor what the key names)."""
        test = _all_of_jobs(tests)
        now = len(self.ssn.touched)
        kept = self._jobs.get(memo)
        if kept is None:
            answers: BOOL = np.fromiter((test(j) for j in c.jobs), np.bool_, len(c.jobs))
        else:
            pos, answers = kept
            jobs = c.jobs
            for j in c.changed_jobs(self.ssn, pos):
                answers[j] = test(jobs[j])
        self._jobs[memo] = (now, answers)
        return answers

    def _passing(self, scope: Any, pods: Callable[[], Iterable[TaskState]], preemptor: TaskState, key: Any) -> I64:
        """Per row, the requests of the scope's candidates that pass the framework's victim test, with the key
        ``key``: in some tier, every factor (``Framework.victim_factors``), the job tests asked per job and the pod
        tests per class; a pod without a job is asked the whole test."""
        ssn = self.ssn
        c = self._scope(scope, pods)
        sums = np.zeros_like(ssn.nodes.idle)
        if not c.listed:
            return sums
        tiers = ssn.framework.victim_factors(self.hook, preemptor, self.skip)
        if tiers is None:
            chosen = c.ok
        else:
            with_job = c.ok & (c.job_of >= 0)
            chosen = np.zeros_like(c.ok)
            for n, factors in enumerate(tiers):
                tests = [f.job_test for f in factors if f.job_test is not None]
                eligible = with_job
                if tests:
                    eligible = eligible & self._job_answers(c, (scope, key, n), tests)[c.job_of]
                for factor in sorted(factors, key=lambda f: f.pod_class is None):  # the pod-by-pod ones last
                    eligible = (_ask_each if factor.pod_class is None else _ask_classes)(c, factor, eligible)
                chosen = chosen | eligible
            orphans = np.flatnonzero(c.ok & (c.job_of < 0)).tolist()
            if orphans:
                _, test = ssn.framework.victim_bound(self.hook, preemptor, self.skip)
                chosen[[i for i in orphans if test(c.listed[i])]] = True
        np.add.at(sums, c.rows[chosen], c.vecs[chosen])
        return sums

    def room(
        self,
        scope: Any,
        pods: Callable[[], Iterable[TaskState]],
        preemptor: TaskState,
        without: Iterable[TaskState] = (),
    ) -> I64:
        """Per node (rows), the requests of the candidates among ``pods()`` (the same pods for the same ``scope``;
        asked for once) that pass the victim test for ``preemptor``, less those of ``without`` (some of those pods,
        that this preemptor may not take) that are candidates and pass it."""
        ssn = self.ssn
        version = len(ssn.nodes.log)
        if version != self._version:
            self._version, self._sums = version, {}
        key, test = ssn.framework.victim_bound(self.hook, preemptor, self.skip)
        cache_key = (scope, key)
        sums = self._sums.get(cache_key)
        statuses = self.statuses
        if sums is None:
            sums = self._sums[cache_key] = self._passing(scope, pods, preemptor, key)
        out = sums
        for t in without:
            if t.status in statuses and t.node >= 0 and test(t):
                if out is sums:
                    out = sums.copy()
                out[t.node] -= t.vec
        return out


def _all_of_jobs(tests: list[Callable[[JobState], bool]]) -> Callable[[JobState], bool]:
    if len(tests) == 1:
        return tests[0]
    return lambda job: all(f(job) for f in tests)


class MinRuntime:
    """KAI's min-runtime for one action (``reclaim`` or ``preempt``): a pod is kept from being a victim within its
    queue's minimum runtime of starting (placed or pipelined; a pod without a start time counts as just placed),
    unless its evictor's priority is strictly higher. The window is the victim's queue's ``min_runtime``, else its
    nearest ancestor's, else the policy's ``minRuntime`` of the action (0: off). It never delays a reclaimer whose
    queue, with the pod, stays within its guarantee (a lender taking back what it is guaranteed).

    The action's ``minRuntimeHigherPriority`` (``higher``) narrows the exception: ``lastResort``, the action asks
    first with ``strict`` (every pod within its window kept whatever the evictor's priority) and uses the exception
    only for a job that cannot be placed so; ``wait``, never (a pod just placed is most often the replacement of a
    pod just evicted: taking it again evicts the same task twice within a minute)."""

    __slots__ = ("_windows", "action", "higher", "ssn")

    def __init__(self, ssn: Session, action: str) -> None:
        self.ssn = ssn
        self.action = action
        self.higher = ssn.policy.min_runtime_higher_priority(action)
        default = ssn.policy.min_runtime(action)
        queues = ssn.snapshot.queues
        self._windows: dict[str, float] = {}
        for name in queues:
            q: str | None = name
            window = None
            while q is not None and q in queues and window is None:
                window = queues[q].min_runtime
                q = queues[q].parent
            self._windows[name] = default if window is None else window

    @property
    def active(self) -> bool:
        return any(w > 0 for w in self._windows.values())

    @property
    def last_resort(self) -> bool:
        """Whether the action tries first with ``strict`` (``minRuntimeHigherPriority: lastResort``, some window
        set)."""
        return self.higher == "lastResort" and self.active

    def within_guarantee(self, task: TaskState, queue: str) -> bool:
        """Whether ``queue`` guarantees some of what ``task`` asks and holds, with ``task``, no more than its
        guarantee on each resource it guarantees."""
        spec = self.ssn.snapshot.queues.get(queue)
        book = self.ssn.queue_book
        if spec is None or book is None or queue not in book:
            return False
        held = book.state(queue).allocated
        named = [(r, v, spec.guarantee[r]) for r, v in task.req.items() if r in spec.guarantee]
        return bool(named) and all(held.get(r, 0) + v <= cap for r, v, cap in named)

    def protects(self, victim: TaskState, evictor: TaskState, strict: bool = False) -> bool:
        """Whether ``victim`` is within its minimum runtime and ``evictor`` may not cut it short (``strict``: not
        even with a strictly higher priority)."""
        window = self._windows.get(victim.queue, 0.0)
        if window <= 0 or (evictor.priority > victim.priority and not strict and self.higher != "wait"):
            return False
        return victim.start is None or self.ssn.now - victim.start < window
