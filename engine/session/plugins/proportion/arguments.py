"""``proportion`` plugin arguments: Volcano's plugin reads none; Fairway's fairness over time
(``engine.policy.fairness``) is the only one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.policy.arguments import declare
from engine.policy.fairness import FairnessArgs, parse_fairness_args

__all__ = ["PROPORTION", "read_proportion_args"]


def read_proportion_args(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> FairnessArgs:
    """Strict: a bad fairness key raises ``PolicyError`` (``warnings`` stays untouched)."""
    return parse_fairness_args(arguments, "proportion")


PROPORTION = declare("proportion", read_proportion_args)
