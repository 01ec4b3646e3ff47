"""The ``enqueue`` action's arguments (a policy's ``configurations``, not a plugin's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.policy.arguments import PolicyError, format_duration, parse_duration

__all__ = ["EnqueueArgs", "parse_enqueue_args"]


@dataclass(frozen=True, slots=True)
class EnqueueArgs:
    """``enqueue`` action arguments (``configurations``): when an admitted podgroup that cannot be placed gives its
    reservation back. Fairway's addition (seed 003's Inqueue -> Pending); Volcano keeps such reservations, which
    ``requeueAfterSessions: 0`` restores."""

    requeue_after_sessions: int = 3
    requeue_backoff: float = 4.0  # seconds before the first new admission attempt; doubles per requeue
    requeue_backoff_max: float = 60.0
    # a gang below its minimum that holds pods is released whole after this long (``engine.session.gangrepair``);
    # 0: never (Volcano's behaviour)
    gang_repair_timeout: float = 5.0

    def backoff(self, requeues: int) -> float:
        """Seconds a podgroup requeued ``requeues`` times (>= 1) waits before it may be admitted again."""
        return min(self.requeue_backoff_max, self.requeue_backoff * 2.0 ** max(0, min(requeues, 32) - 1))


def parse_enqueue_args(arguments: Mapping[str, Any]) -> EnqueueArgs:
    """The ``enqueue`` action's ``configurations`` arguments; a bad value is a ``PolicyError`` naming the key."""
    where = "configurations enqueue"
    defaults = EnqueueArgs()
    sessions = arguments.get("requeueAfterSessions", defaults.requeue_after_sessions)
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 0:
        raise PolicyError(f"{where}: requeueAfterSessions: expected a whole number >= 0, got {sessions!r}")
    backoff = parse_duration(arguments.get("requeueBackoff", defaults.requeue_backoff), f"{where}: requeueBackoff")
    most = parse_duration(
        arguments.get("requeueBackoffMax", defaults.requeue_backoff_max), f"{where}: requeueBackoffMax"
    )
    if most < backoff:
        raise PolicyError(f"{where}: requeueBackoffMax ({format_duration(most)}) is below requeueBackoff")
    repair = parse_duration(
        arguments.get("gangRepairTimeout", defaults.gang_repair_timeout), f"{where}: gangRepairTimeout"
    )
    return EnqueueArgs(
        requeue_after_sessions=sessions, requeue_backoff=backoff, requeue_backoff_max=most, gang_repair_timeout=repair
    )
