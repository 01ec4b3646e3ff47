"""The trees' computed values through the API: ``queues/tree/``, ``quota-groups/tree/`` (each node with its values
now) and ``queues/{name}/explain/``, ``quota-groups/{name}/explain/`` (how a node's values were reached); and why a
job waits, ``podgroups/{id}/why/`` (``planning.why``).

They share their URLs with the trees' own endpoints (``quotas.views``) and read the same rows with the same
visibility, but only read: the values come from ``planning.valuecache``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from engine.changes import as_quantities, node_values
from engine.limits import brief
from engine.resources import null_unbounded
from planning.values_api import EXPLAIN_PARAMS, cached_values, explain_group, explain_queue
from planning.why import why_podgroup
from quotas.access import visible_group_ids, visible_queue_ids
from quotas.filtersets import QueueFilterSet, QuotaGroupFilterSet
from quotas.models import Queue, QuotaGroup
from quotas.permissions import AdminWritesTeamsRead
from quotas.selectors import build_tree, queue_phase_counts
from quotas.serializers import QueueSerializer, QuotaGroupSerializer
from scheduling.models import Cluster
from scheduling.serializers import WhySerializer
from scheduling.views import PodGroupViewSet


def tree_values(request: Request, section: str) -> dict[str, Any]:
    """The computed values of every node of one tree, now, as quantities (``{}`` when the cluster is unknown)."""
    try:
        _, values = cached_values(request.query_params.get("cluster"))
    except Cluster.DoesNotExist:
        return {}
    return as_quantities(node_values(values))[section]


def explain_values(request: Request) -> Any:
    """The values an explanation reads: of ``?cluster=`` (400 when there is no such cluster) or of the default
    cluster (``None`` when it does not exist: nothing to explain)."""
    name = request.query_params.get("cluster")
    try:
        return cached_values(name)[1]
    except Cluster.DoesNotExist:
        if name:
            raise serializers.ValidationError({"cluster": [f"cluster {brief(name)} does not exist"]}) from None
        return None


class _TreeValuesViewSet(viewsets.GenericViewSet):
    """Read-only actions on a tree's nodes, addressed and narrowed as ``quotas.views`` addresses them."""

    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    permission_classes = [AdminWritesTeamsRead]

    visible_ids: Any  # each tree says which of its nodes a user may read (None: all)

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        ids = self.visible_ids()
        return qs if ids is None else qs.filter(pk__in=ids)


@extend_schema(tags=["queues"])
class QueueValuesViewSet(_TreeValuesViewSet):
    queryset = Queue.objects.select_related("parent").prefetch_related("children", "teams")
    serializer_class = QueueSerializer
    filterset_class = QueueFilterSet

    def visible_ids(self) -> set[int] | None:
        return visible_queue_ids(self.request.user)

    @extend_schema(responses=serializers.ListSerializer(child=serializers.DictField()))
    @action(detail=False, methods=["get"])
    def tree(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The whole queue tree (the part you may read), nested, in one call."""
        rows = list(Queue.objects.select_related("parent").prefetch_related("teams").order_by("name"))
        counts = queue_phase_counts()
        for q in rows:
            q.phase_counts = counts.get(q.pk, {})

        values = tree_values(request, "queues")

        def serialize(q: Queue) -> dict[str, Any]:
            data = dict(QueueSerializer(q, context=self.get_serializer_context()).data)
            data.pop("children", None)
            data["values"] = values.get(q.name)
            return data

        return Response(build_tree(rows, serialize, visible=self.visible_ids()))

    @extend_schema(
        parameters=EXPLAIN_PARAMS,
        responses=inline_serializer(
            "QueueExplanation",
            {
                "name": serializers.CharField(),
                "values": serializers.DictField(),
                "steps": serializers.ListField(child=serializers.DictField()),
            },
        ),
    )
    @action(detail=True, methods=["get"])
    def explain(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """How each of this queue's values was reached (the rounds, the caps that bound it)."""
        queue = self.get_object()
        values = explain_values(request)
        if values is None:
            return Response({"name": queue.name, "values": None, "steps": []})
        return Response(
            {
                "name": queue.name,
                "values": as_quantities(node_values(values))["queues"].get(queue.name),
                "steps": null_unbounded(explain_queue(values, queue.name)) if queue.name in values.queues else [],
            }
        )


@extend_schema(tags=["quota-groups"])
class QuotaGroupValuesViewSet(_TreeValuesViewSet):
    queryset = QuotaGroup.objects.select_related("parent").prefetch_related("children", "teams", "namespaces")
    serializer_class = QuotaGroupSerializer
    filterset_class = QuotaGroupFilterSet

    def visible_ids(self) -> set[int] | None:
        return visible_group_ids(self.request.user)

    @extend_schema(responses=serializers.ListSerializer(child=serializers.DictField()))
    @action(detail=False, methods=["get"])
    def tree(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Every quota tree (the part you may read), nested, in one call."""
        rows = list(QuotaGroup.objects.select_related("parent").prefetch_related("teams", "namespaces"))

        values = tree_values(request, "quota_groups")

        def serialize(g: QuotaGroup) -> dict[str, Any]:
            data = dict(QuotaGroupSerializer(g, context=self.get_serializer_context()).data)
            data.pop("children", None)
            data["values"] = values.get(g.name)
            return data

        return Response(build_tree(rows, serialize, visible=self.visible_ids()))

    @extend_schema(
        parameters=EXPLAIN_PARAMS,
        responses=inline_serializer(
            "GroupExplanation",
            {"name": serializers.CharField(), "values": serializers.DictField(), "explain": serializers.DictField()},
        ),
    )
    @action(detail=True, methods=["get"])
    def explain(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """How this group's runtime was reached: its floor, the rounds of sharing, the cap that bound it."""
        group = self.get_object()
        values = explain_values(request)
        if values is None:
            return Response({"name": group.name, "values": None, "explain": {}})
        return Response(
            {
                "name": group.name,
                "values": as_quantities(node_values(values))["quota_groups"].get(group.name),
                "explain": null_unbounded(explain_group(values, group.name)) if group.name in values.quotas else {},
            }
        )


class PodGroupWhyViewSet(PodGroupViewSet):
    """``podgroups/{id}/why/``: the podgroups' endpoint's addressing, permissions and team scoping, one action."""

    filterset_class = None

    @extend_schema(responses=WhySerializer)
    def why(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Why the job is where it is: its reason with the numbers, since when, its governing path (the queue path
        root first, its pods' quota groups, its namespace, the cluster when it holds the job) with the blocking node
        marked, and the latest evictions of its pods with the job and queue that took the resources
        (``planning.why``); and ``recycling``: the recycling warnings that would take some of its pods unless its
        quota group's usage falls (``scheduling.recycle_outlook``: how many pods, in how long, what usage must fall
        to)."""
        return Response(why_podgroup(self.get_object(), request.user, now=timezone.now()))
