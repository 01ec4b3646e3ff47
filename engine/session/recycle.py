"""Quota overuse revoke ("recycling", seed 001; Koordinator ``quota_overuse_revoke.go``, koordinator.md section 8).

A quota group whose ``used`` exceeds its ``runtime`` (on the resources the runtime names) has borrowed what its
lenders now want back. Koordinator watches every group (but the root and the system group) once per
``revokePodInterval``; a group must stay over **continuously for longer than** ``delayEvictTime`` (120 s by
default) before anything happens, and after a trigger the clock restarts, so the next trigger needs another full
delay. ``over_since`` carries that state between passes (group -> the time it was first seen over).

On a trigger, the group's own assigned pods are taken **least important first** (lower priority first; on equal
priority the most recently started first, Kubernetes' ``MoreImportantPod`` reversed; a pod without a start time
counts as just started; then by pod uid, for a deterministic order), skipping non-preemptible pods (label ``quota.scheduling.koordinator.sh/preemptible:
"false"``), until ``used <= runtime``. If that never happens, every pod taken is evicted. Otherwise the pods taken
are walked back from the most important and each one that still fits (``used + request <= runtime``) is kept:
only the rest are evicted. (Koordinator narrows ``used`` to the resources of the pod just removed while walking;
Fairway keeps every resource of ``used``, which can only keep more pods.)

The runtimes are computed afresh from the snapshot by ``engine.values.compute_quotas``, the computation the pages
and the session use (with the elasticquota arguments' ``enableMinQuotaScale``); ``used`` is the requests of the
allocated pods (a Releasing pod is leaving and is not counted), ``request`` those of every pod not finished. A parent group owns no pods, so it never loses any directly: its children
are over whenever it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from engine.fairshare.elastic import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, GroupQuota
from engine.objects import ALLOCATED_STATUSES, Snapshot, TaskInfo
from engine.session.decisions import Blocker, Eviction
from engine.session.framework import qty
from engine.session.plugins.proportion import sorted_resources
from engine.session.session import add_into
from engine.values import compute_quotas

__all__ = ["recycle", "revoke_victims"]


def _within(used: Mapping[str, int], runtime: Mapping[str, int]) -> bool:
    return all(used.get(r, 0) <= cap for r, cap in runtime.items())


def _least_important_first(task: TaskInfo) -> tuple[int, float, str]:
    start = task.start_timestamp if task.start_timestamp is not None else math.inf
    return (task.priority, -start, task.uid)


def revoke_victims(pods: Sequence[TaskInfo], used: Mapping[str, int], runtime: Mapping[str, int]) -> list[TaskInfo]:
    """Koordinator's ``getToRevokePodList``: the pods to evict so that ``used <= runtime`` (see the module doc)."""
    remaining = dict(used)
    removed: list[TaskInfo] = []
    for pod in sorted(pods, key=_least_important_first):
        if _within(remaining, runtime):
            break
        if not pod.quota_preemptible:
            continue
        add_into(remaining, pod.request, -1)
        removed.append(pod)
    if not _within(remaining, runtime):
        return removed
    evict: list[TaskInfo] = []
    for pod in reversed(removed):
        add_into(remaining, pod.request)
        if not _within(remaining, runtime):
            add_into(remaining, pod.request, -1)
            evict.append(pod)
    evict.reverse()
    return evict


def _first_over(gq: GroupQuota) -> str:
    for r in sorted_resources(gq.runtime):
        if gq.used[r] > gq.runtime[r]:
            return r
    return next(r for r in gq.runtime if gq.used[r] > gq.runtime[r])


def recycle(
    snapshot: Snapshot, *, now: float, over_since: Mapping[str, float], delay: float | None = None
) -> tuple[list[Eviction], dict[str, float]]:
    """One overuse-revoke pass: the evictions (with reasons and numbers) and the new ``over_since`` map."""
    args = snapshot.effective_elastic_quota_args()
    wait = args.delay_evict_time if delay is None else delay
    result = compute_quotas(snapshot)
    by_group = snapshot.tasks_by_quota_group
    evictions: list[Eviction] = []
    since_map: dict[str, float] = {}
    for name in sorted(result):
        if name in (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP) or result.parent(name) is None:
            continue
        gq = result[name]
        if _within(gq.used, gq.runtime):
            continue
        since = over_since.get(name, now)
        if wait > 0 and not now - since > wait:
            since_map[name] = since
            continue
        since_map[name] = now  # Koordinator resets lastUnderUsedTime on a trigger
        r = _first_over(gq)
        pods = [t for t in by_group.get(name, ()) if t.node is not None and t.status in ALLOCATED_STATUSES]
        blocker = Blocker("quota", name, r, gq.used[r], gq.runtime[r], "runtime")
        for pod in revoke_victims(pods, gq.used, gq.runtime):
            start = "never started" if pod.start_timestamp is None else f"running for {now - pod.start_timestamp:.0f}s"
            evictions.append(
                Eviction(
                    task=pod.uid,
                    action="recycle",
                    reason="QuotaOverused",
                    message=(
                        f"quota group {name} uses {qty(gq.used[r], r)} {r}, above its runtime "
                        f"{qty(gq.runtime[r], r)}, for {now - since:.1f}s (delayEvictTime {wait:g}s); "
                        f"pod priority {pod.priority}, {start}"
                    ),
                    blocker=blocker,
                )
            )
    return evictions, since_map
