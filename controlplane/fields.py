"""DRF field for resource lists: accepts quantities, renders canonical quantity strings."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from quotas.resources import QuantityError, ResourceList, parse_resource_list


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "example": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"},
        "description": "Resource name to Kubernetes quantity (500m, 2, 1.5, 4Gi, 1e3).",
    }
)
class ResourceListField(serializers.Field):
    default_error_messages = {"invalid": "Expected an object of resource name to quantity."}

    def to_internal_value(self, data: Any) -> ResourceList:
        try:
            return parse_resource_list(data, self.field_name)
        except QuantityError as exc:
            prefix = f"{self.field_name}."
            key = exc.field[len(prefix) :] if exc.field.startswith(prefix) else None
            if key:
                raise serializers.ValidationError({key: [exc.message]}, code="invalid") from exc
            raise serializers.ValidationError(str(exc), code="invalid") from exc

    def to_representation(self, value: Any) -> dict[str, str] | None:
        if value is None:
            return None
        if not isinstance(value, ResourceList):
            value = ResourceList({str(k): int(v) for k, v in value.items()})
        return value.to_quantities()


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
