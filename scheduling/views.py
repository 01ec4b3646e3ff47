"""REST endpoints of the cluster: clusters, nodes, podgroups (jobs) and pods (``/api/v1/``)."""

from __future__ import annotations

from typing import Any

import yaml
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404, HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api import bool_param
from engine.limits import brief
from quotas.access import is_admin, may_change_job, visible_group_ids, visible_namespace_ids, visible_queue_ids
from quotas.models import Namespace, Queue, QuotaGroup
from quotas.permissions import AdminOrTeamSubmits, AdminWritesTeamsRead
from quotas.services import lock_tree_writes, settle_closing_queues
from scheduling import agent, agent_access, evictions, job_actions, node_use, ownership
from scheduling.agent_access import NODE_AGENTS_GROUP, is_node_agent
from scheduling.choices import AGENT_LISTED_STATUSES, PodStatus
from scheduling.filtersets import (
    EvictionFilterSet,
    NodeFilterSet,
    PodFilterSet,
    PodGroupFilterSet,
    QuotaSampleFilterSet,
    SchedulingSessionFilterSet,
)
from scheduling.models import (
    Cluster,
    Eviction,
    Node,
    Pod,
    PodGroup,
    QuotaSample,
    RemovalCause,
    SampleKind,
    SchedulingSession,
)
from scheduling.serializers import (
    AgentPodSerializer,
    ClusterSerializer,
    DecisionSerializer,
    EvictionSerializer,
    HeartbeatSerializer,
    NodeSerializer,
    PodGroupReasonSerializer,
    PodGroupSerializer,
    PodSerializer,
    PodStatusReportSerializer,
    QuotaSampleSerializer,
    SchedulingSessionDetailSerializer,
    SchedulingSessionSerializer,
)
from scheduling.store import session_decisions


class NodeAgentOrAdmin(permissions.BasePermission):
    """The node-agent API (register, heartbeat, list a node's pods, report pod status, confirm evictions):
    admins, and members of the ``node-agents`` Django group for the nodes their credential is bound to
    (``scheduling.agent_access``; a node, or a pod on it: 403 naming the node otherwise)."""

    message = f"Only node agents (members of the {NODE_AGENTS_GROUP} group) and admins may call the agent API."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_node_agent(request.user)

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        user = request.user
        if user.is_staff:
            return True
        if isinstance(obj, Node):
            if agent_access.may_act_for(user, obj):
                return True
            self.message = agent_access.refusal(user, obj.name, obj.cluster, obj.pool)
            return False
        if isinstance(obj, Pod):
            if obj.node is not None and agent_access.may_act_for(user, obj.node):
                return True
            self.message = agent_access.pod_refusal(user, obj)
            return False
        return False


def _agent_error(exc: agent.AgentError) -> serializers.ValidationError:
    return serializers.ValidationError({exc.field: [exc.message]}, code=exc.code)


class ClusterMirroredError(exceptions.APIException):
    """A person's write of a node, podgroup or pod of a cluster mirrored from Kubernetes (``scheduling.ownership``)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The cluster is mirrored from Kubernetes: Fairway only reads its nodes, podgroups and pods."
    default_code = "cluster_mirrored_from_kubernetes"


class JobActionConflict(exceptions.APIException):
    """A job action on a job not in a state it applies to (``scheduling.job_actions.JobActionRefused``)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The job is not in a state this action applies to."
    default_code = "job_action_conflict"


class JobActionSerializer(serializers.Serializer):
    """What a job action did."""

    action = serializers.CharField(help_text="suspend, resume, requeue or delete")
    message = serializers.CharField(help_text="What was done, in a sentence.")
    released = serializers.IntegerField(help_text="Pods holding nodes that were evicted.")
    replaced = serializers.IntegerField(help_text="Pending replacements queued for them (clusters of node agents).")
    pending = serializers.BooleanField(help_text="The Kubernetes adapter still has to carry it out (202).")


class ClusterNotEmptyError(exceptions.APIException):
    """Deleting a cluster that holds nodes, podgroups or pods without ``?force=true``."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The cluster holds nodes, podgroups or pods; delete it with ?force=true to delete them with it."
    default_code = "cluster_not_empty"


class _PeopleWriteNoMirroredCluster:
    """Creates, changes and deletes of the rows of a cluster mirrored from Kubernetes are refused (409, the sentence
    of ``scheduling.ownership``): checked on the row's cluster and on the one a change moves it to, before the
    write. The node-agent actions check the node's or pod's cluster themselves."""

    row_kind: ownership.Kind

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, ownership.MirroredCluster):
            exc = ClusterMirroredError(str(exc))
        return super().handle_exception(exc)  # type: ignore[misc,no-any-return]

    def perform_create(self, serializer: Any) -> None:
        ownership.check_people_may_write(serializer.validated_data.get("cluster"), self.row_kind, "create")
        super().perform_create(serializer)  # type: ignore[misc]

    def perform_update(self, serializer: Any) -> None:
        ownership.check_people_may_write(serializer.instance.cluster, self.row_kind, "change")
        ownership.check_people_may_write(serializer.validated_data.get("cluster"), self.row_kind, "change")
        super().perform_update(serializer)  # type: ignore[misc]

    def perform_destroy(self, instance: Any) -> None:
        ownership.check_people_may_write(instance.cluster, self.row_kind, "delete")
        super().perform_destroy(instance)  # type: ignore[misc]


@extend_schema(tags=["cluster"])
class ClusterViewSet(viewsets.ModelViewSet):
    queryset = Cluster.objects.all()
    serializer_class = ClusterSerializer
    permission_classes = [AdminWritesTeamsRead]
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    ordering_fields = ["name", "created"]
    ordering = ["name"]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "force",
                OpenApiTypes.BOOL,
                description="Also delete the nodes, podgroups and pods it holds (without it, a cluster that holds any "
                "is refused with 409 cluster_not_empty).",
            )
        ]
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete the cluster with its nodes, podgroups, pods and session records; its running sessions finish first
        and no new one starts (``scheduling.ownership.delete_cluster``)."""
        force = bool_param(request, "force")
        cluster = self.get_object()
        try:
            ownership.delete_cluster(cluster.pk, force=force)
        except Cluster.DoesNotExist as exc:  # deleted by another request meanwhile
            raise Http404 from exc
        except ownership.ClusterNotEmpty as exc:
            raise ClusterNotEmptyError(
                f"{exc}; to delete them with it, confirm with force (DELETE /api/v1/clusters/{cluster.name}/?force=true, "
                f"or fairway cluster delete {cluster.name} --force)"
            ) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["cluster"])
class NodeViewSet(_PeopleWriteNoMirroredCluster, viewsets.ModelViewSet):
    """Nodes, addressed by name (``?cluster=`` picks the cluster when names repeat across clusters)."""

    queryset = Node.objects.select_related("cluster")
    row_kind = "node"
    serializer_class = NodeSerializer
    permission_classes = [AdminWritesTeamsRead]
    filterset_class = NodeFilterSet
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    ordering_fields = ["name", "created", "ready"]
    ordering = ["cluster__name", "name"]

    agent_actions = ("create", "heartbeat", "pods")

    def get_permissions(self) -> list[Any]:
        if self.action in self.agent_actions:
            return [NodeAgentOrAdmin()]
        return super().get_permissions()  # type: ignore[no-any-return]

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        """A page of nodes reads what their pods take in one query (``allocated``, ``reserved``)."""
        if args and kwargs.get("many") and self.action == "list":
            kwargs["context"] = {
                **self.get_serializer_context(),
                "node_takes": node_use.of_nodes(n.pk for n in args[0]),
            }
        return super().get_serializer(*args, **kwargs)

    @extend_schema(
        request=HeartbeatSerializer,
        responses=NodeSerializer,
        parameters=[OpenApiParameter("cluster", OpenApiTypes.STR, description="The node's cluster.")],
    )
    @action(detail=True, methods=["post"])
    def heartbeat(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A node agent's heartbeat: the node is Ready; optional new allocatable, labels, taints, unschedulable."""
        node = self.get_object()
        ownership.check_people_may_write(node.cluster, "node", "report")
        body = HeartbeatSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        agent.heartbeat(node, timezone.now(), **body.validated_data)
        return Response(NodeSerializer(node, context=self.get_serializer_context()).data)

    @extend_schema(
        responses=AgentPodSerializer(many=True),
        parameters=[OpenApiParameter("cluster", OpenApiTypes.STR, description="The node's cluster.")],
    )
    @action(detail=True, methods=["get"], filterset_class=None, ordering_fields=["created", "id"])
    def pods(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """What the node's agent should run or stop: its Bound and Running pods (``action: run``), its Releasing
        pods and the pods lost while it was NotReady (``action: stop``; confirm each gone)."""
        node = self.get_object()
        qs = (
            Pod.objects.filter(
                Q(status__in=AGENT_LISTED_STATUSES) | Q(status=PodStatus.FAILED, reason=agent.NODE_LOST_REASON),
                node=node,
            )
            .select_related("namespace", "podgroup", "node")
            .order_by("created", "id")
        )
        page = self.paginate_queryset(qs)
        data = AgentPodSerializer(page if page is not None else qs, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    def get_object(self) -> Node:
        qs = self.get_queryset().filter(name=self.kwargs["name"])
        cluster = self.request.query_params.get("cluster")
        if cluster:
            qs = qs.filter(cluster__name=cluster)
        nodes = list(qs[:2])
        if not nodes:
            raise Http404
        if len(nodes) > 1:
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

    def check_object_permissions(self, request: Request, obj: Any) -> None:
        """Reading a job is not owning it: a team member may change (PUT, PATCH) or delete only jobs whose queue
        and namespace both lie in its subtrees (``quotas.access.may_change_job``); 403 otherwise. The node
        agent's actions are checked by their own permission."""
        super().check_object_permissions(request, obj)
        if request.method in permissions.SAFE_METHODS or self.action in getattr(self, "agent_actions", ()):
            return
        if not may_change_job(request.user, self.queue_of(obj), obj.namespace_id):
            self.permission_denied(
                request,
                message=f"you may only change jobs in your team's queues and namespaces; {self.describe(obj)}",
                code="permission_denied",
            )

    queue_of: Any
    describe: Any


@extend_schema(tags=["jobs"])
class PodGroupViewSet(_PeopleWriteNoMirroredCluster, _JobViewSet):
    """Podgroups (gang jobs): submitted to a leaf queue; phase and conditions are set by the scheduler."""

    queryset = PodGroup.objects.select_related("cluster", "namespace", "queue")
    row_kind = "podgroup"
    serializer_class = PodGroupSerializer
    filterset_class = PodGroupFilterSet

    @staticmethod
    def team_q(queues: set[int], namespaces: set[int], groups: set[int]) -> Q:
        # a team reads the jobs of its queues and those whose pods count against its quota groups (as its pages do)
        return Q(queue_id__in=queues) | Q(pods__quota_group_id__in=groups)

    @staticmethod
    def queue_of(instance: PodGroup) -> int:
        return instance.queue_id

    @staticmethod
    def describe(instance: PodGroup) -> str:
        return f"podgroup {instance.namespace.name}/{instance.name} is in queue {instance.queue.name}"

    @extend_schema(responses=PodGroupReasonSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None)
    def history(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The podgroup's phases and reasons over time, newest first (a row each time they changed)."""
        podgroup = self.get_object()
        qs = podgroup.reasons.order_by("-time", "-id")
        page = self.paginate_queryset(qs)
        data = PodGroupReasonSerializer(page if page is not None else qs, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    # -- job actions (``scheduling.job_actions``) ------------------------------------------------------------

    def _act(self, request: Request, action: str) -> Response:
        """Run a job action on the podgroup: 403 with a sentence for a user who is not an admin nor a member of the
        job's team, 409 with a sentence for a job not in a state the action applies to; 200 with what it did, or
        202 when the Kubernetes adapter carries it out."""
        # 404 for a job the user cannot read; 403 with a sentence for one it may read but not change
        # (``check_object_permissions``: ``quotas.access.may_change_job``, the rule of ``job_actions.may_act``)
        podgroup = self.get_object()
        try:
            done = job_actions.perform(action, podgroup, request.user, timezone.now())
        except job_actions.JobActionRefused as exc:
            raise JobActionConflict(str(exc)) from exc
        body = JobActionSerializer(done).data
        return Response(body, status=status.HTTP_202_ACCEPTED if done.pending else status.HTTP_200_OK)

    @extend_schema(request=None, responses={200: JobActionSerializer, 409: None})
    @action(detail=True, methods=["post"], filterset_class=None)
    def suspend(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Suspend the job: it is neither admitted nor placed until resumed; its pods that hold nodes are evicted
        (reason ``Suspended``), its pending pods stay Pending. Admins and the job's team; 409 if suspended already."""
        return self._act(request, "suspend")

    @extend_schema(request=None, responses={200: JobActionSerializer, 409: None})
    @action(detail=True, methods=["post"], filterset_class=None)
    def resume(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Resume a suspended job: it waits for admission again. 409 if it is not suspended."""
        return self._act(request, "resume")

    @extend_schema(request=None, responses={200: JobActionSerializer, 409: None})
    @action(detail=True, methods=["post"], filterset_class=None)
    def requeue(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Release the job and let it wait for admission again: its pods that hold nodes are evicted (reason
        ``Requeued``), it goes back to Pending and counts one more requeue. 409 if it is suspended or waiting
        already."""
        return self._act(request, "requeue")

    @extend_schema(request=None, responses={200: JobActionSerializer, 202: JobActionSerializer, 409: None})
    @action(detail=True, methods=["post"], url_path="delete", url_name="delete", filterset_class=None)
    def delete_job(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete the job (recorded as a removed job, cause ``deleted``, with who did it). In a cluster mirrored from
        Kubernetes the request is recorded and the adapter deletes the PodGroup and its pods there: 202."""
        return self._act(request, "delete")

    @extend_schema(
        parameters=[OpenApiParameter("output", OpenApiTypes.STR, enum=["yaml", "json"], required=False)],
        responses={(200, "application/yaml"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.ANY},
    )
    @action(detail=True, methods=["get"], filterset_class=None)
    def manifest(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        """The job as manifests: its Volcano PodGroup and its pods, as ``fairway simulate`` reads them back. YAML by
        default (one multi-document text), or a JSON list with ``output=json``."""
        podgroup = self.get_object()
        output = request.query_params.get("output") or "yaml"
        if output not in ("yaml", "json"):
            raise ValidationError({"output": [f"output must be yaml or json, not {brief(output)}"]})
        docs = job_actions.manifests(podgroup)
        if output == "json":
            return Response(docs)
        return HttpResponse(
            yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False),
            content_type="application/yaml; charset=utf-8",
        )

    def perform_destroy(self, instance: PodGroup) -> None:
        """Delete the podgroup, then settle the queues it may have kept Closing. The tree write lock comes first
        (as in ``quotas.services.delete_queue``), so that every writer of both a cluster's rows and the trees
        takes the lock before the cluster's revision (``core.models.Revision``) and none waits for the other.
        The job is recorded as removed, with its evictions (``scheduling.evictions``)."""
        with transaction.atomic():
            lock_tree_writes()
            ownership.check_people_may_write(instance.cluster, self.row_kind, "delete")
            evictions.remove_podgroups(
                PodGroup.objects.filter(pk=instance.pk),
                timezone.now(),
                RemovalCause.DELETED,
                f"deleted through the API by {self.request.user.get_username()}",
            )
            settle_closing_queues()


@extend_schema(tags=["jobs"])
class PodViewSet(_PeopleWriteNoMirroredCluster, _JobViewSet):
    """Pods (tasks): their request, priority, quota group and placement."""

    queryset = Pod.objects.select_related("cluster", "namespace", "podgroup", "quota_group", "node")
    row_kind = "pod"
    serializer_class = PodSerializer
    filterset_class = PodFilterSet

    @staticmethod
    def team_q(queues: set[int], namespaces: set[int], groups: set[int]) -> Q:
        return Q(podgroup__queue_id__in=queues) | Q(quota_group_id__in=groups) | Q(namespace_id__in=namespaces)

    @staticmethod
    def queue_of(instance: Pod) -> int | None:
        """The queue a pod runs under: its podgroup's, else its namespace's default queue."""
        if instance.podgroup_id:
            return instance.podgroup.queue_id  # type: ignore[union-attr]
        return instance.namespace.default_queue_id

    @staticmethod
    def describe(instance: Pod) -> str:
        return f"pod {instance.namespace.name}/{instance.name} is not one of them"

    agent_actions = ("report_status", "gone")

    def get_permissions(self) -> list[Any]:
        if self.action in self.agent_actions:
            return [NodeAgentOrAdmin()]
        return super().get_permissions()  # type: ignore[no-any-return]

    def get_queryset(self) -> QuerySet[Any]:
        if self.action in self.agent_actions:  # the permission checks that the pod is on one of the agent's nodes
            return Pod.objects.select_related("cluster", "namespace", "podgroup", "node")
        return super().get_queryset()

    @extend_schema(request=PodStatusReportSerializer, responses=PodSerializer)
    @action(detail=True, methods=["post"], url_path="status", url_name="status")
    def report_status(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A node agent reports the pod Running, Succeeded or Failed (Bound -> Running -> Succeeded | Failed)."""
        pod = self.get_object()
        ownership.check_people_may_write(pod.cluster, "pod", "report")
        body = PodStatusReportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            data = body.validated_data
            pod = agent.report_pod_status(
                pod, data["status"], timezone.now(), node=data.get("node"), message=data.get("message", "")
            )
        except agent.AgentError as exc:
            raise _agent_error(exc) from exc
        return Response(PodSerializer(pod, context=self.get_serializer_context()).data)

    @extend_schema(request=None, responses=PodSerializer)
    @action(detail=True, methods=["post"])
    def gone(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A node agent confirms an evicted (Releasing) pod gone: it becomes Failed with reason Evicted."""
        pod = self.get_object()
        ownership.check_people_may_write(pod.cluster, "pod", "report")
        try:
            pod = agent.confirm_gone(pod, timezone.now())
        except agent.AgentError as exc:
            raise _agent_error(exc) from exc
        return Response(PodSerializer(pod, context=self.get_serializer_context()).data)


# -- records ----------------------------------------------------------------------------------------------------


def _visible_namespace_names(user: Any) -> set[str] | None:
    ids = visible_namespace_ids(user)
    return None if ids is None else set(Namespace.objects.filter(pk__in=ids).values_list("name", flat=True))


@extend_schema(tags=["records"])
class SchedulingSessionViewSet(viewsets.ReadOnlyModelViewSet):
    """Scheduling sessions and recycling passes: counts, timings, status; their decisions at ``decisions/``.

    Team members see every session's counts, and only the decisions about their own namespaces."""

    queryset = SchedulingSession.objects.select_related("cluster").defer("bindings")
    serializer_class = SchedulingSessionSerializer
    permission_classes = [AdminWritesTeamsRead]
    filterset_class = SchedulingSessionFilterSet
    ordering_fields = ["started", "duration_ms", "bound", "evicted"]
    ordering = ["-started", "-id"]

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return SchedulingSessionDetailSerializer if self.action == "retrieve" else SchedulingSessionSerializer

    def get_serializer_context(self) -> dict[str, Any]:
        context = super().get_serializer_context()
        context["visible_namespaces"] = _visible_namespace_names(self.request.user)
        return context

    @extend_schema(
        responses=DecisionSerializer(many=True),
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=["bind", "pipeline", "evict", "podgroup"]),
        ],
    )
    @action(detail=True, methods=["get"], filterset_class=None)
    def decisions(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Every decision of the session (bindings, evictions, podgroup phase and reason changes), paginated."""
        session = self.get_object()
        kind = request.query_params.get("kind") or None
        if kind not in (None, "bind", "pipeline", "evict", "podgroup"):
            raise serializers.ValidationError(
                {"kind": [f"kind must be bind, pipeline, evict or podgroup, not {kind!r}"]}
            )
        items = session_decisions(session, _visible_namespace_names(request.user), kind)
        page = self.paginate_queryset(items)
        data = DecisionSerializer(page if page is not None else items, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)


@extend_schema(tags=["records"])
class EvictionViewSet(viewsets.ReadOnlyModelViewSet):
    """Pods the scheduler evicted (reclaim, preempt, recycle, node lost, gang released), with the reason and
    numbers and whose they were (job, queue, quota group), newest first; kept after their job is removed for
    ``FAIRWAY_EVICTION_RETENTION_DAYS``. ``?team=`` lists a team's, as its team page does."""

    queryset = Eviction.objects.select_related("cluster", "removed_job")
    serializer_class = EvictionSerializer
    permission_classes = [AdminWritesTeamsRead]
    filterset_class = EvictionFilterSet
    ordering_fields = ["created", "id"]
    ordering = ["-created", "-id"]

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        names = _visible_namespace_names(self.request.user)
        return qs if names is None else qs.filter(namespace__in=names)


@extend_schema(tags=["records"])
class QuotaSampleViewSet(viewsets.ReadOnlyModelViewSet):
    """Quota values over time, per tree node (``?node=``), kind (``queue`` / ``quota``) and time window
    (``?since=&until=``), in base units. Compacted: full resolution for an hour, one per minute up to a day, one
    per hour after that."""

    queryset = QuotaSample.objects.select_related("cluster")
    serializer_class = QuotaSampleSerializer
    permission_classes = [AdminWritesTeamsRead]
    filterset_class = QuotaSampleFilterSet
    ordering_fields = ["time", "id"]
    ordering = ["time", "id"]

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        user = self.request.user
        queues, groups = visible_queue_ids(user), visible_group_ids(user)
        if queues is None:
            return qs
        queue_names = Queue.objects.filter(pk__in=queues).values_list("name", flat=True)
        group_names = QuotaGroup.objects.filter(pk__in=groups or set()).values_list("name", flat=True)
        return qs.filter(
            Q(kind=SampleKind.QUEUE, name__in=list(queue_names)) | Q(kind=SampleKind.QUOTA, name__in=list(group_names))
        )
