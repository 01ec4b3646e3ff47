"""The soak: the real loop of ``make run`` (store, engine, simulated agent, workload generator, node checks,
recycling) for hours of virtual time, with the invariants of a trustworthy control plane checked after every
session.

The clock is injected (time-machine): the loop advances it by ``step`` seconds per round instead of sleeping.
One round runs, as the beat schedule would (at a coarser period): the workload generator (every 2 virtual s of the
round, so jobs arrive at ``make run``'s rate), the scheduling session, the recycling pass, the simulated agent and
the node check. Faults can be injected at given virtual times: a node's plug pulled (and put back) and a control
plane outage (nothing runs for a while, as with the broker down).

Used by ``tests/integration/test_soak.py`` (the suite's soak) and ``bench/bench_soak.py`` (the README's figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

GPU = "nvidia.com/gpu"
OCCUPYING = ("Allocated", "Binding", "Bound", "Running", "Releasing")
FINISHED = ("Succeeded", "Failed")
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


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
    borrowing_hours: set[int] = field(default_factory=set)
    lending_hours: set[int] = field(default_factory=set)
    reclaim_hours: set[int] = field(default_factory=set)
    longest_wait: float = 0.0  # seconds from a podgroup's creation to its first Running (finished ones)
    longest_wait_job: str = ""
    completed_jobs: int = 0
    max_unplaced_inqueue: int = 0  # the longest run of sessions a podgroup stayed Inqueue with nothing placed
    requeues: int = 0
    elapsed: float = 0.0  # wall-clock seconds

    @property
    def hours(self) -> int:
        return self.rounds and max(self.borrowing_hours | self.lending_hours | {0}) + 1

    def summary(self) -> dict[str, Any]:
        util = self.gpu_utilisation
        return {
            "rounds": self.rounds,
            "sessions": self.sessions,
            "binds": self.binds,
            "evictions": dict(self.evictions),
            "saturated_rounds": self.saturated_rounds,
            "gpu_utilisation_min": round(min(util), 3) if util else None,
            "gpu_utilisation_mean": round(sum(util) / len(util), 3) if util else None,
            "hours_with_borrowing": sorted(self.borrowing_hours),
            "hours_with_lending": sorted(self.lending_hours),
            "hours_with_reclaim": sorted(self.reclaim_hours),
            "completed_jobs": self.completed_jobs,
            "longest_wait_s": round(self.longest_wait),
            "longest_wait_job": self.longest_wait_job,
            "max_unplaced_inqueue_sessions": self.max_unplaced_inqueue,
            "requeues": self.requeues,
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
    ) -> None:
        from scheduling.agent import WorkloadSettings

        self.workload = workload if workload is not None else WorkloadSettings()
        self.hours = hours
        self.step = step
        self.faults = faults
        self.floor = saturation_floor
        self.on_round = on_round
        self.report = SoakReport()
        self._bound: set[str] = set()
        self._live: set[int] = set()
        self._first_running: dict[int, float] = {}
        self._created: dict[int, tuple[float, str]] = {}
        self._unplaced: Counter[int] = Counter()
        self._last_session = 0

    # -- the loop ----------------------------------------------------------------------------------------------
    def run(self) -> SoakReport:
        import time

        import time_machine
        from django.core.management import call_command

        from quotas import services
        from scheduling.models import Cluster

        started = time.perf_counter()
        services.ensure_builtins()  # a transactional test's flush removed the migrations' rows
        Cluster.objects.get_or_create(name="default")
        call_command("load_demo", verbosity=0)
        call_command("ensure_schedules", "--simulated", "default", verbosity=0)
        # the node check runs once a round: its timeout spans a few rounds, so that a round is not a silence
        Cluster.objects.filter(name="default").update(
            node_heartbeat_timeout=max(40, 3 * self.step), pod_eviction_timeout=max(300, 5 * self.step)
        )
        self.cluster = Cluster.objects.get(name="default")
        rounds = int(self.hours * 3600 / self.step)
        with time_machine.travel(START, tick=False) as clock:
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
                if self.on_round is not None:
                    self.on_round(self)
                clock.shift(timedelta(seconds=self.step - self._spent))
        self.report.elapsed = time.perf_counter() - started
        return self.report

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
        generate_workload(self.cluster, timezone.now(), settings=self.workload, ticks=max(1, self.step // 2))
        assert tasks.run_session(pk) == "ran", self._last_error()
        self.report.sessions += 1
        assert tasks.recycle(pk) == "ran", self._last_error()

    def _after_session(self) -> None:
        from scheduling import tasks

        pk = self.cluster.pk
        assert tasks.agent_tick(pk) == "ran"
        assert tasks.check_nodes(pk) == "ran"

    def _last_error(self) -> str:
        from scheduling.models import SchedulingSession

        row = SchedulingSession.objects.filter(cluster=self.cluster).order_by("-id").first()
        return row.error if row is not None else ""

    # -- the invariants -----------------------------------------------------------------------------------------
    def _violation(self, t: int, text: str) -> None:
        if len(self.report.violations) < 200:
            self.report.violations.append(f"t={t}s: {text}")

    def _check(self, t: int) -> None:
        """Right after the session (before the agent moves anything), then the agent and the node check run."""
        self._check_sessions(t)
        self._check_nodes_and_pods(t)
        self._check_podgroups(t)
        self._check_quotas(t)
        self._after_session()

    def _check_sessions(self, t: int) -> None:
        from django.db.models import Count

        from scheduling.models import Eviction, SchedulingSession

        for row in SchedulingSession.objects.filter(cluster=self.cluster, pk__gt=self._last_session).order_by("id"):
            self._last_session = row.pk
            if row.status == "failed":
                self._violation(t, f"session {row.pk} failed: {row.error}")
            for uid, _node, pipelined in row.bindings:
                if pipelined:
                    continue
                if uid in self._bound:
                    self._violation(t, f"pod {uid} bound twice")
                self._bound.add(uid)
                self.report.binds += 1
        since = START + timedelta(seconds=t - self.step)
        for action, n in (
            Eviction.objects.filter(cluster=self.cluster, created__gte=since)
            .values_list("action")
            .annotate(n=Count("id"))
        ):
            self.report.evictions[action] += n
            if action == "reclaim":
                self.report.reclaim_hours.add(t // 3600)

    def _check_nodes_and_pods(self, t: int) -> None:
        from scheduling.models import Node, Pod

        nodes = {
            pk: (name, alloc, ready)
            for pk, name, alloc, ready in Node.objects.filter(cluster=self.cluster).values_list(
                "id", "name", "allocatable", "ready"
            )
        }
        used: dict[int, Counter[str]] = {pk: Counter() for pk in nodes}
        live: set[int] = set()
        gpu_pending: Counter[int] = Counter()  # per podgroup
        for pk, node_id, status, request, group in Pod.objects.filter(cluster=self.cluster).values_list(
            "id", "node_id", "status", "request", "podgroup_id"
        ):
            if status not in FINISHED:
                live.add(pk)
            if status in OCCUPYING:
                if node_id is None:
                    self._violation(t, f"pod {pk} is {status} without a node")
                    continue
                used[node_id].update(request)
            elif status == "Pending" and group is not None:
                gpu_pending[group] += request.get(GPU, 0)
        for pk, (name, alloc, _ready) in nodes.items():
            for resource, amount in used[pk].items():
                if amount > alloc.get(resource, 0):
                    self._violation(t, f"node {name} over its allocatable {resource}: {amount} > {alloc.get(resource)}")
        gone = self._live - set(Pod.objects.filter(pk__in=self._live).values_list("id", flat=True))
        for pk in sorted(gone):
            self._violation(t, f"pod {pk} disappeared while it was not finished")
        self._live = live
        capacity = sum(alloc.get(GPU, 0) for _pk, (_n, alloc, ready) in nodes.items() if ready)
        occupied = sum(used[pk].get(GPU, 0) for pk, (_n, _a, ready) in nodes.items() if ready)
        self._gpu = (capacity, occupied, gpu_pending)

    def _check_podgroups(self, t: int) -> None:
        from django.db.models import Sum

        from scheduling.models import PodGroup

        now = (START + timedelta(seconds=t)).timestamp() + self._spent
        admissible_gpu = 0
        seen: set[int] = set()
        capacity, occupied, pending = self._gpu
        for pk, name, phase, reason, unplaced, created, blocker in PodGroup.objects.filter(
            cluster=self.cluster
        ).values_list("id", "name", "phase", "reason", "unplaced_sessions", "created", "blocker"):
            seen.add(pk)
            if admissible(phase, blocker):
                admissible_gpu += pending.get(pk, 0)
            self._created.setdefault(pk, (created.timestamp(), name))
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
        self.report.requeues = int(PodGroup.objects.filter(cluster=self.cluster).aggregate(n=Sum("requeues"))["n"] or 0)
        finished = [pk for pk in self._created if pk not in seen]
        self.report.completed_jobs += len(finished)
        for pk in finished:
            self._created.pop(pk)
            self._first_running.pop(pk, None)
        self._admissible_gpu = admissible_gpu
        if capacity and admissible_gpu and occupied + admissible_gpu >= capacity:
            self.report.saturated_rounds += 1
            util = occupied / capacity
            self.report.gpu_utilisation.append(util)

    def _check_quotas(self, t: int) -> None:
        from scheduling.models import QuotaSample

        hour = t // 3600
        if hour in self.report.borrowing_hours and hour in self.report.lending_hours:
            return
        at = START + timedelta(seconds=t) + timedelta(seconds=self._spent)
        for borrowed, lent in QuotaSample.objects.filter(
            cluster=self.cluster, time__gte=at - timedelta(seconds=1)
        ).values_list("borrowed", "lent"):
            if any(v > 0 for v in (borrowed or {}).values()):
                self.report.borrowing_hours.add(hour)
            if any(v > 0 for v in (lent or {}).values()):
                self.report.lending_hours.add(hour)
