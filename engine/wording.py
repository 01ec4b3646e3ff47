"""Words for people: a count with its noun in the right number (used by the engine's messages and the pages)."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word`` in the right number: ``plural(1, "pod")`` is "1 pod", ``plural(2, "pod")`` "2 pods",
    ``plural(2, "child queue")`` "2 child queues"; ``many`` gives an irregular plural (``plural(3, "child",
    "children")``). Words ending in s, x, ch or sh take "es" ("2 taxes")."""
    if count == 1:
        return f"{count} {word}"
    if many is None:
        many = word + "es" if word.endswith(("s", "x", "ch", "sh")) else word + "s"
    return f"{count} {many}"
