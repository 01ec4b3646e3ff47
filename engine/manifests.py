"""Kubernetes manifests <-> engine ``Snapshot`` (for ``fairway simulate``, the importer and export).

``load_manifests`` reads YAML texts (multi-document, or ``kind: List`` as ``kubectl get -o yaml`` prints it)
and builds a ``Snapshot``; several sources merge in order, a later object of the same kind and name replacing
the earlier one. Exactly the fields listed in SIMULATE.md's "Input kinds" table are read:

==================================================  ==============================================================
kind                                                becomes
==================================================  ==============================================================
``v1 Node``                                         ``NodeInfo`` (``status.allocatable``, else ``status.capacity``)
``v1 Namespace``, ``v1 ResourceQuota``              ``NamespaceInfo`` (default queue, weight, hard limits)
``v1 Pod``                                          ``TaskInfo`` (+ a podgroup of its own when it names none)
``scheduling.volcano.sh Queue`` / ``PodGroup``      ``QueueSpec`` / ``PodGroupInfo``
``scheduling.k8s.io PriorityClass``                 ``PriorityClassInfo`` (resolves ``priorityClassName``)
``scheduling.sigs.k8s.io ElasticQuota``             Koordinator quota group (labels and annotations of §10)
``scheduling.x-k8s.io ElasticQuota``                scheduler-plugins quota: one per namespace, group = namespace
``v1 ConfigMap volcano-scheduler-configmap``        the scheduler ``Policy``
``batch.volcano.sh Job`` (vcjob)                    a PodGroup and its task pods, as Volcano's job controller does
``KubeSchedulerConfiguration`` (bare or in a        Koordinator ``ElasticQuotaArgs`` (the ``ElasticQuota`` plugin's
ConfigMap)                                          ``pluginConfig``)
==================================================  ==============================================================

Anything else (Deployments, Kueue and YuniKorn objects, CRDs, documents without a ``kind``) is skipped with a
warning naming the file, the document, the kind and the name. Computed values found on input (a queue's
``status.allocated``, Koordinator's ``runtime``/``request`` annotations, ``status.used``) are ignored, never
trusted. A document whose ``apiVersion`` is missing is read by its kind when the kind is one of the above (an
``ElasticQuota`` is then taken as Koordinator's), with a warning saying so.

``LoadResult.origins`` tells where each object came from (file, document, List item), so that a later check, such
as the tree rules ``fairway simulate`` runs, can name the document too.

Input that cannot be used raises ``ManifestError``, whose ``str()`` is one line naming the file, the 1-based
document index (and item index inside a List), the kind, the name and the field, e.g.
``snapshot.yaml: document 3 (Queue q1): spec.capability.cpu: '-1' must be greater than or equal to 0``.
Tree rules (a child's min above its parent's, cycles, ...) are not checked here: ``engine/rules.py`` does that
for every caller.

Decisions worth knowing, each following the peer named:

* Pod requests are Kubernetes' ``PodRequests``: the larger of the sum of containers (plus sidecar init
  containers) and each init container, plus ``spec.overhead``; a container limit without a request counts as
  the request (API-server defaulting).
* Pod status (Volcano ``getTaskStatus``): ``Succeeded``/``Failed``/``Unknown`` phases as such; a
  ``deletionTimestamp`` means Releasing; ``spec.nodeName`` set means Running, or Bound when ``status.phase`` is
  explicitly ``Pending``; otherwise Pending.
* A pod without ``scheduling.k8s.io/group-name`` gets ``podgroup-<pod name>`` (minMember 1, minResources = its
  request, priority class of the pod, phase from the pod), queued to the pod's ``scheduling.volcano.sh/queue-name``
  annotation, else its namespace's, else ``default`` (Volcano's podgroup controller and PodGroup webhook).
* A PodGroup manifest that names no queue takes its namespace's ``scheduling.volcano.sh/queue-name`` (Volcano's
  webhook); one that names ``default`` keeps it, since a manifest read back from a cluster is past the webhook.
* A vcjob is expanded as Volcano's job controller would once its PodGroup is admitted (pods ``<job>-<task>-<i>``,
  Pending; a PodGroup named like the job, minMember = ``minAvailable``, minTaskMember and minResources computed as
  the controller does, queue ``default`` replaced by the namespace's). A vcjob whose pods (``volcano.sh/job-name``)
  or PodGroup (owner reference) are already in the input is not expanded again.
* A pod's ``spec.schedulerName`` is not read: the snapshot is what Fairway's engine schedules.
* Namespace weight: the highest ``volcano.sh/namespace.weight`` over the namespace's ResourceQuotas; a value that
  is missing, not a whole number or below 1 reads as 1 (SIMULATE.md; Volcano rounded fractions up).
* Koordinator's ``koordinator-root-quota`` / ``-system-quota`` / ``-default-quota`` are our ``root`` / ``system`` /
  ``default``; a quota labelled ``is-root: "true"`` (a tree root of a multi-tree setup) has no parent; a missing
  ``tree-id`` is inherited from the parent, as Koordinator's mutating webhook does.
* Label values must be strings in Kubernetes; the documentation examples write ``is-parent: false`` unquoted, so a
  boolean or number is accepted as its text, with a warning.

Fairway-only annotations (prefix ``fairway.io/``) carry the two values no peer's manifest can express, so that
``dump_snapshot`` -> ``load_manifests`` gives back an equal snapshot: ``fairway.io/priority`` on a PodGroup whose
priority differs from its priority class, ``fairway.io/min-scale-exempt`` on an ElasticQuota. Session-internal
task statuses (Allocated, Binding, Pipelined) have no manifest form: they are written as Bound or Pending.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import yaml

from engine.fairshare.elastic import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.fairshare.queues import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.limits import ENV_VARS, Limits, TooDeep, YAMLTooDeep, brief, load_yaml, load_yaml_all, loads_json
from engine.objects import (
    BUILTIN_PRIORITY_CLASSES,
    BUILTIN_QUEUES,
    BUILTIN_QUOTA_GROUPS,
    NamespaceInfo,
    NodeInfo,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    PriorityClassInfo,
    QueueHierarchy,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
    own_podgroup_name,
)
from engine.resources import QuantityError, ResourceList, format_quantity, parse_quantity, parse_resource_list
from engine.session.policy import DEFAULT_POLICY, ElasticQuotaArgs, Policy, PolicyError, parse_elastic_quota_args

__all__ = ["LoadResult", "ManifestError", "dump_snapshot", "dump_yaml", "load_manifests"]

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

FAIRWAY_PRIORITY = "fairway.io/priority"
FAIRWAY_MIN_SCALE_EXEMPT = "fairway.io/min-scale-exempt"

_QUEUE_STATES = ("Open", "Closed", "Closing", "Unknown")
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# Reading goes through engine.limits (libyaml, after the depth check); writing uses libyaml's dumper when present.
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
_CORE_KINDS = ("Node", "Namespace", "ResourceQuota", "Pod", "ConfigMap")
_HANDLED: dict[tuple[str, str], str] = {
    **{("", k): k for k in _CORE_KINDS},
    ("scheduling.volcano.sh", "Queue"): "Queue",
    ("scheduling.volcano.sh", "PodGroup"): "PodGroup",
    ("scheduling.k8s.io", "PriorityClass"): "PriorityClass",
    ("scheduling.sigs.k8s.io", "ElasticQuota"): "ElasticQuota",
    ("scheduling.x-k8s.io", "ElasticQuota"): "ElasticQuota",
    ("batch.volcano.sh", "Job"): "VolcanoJob",
    ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration"): "KubeSchedulerConfiguration",
}
# The group a kind is read as when apiVersion is missing (Job is ambiguous: batch/v1 or Volcano's, so it is not).
_INFERRED_GROUP: dict[str, str] = {
    **{k: "" for k in _CORE_KINDS},
    "Queue": "scheduling.volcano.sh",
    "PodGroup": "scheduling.volcano.sh",
    "PriorityClass": "scheduling.k8s.io",
    "ElasticQuota": "scheduling.sigs.k8s.io",
    "KubeSchedulerConfiguration": "kubescheduler.config.k8s.io",
}
_CLUSTER_SCOPED = frozenset({"Node", "Namespace", "Queue", "PriorityClass", "KubeSchedulerConfiguration"})


def _iter_documents(file: str, text: str, limits: Limits) -> Iterator[tuple[int, object]]:
    index = 0
    try:
        # the depth is checked on the whole text before any document is built (nothing recurses deeply)
        for index, data in enumerate(load_yaml_all(text, limits.max_yaml_depth), start=1):
            yield index, data
    except YAMLTooDeep as exc:
        raise ManifestError(file, max(exc.document, 1), None, None, _yaml_problem(exc)) from None
    except yaml.YAMLError as exc:
        raise ManifestError(file, index + 1, None, None, f"invalid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
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
    return docs


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
    doc = _Doc(file, index, item, obj, kind, group, name, namespace, handler)
    if handler != "KubeSchedulerConfiguration":
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


def _rl(value: object, path: str) -> ResourceList:
    """``parse_resource_list`` with a cache of already-parsed pairs; errors name ``path`` as it does."""
    if value is None:
        return ResourceList()
    if isinstance(value, Mapping) and len(value) <= 64:
        out: dict[str, int] = {}
        for name, raw in value.items():
            amount = _QUANTITY_CACHE.get((name, raw)) if type(raw) in _CACHEABLE and isinstance(name, str) else None
            if amount is None:
                break
            out[name] = amount
        else:
            return ResourceList(out)
    parsed = parse_resource_list(value, path)
    if isinstance(value, Mapping):
        if len(_QUANTITY_CACHE) > 4096:
            _QUANTITY_CACHE.clear()
        for name, raw in value.items():
            if type(raw) in _CACHEABLE:
                _QUANTITY_CACHE[(name, raw)] = parsed[name]
    return parsed


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


def _go_bool(text: str) -> bool | None:
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    return None


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


# -- the loader --------------------------------------------------------------------------------------------------


def load_manifests(
    sources: Sequence[tuple[str, str]],
    *,
    limits: Limits | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> LoadResult:
    """Read (file name, YAML text) sources, in order, into a ``Snapshot``. Raises ``ManifestError``.

    ``limits`` (default ``Limits()``) bound the nesting depth, the replicas of a vcjob task and the pods and
    podgroups of the snapshot: input over them is a ``ManifestError`` naming the document. ``checkpoint`` is called
    between documents (a ``Deadline.check``: it raises to stop the work)."""
    limits = limits or Limits()
    warnings: list[str] = []
    docs = _split_documents(sources, warnings, limits)
    return _Builder(docs, warnings, limits, checkpoint).build()


class _Builder:
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
        # Later objects of the same kind and key replace earlier ones (as kubectl apply would), keeping the
        # first position so that the output order follows the input.
        self.by_kind: dict[str, dict[str, _Doc]] = {}
        for doc in docs:
            key = self._key(doc)
            bucket = self.by_kind.setdefault(doc.handler, {})
            earlier = bucket.get(key)
            if (
                earlier is not None
                and doc.handler == "ElasticQuota"
                and (earlier.group != doc.group or doc.group == "scheduling.x-k8s.io")
            ):
                self.warnings.append(f"{doc.where}: replaces {earlier.where} (both define quota group {key})")
            bucket[key] = doc

    @staticmethod
    def _key(doc: _Doc) -> str:
        if doc.handler == "ElasticQuota":
            # The quota group's name: Koordinator's quota name (built-ins mapped to ours), or for
            # scheduler-plugins, which keeps one ElasticQuota per namespace, the namespace.
            if doc.group == "scheduling.x-k8s.io":
                return doc.namespace
            return _FROM_KOORD.get(doc.name, doc.name)
        if doc.handler == "KubeSchedulerConfiguration":
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

    def _origin(self, kind: str, key: str, *, keep: bool = False) -> None:
        where = (self.current.file, self.current.index, self.current.item)
        if keep:
            self.origins.setdefault((kind, key), where)
        else:
            self.origins[(kind, key)] = where

    def build(self) -> LoadResult:
        self.origins: dict[tuple[str, str], Origin] = {}
        self.priority_classes: dict[str, PriorityClassInfo] = dict(BUILTIN_PRIORITY_CLASSES)
        for doc in self.docs("PriorityClass"):
            self._run(doc, self._priority_class)
        self.global_default = max((pc.value for pc in self.priority_classes.values() if pc.global_default), default=0)

        self.ns_queue: dict[str, str] = {}
        self.namespaces: dict[str, NamespaceInfo] = {}
        for doc in self.docs("Namespace"):
            self._run(doc, self._namespace)
        self.rq_weight: dict[str, int] = {}
        self.rq_hard: dict[str, dict[str, int]] = {}
        for doc in self.docs("ResourceQuota"):
            self._run(doc, self._resource_quota)

        self.queues: dict[str, QueueSpec] = {}
        self.hierarchy: dict[str, QueueHierarchy] = {}
        for doc in self.docs("Queue"):
            self._run(doc, self._queue)

        self.groups: dict[str, QuotaGroupSpec] = {}
        self.quota_namespaces: dict[str, tuple[str, ...]] = {}
        self.tree_id_given: set[str] = set()
        for doc in self.docs("ElasticQuota"):
            self._run(doc, self._elastic_quota)
        self._inherit_tree_ids()

        self.podgroups: dict[str, PodGroupInfo] = {}
        self.podgroup_owner: dict[str, str] = {}  # podgroup key -> "ns/job" of an owning vcjob
        self.tasks: dict[str, TaskInfo] = {}
        self.pod_jobs: set[str] = set()  # "ns/job" named by explicit pods' volcano.sh/job-name annotation
        self.auto_podgroups: dict[str, PodGroupInfo] = {}
        for doc in self.docs("PodGroup"):
            self._run(doc, self._podgroup)

        for doc in self.docs("Pod"):
            self._run(doc, self._pod)
        for doc in self.docs("VolcanoJob"):
            self._run(doc, self._volcano_job)
        for key, pg in self.auto_podgroups.items():
            self.podgroups.setdefault(key, pg)

        self.policy: Policy = DEFAULT_POLICY
        self.policy_source: str | None = None
        self.eq_args: ElasticQuotaArgs | None = None
        for doc in self.docs("ConfigMap"):
            self._run(doc, self._configmap)
        for doc in self.docs("KubeSchedulerConfiguration"):
            self._run(doc, self._kube_scheduler_configuration)

        nodes: dict[str, NodeInfo] = {}
        for doc in self.docs("Node"):
            self._run(doc, lambda d: nodes.__setitem__(d.name, self._node(d)))
            self._origin("Node", doc.name)

        self._complete_namespaces()
        snapshot = Snapshot(
            nodes=nodes,
            tasks=self.tasks,
            podgroups=self.podgroups,
            queues=self.queues,
            quota_groups=self.groups,
            namespaces=self.namespaces,
            priority_classes=self.priority_classes,
            policy=self.policy,
            quota_namespaces=self.quota_namespaces,
            queue_hierarchy=self.hierarchy,
            elastic_quota_args=self.eq_args,
        )
        self.warnings.extend(snapshot.problems())
        return LoadResult(
            snapshot=snapshot, warnings=self.warnings, policy_source=self.policy_source, origins=self.origins
        )

    # -- PriorityClass ------------------------------------------------------------------------------------------
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

    # -- Namespace and ResourceQuota -----------------------------------------------------------------------------
    def _namespace(self, doc: _Doc) -> None:
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        queue = annotations.get(QUEUE_NAME_ANNOTATION) or None
        if queue:
            self.ns_queue[doc.name] = queue
        self.namespaces[doc.name] = NamespaceInfo(name=doc.name, queue=queue)
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
            )

    # -- Queue ----------------------------------------------------------------------------------------------------
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
        if state not in _QUEUE_STATES:
            raise _FieldError(f"status.state: {state!r} must be one of {', '.join(_QUEUE_STATES)}")
        parent: str | None = _str(spec.get("parent"), "spec.parent", ROOT_QUEUE) or ROOT_QUEUE
        if doc.name == ROOT_QUEUE:
            parent = None
        self._origin("Queue", doc.name)
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
        )
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        hierarchy = _queue_hierarchy(annotations)
        if hierarchy is not None:
            self.hierarchy[doc.name] = hierarchy
        else:
            self.hierarchy.pop(doc.name, None)

    # -- ElasticQuota ---------------------------------------------------------------------------------------------
    def _elastic_quota(self, doc: _Doc) -> None:
        spec = doc.spec
        quota_min = _rl(spec.get("min"), "spec.min")
        quota_max = _rl(spec.get("max"), "spec.max")
        if doc.group == "scheduling.x-k8s.io":
            # scheduler-plugins: one ElasticQuota per namespace, flat; the group is named like the namespace.
            self._add_group(QuotaGroupSpec(name=doc.namespace, min=quota_min, max=quota_max), namespaces=())
            return
        labels = _string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings)
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        name = _FROM_KOORD.get(doc.name, doc.name)
        is_root = name == ROOT_GROUP
        parent_label = labels.get(KOORD_PARENT, "")
        parent: str | None = _FROM_KOORD.get(parent_label, parent_label) or ROOT_GROUP
        if is_root or labels.get(KOORD_IS_ROOT) == "true":
            parent = None
        is_parent_label = labels.get(KOORD_IS_PARENT)
        allow_lent_label = labels.get(KOORD_ALLOW_LENT)
        shared_raw = _json_annotation(annotations, KOORD_SHARED_WEIGHT, self.limits.max_json_depth)
        shared: ResourceList | None = None
        if shared_raw is not None:
            shared = _rl(shared_raw, f"metadata.annotations[{KOORD_SHARED_WEIGHT}]")
            if shared.is_zero():
                shared = None  # Koordinator: a zero shared weight falls back to max
        ns_raw = _json_annotation(annotations, KOORD_NAMESPACES, self.limits.max_json_depth)
        namespaces: tuple[str, ...] = ()
        if ns_raw is not None:
            if not isinstance(ns_raw, list) or not all(isinstance(n, str) for n in ns_raw):
                raise _FieldError(f"metadata.annotations[{KOORD_NAMESPACES}]: expected a JSON list of namespace names")
            namespaces = tuple(ns_raw)
        if KOORD_TREE_ID in labels:
            self.tree_id_given.add(name)
        else:
            self.tree_id_given.discard(name)
        spec_obj = QuotaGroupSpec(
            name=name,
            parent=parent,
            # The root quota is a parent that lends nothing unless its labels say otherwise.
            is_parent=(is_parent_label == "true") if is_parent_label is not None else is_root,
            min=quota_min,
            max=quota_max,
            shared_weight=shared,
            allow_lent=(allow_lent_label != "false") if allow_lent_label is not None else not is_root,
            tree_id=labels.get(KOORD_TREE_ID, ""),
            min_scale_exempt=annotations.get(FAIRWAY_MIN_SCALE_EXEMPT) == "true",
        )
        self._add_group(spec_obj, namespaces)

    def _add_group(self, spec: QuotaGroupSpec, namespaces: tuple[str, ...]) -> None:
        self._origin("ElasticQuota", spec.name)
        self.groups[spec.name] = spec
        if namespaces:
            self.quota_namespaces[spec.name] = namespaces
        else:
            self.quota_namespaces.pop(spec.name, None)

    def _inherit_tree_ids(self) -> None:
        # Koordinator's mutating webhook copies a missing tree-id from the parent quota.
        for name in list(self.groups):
            spec = self.groups[name]
            if name in self.tree_id_given or spec.tree_id or spec.parent is None:
                continue
            seen = {name}
            parent: str | None = spec.parent
            while parent is not None and parent in self.groups and parent not in seen:
                seen.add(parent)
                ancestor = self.groups[parent]
                if ancestor.tree_id:
                    self.groups[name] = _replace_group(spec, tree_id=ancestor.tree_id)
                    break
                parent = ancestor.parent

    # -- PodGroup ---------------------------------------------------------------------------------------------------
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
        )
        for i, ref in enumerate(_list(doc.meta.get("ownerReferences"), "metadata.ownerReferences")):
            ref_map = _map(ref, f"metadata.ownerReferences[{i}]")
            if ref_map.get("kind") == "Job" and str(ref_map.get("apiVersion", "")).startswith("batch.volcano.sh/"):
                self.podgroup_owner[key] = f"{doc.namespace}/{ref_map.get('name')}"

    def _queue_for(self, namespace: str, queue: str) -> str:
        # Volcano's PodGroup mutating webhook, for the podgroups Fairway creates as Volcano's controllers would
        # (a pod's own, a vcjob's): one left in "default" goes to its namespace's queue.
        if (not queue or queue == DEFAULT_QUEUE) and namespace in self.ns_queue:
            return self.ns_queue[namespace]
        return queue or DEFAULT_QUEUE

    # -- Pod -----------------------------------------------------------------------------------------------------------
    def _pod(self, doc: _Doc) -> None:
        self._room_for_pods(1)
        meta, spec, status = doc.meta, doc.spec, doc.status
        labels = _string_map(meta.get("labels"), "metadata.labels", doc, self.warnings)
        annotations = _string_map(meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        task = self._task(doc, doc.namespace, doc.name, labels, annotations, spec, status, meta)
        group_name = annotations.get(GROUP_NAME_ANNOTATION, "")
        if not group_name:
            self._add_own_podgroup(doc, task, annotations)
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
    ) -> TaskInfo:
        request = _pod_request(spec, path)
        class_name = _str(spec.get("priorityClassName"), f"{path}.priorityClassName")
        class_priority, pc = self._class_priority(doc, class_name, f"{path}.priorityClassName")
        priority = _int(spec.get("priority"), f"{path}.priority", class_priority, minimum=-(2**31), maximum=2**31 - 1)
        default_policy = pc.preemption_policy if pc is not None else "PreemptLowerPriority"
        preemption_policy = _str(spec.get("preemptionPolicy"), f"{path}.preemptionPolicy", default_policy)
        # Volcano reads the annotation first, then the label (api.GetPodPreemptable); a value ParseBool
        # rejects counts as false.
        volcano_preemptable: bool | None = None
        for source, values in (("annotation", annotations), ("label", labels)):
            if PREEMPTABLE_KEY in values:
                parsed = _go_bool(values[PREEMPTABLE_KEY])
                if parsed is None:
                    self.warnings.append(
                        f"{doc.where}: {source} {PREEMPTABLE_KEY}={values[PREEMPTABLE_KEY]!r} is not a boolean; "
                        "read as false, as Volcano does"
                    )
                    parsed = False
                volcano_preemptable = parsed
                break
        quota_label = labels.get(KOORD_QUOTA_NAME) or None
        if quota_label is not None:
            quota_label = _FROM_KOORD.get(quota_label, quota_label)
        quota_preemptible = labels.get(KOORD_PREEMPTIBLE) != "false"
        node = _str(spec.get("nodeName"), f"{path}.nodeName") or None
        phase = _str(status.get("phase"), "status.phase")
        deleting = meta.get("deletionTimestamp") not in (None, "")
        task_status = _task_status(phase, node, deleting)
        tolerations = tuple(
            _toleration(t, f"{path}.tolerations[{i}]")
            for i, t in enumerate(_list(spec.get("tolerations"), f"{path}.tolerations"))
        )
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
        )

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
        self.auto_podgroups[key] = PodGroupInfo(
            namespace=task.namespace,
            name=pg_name,
            queue=self._queue_for(task.namespace, annotations.get(QUEUE_NAME_ANNOTATION, "")),
            min_member=1,
            min_resources=task.request,
            priority=self._class_priority(doc, task.priority_class, "spec.priorityClassName")[0],
            priority_class=task.priority_class,
            phase=phase,
            creation_timestamp=task.creation_timestamp or 0.0,
        )

    # -- Volcano Job (vcjob) ---------------------------------------------------------------------------------------
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
        tasks_raw = _list(spec.get("tasks"), "spec.tasks")
        roles: list[tuple[str, int, int, Mapping[str, Any], str]] = []  # name, replicas, minAvailable, template, path
        for i, raw in enumerate(tasks_raw):
            path = f"spec.tasks[{i}]"
            task_spec = _map(raw, path)
            # Volcano's job webhook names an unnamed task "default<i>" and defaults minAvailable to replicas.
            role = _str(task_spec.get("name"), f"{path}.name") or f"default{i}"
            replicas = _int(task_spec.get("replicas"), f"{path}.replicas", 0, minimum=0)
            if replicas > self.limits.max_replicas:
                raise _FieldError(
                    f"{path}.replicas: {brief(replicas)} is more than {self.limits.max_replicas} "
                    f"({ENV_VARS['max_replicas']})"
                )
            min_available = _int(task_spec.get("minAvailable"), f"{path}.minAvailable", replicas, minimum=0)
            template = _map(task_spec.get("template"), f"{path}.template")
            roles.append((role, replicas, min_available, template, path))
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

        role_requests: list[tuple[int, int, int, ResourceList]] = []  # priority, replicas, minAvailable, request
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
        )

    # -- ConfigMap and KubeSchedulerConfiguration ------------------------------------------------------------------
    def _configmap(self, doc: _Doc) -> None:
        data = _map(doc.obj.get("data"), "data")
        if doc.name == SCHEDULER_CONFIGMAP:
            text = data.get(SCHEDULER_CONF_KEY)
            if not isinstance(text, str):
                raise _FieldError(f"data[{SCHEDULER_CONF_KEY!r}]: missing (the scheduler policy)")
            try:
                policy = Policy.from_yaml(text, max_depth=self.limits.max_yaml_depth)
            except PolicyError as exc:
                raise _FieldError(f"data[{SCHEDULER_CONF_KEY!r}]: {exc}") from None
            self.policy = policy
            self.policy_source = doc.where
            self.warnings.extend(f"{doc.where}: policy: {w}" for w in policy.warnings)
            return
        for key, text in data.items():
            if isinstance(text, str) and "KubeSchedulerConfiguration" in text:
                try:
                    config = load_yaml(text, self.limits.max_yaml_depth)
                except yaml.YAMLError as exc:
                    raise _FieldError(f"data[{key!r}]: invalid YAML: {_yaml_problem(exc)}") from None
                if (
                    isinstance(config, Mapping)
                    and config.get("kind") == "KubeSchedulerConfiguration"
                    and self._elastic_quota_plugin_args(doc, config, f"data[{key!r}]")
                ):
                    return
        self.warnings.append(f"{doc.where}: ConfigMap {doc.label} is not {SCHEDULER_CONFIGMAP}; skipped")

    def _kube_scheduler_configuration(self, doc: _Doc) -> None:
        if not self._elastic_quota_plugin_args(doc, doc.obj, ""):
            self.warnings.append(f"{doc.where}: no ElasticQuota plugin arguments; skipped")

    def _elastic_quota_plugin_args(self, doc: _Doc, config: Mapping[str, Any], prefix: str) -> bool:
        found = False
        dot = f"{prefix}." if prefix else ""
        for i, profile in enumerate(_list(config.get("profiles"), f"{dot}profiles")):
            profile_map = _map(profile, f"{dot}profiles[{i}]")
            for j, entry in enumerate(_list(profile_map.get("pluginConfig"), f"{dot}profiles[{i}].pluginConfig")):
                entry_map = _map(entry, f"{dot}profiles[{i}].pluginConfig[{j}]")
                if entry_map.get("name") != "ElasticQuota":
                    continue
                args = _map(entry_map.get("args"), f"{dot}profiles[{i}].pluginConfig[{j}].args")
                try:
                    self.eq_args = parse_elastic_quota_args(args)
                except PolicyError as exc:
                    raise _FieldError(f"{dot}profiles[{i}].pluginConfig[{j}].args: {exc}") from None
                found = True
        return found

    # -- Node ------------------------------------------------------------------------------------------------------------
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


# -- helpers for the builder --------------------------------------------------------------------------------------


def _hard_base_resource(key: str) -> str:
    """The resource whose unit a ResourceQuota key uses: ``limits.memory`` is in bytes like ``memory``."""
    for prefix in ("requests.", "limits."):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def _parse_int_text(text: str, path: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _FieldError(f"{path}: {text!r} is not an integer") from None


def _replace_group(spec: QuotaGroupSpec, **changes: Any) -> QuotaGroupSpec:
    return dataclasses.replace(spec, **changes)


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


def _container_request(raw: object, path: str) -> tuple[ResourceList, bool]:
    """A container's requests (a limit without a request counts as the request) and whether it is a sidecar."""
    c = _map(raw, path)
    resources = _map(c.get("resources"), f"{path}.resources")
    requests = dict(_rl(resources.get("requests"), f"{path}.resources.requests"))
    limits = _rl(resources.get("limits"), f"{path}.resources.limits")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    sidecar = c.get("restartPolicy") == "Always"
    return ResourceList(requests), sidecar


def _pod_request(spec: Mapping[str, Any], path: str = "spec") -> ResourceList:
    """Kubernetes' PodRequests: max(containers + sidecars, each init container + earlier sidecars) + overhead."""
    total = ResourceList.total(
        _container_request(c, f"{path}.containers[{i}]")[0]
        for i, c in enumerate(_list(spec.get("containers"), f"{path}.containers"))
    )
    sidecars = ResourceList()
    init_peak = ResourceList()
    for i, c in enumerate(_list(spec.get("initContainers"), f"{path}.initContainers")):
        request, sidecar = _container_request(c, f"{path}.initContainers[{i}]")
        if sidecar:
            total = total + request
            sidecars = sidecars + request
            init_peak = init_peak.maximum(sidecars)
        else:
            init_peak = init_peak.maximum(request + sidecars)
    return total.maximum(init_peak) + _rl(spec.get("overhead"), f"{path}.overhead")


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


def _times(request: ResourceList, count: int) -> ResourceList:
    return ResourceList({name: amount * count for name, amount in request.items()})


# -- dump --------------------------------------------------------------------------------------------------------


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
        out.extend(_dump_namespace(ns))
    for queue in snapshot.queues.values():
        if BUILTIN_QUEUES.get(queue.name) == queue and queue.name not in snapshot.queue_hierarchy:
            continue
        out.append(_dump_queue(queue, snapshot.queue_hierarchy.get(queue.name)))
    for group in snapshot.quota_groups.values():
        if BUILTIN_QUOTA_GROUPS.get(group.name) == group and group.name not in snapshot.quota_namespaces:
            continue
        out.append(_dump_quota_group(group, snapshot))
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


def _quantities(rl: ResourceList) -> dict[str, str]:
    return rl.to_quantities()


def _dump_namespace(ns: NamespaceInfo) -> list[dict[str, Any]]:
    meta: dict[str, Any] = {"name": ns.name}
    if ns.queue:
        meta["annotations"] = {QUEUE_NAME_ANNOTATION: ns.queue}
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}]
    hard: dict[str, Any] = {}
    if ns.weight != 1:
        hard[NAMESPACE_WEIGHT_KEY] = str(ns.weight)
    for key, amount in sorted((ns.hard or ResourceList()).items()):
        hard[key] = format_quantity(amount, _hard_base_resource(key))
    if hard:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "fairway", "namespace": ns.name},
                "spec": {"hard": hard},
            }
        )
    return docs


def _dump_queue(queue: QueueSpec, hierarchy: QueueHierarchy | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": queue.weight, "reclaimable": queue.reclaimable}
    if queue.parent is not None and queue.name != ROOT_QUEUE:
        spec["parent"] = queue.parent
    if queue.capability:
        spec["capability"] = _quantities(queue.capability)
    if queue.deserved:
        spec["deserved"] = _quantities(queue.deserved)
    if queue.guarantee:
        spec["guarantee"] = {"resource": _quantities(queue.guarantee)}
    if queue.priority:
        spec["priority"] = queue.priority
    meta: dict[str, Any] = {"name": queue.name}
    if hierarchy is not None:
        meta["annotations"] = {
            HIERARCHY_ANNOTATION: "/".join(hierarchy.path),
            HIERARCHY_WEIGHTS_ANNOTATION: "/".join(_format_weight(w) for w in hierarchy.weights),
        }
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": meta,
        "spec": spec,
        "status": {"state": queue.state},
    }


def _format_weight(weight: float) -> str:
    return str(int(weight)) if weight == int(weight) else repr(weight)


def _dump_quota_group(group: QuotaGroupSpec, snapshot: Snapshot) -> dict[str, Any]:
    name = _TO_KOORD.get(group.name, group.name)
    labels: dict[str, str] = {
        KOORD_IS_PARENT: "true" if group.is_parent else "false",
        KOORD_ALLOW_LENT: "true" if group.allow_lent else "false",
    }
    if group.parent is not None:
        labels[KOORD_PARENT] = _TO_KOORD.get(group.parent, group.parent)
    elif group.name != ROOT_GROUP:
        labels[KOORD_PARENT] = KOORD_ROOT
        labels[KOORD_IS_ROOT] = "true"
    if group.tree_id or group.parent not in (None, ROOT_GROUP):
        labels[KOORD_TREE_ID] = group.tree_id  # written even when empty, so that nothing is inherited on reading
    annotations: dict[str, str] = {}
    if group.shared_weight is not None:
        annotations[KOORD_SHARED_WEIGHT] = json.dumps(_quantities(group.shared_weight))
    if snapshot.quota_namespaces.get(group.name):
        annotations[KOORD_NAMESPACES] = json.dumps(list(snapshot.quota_namespaces[group.name]))
    if group.min_scale_exempt:
        annotations[FAIRWAY_MIN_SCALE_EXEMPT] = "true"
    meta: dict[str, Any] = {
        "name": name,
        "namespace": group.name if group.name in snapshot.namespaces else "default",
        "labels": labels,
    }
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": meta,
        "spec": {"min": _quantities(group.min), "max": _quantities(group.max)},
    }


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
        spec["minResources"] = _quantities(pg.min_resources)
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


_STATUS_PHASE: dict[TaskStatus, str | None] = {
    TaskStatus.PENDING: None,
    TaskStatus.PIPELINED: None,
    TaskStatus.ALLOCATED: "Pending",
    TaskStatus.BINDING: "Pending",
    TaskStatus.BOUND: "Pending",
    TaskStatus.RUNNING: "Running",
    TaskStatus.RELEASING: "Running",
    TaskStatus.SUCCEEDED: "Succeeded",
    TaskStatus.FAILED: "Failed",
    TaskStatus.UNKNOWN: "Unknown",
}


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
        "containers": [{"name": "main", "resources": {"requests": _quantities(task.request)}}],
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
    phase = _STATUS_PHASE[task.status]
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
            "allocatable": _quantities(node.allocatable),
            "conditions": [{"type": "Ready", "status": "True" if node.ready else "False"}],
        },
    }
