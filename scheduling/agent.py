"""The node-agent protocol, and a simulated agent plus a workload generator that play it for the demo.

**Protocol** (what a real node agent does through the API, and what the simulated one does directly):

* A node registers (``POST nodes/``) and heartbeats (``POST nodes/{name}/heartbeat/``); a heartbeat may carry new
  allocatable resources, labels, taints or the unschedulable flag, and turns a NotReady node Ready again. A node
  that has heartbeated once and then stays silent for longer than its cluster's ``node_heartbeat_timeout``
  (default 40 s) turns NotReady (``mark_stale_nodes``, a periodic task): the engine then leaves its capacity out of
  the total and places nothing on it; the pods already there keep counting where they are. A node that never
  heartbeated (created by an admin) never times out. The check does not condemn nodes for its own silence: when it
  could not run for a while (a broker or database outage, every worker down), heartbeats missed before it resumed
  are forgiven for one more timeout, since the agents (the simulated one rides the same broker) may have been
  unable to report.
* A node NotReady for longer than its cluster's ``pod_eviction_timeout`` (default 300 s, Kubernetes' default
  toleration of ``node.kubernetes.io/not-ready``) loses its pods (``evict_lost_nodes``): each pod still bound,
  running or being evicted there becomes **Failed with reason NodeLost** (an ``Eviction`` row, action
  ``node-lost``), so its queue and quota group no longer count it, and — on a simulated cluster, where Fairway
  plays the job controller — its gang gets a replacement. As Kubernetes' node lifecycle controller does in a
  disrupted zone, nothing is evicted while 55 % or more of the cluster's nodes are NotReady: that looks like a
  network or control-plane problem, not dead machines. When the node comes back, its agent finds the NodeLost
  pods in its listing (``GET nodes/{name}/pods/``, ``"action": "stop"``) and confirms each gone, which unlinks it
  from the node.
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

**Simulation** (``Cluster.simulated``; the demo's default cluster): ``agent_tick`` heartbeats every node it
plays, Ready or not (so nodes come back by themselves after an outage; a node labelled
``fairway.dev/simulate-down: "true"`` is a machine with its plug pulled: not played at all), starts Bound pods, finishes Running pods after their ``duration_seconds``, confirms Releasing pods gone (and, as a
job controller would, queues a replacement for each evicted pod of a podgroup still at work) and marks podgroups
whose pods all finished Completed. ``generate_workload`` keeps the teams busy: every open leaf queue
with a namespace gets gang jobs at a rate that rises and falls on a slow wave whose phase differs per team (so some
teams idle and lend while others burst and borrow, then the lenders come back and reclaim), with seeded randomness
(``random.Random`` seeded by the seed, the cluster and the second), jobs sized from templates (GPU jobs for teams
whose queue deserves GPUs), a cap on each queue's backlog (pods, and what its queue deserves, so that an
idle team's queue drains and lends), and the namespace quota rules of the API. A call's jobs (all its beats: a soak
plays several in one call) are written together at its end, in one transaction.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import BigIntegerField, Count, Exists, Max, Min, OuterRef, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce

from engine import rules
from engine.limits import node_amount_errors
from engine.objects import DEFAULT_QUEUE, ROOT_QUEUE, replacement_name
from engine.replay.workload import WorkloadSettings, backlog_full, busy, draw_job, fit_size, submitter
from engine.resources import ResourceList
from engine.wording import duration as say_duration
from quotas import services
from quotas.choices import QueueState
from quotas.models import Namespace
from scheduling import counters, evictions
from scheduling.choices import FINISHED_POD_STATUSES, PodGroupPhase, PodStatus
from scheduling.models import Cluster, Eviction, EvictionAction, Node, Pod, PodGroup, RemovalCause

__all__ = [
    "POD_TRANSITIONS",
    "AgentError",
    "WorkloadSettings",
    "agent_tick",
    "cluster_disrupted",
    "collect_garbage",
    "confirm_gone",
    "evict_lost_nodes",
    "generate_workload",
    "heartbeat",
    "mark_stale_nodes",
    "replace_members",
    "report_pod_status",
]

logger = logging.getLogger(__name__)

POD_TRANSITIONS: Mapping[str, frozenset[str]] = {
    PodStatus.BOUND: frozenset({PodStatus.RUNNING, PodStatus.SUCCEEDED, PodStatus.FAILED}),
    PodStatus.RUNNING: frozenset({PodStatus.SUCCEEDED, PodStatus.FAILED}),
    PodStatus.RELEASING: frozenset({PodStatus.SUCCEEDED, PodStatus.FAILED}),
}
REPORTABLE = (PodStatus.RUNNING, PodStatus.SUCCEEDED, PodStatus.FAILED)
EVICTED_REASON = "Evicted"
NODE_LOST_REASON = "NodeLost"
# Pods a lost node held: placed there (or about to be) and not finished.
_ON_NODE = (PodStatus.ALLOCATED, PodStatus.BINDING, PodStatus.BOUND, PodStatus.RUNNING, PodStatus.RELEASING)
# Kubernetes' --unhealthy-zone-threshold: with this share of the nodes NotReady, nothing is evicted.
DISRUPTION_THRESHOLD = 0.55
SIMULATE_DOWN_LABEL = "fairway.dev/simulate-down"


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
    """Record a heartbeat (the node is Ready again), with optional updates of what the node offers. An allocatable
    above what one node may have sets the node aside (``offer``) rather than failing the heartbeat."""
    node.last_heartbeat = now
    node.ready = True
    fields = ["last_heartbeat", "ready", "updated"]
    if allocatable is not None:
        offer(node, allocatable, "the heartbeat")
        fields += ["allocatable", "set_aside"]
    for name, value in (
        ("labels", labels),
        ("taints", None if taints is None else [dict(t) for t in taints]),
        ("unschedulable", unschedulable),
    ):
        if value is not None:
            setattr(node, name, value)
            fields.append(name)
    node.save(update_fields=fields)
    return node


def set_aside_reason(allocatable: Mapping[str, int], reporter: str) -> str:
    """Why a node reporting ``allocatable`` is set aside, or "" when every amount is within what one node may have
    (``FAIRWAY_MAX_NODE_AMOUNT``)."""
    errors = node_amount_errors(allocatable, settings.FAIRWAY_LIMITS.max_node_amount)
    if not errors:
        return ""
    names = " and ".join(e.field.split(".", 1)[1] for e in errors)
    said = "; ".join(f"{e.field.split('.', 1)[1]} {e.message}" for e in errors)
    return f"set aside: allocatable {names} above the per-node bound ({reporter} said {said})"


def offer(node: Node, allocatable: ResourceList, reporter: str) -> None:
    """Set what ``node`` offers (not saved): ``allocatable``, or — when an amount is above what one node may have —
    nothing, with the reason in ``set_aside``, until a report within the bound comes. One node's numbers never
    reach the cluster's total, so they cannot fail its sessions, pages or metrics; the change is logged."""
    reason = set_aside_reason(allocatable, reporter)
    if reason:
        if node.set_aside != reason:
            logger.warning("node %s (cluster %s) %s", node.name, node.cluster_id, reason)
        node.allocatable = ResourceList()
        node.set_aside = reason
        return
    if node.set_aside:
        logger.warning("node %s (cluster %s) back within the per-node bound: no longer set aside", node.name,
                       node.cluster_id)  # fmt: skip
    node.allocatable = allocatable
    node.set_aside = None


def mark_stale_nodes(cluster: Cluster, now: datetime) -> list[str]:
    """Nodes silent for longer than the cluster's heartbeat timeout turn NotReady; returns their names.

    When the previous check is older than ``FAIRWAY["NODE_CHECK_GAP_SECONDS"]`` (the node check runs every 5 s; a
    gap longer than this, 15 s by default, or half the timeout, or no previous check), the check itself could not
    run: it records that it resumed now, and no node turns NotReady before a whole timeout has passed since.

    On a simulated cluster the heartbeats are the control plane's own writes (``agent_tick`` beats every node it
    plays up at once), so a node's silence is measured against the agent's last beat, the latest heartbeat of any
    node: when the agent itself is late (its worker busy with a long session on a loaded machine, or stopped), no
    node is blamed for it, while a node the simulation plays down still falls behind the others and turns
    NotReady."""
    timeout = timedelta(seconds=cluster.node_heartbeat_timeout)
    last = cluster.nodes_checked_at
    grace_from = cluster.nodes_grace_from
    gap = max(settings.FAIRWAY["NODE_CHECK_GAP_SECONDS"], timeout.total_seconds() / 2)
    if last is None or (now - last).total_seconds() > gap:
        grace_from = now
    Cluster.objects.filter(pk=cluster.pk).update(nodes_checked_at=now, nodes_grace_from=grace_from)
    cluster.nodes_checked_at, cluster.nodes_grace_from = now, grace_from
    cutoff = now - timeout
    if grace_from is not None and grace_from > cutoff:
        return []  # the check was silent less than a timeout ago: missed heartbeats are not the nodes' fault
    if cluster.simulated:
        agent_beat = Node.objects.filter(cluster=cluster).aggregate(last=Max("last_heartbeat"))["last"]
        if agent_beat is not None:
            cutoff = min(cutoff, agent_beat - timeout)
    stale = Node.objects.filter(cluster=cluster, ready=True, last_heartbeat__isnull=False, last_heartbeat__lt=cutoff)
    names = sorted(stale.values_list("name", flat=True))
    if names:
        stale.filter(name__in=names).update(ready=False, not_ready_since=now, updated=now)
    return names


def cluster_disrupted(cluster: Cluster) -> tuple[int, int]:
    """(NotReady nodes, all nodes) when at least ``DISRUPTION_THRESHOLD`` of the nodes are NotReady, else (0, n)."""
    counts = Node.objects.filter(cluster=cluster).aggregate(n=Count("id"), down=Count("id", filter=Q(ready=False)))
    n, down = counts["n"] or 0, counts["down"] or 0
    if n and down / n >= DISRUPTION_THRESHOLD:
        return down, n
    return 0, n


@transaction.atomic
def evict_lost_nodes(cluster: Cluster, now: datetime) -> dict[str, int]:
    """Pods of nodes NotReady for longer than the cluster's ``pod_eviction_timeout`` become Failed (NodeLost), with
    an eviction row each; on a simulated cluster their gangs get replacements. Nothing happens while the cluster
    is disrupted (``cluster_disrupted``). Returns counts (``lost`` pods, ``replaced``, ``nodes``)."""
    down, total = cluster_disrupted(cluster)
    if down:
        logger.warning(
            "cluster %s: %d of %d nodes NotReady; no pod is evicted from them while the cluster is this disrupted",
            cluster.name,
            down,
            total,
        )
        return {"lost": 0, "replaced": 0, "nodes": 0}
    cutoff = now - timedelta(seconds=cluster.pod_eviction_timeout)
    nodes = list(
        Node.objects.filter(cluster=cluster, ready=False, not_ready_since__isnull=False, not_ready_since__lt=cutoff)
    )
    if not nodes:
        return {"lost": 0, "replaced": 0, "nodes": 0}
    limit = say_duration(cluster.pod_eviction_timeout)
    lost: list[Pod] = []
    rows: list[Eviction] = []
    for node in nodes:
        assert node.not_ready_since is not None
        message = (
            f"node {node.name} has been NotReady for {say_duration((now - node.not_ready_since).total_seconds())} "
            f"(pod eviction timeout {limit}); the pod is considered lost"
        )
        pods = list(Pod.objects.filter(node=node, status__in=_ON_NODE).select_related("namespace"))
        for pod in pods:
            if not Pod.objects.filter(pk=pod.pk, status=pod.status).update(
                status=PodStatus.FAILED, reason=NODE_LOST_REASON, message=message, finished=now, updated=now
            ):
                continue  # its agent or a session changed it meanwhile
            lost.append(pod)
            rows.append(
                Eviction(
                    cluster=cluster,
                    pod=pod,
                    pod_uid=f"{pod.namespace.name}/{pod.name}",
                    namespace=pod.namespace.name,
                    node=node.name,
                    action=EvictionAction.NODE_LOST,
                    reason=NODE_LOST_REASON,
                    message=message,
                    blocker={"kind": "cluster", "name": node.name, "limit": "podEvictionTimeout"},
                    created=now,
                )
            )
    Eviction.stamp_owners(rows)
    Eviction.objects.bulk_create(rows)
    if rows:
        counters.add(cluster.pk, evictions={EvictionAction.NODE_LOST: len(rows)}, evicted=rows)
    replaced = 0
    if cluster.simulated:
        replaced = replace_members([p for p in lost if p.podgroup_id is not None])
    if lost:
        logger.warning(
            "cluster %s: %d pods lost with %s", cluster.name, len(lost), ", ".join(sorted(n.name for n in nodes))
        )
    return {"lost": len(lost), "replaced": replaced, "nodes": len(nodes)}


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
        elif pod.status in FINISHED_POD_STATUSES:
            why = "it has already finished"
        else:
            why = "it is being evicted; confirm it gone instead"
        raise AgentError(
            "status", f"pod {pod.namespace.name}/{pod.name} cannot go from {pod.status} to {status}: {why}"
        )
    changes: dict[str, Any] = {"status": status, "updated": now}
    if status == PodStatus.RUNNING or pod.started is None:
        changes["started"] = pod.started or now
    if status in FINISHED_POD_STATUSES:
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
    docstring). A pod lost with its node (Failed, NodeLost) that the returning agent stopped is unlinked from the
    node. Another finished pod is left as it is (a retried confirmation); anything else is refused."""
    if pod.status == PodStatus.FAILED and pod.reason == NODE_LOST_REASON and pod.node_id is not None:
        Pod.objects.filter(pk=pod.pk, status=PodStatus.FAILED, reason=NODE_LOST_REASON).update(node=None, updated=now)
        pod.refresh_from_db()
        return pod
    if pod.status in FINISHED_POD_STATUSES:
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
    # per podgroup, two probes of the pods' podgroup index that stop at the first row (a live pod is usually the
    # first one found), rather than counting every pod of every podgroup
    pods = Pod.objects.filter(podgroup=OuterRef("pk"))
    done = list(
        PodGroup.objects.filter(cluster=cluster)
        .exclude(phase=PodGroupPhase.COMPLETED)
        .filter(Exists(pods), ~Exists(pods.exclude(status__in=FINISHED_POD_STATUSES)))
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


def _played(cluster: Cluster) -> tuple[Any, Q]:
    """The nodes the simulated agent plays: all but those whose plug is pulled (``SIMULATE_DOWN_LABEL``); and the
    filter of the pods on them. With no node down (the usual case) that is any pod on a node, which the database
    answers from the pods' status index instead of probing every node."""
    down = [
        pk
        for pk, labels in Node.objects.filter(cluster=cluster).values_list("id", "labels")
        if isinstance(labels, dict) and str(labels.get(SIMULATE_DOWN_LABEL, "")).lower() == "true"
    ]
    nodes = Node.objects.filter(cluster=cluster).exclude(pk__in=down)
    on_them = Q(node__isnull=False) & ~Q(node__in=down) if down else Q(node__isnull=False)
    return nodes, on_them


# How many distinct durations one query of due pods compares (an OR of that many terms).
_DURATIONS_PER_QUERY = 64


def _finish_due(cluster: Cluster, on_played: Q, now: datetime) -> int:
    """Running pods whose ``duration_seconds`` have passed since they started become Succeeded; returns how many.
    A pod is due when ``started <= now - duration``: the database gives each distinct duration's earliest start,
    and compares the pods' starts for the durations where that one is due (a few a tick, of the workload's tens of
    durations), so no pod row is read into Python and the update names only those durations."""
    running = Pod.objects.filter(
        on_played, cluster=cluster, status=PodStatus.RUNNING, duration_seconds__isnull=False, started__isnull=False
    )
    earliest = running.order_by().values_list("duration_seconds").annotate(first=Min("started"))
    durations = sorted(seconds for seconds, first in earliest if first <= now - timedelta(seconds=seconds))
    finished = 0
    for i in range(0, len(durations), _DURATIONS_PER_QUERY):
        due = Q()
        for seconds in durations[i : i + _DURATIONS_PER_QUERY]:
            due |= Q(duration_seconds=seconds, started__lte=now - timedelta(seconds=seconds))
        finished += running.filter(due).update(status=PodStatus.SUCCEEDED, finished=now, updated=now)
    return finished


@transaction.atomic
def agent_tick(cluster: Cluster, now: datetime) -> dict[str, int]:
    """One second of the simulated node agents of ``cluster`` (see the module docstring); returns counts."""
    played, on_played = _played(cluster)
    beats = played.update(last_heartbeat=now, ready=True, not_ready_since=None)
    # a returning node's agent stops the pods lost with it
    stopped = Pod.objects.filter(on_played, cluster=cluster, status=PodStatus.FAILED, reason=NODE_LOST_REASON).update(
        node=None, updated=now
    )
    started = Pod.objects.filter(on_played, cluster=cluster, status=PodStatus.BOUND).update(
        status=PodStatus.RUNNING, started=now, updated=now
    )
    finished = _finish_due(cluster, on_played, now)
    # (a Releasing pod without a node has nowhere to stop: it is gone as well)
    releasing = Pod.objects.filter(on_played | Q(node__isnull=True), cluster=cluster, status=PodStatus.RELEASING)
    evicted = list(releasing.filter(podgroup__isnull=False).exclude(podgroup__phase=PodGroupPhase.COMPLETED))
    gone = releasing.update(status=PodStatus.FAILED, reason=EVICTED_REASON, finished=now, updated=now)
    replaced = replace_members(evicted)
    completed = complete_finished_podgroups(cluster, now)
    return {
        "heartbeats": beats,
        "stopped": stopped,
        "started": started,
        "finished": finished,
        "gone": gone,
        "replaced": replaced,
        "completed": completed,
    }


def replace_members(evicted: list[Pod]) -> int:
    """The simulated job controller: each evicted (or lost) pod of a podgroup still at work gets a Pending
    replacement (``<name>-r<N>``, same request, priority and placement constraints), as Volcano's job controller
    restarts an evicted task, so a reclaimed gang queues up again instead of waiting forever below its
    minMember."""
    replacements = []
    for pod in evicted:
        replacements.append(
            Pod(
                cluster_id=pod.cluster_id,
                namespace_id=pod.namespace_id,
                name=replacement_name(pod.name),
                podgroup_id=pod.podgroup_id,
                task_name=pod.task_name,
                request=pod.request,
                priority=pod.priority,
                preemptible=pod.preemptible,
                quota_group_id=pod.quota_group_id,
                node_selector=pod.node_selector,
                node_affinity=pod.node_affinity,
                tolerations=pod.tolerations,
                labels=pod.labels,
                duration_seconds=pod.duration_seconds,
            )
        )
    Pod.objects.bulk_create(replacements, ignore_conflicts=True)
    return len(replacements)


# -- the workload generator ------------------------------------------------------------------------------------


# The generator's draws and knobs are pure code, shared with its offline run (``engine.replay.workload``).
_GPU = "nvidia.com/gpu"
_GPU_TOLERATION = [{"key": _GPU, "operator": "Exists", "value": "", "effect": "NoSchedule"}]  # GPU_TOLERATION's
_busy, _job, _fit_size, _backlog_full = busy, draw_job, fit_size, backlog_full


def _amount(resource: str) -> Any:
    """The sum of one resource over the pods' requests, in the database (0 where none asks for it)."""
    return Coalesce(Sum(Cast(KeyTextTransform(resource, "request"), BigIntegerField())), 0)


def _pending_by_queue(cluster: Cluster, queues: list[str]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Per queue, its pending pods and the cpu and GPUs they ask for, summed by the database (the large demo keeps
    tens of thousands of pods pending: reading every request every beat took a sixth of the worker's time)."""
    waiting: dict[str, int] = {}
    backlog: dict[str, dict[str, int]] = {}
    rows = (
        Pod.objects.filter(cluster=cluster, status=PodStatus.PENDING, podgroup__queue__name__in=queues)
        .values("podgroup__queue__name")
        .annotate(n=Count("pk"), cpu=_amount("cpu"), gpu=_amount(_GPU))
        .order_by()
    )
    for row in rows:
        queue = row["podgroup__queue__name"]
        waiting[queue] = row["n"]
        backlog[queue] = {"cpu": int(row["cpu"]), _GPU: int(row["gpu"])}
    return waiting, backlog


def generate_workload(
    cluster: Cluster,
    now: datetime,
    *,
    seed: int = 0,
    settings: WorkloadSettings | None = None,
    ticks: int = 1,
) -> dict[str, int]:
    """Submit new gang jobs to the open leaf queues of ``cluster`` (see the module docstring); returns counts.

    ``ticks`` > 1 plays that many beats of the generator (2 s apart, the last one at ``now``) in one call, each with
    its own seeded draw: a soak test's coarser loop keeps ``make run``'s arrival rate."""
    knobs = settings or WorkloadSettings()
    specs = services.queue_specs()
    parents = {s.parent for s in specs.values() if s.parent}
    leaves = {
        name
        for name, spec in specs.items()
        if name not in parents and name not in (ROOT_QUEUE, DEFAULT_QUEUE) and spec.state == QueueState.OPEN
    }
    by_queue: dict[str, list[Namespace]] = {}
    for ns in Namespace.objects.filter(default_queue__name__in=leaves).select_related("default_queue"):
        by_queue.setdefault(ns.default_queue.name, []).append(ns)  # type: ignore[union-attr]
    waiting, backlog = _pending_by_queue(cluster, list(by_queue))
    queues = {name: namespaces[0].default_queue for name, namespaces in by_queue.items()}  # read with them
    submitted = refused = pods = 0
    asked: dict[int, ResourceList] = {}
    stamps = [int(now.timestamp() - 2.0 * (ticks - 1 - beat)) for beat in range(ticks)]
    taken = _names_taken(cluster, stamps)
    jobs: list[tuple[PodGroup, list[Pod]]] = []  # written together at the end of the call
    for beat in range(ticks):
        t = now.timestamp() - 2.0 * (ticks - 1 - beat)
        rng = random.Random(f"{seed}:{cluster.name}:{int(t)}")
        for queue in sorted(by_queue):
            if waiting.get(queue, 0) >= knobs.max_pending_pods:
                continue
            if rng.random() >= knobs.jobs_per_tick * _busy(queue, t, knobs.wave_seconds):
                continue
            namespaces = sorted(by_queue[queue], key=lambda n: n.name)
            ns = namespaces[0] if rng.random() < 0.75 else rng.choice(namespaces)
            deserved = specs[queue].deserved
            gpu = deserved.get(_GPU, 0) > 0 and rng.random() < knobs.gpu_share
            size, request, priority, duration = _job(rng, gpu, knobs)
            size = _fit_size(size, request, deserved, knobs.max_job_share)
            queued = backlog.get(queue, {})
            if _backlog_full(queued, deserved, gpu, knobs.max_backlog_share):
                continue
            per_pod = ResourceList(request)
            min_resources = ResourceList({k: v * size for k, v in request.items()})
            name = f"job-{int(t)}-{rng.randrange(16**6):06x}"
            # What the namespace's other podgroups ask (only where a ResourceQuota bounds it): read once per call for
            # every namespace (one query, when a job first needs it), then counted on as this call submits (a
            # generator's beats follow each other in one process).
            if ns.pk not in asked:
                asked.update(_asked(cluster, [n for names in by_queue.values() for n in names if n.pk not in asked]))
            others = asked[ns.pk]
            errors = rules.validate_podgroup(
                specs,
                queue,
                min_member=size,
                min_resources=min_resources,
                namespace=ns.name,
                namespace_hard=ns.hard,
                other_min_resources=others,
            )
            if errors or (ns.pk, name) in taken:
                refused += 1
                continue
            taken.add((ns.pk, name))
            pg = PodGroup(
                cluster=cluster,
                namespace=ns,
                name=name,
                queue=queues[queue],
                min_member=size,
                min_resources=min_resources,
                priority=priority,
                user=submitter(queue, name),  # one of the team's people (the audit's figures per submitter)
            )
            members = [
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
            ]
            jobs.append((pg, members))
            submitted += 1
            pods += size
            if ns.hard:
                asked[ns.pk] = ResourceList.total((others, min_resources))
            waiting[queue] = waiting.get(queue, 0) + size
            amounts = backlog.setdefault(queue, {})
            for r in ("cpu", _GPU):
                amounts[r] = amounts.get(r, 0) + request.get(r, 0) * size
    _submit(jobs)
    collected = collect_garbage(cluster, now, knobs.ttl_after_finished)
    return {"submitted": submitted, "pods": pods, "refused": refused, "collected": collected}


def _asked(cluster: Cluster, namespaces: list[Namespace]) -> dict[int, ResourceList]:
    """Per namespace (by id), what its podgroups of ``cluster`` ask (their ``min_resources`` summed), for those a
    ResourceQuota bounds (the others: nothing, unread), in one query."""
    bounded = [ns.pk for ns in namespaces if ns.hard]
    rows: dict[int, list[ResourceList]] = {pk: [] for pk in bounded}
    if bounded:
        for pk, mr in PodGroup.objects.filter(namespace_id__in=bounded, cluster=cluster).values_list(
            "namespace_id", "min_resources"
        ):
            if mr:
                rows[pk].append(mr)
    out = {ns.pk: ResourceList() for ns in namespaces}
    out.update({pk: ResourceList.total(asks) for pk, asks in rows.items()})
    return out


def _names_taken(cluster: Cluster, stamps: list[int]) -> set[tuple[int, str]]:
    """The (namespace id, name) of the cluster's podgroups named as the generator names a job of one of ``stamps``
    (``job-<second>-<draw>``): a draw that comes out again is refused, as it was when checked job by job."""
    named = Q()
    for stamp in sorted(set(stamps)):
        named |= Q(name__startswith=f"job-{stamp}-")
    return set(PodGroup.objects.filter(named, cluster=cluster).values_list("namespace_id", "name"))


def _submit(jobs: list[tuple[PodGroup, list[Pod]]]) -> None:
    """Write the call's jobs, each podgroup with its pods, in one transaction: two bulk inserts (and one move of the
    cluster's revision each) instead of a transaction, a save and an insert per job."""
    if not jobs:
        return
    with transaction.atomic():
        PodGroup.objects.bulk_create([pg for pg, _ in jobs])
        Pod.objects.bulk_create([pod for _, members in jobs for pod in members])


def collect_garbage(cluster: Cluster, now: datetime, ttl_seconds: int) -> int:
    """Delete podgroups Completed more than ``ttl_seconds`` ago (their pods go with them; each recorded as a removed
    job with its evictions, ``scheduling.evictions``), and finished pods without a podgroup as old; returns how many
    podgroups went."""
    cutoff = now - timedelta(seconds=ttl_seconds)
    live = Pod.objects.filter(podgroup=OuterRef("pk")).exclude(status__in=FINISHED_POD_STATUSES)
    old = PodGroup.objects.filter(cluster=cluster, phase=PodGroupPhase.COMPLETED, updated__lt=cutoff).exclude(
        Exists(live)
    )
    n = evictions.remove_podgroups(old, now, RemovalCause.GARBAGE_COLLECTED, evictions.gc_reason(ttl_seconds))
    Pod.objects.filter(
        cluster=cluster, podgroup__isnull=True, status__in=FINISHED_POD_STATUSES, finished__lt=cutoff
    ).delete()
    return n
