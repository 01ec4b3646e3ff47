from django.contrib import admin

from scheduling.models import Cluster, Node, Pod, PodGroup


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ("name", "description", "created")
    search_fields = ("name",)


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "cluster", "ready", "unschedulable", "last_heartbeat")
    list_filter = ("cluster", "ready", "unschedulable")
    search_fields = ("name",)


@admin.register(PodGroup)
class PodGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "namespace", "queue", "phase", "min_member", "priority", "created")
    list_filter = ("phase", "queue", "cluster")
    search_fields = ("name", "namespace__name")
    readonly_fields = ("conditions",)


@admin.register(Pod)
class PodAdmin(admin.ModelAdmin):
    list_display = ("name", "namespace", "podgroup", "status", "node", "priority", "quota_group")
    list_filter = ("status", "cluster")
    search_fields = ("name", "namespace__name")
    raw_id_fields = ("podgroup", "node")
