"""The node-agent protocol, and a simulated agent plus a workload generator that play it for the demo.

**Protocol** (what a real node agent does through the API, and what the simulated one does directly):

* A node registers (``POST nodes/``) and heartbeats (``POST nodes/{name}/heartbeat/``); a heartbeat may carry new
  allocatable resources, labels, taints or the unschedulable flag, and turns a NotReady node Ready again. A node
  that has heartbeated once and then stays silent for longer than its cluster's ``node_heartbeat_timeout``
  (default 40 s) turns NotReady (``mark_stale_nodes``, a periodic task): the engine then leaves its capacity out of
  the total and places nothing on it (the pods already there keep counting where they are; evicting them is left
  to the admin). A node that never heartbeated (created by an admin) never times out.
* The agent lists what it should run (``GET nodes/{name}/pods/``: Bound, Running and Releasing pods) and reports
  pod phases (``POST pods/{id}/status/``) along these transitions (``POD_TRANSITIONS``)::

      Bound     -> Running | Succeeded | Failed
      Running   -> Succeeded | Failed
      Releasing -> Succeeded | Failed        (it finished while being evicted)

  Reporting the status a pod already has is accepted and changes nothing (agents retry); anything else is refused
  with the reason. ``Running`` sets ``started``; ``Succeeded`` / ``Failed`` set ``finished``.
* An evicted pod is Releasing (it still holds its node's resources, so nothing else lands there) until the agent
  confirms it gone (``POST pods/{id}/gone/``). **Decision**: a pod confirmed gone is kept, as **Failed with reason
  Evicted** (its node stays recorded, as Kubernetes keeps ``nodeName`` on a failed pod), rather than deleted: the
  eviction history, the podgroup's gang counts and the API keep pointing at it. Its podgroup completes when every
  pod has finished; the simulated workload's garbage collector deletes Completed podgroups after a while (as
  Volcano's ``ttlSecondsAfterFinished`` does).

**Simulation** (``Cluster.simulated``; the demo's default cluster): ``agent_tick`` heartbeats the Ready nodes,
starts Bound pods, finishes Running pods after their ``duration_seconds``, confirms Releasing pods gone (and, as a
job controller would, queues a replacement for each evicted pod of a podgroup still at work) and marks podgroups
whose pods all finished Completed. ``generate_workload`` keeps the teams busy: every open leaf queue
with a namespace gets gang jobs at a rate that rises and falls on a slow wave whose phase differs per team (so some
teams idle and lend while others burst and borrow, then the lenders come back and reclaim), with seeded randomness
(``random.Random`` seeded by the seed, the cluster and the second), jobs sized from templates (GPU jobs for teams
whose queue deserves GPUs), a cap on each queue's backlog, and the namespace quota rules of the API.
"""

from __future__ import annotations

import math
import random
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Q

from quotas import rules, services
from quotas.choices import QueueState
from quotas.models import Namespace, Queue
from quotas.resources import ResourceList
from scheduling.choices import PodGroupPhase, PodStatus
from scheduling.models import Cluster, Node, Pod, PodGroup

__all__ = [
    "POD_TRANSITIONS",
    "AgentError",
    "WorkloadSettings",
    "agent_tick",
    "collect_garbage",
    "confirm_gone",
    "generate_workload",
    "heartbeat",
    "mark_stale_nodes",
    "report_pod_status",
]

POD_TRANSITIONS: Mapping[str, frozenset[str]] = {
    PodStatus.BOUND: frozenset({PodStatus.RUNNING, PodStatus.SUCCEEDED, PodStatus.FAILED}),
    PodStatus.RUNNING: frozenset({PodStatus.SUCCEEDED, PodStatus.FAILED}),
    PodStatus.RELEASING: frozenset({PodStatus.SUCCEEDED, PodStatus.FAILED}),
}
REPORTABLE = (PodStatus.RUNNING, PodStatus.SUCCEEDED, PodStatus.FAILED)
_FINISHED = (PodStatus.SUCCEEDED, PodStatus.FAILED)
EVICTED_REASON = "Evicted"


class AgentError(Exception):
    """A report the protocol refuses; ``field`` names the offending input (for the API's error envelope)."""

    def __init__(self, field: str, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.code = code


# -- the protocol ---------------------------------------------------------------------------------------------


def heartbeat(
    node: Node,
    now: datetime,
    *,
    allocatable: ResourceList | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] | None = None,
    unschedulable: bool | None = None,
) -> Node:
    """Record a heartbeat (the node is Ready again), with optional updates of what the node offers."""
    node.last_heartbeat = now
    node.ready = True
    fields = ["last_heartbeat", "ready", "updated"]
    for name, value in (
        ("allocatable", allocatable),
        ("labels", labels),
        ("taints", None if taints is None else [dict(t) for t in taints]),
        ("unschedulable", unschedulable),
    ):
        if value is not None:
            setattr(node, name, value)
            fields.append(name)
    node.save(update_fields=fields)
    return node


def mark_stale_nodes(cluster: Cluster, now: datetime) -> list[str]:
    """Nodes silent for longer than the cluster's heartbeat timeout turn NotReady; returns their names."""
    cutoff = now - timedelta(seconds=cluster.node_heartbeat_timeout)
    stale = Node.objects.filter(cluster=cluster, ready=True, last_heartbeat__isnull=False, last_heartbeat__lt=cutoff)
    names = sorted(stale.values_list("name", flat=True))
    if names:
        stale.filter(name__in=names).update(ready=False, updated=now)
    return names


def report_pod_status(pod: Pod, status: str, now: datetime, *, node: str | None = None, message: str = "") -> Pod:
    """Apply an agent's report of ``pod``'s phase along ``POD_TRANSITIONS`` (compare-and-swap on the status).

    Raises ``AgentError`` for a status an agent may not report, a transition the protocol refuses, or a report
    naming another node than the pod's.
    """
    if status not in REPORTABLE:
        raise AgentError("status", f"an agent reports Running, Succeeded or Failed, not {status!r}")
    if node is not None and (pod.node is None or pod.node.name != node):
        where = pod.node.name if pod.node is not None else "no node"
        raise AgentError("node", f"pod {pod.namespace.name}/{pod.name} is on {where}, not on {node}")
    if pod.status == status:
        return pod  # a retried report
    allowed = POD_TRANSITIONS.get(pod.status, frozenset())
    if status not in allowed:
        if pod.status in (PodStatus.PENDING, PodStatus.PIPELINED, PodStatus.ALLOCATED, PodStatus.BINDING):
            why = "it is not bound to a node yet"
        elif pod.status in _FINISHED:
            why = "it has already finished"
        else:
            why = "it is being evicted; confirm it gone instead"
        raise AgentError(
            "status", f"pod {pod.namespace.name}/{pod.name} cannot go from {pod.status} to {status}: {why}"
        )
    changes: dict[str, Any] = {"status": status, "updated": now}
    if status == PodStatus.RUNNING or pod.started is None:
        changes["started"] = pod.started or now
    if status in _FINISHED:
        changes["finished"] = now
    if message:
        changes["message"] = message[:2000]
    if not Pod.objects.filter(pk=pod.pk, status=pod.status).update(**changes):
        pod.refresh_from_db()
        return report_pod_status(pod, status, now, node=node, message=message)
    pod.refresh_from_db()
    return pod


def confirm_gone(pod: Pod, now: datetime) -> Pod:
    """An evicted (Releasing) pod is gone from its node: it becomes Failed with reason Evicted (see the module
    docstring). A finished pod is left as it is (a retried confirmation); anything else is refused."""
    if pod.status in _FINISHED:
        return pod
    if pod.status != PodStatus.RELEASING:
        raise AgentError("status", f"pod {pod.namespace.name}/{pod.name} is {pod.status}, not being evicted")
    changes = {"status": PodStatus.FAILED, "reason": EVICTED_REASON, "finished": now, "updated": now}
    if not Pod.objects.filter(pk=pod.pk, status=PodStatus.RELEASING).update(**changes):
        pod.refresh_from_db()
        return confirm_gone(pod, now)
    pod.refresh_from_db()
    return pod


def complete_finished_podgroups(cluster: Cluster, now: datetime) -> int:
    """Podgroups whose pods have all finished (at least one) become Completed; returns how many."""
    done = list(
        PodGroup.objects.filter(cluster=cluster)
        .exclude(phase=PodGroupPhase.COMPLETED)
        .annotate(n=Count("pods"), live=Count("pods", filter=~Q(pods__status__in=_FINISHED)))
        .filter(n__gt=0, live=0)
        .values_list("id", flat=True)
    )
    if not done:
        return 0
    return (
        PodGroup.objects.filter(pk__in=done)
        .exclude(phase=PodGroupPhase.COMPLETED)
        .update(phase=PodGroupPhase.COMPLETED, reason="", message="", blocker=None, updated=now)
    )


# -- the simulated agent --------------------------------------------------------------------------------------


@transaction.atomic
def agent_tick(cluster: Cluster, now: datetime) -> dict[str, int]:
    """One second of the simulated node agents of ``cluster`` (see the module docstring); returns counts."""
    beats = Node.objects.filter(cluster=cluster, ready=True).update(last_heartbeat=now)
    started = Pod.objects.filter(cluster=cluster, status=PodStatus.BOUND).update(
        status=PodStatus.RUNNING, started=now, updated=now
    )
    due: list[int] = []
    for pk, begun, duration in Pod.objects.filter(
        cluster=cluster, status=PodStatus.RUNNING, duration_seconds__isnull=False, started__isnull=False
    ).values_list("id", "started", "duration_seconds"):
        if begun + timedelta(seconds=duration) <= now:
            due.append(pk)
    finished = 0
    for i in range(0, len(due), 500):
        finished += Pod.objects.filter(pk__in=due[i : i + 500], status=PodStatus.RUNNING).update(
            status=PodStatus.SUCCEEDED, finished=now, updated=now
        )
    evicted = list(
        Pod.objects.filter(cluster=cluster, status=PodStatus.RELEASING, podgroup__isnull=False).exclude(
            podgroup__phase=PodGroupPhase.COMPLETED
        )
    )
    gone = Pod.objects.filter(cluster=cluster, status=PodStatus.RELEASING).update(
        status=PodStatus.FAILED, reason=EVICTED_REASON, finished=now, updated=now
    )
    replaced = _replace_evicted(evicted)
    completed = complete_finished_podgroups(cluster, now)
    return {
        "heartbeats": beats,
        "started": started,
        "finished": finished,
        "gone": gone,
        "replaced": replaced,
        "completed": completed,
    }


_RETRY_SUFFIX = re.compile(r"-r(\d+)$")


def _replace_evicted(evicted: list[Pod]) -> int:
    """The simulated job controller: each evicted pod of a podgroup still at work gets a Pending replacement
    (``<name>-r<N>``, same request, priority and placement constraints), as Volcano's job controller restarts an
    evicted task, so a reclaimed gang queues up again instead of waiting forever below its minMember."""
    replacements = []
    for pod in evicted:
        match = _RETRY_SUFFIX.search(pod.name)
        base, attempt = (pod.name[: match.start()], int(match.group(1)) + 1) if match else (pod.name, 1)
        replacements.append(
            Pod(
                cluster_id=pod.cluster_id,
                namespace_id=pod.namespace_id,
                name=f"{base}-r{attempt}",
                podgroup_id=pod.podgroup_id,
                task_name=pod.task_name,
                request=pod.request,
                priority=pod.priority,
                preemptible=pod.preemptible,
                quota_group_id=pod.quota_group_id,
                node_selector=pod.node_selector,
                tolerations=pod.tolerations,
                labels=pod.labels,
                duration_seconds=pod.duration_seconds,
            )
        )
    Pod.objects.bulk_create(replacements, ignore_conflicts=True)
    return len(replacements)


# -- the workload generator ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadSettings:
    """Knobs of the demo's workload (defaults keep 24 demo nodes busy without drowning them)."""

    jobs_per_tick: float = 0.35  # expected new jobs per busy queue per call (a call every 2 s)
    wave_seconds: float = 900.0  # one busy/idle cycle per team
    max_pending_pods: int = 48  # no new job while a queue has this many pods waiting
    gpu_share: float = 0.4  # share of GPU jobs for teams whose queue deserves GPUs
    min_duration: int = 20
    max_duration: int = 240
    ttl_after_finished: int = 300  # Completed podgroups are deleted after this many seconds


_GIB = 2**30
_GPU = "nvidia.com/gpu"
_GPU_TOLERATION = [{"key": _GPU, "operator": "Exists", "value": "", "effect": "NoSchedule"}]


def _busy(queue: str, t: float, wave: float) -> float:
    """0..1: how busy the team behind ``queue`` is at ``t`` (a sine wave with a per-team phase)."""
    phase = (zlib.crc32(queue.encode()) % 1000) / 1000.0 * 2.0 * math.pi
    return 0.5 + 0.5 * math.sin(2.0 * math.pi * t / wave + phase)


def _job(rng: random.Random, gpu: bool, knobs: WorkloadSettings) -> tuple[int, dict[str, int], int, int]:
    """(pods, per-pod request, priority, duration) of one job."""
    if gpu:
        size = rng.choice((1, 1, 2, 4))
        gpus = rng.choice((1, 1, 2))
        request = {"cpu": 8000 * gpus, "memory": 64 * _GIB * gpus, _GPU: 1000 * gpus}
    else:
        size = rng.choice((1, 1, 2, 4, 4, 8))
        cores = rng.choice((1, 2, 4, 8))
        request = {"cpu": 1000 * cores, "memory": 4 * _GIB * cores}
    priority = rng.choice((0, 0, 10, 50))
    return size, request, priority, rng.randint(knobs.min_duration, knobs.max_duration)


def generate_workload(
    cluster: Cluster, now: datetime, *, seed: int = 0, settings: WorkloadSettings | None = None
) -> dict[str, int]:
    """Submit new gang jobs to the open leaf queues of ``cluster`` (see the module docstring); returns counts."""
    knobs = settings or WorkloadSettings()
    t = now.timestamp()
    rng = random.Random(f"{seed}:{cluster.pk}:{int(t)}")
    specs = services.queue_specs()
    parents = {s.parent for s in specs.values() if s.parent}
    leaves = {
        name
        for name, spec in specs.items()
        if name not in parents and name not in ("root", "default") and spec.state == QueueState.OPEN
    }
    by_queue: dict[str, list[Namespace]] = {}
    for ns in Namespace.objects.filter(default_queue__name__in=leaves).select_related("default_queue"):
        by_queue.setdefault(ns.default_queue.name, []).append(ns)  # type: ignore[union-attr]
    waiting = dict(
        Pod.objects.filter(cluster=cluster, status=PodStatus.PENDING, podgroup__queue__name__in=list(by_queue))
        .values_list("podgroup__queue__name")
        .annotate(n=Count("id"))
        .values_list("podgroup__queue__name", "n")
    )
    submitted = refused = pods = 0
    for queue in sorted(by_queue):
        if waiting.get(queue, 0) >= knobs.max_pending_pods:
            continue
        if rng.random() >= knobs.jobs_per_tick * _busy(queue, t, knobs.wave_seconds):
            continue
        namespaces = sorted(by_queue[queue], key=lambda n: n.name)
        ns = namespaces[0] if rng.random() < 0.75 else rng.choice(namespaces)
        gpu = specs[queue].deserved.get(_GPU, 0) > 0 and rng.random() < knobs.gpu_share
        size, request, priority, duration = _job(rng, gpu, knobs)
        per_pod = ResourceList(request)
        min_resources = ResourceList({k: v * size for k, v in request.items()})
        name = f"job-{int(t)}-{rng.randrange(16**6):06x}"
        with transaction.atomic():
            others = ResourceList.total(
                mr
                for mr in PodGroup.objects.filter(namespace=ns, cluster=cluster).values_list("min_resources", flat=True)
                if mr
            )
            errors = rules.validate_podgroup(
                specs,
                queue,
                min_member=size,
                min_resources=min_resources,
                namespace=ns.name,
                namespace_hard=ns.hard,
                other_min_resources=others,
            )
            if errors or PodGroup.objects.filter(cluster=cluster, namespace=ns, name=name).exists():
                refused += 1
                continue
            pg = PodGroup.objects.create(
                cluster=cluster,
                namespace=ns,
                name=name,
                queue=Queue.objects.get(name=queue),
                min_member=size,
                min_resources=min_resources,
                priority=priority,
            )
            Pod.objects.bulk_create(
                Pod(
                    cluster=cluster,
                    namespace=ns,
                    name=f"{name}-{k}",
                    podgroup=pg,
                    request=per_pod,
                    priority=priority,
                    quota_group_id=ns.quota_group_id,
                    duration_seconds=duration,
                    tolerations=_GPU_TOLERATION if gpu else [],
                )
                for k in range(size)
            )
        submitted += 1
        pods += size
    collected = collect_garbage(cluster, now, knobs.ttl_after_finished)
    return {"submitted": submitted, "pods": pods, "refused": refused, "collected": collected}


def collect_garbage(cluster: Cluster, now: datetime, ttl_seconds: int) -> int:
    """Delete podgroups Completed more than ``ttl_seconds`` ago (their pods go with them), and finished pods
    without a podgroup as old; returns how many podgroups went."""
    cutoff = now - timedelta(seconds=ttl_seconds)
    old = PodGroup.objects.filter(cluster=cluster, phase=PodGroupPhase.COMPLETED, updated__lt=cutoff)
    n = old.count()
    if n:
        old.delete()
    Pod.objects.filter(cluster=cluster, podgroup__isnull=True, status__in=_FINISHED, finished__lt=cutoff).delete()
    return n
