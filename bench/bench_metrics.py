"""Benchmark: ``/metrics`` with a 20,000-node cluster (issue 25: a hostile agent fills a cluster up to
``FAIRWAY_MAX_NODES``; the scrape must not grow with the healthy nodes).

Builds, in a database of its own (``<name>_metrics`` next to ``DATABASE_URL``'s, dropped and created), the demo
organisation (``manage.py load_demo``: its trees, its 24-node ``default`` cluster and jobs) and a cluster ``big`` of
``--nodes`` nodes (default 20,000; 64 cores, 256 GiB each) with one running pod on each of ``--pods`` of them, of
which a few need attention: 5 silent (their last heartbeat older than the cluster's heartbeat timeout), 5 NotReady,
2 set aside, 10 cordoned. Then it scrapes ``/metrics`` as an admin (Django test client, in process, as
``bench/bench_attack.py`` does) and prints, for each case, the median and p95 of ``--repeat`` scrapes, the bytes of
the answer and its lines about nodes:

* **first**: the first scrape of the process (the values are computed, every cache is cold);
* **steady**: nothing changed since the last scrape;
* **heartbeats**: before each scrape 1 % of the nodes heartbeat (a live cluster's normal state: the cluster's
  revision moves, nothing the engine reads changes);
* **a pod changed**: before each scrape one pod is created (what a session or an agent does all the time: the
  cluster's values are recomputed);
* **a node NotReady**: before each scrape one more node turns NotReady.

and, when the exposition counts its builds (``planning.metrics.BUILDS``), how many cluster texts each case built.
``--save FILE`` writes the figures as JSON; ``--before FILE`` prints them beside a previous run's (e.g. the code
before a change).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/fairway .venv/bin/python bench/bench_metrics.py
    .venv/bin/python bench/bench_metrics.py --nodes 2000 --repeat 10 --save /tmp/after.json --before /tmp/before.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_attack import own_database, setup_django  # noqa: E402 - the same database and Django set-up (bench/)

SILENT, NOT_READY, SET_ASIDE, CORDONED = 5, 5, 2, 10
CASES = ("first", "steady", "heartbeats", "a pod changed", "a node NotReady")


def build(nodes: int, pods: int) -> Any:
    """The demo, then the ``big`` cluster; returns it."""
    from django.core.management import call_command
    from django.utils import timezone

    from engine.resources import parse_resource_list
    from quotas.models import Namespace
    from scheduling.models import Cluster, Node, Pod, PodGroup

    call_command("load_demo", stdout=StringIO())
    demo = Cluster.objects.get(name="default")
    big = Cluster.objects.create(name="big", scheduler_policy=demo.scheduler_policy)
    now = timezone.now()
    silent_beat = now - timedelta(seconds=big.node_heartbeat_timeout * 3)
    shape = parse_resource_list({"cpu": "64", "memory": "256Gi"})
    width = len(str(nodes))

    def node(i: int) -> Node:
        n = Node(cluster=big, name=f"n-{i:0{width}d}", allocatable=shape, last_heartbeat=now)
        if i < SILENT:
            n.last_heartbeat = silent_beat
        elif i < SILENT + NOT_READY:
            n.ready, n.last_heartbeat, n.not_ready_since = False, silent_beat, silent_beat
        elif i < SILENT + NOT_READY + SET_ASIDE:
            n.allocatable = parse_resource_list({})
            n.set_aside = "set aside: allocatable cpu above the per-node bound (the bench said so)"
        elif i < SILENT + NOT_READY + SET_ASIDE + CORDONED:
            n.unschedulable = True
        return n

    made = Node.objects.bulk_create((node(i) for i in range(nodes)), batch_size=2000)
    ns = Namespace.objects.exclude(quota_group=None).exclude(default_queue=None).order_by("name").first()
    assert ns is not None and ns.default_queue is not None
    request = parse_resource_list({"cpu": "8", "memory": "32Gi"})
    per_job = 10
    groups = PodGroup.objects.bulk_create(
        (
            PodGroup(
                cluster=big,
                namespace=ns,
                name=f"job-{j:05d}",
                queue=ns.default_queue,
                min_member=per_job,
                phase="Running",
            )
            for j in range(-(-pods // per_job))
        ),
        batch_size=2000,
    )
    Pod.objects.bulk_create(
        (
            Pod(
                cluster=big,
                namespace=ns,
                name=f"pod-{i:06d}",
                podgroup=groups[i // per_job],
                request=request,
                quota_group=ns.quota_group,
                status="Running",
                node=made[(i + SILENT + NOT_READY + SET_ASIDE + CORDONED) % nodes],
                started=now,
            )
            for i in range(pods)
        ),
        batch_size=5000,
    )
    return big


def admin_client() -> Any:
    from django.contrib.auth import get_user_model
    from django.test import Client

    boss = get_user_model().objects.create_user("bench-admin", password="pw-bench-admin", is_staff=True,
                                                is_superuser=True)  # fmt: skip
    client = Client()
    client.force_login(boss)
    return client


def builds() -> int | None:
    """How many cluster texts the exposition built so far, when it counts them."""
    from planning import metrics

    counted = getattr(metrics, "BUILDS", None)
    return None if counted is None else int(sum(counted.values()))


def measure(client: Any, big: Any, repeat: int) -> dict[str, dict[str, Any]]:
    from django.utils import timezone

    from quotas.models import Namespace
    from scheduling.models import Node, Pod

    nodes = list(Node.objects.filter(cluster=big, ready=True).order_by("name").values_list("pk", flat=True))
    ns = Namespace.objects.exclude(quota_group=None).order_by("name").first()
    counter = iter(range(10**9))

    def heartbeats() -> None:
        i = next(counter)
        step = max(1, len(nodes) // 100)
        Node.objects.filter(cluster=big, pk__in=nodes[(i % 100) :: 100][:step]).update(last_heartbeat=timezone.now())

    def pod() -> None:
        Pod.objects.create(cluster=big, namespace=ns, name=f"extra-{next(counter)}", quota_group=ns.quota_group,
                           request={"cpu": 1000})  # fmt: skip

    def not_ready() -> None:
        node = Node.objects.get(pk=nodes[-1 - next(counter)])
        node.ready = False
        node.save(update_fields=["ready", "updated"])

    out: dict[str, dict[str, Any]] = {}

    def run(case: str, before: Callable[[], None] | None, n: int) -> None:
        times, size, lines, built = [], 0, 0, builds()
        for _ in range(n):
            if before is not None:
                before()
            start = time.perf_counter()
            answer = client.get("/metrics")
            times.append((time.perf_counter() - start) * 1000)
            assert answer.status_code == 200, answer.content[:300]
            size = len(answer.content)
            lines = sum(1 for line in answer.content.split(b"\n") if line.startswith(b"fairway_node"))
        after = builds()
        out[case] = {
            "p50_ms": statistics.median(times),
            "p95_ms": sorted(times)[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
            "bytes": size,
            "node_lines": lines,
            "builds_per_scrape": None if built is None or after is None else (after - built) / n,
        }
        print(f"  {case}: {out[case]}", flush=True)

    run("first", None, 1)
    run("steady", None, repeat)
    run("heartbeats", heartbeats, repeat)
    run("a pod changed", pod, repeat)
    run("a node NotReady", not_ready, repeat)
    return out


def table(after: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]] | None) -> None:
    head = f"{'case':>16} | {'p50 ms':>8} {'p95 ms':>8} {'bytes':>10} {'node lines':>10} {'builds':>6}"
    if before:
        head += f" | {'before p50':>10} {'p95':>8} {'bytes':>10} {'node lines':>10}"
    print(head)
    for case in CASES:
        a = after.get(case)
        if a is None:
            continue
        built = "-" if a["builds_per_scrape"] is None else f"{a['builds_per_scrape']:.2f}"
        row = f"{case:>16} | {a['p50_ms']:8.1f} {a['p95_ms']:8.1f} {a['bytes']:10,} {a['node_lines']:10,} {built:>6}"
        b = (before or {}).get(case)
        if b is not None:
            row += f" | {b['p50_ms']:10.1f} {b['p95_ms']:8.1f} {b['bytes']:10,} {b['node_lines']:10,}"
        print(row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--pods", type=int, default=20_000, help="running pods, one per node (default 20,000)")
    parser.add_argument("--repeat", type=int, default=20, help="scrapes per case (20)")
    parser.add_argument("--save", help="write the figures to this JSON file")
    parser.add_argument("--before", help="a JSON file of an earlier run, printed beside this one")
    args = parser.parse_args()
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        print("bench_metrics needs PostgreSQL: --database-url postgres://... (or DATABASE_URL)", file=sys.stderr)
        return 2
    minimum = SILENT + NOT_READY + SET_ASIDE + CORDONED + args.repeat + 1
    if args.nodes < minimum:
        print(f"--nodes: at least {minimum} (the nodes that need attention and those turned NotReady)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django(own_database(args.database_url, "metrics"), var_dir)
        started = time.perf_counter()
        big = build(args.nodes, min(args.pods, args.nodes))
        print(f"world built in {time.perf_counter() - started:.1f} s ({args.nodes:,} nodes)", flush=True)
        figures = measure(admin_client(), big, args.repeat)
    if args.save:
        Path(args.save).write_text(json.dumps(figures, indent=2))
    before = json.loads(Path(args.before).read_text()) if args.before else None
    table(figures, before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
