"""Admin form pieces: resource lists edited as quantities ({"cpu": "2", "memory": "4Gi"})."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from core.facts import check_known
from engine.resources import QuantityError, ResourceList, parse_resource_list
from engine.userlimits import parse_user_limits, stored_user_limits, user_limits_from_stored, user_limits_json


class ResourceListFormField(forms.JSONField):
    """A resource list in the admin: only known resource names, except where names are introduced (``any_name``:
    a node's allocatable), as the API's ``core.fields.ResourceListSerializerField``."""

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

    def has_changed(self, initial: Any, data: Any) -> bool:
        """Compare what was shown with what came back as amounts in base units (Django's ``JSONField`` compares
        JSON texts, and a ``ResourceList`` is not JSON): ``{"cpu": "1"}`` and ``{"cpu": "1000m"}`` are the same list,
        an explicit 0 is not the same as leaving the resource out, and an entry that does not parse is a change."""
        if self.disabled:
            return False
        try:
            return _base_units(initial) != _base_units(self.to_python(data))
        except (forms.ValidationError, QuantityError, ValueError, TypeError):
            return True

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


def _base_units(value: Any) -> dict[str, int] | None:
    """A resource list as ``{name: base units}`` (None for none), from a ``ResourceList``, a mapping of quantities or
    the JSON text of one (a hidden initial value)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return _base_units(json.loads(value))
    if isinstance(value, ResourceList):
        return dict(value.to_dict())
    return dict(parse_resource_list(value).to_dict())


class UserLimitsFormField(forms.JSONField):
    """A queue's or quota group's per-user limits in the admin (``engine.userlimits``): the API's JSON list
    (``[{"user": "alice", "max_resources": {"nvidia.com/gpu": "4"}, "max_jobs": 3}]``) shown and typed, checked as the
    API checks it (each problem naming its entry), kept in the stored form (base units; null for none)."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(x, dict) and "kind" in x for x in value):
            return json.dumps(user_limits_json(user_limits_from_stored(value)))
        return super().prepare_value(value)

    def to_python(self, value: Any) -> Any:
        data = super().to_python(value)
        if data in (None, "", []):
            return None
        limits, problems = parse_user_limits(data)
        for i, limit in enumerate(limits):
            try:
                check_known(list(limit.max_resources), f"user_limits.{i}.max_resources")
            except QuantityError as exc:
                problems.append(exc)
        if problems:
            raise forms.ValidationError([f"{p.field}: {p.message}" for p in problems])
        return stored_user_limits(limits)

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return bool(initial != self.to_python(data))
        except forms.ValidationError:
            return True
