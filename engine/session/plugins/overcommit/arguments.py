"""``overcommit`` plugin arguments (Volcano ``plugins/overcommit``): the ``overcommit-factor``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.policy.arguments import declare, get_float

__all__ = [
    "DEFAULT_OVERCOMMIT_FACTOR",
    "OVERCOMMIT",
    "read_overcommit_factor",
]

DEFAULT_OVERCOMMIT_FACTOR = 1.2


def read_overcommit_factor(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> float:
    if arguments is None:
        return DEFAULT_OVERCOMMIT_FACTOR
    where = "overcommit"
    factor = get_float(arguments, "overcommit-factor", DEFAULT_OVERCOMMIT_FACTOR, warnings, where)
    if factor < 1.0:
        # Volcano (plugins/overcommit) replaces a factor below 1 with the default 1.2 rather than refusing it.
        if warnings is not None:
            warnings.append(f"{where}: overcommit-factor {factor} is below 1; using {DEFAULT_OVERCOMMIT_FACTOR}")
        factor = DEFAULT_OVERCOMMIT_FACTOR
    return factor


OVERCOMMIT = declare("overcommit", read_overcommit_factor)
