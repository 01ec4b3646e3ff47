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


def attempt_key(task: TaskState) -> tuple[Any, ...]:
    """What a victim search depends on besides the session state (the plugins read these of the preemptor)."""
    return (task.sig, task.vkey, task.priority, task.quota_group, task.quota_preemptible, task.best_effort, task.job)
