"""Benchmark: a hostile agent, a hostile tenant and a 20,000-level chain against everyone else (issue 25, "Done when":
other teams' sessions and pages see 0 exceptions and a p95 within 20 % of a run without the attack).

One PostgreSQL database (``--database-url``, default ``DATABASE_URL``; the bench drops and re-creates a database of its
own, ``<name>_attack``) holds two clusters of the demo organisation (``manage.py load_demo``): ``default``, where the
attacks happen, and ``calm``, 24 nodes of the same shapes, where the victim team (``vision``) runs its jobs. Measured,
as the victim sees it (Django test client, in process):

* **sessions** of ``calm`` (``scheduling.tasks.run_session``), each after the victim submitted 5 new jobs of 2 pods;
* the victim's **team page** (``/team/vision/``) and the **tree API** (``/api/v1/queues/tree/``) as ``vision-lead``, and
  **/metrics** as an admin.

A **round** is a baseline run (no attack), then the attack is set up and the same measurements run again with an
attack action between every two measured steps; then the attack's rows are removed. The attack, on ``default``:

* **a hostile node agent** (a user of the ``node-agents`` group bound to the pool ``evil``): the cluster filled to
  ``FAIRWAY_MAX_NODES`` (``--nodes``, bulk-inserted; with fewer, the cap is lowered to the nodes there, so that a
  registration past it is refused either way), and heartbeats whose
  allocatable is ``4611686018427387903m`` cpu (the node is set aside);
* **a hostile tenant** (``nlp-lead``): pending pods up to ``FAIRWAY_MAX_PENDING_PODS_PER_TEAM`` in podgroups up to
  ``FAIRWAY_MAX_PENDING_PODGROUPS_PER_TEAM`` (bulk-inserted), then more pods through the API (429), and a PATCH of a
  pod's ``priority``/``preemptible`` (403);
* **a 20,000-level queue chain** sent to ``POST /api/v1/simulate/`` by the tenant (400 at the depth limit), and a tree
  at the depth limits (5 queue levels, 10 quota group levels; 200);
* a session of ``default`` every ``--attacked-session-every`` steps.

The attack's steps run between the victim's, in the same process, not beside them: what is measured is what the
attack's *rows and requests* do to others (a shared lock, a query over every cluster, a cache the attack empties), not
the two shared cores a parallel attacker would also take (which any load takes). Exceptions: any exception or 5xx of
a measured step (and of an attack step: each must be its 4xx or 2xx) counts.

Run: ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/fairway .venv/bin/python bench/bench_attack.py [--quick]``
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HUGE_CPU = "4611686018427387903m"
VICTIM, HOSTILE = "vision", "nlp"
TARGET_RATIO = 1.2
WARM_UP = 3  # untimed steps before each run


def own_database(url: str, suffix: str = "attack") -> str:
    """The bench's own database next to ``url``'s (``<name>_<suffix>``), dropped and created empty."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/") or "fairway"
    mine = f"{name}_{suffix}"
    admin_url = urlunsplit(parts._replace(path="/postgres", scheme="postgresql"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{mine}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{mine}"')
    return urlunsplit(parts._replace(path=f"/{mine}"))


def setup_django(database_url: str, var_dir: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["FAIRWAY_VAR_DIR"] = var_dir
    os.environ["STATICFILES_STORAGE"] = "django.contrib.staticfiles.storage.StaticFilesStorage"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()
    import logging

    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    settings.AXES_ENABLED = False  # the bench signs its users in with force_login
    for name in ("fairway.security", "scheduling", "django.request", "planning", "quotas"):
        logging.getLogger(name).setLevel(logging.ERROR)
    call_command("migrate", verbosity=0)


# -- the world ---------------------------------------------------------------------------------------------------


@dataclass
class World:
    calm: Any
    attacked: Any
    victim: Any  # a Client signed in as vision-lead
    admin: Any
    tenant: Any  # an APIClient with nlp-lead's token
    agent: Any  # an APIClient with the hostile agent's token
    chain_yaml: str
    deep_yaml: str


def build_world() -> World:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.test import Client
    from rest_framework.test import APIClient

    from scheduling import tasks
    from scheduling.models import Cluster, Node, NodeAgentBinding
    from security.tokens import create_token

    call_command("load_demo", stdout=StringIO())
    attacked = Cluster.objects.get(name="default")
    calm = Cluster.objects.create(name="calm", scheduler_policy=attacked.scheduler_policy)
    Node.objects.bulk_create(
        [
            Node(
                cluster=calm,
                name=n.name,
                allocatable=n.allocatable,
                labels=n.labels,
                taints=n.taints,
                last_heartbeat=n.last_heartbeat,
            )
            for n in Node.objects.filter(cluster=attacked)
        ]
    )
    User = get_user_model()
    boss = User.objects.create_user("bench-admin", password="pw-bench-admin", is_staff=True, is_superuser=True)
    evil = User.objects.create_user("evil-agent", password="pw-evil-agent")
    evil.groups.add(Group.objects.get_or_create(name="node-agents")[0])
    NodeAgentBinding.objects.create(user=evil, cluster=attacked, pool="evil")

    def signed_in(user: Any) -> Client:
        client = Client()
        client.force_login(user)
        return client

    def api(user: Any) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(user, 'bench')[1]}")
        return client

    for cluster in (calm, attacked):
        tasks.run_session(cluster.pk)
    return World(
        calm=calm,
        attacked=attacked,
        victim=signed_in(User.objects.get(username=f"{VICTIM}-lead")),
        admin=signed_in(boss),
        tenant=api(User.objects.get(username=f"{HOSTILE}-lead")),
        agent=api(evil),
        chain_yaml=queue_chain(20_000),
        deep_yaml=deep_trees(),
    )


def queue_chain(levels: int) -> str:
    docs = []
    for i in range(levels):
        parent = "root" if i == 0 else f"q{i - 1:05d}"
        docs.append(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
            f"metadata: {{name: q{i:05d}}}\nspec: {{parent: {parent}, weight: 1}}\n"
        )
    return "---\n".join(docs)


def deep_trees() -> str:
    """A queue chain at the queue depth limit and a quota chain at the quota group depth limit (both accepted)."""
    from django.conf import settings

    docs = []
    for i in range(settings.FAIRWAY["MAX_QUEUE_DEPTH"]):
        parent = "root" if i == 0 else f"deep-q{i - 1}"
        docs.append(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
            f"metadata: {{name: deep-q{i}}}\nspec: {{parent: {parent}, weight: 1}}\n"
        )
    depth = settings.FAIRWAY["MAX_QUOTA_GROUP_DEPTH"]
    for i in range(depth):
        labels = {"quota.scheduling.koordinator.sh/is-parent": "true" if i < depth - 1 else "false"}
        if i:
            labels["quota.scheduling.koordinator.sh/parent"] = f"deep-g{i - 1}"
        label_text = ", ".join(f'"{k}": "{v}"' for k, v in labels.items())
        docs.append(
            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: ElasticQuota\n"
            f"metadata: {{name: deep-g{i}, namespace: default, labels: {{{label_text}}}}}\n"
            "spec: {min: {cpu: '1'}, max: {cpu: '2'}}\n"
        )
    return "---\n".join(docs)


def reset_victim(world: World) -> None:
    """The victim's jobs on ``calm`` gone, so that every run starts from the same cluster."""
    from scheduling.models import Pod, PodGroup

    Pod.objects.filter(cluster=world.calm).delete()
    PodGroup.objects.filter(cluster=world.calm).delete()


_job_numbers = itertools.count()


def submit_victim_jobs(world: World, jobs: int = 5, pods: int = 2) -> None:
    from engine.resources import ResourceList, parse_resource_list
    from quotas.models import Namespace, Queue
    from scheduling.models import Pod, PodGroup

    ns, queue = Namespace.objects.get(name=VICTIM), Queue.objects.get(name=VICTIM)
    request = parse_resource_list({"cpu": "2", "memory": "4Gi"})
    for _ in range(jobs):
        number = next(_job_numbers)
        pg = PodGroup.objects.create(
            cluster=world.calm,
            namespace=ns,
            name=f"v-{number}",
            queue=queue,
            min_member=pods,
            min_resources=ResourceList({k: v * pods for k, v in request.items()}),
        )
        Pod.objects.bulk_create(
            Pod(
                cluster=world.calm,
                namespace=ns,
                name=f"v-{number}-{k}",
                podgroup=pg,
                request=request,
                quota_group=ns.quota_group,
                duration_seconds=3600,
            )
            for k in range(pods)
        )


def set_up_attack(world: World, nodes: int) -> dict[str, int]:
    """The attack's rows: ``default`` at the node cap (the hostile agent's pool) and the tenant's pending pods and
    podgroups at its caps."""
    from django.conf import settings
    from django.utils import timezone

    from engine.resources import ResourceList, parse_resource_list
    from quotas.models import Namespace, Queue
    from scheduling.models import Node, Pod, PodGroup

    now = timezone.now()
    there = Node.objects.filter(cluster=world.attacked).count()
    if there + nodes < settings.FAIRWAY_LIMITS.max_nodes:  # a smaller run: the cap comes down to the nodes made
        settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, max_nodes=there + nodes)
    room = settings.FAIRWAY_LIMITS.max_nodes - there
    cpu = parse_resource_list({"cpu": "8", "memory": "32Gi"})
    Node.objects.bulk_create(
        (
            Node(cluster=world.attacked, name=f"evil-{i:05d}", pool="evil", allocatable=cpu, last_heartbeat=now)
            for i in range(room)
        ),
        batch_size=2000,
    )
    ns, queue = Namespace.objects.get(name=HOSTILE), Queue.objects.get(name=HOSTILE)
    groups_cap = settings.FAIRWAY["MAX_PENDING_PODGROUPS_PER_TEAM"]
    pods_cap = settings.FAIRWAY["MAX_PENDING_PODS_PER_TEAM"]
    request = parse_resource_list({"cpu": "64"})  # more than a node has: they wait
    per_group = max(1, -(-pods_cap // groups_cap))
    groups = PodGroup.objects.bulk_create(
        (
            PodGroup(
                cluster=world.attacked,
                namespace=ns,
                name=f"flood-{i:05d}",
                queue=queue,
                min_member=1,
                min_resources=ResourceList(request),
            )
            for i in range(groups_cap)
        ),
        batch_size=2000,
    )
    pods = (
        Pod(
            cluster=world.attacked,
            namespace=ns,
            name=f"flood-{i:06d}",
            podgroup=groups[i // per_group],
            request=request,
            quota_group=ns.quota_group,
        )
        for i in range(pods_cap)
    )
    Pod.objects.bulk_create(pods, batch_size=5000)
    return {"nodes": room, "pods": pods_cap, "podgroups": groups_cap}


def remove_attack(world: World) -> None:
    from scheduling.models import Node, Pod, PodGroup

    Pod.objects.filter(cluster=world.attacked, name__startswith="flood-").delete()
    PodGroup.objects.filter(cluster=world.attacked, name__startswith="flood-").delete()
    Node.objects.filter(cluster=world.attacked, pool="evil").delete()


def attack_steps(world: World, every_session: int) -> Iterator[tuple[str, Callable[[], Any], tuple[int, ...]]]:
    """The attack's actions in rotation: (name, action, the statuses it must answer)."""
    from scheduling import tasks
    from scheduling.models import Pod

    flooded = Pod.objects.filter(cluster=world.attacked, name__startswith="flood-").order_by("pk")
    target_pod = flooded.values_list("pk", flat=True).first()
    steps: list[tuple[str, Callable[[], Any], tuple[int, ...]]] = [
        (
            "agent: heartbeat of an absurd node",
            lambda: world.agent.post(
                "/api/v1/nodes/evil-00000/heartbeat/?cluster=default", {"allocatable": {"cpu": HUGE_CPU}}, format="json"
            ),
            (200,),
        ),
        (
            "agent: a node past the cap",
            lambda: world.agent.post(
                "/api/v1/nodes/",
                {"name": "evil-extra", "cluster": "default", "pool": "evil", "allocatable": {"cpu": "8"}},
                format="json",
            ),
            (400,),
        ),
        (
            "tenant: one more pending pod",
            lambda: world.tenant.post(
                "/api/v1/pods/",
                {
                    "cluster": "default",
                    "namespace": HOSTILE,
                    "name": f"more-{time.monotonic_ns()}",
                    "request": {"cpu": "1"},
                },
                format="json",
            ),
            (429,),
        ),
        (
            "tenant: make a pod irrevocable",
            lambda: world.tenant.patch(
                f"/api/v1/pods/{target_pod}/", {"priority": 2147483647, "preemptible": False}, format="json"
            ),
            (400, 403, 404),
        ),
        (
            "tenant: the 20,000-level chain",
            lambda: world.tenant.post("/api/v1/simulate/", {"manifests": world.chain_yaml}, format="json"),
            (400,),
        ),
        (
            "tenant: trees at the depth limits",
            lambda: world.tenant.post("/api/v1/simulate/", {"manifests": world.deep_yaml}, format="json"),
            (200,),
        ),
    ]
    n = 0
    while True:
        for step in steps:
            n += 1
            if every_session and n % every_session == 0:
                yield ("a session of the attacked cluster", lambda: tasks.run_session(world.attacked.pk), ())
            yield step


# -- measuring ---------------------------------------------------------------------------------------------------


@dataclass
class Run:
    times: dict[str, list[float]] = field(default_factory=dict)  # ms
    exceptions: list[str] = field(default_factory=list)
    attack_answers: dict[str, dict[int, int]] = field(default_factory=dict)

    def add(self, what: str, ms: float) -> None:
        self.times.setdefault(what, []).append(ms)


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(world: World, n: int, attack: Iterator[tuple[str, Callable[[], Any], tuple[int, ...]]] | None) -> Run:
    from scheduling import tasks

    run = Run()
    pages = (
        ("team page", lambda: world.victim.get(f"/team/{VICTIM}/", {"cluster": "calm"})),
        ("tree API", lambda: world.victim.get("/api/v1/queues/tree/", {"cluster": "calm"})),
        ("/metrics", lambda: world.admin.get("/metrics")),
    )
    reset_victim(world)
    for _ in range(WARM_UP):  # the worker's copy of the cluster and the value cache warm, as in a running server
        submit_victim_jobs(world)
        tasks.run_session(world.calm.pk)
        for _what, action in pages:
            action()

    def between() -> None:
        if attack is None:
            return
        name, action, expected = next(attack)
        try:
            answer = action()
        except Exception:
            run.exceptions.append(f"attack {name}: {traceback.format_exc(limit=3)}")
            return
        status = getattr(answer, "status_code", None)
        if status is not None:
            run.attack_answers.setdefault(name, {}).setdefault(status, 0)
            run.attack_answers[name][status] += 1
            if status >= 500 or (expected and status not in expected):
                run.exceptions.append(f"attack {name}: {status} {answer.content[:300]!r}")
        elif answer in ("failed",):
            run.exceptions.append(f"attack {name}: {answer}")

    def timed(what: str, action: Callable[[], Any]) -> None:
        start = time.perf_counter()
        try:
            answer = action()
        except Exception:
            run.exceptions.append(f"{what}: {traceback.format_exc(limit=3)}")
            return
        run.add(what, (time.perf_counter() - start) * 1000)
        status = getattr(answer, "status_code", None)
        if (status is not None and status >= 400) or answer == "failed":
            run.exceptions.append(f"{what}: {status or answer}")

    for _ in range(n):
        submit_victim_jobs(world)
        between()
        timed("session", lambda: tasks.run_session(world.calm.pk))
        for what, action in pages:
            between()
            timed(what, action)
    return run


def table(rounds: list[tuple[Run, Run]], out: Any = sys.stdout) -> float:
    kinds = ["session", "team page", "tree API", "/metrics"]
    worst = 0.0
    print(f"{'':>12} | {'baseline p50':>12} {'p95':>8} | {'attack p50':>10} {'p95':>8} | {'p95 ratio':>9}", file=out)
    for i, (base, hit) in enumerate(rounds, 1):
        for what in kinds:
            b, a = base.times.get(what, [0.0]), hit.times.get(what, [0.0])
            ratio = p(a, 0.95) / p(b, 0.95) if p(b, 0.95) else float("inf")
            worst = max(worst, ratio)
            print(
                f"{what:>12} | {p(b, 0.5):10.1f}ms {p(b, 0.95):6.1f}ms | {p(a, 0.5):8.1f}ms {p(a, 0.95):6.1f}ms | "
                f"{ratio:9.2f}",
                file=out,
            )
        print(f"round {i}: exceptions baseline {len(base.exceptions)}, attack {len(hit.exceptions)}", file=out)
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("-n", type=int, default=30, help="sessions and requests of each kind per run (30)")
    parser.add_argument("--rounds", type=int, default=2, help="baseline + attack rounds (2)")
    parser.add_argument("--nodes", type=int, default=20_000, help="hostile nodes, up to FAIRWAY_MAX_NODES")
    parser.add_argument("--attacked-session-every", type=int, default=12, help="attack steps per attacked session")
    parser.add_argument("--quick", action="store_true", help="-n 8, --rounds 1, --nodes 2000")
    args = parser.parse_args()
    if args.quick:
        args.n, args.rounds, args.nodes = 8, 1, 2000
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        print("bench_attack needs PostgreSQL: --database-url postgres://... (or DATABASE_URL)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django(own_database(args.database_url), var_dir)
        started = time.perf_counter()
        world = build_world()
        print(f"world built in {time.perf_counter() - started:.1f} s", flush=True)
        rounds: list[tuple[Run, Run]] = []
        for i in range(args.rounds):
            base = measure(world, args.n, None)
            made = set_up_attack(world, args.nodes)
            print(f"round {i + 1}: attack rows {made}", flush=True)
            hit = measure(world, args.n, attack_steps(world, args.attacked_session_every))
            remove_attack(world)
            rounds.append((base, hit))
            for name, answers in sorted(hit.attack_answers.items()):
                print(f"  {name}: {dict(sorted(answers.items()))}")
        worst = table(rounds)
        errors = [e for base, hit in rounds for e in (*base.exceptions, *hit.exceptions)]
        for error in errors[:10]:
            print("EXCEPTION", error, file=sys.stderr)
        print(f"worst p95 ratio {worst:.2f} (target <= {TARGET_RATIO}); exceptions {len(errors)} (target 0)")
        return 0 if not errors and worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
