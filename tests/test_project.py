"""Project-level promises: migrations are complete, the OpenAPI schema is valid, docs and admin pages render,
the demo loads through the rules, and the admin enforces the same rules as the API."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_migrations_are_complete() -> None:
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


def test_openapi_schema_is_valid_and_lists_the_api(admin_api: Any) -> None:
    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", stdout=out)
    import json

    schema = json.loads(out.getvalue())
    for path in (
        "/api/v1/queues/",
        "/api/v1/queues/{name}/close/",
        "/api/v1/queues/tree/",
        "/api/v1/quota-groups/",
        "/api/v1/namespaces/",
        "/api/v1/podgroups/",
        "/api/v1/pods/",
        "/api/v1/nodes/",
        # the records and the node agent's endpoints (tests/scheduling/test_records_api.py): one validated build of
        # the schema serves both lists (it takes seconds)
        "/api/v1/sessions/",
        "/api/v1/sessions/{id}/",
        "/api/v1/sessions/{id}/decisions/",
        "/api/v1/samples/",
        "/api/v1/evictions/",
        "/api/v1/podgroups/{id}/history/",
        "/api/v1/podgroups/{id}/why/",
        "/api/v1/nodes/{name}/heartbeat/",
        "/api/v1/nodes/{name}/pods/",
        "/api/v1/pods/{id}/status/",
        "/api/v1/pods/{id}/gone/",
    ):
        assert path in schema["paths"], path


def test_swagger_ui_is_served_offline(admin_api: Any, client: Any, make_user: Any) -> None:
    client.force_login(make_user("reader"))  # the docs need a login (tests/api/test_safe_defaults.py)
    r = client.get("/api/docs/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "drf_spectacular_sidecar" in html
    # every script and stylesheet comes from this server (the CSRF token in the page is random text, so
    # the check reads the addresses, not the whole page)
    addresses = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
    assert addresses and all(not a.startswith(("http:", "https:", "//")) for a in addresses), addresses
    # the schema the page reads is served to a signed-in user too: tests/api/test_safe_defaults.py (one build of it
    # costs seconds of CPU; this module already builds and validates it once, above)


def test_demo_loads_through_the_rules_and_is_idempotent() -> None:
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Node, PodGroup

    call_command("load_demo", stdout=StringIO())
    assert Queue.objects.filter(parent__name="root").count() == 4  # default + 3 departments
    assert Queue.objects.filter(children__isnull=True).count() == 9  # 8 teams + default
    assert QuotaGroup.objects.filter(parent__name__in=["research", "engineering", "operations"]).count() == 8
    default = Node.objects.filter(cluster__name="default")
    assert default.count() == 24 and default.filter(allocatable__has_key="nvidia.com/gpu").count() == 8
    assert Namespace.objects.count() == 16 and PodGroup.objects.count() == 8
    # and the second cluster, with fairness over time on: 12 machines (4 with GPUs), no job until the generator's
    lab = Node.objects.filter(cluster__name="lab")
    assert lab.count() == 12 and lab.filter(allocatable__has_key="nvidia.com/gpu").count() == 4
    assert Node.objects.count() == 36
    call_command("load_demo", stdout=StringIO())
    assert Queue.objects.count() == 13
    with pytest.raises(CommandError, match="already loaded with 24 nodes; the large one needs an empty database"):
        call_command("load_demo", "--size", "large", stdout=StringIO())


def test_a_larger_demo_scales_every_quota_and_copies_the_jobs() -> None:
    """The sizes differ only in their numbers: a demo 3 times larger (``--size large`` is 200 times, on 5,000
    nodes) has 3 times every quota, the nodes asked for and each job copied under a numbered name."""
    from engine.resources import parse_resource_list
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.management.commands.load_demo import SIZES, Command, Size
    from scheduling.models import Node, Pod, PodGroup

    assert (SIZES["large"].nodes, SIZES["large"].jobs, SIZES["large"].pods) == (5000, 7200, 49500)
    size = Size(factor=3, cpu_nodes=5, gpu_nodes=4, copies=2)
    Command()._load(size)
    research = Queue.objects.get(name="research")
    assert research.deserved == parse_resource_list({"cpu": "1368", "memory": "10080Gi", "nvidia.com/gpu": "144"})
    assert QuotaGroup.objects.get(name="nlp").max == parse_resource_list(
        {"cpu": "600", "memory": "3936Gi", "nvidia.com/gpu": "48"}
    )
    assert Namespace.objects.get(name="nlp").hard["nvidia.com/gpu"] == 384_000
    assert Node.objects.count() == 9 and sum(bool(n.taints) for n in Node.objects.filter(name__startswith="gpu-")) == 4
    assert PodGroup.objects.count() == 16 and Pod.objects.count() == size.pods == 110
    sweep = PodGroup.objects.get(name="hparam-sweep-001")
    assert sweep.min_member == 16 and sweep.pods.count() == 16
    assert all(p.tolerations for p in sweep.pods.all())  # a GPU job tolerates the GPU machines' taint


def _per_gpu(request: dict[str, int]) -> tuple[int, int]:
    """The cores (milli) and memory (bytes) a GPU job of the workload generator asks per GPU."""
    gpus = request["nvidia.com/gpu"] // 1000
    return request["cpu"] // gpus, request["memory"] // gpus


@pytest.mark.parametrize("size_name", ["small", "large"])
def test_the_demos_quotas_hold_its_jobs_and_add_up_to_its_cluster(size_name: str) -> None:
    """Every team's deserved (its quota group's min) holds its largest job on every resource, and its GPUs' worth of
    the workload generator's GPU jobs (their cores and memory per GPU), the rest of its cores at the CPU machines'
    memory per core; its department's deserved is the sum of its teams'; the departments add up to the small demo's
    cluster on every resource, and to the large demo's quotas (200 times) within its larger cluster."""
    import random

    from engine.replay.workload import WorkloadSettings, draw_job
    from engine.resources import parse_resource_list
    from scheduling.demo_data import CPU_NODE, GPU_NODE, JOBS, ORG, SIZES
    from scheduling.management.commands.load_demo import _times

    size = SIZES[size_name]
    gpu_job = next(
        r for _ in range(50) if "nvidia.com/gpu" in (r := draw_job(random.Random(_), True, WorkloadSettings())[1])
    )
    cores_per_gpu, memory_per_gpu = _per_gpu(gpu_job)
    cpu_node, gpu_node = parse_resource_list(CPU_NODE), parse_resource_list(GPU_NODE)
    assert (cores_per_gpu, memory_per_gpu) == _per_gpu(dict(gpu_node))  # the generator asks the GPU machines' ratio
    memory_per_core = cpu_node["memory"] // (cpu_node["cpu"] // 1000)
    names = ("cpu", "memory", "nvidia.com/gpu")
    departments = dict.fromkeys(names, 0)
    for dept, spec in ORG.items():
        teams = dict.fromkeys(names, 0)
        for team, (deserved_text, *_) in spec["teams"].items():
            deserved = parse_resource_list(_times(deserved_text, size.factor))
            for name in names:
                teams[name] += deserved.get(name, 0)
            for owner, job, pods, request, _ in JOBS:
                need = {k: v * pods for k, v in parse_resource_list(request).items()}
                assert owner != team or all(v <= deserved.get(k, 0) for k, v in need.items()), (team, job, deserved)
            gpus = deserved.get("nvidia.com/gpu", 0) // 1000
            gpu_cores = cores_per_gpu * gpus
            assert deserved["cpu"] >= gpu_cores, (team, "cpu")
            other = (deserved["cpu"] - gpu_cores) // 1000 * memory_per_core
            assert deserved["memory"] >= memory_per_gpu * gpus + other, (team, "memory")
        assert teams == {n: parse_resource_list(_times(spec["deserved"], size.factor)).get(n, 0) for n in names}, dept
        for name in names:
            departments[name] += teams[name]
    machines = {n: cpu_node.get(n, 0) * size.cpu_nodes + gpu_node.get(n, 0) * size.gpu_nodes for n in names}
    small = SIZES["small"]
    scaled = {
        n: (cpu_node.get(n, 0) * small.cpu_nodes + gpu_node.get(n, 0) * small.gpu_nodes) * size.factor for n in names
    }
    assert departments == scaled and all(departments[n] <= machines[n] for n in names), (departments, machines)


def test_ensure_admin_prints_credentials_and_token(tmp_path: Path) -> None:
    # its own var folder: a test writing the checkout's var/admin-password sent the next `make run` to a login that
    # failed (the file then held the test database's password, not the one of the admin in var/fairway.sqlite3)
    with override_settings(VAR_DIR=tmp_path):
        out = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=out)
        password = (tmp_path / "admin-password").read_text()
        text = out.getvalue()
        assert f"username boss  password {password}\n" in text and "FAIRWAY_TOKEN=" in text
        again = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=again)
        assert f"password {password}\n" in again.getvalue()  # the same admin, the same password
        (tmp_path / "admin-password").write_text("written-by-someone-else")  # another database's, or changed since
        stale = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=stale)
        assert "written-by-someone-else" not in stale.getvalue()
        assert "does not hold it: `manage.py changepassword boss` sets a new one" in stale.getvalue()
        (tmp_path / "admin-password").unlink()
        gone = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=gone)
        assert "`manage.py changepassword boss` sets a new one" in gone.getvalue()


@pytest.mark.parametrize("model", ["queue", "quotagroup", "namespace"])
def test_admin_pages_render(client: Any, make_user: Any, model: str) -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("root-admin", password="pw")
    client.login(username="root-admin", password="pw")
    app = "quotas"
    assert client.get(f"/admin/{app}/{model}/").status_code == 200
    assert client.get(f"/admin/{app}/{model}/add/").status_code == 200
    for path in (
        "/admin/scheduling/node/",
        "/admin/scheduling/podgroup/",
        "/admin/scheduling/pod/",
        "/admin/scheduling/cluster/",
        "/admin/security/apitoken/",
        "/admin/axes/accessattempt/",
        "/admin/django_celery_beat/",
    ):
        assert client.get(path).status_code == 200, path


def test_admin_form_applies_the_api_rules(client: Any) -> None:
    from django.contrib.auth import get_user_model

    from quotas.models import Queue

    get_user_model().objects.create_superuser("root-admin", password="pw")
    client.login(username="root-admin", password="pw")
    root = Queue.objects.get(name="root")
    r = client.post(
        "/admin/quotas/queue/add/",
        {
            "name": "q1",
            "parent": root.pk,
            "weight": 1,
            "priority": 0,
            "reclaimable": "on",
            "state": "Open",
            "capability": '{"cpu": "1"}',
            "deserved": '{"cpu": "2"}',
            "guarantee": "{}",
        },
    )
    assert r.status_code == 200  # the form is shown again with the error
    assert "must be &lt;= capability" in r.content.decode() or "capability" in r.content.decode()
    assert not Queue.objects.filter(name="q1").exists()
    r = client.post(
        "/admin/quotas/queue/add/",
        {
            "name": "q1",
            "parent": root.pk,
            "weight": 1,
            "priority": 0,
            "reclaimable": "on",
            "state": "Open",
            "capability": '{"cpu": "4"}',
            "deserved": '{"cpu": "2"}',
            "guarantee": "{}",
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Queue.objects.get(name="q1").deserved == {"cpu": 2000}
    r = client.post(f"/admin/quotas/queue/{root.pk}/delete/", {"post": "yes"})
    assert Queue.objects.filter(name="root").exists()


def test_pages_need_login_and_show_the_team_subtree(client: Any, make_user: Any) -> None:
    assert client.get("/").status_code == 302
    call_command("load_demo", stdout=StringIO())
    assert client.login(username="nlp-lead", password="demo-nlp")
    html = client.get("/").content.decode()
    assert "nlp" in html and "vision" not in html


def test_docker_compose_file_runs_the_stack_with_the_same_variables() -> None:
    """postgres, redis, migrate (once), web (gunicorn), worker and beat, all app services with the same settings (the Kubernetes
    adapter's too, behind its own profile, with the name of its cluster besides); and, where a compose binary is
    installed, `docker compose config` accepts the file."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "replay-worker", "beat", "adapter"}
    assert services["migrate"]["environment"] == services["web"]["environment"]
    adapter = services["adapter"]
    assert adapter["profiles"] == ["kubernetes"] and "kube_adapter --cluster" in adapter["command"]
    assert "gunicorn" in services["web"]["command"]
    assert "worker" in services["worker"]["command"] and "beat" in services["beat"]["command"]
    # the replays' worker consumes their queue only, the sessions' worker never does (docs/replay.md)
    # (and the start estimates' queue: seconds of CPU a round, never on the sessions' worker either)
    assert "--queues replay,estimates " in services["replay-worker"]["command"]
    assert "--queues" not in services["worker"]["command"]
    assert services["replay-worker"]["environment"] == services["beat"]["environment"]
    envs = [services[s]["environment"] for s in ("web", "worker", "beat")]
    worker_only = {"FAIRWAY_WORKER_METRICS_PORT", "FAIRWAY_WORKER_METRICS_ADDRESS"}  # the worker's own endpoint
    assert worker_only <= set(envs[1])
    assert envs[0] == {k: v for k, v in envs[1].items() if k not in worker_only} == envs[2]
    assert {k: v for k, v in adapter["environment"].items() if k != "FAIRWAY_KUBE_CLUSTER"} == envs[0]
    documented = (root / ".env.example").read_text()
    for variable in adapter["environment"]:
        assert variable in documented, variable
    for binary in (["docker-compose"], ["docker", "compose"]):
        if shutil.which(binary[0]):
            probe = subprocess.run([*binary, "version"], capture_output=True, text=True)
            if probe.returncode == 0:
                done = subprocess.run(
                    [*binary, "-f", str(root / "docker-compose.yml"), "config", "-q"],
                    capture_output=True,
                    text=True,
                    cwd=root,
                    # it refuses to start without them
                    env={
                        **os.environ,
                        "SECRET_KEY": "set-for-the-check",
                        "FAIRWAY_SECRET_KEYS": "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=",
                    },
                )
                assert done.returncode == 0, done.stderr
                break


def test_the_env_example_lists_every_variable_the_settings_read() -> None:
    """The README says ``.env.example`` lists every variable: each one ``settings.py`` reads through ``env`` is there
    (four were missing before this test, two of them new)."""
    root = Path(__file__).resolve().parents[1]
    read = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z][A-Z0-9_]+)"', (root / "controlplane/settings.py").read_text()))
    assert len(read) > 60  # the pattern still finds them
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", (root / ".env.example").read_text(), re.MULTILINE))
    assert sorted(read - listed) == []


def test_ruff_is_clean() -> None:
    """The house style (pyproject's ruff rules) holds for the whole tree."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(root)], capture_output=True, text=True, cwd=root
    )
    assert done.returncode == 0, done.stdout[-3000:]
