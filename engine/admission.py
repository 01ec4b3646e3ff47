"""Admission levers of a queue beyond its quota (Kueue's ClusterQueue and Configuration are the models; issue 28).

All of them are off unless the input asks (a snapshot's ``admission`` is ``AdmissionLevers()`` then, and nothing
here runs):

* **StrictFIFO** (``strict_fifo``): the queue's first Pending job in job order that cannot be admitted blocks the
  queue's later ones in the same ``enqueue`` pass, even those that would fit (Kueue's ``queueingStrategy:
  StrictFIFO``); without it a queue is BestEffortFIFO, as Fairway always was: a job that cannot be admitted lets
  the next one try. A job held by its requeue backoff, suspended, or refused by the namespace selector does not
  block (Kueue keeps such workloads out of the heap);
* **draining** (``draining``): the queue is stopped and its admitted jobs are evicted, their pods released and the
  podgroups sent back to Pending (Kueue's ``stopPolicy: HoldAndDrain``); a queue only held (``held``, Kueue's
  ``Hold``) keeps what runs and cancels the reservations of admitted jobs that run nothing yet;
* **namespace selectors** (``namespace_selectors``): a job whose namespace's labels do not match its queue's
  selector is never admitted, and says so (Kueue's ``namespaceSelector``);
* **admission fair sharing** (``fair_sharing``, ``fair_sharing_queues``, ``local_queues``): in the listed queues the
  Pending jobs are taken by their LocalQueue's usage first (lowest first), then by the job order; each admission
  adds its entry penalty to its LocalQueue's usage at once (Kueue's Admission Fair Sharing; ``LocalQueueUsage``;
  the live sessions keep the usage across sessions: ``engine.localqueues``).

The LocalQueues themselves (``local_queue_specs``: namespace, name, ClusterQueue, weight) are kept whether or not a
lever is on, for the Kueue export; they alone do not turn the levers on. So are Kueue's pod groups that wait for their
pods (``pod_group_waits``: fewer pods than their ``pod-group-total-count`` and none on a node), which ``enqueue``
never admits, whatever the levers: Kueue makes no workload of such a group until all its pods exist.

Pure module: plain data and the few rules that read it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

__all__ = [
    "NAME_LABEL",
    "SELECTOR_OPERATORS",
    "AdmissionDraft",
    "AdmissionFairSharing",
    "AdmissionLevers",
    "LabelSelector",
    "LocalQueueKey",
    "LocalQueueSpec",
    "LocalQueueUsage",
    "SelectorTerm",
    "label_pairs",
    "namespace_labels",
]

NAME_LABEL = "kubernetes.io/metadata.name"  # set by Kubernetes on every namespace: its name


def label_pairs(labels: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """A namespace's labels as ``NamespaceInfo.labels`` keeps them: sorted pairs, without ``NAME_LABEL`` (implied)."""
    return tuple(sorted((k, v) for k, v in (labels or {}).items() if k != NAME_LABEL))


def namespace_labels(namespaces: Mapping[str, Any]) -> dict[str, Mapping[str, str]]:
    """The labels of the namespaces that have any (``NamespaceInfo.labels``), as ``AdmissionLevers`` keeps them."""
    return {name: dict(info.labels) for name, info in namespaces.items() if info.labels}


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class SelectorTerm:
    """One ``matchExpressions`` entry of a Kubernetes label selector."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values  # NotIn

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return self.key if self.operator == "Exists" else f"!{self.key}"
        word = "in" if self.operator == "In" else "notin"
        return f"{self.key} {word} ({','.join(self.values)})"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A Kubernetes ``metav1.LabelSelector``: every ``matchLabels`` pair and every expression must hold; an empty
    selector matches every set of labels."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    expressions: tuple[SelectorTerm, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(term.matches(labels) for term in self.expressions)

    def to_manifest(self) -> dict[str, object]:
        """The selector as a ``metav1.LabelSelector`` mapping (``{}`` when empty)."""
        out: dict[str, object] = {}
        if self.match_labels:
            out["matchLabels"] = dict(sorted(self.match_labels.items()))
        if self.expressions:
            out["matchExpressions"] = [
                {"key": t.key, "operator": t.operator, **({"values": list(t.values)} if t.values else {})}
                for t in self.expressions
            ]
        return out

    def __str__(self) -> str:
        """kubectl's spelling (``team=a,env in (prod)``); ``everything`` for an empty selector."""
        parts = [f"{k}={v}" for k, v in sorted(self.match_labels.items())] + [str(t) for t in self.expressions]
        return ",".join(parts) or "everything"


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    """Kueue's Configuration ``admissionFairSharing``: how fast a LocalQueue's usage is forgotten
    (``usageHalfLifeTime``, seconds; 0 forgets at once), how often it is sampled (``usageSamplingInterval``), and the
    weight of each resource in the usage (``resourceWeights``; a resource left out weighs 1)."""

    half_life: float
    sampling_interval: float = 300.0
    resource_weights: Mapping[str, Fraction] = field(default_factory=dict)

    @property
    def alpha(self) -> float:
        """The share of a new sample in the decayed usage: ``1 - 0.5^(interval / half-life)`` (0 when the half-life
        is 0), Kueue's ``calculateAlphaRate``; an admission's entry penalty is ``alpha x`` its requests."""
        if self.half_life <= 0:
            return 0.0
        return 1.0 - math.pow(0.5, self.sampling_interval / self.half_life)


@dataclass(frozen=True, slots=True)
class LocalQueueUsage:
    """A LocalQueue as admission fair sharing reads it: its ``fairSharing.weight`` (0: last, an infinite usage) and
    its decayed consumed resources (``status.fairSharing.admissionFairSharingStatus.consumedResources``, in the
    engine's units: millicores, bytes, milli-units)."""

    weight: Fraction = Fraction(1)
    consumed: Mapping[str, int] = field(default_factory=dict)


LocalQueueKey = tuple[str, str]  # (namespace, LocalQueue name)


@dataclass(frozen=True, slots=True)
class LocalQueueSpec:
    """A Kueue LocalQueue: ``namespace/name`` points at the leaf queue ``queue`` (a ClusterQueue's identity), with
    its ``fairSharing.weight`` (default 1; 0: its usage counts as infinite, admitted last)."""

    namespace: str
    name: str
    queue: str
    weight: Fraction = Fraction(1)

    @property
    def key(self) -> LocalQueueKey:
        return (self.namespace, self.name)


@dataclass(frozen=True)
class AdmissionLevers:
    """The admission levers of a snapshot's queues (see the module docstring), by queue identity."""

    strict_fifo: frozenset[str] = frozenset()
    draining: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()
    namespace_selectors: Mapping[str, LabelSelector] = field(default_factory=dict)
    fair_sharing: AdmissionFairSharing | None = None
    fair_sharing_queues: frozenset[str] = frozenset()
    # (namespace, LocalQueue) -> its weight and usage; podgroup key -> its (namespace, LocalQueue)
    local_queues: Mapping[tuple[str, str], LocalQueueUsage] = field(default_factory=dict)
    podgroup_local_queue: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # the labels of the input's Namespace objects (a namespace without one has only its name label)
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Kueue's LocalQueues (namespace, name, ClusterQueue, weight), sorted by key: what the Kueue export writes; kept
    # whether or not a lever is on (a tuple default: a pickled record of an older engine loads without it)
    local_queue_specs: tuple[LocalQueueSpec, ...] = ()
    # the jobs Kueue's scheduling cycle leaves waiting this session, with why (``engine.flavors.assign_flavors``
    # sets them before each session on a flavored Kueue cluster; the session does not admit them)
    cycle_waits: Mapping[str, str] = field(default_factory=dict)
    # Kueue's partial admission (``engine.partial``): (podgroup key, the least count of pods it may be admitted
    # with), sorted, from a Job's ``kueue.x-k8s.io/job-min-parallelism``; sized before each session, not a lever of
    # the session itself (a tuple default: a pickled record of an older engine loads without it)
    partial_admission: tuple[tuple[str, int], ...] = ()
    # Kueue's Jobs admitted in part by an earlier session of a live cluster, (podgroup key, the count admitted) sorted
    # (``PodGroup.kueue_admitted_count``): ``engine.partial`` keeps them to that count (a tuple default, as above)
    partial_admitted: tuple[tuple[str, int], ...] = ()
    # Kueue's pod groups short of their total count with none of their pods on a node, (podgroup key, why) sorted:
    # Kueue makes no workload of such a group until all its pods exist, so the session admits none (a tuple default,
    # as above: an older record loads without it)
    pod_group_waits: tuple[tuple[str, str], ...] = ()
    # admitted podgroups whose controller is still making their pods (a Kueue Job the adapter resumes, or resumed
    # moments ago: ``scheduling.store.read.with_pod_group_waits``), sorted: the requeue rule counts no session without
    # a pod placed against them, since they have nothing to place yet (a tuple default, as above)
    pods_awaited: tuple[str, ...] = ()
    # Kueue's suspended Jobs without pods, (podgroup key, their pod template) sorted: a pod of the template asking for
    # the whole Job (its podgroup's minimum resources), which Kueue's flavor assigner and scheduling cycle read as the
    # Job's pods (``pods_or_template``) until the Job has its own (each an ``engine.objects.TaskInfo``, a floor above
    # this module; a tuple default, as above); for a workload of several pod sets (a JobSet, ...), a tuple of one pod
    # per pod set in Kueue's order, each asking for its whole pod set with the pod set as its role (while it has no
    # pods, suspended or just resumed: its pod sets' parts of its minimum resources are kept in their own flavors)
    templates: tuple[tuple[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return bool(
            self.strict_fifo or self.draining or self.held or self.namespace_selectors or self.fair_sharing_queues
        )

    def labels_of(self, namespace: str) -> Mapping[str, str]:
        """A namespace's labels, with the ``kubernetes.io/metadata.name`` label Kubernetes sets on every one."""
        return {**self.namespace_labels.get(namespace, {}), NAME_LABEL: namespace}

    def selector_mismatch(self, queue: str, namespace: str) -> LabelSelector | None:
        """``queue``'s namespace selector when ``namespace`` does not match it, else None."""
        selector = self.namespace_selectors.get(queue)
        if selector is None or selector.matches(self.labels_of(namespace)):
            return None
        return selector

    def usage_ordered(self, queue: str) -> bool:
        """Whether ``queue`` takes its Pending jobs by their LocalQueue's usage first."""
        return self.fair_sharing is not None and queue in self.fair_sharing_queues


@dataclass
class AdmissionDraft:
    """The levers as the manifest readers collect them, frozen into ``AdmissionLevers`` once everything is read."""

    strict_fifo: set[str] = field(default_factory=set)
    draining: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)
    namespace_selectors: dict[str, LabelSelector] = field(default_factory=dict)
    fair_sharing: AdmissionFairSharing | None = None
    fair_sharing_queues: set[str] = field(default_factory=set)
    local_queues: dict[tuple[str, str], LocalQueueUsage] = field(default_factory=dict)
    podgroup_local_queue: dict[str, tuple[str, str]] = field(default_factory=dict)
    namespace_labels: dict[str, Mapping[str, str]] = field(default_factory=dict)
    local_queue_specs: dict[LocalQueueKey, LocalQueueSpec] = field(default_factory=dict)
    partial_admission: dict[str, int] = field(default_factory=dict)
    pod_group_waits: dict[str, str] = field(default_factory=dict)
    # podgroup key -> its template's ``TaskInfo`` (a tuple of them, one per pod set, for a workload of several)
    templates: dict[str, Any] = field(default_factory=dict)

    def freeze(self, queues: Mapping[str, object]) -> AdmissionLevers:
        """The levers of the queues that exist (``queues``); no lever at all gives ``AdmissionLevers()``."""
        strict = frozenset(q for q in self.strict_fifo if q in queues)
        draining = frozenset(q for q in self.draining if q in queues)
        held = frozenset(q for q in self.held if q in queues)
        selectors = {q: s for q, s in self.namespace_selectors.items() if q in queues}
        # Kueue's admissionScope does nothing without the Configuration's admissionFairSharing
        fair = frozenset(q for q in self.fair_sharing_queues if q in queues) if self.fair_sharing else frozenset()
        specs = tuple(s for _, s in sorted(self.local_queue_specs.items()) if s.queue in queues)
        partial = tuple(sorted(self.partial_admission.items()))
        waits = tuple(sorted(self.pod_group_waits.items()))
        templates = tuple(sorted(self.templates.items()))
        if not (strict or draining or held or selectors or fair):
            return AdmissionLevers(
                local_queue_specs=specs, partial_admission=partial, pod_group_waits=waits, templates=templates
            )
        usage = bool(fair)
        return AdmissionLevers(
            strict_fifo=strict,
            draining=draining,
            held=held,
            namespace_selectors=selectors,
            fair_sharing=self.fair_sharing if fair else None,
            fair_sharing_queues=fair,
            local_queues=dict(self.local_queues) if usage else {},
            podgroup_local_queue=dict(self.podgroup_local_queue) if usage else {},
            namespace_labels=dict(self.namespace_labels) if selectors else {},
            local_queue_specs=specs,
            partial_admission=partial,
            pod_group_waits=waits,
            templates=templates,
        )
