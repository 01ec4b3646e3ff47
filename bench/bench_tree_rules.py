"""Benchmark of the tree rules on a deep chain and on a wide tree: prints figures, asserts nothing (issue 25, item 2).

Workloads (deterministic, written as manifests to a temporary folder, or ``--keep DIR``):

* ``queue chain``: 20,000 Volcano Queues, each the parent of the next (``root -> q00000 -> q00001 -> ...``), 2.3 MB;
  refused: the first queue past ``FAIRWAY_MAX_QUEUE_DEPTH`` (5) is named;
* ``quota chain``: 20,000 Koordinator ElasticQuotas chained the same way; refused past
  ``FAIRWAY_MAX_QUOTA_GROUP_DEPTH`` (10);
* ``wide quota tree``: root -> 100 departments -> 1,000 teams each (100,100 ElasticQuotas, depth 2, min/max in cpu,
  memory and GPUs that add up under every parent), 40 nodes and 2,000 pending pods spread over the teams; accepted.
  Its 33 MB are over the default ``FAIRWAY_MAX_MANIFEST_BYTES`` (20 MB): its runs raise the limit to its size.

Figures, for each: ``fairway simulate -f FILE -o json`` as a child process (wall clock, median of ``--runs``; the
interpreter's start, the imports, the YAML, the rules, the sessions and the document), its exit code and first
line of stderr; and the rules alone (``engine.rules.validate_queue_tree`` / ``validate_quota_tree`` on the loaded
snapshot, in this process, median of ``--runs``).

Run: ``.venv/bin/python bench/bench_tree_rules.py [--runs N] [--keep DIR] [--chain N] [--departments N] [--teams N]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT_QUOTA = "koordinator-root-quota"
PARENT = "quota.scheduling.koordinator.sh/parent"
IS_PARENT = "quota.scheduling.koordinator.sh/is-parent"


def queue_chain(n: int) -> list[dict[str, object]]:
    docs: list[dict[str, object]] = []
    parent = "root"
    for i in range(n):
        name = f"q{i:05d}"
        docs.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": {"parent": parent, "weight": 1},
            }
        )
        parent = name
    return docs


def _quota(name: str, parent: str, is_parent: bool, mn: dict[str, str], mx: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": name,
            "labels": {PARENT: parent, IS_PARENT: "true" if is_parent else "false"},
        },
        "spec": {"min": mn, "max": mx},
    }


def quota_chain(n: int) -> list[dict[str, object]]:
    docs: list[dict[str, object]] = []
    parent = ROOT_QUOTA
    for i in range(n):
        name = f"g{i:05d}"
        docs.append(_quota(name, parent, i < n - 1, {"cpu": "1"}, {"cpu": "10"}))
        parent = name
    return docs


def wide_quota_tree(departments: int, teams: int, nodes: int = 40, pods: int = 2_000) -> list[dict[str, object]]:
    """root -> ``departments`` -> ``teams`` each; every team min 1 cpu / 2Gi (a GPU in one team of four), max twice
    that; a department's min is its teams' sum, its max twice that; pods spread round-robin over the teams."""
    docs: list[dict[str, object]] = []
    for n in range(nodes):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{n:03d}"},
                "status": {
                    "allocatable": {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    team_names: list[str] = []
    for d in range(departments):
        dept = f"dept-{d:03d}"
        gpus = (teams + 3) // 4
        docs.append(
            _quota(
                dept,
                ROOT_QUOTA,
                True,
                {"cpu": str(teams), "memory": f"{2 * teams}Gi", "nvidia.com/gpu": str(gpus)},
                {"cpu": str(2 * teams), "memory": f"{4 * teams}Gi", "nvidia.com/gpu": str(2 * gpus)},
            )
        )
        for t in range(teams):
            team = f"{dept}-team-{t:04d}"
            team_names.append(team)
            gpu = "1" if t % 4 == 0 else "0"
            docs.append(
                _quota(
                    team,
                    dept,
                    False,
                    {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": gpu},
                    {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": str(2 * int(gpu))},
                )
            )
    for p in range(pods):
        team = team_names[(p * 7919) % len(team_names)]
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"pod-{p:05d}",
                    "namespace": "work",
                    "labels": {"quota.scheduling.koordinator.sh/name": team},
                },
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
                "status": {"phase": "Pending"},
            }
        )
    return docs


def write(path: Path, docs: list[dict[str, object]]) -> Path:
    """The documents as YAML in flow style, one document a line (JSON is YAML): the wide tree in 25 MB, not 39."""
    path.write_text("".join(f"---\n{json.dumps(doc, separators=(',', ':'))}\n" for doc in docs), encoding="utf-8")
    return path


def _env(path: Path) -> dict[str, str]:
    """The environment of a run: ``FAIRWAY_MAX_MANIFEST_BYTES`` raised to the file's size when it is over the default
    (the wide tree's 100,100 ElasticQuotas are about 33 MB even one document a line)."""
    size = path.stat().st_size
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    if size > 20_000_000:
        env["FAIRWAY_MAX_MANIFEST_BYTES"] = str(size + 1)
    return env


def run_cli(path: Path) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "controlplane.cli", "simulate", "-f", str(path), "-o", "json"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        env=_env(path),
        check=False,
    )
    elapsed = time.perf_counter() - started
    first = next((line for line in done.stderr.splitlines() if not line.startswith(("warning:", "note:"))), "")
    return elapsed, done.returncode, first


def rules_alone(path: Path) -> Callable[[], int]:
    """A callable that runs the whole-tree rules on the file's snapshot (loaded once), returning the error count."""
    from engine import rules
    from engine.limits import Limits
    from engine.manifests import load_manifests

    limits = Limits.from_env(_env(path))
    snap = load_manifests([(str(path), path.read_text(encoding="utf-8"))], limits=limits).snapshot

    def check() -> int:
        queues = rules.validate_queue_tree(dict(snap.queues), max_depth=limits.max_queue_depth)
        groups = rules.validate_quota_tree(dict(snap.quota_groups), max_depth=limits.max_quota_group_depth)
        return len(queues) + len(groups)

    return check


def measure(label: str, path: Path, runs: int) -> dict[str, object]:
    size = path.stat().st_size
    cli = [run_cli(path) for _ in range(runs)]
    check = rules_alone(path)
    times, errors = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        errors = check()
        times.append(time.perf_counter() - started)
    row = {
        "workload": label,
        "bytes": size,
        "cli_s": round(statistics.median(t for t, _, _ in cli), 3),
        "exit": cli[0][1],
        "stderr": cli[0][2][:160],
        "rules_ms": round(statistics.median(times) * 1000, 1),
        "rule_errors": errors,
        "manifest_limit": _env(path).get("FAIRWAY_MAX_MANIFEST_BYTES", "default"),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", metavar="DIR", help="write the manifests there (kept) instead of a temporary folder")
    parser.add_argument("--chain", type=int, default=20_000)
    parser.add_argument("--departments", type=int, default=100)
    parser.add_argument("--teams", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = [
            (f"queue chain of {args.chain:,}", write(folder / "queue-chain.yaml", queue_chain(args.chain))),
            (f"quota chain of {args.chain:,}", write(folder / "quota-chain.yaml", quota_chain(args.chain))),
            (
                f"wide quota tree 1 x {args.departments:,} x {args.teams:,}",
                write(folder / "wide-quota-tree.yaml", wide_quota_tree(args.departments, args.teams)),
            ),
        ]
        for label, path in files:
            measure(label, path, args.runs)


if __name__ == "__main__":
    main()
