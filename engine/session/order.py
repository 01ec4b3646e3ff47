"""The order in which the next session takes the waiting jobs of each queue, for the pages that say where a job
stands ("2 jobs ahead of it in queue team-a").

Not a second ordering: a session is opened on the snapshot as ``engine.session.run.run_session`` opens it, and its
framework's key decides — ``Framework.job_key``, Volcano's JobOrderFn: the job order keys of the policy's plugins in
tier order, then creation time, then the key. A job waits in its queue while Pending (not admitted yet), Inqueue
(admitted, its minResources reserved, pods not placed yet) or while any of its pods is still to be placed (a gang
partly running, or a job whose pods were evicted: ``allocate`` walks it again); the actions walk each queue's waiting
jobs in that order. No action runs: this is the order the session starts from, before any of its decisions moves a share.

Two things keep it cheap enough for a page (a full session at open costs about a second on a 1,000-queue tree):

* the session is built with only the plugins of the policy that order jobs (each in its tier, with its options):
  a plugin's job order key reads the job and the plugin's own state (drf: the job's dominant share; gang: whether
  the job is ready; priority: its priority), so the other plugins, which do not take part in the job key, are left
  out without changing it;
* the quota values at open may be handed in (``values``: ``engine.values.compute_values`` of the same snapshot and
  policy, as the pages already hold them), instead of being computed again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from engine.objects import PodGroupPhase, Snapshot, TaskStatus
from engine.policy.policy import Policy
from engine.session.framework import Plugin
from engine.session.registry import PLUGINS, load
from engine.session.session import Session
from engine.values import QuotaValues

load()  # every plugin's class registered before a session is built

__all__ = ["JobOrder", "job_order", "ordering_policy"]

# The phases of a job that the enqueue and allocate actions walk whatever its pods (no phase yet reads as Pending).
_BEFORE_PLACEMENT = frozenset({PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, ""})


@dataclass(frozen=True)
class JobOrder:
    """``queues``: for each queue with waiting jobs, their keys (``namespace/name``), first served first."""

    queues: Mapping[str, tuple[str, ...]]

    def of(self, queue: str) -> tuple[str, ...]:
        return self.queues.get(queue, ())

    def ahead_of(self, queue: str, key: str) -> tuple[str, ...]:
        """The waiting jobs of ``queue`` served before ``key`` (all of them when ``key`` does not wait there)."""
        jobs = self.of(queue)
        return jobs[: jobs.index(key)] if key in jobs else jobs


def _orders_jobs(name: str) -> bool:
    cls = PLUGINS.get(name)
    return cls is not None and cls.job_order_key is not Plugin.job_order_key


def ordering_policy(policy: Policy) -> Policy:
    """``policy`` with only the plugins that order jobs (their tiers and options kept) and no action."""
    tiers = tuple(tuple(p for p in tier if p.job_order and _orders_jobs(p.name)) for tier in policy.tiers)
    return dataclasses.replace(policy, actions=(), tiers=tiers)


class _OrderSession(Session):
    """A session that opens on quota values computed beforehand (those of the snapshot under the full policy)."""

    def __init__(self, snapshot: Snapshot, policy: Policy, now: float, values: QuotaValues | None) -> None:
        self._given_values = values
        super().__init__(snapshot, policy, now)

    def _open_values(self) -> QuotaValues:
        if self._given_values is None:
            return super()._open_values()
        self._quota_error = None
        return self._given_values


def job_order(
    snapshot: Snapshot, *, now: float, policy: Policy | None = None, values: QuotaValues | None = None
) -> JobOrder:
    """The waiting jobs of every queue of ``snapshot``, in the order of a session opened on it at ``now`` (policy
    defaults to ``snapshot.policy``; ``values``, when given, must be ``compute_values(snapshot, policy)``)."""
    full = policy if policy is not None else snapshot.policy
    session = _OrderSession(snapshot, ordering_policy(full), now, values)
    fw = session.framework
    out: dict[str, tuple[str, ...]] = {}
    for queue, jobs in session.jobs_by_queue.items():
        waiting = sorted(
            (job for job in jobs if job.phase in _BEFORE_PLACEMENT or job.counts[TaskStatus.PENDING]), key=fw.job_key
        )
        if waiting and queue in snapshot.queues:
            out[queue] = tuple(job.key for job in waiting)
    return JobOrder(out)
