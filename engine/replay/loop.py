"""Replay a trace in virtual time with the real engine (``engine.session.run``): no second engine.

Sessions run on the period's grid (``from + k * period``), and only where something can change: at the first grid
point at or after a job's arrival or a tree edit, strictly after a pod's finish (an agent reports a finish after the
session of that instant), when recycling's delay (``delayEvictTime``) of a group over its quota runs out, when the
engine's own clock could change a decision (``engine.session.clock.time_horizon``: a gang's repair timeout, a pod's
minimum runtime; a podgroup's requeue backoff), and at the next grid point after a session that decided anything
(its pipelined pods, its admitted gangs). Periods with none of these are skipped: a session there would decide
exactly what the last one did.

Jobs: each pod runs its own recorded runtime (``podRuntimes``) or else its job's ``runtime`` from its own start (a
job without one: a draw from its queue's recorded runtimes, seeded by ``seed`` and the job's name, or until the
window's end when the queue has none). An evicted pod (reclaim, preempt, recycling) is Pending again at once, as its
job controller's replacement (under its own name and creation, or, the trace's ``replacements: new``, as a new pod
``<name>-r<N>`` created then, as the simulated job controller makes it), and restarts its work from the beginning
when placed again; its podgroup keeps the phase its session gave it, as the store does. Jobs of one priority go by
their creation: a job's ``submit``, and once it has started its ``created`` where the trace has one (a job already
running when first mirrored, whose row came after its start). After each session a recycling pass runs, as the control plane's beat
does. Pipelined pods stay Pending with their nominated node, as the store keeps them.

Kueue's ResourceFlavors (a Tree with ``ResourceFlavor`` objects and ClusterQueues with quota per flavor): before each
session the waiting jobs are given their flavors and the admitted ones keep theirs, with the functions the live session
and ``fairway simulate`` use (``engine.flavors.with_kept_flavors``, ``assign_flavors``); a pod keeps its flavored
request (``cpu@spot``) while it runs and when evicted (its job stays admitted), and the usage, the samples and the
runs are counted per resource, the flavors added up. ``JobOutcome.flavors`` is the flavor each job started on.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.amounts import raw
from engine.changes import ProposalError, apply_changes
from engine.collector import paused, settle, thawed_after
from engine.flavors import FlavorMemo, assign_flavors, flavor_of_request, with_kept_flavors
from engine.manifests import load_objects
from engine.objects import PodGroupInfo, PodGroupPhase, Snapshot, TaskInfo, TaskStatus, replacement_name
from engine.policy.policy import Policy
from engine.replay.trace import Trace, TraceJob, TraceRole, format_time
from engine.resources import split_flavor
from engine.session import run
from engine.session.carry import SessionCarry
from engine.session.clock import time_horizon
from engine.session.decisions import SessionResult
from engine.values import QuotaValues, compute_values

__all__ = ["JobOutcome", "ReplayError", "ReplayRun", "Sample", "replay", "tree_snapshot"]

# The sessions run with the cyclic garbage collector paused (``engine.collector``); every ``YOUNG_EVERY`` sessions the
# replay collects the youngest generation itself and sets what survived aside (``engine.collector.settle``: the
# trace and the results so far, all alive, never walked again). With the collector on, each session's first
# allocation after its own pause walked every object it left alive, and the oldest generation, growing with the
# results, was walked again and again: about 13 % of a day of the small demo, for almost nothing found (a session
# cuts its own cycles, ``Session.release``, and the carry those of the state it drops); collecting the middle
# generation every 500 sessions still cost 2 %, and found nothing either. The collector is back as it was, and
# what was set aside back in its oldest generation, when the sessions end.
YOUNG_EVERY = 50


class ReplayError(ValueError):
    """A replay that cannot run (a tree that cannot be read, a change set that does not apply); one line."""


@dataclass
class JobOutcome:
    """What happened to one job in the replay (epoch seconds; ``None``: never)."""

    job: TraceJob
    start: float | None = None
    finish: float | None = None
    evictions: dict[str, int] = field(default_factory=dict)  # action -> pods evicted
    group: str | None = None  # the quota group its pods count against (the tree's reading of the job)
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> the ResourceFlavor it started on


@dataclass
class Sample:
    """The state after one session (held until the next): GPUs and other resources in base units."""

    time: float
    used: dict[str, int]  # cluster: requests of the running pods per resource
    capacity: dict[str, int]  # cluster: allocatable of the schedulable nodes
    waiting: int  # podgroups not yet started


@dataclass
class ReplayRun:
    """A replay's raw results; ``engine.replay.report`` turns them into the report."""

    start: float
    end: float
    period: float
    outcomes: dict[str, JobOutcome]
    samples: list[Sample]
    values: list[tuple[float, QuotaValues]]  # each session's values at open (held until the next)
    runs: list[tuple[str, str, str | None, float, float, dict[str, int]]]  # (job, queue, group, from, to, request)
    parents: dict[str, str | None]  # queue -> parent
    group_parents: dict[str, str | None]
    sessions: int = 0
    grid_points: int = 0
    warnings: list[str] = field(default_factory=list)


def _arrival_order(job: TraceJob) -> tuple[float, str, str]:
    """The order jobs arrive in: by submission, then namespace and name."""
    return job.submit, job.namespace, job.name


def tree_snapshot(objects: Sequence[Mapping[str, Any]], source: str = "trace") -> Snapshot:
    """The tree and the nodes of a trace's ``Tree`` (Kubernetes objects), without any pod or podgroup."""
    result, invalid = load_objects(list(objects), source=source)
    if invalid:
        bad = invalid[0]
        raise ReplayError(f"{source}: Tree object {bad.index} ({bad.kind} {bad.name}): {bad.message}")
    return result.snapshot.replace(tasks={}, podgroups={})


def _pod_names(job: TraceJob) -> list[tuple[str, TraceRole]]:
    """Its pods' names: ``<job>-<role>-<i>``, or as the demo's (``<job>-<k>``) for a role without a name."""
    out: list[tuple[str, TraceRole]] = []
    for role in job.roles:
        for i in range(role.pods):
            out.append((f"{job.name}-{role.name}-{i}" if role.name else f"{job.name}-{len(out)}", role))
    return out


def _plain(amounts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Amounts per resource, a flavored key (``cpu@spot``) added into its resource's."""
    out: dict[str, int] = {}
    for key, value in amounts:
        base = split_flavor(key)[0]
        out[base] = out.get(base, 0) + value
    return out


def _runtimes(trace: Trace, seed: int) -> dict[str, float | None]:
    """Each job's runtime: its own, else a draw from its queue's recorded runtimes (None: until the end)."""
    by_queue: dict[str, list[float]] = {}
    for job in trace.jobs:
        if job.runtime is not None:
            by_queue.setdefault(job.queue, []).append(job.runtime)
    out: dict[str, float | None] = {}
    for job in trace.jobs:
        if job.runtime is not None:
            out[job.key] = job.runtime
        elif job.start is not None:
            out[job.key] = None  # still running at the end of the recording: runs past the window
        else:
            pool = sorted(by_queue.get(job.queue, []))
            out[job.key] = random.Random(f"{seed}/{job.key}").choice(pool) if pool else None
    return out


class _Replay:
    def __init__(self, trace: Trace, base: Snapshot, policy: Policy, seed: int) -> None:
        h = trace.header
        self.trace, self.policy = trace, policy
        self.origin, self.end, self.period = h.start, h.end, h.period
        self.snapshot = base.with_policy(policy)
        self.runtimes = _runtimes(trace, seed)
        self.outcomes = {job.key: JobOutcome(job) for job in trace.jobs}
        self.arrivals = deque(sorted(trace.jobs, key=_arrival_order))
        self.new_replacements = h.replacements == "new"  # an evicted pod's replacement: a new pod, created then
        self.edits = deque(sorted(trace.edits, key=lambda e: e.time))
        self.finishes: list[tuple[float, str]] = []  # heap of (time, pod uid)
        self.pod_start: dict[str, float] = {}
        self.pod_job: dict[str, TraceJob] = {}
        self.job_pods: dict[str, list[str]] = {}  # job key -> its pods' uids (as the snapshot's grouping, unordered)
        self.pod_runtime: dict[str, float | None] = {}
        self.open_runs: dict[str, tuple[float, dict[str, int]]] = {}
        self.runs: list[tuple[str, str, str | None, float, float, dict[str, int]]] = []
        self.over_since: dict[str, float] = {}
        self.samples: list[Sample] = []
        self.values: list[tuple[float, QuotaValues]] = []
        self.warnings: list[str] = []
        self.sessions = 0
        # the session state kept from one session to the next, as the live loop keeps it (``engine.session.carry``:
        # the same decisions, without building every pod's state again)
        self.carry = SessionCarry()
        self.flavor_memo = FlavorMemo()  # the same flavored pods while they and their flavors stay the same
        self.busy = False  # the last session decided something: the next period runs too
        # a generator of arrivals (``engine.replay.workload``), called before each session with the cluster and the
        # jobs finished since its last call; with one, every period has a session
        self.source: Callable[[float, Snapshot, list[tuple[float, TraceJob]]], list[TraceJob]] | None = None
        self.finished_jobs: list[tuple[float, TraceJob]] = []

    # -- the grid ----------------------------------------------------------------------------------------------
    def at_or_after(self, t: float) -> float:
        k = max(0, math.ceil((t - self.origin) / self.period - 1e-9))
        return self.origin + k * self.period

    def after(self, t: float) -> float:
        k = max(0, math.floor((t - self.origin) / self.period + 1e-9) + 1)
        return self.origin + k * self.period

    def next_session(self, last: float | None) -> float:
        candidates = []
        if self.arrivals:
            candidates.append(self.at_or_after(self.arrivals[0].submit))
        if self.edits:
            candidates.append(self.at_or_after(self.edits[0].time))
        if self.finishes:
            candidates.append(self.after(self.finishes[0][0]))
        if last is not None:
            if self.busy:
                candidates.append(self.after(last))
            horizon = time_horizon(self.snapshot, last)
            for pg in self.snapshot.podgroups.values():
                if pg.backoff_until is not None and pg.backoff_until > last:
                    horizon = min(horizon, pg.backoff_until)
            if self.over_since:
                delay = self.snapshot.effective_elastic_quota_args().delay_evict_time
                horizon = min(horizon, min(self.over_since.values()) + delay)
            if horizon < math.inf:
                candidates.append(self.after(max(horizon, last)))
        if self.source is not None:
            candidates.append(self.origin if last is None else self.after(last))
        nxt = min(candidates, default=math.inf)
        if last is not None and nxt <= last:
            nxt = self.after(last)
        return nxt

    # -- the events ----------------------------------------------------------------------------------------------
    def apply_edits(self, now: float) -> None:
        while self.edits and self.edits[0].time <= now:
            edit = self.edits.popleft()
            try:
                self.snapshot = apply_changes(self.snapshot, [dict(edit.change)])
            except ProposalError as exc:
                self.warnings.append(f"the tree edit at {format_time(edit.time)} was not applied: {exc}")

    def apply_finishes(self, now: float, *, inclusive: bool = False) -> None:
        """The pods whose work ended before ``now`` (``inclusive``: at ``now`` too) succeed; a job whose pods all
        did is finished and leaves."""
        done: list[str] = []
        while self.finishes and (self.finishes[0][0] <= now if inclusive else self.finishes[0][0] < now):
            at, uid = heapq.heappop(self.finishes)
            task = self.snapshot.tasks.get(uid)
            if task is None or task.status != TaskStatus.RUNNING or self.pod_start.get(uid) is None:
                continue
            if self.pod_start[uid] + (self.pod_runtime[uid] or 0) != at:
                continue  # a finish of a run that an eviction ended
            self.close_run(uid, at)
            done.append(uid)
        if not done:
            return
        tasks = dict(self.snapshot.tasks)
        for uid in done:
            tasks[uid] = tasks[uid].evolve(status=TaskStatus.SUCCEEDED)
        self.snapshot = self.snapshot.replace(tasks=tasks)
        finished_groups = {tasks[uid].podgroup for uid in done}
        gone_pgs: list[str] = []
        gone_tasks: list[str] = []
        for key in sorted(finished_groups):
            members = [tasks[uid] for uid in self.job_pods.get(key, ()) if uid in tasks]
            if all(t.status == TaskStatus.SUCCEEDED for t in members):
                finish = max(self.pod_start[t.uid] + (self.pod_runtime[t.uid] or 0) for t in members)
                self.outcomes[key].finish = finish
                if self.source is not None:
                    self.finished_jobs.append((finish, self.outcomes[key].job))
                gone_pgs.append(key)
                gone_tasks.extend(t.uid for t in members)
                self.job_pods.pop(key, None)
        if gone_pgs:
            self.snapshot = self.snapshot.without_tasks(gone_tasks).without_podgroups(gone_pgs)

    def add_arrivals(self, now: float) -> None:
        pgs, tasks = [], []
        while self.arrivals and self.arrivals[0].submit <= now:
            job = self.arrivals.popleft()
            if job.queue not in self.snapshot.queues:
                self.warnings.append(f"job {job.key} names queue {job.queue}, which the tree lacks: left out")
                continue
            pgs.append(
                PodGroupInfo(
                    namespace=job.namespace,
                    name=job.name,
                    queue=job.queue,
                    min_member=job.min_member,
                    min_resources=job.min_resources,
                    priority=job.priority,
                    creation_timestamp=job.submit,
                    user=job.user or "",  # its namespace counts where none is known, as live
                    user_groups=job.user_groups,
                )
            )
            for i, (name, role) in enumerate(_pod_names(job)):
                task = TaskInfo(
                    namespace=job.namespace,
                    name=name,
                    podgroup=job.key,
                    request=role.request,
                    node_selector=role.node_selector,
                    tolerations=role.tolerations,
                    node_affinity=role.node_affinity,
                    priority=job.priority,
                    quota_preemptible=job.preemptible,
                    volcano_preemptable=None if job.preemptible else False,
                    quota_group=job.quota_group,
                    task_role=role.name,
                    creation_timestamp=job.submit,
                )
                self.pod_job[task.uid] = job
                self.job_pods.setdefault(job.key, []).append(task.uid)
                self.pod_runtime[task.uid] = job.pod_runtimes[i] if job.pod_runtimes else self.runtimes[job.key]
                tasks.append(task)
            self.outcomes[job.key].group = self.snapshot.quota_group_of(tasks[-1])
        if pgs:
            self.snapshot = self.snapshot.with_podgroups(pgs).with_tasks(tasks)

    def _generated(self, now: float) -> None:
        assert self.source is not None
        new = self.source(now, self.snapshot, self.finished_jobs)
        self.finished_jobs = []
        for job in new:
            self.outcomes[job.key] = JobOutcome(job)
            self.runtimes[job.key] = job.runtime
        if new:
            self.arrivals = deque(sorted([*self.arrivals, *new], key=_arrival_order))

    def close_run(self, uid: str, at: float) -> None:
        started, request = self.open_runs.pop(uid)
        job = self.pod_job[uid]
        self.runs.append(
            (job.key, job.queue, self.snapshot.quota_group_of(self.snapshot.tasks[uid]), started, at, request)
        )

    # -- one session -----------------------------------------------------------------------------------------------
    def session(self, now: float) -> None:
        self.apply_edits(now)
        self.apply_finishes(now)
        self.add_arrivals(now)
        if self.source is not None:  # the generator sees the jobs already submitted, then submits its own
            self._generated(now)
            self.add_arrivals(now)
        if self.snapshot.kueue_flavors is not None:  # the waiting jobs given their flavors, as a live session does
            admitted = with_kept_flavors(self.snapshot, {}, self.flavor_memo)  # the admitted ones keep theirs
            self.snapshot = assign_flavors(admitted, self.flavor_memo)[0]
        # pipelined pods are Pending again: each session decides pipelining afresh (the store's rule)
        result = run.run_session(self.snapshot, now=now, policy=self.policy, carry=self.carry)
        self.sessions += 1
        if result.values_at_open is not None:
            # kept for the report without the pods' aggregates, which hold every podgroup and pod of the session
            kept_values = dataclasses.replace(result.values_at_open, aggregates=None, memo={})
            self.values.append((now, kept_values))
        placed = [b for b in result.bindings if not b.pipelined]
        kept = dataclasses.replace(result, bindings=placed)
        before = self.snapshot
        self.snapshot = run.apply_result(before, kept, now=now)
        self.snapshot = self._pipelined(result, before)
        evicted = self._evicted(before, result.evictions, now)
        for b in placed:
            self._started(b.task, now)
        # a podgroup admitted but not placed counts its unplaced sessions (and is requeued after some): the cluster
        # runs every period while one waits so
        inqueue = any(pg.phase == PodGroupPhase.INQUEUE for pg in self.snapshot.podgroups.values())
        self.busy = bool(result.bindings or result.evictions or inqueue or self._phases_moved(before))
        recycled = self._recycle(now)
        self.busy = self.busy or recycled
        del evicted
        self._sample(now)

    def _phases_moved(self, before: Snapshot) -> bool:
        return any(
            before.podgroups.get(k) is not None and before.podgroups[k].phase != pg.phase
            for k, pg in self.snapshot.podgroups.items()
        )

    def _pipelined(self, result: SessionResult, before: Snapshot) -> Snapshot:
        tasks = dict(self.snapshot.tasks)
        for uid, task in tasks.items():
            if task.pipelined or task.nominated:
                tasks[uid] = task.evolve(pipelined=False, nominated=None)
        for b in result.bindings:
            if b.pipelined and b.task in tasks:
                tasks[b.task] = tasks[b.task].evolve(pipelined=True, nominated=b.node)
        return self.snapshot.replace(tasks=tasks)

    def _started(self, uid: str, now: float) -> None:
        task = self.snapshot.tasks.get(uid)
        if task is None:
            return
        job = self.pod_job[uid]
        self.pod_start[uid] = now
        request = task.request.items()
        self.open_runs[uid] = (now, _plain(request) if self.snapshot.kueue_flavors is not None else dict(request))
        outcome = self.outcomes[job.key]
        if outcome.start is None:
            outcome.start = now
            outcome.flavors = flavor_of_request(task.request)
            if job.created is not None:
                self._created_as_recorded(job)
        runtime = self.pod_runtime[uid]
        if runtime is not None:
            heapq.heappush(self.finishes, (now + runtime, uid))

    def _created_as_recorded(self, job: TraceJob) -> None:
        """A job already running when the cluster was first mirrored (``created``): placed at its start as it was,
        before the jobs mirrored with it, it is then ordered by its row's creation, as every live session saw it."""
        pg = self.snapshot.podgroups.get(job.key)
        if pg is None or job.created is None:
            return
        created = job.created
        tasks = [
            dataclasses.replace(t, creation_timestamp=created)
            for t in self.snapshot.podgroup_tasks(job.key)
            if t.creation_timestamp == job.submit
        ]
        self.snapshot = self.snapshot.with_podgroups([dataclasses.replace(pg, creation_timestamp=created)])
        self.snapshot = self.snapshot.with_tasks(tasks)

    def _evicted(self, before: Snapshot, evictions: Sequence[Any], now: float) -> int:
        """Evicted pods come back Pending (their job controller's replacement) and lose their work: under their own
        name and creation, or (the trace's ``replacements: new``) as a new pod ``<name>-r<N>`` created ``now``."""
        back, gone = [], []
        for e in evictions:
            task = before.tasks.get(e.task)
            if task is None or e.task not in self.pod_job:  # (not there: already replaced under a new name)
                continue
            if e.task in self.open_runs:
                self.close_run_from(before, e.task, now)
            self.pod_start.pop(e.task, None)
            job = self.pod_job[e.task]
            counts = self.outcomes[job.key].evictions
            counts[e.action] = counts.get(e.action, 0) + 1
            again = task.evolve(
                status=TaskStatus.PENDING, node=None, start_timestamp=None, pipelined=False, nominated=None
            )
            if self.new_replacements:
                again = dataclasses.replace(again, name=replacement_name(task.name), creation_timestamp=now)
                self.pod_job[again.uid], self.pod_runtime[again.uid] = job, self.pod_runtime.pop(e.task)
                del self.pod_job[e.task]
                pods = self.job_pods[job.key]
                pods[pods.index(e.task)] = again.uid
                gone.append(e.task)
            back.append(again)
        if back:
            # the podgroup keeps the phase its session gave it (the store writes phases from sessions only): a gang
            # reclaimed below its minimum stays Running, already admitted, while its replacements wait
            self.snapshot = self.snapshot.without_tasks(gone).with_tasks(back)
        return len(back)

    def close_run_from(self, snap: Snapshot, uid: str, at: float) -> None:
        started, request = self.open_runs.pop(uid)
        job = self.pod_job[uid]
        self.runs.append((job.key, job.queue, snap.quota_group_of(snap.tasks[uid]), started, at, request))

    def _recycle(self, now: float) -> bool:
        evictions, self.over_since = run.run_recycle(
            self.snapshot, now=now, over_since=self.over_since, carry=self.carry
        )
        if not evictions:
            return False
        before = self.snapshot
        self.snapshot = before.without_tasks(e.task for e in evictions)
        self._evicted(before, evictions, now)
        return True

    def _sessions(self, checkpoint: Callable[[], None] | None, progress: Callable[[float], None] | None) -> None:
        """Every session of the window in time order, collecting garbage as ``YOUNG_EVERY`` says (the caller pauses
        the collector and thaws what was set aside)."""
        last: float | None = None
        while True:
            now = self.next_session(last)
            if now > self.end:
                break
            if checkpoint is not None:
                checkpoint()
            if progress is not None:
                progress(now)
            self.session(now)
            last = now
            if self.sessions % YOUNG_EVERY == 0:
                settle()

    def _sample(self, now: float) -> None:
        used: dict[str, int] = {}
        running = TaskStatus.RUNNING
        for t in self.snapshot.tasks.values():
            if t.status == running:
                for r, v in raw(t.request).items():
                    used[r] = used.get(r, 0) + v
        capacity: dict[str, int] = {}
        for node in self.snapshot.schedulable_nodes:
            for r, v in node.allocatable.items():
                capacity[r] = capacity.get(r, 0) + v
        if self.snapshot.kueue_flavors is not None:  # per resource, its flavors added up
            used, capacity = _plain(used.items()), _plain(capacity.items())
        waiting = sum(
            1 for key in self.snapshot.podgroups if self.outcomes.get(key) and self.outcomes[key].start is None
        )
        self.samples.append(Sample(time=now, used=used, capacity=capacity, waiting=waiting))

    def run(self, checkpoint: Callable[[], None] | None, progress: Callable[[float], None] | None = None) -> ReplayRun:
        with paused(), thawed_after():
            self._sessions(checkpoint, progress)
        self.apply_finishes(self.end, inclusive=True)  # the work that ended by the window's end, with no session
        for uid in sorted(self.open_runs):
            self.close_run(uid, self.end)
        self.values.append((self.end, compute_values(self.snapshot, self.policy)))
        return ReplayRun(
            start=self.origin,
            end=self.end,
            period=self.period,
            outcomes=self.outcomes,
            samples=self.samples,
            values=self.values,
            runs=self.runs,
            parents={n: q.parent for n, q in self.snapshot.queues.items()},
            group_parents={n: g.parent for n, g in self.snapshot.quota_groups.items()},
            sessions=self.sessions,
            grid_points=int((self.end - self.origin) // self.period) + 1,
            warnings=self.warnings,
        )


def replay(
    trace: Trace,
    *,
    policy: Policy | None = None,
    tree: Snapshot | None = None,
    changes: Sequence[Mapping[str, Any]] | None = None,
    seed: int = 0,
    checkpoint: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> ReplayRun:
    """Replay ``trace`` on ``tree`` (default: the trace's own Tree) under ``policy`` (default: the tree's, else
    Volcano's), with ``changes`` (the what-if change language) applied to the tree at the window's start.
    ``checkpoint`` is called before each session (it may raise to stop the replay); ``progress`` with the session's
    virtual time (epoch seconds), after ``checkpoint``."""
    if tree is None:
        if trace.tree is None:
            raise ReplayError("the trace holds no Tree: give the tree and nodes with --tree")
        tree = tree_snapshot(trace.tree)
    base = tree.replace(tasks={}, podgroups={})
    if changes:
        try:
            base = apply_changes(base, list(changes))
        except ProposalError as exc:
            raise ReplayError(f"--changes: {exc}") from None
    chosen = policy if policy is not None else base.policy
    return _Replay(trace, base, chosen, seed).run(checkpoint, progress)
