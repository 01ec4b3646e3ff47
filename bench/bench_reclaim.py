"""Benchmark: the reclaim and preempt actions on the large demo's cluster, engine only (issue 12).

Builds in memory the cluster of ``manage.py load_demo --size large`` (3 departments and 8 teams as a capacity
queue tree and an elastic quota tree, quotas x200; 3,334 CPU and 1,666 GPU nodes; 900 copies of the 8 demo jobs:
7,200 podgroups of 49,500 pods) under the demo's policy (``scheduling.demo_data.DEMO_POLICY``: reclaim and preempt on,
hierarchical capacity, elastic quota), runs the first session (it places what fits), starts the placed pods as
the simulated agent does, lets a seeded 1 % of them finish, and times the next session, action by action:

* ``running``: the placed pods Running (the case the issue measured at 195 s on PostgreSQL);
* ``bound``: the same pods still Bound (the session right after the first);
* ``elastic``: the same cluster with elastic gangs (``minMember`` half of each job's pods), so that reclaim and
  preempt find victims and evict.

Each is also timed with ``reclaim`` and ``preempt`` left out of the policy (the engine without them). ``--plain``
adds the search without its shortcuts (every node that passes the predicates tried, victims sorted pair by pair)
and checks that it decides the same; it takes minutes.

    .venv/bin/python bench/bench_reclaim.py
    .venv/bin/python bench/bench_reclaim.py --scenarios running --plain --seed 3
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    TaskStatus,
    Toleration,
)
from engine.policy.policy import Policy
from engine.resources import ResourceList, parse_resource_list
from engine.session.actions import ACTIONS
from engine.session.decisions import SessionResult
from engine.session.run import apply_result, run_session
from engine.session.session import Session
from scheduling.demo_data import CPU_NODE, DEMO_POLICY, GPU_NODE, JOBS, ORG, SIZES

LARGE = SIZES["large"]
FACTOR, CPU_NODES, GPU_NODES, COPIES = LARGE.factor, LARGE.cpu_nodes, LARGE.gpu_nodes, LARGE.copies


def _rl(amounts: dict[str, str], factor: int = 1) -> ResourceList:
    return ResourceList({k: v * factor for k, v in parse_resource_list(amounts).items()})


def build_snapshot(seed: int, *, elastic: bool = False) -> Snapshot:
    """The large demo's cluster, every job pending; ``elastic``: minMember half of each job's pods."""
    rng = random.Random(seed)
    queues = [QueueSpec(name="root", parent=None, reclaimable=False)]
    groups: list[QuotaGroupSpec] = []
    namespaces: list[NamespaceInfo] = []
    for dept, spec in ORG.items():
        deserved, guarantee, capability, weight = (
            spec["deserved"],
            spec["guarantee"],
            spec["capability"],
            spec["weight"],
        )
        queues.append(
            QueueSpec(
                name=dept,
                weight=weight,
                deserved=_rl(deserved, FACTOR),
                guarantee=_rl(guarantee, FACTOR),
                capability=_rl(capability, FACTOR),
            )
        )
        groups.append(QuotaGroupSpec(name=dept, is_parent=True, min=_rl(deserved, FACTOR), max=_rl(capability, FACTOR)))
        for team, (t_deserved, t_guarantee, t_weight, _ns_weight) in spec["teams"].items():
            queues.append(
                QueueSpec(
                    name=team,
                    parent=dept,
                    weight=t_weight,
                    deserved=_rl(t_deserved, FACTOR),
                    guarantee=_rl(t_guarantee, FACTOR),
                )
            )
            groups.append(
                QuotaGroupSpec(name=team, parent=dept, min=_rl(t_deserved, FACTOR), max=_rl(t_deserved, 2 * FACTOR))
            )
            namespaces.append(NamespaceInfo(name=team, weight=t_weight, queue=team))
    cpu, gpu = _rl(CPU_NODE), _rl(GPU_NODE)
    taint = Taint("nvidia.com/gpu", "present", "NoSchedule")
    nodes = [
        NodeInfo(name=f"cpu-{i + 1:04d}", allocatable=cpu, labels={"zone": f"zone-{i % 3 + 1}"})
        for i in range(CPU_NODES)
    ]
    nodes += [
        NodeInfo(name=f"gpu-{i + 1:04d}", allocatable=gpu, labels={"zone": f"zone-{i % 3 + 1}"}, taints=(taint,))
        for i in range(GPU_NODES)
    ]
    toleration = (Toleration(key="nvidia.com/gpu", operator="Exists"),)
    podgroups: list[PodGroupInfo] = []
    tasks: list[TaskInfo] = []
    created = list(range(COPIES * len(JOBS)))
    rng.shuffle(created)  # the seed decides the order the jobs arrived in
    for copy in range(COPIES):
        for j, (team, job, pods, request, priority) in enumerate(JOBS):
            name = f"{job}-{copy:03d}"
            req = parse_resource_list(request)
            min_member = (pods + 1) // 2 if elastic else pods
            when = float(created[copy * len(JOBS) + j])
            podgroups.append(
                PodGroupInfo(
                    namespace=team,
                    name=name,
                    queue=team,
                    min_member=min_member,
                    min_resources=ResourceList({k: v * min_member for k, v in req.items()}),
                    priority=priority,
                    phase=PodGroupPhase.PENDING,
                    creation_timestamp=when,
                )
            )
            tasks.extend(
                TaskInfo(
                    namespace=team,
                    name=f"{name}-{k}",
                    podgroup=f"{team}/{name}",
                    request=req,
                    priority=priority,
                    quota_group=team,
                    tolerations=toleration if "nvidia.com/gpu" in request else (),
                    creation_timestamp=when,
                )
                for k in range(pods)
            )
    return Snapshot.build(
        nodes=nodes,
        tasks=tasks,
        podgroups=podgroups,
        queues=queues,
        quota_groups=groups,
        namespaces=namespaces,
        policy=Policy.from_yaml(DEMO_POLICY),
    )


def after_first_session(snap: Snapshot, seed: int, *, status: TaskStatus) -> tuple[Snapshot, float, int]:
    """The first session's decisions applied (placed pods in ``status``), then a seeded 1 % of them finished."""
    t0 = time.perf_counter()
    first = run_session(snap, now=0.0)
    seconds = time.perf_counter() - t0
    snap = apply_result(snap, first, now=0.0)
    placed = sorted(b.task for b in first.bindings)
    rng = random.Random(seed)
    done = set(rng.sample(placed, len(placed) // 100))
    tasks = {}
    for uid, t in snap.tasks.items():
        if uid in done:
            tasks[uid] = dataclasses.replace(t, status=TaskStatus.SUCCEEDED)
        elif status != TaskStatus.RUNNING and t.status == TaskStatus.RUNNING:
            tasks[uid] = dataclasses.replace(t, status=status, start_timestamp=None)
        else:
            tasks[uid] = t
    return snap.replace(tasks=tasks), seconds, len(placed)


def timed_session(snap: Snapshot, policy: Policy) -> tuple[SessionResult, dict[str, float]]:
    """One session, with the seconds of each action and of the whole (open and close included)."""
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    ssn = Session(snap, policy, 1.0)
    for name in policy.actions:
        t = time.perf_counter()
        ACTIONS[name](ssn)
        times[name] = time.perf_counter() - t
    result = ssn.close()
    times["session"] = time.perf_counter() - t0
    return result, times


@contextmanager
def plain_search() -> Iterator[None]:
    """The victim search without its shortcuts: every node that passes the predicates is tried, victims are sorted
    pair by pair."""
    import numpy as np

    from engine.session.actions import common
    from engine.session.framework import Framework

    saved = common.VictimRoom.room, Framework.victim_sorter

    def everything(self: Any, *args: Any, **kwargs: Any) -> Any:
        return np.full_like(self.ssn.nodes.idle, 2**40)

    def pairwise(self: Framework, preemptor: Any) -> Any:
        return lambda victims: self._sort_victims_pairwise(victims, preemptor)

    common.VictimRoom.room = everything  # type: ignore[method-assign]
    Framework.victim_sorter = pairwise  # type: ignore[method-assign]
    try:
        yield
    finally:
        common.VictimRoom.room, Framework.victim_sorter = saved  # type: ignore[method-assign]


def decisions(result: SessionResult) -> Any:
    return result.bindings, result.evictions, result.podgroups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scenarios", default="running,bound,elastic")
    parser.add_argument("--plain", action="store_true", help="also time the search without its shortcuts (slow)")
    args = parser.parse_args()
    policy = Policy.from_yaml(DEMO_POLICY)
    without = policy.with_actions(*(a for a in policy.actions if a not in ("reclaim", "preempt")))
    builds: dict[bool, Snapshot] = {}
    print(
        f"{'scenario':<9} {'search':<6} {'session s':>9} {'reclaim s':>9} {'preempt s':>9} {'bindings':>8} {'evictions':>9}"
    )
    for scenario in args.scenarios.split(","):
        elastic = scenario == "elastic"
        if elastic not in builds:
            builds[elastic] = build_snapshot(args.seed, elastic=elastic)
        status = TaskStatus.BOUND if scenario == "bound" else TaskStatus.RUNNING
        snap, first_s, placed = after_first_session(builds[elastic], args.seed, status=status)
        print(f"{scenario:<9} first session {first_s:.1f} s placed {placed:,} pods")
        base, base_t = timed_session(snap, without)
        print(
            f"{scenario:<9} {'none':<6} {base_t['session']:>9.2f} {'-':>9} {'-':>9} {len(base.bindings):>8,} {'-':>9}"
        )
        result, t = timed_session(snap, policy)
        print(
            f"{scenario:<9} {'fast':<6} {t['session']:>9.2f} {t['reclaim']:>9.2f} {t['preempt']:>9.2f} "
            f"{len(result.bindings):>8,} {len(result.evictions):>9,}"
        )
        if args.plain:
            with plain_search():
                slow, st = timed_session(snap, policy)
            print(
                f"{scenario:<9} {'plain':<6} {st['session']:>9.2f} {st['reclaim']:>9.2f} {st['preempt']:>9.2f} "
                f"{len(slow.bindings):>8,} {len(slow.evictions):>9,}"
            )
            assert decisions(slow) == decisions(result), f"{scenario}: the plain search decided otherwise"
            print(f"{scenario:<9} same decisions with and without the shortcuts")


if __name__ == "__main__":
    main()
