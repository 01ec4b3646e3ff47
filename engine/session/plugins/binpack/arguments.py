"""``binpack`` plugin arguments (Volcano ``plugins/binpack``): its weights."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.policy.arguments import declare, get_int

__all__ = ["BINPACK", "BinpackWeights", "read_binpack_weights"]


@dataclass(frozen=True, slots=True)
class BinpackWeights:
    """``binpack`` plugin weights (``plugins/binpack/binpack.go``): overall weight, cpu, memory and extra resources."""

    weight: int = 1
    cpu: int = 1
    memory: int = 1
    resources: Mapping[str, int] = field(default_factory=dict)  # extra resources named in binpack.resources

    def resource_weights(self) -> dict[str, int]:
        """Every weighted resource, cpu and memory included (as Volcano adds them to the map)."""
        out = dict(self.resources)
        out["cpu"] = self.cpu
        out["memory"] = self.memory
        return out


def read_binpack_weights(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> BinpackWeights:
    if arguments is None:
        return BinpackWeights()
    args = arguments
    where = "binpack"
    weight = get_int(args, "binpack.weight", 1, warnings, where)
    # Volcano resets a negative cpu/memory/resource weight to 1 (plugins/binpack calculateWeight).
    cpu = get_int(args, "binpack.cpu", 1, warnings, where)
    cpu = 1 if cpu < 0 else cpu
    memory = get_int(args, "binpack.memory", 1, warnings, where)
    memory = 1 if memory < 0 else memory
    resources: dict[str, int] = {}
    names = args.get("binpack.resources", "")
    if not isinstance(names, str):
        if warnings is not None:
            warnings.append(f"{where}: argument binpack.resources={names!r} is not a comma-separated string; ignored")
        names = ""
    for raw in names.split(","):
        name = raw.strip()
        if not name:
            continue
        value = get_int(args, f"binpack.resources.{name}", 1, warnings, where)
        resources[name] = 1 if value < 0 else value
    return BinpackWeights(weight=weight, cpu=cpu, memory=memory, resources=resources)


BINPACK = declare("binpack", read_binpack_weights)
