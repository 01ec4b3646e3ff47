"""Template filters of the dashboard: ``plural`` ("1 pod", "2 pods", "1 child queue", "3 children")."""

from __future__ import annotations

from typing import Any

from django import template

from engine.wording import plural as _plural

register = template.Library()


@register.filter
def plural(count: Any, word: str) -> str:
    """``{{ n|plural:"pod" }}`` is "1 pod" or "2 pods"; an irregular plural follows a comma
    (``{{ n|plural:"child,children" }}``). ``count`` may be a number or a collection (its length)."""
    if not isinstance(count, (int, float, str)) and hasattr(count, "__len__"):
        count = len(count)
    try:
        n = int(count)
    except (TypeError, ValueError):
        return f"{count} {word}"
    one, _, many = word.partition(",")
    return _plural(n, one, many or None)
