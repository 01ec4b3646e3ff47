"""Volcano kinds: Queue, PodGroup, the batch.volcano.sh Job (vcjob) and the scheduler ConfigMap."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from engine.manifests.common import (
    _GO_TRUE,
    FAIRWAY_PRIORITY,
    FAIRWAY_SUSPENDED,
    HIERARCHY_ANNOTATION,
    HIERARCHY_WEIGHTS_ANNOTATION,
    PREEMPTABLE_KEY,
    TASK_SPEC_ANNOTATION,
    _bool,
    _Doc,
    _FieldError,
    _int,
    _limit_annotations,
    _list,
    _map,
    _min_runtime_annotation,
    _parse_int_text,
    _past_usage_annotation,
    _rl,
    _str,
    _string_map,
    _time,
    _times,
    _user_limits_annotation,
    _user_of,
)
from engine.manifests.core import (
    CoreReaders,
)
from engine.manifests.kueuelevers import take_queue_levers, volcano_queue_levers
from engine.objects import (
    DEFAULT_QUEUE,
    QUEUE_STATES,
    ROOT_QUEUE,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    QueueHierarchy,
    QueueSpec,
    TaskInfo,
)
from engine.resources import ResourceList
from engine.treefields import QUEUE_FIELDS, from_annotations
from engine.usage import QUEUE
from engine.vocabulary import QueueState

_Role = tuple[str, int, int, Mapping[str, Any], str]  # name, replicas, minAvailable, pod template, path


class VolcanoReaders(CoreReaders):
    def _queue(self, doc: _Doc) -> None:
        spec, status = doc.spec, doc.status
        weight = _int(spec.get("weight"), "spec.weight", 1, minimum=0, maximum=65535)
        weight = weight or 1  # Volcano's mutating webhook turns a weight of 0 into 1
        guarantee_raw = _map(spec.get("guarantee"), "spec.guarantee")
        if "resource" in guarantee_raw or not guarantee_raw:
            guarantee = _rl(guarantee_raw.get("resource"), "spec.guarantee.resource")
        else:
            guarantee = _rl(guarantee_raw, "spec.guarantee")
            self.warnings.append(f"{doc.where}: spec.guarantee has no 'resource' key; read as spec.guarantee.resource")
        state = _str(status.get("state"), "status.state", "Open") or "Open"
        if state not in QUEUE_STATES:
            raise _FieldError(f"status.state: {state!r} must be one of {', '.join(QUEUE_STATES)}")
        parent: str | None = _str(spec.get("parent"), "spec.parent", ROOT_QUEUE) or ROOT_QUEUE
        if doc.name == ROOT_QUEUE:
            parent = None
        if parent not in (None, ROOT_QUEUE):
            self.explicit_parent.add(doc.name)
        else:
            self.explicit_parent.discard(doc.name)
        self._origin("Queue", doc.name)
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        borrowing, lending = _limit_annotations(annotations, self.limits.max_json_depth)
        _past_usage_annotation(annotations, QUEUE, doc.name, self.past_ratios)
        # Kueue's levers (fairway.io/kueue, fairway.io/queueing-strategy); a stop policy closes the queue
        levers = volcano_queue_levers(annotations, self.limits.max_json_depth)
        tables = (self.admission, self.kueue_preemption, self.kueue_weights, self.kueue_names)
        if take_queue_levers(*tables, doc.name, levers):
            state = QueueState.CLOSED.value
        self.queues[doc.name] = QueueSpec(
            name=doc.name,
            parent=parent,
            weight=weight,
            capability=_rl(spec.get("capability"), "spec.capability"),
            deserved=_rl(spec.get("deserved"), "spec.deserved"),
            guarantee=guarantee,
            reclaimable=_bool(spec.get("reclaimable"), "spec.reclaimable", True),
            priority=_int(spec.get("priority"), "spec.priority", 0, minimum=0, maximum=2**31 - 1),
            state=state,
            borrowing_limit=borrowing,
            lending_limit=lending,
            min_runtime=_min_runtime_annotation(annotations),
            user_limits=_user_limits_annotation(annotations, self.limits.max_json_depth),
            kueue=levers,  # stored by an import
            **from_annotations(QUEUE_FIELDS, annotations),
        )
        hierarchy = _queue_hierarchy(annotations)
        if hierarchy is not None:
            self.hierarchy[doc.name] = hierarchy
            self.hierarchy_docs[doc.name] = doc
        else:
            self.hierarchy.pop(doc.name, None)
            self.hierarchy_docs.pop(doc.name, None)

    def _apply_queue_hierarchy(self) -> None:
        """Volcano's hierarchical-DRF annotations as the queue tree (after every Queue is read).

        A queue annotated ``volcano.sh/hierarchy: root/eng/prod`` with ``volcano.sh/hierarchy-weights: 1/2/8`` hangs
        under a parent queue for each inner level (``eng``, weight 2; a deeper level is named by its path below root
        joined with ``-``: ``eng-prod``), created unless a queue of that name is in the input; the queue's own weight
        is the last level's (8). Weights are whole numbers here: a fraction is rounded (at least 1), with a warning.
        As Volcano's webhook, no queue's path may lie on another's (``root/eng`` and ``root/eng/prod``). A queue whose
        ``spec.parent`` names a queue other than root keeps that parent (the annotations are ignored, with a warning).
        A level made here deserves and guarantees what its children do together; it has no capability of its own.
        """
        made: dict[str, tuple[str, str]] = {}  # inner queue -> (the queue whose annotations made it, its weight text)
        created: dict[str, int] = {}  # the levels made here, with their depth
        for path, name in self._hierarchy_paths().items():
            self._hang_by_hierarchy(path, name, made, created)
        # The rules want the children's deserved and guarantee within the parent's (HDRF itself reads only weights).
        for inner in sorted(created, key=lambda n: -created[n]):
            children = [q for q in self.queues.values() if q.parent == inner]
            self.queues[inner] = dataclasses.replace(
                self.queues[inner],
                deserved=ResourceList.total(q.deserved for q in children),
                guarantee=ResourceList.total(q.guarantee for q in children),
            )

    def _hierarchy_paths(self) -> dict[tuple[str, ...], str]:
        """The annotated queues by their paths, in the order of the paths; a path that lies on another's is an error."""
        at: dict[tuple[str, ...], str] = {}
        for name in sorted(self.hierarchy, key=lambda n: self.hierarchy[n].path):
            if name not in self.queues or name in (ROOT_QUEUE, DEFAULT_QUEUE):
                continue
            doc, path = self.hierarchy_docs[name], self.hierarchy[name].path
            for other_path, other in at.items():
                if path[: len(other_path)] == other_path:
                    raise doc.error(
                        f"metadata.annotations[{HIERARCHY_ANNOTATION}]: {'/'.join(path)!r} lies on the path of "
                        f"queue {other} ({'/'.join(other_path)!r}); a queue cannot be in the sub path of another"
                    )
            at[path] = name
        return at

    def _hang_by_hierarchy(
        self, path: tuple[str, ...], name: str, made: dict[str, tuple[str, str]], created: dict[str, int]
    ) -> None:
        """Hang queue ``name`` at ``path``: under each inner level in turn, making the levels the input lacks (noted
        in ``made`` and ``created``), unless its ``spec.parent`` already places it."""
        doc, weights = self.hierarchy_docs[name], self.hierarchy[name].weights
        if name in self.explicit_parent:
            if self.queues[name].parent == ("-".join(path[1:-1]) or ROOT_QUEUE):
                return  # the tree already says it (a snapshot written back as manifests): nothing to do
            self.warnings.append(f"{doc.where}: spec.parent is set; the {HIERARCHY_ANNOTATION} annotations are ignored")
            return
        parent = ROOT_QUEUE
        for depth in range(1, len(path) - 1):
            inner = "-".join(path[1 : depth + 1])
            if inner in made:
                first, text = made[inner]
                if text != str(weights[depth]):
                    self.warnings.append(
                        f"{doc.where}: weight {_weight_text(weights[depth])} for {inner} differs from "
                        f"{_weight_text(float(text))} given by queue {first}; the first is kept"
                    )
            elif inner not in self.queues:
                self.current = doc
                self._origin("Queue", inner)
                weight = self._hierarchy_weight(doc, weights[depth], inner)
                self.queues[inner] = QueueSpec(name=inner, parent=parent, weight=weight)
                made[inner] = (name, str(weights[depth]))
                created[inner] = depth
            elif inner not in self.explicit_parent and inner not in self.hierarchy:
                self.queues[inner] = dataclasses.replace(self.queues[inner], parent=parent)
                made[inner] = (name, str(weights[depth]))
            parent = inner
        self.queues[name] = dataclasses.replace(
            self.queues[name], parent=parent, weight=self._hierarchy_weight(doc, weights[-1], name)
        )

    def _hierarchy_weight(self, doc: _Doc, weight: float, level: str) -> int:
        whole = max(1, min(65535, int(weight + 0.5)))
        if whole != weight:
            self.warnings.append(
                f"{doc.where}: {HIERARCHY_WEIGHTS_ANNOTATION}: weight {_weight_text(weight)} of {level} "
                f"read as {whole} (queue weights are whole numbers from 1 to 65535)"
            )
        return whole

    def _podgroup(self, doc: _Doc) -> None:
        spec, status = doc.spec, doc.status
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        min_task_member: dict[str, int] = {}
        for role, count in _map(spec.get("minTaskMember"), "spec.minTaskMember").items():
            min_task_member[str(role)] = _int(count, f"spec.minTaskMember.{role}", 0, minimum=0)
        min_resources_raw = spec.get("minResources")
        min_resources = None if min_resources_raw is None else _rl(min_resources_raw, "spec.minResources")
        class_name = _str(spec.get("priorityClassName"), "spec.priorityClassName")
        priority, _ = self._class_priority(doc, class_name, "spec.priorityClassName")
        if FAIRWAY_PRIORITY in annotations:
            priority = _parse_int_text(annotations[FAIRWAY_PRIORITY], f"metadata.annotations[{FAIRWAY_PRIORITY}]")
        phase_text = _str(status.get("phase"), "status.phase", "Pending") or "Pending"
        try:
            phase = PodGroupPhase(phase_text)
        except ValueError:
            phases = ", ".join(p.value for p in PodGroupPhase)
            raise _FieldError(f"status.phase: {phase_text!r} must be one of {phases}") from None
        conditions = tuple(
            _podgroup_condition(c, f"status.conditions[{i}]")
            for i, c in enumerate(_list(status.get("conditions"), "status.conditions"))
        )
        key = doc.label
        self._room_for_podgroup()
        # A PodGroup that names no queue takes its namespace's (Volcano's PodGroup webhook). One that names
        # "default" keeps it: a manifest read back from a cluster has been through the webhook already, and
        # the annotation may have been added after the podgroup was created.
        queue = _str(spec.get("queue"), "spec.queue") or self._queue_for(doc.namespace, "")
        self._origin("PodGroup", key)
        self.podgroups[key] = PodGroupInfo(
            namespace=doc.namespace,
            name=doc.name,
            queue=queue,
            min_member=_int(spec.get("minMember"), "spec.minMember", 0, minimum=0),
            min_task_member=min_task_member,
            min_resources=min_resources,
            priority=priority,
            priority_class=class_name,
            phase=phase,
            creation_timestamp=_time(doc.meta.get("creationTimestamp"), "metadata.creationTimestamp") or 0.0,
            conditions=conditions,
            suspended=annotations.get(FAIRWAY_SUSPENDED, "") in _GO_TRUE,
            **_user_of(annotations, self.limits.max_json_depth),
        )
        for i, ref in enumerate(_list(doc.meta.get("ownerReferences"), "metadata.ownerReferences")):
            ref_map = _map(ref, f"metadata.ownerReferences[{i}]")
            if ref_map.get("kind") == "Job" and str(ref_map.get("apiVersion", "")).startswith("batch.volcano.sh/"):
                self.podgroup_owner[key] = f"{doc.namespace}/{ref_map.get('name')}"

    def _volcano_job(self, doc: _Doc) -> None:
        job_key = doc.label
        if job_key in self.pod_jobs or job_key in self.podgroup_owner.values():
            self.warnings.append(
                f"{doc.where}: the job's PodGroup or pods are in the input; the vcjob itself is not expanded"
            )
            return
        spec = doc.spec
        meta = doc.meta
        job_annotations = _string_map(meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        roles = self._vcjob_roles(spec)
        min_member = _int(spec.get("minAvailable"), "spec.minAvailable", 0, minimum=0)
        if min_member == 0:
            min_member = sum(r[2] for r in roles)
        queue = self._queue_for(doc.namespace, _str(spec.get("queue"), "spec.queue", DEFAULT_QUEUE))
        job_class = _str(spec.get("priorityClassName"), "spec.priorityClassName")
        job_priority, _ = self._class_priority(doc, job_class, "spec.priorityClassName")
        created = _time(meta.get("creationTimestamp"), "metadata.creationTimestamp")
        pg_key = f"{doc.namespace}/{doc.name}"
        if pg_key in self.podgroups:
            self.warnings.append(f"{doc.where}: PodGroup {pg_key} is in the input; the vcjob is not expanded")
            return
        self._room_for_pods(sum(r[1] for r in roles), "spec.tasks")
        self._room_for_podgroup()
        new_tasks, role_requests = self._vcjob_pods(doc, roles, job_annotations, job_class, pg_key)
        for task in new_tasks:
            if task.uid in self.tasks:
                self.warnings.append(f"{doc.where}: Pod {task.uid} is in the input; the generated one is dropped")
            else:
                self._origin("Pod", task.uid)
                self.tasks[task.uid] = task
        self._origin("PodGroup", pg_key)
        self.podgroups[pg_key] = PodGroupInfo(
            namespace=doc.namespace,
            name=doc.name,
            queue=queue,
            min_member=min_member,
            min_task_member={r[0]: r[2] for r in roles},
            min_resources=_vcjob_min_resources(role_requests, min_member),
            priority=job_priority,
            priority_class=job_class,
            phase=PodGroupPhase.PENDING,
            creation_timestamp=created or 0.0,
            **_user_of(job_annotations, self.limits.max_json_depth),
        )

    def _vcjob_roles(self, spec: Mapping[str, Any]) -> list[_Role]:
        roles: list[_Role] = []
        for i, raw in enumerate(_list(spec.get("tasks"), "spec.tasks")):
            path = f"spec.tasks[{i}]"
            task_spec = _map(raw, path)
            # Volcano's job webhook names an unnamed task "default<i>" and defaults minAvailable to replicas.
            role = _str(task_spec.get("name"), f"{path}.name") or f"default{i}"
            replicas = self._replicas(task_spec.get("replicas"), f"{path}.replicas", 0)
            min_available = _int(task_spec.get("minAvailable"), f"{path}.minAvailable", replicas, minimum=0)
            template = _map(task_spec.get("template"), f"{path}.template")
            roles.append((role, replicas, min_available, template, path))
        return roles

    def _vcjob_pods(
        self, doc: _Doc, roles: list[_Role], job_annotations: Mapping[str, str], job_class: str, pg_key: str
    ) -> tuple[list[TaskInfo], list[tuple[int, int, int, ResourceList]]]:
        """The pods of every role, as Volcano's job controller creates them, and (priority, replicas,
        minAvailable, request) per role for the podgroup's minResources."""
        meta = doc.meta
        role_requests: list[tuple[int, int, int, ResourceList]] = []
        new_tasks: list[TaskInfo] = []
        for role, replicas, min_available, template, path in roles:
            t_meta = _map(template.get("metadata"), f"{path}.template.metadata")
            t_spec = _map(template.get("spec"), f"{path}.template.spec")
            labels = _string_map(t_meta.get("labels"), f"{path}.template.metadata.labels", doc, self.warnings)
            annotations = dict(
                _string_map(t_meta.get("annotations"), f"{path}.template.metadata.annotations", doc, self.warnings)
            )
            annotations[TASK_SPEC_ANNOTATION] = role
            if PREEMPTABLE_KEY in job_annotations:  # createJobPod copies the job's preemptable annotation
                annotations[PREEMPTABLE_KEY] = job_annotations[PREEMPTABLE_KEY]
            pod_spec = dict(t_spec)
            if not pod_spec.get("priorityClassName") and job_class:
                pod_spec["priorityClassName"] = job_class
            # The template is read once (errors surface even with zero replicas); the pods differ only by name.
            pod_meta = {"creationTimestamp": meta.get("creationTimestamp")} if replicas else {}
            sample = self._task(
                doc, doc.namespace, f"{doc.name}-{role}-0" if replicas else f"{doc.name}-{role}", labels,
                annotations, pod_spec, {}, pod_meta, podgroup=pg_key, path=f"{path}.template.spec",
            )  # fmt: skip
            new_tasks.extend(
                dataclasses.replace(sample, name=f"{doc.name}-{role}-{index}") if index else sample
                for index in range(replicas)
            )
            # The controller orders roles by their template's PriorityClass value only.
            template_class = _str(t_spec.get("priorityClassName"), f"{path}.template.spec.priorityClassName")
            role_priority = (
                self.priority_classes[template_class].value if template_class in self.priority_classes else 0
            )
            role_requests.append((role_priority, replicas, min_available, sample.request))
        return new_tasks, role_requests


def _weight_text(weight: float) -> str:
    return str(int(weight)) if weight == int(weight) else repr(weight)


def _queue_hierarchy(annotations: Mapping[str, str]) -> QueueHierarchy | None:
    path_text = annotations.get(HIERARCHY_ANNOTATION)
    weights_text = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION)
    if not path_text and not weights_text:
        return None
    key = f"metadata.annotations[{HIERARCHY_WEIGHTS_ANNOTATION}]"
    if not path_text or not weights_text:
        raise _FieldError(
            f"metadata.annotations: {HIERARCHY_ANNOTATION} and {HIERARCHY_WEIGHTS_ANNOTATION} go together"
        )
    path = path_text.strip("/").split("/")
    weight_parts = weights_text.strip("/").split("/")
    # Volcano's queue mutating webhook prefixes "root/" and "1/" when the path does not start at root.
    if path[0] != "root":
        path = ["root", *path]
        weight_parts = ["1", *weight_parts]
    if len(path) != len(weight_parts):
        raise _FieldError(f"{key}: {len(weight_parts)} weights for {len(path)} levels in {path_text!r}")
    weights: list[float] = []
    for part in weight_parts:
        try:
            value = float(part)
        except ValueError:
            raise _FieldError(f"{key}: {part!r} is not a number") from None
        if not value > 0 or value == float("inf"):
            raise _FieldError(f"{key}: weight {part!r} must be greater than 0")
        weights.append(value)
    if any(not level for level in path):
        raise _FieldError(f"metadata.annotations[{HIERARCHY_ANNOTATION}]: empty level in {path_text!r}")
    return QueueHierarchy(path=tuple(path), weights=tuple(weights))


def _podgroup_condition(raw: object, path: str) -> PodGroupCondition:
    c = _map(raw, path)
    return PodGroupCondition(
        type=_str(c.get("type"), f"{path}.type"),
        status=_str(c.get("status"), f"{path}.status", "True"),
        reason=_str(c.get("reason"), f"{path}.reason"),
        message=_str(c.get("message"), f"{path}.message"),
        transition_id=_str(c.get("transitionID"), f"{path}.transitionID"),
        last_transition_time=_time(c.get("lastTransitionTime"), f"{path}.lastTransitionTime"),
    )


def _vcjob_min_resources(roles: list[tuple[int, int, int, ResourceList]], min_member: int) -> ResourceList:
    """Volcano's job controller ``calcPGMinResources`` (roles ordered by template priority, highest first)."""
    ordered = sorted(roles, key=lambda r: -r[0])  # stable: equal priorities keep their order
    total_min = sum(r[2] for r in ordered)
    out = ResourceList()
    if min_member < total_min:
        # The first min_member pods, role by role.
        left = min_member
        for _, replicas, _, request in ordered:
            take = min(left, replicas)
            out = out + _times(request, take)
            left -= take
            if left <= 0:
                break
        return out
    # Every role's minAvailable, then fill up to min_member from the roles' remaining replicas.
    count = 0
    for _, _, min_available, request in ordered:
        take = min(min_available, min_member - count)
        out = out + _times(request, take)
        count += take
        if count >= min_member:
            return out
    left = min_member - count
    for _, replicas, min_available, request in ordered:
        spare = replicas - min_available
        if spare <= 0:
            continue
        take = min(left, spare)
        out = out + _times(request, take)
        left -= take
        if left <= 0:
            break
    return out
