"""The soak: the real loop of ``make run`` (store, engine, simulated agent, workload generator, node checks,
recycling) for hours of virtual time, with the invariants of a trustworthy control plane checked after every
session.

The clock is injected (time-machine): the loop advances it by ``step`` seconds per round instead of sleeping.
One round runs, as the beat schedule would (at a coarser period): the workload generator (every 2 virtual s of the
round, so jobs arrive at ``make run``'s rate), the scheduling session, the recycling pass, the simulated agent and
the node check. Faults can be injected at given virtual times: a node's plug pulled (and put back) and a control
plane outage (nothing runs for a while, as with the broker down).

Used by ``tests/integration/test_soak.py`` (the suite's soak) and ``bench/bench_soak.py`` (the figures of docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.vocabulary import ALLOCATED_STATUSES, FINISHED_STATUSES, OCCUPYING_STATUSES

GPU = "nvidia.com/gpu"
OCCUPYING = tuple(OCCUPYING_STATUSES)
FINISHED = tuple(FINISHED_STATUSES)
# what a gang keeps on its nodes by the scheduler's choice: a Releasing pod was let go (its node's agent finishes it,
# or the node-lost timeout when its node is dead), so a gang of Releasing pods holds nothing the scheduler could free
KEPT = tuple(ALLOCATED_STATUSES)
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
RETRY = re.compile(r"(-r\d+)+$")  # the simulated job controller names a pod's replacements <name>-r<N>
# A policy without a gang repair timeout or a minimum runtime (Volcano's, or older code's) is measured with these:
# the figures of two runs compare; a violation is only what the policy promised.
MEASURED_GANG_REPAIR = 5.0
MEASURED_MIN_RUNTIME = 60.0


@dataclass(frozen=True)
class Fault:
    """At ``at`` seconds: ``kind`` is ``node-down`` (``node``'s plug pulled for ``seconds``) or ``outage`` (no task
    runs for ``seconds``)."""

    at: int
    kind: str
    seconds: int
    node: str = ""


@dataclass
class SoakReport:
    """What the soak saw; ``violations`` lists every broken invariant (empty when all held)."""

    rounds: int = 0
    sessions: int = 0
    binds: int = 0
    evictions: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    saturated_rounds: int = 0  # rounds where admissible GPU demand exceeded the GPUs of ready nodes
    gpu_utilisation: list[float] = field(default_factory=list)  # in those rounds, after the session
    # Of those rounds, all but the "shape-blocked" ones: GPUs idle, and no admissible job with GPU demand could start
    # on the room free after the session as it stands (its pods up to its minimum, by cpu, memory and GPUs on the
    # ready nodes, selectors and taints ignored): every admitted GPU job needs more, or other shapes, than the free
    # room offers (a 4 x 2-GPU gang and 8 free GPUs in 1-GPU holes), and only an eviction or a pod finishing lets it
    # start. Those are counted, with their longest run, so that packing which leaves holes shows there rather than
    # disappearing from the figure.
    gpu_utilisation_usable: list[float] = field(default_factory=list)
    shape_blocked_rounds: int = 0
    shape_blocked_longest: int = 0  # the longest run of consecutive shape-blocked rounds
    borrowing_hours: set[int] = field(default_factory=set)
    lending_hours: set[int] = field(default_factory=set)
    reclaim_hours: set[int] = field(default_factory=set)
    longest_wait: float = 0.0  # seconds from a podgroup's creation to its first Running (finished ones)
    longest_wait_job: str = ""
    completed_jobs: int = 0
    max_unplaced_inqueue: int = 0  # the longest run of sessions a podgroup stayed Inqueue with nothing placed
    requeues: int = 0
    rounds_seconds: int = 0  # virtual seconds covered by the rounds that ran
    # Issue 26's figures. Gangs below their minimum while holding nodes: the GPU-seconds they held once past the
    # bound (the policy's gangRepairTimeout plus one round to notice).
    broken_gang_gpu_seconds: int = 0
    stalled_pod_seconds: int = 0  # pod-seconds of running pods whose gang was below its minimum (no progress)
    # Pods evicted by reclaim or preempt within the policy's minRuntime of being placed, by an evictor of no
    # higher priority (thrash); and all reclaim/preempt evictions within minRuntime whatever the priorities.
    thrash: int = 0
    evicted_twice_in_a_minute: int = 0  # a job's task (its replacements included) evicted again within 60 s
    early_evictions: int = 0
    # Per leaf-or-parent queue and resource (cpu, GPUs): rounds in which it asked for at least its deserved, and
    # the sums of its allocated and deserved shares of the ready nodes in those rounds (time-averaged shares).
    share_rounds: Counter[tuple[str, str]] = field(default_factory=Counter)
    share_allocated: Counter[tuple[str, str]] = field(default_factory=Counter)
    share_deserved: Counter[tuple[str, str]] = field(default_factory=Counter)
    share_useful: Counter[tuple[str, str]] = field(default_factory=Counter)  # allocated, less broken gangs' holdings
    elapsed: float = 0.0  # wall-clock seconds

    @property
    def hours(self) -> int:
        return self.rounds and max(self.borrowing_hours | self.lending_hours | {0}) + 1

    def share_gaps(self, useful: bool = False) -> dict[str, float]:
        """Per "queue resource": its time-averaged allocated share (``useful``: less what its gangs below their
        minimum held, which runs nothing) minus its deserved share (percentage points of the ready nodes), over the
        rounds it asked for at least its deserved."""
        out: dict[str, float] = {}
        got = self.share_useful if useful else self.share_allocated
        for key, n in sorted(self.share_rounds.items()):
            gap = (got[key] - self.share_deserved[key]) / n * 100
            out[f"{key[0]} {'GPUs' if key[1] == GPU else key[1]}"] = round(gap, 1)
        return out

    def summary(self) -> dict[str, Any]:
        util = self.gpu_utilisation
        hours = self.rounds_seconds / 3600 if self.rounds_seconds else 0
        gaps = self.share_gaps()
        return {
            "rounds": self.rounds,
            "sessions": self.sessions,
            "binds": self.binds,
            "evictions": dict(self.evictions),
            "saturated_rounds": self.saturated_rounds,
            "gpu_utilisation_min": round(min(util), 3) if util else None,
            "gpu_utilisation_mean": round(sum(util) / len(util), 3) if util else None,
            "gpu_utilisation_usable_min": round(min(usable), 3) if (usable := self.gpu_utilisation_usable) else None,
            "shape_blocked_rounds": self.shape_blocked_rounds,
            "shape_blocked_longest_rounds": self.shape_blocked_longest,
            "hours_with_borrowing": sorted(self.borrowing_hours),
            "hours_with_lending": sorted(self.lending_hours),
            "hours_with_reclaim": sorted(self.reclaim_hours),
            "completed_jobs": self.completed_jobs,
            "longest_wait_s": round(self.longest_wait),
            "longest_wait_job": self.longest_wait_job,
            "max_unplaced_inqueue_sessions": self.max_unplaced_inqueue,
            "requeues": self.requeues,
            "evictions_per_bound_pod": round(sum(self.evictions.values()) / self.binds, 4) if self.binds else None,
            "completed_jobs_per_hour": round(self.completed_jobs / hours, 1) if hours else None,
            "broken_gang_gpu_seconds": self.broken_gang_gpu_seconds,
            "stalled_pod_seconds": self.stalled_pod_seconds,
            "thrash": self.thrash,
            "evicted_twice_in_a_minute": self.evicted_twice_in_a_minute,
            "early_evictions": self.early_evictions,
            "worst_share_gap_pp": min(gaps.values(), default=0.0),
            "worst_useful_share_gap_pp": min(self.share_gaps(useful=True).values(), default=0.0),
            "share_gaps_pp": gaps,
            "violations": len(self.violations),
            "elapsed_s": round(self.elapsed, 1),
        }


def admissible(phase: str, blocker: dict[str, Any] | None) -> bool:
    """Is a waiting podgroup's demand admissible: admitted (Inqueue), or refused admission only because the
    cluster's resources are busy right now (not by a queue, a quota group, a namespace quota, or a pod that no
    node can ever hold)?"""
    if phase == "Inqueue":
        return True
    if phase != "Pending" or not blocker:
        return False
    return blocker.get("kind") == "cluster" and blocker.get("limit") in ("overcommit", "idle")


FIT_BUDGET = 20_000  # placements tried before a search gives up and counts the pods as fitting (the strict answer)
FIT_RESOURCES = ("cpu", "memory", GPU)


def fits(pods: list[dict[str, int]], free: list[dict[str, int]], budget: int = FIT_BUDGET) -> bool:
    """Can every pod of ``pods`` (requests) be placed together on the nodes' ``free`` room (cpu, memory and GPUs per
    node), by some placement? An exact search (largest pods first, identical pods on non-decreasing nodes, nodes
    with the same room tried once per pod); past ``budget`` placements it answers True, the answer that counts the
    room as usable."""
    need = sorted(
        (tuple(p.get(r, 0) for r in FIT_RESOURCES) for p in pods), key=lambda v: (v[2], v[0], v[1]), reverse=True
    )
    room = [[n.get(r, 0) for r in FIT_RESOURCES] for n in free]
    if any(sum(n[i] for n in room) < sum(p[i] for p in need) for i in range(len(FIT_RESOURCES))):
        return False
    tries = 0

    def place(i: int, start: int) -> bool:
        nonlocal tries
        if i == len(need):
            return True
        pod, seen = need[i], set()
        for k in range(start, len(room)):
            node = room[k]
            if tuple(node) in seen or any(node[j] < pod[j] for j in range(len(pod))):
                continue
            seen.add(tuple(node))
            tries += 1
            if tries > budget:
                return True
            for j in range(len(pod)):
                node[j] -= pod[j]
            ok = place(i + 1, k if i + 1 < len(need) and need[i + 1] == pod else 0)
            for j in range(len(pod)):
                node[j] += pod[j]
            if ok:
                return True
        return False

    return place(0, 0)


def could_start(jobs: list[tuple[list[dict[str, int]], int]], free: list[dict[str, int]]) -> bool:
    """Could one of ``jobs`` — each its pending pods' requests and how many of them it needs to start (what its
    minimum still lacks, at least one) — start on the ``free`` room as it stands? Each job is tried with its
    smallest pending pods (the likeliest to fit)."""
    for pending, needed in jobs:
        chosen = sorted(pending, key=lambda p: tuple(p.get(r, 0) for r in (GPU, "cpu", "memory")))[: max(1, needed)]
        if chosen and fits(chosen, free):
            return True
    return False


class Soak:
    """One soak run over the demo cluster (``load_demo`` + ``ensure_schedules --simulated default``)."""

    def __init__(
        self,
        *,
        hours: float,
        step: int = 10,
        faults: tuple[Fault, ...] = (),
        saturation_floor: float = 0.85,
        workload: Any = None,
        on_round: Callable[[Soak], None] | None = None,
        on_saturated: Callable[[Soak, float, bool], None] | None = None,
        seed: int = 0,
        policy: str | None = None,
        stall_broken_gangs: bool = True,
    ) -> None:
        from scheduling.agent import WorkloadSettings

        self.workload = workload if workload is not None else WorkloadSettings()
        self.hours = hours
        self.step = step
        self.faults = faults
        self.floor = saturation_floor
        self.on_round = on_round
        self.on_saturated = on_saturated  # called with the GPU allocation and whether admitted work could start
        self.seed = seed
        self.stall_broken_gangs = stall_broken_gangs
        self.policy = policy  # the cluster's scheduler policy (YAML); None: the demo's
        self.report = SoakReport()
        self._placed: dict[str, float] = {}  # pod uid -> virtual time of its latest placement
        self._below_min: dict[int, float] = {}  # podgroup pk -> virtual time it was first seen below its minimum
        self._last_eviction = 0
        self._task_evicted: dict[str, float] = {}  # a job's task -> when it was last evicted
        self._idle_held: Counter[tuple[str, str]] = Counter()
        self._bound: set[str] = set()
        self._live: set[int] = set()
        self._first_running: dict[int, float] = {}
        self._created: dict[int, tuple[float, str]] = {}
        self._unplaced: Counter[int] = Counter()
        self._last_session = 0
        self._blocked_run = 0  # consecutive shape-blocked saturated rounds

    # -- the loop ----------------------------------------------------------------------------------------------
    def run(self) -> SoakReport:
        import time

        import time_machine

        started = time.perf_counter()
        rounds = int(self.hours * 3600 / self.step)
        with time_machine.travel(START, tick=False) as clock:
            self._set_up()
            self.clock = clock
            for i in range(rounds):
                t = i * self.step
                if self._outage(t):
                    clock.shift(timedelta(seconds=self.step))
                    continue
                self._apply_faults(t)
                self._round(clock)
                self._check(t)
                self.report.rounds += 1
                self.report.rounds_seconds += self.step
                if self.on_round is not None:
                    self.on_round(self)
                clock.shift(timedelta(seconds=self.step - self._spent))
        self.report.elapsed = time.perf_counter() - started
        return self.report

    def _set_up(self) -> None:
        """The demo loaded at ``START``, on the virtual clock: its first jobs are created when the first session sees
        them (as ``make run``'s are, a moment before its first session). Loaded on the wall clock instead, they were
        created after every job of the virtual hours, so they came last among jobs of their priority (the session
        orders jobs of one priority by creation), while a trace of the soak submits them at ``START``, first."""
        from django.core.management import call_command

        from quotas import services
        from scheduling.models import Cluster

        services.ensure_builtins()  # a transactional test's flush removed the migrations' rows
        Cluster.objects.get_or_create(name="default")
        call_command("load_demo", verbosity=0)
        call_command("ensure_schedules", "--simulated", "default", verbosity=0)
        # the node check runs once a round: its timeout spans a few rounds, so that a round is not a silence
        Cluster.objects.filter(name="default").update(
            node_heartbeat_timeout=max(40, 3 * self.step), pod_eviction_timeout=max(300, 5 * self.step)
        )
        if self.policy is not None:
            Cluster.objects.filter(name="default").update(scheduler_policy=self.policy)
        self.cluster = Cluster.objects.get(name="default")
        self._read_policy()

    def trace(self) -> Any:
        """What the soak did, as a trace (``engine.replay.trace``, source ``soak``; after ``run``): the jobs with
        their recorded starts and finishes, the tree and the nodes, on the soak's grid (``period``: one round). Its
        window runs from ``START`` to the last round. The tree is read as it is now (the soak edits none); the demo's
        first jobs were created at ``START`` (``_set_up``), and each job is submitted when its podgroup was created,
        the moment the live sessions ordered it by."""
        import dataclasses

        from django.utils import timezone

        from planning.trace import build_trace

        end = START + timedelta(seconds=(int(self.hours * 3600 / self.step) - 1) * self.step)
        now = timezone.now()
        trace = build_trace(self.cluster, START, now, period=self.step, source="soak", tree_at=now)
        trace.header = dataclasses.replace(trace.header, end=end.timestamp())
        trace.edits = [e for e in trace.edits if e.time <= end.timestamp()]
        return trace

    def _outage(self, t: int) -> bool:
        return any(f.kind == "outage" and f.at <= t < f.at + f.seconds for f in self.faults)

    def _apply_faults(self, t: int) -> None:
        from scheduling.agent import SIMULATE_DOWN_LABEL
        from scheduling.models import Node

        for f in self.faults:
            if f.kind != "node-down":
                continue
            node = Node.objects.get(cluster=self.cluster, name=f.node)
            down = f.at <= t < f.at + f.seconds
            labels = dict(node.labels)
            if down and labels.get(SIMULATE_DOWN_LABEL) != "true":
                labels[SIMULATE_DOWN_LABEL] = "true"
            elif not down and SIMULATE_DOWN_LABEL in labels:
                del labels[SIMULATE_DOWN_LABEL]
            else:
                continue
            Node.objects.filter(pk=node.pk).update(labels=labels)

    def _round(self, clock: Any) -> None:
        from django.utils import timezone

        from scheduling import tasks
        from scheduling.agent import generate_workload

        pk = self.cluster.pk
        self._spent = 0
        # the generator's beats of the round (every 2 s, as the beat schedule submits jobs), then the session
        generate_workload(
            self.cluster, timezone.now(), seed=self.seed, settings=self.workload, ticks=max(1, self.step // 2)
        )
        assert tasks.run_session(pk) == "ran", self._last_error()
        self.report.sessions += 1
        assert tasks.recycle(pk) == "ran", self._last_error()

    def _after_session(self) -> None:
        from scheduling import tasks

        pk = self.cluster.pk
        assert tasks.agent_tick(pk) == "ran"
        assert tasks.check_nodes(pk) == "ran"
        if self.stall_broken_gangs:
            self._stall_broken_gangs()

    def _stall_broken_gangs(self) -> None:
        """A gang below its minimum makes no progress (its members wait for each other, as a distributed training
        job does): its running pods' start moves on by the round, so they finish that much later. The simulated
        agent finishes every pod after its duration whether or not its gang is whole, which would count a broken
        gang's work as done and make breaking gangs look free."""
        from django.db.models import Count, F, Q

        from scheduling.models import Pod

        broken = (
            Pod.objects.filter(cluster=self.cluster, podgroup__min_member__gt=1)
            .values("podgroup_id", "podgroup__min_member")
            .annotate(
                running=Count("id", filter=Q(status="Running")),
                whole=Count("id", filter=Q(status__in=("Running", "Succeeded"))),
            )
            .filter(running__gt=0, whole__lt=F("podgroup__min_member"))
            .values_list("podgroup_id", flat=True)
        )
        stalled = Pod.objects.filter(cluster=self.cluster, podgroup_id__in=list(broken), status="Running").update(
            started=F("started") + timedelta(seconds=self.step)
        )
        self.report.stalled_pod_seconds += stalled * self.step

    def _last_error(self) -> str:
        from scheduling.models import SchedulingSession

        row = SchedulingSession.objects.filter(cluster=self.cluster).order_by("-id").first()
        return row.error if row is not None else ""

    # -- the invariants -----------------------------------------------------------------------------------------
    def _violation(self, t: int, text: str) -> None:
        if len(self.report.violations) < 200:
            self.report.violations.append(f"t={t}s: {text}")

    def _read_policy(self) -> None:
        from engine.policy.policy import Policy

        policy = Policy.from_yaml(self.cluster.scheduler_policy) if self.cluster.scheduler_policy else None
        # getattr: bench/bench_gangs.py runs this harness over older code too, which has neither setting. A policy
        # without them is measured against the defaults (so that runs compare), and breaking them is a violation
        # only where the policy promises them.
        runtime = getattr(policy, "min_runtime", None)
        promised = {a: runtime(a) if runtime else 0.0 for a in ("reclaim", "preempt")}
        self.min_runtime = {a: v or MEASURED_MIN_RUNTIME for a, v in promised.items()}
        self.runtime_promised = {a: v > 0 for a, v in promised.items()}
        # minRuntimeHigherPriority: wait promises more: no preempt victim within the window, whatever the priorities
        higher = getattr(policy, "min_runtime_higher_priority", None)
        self.runtime_waits = bool(higher) and higher("preempt") == "wait" and self.runtime_promised["preempt"]
        repair = getattr(policy.enqueue_args(), "gang_repair_timeout", 0.0) if policy else 0.0
        # a gang found broken is released by the first session past the timeout: one round after it at most
        self.gang_bound = (repair or MEASURED_GANG_REPAIR) + self.step
        self.gang_promised = repair > 0

    def _check(self, t: int) -> None:
        """Right after the session (before the agent moves anything), then the agent and the node check run."""
        self._check_sessions(t)
        self._check_nodes_and_pods(t)
        self._check_podgroups(t)
        self._check_gangs(t)
        self._check_evictions(t)
        self._check_quotas(t)
        self._check_shares(t)
        self._after_session()

    def _check_sessions(self, t: int) -> None:
        from scheduling.models import SchedulingSession

        for row in SchedulingSession.objects.filter(cluster=self.cluster, pk__gt=self._last_session).order_by("id"):
            self._last_session = row.pk
            if row.status == "failed":
                self._violation(t, f"session {row.pk} failed: {row.error}")
            at = row.started.timestamp()
            for uid, _node, pipelined in row.bindings:
                self._placed[uid] = at  # placed or pipelined: the minimum runtime counts from either
                if pipelined:
                    continue
                if uid in self._bound:
                    self._violation(t, f"pod {uid} bound twice")
                self._bound.add(uid)
                self.report.binds += 1

    def _check_nodes_and_pods(self, t: int) -> None:
        """One read of the cluster's pods per round (with their gang's minimum and queue, for ``_check_gangs``): no
        node over its allocatable, no occupying pod without a node, no live pod gone; the GPUs and free room."""
        from scheduling.models import Node, Pod

        nodes = {
            pk: (name, alloc, ready)
            for pk, name, alloc, ready in Node.objects.filter(cluster=self.cluster).values_list(
                "id", "name", "allocatable", "ready"
            )
        }
        self._ready_allocatable = [alloc for _n, alloc, ready in nodes.values() if ready]
        used: dict[int, Counter[str]] = {pk: Counter() for pk in nodes}
        live: set[int] = set()
        present: set[int] = set()
        gpu_pending: Counter[int] = Counter()  # per podgroup
        self._pending_pods: dict[int, list[dict[str, int]]] = {}  # per podgroup: its Pending pods' requests
        self._members: Counter[int] = Counter()  # per podgroup: pods that count towards its minimum
        self._gang_pods: list[tuple[int, str, dict[str, int], int, str]] = []  # pods of gangs (minimum above one)
        for pk, node_id, status, request, group, min_member, queue in Pod.objects.filter(
            cluster=self.cluster
        ).values_list(
            "id", "node_id", "status", "request", "podgroup_id", "podgroup__min_member", "podgroup__queue__name"
        ):
            present.add(pk)
            if group is not None and min_member > 1:
                self._gang_pods.append((group, status, request, min_member, queue))
            if status not in FINISHED:
                live.add(pk)
            if status in (*OCCUPYING, "Pipelined", "Succeeded") and group is not None:
                self._members[group] += 1
            if status in OCCUPYING:
                if node_id is None:
                    self._violation(t, f"pod {pk} is {status} without a node")
                    continue
                used[node_id].update(request)
            elif status == "Pending" and group is not None:
                gpu_pending[group] += request.get(GPU, 0)
                self._pending_pods.setdefault(group, []).append(request)
        for pk, (name, alloc, _ready) in nodes.items():
            for resource, amount in used[pk].items():
                if amount > alloc.get(resource, 0):
                    self._violation(t, f"node {name} over its allocatable {resource}: {amount} > {alloc.get(resource)}")
        for pk in sorted(self._live - present):  # every pod of the cluster was read: one not there is gone
            self._violation(t, f"pod {pk} disappeared while it was not finished")
        self._live = live
        capacity = sum(alloc.get(GPU, 0) for _pk, (_n, alloc, ready) in nodes.items() if ready)
        occupied = sum(used[pk].get(GPU, 0) for pk, (_n, _a, ready) in nodes.items() if ready)
        self._gpu = (capacity, occupied, gpu_pending)
        self._free = [
            {r: alloc.get(r, 0) - used[pk].get(r, 0) for r in FIT_RESOURCES}
            for pk, (_n, alloc, ready) in nodes.items()
            if ready
        ]

    def _check_podgroups(self, t: int) -> None:
        from scheduling.models import PodGroup

        now = (START + timedelta(seconds=t)).timestamp() + self._spent
        admissible_gpu = 0
        seen: set[int] = set()
        capacity, occupied, pending = self._gpu
        admitted: list[tuple[list[dict[str, int]], int]] = []  # admissible jobs with GPU demand: pods, how many needed
        requeues = 0
        for pk, name, phase, reason, unplaced, created, blocker, min_member, requeued in PodGroup.objects.filter(
            cluster=self.cluster
        ).values_list(
            "id", "name", "phase", "reason", "unplaced_sessions", "created", "blocker", "min_member", "requeues"
        ):
            seen.add(pk)
            requeues += requeued
            if admissible(phase, blocker) and pending.get(pk, 0):
                admissible_gpu += pending[pk]
                admitted.append((self._pending_pods[pk], min_member - self._members[pk]))
            if pk not in self._created:
                self._created[pk] = (created.timestamp(), name)
                if created.timestamp() > now:  # the sessions would order it after every job of the virtual hours
                    self._violation(t, f"podgroup {name} created {created.timestamp() - now:.0f}s after the clock")
            if phase in ("Running", "Completed"):
                if pk not in self._first_running:
                    self._first_running[pk] = now
                    wait = now - self._created[pk][0]
                    if wait > self.report.longest_wait:
                        self.report.longest_wait, self.report.longest_wait_job = wait, name
                self._unplaced.pop(pk, None)
                continue
            if not reason:
                self._violation(t, f"podgroup {name} is {phase} without a reason")
            self.report.max_unplaced_inqueue = max(self.report.max_unplaced_inqueue, unplaced)
            if unplaced > 3:
                self._violation(t, f"podgroup {name} Inqueue for {unplaced} sessions without a place")
        self.report.requeues = requeues  # every podgroup of the cluster was read
        finished = [pk for pk in self._created if pk not in seen]
        self.report.completed_jobs += len(finished)
        for pk in finished:
            self._created.pop(pk)
            self._first_running.pop(pk, None)
        self._admissible_gpu = admissible_gpu
        if capacity and admissible_gpu and occupied + admissible_gpu >= capacity:
            self._saturated(occupied, capacity, admitted)
        else:
            self._blocked_run = 0

    def _saturated(self, occupied: int, capacity: int, admitted: list[tuple[list[dict[str, int]], int]]) -> None:
        """A round where admissible GPU demand met what is free: its GPU allocation, and whether it is shape-blocked
        (GPUs idle, and no admitted GPU job could start on the free room as it stands: ``could_start``)."""
        util = occupied / capacity
        self.report.saturated_rounds += 1
        self.report.gpu_utilisation.append(util)
        blocked = occupied < capacity and not could_start(admitted, self._free)
        if blocked:
            self.report.shape_blocked_rounds += 1
            self._blocked_run += 1
            self.report.shape_blocked_longest = max(self.report.shape_blocked_longest, self._blocked_run)
        else:
            self.report.gpu_utilisation_usable.append(util)
            self._blocked_run = 0
        if self.on_saturated is not None:
            self.on_saturated(self, util, not blocked)

    def _check_quotas(self, t: int) -> None:
        hour = t // 3600
        if hour in self.report.borrowing_hours and hour in self.report.lending_hours:
            return
        at = START + timedelta(seconds=t) + timedelta(seconds=self._spent)
        for borrowed, lent in self._latest_samples(at, None, ("borrowed", "lent")):
            if any(v > 0 for v in (borrowed or {}).values()):
                self.report.borrowing_hours.add(hour)
            if any(v > 0 for v in (lent or {}).values()):
                self.report.lending_hours.add(hour)

    def _check_gangs(self, t: int) -> None:
        """Gangs below their minimum while holding nodes: counted from when first seen so; past the bound (the
        gang repair timeout plus a round), the GPUs they hold count as wasted, and it is a violation."""
        now = (START + timedelta(seconds=t)).timestamp() + self._spent
        holding: Counter[int] = Counter()
        counted: Counter[int] = Counter()  # holding, pipelined or finished well: what makes the gang whole
        gpus: Counter[int] = Counter()
        held: dict[int, Counter[str]] = {}  # per podgroup: cpu and GPUs its pods hold
        minimum: dict[int, int] = {}
        queue_of: dict[int, str] = {}
        for group, status, request, min_member, queue in self._gang_pods:  # read by _check_nodes_and_pods
            minimum[group], queue_of[group] = min_member, queue
            if status in KEPT:
                holding[group] += 1
                gpus[group] += request.get(GPU, 0)
                held.setdefault(group, Counter()).update({r: request.get(r, 0) for r in ("cpu", GPU)})
            if status in (*OCCUPYING, "Pipelined", "Succeeded"):
                counted[group] += 1
        broken = {g for g, n in holding.items() if n and counted[g] < minimum[g]}
        # what broken gangs hold runs nothing: per queue and each of its ancestors, taken off its useful share
        self._idle_held = Counter()
        for group in broken:
            for queue in self._lineage(queue_of[group]):
                for r, v in held[group].items():
                    self._idle_held[(queue, r)] += v
        for group in list(self._below_min):
            if group not in broken:
                del self._below_min[group]
        for group in broken:
            since = self._below_min.setdefault(group, now)
            if now - since > self.gang_bound:
                self.report.broken_gang_gpu_seconds += gpus[group] * self.step // 1000
                if self.gang_promised:
                    self._violation(t, f"podgroup {group} below its minimum for {now - since:.0f}s, holding nodes")

    def _lineage(self, queue: str | None) -> list[str]:
        """``queue`` and its ancestors (names), from a map read once."""
        if not hasattr(self, "_parents"):
            from quotas.models import Queue

            self._parents = dict(Queue.objects.values_list("name", "parent__name"))
        out: list[str] = []
        while queue and queue not in out:
            out.append(queue)
            queue = self._parents.get(queue)
        return out

    def _check_evictions(self, t: int) -> None:
        """Every eviction counted once by action; reclaim and preempt evictions of pods placed less than the
        action's minRuntime before (thrash unless the evictor's priority is strictly higher)."""
        from scheduling.models import Eviction, Pod

        rows = list(
            Eviction.objects.filter(cluster=self.cluster, pk__gt=self._last_eviction)
            .order_by("id")
            .values_list("id", "action", "pod_uid", "preemptor", "created")
        )
        if not rows:
            return
        self._last_eviction = rows[-1][0]
        uids = {r[2] for r in rows} | {r[3] for r in rows if r[3]}
        priority: dict[str, int] = {}
        for ns, name, prio in Pod.objects.filter(
            cluster=self.cluster, name__in={u.split("/", 1)[-1] for u in uids}
        ).values_list("namespace__name", "name", "priority"):
            priority[f"{ns}/{name}"] = prio
        for _pk, action, uid, preemptor, created in rows:
            self.report.evictions[action] += 1  # each row once (by id: a time window counted a boundary's twice)
            # the same task of a job (its replacements are <name>-r<N>) evicted twice within a minute
            task, at = RETRY.sub("", uid), created.timestamp()
            if action != "node-lost" and at - self._task_evicted.get(task, -1e18) < 60:
                self.report.evicted_twice_in_a_minute += 1
            if action != "node-lost":
                self._task_evicted[task] = at
            if action == "reclaim":
                self.report.reclaim_hours.add(t // 3600)
            window = self.min_runtime.get(action, 0.0)
            placed = self._placed.get(uid)
            if not window or placed is None or created.timestamp() - placed >= window:
                continue
            self.report.early_evictions += 1
            if priority.get(preemptor, 0) > priority.get(uid, 0) and preemptor:
                if action == "preempt" and self.runtime_waits:
                    self._violation(t, f"preempt evicted {uid} {at - placed:.0f}s after it was placed (policy: wait)")
                continue  # a strictly higher priority may evict within the window
            self.report.thrash += 1
            if self.runtime_promised[action]:
                self._violation(t, f"{action} evicted {uid} {created.timestamp() - placed:.0f}s after it was placed")

    def _latest_samples(self, at: datetime, kind: str | None, fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """Each tree node's values at ``at``: its latest sample. A session writes a node's sample when
        its values changed, and at least every ``FAIRWAY_SAMPLE_EVERY_SECONDS`` otherwise."""
        from django.conf import settings

        from scheduling.models import QuotaSample

        window = timedelta(seconds=float(settings.FAIRWAY["SAMPLE_EVERY_SECONDS"]) + 1)
        rows = QuotaSample.objects.filter(cluster=self.cluster, time__gt=at - window)
        if kind is not None:
            rows = rows.filter(kind=kind)
        latest: dict[tuple[str, str], tuple[Any, ...]] = {}
        for row in rows.order_by("time", "id").values_list("kind", "name", *fields):
            latest[(row[0], row[1])] = row[2:]
        return list(latest.values())

    def _check_shares(self, t: int) -> None:
        """Each queue's allocated and deserved shares of the ready nodes (cpu and GPUs), in the rounds it asked for
        at least its deserved."""
        capacity: Counter[str] = Counter()
        for alloc in self._ready_allocatable:  # read by _check_nodes_and_pods this round
            capacity.update({r: alloc.get(r, 0) for r in ("cpu", GPU)})
        at = START + timedelta(seconds=t) + timedelta(seconds=self._spent)
        for name, request, allocated, deserved in self._latest_samples(
            at, "queue", ("name", "request", "allocated", "deserved")
        ):
            if name == "root":
                continue
            for r in ("cpu", GPU):
                want, fair = (request or {}).get(r, 0), (deserved or {}).get(r, 0)
                if not capacity[r] or fair <= 0 or want < fair:
                    continue
                key = (name, r)
                self.report.share_rounds[key] += 1
                got = (allocated or {}).get(r, 0)
                self.report.share_allocated[key] += got / capacity[r]
                self.report.share_useful[key] += max(0, got - self._idle_held[key]) / capacity[r]
                self.report.share_deserved[key] += fair / capacity[r]
