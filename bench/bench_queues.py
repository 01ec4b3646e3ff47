"""Benchmark of the queue fair-share engine (proportion, capacity, namespace shares): prints a table.

Workload: 500 queues, 20,000 jobs, 4 resources (cpu, memory, nvidia.com/gpu, ephemeral-storage), 200
namespaces, a cluster smaller than the total request so that the water-filling runs several rounds.

* flat: 500 queues under root (weights 1-8, a third with a capability, a fifth with a guarantee);
* namespaces submit to 1-3 home queues each (a scattered variant sends every job to a random queue);
* hier: a 3-level tree: root -> 8 departments -> 8 teams each (64) -> 428 leaf queues (500 queues in all),
  jobs only in the leaves, deserved amounts that add up under every parent.

Rows: ``compute_proportion`` (flat), ``compute_capacity`` flat and hierarchical, ``compute_namespace_shares``
(on the proportion deserved; with scattered jobs; with every job its own namespace, 20,000 namespaces, and
the same with every entry read, which builds each ``NamespaceQuota``: the result builds them on first access), ``summarize_jobs`` (the per-queue sums every compute
starts with), the what-ifs that reuse a summary (a seventh of the weights changed; the 3-level tree),
``snapshots`` (reading every ``result[name]``, which computes borrowed and lent), and ``gates`` (1,000
allocatable + 1,000 enqueueable calls). Median and p95 in milliseconds, wall clock, and the median CPU
(process) time, which a busy machine disturbs less.

Run: ``.venv/bin/python bench/bench_queues.py [--quick]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.fairshare.deserved import compute_capacity
from engine.fairshare.namespace import compute_namespace_shares
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage, summarize_jobs
from engine.objects import QueueSpec
from engine.policy.fairness import FairnessArgs
from engine.resources import ResourceList
from engine.usage import QUEUE, TreeUsage, UsageHistory, UsageNow, advance, dominant_share

GI = 2**30
UNIT = {"cpu": 1000, "memory": GI, "nvidia.com/gpu": 1000, "ephemeral-storage": 10 * GI}
QUEUES = 500
JOBS = 20_000
NAMESPACES = 200


def _amounts(rnd: random.Random, low: int, high: int, gpu_chance: float = 0.3) -> dict[str, int]:
    out = {r: rnd.randint(low, high) * u for r, u in UNIT.items() if r != "nvidia.com/gpu"}
    if rnd.random() < gpu_chance:
        out["nvidia.com/gpu"] = rnd.randint(low, high) * UNIT["nvidia.com/gpu"]
    return out


def make_jobs(rnd: random.Random, leaves: list[str], *, scattered: bool = False) -> list[JobUsage]:
    """Jobs of NAMESPACES namespaces; each namespace submits to 1-3 home queues (``scattered``: to any queue,
    which makes nearly every job its own queue/namespace pair, the worst case for namespace shares)."""
    jobs = []
    phases = ("Pending", "Inqueue", "Running", "Running", "Running")
    homes = {f"ns{n}": rnd.sample(leaves, rnd.randint(1, 3)) for n in range(NAMESPACES)}
    for i in range(JOBS):
        namespace = f"ns{rnd.randrange(NAMESPACES)}"
        queue = rnd.choice(leaves) if scattered else rnd.choice(homes[namespace])
        request = _amounts(rnd, 1, 8)
        phase = rnd.choice(phases)
        held = rnd.randint(0, 4) if phase == "Running" else 0
        allocated = {r: a * held // 4 for r, a in request.items()}
        min_resources = ResourceList({r: a // 2 for r, a in request.items()}) if rnd.random() < 0.7 else None
        jobs.append(
            JobUsage(
                queue=queue,
                namespace=namespace,
                request=ResourceList(request),
                allocated=ResourceList(allocated),
                min_resources=min_resources,
                phase=phase,
                min_member=rnd.randint(1, 4),
                allocated_tasks=held,
                name=f"job{i}",
            )
        )
    return jobs


def flat_workload(seed: int = 7, *, scattered: bool = False) -> tuple[list[QueueSpec], list[JobUsage], ResourceList]:
    rnd = random.Random(seed)
    queues = []
    for i in range(QUEUES):
        capability = ResourceList(_amounts(rnd, 100, 400, 0.5)) if rnd.random() < 0.33 else ResourceList()
        guarantee = ResourceList(_amounts(rnd, 1, 4, 0.0)) if rnd.random() < 0.2 else ResourceList()
        deserved = ResourceList({r: max(a, guarantee.get(r, 0)) for r, a in _amounts(rnd, 10, 60).items()})
        queues.append(
            QueueSpec(
                name=f"q{i:03d}",
                weight=rnd.randint(1, 8),
                capability=capability,
                deserved=deserved,
                guarantee=guarantee,
                priority=rnd.choice((0, 0, 0, 1)),
            )
        )
    jobs = make_jobs(rnd, [q.name for q in queues], scattered=scattered)
    total = ResourceList({r: 60_000 * u for r, u in UNIT.items()})  # about half of what the jobs ask
    return queues, jobs, total


def hier_workload(seed: int = 11) -> tuple[list[QueueSpec], list[JobUsage], ResourceList]:
    rnd = random.Random(seed)
    queues = [QueueSpec("root", parent=None)]
    leaves: list[str] = []
    departments, teams = 8, 8
    leaf_count = QUEUES - departments - departments * teams
    per_team = [leaf_count // (departments * teams)] * (departments * teams)
    for k in range(leaf_count % (departments * teams)):
        per_team[k] += 1
    team_index = 0
    for d in range(departments):
        dept = f"d{d}"
        dept_deserved = dict.fromkeys(UNIT, 0)
        team_specs = []
        for t in range(teams):
            team = f"{dept}-t{t}"
            team_deserved = dict.fromkeys(UNIT, 0)
            for leaf_no in range(per_team[team_index]):
                leaf = f"{team}-q{leaf_no}"
                deserved = _amounts(rnd, 10, 60)
                for r, a in deserved.items():
                    team_deserved[r] += a
                capability = ResourceList(_amounts(rnd, 100, 300, 0.5)) if rnd.random() < 0.3 else ResourceList()
                queues.append(
                    QueueSpec(
                        leaf,
                        parent=team,
                        weight=rnd.randint(1, 8),
                        deserved=ResourceList(deserved),
                        capability=capability,
                    )
                )
                leaves.append(leaf)
            team_index += 1
            for r, a in team_deserved.items():
                dept_deserved[r] += a
            team_specs.append(QueueSpec(team, parent=dept, deserved=ResourceList(team_deserved)))
        queues.append(QueueSpec(dept, deserved=ResourceList(dept_deserved)))
        queues.extend(team_specs)
    jobs = make_jobs(rnd, leaves)
    total = ResourceList({r: 60_000 * u for r, u in UNIT.items()})
    return queues, jobs, total


def timed(fn: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (process) milliseconds of each run; CPU time is less disturbed by a busy machine."""
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    repeat = 5 if args.quick else 21

    fq, fj, ft = flat_workload()
    hq, hj, ht = hier_workload()
    proportion = compute_proportion(fq, fj, ft)
    hier = compute_capacity(hq, hj, ht, hierarchy=True)
    deserved = {q: proportion[q].deserved for q in proportion}
    weights = {f"ns{i}": 1 + i % 5 for i in range(NAMESPACES)}
    shares = compute_namespace_shares(deserved, fj, weights, ft)
    _, sj, _ = flat_workload(scattered=True)
    scattered_pairs = len(compute_namespace_shares(deserved, sj, weights, ft))
    own = [replace(job, namespace=f"own-{i}") for i, job in enumerate(fj)]  # every job its own namespace
    own_weights = {job.namespace: 1 + i % 5 for i, job in enumerate(own) if i % 3 == 0}
    summary = summarize_jobs(fj)
    hier_summary = summarize_jobs(hj)
    what_if = [replace(q, weight=q.weight + 1) if i % 7 == 0 else q for i, q in enumerate(fq)]
    rounds = max(len(proportion.explain(q).steps) for q in list(proportion)[:20])
    assert hier.ready_to_schedule, hier.problems[:3]
    rnd = random.Random(3)
    probes = [(rnd.choice(fj), ResourceList(_amounts(rnd, 1, 4))) for _ in range(1000)]

    # fairness over time: a past-usage ratio per queue (0.05 to 12, some clamped), and the record brought forward
    ratios = {q.name: Fraction(rnd.randint(1, 240), 20) for q in fq}
    fair_args = FairnessArgs(enabled=True)
    total = dict(ft.raw)
    fair_nodes = [
        UsageNow(q.name, None, max(1, q.weight), dominant_share(proportion[q.name].allocated.raw, total)) for q in fq
    ]
    record = advance(UsageHistory(updated=0.0), [TreeUsage(QUEUE, fair_args, fair_nodes)], 1.0)

    def gates() -> None:
        for job, req in probes:
            proportion.allocatable(job.queue, req)
            proportion.enqueueable(job)

    def snapshots() -> None:
        proportion.on_allocate(fq[0].name, ResourceList())  # invalidates every cached snapshot
        for q in proportion:
            proportion[q]

    rows = [
        ("compute_proportion (flat)", lambda: compute_proportion(fq, fj, ft)),
        ("  fairness over time (ratios)", lambda: compute_proportion(fq, fj, ft, past_ratios=ratios)),
        ("  usage record brought forward", lambda: advance(record, [TreeUsage(QUEUE, fair_args, fair_nodes)], 2.0)),
        ("compute_capacity (flat)", lambda: compute_capacity(fq, fj, ft)),
        ("compute_capacity (3-level)", lambda: compute_capacity(hq, hj, ht, hierarchy=True)),
        ("compute_namespace_shares", lambda: compute_namespace_shares(deserved, fj, weights, ft)),
        (f"  scattered ({scattered_pairs} pairs)", lambda: compute_namespace_shares(deserved, sj, weights, ft)),
        (f"  own namespace per job ({len(own)})", lambda: compute_namespace_shares(deserved, own, own_weights, ft)),
        ("    and every entry read", lambda: list(compute_namespace_shares(deserved, own, own_weights, ft).values())),
        ("summarize_jobs (20,000 jobs)", lambda: summarize_jobs(fj)),
        ("what-if: proportion on summary", lambda: compute_proportion(what_if, summary, ft)),
        ("what-if: 3-level on summary", lambda: compute_capacity(hq, hier_summary, ht, hierarchy=True)),
        ("snapshots (500 queues)", snapshots),
        ("gates (2,000 calls)", gates),
    ]
    print(
        f"{QUEUES} queues, {JOBS} jobs, {len(UNIT)} resources, {NAMESPACES} namespaces "
        f"({len(shares)} queue/namespace pairs, up to {rounds} explanation steps per queue)"
    )
    print(f"{'':32} {'median ms':>10} {'p95 ms':>10} {'cpu median':>11}")
    for label, fn in rows:
        wall, cpu = timed(fn, repeat)
        print(f"{label:32} {statistics.median(wall):>10.2f} {p95(wall):>10.2f} {statistics.median(cpu):>11.2f}")


if __name__ == "__main__":
    main()
