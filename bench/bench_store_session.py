"""Benchmark: one scheduling session end to end through the Django store, on PostgreSQL.

Builds, in a database of its own, the cluster the store must handle every second (issue 4): 5,000 nodes (64 cpu,
256Gi, 5 % with 8 GPUs and a taint), 50,000 pending pods in gang jobs of 1-64 pods (the shapes of
``bench/bench_session.py``: five request sizes, 20 % with a zone selector, 3 % asking for a GPU), 200 leaf queues
under a 3-level queue tree, and a 3-level elastic quota tree (5 divisions > 20 departments > 200 teams) whose
teams take two namespaces each. Rows go in with ``bulk_create`` in a child process, so the figures below are
those of a process that only runs sessions, as a Celery worker does.

Then it runs the ``run_session`` Celery task in-process (lock, snapshot read, engine, decisions committed in one
transaction) and prints the pods placed, the seconds of each phase, pods/s end to end and the peak RSS; then a
second session on the now-busy cluster (the steady state every second: nothing fits, every podgroup keeps its
reason). It checks that no node is over its allocatable and that every binding is unique.

    .venv/bin/python bench/bench_store_session.py                    # Volcano's default policy (proportion)
    .venv/bin/python bench/bench_store_session.py --mode elastic     # + Koordinator's elasticquota
    .venv/bin/python bench/bench_store_session.py --mode capacity    # hierarchical capacity
    .venv/bin/python bench/bench_store_session.py --nodes 500 --pods 5000

``DATABASE_URL`` picks the server (default ``postgres://postgres@127.0.0.1:5432/fairway_bench``); the database
is created when missing and its scheduling rows are replaced on every run.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")

GiB = 2**30
SHAPES = [(500, 1 * GiB), (1000, 2 * GiB), (2000, 8 * GiB), (4000, 16 * GiB), (8000, 32 * GiB)]
ZONES = ["zone-a", "zone-b", "zone-c", "zone-d", "zone-e"]
CLUSTER = "bench"
MODES: dict[str, str] = {
    "proportion": "",  # Volcano's default configuration
    "capacity": """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: capacity, enableHierarchy: true},
            {name: nodeorder}]
""",
    "elastic": """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: elasticquota},
            {name: nodeorder}]
""",
}


def ensure_database() -> None:
    """Create the benchmark database when missing, then migrate it."""
    import environ
    import psycopg

    url = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    if url["ENGINE"] == "django.db.backends.sqlite3":  # the embedded default (a file, made by migrate)
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        return
    if url["ENGINE"] != "django.db.backends.postgresql":
        raise SystemExit("this benchmark needs PostgreSQL or SQLite (DATABASE_URL=postgres://... or sqlite:///...)")
    admin = psycopg.connect(
        dbname="postgres",
        user=url["USER"],
        password=url.get("PASSWORD") or None,
        host=url["HOST"],
        port=url["PORT"] or 5432,
        autocommit=True,
    )
    with admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [url["NAME"]]).fetchone():
            admin.execute(f'CREATE DATABASE "{url["NAME"]}"')
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def build(nodes: int, pods: int, queues: int, seed: int, mode: str) -> None:
    """Replace the benchmark cluster and trees with a fresh synthetic one (bulk inserts)."""
    from django.db import transaction

    from engine.resources import ResourceList
    from quotas import services
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Cluster, Node, Pod, PodGroup

    rng = random.Random(seed)
    t0 = time.perf_counter()
    with transaction.atomic():
        old = Cluster.objects.filter(name=CLUSTER).first()
        if old is not None:  # raw deletes: the ORM's cascade would load 50,000 pods first
            from scheduling import models as m

            for model, where in (
                (m.Eviction, {"cluster": old}),
                (m.PodGroupReason, {"podgroup__cluster": old}),
                (m.QuotaSample, {"cluster": old}),
                (m.SchedulingSession, {"cluster": old}),
                (Pod, {"cluster": old}),
                (PodGroup, {"cluster": old}),
                (Node, {"cluster": old}),
            ):
                model.objects.filter(**where)._raw_delete(model.objects.db)
            old.delete()
        Namespace.objects.filter(name__startswith="bench-").delete()
        for model in (Queue, QuotaGroup):  # children first (PROTECT)
            for depth in (3, 2, 1):
                model.objects.filter(name__startswith=f"b{depth}-").delete()
        services.ensure_builtins()
        cluster = Cluster.objects.create(name=CLUSTER, scheduler_policy=MODES[mode])
        total_cpu, total_mem = nodes * 64_000, nodes * 256 * GiB

        def share(parts: int) -> ResourceList:
            return ResourceList({"cpu": total_cpu // parts, "memory": total_mem // parts})

        # queues: root > 4 divisions > 20 departments > `queues` teams; quota groups: root > 5 > 20 > teams
        root_q, root_g = Queue.objects.get(name="root"), QuotaGroup.objects.get(name="root")
        per_dept = max(1, queues // 20)
        divisions = Queue.objects.bulk_create(
            Queue(name=f"b1-div-{d}", parent=root_q, deserved=share(4)) for d in range(4)
        )
        departments = Queue.objects.bulk_create(
            Queue(name=f"b2-dept-{e}", parent=divisions[e % 4], deserved=share(20)) for e in range(20)
        )
        teams = Queue.objects.bulk_create(
            Queue(
                name=f"b3-team-{e}-{t}", parent=departments[e], weight=rng.randint(1, 4), deserved=share(20 * per_dept)
            )
            for e in range(20)
            for t in range(per_dept)
        )
        g_div = QuotaGroup.objects.bulk_create(
            QuotaGroup(name=f"b1-div-{d}", parent=root_g, is_parent=True, min=share(5), max=share(1)) for d in range(5)
        )
        g_dept = QuotaGroup.objects.bulk_create(
            QuotaGroup(name=f"b2-dept-{e}", parent=g_div[e % 5], is_parent=True, min=share(20), max=share(2))
            for e in range(20)
        )
        g_team = QuotaGroup.objects.bulk_create(
            QuotaGroup(name=f"b3-team-{i}", parent=g_dept[i % 20], min=share(20 * per_dept), max=share(4))
            for i in range(len(teams))
        )
        namespaces = Namespace.objects.bulk_create(
            Namespace(
                name=f"bench-{i:03d}", weight=rng.randint(1, 3), default_queue=teams[i // 2], quota_group=g_team[i // 2]
            )
            for i in range(2 * len(teams))
        )
        gpu_nodes = max(1, nodes // 20)
        Node.objects.bulk_create(
            (
                Node(
                    cluster=cluster,
                    name=f"node-{i:05d}",
                    allocatable=ResourceList(
                        {"cpu": 64_000, "memory": 256 * GiB, "pods": 110_000}
                        | ({"nvidia.com/gpu": 8_000} if i < gpu_nodes else {})
                    ),
                    labels={"topology.kubernetes.io/zone": ZONES[i % 5], "kubernetes.io/hostname": f"node-{i:05d}"},
                    taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
                    if i < gpu_nodes
                    else [],
                )
                for i in range(nodes)
            ),
            batch_size=2000,
        )
        groups: list[PodGroup] = []
        members: list[tuple[int, dict[str, Any]]] = []
        made = 0
        while made < pods:
            size = min(rng.randint(1, 64), pods - made)
            cpu, mem = rng.choice(SHAPES)
            min_member = size if rng.random() < 0.7 else max(1, size // 2)
            ns = namespaces[rng.randrange(len(namespaces))]
            selector = {"topology.kubernetes.io/zone": rng.choice(ZONES)} if rng.random() < 0.2 else {}
            request = {"cpu": cpu, "memory": mem}
            tolerations: list[dict[str, str]] = []
            if rng.random() < 0.03:
                request["nvidia.com/gpu"] = 1000
                tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "", "effect": ""}]
                size = min(size, 8)
                min_member = min(min_member, size)
            groups.append(
                PodGroup(
                    cluster=cluster,
                    namespace=ns,
                    name=f"job-{len(groups):05d}",
                    queue_id=ns.default_queue_id,
                    min_member=min_member,
                    min_resources=ResourceList({k: v * min_member for k, v in request.items()}),
                    priority=rng.choice([0, 0, 0, 100, 1000]),
                )
            )
            members.append(
                (
                    size,
                    {
                        "request": ResourceList(request),
                        "node_selector": selector,
                        "tolerations": tolerations,
                        "namespace": ns,
                    },
                )
            )
            made += size
        groups = PodGroup.objects.bulk_create(groups, batch_size=2000)
        Pod.objects.bulk_create(
            (
                Pod(
                    cluster=cluster,
                    namespace=spec["namespace"],
                    name=f"{pg.name}-{k}",
                    podgroup=pg,
                    request=spec["request"],
                    priority=pg.priority,
                    quota_group_id=spec["namespace"].quota_group_id,
                    node_selector=spec["node_selector"],
                    tolerations=spec["tolerations"],
                )
                for pg, (size, spec) in zip(groups, members, strict=True)
                for k in range(size)
            ),
            batch_size=5000,
        )
    print(
        f"built: {nodes} nodes, {made} pending pods in {len(groups)} gang jobs, {len(teams)} leaf queues "
        f"({4 + 20 + len(teams)} queues), {5 + 20 + len(teams)} quota groups, {len(namespaces)} namespaces, "
        f"policy {mode} ({time.perf_counter() - t0:.1f} s)"
    )


def check(cluster: Any) -> tuple[int, int]:
    """(nodes over their allocatable cpu or memory, pods bound twice): both must be 0."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM (
              SELECT n.id FROM scheduling_node n JOIN scheduling_pod p ON p.node_id = n.id
               WHERE n.cluster_id = %s AND p.status IN ('Bound', 'Running', 'Releasing')
               GROUP BY n.id, n.allocatable
              HAVING sum((p.request->>'cpu')::bigint) > (n.allocatable->>'cpu')::bigint
                  OR sum(coalesce((p.request->>'memory')::bigint, 0)) > (n.allocatable->>'memory')::bigint
            ) AS over
            """,
            [cluster.pk],
        )
        over = cursor.fetchone()[0]
    session = cluster.sessions.filter(status="ok").order_by("id").first()
    uids = [b[0] for b in session.bindings] if session else []
    return over, len(uids) - len(set(uids))


def run(profile: bool) -> None:
    import django

    django.setup()
    from scheduling.models import Cluster, Pod
    from scheduling.tasks import run_session

    cluster = Cluster.objects.get(name=CLUSTER)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for label in ("first session (50,000 pending)", "second session (steady state)"):
        t0, c0 = time.perf_counter(), time.process_time()
        if profile and label.startswith("first"):
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            outcome = run_session(cluster.pk)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        else:
            outcome = run_session(cluster.pk)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        session = cluster.sessions.order_by("-id").first()
        placed = session.bound + session.pipelined
        t = session.timings
        print(f"{label}: {outcome}, status {session.status} {session.error[:200]}")
        print(
            f"  pods placed {placed:,} (bound {session.bound:,}, pipelined {session.pipelined:,}) of "
            f"{session.pending_pods:,} pending; podgroups {session.podgroups}"
        )
        print(
            f"  snapshot read {t.get('load_ms', 0) / 1000:.2f} s, engine {t.get('engine_ms', 0) / 1000:.2f} s "
            f"(its bindings written meanwhile; then waited {t.get('bindings_wait_ms', 0) / 1000:.2f} s for the "
            f"last), rest of the decisions committed {t.get('write_ms', 0) / 1000:.2f} s; end to end {wall:.2f} s"
            + (f", {placed / wall:,.0f} pods/s" if placed else "")
        )
        # on a shared machine the wall clock also counts waiting for a core; this process's own CPU time does not
        # (PostgreSQL's work is in its own processes: the wall figures above are the ones to quote when idle)
        print(f"  this process's CPU time {cpu:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    over, twice = check(cluster)
    bound = Pod.objects.filter(cluster=cluster, status="Bound").count()
    print(f"peak RSS {peak:,.0f} MB (after django.setup: {rss_before:,.0f} MB)")
    print(f"checks: {bound:,} pods Bound, nodes over allocatable: {over}, pods bound twice: {twice}")


def maintain() -> None:
    """``VACUUM ANALYZE`` after the build, what autovacuum does after a bulk load. Each run deletes and reinserts
    tens of thousands of rows; on a server with autovacuum off (CI's PostgreSQL here) the planner would otherwise
    plan on an earlier run's statistics and the scans walk every earlier run's dead rows (a podgroup's pods looked
    up by a sequential scan of 1.2 million row versions: 60 ms instead of 1)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"vacuumed and analysed ({time.perf_counter() - t0:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=sorted(MODES), default="proportion")
    parser.add_argument("--profile", action="store_true", help="profile the first session")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:  # bench_steady and bench_footprint build through this path: the database may be new too
        ensure_database()
        build(args.nodes, args.pods, args.queues, args.seed, args.mode)
        maintain()
        return
    ensure_database()
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--build-only",
            "--nodes",
            str(args.nodes),
            "--pods",
            str(args.pods),
            "--queues",
            str(args.queues),
            "--seed",
            str(args.seed),
            "--mode",
            args.mode,
        ],
        check=True,
    )
    run(args.profile)


if __name__ == "__main__":
    main()
