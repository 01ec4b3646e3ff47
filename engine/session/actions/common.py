"""Helpers the actions share: priority queues with keys taken at push time, and resource-fit tests."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from engine.objects import TaskStatus
from engine.session.session import JobState, Session, TaskState

T = TypeVar("T")
I64 = npt.NDArray[np.int64]


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
    began) says so with ``mark`` / ``restored``, and the sums of that state serve again."""

    def __init__(self, ssn: Session, hook: str, statuses: frozenset[TaskStatus]) -> None:
        self.ssn = ssn
        self.hook = hook
        self.statuses = statuses
        self._version = -1  # the length of the session's change log the sums are for
        self._sums: dict[tuple[Any, ...], I64] = {}
        self._marked: tuple[int, dict[tuple[Any, ...], I64]] = (-1, {})
        self._pods: dict[Any, tuple[list[TaskState], I64, I64, I64, list[JobState]]] = {}

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

    def _scope(
        self, scope: Any, pods: Callable[[], Iterable[TaskState]]
    ) -> tuple[list[TaskState], I64, I64, I64, list[JobState]]:
        """The scope's candidates, their rows and requests, and their jobs (each pod's index into the list of
        jobs; -1 for a pod without a job)."""
        found = self._pods.get(scope)
        if found is None:
            keep = self.statuses | {TaskStatus.RELEASING}  # an evicted pod comes back when its statement is discarded
            listed = [t for t in pods() if t.status in keep and t.node >= 0]
            rows: I64 = np.fromiter((t.node for t in listed), np.int64, len(listed))
            vecs: I64 = (
                np.stack([t.vec for t in listed]) if listed else np.zeros((0, self.ssn.nodes.idle.shape[1]), np.int64)
            )
            index: dict[int, int] = {}
            jobs: list[JobState] = []
            for t in listed:
                if t.pg is not None and id(t.pg) not in index:
                    index[id(t.pg)] = len(jobs)
                    jobs.append(t.pg)
            job_of: I64 = np.fromiter((-1 if t.pg is None else index[id(t.pg)] for t in listed), np.int64, len(listed))
            found = self._pods[scope] = (listed, rows, vecs, job_of, jobs)
        return found

    def _passing(self, scope: Any, pods: Callable[[], Iterable[TaskState]], preemptor: TaskState, test: Any) -> I64:
        """Per row, the requests of the scope's candidates that pass ``test``; the pod test is asked only for the
        pods of the jobs that pass the framework's job test (``Framework.victim_job_test``)."""
        ssn = self.ssn
        listed, rows, vecs, job_of, jobs = self._scope(scope, pods)
        sums = np.zeros_like(ssn.nodes.idle)
        if not listed:
            return sums
        statuses = self.statuses
        job_test = ssn.framework.victim_job_test(self.hook, preemptor)
        if job_test is None:
            asked: I64 = np.arange(len(listed))
        else:
            ok = np.fromiter((job_test(j) for j in jobs), np.bool_, len(jobs))
            asked = np.flatnonzero(np.append(ok, True)[job_of])  # index -1: a pod without a job is asked
        passing = np.fromiter(
            (listed[i].status in statuses and test(listed[i]) for i in asked.tolist()), np.bool_, asked.size
        )
        chosen = asked[passing]
        np.add.at(sums, rows[chosen], vecs[chosen])
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
        key, test = ssn.framework.victim_bound(self.hook, preemptor)
        cache_key = (scope, key)
        sums = self._sums.get(cache_key)
        statuses = self.statuses
        if sums is None:
            sums = self._sums[cache_key] = self._passing(scope, pods, preemptor, test)
        out = sums
        for t in without:
            if t.status in statuses and t.node >= 0 and test(t):
                if out is sums:
                    out = sums.copy()
                out[t.node] -= t.vec
        return out
