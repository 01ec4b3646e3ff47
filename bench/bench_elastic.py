"""Benchmark of the elastic-quota engine (engine.fairshare.elastic): prints a table, asserts nothing.

Trees of depth 4 below ``root`` with four resources (cpu, memory, nvidia.com/gpu, pods), mins that add up
(each parent's min covers its children's), random requests around the mins (some groups lend, most borrow),
used below request, and a cluster total below the sum of the top-level mins so that min scaling and every
water-filling round are exercised.

Columns: build = constructing ElasticQuotaTree from the specs (layout, arrays, first full computation);
full = ``recompute_all()`` on the built tree (median and p95 wall-clock, and median CPU time, which a
busy shared machine disturbs less); leaf = one leaf's request changed then
``result()`` (median and p95); live = the same with ``result(copy=False)`` (no copy-on-write of the arrays);
used = one leaf's used changed then ``result()``; peak = tracemalloc peak of
building and one full recompute.

Run: ``.venv/bin/python bench/bench_elastic.py [--quick]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.fairshare.elastic import ElasticQuotaTree
from engine.objects import ROOT_GROUP, QuotaGroupSpec
from engine.resources import ResourceList

GI = 2**30
UNIT = {"cpu": 1000, "memory": GI, "nvidia.com/gpu": 1000, "pods": 1000}


def make_tree(
    fanouts: tuple[int, ...], seed: int = 7
) -> tuple[list[QuotaGroupSpec], dict[str, ResourceList], dict[str, ResourceList], ResourceList, list[str]]:
    """Groups, requests, used, total and the leaf names of a synthetic tree."""
    rnd = random.Random(seed)
    groups: list[QuotaGroupSpec] = []
    requests: dict[str, ResourceList] = {}
    used: dict[str, ResourceList] = {}
    leaves: list[str] = []

    def leaf_min() -> dict[str, int]:
        return {r: rnd.randint(1, 8) * u for r, u in UNIT.items()}

    def build(name: str, parent: str, depth: int) -> dict[str, int]:
        if depth == len(fanouts):
            mn = leaf_min()
            mx = {r: v * rnd.randint(2, 4) for r, v in mn.items()}
            req = {r: rnd.randint(0, 2 * mx[r] // UNIT[r]) * UNIT[r] // 2 for r in UNIT}
            requests[name] = ResourceList(req)
            used[name] = ResourceList({r: v * rnd.randint(0, 10) // 10 for r, v in req.items()})
            leaves.append(name)
        else:
            mn = dict.fromkeys(UNIT, 0)
            for k in range(fanouts[depth]):
                child = build(f"{name}-{k}", name, depth + 1)
                for r in UNIT:
                    mn[r] += child[r]
            mx = {r: v * 2 for r, v in mn.items()}
        weight = None if rnd.random() < 0.8 else ResourceList({r: rnd.randint(1, 5) for r in UNIT})
        groups.append(
            QuotaGroupSpec(
                name=name,
                parent=parent,
                is_parent=depth < len(fanouts),
                min=ResourceList(mn),
                max=ResourceList(mx),
                shared_weight=weight,
                allow_lent=rnd.random() < 0.9,
            )
        )
        return mn

    top = dict.fromkeys(UNIT, 0)
    for k in range(fanouts[0]):
        mn = build(f"g{k}", ROOT_GROUP, 1)
        for r in UNIT:
            top[r] += mn[r]
    total = ResourceList({r: v * 9 // 10 for r, v in top.items()})
    return groups, requests, used, total, leaves


CPU_MS: list[float] = []  # process CPU time of the last timed() call, per repetition


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock milliseconds per call (CPU milliseconds are left in CPU_MS: steadier on a shared machine)."""
    out = []
    CPU_MS.clear()
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
        CPU_MS.append((time.process_time() - c0) * 1000)
    return out


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


def run(fanouts: tuple[int, ...], repeat: int) -> dict[str, float | int]:
    groups, requests, used, total, leaves = make_tree(fanouts)
    t0 = time.perf_counter()
    tree = ElasticQuotaTree(groups, total, requests=requests, used=used)
    tree.result()
    build_ms = (time.perf_counter() - t0) * 1000
    full = timed(tree.recompute_all, repeat)
    full_cpu = statistics.median(CPU_MS)
    rnd = random.Random(1)

    def leaf_change() -> None:
        name = rnd.choice(leaves)
        tree.set_request(name, ResourceList({r: rnd.randint(0, 40) * UNIT[r] // 2 for r in UNIT}))
        tree.result()

    def used_change() -> None:
        name = rnd.choice(leaves)
        tree.set_used(name, ResourceList({r: rnd.randint(0, 10) * UNIT[r] // 2 for r in UNIT}))
        tree.result()

    leaf = timed(leaf_change, repeat * 5)

    def leaf_change_live() -> None:
        name = rnd.choice(leaves)
        tree.set_request(name, ResourceList({r: rnd.randint(0, 40) * UNIT[r] // 2 for r in UNIT}))
        tree.result(copy=False)

    live = timed(leaf_change_live, repeat * 5)
    use = timed(used_change, repeat * 5)
    tracemalloc.start()
    t = ElasticQuotaTree(groups, total, requests=requests, used=used)
    t.recompute_all()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "groups": len(groups) + 1,
        "resources": len(UNIT),
        "build_ms": build_ms,
        "full_med": statistics.median(full),
        "full_p95": p95(full),
        "full_cpu": full_cpu,
        "leaf_med": statistics.median(leaf),
        "leaf_p95": p95(leaf),
        "live_med": statistics.median(live),
        "used_med": statistics.median(use),
        "peak_mb": peak / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    shapes = [(10, 10, 10, 10), (20, 20, 15, 16)]
    repeat = 5 if args.quick else 21
    header = (
        f"{'groups':>7} {'res':>3} {'build ms':>9} {'full med':>9} {'full p95':>9} {'full cpu':>9} "
        f"{'leaf med':>9} {'leaf p95':>9} {'live med':>9} {'used med':>9} {'peak MB':>8}"
    )
    print(header)
    for fanouts in shapes:
        row = run(fanouts, repeat if fanouts[0] == 10 else max(3, repeat // 3))
        print(
            f"{row['groups']:>7} {row['resources']:>3} {row['build_ms']:>9.1f} {row['full_med']:>9.2f} "
            f"{row['full_p95']:>9.2f} {row['full_cpu']:>9.2f} {row['leaf_med']:>9.3f} {row['leaf_p95']:>9.3f} {row['live_med']:>9.3f} "
            f"{row['used_med']:>9.3f} "
            f"{row['peak_mb']:>8.1f}"
        )


if __name__ == "__main__":
    main()
