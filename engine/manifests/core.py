"""Core Kubernetes kinds: PriorityClass, RuntimeClass, Namespace, ResourceQuota, LimitRange, Pod, Node."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

from engine.admission import label_pairs
from engine.manifests.common import (
    _FROM_KOORD,
    GROUP_NAME_ANNOTATION,
    JOB_NAME_ANNOTATION,
    KOORD_PREEMPTIBLE,
    KOORD_QUOTA_NAME,
    KUEUE_QUEUE_LABEL,
    NAMESPACE_WEIGHT_KEY,
    PREEMPTABLE_KEY,
    QUEUE_NAME_ANNOTATION,
    TASK_SPEC_ANNOTATION,
    GroupPod,
    _bool,
    _BuilderBase,
    _Doc,
    _FieldError,
    _go_bool,
    _int,
    _list,
    _map,
    _rl,
    _str,
    _string_map,
    _time,
    kueue_pod_group,
    max_exec,
    user_annotation,
)
from engine.manifests.limitranges import LimitRangeSummary, NamespaceLimits, read_limit_range
from engine.objects import (
    NamespaceInfo,
    NodeAffinity,
    NodeInfo,
    NodeSelectorRequirement,
    PodGroupInfo,
    PodGroupPhase,
    PriorityClassInfo,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
    own_podgroup_name,
)
from engine.resources import QuantityError, ResourceList, parse_quantity
from engine.wording import amount as in_words


class CoreReaders(_BuilderBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit_ranges = NamespaceLimits()  # ``engine.manifests.limitranges``
        # the RuntimeClasses by name: what the API server gives a pod naming one (``_runtime_class``)
        self.runtime_classes: dict[str, dict[str, Any]] = {}

    def _runtime_class(self, doc: _Doc) -> None:
        """A RuntimeClass (``node.k8s.io/v1``): its ``overhead.podFixed`` and its ``scheduling`` (``nodeSelector``,
        ``tolerations``), which the API server's RuntimeClass admission gives each pod naming it; checked here, kept
        in the pod spec's own shape (``_admitted_spec``)."""
        obj = doc.obj
        overhead = _map(obj.get("overhead"), "overhead")
        _rl(overhead.get("podFixed"), "overhead.podFixed")
        scheduling = _map(obj.get("scheduling"), "scheduling")
        selector = _string_map(scheduling.get("nodeSelector"), "scheduling.nodeSelector", doc, self.warnings)
        tolerations = _list(scheduling.get("tolerations"), "scheduling.tolerations")
        _tolerations(tolerations, "scheduling.tolerations")
        self._origin("RuntimeClass", doc.name)
        self.runtime_classes[doc.name] = {
            "overhead": dict(overhead.get("podFixed") or {}), "nodeSelector": selector, "tolerations": tolerations,
        }  # fmt: skip

    def _admitted_spec(self, doc: _Doc, spec: Mapping[str, Any], path: str, template: bool) -> Mapping[str, Any]:
        """``spec`` as the API server's RuntimeClass admission makes it, for a pod from manifests and a Kueue
        workload's template (``template``; a pod read live has it already): a ``runtimeClassName`` gives it the
        class's overhead (unless it sets its own), its node selector (merged) and its tolerations (after its own).
        A class not in the input is named in a warning (offline) and adds nothing."""
        name = spec.get("runtimeClassName")
        if not name or (self.live and not template):
            return spec
        name = _str(name, f"{path}.runtimeClassName")
        found = self.runtime_classes.get(name)
        if found is None:
            if not self.live:
                self.warnings.append(f"{doc.where}: {path}.runtimeClassName: RuntimeClass {name!r} is not in the "
                                     "input: its pod overhead and scheduling are not counted")  # fmt: skip
            return spec
        out = dict(spec)
        if found["overhead"] and not spec.get("overhead"):
            out["overhead"] = found["overhead"]
        if found["nodeSelector"]:
            own = spec.get("nodeSelector")
            out["nodeSelector"] = {**(own if isinstance(own, Mapping) else {}), **found["nodeSelector"]}
        if found["tolerations"]:
            own_tolerations = spec.get("tolerations")
            mine = list(own_tolerations) if isinstance(own_tolerations, list) else []
            out["tolerations"] = [*mine, *(t for t in found["tolerations"] if t not in mine)]
        return out

    def _priority_admitted(self, spec: Mapping[str, Any]) -> Mapping[str, Any]:
        """A pod from manifests as the API server's priority admission makes it (checked against the real one,
        tests/kube/real/test_apiserver.py): without a class or a priority, the global default class's name, so its
        priority and preemption policy. A ``spec.priority`` or ``spec.preemptionPolicy`` other than its class gives,
        which the server refuses, is read as written (simulate's inputs set a priority without its class as a shortcut,
        and Fairway's own dumps write a pod's priority)."""
        pc = self.global_default_class
        if spec.get("priorityClassName") or spec.get("priority") is not None or pc is None:
            return spec
        return {**spec, "priorityClassName": pc.name}

    def _unlike_class(self, doc: _Doc, path: str, pc: PriorityClassInfo | None, priority: int, policy: str) -> None:
        """A warning for a pod whose ``spec.priority`` or ``spec.preemptionPolicy`` is not what its class (None: no
        class, or one not found) gives: the API server refuses such a pod, simulate reads it as written
        (``_priority_admitted``)."""
        if pc is None:
            return
        unlike = [
            f"{path}.{field} {mine} is not its PriorityClass {pc.name}'s {theirs}"
            for field, mine, theirs in (
                ("priority", priority, pc.value),
                ("preemptionPolicy", policy, pc.preemption_policy),
            )
            if mine != theirs
        ]
        if unlike:
            self.warnings.append(
                f"{doc.where}: {'; '.join(unlike)}: the API server refuses such a pod; read as written"
            )

    def _priority_class(self, doc: _Doc) -> None:
        obj = doc.obj
        value = _int(obj.get("value"), "value", 0, minimum=-(2**31), maximum=2**31 - 1)
        policy = _str(obj.get("preemptionPolicy"), "preemptionPolicy", "PreemptLowerPriority")
        self._origin("PriorityClass", doc.name)
        self.priority_classes[doc.name] = PriorityClassInfo(
            name=doc.name,
            value=value,
            global_default=_bool(obj.get("globalDefault"), "globalDefault", False),
            preemption_policy=policy,
        )

    def _namespace(self, doc: _Doc) -> None:
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        queue = annotations.get(QUEUE_NAME_ANNOTATION) or None
        if queue:
            self.ns_queue[doc.name] = queue
        labels = label_pairs(_string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings))
        self.namespaces[doc.name] = NamespaceInfo(name=doc.name, queue=queue, labels=labels)
        self._origin("Namespace", doc.name)

    def _resource_quota(self, doc: _Doc) -> None:
        hard = _map(doc.spec.get("hard"), "spec.hard")
        ns = doc.namespace
        weight = 1
        for key, value in hard.items():
            if not isinstance(key, str):
                raise _FieldError(f"spec.hard: keys must be strings, got {key!r}")
            path = f"spec.hard.{key}"
            if key == NAMESPACE_WEIGHT_KEY:
                weight = self._namespace_weight(doc, value, path)
                continue
            base = _hard_base_resource(key)
            amount = parse_quantity(value, base, path)
            stored = key.removeprefix("requests.")
            limits = self.rq_hard.setdefault(ns, {})
            # Each ResourceQuota is enforced on its own: the tightest limit of a key is what binds.
            limits[stored] = min(limits.get(stored, amount), amount)
        self.rq_weight[ns] = max(self.rq_weight.get(ns, 1), weight)
        self.rq_hard.setdefault(ns, {})

    def _namespace_weight(self, doc: _Doc, value: object, path: str) -> int:
        # SIMULATE.md: missing, non-integer or < 1 means 1. (Volcano took Quantity.Value(), which rounds a
        # fraction up; a whole-number quantity such as "2" or "1k" reads the same either way.)
        try:
            milli = parse_quantity(value, NAMESPACE_WEIGHT_KEY, path)
        except QuantityError:
            self.warnings.append(f"{doc.where}: {path}: {value!r} is not a whole number; weight 1 used")
            return 1
        whole, rest = divmod(milli, 1000)
        if rest:
            self.warnings.append(f"{doc.where}: {path}: {value!r} is not a whole number; weight 1 used")
            return 1
        if whole < 1:
            self.warnings.append(f"{doc.where}: {path}: {value!r} is below 1; weight 1 used")
            return 1
        return whole

    def _limit_range(self, doc: _Doc) -> None:
        """A LimitRange: its items kept by namespace and name (``engine.manifests.limitranges``)."""
        items = read_limit_range(doc.spec)
        self.limit_ranges.ranges.setdefault(doc.namespace or "default", {})[doc.name] = items

    def _complete_namespaces(self) -> None:
        # Namespaces known only from their pods are left out: Snapshot.namespace() reads them as the defaults.
        for ns in self.rq_weight:
            if ns not in self.namespaces:
                self.namespaces[ns] = NamespaceInfo(name=ns)
        for ns, info in list(self.namespaces.items()):
            hard = self.rq_hard.get(ns)
            self.namespaces[ns] = NamespaceInfo(
                name=ns,
                weight=self.rq_weight.get(ns, 1),
                queue=info.queue,
                hard=ResourceList(hard) if hard else None,
                labels=info.labels,
            )

    def _pod(self, doc: _Doc) -> None:
        self._room_for_pods(1)
        meta, spec, status = doc.meta, doc.spec, doc.status
        labels = _string_map(meta.get("labels"), "metadata.labels", doc, self.warnings)
        annotations = _string_map(meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        group_name = annotations.get(GROUP_NAME_ANNOTATION, "")
        # Kueue's pod group (``engine.manifests.kueuegroups``); a pod naming a Volcano PodGroup is that PodGroup's
        kueue = None if group_name else kueue_pod_group(labels, annotations)
        queue = labels.get(KUEUE_QUEUE_LABEL, "")
        grouped = f"{doc.namespace}/{kueue[0]}" if kueue is not None and queue else None
        job_key = None if group_name or grouped else self._live_job_of(doc.namespace, meta)
        # a pod of a JobSet, a Kubeflow job or an MPIJob (live): its workload's podgroup, its pod set its role
        pod_set = None if group_name or grouped or job_key else self._live_pod_set_job_of(doc.namespace, meta, labels)
        job_key = pod_set[0] if pod_set is not None else job_key
        grouped = grouped or job_key
        # a plain pod Kueue manages, a workload of its own: its maximum execution time (a group's: ``kueuegroups``)
        limit = max_exec(labels) if queue and not (group_name or grouped) else None
        if not self.live:  # (a pod read from the cluster has been through the priority admission already)
            spec = self._priority_admitted(spec)
        task = self._task(doc, doc.namespace, doc.name, labels, annotations, spec, status, meta, podgroup=grouped)
        if pod_set is not None and pod_set[1]:
            task = dataclasses.replace(task, task_role=pod_set[1])
        if job_key is not None:  # a pod a Kueue Job controls (live): its Job's podgroup (``kueuejobs``)
            self.job_pods.setdefault(job_key, []).append(task)
        if kueue is not None:
            member = GroupPod(doc, task, kueue[1], queue, labels, annotations)
            self.kueue_group_pods.setdefault(f"{doc.namespace}/{kueue[0]}", []).append(member)
        if not (group_name or grouped):  # (a pod of a group Kueue does not manage, without the queue label, too)
            self._add_own_podgroup(doc, task, annotations)
            if limit is not None:
                self.kueue_max_exec[f"{doc.namespace}/{own_podgroup_name(task.name)}"] = limit
        elif group_name:  # (a Kueue group's podgroup is made once every pod is read)
            user = user_annotation(annotations, self.limits.max_json_depth)
            if user[0]:
                self.pod_users.setdefault(f"{doc.namespace}/{group_name}", user)
        job = annotations.get(JOB_NAME_ANNOTATION)
        if job:
            self.pod_jobs.add(f"{doc.namespace}/{job}")
        self._origin("Pod", task.uid)
        self.tasks[task.uid] = task

    def _task(
        self,
        doc: _Doc,
        namespace: str,
        name: str,
        labels: dict[str, str],
        annotations: Mapping[str, str],
        spec: Mapping[str, Any],
        status: Mapping[str, Any],
        meta: Mapping[str, Any],
        *,
        podgroup: str | None = None,
        path: str = "spec",
        template: bool = False,
    ) -> TaskInfo:
        """The pod of ``spec`` (``template``: a Kueue workload's, of podgroup ``podgroup``: ``_limited_request``), as
        the API server admits it (``_admitted_spec``)."""
        spec = self._admitted_spec(doc, spec, path, template)
        request = self._limited_request(namespace, spec, path, podgroup if template else None)
        class_name = _str(spec.get("priorityClassName"), f"{path}.priorityClassName")
        class_priority, pc = self._class_priority(doc, class_name, f"{path}.priorityClassName")
        priority = _int(spec.get("priority"), f"{path}.priority", class_priority, minimum=-(2**31), maximum=2**31 - 1)
        default_policy = pc.preemption_policy if pc is not None else "PreemptLowerPriority"
        preemption_policy = _str(spec.get("preemptionPolicy"), f"{path}.preemptionPolicy", default_policy)
        self._unlike_class(doc, path, pc, priority, preemption_policy)
        volcano_preemptable = self._volcano_preemptable(doc, labels, annotations)
        quota_label = labels.get(KOORD_QUOTA_NAME) or None
        if quota_label is not None:
            quota_label = _FROM_KOORD.get(quota_label, quota_label)
        quota_preemptible = labels.get(KOORD_PREEMPTIBLE) != "false"
        node = _str(spec.get("nodeName"), f"{path}.nodeName") or None
        phase = _str(status.get("phase"), "status.phase")
        deleting = meta.get("deletionTimestamp") not in (None, "")
        task_status = _task_status(phase, node, deleting)
        tolerations = _tolerations(spec.get("tolerations"), f"{path}.tolerations")
        own_labels = {
            k: v for k, v in labels.items() if k not in (KOORD_QUOTA_NAME, KOORD_PREEMPTIBLE, PREEMPTABLE_KEY)
        }
        group_name = annotations.get(GROUP_NAME_ANNOTATION, "")
        return TaskInfo(
            namespace=namespace,
            name=name,
            podgroup=podgroup or f"{namespace}/{group_name or own_podgroup_name(name)}",
            request=request,
            priority=priority,
            priority_class=class_name,
            volcano_preemptable=volcano_preemptable,
            quota_preemptible=quota_preemptible,
            quota_group=quota_label,
            status=task_status,
            node=node,
            node_selector=_string_map(spec.get("nodeSelector"), f"{path}.nodeSelector", doc, self.warnings),
            tolerations=tolerations,
            labels=own_labels,
            task_role=annotations.get(TASK_SPEC_ANNOTATION, ""),
            creation_timestamp=_time(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
            start_timestamp=_time(status.get("startTime"), "status.startTime"),
            preemption_policy=preemption_policy,
            node_affinity=_node_affinity(spec.get("affinity"), f"{path}.affinity"),
        )

    def _limited_request(
        self, namespace: str, spec: Mapping[str, Any], path: str, template: str | None
    ) -> ResourceList:
        """The request of the pod of ``spec``, with its namespace's LimitRange defaults where the API server has not
        given them yet: a pod from manifests, and a Kueue workload's template (``template``: its podgroup's key),
        which waits while it falls outside the ranges; a pod outside them is refused, as the API server refuses it."""
        if template is not None:  # a template is checked even without a LimitRange: its requests against its limits
            ranges: LimitRangeSummary | None = self.limit_ranges.summaries.get(namespace, LimitRangeSummary())
        else:
            ranges = None if self.live else self.limit_ranges.summaries.get(namespace)
        if ranges is None:
            return _pod_request(spec, path)
        init, main = _containers(spec, path, ranges)  # read once, for the request and the checks
        request = _requests_of(spec, path, init, main)
        containers = ((c.path, c.requests, c.limits) for c in (*init, *main))
        # (Kueue's order: the init containers, then the containers, then the whole pod)
        if template is not None:  # a workload's templates, as Kueue checks them: their request, overhead included
            found = ranges.violations(containers, request)
        else:  # a pod, as the API server's LimitRanger checks it: its requests and limits, without its overhead
            bare = _requests_of(spec, path, init, main, overhead=False) if spec.get("overhead") else request
            found = ranges.violations(containers, bare, _pod_level_limits(spec, path, _limits_of(init, main)))
        if found and template is None:
            raise _FieldError(f"{'; '.join(found)} (the API server's LimitRanger refuses such a pod)")
        if found and template is not None:
            self.limit_ranges.refusals.setdefault(template, []).extend(found)
        return request

    def _volcano_preemptable(self, doc: _Doc, labels: Mapping[str, str], annotations: Mapping[str, str]) -> bool | None:
        # Volcano reads the annotation first, then the label (api.GetPodPreemptable); a value ParseBool
        # rejects counts as false.
        for source, values in (("annotation", annotations), ("label", labels)):
            if PREEMPTABLE_KEY in values:
                parsed = _go_bool(values[PREEMPTABLE_KEY])
                if parsed is None:
                    self.warnings.append(
                        f"{doc.where}: {source} {PREEMPTABLE_KEY}={values[PREEMPTABLE_KEY]!r} is not a boolean; "
                        "read as false, as Volcano does"
                    )
                    return False
                return parsed
        return None

    def _add_own_podgroup(self, doc: _Doc, task: TaskInfo, annotations: Mapping[str, str]) -> None:
        # Volcano's podgroup controller (buildPodGroupFromPod): minMember 1, minResources = the pod's request,
        # the pod's priority class, the queue from the pod's annotation; the webhook then applies the
        # namespace's queue to a podgroup left in "default".
        if task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
            phase = PodGroupPhase.COMPLETED
        elif task.node is not None and task.status is not TaskStatus.PENDING:
            phase = PodGroupPhase.RUNNING
        else:
            phase = PodGroupPhase.PENDING
        pg_name = own_podgroup_name(task.name)
        key = f"{task.namespace}/{pg_name}"
        if key not in self.auto_podgroups:
            self._room_for_podgroup()
        self._origin("PodGroup", key, keep=True)
        user, groups = user_annotation(annotations, self.limits.max_json_depth)
        self.auto_podgroups[key] = PodGroupInfo(
            namespace=task.namespace,
            name=pg_name,
            queue=self._kueue_queue(doc, task.namespace, task.labels)
            or self._queue_for(task.namespace, annotations.get(QUEUE_NAME_ANNOTATION, "")),
            min_member=1,
            min_resources=task.request,
            priority=self._kueue_workload(
                doc,
                task.namespace,
                task.labels,
                key,
                self._class_priority(doc, task.priority_class, "spec.priorityClassName")[0],
            ),
            priority_class=task.priority_class,
            phase=phase,
            creation_timestamp=task.creation_timestamp or 0.0,
            user=user,
            user_groups=groups,
        )

    def _node(self, doc: _Doc) -> NodeInfo:
        spec, status = doc.spec, doc.status
        if status.get("allocatable") is not None:
            allocatable = _rl(status.get("allocatable"), "status.allocatable")
        else:
            allocatable = _rl(status.get("capacity"), "status.capacity")
        taints: list[Taint] = []
        for i, raw in enumerate(_list(spec.get("taints"), "spec.taints")):
            path = f"spec.taints[{i}]"
            t = _map(raw, path)
            key = _str(t.get("key"), f"{path}.key")
            if not key:
                raise _FieldError(f"{path}.key: missing")
            taints.append(
                Taint(
                    key=key, value=_str(t.get("value"), f"{path}.value"), effect=_str(t.get("effect"), f"{path}.effect")
                )
            )
        ready = True
        for i, raw in enumerate(_list(status.get("conditions"), "status.conditions")):
            cond = _map(raw, f"status.conditions[{i}]")
            if cond.get("type") == "Ready":
                ready = _str(cond.get("status"), f"status.conditions[{i}].status") == "True"
        return NodeInfo(
            name=doc.name,
            allocatable=allocatable,
            labels=_string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings),
            taints=tuple(taints),
            unschedulable=_bool(spec.get("unschedulable"), "spec.unschedulable", False),
            ready=ready,
        )


def _hard_base_resource(key: str) -> str:
    """The resource whose unit a ResourceQuota key uses: ``limits.memory`` is in bytes like ``memory``."""
    for prefix in ("requests.", "limits."):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def _task_status(phase: str, node: str | None, deleting: bool) -> TaskStatus:
    # Volcano's getTaskStatus, with one addition: a pod with a node and no status.phase (a hand-written
    # manifest) is Running, as SIMULATE.md says.
    if phase == "Succeeded":
        return TaskStatus.SUCCEEDED
    if phase == "Failed":
        return TaskStatus.FAILED
    if phase == "Unknown":
        return TaskStatus.UNKNOWN
    if deleting:
        return TaskStatus.RELEASING
    if node is None:
        return TaskStatus.PENDING
    if phase == "Pending":
        return TaskStatus.BOUND
    return TaskStatus.RUNNING


def _tolerations(raw: object, path: str) -> tuple[Toleration, ...]:
    return tuple(_toleration(t, f"{path}[{i}]") for i, t in enumerate(_list(raw, path)))


def _toleration(raw: object, path: str) -> Toleration:
    t = _map(raw, path)
    seconds = t.get("tolerationSeconds")
    return Toleration(
        key=_str(t.get("key"), f"{path}.key"),
        operator=_str(t.get("operator"), f"{path}.operator", "Equal") or "Equal",
        value=_str(t.get("value"), f"{path}.value"),
        effect=_str(t.get("effect"), f"{path}.effect"),
        toleration_seconds=None if seconds is None else _int(seconds, f"{path}.tolerationSeconds", 0),
    )


def read_placement(spec: Mapping[str, Any], path: str) -> tuple[dict[str, str], tuple[Toleration, ...], NodeAffinity]:
    """What a pod spec at ``path`` says of where its pod may run (``export.placement_spec`` writes it): its
    ``nodeSelector``, ``tolerations`` and required node affinity; a ``ValueError`` names a bad field."""
    selector = _map(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for key, value in selector.items():
        if not isinstance(value, str):
            raise _FieldError(f"{path}.nodeSelector.{key}: {value!r} is not a string")
    tolerations = tuple(
        _toleration(t, f"{path}.tolerations[{i}]")
        for i, t in enumerate(_list(spec.get("tolerations"), f"{path}.tolerations"))
    )
    affinity = _node_affinity(spec.get("affinity"), f"{path}.affinity")
    return {str(k): v for k, v in selector.items()}, tolerations, affinity


_GO_INT = re.compile(r"[+-]?[0-9]+")
_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _node_affinity(raw: object, path: str) -> tuple[tuple[NodeSelectorRequirement, ...], ...]:
    """The ``nodeSelectorTerms`` of ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``, each
    its ``matchExpressions`` and ``matchFields`` (``metadata.name`` only); checked as the API server checks them."""
    node = _map(_map(raw, path).get("nodeAffinity"), f"{path}.nodeAffinity")
    at = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    if node.get("requiredDuringSchedulingIgnoredDuringExecution") is None:
        return ()
    required = _map(node.get("requiredDuringSchedulingIgnoredDuringExecution"), at)
    return read_node_selector_terms(required.get("nodeSelectorTerms"), f"{at}.nodeSelectorTerms")


def read_node_selector_terms(raw: object, path: str) -> tuple[tuple[NodeSelectorRequirement, ...], ...]:
    """A required node affinity's ``nodeSelectorTerms`` (at ``path``: a list of terms, each its
    ``matchExpressions`` and ``matchFields``), checked as the API server checks them; a ``ValueError`` names the
    bad field (``<path>[1].matchExpressions[0].operator: ...``)."""
    listed = _list(raw, path)
    if not listed:
        raise _FieldError(f"{path}: must have at least one node selector term")
    terms = []
    for i, term in enumerate(listed):
        where = f"{path}[{i}]"
        t = _map(term, where)
        expressions = _list(t.get("matchExpressions"), f"{where}.matchExpressions")
        fields = _list(t.get("matchFields"), f"{where}.matchFields")
        terms.append(
            tuple(_node_requirement(e, f"{where}.matchExpressions[{j}]") for j, e in enumerate(expressions))
            + tuple(_field_requirement(e, f"{where}.matchFields[{j}]") for j, e in enumerate(fields))
        )
    return tuple(terms)


def _field_requirement(raw: object, path: str) -> NodeSelectorRequirement:
    """A ``matchFields`` entry: the API server takes only ``metadata.name`` with ``In`` or ``NotIn`` and one value."""
    e = _map(raw, path)
    key = _str(e.get("key"), f"{path}.key")
    if key != "metadata.name":
        raise _FieldError(f"{path}.key: {key!r} is not a valid field selector key (only metadata.name)")
    operator = _str(e.get("operator"), f"{path}.operator")
    if operator not in ("In", "NotIn"):
        raise _FieldError(f"{path}.operator: {operator!r} is not one of In, NotIn")
    values = tuple(_str(v, f"{path}.values[{i}]") for i, v in enumerate(_list(e.get("values"), f"{path}.values")))
    if len(values) != 1:
        raise _FieldError(f"{path}.values: must be only one value with operator {operator} for a node field selector")
    return NodeSelectorRequirement(key, operator, values, match_field=True)


def _node_requirement(raw: object, path: str) -> NodeSelectorRequirement:
    e = _map(raw, path)
    key = _str(e.get("key"), f"{path}.key")
    if not key:
        raise _FieldError(f"{path}.key: missing")
    operator = _str(e.get("operator"), f"{path}.operator")
    if operator not in _NODE_OPERATORS:
        raise _FieldError(f"{path}.operator: {operator!r} is not one of {', '.join(_NODE_OPERATORS)}")
    values = tuple(_str(v, f"{path}.values[{i}]") for i, v in enumerate(_list(e.get("values"), f"{path}.values")))
    if operator in ("In", "NotIn") and not values:
        raise _FieldError(f"{path}.values: must be non-empty with operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise _FieldError(f"{path}.values: must be empty with operator {operator}")
    if operator in ("Gt", "Lt") and (len(values) != 1 or not _GO_INT.fullmatch(values[0])):
        raise _FieldError(f"{path}.values: operator {operator} takes one integer")
    return NodeSelectorRequirement(key, operator, values)


class _Container(NamedTuple):
    """A container of a pod spec, read once: where it is, its requests and limits as the API server defaults them,
    and whether it is a sidecar (an init container with ``restartPolicy: Always``)."""

    path: str
    requests: ResourceList
    limits: ResourceList
    sidecar: bool


def _container(raw: object, path: str, ranges: LimitRangeSummary | None = None) -> _Container:
    """A container's requests (a limit without a request counts as the request; then ``ranges``' defaults, as the
    API server gives them) and limits (with ``ranges``' default limits)."""
    c = _map(raw, path)
    resources = _map(c.get("resources"), f"{path}.resources")
    asked = _rl(resources.get("requests"), f"{path}.resources.requests")
    limits = _rl(resources.get("limits"), f"{path}.resources.limits")
    sidecar = c.get("restartPolicy") == "Always"
    if ranges is not None and ranges.container is not None:
        requests, defaulted = ranges.container_request(asked, limits)
        return _Container(path, ResourceList.trusted(requests), ResourceList.trusted(defaulted), sidecar)
    if all(name in asked for name in limits):
        return _Container(path, asked, limits, sidecar)  # every limit has its request (or there are none)
    requests = dict(asked)
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return _Container(path, ResourceList(requests), limits, sidecar)


def _containers(
    spec: Mapping[str, Any], path: str, ranges: LimitRangeSummary | None
) -> tuple[list[_Container], list[_Container]]:
    """The pod's init containers and its containers, each read once."""
    main = [_container(c, f"{path}.containers[{i}]", ranges)
            for i, c in enumerate(_list(spec.get("containers"), f"{path}.containers"))]  # fmt: skip
    init = [_container(c, f"{path}.initContainers[{i}]", ranges)
            for i, c in enumerate(_list(spec.get("initContainers"), f"{path}.initContainers"))]  # fmt: skip
    return init, main


def _pod_request(spec: Mapping[str, Any], path: str = "spec", ranges: LimitRangeSummary | None = None) -> ResourceList:
    """Kubernetes' PodRequests of ``spec`` (``_requests_of``), each container with ``ranges``' defaults (its
    namespace's LimitRanges) when given."""
    containers = spec.get("containers")
    if (
        ranges is None
        and type(containers) is list
        and len(containers) == 1
        and not spec.get("initContainers")
        and not spec.get("overhead")
        and not spec.get("resources")
    ):
        return _container(containers[0], f"{path}.containers[0]").requests  # one container: its request is the pod's
    return _requests_of(spec, path, *_containers(spec, path, ranges))


def _limits_of(init: Sequence[_Container], main: Sequence[_Container]) -> ResourceList:
    """The pod's limits as the API server's LimitRanger adds them up (for a LimitRange of type ``Pod``), as its
    requests are (``_peak``); a resource no container limits is left out."""
    return _peak(init, main, _LIMITS)


def _requests_of(
    spec: Mapping[str, Any],
    path: str,
    init: Sequence[_Container],
    main: Sequence[_Container],
    *,
    overhead: bool = True,
) -> ResourceList:
    """Kubernetes' PodRequests over the pod's containers (``_containers``): their peak (``_peak``), under the pod's
    own resources (``_pod_level``), + overhead (unless ``overhead`` is false)."""
    requests = _pod_level(spec, path, _peak(init, main, _REQUESTS), (*init, *main))
    return requests + _rl(spec.get("overhead"), f"{path}.overhead") if overhead else requests


_REQUESTS = attrgetter("requests")
_LIMITS = attrgetter("limits")


def _peak(
    init: Sequence[_Container], main: Sequence[_Container], part: Callable[[_Container], ResourceList]
) -> ResourceList:
    """``part`` (the requests or the limits) of a pod's containers added up as Kubernetes does: max(containers +
    sidecars, each init container + the sidecars before it)."""
    total = ResourceList.total(part(c) for c in main)
    sidecars = ResourceList()
    init_peak = ResourceList()
    for c in init:
        amounts = part(c)
        if c.sidecar:
            total = total + amounts
            sidecars = sidecars + amounts
            init_peak = init_peak.maximum(sidecars)
        else:
            init_peak = init_peak.maximum(amounts + sidecars)
    return total.maximum(init_peak)


def _pod_level(
    spec: Mapping[str, Any], path: str, containers: ResourceList, each: Sequence[_Container] = ()
) -> ResourceList:
    """The containers' request ``containers`` under the pod's own ``spec.resources`` (Kubernetes' pod-level
    resources, on by default since 1.34): for cpu, memory and hugepages the pod's request when it sets one, else the
    containers' when they ask for it, else the pod's limit (the API server's defaulting, checked against the real one
    in tests/kube/real/test_apiserver.py); any other resource stays the containers'. What the API server refuses
    (``_check_pod_level``, ``each``: the pod's containers as defaulted) is a field error."""
    own = _own_resources(spec, path)
    if own is None:
        return containers
    asked, limits = own
    _check_pod_level(f"{path}.resources", asked, limits, containers, each)
    out = dict(containers.raw)
    for name, value in limits.items():
        if _pod_level_resource(name) and name not in out:
            out[name] = value
    out.update((name, value) for name, value in asked.items() if _pod_level_resource(name))
    return ResourceList(out)


def _check_pod_level(
    path: str, asked: ResourceList, limits: ResourceList, containers: ResourceList, each: Sequence[_Container]
) -> None:
    """Kubernetes' validation of a pod's own resources (``path``: its ``spec.resources``; each rule found against the
    real API server, tests/kube/real/test_apiserver.py): cpu, memory and hugepages only; a request within the pod's
    limit and at least what its containers ask for in all (``containers``, LimitRange defaults included); no
    container limit above the pod's."""
    for part, amounts in (("requests", asked), ("limits", limits)):
        for name in amounts:
            if not _pod_level_resource(name):
                raise _FieldError(f"{path}.{part}[{name}]: a pod's own resources are cpu, memory and hugepages-* only")
    for name, value in asked.items():
        if name in limits and value > limits[name]:
            raise _FieldError(
                f"{path}.requests[{name}]: {in_words(value, name)} is above the pod's limit of {in_words(limits[name], name)}"
            )
        if value < containers.get(name, 0):
            raise _FieldError(
                f"{path}.requests[{name}]: {in_words(value, name)} is below what its containers ask for in all, "
                f"{in_words(containers[name], name)}"
            )
    for c in each:
        for name, value in c.limits.items():
            if name in limits and value > limits[name]:
                raise _FieldError(
                    f"{c.path}.resources.limits[{name}]: {in_words(value, name)} is above the pod's own limit of "
                    f"{in_words(limits[name], name)} (spec.resources.limits)"
                )


def _pod_level_limits(spec: Mapping[str, Any], path: str, containers: ResourceList) -> ResourceList:
    """The containers' limits ``containers`` under the pod's own ``spec.resources`` (Kubernetes' PodLimits): for
    cpu, memory and hugepages the pod's limit when it sets one, which the API server's LimitRanger checks a range of
    type ``Pod`` against (checked against the real one in tests/kube/real/test_apiserver.py)."""
    own = _own_resources(spec, path)
    if own is None:
        return containers
    return ResourceList({**containers.raw, **{n: v for n, v in own[1].items() if _pod_level_resource(n)}})


def _own_resources(spec: Mapping[str, Any], path: str) -> tuple[ResourceList, ResourceList] | None:
    """The pod's own ``spec.resources``: (requests, limits); None when it sets none."""
    raw = spec.get("resources")
    if not raw:
        return None
    resources = _map(raw, f"{path}.resources")
    return _rl(resources.get("requests"), f"{path}.resources.requests"), _rl(
        resources.get("limits"), f"{path}.resources.limits"
    )


def _pod_level_resource(name: str) -> bool:
    """Whether the pod's own ``spec.resources`` sets ``name`` (Kubernetes' IsSupportedPodLevelResource)."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")
