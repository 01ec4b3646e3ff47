"""Benchmark: Kueue's flavor assigner on a large flavored cluster, and its share of a session: prints figures, asserts
nothing.

Workload (deterministic): ``--nodes`` nodes of 32 cpu and 128 GiB in three ResourceFlavors (``reserved``,
``on-demand``, ``spot``: a third each, told apart by a node label, ``spot`` tainted and tolerated by its flavor),
``--cohorts`` Cohorts of ``--per-cohort`` ClusterQueues under one root Cohort (200 by default), each ClusterQueue with
one resource group of cpu and memory over the three flavors in that order, a nominal quota of its share of each
flavor, ``reclaimWithinCohort: Any``; every ClusterQueue runs pods of 4 cpu on ``reserved`` and ``on-demand`` up to
about 80 % of its quota there (Running pods on the flavors' nodes) and has ``--pending`` waiting Jobs of 4 pods of 2 cpu
and 8 GiB, so that the assigner tries several flavors, borrowing and preempting, for most of them.

Then what ``fairway simulate`` runs before each session (``with_kept_flavors``, ``assign_flavors``) and the session
itself (``engine.session.run.run_session``), each timed by this process's CPU, ``--repeat`` times on the snapshot as
read. The assigner of the code before Kueue's scheduling cycle (``--before FILE``: that ``engine/flavors.py``, e.g.
``git show b8ff0ca:engine/flavors.py``) runs alternately with today's on the same snapshot, paired.

    .venv/bin/python bench/bench_assigner.py [--nodes 1000] [--cohorts 20 --per-cohort 10] [--before FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLAVORS = ("reserved", "on-demand", "spot")
NODE_CPU, NODE_GIB = 32, 128
POD_CPU = 4


def manifests(nodes: int, cohorts: int, per_cohort: int, pending: int) -> str:
    """The input's YAML."""
    docs = ["apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\n"]
    for f in FLAVORS:
        taint = ", nodeTaints: [{key: spot, value: 'true', effect: NoSchedule}]" if f == "spot" else ""
        tol = ", tolerations: [{key: spot, operator: Equal, value: 'true', effect: NoSchedule}]" if f == "spot" else ""
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {f}}}\n"
            f"spec: {{nodeLabels: {{pool: {f}}}{taint}{tol}}}\n"
        )
    per_flavor = nodes // len(FLAVORS)
    for i in range(per_flavor * len(FLAVORS)):
        f = FLAVORS[i % len(FLAVORS)]
        taints = "spec: {taints: [{key: spot, value: 'true', effect: NoSchedule}]}\n" if f == "spot" else ""
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i:05d}, labels: {{pool: {f}}}}}\n{taints}"
            f"status: {{allocatable: {{cpu: '{NODE_CPU}', memory: {NODE_GIB}Gi, pods: '110'}}}}\n"
        )
    queues = cohorts * per_cohort
    cpu = per_flavor * NODE_CPU // queues  # each ClusterQueue's nominal cpu per flavor
    gib = per_flavor * NODE_GIB // queues
    flavors = ", ".join(
        f"{{name: {f}, resources: [{{name: cpu, nominalQuota: '{cpu}'}}, {{name: memory, nominalQuota: {gib}Gi}}]}}"
        for f in FLAVORS
    )
    slots = {f: [NODE_CPU] * per_flavor for f in FLAVORS[:2]}  # free cpu per node of the flavors that run pods
    for c in range(cohorts):
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{c:03d}}}\nspec: {{parentName: org}}\n"
        )
        for q in range(per_cohort):
            name = f"cq-{c:03d}-{q:02d}"
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
                f"spec: {{cohortName: c{c:03d}, preemption: {{reclaimWithinCohort: Any}}, resourceGroups: "
                f"[{{coveredResources: [cpu, memory], flavors: [{flavors}]}}]}}\n"
                f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {name}}}\n"
                f"spec: {{clusterQueue: {name}}}\n"
            )
            docs += _running(name, cpu * 8 // 10 // POD_CPU, slots)
            docs += [_job(name, j) for j in range(pending)]
    return "".join(f"---\n{d}" for d in docs)


def _running(queue: str, pods: int, slots: dict[str, list[int]]) -> list[str]:
    out = []
    for f, free in slots.items():
        placed = 0
        for i, room in enumerate(free):
            while room >= POD_CPU and placed < pods:
                room -= POD_CPU
                placed += 1
                node = i * len(FLAVORS) + FLAVORS.index(f)
                out.append(
                    f"apiVersion: v1\nkind: Pod\nmetadata: {{name: run-{f}-{placed}, namespace: {queue}, "
                    "labels: {kueue.x-k8s.io/queue-name: lq}}\n"
                    f"spec: {{nodeName: n{node:05d}, containers: [{{name: c, resources: {{requests: "
                    f"{{cpu: '{POD_CPU}', memory: 16Gi}}}}}}]}}\nstatus: {{phase: Running}}\n"
                )
            free[i] = room
            if placed == pods:
                break
    return out


def _job(queue: str, j: int) -> str:
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: job-{j}, namespace: {queue}, "
        f"creationTimestamp: '2026-01-01T00:{j // 60:02d}:{j % 60:02d}Z', labels: {{kueue.x-k8s.io/queue-name: lq}}}}\n"
        "spec: {parallelism: 4, template: {spec: {containers: [{name: c, resources: {requests: "
        "{cpu: '2', memory: 8Gi}}}]}}}\n"
    )


def _module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("flavors_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["flavors_before"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _cpu(fn: Any, *args: Any) -> tuple[Any, float]:
    c0 = time.process_time()
    out = fn(*args)
    return out, (time.process_time() - c0) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--cohorts", type=int, default=20)
    parser.add_argument("--per-cohort", type=int, default=10)
    parser.add_argument("--pending", type=int, default=5, help="waiting Jobs per ClusterQueue")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", help="an engine/flavors.py of an earlier commit, run alternately (paired)")
    args = parser.parse_args()

    from engine.flavors import assign_flavors, with_kept_flavors
    from engine.manifests import load_manifests
    from engine.session import run

    c0 = time.process_time()
    snapshot = load_manifests(
        [("in.yaml", manifests(args.nodes, args.cohorts, args.per_cohort, args.pending))]
    ).snapshot
    waiting = sum(1 for pg in snapshot.podgroups.values() if pg.phase.value == "Pending")
    print(
        f"{len(snapshot.nodes):,} nodes in {len(FLAVORS)} flavors, {args.cohorts * args.per_cohort} ClusterQueues in "
        f"{args.cohorts} Cohorts, {len(snapshot.tasks):,} pods, {waiting:,} waiting jobs (read in "
        f"{time.process_time() - c0:.1f} s CPU)"
    )
    kept = with_kept_flavors(snapshot, {})
    ways: dict[str, Any] = {"today": assign_flavors}
    if args.before:
        ways["before"] = _module(args.before).assign_flavors
    times: dict[str, list[float]] = {w: [] for w in ways}
    sessions: list[float] = []
    for _ in range(args.repeat):
        for way, fn in ways.items():
            (given, choices), ms = _cpu(fn, kept)
            times[way].append(ms)
        given, choices = assign_flavors(kept)
        result, ms = _cpu(lambda s: run.run_session(s, now=1_000_000.0), given)
        sessions.append(ms)
    waits = len(given.admission.cycle_waits)
    print(
        f"  assigned {len(choices):,} jobs; the cycle left {waits:,} waiting; the session bound {result.bound:,} pods"
    )
    for way, ms in times.items():
        print(
            f"  assign_flavors ({way}): CPU median {statistics.median(ms):,.0f} ms (min {min(ms):,.0f}, max {max(ms):,.0f})"
        )
    total = statistics.median(times["today"]) + statistics.median(sessions)
    print(
        f"  session: CPU median {statistics.median(sessions):,.0f} ms (min {min(sessions):,.0f}, max {max(sessions):,.0f});"
        f" the assigner {100 * statistics.median(times['today']) / total:.0f} % of assigner + session"
    )


if __name__ == "__main__":
    main()
