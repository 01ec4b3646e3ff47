"""Snapshot -> Kubernetes manifests that ``engine.manifests.load_manifests`` reads back to an equal snapshot.

The tests and the golden corpus use it to write whole snapshots as manifests; the trees are written by the same
functions as the product's export (``engine.manifests.export``).
"""

from __future__ import annotations

from typing import Any

import yaml

from engine.manifests.common import (
    _TO_KOORD,
    FAIRWAY_PRIORITY,
    GROUP_NAME_ANNOTATION,
    KOORD_PREEMPTIBLE,
    KOORD_QUOTA_NAME,
    PREEMPTABLE_KEY,
    SCHEDULER_CONF_KEY,
    SCHEDULER_CONFIGMAP,
    TASK_SPEC_ANNOTATION,
    _format_time,
)
from engine.manifests.export import POD_PHASE, namespace_manifests, queue_manifest, quota_group_manifest
from engine.manifests.kueuelevers import FAIRWAY_QUEUEING_STRATEGY
from engine.objects import (
    BUILTIN_PRIORITY_CLASSES,
    BUILTIN_QUEUES,
    BUILTIN_QUOTA_GROUPS,
    NodeInfo,
    PodGroupCondition,
    PodGroupInfo,
    Snapshot,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.policy.policy import DEFAULT_POLICY

try:  # libyaml is ~10x faster on big snapshots; fall back to the pure-Python dumper when it is missing.
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Dumper = yaml.SafeDumper


def dump_snapshot(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Kubernetes manifests that ``load_manifests`` reads back to an equal snapshot.

    Built-in queues, quota groups and priority classes are written only when they differ from the built-ins;
    the policy only when it is not Volcano's default. Quota groups are written as Koordinator ElasticQuotas
    (``root``/``system``/``default`` under Koordinator's names).
    """
    out: list[dict[str, Any]] = []
    for pc in snapshot.priority_classes.values():
        if BUILTIN_PRIORITY_CLASSES.get(pc.name) == pc:
            continue
        doc: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": pc.name},
            "value": pc.value,
        }
        if pc.global_default:
            doc["globalDefault"] = True
        if pc.preemption_policy != "PreemptLowerPriority":
            doc["preemptionPolicy"] = pc.preemption_policy
        out.append(doc)
    for ns in snapshot.namespaces.values():
        out.extend(namespace_manifests(ns))
    for queue in snapshot.queues.values():
        if BUILTIN_QUEUES.get(queue.name) == queue and queue.name not in snapshot.queue_hierarchy:
            continue
        manifest = queue_manifest(queue, snapshot.queue_hierarchy.get(queue.name))
        if queue.name in snapshot.admission.strict_fifo:  # Kueue's StrictFIFO, on a Volcano Queue
            manifest["metadata"].setdefault("annotations", {})[FAIRWAY_QUEUEING_STRATEGY] = "StrictFIFO"
        out.append(manifest)
    for group in snapshot.quota_groups.values():
        if BUILTIN_QUOTA_GROUPS.get(group.name) == group and group.name not in snapshot.quota_namespaces:
            continue
        home = group.name if group.name in snapshot.namespaces else "default"
        out.append(quota_group_manifest(group, tuple(snapshot.quota_namespaces.get(group.name, ())), home))
    for pg in snapshot.podgroups.values():
        out.append(_dump_podgroup(pg, snapshot))
    for task in snapshot.tasks.values():
        out.append(_dump_task(task))
    for node in snapshot.nodes.values():
        out.append(_dump_node(node))
    if snapshot.policy != DEFAULT_POLICY:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": SCHEDULER_CONFIGMAP, "namespace": "volcano-system"},
                "data": {SCHEDULER_CONF_KEY: snapshot.policy.to_yaml()},
            }
        )
    if snapshot.elastic_quota_args is not None:
        out.append(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "koord-scheduler",
                        "pluginConfig": [{"name": "ElasticQuota", "args": snapshot.elastic_quota_args.to_arguments()}],
                    }
                ],
            }
        )
    return out


def dump_yaml(snapshot: Snapshot) -> str:
    """``dump_snapshot`` as one multi-document YAML text."""
    return yaml.dump_all(dump_snapshot(snapshot), Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def _dump_podgroup(pg: PodGroupInfo, snapshot: Snapshot) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": pg.name, "namespace": pg.namespace}
    if pg.creation_timestamp:
        meta["creationTimestamp"] = _format_time(pg.creation_timestamp)
    if pg.priority != snapshot.priority_of_class(pg.priority_class):
        meta["annotations"] = {FAIRWAY_PRIORITY: str(pg.priority)}
    spec: dict[str, Any] = {"minMember": pg.min_member, "queue": pg.queue}
    if pg.min_task_member:
        spec["minTaskMember"] = dict(pg.min_task_member)
    if pg.min_resources is not None:
        spec["minResources"] = pg.min_resources.to_quantities()
    if pg.priority_class:
        spec["priorityClassName"] = pg.priority_class
    status: dict[str, Any] = {"phase": pg.phase.value}
    if pg.conditions:
        status["conditions"] = [_dump_condition(c) for c in pg.conditions]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def _dump_condition(c: PodGroupCondition) -> dict[str, Any]:
    out: dict[str, Any] = {"type": c.type, "status": c.status}
    if c.reason:
        out["reason"] = c.reason
    if c.message:
        out["message"] = c.message
    if c.transition_id:
        out["transitionID"] = c.transition_id
    if c.last_transition_time is not None:
        out["lastTransitionTime"] = _format_time(c.last_transition_time)
    return out


def _dump_task(task: TaskInfo) -> dict[str, Any]:
    labels = dict(task.labels)
    if task.quota_group is not None:
        labels[KOORD_QUOTA_NAME] = _TO_KOORD.get(task.quota_group, task.quota_group)
    if not task.quota_preemptible:
        labels[KOORD_PREEMPTIBLE] = "false"
    pg_name = task.podgroup.partition("/")[2]
    annotations: dict[str, str] = {GROUP_NAME_ANNOTATION: pg_name}
    if task.task_role:
        annotations[TASK_SPEC_ANNOTATION] = task.task_role
    if task.volcano_preemptable is not None:
        annotations[PREEMPTABLE_KEY] = "true" if task.volcano_preemptable else "false"
    meta: dict[str, Any] = {"name": task.name, "namespace": task.namespace}
    if labels:
        meta["labels"] = labels
    meta["annotations"] = annotations
    if task.creation_timestamp is not None:
        meta["creationTimestamp"] = _format_time(task.creation_timestamp)
    if task.status is TaskStatus.RELEASING:
        meta["deletionTimestamp"] = _format_time(task.creation_timestamp or 0.0)
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": task.request.to_quantities()}}],
        "priority": task.priority,
    }
    if task.priority_class:
        spec["priorityClassName"] = task.priority_class
    if task.preemption_policy != "PreemptLowerPriority" or task.priority_class:
        spec["preemptionPolicy"] = task.preemption_policy  # else it would be read from the class
    has_node = task.node is not None and task.status not in (TaskStatus.PENDING, TaskStatus.PIPELINED)
    if has_node:
        spec["nodeName"] = task.node
    if task.node_selector:
        spec["nodeSelector"] = dict(task.node_selector)
    if task.tolerations:
        spec["tolerations"] = [_dump_toleration(t) for t in task.tolerations]
    status: dict[str, Any] = {}
    phase = POD_PHASE[task.status]
    if task.status is TaskStatus.RUNNING and not has_node:
        phase = None  # a Running task without a node cannot be written; it reads back as Pending
    if phase is not None:
        status["phase"] = phase
    if task.start_timestamp is not None:
        status["startTime"] = _format_time(task.start_timestamp)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if status:
        doc["status"] = status
    return doc


def _dump_toleration(t: Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": t.operator}
    if t.key:
        out["key"] = t.key
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _dump_node(node: NodeInfo) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": node.name}
    if node.labels:
        meta["labels"] = dict(node.labels)
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {
            "allocatable": node.allocatable.to_quantities(),
            "conditions": [{"type": "Ready", "status": "True" if node.ready else "False"}],
        },
    }
