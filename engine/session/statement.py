"""The in-session transaction (Volcano ``framework/statement.go``).

``allocate``, ``pipeline`` and ``evict`` change the session at once (task status, node amounts, and the plugins'
event handlers, so queue shares and quota usage move immediately) and are recorded. ``discard`` undoes them in
reverse order; ``commit`` turns them into decisions: an allocation becomes a binding (the task is then Binding),
a pipeline a binding marked ``pipelined`` (the task waits on that node for resources being released), an
eviction an ``Eviction`` with its reason and numbers. (Volcano's commit of a pipeline does nothing outside the
session, and the pod is placed again once the node has room; in Fairway a committed pipeline is a decision: the
pod runs on that node once the evicted pods are gone, as SIMULATE.md's ``--sessions`` has it.) A statement that is neither committed nor discarded leaves
its changes in the session without decisions: Volcano's allocate does that for a gang that is only pipelined,
keeping the resources reserved for the rest of the session.

A gang job is allocated in one statement, committed only when the job is ready (``minMember`` and
``minTaskMember`` met), kept when it is pipelined, discarded otherwise: all or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.objects import TaskStatus
from engine.session.decisions import Blocker, Eviction

if TYPE_CHECKING:
    from engine.session.session import Session, TaskState

__all__ = ["ALLOCATE", "EVICT", "PIPELINE", "Statement"]

ALLOCATE = "allocate"
PIPELINE = "pipeline"
EVICT = "evict"


@dataclass(slots=True)
class _Op:
    kind: str
    task: TaskState
    node: int = -1
    status: TaskStatus = TaskStatus.RUNNING  # an evicted task's status before the eviction
    action: str = ""
    reason: str = ""
    message: str = ""
    preemptor: str | None = None
    blocker: Blocker | None = None


class Statement:
    """A list of operations on one session that is committed or discarded as a whole."""

    __slots__ = ("ops", "session")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.ops: list[_Op] = []

    def __len__(self) -> int:
        return len(self.ops)

    @property
    def has_evictions(self) -> bool:
        return any(op.kind == EVICT for op in self.ops)

    def allocate(self, task: TaskState, row: int) -> None:
        self.session.allocate_task(task, row)
        self.ops.append(_Op(ALLOCATE, task, row))

    def pipeline(self, task: TaskState, row: int) -> None:
        self.session.pipeline_task(task, row)
        self.ops.append(_Op(PIPELINE, task, row))

    def evict(
        self,
        task: TaskState,
        *,
        action: str,
        reason: str,
        message: str,
        preemptor: str | None = None,
        blocker: Blocker | None = None,
    ) -> None:
        old = self.session.evict_task(task)
        self.ops.append(_Op(EVICT, task, task.node, old, action, reason, message, preemptor, blocker))

    def merge(self, other: Statement) -> None:
        """Take over ``other``'s operations (already applied to the session) so they commit or discard with ours."""
        if other.ops:
            self.session.epoch += 1
        self.ops.extend(other.ops)
        other.ops = []

    def discard(self) -> None:
        """Undo every operation, newest first."""
        ssn = self.session
        for op in reversed(self.ops):
            if op.kind == EVICT:
                ssn.unevict_task(op.task, op.status)
            elif op.kind == PIPELINE:
                ssn.unpipeline_task(op.task)
            else:
                ssn.unallocate_task(op.task)
        self.ops = []

    def commit(self) -> None:
        """Turn the operations into decisions, in order."""
        ssn = self.session
        if self.ops:
            ssn.epoch += 1
        for op in self.ops:
            if op.kind == EVICT:
                ssn.record_eviction(
                    Eviction(
                        task=op.task.uid,
                        action=op.action,
                        reason=op.reason,
                        message=op.message,
                        preemptor=op.preemptor,
                        blocker=op.blocker,
                    )
                )
            else:
                ssn.record_binding(op.task, pipelined=op.kind == PIPELINE)
        self.ops = []
        ssn.send_bindings()
