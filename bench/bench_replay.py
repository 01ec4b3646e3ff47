"""Replay speed (issue 29 item 4) for docs/benchmarks.md: the demo's workload written as a trace by its generator run
offline (``engine.replay.workload.generate``, ``fairway trace generate``), then replayed with no change
(``engine.replay.replay``, what ``fairway replay`` runs); the replay is timed on one core and the sessions it ran per
second printed (per second of wall-clock time and of the process's CPU time: on a shared machine the CPU time is
the one-core figure), with the trace's job count; then the report is made from the run (``run_report``, what
``fairway replay`` prints next) and its CPU time printed as well.

    .venv/bin/python bench/bench_replay.py --size small --hours 168 --period 60
    .venv/bin/python bench/bench_replay.py --size large --hours 1 --period 10
    .venv/bin/python bench/bench_replay.py --trace day.jsonl --stages
    .venv/bin/python bench/bench_replay.py --trace day.jsonl --profile day.pstats
    .venv/bin/python bench/bench_replay.py --trace week.jsonl --changes changes.yaml

``--trace FILE`` replays a trace saved before (``--save``) instead of generating one: the same workload for paired
runs. Where the CPU goes, in milliseconds of CPU a session: ``--stages`` times the stages of each session without a
profiler (the session's opening, its kept state and quota values, each action, its close, and the replay loop's own
steps: applying the result, the recycling pass, finishes, arrivals, samples); ``--profile FILE`` runs the replay
under cProfile, writes the statistics to ``FILE`` and prints the functions taking the most cumulative time, as
shares of the profiled replay (its clock is the wall clock, cheap to read: on a loaded machine every function waits
its turn alike; read by CPU time the profiler's own clock calls cost more than the replay. Its overhead still
inflates small, often called functions: the shares rank, ``--stages`` gives the amounts).

``--changes FILE`` (the what-if change language) times a replay with changes instead, what the dashboard's replay
and ``fairway replay --changes`` run (``controlplane.side_by_side.replay_both``): the baseline and the proposal one after
the other in one process, then side by side in two, each by its wall-clock time (what an admin waits) and its CPU
time (both processes'), and whether the two ways gave the same reports.

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
    from bench.bench_soak import fresh_database

    fresh_database("fairway_bench_replay")
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    from planning.trace import build_trace
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    before = timezone.now() - timedelta(seconds=1)
    Cluster.objects.get_or_create(name="default")
    call_command("load_demo", "--size", size, verbosity=0)
    call_command("ensure_schedules", "--simulated", "default", verbosity=0)
    now = timezone.now()
    trace = build_trace(Cluster.objects.get(name="default"), before, now, period=1, tree_at=now)
    assert trace.tree is not None
    return trace.tree, trace.jobs


# What ``--stages`` times: (label, module, attribute); an indented label is a part of the one above it. The actions
# are added from the engine's table of actions, each under "  action NAME".
STAGES = (
    ("session, in all", "engine.replay.loop", "_Replay.session"),
    ("  opening", "engine.session.session", "Session.__init__"),
    ("    kept state (update or full build)", "engine.session.session", "Session._open_state"),
    ("    quota values at open", "engine.session.session", "Session._open_values"),
    ("  close (statuses, reasons)", "engine.session.session", "Session.close"),
    ("  loop: applying the result", "engine.session.run", "apply_result"),
    ("  loop: recycling pass", "engine.replay.loop", "_Replay._recycle"),
    ("  loop: finishes", "engine.replay.loop", "_Replay.apply_finishes"),
    ("  loop: arrivals", "engine.replay.loop", "_Replay.add_arrivals"),
    ("  loop: pipelined pods", "engine.replay.loop", "_Replay._pipelined"),
    ("  loop: evictions", "engine.replay.loop", "_Replay._evicted"),
    ("  loop: samples", "engine.replay.loop", "_Replay._sample"),
)


def time_stages() -> dict[str, float]:
    """Wrap each stage of ``STAGES`` and each action with a CPU timer (this process only: a benchmark's
    instrument); returns the seconds each has taken so far, filled in as the replay runs."""
    import importlib

    from engine.session.actions import ACTIONS

    spent: dict[str, float] = {}

    def timed(label: str, fn: Any) -> Any:
        spent[label] = 0.0

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            begun = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.process_time() - begun

        return wrapper

    for label, module, attribute in STAGES:
        owner: Any = importlib.import_module(module)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, timed(label, getattr(owner, name)))
    for name, action in list(ACTIONS.items()):
        ACTIONS[name] = timed(f"  action {name}", action)
    return spent


def profile_top(stats: Any, sessions: int, count: int = 40) -> list[str]:
    """The ``count`` functions of a cProfile run with the most cumulative time: per line, the cumulative and own
    time as percentages of the profiled total, calls a session, and the function."""
    root = str(ROOT) + "/"
    total = max(cumulative for (_, _, _, cumulative, _) in stats.stats.values())
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][3])[:count]
    out = []
    for (filename, line, function), (_, calls, own, cumulative, _) in rows:
        where = f"{filename.replace(root, '')}:{line}({function})"
        out.append(f"{100 * cumulative / total:6.1f} % {100 * own / total:5.1f} % {calls / sessions:9.1f}  {where}")
    return out


def workload(args: argparse.Namespace) -> tuple[Any, int, float]:
    """The trace to replay (``--trace``, else generated as the module docstring says), its jobs there at the start,
    and the seconds generating it took."""
    from engine.replay import read_trace, trace_lines
    from engine.replay.loop import tree_snapshot
    from engine.replay.workload import generate
    from tests.support.soak import START

    if args.trace is not None:
        trace = read_trace(args.trace.read_text().splitlines(), str(args.trace))
        return trace, sum(1 for j in trace.jobs if j.submit <= trace.header.start), 0.0
    objects, first = tree_and_first_jobs(args.tree, args.size)
    tree = tree_snapshot(objects)
    started = time.perf_counter()
    trace = generate(
        tree, objects, start=START.timestamp(), hours=args.hours, period=args.period, seed=args.seed, jobs=first
    )
    generated = time.perf_counter() - started
    if args.save:
        args.save.write_text("\n".join(trace_lines(trace)) + "\n")
    return trace, len(first), generated


def side_by_side(trace: Any, changes_file: Path) -> dict[str, Any]:
    """A replay with changes one after the other (one process), then side by side (two): wall-clock and CPU time."""
    import resource

    import yaml

    from controlplane.side_by_side import replay_both

    changes = yaml.safe_load(changes_file.read_text())
    changes = changes["changes"] if isinstance(changes, dict) else changes
    figures: dict[str, Any] = {"jobs": len(trace.jobs), "pods": sum(j.pods for j in trace.jobs)}
    reports = []
    for processes in (1, 2):
        cpu = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        reports.append(json.dumps(replay_both(trace, changes, processes=processes), sort_keys=True))
        wall = time.perf_counter() - started
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        child_cpu = children.ru_utime + children.ru_stime - cpu[1].ru_utime - cpu[1].ru_stime
        figures[f"processes_{processes}"] = {
            "wall_s": round(wall, 1),
            "cpu_s": round(time.process_time() - cpu[0] + child_cpu, 1),
            "load": [round(x, 1) for x in os.getloadavg()],
        }
    figures["same_reports"] = reports[0] == reports[1]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("small", "large"), default="small")
    parser.add_argument("--hours", type=float, default=168.0, help="the workload's length (default a week)")
    parser.add_argument("--period", type=int, default=60, help="the session period (seconds, even)")
    parser.add_argument("--seed", type=int, default=0, help="the workload generator's seed")
    parser.add_argument("--tree", type=Path, help="a trace whose Tree and first jobs are used (no database)")
    parser.add_argument("--save", type=Path, help="write the generated trace there")
    parser.add_argument("--trace", type=Path, help="replay this trace (saved with --save) instead of generating one")
    parser.add_argument("--stages", action="store_true", help="the CPU time of each stage, in ms a session")
    parser.add_argument("--profile", type=Path, help="run under cProfile, write the statistics there")
    parser.add_argument("--changes", type=Path, help="time a replay with these changes, in one process and in two")
    args = parser.parse_args()

    from engine.replay import replay, run_report
    from engine.replay.loop import tree_snapshot

    trace, first, generated = workload(args)
    if args.changes is not None:
        print(json.dumps(side_by_side(trace, args.changes), indent=1))
        return
    spent = time_stages() if args.stages else None
    profiler = None
    if args.profile is not None:
        import cProfile

        profiler = cProfile.Profile()
    pods = sum(j.pods for j in trace.jobs)
    started, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    run = replay(trace)
    if profiler is not None:
        profiler.disable()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    reported = time.process_time()
    run_report(run)  # (what ``fairway replay`` prints next: its CPU time too)
    reported = time.process_time() - reported
    same = sum(1 for o in run.outcomes.values() if o.start == o.job.start)
    figures: dict[str, Any] = {
        "size": args.size if args.trace is None else str(args.trace),
        "hours": round(run.grid_points * trace.header.period / 3600, 2),
        "period_s": trace.header.period,
        "seed": args.seed,
        "nodes": len(tree_snapshot(trace.tree).nodes) if trace.tree is not None else None,
        "jobs": len(trace.jobs),
        "first_jobs": first,
        "pods": pods,
        "generate_s": round(generated, 1),
        "replay_s": round(elapsed, 1),
        "replay_cpu_s": round(cpu, 1),
        "report_cpu_s": round(reported, 1),
        "replay_and_report_cpu_s": round(cpu + reported, 1),
        "sessions": run.sessions,
        "periods_skipped": run.grid_points - run.sessions,
        "sessions_per_s": round(run.sessions / elapsed, 1),
        "sessions_per_cpu_s": round(run.sessions / cpu, 1),
        "cpu_ms_per_session": round(1000 * cpu / run.sessions, 2),
        "same_start_as_generated": same,
        "load": [round(x, 1) for x in os.getloadavg()],
    }
    if spent is not None:
        figures["stages_cpu_ms_per_session"] = {k: round(1000 * v / run.sessions, 2) for k, v in spent.items()}
    if profiler is not None:
        import pstats

        profiler.dump_stats(str(args.profile))
        figures["profile_top_cumulative_own_calls"] = profile_top(pstats.Stats(str(args.profile)), run.sessions)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
