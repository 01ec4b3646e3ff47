"""Benchmark: Kueue's Fair Sharing with preemption at 200 ClusterQueues: prints figures, asserts nothing.

Workload (deterministic): ``--cohorts`` Cohorts of ``--per-cohort`` ClusterQueues each (200 by default) under one root
Cohort, every ClusterQueue with a nominal quota of 10 cpu (one ResourceFlavor), ``reclaimWithinCohort: Any`` and
``withinClusterQueue: LowerPriority``, Fair Sharing on (a ``config.kueue.x-k8s.io`` Configuration); nodes of 8 cpu
holding exactly the cohort's quota; the first half of the ClusterQueues of each cohort borrow: each runs twice its
quota (the cluster is full), and the other half each have 10 pending 1-cpu pods, so that every one of those is
admitted only by preempting a borrower's pod (about 1,000 evictions over 3,000 pods). Then ``fairway simulate``'s
code, in this process: the manifests read, one session (``--sessions``), the JSON document; each phase timed (CPU
and wall), with ``--profile`` the session's profile by cumulative and own time.

    .venv/bin/python bench/bench_kueue_fair.py [--cohorts 20 --per-cohort 10] [--profile] [--keep FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NOMINAL = 10  # cpu per ClusterQueue
NODE_CPU = 8


def manifests(cohorts: int, per_cohort: int) -> tuple[str, dict[str, int]]:
    """The input's YAML and its counts."""
    docs = [
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  enable: true\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default-flavor}\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\n",
    ]
    queues = cohorts * per_cohort
    total_cpu = queues * NOMINAL
    nodes = -(-total_cpu // NODE_CPU)
    docs += [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i:04d}}}\n"
        f'status: {{allocatable: {{cpu: "{NODE_CPU}", memory: 64Gi, pods: "110"}}}}\n'
        for i in range(nodes)
    ]
    free = [NODE_CPU] * nodes
    node = 0
    running = pending = 0
    for c in range(cohorts):
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{c:03d}}}\nspec: {{parentName: org}}\n"
        )
        for q in range(per_cohort):
            name = f"cq-{c:03d}-{q:02d}"
            docs.append(
                f"""apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  cohortName: c{c:03d}
  namespaceSelector: {{}}
  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: {NOMINAL}}}
"""
            )
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {name}}}\nspec: {{clusterQueue: {name}}}\n"
            )
            borrower = q < per_cohort // 2
            for i in range(2 * NOMINAL if borrower else NOMINAL):
                spec = 'containers: [{name: c, resources: {requests: {cpu: "1"}}}]'
                status = ""
                if borrower:
                    while node < nodes and free[node] == 0:
                        node += 1
                    if node < nodes:  # else the cluster is full: the rest of the borrowers' pods wait
                        free[node] -= 1
                        spec = f"nodeName: n{node:04d}, {spec}"
                        status = "status: {phase: Running}\n"
                        running += 1
                if not status:
                    pending += 1
                docs.append(
                    f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: {name}\n"
                    f'  creationTimestamp: "2026-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}Z"\n'
                    f"  labels: {{kueue.x-k8s.io/queue-name: lq}}\nspec: {{{spec}}}\n{status}"
                )
    return "---\n".join(docs), {"cluster_queues": queues, "nodes": nodes, "running": running, "pending": pending}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cohorts", type=int, default=20)
    parser.add_argument("--per-cohort", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep", type=Path, help="also write the input here")
    args = parser.parse_args(argv)

    from engine.manifests import load_manifests
    from engine.simulate import simulate

    text, counts = manifests(args.cohorts, args.per_cohort)
    if args.keep:
        args.keep.write_text(text)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.yaml"
        path.write_text(text)
        w0, c0 = time.perf_counter(), time.process_time()
        loaded = load_manifests([(str(path), text)])
        w1, c1 = time.perf_counter(), time.process_time()
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        document = simulate(loaded.snapshot, sessions=args.sessions).document
        if profiler:
            profiler.disable()
        w2, c2 = time.perf_counter(), time.process_time()
    evictions = len(document.get("evictions", ()))
    bound = len(document.get("bindings", ())) + len(document.get("pipelined", ()))
    print(
        json.dumps(
            {
                **counts,
                "input_mb": round(len(text) / 2**20, 2),
                "read_s": {"wall": round(w1 - w0, 2), "cpu": round(c1 - c0, 2)},
                "sessions_s": {"wall": round(w2 - w1, 2), "cpu": round(c2 - c1, 2)},
                "sessions": args.sessions,
                "evictions": evictions,
                "placed": bound,
            },
            indent=1,
        )
    )
    if profiler:
        for key in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(30)
            print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
