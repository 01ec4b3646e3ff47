"""Benchmark: the steady-state scheduling session of a big cluster, with the worker's in-memory mirror.

Builds the cluster of ``bench/bench_store_session.py`` (N nodes, 10 N pending pods in gang jobs, 200 leaf
queues, a 3-level quota tree), runs the first session (a full read: it places what fits), then, in the same
process as a Celery worker would:

* the **steady state**: sessions with nothing changed since the last one (the mirror reads the change feed,
  finds only the previous session's own writes, and the engine finds nothing more to place);
* **1 % changed**: before each session, 1 % of the pods change through the ORM in one transaction (half of
  them running pods that complete, half new pending pods in new jobs); the engine opens on the state it kept
  from the last session, updated for the pods and podgroups that changed (``engine.session.carry``);

and prints, for each, the median / min / max of the session end to end (the ``run_session`` task: lock, mirror
refresh and snapshot, engine, decisions committed) and its phases, whether the mirror read in full, and in how
many of the sessions that ran the engine it updated its kept state instead of building it in full.
``--sizes 1000,5000,10000,20000`` prints the curve of the steady state over cluster sizes (pods x10), and of the
churned sessions. ``--churn 1,3`` measures sessions after each of these percentages of the pods changed (default 1).
``--reuse`` measures on the cluster an earlier run built (the size asked; its pods placed already, the first
session then is a full read that places little) instead of building it again, which takes minutes at 20,000 nodes.
``--profile`` profiles one steady session and one churned session (by cumulative and by own time; the
profiler's clock is this process's CPU time, so a busy machine does not count other processes' work).
``--fairness`` turns fairness over time on (``fairnessOverTime: true`` on the policy's queue plugin and
``elasticquota``): every session then runs the engine (the past usage moves) and writes the usage record.
``--freeze`` collects and freezes the collector's objects after the first session (``gc.freeze``: the copy of the
cluster and the engine's kept state are then never walked by a full collection); each line counts the full
collections during the sessions and their CPU time, and shows the phases of the slowest session.

    .venv/bin/python bench/bench_steady.py                       # 5,000 nodes / 50,000 pods
    .venv/bin/python bench/bench_steady.py --sizes 1000,5000,10000,20000 --repeat 5

``DATABASE_URL`` picks the server (default ``postgres://postgres@127.0.0.1:5432/fairway_bench``), or the embedded
SQLite (``sqlite:////tmp/bench.sqlite3``: a file, migrated when new).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")

BENCH = ROOT / "bench" / "bench_store_session.py"


def build(nodes: int, pods: int) -> None:
    subprocess.run([sys.executable, str(BENCH), "--build-only", "--nodes", str(nodes), "--pods", str(pods)], check=True)


class _Collections:
    """The cyclic collector's full (generation 2) collections while counting: how many, and their CPU time."""

    def __init__(self) -> None:
        self.count = 0
        self.ms = 0.0
        self._start = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._start = time.process_time()
        else:
            self.count += 1
            self.ms += (time.process_time() - self._start) * 1000.0


_FULL = _Collections()


def one_session(cluster_id: int) -> dict[str, Any]:
    from scheduling.feed.mirror import mirror_of
    from scheduling.models import SchedulingSession
    from scheduling.tasks import run_session

    opened = mirror_of(cluster_id).carry.opened
    n0, g0 = _FULL.count, _FULL.ms
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = run_session(cluster_id)
    wall = (time.perf_counter() - t0) * 1000.0
    cpu = (time.process_time() - c0) * 1000.0
    session = SchedulingSession.objects.filter(cluster_id=cluster_id).order_by("-id").first()
    assert session is not None and outcome == "ran", (outcome, session and session.error)
    mirror = mirror_of(cluster_id)
    last = mirror.last
    return {
        "wall": wall,
        "cpu": cpu,  # this process's CPU time (the database server's work not included): steadier under load
        "load": session.timings.get("load_ms", 0.0),
        "engine": session.timings.get("engine_ms", 0.0),
        "write": session.timings.get("write_ms", 0.0),
        "placed": session.bound + session.pipelined,
        "full": last.full,
        "why": last.reason,
        "changes": last.changes,
        "gc": (_FULL.count - n0, _FULL.ms - g0),  # full collections during the session, their CPU ms
        "ran": mirror.carry.opened > opened,  # the engine ran (its last result was not reused)
        "kept": mirror.carry.last.startswith("update"),  # and updated the state it kept (no full build)
    }


def churn(cluster_id: int, n: int, round_no: int) -> None:
    """1 % of the pods change in one transaction: half of the running ones complete, half are new pending pods."""
    from django.db import transaction

    from scheduling.models import Pod, PodGroup

    with transaction.atomic():
        done = list(
            Pod.objects.filter(cluster_id=cluster_id, status__in=["Bound", "Running"])
            .order_by("id")
            .values_list("id", flat=True)[: n // 2]
        )
        Pod.objects.filter(pk__in=done).update(status="Succeeded")
        template = PodGroup.objects.filter(cluster_id=cluster_id).order_by("id").first()
        assert template is not None
        new = []
        for g in range((n - n // 2 + 7) // 8):
            pg = PodGroup.objects.create(
                cluster_id=cluster_id,
                namespace_id=template.namespace_id,
                name=f"churn-{round_no}-{g}",
                queue_id=template.queue_id,
                min_member=8,
            )
            new.extend(
                Pod(
                    cluster_id=cluster_id,
                    namespace_id=template.namespace_id,
                    name=f"churn-{round_no}-{g}-{k}",
                    podgroup=pg,
                    request={"cpu": 500, "memory": 2**30},
                )
                for k in range(8)
            )
        Pod.objects.bulk_create(new[: n - n // 2], batch_size=2000)


def summary(label: str, runs: list[dict[str, Any]]) -> str:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    walls = sorted(r["wall"] for r in runs)
    p99 = walls[min(len(walls) - 1, math.ceil(0.99 * len(walls)) - 1)]
    fulls = sum(1 for r in runs if r["full"])
    ran = sum(1 for r in runs if r["ran"])
    kept = sum(1 for r in runs if r["ran"] and r["kept"])
    collected = [r["gc"] for r in runs if r["gc"][0]]
    slow = sorted(runs, key=lambda r: r["wall"])[-1]
    return (
        f"{label}: median {med('wall'):,.0f} ms end to end (min {walls[0]:,.0f}, p99 {p99:,.0f}, max {walls[-1]:,.0f}; "
        f"this process's CPU {med('cpu'):,.0f}; "
        f"refresh+snapshot {med('load'):,.0f}, engine {med('engine'):,.0f}, write {med('write'):,.0f}); "
        f"rows re-read {statistics.median(r['changes'] for r in runs):,.0f}, placed {med('placed'):,.0f}, "
        f"full reads {fulls} of {len(runs)}, engine on its kept state {kept} of {ran} runs; "
        f"full collections in {len(collected)} sessions ({sum(ms for _, ms in collected):,.0f} ms CPU); "
        f"the slowest: {slow['wall']:,.0f} ms (CPU {slow['cpu']:,.0f}, refresh+snapshot {slow['load']:,.0f}, "
        f"engine {slow['engine']:,.0f}, write {slow['write']:,.0f}, full collections {slow['gc'][1]:,.0f} ms)"
    )


def with_fairness(policy: Any) -> str:
    """``policy`` (a ``Policy``) as YAML, with fairness over time on for both trees."""
    from engine.policy.policy import Policy

    data = policy.to_dict()
    for tier in data["tiers"]:
        for plugin in tier["plugins"]:
            if plugin["name"] in ("proportion", "capacity", "elasticquota"):
                plugin.setdefault("arguments", {})["fairnessOverTime"] = True
    return Policy.from_dict(data).to_yaml()


def measure(
    nodes: int,
    pods: int,
    repeat: int,
    percents: list[float],
    profile: bool,
    fairness: bool = False,
    freeze: bool = False,
) -> float:
    import django

    django.setup()
    from scheduling.feed.mirror import forget
    from scheduling.models import Cluster

    forget()
    cluster = Cluster.objects.get(name="bench")
    if fairness:
        cluster.scheduler_policy = with_fairness(cluster.policy)
        cluster.save(update_fields=["scheduler_policy"])
        print("fairness over time on")
    first = one_session(cluster.pk)
    if freeze:
        c0 = time.process_time()
        gc.collect()
        gc.freeze()
        print(
            f"collected and froze {gc.get_freeze_count():,} objects ({(time.process_time() - c0) * 1000:,.0f} ms CPU)"
        )
    print(
        f"{nodes:,} nodes / {pods:,} pods: first session {first['wall'] / 1000:.2f} s "
        f"(full read: {first['full']}, {first['why']}), placed {first['placed']:,}"
    )
    second = one_session(cluster.pk)  # reads back the first session's bindings
    print(f"  second session {second['wall']:,.0f} ms (rows re-read {second['changes']:,}: the first one's writes)")
    steady = [one_session(cluster.pk) for _ in range(repeat)]
    print("  " + summary("steady state", steady))
    if profile:
        _profile(cluster.pk, "steady", None)
    round_base = int(time.time()) * 100  # new jobs' names, unique across runs on a reused cluster
    for percent in percents:
        n = max(2, int(pods * percent / 100))
        runs = []
        for r in range(repeat):
            churn(cluster.pk, n, round_base + r)
            runs.append(one_session(cluster.pk))
        round_base += repeat
        print("  " + summary(f"{percent:g} % changed ({n:,} pods)", runs))
        if profile:
            _profile(cluster.pk, f"{percent:g} % changed", lambda n=n, r=round_base: churn(cluster.pk, n, r))
            round_base += 1
    return float(statistics.median(r["wall"] for r in steady))


def _profile(cluster_id: int, label: str, before: Any) -> None:
    import cProfile
    import pstats

    if before is not None:
        before()
    profiler = cProfile.Profile(time.process_time)  # CPU time: the machine may be busy
    profiler.enable()
    one_session(cluster_id)
    profiler.disable()
    print(f"--- profile of one session, {label} ---")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    print("--- the same, by own time ---")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--sizes", default="", help="comma-separated node counts for the steady-state curve")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--fairness", action="store_true", help="fairness over time on")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() after the first session")
    parser.add_argument("--churn", default="1", help="comma-separated percentages of the pods changed (0: none)")
    parser.add_argument("--reuse", action="store_true", help="use the cluster built by an earlier run")
    parser.add_argument("--measure-only", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        percents = [float(p) for p in args.churn.split(",") if p and float(p) > 0]
        measure(
            args.measure_only, args.measure_only * 10, args.repeat, percents, args.profile, args.fairness, args.freeze
        )
        return
    sys.argv = [sys.argv[0]]
    from bench.bench_store_session import ensure_database

    ensure_database()
    sizes = [int(s) for s in args.sizes.split(",") if s] or [args.nodes]
    if args.reuse and len(sizes) > 1:
        parser.error("--reuse measures the one cluster built before: give one size")
    for nodes in sizes:
        if not args.reuse:
            build(nodes, nodes * 10)
        cmd = [sys.executable, __file__, "--measure-only", str(nodes), "--repeat", str(args.repeat)]
        cmd += ["--churn", args.churn]
        if args.profile:
            cmd.append("--profile")
        if args.fairness:
            cmd.append("--fairness")
        if args.freeze:
            cmd.append("--freeze")
        subprocess.run(cmd, check=True)  # a fresh process per size, as a worker that just started


if __name__ == "__main__":
    main()
