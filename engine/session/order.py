"""The order in which the next session takes the waiting jobs of a queue, for the pages that say where a job
stands ("3 jobs ahead of it in queue team-a").

Not a second ordering: a session is opened on the snapshot exactly as ``engine.session.run.run_session`` opens it
(the same policy, plugins and values at open), and its framework's keys decide — ``Framework.queue_key`` for the
queues (Volcano's QueueOrderFn) and ``Framework.job_key`` for the jobs of a queue (JobOrderFn: the plugins' keys in
tier order, then creation time). Jobs wait in a queue while Pending (not admitted yet) or Inqueue (admitted, their
minResources reserved, pods not placed yet); the actions walk them in that order. No action runs: this is the
order the session starts from, before any of its decisions moves a share.
"""

from __future__ import annotations

from dataclasses import dataclass

import engine.session.plugins  # noqa: F401  (registers the plugins a policy may name)
from engine.objects import PodGroupPhase, Snapshot
from engine.session.policy import Policy
from engine.session.session import Session

__all__ = ["WAITING_PHASES", "QueueOrder", "queue_order"]

WAITING_PHASES = frozenset({PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, ""})


@dataclass(frozen=True)
class QueueOrder:
    """``jobs``: the keys (``namespace/name``) of ``queue``'s waiting podgroups, first served first; ``queues``:
    the queues that have waiting jobs, in the session's queue order (``queue`` among them when it has some)."""

    queue: str
    jobs: tuple[str, ...]
    queues: tuple[str, ...]

    def ahead_of(self, key: str) -> tuple[str, ...]:
        """The waiting jobs served before ``key`` (all of them when ``key`` does not wait in this queue)."""
        if key not in self.jobs:
            return self.jobs
        return self.jobs[: self.jobs.index(key)]

    @property
    def queue_rank(self) -> int | None:
        """1 for the queue served first, ``None`` when ``queue`` has no waiting job."""
        return self.queues.index(self.queue) + 1 if self.queue in self.queues else None


def queue_order(snapshot: Snapshot, queue: str, *, now: float, policy: Policy | None = None) -> QueueOrder:
    """The waiting jobs of ``queue`` and the queues with waiting jobs, in the order of a session opened on
    ``snapshot`` at ``now`` (policy defaults to ``snapshot.policy``)."""
    session = Session(snapshot, policy if policy is not None else snapshot.policy, now)
    fw = session.framework
    waiting = {
        name: [job for job in jobs if job.phase in WAITING_PHASES]
        for name, jobs in session.jobs_by_queue.items()
        if name in snapshot.queues
    }
    mine = sorted(waiting.get(queue, ()), key=fw.job_key)
    queues = sorted((name for name, jobs in waiting.items() if jobs), key=fw.queue_key)
    return QueueOrder(queue, tuple(job.key for job in mine), tuple(queues))
