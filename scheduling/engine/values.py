"""The quota values of a snapshot: what every tree node deserves, may use, borrows and lends.

One function, ``compute_values``, feeds the tree endpoints, the what-if endpoint, ``fairway simulate`` and the
scheduling session's open: it turns the snapshot's podgroups and pods into per-queue usage and per-group
requests, then runs the policy's queue policy (Volcano's ``capacity`` when the policy has it — hierarchical when
its ``enableHierarchy`` is set — else ``proportion``), the namespace fair share of seed 000, and Koordinator's
elastic quota runtimes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quotas.fairshare.capacity import compute_capacity
from quotas.fairshare.elastic import DEFAULT_GROUP, SYSTEM_GROUP, ElasticResult, compute_runtimes
from quotas.fairshare.namespace import NamespaceQuota, compute_namespace_shares
from quotas.fairshare.proportion import compute_proportion
from quotas.fairshare.queues import JobUsage, QueueBook
from quotas.resources import ResourceList
from scheduling.engine.policy import Policy
from scheduling.engine.snapshot import ALLOCATED_STATUSES, Snapshot, TaskStatus

__all__ = ["QuotaValues", "compute_values", "job_usages", "queue_policy_of"]

_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})


@dataclass(frozen=True)
class QuotaValues:
    """The computed values of every tree node at one instant."""

    queue_policy: str  # "proportion" | "capacity" | "capacity-hierarchy"
    queues: QueueBook
    namespaces: Mapping[tuple[str, str], NamespaceQuota]
    quotas: ElasticResult
    total: ResourceList


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
    for key, pg in snapshot.podgroups.items():
        request: dict[str, int] = {}
        allocated: dict[str, int] = {}
        n_alloc = 0
        for task in by_pg.get(key, ()):
            if task.status in _DONE:
                continue
            for name, amount in task.request.items():
                request[name] = request.get(name, 0) + amount
            if task.status in ALLOCATED_STATUSES:
                n_alloc += 1
                for name, amount in task.request.items():
                    allocated[name] = allocated.get(name, 0) + amount
        out.append(
            JobUsage(
                queue=pg.queue,
                namespace=pg.namespace,
                request=ResourceList(request),
                allocated=ResourceList(allocated),
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
    requests: dict[str, dict[str, int]] = {}
    used: dict[str, dict[str, int]] = {}
    for group, tasks in snapshot.tasks_by_quota_group.items():
        req = requests.setdefault(group, {})
        use = used.setdefault(group, {})
        for task in tasks:
            if task.status in _DONE:
                continue
            for name, amount in task.request.items():
                req[name] = req.get(name, 0) + amount
                if task.status in ALLOCATED_STATUSES or task.status == TaskStatus.RELEASING:
                    use[name] = use.get(name, 0) + amount
    return ({g: ResourceList(v) for g, v in requests.items()}, {g: ResourceList(v) for g, v in used.items()})


def compute_values(
    snapshot: Snapshot, policy: Policy | None = None, *, jobs: list[JobUsage] | None = None
) -> QuotaValues:
    """Every tree node's values for ``snapshot`` under ``policy`` (default: the snapshot's)."""
    policy = policy or snapshot.policy
    total = snapshot.total_allocatable
    jobs = job_usages(snapshot) if jobs is None else jobs
    name, hierarchy, level = queue_policy_of(policy)
    queues = list(snapshot.queues.values())
    if name == "capacity":
        book: QueueBook = compute_capacity(queues, jobs, total, hierarchy=hierarchy, ancestor_reclaim_level=level)
    else:
        book = compute_proportion(queues, jobs, total)
    deserved = {q: book[q].deserved for q in book}
    weights = {ns: info.weight for ns, info in snapshot.namespaces.items()}
    namespaces = compute_namespace_shares(deserved, jobs, weights, total)
    args = policy.elastic_quota_args(snapshot.elastic_quota_args)
    requests, used = _group_usage(snapshot)
    quotas = compute_runtimes(
        list(snapshot.quota_groups.values()),
        requests,
        total,
        used=used,
        system_used=used.get(SYSTEM_GROUP, ResourceList()),
        default_used=used.get(DEFAULT_GROUP, ResourceList()),
        enable_min_scale=args.enable_min_quota_scale,
    )
    policy_name = "capacity-hierarchy" if hierarchy else name
    return QuotaValues(queue_policy=policy_name, queues=book, namespaces=namespaces, quotas=quotas, total=total)
