"""The plugin framework: which plugin answers what, and how their answers are combined (after Volcano).

A session builds one ``Framework`` from its policy. Every plugin named in the policy's tiers (and provided by
Fairway: the classes the registry ``engine.session.plugins`` holds, each registered by its own folder) is
instantiated once, in tier order; a plugin listed twice is built from its first entry, as ``Policy`` warns. Each plugin overrides only the hooks it implements (``Plugin`` below lists
them all); a hook whose switch is off in the policy (``enableJobOrder: false``, ``enabledAllocatable: false``,
...) is not registered, exactly as Volcano skips a callback whose ``isEnabled`` is false.

How answers are combined, hook by hook (Volcano ``framework/session_plugins.go``):

* **Order functions** (job, task, queue, namespace): walk the plugins in tier order; the first one whose
  comparison is non-zero decides. Every Fairway order function is a comparison of a per-object key, so the
  combination is the lexicographic order of the tuple of keys, followed by Volcano's fallback (creation time,
  then name/uid). Keys are taken when an object is pushed into a priority queue, as Volcano's heaps compare
  objects when they are pushed and popped.
* **Gates** ``allocatable``, ``preemptive``, ``job_ready``: AND over every registered plugin; the first refusal
  is kept as the reason. ``overused`` is an OR (any plugin saying overused wins), as in Volcano.
* **Votes** ``job_enqueueable`` and ``job_pipelined`` (Permit +1, Abstain 0, Reject -1): any Reject refuses;
  when a plugin of a tier Permits, the later tiers are not asked; all Abstain means yes.
* ``job_admissible`` (Fairway): an AND over every plugin, asked after the votes admitted a podgroup, so that a
  gate the podgroup will meet at placement (an elastic quota's runtime) is consulted even when an earlier tier's
  vote already permitted.
* ``job_starving``: the AND of the plugins of the first tier that registers one; none registered means no.
* ``job_valid``: the first plugin that finds the job invalid decides (it has no switch in Volcano).
* **Victims** ``reclaimable`` / ``preemptable``: within a tier, the intersection of the lists the plugins return
  (a plugin may abstain by returning None); the first tier whose intersection is not empty decides; a tier in
  which a plugin returns an empty list, or whose intersection comes out empty, does not decide and the next
  tier is asked. That fall-through is Volcano's (its own test ``TestUnifiedEvictable_EmptyCandidatesBlocksTier``
  pins it, and issue #5896 shows its consequence: ``conformance`` in a tier above ``proportion`` answers alone).
  Volcano's code lets the next plugin of the *same* tier refill an empty intersection (issue #5963); that bug is
  not reproduced here: an empty intersection ends the tier.
* **Victim order**: Volcano's ``BuildVictimsPriorityQueue`` (same job: reverse task order; different queues:
  the victim-queue order of the first plugin that has one, else the reverse queue order; same queue: reverse
  job order, then reverse task order), sorted on per-victim keys when the queues present rank consistently.
* **Victim bounds** (Fairway, for speed): a plugin may give, per preemptor, a test every pod it could return as a
  victim passes (``Plugin.victim_bound``); reclaim and preempt skip the nodes where even every pod that passes
  the tests could not make room. A plugin whose test reads only the pod's job also gives it as a test of jobs
  (``Plugin.victim_job_bound``: gang's minimum, priority's job priority), asked once per job, so the pod test is
  asked only for the pods of the jobs that pass. A plugin also says what its pod test reads of a pod besides its
  job (``Plugin.victim_class``: queue and request, criticality, ...), so the test is asked once per class of pods
  (``Framework.victim_factors`` gives the tests plugin by plugin). Decisions are those of trying every node
  (``tests/unit/test_victim_search.py``).
* **Events** (``on_allocate`` / ``on_deallocate``) go to every plugin that listens, whatever its switches.

Refusals are ``GateRefusal`` values (``engine.session.reasons``) naming the tree node, the check, the resource and
the numbers; the session turns the first one that stopped a podgroup into its status message and ``Blocker``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar

from engine.fairshare.queues import QueueBook
from engine.policy.policy import PluginOption, Policy
from engine.session.reasons import GateRefusal
from engine.session.registry import PLUGINS
from engine.session.userlimits import UserLimitBook

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.session.session import JobState, NodeTable, Session, TaskState

__all__ = [
    "ABSTAIN",
    "ONE_CLASS",
    "PERMIT",
    "REJECT",
    "Framework",
    "Plugin",
    "VictimFactor",
    "VictimTest",
]

PERMIT = 1
ABSTAIN = 0
REJECT = -1

# a test on one pod, with the key naming what of the preemptor it reads (``Plugin.victim_bound``)
VictimTest = tuple[Hashable, Callable[["TaskState"], bool]]


def _one_class(task: TaskState) -> Hashable:
    return None


# ``Plugin.victim_class`` for a pod test that its job test decides: the pods of the jobs that pass are of one class
ONE_CLASS: Callable[[TaskState], Hashable] = _one_class


class VictimFactor(NamedTuple):
    """One plugin's part of ``Framework.victim_bound``'s test: its pod test, its job test (``Plugin.victim_job_bound``)
    and its pod class (``Plugin.victim_class``)."""

    plugin: str
    test: Callable[[TaskState], bool]
    job_test: Callable[[JobState], bool] | None
    pod_class: Callable[[TaskState], Hashable] | None


def _nobody(task: TaskState) -> bool:
    return False


def _anybody(task: TaskState) -> bool:
    return True


_T = TypeVar("_T")


def _all_of(tests: list[Callable[[_T], bool]]) -> Callable[[_T], bool]:
    """A test passed when every one of ``tests`` is (the common small cases spelled out: it runs per pod)."""
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        a, b = tests
        return lambda t: a(t) and b(t)
    if len(tests) == 3:
        a, b, c = tests
        return lambda t: a(t) and b(t) and c(t)
    return lambda t: all(f(t) for f in tests)


# ------------------------------------------------------------------------------------------------------------
# Plugins
# ------------------------------------------------------------------------------------------------------------

# hook name -> the PluginOption switch that turns it off (None: always on, as in Volcano)
HOOK_SWITCHES: dict[str, str | None] = {
    "job_order_key": "job_order",
    "task_order_key": "task_order",
    "queue_order_key": "queue_order",
    "namespace_order_key": "namespace_order",
    "victim_queue_order": None,
    "allocatable": "allocatable",
    "preemptive": "preemptive",
    "overused": "overused",
    "job_valid": None,
    "job_ready": "job_ready",
    "job_pipelined": "job_pipelined",
    "job_starving": "job_starving",
    "job_enqueueable": "job_enqueued",
    "job_enqueued": "job_enqueued",
    "job_admissible": "job_enqueued",
    "reservation_excess": "job_enqueued",
    "release_reservation": "job_enqueued",
    "reclaimable": "reclaimable",
    "preemptable": "preemptable",
    "node_predicate": "predicate",
    "node_scores": "node_order",
    "node_score_one": "node_order",
    "on_allocate": None,
    "on_deallocate": None,
    "job_unschedulable": None,
}


class Plugin:
    """Base class: a plugin overrides the hooks it provides; the others are never called.

    A plugin is built once per session (``__init__(option, session)``), after the session's state exists, so it
    may compute what it needs from the session (quota values, totals) right away.
    """

    name: ClassVar[str] = ""
    # True for a plugin that reads the elastic quota runtimes (``Session.quota_runtimes``): the session then
    # reports them even when the snapshot has no quota group of its own
    uses_quota_runtimes: ClassVar[bool] = False

    def __init__(self, option: PluginOption, session: Session) -> None:
        self.option = option
        self.session = session

    # -- order (return a sort key: smaller goes first) ------------------------------------------------------
    def job_order_key(self, job: JobState) -> Any:
        raise NotImplementedError

    def task_order_key(self, task: TaskState) -> Any:
        raise NotImplementedError

    def queue_order_key(self, queue: str) -> Any:
        raise NotImplementedError

    def namespace_order_key(self, namespace: str) -> Any:
        raise NotImplementedError

    def victim_queue_order(self, preemptor_queue: str, left: str, right: str) -> int:
        raise NotImplementedError

    # -- gates (None = allowed) ------------------------------------------------------------------------------
    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        raise NotImplementedError

    def preemptive(self, queue: str, task: TaskState) -> GateRefusal | None:
        raise NotImplementedError

    def overused(self, queue: str) -> GateRefusal | None:
        """The reason the queue is overused, or None when it is not."""
        raise NotImplementedError

    def job_valid(self, job: JobState) -> GateRefusal | None:
        raise NotImplementedError

    def job_ready(self, job: JobState) -> bool:
        raise NotImplementedError

    def job_pipelined(self, job: JobState) -> int:
        raise NotImplementedError

    def job_starving(self, job: JobState) -> bool:
        raise NotImplementedError

    def job_enqueueable(self, job: JobState) -> tuple[int, GateRefusal | None]:
        raise NotImplementedError

    def job_enqueued(self, job: JobState) -> None:
        raise NotImplementedError

    def job_admissible(self, job: JobState) -> GateRefusal | None:
        """A gate the podgroup will meet when its pods are placed, checked at admission whatever the votes said
        (Fairway's addition: admitting a podgroup that a placement gate refuses would only hold a reservation)."""
        raise NotImplementedError

    def reservation_excess(self, job: JobState) -> GateRefusal | None:
        """For an Inqueue job: is the reservation pool it sits in (its queue, the cluster) now over its limit on
        a resource the job reserves? (Fairway's seed-003 rollback; Volcano has no such hook.)"""
        raise NotImplementedError

    def release_reservation(self, job: JobState) -> None:
        """Undo ``job_enqueued`` for a job sent back to Pending."""
        raise NotImplementedError

    # -- victims (None = abstain) ----------------------------------------------------------------------------
    def reclaimable(self, reclaimer: TaskState, reclaimees: Sequence[TaskState]) -> list[TaskState] | None:
        raise NotImplementedError

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        raise NotImplementedError

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        """For this plugin's victim hook ``hook`` (``reclaimable`` or ``preemptable``): a test that every pod of
        *another job* than ``preemptor``'s that the hook may return for ``preemptor`` passes, whatever list it is
        given, in the session's present state (a test of each pod alone: one a running total could refuse passes).
        The test is used at once, before anything changes, so it may remember what it found. Giving one promises
        the hook never abstains (never returns None) for this preemptor. The key names everything of the preemptor
        the test reads (plugin, queue, request, priority, ...): preemptors with equal keys get the same test, so the
        actions reuse its answers while the session is unchanged. None (the default): no test. The actions only
        skip the nodes where even every pod that passes could not make room, so a test that lets too much through
        costs time, never a decision."""
        return None

    def victim_job_bound(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        """A test of a job alone that the job of every pod passing this plugin's ``victim_bound`` test passes (the
        pod test implies it): the actions ask it once per job and the pod test only for the pods of the jobs that
        pass. Asked only when ``victim_bound`` gave a test, in the same state. Its answer reads only the job's pod
        counts by status and what of the job stays fixed through a session (minMember, priority), and of the
        preemptor only what ``victim_bound``'s key names: the actions keep a job's answer for that key until one of
        the job's pods changes status. None (the default): none."""
        return None

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        """What this plugin's ``victim_bound`` tests for ``hook`` read of a pod besides its job: for any preemptor, in
        any one state, two pods of the same class whose jobs pass the plugin's ``victim_job_bound`` test (any two
        pods when it gives none) get the same answer. The class reads only what of a pod stays fixed through a
        session (queue, request, priority, criticality, quota group), so the actions take it once per pod and ask
        the test once per class present (``ONE_CLASS``: the job test decides). A wrong class would skip nodes the
        search must try; ``tests/unit/test_victim_search.py`` checks the rooms against the pod-by-pod sums. None
        (the default): the test is asked pod by pod."""
        return None

    # -- nodes -------------------------------------------------------------------------------------------------
    def node_predicate(self, table: NodeTable, signature: Any) -> npt.NDArray[np.bool_]:
        """Which nodes pass this plugin's non-resource predicates for tasks of ``signature`` (``TaskState.sig``:
        node selector, tolerations, node affinity)."""
        raise NotImplementedError

    def node_scores(self, table: NodeTable, rows: Any, vec: npt.NDArray[np.int64]) -> npt.NDArray[np.float64] | None:
        """Scores of the nodes ``rows`` (an index array or slice) for a task needing ``vec``; higher is better."""
        raise NotImplementedError

    def node_score_one(self, alloc: list[int], idle: list[int], vec: list[int]) -> float | None:
        """The same score as ``node_scores`` for one node, from plain ints (allocatable, idle and the task's vector
        over the table's columns); it must give exactly the value the vectorised version gives, and read nothing
        else: the best-node search keeps the answers by (allocatable, idle) for each task class."""
        raise NotImplementedError

    # -- events -----------------------------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        raise NotImplementedError

    def on_deallocate(self, task: TaskState) -> None:
        raise NotImplementedError

    # -- capabilities the session asks for by what they are, never by the plugin's name -------------------------
    def queue_book(self) -> QueueBook | None:
        """The live queue values this plugin keeps (a queue plugin's book), None for the others."""
        return None

    def reclaims_within_queue(self, queue: str) -> bool:
        """Whether this plugin's ``reclaimable`` chooses the victims of a pod of ``queue`` as one set among the
        queue's own jobs and the other queues' together (Kueue's classical preemption): the reclaim action then
        offers it the queue's own pods too."""
        return False

    def victims_are_a_set(self, hook: str, queue: str) -> bool:
        """Whether this plugin's ``reclaimable`` / ``preemptable`` (``hook``) answers for a pod of ``queue`` are one
        set to evict whole (Kueue's classical preemption, which counts quota, not nodes): the action then evicts the
        set and every other pod of its jobs, and places the pod only if it fits the node and passes the queue's
        allocatable gates."""
        return False

    def job_unschedulable(self, job: JobState) -> bool:
        """When the session closes: is this podgroup unschedulable (gang's ``OnSessionClose``, a podgroup that is
        not ready)? An unschedulable podgroup with running pods ends in phase Unknown."""
        raise NotImplementedError


_OVERRIDES: dict[tuple[type[Plugin], str], bool] = {}  # (plugin class, hook) -> whether the class overrides the hook


def _overrides(plugin: Plugin, hook: str) -> bool:
    key = (type(plugin), hook)
    found = _OVERRIDES.get(key)
    if found is None:
        found = _OVERRIDES[key] = getattr(type(plugin), hook) is not getattr(Plugin, hook)
    return found


class Framework:
    """The plugins of one session and the combination rules (see the module docstring)."""

    def __init__(self, policy: Policy, session: Session) -> None:
        self.policy = policy
        self.warnings: list[str] = []
        self.tiers: list[list[Plugin]] = []
        self.by_name: dict[str, Plugin] = {}
        for tier in policy.tiers:
            built: list[Plugin] = []
            for option in tier:
                cls = PLUGINS.get(option.name)
                if cls is None or option.name in self.by_name:
                    continue
                plugin = cls(option, session)
                self.by_name[option.name] = plugin
                built.append(plugin)
            self.tiers.append(built)
        self._hooks: dict[str, list[Plugin]] = {}
        self._tier_hooks: dict[str, list[list[Plugin]]] = {}
        for hook, switch in HOOK_SWITCHES.items():
            per_tier = [
                [p for p in tier if _overrides(p, hook) and (switch is None or getattr(p.option, switch))]
                for tier in self.tiers
            ]
            self._tier_hooks[hook] = per_tier
            self._hooks[hook] = [p for tier in per_tier for p in tier]
        for action, hook in (("reclaim", "reclaimable"), ("preempt", "preemptable")):
            tiers_used = [i for i, tier in enumerate(self._tier_hooks[hook]) if tier]
            if action in policy.actions and len(tiers_used) > 1:
                names = " / ".join(", ".join(p.name for p in self._tier_hooks[hook][i]) for i in tiers_used)
                self.warnings.append(
                    f"{action}: victim filters sit in {len(tiers_used)} tiers ({names}); the first tier that agrees on "
                    "some victims decides alone, and a tier that spares every candidate leaves the choice to the "
                    "next one (Volcano's rule): put the filters that must always apply in one tier"
                )
        h = self._hooks
        self._job_order = [p.job_order_key for p in h["job_order_key"]]
        self._task_order = [p.task_order_key for p in h["task_order_key"]]
        self._queue_order = [p.queue_order_key for p in h["queue_order_key"]]
        self._namespace_order = [p.namespace_order_key for p in h["namespace_order_key"]]
        self._allocatable = [p.allocatable for p in h["allocatable"]]
        self._preemptive = [p.preemptive for p in h["preemptive"]]
        self._overused = [p.overused for p in h["overused"]]
        self._job_valid = [p.job_valid for p in h["job_valid"]]
        self._job_ready = [p.job_ready for p in h["job_ready"]]
        self._on_allocate = [p.on_allocate for p in h["on_allocate"]]
        self._on_deallocate = [p.on_deallocate for p in h["on_deallocate"]]
        # per-user limits (``engine.session.userlimits``): no plugin, always on when a tree node sets some; None
        # (nothing asked, nothing counted) when none does
        self.user_limits: UserLimitBook | None = UserLimitBook.open(session.snapshot)
        if self.user_limits is not None:
            self.user_limits.open_session(session.jobs.values())

    def plugin(self, name: str) -> Plugin | None:
        return self.by_name.get(name)

    @property
    def uses_quota_runtimes(self) -> bool:
        return any(p.uses_quota_runtimes for p in self.by_name.values())

    def queue_book(self) -> QueueBook | None:
        """The live queue values of the first plugin, in tier order, that keeps some."""
        for plugin in self.by_name.values():
            book = plugin.queue_book()
            if book is not None:
                return book
        return None

    def job_unschedulable(self, job: JobState) -> bool:
        return any(p.job_unschedulable(job) for p in self._hooks["job_unschedulable"])

    def reclaims_within_queue(self, queue: str) -> bool:
        """Whether a plugin that chooses reclaim victims takes the reclaimer's own queue's jobs into one set with the
        other queues' (``Plugin.reclaims_within_queue``)."""
        return any(p.reclaims_within_queue(queue) for p in self._hooks["reclaimable"])

    def victims_are_a_set(self, hook: str, queue: str) -> bool:
        """Whether a plugin that chooses the victims of ``hook`` answers with one set to evict whole
        (``Plugin.victims_are_a_set``)."""
        return any(p.victims_are_a_set(hook, queue) for p in self._hooks[hook])

    def has(self, hook: str) -> bool:
        return bool(self._hooks[hook])

    def hook_plugins(self, hook: str) -> list[Plugin]:
        return self._hooks[hook]

    # -- order keys -------------------------------------------------------------------------------------------
    def job_key(self, job: JobState) -> tuple[Any, ...]:
        """Volcano's JobOrderFn as a key: the plugins' keys in tier order, then creation time, then the key."""
        order = self._job_order  # (one to three plugins in practice: written out, a generator costs more)
        if len(order) == 3:
            return (order[0](job), order[1](job), order[2](job), job.creation, job.key)
        return (*(f(job) for f in order), job.creation, job.key)

    def job_plugin_key(self, job: JobState) -> tuple[Any, ...]:
        """Only the plugins' part (Volcano's JobOrderCompareFn, used for victims)."""
        return tuple(f(job) for f in self._job_order)

    def task_key(self, task: TaskState) -> tuple[Any, ...]:
        """Volcano's TaskOrderFn: the plugins' keys, then the pod index / creation time / uid fallback."""
        order = self._task_order
        if len(order) == 1:
            return (order[0](task), *task.fallback_key)
        return (*(f(task) for f in order), *task.fallback_key)

    def queue_key(self, queue: str) -> tuple[Any, ...]:
        """Volcano's QueueOrderFn; ties go by name (Volcano: creation time, then UID)."""
        order = self._queue_order
        if len(order) == 1:
            return (order[0](queue), queue)
        return (*(f(queue) for f in order), queue)

    @property
    def namespace_order_enabled(self) -> bool:
        return bool(self._namespace_order)

    def namespace_key(self, namespace: str) -> tuple[Any, ...]:
        return (*(f(namespace) for f in self._namespace_order), namespace)

    # -- gates ------------------------------------------------------------------------------------------------
    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        for f in self._allocatable:
            refusal = f(queue, task)
            if refusal is not None:
                return refusal
        return self.user_limit_allocatable(queue, task)

    def user_limit_allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        """Would placing ``task`` take its job's user or one of its groups over a limit? (Part of ``allocatable``;
        reclaim, which asks ``preemptive`` rather than ``allocatable`` as Volcano's does, asks this one too.)"""
        if self.user_limits is None:
            return None
        return self.user_limits.allocatable(task.job, queue, task.quota_group, task.req)

    def user_limit_admission(self, job: JobState) -> GateRefusal | None:
        """Would admitting ``job`` take its user or one of its groups over a limit (``engine.session.userlimits``)?"""
        if self.user_limits is None:
            return None
        return self.user_limits.admission(job.key, job.queue)

    def preemptive(self, queue: str, task: TaskState) -> GateRefusal | None:
        for f in self._preemptive:
            refusal = f(queue, task)
            if refusal is not None:
                return refusal
        return None

    def overused(self, queue: str) -> GateRefusal | None:
        for f in self._overused:
            refusal = f(queue)
            if refusal is not None:
                return refusal
        return None

    def job_valid(self, job: JobState) -> GateRefusal | None:
        for f in self._job_valid:
            refusal = f(job)
            if refusal is not None:
                return refusal
        return None

    def job_ready(self, job: JobState) -> bool:
        for f in self._job_ready:  # noqa: SIM110 - asked after every placement: a generator costs more than the test
            if not f(job):
                return False
        return True

    def first_voters(self, hook: str) -> list[Plugin]:
        """The plugins of the first tier with any for ``hook`` (a vote hook: a refusal there is final)."""
        return next((list(tier) for tier in self._tier_hooks[hook] if tier), [])

    def job_pipelined(self, job: JobState) -> bool:
        for tier in self._tier_hooks["job_pipelined"]:
            permitted = False
            for p in tier:
                vote = p.job_pipelined(job)
                if vote < 0:
                    return False
                if vote > 0:
                    permitted = True
            if permitted:
                return True
        return True

    def job_starving(self, job: JobState) -> bool:
        for tier in self._tier_hooks["job_starving"]:
            if tier:
                return all(p.job_starving(job) for p in tier)
        return False

    def job_enqueueable(self, job: JobState) -> tuple[bool, GateRefusal | None]:
        for tier in self._tier_hooks["job_enqueueable"]:
            permitted = False
            for p in tier:
                vote, refusal = p.job_enqueueable(job)
                if vote < 0:
                    return False, refusal
                if vote > 0:
                    permitted = True
            if permitted:
                return True, None
        return True, None

    def job_enqueued(self, job: JobState) -> None:
        for p in self._hooks["job_enqueued"]:
            p.job_enqueued(job)
        if self.user_limits is not None:
            self.user_limits.admitted(job.key)

    def job_admissible(self, job: JobState) -> GateRefusal | None:
        """AND of every plugin's admission gate (not a vote: no tier can skip it)."""
        for p in self._hooks["job_admissible"]:
            refusal = p.job_admissible(job)
            if refusal is not None:
                return refusal
        return None

    def reservation_excess(self, job: JobState) -> GateRefusal | None:
        for p in self._hooks["reservation_excess"]:
            refusal = p.reservation_excess(job)
            if refusal is not None:
                return refusal
        return None

    def release_reservation(self, job: JobState) -> None:
        for p in self._hooks["release_reservation"]:
            p.release_reservation(job)
        if self.user_limits is not None:
            self.user_limits.unadmitted(job.key)

    # -- victims ----------------------------------------------------------------------------------------------
    def _victims(
        self,
        hook: str,
        call: Callable[[Plugin], list[TaskState] | None],
        skip: Collection[str] = (),
    ) -> list[TaskState]:
        for tier in self._tier_hooks[hook]:
            victims: list[TaskState] | None = None
            for p in tier:
                if p.name in skip:  # a plugin whose rule the caller applies itself (``gang`` under ``wholeGangs``)
                    continue
                candidates = call(p)
                if candidates is None:  # abstain
                    continue
                if not candidates:
                    victims = None
                    break
                if victims is None:
                    victims = list(candidates)
                else:
                    chosen = {id(c) for c in candidates}
                    victims = [v for v in victims if id(v) in chosen]
                if not victims:
                    # an empty intersection ends the tier (Volcano issue #5963 would refill it)
                    victims = None
                    break
            if victims:
                return victims
        return []

    def reclaimable(
        self, reclaimer: TaskState, reclaimees: Sequence[TaskState], skip: Collection[str] = ()
    ) -> list[TaskState]:
        """The victims the plugins choose among ``reclaimees``; the plugins named in ``skip`` are left out."""
        return self._victims("reclaimable", lambda p: p.reclaimable(reclaimer, reclaimees), skip)

    def preemptable(
        self, preemptor: TaskState, preemptees: Sequence[TaskState], skip: Collection[str] = ()
    ) -> list[TaskState]:
        """The victims the plugins choose among ``preemptees``; the plugins named in ``skip`` are left out."""
        return self._victims("preemptable", lambda p: p.preemptable(preemptor, preemptees), skip)

    def victim_job_test(self, hook: str, preemptor: TaskState) -> Callable[[JobState], bool] | None:
        """A test of jobs that the job of every pod passing ``victim_bound``'s test passes, in the same state: in
        some tier, every job test of the tier's plugins that give a pod test (``Plugin.victim_job_bound``). None
        when a tier lets every job through."""
        tiers: list[Callable[[JobState], bool]] = []
        for tier in self._tier_hooks[hook]:
            if not tier:
                continue
            given = [p for p in tier if p.victim_bound(hook, preemptor) is not None]
            jobs = [f for f in (p.victim_job_bound(hook, preemptor) for p in given) if f is not None]
            if not jobs:
                return None
            tiers.append(_all_of(jobs))
        if not tiers:
            return None  # ``victim_bound`` lets nobody through: nothing to save
        return tiers[0] if len(tiers) == 1 else (lambda job: any(f(job) for f in tiers))

    def victim_factors(
        self, hook: str, preemptor: TaskState, skip: Collection[str] = ()
    ) -> list[list[VictimFactor]] | None:
        """``victim_bound``'s test in parts: per tier with the hook, one factor per plugin that gives a test (a pod
        passes when, in some tier, it passes every factor). None when a tier lets any pod through; no tiers: nobody.
        The plugins named in ``skip`` are left out."""
        tiers: list[list[VictimFactor]] = []
        for whole in self._tier_hooks[hook]:
            tier = [p for p in whole if p.name not in skip]
            if not tier:
                continue
            factors = []
            for p in tier:
                bound = p.victim_bound(hook, preemptor)
                if bound is not None:
                    factors.append(
                        VictimFactor(p.name, bound[1], p.victim_job_bound(hook, preemptor), p.victim_class(hook))
                    )
            if not factors:
                return None
            tiers.append(factors)
        return tiers

    def victim_bound(self, hook: str, preemptor: TaskState, skip: Collection[str] = ()) -> VictimTest:
        """A test every victim that ``reclaimable`` / ``preemptable`` (``hook``) may return for ``preemptor`` among
        pods of other jobs passes, with its key (``Plugin.victim_bound``). The victims come from the first tier whose
        plugins agree on some, so each passes, in some tier, the tests of every plugin of that tier that has one (a
        tier where none has a test lets any pod through); a tier without the hook never decides. The plugins named in
        ``skip`` are left out, as ``reclaimable`` / ``preemptable`` leave them out."""
        keys: list[tuple[Hashable, ...]] = []
        tiers: list[list[Callable[[TaskState], bool]]] = []
        for whole in self._tier_hooks[hook]:
            tier = [p for p in whole if p.name not in skip]
            if not tier:
                continue
            bounds = [b for b in (p.victim_bound(hook, preemptor) for p in tier) if b is not None]
            if not bounds:
                return ("any",), _anybody
            keys.append(tuple(k for k, _ in bounds))
            tiers.append([f for _, f in bounds])
        if not tiers:
            return ("none",), _nobody
        if len(tiers) == 1:
            return tuple(keys), _all_of(tiers[0])
        each = [_all_of(tests) for tests in tiers]

        def test(task: TaskState) -> bool:
            return any(f(task) for f in each)

        return tuple(keys), test

    def victim_queue_order(self, preemptor_queue: str, left: str, right: str) -> int:
        for p in self._hooks["victim_queue_order"]:
            c = p.victim_queue_order(preemptor_queue, left, right)
            if c:
                return c
        # Volcano: !QueueOrderFn(l, r), the reverse of the queue order
        lk, rk = self.queue_key(left), self.queue_key(right)
        return 0 if lk == rk else (1 if lk < rk else -1)

    def sort_victims(self, victims: Sequence[TaskState], preemptor: TaskState) -> list[TaskState]:
        """Victims in eviction order (Volcano ``BuildVictimsPriorityQueue``): the victim queue order between queues,
        then reverse job order, then reverse task order; ties keep the order given."""
        return self.victim_sorter(preemptor)(victims)

    def victim_sorter(self, preemptor: TaskState) -> Callable[[Sequence[TaskState]], list[TaskState]]:
        """``sort_victims`` for ``preemptor``, taking each victim's keys and each set of queues' ranks once: for
        several lists sorted while the session is unchanged (the keys follow the session's state).

        When the victim queue order ranks the queues present consistently (Fairway's plugins do), the comparison is
        a lexicographic one on per-victim keys, so the victims are sorted on keys; otherwise (or with an orphan pod,
        which compares by task alone) pair by pair, as Volcano does."""
        task_keys: dict[int, tuple[Any, ...]] = {}
        job_keys: dict[int, tuple[Any, ...]] = {}
        ranks: dict[tuple[str, ...], dict[str, int] | None] = {}

        def task_key(v: TaskState) -> tuple[Any, ...]:
            key = task_keys.get(id(v))
            if key is None:
                key = task_keys[id(v)] = self.task_key(v)
            return key

        def job_key(v: TaskState) -> tuple[Any, ...]:
            key = job_keys.get(id(v.pg))
            if key is None:
                assert v.pg is not None
                key = job_keys[id(v.pg)] = self.job_plugin_key(v.pg)
            return key

        def sort(victims: Sequence[TaskState]) -> list[TaskState]:
            if len(victims) < 2:
                return list(victims)
            queues: set[str] = set()
            for v in victims:
                if v.pg is None:
                    return self._sort_victims_pairwise(victims, preemptor)
                queues.add(v.pg.queue)
            rank: dict[str, int] | None = {}
            if len(queues) > 1:
                names = tuple(sorted(queues))
                if names not in ranks:
                    ranks[names] = self._victim_queue_ranks(preemptor.queue, list(names))
                rank = ranks[names]
                if rank is None:
                    return self._sort_victims_pairwise(victims, preemptor)
            # stable sorts from the least significant key up: the lexicographic order, ties in the order given
            out = sorted(victims, key=task_key, reverse=True)
            out.sort(key=job_key, reverse=True)
            if rank:
                order = rank
                out.sort(key=lambda v: order[v.queue])
            return out

        return sort

    def _victim_queue_ranks(self, preemptor_queue: str, queues: list[str]) -> dict[str, int] | None:
        """Each queue's place in the victim queue order for ``preemptor_queue``; None when that order does not rank
        them consistently (two queues compare equal, or a pair compares against the ranks)."""

        def order(left: str, right: str) -> int:
            return self.victim_queue_order(preemptor_queue, left, right)

        ranked = sorted(queues, key=functools.cmp_to_key(order))
        rank = {q: i for i, q in enumerate(ranked)}
        for a in queues:
            for b in queues:
                if a == b:
                    continue
                c = order(a, b)
                if c == 0 or (c < 0) != (rank[a] < rank[b]):
                    return None
        return rank

    def _sort_victims_pairwise(self, victims: Sequence[TaskState], preemptor: TaskState) -> list[TaskState]:
        pq = preemptor.queue

        def cmp(lv: TaskState, rv: TaskState) -> int:
            if lv is rv:
                return 0
            lj, rj = lv.pg, rv.pg
            if lj is rj or lj is None or rj is None:
                return _reverse(self.task_key(lv), self.task_key(rv))
            if lj.queue != rj.queue:
                return self.victim_queue_order(pq, lj.queue, rj.queue)
            c = _reverse(self.job_plugin_key(lj), self.job_plugin_key(rj))
            if c:
                return c
            return _reverse(self.task_key(lv), self.task_key(rv))

        return sorted(victims, key=functools.cmp_to_key(cmp))

    # -- events -----------------------------------------------------------------------------------------------
    def on_allocate(self, task: TaskState) -> None:
        for f in self._on_allocate:
            f(task)
        if self.user_limits is not None:
            self.user_limits.placed(task.job, task.quota_group, task.req, 1)

    def on_deallocate(self, task: TaskState) -> None:
        for f in self._on_deallocate:
            f(task)
        if self.user_limits is not None:
            self.user_limits.placed(task.job, task.quota_group, task.req, -1)


def _reverse(left: tuple[Any, ...], right: tuple[Any, ...]) -> int:
    """-1 when ``left`` comes *later* in the normal order (so it is evicted first)."""
    if left == right:
        return 0
    return -1 if left > right else 1
