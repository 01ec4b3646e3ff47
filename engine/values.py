"""The quota values of a snapshot: what every tree node deserves, may use, borrows and lends.

One function, ``compute_values``, feeds the tree endpoints, the what-if endpoint and ``fairway simulate``: it turns
the snapshot's podgroups and pods into per-queue usage and per-group requests, then runs the policy's queue policy
(Volcano's ``capacity`` when the policy has it — hierarchical when its ``enableHierarchy`` is set — else
``proportion``), the namespace fair share of seed 000, and Koordinator's elastic quota runtimes.

Aggregating tens of thousands of pods is the expensive part, and a what-if changes the tree far more often than
the pods: ``compute_values(after, base=before_values)`` reuses the aggregates of ``base`` when the two snapshots
share their tasks and podgroups (the same mapping objects, as the snapshot's ``with_*`` copies keep them).

The scheduling session opens on these same values (``engine.session.session.Session``) and recycling reads the
quota runtimes from ``compute_quotas``, so a page, the what-if, ``fairway simulate`` and the scheduler never
disagree on a number. The counting rules, in one place:

* a podgroup's ``request`` is what its allocated and pending pods request, its ``allocated`` what its allocated pods
  (Allocated, Binding, Bound, Running) hold: Volcano's proportion and capacity plugins count exactly these;
* a quota group's ``request`` is every pod of it that has not finished, its ``used`` its allocated pods. A Releasing
  pod is in neither ``allocated`` nor ``used``: it is leaving, and counting it would make reclaim and recycling
  take more than needed. What Releasing pods still hold is kept apart, in ``QuotaValues.releasing``, for display.
* **reserved**: what admitted, not yet fully allocated podgroups reserve, exactly what the admission gates count.
  Per queue it is the queue book's ``inqueue`` (``(minResources - allocated)+`` of Inqueue podgroups and of
  Running ones with their gang placed; the proportion and capacity enqueue gates read it), with ``reserved_jobs``
  podgroups. Per quota group it is ``reservations`` (``Reservations``): the elastic quota admission's demand of the
  Inqueue podgroups with pods in the group (their ``minResources`` capped by what those pods request), minus what
  those pods already use, summed up the tree; the ``elasticquota`` plugin opens on these amounts.
* **pipelined**: what the pods a session pipelined onto a node (``TaskInfo.pipelined``, or the Pipelined status)
  request, with their number: shown apart, in neither ``allocated`` nor ``used`` nor ``reserved``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.collector import paused_during
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.drs import Share, kueue_tree
from engine.fairshare.elastic import ElasticQuotaTree, ElasticResult, compute_runtimes
from engine.fairshare.namespace import NamespaceShares, PairTable, compute_namespace_shares
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobSummary, JobUsage, QueueBook, summarize_jobs
from engine.objects import (
    ALLOCATED_STATUSES,
    DEFAULT_GROUP,
    DEFAULT_QUEUE,
    ROOT_QUEUE,
    SYSTEM_GROUP,
    PodGroupInfo,
    PodGroupPhase,
    QuotaGroupSpec,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.policy.policy import Policy
from engine.resources import MAX_AMOUNT, ResourceList
from engine.session.plugins.capacity.arguments import CAPACITY
from engine.session.plugins.kueuefair.arguments import KUEUEFAIR
from engine.usage import (
    QUEUE,
    QUOTA,
    PastShare,
    TreeUsage,
    UsageHistory,
    UsageNow,
    adjusted_weights,
    clamp,
    describe,
    dominant_share,
    node_key,
)

__all__ = [
    "Aggregates",
    "GroupTotals",
    "GroupUsage",
    "QuotaTreeMemo",
    "QuotaValues",
    "Reservations",
    "aggregates_of",
    "compute_quotas",
    "compute_values",
    "fair_quota_groups",
    "group_totals",
    "group_usage",
    "group_usage_of",
    "job_usage",
    "job_usages",
    "past_shares",
    "podgroup_demand",
    "podgroup_usages",
    "queue_policy_of",
    "usage_now",
]

_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_REQUESTING = ALLOCATED_STATUSES | {TaskStatus.PENDING}
_EMPTY = ResourceList()


@dataclass(frozen=True)
class GroupUsage:
    """Per quota group (its own pods): ``requests`` of every pod not finished, ``used`` of the allocated pods and
    ``releasing`` of the Releasing pods (shown apart, counted in neither ``used`` nor a queue's ``allocated``)."""

    requests: dict[str, ResourceList]
    used: dict[str, ResourceList]
    releasing: dict[str, ResourceList]
    pipelined: dict[str, ResourceList] = field(default_factory=dict)  # groups with pipelined pods only
    pipelined_pods: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Reservations:
    """Per quota group (its subtree included): what admitted podgroups reserve (``amounts``), how many podgroups
    reserve each resource (``reserving``) and in all (``jobs``); and what pipelined pods request (``pipelined``,
    ``pipelined_pods``). Groups with nothing are left out."""

    amounts: dict[str, dict[str, int]] = field(default_factory=dict)
    reserving: dict[str, dict[str, int]] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    pipelined: dict[str, dict[str, int]] = field(default_factory=dict)
    pipelined_pods: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Aggregates:
    """What the pods add up to, tied to the task and podgroup mappings it was computed from."""

    tasks: Mapping[str, Any]
    podgroups: Mapping[str, Any]
    quota_key: tuple[int, int]  # identity of the quota groups and namespace mappings the group usage used
    jobs: list[JobUsage]
    summary: Any
    groups: GroupUsage
    pairs: PairTable | None = None  # the jobs' (queue, namespace) pairs, when the caller kept them


@dataclass(frozen=True)
class QuotaValues:
    """The computed values of every tree node at one instant."""

    queue_policy: str  # "proportion" | "capacity" | "capacity-hierarchy"
    queues: QueueBook
    namespaces: NamespaceShares  # (queue, namespace) -> NamespaceQuota; ``in_queue`` reads one queue's alone
    quotas: ElasticResult
    total: ResourceList
    # per quota group, what its Releasing pods still hold (empty groups left out); never part of ``used``
    releasing: Mapping[str, ResourceList] = field(default_factory=dict)
    # per quota group: reserved by admitted podgroups and held by pipelined pods (see the module docstring)
    reservations: Reservations = field(default_factory=Reservations)
    aggregates: Aggregates | None = field(default=None, repr=False, compare=False)
    # fairness over time: what the past usage did to each node (``queue/<name>``, ``quota/<name>``); empty when off
    past: Mapping[str, PastShare] = field(default_factory=dict)
    # Kueue's Fair Sharing: each Cohort's and ClusterQueue's dominant resource share (``engine.fairshare.drs``), when
    # the policy turns it on (``kueuefair`` with ``enable``); empty when off
    fair_shares: Mapping[str, Share] = field(default_factory=dict)
    # derived views callers compute once per values object (e.g. the what-if's per-node tables)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def queue_policy_of(policy: Policy) -> tuple[str, bool, int]:
    """Which queue plugin the policy runs: (name, hierarchy, ancestorReclaimLevel)."""
    capacity = policy.plugin("capacity")
    if capacity is not None:
        return "capacity", bool(capacity.hierarchy), policy.arguments_of(CAPACITY).ancestor_reclaim_level
    return "proportion", False, 0


def job_usages(snapshot: Snapshot) -> list[JobUsage]:
    """Each podgroup's aggregate, in the snapshot's podgroup order: what its pending and allocated tasks request
    and what its allocated tasks hold (Volcano's ``request`` and ``allocated`` of a job)."""
    by_pg = snapshot.tasks_by_podgroup
    return [job_usage(pg, by_pg.get(key, ())) for key, pg in snapshot.podgroups.items()]


def job_usage(pg: PodGroupInfo, tasks: Iterable[TaskInfo]) -> JobUsage:
    """One podgroup's aggregate (``job_usages``) from its tasks in snapshot order."""
    trusted = ResourceList.trusted
    request: dict[str, int] = {}
    allocated: dict[str, int] = {}
    pipelined: dict[str, int] | None = None
    n_alloc = n_pipelined = 0
    for task in tasks:
        status = task.status
        if task.pipelined or status == TaskStatus.PIPELINED:
            n_pipelined += 1
            pipelined = {} if pipelined is None else pipelined
            for name, amount in task.request.raw.items():
                pipelined[name] = pipelined.get(name, 0) + amount
        if status not in _REQUESTING:
            continue
        amounts = task.request.raw
        for name, amount in amounts.items():
            request[name] = request.get(name, 0) + amount
        if status in ALLOCATED_STATUSES:
            n_alloc += 1
            for name, amount in amounts.items():
                allocated[name] = allocated.get(name, 0) + amount
    return JobUsage(
        queue=pg.queue,
        namespace=pg.namespace,
        request=trusted(request),
        allocated=trusted(allocated),
        min_resources=pg.min_resources,
        phase=str(pg.phase),
        min_member=pg.min_member,
        allocated_tasks=n_alloc,
        name=pg.name,
        pipelined=None if pipelined is None else trusted(pipelined),
        pipelined_tasks=n_pipelined,
    )


def podgroup_usages(values: QuotaValues) -> dict[str, JobUsage]:
    """Each podgroup's aggregate in ``values``, by podgroup key."""
    agg = values.aggregates
    if agg is None:
        return {}
    return dict(zip(agg.podgroups, agg.jobs, strict=True))


def group_usage(snapshot: Snapshot) -> GroupUsage:
    """Per quota group: request, used and releasing (see ``GroupUsage``)."""
    return group_usage_of({group: group_totals(tasks) for group, tasks in snapshot.tasks_by_quota_group.items()})


GroupTotals = tuple[ResourceList, ResourceList, ResourceList | None, ResourceList | None, int]


def group_totals(tasks: Iterable[TaskInfo]) -> GroupTotals:
    """One quota group's (request, used, releasing, pipelined, pipelined pods) from its tasks in snapshot order;
    releasing and pipelined None when there are none."""
    req: dict[str, int] = {}
    use: dict[str, int] = {}
    leaving: dict[str, int] = {}
    waiting: dict[str, int] = {}
    n_waiting = 0
    for task in tasks:
        status = task.status
        if status in _DONE:
            continue
        if task.pipelined or status == TaskStatus.PIPELINED:
            n_waiting += 1
            for name, amount in task.request.raw.items():
                waiting[name] = waiting.get(name, 0) + amount
        amounts = task.request.raw
        for name, amount in amounts.items():
            req[name] = req.get(name, 0) + amount
        into = use if status in ALLOCATED_STATUSES else leaving if status == TaskStatus.RELEASING else None
        if into is not None:
            for name, amount in amounts.items():
                into[name] = into.get(name, 0) + amount
    trusted = ResourceList.trusted
    return (
        trusted(req),
        trusted(use),
        trusted(leaving) if leaving else None,
        trusted(waiting) if n_waiting else None,
        n_waiting,
    )


def group_usage_of(totals: Mapping[str, GroupTotals]) -> GroupUsage:
    """``GroupUsage`` from each quota group's ``group_totals`` (in the order of ``Snapshot.tasks_by_quota_group``)."""
    requests: dict[str, ResourceList] = {}
    used: dict[str, ResourceList] = {}
    releasing: dict[str, ResourceList] = {}
    pipelined: dict[str, ResourceList] = {}
    pipelined_pods: dict[str, int] = {}
    for group, (req, use, leaving, waiting, n_waiting) in totals.items():
        requests[group] = req
        used[group] = use
        if leaving is not None:
            releasing[group] = leaving
        if waiting is not None:
            pipelined[group] = waiting
            pipelined_pods[group] = n_waiting
    return GroupUsage(requests, used, releasing, pipelined, pipelined_pods)


def podgroup_demand(
    min_resources: Mapping[str, int] | None, asked: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, int]]:
    """Per quota group, the part of a podgroup's ``minResources`` it must hold there to be admitted: the minimum
    capped by what its live pods of that group request (``asked``). No ``minResources``: no demand (Volcano admits
    such a podgroup at once). The elastic quota admission and ``Reservations`` both use it."""
    out: dict[str, dict[str, int]] = {}
    if min_resources is None:
        return out
    for g, amounts in asked.items():
        part = {r: min(v, amounts.get(r, 0)) for r, v in min_resources.items() if v > 0 and amounts.get(r, 0) > 0}
        if part:
            out[g] = part
    return out


def _add_up(into: dict[str, dict[str, int]], node: str, amounts: Mapping[str, int]) -> None:
    acc = into.setdefault(node, {})
    for name, amount in amounts.items():
        acc[name] = acc.get(name, 0) + amount


def reservations(snapshot: Snapshot, quotas: ElasticResult, usage: GroupUsage) -> Reservations:
    """Per quota group and its subtree: what the Inqueue podgroups reserve there (their demand, ``podgroup_demand``,
    minus what their pods of the group already use) and what pipelined pods request (see ``Reservations``)."""
    out = Reservations()
    group_of = snapshot.task_quota_groups
    by_pg = snapshot.tasks_by_podgroup
    paths: dict[str, list[str]] = {}

    def path(group: str) -> list[str]:
        p = paths.get(group)
        if p is None:
            p = paths[group] = quotas.path(group)
        return p

    for key, pg in snapshot.podgroups.items():
        if pg.phase != PodGroupPhase.INQUEUE or pg.min_resources is None:
            continue
        asked: dict[str, dict[str, int]] = {}
        held: dict[str, dict[str, int]] = {}
        for task in by_pg.get(key, ()):
            group = group_of[task.uid]
            if task.status in _DONE or group not in quotas:
                continue
            _add_up(asked, group, task.request.raw)
            if task.status in ALLOCATED_STATUSES:
                _add_up(held, group, task.request.raw)
        touched: dict[str, set[str]] = {}
        for group, demand in podgroup_demand(pg.min_resources, asked).items():
            have = held.get(group, {})
            part = {r: v - have.get(r, 0) for r, v in demand.items() if v > have.get(r, 0)}
            for node in path(group):
                _add_up(out.amounts, node, part)
                touched.setdefault(node, set()).update(part)
        for node, names in touched.items():
            if not names:
                continue
            out.jobs[node] = out.jobs.get(node, 0) + 1
            for name in names:
                counts = out.reserving.setdefault(node, {})
                counts[name] = counts.get(name, 0) + 1
    for group, amounts in usage.pipelined.items():
        if group not in quotas:
            continue
        for node in path(group):
            _add_up(out.pipelined, node, amounts.raw)
            out.pipelined_pods[node] = out.pipelined_pods.get(node, 0) + usage.pipelined_pods.get(group, 0)
    return out


class QuotaTreeMemo:
    """The elastic quota tree (``ElasticQuotaTree``) of the last ``compute_quotas`` given this memo, with the inputs
    it was brought to. A later call with the same quota groups (as specs, after fairness weighting), the same total
    and the same min scaling reports to that tree only the groups whose request or used changed
    (``ElasticQuotaTree.set_requests`` / ``set_used_of``: each group above them once), which recomputes only the
    paths and sibling sets they touch, instead of building a tree again; anything else builds a new one. The
    numbers are the ones a new tree gives (the tree's incremental path is exact; ``result`` copies on write, so
    values returned before stay as they were). The caller holds it (``SessionCarry.quotas``: a cluster's sessions
    and its recycling passes, one after the other); one call at a time. ``reused`` counts the calls it served from
    its tree (for tests and benchmarks)."""

    __slots__ = ("_key", "_requests", "_tree", "_used", "reused")

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._tree: ElasticQuotaTree | None = None
        self._requests: dict[str, ResourceList] = {}
        self._used: dict[str, ResourceList] = {}
        self.reused = 0

    def runtimes(
        self,
        groups: list[QuotaGroupSpec],
        requests: Mapping[str, ResourceList],
        total: ResourceList,
        used: Mapping[str, ResourceList],
        enable_min_scale: bool,
    ) -> ElasticResult:
        """``compute_runtimes`` of these inputs (the built-in groups' used read from ``used``)."""
        key = (tuple(groups), total, enable_min_scale)
        tree = self._brought_up(key, requests, used)
        if tree is not None:
            self.reused += 1
        else:  # none kept for these groups and total, or inputs it refused: a new one (which says why, as without)
            tree = ElasticQuotaTree(groups, total, enable_min_scale=enable_min_scale, requests=requests, used=used)
        result = tree.result()
        self._keep(key, tree, requests, used)
        return result

    def over_runtime(
        self,
        groups: list[QuotaGroupSpec],
        requests: Mapping[str, ResourceList],
        total: ResourceList,
        used: Mapping[str, ResourceList],
        enable_min_scale: bool,
    ) -> list[str] | None:
        """The groups ``runtimes`` of these inputs would show over their runtime, from the kept tree brought up to
        these inputs without the values only the used moves (``ElasticQuotaTree.groups_over_runtime``); None when it
        cannot tell so (no tree kept for these groups and total, or a runtime to recompute): ``runtimes`` then,
        which finds the tree up to date. Not counted in ``reused``: no values are computed."""
        key = (tuple(groups), total, enable_min_scale)
        tree = self._brought_up(key, requests, used)
        if tree is None:
            return None
        self._keep(key, tree, requests, used)
        return tree.groups_over_runtime()

    def _brought_up(
        self, key: tuple[Any, ...], requests: Mapping[str, ResourceList], used: Mapping[str, ResourceList]
    ) -> ElasticQuotaTree | None:
        """The kept tree told the groups whose request or used changed since its last inputs; None when none is
        kept for ``key`` or it refuses these inputs. The memo keeps no tree until ``_keep`` (an error leaves none)."""
        tree, self._tree = self._tree, None
        if tree is None or self._key != key:
            return None
        try:
            tree.set_requests(_changed(self._requests, requests))
            tree.set_used_of(_changed(self._used, used))
        except ValueError:
            return None
        return tree

    def _keep(
        self,
        key: tuple[Any, ...],
        tree: ElasticQuotaTree,
        requests: Mapping[str, ResourceList],
        used: Mapping[str, ResourceList],
    ) -> None:
        self._key, self._tree = key, tree
        self._requests, self._used = dict(requests), dict(used)


def _changed(before: Mapping[str, ResourceList], now: Mapping[str, ResourceList]) -> dict[str, Mapping[str, int]]:
    """Each group whose amounts differ between ``before`` and ``now``, with its amounts now (a group missing from one
    has none)."""
    out: dict[str, Mapping[str, int]] = {name: _EMPTY for name in before if name not in now}
    for name, amounts in now.items():
        if before.get(name, _EMPTY) != amounts:
            out[name] = amounts
    return out


def compute_quotas(
    snapshot: Snapshot,
    policy: Policy | None = None,
    usage: GroupUsage | None = None,
    memo: QuotaTreeMemo | None = None,
) -> ElasticResult:
    """Koordinator's runtime (and min, max, used, request) of every quota group of ``snapshot``.

    ``usage``: the snapshot's ``group_usage`` when the caller has it already; ``memo``: the tree of an earlier call
    to bring up to date (``QuotaTreeMemo``; the same numbers). Raises ``ValueError`` on a quota tree that is not a
    tree."""
    groups, requests, used, enable_min_scale = _tree_inputs(snapshot, policy, usage)
    if memo is not None:
        return memo.runtimes(groups, requests, snapshot.total_allocatable, used, enable_min_scale)
    return compute_runtimes(
        groups,
        requests,
        snapshot.total_allocatable,
        used=used,
        system_used=used.get(SYSTEM_GROUP, _EMPTY),
        default_used=used.get(DEFAULT_GROUP, _EMPTY),
        enable_min_scale=enable_min_scale,
    )


def groups_over_runtime(snapshot: Snapshot, usage: GroupUsage, memo: QuotaTreeMemo) -> list[str] | None:
    """The quota groups (tree roots aside) whose used exceeds their runtime in ``compute_quotas(snapshot, usage=usage,
    memo=memo)``, found from ``memo``'s tree without computing the values only the used moves; None when only the
    values can tell (``QuotaTreeMemo.over_runtime``)."""
    groups, requests, used, enable_min_scale = _tree_inputs(snapshot, None, usage)
    return memo.over_runtime(groups, requests, snapshot.total_allocatable, used, enable_min_scale)


def _tree_inputs(
    snapshot: Snapshot, policy: Policy | None, usage: GroupUsage | None
) -> tuple[list[QuotaGroupSpec], Mapping[str, ResourceList], Mapping[str, ResourceList], bool]:
    """What the elastic quota tree of ``snapshot`` is computed from: the groups (weighted by fairness over time when
    it is on), each group's requests and used (capped, ``_capped``), and whether the mins are scaled."""
    policy = policy or snapshot.policy
    usage = usage if usage is not None else group_usage(snapshot)
    args = policy.elastic_quota_args(snapshot.elastic_quota_args)
    groups = list(snapshot.quota_groups.values())
    if args.fairness.enabled:
        groups = fair_quota_groups(groups, snapshot.past_usage or _NO_HISTORY)
    return groups, _capped(usage.requests), _capped(usage.used), args.enable_min_quota_scale


def _capped(amounts: Mapping[str, ResourceList]) -> Mapping[str, ResourceList]:
    """Each group's sum of requests (or uses) at ``MAX_AMOUNT`` at most, the bound of the elastic engine's inputs: a
    sum that large is unlimited (``is_unlimited``) whatever it is exactly, and thousands of pods each asking what one
    node may have must not fail the quota values (Koordinator caps a group's request at its max anyway)."""
    if all(v < MAX_AMOUNT for rl in amounts.values() for v in rl.raw.values()):
        return amounts
    return {g: ResourceList.trusted({r: min(v, MAX_AMOUNT) for r, v in rl.raw.items()}) for g, rl in amounts.items()}


_NO_HISTORY = UsageHistory()
_BUILTIN_GROUPS = frozenset({SYSTEM_GROUP, DEFAULT_GROUP})


def _group_weights(spec: QuotaGroupSpec) -> ResourceList:
    """The shared weight the runtime split uses (Koordinator: max when none is given)."""
    return spec.shared_weight if spec.shared_weight else spec.max


def _quota_siblings(groups: Iterable[QuotaGroupSpec]) -> dict[str | None, list[QuotaGroupSpec]]:
    """The quota groups fairness over time weighs, by parent (the built-in system and default groups are not teams:
    left out, their weights untouched)."""
    out: dict[str | None, list[QuotaGroupSpec]] = {}
    for g in groups:
        if g.name in _BUILTIN_GROUPS or g.parent is None:
            continue
        out.setdefault(g.parent, []).append(g)
    return out


def fair_quota_groups(groups: list[QuotaGroupSpec], history: UsageHistory) -> list[QuotaGroupSpec]:
    """The quota groups with fairness over time's effective shared weights (``engine.usage.adjusted_weights``, per
    resource, scaled by the siblings' smallest ratio so that no weight grows); min and max untouched."""
    changed: dict[str, QuotaGroupSpec] = {}
    for members in _quota_siblings(groups).values():
        ratios = {g.name: history.ratio(QUOTA, g.name) for g in members}
        scale = min(clamp(r) for r in ratios.values())
        weights = {g.name: _group_weights(g).raw for g in members}
        resources = sorted({r for w in weights.values() for r in w})
        adjusted: dict[str, dict[str, int]] = {g.name: {} for g in members}
        for r in resources:
            having = {name: w[r] for name, w in weights.items() if r in w}
            for name, value in adjusted_weights(having, ratios, scale).items():
                adjusted[name][r] = value
        for g in members:
            if adjusted[g.name] != dict(weights[g.name]):
                changed[g.name] = dataclasses.replace(g, shared_weight=ResourceList.trusted(adjusted[g.name]))
    return [changed.get(g.name, g) for g in groups] if changed else groups


def _queue_nodes(snapshot: Snapshot, values: QuotaValues) -> list[tuple[str, str | None, int]]:
    """The queues fairness over time weighs: (name, parent in the split, weight). Flat (proportion, flat capacity)
    every queue but root shares with every other; a capacity hierarchy by parent. The built-in default queue
    counts only while it holds something or has a record."""
    hierarchy = values.queue_policy == "capacity-hierarchy"
    history = snapshot.past_usage or _NO_HISTORY
    out: list[tuple[str, str | None, int]] = []
    for name, spec in snapshot.queues.items():
        if name == ROOT_QUEUE or name not in values.queues:
            continue
        if name == DEFAULT_QUEUE and not values.queues[name].allocated and node_key(QUEUE, name) not in history.nodes:
            continue
        out.append((name, spec.parent if hierarchy else None, max(1, spec.weight)))
    return out


def usage_now(snapshot: Snapshot, values: QuotaValues, policy: Policy | None = None) -> list[TreeUsage]:
    """Each tree whose fairness over time is on, as ``engine.usage.advance`` brings it forward: every node's
    parent, weight and dominant share of the cluster now (``engine.usage``'s module docstring says which weight)."""
    policy = policy or snapshot.policy
    total = values.total.raw
    trees: list[TreeUsage] = []
    queue_args = policy.queue_fairness()
    if queue_args.enabled:
        capacity = values.queue_policy != "proportion"
        nodes = []
        for name, parent, weight in _queue_nodes(snapshot, values):
            quota = values.queues[name]
            if capacity:
                weight = dominant_share(quota.deserved.raw, total)
            nodes.append(UsageNow(name, parent, weight, dominant_share(quota.allocated.raw, total)))
        trees.append(TreeUsage(QUEUE, queue_args, nodes))
    quota_args = policy.quota_fairness(snapshot.elastic_quota_args)
    if quota_args.enabled:
        nodes = []
        for parent, members in _quota_siblings(snapshot.quota_groups.values()).items():
            for g in members:
                used = values.quotas[g.name].used.raw if g.name in values.quotas else {}
                weight = dominant_share(_group_weights(g).raw, total)
                nodes.append(UsageNow(g.name, parent, weight, dominant_share(used, total)))
        trees.append(TreeUsage(QUOTA, quota_args, nodes))
    return trees


def past_shares(snapshot: Snapshot, values: QuotaValues, policy: Policy | None = None) -> dict[str, PastShare]:
    """What fairness over time did to each node (``queue/<name>``, ``quota/<name>``), for the explain; empty when
    it is off. Proportion: each participating queue's weight, ratio and share of the surplus among the
    participating queues; capacity: the ratio alone (it orders queues and reclaim); a quota group: its weight of
    its first resource (cpu first) among its siblings."""
    policy = policy or snapshot.policy
    history = snapshot.past_usage or _NO_HISTORY
    out: dict[str, PastShare] = {}
    queue_args = policy.queue_fairness()
    if queue_args.enabled:
        nodes = _queue_nodes(snapshot, values)
        if values.queue_policy == "proportion":
            taking = [n for n, _, _ in nodes if values.queues[n].participating]
            weights = {n: w for n, _, w in nodes if n in taking}
            for name, share in describe(QUEUE, weights, [taking], history, queue_args).items():
                out[node_key(QUEUE, name)] = share
        else:
            for name, _, weight in nodes:
                ratio = history.ratio(QUEUE, name)
                out[node_key(QUEUE, name)] = PastShare(weight, ratio, weight, None, queue_args.window)
    quota_args = policy.quota_fairness(snapshot.elastic_quota_args)
    if quota_args.enabled:
        for members in _quota_siblings(snapshot.quota_groups.values()).values():
            scale = min(clamp(history.ratio(QUOTA, g.name)) for g in members)
            by_resource: dict[str, dict[str, int]] = {}  # the siblings' weights of each resource
            first_of: dict[str, list[str]] = {}  # the groups each resource describes (their first: cpu first)
            for g in members:
                weights_of = _group_weights(g).raw
                for r, w in weights_of.items():
                    by_resource.setdefault(r, {})[g.name] = w
                first = next((r for r in ("cpu", "memory", *sorted(weights_of)) if r in weights_of), None)
                if first is not None:
                    first_of.setdefault(first, []).append(g.name)
            for r, described in first_of.items():
                shares = describe(QUOTA, by_resource[r], [list(by_resource[r])], history, quota_args, r, scale)
                for name in described:
                    out[node_key(QUOTA, name)] = shares[name]
    return out


def aggregates_of(
    snapshot: Snapshot,
    jobs: list[JobUsage],
    groups: GroupUsage,
    summary: JobSummary | None = None,
    pairs: PairTable | None = None,
) -> Aggregates:
    """The aggregates of ``snapshot`` from its ``job_usages`` and ``group_usage`` computed by the caller (a session
    carry that keeps them between sessions), for ``compute_values(aggregates=...)``; ``summary``: what
    ``summarize_jobs(jobs)`` gives, and ``pairs`` the jobs' namespace pairs (``NamespacePairs.table``), when the
    caller kept them too."""
    quota_key = (id(snapshot.quota_groups), id(snapshot.quota_namespaces))
    return Aggregates(
        snapshot.tasks,
        snapshot.podgroups,
        quota_key,
        jobs,
        summary if summary is not None else summarize_jobs(jobs),
        groups,
        pairs,
    )


def _aggregates(snapshot: Snapshot, base: QuotaValues | None) -> Aggregates:
    quota_key = (id(snapshot.quota_groups), id(snapshot.quota_namespaces))
    old = base.aggregates if base is not None else None
    if old is not None and old.tasks is snapshot.tasks and old.podgroups is snapshot.podgroups:
        if old.quota_key == quota_key:
            return old
        return dataclasses.replace(old, quota_key=quota_key, groups=group_usage(snapshot))
    jobs = job_usages(snapshot)
    return Aggregates(snapshot.tasks, snapshot.podgroups, quota_key, jobs, summarize_jobs(jobs), group_usage(snapshot))


@paused_during
def compute_values(
    snapshot: Snapshot,
    policy: Policy | None = None,
    *,
    base: QuotaValues | None = None,
    aggregates: Aggregates | None = None,
    quotas_memo: QuotaTreeMemo | None = None,
) -> QuotaValues:
    """Every tree node's values for ``snapshot`` under ``policy`` (default: the snapshot's).

    ``base``: values of an earlier snapshot whose pod aggregates may be reused (see the module docstring).
    ``aggregates``: the snapshot's aggregates, computed by the caller (``aggregates_of``). ``quotas_memo``: the
    elastic quota tree of an earlier call, brought up to date (``QuotaTreeMemo``).
    """
    policy = policy or snapshot.policy
    total = snapshot.total_allocatable
    agg = aggregates if aggregates is not None else _aggregates(snapshot, base)
    name, hierarchy, level = queue_policy_of(policy)
    queues = list(snapshot.queues.values())
    ratios = None
    if policy.queue_fairness().enabled:  # fairness over time (``engine.usage``)
        history = snapshot.past_usage or _NO_HISTORY
        ratios = {q: history.ratio(QUEUE, q) for q in snapshot.queues}
    if name == "capacity":
        book: QueueBook = compute_capacity(
            queues, agg.summary, total, hierarchy=hierarchy, ancestor_reclaim_level=level
        )
        if ratios is not None:  # capacity splits no surplus by weight: the ratios order the queues (and reclaim)
            book.past_ratios = {q: clamp(r) for q, r in ratios.items()}
    else:
        book = compute_proportion(queues, agg.summary, total, past_ratios=ratios)
    deserved = {q: book.deserved_of(q) for q in book}
    weights = {ns: info.weight for ns, info in snapshot.namespaces.items()}
    namespaces = compute_namespace_shares(deserved, agg.jobs, weights, total, agg.pairs)
    quotas = compute_quotas(snapshot, policy, agg.groups, quotas_memo)
    reserved = reservations(snapshot, quotas, agg.groups)
    policy_name = "capacity-hierarchy" if hierarchy else name
    values = QuotaValues(
        queue_policy=policy_name,
        queues=book,
        namespaces=namespaces,
        quotas=quotas,
        total=total,
        releasing=agg.groups.releasing,
        reservations=reserved,
        aggregates=agg,
    )
    if ratios is not None or policy.quota_fairness(snapshot.elastic_quota_args).enabled:
        values = dataclasses.replace(values, past=past_shares(snapshot, values, policy))
    if policy.plugin(KUEUEFAIR.name) is not None and policy.arguments_of(KUEUEFAIR).enable:
        usage = {q: dict(book[q].allocated.items()) for q in book}  # the tree counts its ClusterQueues' alone
        values = dataclasses.replace(values, fair_shares=kueue_tree(snapshot, usage).shares())
    return values
