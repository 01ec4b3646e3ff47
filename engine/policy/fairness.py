"""Fairness over time: the arguments the queue plugins (``proportion``, ``capacity``) and ``elasticquota`` share.

Fairway's addition (issue 13), off by default so a peer's policy means what it means there::

    - name: proportion
      arguments:
        fairnessOverTime: true   # the switch (default false)
        usageHalfLife: 4h        # how fast past usage is forgotten (default 4h)
        usageWindow: 7d          # the longest memory; a longer gap forgets everything (default 7d)

Durations are Go durations (``90m``, ``4h``) or a number of seconds, plus a ``d`` suffix for days. The keys are
decoded strictly (a wrong type or a bad duration is a ``PolicyError`` naming the plugin and the key): they are
Fairway's own, so there is no peer behaviour to be lenient for. The math is ``engine.usage``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.policy.arguments import PolicyError, format_duration, parse_duration

__all__ = ["FAIRNESS_KEYS", "FairnessArgs", "format_days", "parse_fairness_args"]

DEFAULT_HALF_LIFE = 4 * 3600.0
DEFAULT_WINDOW = 7 * 86400.0
FAIRNESS_KEYS = ("fairnessOverTime", "usageHalfLife", "usageWindow")

_DAYS = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)d(.*)$")


@dataclass(frozen=True, slots=True)
class FairnessArgs:
    """Whether a tree's surplus is shared with memory of past usage, and how long that memory is (seconds)."""

    enabled: bool = False
    half_life: float = DEFAULT_HALF_LIFE
    window: float = DEFAULT_WINDOW

    KEYS: ClassVar[tuple[str, ...]] = FAIRNESS_KEYS

    def to_arguments(self) -> dict[str, object]:
        """The arguments in a policy file's spelling (empty when the switch is off and the rest default)."""
        if self == FairnessArgs():
            return {}
        return {
            "fairnessOverTime": self.enabled,
            "usageHalfLife": format_duration(self.half_life),
            "usageWindow": format_duration(self.window),
        }


def _duration(value: object, where: str) -> float:
    """A Go duration, or ``<n>d`` followed by an optional Go duration (``7d``, ``1d12h``)."""
    if isinstance(value, str):
        match = _DAYS.match(value)
        if match is not None:
            rest = match.group(2).strip()
            return float(match.group(1)) * 86400.0 + (parse_duration(rest, where) if rest else 0.0)
    return parse_duration(value, where)


def format_days(seconds: float) -> str:
    """A duration as a person reads it: ``7 days``, ``1 day``, ``36 hours``, ``90 minutes``, ``45 seconds``."""
    for unit, size in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}" if n == 1 else f"{n} {unit}s"
    if seconds >= 3600.0:
        return f"{seconds / 3600.0:.1f} hours"
    return f"{seconds:g} seconds"


def parse_fairness_args(arguments: Mapping[str, Any] | None, plugin: str) -> FairnessArgs:
    """The fairness-over-time keys of a plugin's ``arguments``; ``PolicyError`` names ``plugin`` and the key."""
    if not arguments or not any(k in arguments for k in FAIRNESS_KEYS):
        return FairnessArgs()
    where = f"{plugin} argument"
    enabled = arguments.get("fairnessOverTime", False)
    if not isinstance(enabled, bool):
        raise PolicyError(f"{where} fairnessOverTime: expected true or false, got {enabled!r}")
    half_life = _duration(arguments.get("usageHalfLife", DEFAULT_HALF_LIFE), f"{where} usageHalfLife")
    window = _duration(arguments.get("usageWindow", DEFAULT_WINDOW), f"{where} usageWindow")
    if half_life <= 0:
        raise PolicyError(f"{where} usageHalfLife: must be longer than 0 (e.g. 4h)")
    if window <= 0:
        raise PolicyError(f"{where} usageWindow: must be longer than 0 (e.g. 7d)")
    if window < half_life:
        raise PolicyError(
            f"{where} usageWindow: {format_days(window)} is shorter than usageHalfLife ({format_days(half_life)})"
        )
    return FairnessArgs(enabled=enabled, half_life=half_life, window=window)
