"""A gang below its minimum is made whole or let go (Fairway; Kueue's ``waitForPodsReady`` and Volcano's
``PodEvicted: RestartJob`` are the models).

A gang (``minMember`` > 1 or role minimums) whose ready plus pipelined pods are below its minimum while some of its
pods hold nodes — a pod evicted, lost with its node or failed, for any cause — runs nothing on what it holds. The
session that first sees it so writes its podgroup Unknown (Volcano's phase, "N pods running but the gang is not
ready"), and the condition keeps the time of that transition (``PodGroupCondition.last_transition_time``). If its
missing pods are still not placed ``gangRepairTimeout`` after that (the ``enqueue`` configuration, default 5 s, a
few sessions; 0: never, Volcano's behaviour), the session evicts every pod of it that holds a node (action
``gang-release``, reason ``GangBroken``) and the podgroup goes back to Pending as a whole: it gives its
reservation back with it (a Pending podgroup reserves nothing) and is admitted again as any other, when all its
minimum fits. The eviction and the podgroup's status say why, and how many GPU-seconds it held idle: each GPU the
gang held times the seconds since it went below its minimum.

A podgroup without such a condition time (a snapshot made from manifests, a gang seen broken for the first time)
is not released: the clock starts at the transition the store records.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.objects import PodGroupPhase, TaskStatus
from engine.session.decisions import Blocker, Eviction, PodGroupStatus
from engine.vocabulary import BlockerKind

if TYPE_CHECKING:
    from engine.session.session import JobState, Session, TaskState

__all__ = ["below_minimum", "gang_release", "idle_gpu_seconds", "is_gpu"]

_HOLDING = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND})
_NOT_BROKEN = ("Pipelined",)  # a gang waiting on its pipelined pods is being made whole


def is_gpu(resource: str) -> bool:
    """``nvidia.com/gpu``, ``amd.com/gpu``, ... (counted in milli-units in the session)."""
    return resource == "gpu" or resource.endswith("/gpu")


def idle_gpu_seconds(pods: list[TaskState], seconds: float) -> int:
    """Whole GPU-seconds ``pods`` held over ``seconds``."""
    milli = sum(v for t in pods for r, v in t.req.items() if is_gpu(r))
    return milli * max(0, math.floor(seconds)) // 1000


def _broken_since(job: JobState) -> float | None:
    """When the podgroup went below its minimum (its Unknown condition's transition), None when not known."""
    info = job.info
    if info.phase != PodGroupPhase.UNKNOWN or not info.conditions:
        return None
    last = info.conditions[-1]
    if last.type != "Unschedulable" or last.reason in _NOT_BROKEN:
        return None
    return last.last_transition_time


def below_minimum(job: JobState) -> bool:
    """Whether the gang is short of its minimum (``minMember`` or a role's ``minTaskMember``), pipelined pods counted."""
    if job.min_member <= 1 and not any(job.min_task_member.values()):
        return False
    return not (job.is_pipelined() and job.check_task_pipelined())


def gang_release(ssn: Session, job: JobState, timeout: float) -> PodGroupStatus | None:
    """Release ``job`` whole if it has held nodes below its minimum for longer than ``timeout``: evict its pods
    that hold nodes and return its status (Pending, ``GangReleased``); None when it is kept."""
    if timeout <= 0 or not below_minimum(job):
        return None
    since = _broken_since(job)
    holding = [t for t in job.tasks if t.status in _HOLDING and t.node >= 0]
    if since is None or not holding or not ssn.now - since > timeout:
        return None
    held = ssn.now - since
    gpu_seconds = idle_gpu_seconds(holding, held)
    ready = job.ready_num()
    why = (
        f"gang {job.key} held {len(holding)} pods with {ready} of minMember {job.min_member} ready for {held:.0f}s "
        f"(gangRepairTimeout {timeout:g}s): its missing pods could not be placed, so all its pods are released "
        f"together; {gpu_seconds} GPU-seconds held idle"
    )
    blocker = Blocker(BlockerKind.GANG, job.key, limit="minMember")
    for t in holding:
        ssn.evict_task(t)
        ssn.record_eviction(Eviction(t.uid, "gang-release", "GangBroken", why, None, blocker))
    message = f"released whole and waiting again: {why}"
    return PodGroupStatus(
        job.key, PodGroupPhase.PENDING, "GangReleased", message, blocker, 0, job.info.requeues, None, gpu_seconds
    )
