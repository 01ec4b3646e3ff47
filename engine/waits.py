"""How long jobs waited to start, per tree node: one computation for the replay's report (``engine.replay.report``:
the jobs as replayed) and the fairness audit (``engine.audit``: the jobs as they happened).

A job counts for its queue and its quota group and for every ancestor of each, so a department's figures hold its
teams' jobs and the root's hold the cluster's. Of the jobs submitted in a window: how many started, finished and are
still waiting at its end; the waits of those that started (the 50th and 95th percentiles, nearest rank); the longest
wait, a job still waiting counted with its wait so far (a job that never started is the longest wait of all, not a
gap in the figures); and the pods evicted from those jobs, preempted (or reclaimed) and recycled. The same figures
per submitter (``submitter_waits``: the user who submitted each job, or its namespace where none is known, as the
per-user limits count them), with the GPU-hours of the jobs' work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "QUEUE",
    "QUOTA",
    "SUBMITTER",
    "JobWait",
    "NodeWaits",
    "TreeParents",
    "WaitPoint",
    "lineage",
    "node_waits",
    "percentile",
    "submitter_waits",
    "waits_by_period",
]

QUEUE, QUOTA = "queue", "quota"
SUBMITTER = "submitter"  # the "tree" of ``submitter_waits``' figures


@dataclass(frozen=True, slots=True)
class TreeParents:
    """Each queue's and each quota group's parent (None: a root): where a job's figures are counted."""

    queues: Mapping[str, str | None]
    groups: Mapping[str, str | None]

    @classmethod
    def of(cls, snapshot: Any) -> TreeParents:
        """The parents of a snapshot's queues and quota groups (``engine.objects.Snapshot``)."""
        return cls(
            {name: q.parent for name, q in snapshot.queues.items()},
            {name: g.parent for name, g in snapshot.quota_groups.items()},
        )

    def tree(self, tree: str) -> Mapping[str, str | None]:
        return self.queues if tree == QUEUE else self.groups

    def path(self, queue: str, group: str | None) -> list[tuple[str, str]]:
        """The nodes a job of ``queue`` and ``group`` counts for: each with its ancestors, the queues first."""
        return [(QUEUE, q) for q in lineage(queue, self.queues)] + [(QUOTA, g) for g in lineage(group, self.groups)]

    def subtree(self, tree: str, tops: Collection[str]) -> set[str]:
        """The nodes of ``tree`` at or under one of ``tops``."""
        parents = self.tree(tree)
        return {name for name in parents if not set(tops).isdisjoint(lineage(name, parents))}


@dataclass(frozen=True, slots=True)
class JobWait:
    """One job of the window: its queue and quota group (None: none known), when it was submitted and first
    started (epoch seconds; None: not yet), whether it finished, and its pods evicted by preemption (or
    reclamation) and by recycling."""

    queue: str
    group: str | None
    submit: float
    start: float | None
    finished: bool
    preempted: int = 0
    recycled: int = 0
    submitter: str = ""  # who submitted it: its user, or "namespace NAME" where none is known
    gpu_seconds: float = 0.0  # the GPU-seconds of its pods' runs in the window (whole GPUs x seconds)


@dataclass(slots=True)
class NodeWaits:
    """The figures of one tree node (``tree``: "queue" or "quota"), or of one submitter (``tree``: ``SUBMITTER``);
    waits in seconds."""

    tree: str
    name: str
    started: int = 0
    finished: int = 0
    waiting: int = 0
    p50: float | None = None
    p95: float | None = None
    longest: float | None = None
    preempted: int = 0
    recycled: int = 0
    gpu_hours: float = 0.0


@dataclass(frozen=True, slots=True)
class WaitPoint:
    """One period of a node's waits: the jobs submitted from ``time`` (epoch seconds) for one period."""

    time: float
    started: int
    waiting: int
    p50: float | None
    p95: float | None


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least ``q`` of the values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def lineage(name: str | None, parents: Mapping[str, str | None]) -> list[str]:
    """``name`` and its ancestors, nearest first (a cycle is cut where it closes)."""
    out: list[str] = []
    while name is not None and name not in out:
        out.append(name)
        name = parents.get(name)
    return out


def node_waits(jobs: Iterable[JobWait], parents: TreeParents, end: float) -> dict[tuple[str, str], NodeWaits]:
    """Per (tree, node), the figures of the jobs counted there (module docstring); ``end`` is the window's end,
    where a job still waiting has waited ``end - submit``. Only the nodes with a job are in the result."""
    paths: dict[tuple[str, str | None], list[tuple[str, str]]] = {}

    def path_of(job: JobWait) -> list[tuple[str, str]]:
        path = paths.get((job.queue, job.group))
        if path is None:
            path = paths[job.queue, job.group] = parents.path(job.queue, job.group)
        return path

    return _count(jobs, path_of, end)


def submitter_waits(jobs: Iterable[JobWait], end: float) -> list[NodeWaits]:
    """Per submitter (``JobWait.submitter``), the figures of its jobs as ``node_waits`` counts a node's, with the
    GPU-hours of their work; the most GPU-hours first, then the longest wait."""
    figures = _count(jobs, lambda job: [(SUBMITTER, job.submitter)], end).values()
    return sorted(figures, key=lambda w: (-w.gpu_hours, -(w.longest or 0.0), w.name))


def _count(
    jobs: Iterable[JobWait], path_of: Callable[[JobWait], list[tuple[str, str]]], end: float
) -> dict[tuple[str, str], NodeWaits]:
    """The figures of each key a job counts for (``path_of``: its tree nodes, or its submitter)."""
    out: dict[tuple[str, str], NodeWaits] = {}
    waits: dict[tuple[str, str], list[float]] = {}
    for job in jobs:
        wait = (job.start if job.start is not None else end) - job.submit
        for node in path_of(job):
            figures = out.get(node)
            if figures is None:
                figures = out[node] = NodeWaits(*node)
            if job.start is not None:
                figures.started += 1
                waits.setdefault(node, []).append(wait)
            else:
                figures.waiting += 1
            figures.longest = wait if figures.longest is None else max(figures.longest, wait)
            figures.finished += job.finished
            figures.preempted += job.preempted
            figures.recycled += job.recycled
            figures.gpu_hours += job.gpu_seconds / 3600
    for node, figures in out.items():
        started = waits.get(node, [])
        figures.p50, figures.p95 = percentile(started, 0.5), percentile(started, 0.95)
    return out


def waits_by_period(
    jobs: Iterable[JobWait], parents: TreeParents, end: float, step: float, nodes: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], list[WaitPoint]]:
    """Per node of ``nodes``, its waits period by period: the jobs grouped by when they were submitted (periods of
    ``step`` seconds on the UTC clock: whole hours, whole days), each period counted as ``node_waits`` counts a
    window (a job still waiting at ``end`` with its wait so far). A period in which a node had no job is left out."""
    periods: dict[float, list[JobWait]] = {}
    for job in jobs:
        periods.setdefault(math.floor(job.submit / step) * step, []).append(job)
    wanted = list(nodes)
    out: dict[tuple[str, str], list[WaitPoint]] = {node: [] for node in wanted}
    for time in sorted(periods):
        figures = node_waits(periods[time], parents, end)
        for node in wanted:
            w = figures.get(node)
            if w is not None:
                out[node].append(WaitPoint(time, w.started, w.waiting, w.p50, w.p95))
    return out
