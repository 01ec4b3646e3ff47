"""``reclaim`` / ``preempt`` action arguments (a policy's ``configurations``, not a plugin's): the minimum runtime and
``wholeGangs``.

KAI's ``reclaimMinRuntime`` / ``preemptMinRuntime`` are the model: a pod is not evicted by reclaim (resp. preempt)
within ``minRuntime`` of starting (placed or pipelined; a pod without a start time counts as just placed) unless
its evictor's priority is strictly higher. A queue's ``min_runtime`` overrides the policy's for its subtree. Off (0)
by default: Volcano does not have it, so a peer's policy keeps its semantics.

``wholeGangs: true`` (Fairway's, off by default: Volcano's victims are chosen pod by pod) chooses the action's victims
with gangs in mind (``engine.session.actions.gangvictims``): the pods gangs can spare first, then the least-waste
set of whole gangs. Written back only as given: the ``configurations`` are kept verbatim, so a peer's file round-trips
unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.policy.arguments import PolicyError, parse_duration

__all__ = ["MIN_RUNTIME_ACTIONS", "parse_min_runtime", "parse_whole_gangs"]

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
