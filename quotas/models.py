"""The organisation's trees: queues (Volcano), elastic quota groups (Koordinator), namespaces and weights, Kueue's
ResourceFlavors the queues' quotas may be given in, and Kueue's LocalQueues (a namespace's names for leaf queues).

Resource amounts are ``ResourceListField`` (JSON of integers in base units). Every tree model keeps an audit
history (django-simple-history) and a ``version`` that feeds the API's ETag.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from simple_history.models import HistoricalRecords

from core.models import VersionedModel
from engine import rules, treefields
from engine.admission import LocalQueueSpec, label_pairs
from engine.manifests.kueue import resource_flavor_spec
from engine.objects import (
    DEFAULT_GROUP,
    DEFAULT_QUEUE,
    ROOT_GROUP,
    ROOT_QUEUE,
    SYSTEM_GROUP,
    QueueSpec,
    QuotaGroupSpec,
    ResourceFlavorSpec,
)
from engine.resources import parse_exact_quantity
from quotas.choices import QueueState
from quotas.fields import ResourceListField


class Queue(VersionedModel):
    """A Volcano queue: a node of the queue tree. Jobs (podgroups) are submitted to leaf queues."""

    BUILTIN = (ROOT_QUEUE, DEFAULT_QUEUE)

    name = models.CharField(max_length=63, unique=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    weight = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(65535)])
    capability = ResourceListField(default=dict, blank=True)
    deserved = ResourceListField(default=dict, blank=True)
    guarantee = ResourceListField(default=dict, blank=True)
    # Kueue's levers, per resource (null, or a resource left out: unlimited); measured against deserved
    borrowing_limit = ResourceListField(null=True, blank=True)
    lending_limit = ResourceListField(null=True, blank=True)
    reclaimable = models.BooleanField(default=True)
    priority = models.PositiveIntegerField(default=0)
    # Fairway's range of the jobs' priority and preemptibility (admins set it; the strictest along the queue's path
    # holds: ``engine.rules.priority_range``)
    max_priority = models.IntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(-(2**31)), MaxValueValidator(2**31 - 1)],
        help_text="The highest priority a podgroup or pod of this queue (or of a queue below it) may have; "
        "empty: no maximum. Set by admins; raising or lowering it does not change existing jobs.",
    )
    allow_non_preemptible = models.BooleanField(
        default=True,
        help_text="Whether pods of this queue (and of the queues below it) may be non-preemptible (they are still "
        "held to their quota group's min).",
    )
    # KAI's min-runtime for this queue's subtree (``QueueSpec.min_runtime``): whole seconds; null: unset
    min_runtime = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Seconds a pod of this queue (or of a queue below it) is kept from reclaim and preempt after it "
        "starts, unless its evictor's priority is strictly higher; empty: the nearest ancestor's, else the scheduler "
        "policy's minRuntime; 0: none.",
    )
    state = models.CharField(max_length=8, choices=QueueState.choices, default=QueueState.OPEN)
    closed_by_parent = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="", help_text=treefields.DESCRIPTION_HELP)
    # per-user and per-group limits in its subtree (``engine.userlimits``), base units; null: none
    user_limits = models.JSONField(null=True, blank=True, help_text=treefields.USER_LIMITS_HELP)
    # Kueue's levers and policies, normalized in Kueue's spelling (``engine.kueuepolicy``); null: none
    kueue = models.JSONField(null=True, blank=True, help_text=treefields.KUEUE_HELP)
    teams = models.ManyToManyField(Group, blank=True, related_name="queues")
    history = HistoricalRecords(excluded_fields=["version", "updated"], m2m_fields=[teams])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gte=1, weight__lte=65535), name="queue_weight_range"),
            models.CheckConstraint(
                condition=models.Q(parent__isnull=False) | models.Q(name=ROOT_QUEUE), name="queue_parent_unless_root"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_builtin(self) -> bool:
        return self.name in self.BUILTIN

    def to_spec(self, parent_name: str | None = None) -> QueueSpec:
        return QueueSpec(
            name=self.name,
            parent=parent_name if parent_name is not None or self.parent_id is None else self.parent.name,
            **{f.name: treefields.from_stored(f, getattr(self, f.name)) for f in treefields.QUEUE_FIELDS},
        )


class QuotaGroup(VersionedModel):
    """A Koordinator elastic quota group: a node of a quota tree (min, max, shared-weight, lending)."""

    BUILTIN = (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP)

    name = models.CharField(max_length=253, unique=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    is_parent = models.BooleanField(default=False)
    min = ResourceListField(default=dict, blank=True)
    max = ResourceListField(default=dict, blank=True)
    shared_weight = ResourceListField(null=True, blank=True)
    # Kueue's levers, per resource (null, or a resource left out: unlimited); measured against min
    borrowing_limit = ResourceListField(null=True, blank=True)
    lending_limit = ResourceListField(null=True, blank=True)
    allow_lent = models.BooleanField(default=True)
    tree_id = models.CharField(max_length=63, blank=True, default="")
    min_scale_exempt = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="", help_text=treefields.DESCRIPTION_HELP)
    # per-user and per-group limits in its subtree (``engine.userlimits``), base units; null: none
    user_limits = models.JSONField(null=True, blank=True, help_text=treefields.USER_LIMITS_HELP)
    teams = models.ManyToManyField(Group, blank=True, related_name="quota_groups")
    history = HistoricalRecords(excluded_fields=["version", "updated"], m2m_fields=[teams])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(parent__isnull=False) | models.Q(name=ROOT_GROUP),
                name="quota_group_parent_unless_root",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_builtin(self) -> bool:
        return self.name in self.BUILTIN

    def to_spec(self, parent_name: str | None = None) -> QuotaGroupSpec:
        return QuotaGroupSpec(
            name=self.name,
            parent=parent_name if parent_name is not None or self.parent_id is None else self.parent.name,
            **{f.name: treefields.from_stored(f, getattr(self, f.name)) for f in treefields.QUOTA_GROUP_FIELDS},
        )


def validate_labels(value: Any) -> None:
    """Kubernetes labels (``engine.rules.validate_labels``): each problem names its key."""
    errors = rules.validate_labels(value)
    if errors:
        raise ValidationError([e.message for e in errors], code=errors[0].code)


class Namespace(VersionedModel):
    """A tenant namespace: its fair-share weight inside queues (seed 000), its default queue, its quota group,
    its resource quota (hard limits) that bounds the sum of its podgroups' minResources (seed 003), and its labels
    (what Kueue's ``namespaceSelector`` of a queue matches)."""

    name = models.CharField(max_length=63, unique=True)
    weight = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    default_queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.SET_NULL, related_name="default_for_namespaces"
    )
    quota_group = models.ForeignKey(
        QuotaGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="namespaces"
    )
    hard = ResourceListField(null=True, blank=True)
    labels = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_labels],
        help_text='Kubernetes labels, e.g. {"team": "nlp"}: what a queue\'s namespaceSelector matches.',
    )
    history = HistoricalRecords(excluded_fields=["version", "updated"])

    class Meta:
        ordering = ["name"]
        constraints = [models.CheckConstraint(condition=models.Q(weight__gte=1), name="namespace_weight_positive")]

    def label_pairs(self) -> tuple[tuple[str, str], ...]:
        """The labels as ``NamespaceInfo.labels`` keeps them (sorted pairs; Kubernetes' name label implied)."""
        return label_pairs(self.labels)

    def __str__(self) -> str:
        return self.name


class LocalQueue(VersionedModel):
    """A Kueue LocalQueue (issue 28): a namespace's name (``name``, what a job's ``kueue.x-k8s.io/queue-name`` label
    says) for a leaf queue (its ClusterQueue), with its ``fairSharing.weight``, an exact quantity kept as written
    (``"0.75"``; ``"0"``: its jobs are admitted last under Admission Fair Sharing). The usage Admission Fair Sharing
    orders it by is kept per cluster by the live sessions (``scheduling.LocalQueueUsage``)."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="local_queues")
    name = models.CharField(max_length=63)
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="local_queues")
    weight = models.CharField(
        max_length=64,
        default="1",
        help_text="Kueue's fairSharing.weight, a quantity (1, 0.75, 500m); 0: admitted last under Admission Fair "
        "Sharing.",
    )
    history = HistoricalRecords(excluded_fields=["version", "updated"])

    class Meta:
        ordering = ["namespace__name", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="local_queue_unique_name")]

    def __str__(self) -> str:
        return f"{self.namespace.name}/{self.name}"

    def to_spec(self) -> LocalQueueSpec:
        return LocalQueueSpec(
            self.namespace.name, self.name, self.queue.name, parse_exact_quantity(self.weight, "weight")
        )


class ResourceFlavor(VersionedModel):
    """A Kueue ResourceFlavor (issue 28): the nodes a flavor stands for (``node_labels``, all of which a node carries),
    their taints (``node_taints``, a workload must tolerate them to be given the flavor), the tolerations a workload
    given it gets, and Kueue's ``topology_name`` (kept and exported, not used). Kept in Kueue's spelling (the
    ``spec`` of the ResourceFlavor object); a queue's quota in the flavor is under the flavored key (``cpu@spot``)
    of its resource lists, its order of flavors in its ``kueue`` field's ``resourceGroups``."""

    name = models.CharField(max_length=253, unique=True)
    # {"type": "spot"}
    node_labels = models.JSONField(default=dict, blank=True)
    # [{"key": ..., "value": ..., "effect": "NoSchedule"}]
    node_taints = models.JSONField(default=list, blank=True)
    # [{"key": ..., "operator": "Equal", "value": ..., "effect": ...}]
    tolerations = models.JSONField(default=list, blank=True)
    topology_name = models.CharField(max_length=253, blank=True, default="")
    history = HistoricalRecords(excluded_fields=["version", "updated"])

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def as_kueue_spec(self) -> dict[str, Any]:
        """The ``spec`` of the ResourceFlavor object, as Kueue spells it (empty parts left out)."""
        out: dict[str, Any] = {}
        if self.node_labels:
            out["nodeLabels"] = dict(self.node_labels)
        if self.node_taints:
            out["nodeTaints"] = list(self.node_taints)
        if self.tolerations:
            out["tolerations"] = list(self.tolerations)
        if self.topology_name:
            out["topologyName"] = self.topology_name
        return out

    def to_spec(self) -> ResourceFlavorSpec:
        return resource_flavor_spec(self.name, self.as_kueue_spec())
