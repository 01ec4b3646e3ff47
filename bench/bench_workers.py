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


def start_workers(count: int, log_dir: Path) -> list[subprocess.Popen[bytes]]:
    workers = []
    for i in range(count):
        log = open(log_dir / f"worker-{i}.log", "wb")  # noqa: SIM115 - open for the worker's lifetime
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
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    from bench.bench_store_session import ensure_database

    sys.argv = [sys.argv[0]]
    ensure_database()
    ids = build(args.nodes)
    from django.utils import timezone

    from controlplane.celery import app
    from scheduling.models import SchedulingSession
    from scheduling.tasks import run_session

    app.control.purge()
    log_dir = Path(os.environ.get("BENCH_LOG_DIR", "/tmp")) / "fairway-bench-workers"
    log_dir.mkdir(parents=True, exist_ok=True)
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
