"""Until when the passage of time alone cannot change a session's decisions (for reusing the last result).

A session is a pure function of the snapshot, the policy and ``now``. ``now`` enters through the requeue backoff
(checked by the caller), the release of a gang below its minimum (``engine.session.gangrepair``: a podgroup in
phase Unknown reaches its ``gangRepairTimeout``) and the minimum runtime of reclaim and preempt victims
(``actions.common.MinRuntime``: a pod that started less than the window ago stops being protected).
"""

from __future__ import annotations

import math

from engine.objects import PodGroupPhase, Snapshot
from engine.policy.minruntime import MIN_RUNTIME_ACTIONS

__all__ = ["time_horizon"]


def _windows(snapshot: Snapshot) -> list[float]:
    """The minimum runtimes of the policy's actions and of the queues that set one."""
    policy = snapshot.policy
    out = [policy.min_runtime(a) for a in MIN_RUNTIME_ACTIONS if a in policy.actions]
    return out + [q.min_runtime for q in snapshot.queues.values() if q.min_runtime is not None]


def time_horizon(snapshot: Snapshot, now: float) -> float:
    """The first moment after ``now`` at which a session on ``snapshot`` could decide differently than at ``now``
    because of a gang's repair time or a pod's minimum runtime (``math.inf``: none)."""
    out = math.inf
    timeout = snapshot.policy.enqueue_args().gang_repair_timeout
    if timeout > 0:
        for pg in snapshot.podgroups.values():
            if pg.phase == PodGroupPhase.UNKNOWN and pg.conditions:
                since = pg.conditions[-1].last_transition_time
                if since is not None and since + timeout >= now:
                    out = min(out, since + timeout)
    windows = [w for w in _windows(snapshot) if w > 0]
    if windows:
        for t in snapshot.tasks.values():
            start = t.start_timestamp
            if start is not None:
                for w in windows:
                    if start + w >= now:
                        out = min(out, start + w)
    return out
