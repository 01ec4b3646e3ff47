"""``kueuefair``: Kueue's Fair Sharing and ClusterQueue preemption policies (issue 28 items 4 and 6; Kueue at commit
ff69552: ``pkg/scheduler/fair_sharing_iterator.go``, ``pkg/scheduler/preemption/preemption.go`` and
``preemption/fairsharing/``).

The plugin keeps Kueue's tree (``engine.fairshare.drs.FairTree``: every queue of the snapshot but ``root``; a queue
with children is a Cohort, its own nominal quota its deserved less its children's; a leaf is a ClusterQueue, its usage
its podgroups' allocated, moved by ``on_allocate`` / ``on_deallocate``; ``engine.fairshare.drs.kueue_tree``), and
answers:

* **Queue order** (with ``enable``): Kueue's tournament as a sort key. The queue's head (its job with pending pods
  first by higher priority, then older) is counted as admitted; along the queue's path from the top of its tree, per
  level, a node that would not borrow on what the head asks comes before one that would
  (``FairSharingPrioritizeNonBorrowing``), then the lower dominant resource share, then the name; two queues compare at
  the first level where their paths part, i.e. between the two children of their lowest common Cohort. Kueue breaks a
  tie by the workloads' priority and age; here the name does. The key is not the tournament itself (a Cohort's share
  with the head is compared before its children's): which heads Kueue's cycle admits is decided at the session's open
  by the tournament (``engine.fairshare.tournament``), the others waiting (``cycle_waits``), so the key only orders
  what the cycle let through.
* **Kueue's scheduling cycle** (with ``enable``, where no resource has several flavors; with several, the flavor
  assigner runs it before the session): ``cycle_waits``, the jobs the cycle leaves waiting this session
  (``engine.fairshare.kueuecycle``: a head that no longer fits once the heads the tournament took before it took
  theirs, and the jobs behind it), refused by the enqueue action.
* **Victim queue order** (with ``enable``): the reverse, shares only: victims come first from the subtree with the
  highest share, level by level (Kueue's ``TargetClusterQueueOrdering``).
* **Reclaimable** (reclaim, across ClusterQueues): the reclaimer's ClusterQueue must be in a Cohort and its
  ``reclaimWithinCohort`` not Never; candidates are the pods of other ClusterQueues of the same tree that borrow on a
  resource the pod asks for, whose priority the policy allows (LowerPriority: strictly lower; Any). Each job among the
  reclaimees is one workload. Without fair sharing, Kueue's classical preemption chooses among them
  (``engine.fairshare.kueue_preemption.classical_targets``: a hierarchical advantage, i.e. the pod fits the quota of
  its ClusterQueue or of a Cohort on its path, lets it take any such candidate; otherwise one that leaves it borrowing
  needs ``borrowWithinCohort: LowerPriority`` and a lower priority, at most ``maxPriorityThreshold``; the smallest set
  that makes the pod fit, in Kueue's order, or none). With fair sharing, Kueue's fair preemption chooses
  (``engine.fairshare.kueue_preemption.fair_targets``: the strategies in order, the preemptor within its nominal
  quota taking any candidate; nothing when no set makes the pod fit). Either way a ClusterQueue in a Cohort whose
  ``withinClusterQueue`` and ``reclaimWithinCohort`` both allow some takes its victims in one set from its own
  workloads and the Cohort's (``reclaims_within_queue``: the reclaim action offers its own pods too, the full policy
  goes to ``classical_targets`` or ``find_candidates``, and the reclaim gate asks only that the pod fit the potential
  available, as its own usage may be freed), as Kueue does: e.g. TestPreemption "preempt from all ClusterQueues in
  cohort" takes one workload of each, TestFairPreemptions "can preempt a combination of same CQ and highest user"
  its own low-priority one and one of the ClusterQueue with the highest share. The set is evicted whole
  (``victims_are_a_set``).
* **Preemptable** (preempt, within a ClusterQueue): ``withinClusterQueue`` Never (none), LowerPriority (a strictly
  lower priority) or LowerOrNewerEqualPriority (also an equal priority created later); only Kueue's minimal set among
  those (``classical_targets``, or with fair sharing ``fair_targets``, on the ClusterQueue's workloads alone: taken
  lowest first, then every one the pod still fits without given back, the later taken first), none when no set makes
  the pod fit the ClusterQueue's quota; pods of the preemptor's own job are left to the other plugins.

* **Job enqueueable**: Kueue admits a workload that fits once others are preempted, so the plugin permits (the later
  tiers' quota votes are not asked) a job whose policies give it candidates: lower-priority running jobs of its own
  ClusterQueue, or (``reclaimWithinCohort`` not Never, and a hierarchical advantage, or fair sharing on, or
  ``borrowWithinCohort: LowerPriority``) another ClusterQueue of its tree that borrows on what it asks; otherwise it
  abstains.
* **Preemptive** (the reclaim gate): the ClusterQueue's usage with the pod within its potential available (its local
  quota and what its Cohorts could lend it, within its borrowing limit).
* **Victim bounds**: the jobs the hooks may choose (same ClusterQueue or a borrowing one of the tree, a priority the
  policy allows), so the actions skip the nodes without any.

Kueue's defaults are every policy Never: with the plugin on, a ClusterQueue that sets none evicts nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction

from engine.amounts import raw
from engine.fairshare.drs import FairTree, FlavorResource, Share, flavor_resource, kueue_tree
from engine.fairshare.kueue_preemption import (
    Candidate,
    classical_targets,
    fair_targets,
    find_candidates,
    hierarchical_advantage,
)
from engine.fairshare.kueuecycle import fair_cycle_waits
from engine.objects import KueuePreemption, TaskStatus
from engine.policy.policy import PluginOption
from engine.session.framework import ABSTAIN, ONE_CLASS, PERMIT, Plugin, VictimTest
from engine.session.plugins.kueuefair.arguments import KUEUEFAIR
from engine.session.reasons import GateRefusal
from engine.session.registry import register
from engine.session.session import JobState, Session, TaskState
from engine.vocabulary import BlockerKind

_NEVER = KueuePreemption()


def _nobody(task: TaskState) -> bool:
    return False


def _amounts(request: Mapping[str, int], quota: Mapping[FlavorResource, int]) -> dict[FlavorResource, int]:
    """A request as flavor-resources, only those the node has quota for (Kueue counts nothing else)."""
    out = {}
    for r, v in request.items():
        fr = flavor_resource(r)
        if v and fr in quota:
            out[fr] = v
    return out


def _allowed(policy: str, victim: JobState, preemptor: JobState) -> bool:
    """Kueue's ``SatisfiesPreemptionPolicy`` between two workloads."""
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return victim.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return victim.priority < preemptor.priority or (
            victim.priority == preemptor.priority and victim.creation > preemptor.creation
        )
    return False


@register
class KueueFairPlugin(Plugin):
    name = "kueuefair"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        self.args = session.policy.arguments_of(KUEUEFAIR)
        snap = session.snapshot
        self.policies: Mapping[str, KueuePreemption] = snap.kueue_preemption
        try:
            self.tree = kueue_tree(snap)
        except ValueError as exc:  # a cycle: the tree rules refuse it before a session; never a crash here
            session.warnings.append(f"kueuefair: {exc}; fair sharing and the preemption policies are off")
            self.tree = FairTree([])
        self.jobs_of: dict[str, list[JobState]] = {}
        self._borrowers: dict[tuple[str, frozenset[FlavorResource]], tuple[int, frozenset[str]]] = {}
        self._victim_keys: dict[str, tuple[tuple[int, Fraction], ...]] = {}
        self._victim_keys_version = -1
        self._totals: dict[str, dict[str, int]] = {}  # a job's whole request, by job key (``_beyond_nominal``)
        for job in session.jobs.values():
            self._move(job.queue, job.allocated, 1)
            self.jobs_of.setdefault(job.queue, []).append(job)
        # Kueue's scheduling cycle with Fair Sharing where no resource has several flavors (with several, the flavor
        # assigner runs it before the session: ``AdmissionLevers.cycle_waits``)
        flavors = snap.kueue_flavors
        cycle = self.args.enable and not (flavors is not None and flavors.groups) and bool(self.tree.nodes)
        self.cycle_waits: Mapping[str, str] = fair_cycle_waits(snap) if cycle else {}

    # -- usage ------------------------------------------------------------------------------------------------
    def _move(self, queue: str, request: Mapping[str, int], sign: int) -> None:
        node = self.tree.nodes.get(queue)
        if node is None or node.cohort:
            return
        amounts = _amounts(request, self.tree.subtree[queue])
        if amounts:
            self.tree.add_usage(queue, amounts, sign)

    def on_allocate(self, task: TaskState) -> None:
        if task.pg is not None:
            self._move(task.pg.queue, task.req, 1)

    def on_deallocate(self, task: TaskState) -> None:
        if task.pg is not None:
            self._move(task.pg.queue, task.req, -1)

    def shares(self) -> dict[str, Share]:
        """Every Cohort's and ClusterQueue's dominant resource share now, by queue."""
        return self.tree.shares()

    # -- order ------------------------------------------------------------------------------------------------
    def _head_request(self, queue: str) -> dict[FlavorResource, int]:
        """The request of the queue's head: its job with pending pods first by Kueue's queue order (higher priority,
        then older), its pending pods' requests."""
        best: JobState | None = None
        for job in self.jobs_of.get(queue, ()):
            if job.counts[TaskStatus.PENDING] and (
                best is None or (-job.priority, job.creation, job.key) < (-best.priority, best.creation, best.key)
            ):
                best = job
        if best is None:
            return {}
        total: dict[str, int] = {}
        for t in best.tasks:
            if t.status == TaskStatus.PENDING:
                for r, v in t.req.items():
                    total[r] = total.get(r, 0) + v
        return _amounts(total, self.tree.subtree[queue])

    def _path_key(self, queue: str, head: bool = True) -> tuple[tuple[bool, tuple[int, Fraction], str], ...]:
        """Kueue's tournament as a key: per level below the top, down to the queue, whether the node would borrow on
        what the head asks, its share with the head admitted, and its name."""
        tree = self.tree
        node = tree.nodes.get(queue)
        if node is None or node.cohort:
            return ()
        request = self._head_request(queue) if head else {}
        path = [queue, *tree.path_to_root(queue)][::-1][1:]
        if not request:
            return tuple((False, tree.share(name).key(), name) for name in path)
        with tree.trying(queue, request):
            out = []
            for name in path:
                share = tree.share(name)
                out.append((any(fr in request for fr in share.borrowed_on), share.key(), name))
            return tuple(out)

    def _victim_key(self, queue: str) -> tuple[tuple[int, Fraction], ...]:
        """The shares along the queue's path, as they stand (kept while the usage stays)."""
        if self._victim_keys_version != self.tree.version:
            self._victim_keys, self._victim_keys_version = {}, self.tree.version
        key = self._victim_keys.get(queue)
        if key is None:
            key = self._victim_keys[queue] = tuple(k for _, k, _ in self._path_key(queue, head=False))
        return key

    def queue_order_key(self, queue: str) -> object:
        if not self.args.enable:
            return 0
        return self._path_key(queue)

    def victim_queue_order(self, preemptor_queue: str, left: str, right: str) -> int:
        if not self.args.enable:
            return 0
        lk, rk = self._victim_key(left), self._victim_key(right)
        if lk == rk:
            return 0
        return -1 if lk > rk else 1  # the higher share is evicted first

    # -- the reclaim gate --------------------------------------------------------------------------------------
    def preemptive(self, queue: str, task: TaskState) -> GateRefusal | None:
        """May ``queue`` reclaim for ``task``? When its usage with the pod stays within what the ClusterQueue could
        ever have (its potential available: its local quota and what its Cohorts could lend it, within its
        borrowing limit), as Kueue's preemption only looks for room the workload could hold; the pod alone when its
        own workloads may be victims in the same set."""
        tree = self.tree
        node = tree.nodes.get(queue)
        if node is None or node.cohort:
            return None
        # its own workloads may go too (one set, ``reclaims_within_queue``): then only the pod itself must fit, as
        # Kueue's flavor assigner asks before it looks for victims
        refusal = None if task.pg is None else self._beyond_nominal(queue, task.pg)
        if refusal is not None:
            return refusal
        usage = {} if self.reclaims_within_queue(queue) else tree.usage_of(queue)
        for fr, v in sorted(_amounts(task.req, tree.subtree[queue]).items()):
            most = tree.potential_available(queue, fr)
            if usage.get(fr, 0) + v > most:
                return GateRefusal(
                    BlockerKind.QUEUE,
                    queue,
                    "potentialAvailable",
                    fr[1],
                    v,
                    max(0, most - usage.get(fr, 0)),
                    message="the most the ClusterQueue could hold with everything it may reclaim",
                )
        return None

    # -- admission --------------------------------------------------------------------------------------------
    def job_enqueueable(self, job: JobState) -> tuple[int, GateRefusal | None]:
        """Kueue admits a workload that fits once others are preempted: Permit (the later tiers' quota checks are
        not asked) when the policies give it candidates; otherwise abstain."""
        tree = self.tree
        queue = job.queue
        node = tree.nodes.get(queue)
        if job.min_resources is None or node is None or node.cohort:
            return ABSTAIN, None
        policy = self.policies.get(queue, _NEVER)
        if policy.within_cluster_queue != "Never" and any(
            other is not job and any(other.allocated.values()) and _allowed(policy.within_cluster_queue, other, job)
            for other in self.jobs_of.get(queue, ())
        ):
            return PERMIT, None
        if node.parent is None or policy.reclaim_within_cohort == "Never":
            return ABSTAIN, None
        request = _amounts(raw(job.min_resources), tree.subtree[queue])
        advantage = hierarchical_advantage(tree, queue, request)
        if not (advantage or self.args.enable or policy.borrow_within_cohort == "LowerPriority"):
            return ABSTAIN, None
        return (PERMIT, None) if self._lenders(queue, frozenset(request)) else (ABSTAIN, None)

    def _lenders(self, queue: str, needed: frozenset[FlavorResource]) -> frozenset[str]:
        """The other ClusterQueues of ``queue``'s tree that borrow on one of ``needed`` (kept while the usage stays:
        the enqueue action asks for every waiting job, the reclaim action for every node)."""
        tree = self.tree
        root = tree.root_of(queue)
        key = (root, needed)
        known = self._borrowers.get(key)
        if known is None or known[0] != tree.version:
            members = tree.cluster_queues(root)
            known = (tree.version, frozenset(q for q in members if tree.nodes[q].parent and tree.borrowing(q, needed)))
            self._borrowers[key] = known
        return known[1] - {queue}

    def _beyond_nominal(self, queue: str, job: JobState) -> GateRefusal | None:
        """Kueue's flavor assigner looks for victims only when the workload's request fits the ClusterQueue's
        nominal quota on every flavor-resource it does not fit now, or fits a subtree below the top of its tree (a hierarchical
        advantage), or the ClusterQueue may preempt while borrowing (``borrowWithinCohort``, or fair sharing with
        ``reclaimWithinCohort``): a workload larger than its nominal quota otherwise waits for room. The refusal, or
        None."""
        tree = self.tree
        policy = self.policies.get(queue, _NEVER)
        if policy.borrow_within_cohort == "LowerPriority" or (
            self.args.enable and policy.reclaim_within_cohort != "Never"
        ):
            return None
        total = self._totals.get(job.key)
        if total is None:  # the workload's whole request (its pods' requests never change in a session)
            total = self._totals[job.key] = {}
            for t in job.tasks:
                for r, v in t.req.items():
                    total[r] = total.get(r, 0) + v
        nominal = tree.nodes[queue].nominal
        for fr, v in sorted(_amounts(total, tree.subtree[queue]).items()):
            if v <= tree.available(queue, fr):
                continue  # fits as it is (borrowing if need be): no victims needed on it
            if v > nominal.get(fr, 0) and not hierarchical_advantage(tree, queue, {fr: v}):
                message = "a workload above the nominal quota preempts only with borrowWithinCohort"
                return GateRefusal(BlockerKind.QUEUE, queue, "nominalQuota", fr[1], v, nominal.get(fr, 0), message)
        return None

    def _victim_jobs(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        """A test of the jobs whose pods the hook may return for ``preemptor`` (None: it may return none)."""
        pj = preemptor.pg
        tree = self.tree
        if pj is None or pj.queue not in tree.nodes:
            return None
        policy = self.policies.get(pj.queue, _NEVER)
        if hook == "preemptable":
            within = policy.within_cluster_queue
            if within == "Never":
                return None
            return lambda job: job is pj or (job.queue == pj.queue and _allowed(within, job, pj))
        reclaim = policy.reclaim_within_cohort
        if tree.nodes[pj.queue].parent is None or reclaim == "Never":
            return None
        lenders = self._lenders(pj.queue, frozenset(_amounts(preemptor.req, tree.subtree[pj.queue])))
        if self.reclaims_within_queue(pj.queue):  # one set with the ClusterQueue's own workloads
            within = policy.within_cluster_queue
            return lambda job: (
                (job.queue in lenders and _allowed(reclaim, job, pj))
                or (job.queue == pj.queue and job is not pj and _allowed(within, job, pj))
            )
        return lambda job: job.queue in lenders and _allowed(reclaim, job, pj)

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        """Every pod the hooks return is of a job ``victim_job_bound`` lets through: of the preemptor's ClusterQueue
        (preempt) or of one that borrows on what it asks (reclaim), with a priority the policy allows."""
        pj = preemptor.pg
        jobs = self._victim_jobs(hook, preemptor)
        if jobs is None:
            return ("kueuefair", "nobody"), _nobody
        assert pj is not None  # ``_victim_jobs`` answers None for a pod without a job
        # The job test reads the preemptor's queue, priority and creation and, for reclaim, which ClusterQueues borrow
        # on what it asks: the key names exactly those, so the answers are kept across evictions that leave them be
        # (with the tree's usage version in the key every eviction asked every job again).
        lenders = None
        if hook != "preemptable":
            lenders = self._lenders(pj.queue, frozenset(_amounts(preemptor.req, self.tree.subtree[pj.queue])))
        # one set with the ClusterQueue's own workloads: the test reads which job is the preemptor's too
        mine = pj.key if hook != "preemptable" and self.reclaims_within_queue(pj.queue) else None
        key = ("kueuefair", hook, pj.queue, mine, pj.priority, pj.creation, tuple(sorted(preemptor.req)), lenders)
        return key, lambda t: t.pg is not None and jobs(t.pg)

    def victim_job_bound(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        return self._victim_jobs(hook, preemptor)

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        return ONE_CLASS  # the pod test is the job test of the pod's job

    # -- victims ----------------------------------------------------------------------------------------------
    def reclaims_within_queue(self, queue: str) -> bool:
        """Kueue's preemption, classical or fair, chooses one set among a ClusterQueue's own workloads and its
        Cohort's together: when the ClusterQueue is in a Cohort and both ``withinClusterQueue`` and
        ``reclaimWithinCohort`` allow some, ``reclaimable`` is offered the queue's own pods too."""
        node = self.tree.nodes.get(queue)
        if node is None or node.cohort or node.parent is None:
            return False
        policy = self.policies.get(queue, _NEVER)
        return policy.within_cluster_queue != "Never" and policy.reclaim_within_cohort != "Never"

    def victims_are_a_set(self, hook: str, queue: str) -> bool:
        """The victims are Kueue's set (classical or fair), which counts quota: the actions evict it whole and place
        the pod only within the ClusterQueue's quota (reclaim: a ClusterQueue in a Cohort; preempt: any)."""
        node = self.tree.nodes.get(queue)
        if node is None or node.cohort:
            return False
        return hook == "preemptable" or node.parent is not None

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        """The pods of the preemptor's own job as they are (the other plugins decide); of the ClusterQueue's other
        jobs, only Kueue's minimal set among those ``withinClusterQueue`` allows (without fair sharing
        ``classical_targets``, with it ``fair_targets``, on the ClusterQueue's workloads alone: the lowest first, then
        every one the pod still fits without given back), none when no set makes it fit the ClusterQueue's quota."""
        pj = preemptor.pg
        if pj is None:
            return []
        policy = self.policies.get(pj.queue, _NEVER)
        mine = [t for t in preemptees if t.pg is pj]
        allowed = [
            t
            for t in preemptees
            if t.pg is not None and t.pg is not pj and _allowed(policy.within_cluster_queue, t.pg, pj)
        ]
        node = self.tree.nodes.get(pj.queue)
        if not allowed or node is None or node.cohort:
            return mine + allowed
        if self._beyond_nominal(pj.queue, pj) is not None:
            return mine
        request = _amounts(preemptor.req, self.tree.subtree[pj.queue])
        own = dataclasses.replace(policy, reclaim_within_cohort="Never")
        targets = self._targets(pj, request, self._workloads(allowed), own)
        chosen = {id(t) for c in targets for t in c.ref}
        return mine + [t for t in allowed if id(t) in chosen]

    def reclaimable(self, reclaimer: TaskState, reclaimees: Sequence[TaskState]) -> list[TaskState] | None:
        pj = reclaimer.pg
        tree = self.tree
        if pj is None or pj.queue not in tree.nodes or tree.nodes[pj.queue].parent is None:
            return []  # a ClusterQueue without a Cohort reclaims from nobody
        queue = pj.queue
        policy = self.policies.get(queue, _NEVER)
        if policy.reclaim_within_cohort == "Never":
            return []
        request = _amounts(reclaimer.req, tree.subtree[queue])
        admitted = self._workloads(reclaimees)
        across = policy  # one set with the ClusterQueue's own workloads (``reclaims_within_queue``)
        if not self.reclaims_within_queue(queue):  # the reclaim action's are other queues'
            across = dataclasses.replace(policy, within_cluster_queue="Never")
        return [t for c in self._targets(pj, request, admitted, across) for t in c.ref]

    def _targets(
        self, pj: JobState, request: Mapping[FlavorResource, int], admitted: list[Candidate], policy: KueuePreemption
    ) -> list[Candidate]:
        """Kueue's set for ``request`` of ``pj`` among ``admitted`` under ``policy``: fair sharing's
        (``fair_targets``, the candidates by ``find_candidates``) or the classical one; empty when no set makes the
        request fit (Kueue then preempts nothing)."""
        tree, queue = self.tree, pj.queue
        if not self.args.enable:
            return classical_targets(tree, queue, request, admitted, policy, pj.priority, pj.creation)
        candidates = find_candidates(tree, queue, request, admitted, policy, pj.priority, pj.creation)
        targets, fits = fair_targets(tree, queue, request, candidates, self.args.strategies)
        return targets if fits else []

    def _workloads(self, reclaimees: Sequence[TaskState]) -> list[Candidate]:
        """The reclaimees as Kueue's workloads, one per job: its reclaimees' requests (``ref``: those pods)."""
        tree = self.tree
        by_job: dict[str, list[TaskState]] = {}
        for t in reclaimees:
            if t.pg is not None and t.pg.queue in tree.nodes and not tree.nodes[t.pg.queue].cohort:
                by_job.setdefault(t.pg.key, []).append(t)
        admitted = []
        for key, tasks in by_job.items():
            job = tasks[0].pg
            assert job is not None
            usage: dict[FlavorResource, int] = {}
            for t in tasks:
                for fr, v in _amounts(t.req, tree.subtree[job.queue]).items():
                    usage[fr] = usage.get(fr, 0) + v
            admitted.append(Candidate(key, job.queue, usage, job.priority, job.creation, job.creation, tasks))
        return admitted
