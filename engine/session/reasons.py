"""Why a job waits: every reason a podgroup is not Running, with its message and numbers, and every blocker (the
tree node, cluster part, gang or policy that stops it), made here and nowhere else. The order in which the reason is
decided is the rule of ``docs/rules/why-pending.md``; the gates and votes of the plugins say no with a
``GateRefusal``, which the session turns into the podgroup's message and ``Blocker`` at its close.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.fairshare.verdicts import Refusal, Verdict, equals
from engine.resources import format_amount, resource_label
from engine.session.decisions import Blocker, PodGroupStatus
from engine.vocabulary import BlockerKind, PodGroupPhase, Word
from engine.vocabulary import TaskStatus as S
from engine.wording import plural

if TYPE_CHECKING:
    from engine.session.session import JobState, Session


class Reason(Word):
    """A podgroup's reason when it is not Running (Volcano's condition reasons, and Fairway's own)."""

    QUEUE_NOT_FOUND = "QueueNotFound"
    COMPLETED = "Completed"
    NOT_ENOUGH_PODS = "NotEnoughPods"
    QUEUE_OVERUSED = "QueueOverused"
    UNSCHEDULABLE = "Unschedulable"
    NOT_ENOUGH_RESOURCES = "NotEnoughResources"
    UNKNOWN = "Unknown"
    PIPELINED = "Pipelined"
    WAITING = "Waiting"
    REQUEUED = "Requeued"
    QUEUE_CLOSED = "QueueClosed"
    PENDING = "Pending"
    SUSPENDED = "Suspended"
    MISCONFIGURED = "Misconfigured"  # Kueue's: its pod templates are refused (``engine.vocabulary.TEMPLATE_REFUSALS``)


# A blocker's kind in people's words (a parent queue is a queue to the reader).
BLOCKER_WORDS: dict[str, str] = {
    BlockerKind.QUEUE: "queue",
    BlockerKind.ANCESTOR: "queue",
    BlockerKind.QUOTA: "quota group",
    BlockerKind.NAMESPACE: "namespace",
    BlockerKind.CLUSTER: "cluster",
    BlockerKind.GANG: "gang",
    BlockerKind.POLICY: "policy",
}


def qty(amount: int, resource: str) -> str:
    """An amount as people read it in reasons and messages: whole cores and GPUs with a decimal fraction only when
    there is one (``3``, ``2.5``), ``Gi`` for memory, ``unlimited`` for the engines' sentinels (``format_amount``)."""
    return format_amount(amount, resource)


@dataclass(frozen=True, slots=True)
class GateRefusal:
    """Why a gate or a vote said no: the tree node (``kind`` + ``name``), the check, and the numbers.

    ``kind`` is a ``BlockerKind``; ``check`` names the limit (``realCapability``, ``deserved``, ``runtime``, ``min``, ``hard``,
    ``overcommit``, ``state``, ...). ``requested`` and ``available`` are base units of ``resource``.
    """

    kind: BlockerKind
    name: str
    check: str
    resource: str | None = None
    requested: int | None = None
    available: int | None = None
    message: str = ""
    # how ``available`` was reached, in people's units ("32 capability - 12 allocated - 18 reserved by 3 admitted
    # jobs"; ``engine.fairshare.queues.decompose``): printed after the available amount
    breakdown: str = ""

    def __str__(self) -> str:
        label = BLOCKER_WORDS[self.kind]
        head = f"{label} {self.name} {self.check}" if self.name else f"{label} {self.check}"
        if self.resource is not None and self.requested is not None and self.available is not None:
            text = (
                f"{head}: insufficient {resource_label(self.resource)}, requested {qty(self.requested, self.resource)}, "
                f"available {qty(self.available, self.resource)}{equals(self.breakdown)}"
            )
            return f"{text} ({self.message})" if self.message else text
        return f"{head}: {self.message}" if self.message else head

    def blocker(self) -> Blocker:
        return Blocker(
            kind=self.kind,
            name=self.name,
            resource=self.resource,
            requested=self.requested,
            available=self.available,
            limit=self.check,
        )


def refusal_from_verdict(verdict: Verdict, queue: str) -> GateRefusal | None:
    """The first reason of a fairshare ``Verdict`` as a ``GateRefusal`` (None when it allowed).

    A refusal naming another queue than ``queue`` comes from one of its ancestors (hierarchical capacity).
    """
    if verdict.allowed:
        return None
    ref: Refusal | None = verdict.reason
    if ref is None:
        return GateRefusal(BlockerKind.QUEUE, queue, "refused", message="refused without a reason")
    kind = BlockerKind.QUEUE if ref.node == queue else BlockerKind.ANCESTOR
    return GateRefusal(
        kind, ref.node, ref.check, ref.resource, ref.requested, ref.available, ref.message, ref.breakdown
    )


def suspended_status(job: JobState) -> PodGroupStatus:
    """The status of a suspended podgroup (``PodGroupInfo.suspended``): Pending, reason ``Suspended``, its requeue
    state kept as it was."""
    info = job.info
    pending = job.counts[S.PENDING]
    message = f"suspended: not admitted and none of its pods placed until it is resumed; {pending} pending"
    blocker = Blocker(BlockerKind.POLICY, job.key, limit="suspended")
    return PodGroupStatus(
        job.key, PodGroupPhase.PENDING, Reason.SUSPENDED, message, blocker, 0, info.requeues, info.backoff_until
    )


def _fit_text(refusal: GateRefusal, missing: int) -> str:
    """``1 task needs cpu 4, the largest idle node has 2`` for a node-fit failure; the refusal's text otherwise."""
    if refusal.kind == BlockerKind.CLUSTER and refusal.resource is not None and refusal.requested is not None:
        r = refusal.resource
        verb = "needs" if missing == 1 else "need"
        head = f"{plural(missing, 'task')} {verb} {r} {qty(refusal.requested, r)}"
        if refusal.message.startswith("no single node"):
            return f"{head}: {refusal.message}"
        return f"{head}, the largest idle node has {qty(refusal.available or 0, r)}"
    return str(refusal)


def describe_job(ssn: Session, job: JobState, phase: str) -> tuple[str, str, Blocker]:
    """Why a podgroup is not Running after the session: (reason, message with numbers, blocker)."""
    m = job.min_member
    ready = job.ready_num()
    waiting = job.waiting_num()
    counts = f"{ready} of minMember {m} pods placed"
    if job.queue not in ssn.snapshot.queues:
        no_queue = GateRefusal(BlockerKind.QUEUE, job.queue, "exists", message="the queue does not exist")
        return Reason.QUEUE_NOT_FOUND, f"{no_queue}; {counts}", no_queue.blocker()
    if phase == PodGroupPhase.COMPLETED:
        done = job.counts[S.SUCCEEDED] + job.counts[S.FAILED]
        text = f"all {done} scheduled pods finished (minMember {m})"
        if job.counts[S.PENDING]:
            # Volcano's rule: with minMember 0 and nothing scheduled, 0 >= 0 and all 0 finished
            text += f"; {plural(job.counts[S.PENDING], 'pod')} pending"
        return Reason.COMPLETED, text, _gang(job.key)
    skip = job.skip_refusal
    if phase == PodGroupPhase.PENDING:
        return describe_pending(ssn, job, counts)
    if skip is not None:
        if skip.kind == "gang":
            return Reason.NOT_ENOUGH_PODS, f"{skip}", skip.blocker()
        if skip.check == "deserved":
            return Reason.QUEUE_OVERUSED, f"{skip}; {counts}", skip.blocker()
        return Reason.UNSCHEDULABLE, f"{skip}; {counts}", skip.blocker()
    placed = job.placed_before_discard if job.placed_before_discard >= 0 else ready + waiting
    missing = max(1, m - placed)
    failed = job.allocate_refusal is not None or job.fit_failure is not None
    if failed and not (waiting and ready + waiting >= m):  # a gang pipelined by preempt or reclaim waits, not fails
        refusal = job.allocate_refusal if job.allocate_refusal is not None else job.fit_failure
        assert refusal is not None
        detail = str(refusal) if refusal is job.allocate_refusal else _fit_text(refusal, missing)
        prefix = Reason.UNKNOWN if phase == PodGroupPhase.UNKNOWN else Reason.NOT_ENOUGH_RESOURCES
        message = f"gang: {placed} of minMember {m} tasks could be placed; {detail}"
        if phase == PodGroupPhase.UNKNOWN:
            message = f"{plural(job.counts[S.RUNNING], 'pod')} running but the gang is not ready; " + message
        return prefix, message, refusal.blocker()
    if waiting:
        nodes = sorted({ssn.nodes.names[t.node] for t in job.tasks if t.status == S.PIPELINED and t.node >= 0})
        shown = ", ".join(nodes[:5]) + (", ..." if len(nodes) > 5 else "")
        return (
            Reason.PIPELINED,
            f"{ready} placed and {waiting} pipelined of minMember {m}: waiting for pods being evicted or released on "
            f"{plural(len(nodes), 'node')} ({shown})",
            Blocker(BlockerKind.CLUSTER, "nodes", limit="releasing"),
        )
    if phase == PodGroupPhase.UNKNOWN:
        return (
            Reason.UNKNOWN,
            f"{plural(job.counts[S.RUNNING], 'pod')} running but only {ready} of minMember {m} are ready",
            _gang(job.key),
        )
    pending = job.counts[S.PENDING]
    return (
        Reason.WAITING,
        f"{counts}, {pending} pending; nothing was tried for it in this session",
        _gang(job.key),
    )


def describe_pending(ssn: Session, job: JobState, counts: str) -> tuple[str, str, Blocker]:
    """Why a podgroup is still Pending: requeued (its reservation could no longer be met, or backing off), refused
    by enqueue, or not considered at all."""
    if job.rollback_refusal is not None:
        text = f"back to Pending, its reservation can no longer be met: {job.rollback_refusal}"
        if job.enqueue_refusal is not None and job.enqueue_refusal != job.rollback_refusal:
            text += f"; not admitted again: {job.enqueue_refusal}"
        return Reason.REQUEUED, text, job.rollback_refusal.blocker()
    if job.backing_off and job.enqueue_refusal is not None:
        # keep the message of the requeue (why it gave its reservation back), which names the backoff's end
        last = next((c for c in reversed(job.info.conditions) if c.reason == Reason.REQUEUED and c.message), None)
        text = last.message if last is not None else f"not admitted (Pending -> Inqueue): {job.enqueue_refusal}"
        return Reason.REQUEUED, text, job.enqueue_refusal.blocker()
    if job.enqueue_refusal is not None:
        ref = job.enqueue_refusal
        reason = Reason.QUEUE_CLOSED if ref.check == "state" else Reason.UNSCHEDULABLE
        if ref.kind == BlockerKind.GANG:  # a Kueue pod group short of its pods, or one whose templates are refused
            reason = Reason.NOT_ENOUGH_PODS if ref.check == "minMember" else Reason.MISCONFIGURED
        return reason, f"not admitted (Pending -> Inqueue): {ref}", ref.blocker()
    return (
        Reason.PENDING,
        f"not considered by this session's actions ({', '.join(ssn.policy.actions)}); {counts}",
        Blocker(BlockerKind.POLICY, job.key, limit="enqueue"),
    )


def requeued_message(unplaced: int, until: float, message: str) -> str:
    """The message of a podgroup that gives its reservation back (Fairway's requeue rule, ``actions.enqueue``)."""
    return (
        f"admitted, but not placed in {plural(unplaced, 'session')}, so it gives its reservation back "
        f"and is not admitted again before {_clock(until)}: {message}"
    )


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(moment))


def _gang(key: str) -> Blocker:
    return Blocker(BlockerKind.GANG, key, limit="minMember")
