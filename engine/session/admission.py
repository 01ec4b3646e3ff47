"""The session's side of a snapshot's admission levers (``engine.admission``: Kueue's ``namespaceSelector``,
``queueingStrategy: StrictFIFO``, ``stopPolicy: HoldAndDrain`` and Admission Fair Sharing). ``actions.enqueue``
asks the first three of its turn and orders a fair-sharing queue's jobs with ``UsageOrder``; ``Session.close``
drains. With ``AdmissionLevers()`` (the default) none of this runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.objects import PodGroupPhase, TaskStatus
from engine.resources import milli_scale
from engine.session.decisions import Blocker, Eviction, PodGroupStatus
from engine.session.reasons import GateRefusal
from engine.vocabulary import TEMPLATE_REFUSALS, BlockerKind

if TYPE_CHECKING:
    from engine.session.session import JobState, Session

__all__ = [
    "DRAINED",
    "UsageOrder",
    "cycle_refusal",
    "drain",
    "namespace_refusal",
    "pod_group_refusals",
    "strict_fifo_refusal",
]

DRAINED = "ClusterQueueStopped"  # Kueue's eviction reason for a ClusterQueue stopped with HoldAndDrain
_HOLDING = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.ALLOCATED, TaskStatus.PIPELINED})


def _queue_name(ssn: Session, queue: str) -> str:
    """The queue as people know it (a Kueue ClusterQueue's own name where its identity differs)."""
    kueue = ssn.snapshot.kueue_names.get(queue)
    return kueue.name if kueue is not None else queue


def _kueue_name(ssn: Session, queue: str) -> str:
    """`` (ClusterQueue <name>)`` where the queue's Kueue name differs from its identity, else nothing."""
    kueue = ssn.snapshot.kueue_names.get(queue)
    return f" ({kueue.kind} {kueue.name})" if kueue is not None else ""


def namespace_refusal(ssn: Session, job: JobState) -> GateRefusal | None:
    """The refusal of a job whose namespace does not match its queue's namespace selector, else None."""
    levers = ssn.snapshot.admission
    selector = levers.selector_mismatch(job.queue, job.namespace)
    if selector is None:
        return None
    labels = levers.labels_of(job.namespace)
    shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return GateRefusal(
        BlockerKind.QUEUE,
        job.queue,
        "namespaceSelector",
        message=(
            f"namespace {job.namespace} ({shown}) does not match {selector}{_kueue_name(ssn, job.queue)}: jobs of "
            "this namespace are never admitted there"
        ),
    )


def cycle_refusal(ssn: Session, job: JobState) -> GateRefusal | None:
    """The refusal of a job Kueue's scheduling cycle leaves waiting this session (``AdmissionLevers.cycle_waits``, or
    with Fair Sharing and one flavor per resource the ``kueuefair`` plugin's ``cycle_waits``), else None."""
    why = ssn.snapshot.admission.cycle_waits.get(job.key)
    if why is None:
        plugin = ssn.framework.plugin("kueuefair")  # the cycle without flavors (``engine.fairshare.kueuecycle``)
        why = getattr(plugin, "cycle_waits", {}).get(job.key) if plugin is not None else None
    if why is None:
        return None
    return GateRefusal(BlockerKind.QUEUE, job.queue, "cycle", message=why)


def pod_group_refusals(ssn: Session) -> dict[str, GateRefusal]:
    """The refusals of Kueue's pod groups that wait for their pods (``AdmissionLevers.pod_group_waits``), by podgroup
    key: Kueue makes no workload of such a group, so it is never admitted and blocks nobody. A workload whose pod
    templates are refused (``TEMPLATE_REFUSALS``) waits for its template, not for its pods' count."""
    return {
        key: GateRefusal(
            BlockerKind.GANG, key, "template" if why.startswith(TEMPLATE_REFUSALS) else "minMember", message=why
        )
        for key, why in ssn.snapshot.admission.pod_group_waits
    }


def strict_fifo_refusal(ssn: Session, queue: str, head: JobState) -> GateRefusal:
    """Why a job waits behind ``head``, the first job of the StrictFIFO ``queue`` that could not be admitted."""
    return GateRefusal(
        BlockerKind.QUEUE,
        queue,
        "StrictFIFO",
        message=(
            f"its first waiting job, {head.key}, cannot be admitted yet{_kueue_name(ssn, queue)}: in strict FIFO "
            "order later jobs wait behind it even when they fit"
        ),
    )


class UsageOrder:
    """Admission Fair Sharing's order of one pass: a job of a fair-sharing queue is taken by its LocalQueue's usage
    (lowest first; a job without a LocalQueue counts as one of usage 0 and weight 1), then by the job order (Kueue's
    ``queueOrderingFunc``: the usage comes before the priority). The usage is Kueue's ``CalculateUsage``: each
    resource's consumed amount plus the entry penalties of this pass, in the unit Kueue's quantities have (cores,
    bytes, whole GPUs), times its ``resourceWeights`` entry (default 1), summed and divided by the LocalQueue's weight
    (0: infinite, last). Floats, as Kueue computes it."""

    def __init__(self, ssn: Session, job_key: Callable[[JobState], tuple[Any, ...]]) -> None:
        levers = ssn.snapshot.admission
        assert levers.fair_sharing is not None
        self.fair = levers.fair_sharing
        self.levers = levers
        self.job_key = job_key
        self.penalty: dict[tuple[str, str], dict[str, float]] = {}

    def usage(self, job: JobState) -> float:
        lq = self.levers.podgroup_local_queue.get(job.key)
        if lq is None:
            return 0.0
        entry = self.levers.local_queues.get(lq)
        weight = float(entry.weight) if entry is not None else 1.0
        consumed = dict(entry.consumed) if entry is not None else {}
        amounts: dict[str, float] = {r: v / milli_scale(r) for r, v in consumed.items()}
        for r, v in self.penalty.get(lq, {}).items():
            amounts[r] = amounts.get(r, 0.0) + v
        total = sum(float(self.fair.resource_weights.get(r, 1)) * amounts[r] for r in sorted(amounts))
        if weight <= 0:
            return float("inf")
        return total / weight

    def key(self, job: JobState) -> tuple[Any, ...]:
        return (self.usage(job), *self.job_key(job))

    def admitted(self, job: JobState) -> None:
        """Add ``job``'s entry penalty (``alpha x`` its minimum) to its LocalQueue's usage at once."""
        lq = self.levers.podgroup_local_queue.get(job.key)
        if lq is None or job.min_resources is None:
            return
        alpha = self.fair.alpha
        into = self.penalty.setdefault(lq, {})
        for r, v in job.min_resources.items():
            if v > 0 and r != "pods":
                into[r] = into.get(r, 0.0) + alpha * v / milli_scale(r)


def drain(ssn: Session, job: JobState) -> PodGroupStatus | None:
    """A job of a stopped Kueue queue at the end of the session. ``HoldAndDrain``: when it holds anything (pods on
    nodes, an admission), its pods that hold nodes are evicted and it goes back to Pending. ``Hold``: an admitted job
    that runs nothing yet gives its reservation back (Pending); one that runs is kept. None when nothing changes."""
    queue = job.queue
    levers = ssn.snapshot.admission
    draining = queue in levers.draining
    if not draining and queue not in levers.held:
        return None
    holding = [t for t in job.tasks if t.status in _HOLDING and t.node >= 0]
    if job.phase != PodGroupPhase.INQUEUE and not (draining and holding):
        return None
    if not draining and holding:
        return None  # Hold: admitted workloads run to completion
    name = _queue_name(ssn, queue)
    if draining:
        why = (
            f"{name} is stopped with stopPolicy HoldAndDrain: its admitted jobs are evicted and wait, Pending, until "
            "it is started again"
        )
    else:
        why = (
            f"{name} is stopped with stopPolicy Hold: the reservation of a job that runs nothing yet is cancelled, and "
            "it waits, Pending, until the queue is started again"
        )
    blocker = Blocker(BlockerKind.QUEUE, queue, limit="stopPolicy")
    for t in holding:
        if t.status in (TaskStatus.ALLOCATED, TaskStatus.PIPELINED):
            continue  # placed in this session only: nothing to evict (the session places nothing in a closed queue)
        ssn.evict_task(t)
        ssn.record_eviction(Eviction(t.uid, "drain", DRAINED, why, None, blocker))
    return PodGroupStatus(job.key, PodGroupPhase.PENDING, DRAINED, why, blocker, 0, job.info.requeues, None)
