"""The engine's entry points: one scheduling session, applying its decisions, one recycling pass.

The Celery tasks (``scheduling/tasks.py``), the what-if endpoints and ``fairway simulate`` call these three and
nothing else. All are pure: the snapshot is never modified, time comes in as ``now``.

This module builds the sessions, so it is the one that imports the actions and loads the plugins
(``engine.session.plugins.load``: each plugin's class registers itself); the session and the framework know neither
by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from engine.collector import paused_during
from engine.objects import (
    PodGroupCondition,
    PodGroupPhase,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.policy.policy import Policy
from engine.session.actions import ACTIONS
from engine.session.carry import SessionCarry
from engine.session.decisions import BindingSink, Eviction, SessionResult
from engine.session.recycle import recycle
from engine.session.registry import load
from engine.session.session import Session
from engine.vocabulary import FINISHED_STATUSES

load()  # every plugin's class registered before a session is built

__all__ = ["SessionCarry", "apply_result", "run_actions", "run_recycle", "run_session"]

# as ``session.podgroup_phase`` counts them: a Failed (evicted) pod is not scheduled
_SCHEDULED = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.SUCCEEDED})


@paused_during
def run_session(
    snapshot: Snapshot,
    *,
    now: float,
    policy: Policy | None = None,
    checkpoint: Callable[[], None] | None = None,
    carry: SessionCarry | None = None,
    on_bindings: BindingSink | None = None,
) -> SessionResult:
    """Open a session on the snapshot (policy defaults to ``snapshot.policy``), run the policy's actions in order,
    close it and return the decisions: bindings, evictions, podgroup statuses with reasons, and the quota values
    computed at open (``queue_values``, ``namespace_values``, ``quota_values``). ``checkpoint`` is called between
    podgroups (a budget's check: whatever it raises stops the session and propagates). ``carry``: the state the
    last session of the same cluster opened with, kept by the caller (``engine.session.carry``); the session opens
    on it brought up to date instead of building everything, and decides exactly the same. ``on_bindings`` is
    given the bindings of each statement as it commits (``decisions.BindingSink``): the store writes them while the
    session goes on."""
    chosen = policy if policy is not None else snapshot.policy
    session = Session(snapshot, chosen, now, checkpoint, carry, on_bindings)
    run_actions(session)
    result = session.close()
    session.release(keep_state=carry is not None)
    return result


def run_actions(session: Session) -> None:
    """The policy's actions, in its order, with the session's checkpoint before each."""
    for name in session.policy.actions:
        session.checkpoint()
        ACTIONS[name](session)


def apply_result(snapshot: Snapshot, result: SessionResult, *, now: float) -> Snapshot:
    """The snapshot after the decisions took effect, for the next session (SIMULATE.md ``--sessions``): bound and
    pipelined pods Running on their node (``start_timestamp = now``), evicted pods gone, podgroup phases updated
    (Running once ``minMember`` pods are scheduled) with the session's reason as their condition, and the past usage
    the session brought forward (fairness over time)."""
    changed: dict[str, TaskInfo] = {}
    for binding in result.bindings:
        task = snapshot.tasks.get(binding.task)
        if task is None:
            continue
        changed[task.uid] = task.evolve(status=TaskStatus.RUNNING, node=binding.node, start_timestamp=now)
    gone = {e.task for e in result.evictions}
    tasks = {uid: changed.get(uid, t) for uid, t in snapshot.tasks.items() if uid not in gone}
    counted = _scheduled_and_live(tasks.values())
    podgroups = dict(snapshot.podgroups)
    for key, status in result.podgroups.items():
        pg = podgroups.get(key)
        if pg is None:
            continue
        scheduled, live = counted.get(key, _NONE)
        phase = PodGroupPhase(status.phase)
        if phase in (PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.UNKNOWN) and scheduled >= max(
            pg.min_member, 1
        ):
            phase = PodGroupPhase.COMPLETED if live == 0 else PodGroupPhase.RUNNING
        if phase == PodGroupPhase.RUNNING or not status.reason:
            conditions: tuple[PodGroupCondition, ...] = (
                PodGroupCondition(
                    "Scheduled", reason="tasks in gang are ready to be scheduled", last_transition_time=now
                ),
            )
        else:
            conditions = (
                PodGroupCondition(
                    "Unschedulable", reason=status.reason, message=status.message, last_transition_time=now
                ),
            )
        podgroups[key] = pg.evolve(
            phase=phase,
            conditions=conditions,
            unplaced_sessions=status.unplaced_sessions,
            requeues=status.requeues,
            backoff_until=status.backoff_until,
        )
    if result.usage_history is not None:  # fairness over time: the past usage brought forward by the session
        return snapshot.replace(tasks=tasks, podgroups=podgroups, past_usage=result.usage_history)
    return snapshot.replace(tasks=tasks, podgroups=podgroups)


_NONE = (0, 0)


def _scheduled_and_live(tasks: Iterable[TaskInfo]) -> dict[str, tuple[int, int]]:
    """Per podgroup key, how many of its pods are scheduled (``_SCHEDULED``) and how many are not finished."""
    out: dict[str, tuple[int, int]] = {}
    scheduled_statuses, finished = _SCHEDULED, FINISHED_STATUSES
    for t in tasks:
        status = t.status
        scheduled, live = out.get(t.podgroup, _NONE)
        out[t.podgroup] = (
            scheduled + (status in scheduled_statuses),
            live + (status not in finished),
        )
    return out


def run_recycle(
    snapshot: Snapshot,
    *,
    now: float,
    over_since: Mapping[str, float],
    delay: float | None = None,
    carry: SessionCarry | None = None,
) -> tuple[list[Eviction], dict[str, float]]:
    """One overuse-revoke pass (seed 001, koordinator.md section 8): for each quota group whose used exceeds its
    runtime, track since when (``over_since``: group -> first time seen over, carried between passes); a group
    over for longer than ``delay`` (default: the elasticquota plugin's ``delayEvictTime``, 120 s) loses its least
    important pods (lower priority first, then the most recently started), never non-preemptible ones, until
    ``used <= runtime``; pods that still fit are added back most important first. Returns the evictions (each
    with reason and numbers) and the new ``over_since`` map. ``delay=0`` with an ``over_since`` of 0 for every
    group is SIMULATE.md's ``--recycle``. ``carry``: the cluster's session carry, whose elastic quota tree (kept
    from its last session) is brought up to date rather than built again, and whose quota groups' sums kept at that
    session's open, moved by the pods that changed since, give the groups' usage (the same numbers)."""
    if carry is None:
        return recycle(snapshot, now=now, over_since=over_since, delay=delay)
    usage = carry.group_usage(snapshot)  # the kept sums moved by the pods that changed since the session opened
    return recycle(snapshot, now=now, over_since=over_since, delay=delay, memo=carry.quotas, usage=usage)
