"""The demo's workload generator as pure code: its draws (used by ``scheduling.agent.generate_workload`` on the
database) and an offline run of it against the replay (``generate``), which writes a trace of any length without a
database (``fairway trace generate``).

The generator (``scheduling/agent.py``'s docstring): every open leaf queue with a namespace gets gang jobs at a rate
that rises and falls on a slow wave with a per-team phase, seeded by the seed, the cluster's name and the second
(``random.Random(f"{seed}:{cluster}:{second}")``), sized from templates, with a cap on each queue's backlog (its
Pending pods, and what they ask against what its queue deserves) and the namespace quota rules of the API.

Offline, the backlog the generator reads is the replay's: each period, before the session, the generator's beats of
the period (every 2 s, the last one at the session's instant) read the Pending pods of the replay's cluster, as the
soak's rounds read the database (``tests/support/soak.py``), and the jobs they submit arrive at that session. A pod's
runtime is its duration rounded up to the period: the simulated agent, which runs once a period after the session,
reports a pod finished at its first run at or after the pod's duration. Replaying the trace it writes with no change
gives the same starts (``tests/unit/test_trace_generate.py``).
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace

from engine import rules
from engine.objects import DEFAULT_QUEUE, OPEN, ROOT_QUEUE, Snapshot, TaskStatus, Toleration
from engine.replay.trace import Trace, TraceHeader, TraceJob, TraceRole
from engine.resources import ResourceList

__all__ = [
    "BEAT_SECONDS",
    "GPU_TOLERATION",
    "PEOPLE",
    "WorkloadSettings",
    "backlog_full",
    "busy",
    "draw_job",
    "fit_size",
    "generate",
    "submitter",
]

BEAT_SECONDS = 2  # the generator's beat (the beat schedule submits jobs every 2 s)
_GIB = 2**30
_GPU = "nvidia.com/gpu"
GPU_TOLERATION = (Toleration(key=_GPU, operator="Exists", effect="NoSchedule"),)


@dataclass(frozen=True)
class WorkloadSettings:
    """Knobs of the demo's workload (defaults keep 24 demo nodes busy without drowning them)."""

    jobs_per_tick: float = 0.35  # expected new jobs per busy queue per call (a call every 2 s)
    wave_seconds: float = 900.0  # one busy/idle cycle per team
    max_pending_pods: int = 48  # no new job while a queue has this many pods waiting
    max_backlog_share: float = 1.0  # nor while its waiting pods ask this share of its deserved (cpu, GPUs)
    max_job_share: float = 0.5  # a job asks at most this share of its queue's deserved (fewer pods otherwise)
    gpu_share: float = 0.6  # share of GPU jobs for teams whose queue deserves GPUs
    min_duration: int = 20
    max_duration: int = 240
    ttl_after_finished: int = 300  # Completed podgroups are deleted after this many seconds


def busy(queue: str, t: float, wave: float) -> float:
    """0..1: how busy the team behind ``queue`` is at ``t`` (a sine wave with a per-team phase)."""
    phase = (zlib.crc32(queue.encode()) % 1000) / 1000.0 * 2.0 * math.pi
    return 0.5 + 0.5 * math.sin(2.0 * math.pi * t / wave + phase)


def draw_job(rng: random.Random, gpu: bool, knobs: WorkloadSettings) -> tuple[int, dict[str, int], int, int]:
    """(pods, per-pod request, priority, duration) of one job."""
    if gpu:
        size = rng.choice((1, 1, 2, 4))
        gpus = rng.choice((1, 1, 2))
        request = {"cpu": 8000 * gpus, "memory": 64 * _GIB * gpus, _GPU: 1000 * gpus}
    else:
        size = rng.choice((1, 1, 2, 4, 4, 8))
        cores = rng.choice((1, 2, 4, 8))
        request = {"cpu": 1000 * cores, "memory": 4 * _GIB * cores}
    priority = rng.choice((0, 0, 10, 50))
    return size, request, priority, rng.randint(knobs.min_duration, knobs.max_duration)


#: the people of each team who submit the demo's jobs (``submitter``)
PEOPLE = ("ana", "ben", "chen")


def submitter(queue: str, name: str) -> str:
    """Who of the team of ``queue`` submits the job ``name``: one of ``PEOPLE`` by the name's checksum (not a draw,
    so the generator's draws stay as they were), ``<queue>-<person>``."""
    return f"{queue}-{PEOPLE[zlib.crc32(name.encode()) % len(PEOPLE)]}"


def fit_size(size: int, request: Mapping[str, int], deserved: Mapping[str, int], share: float) -> int:
    """Fewer pods (down to one) while the job would ask more than ``share`` of what its queue deserves: teams size
    their jobs to their share, so a job is not refused by its own quota group's max."""
    while size > 1 and any(
        deserved.get(r, 0) > 0 and v * size > share * deserved[r] for r, v in request.items() if r in ("cpu", _GPU)
    ):
        size //= 2
    return size


def backlog_full(queued: Mapping[str, int], deserved: Mapping[str, int], gpu: bool, share: float) -> bool:
    """Is a team's waiting work already ``share`` of what its queue deserves (cpu; GPUs for a GPU job)? A bounded
    backlog lets a team's queue drain when its wave is low, so that it lends, and fill when it is high."""
    names = ("cpu", _GPU) if gpu else ("cpu",)
    return any(deserved.get(r, 0) > 0 and queued.get(r, 0) >= share * deserved[r] for r in names)


class _Generator:
    """One call of the generator a period, on the replay's cluster (``generate``)."""

    def __init__(self, tree: Snapshot, cluster: str, seed: int, knobs: WorkloadSettings, period: float) -> None:
        self.cluster, self.seed, self.knobs, self.period = cluster, seed, knobs, period
        specs = tree.queues
        parents = {s.parent for s in specs.values() if s.parent}
        leaves = {
            n for n, s in specs.items() if n not in parents and n not in (ROOT_QUEUE, DEFAULT_QUEUE) and s.state == OPEN
        }
        self.by_queue: dict[str, list[str]] = {}
        for ns in sorted(tree.namespaces.values(), key=lambda n: n.name):
            if ns.queue in leaves:
                self.by_queue.setdefault(ns.queue, []).append(ns.name)
        self.group_of = {ns: g for g, members in tree.quota_namespaces.items() for ns in members}
        self.names: set[str] = set()
        self.completed: list[tuple[float, str, ResourceList]] = []  # (finish, namespace, minResources) until GC
        self.last_call: float | None = None

    def __call__(self, now: float, snapshot: Snapshot, finished: list[tuple[float, TraceJob]]) -> list[TraceJob]:
        knobs = self.knobs
        self._collect(now, finished)
        waiting, backlog = self._waiting(snapshot)
        asked: dict[str, ResourceList] = {}
        jobs: list[TraceJob] = []
        ticks = max(1, int(self.period) // BEAT_SECONDS)
        for beat in range(ticks):
            t = now - float(BEAT_SECONDS) * (ticks - 1 - beat)
            rng = random.Random(f"{self.seed}:{self.cluster}:{int(t)}")
            for queue in sorted(self.by_queue):
                if waiting.get(queue, 0) >= knobs.max_pending_pods:
                    continue
                if rng.random() >= knobs.jobs_per_tick * busy(queue, t, knobs.wave_seconds):
                    continue
                job = self._draw(rng, t, now, queue, snapshot, backlog, asked)
                if job is None:
                    continue
                jobs.append(job)
                (role,) = job.roles
                waiting[queue] = waiting.get(queue, 0) + role.pods
                amounts = backlog.setdefault(queue, {})
                for r in ("cpu", _GPU):
                    amounts[r] = amounts.get(r, 0) + role.request.get(r, 0) * role.pods
        return jobs

    def _collect(self, now: float, finished: list[tuple[float, TraceJob]]) -> None:
        """The previous call's garbage collection removed podgroups completed more than the TTL before it."""
        for at, job in finished:
            if job.min_resources is not None:
                self.completed.append((at, job.namespace, job.min_resources))
        if self.last_call is not None:
            cutoff = self.last_call - self.knobs.ttl_after_finished
            self.completed = [c for c in self.completed if c[0] >= cutoff]
        self.last_call = now

    def _waiting(self, snapshot: Snapshot) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """Per queue, its pending pods and what they ask (cpu, GPUs), as the generator reads the database."""
        waiting: dict[str, int] = {}
        backlog: dict[str, dict[str, int]] = {}
        for task in snapshot.tasks.values():
            if task.status != TaskStatus.PENDING or task.pipelined:
                continue
            pg = snapshot.podgroups.get(task.podgroup)
            if pg is None or pg.queue not in self.by_queue:
                continue
            waiting[pg.queue] = waiting.get(pg.queue, 0) + 1
            amounts = backlog.setdefault(pg.queue, {})
            for r in ("cpu", _GPU):
                amounts[r] = amounts.get(r, 0) + task.request.get(r, 0)
        return waiting, backlog

    def _asked(self, snapshot: Snapshot, ns: str, hard: bool) -> ResourceList:
        """What the namespace's podgroups ask already (its ResourceQuota counts them), those collected since not."""
        if not hard:
            return ResourceList()
        return ResourceList.total(
            [pg.min_resources for pg in snapshot.podgroups.values() if pg.namespace == ns and pg.min_resources]
            + [mr for _at, n, mr in self.completed if n == ns]
        )

    def _draw(
        self,
        rng: random.Random,
        t: float,
        now: float,
        queue: str,
        snapshot: Snapshot,
        backlog: Mapping[str, Mapping[str, int]],
        asked: dict[str, ResourceList],
    ) -> TraceJob | None:
        """One job of ``queue`` drawn at beat ``t``, or None when its team would not submit it (its backlog is full)
        or the rules would refuse it."""
        knobs, specs = self.knobs, snapshot.queues
        namespaces = self.by_queue[queue]
        ns = namespaces[0] if rng.random() < 0.75 else rng.choice(namespaces)
        deserved = specs[queue].deserved
        gpu = deserved.get(_GPU, 0) > 0 and rng.random() < knobs.gpu_share
        size, request, priority, duration = draw_job(rng, gpu, knobs)
        size = fit_size(size, request, deserved, knobs.max_job_share)
        if backlog_full(backlog.get(queue, {}), deserved, gpu, knobs.max_backlog_share):
            return None
        name = f"job-{int(t)}-{rng.randrange(16**6):06x}"
        min_resources = ResourceList({k: v * size for k, v in request.items()})
        info = snapshot.namespaces[ns]
        others = asked.get(ns)
        if others is None:
            others = asked[ns] = self._asked(snapshot, ns, bool(info.hard))
        errors = rules.validate_podgroup(
            specs,
            queue,
            min_member=size,
            min_resources=min_resources,
            namespace=ns,
            namespace_hard=info.hard,
            other_min_resources=others,
        )
        key = f"{ns}/{name}"
        if errors or key in self.names or key in snapshot.podgroups:
            return None
        self.names.add(key)
        if info.hard:
            asked[ns] = ResourceList.total((others, min_resources))
        role = TraceRole(name="", pods=size, request=ResourceList(request), tolerations=GPU_TOLERATION if gpu else ())
        return TraceJob(
            namespace=ns,
            name=name,
            queue=queue,
            submit=now,
            roles=(role,),
            quota_group=self.group_of.get(ns),
            priority=priority,
            min_member=size,
            min_resources=min_resources,
            runtime=math.ceil(duration / self.period) * self.period,
            user=submitter(queue, name),
        )


def generate(
    tree: Snapshot,
    tree_objects: list[dict[str, object]] | None,
    *,
    start: float,
    hours: float,
    period: float,
    seed: int = 0,
    cluster: str = "default",
    settings: WorkloadSettings | None = None,
    jobs: list[TraceJob] | None = None,
) -> Trace:
    """The demo's workload for ``hours`` from ``start`` on ``tree`` (its queues, namespaces and nodes; its policy),
    run against the replay, as a trace (source ``generator``): the jobs with the starts and finishes the replay gave
    them. ``jobs``: jobs there at the start (the demo's first ones), submitted at ``start``. ``tree_objects``: the
    trace's ``Tree`` (the manifests ``tree`` was read from)."""
    from engine.replay.loop import _Replay

    if period < BEAT_SECONDS or period % BEAT_SECONDS:
        raise ValueError(f"period: must be a multiple of the generator's beat ({BEAT_SECONDS} s), got {period}")
    end = start + (int(hours * 3600 / period) - 1) * period
    knobs = settings or WorkloadSettings()
    # the demo's cluster is simulated: its job controller replaces an evicted pod by a new one (``-r<N>``), created then
    header = TraceHeader(cluster=cluster, start=start, end=end, period=period, source="generator", replacements="new")
    # (their recorded start kept: one without a runtime was still running at the recording's end, and runs on here)
    first = [replace(j, submit=start) for j in jobs or []]
    base = Trace(header=header, jobs=first, tree=tree_objects)
    run = _Replay(base, tree.replace(tasks={}, podgroups={}), tree.policy, seed)
    run.source = _Generator(tree, cluster, seed, knobs, period)
    result = run.run(None)
    out = [
        replace(o.job, start=o.start, finish=o.finish, evictions=sum(o.evictions.values()))
        for o in result.outcomes.values()
    ]
    return Trace(header=header, jobs=out, tree=tree_objects)
