"""Benchmark: several clusters on several Celery workers, on Redis and PostgreSQL (issue 12, item 3).

Builds 4 clusters of 1,000 nodes and 10,000 pending pods each (the shapes of ``bench/bench_store_session.py``,
sharing one organisation's trees), starts 2 real Celery worker processes (``celery -A controlplane worker
--concurrency 1``) on Redis, and plays the beat: every second, one ``run_session`` message per cluster, each
expiring after a second as the django-celery-beat entries do. Each session runs on whichever worker takes its
message and holds the cluster's lock; the worker's mirror of the cluster is current only if it ran the cluster's
last session, else it reads in full (``scheduling.feed.mirror``), and the workers log each full read.

After a warm-up (the first sessions place what fits), it measures for ``--seconds`` and prints, per cluster, the
sessions that ran, the achieved session period (mean and largest gap between consecutive sessions' starts), the
median session time, and how many sessions read in full.

    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 .venv/bin/python bench/bench_workers.py

``--takeover`` measures a failover instead (issue 31, item 3): one cluster of ``--nodes`` nodes and 10 times as many
pods (``bench/bench_store_session.py``'s, named ``bench``; ``--reuse`` keeps the one built and placed by an earlier
run), the beat's one message a second, 2 workers. Once one worker holds the cluster and the other keeps its standby
copy (``scheduling.feed.standby``: its log says so), the holder is killed (SIGKILL to its process group) right
after one of its sessions committed, the worst moment for the affinity window; the bench prints the seconds from
the kill to the end of the first session the other worker completed, that session's time and the next ones', and
the steady sessions' median before the kill. The killed worker is started again (it becomes the standby) and this
repeats ``--rounds`` times. ``--window`` sets ``FAIRWAY_AFFINITY_WINDOW_SECONDS`` for the workers, ``--no-standby``
turns ``FAIRWAY_WARM_STANDBY`` off (the takeover is then a full read), ``--churn P`` changes P %% of the pods every
second besides (``bench/bench_steady.py``'s churn).

    .venv/bin/python bench/bench_workers.py --takeover --nodes 20000 --rounds 3

``DATABASE_URL`` picks the server (default ``postgres://postgres@127.0.0.1:5432/fairway_bench``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")

BENCH = ROOT / "bench" / "bench_store_session.py"
NAMES = ["w1", "w2", "w3", "w4"]


def build(nodes: int) -> list[int]:
    """The cluster of bench_store_session at ``nodes`` nodes, copied into the four clusters w1..w4."""
    subprocess.run(
        [sys.executable, str(BENCH), "--build-only", "--nodes", str(nodes), "--pods", str(nodes * 10)], check=True
    )
    import django

    django.setup()
    from django.db import transaction

    from scheduling.models import Cluster, Node, Pod, PodGroup

    template = Cluster.objects.get(name="bench")
    ids = []
    with transaction.atomic():
        for name in NAMES:
            old = Cluster.objects.filter(name=name).first()
            if old is not None:
                Pod.objects.filter(cluster=old)._raw_delete(Pod.objects.db)
                PodGroup.objects.filter(cluster=old)._raw_delete(PodGroup.objects.db)
                Node.objects.filter(cluster=old)._raw_delete(Node.objects.db)
                old.delete()
            cluster = Cluster.objects.create(name=name, scheduler_policy=template.scheduler_policy)
            ids.append(cluster.pk)
            Node.objects.bulk_create(
                Node(cluster=cluster, **{k: v for k, v in row.items() if k not in ("id", "cluster_id")})
                for row in Node.objects.filter(cluster=template).values()
            )
            groups = {}
            for row in PodGroup.objects.filter(cluster=template).values():
                old_id = row.pop("id")
                row.pop("cluster_id")
                groups[old_id] = PodGroup(cluster=cluster, **row)
            made = PodGroup.objects.bulk_create(list(groups.values()), batch_size=2000)
            new_id = {old: pg.pk for old, pg in zip(groups, made, strict=True)}
            Pod.objects.bulk_create(
                (
                    Pod(
                        cluster=cluster,
                        **{k: v for k, v in row.items() if k not in ("id", "cluster_id", "podgroup_id")},
                        podgroup_id=new_id[row["podgroup_id"]],
                    )
                    for row in Pod.objects.filter(cluster=template).values()
                ),
                batch_size=5000,
            )
    # The template goes (it has no worker schedule here); only w1..w4 are run.
    Pod.objects.filter(cluster=template)._raw_delete(Pod.objects.db)
    PodGroup.objects.filter(cluster=template)._raw_delete(PodGroup.objects.db)
    Node.objects.filter(cluster=template)._raw_delete(Node.objects.db)
    template.delete()
    print(f"built: 4 clusters of {nodes:,} nodes and {nodes * 10:,} pending pods")
    return ids


def start_workers(
    count: int, log_dir: Path, env: dict[str, str] | None = None, first: int = 0
) -> list[subprocess.Popen[bytes]]:
    workers = []
    for i in range(first, first + count):
        log = open(log_dir / f"worker-{i}.log", "ab")  # noqa: SIM115 - open for the worker's lifetime
        workers.append(
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "celery"),
                    "-A",
                    "controlplane",
                    "worker",
                    "--concurrency",
                    "1",
                    "--pool",
                    "prefork",
                    "--loglevel",
                    "INFO",
                    "-n",
                    f"bench{i}@%h",
                    "--without-gossip",
                    "--without-mingle",
                ],
                cwd=ROOT,
                env={**os.environ, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed with its pool's child
            )
        )
    return workers


READY = "standby copy: full read"  # a worker's log line once it holds a standby copy


def _holder(cluster_id: int) -> str:
    from scheduling.models import ClusterFeed

    return ClusterFeed.objects.filter(cluster_id=cluster_id).values_list("last_queue", flat=True).first() or ""


def takeover(args: argparse.Namespace) -> None:
    """The failover of one big cluster between 2 workers (see the module docstring)."""
    import signal
    import socket
    import threading

    if not args.reuse:
        subprocess.run(
            [sys.executable, str(BENCH), "--build-only", "--nodes", str(args.nodes), "--pods", str(args.nodes * 10)],
            check=True,
        )
    import django

    django.setup()
    from controlplane.celery import app
    from scheduling.feed.affinity import queue_of
    from scheduling.models import Cluster, ClusterFeed, SchedulingSession
    from scheduling.tasks import run_session

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_steady import churn

    cluster = Cluster.objects.get(name="bench")
    cid = cluster.pk
    ClusterFeed.objects.filter(cluster_id=cid).update(last_queue="", last_session_at=None)  # an earlier run's holder
    app.control.purge()
    log_dir = Path(os.environ.get("BENCH_LOG_DIR", "/tmp")) / "fairway-bench-takeover"
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("worker-*.log"):
        old.unlink()
    env = {"FAIRWAY_WARM_STANDBY": "false" if args.no_standby else "true"}
    if args.window is not None:
        env["FAIRWAY_AFFINITY_WINDOW_SECONDS"] = str(args.window)
    host = socket.gethostname()
    workers = dict(enumerate(start_workers(2, log_dir, env)))
    marks = dict.fromkeys(workers, 0)  # the standby's first full read logged so often before (a worker's restart)
    stop = threading.Event()

    def beat() -> None:  # django-celery-beat's entry: one message a second, expiring after a second
        tick, start, round_no = 0, time.monotonic(), int(time.time()) * 100
        n = int(args.nodes * 10 * args.churn / 100)
        while not stop.is_set():
            if n:
                churn(cid, n, round_no + tick)
            run_session.apply_async(args=[cid], expires=1.0)
            tick += 1
            stop.wait(max(0.0, start + tick - time.monotonic()))

    def log_of(i: int) -> str:
        return (log_dir / f"worker-{i}.log").read_text(errors="replace")

    def ok_sessions(after: float) -> list[tuple[float, float, float]]:
        """(started, finished, ms) of the cluster's sessions that ran, started after ``after`` (epoch seconds)."""
        from datetime import UTC, datetime

        rows = (
            SchedulingSession.objects.filter(
                cluster_id=cid, kind="session", status="ok", started__gt=datetime.fromtimestamp(after, tz=UTC)
            )
            .order_by("started")
            .values_list("started", "finished", "duration_ms")
        )
        return [(s.timestamp(), f.timestamp() if f else s.timestamp(), ms) for s, f, ms in rows]

    def wait(check: Any, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not check():
            if time.monotonic() > deadline:
                raise SystemExit(f"gave up waiting for {what} (logs: {log_dir})")
            time.sleep(0.05)

    pump = threading.Thread(target=beat, daemon=True)
    pump.start()
    results = []
    try:
        for round_no in range(args.rounds):
            # a holder, and the other worker's standby copy (or, without standby, the holder running steadily)
            wait(lambda: _holder(cid) in {queue_of(f"bench{i}@{host}") for i in workers}, 600, "a holder")
            holder = next(i for i in workers if queue_of(f"bench{i}@{host}") == _holder(cid))
            other = next(i for i in workers if i != holder)
            if not args.no_standby:
                wait(lambda o=other: log_of(o).count(READY) > marks[o], 900, "the standby copy")
            time.sleep(args.warmup)
            steady = [ms for _, _, ms in ok_sessions(time.time() - args.warmup)]
            # kill the holder right after one of its sessions committed
            last = ok_sessions(time.time() - 5)
            seen = last[-1][0] if last else time.time()
            wait(lambda t=seen: bool(ok_sessions(t)), 120, "a session of the holder")
            os.killpg(workers[holder].pid, signal.SIGKILL)
            killed = time.time()
            workers[holder].wait(30)
            wait(lambda t=killed: len(ok_sessions(t)) >= 4, 300, "the sessions after the kill")
            after = ok_sessions(killed)
            took = after[0][1] - killed
            results.append(took)
            print(
                f"round {round_no + 1}: worker {holder} killed; worker {other} completed a session "
                f"{took:.2f} s later (that session {after[0][2]:,.0f} ms, the next {after[1][2]:,.0f} ms and "
                f"{after[2][2]:,.0f} ms; steady before the kill {statistics.median(steady) if steady else 0:,.0f} ms "
                f"median); holder now {_holder(cid)}",
                flush=True,
            )
            marks[holder] = log_of(holder).count(READY)
            workers[holder] = start_workers(1, log_dir, env, first=holder)[0]  # back, as the standby now
    finally:
        stop.set()
        for w in workers.values():
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGTERM)
        for w in workers.values():
            w.wait(60)
    print(
        f"takeover of {args.nodes:,} nodes / {args.nodes * 10:,} pods, window "
        f"{env.get('FAIRWAY_AFFINITY_WINDOW_SECONDS', 'default')} s, standby {'off' if args.no_standby else 'on'}, "
        f"churn {args.churn:g} %: from the kill to the first completed session {min(results):.2f}-{max(results):.2f} s "
        f"over {len(results)} rounds; worker logs: {log_dir}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--takeover", action="store_true", help="measure a failover (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="--takeover: kills")
    parser.add_argument("--reuse", action="store_true", help="--takeover: the cluster built by an earlier run")
    parser.add_argument("--window", type=float, default=None, help="--takeover: the affinity window, seconds")
    parser.add_argument("--no-standby", action="store_true", help="--takeover: FAIRWAY_WARM_STANDBY off")
    parser.add_argument("--churn", type=float, default=0.0, help="--takeover: percent of the pods changed a second")
    args = parser.parse_args()
    from bench.bench_store_session import ensure_database

    sys.argv = [sys.argv[0]]
    ensure_database()
    if args.takeover:
        if args.warmup == 20:
            args.warmup = 5  # steady seconds before each kill
        takeover(args)
        return
    ids = build(args.nodes)
    from django.utils import timezone

    from controlplane.celery import app
    from scheduling.models import SchedulingSession
    from scheduling.tasks import run_session

    app.control.purge()
    log_dir = Path(os.environ.get("BENCH_LOG_DIR", "/tmp")) / "fairway-bench-workers"
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("worker-*.log"):  # the logs are appended to (a worker restarted keeps its file)
        old.unlink()
    workers = start_workers(args.workers, log_dir)
    try:
        start = time.monotonic()
        measured_from = None
        tick = 0
        while time.monotonic() - start < args.warmup + args.seconds:
            if measured_from is None and time.monotonic() - start >= args.warmup:
                measured_from = timezone.now()
            for cid in ids:
                run_session.apply_async(args=[cid], expires=1.0)
            tick += 1
            time.sleep(max(0.0, start + tick - time.monotonic()))
        ended = timezone.now()
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(60)
    assert measured_from is not None
    full_reads = {cid: 0 for cid in ids}
    pattern = re.compile(r"cluster (\d+): full read at [0-9-]+T([0-9:.]+)")
    for log in log_dir.glob("worker-*.log"):
        for m in pattern.finditer(log.read_text(errors="replace")):
            cid = int(m.group(1))
            if cid in full_reads:
                full_reads[cid] += 1
    print(
        f"{args.workers} Celery workers (concurrency 1) on Redis, 4 clusters, one run_session per cluster a second "
        f"(expiring after 1 s), measured {args.seconds} s after a {args.warmup} s warm-up:"
    )
    for name, cid in zip(NAMES, ids, strict=True):
        rows = list(
            SchedulingSession.objects.filter(
                cluster_id=cid, kind="session", status="ok", started__gte=measured_from, started__lt=ended
            )
            .order_by("started")
            .values_list("started", "duration_ms")
        )
        skipped = SchedulingSession.objects.filter(
            cluster_id=cid, status="skipped", started__gte=measured_from, started__lt=ended
        ).count()
        starts = [r[0].timestamp() for r in rows]
        gaps = [b - a for a, b in itertools.pairwise(starts)]
        period = statistics.mean(gaps) if gaps else float("nan")
        print(
            f"  cluster {name}: {len(rows)} sessions, period {period:.2f} s mean (largest gap "
            f"{max(gaps, default=float('nan')):.2f} s), session {statistics.median(r[1] for r in rows) if rows else 0:,.0f} ms "
            f"median, {skipped} skipped (lock held), full reads over the whole run {full_reads[cid]}"
        )
    print(f"worker logs: {log_dir}")


if __name__ == "__main__":
    main()
