"""Benchmark: the session of a cluster whose queues name Kueue ResourceFlavors, after 1 % of its pods changed, with
the flavored objects kept (``engine.flavors.FlavorMemo``: what the worker's mirror and session do now) and without
(before: every node and pod counted per flavor again each session, the engine's kept state dropped: a full build).

Engine only, no database: the cluster is kept as its rows would read (nodes and pods with their plain resources,
``N`` nodes half ``on-demand`` half ``spot``, ``10 N`` pods in jobs of 8, 20 ClusterQueues with quota in both
flavors), and each session runs what ``scheduling.sessions`` runs on a flavored cluster: the nodes and placed pods
counted per flavor (``with_stored_flavors``), the admitted jobs' flavors kept and the waiting ones assigned
(``with_kept_flavors``, ``assign_flavors``), then ``engine.session.run.run_session``; its bindings and phases go back
into the rows, changing only what they change (as the mirror reads the rows a session wrote). Before each measured
session 1 % of the pods change: half of the running ones finish and leave, half are new pending pods in new jobs. The
two ways run alternately in one process (paired), timed by this process's CPU time.

    .venv/bin/python bench/bench_flavored.py --nodes 2000 --repeat 5
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import collector
from engine.flavors import FlavorMemo, assign_flavors, flavor_of_request, with_kept_flavors
from engine.manifests.kueue import KUEUE_POLICY
from engine.manifests.kueuestored import with_stored_flavors
from engine.objects import (
    NodeInfo,
    PodGroupInfo,
    PodGroupPhase,
    QueueSpec,
    ResourceFlavorSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.resources import ResourceList
from engine.session import run
from engine.session.carry import SessionCarry

QUEUES = 20
GIB = 2**30
SPOT_TAINT = Taint(key="spot", value="true", effect="NoSchedule")
SPECS = {
    "on-demand": ResourceFlavorSpec(name="on-demand", node_labels={"type": "on-demand"}),
    "spot": ResourceFlavorSpec(
        name="spot",
        node_labels={"type": "spot"},
        node_taints=(SPOT_TAINT,),
        tolerations=(Toleration(key="spot", operator="Equal", value="true", effect="NoSchedule"),),
    ),
}


def build(nodes: int) -> Snapshot:
    """The rows: plain nodes and pods, queues with quota per flavor (their share of each flavor's nodes)."""
    node_list = [
        NodeInfo(
            name=f"n-{i:05d}",
            allocatable=ResourceList({"cpu": 32_000, "memory": 128 * GIB, "pods": 110_000}),
            labels={"type": "spot" if i % 2 else "on-demand"},
            taints=(SPOT_TAINT,) if i % 2 else (),
        )
        for i in range(nodes)
    ]
    half = nodes // 2
    share = {"cpu": half * 32_000 // QUEUES, "memory": half * 128 * GIB // QUEUES}
    kueue = {"resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": ["on-demand", "spot"]}]}
    queues = [
        QueueSpec(
            name=f"q-{q:02d}",
            deserved=ResourceList({f"{r}@{f}": v for f in SPECS for r, v in share.items()}),
            kueue=kueue,
        )
        for q in range(QUEUES)
    ]
    podgroups, tasks = [], []
    for j in range(nodes * 10 // 8):
        pg, pods = job(f"job-{j:06d}", f"q-{j % QUEUES:02d}", float(j))
        podgroups.append(pg)
        tasks.extend(pods)
    return Snapshot.build(nodes=node_list, tasks=tasks, podgroups=podgroups, queues=queues, policy=KUEUE_POLICY)


def job(name: str, queue: str, created: float) -> tuple[PodGroupInfo, list[TaskInfo]]:
    ns = f"ns-{queue}"
    pg = PodGroupInfo(namespace=ns, name=name, queue=queue, min_member=8, creation_timestamp=created)
    request = ResourceList({"cpu": 1_000, "memory": 4 * GIB})
    pods = [
        TaskInfo(namespace=ns, name=f"{name}-{k}", podgroup=pg.key, request=request, creation_timestamp=created)
        for k in range(8)
    ]
    return pg, pods


def session(rows: Snapshot, kept: dict[str, dict[str, str]], carry: SessionCarry | None, memos: Any, now: float) -> Any:
    """What ``scheduling.sessions`` runs on a flavored cluster; returns (the result, the flavors given)."""
    stored, given = memos if memos is not None else (None, None)
    with collector.paused():  # as the live session (``scheduling.sessions``)
        snapshot = with_stored_flavors(rows, lambda: SPECS, stored)
        snapshot = with_kept_flavors(snapshot, kept, given)
        snapshot, _ = assign_flavors(snapshot, given)
        result = run.run_session(snapshot, now=now, carry=carry)
    flavors: dict[str, dict[str, str]] = {}
    for task in snapshot.tasks.values():
        chosen = flavor_of_request(task.request)
        if chosen:
            flavors.setdefault(task.podgroup, {}).update(chosen)
    return result, flavors


def settle(rows: Snapshot, result: Any, now: float) -> Snapshot:
    """The rows after the session's writes: only the pods bound and the podgroups whose phase moved change."""
    tasks = dict(rows.tasks)
    for b in result.bindings:
        task = tasks.get(b.task)
        if task is not None:
            tasks[b.task] = dataclasses.replace(task, status=TaskStatus.BOUND, node=b.node, start_timestamp=now)
    for e in result.evictions:
        task = tasks.get(e.task)
        if task is not None:
            tasks[e.task] = dataclasses.replace(task, status=TaskStatus.PENDING, node=None, start_timestamp=None)
    podgroups = dict(rows.podgroups)
    for key, status in result.podgroups.items():
        pg = podgroups.get(key)
        if pg is not None and pg.phase.value != status.phase:
            podgroups[key] = dataclasses.replace(pg, phase=PodGroupPhase(status.phase))
    return rows.replace(tasks=tasks, podgroups=podgroups)


def churn(rows: Snapshot, n: int, round_no: int, now: float) -> Snapshot:
    """Half of ``n`` running pods finish (their rows go), ``n / 2`` new pending pods in new jobs of 8."""
    tasks = dict(rows.tasks)
    done = [uid for uid, t in tasks.items() if t.node is not None][: n // 2]
    for uid in done:
        del tasks[uid]
    podgroups = dict(rows.podgroups)
    for g in range((n - n // 2 + 7) // 8):
        pg, pods = job(f"churn-{round_no}-{g}", f"q-{g % QUEUES:02d}", now)
        podgroups[pg.key] = pg
        tasks.update((t.uid, t) for t in pods)
    return rows.replace(tasks=tasks, podgroups=podgroups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--churn", type=float, default=1.0, help="the percentage of the pods changed per session")
    args = parser.parse_args()
    t0 = time.process_time()
    rows = build(args.nodes)
    print(f"{args.nodes:,} nodes, {len(rows.tasks):,} pods in {len(rows.podgroups):,} jobs (built in "
          f"{time.process_time() - t0:.1f} s CPU)")  # fmt: skip
    worlds: dict[str, dict[str, Any]] = {}
    for way in ("kept", "before"):
        carry = SessionCarry() if way == "kept" else None
        memos = (FlavorMemo(), FlavorMemo()) if way == "kept" else None
        worlds[way] = {"rows": rows, "kept": {}, "carry": carry, "memos": memos, "cpu": [], "opened": []}
    now = 1_000_000.0
    for r in range(args.repeat + 2):  # two warm-up sessions (the first binds most pods)
        now += 1.0
        for w in worlds.values():
            if r >= 2:
                w["rows"] = churn(w["rows"], max(2, int(len(w["rows"].tasks) * args.churn / 100)), r, now)
            c0 = time.process_time()
            result, w["kept"] = session(w["rows"], w["kept"], w["carry"], w["memos"], now)
            cpu = time.process_time() - c0
            w["rows"] = settle(w["rows"], result, now)
            if r >= 2:
                w["cpu"].append(cpu * 1000.0)
                w["opened"].append(w["carry"].last if w["carry"] is not None else "full build (no kept state)")
    for way, w in worlds.items():
        cpu = w["cpu"]
        print(
            f"  {way:>6}: session CPU median {statistics.median(cpu):,.0f} ms (min {min(cpu):,.0f}, "
            f"max {max(cpu):,.0f}) over {len(cpu)} sessions after {args.churn:g} % churn; last open: {w['opened'][-1]}"
        )


if __name__ == "__main__":
    main()
