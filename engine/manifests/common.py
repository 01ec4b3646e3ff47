"""What every manifest reader shares: errors, the result, one document, field readers, the builder's state."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import yaml

from engine.admission import AdmissionDraft
from engine.limits import ENV_VARS, Limits, TooDeep, YAMLTooDeep, brief, loads_json
from engine.manifests.liststream import Unstreamable, list_items
from engine.manifests.yamlload import load_manifest_documents
from engine.objects import (
    BUILTIN_PRIORITY_CLASSES,
    DEFAULT_GROUP,
    DEFAULT_QUEUE,
    ROOT_GROUP,
    SYSTEM_GROUP,
    FlavorFungibility,
    FlavorGroup,
    KueueFlavors,
    KueueName,
    KueuePreemption,
    NamespaceInfo,
    PodGroupInfo,
    PriorityClassInfo,
    QueueHierarchy,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    TaskInfo,
)
from engine.policy.arguments import parse_duration
from engine.policy.policy import DEFAULT_POLICY, ElasticQuotaArgs, Policy, PolicyError
from engine.resources import QuantityError, ResourceList, parse_resource_list
from engine.usage import node_key, parse_ratio
from engine.userlimits import MAX_NAME, UserLimit, parse_user_limits

if TYPE_CHECKING:
    from engine.manifests.kueueconfig import KueueConfiguration

# -- well-known keys -----------------------------------------------------------------------------------------
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
JOB_NAME_ANNOTATION = "volcano.sh/job-name"
PREEMPTABLE_KEY = "volcano.sh/preemptable"
NAMESPACE_WEIGHT_KEY = "volcano.sh/namespace.weight"
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"
SCHEDULER_CONFIGMAP = "volcano-scheduler-configmap"
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"

KOORD = "quota.scheduling.koordinator.sh/"
KOORD_QUOTA_NAME = KOORD + "name"
KOORD_PREEMPTIBLE = KOORD + "preemptible"
KOORD_PARENT = KOORD + "parent"
KOORD_IS_PARENT = KOORD + "is-parent"
KOORD_ALLOW_LENT = KOORD + "allow-lent-resource"
KOORD_TREE_ID = KOORD + "tree-id"
KOORD_IS_ROOT = KOORD + "is-root"
KOORD_SHARED_WEIGHT = KOORD + "shared-weight"
KOORD_NAMESPACES = KOORD + "namespaces"
KOORD_ROOT, KOORD_SYSTEM, KOORD_DEFAULT = (
    "koordinator-root-quota",
    "koordinator-system-quota",
    "koordinator-default-quota",
)
_FROM_KOORD = {KOORD_ROOT: ROOT_GROUP, KOORD_SYSTEM: SYSTEM_GROUP, KOORD_DEFAULT: DEFAULT_GROUP}
_TO_KOORD = {v: k for k, v in _FROM_KOORD.items()}

PLUGINS_QUOTA_GROUP = "scheduling.x-k8s.io"  # scheduler-plugins' ElasticQuota API group

FAIRWAY_PRIORITY = "fairway.io/priority"
FAIRWAY_MIN_SCALE_EXEMPT = "fairway.io/min-scale-exempt"
# a PodGroup suspended by a job action (``PodGroupInfo.suspended``): "true" holds it Pending, never admitted or placed
FAIRWAY_SUSPENDED = "fairway.io/suspended"
# Kueue's borrowing and lending limits on a Volcano Queue or a Koordinator ElasticQuota: a JSON resource list
# what the JobSet controller and Kubeflow's operators put on the pods they make (live: ``_live_pod_set_job_of``)
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID_LABEL = "jobset.sigs.k8s.io/jobset-uid"
JOBSET_REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
KUBEFLOW_JOB_NAME_LABEL = "training.kubeflow.org/job-name"
KUBEFLOW_REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
KUBEFLOW_JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # a pod's or Job's LocalQueue
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"  # a pod's or Job's WorkloadPriorityClass
# a Job's (JobSet's, ...) maximum execution time: admitted longer than that in all, it is suspended (``max_exec``)
KUEUE_MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
KUEUE_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"  # a Job's least count (partial admission)
# a Job's own parallelism, kept by the Kubernetes adapter when it lowers ``spec.parallelism`` to the count a partial
# admission gave (``scheduling.kube.mirror_out``): the reader counts the Job's pods from it, as Kueue from its workload
ORIGINAL_PARALLELISM = "fairway.io/original-parallelism"
# Kueue's plain-Pod groups (``engine.manifests.kueuegroups``): the group's name (a label, or an annotation, which Kueue
# reads first since 0.18), its total count (an annotation), and two annotations Fairway names in a warning
KUEUE_GROUP_NAME = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
KUEUE_GROUP_FAST_ADMISSION = "kueue.x-k8s.io/pod-group-fast-admission"
KUEUE_RETRIABLE_IN_GROUP = "kueue.x-k8s.io/retriable-in-group"
FAIRWAY_BORROWING_LIMIT = "fairway.io/borrowing-limit"
FAIRWAY_LENDING_LIMIT = "fairway.io/lending-limit"
# fairness over time (``engine.usage``): a node's recorded past-usage ratio, e.g. "1.8" (simulate's input)
FAIRWAY_PAST_USAGE_RATIO = "fairway.io/past-usage-ratio"
# a Volcano Queue's minimum runtime (``QueueSpec.min_runtime``; KAI's min-runtime per queue), a Go duration of whole
# seconds ("90s", "2m"); absent: unset (the parent's, else the policy's ``minRuntime``). Volcano's Queue has no such field
FAIRWAY_MIN_RUNTIME = "fairway.io/min-runtime"
# per-user limits of a Volcano Queue or an ElasticQuota (``engine.userlimits``): the API's JSON list,
# [{"user": "*", "max_jobs": 3}, {"group": "ml-interns", "max_resources": {"nvidia.com/gpu": "8"}}]
FAIRWAY_USER_LIMITS = "fairway.io/user-limits"
# who submitted a pod or PodGroup (``PodGroupInfo.user``): YuniKorn's JSON {"user": ..., "groups": [...]}, or
# Fairway's plain user name; neither: the namespace counts as the user
YUNIKORN_USER_INFO = "yunikorn.apache.org/user.info"
FAIRWAY_USER = "fairway.io/user"

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# Reading goes through engine.manifests.yamlload (libyaml, after engine.limits' depth check); writing uses libyaml's dumper when present.
try:  # libyaml is ~10x faster on big snapshots; fall back to the pure-Python dumper when it is missing.
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Dumper = yaml.SafeDumper


# -- errors and results --------------------------------------------------------------------------------------


class ManifestError(ValueError):
    """Input that cannot be used. ``str()`` is one line: file, document (and List item), kind, name, message."""

    def __init__(
        self,
        file: str,
        index: int,
        kind: str | None,
        name: str | None,
        message: str,
        item: int | None = None,
    ) -> None:
        self.file = file
        self.index = index
        self.kind = kind
        self.name = name
        self.message = " ".join(message.split())
        self.item = item
        super().__init__(self._format())

    def _format(self) -> str:
        where = f"{self.file}: document {self.index}"
        if self.item is not None:
            where += f" item {self.item}"
        if self.kind or self.name:
            where += f" ({' '.join(p for p in (self.kind, self.name) if p)})"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self._format()


Origin = tuple[str, int, "int | None"]  # file, 1-based document index, 1-based List item (or None)


@dataclass
class LoadResult:
    """What ``load_manifests`` produced.

    ``warnings`` include the policy's own warnings when the policy came from a ConfigMap. ``origins`` says where
    each object came from, keyed by (kind, key): ``("Queue", name)``, ``("ElasticQuota", group name)``,
    ``("PodGroup", "ns/name")``, ``("Pod", "ns/name")``, ``("Node", name)``, ``("Namespace", name)``,
    ``("PriorityClass", name)``; a podgroup or pod that Fairway made (a pod's own podgroup, a vcjob's podgroup and
    pods) points at the document it was made from.
    """

    snapshot: Snapshot
    warnings: list[str] = field(default_factory=list)
    policy_source: str | None = None
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)
    # Kueue's plain-Pod groups that Kueue admits only once all their pods exist (every one but a fast-admission group
    # with a pod that can run): podgroup key -> its pod-group-total-count (the store keeps it: ``PodGroup.
    # kueue_pod_group_count``, by which the live sessions find the groups that wait, ``pod_group_wait``)
    kueue_pod_groups: dict[str, int] = field(default_factory=dict)
    # Kueue's batch/v1 Jobs read live (``load_objects(live=True)``): podgroup key -> what the store keeps of each
    kueue_jobs: dict[str, KueueJob] = field(default_factory=dict)
    # every Kueue workload labelled with a maximum execution time (a Job, a JobSet, a Kubeflow job, an MPIJob, a pod
    # group, a plain pod): podgroup key -> its seconds (the store keeps it: ``PodGroup.kueue_max_exec_seconds``;
    # admitted longer in all, it is suspended: ``scheduling.max_exec``)
    kueue_max_exec: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KueueJob:
    """A Kueue ``batch/v1`` Job read live: its LocalQueue, its pod count (Kueue's: its parallelism, or its completions
    when fewer; the parallelism its ``fairway.io/original-parallelism`` keeps when the adapter lowered it), its
    ``job-min-parallelism`` (None: not set), whether it is suspended, and its parallelism as the server has it."""

    local_queue: str
    count: int
    least: int | None
    suspended: bool
    parallelism: int
    # the object's kind and apiVersion: a Job's, or a workload of several pod sets read live (a JobSet, Kubeflow's
    # jobs, an MPIJob: ``engine.manifests.kueuepodsets``), which Kueue never admits in part (``least`` None)
    kind: str = "Job"
    api_version: str = "batch/v1"
    pod_sets: tuple[str, ...] = ()  # its pod sets' names, in Kueue's order (``PodGroupInfo.pod_sets``)
    # when the adapter resumed it (its ``fairway.io/resumed`` annotation, seconds since the epoch; None: not resumed by
    # the adapter): its pods are still being made for a while after (``AdmissionLevers.pods_awaited``)
    resumed_at: float | None = None
    # a suspended Job's pod template, where its pods may run (``export.placement_spec``: its nodeSelector, tolerations
    # and required node affinity): Kueue's flavor assigner reads it before the Job has pods (``engine.flavors``)
    template: Mapping[str, Any] | None = None
    # why its templates fall outside its namespace's LimitRanges (``kueuejobs.job_wait``: it waits while so)
    limit_range: str | None = None
    # its ``kueue.x-k8s.io/max-exec-time-seconds`` (``max_exec``; None: none): admitted longer, it is suspended
    # (``LoadResult.kueue_max_exec``, which the store keeps apart from ``stored``)
    max_exec_seconds: int | None = None
    # a workload of several pod sets: each pod set's template as Kueue's flavor assigner reads it before the pods
    # exist, in Kueue's order (``{"name", "count", "request": its pods' request in all, "placement"}``:
    # ``kueuepodsets.pod_set_template``)
    pod_set_templates: tuple[Mapping[str, Any], ...] = ()

    def stored(self) -> dict[str, object]:
        """What ``PodGroup.kueue_job`` keeps (the store reads it back: ``scheduling.store.read``)."""
        stored: dict[str, object] = {"minCount": self.least, "suspended": self.suspended}
        if self.kind != "Job":  # the wait's words name the kind (``kueuejobs.job_wait``)
            stored["kind"] = self.kind
        if self.pod_sets:  # each pod set is given its own flavors (``engine.flavors``)
            stored["podSets"] = list(self.pod_sets)
        if self.resumed_at is not None:  # its pods awaited a while (``scheduling.store.read.with_pod_group_waits``)
            stored["resumedAt"] = self.resumed_at
        if self.template is not None:  # given flavors before it has pods (``scheduling.store.read``)
            stored["template"] = dict(self.template)
        if self.pod_set_templates:  # its pod sets given flavors before they have pods (``scheduling.store.read``)
            stored["podSetTemplates"] = [dict(t) for t in self.pod_set_templates]
        if self.limit_range is not None:  # it waits while its templates fall outside the LimitRanges
            stored["limitRange"] = self.limit_range
        return stored

    def owner(self, name: str) -> str:
        """The podgroup's owner as ``PodGroup.kube_owner`` names it: ``Kind name (apiVersion)``."""
        return f"{self.kind} {name} ({self.api_version})"


@dataclass(frozen=True)
class InvalidObject:
    """An object ``load_objects`` could not read: its kind, namespace, name, the reason and its 1-based position."""

    kind: str
    namespace: str
    name: str
    message: str
    index: int


def controller_ref(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An object's ``ownerReference`` with ``controller: true`` (its controller), else None."""
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return None
    return next((r for r in refs if isinstance(r, Mapping) and r.get("controller") is True), None)


class _FieldError(ValueError):
    """A bad field inside one object; the caller adds the document's location."""


# -- one document -----------------------------------------------------------------------------------------------


@dataclass
class _Doc:
    file: str
    index: int
    item: int | None
    obj: Mapping[str, Any]
    kind: str
    group: str
    name: str
    namespace: str
    handler: str
    generated: bool = False  # named from ``metadata.generateName`` (``_generated_names`` adds the suffix)

    @property
    def where(self) -> str:
        loc = f"{self.file}: document {self.index}"
        if self.item is not None:
            loc += f" item {self.item}"
        label = " ".join(p for p in (self.kind, self.label) if p)
        return f"{loc} ({label})" if label else loc

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace and self.name else self.name

    def error(self, message: str) -> ManifestError:
        return ManifestError(self.file, self.index, self.kind or None, self.label or None, message, self.item)

    @property
    def meta(self) -> Mapping[str, Any]:
        return _map(self.obj.get("metadata"), "metadata")

    @property
    def spec(self) -> Mapping[str, Any]:
        return _map(self.obj.get("spec"), "spec")

    @property
    def status(self) -> Mapping[str, Any]:
        return _map(self.obj.get("status"), "status")


# kind handlers by (API group, kind); "" is the core group.
_CORE_KINDS = ("Node", "Namespace", "ResourceQuota", "LimitRange", "Pod", "ConfigMap")
_HANDLED: dict[tuple[str, str], str] = {
    **{("", k): k for k in _CORE_KINDS},
    ("scheduling.volcano.sh", "Queue"): "Queue",
    ("scheduling.volcano.sh", "PodGroup"): "PodGroup",
    ("scheduling.k8s.io", "PriorityClass"): "PriorityClass",
    ("node.k8s.io", "RuntimeClass"): "RuntimeClass",
    ("scheduling.sigs.k8s.io", "ElasticQuota"): "ElasticQuota",
    (PLUGINS_QUOTA_GROUP, "ElasticQuota"): "ElasticQuota",
    ("batch.volcano.sh", "Job"): "VolcanoJob",
    ("batch", "Job"): "BatchJob",
    ("jobset.x-k8s.io", "JobSet"): "JobSet",
    **{("kubeflow.org", k): k for k in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MPIJob")},
    ("kueue.x-k8s.io", "ClusterQueue"): "ClusterQueue",
    ("kueue.x-k8s.io", "Cohort"): "Cohort",
    ("kueue.x-k8s.io", "LocalQueue"): "LocalQueue",
    ("kueue.x-k8s.io", "ResourceFlavor"): "ResourceFlavor",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "WorkloadPriorityClass",
    ("config.kueue.x-k8s.io", "Configuration"): "KueueConfiguration",
    ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration"): "KubeSchedulerConfiguration",
}
# The group a kind is read as when apiVersion is missing (Job is ambiguous: batch/v1 or Volcano's, so it is not).
_INFERRED_GROUP: dict[str, str] = {
    **{k: "" for k in _CORE_KINDS},
    "Queue": "scheduling.volcano.sh",
    "PodGroup": "scheduling.volcano.sh",
    "PriorityClass": "scheduling.k8s.io",
    "RuntimeClass": "node.k8s.io",
    "ElasticQuota": "scheduling.sigs.k8s.io",
    "KubeSchedulerConfiguration": "kubescheduler.config.k8s.io",
}
_CLUSTER_SCOPED = frozenset(
    {
        "Node",
        "Namespace",
        "Queue",
        "PriorityClass",
        "RuntimeClass",
        "KubeSchedulerConfiguration",
        "ClusterQueue",
        "Cohort",
        "ResourceFlavor",
        "WorkloadPriorityClass",
        "Configuration",
    }
)


def _iter_documents(file: str, text: str, limits: Limits) -> Iterator[tuple[int, object]]:
    index = 0
    try:
        # the depth is checked on the whole text before any document is built (nothing recurses deeply)
        for index, data in enumerate(load_manifest_documents(text, limits.max_yaml_depth), start=1):
            yield index, data
    except YAMLTooDeep as exc:
        raise ManifestError(file, max(exc.document, 1), None, None, yaml_problem(exc)) from None
    except yaml.YAMLError as exc:
        raise ManifestError(file, index + 1, None, None, f"invalid YAML: {yaml_problem(exc)}") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    text = f"{context}, {problem}" if context else str(problem)
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return text


def _split_documents(sources: Sequence[tuple[str, str]], warnings: list[str], limits: Limits) -> list[_Doc]:
    docs: list[_Doc] = []
    for file, text in sources:
        if _streamed_list(file, text, docs, warnings, limits):
            continue
        for index, data in _iter_documents(file, text, limits):
            if data is None:
                continue
            if not isinstance(data, Mapping):
                raise ManifestError(
                    file, index, None, None, f"expected a Kubernetes object (a mapping), got {_type_name(data)}"
                )
            kind = data.get("kind")
            items = data.get("items")
            if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
                for item_no, item in enumerate(items, start=1):
                    if item is None:
                        continue
                    if not isinstance(item, Mapping):
                        raise ManifestError(
                            file, index, None, None, f"expected a Kubernetes object, got {_type_name(item)}", item_no
                        )
                    doc = _make_doc(file, index, item_no, item, warnings)
                    if doc is not None:
                        docs.append(doc)
                continue
            doc = _make_doc(file, index, None, data, warnings)
            if doc is not None:
                docs.append(doc)
    return _generated_names(docs)


def _generated_names(docs: list[_Doc]) -> list[_Doc]:
    """Each object with a ``metadata.generateName`` and no name named as ``kubectl create`` would name it, with a
    suffix the API server would pick at random made deterministic: the n-th such object of one kind, namespace and
    prefix gets ``<prefix>0000n`` (five digits)."""
    seen: dict[tuple[str, str, str, str], int] = {}
    out = []
    for doc in docs:
        if doc.generated:
            key = (doc.group, doc.kind, doc.namespace, doc.name)
            seen[key] = seen.get(key, 0) + 1
            doc = dataclasses.replace(doc, name=f"{doc.name}{seen[key]:05d}", generated=False)
        out.append(doc)
    return out


def _streamed_list(file: str, text: str, docs: list[_Doc], warnings: list[str], limits: Limits) -> bool:
    """A big ``kind: List`` read item by item (``engine.manifests.liststream``), its items' documents appended to
    ``docs``: True when done, False when the text is to be read the usual way (nothing appended then). The first
    error of an item is raised once every piece has been read, so that a YAML error anywhere comes first, as when
    the text is read whole."""
    found = list_items(text, limits.max_yaml_depth)
    if found is None:
        return False
    kept_docs, kept_warnings = len(docs), len(warnings)
    error: ManifestError | None = None
    try:
        for item_no, item in found[1]:
            if item is None or error is not None:
                continue
            try:
                if not isinstance(item, Mapping):
                    raise ManifestError(
                        file, 1, None, None, f"expected a Kubernetes object, got {_type_name(item)}", item_no
                    )
                doc = _make_doc(file, 1, item_no, item, warnings)
            except ManifestError as exc:
                error = exc
                continue
            if doc is not None:
                docs.append(doc)
    except Unstreamable:
        del docs[kept_docs:], warnings[kept_warnings:]
        return False
    if error is not None:
        raise error
    return True


def _make_doc(file: str, index: int, item: int | None, obj: Mapping[str, Any], warnings: list[str]) -> _Doc | None:
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    meta = obj.get("metadata")
    raw_name = meta.get("name") if isinstance(meta, Mapping) else None
    raw_ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    name = raw_name if isinstance(raw_name, str) else ""
    loc = f"{file}: document {index}" + (f" item {item}" if item is not None else "")
    if kind is None:
        warnings.append(f"{loc}: no kind, not a Kubernetes object; skipped")
        return None
    if not isinstance(kind, str) or not kind:
        raise ManifestError(file, index, None, name or None, f"kind: expected a string, got {brief(kind)}", item)
    if api_version is None:
        group = _INFERRED_GROUP.get(kind)
        if group is None:
            warnings.append(f"{loc} ({kind} {name}): no apiVersion and kind {kind} is not used; skipped")
            return None
        shown = f"{group}/v1alpha1" if group == "scheduling.sigs.k8s.io" else (group or "v1")
        warnings.append(f"{loc} ({kind} {name}): no apiVersion; read as {shown} {kind}")
    elif not isinstance(api_version, str):
        raise ManifestError(
            file, index, kind, name or None, f"apiVersion: expected a string, got {brief(api_version)}", item
        )
    else:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
    handler = _HANDLED.get((group, kind))
    if handler is None:
        shown_ns = f"{raw_ns}/" if isinstance(raw_ns, str) and raw_ns else ""
        warnings.append(f"{loc} ({kind} {shown_ns}{name}): kind {api_version} {kind} is not used; skipped")
        return None
    namespace = ""
    if kind not in _CLUSTER_SCOPED:
        if raw_ns is None or raw_ns == "":
            namespace = "default"
        elif isinstance(raw_ns, str):
            namespace = raw_ns
        else:
            raise ManifestError(
                file, index, kind, name or None, f"metadata.namespace: expected a string, got {brief(raw_ns)}", item
            )
    raw_prefix = meta.get("generateName") if isinstance(meta, Mapping) and raw_name in (None, "") else None
    prefix = raw_prefix if isinstance(raw_prefix, str) else ""
    generated = prefix != ""
    doc = _Doc(file, index, item, obj, kind, group, prefix or name, namespace, handler, generated)
    if handler not in ("KubeSchedulerConfiguration", "KueueConfiguration") and not generated:
        if meta is not None and not isinstance(meta, Mapping):
            raise doc.error(f"metadata: expected a mapping, got {_type_name(meta)}")
        if raw_name is None or raw_name == "":
            raise doc.error("metadata.name: missing")
        if not isinstance(raw_name, str):
            raise doc.error(f"metadata.name: expected a string, got {brief(raw_name)}")
    return doc


# -- field readers -----------------------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {brief(value)}"
    if value is None:
        return "nothing"
    return brief(value)


def _map(value: object, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _FieldError(f"{path}: expected a mapping, got {_type_name(value)}")
    return value


def _list(value: object, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _FieldError(f"{path}: expected a list, got {_type_name(value)}")
    return value


def _str(value: object, path: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise _FieldError(f"{path}: expected a string, got {_type_name(value)}")
    return value


def _int(value: object, path: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _FieldError(f"{path}: expected an integer, got {_type_name(value)}")
    if minimum is not None and value < minimum:
        raise _FieldError(f"{path}: {brief(value)} must be greater than or equal to {minimum}")
    if maximum is not None and value > maximum:
        raise _FieldError(f"{path}: {brief(value)} must be less than or equal to {maximum}")
    return value


def _bool(value: object, path: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _FieldError(f"{path}: expected true or false, got {_type_name(value)}")
    return value


# Parsed (resource, quantity) pairs. A big snapshot repeats a few request shapes thousands of times, and
# parsing a quantity through the Kubernetes client costs ~20 us; exact types only, so True never hits 1.
_QUANTITY_CACHE: dict[tuple[str, object], int] = {}
_CACHEABLE = (str, int, float)
# Whole resource lists whose quantities are all strings (``{cpu: 500m, memory: 2Gi}``), by their items: a string
# equals only a string, so a hit is the same text, parsed the same way; a ResourceList is immutable, so one is shared.
_LIST_CACHE: dict[tuple[tuple[object, object], ...], ResourceList] = {}


def _rl(value: object, path: str) -> ResourceList:
    """``parse_resource_list`` with a cache of already-parsed lists and pairs; errors name ``path`` as it does."""
    if value is None:
        return ResourceList()
    if type(value) is dict and len(value) <= 64:
        key = tuple(value.items())
        try:
            hit = _LIST_CACHE.get(key)
        except TypeError:  # an unhashable value (a list, a mapping): parse_resource_list names it
            return parse_resource_list(value, path)
        if hit is not None:
            return hit
        out: dict[str, int] = {}
        for name, raw in value.items():
            amount = _QUANTITY_CACHE.get((name, raw)) if type(raw) in _CACHEABLE and isinstance(name, str) else None
            if amount is None:
                break
            out[name] = amount
        else:
            parsed = ResourceList(out)
            _remember(key, parsed)
            return parsed
    parsed = parse_resource_list(value, path)
    if isinstance(value, Mapping):
        if len(_QUANTITY_CACHE) > 4096:
            _QUANTITY_CACHE.clear()
        for name, raw in value.items():
            if type(raw) in _CACHEABLE:
                _QUANTITY_CACHE[(name, raw)] = parsed[name]
        if type(value) is dict and len(value) <= 64:
            _remember(tuple(value.items()), parsed)  # all strings, or not kept
    return parsed


def _remember(key: tuple[tuple[object, object], ...], parsed: ResourceList) -> None:
    if all(type(raw) is str and type(name) is str for name, raw in key):
        if len(_LIST_CACHE) > 4096:
            _LIST_CACHE.clear()
        _LIST_CACHE[key] = parsed


def _string_map(value: object, path: str, doc: _Doc, warnings: list[str]) -> dict[str, str]:
    """Labels, annotations, node selectors: string to string; scalars are accepted as their text, with a warning."""
    out: dict[str, str] = {}
    for key, raw in _map(value, path).items():
        if not isinstance(key, str):
            raise _FieldError(f"{path}: keys must be strings, got {key!r}")
        if isinstance(raw, str):
            out[key] = raw
        elif isinstance(raw, bool):
            out[key] = "true" if raw else "false"
            warnings.append(f"{doc.where}: {path}[{key}]: {raw!r} is not a string; read as {out[key]!r}")
        elif isinstance(raw, int | float) or raw is None:
            out[key] = "" if raw is None else str(raw)
            warnings.append(f"{doc.where}: {path}[{key}]: {brief(raw)} is not a string; read as {brief(out[key])}")
        else:
            raise _FieldError(f"{path}[{key}]: expected a string, got {_type_name(raw)}")
    return out


def _time(value: object, path: str) -> float | None:
    """An RFC 3339 time (or a YAML timestamp, or seconds since the epoch) as seconds since the epoch."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise _FieldError(f"{path}: expected a time such as 2024-03-19T11:11:24Z, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _FieldError(f"{path}: {value!r} is not a time such as 2024-03-19T11:11:24Z") from None
    else:
        raise _FieldError(f"{path}: expected a time such as 2024-03-19T11:11:24Z, got {_type_name(value)}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _format_time(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


_KUBE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_GO_ATOI = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi reads
_INT32_MAX = 2**31 - 1


def _is_kube_name(name: str) -> bool:
    """A Kubernetes object name: a DNS-1123 subdomain of at most 253 characters."""
    return len(name) <= 253 and _KUBE_NAME.fullmatch(name) is not None


def kueue_pod_group(labels: Mapping[str, str], annotations: Mapping[str, str]) -> tuple[str, int] | None:
    """A pod's Kueue pod group: its name (the ``kueue.x-k8s.io/pod-group-name`` annotation, else the label) and its
    total count (``kueue.x-k8s.io/pod-group-total-count``); None when the pod names no group. Metadata Kueue's pod
    webhook refuses is a ``_FieldError`` naming the field: a count without a name, a name without a count, a name
    that is not a Kubernetes name, a count that is not a whole number greater than 0."""
    by_annotation = annotations.get(KUEUE_GROUP_NAME, "")
    name = by_annotation or labels.get(KUEUE_GROUP_NAME, "")
    name_path = f"metadata.{'annotations' if by_annotation else 'labels'}[{KUEUE_GROUP_NAME}]"
    count_path = f"metadata.annotations[{KUEUE_GROUP_COUNT}]"
    raw = annotations.get(KUEUE_GROUP_COUNT)
    if not name:
        if raw is None:
            return None
        raise _FieldError(f"{name_path}: missing: a pod with the annotation {KUEUE_GROUP_COUNT} names its group")
    if not _is_kube_name(name):
        raise _FieldError(f"{name_path}: {name!r} is not a valid Kubernetes name (a DNS-1123 subdomain)")
    if raw is None:
        raise _FieldError(f"{count_path}: missing: a pod of a Kueue pod group gives the group's total count")
    if not _GO_ATOI.fullmatch(raw) or not 1 <= int(raw) <= _INT32_MAX:
        raise _FieldError(f"{count_path}: {raw!r} is not a whole number of pods from 1 to {_INT32_MAX}")
    return name, int(raw)


def _go_bool(text: str) -> bool | None:
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    return None


def _past_usage_annotation(annotations: Mapping[str, str], kind: str, name: str, into: dict[str, Fraction]) -> None:
    """The node's ``fairway.io/past-usage-ratio`` annotation into ``into`` (kept out when absent)."""
    key = node_key(kind, name)
    text = annotations.get(FAIRWAY_PAST_USAGE_RATIO)
    if text is None:
        into.pop(key, None)
        return
    try:
        into[key] = parse_ratio(text, f"metadata.annotations[{FAIRWAY_PAST_USAGE_RATIO}]")
    except ValueError as exc:
        raise _FieldError(str(exc)) from None


def _limit_annotations(annotations: Mapping[str, str], max_depth: int) -> tuple[ResourceList, ResourceList]:
    """The borrowing and lending limits of ``fairway.io/borrowing-limit`` and ``fairway.io/lending-limit`` (JSON
    resource lists, ``{"cpu": "2", "nvidia.com/gpu": 1}``; a resource left out is unlimited)."""
    out = []
    for key in (FAIRWAY_BORROWING_LIMIT, FAIRWAY_LENDING_LIMIT):
        value = _json_annotation(annotations, key, max_depth)
        if value is not None and not isinstance(value, dict):
            raise _FieldError(f"metadata.annotations[{key}]: expected a JSON object of resource quantities")
        out.append(_rl(value, f"metadata.annotations[{key}]"))
    return out[0], out[1]


def _min_runtime_annotation(annotations: Mapping[str, str]) -> float | None:
    """The seconds of ``fairway.io/min-runtime`` (None when absent): a Go duration of whole seconds, 0 or more."""
    text = annotations.get(FAIRWAY_MIN_RUNTIME)
    if text is None:
        return None
    where = f"metadata.annotations[{FAIRWAY_MIN_RUNTIME}]"
    try:
        seconds = parse_duration(text, where)
    except PolicyError as exc:
        raise _FieldError(str(exc)) from None
    if seconds != int(seconds):
        raise _FieldError(f"{where}: {text!r} must be whole seconds (such as 90s or 2m)")
    return seconds


def _json_annotation(annotations: Mapping[str, str], key: str, max_depth: int) -> Any:
    text = annotations.get(key)
    if text is None or text.strip() == "":
        return None
    try:
        return loads_json(text, max_depth)
    except TooDeep as exc:
        raise _FieldError(f"metadata.annotations[{key}]: {exc.message}") from None
    except json.JSONDecodeError as exc:
        raise _FieldError(f"metadata.annotations[{key}]: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise _FieldError(f"metadata.annotations[{key}]: not valid JSON ({exc})") from None


def _user_limits_annotation(annotations: Mapping[str, str], max_depth: int) -> tuple[UserLimit, ...]:
    """The limits of ``fairway.io/user-limits`` (none when absent); a problem names the annotation and the entry."""
    value = _json_annotation(annotations, FAIRWAY_USER_LIMITS, max_depth)
    where = f"metadata.annotations[{FAIRWAY_USER_LIMITS}]"
    limits, problems = parse_user_limits(value, where)
    if problems:
        raise _FieldError(f"{problems[0].field}: {problems[0].message}")
    return limits


def user_annotation(annotations: Mapping[str, str], max_depth: int) -> tuple[str, tuple[str, ...]]:
    """(user, groups) an object's annotations name: YuniKorn's ``yunikorn.apache.org/user.info`` (JSON with ``user``
    and ``groups``) first, then ``fairway.io/user``; ("", ()) when neither does (its namespace is then its user)."""
    info = _json_annotation(annotations, YUNIKORN_USER_INFO, max_depth)
    if info is not None:
        where = f"metadata.annotations[{YUNIKORN_USER_INFO}]"
        if not isinstance(info, dict):
            raise _FieldError(f"{where}: expected a JSON object with user and groups")
        user, groups = info.get("user", ""), info.get("groups") or []
        if not isinstance(user, str) or len(user) > MAX_NAME:
            raise _FieldError(f"{where}.user: expected a user name of at most {MAX_NAME} characters")
        if not isinstance(groups, list) or not all(isinstance(g, str) and 0 < len(g) <= MAX_NAME for g in groups):
            raise _FieldError(f"{where}.groups: expected a list of group names of at most {MAX_NAME} characters")
        if user.strip():
            return user.strip(), tuple(dict.fromkeys(g.strip() for g in groups if g.strip()))
    plain = (annotations.get(FAIRWAY_USER) or "").strip()
    if len(plain) > MAX_NAME:
        raise _FieldError(f"metadata.annotations[{FAIRWAY_USER}]: a user name of at most {MAX_NAME} characters")
    return plain, ()


def _user_of(annotations: Mapping[str, str], max_depth: int) -> dict[str, Any]:
    """``user_annotation`` as ``PodGroupInfo`` keywords."""
    user, groups = user_annotation(annotations, max_depth)
    return {"user": user, "user_groups": groups}


# -- the loader --------------------------------------------------------------------------------------------------


def _parse_int_text(text: str, path: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _FieldError(f"{path}: {text!r} is not an integer") from None


def _times(request: ResourceList, count: int) -> ResourceList:
    return ResourceList({name: amount * count for name, amount in request.items()})


_REPLACED_NAMED = 5  # replacements named one by one; past that, one line counts the rest


def _same_object(doc: _Doc, earlier: _Doc, key: str) -> str:
    """Why ``doc`` replaces ``earlier``: the same object, or (ElasticQuota) the same quota group."""
    if doc.handler == "ElasticQuota" and (earlier.group != doc.group or doc.group == PLUGINS_QUOTA_GROUP):
        return f"both define quota group {key}"
    return "the same kind and name: the later one is kept, as kubectl apply would"


@dataclass(frozen=True, slots=True)
class GroupPod:
    """A pod of a Kueue pod group as the pod reader met it (``engine.manifests.kueuegroups`` reads the group)."""

    doc: _Doc
    task: TaskInfo
    count: int  # its kueue.x-k8s.io/pod-group-total-count
    queue: str  # its kueue.x-k8s.io/queue-name label ("": a pod Kueue does not manage)
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


class _BuilderBase:
    """The state the readers fill, in input order, and the helpers they share."""

    _read_annotations: tuple[_Doc, dict[str, str]] | None = None  # ``_annotations``' last document and its reading

    def __init__(
        self,
        docs: list[_Doc],
        warnings: list[str],
        limits: Limits,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        self.warnings = warnings
        self.limits = limits
        self.checkpoint = checkpoint
        self.by_kind = self._by_kind(docs)
        self.current: _Doc | None = None  # the document being read, for the origins
        self.origins: dict[tuple[str, str], Origin] = {}
        self.priority_classes: dict[str, PriorityClassInfo] = dict(BUILTIN_PRIORITY_CLASSES)
        self.global_default = 0  # the highest globalDefault priority class's value, that class (None: none is)
        self.global_default_class: PriorityClassInfo | None = None
        self.ns_queue: dict[str, str] = {}  # namespace -> its queue-name annotation
        self.namespaces: dict[str, NamespaceInfo] = {}
        self.rq_weight: dict[str, int] = {}
        self.rq_hard: dict[str, dict[str, int]] = {}
        self.queues: dict[str, QueueSpec] = {}
        self.hierarchy: dict[str, QueueHierarchy] = {}
        self.hierarchy_docs: dict[str, _Doc] = {}  # queue -> the document whose annotations gave its hierarchy
        self.explicit_parent: set[str] = set()  # queues whose spec.parent is set
        self.groups: dict[str, QuotaGroupSpec] = {}
        self.past_ratios: dict[str, Fraction] = {}  # node key (``engine.usage.node_key``) -> recorded ratio
        self.quota_namespaces: dict[str, tuple[str, ...]] = {}
        self.tree_id_given: set[str] = set()
        self.podgroups: dict[str, PodGroupInfo] = {}
        self.podgroup_owner: dict[str, str] = {}  # podgroup key -> "ns/job" of an owning vcjob
        self.tasks: dict[str, TaskInfo] = {}
        self.pod_jobs: set[str] = set()  # "ns/job" named by explicit pods' volcano.sh/job-name annotation
        self.auto_podgroups: dict[str, PodGroupInfo] = {}
        self.pod_users: dict[str, tuple[str, tuple[str, ...]]] = {}  # podgroup key -> its first pod's user and groups
        self.kueue_group_pods: dict[str, list[GroupPod]] = {}  # Kueue's pod groups: "ns/group" -> its pods, in order
        # Kueue's pod groups admitted only once all their pods exist: podgroup key -> pod-group-total-count
        self.kueue_pod_groups: dict[str, int] = {}
        self.kueue_max_exec: dict[str, int] = {}  # a Kueue pod group's or plain pod's max-exec-time, by podgroup key
        # live (``load_objects(live=True)``): a Kueue Job's pods are the pods it controls, its template not expanded
        self.live = False
        self.live_jobs: dict[str, str] = {}  # "ns/job" -> its uid: the Kueue Jobs whose pods join their podgroup
        self.live_pod_set_jobs: dict[str, tuple[str, str]] = {}  # the same for JobSets, ...: "ns/name" -> (kind, uid)
        self.job_pods: dict[str, list[TaskInfo]] = {}  # "ns/job" -> its pods, in input order
        self.kueue_jobs: dict[str, KueueJob] = {}
        self.policy: Policy = DEFAULT_POLICY
        self.policy_source: str | None = None
        self.eq_args: ElasticQuotaArgs | None = None
        self.local_queues: dict[tuple[str, str], str] = {}  # Kueue: (namespace, LocalQueue) -> ClusterQueue
        self.kueue_names: dict[str, KueueName] = {}  # Kueue: queue identity -> its object, where they differ
        self.kueue_weights: dict[str, Fraction] = {}  # Kueue: exact fairSharing.weight where the whole one is scaled
        self.kueue_preemption: dict[str, KueuePreemption] = {}  # Kueue: ClusterQueue spec.preemption, by identity
        # Kueue: each ClusterQueue's resource groups and flavorFungibility; the flavors (``engine.flavors``)
        self.kueue_groups: dict[str, tuple[tuple[FlavorGroup, ...], FlavorFungibility]] = {}
        self.kueue_flavors: KueueFlavors | None = None
        self.kueue_objects = False  # the input has Kueue's objects (then capacity with hierarchy is the default policy)
        # Kueue's admission levers (StrictFIFO, HoldAndDrain, namespaceSelector, admission fair sharing), the
        # WorkloadPriorityClasses by name, and Kueue's Configuration (``engine.manifests.kueueconfig``), if given
        self.admission = AdmissionDraft()
        self.workload_priority_classes: dict[str, int] = {}
        self.kueue_config: KueueConfiguration | None = None

    def _by_kind(self, docs: list[_Doc]) -> dict[str, dict[str, _Doc]]:
        """The documents by kind and key: later objects of the same kind and key replace earlier ones (as kubectl
        apply would), keeping the first position so that the output order follows the input."""
        by_kind: dict[str, dict[str, _Doc]] = {}
        replaced = 0
        for doc in docs:
            key = self._key(doc)
            bucket = by_kind.setdefault(doc.handler, {})
            earlier = bucket.get(key)
            if earlier is not None:
                replaced += 1
                if replaced <= _REPLACED_NAMED:
                    self.warnings.append(f"{doc.where}: replaces {earlier.where} ({_same_object(doc, earlier, key)})")
            bucket[key] = doc
        if replaced > _REPLACED_NAMED:
            self.warnings.append(
                f"{replaced - _REPLACED_NAMED} more objects replace an earlier one of the same kind and name"
            )
        return by_kind

    @staticmethod
    def _key(doc: _Doc) -> str:
        if doc.handler == "ElasticQuota":
            # The quota group's name: Koordinator's quota name (built-ins mapped to ours), or for
            # scheduler-plugins, which keeps one ElasticQuota per namespace, the namespace.
            if doc.group == PLUGINS_QUOTA_GROUP:
                return doc.namespace
            return _FROM_KOORD.get(doc.name, doc.name)
        if doc.handler in ("KubeSchedulerConfiguration", "KueueConfiguration"):
            return f"{doc.file}#{doc.index}#{doc.item}"
        return doc.label

    def docs(self, handler: str) -> list[_Doc]:
        return list(self.by_kind.get(handler, {}).values())

    def _run(self, doc: _Doc, fn: Callable[[_Doc], None]) -> None:
        self.current = doc
        if self.checkpoint is not None:
            self.checkpoint()
        try:
            fn(doc)
        except (_FieldError, QuantityError, PolicyError) as exc:
            raise doc.error(str(exc)) from None

    def _live_job_of(self, namespace: str, meta: Mapping[str, Any]) -> str | None:
        """Live (``live_jobs``): the key of the Kueue Job that controls a pod (its ``ownerReference`` with
        ``controller: true``, kind Job of ``batch/v1``, the Job's name and uid), else None. The Job controller's
        ``batch.kubernetes.io/job-name`` label is only a hint: a pod of another owner, or of an older Job of the
        same name, is not the Job's."""
        if not self.live_jobs:
            return None
        ref = controller_ref(meta)
        if ref is None or ref.get("kind") != "Job" or str(ref.get("apiVersion") or "").split("/")[0] != "batch":
            return None
        key = f"{namespace}/{ref.get('name') or ''}"
        return key if ref.get("uid") and self.live_jobs.get(key) == ref.get("uid") else None

    def _live_pod_set_job_of(
        self, namespace: str, meta: Mapping[str, Any], labels: Mapping[str, str]
    ) -> tuple[str, str] | None:
        """Live (``live_pod_set_jobs``): the key of the JobSet, Kubeflow job or MPIJob a pod belongs to, with the pod's
        pod set (its role), else None. As their controllers make them: a JobSet's pods (its Jobs' pods) carry
        ``jobset.sigs.k8s.io/jobset-name`` and ``jobset-uid`` and their replicated job's name; a Kubeflow job's pods
        have it as their controller and carry ``training.kubeflow.org/replica-type``; an MPIJob's workers have it as
        their controller, its launcher's pod is its Job ``<mpijob>-launcher``'s, and both carry
        ``training.kubeflow.org/job-name`` and ``job-role``. A name without the uid it had when read is not enough:
        a pod of an older object of the same name is not the object's."""
        if not self.live_pod_set_jobs:
            return None
        jobset = labels.get(JOBSET_NAME_LABEL)
        if jobset is not None:
            key = f"{namespace}/{jobset}"
            if self.live_pod_set_jobs.get(key) == ("JobSet", labels.get(JOBSET_UID_LABEL)):
                return key, labels.get(JOBSET_REPLICATED_JOB_LABEL, "")
            return None
        ref = controller_ref(meta)
        if ref is None:
            return None
        group = str(ref.get("apiVersion") or "").split("/")[0]
        role = labels.get(KUBEFLOW_REPLICA_TYPE_LABEL) or labels.get(KUBEFLOW_JOB_ROLE_LABEL) or ""
        if group == "kubeflow.org":
            key = f"{namespace}/{ref.get('name') or ''}"
            return (key, role.lower()) if self.live_pod_set_jobs.get(key) == (ref.get("kind"), ref.get("uid")) else None
        owner = labels.get(KUBEFLOW_JOB_NAME_LABEL)  # an MPIJob's launcher: its Job's pod
        if group == "batch" and owner and role == "launcher" and ref.get("name") == f"{owner}-launcher":
            key = f"{namespace}/{owner}"
            if self.live_pod_set_jobs.get(key, ("",))[0] == "MPIJob":
                return key, role
        return None

    def _replicas(self, value: object, path: str, default: int = 1) -> int:
        """A count of replicas (a whole number from 0, ``default`` when absent) within ``max_replicas``: a Volcano
        Job's task, a Kueue Job's parallelism, a JobSet's or a Kubeflow job's replicas."""
        return self._within_max_replicas(_int(value, path, default, minimum=0), path)

    def _within_max_replicas(self, count: int, path: str) -> int:
        """``count``, refused naming ``path`` when above ``max_replicas``."""
        if count > self.limits.max_replicas:
            raise _FieldError(
                f"{path}: {brief(count)} is more than {self.limits.max_replicas} ({ENV_VARS['max_replicas']})"
            )
        return count

    def _room_for_pods(self, adding: int, path: str = "") -> None:
        """Refuse a document that takes the snapshot over ``max_pods`` (before anything is built for it)."""
        total = len(self.tasks) + adding
        if total > self.limits.max_pods:
            where = f"{path}: " if path else ""
            raise _FieldError(
                f"{where}the snapshot would hold {total} pods, more than {self.limits.max_pods} "
                f"({ENV_VARS['max_pods']})"
            )

    def _room_for_podgroup(self) -> None:
        total = len(self.podgroups) + len(self.auto_podgroups) + 1
        if total > self.limits.max_podgroups:
            raise _FieldError(
                f"the snapshot would hold {total} podgroups, more than {self.limits.max_podgroups} "
                f"({ENV_VARS['max_podgroups']})"
            )

    def _annotations(self, doc: _Doc) -> dict[str, str]:
        """``doc``'s annotations as strings (``_string_map``), read once for a document that several readers ask
        about (a Kueue Job: its original parallelism, its minimum, its resume), so a value that is not a string is
        warned about once. Read-only for the callers."""
        kept = self._read_annotations
        if kept is not None and kept[0] is doc:
            return kept[1]
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        self._read_annotations = (doc, annotations)
        return annotations

    def _origin(self, kind: str, key: str, *, keep: bool = False) -> None:
        doc = self.current
        if doc is None:  # every reader runs through _run, which sets it
            raise RuntimeError(f"{kind} {key} read outside a document")
        where = (doc.file, doc.index, doc.item)
        if keep:
            self.origins.setdefault((kind, key), where)
        else:
            self.origins[(kind, key)] = where

    def _kueue_queue(self, doc: _Doc, namespace: str, labels: Mapping[str, str]) -> str | None:
        """The queue of a pod or Job labelled ``kueue.x-k8s.io/queue-name``: its LocalQueue's ClusterQueue."""
        lq = labels.get(KUEUE_QUEUE_LABEL)
        if not lq:
            return None
        cq = self.local_queues.get((namespace, lq))
        if cq is None:
            self.warnings.append(
                f"{doc.where}: label {KUEUE_QUEUE_LABEL}={lq}: no LocalQueue {namespace}/{lq} in the input; "
                f"queue {DEFAULT_QUEUE} used"
            )
            return DEFAULT_QUEUE
        return cq

    def _kueue_workload(
        self, doc: _Doc, namespace: str, labels: Mapping[str, str], podgroup: str, priority: int
    ) -> int:
        """A Kueue workload's priority: the value of the WorkloadPriorityClass its ``kueue.x-k8s.io/priority-class``
        label names (Kueue's workload priority, which orders and preempts), else ``priority``; its LocalQueue is
        remembered for admission fair sharing."""
        lq = labels.get(KUEUE_QUEUE_LABEL)
        if lq and (namespace, lq) in self.local_queues:
            self.admission.podgroup_local_queue[podgroup] = (namespace, lq)
        name = labels.get(KUEUE_PRIORITY_LABEL)
        if not name:
            return priority
        value = self.workload_priority_classes.get(name)
        if value is None:
            self.warnings.append(
                f"{doc.where}: label {KUEUE_PRIORITY_LABEL}={name}: no WorkloadPriorityClass {name} in the input; "
                f"priority {priority} used"
            )
            return priority
        return value

    def _queue_for(self, namespace: str, queue: str) -> str:
        # Volcano's PodGroup mutating webhook, for the podgroups Fairway creates as Volcano's controllers would
        # (a pod's own, a vcjob's): one left in "default" goes to its namespace's queue.
        if (not queue or queue == DEFAULT_QUEUE) and namespace in self.ns_queue:
            return self.ns_queue[namespace]
        return queue or DEFAULT_QUEUE

    def _class_priority(self, doc: _Doc, class_name: str, path: str) -> tuple[int, PriorityClassInfo | None]:
        if not class_name:
            return self.global_default, None
        pc = self.priority_classes.get(class_name)
        if pc is None:
            self.warnings.append(
                f"{doc.where}: {path}: PriorityClass {class_name} not found; priority {self.global_default} used"
            )
            return self.global_default, None
        return pc.value, pc

    def _add_group(self, spec: QuotaGroupSpec, namespaces: tuple[str, ...]) -> None:
        self._origin("ElasticQuota", spec.name)
        self.groups[spec.name] = spec
        if namespaces:
            self.quota_namespaces[spec.name] = namespaces
        else:
            self.quota_namespaces.pop(spec.name, None)


def max_exec(labels: Mapping[str, str]) -> int | None:
    """A Kueue workload's maximum execution time, its ``kueue.x-k8s.io/max-exec-time-seconds`` label (None: not
    set): a whole number of seconds above 0, as Kueue's webhook requires; a ``_FieldError`` names the label."""
    raw = labels.get(KUEUE_MAX_EXEC_LABEL)
    if raw is None:
        return None
    value = raw.strip()
    if not value.isdigit() or not 0 < int(value) <= 2**31 - 1:
        raise _FieldError(
            f"metadata.labels[{KUEUE_MAX_EXEC_LABEL}]: {raw!r} is not a whole number of seconds from 1 to {2**31 - 1}"
        )
    return int(value)
