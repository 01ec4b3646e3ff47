"""The fairness audit's waits to start (``planning.audit.recorded_jobs`` and ``engine.waits.node_waits``) on a week
of a busy cluster: ``--jobs`` history rows (default 100,000, about a week of the small demo's workload) submitted
over the last ``--days`` days (default 7) in 8 queues and quota groups, and ``--evictions`` evictions of their pods
(default 20,000: preemptions and recycling, each of a job's pod after its start), read as the audit reads them and
turned into each node's waits; prints the seconds of each part per run as JSON. The rows go into a fresh PostgreSQL database (``DATABASE_URL``,
default ``postgres://postgres@127.0.0.1:5432/fairway_bench_audit_waits``, created afresh and migrated here).

    .venv/bin/python bench/bench_audit_waits.py [--jobs 100000] [--days 7] [--evictions 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--evictions", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from bench.bench_soak import fresh_database

    fresh_database("fairway_bench_audit_waits")
    from datetime import timedelta

    from django.utils import timezone

    from engine.waits import TreeParents, node_waits
    from planning.audit import recorded_jobs
    from scheduling.models import Cluster, Eviction, JobRecord

    cluster, _ = Cluster.objects.get_or_create(name="default")
    now = timezone.now()
    spacing = args.days * 86400 / args.jobs

    def owner(i: int) -> dict[str, Any]:  # job i's namespace, queue and quota group (8 teams)
        return {"cluster": cluster, "namespace": f"ns{i % 8}", "queue": f"q{i % 8}", "quota_group": f"g{i % 8}"}

    def at(i: int, after_start: float) -> Any:  # job i submitted every ``spacing`` s, waiting i % 600 s
        return now - timedelta(seconds=i * spacing - (i % 600) - after_start)

    jobs = (
        JobRecord(
            **owner(i),
            name=f"job-{i}",
            roles=[["", 2, {"cpu": 1000}]],
            submitted=now - timedelta(seconds=i * spacing),
            started=at(i, 0),
            finished=at(i, 120),
        )
        for i in range(args.jobs)
    )
    JobRecord.objects.bulk_create(jobs, batch_size=5000)
    every = max(1, args.jobs // max(1, args.evictions))
    evictions = (
        Eviction(
            **owner(i),
            pod_uid=f"ns{i % 8}/job-{i}-0",
            job=f"job-{i}",
            action="recycle" if i % 3 else "preempt",
            created=at(i, 60),
        )
        for i in range(0, args.jobs, every)
    )
    Eviction.objects.bulk_create(itertools.islice(evictions, args.evictions), batch_size=5000)
    parents = TreeParents({f"q{i}": "root" for i in range(8)}, {f"g{i}": "root" for i in range(8)})
    runs = []
    for _ in range(args.runs):
        started = time.perf_counter()
        jobs = recorded_jobs(cluster, now - timedelta(days=args.days), now)
        read = time.perf_counter()
        node_waits(jobs, parents, now.timestamp())
        runs.append(
            {
                "jobs": len(jobs),
                "evicted_pods": sum(j.preempted + j.recycled for j in jobs),
                "read_s": round(read - started, 2),
                "waits_s": round(time.perf_counter() - read, 2),
            }
        )
    print(json.dumps({"runs": runs, "load": [round(x, 1) for x in os.getloadavg()]}, indent=1))


if __name__ == "__main__":
    main()
