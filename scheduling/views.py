"""REST endpoints of the cluster: clusters, nodes, podgroups (jobs) and pods (``/api/v1/``)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.exceptions import PermissionDenied

from controlplane.permissions import AdminOrTeamSubmits, AdminWritesTeamsRead
from quotas.access import is_admin, visible_group_ids, visible_namespace_ids, visible_queue_ids
from scheduling.filtersets import NodeFilterSet, PodFilterSet, PodGroupFilterSet
from scheduling.models import Cluster, Node, Pod, PodGroup
from scheduling.serializers import ClusterSerializer, NodeSerializer, PodGroupSerializer, PodSerializer


@extend_schema(tags=["cluster"])
class ClusterViewSet(viewsets.ModelViewSet):
    queryset = Cluster.objects.all()
    serializer_class = ClusterSerializer
    permission_classes = [AdminWritesTeamsRead]
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    ordering_fields = ["name", "created"]
    ordering = ["name"]


@extend_schema(tags=["cluster"])
class NodeViewSet(viewsets.ModelViewSet):
    """Nodes, addressed by name (``?cluster=`` picks the cluster when names repeat across clusters)."""

    queryset = Node.objects.select_related("cluster")
    serializer_class = NodeSerializer
    permission_classes = [AdminWritesTeamsRead]
    filterset_class = NodeFilterSet
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    ordering_fields = ["name", "created", "ready"]
    ordering = ["cluster__name", "name"]

    def get_object(self) -> Node:
        qs = self.get_queryset().filter(name=self.kwargs["name"])
        cluster = self.request.query_params.get("cluster")
        if cluster:
            qs = qs.filter(cluster__name=cluster)
        nodes = list(qs[:2])
        if not nodes:
            raise Http404
        if len(nodes) > 1:
            from rest_framework.exceptions import ValidationError

            raise ValidationError({"cluster": ["node name exists in several clusters; pass ?cluster="]})
        self.check_object_permissions(self.request, nodes[0])
        return nodes[0]


class _JobViewSet(viewsets.ModelViewSet):
    permission_classes = [AdminOrTeamSubmits]
    ordering_fields = ["created", "name", "priority"]
    ordering = ["created", "id"]

    def _team_filter(self) -> Q | None:
        user = self.request.user
        if is_admin(user):
            return None
        queues = visible_queue_ids(user) or set()
        namespaces = visible_namespace_ids(user) or set()
        return self.team_q(queues, namespaces, visible_group_ids(user) or set())

    team_q: Any

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        q = self._team_filter()
        return qs if q is None else qs.filter(q).distinct()

    def perform_destroy(self, instance: Any) -> None:
        if not is_admin(self.request.user) and self.request.method == "DELETE":
            allowed = visible_queue_ids(self.request.user) or set()
            if self.queue_of(instance) not in allowed:
                raise PermissionDenied("you may only delete jobs in your team's queues")
        instance.delete()

    queue_of: Any


@extend_schema(tags=["jobs"])
class PodGroupViewSet(_JobViewSet):
    """Podgroups (gang jobs): submitted to a leaf queue; phase and conditions are set by the scheduler."""

    queryset = PodGroup.objects.select_related("cluster", "namespace", "queue")
    serializer_class = PodGroupSerializer
    filterset_class = PodGroupFilterSet

    @staticmethod
    def team_q(queues: set[int], namespaces: set[int], groups: set[int]) -> Q:
        return Q(queue_id__in=queues)

    @staticmethod
    def queue_of(instance: PodGroup) -> int:
        return instance.queue_id

    def perform_destroy(self, instance: PodGroup) -> None:
        from quotas.services import settle_closing_queues

        super().perform_destroy(instance)
        settle_closing_queues()


@extend_schema(tags=["jobs"])
class PodViewSet(_JobViewSet):
    """Pods (tasks): their request, priority, quota group and placement."""

    queryset = Pod.objects.select_related("cluster", "namespace", "podgroup", "quota_group", "node")
    serializer_class = PodSerializer
    filterset_class = PodFilterSet

    @staticmethod
    def team_q(queues: set[int], namespaces: set[int], groups: set[int]) -> Q:
        return Q(podgroup__queue_id__in=queues) | Q(quota_group_id__in=groups) | Q(namespace_id__in=namespaces)

    @staticmethod
    def queue_of(instance: Pod) -> int | None:
        return instance.podgroup.queue_id if instance.podgroup_id else None
