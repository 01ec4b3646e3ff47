"""Builders shared by the session, action, plugin, recycle and acceptance tests (plus a few sanity tests).

Quantities follow Volcano's test helpers: ``cpu`` in cores (``"2"``, ``"500m"``), memory as Kubernetes strings
(``"4Gi"``, ``"1G"``); they are parsed with ``engine.resources`` like any other input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.objects import (
    NamespaceInfo,
    NodeInfo,
    PodGroupInfo,
    PodGroupPhase,
    PriorityClassInfo,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.policy.policy import SWITCHES, Policy
from engine.resources import ResourceList, parse_resource_list
from engine.session.decisions import SessionResult
from engine.session.run import apply_result, run_session

Q = PodGroupPhase
ST = TaskStatus


def rl(cpu: str | int | None = None, memory: str | None = None, **others: str | int) -> ResourceList:
    """``rl("2", "4Gi", gpu=1)``; ``gpu`` means ``nvidia.com/gpu``."""
    data: dict[str, Any] = {}
    if cpu is not None:
        data["cpu"] = str(cpu)
    if memory is not None:
        data["memory"] = memory
    for k, v in others.items():
        data["nvidia.com/gpu" if k == "gpu" else k] = str(v)
    return parse_resource_list(data)


def node(
    name: str,
    cpu: str | int = "8",
    memory: str = "32Gi",
    *,
    pods: int | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    unschedulable: bool = False,
    ready: bool = True,
    **others: str | int,
) -> NodeInfo:
    extra: dict[str, str | int] = dict(others)
    if pods is not None:
        extra["pods"] = pods
    return NodeInfo(
        name=name,
        allocatable=rl(cpu, memory, **extra),
        labels=dict(labels or {}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        ready=ready,
    )


def pod(
    ns: str,
    name: str,
    group: str,
    cpu: str | int | None = "1",
    memory: str | None = "1Gi",
    *,
    status: TaskStatus = ST.PENDING,
    node: str | None = None,
    priority: int = 0,
    role: str = "",
    selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Toleration] = (),
    preemptable: bool | None = None,
    quota: str | None = None,
    quota_preemptible: bool = True,
    priority_class: str = "",
    created: float | None = None,
    started: float | None = None,
    preemption_policy: str = "PreemptLowerPriority",
    **others: str | int,
) -> TaskInfo:
    return TaskInfo(
        namespace=ns,
        name=name,
        podgroup=f"{ns}/{group}",
        request=rl(cpu, memory, **others),
        priority=priority,
        priority_class=priority_class,
        volcano_preemptable=preemptable,
        quota_preemptible=quota_preemptible,
        quota_group=quota,
        status=status,
        node=node,
        node_selector=dict(selector or {}),
        tolerations=tuple(tolerations),
        task_role=role,
        creation_timestamp=created,
        start_timestamp=started,
        preemption_policy=preemption_policy,
    )


def running(
    ns: str, name: str, group: str, node_name: str, cpu: str | int = "1", memory: str = "1Gi", **kw: Any
) -> TaskInfo:
    return pod(ns, name, group, cpu, memory, status=ST.RUNNING, node=node_name, **kw)


def podgroup(
    ns: str,
    name: str,
    queue: str = "default",
    min_member: int = 1,
    *,
    phase: PodGroupPhase = Q.INQUEUE,
    min_resources: ResourceList | None = None,
    priority: int = 0,
    created: float = 0.0,
    min_task_member: Mapping[str, int] | None = None,
) -> PodGroupInfo:
    return PodGroupInfo(
        namespace=ns,
        name=name,
        queue=queue,
        min_member=min_member,
        min_task_member=dict(min_task_member or {}),
        min_resources=min_resources,
        priority=priority,
        phase=phase,
        creation_timestamp=created,
    )


def queue(
    name: str,
    weight: int = 1,
    *,
    parent: str | None = "root",
    capability: ResourceList | None = None,
    deserved: ResourceList | None = None,
    guarantee: ResourceList | None = None,
    reclaimable: bool = True,
    priority: int = 0,
    state: str = "Open",
) -> QueueSpec:
    return QueueSpec(
        name=name,
        parent=parent,
        weight=weight,
        capability=capability or ResourceList(),
        deserved=deserved or ResourceList(),
        guarantee=guarantee or ResourceList(),
        reclaimable=reclaimable,
        priority=priority,
        state=state,
    )


def group(
    name: str,
    *,
    parent: str | None = "root",
    is_parent: bool = False,
    min: ResourceList | None = None,
    max: ResourceList | None = None,
    shared_weight: ResourceList | None = None,
    allow_lent: bool = True,
) -> QuotaGroupSpec:
    return QuotaGroupSpec(
        name=name,
        parent=parent,
        is_parent=is_parent,
        min=min or ResourceList(),
        max=max or ResourceList(),
        shared_weight=shared_weight,
        allow_lent=allow_lent,
    )


def plugin(name: str, **switches: Any) -> dict[str, Any]:
    return {"name": name, **switches}


def policy(actions: str, *tiers: Sequence[str | Mapping[str, Any]], **configurations: Any) -> Policy:
    """``policy("allocate", ["gang", "priority"], ["proportion", plugin("drf", enableNamespaceOrder=True)])``."""
    data: dict[str, Any] = {
        "actions": actions,
        "tiers": [{"plugins": [{"name": p} if isinstance(p, str) else dict(p) for p in tier]} for tier in tiers],
    }
    if configurations:
        data["configurations"] = [{"name": k, "arguments": v} for k, v in configurations.items()]
    return Policy.from_dict(data)


def volcano_tier(plugins: Mapping[str, Iterable[str]], **arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One tier as Volcano's action tests build it: every switch off except the ones listed per plugin
    (their ``conf.PluginOption`` literals leave the others nil, which reads as false)."""
    out: list[dict[str, Any]] = []
    for name, enabled in plugins.items():
        on = set(enabled)
        entry: dict[str, Any] = {"name": name}
        for spelling, _, _ in SWITCHES:
            entry[spelling] = spelling in on
        if name in arguments:
            entry["arguments"] = dict(arguments[name])
        out.append(entry)
    return out


# The tiers of Volcano's action tests (actions/*/..._test.go), one tier each.
VOLCANO_ALLOCATE_TIER = volcano_tier(
    {
        "gang": ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"],
        "drf": ["enablePreemptable", "enableJobOrder"],
        "proportion": ["enableQueueOrder", "enableReclaimable", "enabledAllocatable"],
        "predicates": ["enablePredicate"],
        "nodeorder": ["enableNodeOrder"],
    }
)
VOLCANO_ALLOCATE = policy("allocate", VOLCANO_ALLOCATE_TIER)


def snapshot(
    *,
    nodes: Iterable[NodeInfo] = (),
    pods: Iterable[TaskInfo] = (),
    podgroups: Iterable[PodGroupInfo] = (),
    queues: Iterable[QueueSpec] = (),
    namespaces: Iterable[NamespaceInfo] = (),
    groups: Iterable[QuotaGroupSpec] = (),
    priority_classes: Iterable[PriorityClassInfo] = (),
    policy: Policy | None = None,
    quota_namespaces: Mapping[str, Iterable[str]] | None = None,
) -> Snapshot:
    kwargs: dict[str, Any] = {}
    if policy is not None:
        kwargs["policy"] = policy
    return Snapshot.build(
        nodes=nodes,
        tasks=pods,
        podgroups=podgroups,
        queues=queues,
        namespaces=namespaces,
        quota_groups=groups,
        priority_classes=priority_classes,
        quota_namespaces=quota_namespaces,
        **kwargs,
    )


def bound(result: SessionResult) -> dict[str, str]:
    """``{"ns/pod": node}`` of the bindings that are not pipelined."""
    return {b.task: b.node for b in result.bindings if not b.pipelined}


def pipelined(result: SessionResult) -> dict[str, str]:
    return {b.task: b.node for b in result.bindings if b.pipelined}


def evicted(result: SessionResult) -> list[str]:
    return [e.task for e in result.evictions]


def sessions(snap: Snapshot, count: int, *, start: float = 0.0, step: float = 1.0) -> list[SessionResult]:
    """Run ``count`` sessions, applying each result before the next; returns the results."""
    out: list[SessionResult] = []
    now = start
    for _ in range(count):
        result = run_session(snap, now=now)
        out.append(result)
        snap = apply_result(snap, result, now=now)
        now += step
    return out


def cpu_per_namespace(snap: Snapshot, result: SessionResult) -> dict[str, int]:
    """Whole cpus bound per namespace by ``result`` (plus what was already running)."""
    out: dict[str, int] = {}
    placed = {b.task for b in result.bindings}
    for t in snap.tasks.values():
        if t.uid in placed or t.status == ST.RUNNING:
            out[t.namespace] = out.get(t.namespace, 0) + t.request["cpu"] // 1000
    return out


# -- sanity -------------------------------------------------------------------------------------------------------


def test_builders_parse_quantities() -> None:
    assert rl("2", "1Gi", gpu=1) == ResourceList({"cpu": 2000, "memory": 2**30, "nvidia.com/gpu": 1000})
    assert pod("ns", "p", "pg").podgroup == "ns/pg"
    assert node("n1", pods=10).allocatable["pods"] == 10_000


def test_an_empty_snapshot_runs() -> None:
    result = run_session(snapshot(), now=0.0)
    assert result.bindings == [] and result.evictions == [] and result.podgroups == {}
