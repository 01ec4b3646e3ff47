"""The words of the cluster, each written once: task (pod) statuses, podgroup phases, queue states, blocker kinds, and
the sets of them the scheduler and the pages reason with (Volcano's names). A leaf module: it imports nothing of the
engine, so every other module, the fair-share math included, can use it."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Word(StrEnum):
    """A ``StrEnum`` that pickles by value on every Python release: ``(its class, (its value,))``, as Python 3.11.7
    and later do. Python 3.11.0 to 3.11.4 (Debian 12's 3.11.2 among them) pickle a member by name through
    ``builtins.getattr``, which the session records' loader refuses (``engine.replay.recorded``: it loads classes
    only), and which would make a record depend on the release that wrote it."""

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__class__, (self._value_,)


class TaskStatus(Word):
    """Volcano's task status (``pkg/scheduler/api/types.go``)."""

    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


# Counted into a queue's ``allocated`` (Volcano's AllocatedStatus).
ALLOCATED_STATUSES: frozenset[TaskStatus] = frozenset(
    {TaskStatus.BOUND, TaskStatus.BINDING, TaskStatus.RUNNING, TaskStatus.ALLOCATED}
)
# Drive the PodGroup phase (Volcano's ScheduledStatus).
SCHEDULED_STATUSES: frozenset[TaskStatus] = frozenset(
    {TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.FAILED, TaskStatus.SUCCEEDED}
)
# May be chosen as victims (Volcano's PreemptableStatus).
PREEMPTABLE_STATUSES: frozenset[TaskStatus] = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})
# Count towards a gang's ready members (Volcano's ReadyTaskNum).
READY_STATUSES: frozenset[TaskStatus] = frozenset(
    {TaskStatus.BOUND, TaskStatus.BINDING, TaskStatus.RUNNING, TaskStatus.ALLOCATED, TaskStatus.SUCCEEDED}
)
# Hold resources on their node (Volcano's node.Used: allocated tasks plus those still releasing).
OCCUPYING_STATUSES: frozenset[TaskStatus] = ALLOCATED_STATUSES | {TaskStatus.RELEASING}
# A pod in one of these is done: it holds nothing and is never scheduled again.
FINISHED_STATUSES: frozenset[TaskStatus] = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
# On a node, as the node pages count it: a pod running or leaving uses its room (shown "allocated"); a pod placed but
# not started yet reserves it (shown "reserved"). Not the scheduler's ALLOCATED_STATUSES, which counts both kinds.
STARTED_ON_NODE: tuple[TaskStatus, ...] = (TaskStatus.RUNNING, TaskStatus.RELEASING)
PLACED_NOT_STARTED: tuple[TaskStatus, ...] = (
    TaskStatus.ALLOCATED,
    TaskStatus.BINDING,
    TaskStatus.BOUND,
    TaskStatus.PIPELINED,
)


class QueueState(Word):
    """A queue's state (Volcano's ``QueueState``)."""

    OPEN = "Open"
    CLOSING = "Closing"
    CLOSED = "Closed"
    UNKNOWN = "Unknown"


QUEUE_STATES: tuple[str, ...] = tuple(s.value for s in QueueState)
# A queue in one of these accepts no new podgroups and keeps its children from opening.
CLOSED_QUEUE_STATES: frozenset[str] = frozenset({QueueState.CLOSED.value, QueueState.CLOSING.value})


class PodGroupPhase(Word):
    """Volcano's PodGroup phase."""

    PENDING = "Pending"
    INQUEUE = "Inqueue"
    RUNNING = "Running"
    UNKNOWN = "Unknown"
    COMPLETED = "Completed"


# A podgroup in one of these has been admitted: Volcano's enqueue passed it (Inqueue), or it runs.
ADMITTED_PHASES: frozenset[str] = frozenset({PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING})
# A podgroup in one of these waits for something: admission, placement or its gang.
WAITING_PHASES: tuple[str, ...] = (PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.UNKNOWN)


class BlockerKind(Word):
    """What stops a job (a ``Blocker``'s and a gate refusal's ``kind``; ``engine.session.reasons`` makes them)."""

    QUEUE = "queue"
    ANCESTOR = "ancestor"  # a parent queue
    QUOTA = "quota"  # an elastic quota group
    NAMESPACE = "namespace"  # its resource quota
    CLUSTER = "cluster"  # idle resources, node predicates, pods being released
    GANG = "gang"
    POLICY = "policy"


# The tree a blocker's node belongs to (the governing path marks it); the cluster, the gang and the policy are none.
BLOCKER_TREE: dict[str, str] = {
    BlockerKind.QUEUE: "queue",
    BlockerKind.ANCESTOR: "queue",
    BlockerKind.QUOTA: "quota",
    BlockerKind.NAMESPACE: "namespace",
}


# Why a Kueue workload waits when its pod templates are refused before any pod exists (Kueue's words; each followed
# by where and which bound): its containers ask for more than their limits (checked first), or they fall outside their
# namespace's LimitRanges (``engine.manifests.limitranges``). Its refusal is its template's, not its gang's count.
RESOURCES_INVALID = "resources validation failed"
LIMIT_RANGE_WAIT = "resources didn't satisfy LimitRange constraints"
TEMPLATE_REFUSALS: tuple[str, ...] = (RESOURCES_INVALID, LIMIT_RANGE_WAIT)
