"""Kueue's admission levers beyond quota, read beside the tree (``engine.manifests.kueue``) into
``engine.admission.AdmissionLevers`` and the podgroups' priorities:

* a ClusterQueue's ``spec.queueingStrategy`` (``BestEffortFIFO``, Kueue's default, or ``StrictFIFO``);
* its ``spec.stopPolicy: HoldAndDrain`` (the queue is Closed and drained; ``Hold`` only closes it);
* its ``spec.namespaceSelector`` (a ``metav1.LabelSelector``; the labels come from the input's Namespace objects,
  plus ``kubernetes.io/metadata.name``). Kueue reads a missing selector as one that matches nothing; Fairway reads
  it as no selector (every namespace), so that a ClusterQueue written without one admits as it always did here;
* its ``spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing`` with the Configuration's
  ``admissionFairSharing`` (``engine.manifests.kueueconfig``), a LocalQueue's ``spec.fairSharing.weight`` and its
  recorded usage ``status.fairSharing.admissionFairSharingStatus.consumedResources`` (Kueue's own record of the
  decayed past; Fairway has no other source of a LocalQueue's history);
* a ``WorkloadPriorityClass`` (``value``), named by a Job's or pod's ``kueue.x-k8s.io/priority-class`` label: the
  podgroup's priority.

A Volcano Queue takes the first lever through the annotation ``fairway.io/queueing-strategy: StrictFIFO``, and any
of them through ``fairway.io/kueue`` (``FAIRWAY_KUEUE``: the JSON object a stored queue's ``kueue`` field holds,
``engine.kueuepolicy``; ``volcano_queue_levers``), which ``fairway export --format volcano`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import yaml

from engine.admission import (
    SELECTOR_OPERATORS,
    AdmissionDraft,
    LabelSelector,
    LocalQueueUsage,
    SelectorTerm,
    namespace_labels,
)
from engine.kueuepolicy import QUEUEING_STRATEGIES, KueuePolicy, parse_kueue_policy
from engine.limits import load_yaml
from engine.manifests.common import _Doc, _FieldError, _int, _json_annotation, _list, _map, _rl, _str
from engine.manifests.core import CoreReaders
from engine.manifests.kueueconfig import (
    KUEUE_CONFIG_GROUP,
    KUEUE_CONFIG_KEY,
    apply_wait_for_pods_ready,
    is_kueue_configuration,
    read_kueue_configuration,
)
from engine.objects import KueueName, KueuePreemption
from engine.resources import QuantityError, parse_exact_quantity

__all__ = [
    "FAIRWAY_KUEUE",
    "FAIRWAY_QUEUEING_STRATEGY",
    "QUEUEING_STRATEGIES",
    "KueueLeverReaders",
    "read_label_selector",
    "read_queueing_strategy",
    "take_queue_levers",
    "volcano_queue_levers",
]

USAGE_BASED = "UsageBasedAdmissionFairSharing"
# a Volcano Queue's queueing strategy (Kueue's ``queueingStrategy``; Volcano's Queue has no such field)
FAIRWAY_QUEUEING_STRATEGY = "fairway.io/queueing-strategy"
# a Volcano Queue's Kueue levers (``engine.kueuepolicy``: a queue's ``kueue`` field as JSON)
FAIRWAY_KUEUE = "fairway.io/kueue"


def volcano_queue_levers(annotations: Mapping[str, str], max_depth: int) -> dict[str, Any] | None:
    """A Volcano Queue's Kueue levers: ``fairway.io/kueue`` with ``fairway.io/queueing-strategy`` (None: none); a
    bad value is a ``_FieldError`` naming the annotation and the field."""
    where = f"metadata.annotations[{FAIRWAY_KUEUE}]"
    value, problems = parse_kueue_policy(_json_annotation(annotations, FAIRWAY_KUEUE, max_depth), where)
    if problems:
        raise _FieldError(f"{problems[0].field}: {problems[0].message}")
    strategy = read_queueing_strategy(
        annotations.get(FAIRWAY_QUEUEING_STRATEGY), f"metadata.annotations[{FAIRWAY_QUEUEING_STRATEGY!r}]"
    )
    if strategy == "StrictFIFO":
        value = {**(value or {}), "queueingStrategy": strategy}
    return value


def take_queue_levers(
    draft: AdmissionDraft,
    preemption: dict[str, KueuePreemption],
    weights: dict[str, Fraction],
    names: dict[str, KueueName],
    queue: str,
    value: Mapping[str, Any] | None,
) -> bool:
    """The levers of a Volcano Queue's ``value`` into the readers' tables (any the queue had before dropped);
    whether its stop policy closes it."""
    for lever in (draft.strict_fifo, draft.draining, draft.held, draft.fair_sharing_queues):
        lever.discard(queue)
    draft.namespace_selectors.pop(queue, None)
    preemption.pop(queue, None)
    weights.pop(queue, None)
    names.pop(queue, None)
    if not value:
        return False
    policy = KueuePolicy.of(value, queue)
    if policy.strict_fifo:
        draft.strict_fifo.add(queue)
    if policy.stop_policy != "None":
        (draft.draining if policy.stop_policy == "HoldAndDrain" else draft.held).add(queue)
    if policy.namespace_selector is not None:
        draft.namespace_selectors[queue] = policy.namespace_selector
    if policy.usage_based:
        draft.fair_sharing_queues.add(queue)
    if policy.preemption is not None:
        preemption[queue] = policy.preemption
    if policy.weight is not None:
        weights[queue] = policy.weight
    if policy.kueue_name is not None:
        names[queue] = policy.kueue_name
    return policy.stop_policy != "None"


def read_queueing_strategy(value: object, path: str) -> str:
    """``BestEffortFIFO`` (the default) or ``StrictFIFO``; anything else is a ``_FieldError`` naming ``path``."""
    strategy = _str(value, path) or "BestEffortFIFO"
    if strategy not in QUEUEING_STRATEGIES:
        raise _FieldError(f"{path}: {strategy!r} is not one of {', '.join(QUEUEING_STRATEGIES)}")
    return strategy


def read_label_selector(value: object, path: str) -> LabelSelector:
    """A ``metav1.LabelSelector`` (``matchLabels``, ``matchExpressions`` with In, NotIn, Exists, DoesNotExist)."""
    raw = _map(value, path)
    labels = {}
    for key, v in _map(raw.get("matchLabels"), f"{path}.matchLabels").items():
        if not isinstance(v, str):
            raise _FieldError(f"{path}.matchLabels.{key}: expected a string, got {v!r}")
        labels[str(key)] = v
    terms = []
    for i, item in enumerate(_list(raw.get("matchExpressions"), f"{path}.matchExpressions")):
        where = f"{path}.matchExpressions[{i}]"
        expr = _map(item, where)
        key = _str(expr.get("key"), f"{where}.key")
        if not key:
            raise _FieldError(f"{where}.key: missing")
        op = _str(expr.get("operator"), f"{where}.operator")
        if op not in SELECTOR_OPERATORS:
            raise _FieldError(f"{where}.operator: {op!r} is not one of {', '.join(SELECTOR_OPERATORS)}")
        values = tuple(
            _str(v, f"{where}.values[{j}]") for j, v in enumerate(_list(expr.get("values"), f"{where}.values"))
        )
        if op in ("In", "NotIn") and not values:
            raise _FieldError(f"{where}.values: operator {op} needs at least one value")
        if op in ("Exists", "DoesNotExist") and values:
            raise _FieldError(f"{where}.values: operator {op} takes no values")
        terms.append(SelectorTerm(key, op, values))
    return LabelSelector(labels, tuple(terms))


class KueueLeverReaders(CoreReaders):
    """The builder's part that reads Kueue's admission levers (the module docstring)."""

    def _read_workload_priority_classes(self) -> None:
        for doc in self.docs("WorkloadPriorityClass"):
            self._run(doc, self._workload_priority_class)

    def _workload_priority_class(self, doc: _Doc) -> None:
        if doc.obj.get("value") is None:
            raise _FieldError("value: missing (the priority, a whole number)")
        self.workload_priority_classes[doc.name] = _int(
            doc.obj.get("value"), "value", 0, minimum=-(2**31), maximum=2**31 - 1
        )
        self._origin("WorkloadPriorityClass", doc.name)

    def _cluster_queue_levers(self, queue: str, doc: _Doc) -> None:
        """A ClusterQueue's queueing strategy, stop policy, namespace selector and admission scope, for the queue
        ``queue`` (its identity)."""
        spec = doc.spec
        draft = self.admission
        if read_queueing_strategy(spec.get("queueingStrategy"), "spec.queueingStrategy") == "StrictFIFO":
            draft.strict_fifo.add(queue)
        stop = _str(spec.get("stopPolicy"), "spec.stopPolicy") or "None"
        if stop == "HoldAndDrain":
            draft.draining.add(queue)
        elif stop == "Hold":
            draft.held.add(queue)
        if spec.get("namespaceSelector") is not None:
            selector = read_label_selector(spec.get("namespaceSelector"), "spec.namespaceSelector")
            if selector.match_labels or selector.expressions:
                draft.namespace_selectors[queue] = selector
        scope = _map(spec.get("admissionScope"), "spec.admissionScope")
        mode = _str(scope.get("admissionMode"), "spec.admissionScope.admissionMode")
        if mode and mode not in (USAGE_BASED, "NoAdmissionFairSharing"):
            raise _FieldError(
                f"spec.admissionScope.admissionMode: {mode!r} is not one of {USAGE_BASED}, NoAdmissionFairSharing"
            )
        if mode == USAGE_BASED:
            draft.fair_sharing_queues.add(queue)

    def _local_queue_usage(self, doc: _Doc) -> None:
        """A LocalQueue's ``spec.fairSharing.weight`` and recorded consumed resources."""
        sharing = _map(doc.spec.get("fairSharing"), "spec.fairSharing")
        weight = Fraction(1)
        raw = sharing.get("weight")
        if raw is not None:
            if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
                raise _FieldError(f"spec.fairSharing.weight: {raw!r} is not a quantity")
            try:
                weight = parse_exact_quantity(str(raw), "spec.fairSharing.weight")
            except QuantityError as exc:
                raise _FieldError(f"spec.fairSharing.weight: {exc.message}") from None
            if weight < 0:
                raise _FieldError(f"spec.fairSharing.weight: {raw!r} must not be negative")
        status = _map(doc.obj.get("status"), "status")
        afs = _map(
            _map(status.get("fairSharing"), "status.fairSharing").get("admissionFairSharingStatus"),
            "status.fairSharing.admissionFairSharingStatus",
        )
        path = "status.fairSharing.admissionFairSharingStatus.consumedResources"
        consumed: Mapping[str, int] = _rl(afs.get("consumedResources"), path) if afs.get("consumedResources") else {}
        self.admission.local_queues[(doc.namespace or "default", doc.name)] = LocalQueueUsage(weight, dict(consumed))

    def _namespace_labels(self) -> None:
        """The labels of the input's Namespace objects (``NamespaceInfo.labels``), once a namespace selector needs
        them."""
        self.admission.namespace_labels.update(namespace_labels(self.namespaces))

    # -- Kueue's Configuration ---------------------------------------------------------------------------------------
    def _kueue_configuration(self, doc: _Doc) -> None:
        """A bare ``config.kueue.x-k8s.io`` Configuration document."""
        self._take_kueue_configuration(doc.obj, doc.where)

    def _kueue_configmap(self, doc: _Doc, text: str) -> None:
        """The Configuration in Kueue's ConfigMap (``kueue-manager-config``, key ``controller_manager_config.yaml``)."""
        try:
            config = load_yaml(text, self.limits.max_yaml_depth)
        except yaml.YAMLError as exc:
            raise _FieldError(f"data[{KUEUE_CONFIG_KEY!r}]: invalid YAML: {exc}") from None
        if not is_kueue_configuration(config):
            raise _FieldError(
                f"data[{KUEUE_CONFIG_KEY!r}]: expected a {KUEUE_CONFIG_GROUP} Configuration (apiVersion and kind)"
            )
        assert isinstance(config, Mapping)
        try:
            self._take_kueue_configuration(config, f"{doc.where} data[{KUEUE_CONFIG_KEY!r}]")
        except _FieldError as exc:
            raise _FieldError(f"data[{KUEUE_CONFIG_KEY!r}]: {exc}") from None

    def _take_kueue_configuration(self, obj: Mapping[str, Any], where: str) -> None:
        if self.kueue_config is not None:
            self.warnings.append(f"{where}: a second Kueue Configuration replaces {self.kueue_config.where}")
        self.kueue_config = read_kueue_configuration(obj, where)
        self.admission.fair_sharing = self.kueue_config.admission_fair_sharing

    def _apply_kueue_configuration(self) -> None:
        """The policy's ``enqueue`` configuration from the Configuration's ``waitForPodsReady`` (once the policy is
        known), with a sentence saying what it set; what Fairway does not map, said too."""
        config = self.kueue_config
        if config is None:
            return
        self.policy, said = apply_wait_for_pods_ready(self.policy, config)
        self.warnings.append(said)
        ready = config.wait_for_pods_ready
        if ready.enabled and ready.block_admission:
            self.warnings.append(
                f"{config.where}: waitForPodsReady.blockAdmission is not read: Fairway admits while others start"
            )
        if ready.enabled and ready.backoff_limit_count is not None:
            self.warnings.append(
                f"{config.where}: waitForPodsReady.requeuingStrategy.backoffLimitCount is not read: a released gang "
                "is requeued without a limit"
            )
