"""When will my job start? (issue 29 item 6): the start estimates of a cluster's waiting jobs, for the job page, the
why endpoint's ``start_estimate`` and ``fairway job why``.

``refresh`` runs the forward replay (``engine.replay.forecast``) from the cluster's state now (the process's mirror of
it, ``planning.valuecache``) for the first ``FAIRWAY_START_ESTIMATE_JOBS_PER_QUEUE`` waiting jobs of each queue, with
runtimes drawn from each queue's recorded ones (the ``JobRecord`` history and the finished jobs still there, the
latest ``RUNTIMES_PER_QUEUE``) and the jobs submitted in the last ``FAIRWAY_START_ESTIMATE_ARRIVALS_HOURS`` submitted
again in each such span ahead (the work that keeps coming: ``planning.trace.build_trace``'s jobs of that span),
``FAIRWAY_START_ESTIMATE_DRAWS`` draws within ``FAIRWAY_START_ESTIMATE_BUDGET_SECONDS`` of CPU (``budget_clock``), and keeps the result in the cluster's ``StartEstimates`` row. The Celery task ``planning.tasks.estimate_starts``
calls it on the ``estimates`` queue (never a session worker) when a reader finds the row older than
``FAIRWAY_START_ESTIMATE_TTL_SECONDS`` or a job submitted since (once per TTL: the readers meanwhile get the row
they found). A reader that finds no row, or one older than three TTLs, asks the worker too (once: the cache keeps
when) and answers "estimating"; only when no round came within ``FAIRWAY_START_ESTIMATE_WORKER_WAIT_SECONDS`` of
that ask (no estimates worker runs, or it is busy with a replay) does a reader compute one itself, within
``FAIRWAY_START_ESTIMATE_PAGE_BUDGET_SECONDS`` of CPU (0: at once, without asking, as a deployment without an
estimates worker wants).

The times are kept from the moment of the computation, so that the sentence stays right while the row is read:
"likely to start in about 12 min (half the time), within 40 min (9 times in 10)".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Max
from django.utils import timezone

from core.advisory import after_commit
from engine.flavors import assign_flavors
from engine.replay.forecast import StartForecast, forecast_starts, waiting_jobs
from engine.wording import duration
from planning import valuecache
from planning.models import StartEstimates
from planning.trace import build_trace, session_period
from scheduling.models import Cluster, JobRecord, Pod, PodGroup

__all__ = ["RUNTIMES_PER_QUEUE", "estimate_of", "recorded_runtimes", "refresh", "sentence"]

RUNTIMES_PER_QUEUE = 500  # the latest finished jobs of a queue whose runtimes are drawn from
_NO_HISTORY = "no estimate of its start yet: no finished job is recorded to draw runtimes from"
_ESTIMATING = "estimating when it will start\u2026"
_NOTHING_YET = {"draws": 0, "p50_seconds": None, "p90_seconds": None, "later_than_seconds": None}


def _setting(name: str) -> Any:
    return settings.FAIRWAY[f"START_ESTIMATE_{name}"]


def recorded_runtimes(cluster: Cluster, per_queue: int = RUNTIMES_PER_QUEUE) -> dict[str, list[float]]:
    """Each queue's runtimes (seconds of work of a job's longest pod run): its latest ``per_queue`` finished jobs,
    from the history rows and from the finished jobs not yet garbage-collected."""
    found: dict[str, list[tuple[datetime, float]]] = {}
    rows = (
        JobRecord.objects.filter(cluster=cluster, runtime__isnull=False)
        .order_by("-submitted", "-id")
        .values_list("queue", "submitted", "runtime")
    )
    for queue, submitted, runtime in rows.iterator(chunk_size=2000):
        mine = found.setdefault(queue, [])
        if len(mine) < per_queue:
            mine.append((submitted, float(runtime)))
    live = (
        Pod.objects.filter(cluster=cluster, status="Succeeded", started__isnull=False, finished__isnull=False)
        .values("podgroup_id")
        .annotate(run=Max(F("finished") - F("started")), queue=Max("podgroup__queue__name"))
        .annotate(submitted=Max("podgroup__created"))
        .order_by()
    )
    for row in live:
        if row["podgroup_id"] is None or row["queue"] is None:
            continue
        found.setdefault(row["queue"], []).append((row["submitted"], row["run"].total_seconds()))
    out = {}
    for queue, runs in found.items():
        runs.sort(key=lambda r: r[0], reverse=True)
        out[queue] = [r for _, r in runs[:per_queue]]
    return out


def _entry(f: StartForecast, horizon: float) -> dict[str, Any]:
    p50, p90 = f.quantile(0.5), f.quantile(0.9)
    later = None if p50 is not None and p90 is not None else f.bound(0.9 if p50 is not None else 0.5)
    return {
        "p50": p50,
        "p90": p90,
        "later_than": later,
        # the draws stopped before the horizon (the CPU budget): "later than" is as far as they looked
        "cut": later is not None and later < horizon,
        "never": f.never,
        "draws": len(f.starts),
    }


def budget_clock(
    cpu_clock: Callable[[], float] = time.thread_time, wall_clock: Callable[[], float] = time.monotonic
) -> Callable[[], float]:
    """The clock a round's CPU budget is counted on, from now: the thread's CPU time, or the wall-clock time over
    ``WALL_PER_CPU`` when that is more (a worker given less than half a core stops at that many times its budget of
    wall-clock time, within its task's time limit)."""
    from planning.tasks import WALL_PER_CPU

    cpu, wall = cpu_clock(), wall_clock()
    return lambda: max(cpu_clock() - cpu, (wall_clock() - wall) / WALL_PER_CPU)


def refresh(cluster: Cluster, *, budget: float | None = None, now: datetime | None = None) -> StartEstimates:
    """Compute the estimates of ``cluster``'s first waiting jobs of each queue now and keep them (its row)."""
    now = now or timezone.now()
    return _keep(cluster, _round(cluster, budget, now))


def _keep(cluster: Cluster, fields: dict[str, Any]) -> StartEstimates:
    row, _ = StartEstimates.objects.update_or_create(cluster=cluster, defaults=fields)
    cache.delete(_asked_key(cluster.pk))
    return row


def _round(cluster: Cluster, budget: float | None, now: datetime) -> dict[str, Any]:
    """A round of estimates computed now: the fields of ``cluster``'s ``StartEstimates`` row."""
    snapshot, _values = valuecache.current(cluster)
    # Kueue's ResourceFlavors: the waiting jobs given their flavors as the next live session gives them, kept through
    # the replay (a job the replay sees arrive keeps its plain request)
    snapshot = assign_flavors(snapshot)[0]
    targets = waiting_jobs(snapshot, per_queue=int(_setting("JOBS_PER_QUEUE")))
    runtimes = recorded_runtimes(cluster)
    window = float(_setting("ARRIVALS_HOURS")) * 3600
    recent = build_trace(cluster, now - timedelta(seconds=window), now).jobs if targets else []
    began = time.thread_time()
    clock = budget_clock()

    history = any(runtimes.values())
    period = max(session_period(), float(_setting("PERIOD_SECONDS")))
    # (a few periods suffice without a recorded runtime: nothing that runs ends, nothing changes after the first ones)
    horizon = float(_setting("HORIZON_HOURS")) * 3600 if history else 10 * period
    forecasts = (
        forecast_starts(
            snapshot,
            now=now.timestamp(),
            # a coarser grid than the live sessions' (1 s): an admitted job waiting for room runs a session each period
            period=period,
            runtimes=runtimes,
            targets=targets,
            # without a recorded runtime nothing ends: one draw says which jobs can never start (alone, they do not)
            draws=int(_setting("DRAWS")) if history else 1,
            seed=int(now.timestamp()),
            horizon=horizon,
            clock=clock,
            budget=float(_setting("BUDGET_SECONDS") if budget is None else budget),
            recent=recent,
            window=window,
        )
        if targets
        else {}
    )
    return {
        "computed": now,
        "cpu_seconds": round(time.thread_time() - began, 3),
        "jobs": {key: _entry(f, horizon) for key, f in forecasts.items()},
        "no_history": not history,
        "requested": None,
    }


def _ttl() -> float:
    return float(_setting("TTL_SECONDS"))


def _age(row: StartEstimates, now: datetime) -> float:
    return (now - row.computed).total_seconds()


def _round_of_a_reader(cluster: Cluster, now: datetime) -> StartEstimates:
    """A round a page or an API request computes (within its budget), kept once the request's transaction commits
    (``core.advisory``: a reading request stays a read); when the budget cut it, the worker's round, with its own
    budget, is asked for next."""
    fields = _round(cluster, float(_setting("PAGE_BUDGET_SECONDS")), now)
    row = StartEstimates(cluster=cluster, **fields)

    def keep() -> None:
        kept = _keep(cluster, fields)
        if any(e.get("cut") for e in kept.jobs.values()):
            _ask_refresh(kept, now)

    after_commit(keep, "a round of start estimates a reader computed")
    return row


def _ask_refresh(row: StartEstimates, now: datetime) -> None:
    """Send the task once per TTL (compare-and-swap on ``requested``: concurrent readers send it once)."""
    from planning.tasks import estimate_starts

    def claim() -> None:
        claimed = (
            StartEstimates.objects.filter(cluster_id=row.cluster_id, computed=row.computed)
            .exclude(requested__gt=now - timedelta(seconds=_ttl()))
            .update(requested=now)
        )
        if claimed:
            estimate_starts.delay(row.cluster_id)

    after_commit(claim, "asking for a round of start estimates")  # a reading request's write (core.advisory)


def _asked_key(cluster_id: int) -> str:
    return f"fairway:start-estimates-asked:{cluster_id}"


def _worker_asked(cluster_id: int, now: datetime) -> bool:
    """Ask the estimates worker for a round when nobody has since the last one (the cache keeps when it was asked,
    ``cache.add``: concurrent readers ask once); whether the wait for its answer is still running (False: compute
    here, the worker did not answer in time, or the wait is 0)."""
    from planning.tasks import estimate_starts

    wait = float(_setting("WORKER_WAIT_SECONDS"))
    if wait <= 0:
        return False
    asked = cache.get(_asked_key(cluster_id))
    if asked is None:
        if cache.add(_asked_key(cluster_id), now.timestamp(), timeout=max(3600.0, 10 * wait)):
            estimate_starts.delay(cluster_id)
        return True
    return now.timestamp() - float(asked) < wait


def estimate_of(pg: PodGroup, now: datetime | None = None) -> dict[str, Any] | None:
    """The ``start_estimate`` of ``pg`` (the why endpoint's key): None for a job that does not wait; else
    ``{"state", "p50_seconds", "p90_seconds", "later_than_seconds", "sentence", "computed", "draws"}`` where
    ``state`` is ``estimated``, ``never`` (it cannot start: ``sentence`` says why), ``pending`` (not computed yet:
    it will be at the next round), ``not_estimated`` (behind the first jobs of its queue) or ``no_history`` (no
    finished job recorded yet to draw runtimes from). Seconds count from ``now``."""
    now = now or timezone.now()
    if pg.phase not in ("Pending", "Inqueue") or pg.pods.exclude(status__in=("Pending", "Failed")).exists():
        return None
    row = StartEstimates.objects.filter(cluster_id=pg.cluster_id).first()
    if row is None or _age(row, now) > 3 * _ttl():
        if _worker_asked(pg.cluster_id, now):
            return {**_NOTHING_YET, "computed": row.computed if row is not None else None, "state": "pending",
                    "sentence": _ESTIMATING}  # fmt: skip
        row = _round_of_a_reader(pg.cluster, now)
    key = f"{pg.namespace.name}/{pg.name}"
    entry = row.jobs.get(key)
    if _age(row, now) > _ttl() or (entry is None and pg.created > row.computed):
        _ask_refresh(row, now)
    base = {**_NOTHING_YET, "computed": row.computed}
    if entry is None:
        if row.no_history:
            return {**base, "state": "no_history", "sentence": _NO_HISTORY}
        if pg.created > row.computed:
            return {**base, "state": "pending", "sentence": _ESTIMATING}
        per_queue = int(_setting("JOBS_PER_QUEUE"))
        return {
            **base,
            "state": "not_estimated",
            "sentence": f"not estimated: only the first {per_queue} waiting jobs of each queue are",
        }
    age = max(0.0, _age(row, now))

    def left(seconds: float | None) -> float | None:
        return None if seconds is None else max(0.0, seconds - age)

    out = {
        **base,
        "draws": entry["draws"],
        "p50_seconds": left(entry["p50"]),
        "p90_seconds": left(entry["p90"]),
        "later_than_seconds": left(entry["later_than"]),
    }
    if entry["never"]:
        return {
            **out,
            "state": "never",
            "sentence": f"it cannot start as the cluster and its quotas are: {entry['never']}",
        }
    if row.no_history:
        return {**base, "state": "no_history", "sentence": _NO_HISTORY}
    return {**out, "state": "estimated", "sentence": sentence(out, cut=bool(entry.get("cut")))}


def _about(seconds: float) -> str:
    """A time ahead as people round it: "a minute", "12 min", "1 h 20 min" (to the minute)."""
    return "a minute" if seconds < 90 else duration(round(seconds / 60) * 60)


def sentence(e: dict[str, Any], *, cut: bool = False) -> str:
    """``likely to start in about 12 min (half the time), within 40 min (9 times in 10)``, or how far it did not."""
    p50, p90, later = e["p50_seconds"], e["p90_seconds"], e["later_than_seconds"]
    looked = " (as far as the replays the CPU budget allowed looked)" if cut else ""
    if p50 is None:
        return (
            f"not likely to start within {_about(later or 0)}{looked} (in half of the draws or more it had not by then)"
        )
    head = "likely to start within a minute" if p50 < 90 else f"likely to start in about {_about(p50)}"
    if p90 is None:
        return f"{head} (half the time), but it may take more than {_about(later or 0)}{looked} (1 time in 10 or more)"
    if _about(p90) == _about(p50):  # the runtimes drawn agree: one time says it
        return f"{head} (9 times in 10)"
    return f"{head} (half the time), within {_about(p90)} (9 times in 10)"
