"""Serializers of the cluster: clusters, nodes, podgroups and pods."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import APIException, PermissionDenied

from core.api import rule_errors_to_validation_error
from core.fields import BlockerField, NameField, ObjectNameField, ResourceListSerializerField
from engine import rules
from engine.manifests.core import read_node_selector_terms
from engine.manifests.export import node_selector_terms
from engine.objects import DEFAULT_GROUP
from engine.policy.policy import PolicyError
from engine.resources import ResourceList, null_unbounded
from engine.session.decisions import blocker_json
from quotas import services
from quotas.access import is_admin, submittable_queue_ids, usable_group_ids, visible_namespace_ids
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup
from scheduling import agent_access, node_use
from scheduling.choices import AGENT_REPORTED_STATUSES, PodStatus
from scheduling.kubeconfig import KUBECONFIG_MAX_CHARS, kubeconfig_problem
from scheduling.models import (
    Cluster,
    Eviction,
    Node,
    Pod,
    PodGroup,
    PodGroupReason,
    QuotaSample,
    SchedulingSession,
    parse_kueue_configuration,
    parse_scheduler_policy,
)
from scheduling.store import session_decisions

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def default_cluster() -> Cluster:
    cluster, _ = Cluster.objects.get_or_create(name=settings.FAIRWAY["DEFAULT_CLUSTER"])
    return cluster


_REPORTED = ", ".join(AGENT_REPORTED_STATUSES[:-1]) + f" or {AGENT_REPORTED_STATUSES[-1]}"  # "Running, ... or Failed"


class ClusterSerializer(serializers.ModelSerializer):
    """A cluster; ``source``, ``scheduler_name``, ``tree_source`` and ``kubeconfig`` set up the Kubernetes adapter
    (docs/kubernetes.md). ``kubeconfig`` holds credentials: it is written, never
    read back (``kubeconfig_set`` says whether there is one)."""

    node_heartbeat_timeout = serializers.IntegerField(required=False, min_value=1, max_value=86_400)
    kubeconfig = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=KUBECONFIG_MAX_CHARS,
        style={"input_type": "password"},
        help_text="Write-only: never returned in any response (kubeconfig_set says whether one is stored). "
        "source=kubernetes: the kubeconfig (YAML) the adapter connects with, its current-context naming one of its "
        "contexts; blank means the adapter's in-cluster service account.",
    )
    kubeconfig_set = serializers.SerializerMethodField(
        help_text="Whether a kubeconfig is stored (the kubeconfig itself is write-only)."
    )

    class Meta:
        model = Cluster
        fields = [
            "name",
            "description",
            "scheduler_policy",
            "simulated",
            "node_heartbeat_timeout",
            "pod_eviction_timeout",
            "source",
            "scheduler_name",
            "tree_source",
            "kubeconfig",
            "kubeconfig_set",
            "kueue_configuration",
            "created",
        ]
        read_only_fields = ["created"]
        extra_kwargs = {"name": {"trim_whitespace": False}}  # "west " is refused, not trimmed (ObjectNameField)

    def get_kubeconfig_set(self, obj: Cluster) -> bool:
        return obj.kubeconfig_set

    def validate_scheduler_name(self, value: str) -> str:
        """The pods' ``spec.schedulerName`` the adapter takes: Kubernetes wants a DNS-1123 subdomain."""
        errors = rules.validate_dns_subdomain(value, what="scheduler name", field="scheduler_name", max_length=63)
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def validate_kubeconfig(self, value: str) -> str:
        """A kubeconfig the adapter can load (``scheduling.kube.client.api_client``), or blank. The messages never
        quote it: it holds credentials."""
        problem = kubeconfig_problem(value)
        if problem:
            raise serializers.ValidationError(problem, code="invalid")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """The model's rule of ``tree_source`` (``Cluster.clean_tree_source``: only a ``source=kubernetes``
        cluster, and only one cluster, owns the trees), on the cluster as it would be saved."""
        if self.instance is not None and "source" not in attrs and "tree_source" not in attrs:
            return attrs
        candidate = copy.copy(self.instance) if self.instance is not None else Cluster()
        for key in ("name", "source", "tree_source"):
            if key in attrs:
                setattr(candidate, key, attrs[key])
        try:
            candidate.clean_tree_source()
        except DjangoValidationError as exc:
            sent = self.initial_data if isinstance(self.initial_data, Mapping) else {}
            # the rule is about the pair: name the field the request changed when it did not send tree_source
            field = "source" if "tree_source" not in sent and "source" in sent else "tree_source"
            messages = [m for ms in exc.message_dict.values() for m in ms]
            raise serializers.ValidationError({field: messages}, code="invalid") from exc
        return attrs

    def validate_name(self, value: str) -> str:
        errors = rules.validate_dns_label(value, what="cluster name")
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def validate_kueue_configuration(self, value: str) -> str:
        """Kueue's Configuration (YAML), read as ``fairway simulate`` reads one; blank: none. For a cluster mirrored
        from Kubernetes the adapter writes it from Kueue's ConfigMap."""
        try:
            parse_kueue_configuration(value or "")
        except ValueError as exc:
            raise serializers.ValidationError(str(exc), code="invalid") from exc
        return value

    def validate_scheduler_policy(self, value: str) -> str:
        """Volcano's scheduler configuration; it must parse (``Policy.from_yaml``)."""

        try:
            parse_scheduler_policy(value or "")
        except PolicyError as exc:
            raise serializers.ValidationError(str(exc), code="invalid") from exc
        return value


class TaintSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=253)
    value = serializers.CharField(max_length=253, required=False, allow_blank=True, default="")
    effect = serializers.ChoiceField(choices=TAINT_EFFECTS)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A PATCH is partial down to nested items, where DRF then skips "required" and defaults: a taint without a
        # key was stored, and every later read of the node was a 500.
        missing = {f: ["This field is required."] for f in ("key", "effect") if f not in attrs}
        if missing:
            raise serializers.ValidationError(missing, code="required")
        return {"value": "", **attrs}


class TolerationSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=253, required=False, allow_blank=True, default="")
    operator = serializers.ChoiceField(choices=("Equal", "Exists"), default="Equal")
    value = serializers.CharField(max_length=253, required=False, allow_blank=True, default="")
    effect = serializers.ChoiceField(choices=("", *TAINT_EFFECTS), required=False, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "", "operator": "Equal", "value": "", "effect": "", **attrs}  # the defaults, PATCH included


class StringMapField(serializers.DictField):
    child = serializers.CharField(max_length=253, allow_blank=True)


class NodeAffinityField(serializers.JSONField):
    """A pod's required node affinity: the ``nodeSelectorTerms`` of Kubernetes'
    ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` (``[]``: none), checked as the API server
    checks them and stored as ``engine.manifests.export.node_selector_terms`` writes them back."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "Required node affinity, as Kubernetes' nodeSelectorTerms: a list of terms (ORed), each with "
            "matchExpressions (key, operator In/NotIn/Exists/DoesNotExist/Gt/Lt, values) and/or matchFields "
            "(metadata.name In/NotIn one name), ANDed. The session places the pod only on a node some term matches. "
            "[]: none.",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        value = super().to_internal_value(data)
        if value in (None, []):
            return []
        try:
            terms = read_node_selector_terms(value, self.field_name or "node_affinity")
        except ValueError as exc:
            raise serializers.ValidationError(str(exc), code="invalid") from exc
        return node_selector_terms(terms)


class NodeSerializer(serializers.ModelSerializer):
    cluster = NameField(slug_field="name", queryset=Cluster.objects.all(), required=False)
    name = ObjectNameField()
    # nodes introduce resource names; each amount within what one node may have (FAIRWAY_MAX_NODE_AMOUNT)
    allocatable = ResourceListSerializerField(required=False, any_name=True, per_node=True)
    labels = StringMapField(required=False)
    taints = TaintSerializer(many=True, required=False)
    allocated = serializers.SerializerMethodField(
        help_text="What the pods running on the node ask (Running, and Releasing until gone): resource name to "
        "canonical Kubernetes quantity."
    )
    reserved = serializers.SerializerMethodField(
        help_text="What pods placed on the node but not running yet ask (Allocated, Binding, Bound, Pipelined)."
    )

    class Meta:
        model = Node
        fields = [
            "cluster",
            "name",
            "allocatable",
            "allocated",
            "reserved",
            "labels",
            "taints",
            "unschedulable",
            "ready",
            "not_ready_since",
            "last_heartbeat",
            "pool",
            "set_aside",
            "created",
            "updated",
        ]
        read_only_fields = ["last_heartbeat", "not_ready_since", "set_aside", "created", "updated"]
        validators: list[Any] = []  # uniqueness is checked in validate() with a message naming the object

    def _take(self, obj: Node) -> node_use.NodeTake:
        """What the pods take of ``obj``: from the view's one query for the page (``node_takes`` in the context),
        else one query for this node (the answer to a write)."""
        takes = self.context.get("node_takes")
        if takes is None or obj.pk not in takes:
            return node_use.of_nodes([obj.pk])[obj.pk]
        return takes[obj.pk]  # type: ignore[no-any-return]

    @extend_schema_field(ResourceListSerializerField())
    def get_allocated(self, obj: Node) -> dict[str, str | None] | None:
        return ResourceListSerializerField().to_representation(self._take(obj).allocated)

    @extend_schema_field(ResourceListSerializerField())
    def get_reserved(self, obj: Node) -> dict[str, str | None] | None:
        return ResourceListSerializerField().to_representation(self._take(obj).reserved)

    def validate_name(self, value: str) -> str:
        errors = rules.validate_dns_subdomain(value, what="node name")
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def validate_pool(self, value: str) -> str:
        errors = rules.validate_dns_label(value, what="pool name") if value else []
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is None:
            attrs.setdefault("cluster", default_cluster())
            request = self.context.get("request")
            user = getattr(request, "user", None)
            pool = attrs.get("pool", "")
            if user is not None and not agent_access.may_register(user, attrs["cluster"], attrs["name"], pool):
                # an agent registers only a node it is bound to (by name, or with its pool): 403 before any 400
                raise PermissionDenied(agent_access.refusal(user, attrs["name"], attrs["cluster"], pool))
            if Node.objects.filter(cluster=attrs["cluster"], name=attrs["name"]).exists():
                raise serializers.ValidationError({"name": [f"node {attrs['name']} already exists"]}, code="unique")
            _check_room(attrs["cluster"], "name")
        elif "name" in attrs or "cluster" in attrs:  # a rename (or a move) onto a taken name was a 500
            if attrs.get("cluster", self.instance.cluster) != self.instance.cluster:
                _check_room(attrs["cluster"], "cluster")
            cluster, name = attrs.get("cluster", self.instance.cluster), attrs.get("name", self.instance.name)
            if Node.objects.filter(cluster=cluster, name=name).exclude(pk=self.instance.pk).exists():
                raise serializers.ValidationError(
                    {"name": [f"node {name} already exists in cluster {cluster.name}"]}, code="unique"
                )
        if "allocatable" in attrs:
            attrs["set_aside"] = None  # within the bound (checked by the field): a set-aside node offers it again
        return attrs


def _check_room(cluster: Cluster, field: str) -> None:
    """A cluster takes at most ``FAIRWAY_MAX_NODES`` nodes (with ``FAIRWAY_MAX_NODE_AMOUNT`` per node, its total stays
    below 2**62 base units). The cluster's row is locked for the rest of the request's transaction, so two agents
    registering at once cannot both take the last place."""
    most = settings.FAIRWAY_LIMITS.max_nodes
    list(Cluster.objects.select_for_update().filter(pk=cluster.pk).values_list("pk", flat=True))
    if Node.objects.filter(cluster=cluster).count() >= most:
        raise serializers.ValidationError(
            {
                field: [
                    f"cluster {cluster.name} holds {most:,} nodes, the most one cluster may have (FAIRWAY_MAX_NODES)"
                ]
            },
            code="limit",
        )


class TooManyWaiting(APIException):
    """429: a team already has as many waiting pods or podgroups as one team may (``FAIRWAY_MAX_PENDING_*``)."""

    status_code = 429
    default_code = "too_many_pending"
    default_detail = "Your team has too many waiting jobs."


_WAITING = {
    # what waits for a place: what each session works through
    "pods": ("MAX_PENDING_PODS_PER_TEAM", "FAIRWAY_MAX_PENDING_PODS_PER_TEAM", "status__in", ("Pending", "Pipelined")),
    "podgroups": (
        "MAX_PENDING_PODGROUPS_PER_TEAM",
        "FAIRWAY_MAX_PENDING_PODGROUPS_PER_TEAM",
        "phase__in",
        ("Pending", "Inqueue"),
    ),
}


def _check_waiting(user: Any, namespaces: set[int] | None, kind: str) -> None:
    """A team member creates a pod (podgroup) only while its team's namespaces hold fewer waiting ones (Pending or
    Pipelined pods; Pending or Inqueue podgroups) than the limit, so that one team's flood cannot slow every
    cluster's sessions; 429 naming the limit otherwise. Admins (``namespaces`` None) are not limited."""
    if namespaces is None:
        return
    key, variable, lookup, states = _WAITING[kind]
    most = int(settings.FAIRWAY[key])
    model = Pod if kind == "pods" else PodGroup
    if model.objects.filter(namespace_id__in=namespaces, **{lookup: states}).count() >= most:
        raise TooManyWaiting(
            f"your team's namespaces already hold {most:,} waiting {kind}, the most one team may have ({variable}); "
            f"wait until some are placed or delete some before creating more"
        )


def _queue_of_pod(podgroup: PodGroup | None, namespace: Namespace) -> Queue | None:
    """The queue a pod runs under: its podgroup's, else its namespace's default queue, else ``default``."""
    if podgroup is not None:
        return podgroup.queue
    return namespace.default_queue or Queue.objects.filter(name="default").first()


def _check_priority_range(obj: str, queue: Queue | None, priority: int, preemptible: bool | None = None) -> None:
    """400 naming the field and the limit when ``priority`` (``preemptible``) lies outside the range the job's queue
    allows (``engine.rules.priority_range``)."""
    if queue is None:
        return
    rng = services.priority_ranges().get(queue.name)
    if rng is None:
        return
    errors = rules.validate_priority_range(obj, rng, priority=priority, preemptible=preemptible)
    if errors:
        raise rule_errors_to_validation_error(errors)


def _admins_only(user: Any, obj: str, now: str) -> None:
    """403: the priority and preemptibility of an existing job decide fairness (who is evicted for whom); they are set
    at creation and only admins change them afterwards."""
    if not is_admin(user):
        raise PermissionDenied(
            f"{obj}: priority and preemptible are set when a job is created and only admins may change them "
            f"afterwards (it has {now}); a request that repeats the current values is accepted"
        )


def _check_move(obj: str, instance: PodGroup, queue: Queue, priority: int) -> None:
    """A podgroup moved to another queue must fit that queue's range, with its pods (400 naming ``queue``)."""
    rng = services.priority_ranges().get(queue.name)
    if rng is None:
        return
    pods = Pod.objects.filter(podgroup=instance)
    top = max(pods.values_list("priority", flat=True), default=priority)
    errors = rules.validate_priority_range(
        obj, rng, priority=max(priority, top), preemptible=not pods.filter(preemptible=False).exists()
    )
    if errors:
        raise serializers.ValidationError(
            {"queue": [f"{e.message} (with its pods); moving it to queue {queue.name} is refused" for e in errors]},
            code=errors[0].code,
        )


# A podgroup's fields that sessions and the gang repair write: read-only to every client.
PODGROUP_STATE = ("phase", "conditions", "reason", "message", "blocker", "gang_releases", "idle_gpu_seconds",
                  "released_at", "release_reason",
                  # job actions (scheduling.job_actions): written by POST …/suspend/, …/resume/, …/delete/ only
                  "suspended_at", "suspended_by", "deletion_requested_at", "deletion_requested_by", "kube_owner",
                  # Kueue's ResourceFlavors the sessions gave it, and why (``scheduling.store.flavors``)
                  "flavors", "pod_set_flavors", "flavor_assignment")  # fmt: skip


USER_HELP = (
    "Who submitted it (read-only): the API token's user, or for a Kubernetes object its annotation "
    "yunikorn.apache.org/user.info or fairway.io/user; null: its namespace counts as its user. The per-user limits "
    "of its queue and quota group count it for this user."
)
USER_GROUPS_HELP = "That user's groups (read-only): the Django user's groups, or the annotation's; null: none."


def submitter(user: Any) -> dict[str, Any]:
    """The ``user`` and ``user_groups`` a row created through the API records (the per-user limits'
    ``engine.userlimits``): the request's user and its groups."""
    groups = sorted(user.groups.values_list("name", flat=True))
    return {"user": user.get_username(), "user_groups": groups or None}


def _local_queue_queue(attrs: dict[str, Any], namespace: Namespace, queue: Queue | None) -> Queue | None:
    """A podgroup's queue with its Kueue LocalQueue (``local_queue``): the LocalQueue's queue when none is given; a
    LocalQueue the namespace does not have, or one pointing at another queue than the one given, is a 400 naming
    ``local_queue``."""
    name = attrs.get("local_queue")
    if not name:
        return queue
    row = LocalQueue.objects.select_related("queue").filter(namespace=namespace, name=name).first()
    if row is None:
        raise serializers.ValidationError(
            {"local_queue": [f"namespace {namespace.name} has no LocalQueue {name}"]}, code="does_not_exist"
        )
    if queue is not None and "queue" in attrs and queue.pk != row.queue_id:
        raise serializers.ValidationError(
            {"local_queue": [f"LocalQueue {namespace.name}/{name} points at queue {row.queue.name}, not {queue.name}"]}
        )
    attrs["queue"] = row.queue
    return row.queue


class PodGroupSerializer(serializers.ModelSerializer):
    cluster = NameField(slug_field="name", queryset=Cluster.objects.all(), required=False)
    name = ObjectNameField()
    namespace = NameField(slug_field="name", queryset=Namespace.objects.all())
    queue = NameField(slug_field="name", queryset=Queue.objects.all(), required=False)
    min_member = serializers.IntegerField(required=False, min_value=0, max_value=100_000)
    min_task_member = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=100_000), required=False
    )
    min_resources = ResourceListSerializerField(required=False, allow_null=True)
    blocker = BlockerField()
    user = serializers.CharField(read_only=True, allow_null=True, help_text=USER_HELP)
    user_groups = serializers.ListField(
        child=serializers.CharField(), read_only=True, allow_null=True, help_text=USER_GROUPS_HELP
    )
    flavors = serializers.DictField(
        child=serializers.CharField(),
        read_only=True,
        allow_null=True,
        help_text='Kueue\'s ResourceFlavor it was given per resource (read-only), e.g. {"cpu": "spot"}; null: its '
        "queue has no resource in several flavors.",
    )
    flavor_assignment = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="Why those flavors (read-only): the flavors the last assignment tried, in order, and what each gave.",
    )
    kueue_pod_group_count = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="Kueue's pod group or batch/v1 Job (read-only, set by the Kubernetes adapter): its "
        "kueue.x-k8s.io/pod-group-total-count, or a Job's pod count (its parallelism, or its completions when fewer), "
        "which it waits for (reason NotEnoughPods) until that many of its pods exist; null for every other podgroup.",
    )
    kueue_admitted_count = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="Kueue's partial admission (read-only, set by the sessions): the pods a Kueue Job was admitted with "
        "when fewer than its count (kueue.x-k8s.io/job-min-parallelism); the Kubernetes adapter lowers the Job's "
        "spec.parallelism to it. Null: admitted whole, not admitted, or not such a Job.",
    )
    kueue_max_exec_seconds = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="Kueue's maximum execution time (read-only, set by the Kubernetes adapter): the workload's "
        "kueue.x-k8s.io/max-exec-time-seconds; admitted that long in all, it is suspended "
        "(MaximumExecutionTimeExceeded) until a person resumes it. Null: no maximum.",
    )
    local_queue = ObjectNameField(
        required=False,
        allow_null=True,
        max_length=63,
        help_text="Kueue's LocalQueue of its namespace it is submitted to (as the label kueue.x-k8s.io/queue-name): "
        "its queue is the LocalQueue's (a different queue is refused), and Admission Fair Sharing orders it by that "
        "LocalQueue's usage.",
    )

    class Meta:
        model = PodGroup
        fields = [
            "id",
            "cluster",
            "namespace",
            "name",
            "queue",
            "min_member",
            "min_task_member",
            "min_resources",
            "priority",
            "priority_class_name",
            "user",
            "user_groups",
            "local_queue",
            "kueue_pod_group_count",
            "kueue_admitted_count",
            "kueue_max_exec_seconds",
            *PODGROUP_STATE,
            "created",
            "updated",
        ]
        read_only_fields = [
            "id",
            *PODGROUP_STATE,
            "created",
            "updated",
        ]
        validators: list[Any] = []  # uniqueness is checked in validate() with a message naming the object

    def validate_name(self, value: str) -> str:
        errors = rules.validate_dns_subdomain(value, what="podgroup name")
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance: PodGroup | None = self.instance
        if instance is None:
            attrs.setdefault("cluster", default_cluster())
        namespace: Namespace = attrs.get("namespace") or instance.namespace  # type: ignore[union-attr]
        queue: Queue | None = attrs.get("queue") or (instance.queue if instance else None)
        queue = _local_queue_queue(attrs, namespace, queue)
        if queue is None:
            # Volcano's mutating webhook: a podgroup without a queue goes to its namespace's queue, else default.
            queue = namespace.default_queue or Queue.objects.get(name="default")
            attrs["queue"] = queue
        name = attrs.get("name") or instance.name  # type: ignore[union-attr]
        cluster = attrs.get("cluster") or instance.cluster  # type: ignore[union-attr]
        # Who: before the rules, so that a refused submitter learns nothing of another team's quota from them.
        user = self.context["request"].user
        namespaces = visible_namespace_ids(user)
        if namespaces is not None and namespace.pk not in namespaces:
            raise serializers.ValidationError(
                {"namespace": [f"you may only submit to your team's namespaces; {namespace.name} is not one"]},
                code="permission_denied",
            )
        allowed = submittable_queue_ids(user)
        if allowed is not None and queue.pk not in allowed:
            raise serializers.ValidationError(
                {"queue": [f"you may only submit to the leaf queues of your team's subtree; {queue.name} is not one"]},
                code="permission_denied",
            )
        obj = f"podgroup {namespace.name}/{name}"
        if instance is None:
            attrs.update(submitter(user))
            _check_waiting(user, namespaces, "podgroups")
            _check_priority_range(obj, queue, attrs.get("priority", 0))
        else:
            if "priority" in attrs and attrs["priority"] != instance.priority:
                _admins_only(user, obj, f"priority {instance.priority}")
                _check_priority_range(obj, queue, attrs["priority"])
            if queue != instance.queue:
                _check_move(obj, instance, queue, attrs.get("priority", instance.priority))
        others = PodGroup.objects.filter(namespace=namespace, cluster=cluster).exclude(name=name)
        other_min = ResourceList.total(pg.min_resources for pg in others if pg.min_resources)
        if instance is None or "queue" in attrs or "min_resources" in attrs or "min_member" in attrs:
            errors = rules.validate_podgroup(
                services.queue_specs(),
                queue.name,
                min_member=attrs.get("min_member", instance.min_member if instance else 1),
                min_resources=attrs.get("min_resources")
                or (instance.min_resources if instance else None)
                or ResourceList(),
                namespace=namespace.name,
                namespace_hard=namespace.hard,
                other_min_resources=other_min,
            )
            if errors:
                raise rule_errors_to_validation_error(errors)
        taken = PodGroup.objects.filter(namespace=namespace, cluster=cluster, name=name)
        if instance is not None:  # a rename (or a move) onto a taken name was a 500
            taken = taken.exclude(pk=instance.pk)
        if taken.exists():
            raise serializers.ValidationError({"name": [f"podgroup {namespace.name}/{name} already exists"]})
        return attrs


class PodSerializer(serializers.ModelSerializer):
    cluster = NameField(slug_field="name", queryset=Cluster.objects.all(), required=False)
    namespace = NameField(slug_field="name", queryset=Namespace.objects.all())
    name = ObjectNameField()
    podgroup = serializers.CharField(
        required=False, allow_null=True, help_text="Name of the pod's podgroup in the same namespace."
    )
    quota_group = NameField(slug_field="name", queryset=QuotaGroup.objects.all(), required=False, allow_null=True)
    node = serializers.CharField(read_only=True, source="node.name", default=None)
    request = ResourceListSerializerField(required=False, per_node=True)  # a pod fits on one node or on none
    labels = StringMapField(required=False)
    node_selector = StringMapField(required=False)
    node_affinity = NodeAffinityField(required=False)
    tolerations = TolerationSerializer(many=True, required=False)
    duration_seconds = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=10**7)
    user = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="Who created a pod of no podgroup (its own podgroup's user); null "
        "for a pod of a podgroup (the podgroup's counts) or when nobody is named (its namespace counts).",
    )
    user_groups = serializers.ListField(
        child=serializers.CharField(), read_only=True, allow_null=True, help_text=USER_GROUPS_HELP
    )

    class Meta:
        model = Pod
        fields = [
            "id",
            "cluster",
            "namespace",
            "name",
            "podgroup",
            "task_name",
            "request",
            "priority",
            "preemptible",
            "quota_group",
            "status",
            "reason",
            "message",
            "node",
            "node_selector",
            "node_affinity",
            "tolerations",
            "labels",
            "duration_seconds",
            "user",
            "user_groups",
            "created",
            "started",
            "finished",
            "updated",
        ]
        read_only_fields = ["id", "status", "reason", "message", "node", "created", "started", "finished", "updated"]
        validators: list[Any] = []  # uniqueness is checked in validate() with a message naming the object

    def to_representation(self, instance: Pod) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["podgroup"] = instance.podgroup.name if instance.podgroup_id else None
        return data

    def validate_name(self, value: str) -> str:
        errors = rules.validate_dns_subdomain(value, what="pod name")
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return value

    def _check_quota_group(self, group: QuotaGroup | None, namespace: Namespace, explicit: bool) -> None:
        """A pod's quota group, on create and on every change, for every role: never a parent group (nor a group
        that does not exist). A team member may name only a leaf group of its own quota subtree, or the group its
        namespace already counts against (``namespace.quota_group``, else ``default``: what the admin chose); a
        pod that names no group gets its namespace's."""
        name = group.name if group is not None else DEFAULT_GROUP
        errors = rules.validate_pod_quota_group(services.group_specs(), name)
        if errors:
            raise serializers.ValidationError({"quota_group": [e.message for e in errors]}, code=errors[0].code)
        usable = usable_group_ids(self.context["request"].user)
        if usable is None or not explicit:
            return
        own = namespace.quota_group.name if namespace.quota_group_id else DEFAULT_GROUP  # type: ignore[union-attr]
        if name != own and (group is None or group.pk not in usable):
            raise serializers.ValidationError(
                {
                    "quota_group": [
                        f"you may only use your namespace's quota group ({own}) or a leaf quota group of your "
                        f"team's subtree; {name} is not one"
                    ]
                },
                code="permission_denied",
            )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance: Pod | None = self.instance
        user = self.context["request"].user
        if instance is not None:
            immutable = [k for k in ("namespace", "name", "podgroup", "request", "cluster") if k in attrs]
            if immutable:
                raise serializers.ValidationError({k: [f"{k} cannot change after creation"] for k in immutable})
            if "quota_group" in attrs:
                self._check_quota_group(attrs["quota_group"], instance.namespace, explicit=True)
            changed = {
                k: attrs[k] for k in ("priority", "preemptible") if k in attrs and attrs[k] != getattr(instance, k)
            }
            if changed:
                obj = f"pod {instance.namespace.name}/{instance.name}"
                _admins_only(
                    user, obj, f"priority {instance.priority}, preemptible {str(instance.preemptible).lower()}"
                )
                _check_priority_range(
                    obj,
                    _queue_of_pod(instance.podgroup, instance.namespace),
                    attrs.get("priority", instance.priority),
                    attrs.get("preemptible", instance.preemptible),
                )
            return attrs
        attrs.setdefault("cluster", default_cluster())
        namespace: Namespace = attrs["namespace"]
        namespaces = visible_namespace_ids(user)
        if namespaces is not None and namespace.pk not in namespaces:
            raise serializers.ValidationError(
                {"namespace": [f"you may only submit to your team's namespaces; {namespace.name} is not one"]},
                code="permission_denied",
            )
        pg_name = attrs.pop("podgroup", None)
        queue: Queue | None = None
        if pg_name:
            pg = PodGroup.objects.filter(namespace=namespace, cluster=attrs["cluster"], name=pg_name).first()
            if pg is None:
                raise serializers.ValidationError(
                    {"podgroup": [f"podgroup {namespace.name}/{pg_name} does not exist"]}, code="not_found"
                )
            attrs["podgroup"] = pg
            queue = pg.queue
        allowed = submittable_queue_ids(user)
        if allowed is not None:
            target = queue or namespace.default_queue
            if target is None or target.pk not in allowed:
                raise serializers.ValidationError(
                    {"podgroup": ["you may only submit pods to podgroups in the leaf queues of your team's subtree"]},
                    code="permission_denied",
                )
        _check_waiting(user, namespaces, "pods")
        _check_priority_range(
            f"pod {namespace.name}/{attrs['name']}",
            _queue_of_pod(attrs.get("podgroup"), namespace),
            attrs.get("priority", 0),
            attrs.get("preemptible", True),
        )
        explicit = attrs.get("quota_group") is not None
        group: QuotaGroup | None = attrs.get("quota_group")
        if group is None:
            group = namespace.quota_group or QuotaGroup.objects.filter(name=DEFAULT_GROUP).first()
            attrs["quota_group"] = group
        self._check_quota_group(group, namespace, explicit=explicit)
        if Pod.objects.filter(namespace=namespace, cluster=attrs["cluster"], name=attrs["name"]).exists():
            raise serializers.ValidationError({"name": [f"pod {namespace.name}/{attrs['name']} already exists"]})
        if attrs.get("podgroup") is None:  # a pod of its own podgroup: its submitter is the job's user
            attrs.update(submitter(user))
        return attrs


# -- the node-agent API -------------------------------------------------------------------------------------


class HeartbeatSerializer(serializers.Serializer):
    """A node agent's heartbeat; every field is optional and replaces the node's value when given."""

    allocatable = ResourceListSerializerField(required=False, any_name=True)
    labels = StringMapField(required=False)
    taints = TaintSerializer(many=True, required=False)
    unschedulable = serializers.BooleanField(required=False)


class PodStatusReportSerializer(serializers.Serializer):
    """A node agent's report of a pod's phase."""

    status = serializers.CharField(max_length=10, help_text=f"{_REPORTED}.")
    node = serializers.CharField(required=False, max_length=253, help_text="The reporting node (checked).")
    message = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")

    def validate_status(self, value: str) -> str:
        if value not in AGENT_REPORTED_STATUSES:
            raise serializers.ValidationError(f"an agent reports {_REPORTED}, not {value!r}")
        return value


class AgentPodSerializer(serializers.ModelSerializer):
    """What a node agent needs to run (or stop) a pod."""

    namespace = serializers.CharField(source="namespace.name", read_only=True)
    podgroup = serializers.CharField(source="podgroup.name", read_only=True, default=None)
    node = serializers.CharField(source="node.name", read_only=True, default=None)
    request = ResourceListSerializerField(read_only=True)
    action = serializers.SerializerMethodField(
        help_text="run: keep it running (Bound, Running); stop: stop it and confirm it gone (Releasing: evicted; "
        "Failed with reason NodeLost: lost while the node was NotReady)"
    )

    class Meta:
        model = Pod
        fields = [
            "id",
            "namespace",
            "name",
            "podgroup",
            "task_name",
            "status",
            "action",
            "reason",
            "node",
            "request",
            "priority",
            "labels",
            "tolerations",
            "duration_seconds",
            "started",
        ]
        read_only_fields = fields

    def get_action(self, pod: Pod) -> str:
        return "run" if pod.status in (PodStatus.BOUND, PodStatus.RUNNING) else "stop"


# -- records ------------------------------------------------------------------------------------------------


class SchedulingSessionSerializer(serializers.ModelSerializer):
    cluster = serializers.CharField(source="cluster.name", read_only=True)
    kind = serializers.CharField(read_only=True, help_text="session or recycle")
    status = serializers.CharField(read_only=True, help_text="ok, failed or skipped")

    class Meta:
        model = SchedulingSession
        fields = [
            "id",
            "cluster",
            "kind",
            "status",
            "started",
            "finished",
            "duration_ms",
            "timings",
            "pending_pods",
            "bound",
            "pipelined",
            "evicted",
            "podgroups",
            "warnings",
            "error",
        ]
        read_only_fields = fields


class DecisionSerializer(serializers.Serializer):
    """One decision of a session: a binding (``bind`` / ``pipeline``), an eviction (``evict``) or a podgroup's new
    phase and reason (``podgroup``)."""

    kind = serializers.CharField(help_text="bind, pipeline, evict or podgroup")
    pod = serializers.CharField(allow_null=True)
    podgroup = serializers.CharField(allow_null=True)
    node = serializers.CharField(allow_null=True)
    phase = serializers.CharField(allow_null=True)
    action = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    message = serializers.CharField(allow_blank=True)
    preemptor = serializers.CharField(allow_null=True)
    blocker = BlockerField()


class SchedulingSessionDetailSerializer(SchedulingSessionSerializer):
    decisions = serializers.SerializerMethodField()
    decisions_total = serializers.SerializerMethodField()

    class Meta(SchedulingSessionSerializer.Meta):
        fields = [*SchedulingSessionSerializer.Meta.fields, "decisions_total", "decisions"]
        read_only_fields = fields

    def _all(self, obj: SchedulingSession) -> list[dict[str, Any]]:
        cache = self.context.setdefault("_decisions", {})
        if obj.pk not in cache:
            cache[obj.pk] = session_decisions(obj, self.context.get("visible_namespaces"))
        return cache[obj.pk]  # type: ignore[no-any-return]

    def get_decisions_total(self, obj: SchedulingSession) -> int:
        return len(self._all(obj))

    @extend_schema_field(DecisionSerializer(many=True))
    def get_decisions(self, obj: SchedulingSession) -> list[dict[str, Any]]:
        """The first 100 decisions (all of them at ``sessions/{id}/decisions/``)."""
        return [{**d, "blocker": blocker_json(d.get("blocker"))} for d in self._all(obj)[:100]]


class EvictionSerializer(serializers.ModelSerializer):
    cluster = serializers.CharField(source="cluster.name", read_only=True)
    pod = serializers.CharField(source="pod_uid", read_only=True)
    action = serializers.CharField(read_only=True, help_text="reclaim, preempt or recycle")
    pod_id = serializers.IntegerField(read_only=True, allow_null=True)
    job_removed_at = serializers.DateTimeField(
        source="removed_job.removed_at",
        read_only=True,
        allow_null=True,
        help_text="When its job was removed (garbage-collected or deleted); null while the job exists.",
    )
    blocker = BlockerField()

    class Meta:
        model = Eviction
        fields = [
            "id",
            "cluster",
            "session",
            "pod",
            "pod_id",
            "namespace",
            "job",
            "queue",
            "quota_group",
            "job_removed_at",
            "node",
            "action",
            "reason",
            "message",
            "preemptor",
            "blocker",
            "created",
            # source=kubernetes: the policy/v1 Eviction call (a PodDisruptionBudget's 429 is ``refused``, with
            # its reason, and tried again at ``api_retry_at``)
            "api_status",
            "api_attempts",
            "api_refusal",
            "api_retry_at",
        ]
        read_only_fields = fields


class StartEstimateSerializer(serializers.Serializer):
    """``start_estimate`` of ``podgroups/{id}/why/`` (``planning.estimates.estimate_of``)."""

    state = serializers.ChoiceField(
        choices=["estimated", "never", "pending", "not_estimated", "no_history"],
        help_text="estimated; never (it cannot start with the cluster and quotas as they are: the sentence says why); "
        "pending (the estimates worker is computing a round: ask again in a few seconds); not_estimated (behind the first jobs of its queue); no_history (no "
        "finished job recorded to draw runtimes from)",
    )
    p50_seconds = serializers.FloatField(allow_null=True, help_text="Half the draws started it within this (seconds)")
    p90_seconds = serializers.FloatField(allow_null=True, help_text="9 draws in 10 started it within this (seconds)")
    later_than_seconds = serializers.FloatField(
        allow_null=True, help_text="Where p50 or p90 is null: the draws had not started it by this (seconds)"
    )
    sentence = serializers.CharField()
    computed = serializers.DateTimeField(
        allow_null=True, help_text="The moment of the state the estimate started from (null: no round computed yet)"
    )
    draws = serializers.IntegerField()


class QueuePositionSerializer(serializers.Serializer):
    """Where a waiting job stands in its queue (``planning.why.queue_position``), as Kueue's visibility API gives a
    pending workload's positions."""

    position = serializers.IntegerField(help_text="Its place among its queue's waiting jobs, 1: served first")
    ahead = serializers.IntegerField(help_text="The waiting jobs of its queue the next session serves before it")
    waiting = serializers.IntegerField(help_text="The waiting jobs of its queue")
    local_queue = serializers.CharField(allow_null=True, help_text="Its LocalQueue (namespace/name); null: none")
    local_queue_position = serializers.IntegerField(
        allow_null=True, help_text="Its place among its LocalQueue's waiting jobs, 1: served first; null: none"
    )


class WhySerializer(serializers.Serializer):
    """The schema of ``podgroups/{id}/why/`` (``planning.why.why_podgroup`` builds the answer)."""

    id = serializers.IntegerField()
    namespace = serializers.CharField()
    name = serializers.CharField()
    queue = serializers.CharField()
    phase = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    message = serializers.CharField(allow_blank=True)
    blocker = BlockerField()
    blocking_node = serializers.DictField(child=serializers.CharField(), allow_null=True)
    since = serializers.DateTimeField(allow_null=True)
    min_member = serializers.IntegerField()
    min_resources = ResourceListSerializerField(allow_null=True)
    pods = serializers.DictField(child=serializers.IntegerField(), help_text="Pod status to count")
    flavors = serializers.DictField(
        child=serializers.CharField(),
        allow_null=True,
        help_text='Kueue\'s ResourceFlavor it was given per resource, e.g. {"cpu": "spot"}; null: none',
    )
    flavors_text = serializers.CharField(
        allow_null=True, help_text="The same in words: 'spot for cpu, memory; a100 for nvidia.com/gpu'"
    )
    flavor_assignment = serializers.CharField(
        allow_null=True,
        help_text="Why those flavors: the flavors the last assignment tried, in order, and what each gave (fits, fits "
        "by borrowing, does not fit, with the numbers); null: no assignment looked at it",
    )
    governing_path = serializers.ListField(
        child=serializers.DictField(),
        help_text="The chains of tree nodes that decide whether the job can start, as the job page and the CLI show "
        'them: [{"title", "nodes": [{"kind", "name", "depth", "blocking", "hidden"}]}]',
    )
    queue_path = serializers.ListField(
        child=serializers.DictField(), help_text="The queue and its ancestors, root first"
    )
    quota_paths = serializers.ListField(child=serializers.ListField(child=serializers.DictField()))
    namespace_detail = serializers.DictField()
    evictions = serializers.ListField(child=serializers.DictField())
    recycling = serializers.ListField(child=serializers.DictField())
    start_estimate = StartEstimateSerializer(
        allow_null=True,
        help_text="For a waiting job, when it will likely start (a forward replay from the cluster's state with "
        "runtimes drawn from its queue's recorded ones); null when it does not wait",
    )
    queue_position = QueuePositionSerializer(
        allow_null=True,
        help_text="Where it stands among the waiting jobs of its queue and of its LocalQueue, in the order the next "
        "session serves them; null when it has no pod left to place",
    )


class PodGroupReasonSerializer(serializers.ModelSerializer):
    blocker = BlockerField()

    class Meta:
        model = PodGroupReason
        fields = ["time", "session", "phase", "reason", "message", "blocker"]
        read_only_fields = fields


class QuotaSampleSerializer(serializers.ModelSerializer):
    """A tree node's values at one session, in base units (cpu in millicores, memory in bytes, others in
    milli-units). Quota groups: ``allocated`` is their ``used`` and ``deserved`` their ``runtime``."""

    cluster = serializers.CharField(source="cluster.name", read_only=True)
    node = serializers.CharField(source="name", read_only=True)
    kind = serializers.CharField(read_only=True, help_text="queue or quota")

    class Meta:
        model = QuotaSample
        fields = ["time", "cluster", "kind", "node", "request", "allocated", "deserved", "borrowed", "lent"]
        read_only_fields = fields

    def to_representation(self, instance: QuotaSample) -> dict[str, Any]:
        return null_unbounded(super().to_representation(instance))  # type: ignore[return-value]  # unbounded: null
