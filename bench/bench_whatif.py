"""What-if through the API on a 1,000-node cluster with 500 queues (issue 3's target: p95 <= 200 ms).

Seeds a PostgreSQL database (``BENCH_DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/fairway_bench``,
recreated) with 1,000 nodes, a 3-level tree of 500 queues (10 departments x 49 teams + root/default), a quota tree
of the same shape, 2,000 podgroups and 10,000 pods (half running), then POSTs a weight change to
``/api/v1/whatif/`` N times through Django's test client with a token, and prints median / p95 / max and peak RSS.

    .venv/bin/python bench/bench_whatif.py [--runs 40]
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
    from rest_framework.authtoken.models import Token

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
    return Token.objects.create(user=user).key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
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
    times = []
    for i in range(args.runs):
        body["changes"][0]["spec"]["weight"] = 1 + i % 9
        start = time.perf_counter()
        response = client.post("/api/v1/whatif/", body, format="json")
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.content[:500]
    times.sort()
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("what-if through the API: 1000 nodes, 500 queues (3 levels), 500 quota groups, 2000 podgroups, 10000 pods")
    print(
        f"runs {len(times)}  median {statistics.median(times):.1f} ms  p95 {p95:.1f} ms  max {times[-1]:.1f} ms  "
        f"peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
