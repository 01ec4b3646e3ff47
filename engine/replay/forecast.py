"""When will a waiting job start? A forward replay from the cluster's current state (issue 29 item 6).

The state is a snapshot of the cluster now: its nodes, its running pods and its waiting jobs in their queues. The
replay loop (``engine.replay.loop``: the real engine, sessions on the period's grid, evictions restarting work,
recycling after each session) runs forward from it several times (draws), each draw giving every job a runtime drawn
from its queue's recorded runtimes (``runtimes``: seconds of work of the queue's finished jobs). The work keeps coming
meanwhile: the jobs submitted in the last ``window`` (``recent``) are submitted again in each window ahead, rotated by
a drawn offset, so that new jobs of other queues (or of a higher priority) may pass the targets as they would.

* a job that waits runs a drawn runtime once placed;
* a running job runs a drawn runtime longer than what it has already run (the recorded runtimes above its elapsed
  time); when it has outrun every recorded one, it runs as long again as it has (an estimate that grows with it).

A queue with no recorded runtime draws from every queue's. Each target's start in each draw (seconds from ``now``),
or that it had not started by the draw's end (the horizon, or where the CPU budget stopped the draw), gives the
estimate: the draws' median and 90th percentile (nearest rank). A target that starts in no draw is tried alone on the
empty cluster (its own podgroup, every node free): when it does not start even so, it can never start with the
current tree and nodes, and the engine's reason says why (its gang does not fit the cluster, its queue's capability,
a closed queue, a suspension).

Pure: no clock of its own. ``clock`` (a CPU clock the caller passes) and ``budget`` (its seconds) bound the work; the
draws share the budget (a draw that ends early leaves its part to the next ones).
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.objects import PodGroupInfo, PodGroupPhase, Snapshot, TaskStatus
from engine.replay.loop import JobOutcome, _arrival_order, _Replay
from engine.replay.trace import Trace, TraceHeader, TraceJob, TraceRole
from engine.resources import ResourceList
from engine.session import run

__all__ = ["StartForecast", "forecast_starts", "nearest_rank", "waiting_jobs"]

# a job with a pod in one of these has started (a Failed pod is an evicted copy: its replacement waits)
_STARTED = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.SUCCEEDED})


@dataclass(frozen=True)
class StartForecast:
    """A target's forecast. ``starts``: each draw's start in seconds from now, ``None`` where it had not started by
    the draw's end (``reached``, seconds from now). ``never``: why it can never start (the engine's reason and
    message), else None."""

    job: str
    starts: tuple[float | None, ...] = ()
    reached: tuple[float, ...] = ()
    never: str | None = None

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile of the start (nearest rank over the draws); None when the draw at that rank had not
        started (the start is later than ``bound(q)``) or when there is no draw."""
        return nearest_rank(self.starts, q)

    def bound(self, q: float) -> float:
        """When ``quantile(q)`` is None: the earliest end among the draws in which it had not started (it starts
        after this, at that rank)."""
        ends = [r for s, r in zip(self.starts, self.reached, strict=True) if s is None]
        return min(ends, default=0.0)


def nearest_rank(values: Sequence[float | None], q: float) -> float | None:
    """The nearest-rank ``q`` quantile of ``values`` (``None`` counts as later than every number); None when empty or
    when the rank falls on a ``None``."""
    if not values:
        return None
    ordered = sorted(values, key=lambda v: (v is None, v or 0.0))
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def waiting_jobs(snapshot: Snapshot, per_queue: int | None = None) -> list[str]:
    """The jobs that wait (no pod of theirs running, bound or succeeded), in their queue's order (priority, then
    submission), at most ``per_queue`` per queue (None: all)."""
    started = {t.podgroup for t in snapshot.tasks.values() if t.status in _STARTED}
    by_queue: dict[str, list[PodGroupInfo]] = {}
    for pg in snapshot.podgroups.values():
        if pg.key in started or pg.phase == PodGroupPhase.COMPLETED:
            continue
        by_queue.setdefault(pg.queue, []).append(pg)
    out: list[str] = []
    for queue in sorted(by_queue):
        ordered = sorted(by_queue[queue], key=lambda p: (-p.priority, p.creation_timestamp, p.key))
        out.extend(p.key for p in (ordered if per_queue is None else ordered[:per_queue]))
    return out


class _Forward(_Replay):
    """The replay loop started from a cluster's state instead of an empty one, with no arrival."""

    def __init__(self, snapshot: Snapshot, now: float, period: float, horizon: float) -> None:
        header = TraceHeader(cluster="forecast", start=now, end=now + horizon, period=period, source="forecast")
        super().__init__(Trace(header=header), snapshot.replace(tasks={}, podgroups={}), snapshot.policy, 0)
        self.snapshot = snapshot

    def load(self, pools: Mapping[str, Sequence[float]], everyone: Sequence[float], rng: random.Random) -> None:
        """Each podgroup's runtime drawn (``pools``: sorted per queue; ``everyone``: sorted, every queue's), its
        running pods' finishes scheduled."""
        now = self.origin
        members: dict[str, list[str]] = {}
        for uid, task in self.snapshot.tasks.items():
            members.setdefault(task.podgroup, []).append(uid)
        for key in sorted(self.snapshot.podgroups):
            pg = self.snapshot.podgroups[key]
            uids = sorted(members.get(key, []))
            job = TraceJob(
                namespace=pg.namespace,
                name=pg.name,
                queue=pg.queue,
                submit=pg.creation_timestamp,
                roles=(TraceRole(name="", pods=max(1, len(uids)), request=ResourceList()),),
                min_member=max(1, min(pg.min_member, max(1, len(uids)))),
            )
            outcome = JobOutcome(job)
            running = [self.snapshot.tasks[u] for u in uids if self.snapshot.tasks[u].status == TaskStatus.RUNNING]
            starts = [t.start_timestamp if t.start_timestamp is not None else now for t in running]
            elapsed = max((now - s for s in starts), default=0.0)
            pool = pools.get(pg.queue) or everyone
            runtime = _draw(pool, elapsed if running else None, rng)
            if any(self.snapshot.tasks[u].status in _STARTED for u in uids):
                outcome.start = min(starts, default=now)  # started before now: not waiting
            self.outcomes[key] = outcome
            self.job_pods[key] = list(uids)  # (the loop finds a finished job's pods there)
            for uid in uids:
                task = self.snapshot.tasks[uid]
                self.pod_job[uid] = job
                self.pod_runtime[uid] = runtime
                if task.status == TaskStatus.RUNNING:
                    start = task.start_timestamp if task.start_timestamp is not None else now
                    self.pod_start[uid] = start
                    self.open_runs[uid] = (start, dict(task.request.items()))
                    if runtime is not None:
                        heapq.heappush(self.finishes, (start + runtime, uid))

    def arrive(
        self,
        recent: Sequence[TraceJob],
        window: float,
        pools: Mapping[str, Sequence[float]],
        everyone: Sequence[float],
        rng: random.Random,
    ) -> None:
        """The jobs submitted in the last ``window`` before the origin (``recent``) submitted again in each window to
        come up to the horizon, as the same pace of work, rotated by a drawn offset within the window; each copy runs a
        runtime drawn from its queue's recorded ones (not its own)."""
        if not recent or window <= 0:
            return
        shift = rng.random() * window
        copies = math.ceil((self.end - self.origin) / window)
        future: list[TraceJob] = []
        for k in range(copies):
            for job in recent:
                offset = (job.submit - (self.origin - window) + shift) % window
                at = self.origin + k * window + offset
                if at > self.end:
                    continue
                copy = dataclasses.replace(
                    job,
                    name=f"{job.name}~{k}",
                    submit=at,
                    start=None,
                    finish=None,
                    runtime=None,
                    pod_runtimes=None,
                    evictions=0,
                )
                self.outcomes[copy.key] = JobOutcome(copy)
                self.runtimes[copy.key] = _draw(pools.get(job.queue) or everyone, None, rng)
                future.append(copy)
        self.arrivals = deque(sorted(future, key=_arrival_order))

    def until_started(self, targets: Sequence[str], keep_going: Callable[[], bool]) -> float:
        """Run until every target started, the horizon, nothing left to happen or the budget ends; how far it got
        (seconds after the origin: a target not started had not started before then)."""
        last: float | None = None
        while True:
            at = self.origin if last is None else self.next_session(last)
            if at > self.end:
                return self.end - self.origin
            if all(self.outcomes[k].start is not None for k in targets):
                return at - self.origin
            if last is not None and not keep_going():
                return at - self.origin
            self.session(at)
            last = at


def _draw(pool: Sequence[float], elapsed: float | None, rng: random.Random) -> float | None:
    """A runtime from ``pool`` (sorted); for a running job (``elapsed``), one longer than it has run, else as long
    again as it has (None: no recorded runtime at all, it runs past the horizon)."""
    if not pool:
        return None
    if elapsed is None:
        return rng.choice(pool)
    longer = pool[_first_above(pool, elapsed) :]
    return rng.choice(longer) if longer else 2 * elapsed


def _first_above(pool: Sequence[float], value: float) -> int:
    lo, hi = 0, len(pool)
    while lo < hi:
        mid = (lo + hi) // 2
        if pool[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _alone(snapshot: Snapshot, key: str, now: float, sessions: int = 3) -> str | None:
    """Whether ``key`` starts alone on the empty cluster (every other job gone, its pods Pending, no backoff): None
    when it does, else the engine's reason and message after ``sessions`` sessions."""
    pg = snapshot.podgroups[key]
    mine = {
        uid: dataclasses.replace(
            t, status=TaskStatus.PENDING, node=None, start_timestamp=None, pipelined=False, nominated=None
        )
        for uid, t in snapshot.tasks.items()
        if t.podgroup == key and t.status in (TaskStatus.PENDING, TaskStatus.RUNNING)
    }
    fresh = dataclasses.replace(
        pg, phase=PodGroupPhase.PENDING, conditions=(), unplaced_sessions=0, requeues=0, backoff_until=None
    )
    state = snapshot.replace(tasks=mine, podgroups={key: fresh})
    status = None
    for i in range(sessions):
        result = run.run_session(state, now=now + i, policy=snapshot.policy)
        if any(not b.pipelined for b in result.bindings):
            return None
        status = result.podgroups.get(key)
        state = run.apply_result(state, result, now=now + i)
    if status is None:
        return "the scheduler does not consider it"
    return f"{status.reason}: {status.message}" if status.reason else status.message


def forecast_starts(
    snapshot: Snapshot,
    *,
    now: float,
    period: float,
    runtimes: Mapping[str, Iterable[float]],
    targets: Sequence[str],
    draws: int = 10,
    seed: int = 0,
    horizon: float = 6 * 3600.0,
    clock: Callable[[], float] | None = None,
    budget: float | None = None,
    recent: Sequence[TraceJob] = (),
    window: float = 3600.0,
) -> dict[str, StartForecast]:
    """The start forecast of each of ``targets`` (podgroup keys of ``snapshot`` that wait) from ``now``: ``draws``
    forward replays with runtimes drawn from ``runtimes`` (queue -> seconds of its finished jobs), seeded by ``seed``,
    each up to ``horizon`` seconds ahead, within ``budget`` seconds of ``clock`` (both None: no bound). ``recent``:
    the jobs submitted in the last ``window`` seconds, submitted again in each window to come (the work that keeps
    arriving: new jobs of other queues, or of higher priority, may pass the targets)."""
    if draws < 1:
        raise ValueError(f"draws: must be at least 1, got {draws}")
    targets = [k for k in targets if k in snapshot.podgroups]
    pools = {q: sorted(float(r) for r in rs) for q, rs in runtimes.items()}
    everyone = sorted(r for rs in pools.values() for r in rs)
    began = clock() if clock is not None else 0.0
    starts: dict[str, list[float | None]] = {k: [] for k in targets}
    reached: list[float] = []
    for d in range(draws):
        if clock is not None and budget is not None and d and clock() - began >= budget:
            break  # the budget is spent: the draws done so far
        share = None if budget is None else began + budget * (d + 1) / draws

        def keep_going(share: float | None = share) -> bool:
            return clock is None or share is None or clock() < share

        forward = _Forward(snapshot, now, period, horizon)
        rng = random.Random(f"{seed}/{d}")
        forward.load(pools, everyone, rng)
        forward.arrive([j for j in recent if now - window <= j.submit < now], window, pools, everyone, rng)
        got = forward.until_started(targets, keep_going)
        reached.append(got)
        for k in targets:
            start = forward.outcomes[k].start
            starts[k].append(None if start is None else max(0.0, start - now))
    out = {}
    for k in targets:
        never = None
        if starts[k] and all(s is None for s in starts[k]):
            never = _alone(snapshot, k, now)
        out[k] = StartForecast(job=k, starts=tuple(starts[k]), reached=tuple(reached), never=never)
    return out
