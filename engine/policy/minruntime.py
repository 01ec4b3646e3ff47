"""``reclaim`` / ``preempt`` action arguments (a policy's ``configurations``, not a plugin's): the minimum runtime and
``wholeGangs``.

KAI's ``reclaimMinRuntime`` / ``preemptMinRuntime`` are the model: a pod is not evicted by reclaim (resp. preempt)
within ``minRuntime`` of starting (placed or pipelined; a pod without a start time counts as just placed) unless
its evictor's priority is strictly higher. A queue's ``min_runtime`` overrides the policy's for its subtree. Off (0)
by default: Volcano does not have it, so a peer's policy keeps its semantics.

``wholeGangs: true`` (Fairway's, off by default: Volcano's victims are chosen pod by pod) chooses the action's victims
with gangs in mind (``engine.session.actions.gangvictims``): the pods gangs can spare first, then the least-waste
set of whole gangs.

``minRuntimeHigherPriority`` (Fairway's) says what a strictly higher priority may do to a pod within its minimum
runtime: ``cut`` it short whenever it needs the pod (the default, KAI's reading), only as a ``lastResort`` (the
action first looks for its beneficiary's room among the pods past their minimum runtime and cuts one short only for a
job that cannot be placed so), or ``wait`` like everyone else (the minimum runtime holds against every evictor: a pod
just placed, most often the replacement of a pod just evicted, is never evicted again within the window).

Written back only as given: the ``configurations`` are kept verbatim, so a peer's file round-trips unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.policy.arguments import PolicyError, parse_duration

__all__ = [
    "HIGHER_PRIORITY",
    "MIN_RUNTIME_ACTIONS",
    "parse_min_runtime",
    "parse_min_runtime_higher_priority",
    "parse_whole_gangs",
]

MIN_RUNTIME_ACTIONS = ("reclaim", "preempt")


def parse_min_runtime(action: str, arguments: Mapping[str, Any]) -> float:
    """Seconds of ``minRuntime`` in ``action``'s ``configurations`` arguments (0 when absent); a bad value is a
    ``PolicyError`` naming the key."""
    return parse_duration(arguments.get("minRuntime", 0), f"configurations {action}: minRuntime")


def parse_whole_gangs(action: str, arguments: Mapping[str, Any]) -> bool:
    """``wholeGangs`` in ``action``'s ``configurations`` arguments (false when absent); anything but true or false
    is a ``PolicyError`` naming the key."""
    value = arguments.get("wholeGangs", False)
    if not isinstance(value, bool):
        raise PolicyError(f"configurations {action}: wholeGangs: expected true or false, got {value!r}")
    return value


# what a strictly higher priority may do to a pod within its minimum runtime (``minRuntimeHigherPriority``)
HIGHER_PRIORITY = ("cut", "lastResort", "wait")


def parse_min_runtime_higher_priority(action: str, arguments: Mapping[str, Any]) -> str:
    """``minRuntimeHigherPriority`` in ``action``'s ``configurations`` arguments, one of ``HIGHER_PRIORITY`` (``cut``
    when absent); anything else is a ``PolicyError`` naming the key."""
    value = arguments.get("minRuntimeHigherPriority", "cut")
    if value not in HIGHER_PRIORITY:
        choices = ", ".join(HIGHER_PRIORITY)
        raise PolicyError(
            f"configurations {action}: minRuntimeHigherPriority: expected one of {choices}, got {value!r}"
        )
    return str(value)
