"""``kueuefair`` plugin arguments: Kueue's ``fairSharing`` section of its Configuration (``enable``,
``preemptionStrategies``; ``engine.manifests.kueuefair`` turns the plugin on for a Kueue input)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.policy.arguments import PolicyError, declare

__all__ = [
    "KUEUEFAIR",
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "KueueFairArgs",
    "read_kueuefair_args",
]

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
# the lists Kueue accepts (apis/config/v1beta1 FairSharing.PreemptionStrategies); the first is its default
_STRATEGY_LISTS: tuple[tuple[str, ...], ...] = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
)


@dataclass(frozen=True, slots=True)
class KueueFairArgs:
    """``enable``: Kueue's Fair Sharing (admission order across a cohort by dominant resource share, preemption by
    ``strategies``); off, the plugin enforces the ClusterQueues' preemption policies only (Kueue's classical
    preemption)."""

    enable: bool = False
    strategies: tuple[str, ...] = _STRATEGY_LISTS[0]


def read_kueuefair_args(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> KueueFairArgs:
    """Strict: a value Kueue would refuse raises ``PolicyError`` naming the argument."""
    if not arguments:
        return KueueFairArgs()
    unknown = sorted(set(arguments) - {"enable", "preemptionStrategies"})
    if unknown:
        raise PolicyError(f"kueuefair: unknown argument {unknown[0]!r} (it reads enable, preemptionStrategies)")
    enable = arguments.get("enable", False)
    if not isinstance(enable, bool):
        raise PolicyError(f"kueuefair: enable: expected true or false, got {enable!r}")
    raw = arguments.get("preemptionStrategies")
    if raw is None or raw == []:
        return KueueFairArgs(enable=enable)
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise PolicyError(f"kueuefair: preemptionStrategies: expected a list of strategy names, got {raw!r}")
    strategies = tuple(raw)
    if strategies not in _STRATEGY_LISTS:
        accepted = "; ".join(", ".join(s) for s in _STRATEGY_LISTS)
        raise PolicyError(f"kueuefair: preemptionStrategies: {list(strategies)} is not one Kueue accepts ({accepted})")
    return KueueFairArgs(enable=enable, strategies=strategies)


KUEUEFAIR = declare("kueuefair", read_kueuefair_args)
