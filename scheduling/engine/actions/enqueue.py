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
"""

from __future__ import annotations

from scheduling.engine.actions.common import KeyedHeap
from scheduling.engine.framework import GateRefusal, qty
from scheduling.engine.plugins.proportion import sorted_resources
from scheduling.engine.session import JobState, Session, add_into
from scheduling.engine.snapshot import PodGroupPhase, TaskStatus

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
        for r in sorted_resources(job.min_resources):
            want = job.min_resources[r]
            if want <= 0 or r not in hard:
                continue
            held = used.get(r, 0) + admitted.get(r, 0)
            if held + want > hard[r]:
                return GateRefusal(
                    "namespace",
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


def enqueue(ssn: Session) -> None:
    """Run the enqueue action (see the module docstring)."""
    fw = ssn.framework
    _rollback(ssn)
    queues = ssn.snapshot.queues
    pending: dict[str, KeyedHeap[JobState]] = {}
    with_jobs: set[str] = set()
    for key in sorted(ssn.jobs):
        job = ssn.jobs[key]
        if job.queue not in queues:
            job.skip_refusal = GateRefusal("queue", job.queue, "exists", message="the queue does not exist")
            continue
        with_jobs.add(job.queue)
        if job.is_pending():
            pending.setdefault(job.queue, KeyedHeap(fw.job_key)).push(job)
    order: KeyedHeap[str] = KeyedHeap(fw.queue_key, sorted(with_jobs))
    ns_quotas = NamespaceQuotas(ssn)
    while order:
        ssn.checkpoint()
        queue = order.pop()
        jobs = pending.get(queue)
        if not jobs:
            continue
        job = jobs.pop()
        admitted = job.min_resources is None
        if not admitted:
            ok, refusal = fw.job_enqueueable(job)
            if ok:
                refusal = ns_quotas.refusal(job)
                ok = refusal is None
            admitted = ok
            if not ok:
                job.enqueue_refusal = refusal or GateRefusal("policy", "", "enqueue", message="not admitted")
        if admitted:
            fw.job_enqueued(job)
            ns_quotas.admit(job)
            job.phase = PodGroupPhase.INQUEUE
            job.enqueued_now = True
            job.enqueue_refusal = None
        order.push(queue)
