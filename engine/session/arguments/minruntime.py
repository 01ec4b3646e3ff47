"""``reclaim`` / ``preempt`` action arguments: the minimum runtime (a policy's ``configurations``, not a plugin's).

KAI's ``reclaimMinRuntime`` / ``preemptMinRuntime`` are the model: a pod is not evicted by reclaim (resp. preempt)
within ``minRuntime`` of starting (placed or pipelined; a pod without a start time counts as just placed) unless
its evictor's priority is strictly higher. A queue's ``min_runtime`` overrides the policy's for its subtree. Off (0)
by default: Volcano does not have it, so a peer's policy keeps its semantics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.session.arguments.base import parse_duration

__all__ = ["MIN_RUNTIME_ACTIONS", "parse_min_runtime"]

MIN_RUNTIME_ACTIONS = ("reclaim", "preempt")


def parse_min_runtime(action: str, arguments: Mapping[str, Any]) -> float:
    """Seconds of ``minRuntime`` in ``action``'s ``configurations`` arguments (0 when absent); a bad value is a
    ``PolicyError`` naming the key."""
    return parse_duration(arguments.get("minRuntime", 0), f"configurations {action}: minRuntime")
