"""Replay speed (issue 29 item 4) for docs/benchmarks.md: the demo's workload written as a trace by its generator run
offline (``engine.replay.workload.generate``, ``fairway trace generate``), then replayed with no change
(``engine.replay.replay``, what ``fairway replay`` runs); the replay is timed on one core and the sessions it ran per
second printed (per second of wall-clock time and of the process's CPU time: on a shared machine the CPU time is
the one-core figure), with the trace's job count.

    .venv/bin/python bench/bench_replay.py --size small --hours 168 --period 60
    .venv/bin/python bench/bench_replay.py --size large --hours 1 --period 10

The tree (queues, quota groups, namespaces, nodes, the demo's policy) and, for the large demo, its first 7,200 jobs
are read from a database where ``load_demo --size SIZE`` ran (PostgreSQL, ``DATABASE_URL``, default
``postgres://postgres@127.0.0.1:5432/fairway_bench_replay``, created afresh and migrated here), or from ``--tree``: a
trace whose Tree (and jobs submitted at its start) are used. ``--save FILE`` keeps the generated trace. Prints the
figures as JSON; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def tree_and_first_jobs(trace: Path | None, size: str) -> tuple[Any, list[Any]]:
    """The tree's objects and the jobs there at the start: from a trace's Tree and first jobs (``--tree``), else from
    the demo of ``size`` in the database (``_from_database``)."""
    from engine.replay import read_trace

    if trace is None:
        return _from_database(size)
    source = read_trace(trace.read_text().splitlines(), str(trace))
    assert source.tree is not None, f"{trace}: no Tree"
    return source.tree, [j for j in source.jobs if j.submit <= source.header.start]


def _from_database(size: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """The demo's tree objects and first jobs, from a fresh database where ``load_demo --size`` ran."""
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench_replay")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    import django

    from bench.bench_soak import _create_database

    _create_database(os.environ["DATABASE_URL"])
    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    from planning.trace import build_trace
    from quotas import services
    from scheduling.models import Cluster

    call_command("migrate", verbosity=0)
    services.ensure_builtins()
    before = timezone.now() - timedelta(seconds=1)
    Cluster.objects.get_or_create(name="default")
    call_command("load_demo", "--size", size, verbosity=0)
    call_command("ensure_schedules", "--simulated", "default", verbosity=0)
    now = timezone.now()
    trace = build_trace(Cluster.objects.get(name="default"), before, now, period=1, tree_at=now)
    assert trace.tree is not None
    return trace.tree, trace.jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("small", "large"), default="small")
    parser.add_argument("--hours", type=float, default=168.0, help="the workload's length (default a week)")
    parser.add_argument("--period", type=int, default=60, help="the session period (seconds, even)")
    parser.add_argument("--seed", type=int, default=0, help="the workload generator's seed")
    parser.add_argument("--tree", type=Path, help="a trace whose Tree and first jobs are used (no database)")
    parser.add_argument("--save", type=Path, help="write the generated trace there")
    args = parser.parse_args()

    from engine.replay import replay, trace_lines
    from engine.replay.loop import tree_snapshot
    from engine.replay.workload import generate
    from tests.support.soak import START

    objects, first = tree_and_first_jobs(args.tree, args.size)
    tree = tree_snapshot(objects)
    started = time.perf_counter()
    trace = generate(
        tree, objects, start=START.timestamp(), hours=args.hours, period=args.period, seed=args.seed, jobs=first
    )
    generated = time.perf_counter() - started
    if args.save:
        args.save.write_text("\n".join(trace_lines(trace)) + "\n")
    pods = sum(j.pods for j in trace.jobs)
    started, cpu = time.perf_counter(), time.process_time()
    run = replay(trace)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    same = sum(1 for o in run.outcomes.values() if o.start == o.job.start)
    figures = {
        "size": args.size,
        "hours": args.hours,
        "period_s": args.period,
        "seed": args.seed,
        "nodes": len(tree.nodes),
        "jobs": len(trace.jobs),
        "first_jobs": len(first),
        "pods": pods,
        "generate_s": round(generated, 1),
        "replay_s": round(elapsed, 1),
        "replay_cpu_s": round(cpu, 1),
        "sessions": run.sessions,
        "periods_skipped": run.grid_points - run.sessions,
        "sessions_per_s": round(run.sessions / elapsed, 1),
        "sessions_per_cpu_s": round(run.sessions / cpu, 1),
        "same_start_as_generated": same,
    }
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
