"""Admin form pieces: resource lists edited as quantities ({"cpu": "2", "memory": "4Gi"})."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from controlplane.resource_names import check_known
from engine.resources import QuantityError, ResourceList, parse_resource_list


class ResourceListFormField(forms.JSONField):
    """A resource list in the admin: only known resource names, except where names are introduced (``any_name``:
    a node's allocatable), as the API's ``controlplane.fields.ResourceListField``."""

    def __init__(self, *, any_name: bool = False, **kwargs: Any) -> None:
        self.any_name = any_name
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, ResourceList):
            return json.dumps(value.to_quantities())
        if isinstance(value, dict):
            try:
                return json.dumps(parse_resource_list(value).to_quantities())
            except QuantityError:
                pass
        return super().prepare_value(value)

    def to_python(self, value: Any) -> Any:
        data = super().to_python(value)
        if data in (None, ""):
            return None if not self.required else ResourceList()
        try:
            value = parse_resource_list(data, self.label or "resources")
            if not self.any_name and value:
                check_known(value, "resources")
            return value
        except QuantityError as exc:
            raise forms.ValidationError(exc.message) from exc
