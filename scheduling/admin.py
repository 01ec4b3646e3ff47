from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from scheduling.models import (
    Cluster,
    ClusterLease,
    Eviction,
    KubeObjectProblem,
    Node,
    NodeAgentBinding,
    Pod,
    PodGroup,
    PodGroupReason,
    QuotaOverState,
    QuotaSample,
    SchedulingSession,
    UsageHistory,
)


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    """The scheduler policy is validated on save (``Cluster.clean``); the cluster's periodic tasks are under
    *Periodic Tasks* (django-celery-beat), named ``"<cluster>: <job>"``."""

    list_display = ("name", "description", "simulated", "node_heartbeat_timeout", "pod_eviction_timeout", "created")
    list_filter = ("simulated",)
    search_fields = ("name",)


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "cluster", "pool", "ready", "not_ready_since", "unschedulable", "last_heartbeat")
    list_filter = ("cluster", "pool", "ready", "unschedulable")
    search_fields = ("name", "pool")


@admin.register(NodeAgentBinding)
class NodeAgentBindingAdmin(admin.ModelAdmin):
    """Which node (or pool of nodes) each node-agent credential may act for. The user must also be in the
    ``node-agents`` group; ``manage.py create_node_agent`` creates user, group membership, binding and token."""

    list_display = ("user", "cluster", "node", "pool", "created")
    list_filter = ("cluster", "pool")
    search_fields = ("user__username", "node", "pool")
    autocomplete_fields = ("user",)


@admin.register(PodGroup)
class PodGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "namespace", "queue", "phase", "reason", "min_member", "priority", "created")
    list_filter = ("phase", "queue", "cluster")
    search_fields = ("name", "namespace__name")
    readonly_fields = ("conditions", "reason", "message", "blocker")


@admin.register(Pod)
class PodAdmin(admin.ModelAdmin):
    list_display = ("name", "namespace", "podgroup", "status", "reason", "node", "priority", "quota_group")
    list_filter = ("status", "cluster")
    search_fields = ("name", "namespace__name")
    raw_id_fields = ("podgroup", "node")


class _ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by the scheduler: browsable and deletable, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SchedulingSession)
class SchedulingSessionAdmin(_ReadOnlyAdmin):
    list_display = ("id", "cluster", "kind", "status", "started", "duration_ms", "bound", "pipelined", "evicted")
    list_filter = ("cluster", "kind", "status")
    date_hierarchy = "started"
    exclude = ("bindings",)


@admin.register(Eviction)
class EvictionAdmin(_ReadOnlyAdmin):
    list_display = ("created", "cluster", "action", "pod_uid", "node", "reason", "preemptor")
    list_filter = ("cluster", "action")
    search_fields = ("pod_uid", "namespace", "preemptor")
    raw_id_fields = ("pod", "session")


@admin.register(PodGroupReason)
class PodGroupReasonAdmin(_ReadOnlyAdmin):
    list_display = ("time", "podgroup", "phase", "reason")
    list_filter = ("phase",)
    search_fields = ("podgroup__name", "reason")
    raw_id_fields = ("podgroup", "session")


@admin.register(QuotaSample)
class QuotaSampleAdmin(_ReadOnlyAdmin):
    list_display = ("time", "cluster", "kind", "name")
    list_filter = ("cluster", "kind")
    search_fields = ("name",)


@admin.register(QuotaOverState)
class QuotaOverStateAdmin(_ReadOnlyAdmin):
    list_display = ("cluster", "name", "over_since")


@admin.register(UsageHistory)
class UsageHistoryAdmin(_ReadOnlyAdmin):
    list_display = ("cluster", "updated")


@admin.register(ClusterLease)
class ClusterLeaseAdmin(_ReadOnlyAdmin):
    list_display = ("cluster", "key", "owner", "expires")


@admin.register(KubeObjectProblem)
class KubeObjectProblemAdmin(_ReadOnlyAdmin):
    """Objects of a source=kubernetes cluster the adapter could not apply, with the reason (read-only)."""

    list_display = ("cluster", "kind", "namespace", "name", "message", "first_seen", "last_seen")
    list_filter = ("cluster", "kind")
    search_fields = ("name", "namespace", "message")
