"""The cluster the control plane is the system of record of: nodes, podgroups (jobs) and pods."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models

from quotas.fields import ResourceListField
from quotas.models import Namespace, QuotaGroup, Queue
from scheduling.choices import PodGroupPhase, PodStatus


class Cluster(models.Model):
    """One cluster with its own nodes and scheduling sessions."""

    name = models.CharField(max_length=63, unique=True)
    description = models.CharField(max_length=255, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Node(models.Model):
    """A worker node as its agent registered it; its allocatable counts toward the cluster total while Ready."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=253)
    allocatable = ResourceListField(default=dict, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    taints = models.JSONField(default=list, blank=True)
    unschedulable = models.BooleanField(default=False)
    ready = models.BooleanField(default=True)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="node_unique_name_per_cluster")]

    def __str__(self) -> str:
        return self.name


class PodGroup(models.Model):
    """A gang job (Volcano PodGroup): admitted as a whole (minMember, minResources) into a leaf queue."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="podgroups")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="podgroups")
    name = models.CharField(max_length=253)
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="podgroups")
    min_member = models.PositiveIntegerField(default=1)
    min_task_member = models.JSONField(default=dict, blank=True)
    min_resources = ResourceListField(null=True, blank=True)
    priority = models.IntegerField(default=0)
    priority_class_name = models.CharField(max_length=253, blank=True, default="")
    phase = models.CharField(max_length=10, choices=PodGroupPhase.choices, default=PodGroupPhase.PENDING)
    conditions = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="podgroup_unique_name")
        ]
        indexes = [models.Index(fields=["queue", "phase"])]

    def __str__(self) -> str:
        return f"{self.namespace.name}/{self.name}"


class Pod(models.Model):
    """A task of a podgroup: its request, priority, quota group, and where it runs."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pods")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="pods")
    name = models.CharField(max_length=253)
    podgroup = models.ForeignKey(PodGroup, null=True, blank=True, on_delete=models.CASCADE, related_name="pods")
    task_name = models.CharField(max_length=63, blank=True, default="")
    request = ResourceListField(default=dict, blank=True)
    priority = models.IntegerField(default=0)
    preemptible = models.BooleanField(default=True)
    quota_group = models.ForeignKey(
        QuotaGroup, null=True, blank=True, on_delete=models.PROTECT, related_name="pods"
    )
    status = models.CharField(max_length=10, choices=PodStatus.choices, default=PodStatus.PENDING)
    node = models.ForeignKey(Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="pods")
    node_selector = models.JSONField(default=dict, blank=True)
    tolerations = models.JSONField(default=list, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True, validators=[MinValueValidator(0)])
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pod_unique_name")]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["node", "status"])]

    def __str__(self) -> str:
        return f"{self.namespace.name}/{self.name}"
