"""Benchmark: Kueue's scheduling cycle with Fair Sharing where no resource has several flavors
(``engine.fairshare.kueuecycle``): prints figures, asserts nothing.

Workload (deterministic): ``--cohorts`` Cohorts of ``--per-cohort`` ClusterQueues under one top Cohort, one
ResourceFlavor, Fair Sharing on, three waiting one-pod Jobs per ClusterQueue. ``--contended``: the ClusterQueues have
no quota and the top Cohort has one core for every other ClusterQueue, so every head fits as the cycle opens and
half no longer fit when their turn comes (the tournament runs to the end); otherwise each ClusterQueue has 2 cores,
its jobs ask 1 or 3, and the heads that fit all fit together (the tournament is skipped). The manifests are read,
then ``fair_cycle_waits`` is timed alone (this process's CPU), ``--repeat`` times.

    .venv/bin/python bench/bench_kueue_cycle.py [--cohorts 20 --per-cohort 50] [--contended] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _groups(cores: int) -> str:
    return (
        "[{coveredResources: [cpu], flavors: [{name: default, resources: "
        f"[{{name: cpu, nominalQuota: '{cores}'}}]}}]}}]"
    )


def manifests(cohorts: int, per_cohort: int, contended: bool) -> str:
    queues = cohorts * per_cohort
    top = f", resourceGroups: {_groups(queues // 2)}" if contended else ""
    docs = [
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}",
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n}}\nstatus: {{allocatable: {{cpu: '{queues * 4}', "
        "memory: 1Ti, pods: '100000'}}",
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: top}}\nspec: {{{top.lstrip(', ')}}}",
    ]
    for c in range(cohorts):
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{c}}}\nspec: {{parentName: top}}"
        )
        for q in range(per_cohort):
            name = f"q{c}-{q}"
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
                f"spec: {{cohortName: c{c}, resourceGroups: {_groups(0 if contended else 2)}}}"
            )
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {name}}}\n"
                f"spec: {{clusterQueue: {name}}}"
            )
            cpu = 1 if contended or q % 2 == 0 else 3
            for j in range(3):
                docs.append(
                    f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j{j}, namespace: {name}, labels: "
                    f"{{kueue.x-k8s.io/queue-name: lq}}, creationTimestamp: '2026-01-01T00:00:0{j}Z'}}\n"
                    f"spec: {{parallelism: 1, template: {{spec: {{containers: [{{name: c, resources: "
                    f"{{requests: {{cpu: '{cpu}'}}}}}}]}}}}}}"
                )
    return "".join(f"---\n{d}\n" for d in docs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=20)
    parser.add_argument("--per-cohort", type=int, default=50)
    parser.add_argument("--contended", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from engine.fairshare.kueuecycle import fair_cycle_waits
    from engine.manifests import load_manifests

    snapshot = load_manifests([("bench.yaml", manifests(args.cohorts, args.per_cohort, args.contended))]).snapshot
    for _ in range(args.repeat):
        started = time.process_time()
        waits = fair_cycle_waits(snapshot)
        cpu = time.process_time() - started
        print(f"{args.cohorts * args.per_cohort} ClusterQueues, {len(waits)} jobs left waiting: {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
