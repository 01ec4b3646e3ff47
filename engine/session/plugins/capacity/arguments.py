"""``capacity`` plugin arguments (Volcano ``plugins/capacity``, ``parseArguments``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.policy.arguments import declare, get_int
from engine.policy.fairness import FairnessArgs, parse_fairness_args

__all__ = ["CAPACITY", "CapacityArgs", "read_capacity_args"]


@dataclass(frozen=True, slots=True)
class CapacityArgs:
    """``capacity`` plugin arguments: how many ancestor levels reclaim may look up (0 = the queue's own level)."""

    ancestor_reclaim_level: int = 0
    fairness: FairnessArgs = field(default_factory=FairnessArgs)  # Fairway's fairness over time (strict keys)


def read_capacity_args(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> CapacityArgs:
    if arguments is None:
        return CapacityArgs()
    fairness = parse_fairness_args(arguments, "capacity")
    level = get_int(arguments, "ancestorReclaimLevel", 0, warnings, "capacity")
    if level < 0:
        # Volcano (plugins/capacity parseArguments) falls back to 0 for a negative level.
        if warnings is not None:
            warnings.append(f"capacity: ancestorReclaimLevel {level} is negative; using 0")
        level = 0
    return CapacityArgs(ancestor_reclaim_level=level, fairness=fairness)


CAPACITY = declare("capacity", read_capacity_args)
