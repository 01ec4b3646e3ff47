"""Calibration of "when will my job start?" (issue 29 item 6) for docs/replay.md and docs/benchmarks.md: how often the
90 % bound held and the median error of the 50 % estimate.

The demo's workload runs in virtual time (its generator against the replay, as ``fairway trace generate`` and the soak
run it: the real engine, a session a period, jobs arriving all along). Every ``--every`` seconds after ``--warmup``,
the cluster's state after the last session is taken as a live control plane would read it (its running and waiting
jobs, and the runtimes of the jobs finished so far, per queue: nothing of the jobs' own durations), and the estimate is
made as ``planning.estimates`` makes it (``engine.replay.forecast``: the first ``--per-queue`` waiting jobs of each
queue, ``--draws`` forward replays with no new arrival, runtimes drawn from each queue's finished jobs) from the next
session on. The workload then goes on, and each estimate is compared with the start the job really got.

    .venv/bin/python bench/bench_estimates.py --size small --hours 8 --period 60

The tree (and the demo's first jobs) come from a database where ``load_demo --size SIZE`` ran (``bench_replay``'s
``_from_database``: ``DATABASE_URL``, created afresh), or from ``--tree`` (a trace: its Tree and the jobs submitted at
its start). Estimates made later than ``--hours`` minus ``--tail`` are not scored (their jobs may start after the
run). Prints the figures as JSON; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("small", "large"), default="small")
    parser.add_argument("--hours", type=float, default=8.0, help="the workload's length in virtual time")
    parser.add_argument("--period", type=int, default=60, help="the session period (seconds, even)")
    parser.add_argument("--seed", type=int, default=0, help="the workload generator's seed")
    parser.add_argument("--warmup", type=float, default=3600.0, help="seconds before the first estimate")
    parser.add_argument("--tail", type=float, default=7200.0, help="no estimate in the run's last seconds")
    parser.add_argument("--every", type=float, default=600.0, help="seconds between estimate rounds")
    parser.add_argument("--per-queue", type=int, default=5, help="waiting jobs estimated per queue")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument(
        "--window", type=float, default=3600.0, help="the last seconds of arrivals submitted again ahead (0: none)"
    )
    parser.add_argument("--tree", type=Path, help="a trace whose Tree and first jobs are used (no database)")
    args = parser.parse_args()

    from dataclasses import replace

    from bench.bench_replay import tree_and_first_jobs
    from engine.replay.forecast import forecast_starts, waiting_jobs
    from engine.replay.loop import _Replay, tree_snapshot
    from engine.replay.trace import Trace, TraceHeader
    from engine.replay.workload import WorkloadSettings, _Generator
    from tests.support.soak import START

    objects, first = tree_and_first_jobs(args.tree, args.size)
    tree = tree_snapshot(objects)
    start = START.timestamp()
    end = start + (int(args.hours * 3600 / args.period) - 1) * args.period
    header = TraceHeader(cluster="default", start=start, end=end, period=args.period, source="generator")
    base = Trace(header=header, jobs=[replace(j, submit=start) for j in first], tree=objects)
    run = _Replay(base, tree.replace(tasks={}, podgroups={}), tree.policy, args.seed)
    run.source = _Generator(tree, "default", args.seed, WorkloadSettings(), args.period)

    estimates: list[dict[str, Any]] = []
    next_round = start + args.warmup
    cpu = 0.0
    rounds = 0

    def checkpoint() -> None:
        nonlocal next_round, cpu, rounds
        if not run.samples:
            return
        t = run.samples[-1].time  # the state after the last session (and its recycling)
        if t < next_round or t > end - args.tail:
            return
        next_round = t + args.every
        pools: dict[str, list[float]] = {}
        for o in run.outcomes.values():
            if o.finish is not None and o.finish <= t and o.job.runtime is not None:
                pools.setdefault(o.job.queue, []).append(o.job.runtime)
        origin = t + args.period  # the next session, where the live control plane's estimate starts
        targets = waiting_jobs(run.snapshot, per_queue=args.per_queue)
        began = time.process_time()
        got = forecast_starts(
            run.snapshot,
            now=origin,
            period=args.period,
            runtimes=pools,
            targets=targets,
            draws=args.draws,
            seed=rounds,
            horizon=args.tail,
            recent=[o.job for o in run.outcomes.values() if t - args.window <= o.job.submit <= t],
            window=args.window,
        )
        cpu += time.process_time() - began
        rounds += 1
        for key, f in got.items():
            estimates.append(
                {"key": key, "at": origin, "p50": f.quantile(0.5), "p90": f.quantile(0.9), "never": f.never}
            )

    wall = time.perf_counter()
    result = run.run(checkpoint)
    wall = time.perf_counter() - wall

    held = scored = beyond = below50 = 0
    errors: list[float] = []
    relative: list[float] = []
    for e in estimates:
        start_at = result.outcomes[e["key"]].start
        actual = None if start_at is None else start_at - e["at"]
        if e["never"] is not None or e["p90"] is None:
            beyond += 1  # no 90 % bound given (it said "cannot start" or "may take more than the horizon")
            continue
        scored += 1
        if actual is not None and actual <= e["p90"]:
            held += 1
        if e["p50"] is not None and actual is not None:
            errors.append(abs(actual - e["p50"]))
            relative.append(abs(actual - e["p50"]) / max(actual, args.period))
            below50 += actual <= e["p50"]
    figures = {
        "size": args.size,
        "hours": args.hours,
        "period_s": args.period,
        "seed": args.seed,
        "draws": args.draws,
        "per_queue": args.per_queue,
        "window_s": args.window,
        "rounds": rounds,
        "jobs": len(result.outcomes),
        "estimates": len(estimates),
        "scored": scored,
        "without_a_90_bound": beyond,
        "p90_held": round(held / scored, 3) if scored else None,
        "p50_held": round(below50 / len(errors), 3) if errors else None,
        "p50_median_abs_error_s": round(statistics.median(errors), 1) if errors else None,
        "p50_median_relative_error": round(statistics.median(relative), 3) if relative else None,
        "median_actual_wait_s": round(
            statistics.median(
                [
                    result.outcomes[e["key"]].start - e["at"]  # type: ignore[operator]
                    for e in estimates
                    if result.outcomes[e["key"]].start is not None
                ]
            ),
            1,
        )
        if estimates
        else None,
        "estimate_cpu_s_per_round": round(cpu / rounds, 2) if rounds else None,
        "run_s": round(wall, 1),
    }
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
