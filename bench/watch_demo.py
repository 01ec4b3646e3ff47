"""Watch a running deployment (``make run``) for a while and print issue 26's figures, in real time.

    .venv/bin/python bench/watch_demo.py [--minutes 60] [--every 10] [--cluster default]

Run from the checkout whose ``make run`` is running (it reads the same database, ``DATABASE_URL`` or the embedded
SQLite file), beside it. Every ``--every`` seconds it samples the gangs: a podgroup with ``minMember`` above 1 whose
placed pods (Bound, Running, or Succeeded: a gang finishing pod by pod is not broken) are fewer than its minimum
while some hold GPUs is *broken*; the GPU-seconds it holds
past the policy's ``gangRepairTimeout`` plus one sample are counted (the figure the gang repair must keep at 0). At
the end it reads the evictions and sessions of the window: evictions by action, evictions per bound pod, a job's
task (its replacements ``-r<N>`` included) evicted again within a minute, jobs removed as completed; and issue 31's
period: the time between the starts of consecutive sessions (p50, p90, p99, max, and how many were over
``--period-target``), the sessions' durations, and the sessions that failed or were skipped; and the machine's
load average (1 minute) at each sample, mean and max, to state beside the figures. Prints JSON; asserts
nothing. The soak (``bench/bench_soak.py``) measures the same in virtual time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RETRY = re.compile(r"-r\d+$")
_HOLDING = ("Bound", "Running")  # pods that hold their GPUs
_READY = (*_HOLDING, "Succeeded")  # a gang's pods that count toward its minimum (Volcano: finished ones too)


def _gpus(request: object) -> int:
    from engine.resources import ResourceList

    if isinstance(request, ResourceList):
        return int(request.raw.get("nvidia.com/gpu", 0)) // 1000
    return 0


def _sample(cluster: object, broken_since: dict[int, float], now: float, bound_s: float) -> tuple[int, int]:
    """(GPUs held by broken gangs now, GPUs held by gangs broken for longer than ``bound_s``)."""
    from scheduling.models import Pod, PodGroup

    gangs = dict(PodGroup.objects.filter(cluster=cluster, min_member__gt=1).values_list("pk", "min_member"))
    placed: dict[int, int] = {}
    held: dict[int, int] = {}
    for pg, status, request in Pod.objects.filter(
        cluster=cluster, podgroup__in=list(gangs), status__in=_READY
    ).values_list("podgroup_id", "status", "request"):
        placed[pg] = placed.get(pg, 0) + 1
        if status in _HOLDING:
            held[pg] = held.get(pg, 0) + _gpus(request)
    now_broken = {pg for pg, n in placed.items() if n < gangs[pg] and held.get(pg, 0)}
    for pg in list(broken_since):
        if pg not in now_broken:
            del broken_since[pg]
    for pg in now_broken:
        broken_since.setdefault(pg, now)
    late = sum(held[pg] for pg in now_broken if now - broken_since[pg] > bound_s)
    return sum(held[pg] for pg in now_broken), late


def _evictions(cluster: object, since: datetime) -> dict[str, object]:
    from scheduling.models import Eviction, RemovedJob, SchedulingSession

    rows = list(
        Eviction.objects.filter(cluster=cluster, created__gte=since)
        .order_by("created", "id")
        .values_list("action", "pod_uid", "created")
    )
    by_action: dict[str, int] = {}
    last: dict[str, float] = {}
    twice = 0
    for action, uid, created in rows:
        by_action[action] = by_action.get(action, 0) + 1
        if action == "node-lost":
            continue
        task, at = RETRY.sub("", uid), created.timestamp()
        if at - last.get(task, -1e18) < 60:
            twice += 1
        last[task] = at
    bound = sum(SchedulingSession.objects.filter(cluster=cluster, started__gte=since).values_list("bound", flat=True))
    completed = RemovedJob.objects.filter(cluster=cluster, removed_at__gte=since, phase="Completed").count()
    return {
        "evictions": by_action,
        "pods_bound": bound,
        "evictions_per_bound_pod": round(len(rows) / bound, 4) if bound else None,
        "evicted_twice_in_a_minute": twice,
        "jobs_removed_completed": completed,
    }


def _rank(values: list[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile of ``values`` (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _periods(cluster: object, since: datetime, target: float) -> dict[str, object]:
    """The scheduling sessions of the window: how regularly they started, how long they took, which did not run."""
    from scheduling.models import SchedulingSession, SessionKind, SessionStatus

    rows = list(
        SchedulingSession.objects.filter(cluster=cluster, kind=SessionKind.SESSION, started__gte=since)
        .order_by("started", "id")
        .values_list("started", "status", "duration_ms")
    )
    ran = [(started.timestamp(), ms) for started, status, ms in rows if status == SessionStatus.OK]
    gaps = [b[0] - a[0] for a, b in pairwise(ran)]
    durations = [ms for _, ms in ran]

    def spread(values: list[float], digits: int) -> dict[str, float | None]:
        out = {f"p{int(q * 100)}": _rank(values, q) for q in (0.5, 0.9, 0.99)} | {"max": max(values, default=None)}
        return {k: None if v is None else round(v, digits) for k, v in out.items()}

    return {
        "sessions": len(ran),
        "sessions_failed": sum(1 for _, status, _ in rows if status == SessionStatus.FAILED),
        "sessions_skipped": sum(1 for _, status, _ in rows if status == SessionStatus.SKIPPED),
        "period_s": spread(gaps, 3),
        "periods_over_target": sum(1 for g in gaps if g > target),
        "period_target_s": target,
        "session_ms": spread(durations, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=10.0)
    parser.add_argument("--cluster", default="default")
    parser.add_argument("--period-target", type=float, default=1.1, help="the period a session start should keep (s)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    import django

    django.setup()
    from engine.policy.policy import Policy
    from scheduling.models import Cluster

    cluster = Cluster.objects.get(name=args.cluster)
    policy = Policy.from_yaml(cluster.scheduler_policy) if cluster.scheduler_policy else Policy.from_dict({})
    bound_s = float(policy.enqueue_args().gang_repair_timeout) + args.every
    since = datetime.now(UTC)
    start = time.monotonic()
    broken_since: dict[int, float] = {}
    late_gpu_s = held_gpu_s = 0.0
    samples = 0
    loads: list[float] = []
    while time.monotonic() - start < args.minutes * 60:
        loads.append(os.getloadavg()[0])
        held, late = _sample(cluster, broken_since, time.monotonic(), bound_s)
        held_gpu_s += held * args.every
        late_gpu_s += late * args.every
        samples += 1
        time.sleep(args.every)
    figures = {
        "minutes": args.minutes,
        "samples": samples,
        "bound_s": bound_s,
        "broken_gang_gpu_seconds": held_gpu_s,
        "broken_gang_gpu_seconds_past_bound": late_gpu_s,
        **_evictions(cluster, since),
        **_periods(cluster, since, args.period_target),
        "load_average_1m": {"mean": round(sum(loads) / len(loads), 2), "max": round(max(loads), 2)} if loads else None,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
