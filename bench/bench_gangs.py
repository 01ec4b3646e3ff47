"""Gangs and preemption that waste nothing (issue 26), measured against the code before: paired soaks of the demo.

For each seed, the demo is run by the real loop for ``--hours`` of virtual time (``bench/bench_soak.py``: a round
every ``--step`` s, a GPU machine dead for 15 minutes, a one-minute outage) twice: by this checkout and by the
code at ``--before`` (default ``7d7e773``, the last commit before issues 25 and 26: the issue-25 commit already
carries part of issue 26's engine and does not import), checked out into a temporary worktree. Both runs use
this checkout's soak harness (copied over the old one), so both are measured the same way (a gang below its
minimum makes no progress: ``Soak.stall_broken_gangs``); each runs its own
demo policy (the old one has neither ``revokeWholeGangs``, ``gangRepairTimeout`` nor ``minRuntime``).
Prints one line per run and a table of the means with their spread (min-max):

    .venv/bin/python bench/bench_gangs.py [--seeds 1 2 3] [--hours 1] [--step 10] [--before 7d7e773] [--database-prefix P]

Needs PostgreSQL at ``127.0.0.1:5432`` (databases ``<prefix>_now`` / ``_before``, created here; the prefix
``fairway_bench_gangs`` by default) and git. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ("tests/support/soak.py", "bench/bench_soak.py")
FIGURES = (
    ("evictions_per_bound_pod", "evictions per bound pod"),
    ("completed_jobs_per_hour", "jobs completed per hour"),
    ("binds", "pods bound"),
    ("gpu_utilisation_min", "GPUs allocated at worst (saturated rounds)"),
    ("gpu_utilisation_mean", "GPUs allocated on average (saturated rounds)"),
    ("gpu_utilisation_usable_min", "the same at worst, where admitted work could start on the free room"),
    ("shape_blocked_rounds", "saturated rounds where no admitted GPU job could start on the free room"),
    ("shape_blocked_longest_rounds", "the longest run of such rounds"),
    ("broken_gang_gpu_seconds", "GPU-seconds held by gangs below their minimum past the bound"),
    ("stalled_pod_seconds", "pod-seconds run by gangs below their minimum (no progress)"),
    ("thrash", "pods evicted within minRuntime by no higher priority"),
    ("early_evictions", "pods evicted within a minute of placement"),
    ("evicted_twice_in_a_minute", "a job's task evicted again within a minute"),
    ("worst_share_gap_pp", "worst queue share gap (pp, allocated - deserved)"),
    ("worst_useful_share_gap_pp", "the same, less what gangs below their minimum hold"),
    ("longest_wait_s", "longest wait (s)"),
    ("violations", "invariant violations"),
)


def run(tree: Path, database: str, seed: int, hours: float, step: int) -> dict[str, object]:
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}",
        "PYTHONPATH": str(tree),
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
    }
    argv = [sys.executable, str(tree / "bench/bench_soak.py"), "--hours", str(hours), "--step", str(step)]
    done = subprocess.run([*argv, "--seed", str(seed), "--quiet"], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the soak failed in {tree}:\n{done.stderr[-4000:]}")
    out = done.stdout
    figures: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return figures


def _num(value: float) -> str:
    """A figure for people: whole numbers with thousands separators, fractions to three decimals."""
    return f"{value:,.0f}" if abs(value) >= 10 else (f"{value:.3f}".rstrip("0").rstrip(".") or "0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument("--before", default="7d7e773", help="the commit to compare with")
    parser.add_argument("--database-prefix", default="fairway_bench_gangs", help="the two databases' name prefix")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="fairway-before-"))
    before = scratch / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before), args.before], check=True,
                   capture_output=True)  # fmt: skip
    try:
        for path in HARNESS:
            shutil.copyfile(ROOT / path, before / path)
        results: dict[str, list[dict[str, object]]] = {"now": [], "before": []}
        for seed in args.seeds:
            for label, tree in (("now", ROOT), ("before", before)):
                figures = run(tree, f"{args.database_prefix}_{label}", seed, args.hours, args.step)
                results[label].append(figures)
                shown = {key: figures.get(key) for key, _ in FIGURES}
                print(f"seed {seed} {label:>6}: {json.dumps(shown)}", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{len(args.seeds)} paired runs of {args.hours:g} virtual hours, a round every {args.step} s; "
          f"mean (min to max)")  # fmt: skip
    print(f"{'figure':<62} {'now':>26} {'before (' + args.before + ')':>26}")
    for key, label in FIGURES:
        cells = []
        for side in ("now", "before"):
            values = [float(v) for r in results[side] if isinstance((v := r.get(key)), int | float)]
            cells.append(
                f"{_num(statistics.mean(values))} ({_num(min(values))} to {_num(max(values))})" if values else "n/a"
            )
        print(f"{label:<62} {cells[0]:>26} {cells[1]:>26}")
    print("\nshare gaps per queue and resource, pp of the ready nodes (allocated - deserved), mean over the seeds")
    for side in ("now", "before"):
        gaps: dict[str, list[float]] = {}
        for r in results[side]:
            for key, gap in dict(r.get("share_gaps_pp") or {}).items():
                gaps.setdefault(key, []).append(float(gap))
        print(f"{side:>6}: " + ", ".join(f"{k} {statistics.mean(v):+.1f}" for k, v in sorted(gaps.items())))
    print("\nthe worst team (a leaf queue of the demo) per seed, and ml-research's and research's GPUs, pp")
    for side in ("now", "before"):
        for r in results[side]:
            print(f"{side:>6} seed {r.get('seed')}: " + _team_gaps(dict(r.get("share_gaps_pp") or {})))


def _team_gaps(gaps: dict[str, float]) -> str:
    """The worst leaf queue's gap (over cpu and GPUs), then ml-research's and its department's GPU gaps."""
    sys.path.insert(0, str(ROOT))
    from scheduling.demo_data import ORG

    teams = {team for spec in ORG.values() for team in spec["teams"]}
    leaf = {k: v for k, v in gaps.items() if k.rsplit(" ", 1)[0] in teams}
    worst = min(leaf, key=lambda k: leaf[k], default=None)
    shown = [f"worst team {worst} {leaf[worst]:+.1f}" if worst else "no team with such demand"]
    shown += [f"{k} {gaps[k]:+.1f}" for k in ("ml-research GPUs", "research GPUs") if k in gaps]
    return ", ".join(shown)


if __name__ == "__main__":
    main()
