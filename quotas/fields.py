"""Model field for resource lists: JSON of integers in base units, read back as ``ResourceList``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from engine.resources import QuantityError, ResourceList, parse_resource_list


class ResourceListField(models.JSONField):
    """Stores ``{"cpu": 2000, "memory": 4294967296}`` (base units); Python side is a ``ResourceList``.

    Assigning a mapping of quantity strings (``{"cpu": "2"}``) parses it; bad values raise a
    ``ValidationError`` naming the field and the resource.
    """

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> ResourceList | None:
        data = super().from_db_value(value, expression, connection)
        if data is None:
            return None
        return ResourceList({str(k): int(v) for k, v in data.items()})

    def to_python(self, value: Any) -> ResourceList | None:
        if value is None or isinstance(value, ResourceList):
            return value
        if isinstance(value, dict) and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
            return ResourceList(value)
        try:
            return parse_resource_list(value, self.name)
        except QuantityError as exc:
            raise ValidationError(str(exc), code="invalid") from exc

    def get_prep_value(self, value: Any) -> Any:
        if isinstance(value, ResourceList):
            value = value.to_dict()
        elif isinstance(value, dict):
            value = self.to_python(value).to_dict()  # type: ignore[union-attr]
        return super().get_prep_value(value)

    def validate(self, value: Any, model_instance: Any) -> None:
        super().validate(value.to_dict() if isinstance(value, ResourceList) else value, model_instance)

    def value_to_string(self, obj: Any) -> Any:
        value = self.value_from_object(obj)
        return value.to_dict() if isinstance(value, ResourceList) else value

    def formfield(self, **kwargs: Any) -> Any:
        from quotas.forms import ResourceListFormField

        # a node's allocatable is where resource names come from; every other list names known resources only
        any_name = self.name == "allocatable"
        return super().formfield(**{"form_class": ResourceListFormField, "any_name": any_name, **kwargs})
