"""The API's JSON parser: DRF's, behind the nesting limit (``settings.FAIRWAY_LIMITS.max_json_depth``), refusing the
null character that no PostgreSQL text or jsonb value can hold (a label key with one was a 500)."""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError

from engine.limits import TooDeep, check_json_depth


class JSONParser(parsers.JSONParser):
    """Measures the body's nesting depth in one linear pass before ``json`` builds anything, so that
    ``"[" * 100000`` is a 400 in milliseconds instead of a RecursionError (or worse) in the parser. The body's size
    is bounded before this runs (``controlplane.middleware.RequestLimitsMiddleware``)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = stream.read() if stream is not None else b""
        try:
            check_json_depth(data, settings.FAIRWAY_LIMITS.max_json_depth)
        except TooDeep as exc:
            raise ParseError(f"JSON parse error - {exc.message}") from None
        parsed = super().parse(io.BytesIO(data), media_type, parser_context)
        where = _null_character(parsed, "")
        if where is not None:  # the field's path, as DRF's own check on a CharField would name it
            raise ValidationError(
                {where or "non_field_errors": ["Null characters are not allowed."]}, code="null_characters_not_allowed"
            )
        return parsed


def _null_character(value: Any, path: str) -> str | None:
    """The path of the first key or string holding U+0000 (``None``: none does). The depth is already bounded."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in key:
                return here.replace("\x00", "\\u0000")
            found = _null_character(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _null_character(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None
