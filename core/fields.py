"""DRF field for resource lists: accepts quantities of known resources, renders canonical quantity strings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from core.facts import check_known
from engine.limits import node_amount_errors
from engine.resources import QuantityError, ResourceList, json_quantities, parse_resource_list_each
from engine.session.decisions import blocker_json
from engine.userlimits import parse_user_limits, user_limits_from_stored, user_limits_json


class ResourceListSerializerField(serializers.Field):
    """A resource list: ``{"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}``.

    Input names must be known to the control plane (standard Kubernetes resources or offered by some node,
    ``core.facts``), except with ``any_name=True``: nodes' allocatable, which is what introduces names.
    Output is canonical Kubernetes quantities, and ``null`` for an unbounded amount (never a sentinel number).
    """

    default_error_messages = {"invalid": "Expected an object of resource name to quantity."}

    def __init__(self, *, any_name: bool = False, per_node: bool = False, **kwargs: Any) -> None:
        self.any_name = any_name
        self.per_node = per_node  # each amount within what one node may have (FAIRWAY_MAX_NODE_AMOUNT)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> ResourceList:
        value, problems = parse_resource_list_each(data, self.field_name)
        if self.per_node:
            bound = settings.FAIRWAY_LIMITS.max_node_amount
            problems.extend(
                QuantityError(e.field, e.message) for e in node_amount_errors(value, bound, self.field_name)
            )
        if not self.any_name:
            for name in list(value):
                try:
                    check_known([name], self.field_name)
                except QuantityError as exc:
                    problems.append(exc)
        if not problems:
            return value
        prefix = f"{self.field_name}."
        keyed: dict[str, list[str]] = {}
        for exc in problems:  # every bad entry at once, each under its resource name
            key = exc.field[len(prefix) :] if exc.field.startswith(prefix) else None
            if not key:
                raise serializers.ValidationError(str(exc), code="invalid") from exc
            keyed.setdefault(key, []).append(exc.message)
        raise serializers.ValidationError(keyed, code="invalid")

    def to_representation(self, value: Any) -> dict[str, str | None] | None:
        if value is None:
            return None
        if not isinstance(value, ResourceList):
            value = ResourceList({str(k): int(v) for k, v in value.items()})
        return json_quantities(value)


class ResourceListFieldExtension(OpenApiSerializerFieldExtension):
    """The schema of ``ResourceListSerializerField``: quantities in; quantities or ``null`` (unbounded) out."""

    target_class = ResourceListSerializerField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        quantity: dict[str, Any] = {
            "oneOf": [build_basic_type(OpenApiTypes.STR), build_basic_type(OpenApiTypes.NUMBER)]
        }
        description = "Resource name to Kubernetes quantity (500m, 2, 1.5, 4Gi, 1e3)."
        if direction == "response":
            quantity = {"type": "string", "nullable": True}
            description = "Resource name to canonical Kubernetes quantity (2500m, 4Gi, 2); null: unbounded."
        elif not self.target.any_name:
            description += " Names must be standard Kubernetes resources or offered by some node."
        return {
            "type": "object",
            "additionalProperties": quantity,
            "example": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"},
            "description": description,
        }


class _BlockerSchema(serializers.Serializer):
    """Why a job waits or a pod was evicted: the tree node (or cluster part) that stops it, the resource it lacks and
    the amounts, as Kubernetes quantities (``requested_quantity``, ``available_quantity``)."""

    kind = serializers.CharField(help_text="queue, ancestor, quota, namespace, cluster, gang or policy")
    name = serializers.CharField(help_text="The tree node (or cluster part) that stops the job")
    resource = serializers.CharField(allow_null=True, help_text="The resource it lacks; null when not about amounts")
    requested = serializers.IntegerField(
        allow_null=True, help_text="Deprecated: base units (4000 for 4 GPUs); read requested_quantity."
    )
    available = serializers.IntegerField(allow_null=True, help_text="Deprecated: base units; read available_quantity.")
    limit = serializers.CharField(help_text="Which limit bound it: realCapability, deserved, runtime, min, hard, idle")
    requested_quantity = serializers.DictField(
        child=serializers.CharField(allow_null=True),
        allow_null=True,
        help_text='What the job asks of the resource, as a Kubernetes quantity: {"nvidia.com/gpu": "4"}.',
    )
    available_quantity = serializers.DictField(
        child=serializers.CharField(allow_null=True),
        allow_null=True,
        help_text="What the blocking node has left of the resource, as a Kubernetes quantity; null inside: unbounded.",
    )


_BlockerSchema = extend_schema_serializer(component_name="Blocker", deprecate_fields=["requested", "available"])(
    _BlockerSchema
)


@extend_schema_field(_BlockerSchema(allow_null=True))
class BlockerField(serializers.Field):
    """Why a job waits or a pod was evicted, as recorded (``engine.session.decisions.Blocker``), with its amounts as
    Kubernetes quantities beside the deprecated base-unit integers (``engine.session.decisions.blocker_json``)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> dict[str, Any] | None:
        return blocker_json(value)


class _UserLimitSchema(serializers.Serializer):
    """One per-user limit of a queue or quota group (``engine.userlimits``): for one ``user`` or one ``group``
    (exactly one of them; ``*`` for each user or each group), at most ``max_resources`` and ``max_jobs``."""

    user = serializers.CharField(required=False, help_text='A user name, or "*" for each user.')
    group = serializers.CharField(required=False, help_text='A group name, or "*" for each group.')
    max_resources = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text="The most its running jobs may request together in the subtree, per resource, as Kubernetes "
        "quantities; a resource left out is unlimited.",
    )
    max_jobs = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, help_text="The most jobs it may run at once; null: unlimited."
    )


_UserLimitSchema = extend_schema_serializer(component_name="UserLimit")(_UserLimitSchema)


@extend_schema_field(_UserLimitSchema(many=True))
class UserLimitsSerializerField(serializers.Field):
    """A tree node's per-user limits: ``[{"user": "alice", "max_resources": {"nvidia.com/gpu": "4"}, "max_jobs":
    3}]`` in and out (null in: none). Each problem is reported at its place (``user_limits.1.max_jobs``)."""

    def to_internal_value(self, data: Any) -> Any:
        limits, problems = parse_user_limits(data, self.field_name)
        for i, limit in enumerate(limits):
            try:
                check_known(list(limit.max_resources), f"{self.field_name}.{i}.max_resources")
            except QuantityError as exc:
                problems.append(exc)
        if not problems:
            return limits
        prefix = f"{self.field_name}."
        nested: dict[str, Any] = {}
        for exc in problems:
            if not exc.field.startswith(prefix):
                raise serializers.ValidationError(exc.message, code="invalid")
            index, _, rest = exc.field[len(prefix) :].partition(".")
            at = nested.setdefault(index, {})
            if not rest:
                at.setdefault("non_field_errors", []).append(exc.message)
                continue
            key, _, resource = rest.partition(".")  # a resource name has dots of its own: the rest is one key
            if resource:
                at.setdefault(key, {}).setdefault(resource, []).append(exc.message)
            else:
                at.setdefault(key, []).append(exc.message)
        raise serializers.ValidationError(nested, code="invalid")

    def to_representation(self, value: Any) -> list[dict[str, Any]]:
        limits = value if isinstance(value, tuple) else user_limits_from_stored(value)
        return user_limits_json(limits)


class NameField(serializers.SlugRelatedField):
    """A reference to another object by its name, with an error that says what was not found."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("slug_field", "name")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            queryset = self.get_queryset()
            codes = exc.get_codes()
            if queryset is not None and codes == ["does_not_exist"]:
                what = queryset.model._meta.verbose_name
                raise serializers.ValidationError(f"{what} {data} does not exist", code="does_not_exist") from None
            raise


class ObjectNameField(serializers.CharField):
    """The name of a queue, quota group, namespace, cluster, node, podgroup or pod: taken as sent, never trimmed, so
    that ``"nlp "`` is refused by the name rules (``engine.rules.validate_dns_label`` / ``validate_dns_subdomain``,
    which every writer runs) rather than silently becoming ``nlp``. Kubernetes names are DNS labels or subdomains:
    no whitespace anywhere."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["trim_whitespace"] = False
        kwargs.setdefault("max_length", 253)
        super().__init__(**kwargs)
