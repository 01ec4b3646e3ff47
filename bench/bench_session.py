"""Benchmark: one scheduling session on a large synthetic cluster.

The cluster the Django store must handle every second (issue 4): 5,000 nodes, 50,000 pending pods in gang jobs
of 1-64 pods, 200 queues under a 3-level tree, optionally a 3-level elastic quota tree. The generator is seeded,
so a run is reproducible. Prints pods placed, seconds, pods/s and peak memory (max RSS of the process).

    .venv/bin/python bench/bench_session.py                       # proportion, enqueue+allocate+backfill
    .venv/bin/python bench/bench_session.py --mode capacity       # hierarchical capacity on the queue tree
    .venv/bin/python bench/bench_session.py --mode elastic        # proportion + elasticquota groups
    .venv/bin/python bench/bench_session.py --nodes 500 --pods 5000 --profile
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.objects import (
    NamespaceInfo,
    NodeInfo,
    PodGroupInfo,
    PodGroupPhase,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    Taint,
    TaskInfo,
    Toleration,
)
from engine.policy.policy import Policy
from engine.resources import ResourceList
from engine.session.run import run_session

GiB = 2**30
SHAPES = [(500, 1 * GiB), (1000, 2 * GiB), (2000, 8 * GiB), (4000, 16 * GiB), (8000, 32 * GiB)]
ZONES = ["zone-a", "zone-b", "zone-c", "zone-d", "zone-e"]
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def build_policy(mode: str, actions: str = "enqueue, allocate, backfill") -> Policy:
    second: list[dict[str, Any]] = [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"}]
    if mode == "capacity":
        second.append({"name": "capacity", "enableHierarchy": True})
    else:
        second.append({"name": "proportion"})
    if mode == "elastic":
        second.append({"name": "elasticquota"})
    second.append({"name": "nodeorder"})
    return Policy.from_dict(
        {
            "actions": actions,
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                {"plugins": second},
            ],
        }
    )


def build_snapshot(
    nodes: int, pods: int, queues: int, seed: int, mode: str, actions: str = "enqueue, allocate, backfill"
) -> Snapshot:
    rng = random.Random(seed)
    node_list: list[NodeInfo] = []
    gpu_nodes = max(1, nodes // 20)
    for i in range(nodes):
        gpu = i < gpu_nodes
        alloc = {"cpu": 64_000, "memory": 256 * GiB, "pods": 110_000}
        if gpu:
            alloc["nvidia.com/gpu"] = 8_000
        node_list.append(
            NodeInfo(
                name=f"node-{i:05d}",
                allocatable=ResourceList(alloc),
                labels={
                    "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                    "kubernetes.io/hostname": f"node-{i:05d}",
                },
                taints=(GPU_TAINT,) if gpu else (),
            )
        )
    # queue tree: root -> 4 divisions -> 20 departments -> `queues` teams
    divisions = 4
    departments = 20
    per_dept = max(1, queues // departments)
    total_cpu = nodes * 64_000
    total_mem = nodes * 256 * GiB
    queue_list: list[QueueSpec] = [QueueSpec(name="root", parent=None, reclaimable=False)]
    leaves: list[str] = []
    for d in range(divisions):
        dname = f"div-{d}"
        queue_list.append(
            QueueSpec(
                name=dname,
                deserved=ResourceList({"cpu": total_cpu // divisions, "memory": total_mem // divisions}),
            )
        )
        for e in range(departments // divisions):
            ename = f"{dname}-dept-{e}"
            queue_list.append(
                QueueSpec(
                    name=ename,
                    parent=dname,
                    deserved=ResourceList({"cpu": total_cpu // departments, "memory": total_mem // departments}),
                )
            )
            for t in range(per_dept):
                tname = f"{ename}-team-{t}"
                leaves.append(tname)
                queue_list.append(
                    QueueSpec(
                        name=tname,
                        parent=ename,
                        weight=rng.randint(1, 4),
                        deserved=ResourceList(
                            {
                                "cpu": total_cpu // (departments * per_dept),
                                "memory": total_mem // (departments * per_dept),
                            }
                        ),
                    )
                )
    namespaces = [NamespaceInfo(name=f"ns-{i:03d}", weight=rng.randint(1, 3)) for i in range(len(leaves) * 2)]
    groups: list[QuotaGroupSpec] = []
    if mode == "elastic":
        unit = ResourceList({"cpu": total_cpu // 50, "memory": total_mem // 50})
        for d in range(5):
            dname = f"eq-div-{d}"
            groups.append(
                QuotaGroupSpec(
                    name=dname,
                    is_parent=True,
                    min=ResourceList({"cpu": total_cpu // 5, "memory": total_mem // 5}),
                    max=ResourceList({"cpu": total_cpu, "memory": total_mem}),
                )
            )
            for t in range(10):
                groups.append(
                    QuotaGroupSpec(
                        name=f"{dname}-team-{t}",
                        parent=dname,
                        min=unit,
                        max=ResourceList({"cpu": total_cpu // 2, "memory": total_mem // 2}),
                    )
                )
    task_list: list[TaskInfo] = []
    pg_list: list[PodGroupInfo] = []
    job = 0
    while len(task_list) < pods:
        size = min(rng.randint(1, 64), pods - len(task_list))
        cpu, mem = rng.choice(SHAPES)
        strict = rng.random() < 0.7
        min_member = size if strict else max(1, size // 2)
        ns = namespaces[rng.randrange(len(namespaces))].name
        q = leaves[rng.randrange(len(leaves))]
        name = f"job-{job:05d}"
        selector = {"topology.kubernetes.io/zone": rng.choice(ZONES)} if rng.random() < 0.2 else {}
        gpu = rng.random() < 0.03
        request = {"cpu": cpu, "memory": mem}
        tolerations: tuple[Toleration, ...] = ()
        if gpu:
            request["nvidia.com/gpu"] = 1000
            tolerations = (Toleration(key="nvidia.com/gpu", operator="Exists"),)
            size = min(size, 8)
            min_member = min(min_member, size)
        label = f"eq-div-{rng.randrange(5)}-team-{rng.randrange(10)}" if mode == "elastic" else None
        pg_list.append(
            PodGroupInfo(
                namespace=ns,
                name=name,
                queue=q,
                min_member=min_member,
                min_resources=ResourceList({k: v * min_member for k, v in request.items()}),
                priority=rng.choice([0, 0, 0, 100, 1000]),
                phase=PodGroupPhase.PENDING,
                creation_timestamp=float(job),
            )
        )
        for k in range(size):
            task_list.append(
                TaskInfo(
                    namespace=ns,
                    name=f"{name}-{k}",
                    podgroup=f"{ns}/{name}",
                    request=ResourceList(request),
                    node_selector=selector,
                    tolerations=tolerations,
                    quota_group=label,
                    creation_timestamp=float(job),
                )
            )
        job += 1
    return Snapshot.build(
        nodes=node_list,
        tasks=task_list,
        podgroups=pg_list,
        queues=queue_list,
        namespaces=namespaces,
        quota_groups=groups,
        policy=build_policy(mode, actions),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=["proportion", "capacity", "elastic"], default="proportion")
    parser.add_argument("--actions", default="enqueue, allocate, backfill", help="the policy's actions")
    parser.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    args = parser.parse_args()

    t0 = time.perf_counter()
    snap = build_snapshot(args.nodes, args.pods, args.queues, args.seed, args.mode, args.actions)
    built = time.perf_counter() - t0
    print(
        f"snapshot: {len(snap.nodes)} nodes, {len(snap.tasks)} pods, {len(snap.podgroups)} podgroups, "
        f"{len(snap.queues)} queues, {len(snap.quota_groups)} quota groups, mode {args.mode} (built in {built:.2f} s)"
    )
    t0 = time.perf_counter()
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        result = run_session(snap, now=0.0)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
    else:
        result = run_session(snap, now=0.0)
    elapsed = time.perf_counter() - t0
    placed = result.bound + result.pipelined
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    running = sum(1 for s in result.podgroups.values() if s.phase == "Running")
    print(
        f"pods placed: {placed} (bound {result.bound}, pipelined {result.pipelined}, evicted {result.evicted}); "
        f"podgroups Running: {running} of {len(result.podgroups)}"
    )
    print(f"session: {elapsed:.2f} s, {placed / elapsed:,.0f} pods/s, peak memory (max RSS) {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
