"""The quota values of a snapshot: what every tree node deserves, may use, borrows and lends.

One function, ``compute_values``, feeds the tree endpoints, the what-if endpoint and ``fairway simulate``: it turns
the snapshot's podgroups and pods into per-queue usage and per-group requests, then runs the policy's queue policy
(Volcano's ``capacity`` when the policy has it — hierarchical when its ``enableHierarchy`` is set — else
``proportion``), the namespace fair share of seed 000, and Koordinator's elastic quota runtimes.

Aggregating tens of thousands of pods is the expensive part, and a what-if changes the tree far more often than
the pods: ``compute_values(after, base=before_values)`` reuses the aggregates of ``base`` when the two snapshots
share their tasks and podgroups (the same mapping objects, as the snapshot's ``with_*`` copies keep them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.fairshare.capacity import compute_capacity
from engine.fairshare.elastic import DEFAULT_GROUP, SYSTEM_GROUP, ElasticResult, compute_runtimes
from engine.fairshare.namespace import NamespaceQuota, compute_namespace_shares
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage, QueueBook, summarize_jobs
from engine.objects import ALLOCATED_STATUSES, Snapshot, TaskStatus
from engine.resources import ResourceList
from engine.session.policy import Policy

__all__ = ["QuotaValues", "compute_values", "job_usages", "queue_policy_of"]

_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_USED = ALLOCATED_STATUSES | {TaskStatus.RELEASING}
_EMPTY = ResourceList()


@dataclass(frozen=True)
class _Aggregates:
    """What the pods add up to, tied to the task and podgroup mappings it was computed from."""

    tasks: Mapping[str, Any]
    podgroups: Mapping[str, Any]
    quota_key: tuple[int, int]  # identity of the quota groups and namespace mappings the group usage used
    jobs: list[JobUsage]
    summary: Any
    requests: dict[str, ResourceList]
    used: dict[str, ResourceList]


@dataclass(frozen=True)
class QuotaValues:
    """The computed values of every tree node at one instant."""

    queue_policy: str  # "proportion" | "capacity" | "capacity-hierarchy"
    queues: QueueBook
    namespaces: Mapping[tuple[str, str], NamespaceQuota]
    quotas: ElasticResult
    total: ResourceList
    aggregates: _Aggregates | None = field(default=None, repr=False, compare=False)
    # derived views callers compute once per values object (e.g. the what-if's per-node tables)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def queue_policy_of(policy: Policy) -> tuple[str, bool, int]:
    """Which queue plugin the policy runs: (name, hierarchy, ancestorReclaimLevel)."""
    capacity = policy.plugin("capacity")
    if capacity is not None:
        return "capacity", bool(capacity.hierarchy), policy.capacity_args().ancestor_reclaim_level
    return "proportion", False, 0


def job_usages(snapshot: Snapshot) -> list[JobUsage]:
    """Each podgroup's aggregate: requests of its live tasks (pending + allocated) and what is allocated."""
    out: list[JobUsage] = []
    by_pg = snapshot.tasks_by_podgroup
    trusted = ResourceList.trusted
    for key, pg in snapshot.podgroups.items():
        request: dict[str, int] = {}
        allocated: dict[str, int] = {}
        n_alloc = 0
        for task in by_pg.get(key, ()):
            status = task.status
            if status in _DONE:
                continue
            amounts = task.request.raw
            for name, amount in amounts.items():
                request[name] = request.get(name, 0) + amount
            if status in ALLOCATED_STATUSES:
                n_alloc += 1
                for name, amount in amounts.items():
                    allocated[name] = allocated.get(name, 0) + amount
        out.append(
            JobUsage(
                queue=pg.queue,
                namespace=pg.namespace,
                request=trusted(request),
                allocated=trusted(allocated),
                min_resources=pg.min_resources,
                phase=str(pg.phase),
                min_member=pg.min_member,
                allocated_tasks=n_alloc,
                name=pg.name,
            )
        )
    return out


def _group_usage(snapshot: Snapshot) -> tuple[dict[str, ResourceList], dict[str, ResourceList]]:
    """Per quota group: request (pending + assigned pods) and used (assigned pods)."""
    requests: dict[str, ResourceList] = {}
    used: dict[str, ResourceList] = {}
    for group, tasks in snapshot.tasks_by_quota_group.items():
        req: dict[str, int] = {}
        use: dict[str, int] = {}
        for task in tasks:
            status = task.status
            if status in _DONE:
                continue
            amounts = task.request.raw
            for name, amount in amounts.items():
                req[name] = req.get(name, 0) + amount
            if status in _USED:
                for name, amount in amounts.items():
                    use[name] = use.get(name, 0) + amount
        requests[group] = ResourceList.trusted(req)
        used[group] = ResourceList.trusted(use)
    return requests, used


def _aggregates(snapshot: Snapshot, base: QuotaValues | None) -> _Aggregates:
    quota_key = (id(snapshot.quota_groups), id(snapshot.quota_namespaces))
    old = base.aggregates if base is not None else None
    if old is not None and old.tasks is snapshot.tasks and old.podgroups is snapshot.podgroups:
        if old.quota_key == quota_key:
            return old
        requests, used = _group_usage(snapshot)
        return dataclasses.replace(old, quota_key=quota_key, requests=requests, used=used)
    jobs = job_usages(snapshot)
    requests, used = _group_usage(snapshot)
    return _Aggregates(snapshot.tasks, snapshot.podgroups, quota_key, jobs, summarize_jobs(jobs), requests, used)


def compute_values(snapshot: Snapshot, policy: Policy | None = None, *, base: QuotaValues | None = None) -> QuotaValues:
    """Every tree node's values for ``snapshot`` under ``policy`` (default: the snapshot's).

    ``base``: values of an earlier snapshot whose pod aggregates may be reused (see the module docstring).
    """
    policy = policy or snapshot.policy
    total = snapshot.total_allocatable
    agg = _aggregates(snapshot, base)
    name, hierarchy, level = queue_policy_of(policy)
    queues = list(snapshot.queues.values())
    if name == "capacity":
        book: QueueBook = compute_capacity(
            queues, agg.summary, total, hierarchy=hierarchy, ancestor_reclaim_level=level
        )
    else:
        book = compute_proportion(queues, agg.summary, total)
    deserved = {q: book[q].deserved for q in book}
    weights = {ns: info.weight for ns, info in snapshot.namespaces.items()}
    namespaces = compute_namespace_shares(deserved, agg.jobs, weights, total)
    args = policy.elastic_quota_args(snapshot.elastic_quota_args)
    quotas = compute_runtimes(
        list(snapshot.quota_groups.values()),
        agg.requests,
        total,
        used=agg.used,
        system_used=agg.used.get(SYSTEM_GROUP, _EMPTY),
        default_used=agg.used.get(DEFAULT_GROUP, _EMPTY),
        enable_min_scale=args.enable_min_quota_scale,
    )
    policy_name = "capacity-hierarchy" if hierarchy else name
    return QuotaValues(
        queue_policy=policy_name, queues=book, namespaces=namespaces, quotas=quotas, total=total, aggregates=agg
    )
