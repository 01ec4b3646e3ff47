"""``enqueue``: Pending podgroups become Inqueue when their ``minResources`` fit (Volcano ``actions/enqueue``;
seed 003, delayed pod creation).

Order: queues by the queue order, one podgroup per turn (the queue goes back after each with its order key, which
admitting does not change, so the first queue keeps its turn until its podgroups are done), and within a queue
Pending podgroups by the job order, whose fallback is FCFS (creation time). A podgroup
without ``minResources`` is admitted at once (as in Volcano, no plugin is asked). One with ``minResources`` is
admitted when the plugins' votes allow it (the queue's enqueueable gate: proportion / capacity
realCapability; the cluster's idle resources with the overcommit factor: overcommit) and the namespace's hard
quota has room: ``used + already admitted minResources + minResources <= hard`` on the resources both name
(Volcano's ``resourcequota`` plugin; Kubernetes' ResourceQuota admission would refuse the pods anyway, so
Fairway always applies it). ``used`` is what the namespace's existing pods request (those of podgroups that are
not Pending; the others are not created yet). Admitted podgroups reserve their ``minResources`` (``JobEnqueued``)
so later ones in the same pass see it.

Seed 003's state table also has **Inqueue -> Pending** "when there's not enough resources anymore"; Volcano's
code has no such rollback (an Inqueue podgroup stays Inqueue until it runs). Fairway does it first, before
admitting anything: an Inqueue podgroup with ``minResources`` and no pod placed yet goes back to Pending when the
pool its reservation sits in is now over its limit on a resource it reserves (its queue, or an ancestor:
``allocated + inqueue - elastic > realCapability``; the cluster: admitted reservations above the over-committed
idle), least important podgroups first (the reverse job order), until every pool fits again. That happens when
nodes leave, a capability shrinks or guarantees grow.

**Admission that cannot deadlock** (Fairway; Volcano keeps an admitted podgroup's reservation until it runs). A
reservation that can never be placed starves everyone behind it, so before admitting, enqueue also asks

* every plugin's admission gate (``job_admissible``), whatever the votes said: the elastic quota groups of the
  podgroup's pods must have room for its minimum under their runtime, and its minimum must not exceed their
  ``max``;
* whether any node could hold each of its pending pods at all (allocatable, not idle, on a ready node that passes
  the node predicates): a pod asking 4 GPUs on a cluster of 3-GPU nodes never runs, however long it waits.

**Per-user limits** (``engine.session.userlimits``, YuniKorn's ``limits``): a podgroup whose admission would take its
user, or one of its user's groups, over the running jobs or the resources (its ``minResources``) a limit of its queue,
its quota group or one of their ancestors allows stays Pending with that limit's sentence; this applies to every
podgroup, one without ``minResources`` too, and only where some tree node sets a limit.

A **suspended** podgroup (``PodGroupInfo.suspended``, a person's job action) is never admitted: it stays Pending,
reserving nothing, until it is resumed. Nor is a Kueue pod group short of its pods (``AdmissionLevers.pod_group_waits``:
Kueue makes no workload of it until all its pods exist), which blocks nobody and says so (``NotEnoughPods``).

**Kueue's admission levers** (``Snapshot.admission``, off unless the input asks; ``engine.session.admission``): a
podgroup whose namespace does not match its queue's namespace selector is never admitted and blocks nobody; in a
StrictFIFO queue the first podgroup refused blocks the queue's later ones for the rest of the pass; in a queue with
Admission Fair Sharing the podgroups are taken by their LocalQueue's usage first, and each admission adds its entry
penalty to that usage and reorders the queue at once.

Both apply to podgroups with ``minResources``, the ones that reserve; one without is admitted at once, as in
Volcano (it holds nothing while it waits).

And an admitted podgroup that still could not be placed after ``requeueAfterSessions`` sessions (the
``enqueue`` action's argument, default 3; 0 keeps Volcano's behaviour) goes back to Pending with its reason
(``Session.close``) and is not admitted again before a backoff (``requeueBackoff``, 4 s, doubled per requeue up
to ``requeueBackoffMax``, 60 s), so that its reservation frees the way for podgroups that fit meanwhile.

**Identical podgroups are refused once** (speed). The gates read of a podgroup only its queue, namespace, gang size,
minimum and its pods' shapes (status, quota group, request, placement constraints), and they answer the same until
something is admitted (which is the only thing that moves what they read during the pass). So a podgroup whose
``shape`` equals one refused since the last admission gets that refusal without asking again: a cluster whose
thousands of waiting podgroups are copies of a few jobs asks the gates a few times per admission, not once per
podgroup. ``tests/unit/test_enqueue_memo.py`` holds the decisions equal to asking every time.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from engine.amounts import raw
from engine.objects import OPEN, NodeAffinity, PodGroupPhase, TaskStatus
from engine.resources import sorted_resources
from engine.session.actions.common import KeyedHeap
from engine.session.admission import (
    UsageOrder,
    cycle_refusal,
    namespace_refusal,
    pod_group_refusals,
    strict_fifo_refusal,
)
from engine.session.affinity import predicates_named, unmatched_clause
from engine.session.reasons import GateRefusal, qty
from engine.session.session import JobState, Session, add_into
from engine.vocabulary import BlockerKind
from engine.wording import plural

_EXISTING = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})


def _rollback(ssn: Session) -> None:
    fw = ssn.framework
    candidates = [
        j
        for j in ssn.jobs.values()
        if j.phase == PodGroupPhase.INQUEUE
        and j.min_resources is not None
        and j.ready_num() == 0
        and j.waiting_num() == 0
        and j.queue in ssn.snapshot.queues
    ]
    candidates.sort(key=fw.job_key, reverse=True)
    for job in candidates:
        refusal = fw.reservation_excess(job)
        if refusal is None:
            continue
        job.phase = PodGroupPhase.PENDING
        job.rollback_refusal = refusal
        fw.release_reservation(job)


class NamespaceQuotas:
    """The namespaces' ResourceQuota hard limits against what their existing pods use plus this pass's
    admissions."""

    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.used: dict[str, dict[str, int]] | None = None
        self.admitted: dict[str, dict[str, int]] = {}

    def _used(self) -> dict[str, dict[str, int]]:
        if self.used is None:
            used: dict[str, dict[str, int]] = {}
            for job in self.ssn.jobs.values():
                if job.is_pending():
                    continue
                for t in job.tasks:
                    if t.status not in _EXISTING:
                        add_into(used.setdefault(t.namespace, {}), t.req)
            self.used = used
        return self.used

    def refusal(self, job: JobState) -> GateRefusal | None:
        hard = self.ssn.snapshot.namespace(job.namespace).hard
        if not hard or job.min_resources is None:
            return None
        used = self._used().get(job.namespace, {})
        admitted = self.admitted.get(job.namespace, {})
        limits = raw(hard)
        if not any(  # the common answer first, without sorting
            w > 0 and r != "pods" and r in limits and used.get(r, 0) + admitted.get(r, 0) + w > limits[r]
            for r, w in raw(job.min_resources).items()
        ):
            return None
        for r in sorted_resources(job.min_resources):
            want = job.min_resources[r]
            if want <= 0 or r not in hard:
                continue
            held = used.get(r, 0) + admitted.get(r, 0)
            if held + want > hard[r]:
                return GateRefusal(
                    BlockerKind.NAMESPACE,
                    job.namespace,
                    "hard",
                    r,
                    want,
                    max(0, hard[r] - held),
                    message=f"ResourceQuota hard {qty(hard[r], r)}, used {qty(held, r)}",
                )
        return None

    def admit(self, job: JobState) -> None:
        if job.min_resources is not None:
            add_into(self.admitted.setdefault(job.namespace, {}), job.min_resources)


class NodeFit:
    """Could any node ever hold a pod of this shape? (allocatable of ready nodes passing the predicates)"""

    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self._seen: dict[tuple[Any, ...], GateRefusal | None] = {}

    def refusal(self, job: JobState) -> GateRefusal | None:
        for task in job.tasks:
            if task.status != TaskStatus.PENDING or task.best_effort:
                continue
            key = (task.sig, task.vkey)
            if key not in self._seen:
                self._seen[key] = self._check(task.sig, task.vec, task.info.node_affinity)
            refusal = self._seen[key]
            if refusal is not None:
                return refusal
        return None

    def _check(self, sig: tuple[Any, ...], vec: Any, affinity: NodeAffinity) -> GateRefusal | None:
        table = self.ssn.nodes
        usable = self.ssn.placement.static_mask(sig)
        cols = np.flatnonzero(vec > 0)
        if cols.size == 0:
            return None
        alloc = table.alloc[usable][:, cols]
        need = vec[cols]
        if alloc.shape[0] and bool((alloc >= need).all(axis=1).any()):
            return None
        count = int(usable.sum())
        if count == 0:
            return GateRefusal(
                BlockerKind.CLUSTER,
                "nodes",
                "predicates",
                message=f"no ready node passes the predicates ({predicates_named(affinity)}) of"
                f" {plural(len(table), 'node')}{unmatched_clause(table, affinity)}",
            )
        largest = alloc.max(axis=0)
        short = [j for j in range(cols.size) if largest[j] < need[j]]
        j = short[0] if short else 0
        name = table.resources[int(cols[j])]
        if short:
            text = f"no node can ever hold one of its pods: the largest of {count} usable nodes offers {qty(int(largest[j]), name)}"
        else:
            text = f"no single node of {count} usable ones offers all of one pod's request at once"
        return GateRefusal(
            BlockerKind.CLUSTER, "nodes", "allocatable", name, int(need[j]), int(largest[j]), message=text
        )


def backoff_refusal(job: JobState, now: float) -> GateRefusal | None:
    """A podgroup sent back to Pending waits out its backoff before it may be admitted again."""
    until = job.info.backoff_until
    if until is None or until <= now:
        return None
    return GateRefusal(
        BlockerKind.POLICY,
        job.key,
        "backoff",
        message=f"requeued {job.info.requeues}x, not admitted again before {_clock(until)}",
    )


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(moment))


def shape(job: JobState) -> tuple[Any, ...]:
    """What the admission gates read of a podgroup (module docstring: identical podgroups are refused once)."""
    return (
        job.queue,
        job.namespace,
        job.min_member,
        None if job.min_resources is None else tuple(job.min_resources.items()),
        tuple((t.status, t.quota_group, t.best_effort, tuple(t.req.items()), t.sig) for t in job.tasks),
    )


def _pending_by_queue(ssn: Session, usage: UsageOrder | None) -> tuple[dict[str, KeyedHeap[JobState]], set[str]]:
    """Each queue's Pending jobs in the order they are tried, and the queues that have jobs at all."""
    fw, queues, levers = ssn.framework, ssn.snapshot.queues, ssn.snapshot.admission
    pending: dict[str, KeyedHeap[JobState]] = {}
    with_jobs = {queue for queue in ssn.jobs_by_queue if queue in queues}
    short = pod_group_refusals(ssn) if levers.pod_group_waits else {}
    for key in ssn.live_keys():  # a quiet podgroup is Running or Completed in an existing queue
        job = ssn.jobs[key]
        if job.queue not in queues:
            job.skip_refusal = GateRefusal(BlockerKind.QUEUE, job.queue, "exists", message="the queue does not exist")
            continue
        if job.is_pending() and not job.info.suspended:  # a suspended podgroup waits to be resumed, not admitted
            if key in short:  # a Kueue pod group short of pods: no workload yet, so out of the heap
                job.enqueue_refusal = short[key]
                continue
            if levers and (mismatch := namespace_refusal(ssn, job)) is not None:
                job.enqueue_refusal = mismatch  # never admitted there; blocks nobody (Kueue keeps it out of the heap)
                continue
            order_key = usage.key if usage is not None and levers.usage_ordered(job.queue) else fw.job_key
            pending.setdefault(job.queue, KeyedHeap(order_key)).push(job)
    return pending, with_jobs


def enqueue(ssn: Session) -> None:
    """Run the enqueue action (see the module docstring)."""
    fw = ssn.framework
    _rollback(ssn)
    queues = ssn.snapshot.queues
    levers = ssn.snapshot.admission  # Kueue's admission levers (``engine.session.admission``); off by default
    usage_ordered = levers.usage_ordered
    usage = UsageOrder(ssn, fw.job_key) if levers.fair_sharing_queues and levers.fair_sharing else None
    pending, with_jobs = _pending_by_queue(ssn, usage)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(with_jobs))
    ns_quotas = NamespaceQuotas(ssn)
    fit = NodeFit(ssn)
    refused: dict[tuple[Any, ...], GateRefusal] = {}  # shape -> its refusal, since the last admission
    while order:
        ssn.checkpoint()
        queue = order.pop()
        jobs = pending.get(queue)
        if not jobs:
            continue
        job = jobs.pop()
        waiting = backoff_refusal(job, ssn.now)
        held = waiting or cycle_refusal(ssn, job) or fw.user_limit_admission(job)  # per-user limits: every podgroup
        if held is not None:
            job.backing_off = waiting is not None
            job.enqueue_refusal = held
            order.push(queue)
            continue
        admitted = job.min_resources is None
        if not admitted:
            same = shape(job)
            known = refused.get(same)
            if known is not None:
                job.enqueue_refusal = known
                if queue in levers.strict_fifo and queues[queue].state == OPEN:
                    _block_behind(ssn, queue, job, jobs)
                    continue
                order.push(queue)
                continue
            ok, refusal = fw.job_enqueueable(job)
            if ok:
                refusal = ns_quotas.refusal(job) or fw.job_admissible(job) or fit.refusal(job)
                ok = refusal is None
            admitted = ok
            if not ok:
                job.enqueue_refusal = refused[same] = refusal or GateRefusal(
                    BlockerKind.POLICY, "", "enqueue", message="not admitted"
                )
                if queue in levers.strict_fifo and queues[queue].state == OPEN:  # the head blocks the later jobs
                    _block_behind(ssn, queue, job, jobs)
                    continue
        if admitted:
            refused.clear()
            _admit(ssn, job, ns_quotas)
            if usage is not None and usage_ordered(queue):  # its entry penalty reorders its queue at once
                usage.admitted(job)
                pending[queue] = KeyedHeap(usage.key, jobs.items())
        order.push(queue)


def _admit(ssn: Session, job: JobState, ns_quotas: NamespaceQuotas) -> None:
    ssn.framework.job_enqueued(job)
    ns_quotas.admit(job)
    job.phase = PodGroupPhase.INQUEUE
    job.enqueued_now = True
    job.enqueue_refusal = None


def _block_behind(ssn: Session, queue: str, head: JobState, jobs: KeyedHeap[JobState]) -> None:
    """StrictFIFO: every later Pending job of ``queue`` waits behind ``head`` this pass (one in its backoff says
    so instead: it would not have been tried)."""
    refusal = strict_fifo_refusal(ssn, queue, head)
    while jobs:
        job = jobs.pop()
        waiting = backoff_refusal(job, ssn.now)
        job.backing_off = waiting is not None
        job.enqueue_refusal = waiting or refusal
