"""Serializers of the tree models. Validation of a change runs ``quotas.services.check_*`` (the pure rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import Group
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import rule_errors_to_validation_error
from core.fields import NameField, ObjectNameField, ResourceListSerializerField, UserLimitsSerializerField
from engine import rules, treefields
from engine.kueuepolicy import parse_kueue_policy
from quotas import services
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor
from quotas.selectors import queue_phase_counts

NAME_HELP = "DNS-1123 label: lowercase letters, digits and '-', at most 63 characters."


def _with_rules(save: Any, instance: Any, data: dict[str, Any]) -> Any:
    """Run a service's save; the rules it checks again under the tree write lock answer as a 400 like
    ``validate()``'s (they can differ when the tree changed in between, e.g. for a writer outside the API's lock)."""
    try:
        return save(instance, data)
    except rules.RuleViolation as exc:
        raise rule_errors_to_validation_error(exc.errors) from exc


def _already_in_error(detail: dict[str, Any], field: str) -> bool:
    """Whether a rule's ``field`` path (``capability.cpu``) is one the request's field errors already name."""
    head, _, rest = field.partition(".")
    if head not in detail:
        return False
    problem = detail[head]
    return not isinstance(problem, dict) or not rest or rest in problem


class WriteWarningSerializer(serializers.Serializer):
    """One warning of a write that was accepted: the rule's ``code``, what it means (``detail``) and the field it
    is about (``attr``, a dotted path such as ``deserved.cpu``), as the error envelope names them."""

    code = serializers.CharField()
    detail = serializers.CharField()
    attr = serializers.CharField()


WARNINGS_HELP = (
    "Only in the answer to a create or update: what the rules found worth saying about the accepted write "
    "(e.g. deserved overcommitted beyond the cluster), each with its code, detail and field. Reads omit it."
)


class AllProblemsAtOnce:
    """A tree serializer whose 400 lists every problem at once: when some fields do not parse, the rules still
    run on the fields that did, and their problems (at fields not already in error) join the field errors. DRF
    alone stops at the field errors and reports the rules' only once those are fixed."""

    KIND: Any = "queue"
    write_warnings: list[rules.FieldError] | None = None  # set by validate(): a write's response carries them

    def to_representation(self, instance: Any) -> Any:
        out = super().to_representation(instance)  # type: ignore[misc]
        out.pop("warnings", None)
        if self.write_warnings is not None:
            out["warnings"] = [{"code": w.code, "detail": w.message, "attr": w.field} for w in self.write_warnings]
        return out

    @extend_schema_field(WriteWarningSerializer(many=True))
    def get_warnings(self, obj: Any) -> list[dict[str, str]]:
        return []  # replaced in to_representation by the write's own, or removed on a read

    def _rule_data(self, attrs: dict[str, Any]) -> dict[str, Any]:
        data = dict(attrs)
        if "parent" in data:
            data["parent"] = data["parent"].name if data["parent"] is not None else None
        return data

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)  # type: ignore[misc]
        except serializers.ValidationError as exc:
            detail = exc.detail
            if not isinstance(detail, dict) or not isinstance(data, Mapping):
                raise
            rest = {k: v for k, v in data.items() if k not in detail}
            for key, problem in detail.items():  # a resource list keeps its entries that parsed
                if isinstance(problem, dict) and isinstance(data.get(key), Mapping):
                    rest[key] = {r: q for r, q in data[key].items() if r not in problem}
            try:
                attrs = super().to_internal_value(rest)  # type: ignore[misc]
            except serializers.ValidationError:
                raise exc from None
            instance = getattr(self, "instance", None)
            found = services.problems(self.KIND, instance, self._rule_data(attrs))
            more = [e for e in found if not _already_in_error(detail, e.field)]
            if not more:
                raise
            merged = dict(detail)
            for key, messages in rule_errors_to_validation_error(more).detail.items():  # type: ignore[union-attr]
                merged.setdefault(key, []).extend(messages)
            raise serializers.ValidationError(merged) from exc


BORROWING_HELP = (
    "Per resource, the most this node may use beyond its own deserved (queue) or min (quota group), taken from "
    "outside its subtree (Kueue's borrowingLimit); null or a resource left out: unlimited."
)
LENDING_HELP = (
    "Per resource, the most of its unused deserved (queue) or min (quota group) others may take; the rest stays "
    "reserved for it (Kueue's lendingLimit); null or a resource left out: unlimited."
)

USER_LIMITS_HELP = (
    "Per-user and per-group limits inside this node's subtree (YuniKorn's limits): each entry names one user or one "
    'group ("*": each user, each group; a named entry wins over "*") with the most its jobs may request together '
    "(max_resources; a resource left out: unlimited) and the most jobs it may run at once (max_jobs; null: "
    "unlimited). A job that would go over one waits, with the limit in its reason. Empty or null: none."
)


KUEUE_HELP = (
    "Kueue's levers and policies of this queue, in Kueue's spelling of a ClusterQueue's spec (null: none): "
    "queueingStrategy (BestEffortFIFO, StrictFIFO), stopPolicy (None, Hold, HoldAndDrain: the queue is closed, and "
    "with HoldAndDrain its admitted jobs are evicted), namespaceSelector (a label selector: jobs of a namespace that "
    "does not match are never admitted), preemption (reclaimWithinCohort: Never, LowerPriority, Any; "
    "borrowWithinCohort: {policy: Never or LowerPriority, maxPriorityThreshold}; withinClusterQueue: Never, "
    "LowerPriority, LowerOrNewerEqualPriority), admissionScope ({admissionMode: UsageBasedAdmissionFairSharing}), "
    'fairSharing ({weight: a quantity such as "0.75"; 0: admitted last, preempted first}), and kind and name (the '
    "Kueue object the queue was read from, when its Kueue name differs from the queue's). The live sessions apply "
    "them as `fairway simulate` applies the same ClusterQueue fields."
)


@extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
class KueuePolicySerializerField(serializers.Field):
    """A queue's Kueue levers (``engine.kueuepolicy``): checked and normalized; each problem at its place
    (``kueue.preemption.reclaimWithinCohort``)."""

    def to_internal_value(self, data: Any) -> Any:
        value, problems = parse_kueue_policy(data, self.field_name)
        if not problems:
            return value
        nested: dict[str, Any] = {}
        for exc in problems:
            path = exc.field.split(".")[1:]
            if not path:
                raise serializers.ValidationError(exc.message, code="invalid")
            at = nested
            for part in path[:-1]:
                at = at.setdefault(part, {})
            at.setdefault(path[-1], []).append(exc.message)
        raise serializers.ValidationError(nested, code="invalid")

    def to_representation(self, value: Any) -> Any:
        return value


class QueueStatusSerializer(serializers.Serializer):
    pending = serializers.IntegerField()
    inqueue = serializers.IntegerField()
    running = serializers.IntegerField()
    unknown = serializers.IntegerField()
    completed = serializers.IntegerField()


class QueueSerializer(AllProblemsAtOnce, serializers.ModelSerializer):
    KIND = "queue"
    name = ObjectNameField(help_text=NAME_HELP)
    parent = NameField(
        slug_field="name",
        queryset=Queue.objects.all(),
        required=False,
        allow_null=True,
        help_text="Parent queue name (default: root).",
    )
    capability = ResourceListSerializerField(required=False, allow_null=True)
    deserved = ResourceListSerializerField(required=False, allow_null=True)
    guarantee = ResourceListSerializerField(required=False, allow_null=True)
    borrowing_limit = ResourceListSerializerField(required=False, allow_null=True, help_text=BORROWING_HELP)
    lending_limit = ResourceListSerializerField(required=False, allow_null=True, help_text=LENDING_HELP)
    user_limits = UserLimitsSerializerField(required=False, allow_null=True, help_text=USER_LIMITS_HELP)
    kueue = KueuePolicySerializerField(required=False, allow_null=True, help_text=KUEUE_HELP)
    display_name = serializers.SerializerMethodField(
        help_text="The name people know the queue by: the Kueue object's name (kueue.name) where the queue stands for "
        "one named otherwise (a ClusterQueue root is the queue root-clusterqueue), else its name."
    )
    weight = serializers.IntegerField(required=False, min_value=1, max_value=65535)
    priority = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1)
    max_priority = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=-(2**31),
        max_value=2**31 - 1,
        help_text="The highest priority a podgroup or pod of this queue (or below it) may be created with; null: no "
        "maximum. The strictest along the queue's path holds. Existing jobs keep theirs.",
    )
    allow_non_preemptible = serializers.BooleanField(
        required=False,
        help_text="Whether pods of this queue (and below it) may be created non-preemptible (still held to their "
        "quota group's min).",
    )
    min_runtime = serializers.IntegerField(
        required=False,
        allow_null=True,
        max_value=2**31 - 1,
        help_text="Seconds (0 or more) a pod of this queue (or below it) is kept from reclaim and preempt after it "
        "starts, unless its evictor's priority is strictly higher (KAI's min-runtime); null: the nearest ancestor's, "
        "else the scheduler policy's minRuntime.",
    )
    state = serializers.CharField(read_only=True)
    closed_by_parent = serializers.BooleanField(read_only=True)
    children = NameField(slug_field="name", many=True, read_only=True)
    status = serializers.SerializerMethodField()
    teams = NameField(slug_field="name", many=True, queryset=Group.objects.all(), required=False)

    warnings = serializers.SerializerMethodField(help_text=WARNINGS_HELP)

    class Meta:
        model = Queue
        fields = [
            "name",
            "parent",
            *(f.name for f in treefields.QUEUE_FIELDS),  # the engine's table of queue fields
            "display_name",
            "max_priority",
            "allow_non_preemptible",
            "closed_by_parent",
            "children",
            "status",
            "teams",
            "version",
            "created",
            "updated",
            "warnings",
        ]
        read_only_fields = ["version", "created", "updated"]

    def get_display_name(self, obj: Queue) -> str:
        return str((obj.kueue or {}).get("name") or obj.name)

    def get_status(self, obj: Queue) -> dict[str, int]:
        counts = getattr(obj, "phase_counts", None)
        if counts is None:
            counts = queue_phase_counts([obj.pk]).get(obj.pk, {})
        return {k: counts.get(k, 0) for k in ("pending", "inqueue", "running", "unknown", "completed")}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        data = dict(attrs)
        if "parent" in data:
            data["parent"] = data["parent"].name if data["parent"] is not None else None
        try:
            services.check_queue(self.instance, data)
        except rules.RuleViolation as exc:
            raise rule_errors_to_validation_error(exc.errors) from exc
        self.write_warnings = services.change_warnings("queue", self.instance, data)
        return attrs

    def _data_for_service(self, validated: dict[str, Any]) -> dict[str, Any]:
        data = dict(validated)
        if "parent" in data:
            data["parent"] = data["parent"].name if data["parent"] is not None else None
        return data

    def create(self, validated_data: dict[str, Any]) -> Queue:
        return _with_rules(services.save_queue, None, self._data_for_service(validated_data))

    def update(self, instance: Queue, validated_data: dict[str, Any]) -> Queue:
        return _with_rules(services.save_queue, instance, self._data_for_service(validated_data))


class QuotaGroupSerializer(AllProblemsAtOnce, serializers.ModelSerializer):
    KIND = "quota"
    name = ObjectNameField()
    parent = NameField(
        slug_field="name",
        queryset=QuotaGroup.objects.all(),
        required=False,
        allow_null=True,
        help_text="Parent group name (default: root).",
    )
    min = ResourceListSerializerField(required=False, allow_null=True)
    max = ResourceListSerializerField(required=False, allow_null=True)
    shared_weight = ResourceListSerializerField(required=False, allow_null=True)
    borrowing_limit = ResourceListSerializerField(required=False, allow_null=True, help_text=BORROWING_HELP)
    lending_limit = ResourceListSerializerField(required=False, allow_null=True, help_text=LENDING_HELP)
    user_limits = UserLimitsSerializerField(required=False, allow_null=True, help_text=USER_LIMITS_HELP)
    namespaces = serializers.ListField(
        child=serializers.CharField(max_length=63),
        required=False,
        write_only=True,
        help_text="Namespaces whose pods belong to this group (a namespace belongs to one group only).",
    )
    children = NameField(slug_field="name", many=True, read_only=True)
    teams = NameField(slug_field="name", many=True, queryset=Group.objects.all(), required=False)

    warnings = serializers.SerializerMethodField(help_text=WARNINGS_HELP)

    class Meta:
        model = QuotaGroup
        fields = [
            "name",
            "parent",
            *(f.name for f in treefields.QUOTA_GROUP_FIELDS),  # the engine's table of quota group fields
            "namespaces",
            "children",
            "teams",
            "version",
            "created",
            "updated",
            "warnings",
        ]
        read_only_fields = ["version", "created", "updated"]

    def to_representation(self, instance: QuotaGroup) -> dict[str, Any]:
        out = super().to_representation(instance)
        out["namespaces"] = sorted(ns.name for ns in instance.namespaces.all())
        return out

    def _data_for_service(self, validated: dict[str, Any]) -> dict[str, Any]:
        data = dict(validated)
        if "parent" in data:
            data["parent"] = data["parent"].name if data["parent"] is not None else None
        return data

    def validate_namespaces(self, value: list[str]) -> list[str]:
        errors = {
            str(i): [e.message for e in rules.validate_dns_label(ns, what="namespace name")]
            for i, ns in enumerate(value)
        }
        errors = {k: v for k, v in errors.items() if v}
        if errors:
            raise serializers.ValidationError(errors)
        if len(set(value)) != len(value):
            raise serializers.ValidationError("each namespace may be listed once")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        data = self._data_for_service(attrs)
        try:
            services.check_quota_group(self.instance, data)
        except rules.RuleViolation as exc:
            raise rule_errors_to_validation_error(exc.errors) from exc
        self.write_warnings = services.change_warnings("quota", self.instance, data)
        return attrs

    def create(self, validated_data: dict[str, Any]) -> QuotaGroup:
        return _with_rules(services.save_quota_group, None, self._data_for_service(validated_data))

    def update(self, instance: QuotaGroup, validated_data: dict[str, Any]) -> QuotaGroup:
        return _with_rules(services.save_quota_group, instance, self._data_for_service(validated_data))


class NamespaceSerializer(serializers.ModelSerializer):
    name = ObjectNameField(help_text=NAME_HELP)
    weight = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    default_queue = NameField(slug_field="name", queryset=Queue.objects.all(), required=False, allow_null=True)
    quota_group = NameField(slug_field="name", queryset=QuotaGroup.objects.all(), required=False, allow_null=True)
    hard = ResourceListSerializerField(required=False, allow_null=True)
    labels = serializers.JSONField(
        required=False,
        help_text='Kubernetes labels, e.g. {"team": "nlp"}: what a queue\'s Kueue namespaceSelector matches '
        "(kubernetes.io/metadata.name, the namespace's name, is implied).",
    )

    class Meta:
        model = Namespace
        fields = ["name", "weight", "default_queue", "quota_group", "hard", "labels", "version", "created", "updated"]
        read_only_fields = ["version", "created", "updated"]

    def validate_labels(self, value: Any) -> dict[str, str]:
        errors = rules.validate_labels(value)
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        return dict(value)

    def validate_name(self, value: str) -> str:
        errors = rules.validate_dns_label(value, what="namespace name")
        if errors:
            raise serializers.ValidationError([e.message for e in errors], code=errors[0].code)
        others = Namespace.objects.filter(name=value)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():  # the declared field has no UniqueValidator: a rename onto a taken name was a 500
            raise serializers.ValidationError(f"namespace {value} already exists", code="exists")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        group = attrs.get("quota_group")
        if group is not None:
            errors = rules.validate_pod_quota_group(services.group_specs(), group.name)
            if errors:
                raise serializers.ValidationError(
                    {"quota_group": [f"namespace cannot belong to quota group {group.name}: " + errors[0].message]}
                )
        return attrs


class _CheckedByService:
    """validate/create/update of a serializer whose object a service checks (``service_check``) and writes whole
    (``service_save``): the service's rule violations answer as 400s naming their fields, at validation and again at
    the write."""

    service_check: Any
    service_save: Any
    instance: Any

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            return type(self).service_check(self.instance, attrs)  # type: ignore[no-any-return]
        except rules.RuleViolation as exc:
            raise rule_errors_to_validation_error(exc.errors) from exc

    def create(self, validated_data: dict[str, Any]) -> Any:
        return _with_rules(type(self).service_save, None, validated_data)

    def update(self, instance: Any, validated_data: dict[str, Any]) -> Any:
        return _with_rules(type(self).service_save, instance, validated_data)


class ResourceFlavorSerializer(_CheckedByService, serializers.ModelSerializer):
    """A Kueue ResourceFlavor (issue 28), its parts in Kueue's spelling of the object's ``spec``; a queue's quota in
    it is under the flavored key of its resource lists (``deserved: {"cpu@spot": "8"}``)."""

    service_check = staticmethod(services.check_resource_flavor)
    service_save = staticmethod(services.save_resource_flavor)

    name = serializers.CharField(
        max_length=253, help_text="DNS-1123 subdomain; the flavor part of a flavored key (cpu@<name>)."
    )
    node_labels = serializers.JSONField(
        required=False, help_text='The labels of the nodes it stands for, e.g. {"type": "spot"} (all of them).'
    )
    node_taints = serializers.JSONField(
        required=False,
        help_text='The taints of those nodes, e.g. [{"key": "spot", "value": "true", "effect": "NoSchedule"}]: a job '
        "is given the flavor only when its pods (with the flavor's tolerations) tolerate them.",
    )
    tolerations = serializers.JSONField(
        required=False, help_text="Tolerations the pods of a job given the flavor get (Kubernetes' spelling)."
    )
    topology_name = serializers.CharField(
        required=False, allow_blank=True, help_text="Kueue's topologyName: kept and exported, not used."
    )
    used_by = serializers.SerializerMethodField(help_text="The queues whose quota or resource groups name it.")

    class Meta:
        model = ResourceFlavor
        fields = [
            "name", "node_labels", "node_taints", "tolerations", "topology_name", "used_by", "version", "created",
            "updated",
        ]  # fmt: skip
        read_only_fields = ["version", "created", "updated"]

    def get_used_by(self, obj: ResourceFlavor) -> list[str]:
        return services.resource_flavor_users(obj.name)


class LocalQueueSerializer(_CheckedByService, serializers.ModelSerializer):
    """A Kueue LocalQueue (issue 28): a namespace's name for a leaf queue (its ClusterQueue), with its
    ``fairSharing.weight``; the usage Admission Fair Sharing orders it by, per cluster, as the live sessions keep it
    (read only)."""

    service_check = staticmethod(services.check_local_queue)
    service_save = staticmethod(services.save_local_queue)

    namespace = ObjectNameField(help_text="The namespace it belongs to (an existing one).")
    name = ObjectNameField(
        max_length=63,
        help_text="DNS-1123 subdomain of at most 63 characters: the value of a job's kueue.x-k8s.io/queue-name label.",
    )
    queue = ObjectNameField(
        help_text="The leaf queue (Kueue's ClusterQueue) its jobs go to; not the built-in root or default."
    )
    weight = serializers.CharField(
        required=False,
        allow_blank=False,
        help_text='Kueue\'s fairSharing.weight, a quantity: "1" (default), "0.75", "500m"; "0": its jobs are '
        "admitted last under Admission Fair Sharing.",
    )
    usage = serializers.SerializerMethodField(
        help_text="Per cluster, the decayed usage Admission Fair Sharing orders it by (consumed resources plus the "
        "entry penalties since the last sample), in whole cores, GiB and GPUs; {} before a session has kept any."
    )

    class Meta:
        model = LocalQueue
        fields = ["namespace", "name", "queue", "weight", "usage", "version", "created", "updated"]
        read_only_fields = ["version", "created", "updated"]

    def to_representation(self, instance: LocalQueue) -> dict[str, Any]:
        out = super().to_representation(instance)
        out["namespace"] = instance.namespace.name
        out["queue"] = instance.queue.name
        return out  # type: ignore[no-any-return]

    @extend_schema_field(serializers.DictField(child=serializers.DictField(child=serializers.CharField())))
    def get_usage(self, obj: LocalQueue) -> dict[str, dict[str, str]]:
        return services.local_queue_usage(obj)
