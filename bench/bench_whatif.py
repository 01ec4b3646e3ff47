"""What-if through the API on a 1,000-node cluster with 500 queues (issue 3's target: p95 <= 200 ms).

Seeds a PostgreSQL database (``BENCH_DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/fairway_bench``,
recreated) with 1,000 nodes, a 3-level tree of 500 queues (10 departments x 49 teams + root/default), a quota tree
of the same shape, 2,000 podgroups and 10,000 pods (half running), then POSTs a weight change to
``/api/v1/whatif/`` N times through Django's test client with a token, and prints median / p95 / max and peak RSS:
first while the current values are cached, then right after a change of the cluster (a pod's row written, as every
session does: the values are refreshed inside that request), then once more on the refreshed values; and the
refresh itself split into the snapshot read and the values' computation.

    .venv/bin/python bench/bench_whatif.py [--runs 40] [--changes 20]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")


def recreate_database() -> None:
    import psycopg

    url = os.environ["DATABASE_URL"]
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def seed(rng: random.Random) -> str:
    from django.contrib.auth import get_user_model

    from engine.resources import ResourceList
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Cluster, Node, Pod, PodGroup

    cluster = Cluster.objects.get(name="default")
    gib = 2**30
    Node.objects.bulk_create(
        Node(
            cluster=cluster,
            name=f"node-{i:04d}",
            allocatable=ResourceList({"cpu": 64_000, "memory": 256 * gib, "pods": 110_000}),
        )
        for i in range(1000)
    )
    root, groot = Queue.objects.get(name="root"), QuotaGroup.objects.get(name="root")
    depts = Queue.objects.bulk_create(Queue(name=f"dept-{d}", parent=root, weight=d + 1) for d in range(10))
    gdepts = QuotaGroup.objects.bulk_create(
        QuotaGroup(
            name=f"dept-{d}",
            parent=groot,
            is_parent=True,
            min=ResourceList({"cpu": 6_000_000}),
            max=ResourceList({"cpu": 64_000_000}),
            shared_weight=ResourceList({"cpu": 64_000_000}),
        )
        for d in range(10)
    )
    teams = Queue.objects.bulk_create(
        Queue(name=f"team-{d}-{t}", parent=depts[d], weight=rng.randint(1, 8)) for d in range(10) for t in range(49)
    )
    gteams = QuotaGroup.objects.bulk_create(
        QuotaGroup(
            name=f"team-{d}-{t}",
            parent=gdepts[d],
            min=ResourceList({"cpu": 100_000}),
            max=ResourceList({"cpu": 2_000_000}),
            shared_weight=ResourceList({"cpu": 2_000_000}),
        )
        for d in range(10)
        for t in range(49)
    )
    namespaces = Namespace.objects.bulk_create(
        Namespace(name=f"ns-{i}", weight=rng.randint(1, 4), default_queue=teams[i], quota_group=gteams[i])
        for i in range(len(teams))
    )
    podgroups = PodGroup.objects.bulk_create(
        PodGroup(
            cluster=cluster,
            namespace=namespaces[i % len(namespaces)],
            name=f"job-{i}",
            queue=teams[i % len(teams)],
            min_member=5,
        )
        for i in range(2000)
    )
    nodes = list(Node.objects.all())
    pods = []
    for i, pg in enumerate(podgroups):
        for k in range(5):
            running = i % 2 == 0
            pods.append(
                Pod(
                    cluster=cluster,
                    namespace=pg.namespace,
                    name=f"job-{i}-{k}",
                    podgroup=pg,
                    request=ResourceList({"cpu": 2_000, "memory": 4 * gib}),
                    quota_group=gteams[i % len(gteams)],
                    status="Running" if running else "Pending",
                    node=nodes[(i * 5 + k) % len(nodes)] if running else None,
                )
            )
    Pod.objects.bulk_create(pods, batch_size=5000)
    user = get_user_model().objects.create_superuser("bench", password="bench-password")
    from security.tokens import create_token

    return create_token(user, "bench")[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="requests on cached values")
    parser.add_argument("--changes", type=int, default=20, help="changes, each followed by two requests")
    args = parser.parse_args()
    recreate_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    token = seed(random.Random(7))
    setup_test_environment()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = {"changes": [{"op": "update", "kind": "queue", "name": "team-3-7", "spec": {"weight": 9}}]}
    client.post("/api/v1/whatif/", body, format="json")  # warm-up (imports, caches)

    def post(i: int) -> float:
        body["changes"][0]["spec"]["weight"] = 1 + i % 9
        start = time.perf_counter()
        response = client.post("/api/v1/whatif/", body, format="json")
        elapsed = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, response.content[:500]
        return elapsed

    cached = [post(i) for i in range(args.runs)]
    # a change of the cluster between requests (as every session makes, once a second): the next request pays
    # the values' refresh; then the same request again, served from the refreshed values
    first, again = [], []
    for i in range(args.changes):
        change_cluster(i)
        first.append(post(i))
        again.append(post(i))
    read, compute = split_refresh(args.changes)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("what-if through the API: 1000 nodes, 500 queues (3 levels), 500 quota groups, 2000 podgroups, 10000 pods")
    print(f"  values cached:             {summary(cached)}")
    print(f"  first request after a change: {summary(first)}")
    print(f"  the request after that:     {summary(again)}")
    print(f"  all {len(cached) + len(first) + len(again)} requests:            {summary(cached + first + again)}")
    print(
        f"  the refresh after a change (outside a request, medians): snapshot read {statistics.median(read):.1f} ms, "
        f"values computed {statistics.median(compute):.1f} ms"
    )
    print(f"  peak RSS {peak:.0f} MB")


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return (
        f"runs {len(ordered)}  median {statistics.median(ordered):.1f} ms  p95 {p95:.1f} ms  max {ordered[-1]:.1f} ms"
    )


def change_cluster(i: int) -> None:
    """One pod's priority changes: the cluster's revision moves, as with any write of its rows."""
    from scheduling.models import Pod

    pod = Pod.objects.order_by("id").only("id").first()
    assert pod is not None
    Pod.objects.filter(pk=pod.pk).update(priority=i % 7)


def split_refresh(rounds: int) -> tuple[list[float], list[float]]:
    """After each change, ``valuecache.current`` timed as a whole and its values' refresh alone (``_values``: the
    carry's update of the pods' aggregates and ``compute_values``)."""
    from planning import valuecache
    from scheduling.models import Cluster

    cluster = Cluster.objects.get(name="default")
    computed: list[float] = []
    original = valuecache._values

    def timed(*a: object, **kw: object) -> object:
        start = time.perf_counter()
        try:
            return original(*a, **kw)  # type: ignore[arg-type]
        finally:
            computed.append((time.perf_counter() - start) * 1000)

    reads, computes = [], []
    valuecache._values = timed  # type: ignore[assignment]
    try:
        for i in range(rounds):
            change_cluster(1000 + i)
            computed.clear()
            start = time.perf_counter()
            valuecache.current(cluster)
            whole = (time.perf_counter() - start) * 1000
            computes.append(sum(computed))
            reads.append(whole - sum(computed))
    finally:
        valuecache._values = original  # type: ignore[assignment]
    return reads, computes


if __name__ == "__main__":
    main()
