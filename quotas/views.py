"""REST endpoints of the trees: queues, quota groups, namespaces, Kueue's ResourceFlavors and LocalQueues
(``/api/v1/``)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core import tree_owner
from core.api import ETagMixin, bool_param, rule_errors_to_validation_error
from engine import rules
from quotas import services
from quotas.access import visible_group_ids, visible_namespace_ids, visible_queue_ids
from quotas.filtersets import (
    LocalQueueFilterSet,
    NamespaceFilterSet,
    QueueFilterSet,
    QuotaGroupFilterSet,
    ResourceFlavorFilterSet,
)
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor
from quotas.permissions import AdminWritesTeamsRead
from quotas.selectors import queue_phase_counts
from quotas.serializers import (
    LocalQueueSerializer,
    NamespaceSerializer,
    QueueSerializer,
    QuotaGroupSerializer,
    ResourceFlavorSerializer,
)


class _TreeViewSet(ETagMixin, viewsets.ModelViewSet):
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    permission_classes = [AdminWritesTeamsRead]
    ordering_fields = ["name", "created", "updated"]
    ordering = ["name"]
    search_fields = ["name"]

    visible_ids: Any  # each tree says which of its nodes a user may read (None: all)
    write_lock = staticmethod(services.lock_tree_writes)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """A write is refused (409, naming the cluster) while a Kubernetes cluster owns the trees."""
        super().initial(request, *args, **kwargs)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            tree_owner.check_writable()

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        ids = self.visible_ids()
        return qs if ids is None else qs.filter(pk__in=ids)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Validated and written under the tree write lock, so the rules check the tree the write changes (two
        creates that each fit alone cannot together overfill a parent)."""
        with transaction.atomic():
            services.lock_tree_writes()
            return super().create(request, *args, **kwargs)  # type: ignore[no-any-return]

    def perform_destroy_with_rules(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except rules.RuleViolation as exc:
            raise rule_errors_to_validation_error(exc.errors) from exc


@extend_schema(tags=["queues"])
class QueueViewSet(_TreeViewSet):
    """Queues (Volcano): a tree under ``root``; podgroups are submitted to leaf queues."""

    queryset = Queue.objects.select_related("parent").prefetch_related("children", "teams")
    serializer_class = QueueSerializer
    filterset_class = QueueFilterSet
    ordering_fields = ["name", "weight", "priority", "state", "created", "updated"]

    def visible_ids(self) -> set[int] | None:
        return visible_queue_ids(self.request.user)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        rows = list(page if page is not None else queryset)
        counts = queue_phase_counts([q.pk for q in rows])
        for q in rows:
            q.phase_counts = counts.get(q.pk, {})
        data = self.get_serializer(rows, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    @extend_schema(
        parameters=[
            OpenApiParameter("cascade", OpenApiTypes.BOOL, description="Delete the child queues first (seed 004)."),
            OpenApiParameter(
                "force",
                OpenApiTypes.BOOL,
                description="Also delete the podgroups and pods inside, and the LocalQueues pointing at it.",
            ),
        ]
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        cascade, force = bool_param(request, "cascade"), bool_param(request, "force")
        with transaction.atomic():
            queue = self.locked_object(request)
            self.perform_destroy_with_rules(services.delete_queue, queue, cascade=cascade, force=force)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _act(self, request: Request, name: str) -> Response:
        with transaction.atomic():
            queue = self.locked_object(request)
            changes = self.perform_destroy_with_rules(services.queue_action, queue, name)
        queue.refresh_from_db()
        body = {
            "queue": QueueSerializer(queue, context=self.get_serializer_context()).data,
            "changed": {k: {"state": s, "closed_by_parent": c} for k, (s, c) in sorted(changes.items())},
        }
        return Response(body)

    @extend_schema(
        request=None,
        responses=inline_serializer(
            "QueueActionResult", {"queue": QueueSerializer(), "changed": serializers.DictField()}
        ),
    )
    @action(detail=True, methods=["post"])
    def open(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Open the queue; children it closed reopen with it; a child cannot open under a closed parent."""
        return self._act(request, "open")

    @extend_schema(
        request=None,
        responses=inline_serializer(
            "QueueCloseResult", {"queue": QueueSerializer(), "changed": serializers.DictField()}
        ),
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Close the queue and its open children (marked closed-by-parent); Closing while podgroups remain."""
        return self._act(request, "close")


@extend_schema(tags=["quota-groups"])
class QuotaGroupViewSet(_TreeViewSet):
    """Elastic quota groups (Koordinator): trees of min / max / shared-weight under ``root``."""

    queryset = QuotaGroup.objects.select_related("parent").prefetch_related("children", "teams", "namespaces")
    serializer_class = QuotaGroupSerializer
    filterset_class = QuotaGroupFilterSet

    def visible_ids(self) -> set[int] | None:
        return visible_group_ids(self.request.user)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            group = self.locked_object(request)
            self.perform_destroy_with_rules(services.delete_quota_group, group)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["namespaces"])
class NamespaceViewSet(_TreeViewSet):
    """Namespaces: weight inside queues (seed 000), default queue, quota group, resource quota (seed 003)."""

    queryset = Namespace.objects.select_related("default_queue", "quota_group")
    serializer_class = NamespaceSerializer
    filterset_class = NamespaceFilterSet
    ordering_fields = ["name", "weight", "created", "updated"]

    def visible_ids(self) -> set[int] | None:
        return visible_namespace_ids(self.request.user)


@extend_schema(tags=["resource-flavors"])
class ResourceFlavorViewSet(_TreeViewSet):
    """Kueue's ResourceFlavors: the nodes a flavor stands for (labels, taints) and the tolerations its jobs get; a
    queue's quota per flavor is under the flavored keys of its resource lists (``cpu@spot``)."""

    queryset = ResourceFlavor.objects.all()
    serializer_class = ResourceFlavorSerializer
    filterset_class = ResourceFlavorFilterSet

    def visible_ids(self) -> set[int] | None:
        return None  # every signed-in user reads them (they say which nodes a flavor is, no team's data)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            flavor = self.locked_object(request)
            self.perform_destroy_with_rules(services.delete_resource_flavor, flavor)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["local-queues"])
class LocalQueueViewSet(_TreeViewSet):
    """Kueue's LocalQueues: a namespace's names for leaf queues (a job's ``kueue.x-k8s.io/queue-name`` label), each
    with its ``fairSharing.weight``, which Admission Fair Sharing divides the LocalQueue's usage by. Addressed as
    ``<namespace>/<name>``."""

    queryset = LocalQueue.objects.select_related("namespace", "queue").prefetch_related("usages__cluster")
    serializer_class = LocalQueueSerializer
    filterset_class = LocalQueueFilterSet
    lookup_field = "key"
    lookup_value_regex = "[^/]+/[^/]+"
    ordering_fields = ["namespace__name", "name", "created", "updated"]
    ordering = ["namespace__name", "name"]

    def visible_ids(self) -> set[int] | None:
        namespaces = visible_namespace_ids(self.request.user)
        if namespaces is None:
            return None
        return set(LocalQueue.objects.filter(namespace_id__in=namespaces).values_list("pk", flat=True))

    def get_object(self) -> LocalQueue:
        namespace, _, name = str(self.kwargs["key"]).partition("/")
        queryset = self.filter_queryset(self.get_queryset())
        obj = get_object_or_404(queryset, namespace__name=namespace, name=name)
        self.check_object_permissions(self.request, obj)
        return obj  # type: ignore[no-any-return]

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            row = self.locked_object(request)
            self.perform_destroy_with_rules(services.delete_local_queue, row)
        return Response(status=status.HTTP_204_NO_CONTENT)
