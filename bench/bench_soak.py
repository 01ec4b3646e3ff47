"""The soak's figures for docs/benchmarks.md: the demo cluster run by the real loop for hours of virtual time
(``tests/support/soak.py``), a round (workload, session, recycling, simulated agent, node check) every ``--step``
virtual seconds, with a dead GPU machine and a broker outage injected, every invariant checked after every
session.

    .venv/bin/python bench/bench_soak.py [--hours 6] [--step 10] [--seed 0] [--quiet] [--policy FILE]

Needs PostgreSQL (``DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/fairway_bench_soak``, created
afresh and migrated here). Prints the figures as JSON; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="the workload generator's seed")
    parser.add_argument("--quiet", action="store_true", help="print the figures only (no violation lines)")
    parser.add_argument(
        "--policy", type=Path, help="a scheduler policy file for the demo cluster (default: the demo's)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench_soak")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    import django

    _create_database(os.environ["DATABASE_URL"])
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from tests.support.soak import Fault, Soak

    faults = (
        Fault(at=3600, kind="node-down", node="gpu-03", seconds=900),
        Fault(at=7200, kind="outage", seconds=60),
    )
    policy = args.policy.read_text() if args.policy else None
    report = Soak(hours=args.hours, step=args.step, faults=faults, seed=args.seed, policy=policy).run()
    summary = {"hours": args.hours, "step_s": args.step, "seed": args.seed, **report.summary()}
    print(json.dumps(summary, indent=None if args.quiet else 1))
    if not args.quiet:
        for line in report.violations[:20]:
            print("violation:", line)


def _create_database(url: str) -> None:
    """The bench's database afresh (PostgreSQL only): dropped and created, so that a database another version of
    the code migrated (``bench_gangs.py`` runs an older checkout on the same name) never gets in the way."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


if __name__ == "__main__":
    main()
