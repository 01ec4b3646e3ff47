"""The soak's figures for docs/benchmarks.md: the demo cluster run by the real loop for hours of virtual time
(``tests/support/soak.py``), a round (workload, session, recycling, simulated agent, node check) every ``--step``
virtual seconds, with a dead GPU machine and a broker outage injected, every invariant checked after every
session.

    .venv/bin/python bench/bench_soak.py [--hours 6] [--step 10] [--seed 0] [--quiet] [--policy FILE]
        [--explain-below 0.9]

``--explain-below F`` prints each saturated round whose GPUs are allocated below ``F``, as the session left it: the
GPU machines' free room, the admitted GPU jobs (shapes, phase, reason) and the quota groups' GPU runtime and use.

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
    parser.add_argument(
        "--explain-below", type=float, metavar="FRACTION", help="explain the saturated rounds allocated below it"
    )
    args = parser.parse_args()
    fresh_database("fairway_bench_soak")
    from tests.support.soak import Fault, Soak

    faults = (
        Fault(at=3600, kind="node-down", node="gpu-03", seconds=900),
        Fault(at=7200, kind="outage", seconds=60),
    )
    policy = args.policy.read_text() if args.policy else None
    explain = None
    if args.explain_below is not None:
        floor = args.explain_below

        def explain(soak: Soak, util: float, usable: bool) -> None:
            if util < floor:
                _explain_round(soak, util, usable)

    report = Soak(
        hours=args.hours, step=args.step, faults=faults, seed=args.seed, policy=policy, on_saturated=explain
    ).run()
    summary = {"hours": args.hours, "step_s": args.step, "seed": args.seed, **report.summary()}
    print(json.dumps(summary, indent=None if args.quiet else 1))
    if not args.quiet:
        for line in report.violations[:20]:
            print("violation:", line)


def _explain_round(soak: object, util: float, usable: bool) -> None:
    """One saturated round below the floor, on stderr: the GPU machines' free room, the admitted GPU jobs and the
    quota groups' GPU runtime and use (their latest samples)."""
    from collections import Counter

    from django.utils import timezone

    from scheduling.models import Node, Pod, PodGroup
    from tests.support.soak import GPU, OCCUPYING, Soak, admissible

    assert isinstance(soak, Soak)
    now = timezone.now()
    say = lambda text: print(text, file=sys.stderr)  # noqa: E731
    verdict = "admitted work could start on the free room" if usable else "shape-blocked: no admitted GPU job fits it"
    say(f"{now:%H:%M:%S}: GPUs {util:.1%} allocated; {verdict}")
    used: dict[int, Counter[str]] = {}
    for node_id, request in Pod.objects.filter(cluster=soak.cluster, status__in=OCCUPYING).values_list(
        "node_id", "request"
    ):
        used.setdefault(node_id, Counter()).update(request)
    for pk, name, alloc, ready in Node.objects.filter(cluster=soak.cluster).values_list(
        "id", "name", "allocatable", "ready"
    ):
        if alloc.get(GPU):
            free = {r: alloc.get(r, 0) - used.get(pk, Counter()).get(r, 0) for r in ("cpu", "memory", GPU)}
            if free[GPU] or not ready:
                say(f"  {name}{'' if ready else ' (not ready)'}: free {free[GPU] // 1000} GPUs, "
                    f"{free['cpu'] // 1000} cores, {free['memory'] >> 30} GiB")  # fmt: skip
    for pg in PodGroup.objects.filter(cluster=soak.cluster).exclude(phase__in=("Running", "Completed")):
        pending = list(pg.pods.filter(status="Pending").values_list("request", flat=True))
        if not admissible(pg.phase, pg.blocker) or not any(r.get(GPU) for r in pending):
            continue
        shapes = Counter(f"{r.get(GPU, 0) // 1000} GPUs/{r.get('cpu', 0) // 1000} cores/{r.get('memory', 0) >> 30} GiB"
                         for r in pending)  # fmt: skip
        say(f"  job {pg.namespace.name}/{pg.name} (priority {pg.priority}, minMember {pg.min_member}, {pg.phase}): "
            f"pending {dict(shapes)}; {pg.reason}: {pg.message}")  # fmt: skip
    for name, request, runtime, used_ in soak._latest_samples(
        now, "quota", ("name", "request", "deserved", "allocated")
    ):
        if (request or {}).get(GPU):
            say(f"  quota group {name}: GPUs requested {request[GPU] // 1000}, used {(used_ or {}).get(GPU, 0) // 1000}, "
                f"runtime {(runtime or {}).get(GPU, 0) // 1000}")  # fmt: skip


def fresh_database(name: str) -> None:
    """Django on a fresh, migrated PostgreSQL database: ``DATABASE_URL``, default ``name`` on the local server
    (``_create_database``), with the project's settings."""
    os.environ.setdefault("DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{name}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    import django

    _create_database(os.environ["DATABASE_URL"])
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


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
