"""``fairway job list|view|why`` against a live server, after a real scheduling session, and ``podgroups/{id}/why/``."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import requests
from django.utils import timezone

from controlplane.cli import job as cli_job
from tests.cli.conftest import Run


@pytest.fixture
def jobs(world: None) -> dict[str, Any]:
    """nlp capped at 16 cores; nlp/big asks 20 (two 10-core pods), nlp/small one core, vision/train one core; one real
    session admits and places what fits; then one of big's pods is recorded as evicted for vision/train."""
    from engine.resources import ResourceList
    from quotas import services
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling import tasks
    from scheduling.models import Eviction, Pod, PodGroup
    from scheduling.serializers import default_cluster

    cluster = default_cluster()
    services.save_queue(Queue.objects.get(name="nlp"), {"capability": ResourceList.parse({"cpu": "16"})})

    def job(ns: str, name: str, pods: int, cpu: str) -> PodGroup:
        namespace = Namespace.objects.get(name=ns)
        request = ResourceList.parse({"cpu": cpu})
        pg = PodGroup.objects.create(
            cluster=cluster,
            namespace=namespace,
            name=name,
            queue=namespace.default_queue,
            min_member=pods,
            min_resources=ResourceList.total([request] * pods),
        )
        for i in range(pods):
            Pod.objects.create(
                cluster=cluster,
                namespace=namespace,
                name=f"{name}-{i}",
                podgroup=pg,
                request=request,
                quota_group=QuotaGroup.objects.get(name=namespace.quota_group.name),
            )
        return pg

    big = job("nlp", "big", 2, "10")
    job("nlp", "small", 1, "1")
    job("vision", "train", 1, "1")
    assert tasks.run_session(cluster.pk) == "ran"
    Eviction.objects.create(
        cluster=cluster,
        pod=big.pods.get(name="big-0"),
        pod_uid="nlp/big-0",
        namespace="nlp",
        node="cpu-01",
        action="reclaim",
        reason="Reclaimed",
        message="queue vision deserved more",
        preemptor="vision/train-0",
        created=timezone.now() - timedelta(minutes=1),
    )
    Eviction.objects.create(
        cluster=cluster,
        pod=big.pods.get(name="big-1"),
        pod_uid="nlp/big-1",
        namespace="nlp",
        node="cpu-02",
        action="recycle",
        reason="Recycled",
        message="quota group nlp uses 21 cpu, above its runtime 16",
        created=timezone.now() - timedelta(minutes=2),
    )
    return {"big": big.pk}


def test_job_list_filters(cli: Run, jobs: dict[str, Any]) -> None:
    code, out, err = cli("job", "list")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == ["Job", "Queue", "Phase", "Min", "Reason", "Created"]
    assert {r.split()[0] for r in rows} == {"nlp/big", "nlp/small", "vision/train"}
    assert {r.split()[0] for r in cli("job", "list", "--queue", "vision")[1].splitlines()[1:]} == {"vision/train"}
    assert {r.split()[0] for r in cli("job", "list", "--namespace", "nlp")[1].splitlines()[1:]} == {
        "nlp/big",
        "nlp/small",
    }
    by_group = json.loads(cli("job", "list", "--quota-group", "vision", "-o", "json")[1])
    assert [pg["name"] for pg in by_group] == ["train"]
    running = json.loads(cli("-o", "json", "job", "list", "--phase", "Running")[1])
    assert {pg["name"] for pg in running} == {"small", "train"}
    assert cli("job", "list", "--phase", "Waiting")[0] == 2
    assert cli("job", "list", "--queue", "ghost") == (0, "No jobs found\n", "")


def test_job_view_shows_pods_and_evictions(cli: Run, jobs: dict[str, Any]) -> None:
    code, out, err = cli("job", "view", "nlp/big")
    assert code == 0, err
    assert "Name:          nlp/big" in out and "Phase:         Pending" in out
    assert "Min resources: cpu=20" in out
    pods = [line.split() for line in out.splitlines() if line.startswith("big-")]
    assert [p[:2] for p in pods] == [["big-0", "Pending"], ["big-1", "Pending"]]
    assert "Evictions:" in out
    eviction = next(line for line in out.splitlines() if "nlp/big-0" in line)
    assert "reclaim" in eviction and "vision/train (queue vision)" in eviction
    code, out, _ = cli("job", "get", "nlp/small", "-o", "json")
    data = json.loads(out)
    assert data["job"]["phase"] == "Running" and [p["status"] for p in data["pods"]] == ["Bound"]
    assert cli("job", "view", "nlp/ghost") == (1, "", 'error: job "nlp/ghost" not found\n')
    assert cli("job", "view", "big")[0] == 2  # NAMESPACE/NAME


def test_job_why_gives_the_reason_numbers_and_blocking_node(cli: Run, jobs: dict[str, Any]) -> None:
    code, out, err = cli("job", "why", "nlp/big")
    assert code == 0, err
    assert "Phase:  Pending since " in out and "Pods:   2 Pending" in out
    assert "queue nlp realCapability: insufficient cpu, requested 20, available 16" in out, out
    assert "Blocked by queue nlp (realCapability)" in out
    assert "realCapability: cpu=16" in out  # the blocking node's values now, for the resource it lacks
    path = out.split("Queue path:")[1].splitlines()
    assert path[1].strip().startswith("root")
    assert "research" in path[2] and "nlp" in path[3] and path[3].endswith("<- blocks this job")
    assert "capability=cpu=16" in path[3]
    assert "Quota group path:" in out and "Namespace: nlp (weight 1)" in out
    assert "reclaim by vision/train (queue vision)" in out
    assert "nlp/big-1  recycle: quota group nlp uses 21 cpu" in out  # nobody took it: no "by -"

    code, out, _ = cli("job", "why", "nlp/small")
    assert code == 0 and "The job runs" in out and "<- blocks" not in out

    why = json.loads(cli("job", "why", "nlp/big", "-o", "json")[1])["why"]
    assert why["blocking_node"] == {"kind": "queue", "name": "nlp"}
    assert [n["name"] for n in why["queue_path"]] == ["root", "research", "nlp"]
    assert [n["blocking"] for n in why["queue_path"]] == [False, False, True]


def test_job_why_says_when_the_job_will_start(
    cli: Run, jobs: dict[str, Any], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nlp/big (20 cores) can never start under nlp's capability of 16: the estimate says why, in the engine's words
    code, out, err = cli("job", "why", "nlp/big")
    assert code == 0, err  # no round yet: the estimates worker is asked (none runs here), the line says so
    assert "When will it start? Estimating when it will start\u2026 (ask again in a few seconds, or wait" in out, out
    # --wait asks again while the estimate is pending: its first read asks the worker anew (none runs here) and the
    # reads after the worker's wait compute the estimate themselves
    from django.core.cache import cache

    from planning import estimates
    from scheduling.models import PodGroup

    cache.delete(estimates._asked_key(PodGroup.objects.get(pk=jobs["big"]).cluster_id))
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_WORKER_WAIT_SECONDS": 1.0}
    monkeypatch.setattr(cli_job, "ESTIMATE_POLL_SECONDS", 0.2)
    reads: list[str] = []
    why_of = cli_job.Client.call

    def counted(self: Any, method: str, path: str, **kwargs: Any) -> Any:
        reads.extend([path] if path.endswith("/why/") else [])
        return why_of(self, method, path, **kwargs)

    monkeypatch.setattr(cli_job.Client, "call", counted)
    code, out, err = cli("job", "why", "nlp/big", "--wait", "60")
    assert code == 0, err
    assert "When will it start? It cannot start as the cluster and its quotas are: " in out, out
    assert len(reads) >= 2  # pending first, then asked again
    code, _, err = cli("job", "why", "nlp/big", "--wait", "-1")
    assert code == 2 and "--wait: expected seconds, 0 or more, got -1" in err
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_WORKER_WAIT_SECONDS": 0.0}  # no wait: computed at once
    code, out, err = cli("job", "why", "nlp/big")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("When will it start? "))
    assert line.startswith("When will it start? It cannot start as the cluster and its quotas are: "), line
    assert "queue nlp realCapability: insufficient cpu, requested 20, available 16" in line
    why = json.loads(cli("job", "why", "nlp/big", "-o", "json")[1])["why"]
    assert why["start_estimate"]["state"] == "never"
    code, out, _ = cli("job", "why", "nlp/small")  # it runs: no estimate
    assert code == 0 and "When will it start?" not in out


def test_job_why_says_where_the_job_stands_in_its_queue_and_local_queue(cli: Run, jobs: dict[str, Any]) -> None:
    """As Kueue's visibility API gives a pending workload's positions: among the queue's waiting jobs in the order
    the next session serves them, and among its LocalQueue's."""
    from scheduling.models import PodGroup

    big = PodGroup.objects.get(name="big")
    for i, local_queue in enumerate(("lq", "", "lq")):  # later than big, in this order
        PodGroup.objects.create(cluster=big.cluster, namespace=big.namespace, name=f"later-{i}", queue=big.queue,
                                min_member=1, min_resources=big.min_resources, local_queue=local_queue or None,
                                created=big.created + timedelta(seconds=i + 1))  # fmt: skip
    why = json.loads(cli("job", "why", "nlp/later-2", "-o", "json")[1])["why"]
    assert why["queue_position"] == {"position": 4, "ahead": 3, "waiting": 4, "local_queue": "nlp/lq",
                                     "local_queue_position": 2}, why["queue_position"]  # fmt: skip
    code, out, err = cli("job", "why", "nlp/big")
    assert code == 0, err
    assert "Place in queue nlp: 1 of 4 waiting (0 jobs ahead)\n" in out, out
    code, out, _ = cli("job", "why", "nlp/later-0")
    assert "Place in queue nlp: 2 of 4 waiting (1 job ahead); 1 in LocalQueue nlp/lq" in out, out
    assert json.loads(cli("job", "why", "nlp/small", "-o", "json")[1])["why"]["queue_position"] is None  # it runs


def test_why_endpoint_is_permissioned_like_podgroups(cli: Run, jobs: dict[str, Any], live_server: Any) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from security.tokens import create_token

    def get(username: str) -> requests.Response:
        token = create_token(get_user_model().objects.get(username=username), "test")[1]
        return requests.get(
            f"{live_server.url}/api/v1/podgroups/{jobs['big']}/why/",
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )

    lead = get("nlp-lead")
    assert lead.status_code == 200
    path = lead.json()["queue_path"]
    assert path[0] == {"kind": "queue", "name": "root", "blocking": False, "hidden": True}  # above the team
    assert path[-1]["name"] == "nlp" and path[-1]["capability"] == {"cpu": "16"}
    get_user_model().objects.create_user("vision-lead").groups.add(Group.objects.get(name="vision"))
    assert get("vision-lead").status_code == 404  # another team's job
    code, _, err = cli(
        "job", "why", "nlp/big", token=create_token(get_user_model().objects.get(username="nlp-lead"), "test")[1]
    )
    assert code == 0, err


def _cli_path(out: str) -> list[tuple[str, list[tuple[str, bool]]]]:
    """The governing path ``fairway job why`` prints: (section, [(node, blocking)]), top down."""
    sections: list[tuple[str, list[tuple[str, bool]]]] = [("Queue", [])]
    for line in out.split("\nQueue path:", 1)[1].split("\nLatest evictions", 1)[0].splitlines():
        text = line.strip().removeprefix("└── ")
        blocking = text.endswith("<- blocks this job")
        if text == "Quota group path:":
            sections.append(("Quota group", []))
        elif text.startswith(("Namespace: ", "Cluster: ")):
            title, _, rest = text.partition(": ")
            sections.append((title, [(rest.split()[0], blocking)]))
        elif text:
            sections[-1][1].append((text.split()[0], blocking))
    return sections


def test_the_api_the_page_and_the_cli_give_one_governing_path(cli: Run, jobs: dict[str, Any], live_server: Any) -> None:
    """``planning.why.governing_path`` is the one builder: for a team lead (root above the team hidden) the API's
    ``governing_path``, the job page's "Governed by" and ``fairway job why`` name the same nodes in the same order,
    the same one blocking; its quota group comes from the namespace while the job has no pod in one."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from scheduling.models import PodGroup
    from security.tokens import create_token

    big = PodGroup.objects.get(pk=jobs["big"])
    big.pods.update(quota_group=None)  # the path still shows the namespace's quota group, as the page always did
    lead = get_user_model().objects.get(username="nlp-lead")
    token = create_token(lead, "test")[1]
    api = requests.get(
        f"{live_server.url}/api/v1/podgroups/{big.pk}/why/", headers={"Authorization": f"Token {token}"}, timeout=30
    ).json()
    from_api = [
        (s["title"], [(n["name"], n["blocking"], n["hidden"]) for n in s["nodes"]]) for s in api["governing_path"]
    ]

    client = Client()
    client.force_login(lead)
    page = client.get("/jobs/nlp/big/")
    assert page.status_code == 200
    from_page = [(s["title"], [(n.name, n.blocking, n.hidden) for n in s["nodes"]]) for s in page.context["path"]]

    code, out, err = cli("job", "why", "nlp/big", token=token)
    assert code == 0, err
    from_cli = _cli_path(out)

    assert from_api == from_page
    assert [(title, [(name, blocking) for name, blocking, _ in nodes]) for title, nodes in from_api] == from_cli
    assert from_api[0] == ("Queue", [("root", False, True), ("research", False, True), ("nlp", True, False)])
    assert [title for title, _ in from_api] == ["Queue", "Quota group", "Namespace"]
    assert api["quota_paths"] and api["quota_paths"][0][-1]["name"] == "nlp"


def test_a_job_the_cluster_holds_ends_its_path_with_the_cluster(cli: Run, jobs: dict[str, Any]) -> None:
    """Idle resources or node predicates hold the job: the page, the API and the CLI end the path with the cluster,
    marked blocking, and no tree node is."""
    from scheduling.models import PodGroup

    held = {"kind": "cluster", "name": "nodes", "resource": "cpu", "requested": 20000, "available": 8000}
    PodGroup.objects.filter(pk=jobs["big"]).update(blocker={**held, "limit": "idle"})
    code, out, err = cli("job", "why", "nlp/big")
    assert code == 0, err
    path = _cli_path(out)
    assert path[-1] == ("Cluster", [("default", True)])
    assert [blocking for _, nodes in path[:-1] for _, blocking in nodes] == [False] * sum(len(n) for _, n in path[:-1])
    why = json.loads(cli("job", "why", "nlp/big", "-o", "json")[1])["why"]
    assert why["blocking_node"] is None and why["governing_path"][-1]["title"] == "Cluster"
