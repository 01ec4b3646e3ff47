"""The job history (issue 29): one compact ``JobRecord`` per job, kept ``FAIRWAY_JOB_HISTORY_DAYS`` whatever the
garbage collection of finished podgroups removes, so that ``fairway trace export`` can write what happened.

* ``job_facts``: a podgroup's trace facts read from its rows (queue, quota group, priority, preemptibility, roles
  with their pods and request, submit, first start, finish when every pod finished, the runtime of its longest
  finished pod run, its evictions, the Kueue ResourceFlavors it was given): the same reading for a live job and for one about to be removed.
* ``record_removed``: called by ``scheduling.evictions.remove_podgroups`` in the deleting transaction, before the
  rows go: one ``JobRecord`` per podgroup that had been submitted.
* ``prune``: the records submitted before the retention window, from the periodic record compaction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count

from engine.resources import whole_gpus
from scheduling.models import Cluster, Eviction, JobRecord, Pod, PodGroup

__all__ = ["job_facts", "prune", "record_removed", "retention", "usual_min_resources"]

_CHUNK = 1000


def retention() -> timedelta:
    """How long a job's history row is kept after its submission (``FAIRWAY_JOB_HISTORY_DAYS``)."""
    return timedelta(days=int(settings.FAIRWAY["JOB_HISTORY_DAYS"]))


# what ``_facts`` takes of a podgroup's row, in its order; then what ``job_facts`` adds
_FACT_FIELDS = (
    "id",
    "cluster_id",
    "namespace__name",
    "name",
    "queue__name",
    "namespace__quota_group__name",
    "priority",
    "min_member",
    "min_resources",
    "created",
)
_PODGROUP_FIELDS = (*_FACT_FIELDS, "flavors", "user", "user_groups")


def job_facts(podgroup_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Per podgroup (by id order): the fields of a ``JobRecord`` (without the cluster)."""
    ids = sorted(podgroup_ids)
    out: list[dict[str, Any]] = []
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        pods: dict[int, list[tuple[Any, ...]]] = {}
        for row in (
            Pod.objects.filter(podgroup_id__in=chunk)
            .order_by("podgroup_id", "name")
            .values_list(
                "podgroup_id",
                "task_name",
                "request",
                "preemptible",
                "quota_group__name",
                "started",
                "finished",
                "status",
                "node_selector",
                "tolerations",
                "name",
                "node_affinity",
            )
        ):
            pods.setdefault(row[0], []).append(row[1:])
        evicted = dict(
            Eviction.objects.filter(pod__podgroup_id__in=chunk)
            .values_list("pod__podgroup_id")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("pod__podgroup_id", "n")
        )
        rows = PodGroup.objects.filter(pk__in=chunk).order_by("id").values_list(*_PODGROUP_FIELDS)
        for row in rows:
            pk, flavors, user, groups = row[0], *row[len(_FACT_FIELDS) :]
            facts = _facts(*row[: len(_FACT_FIELDS)], pods.get(pk, []), evicted.get(pk, 0))
            # the Kueue ResourceFlavor the cluster gave it per resource (``scheduling.store.flavors``); null: none
            facts["flavors"] = dict(flavors) if isinstance(flavors, dict) and flavors else None
            facts["user"] = user or ""  # who submitted it (empty: its namespace counts as its user)
            facts["user_groups"] = [str(g) for g in groups] if isinstance(groups, list) else []
            out.append(facts)
    return out


def _facts(
    pk: int,
    cluster_id: int,
    ns: str,
    name: str,
    queue: str,
    ns_group: str | None,
    priority: int,
    min_member: int,
    min_resources: dict[str, Any] | None,
    created: datetime,
    members: list[tuple[Any, ...]],
    evictions: int,
) -> dict[str, Any]:
    """A job's facts from its pods' rows. A Failed pod (evicted, or lost with its node) is not counted in its role:
    its replacement (``<name>-r<N>``) is the same task again."""
    roles: dict[tuple[str, str, str], list[Any]] = {}
    pod_runs: dict[int, list[tuple[list[Any], float | None]]] = {}  # per role entry: (name's order, run) a pod
    for role, request, _pre, _group, started, finished, status, selector, tolerations, pod, affinity in members:
        if status == "Failed":
            continue  # an evicted or failed copy; its replacement is counted instead
        placed = (("nodeSelector", selector), ("tolerations", tolerations), ("nodeAffinity", affinity))
        placement = {k: v for k, v in placed if v}
        key = (role, repr(sorted((request or {}).items())), repr(placement))
        entry = roles.setdefault(key, [role, 0, {k: int(v) for k, v in sorted((request or {}).items())}])
        if placement and len(entry) == 3:
            entry.append(placement)  # only where the pods have one: most jobs' rows stay three fields a role
        entry[1] += 1
        run = (finished - started).total_seconds() if started is not None and finished is not None else None
        pod_runs.setdefault(id(entry), []).append((_name_order(pod), run))
    starts = [m[4] for m in members if m[4] is not None]
    done = [m for m in members if m[6] != "Failed"]
    finished = None
    if done and all(m[5] is not None for m in done):
        finished = max(m[5] for m in done)
    runs = [(m[5] - m[4]).total_seconds() for m in done if m[4] is not None and m[5] is not None]
    # every run's GPUs held, an evicted or failed one's too: its submitter's usage (the fairness audit's per user)
    gpu_seconds = sum(
        whole_gpus(m[1]) * (m[5] - m[4]).total_seconds() for m in members if m[4] is not None and m[5] is not None
    )
    groups = sorted({m[3] for m in members if m[3]})
    ordered = sorted(roles.values(), key=lambda r: (r[0], -r[1]))
    each = [run for entry in ordered for _order, run in sorted(pod_runs[id(entry)], key=lambda p: p[0])]
    return {
        "podgroup_id": pk,
        "cluster_id": cluster_id,
        "namespace": ns,
        "name": name,
        "queue": queue,
        "quota_group": groups[0] if groups else (ns_group or ""),
        "priority": priority,
        "preemptible": all(m[2] for m in members) if members else True,
        "min_member": min_member,
        "roles": ordered,
        "min_resources": _unusual_min_resources(min_resources, ordered, min_member),
        "submitted": created,
        "started": min(starts) if starts else None,
        "finished": finished,
        "runtime": max(runs) if runs else None,
        # each pod's run (roles in order, a role's pods in their names' order) where they differ; null when equal
        "pod_runtimes": each if finished and None not in each and len(set(each)) > 1 else None,
        "evictions": evictions,
        "gpu_seconds": round(gpu_seconds, 1),
    }


_RETRIES = re.compile(r"(-r\d+)+$")
_NUMBERS = re.compile(r"(\d+)")


def _name_order(name: str) -> list[Any]:
    """A pod name's natural order, its replacements' suffix (``-r<N>``) left out: ``x-2`` before ``x-10``."""
    return [int(p) if p.isdigit() else p for p in _NUMBERS.split(_RETRIES.sub("", name))]


def usual_min_resources(roles: list[list[Any]], min_member: int) -> dict[str, int]:
    """The requests of a job's first ``min_member`` pods, its roles in order (what Volcano's job controller writes as
    a podgroup's minResources, and the demo's workload too)."""
    out: dict[str, int] = {}
    left = min_member
    for role in roles:
        n = min(left, role[1])
        for k, v in role[2].items():
            out[k] = out.get(k, 0) + int(v) * n
        left -= n
    return {k: v for k, v in out.items() if v}


def _unusual_min_resources(
    value: dict[str, Any] | None, roles: list[list[Any]], min_member: int
) -> dict[str, int] | None:
    """The row's ``min_resources``: null when they are the usual ones (most jobs), ``{}`` when it has none."""
    written = {k: int(v) for k, v in (value or {}).items() if int(v)}
    return None if written == usual_min_resources(roles, min_member) else written


def record_removed(podgroup_ids: Iterable[int]) -> int:
    """One ``JobRecord`` per podgroup about to be removed (call it in the deleting transaction, before the delete)."""
    rows = [f for f in job_facts(podgroup_ids) if f["roles"]]
    for f in rows:
        f.pop("podgroup_id")
    JobRecord.objects.bulk_create([JobRecord(**f) for f in rows], batch_size=_CHUNK)
    return len(rows)


def prune(cluster: Cluster, now: datetime, keep: timedelta | None = None) -> int:
    """Delete ``cluster``'s job records submitted more than ``keep`` (default :func:`retention`) before ``now``."""
    cutoff = now - (retention() if keep is None else keep)
    deleted, _ = JobRecord.objects.filter(cluster=cluster, submitted__lt=cutoff).delete()
    return deleted
