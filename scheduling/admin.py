import contextlib
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.names import UntrimmedNamesAdmin
from scheduling import ownership
from scheduling.admin_forms import ClusterAdminForm
from scheduling.models import (
    Cluster,
    ClusterLease,
    Eviction,
    KubeObjectProblem,
    LocalQueueUsage,
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
class ClusterAdmin(UntrimmedNamesAdmin, admin.ModelAdmin):
    """The scheduler policy is validated on save (``Cluster.clean``); the cluster's periodic tasks are under
    *Periodic Tasks* (django-celery-beat), named ``"<cluster>: <job>"``. The kubeconfig is write-only
    (``ClusterAdminForm``): the page says whether one is set and replaces it only when a new one is typed."""

    form = ClusterAdminForm

    list_display = ("name", "description", "simulated", "node_heartbeat_timeout", "pod_eviction_timeout", "created")
    list_filter = ("simulated",)
    search_fields = ("name",)

    def delete_model(self, request: HttpRequest, obj: Cluster) -> None:
        """The confirmation page (which lists what goes with the cluster) is the force: the delete waits for the
        cluster's running sessions and keeps new ones out (``scheduling.ownership.delete_cluster``)."""
        with contextlib.suppress(Cluster.DoesNotExist):  # deleted meanwhile
            ownership.delete_cluster(obj.pk, force=True)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Cluster]) -> None:
        for obj in list(queryset):
            self.delete_model(request, obj)


class _MirroredReadOnlyMixin:
    """Nodes, podgroups and pods of a cluster mirrored from Kubernetes are read-only here, as in the API
    (``scheduling.ownership``): their pages show them without a form (and the sentence), a form that would put a row
    into such a cluster is refused at its ``cluster`` field, and a bulk delete that includes them is refused."""

    row_kind: ownership.Kind

    def _mirrored(self, obj: Any) -> bool:
        return obj is not None and ownership.is_mirrored(obj.cluster)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._mirrored(obj) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._mirrored(obj) and super().has_delete_permission(request, obj)  # type: ignore[misc]

    def change_view(self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any) -> Any:
        obj = self.get_object(request, object_id)  # type: ignore[attr-defined]
        if request.method == "GET" and self._mirrored(obj):
            messages.info(request, ownership.refusal(obj.cluster.name, self.row_kind, "change"))
        return super().change_view(request, object_id, *args, **kwargs)  # type: ignore[misc]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        base = super().get_form(request, obj, change, **kwargs)  # type: ignore[misc]
        kind = self.row_kind

        class NotIntoMirroredCluster(base):  # type: ignore[misc,valid-type]
            def clean(self) -> dict[str, Any]:
                data: dict[str, Any] = super().clean()
                cluster = data.get("cluster")
                if cluster is not None and ownership.is_mirrored(cluster):
                    verb: ownership.Verb = "change" if self.instance.pk is not None else "create"
                    self.add_error("cluster", ownership.refusal(cluster.name, kind, verb))
                return data

        return NotIntoMirroredCluster

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """A bulk delete that includes such rows is refused (Django's confirmation page lists the kind as one the
        user may not delete, and its POST is 403); the sentence says why."""
        for name in sorted({obj.cluster.name for obj in objs if self._mirrored(obj)}):
            messages.error(request, ownership.refusal(name, self.row_kind, "delete"))
        return super().get_deleted_objects(objs, request)  # type: ignore[misc]


@admin.register(Node)
class NodeAdmin(UntrimmedNamesAdmin, _MirroredReadOnlyMixin, admin.ModelAdmin):
    row_kind = "node"
    list_display = ("name", "cluster", "pool", "ready", "not_ready_since", "unschedulable", "last_heartbeat")
    list_filter = ("cluster", "pool", "ready", "unschedulable")
    search_fields = ("name", "pool")
    readonly_fields = ("set_aside",)  # an agent's or the cluster's report above the per-node bound (agent.offer)


@admin.register(NodeAgentBinding)
class NodeAgentBindingAdmin(UntrimmedNamesAdmin, admin.ModelAdmin):
    """Which node (or pool of nodes) each node-agent credential may act for. The user must also be in the
    ``node-agents`` group; ``manage.py create_node_agent`` creates user, group membership, binding and token."""

    list_display = ("user", "cluster", "node", "pool", "created")
    list_filter = ("cluster", "pool")
    search_fields = ("user__username", "node", "pool")
    autocomplete_fields = ("user",)


@admin.register(PodGroup)
class PodGroupAdmin(UntrimmedNamesAdmin, _MirroredReadOnlyMixin, admin.ModelAdmin):
    row_kind = "podgroup"
    list_display = ("name", "namespace", "queue", "phase", "reason", "min_member", "priority", "created")
    list_filter = ("phase", "queue", "cluster")
    search_fields = ("name", "namespace__name")
    readonly_fields = ("conditions", "reason", "message", "blocker")


@admin.register(Pod)
class PodAdmin(UntrimmedNamesAdmin, _MirroredReadOnlyMixin, admin.ModelAdmin):
    row_kind = "pod"
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
    list_display = ("created", "cluster", "action", "pod_uid", "node", "reason", "preemptor", "api_status")
    list_filter = ("cluster", "action", "api_status")
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


@admin.register(LocalQueueUsage)
class LocalQueueUsageAdmin(_ReadOnlyAdmin):
    """Admission Fair Sharing: each Kueue LocalQueue's usage the live sessions keep (they write it)."""

    list_display = ("cluster", "local_queue", "consumed", "penalty", "sampled")


@admin.register(ClusterLease)
class ClusterLeaseAdmin(_ReadOnlyAdmin):
    list_display = ("cluster", "key", "owner", "expires")


@admin.register(KubeObjectProblem)
class KubeObjectProblemAdmin(_ReadOnlyAdmin):
    """Objects of a source=kubernetes cluster the adapter could not apply, with the reason (read-only)."""

    list_display = ("cluster", "kind", "namespace", "name", "message", "first_seen", "last_seen")
    list_filter = ("cluster", "kind")
    search_fields = ("name", "namespace", "message")
