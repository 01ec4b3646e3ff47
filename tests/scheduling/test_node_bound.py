"""What one node may have (``FAIRWAY_MAX_NODE_AMOUNT``) and how many nodes a cluster may hold (``FAIRWAY_MAX_NODES``):
chosen together so that no cluster's total reaches 2**62 base units (issue 25, item 1).

Every entry refuses a node above the bound with a 400 naming the field (API register and edit, the admin's form,
what-if); a heartbeat or a Node the Kubernetes adapter mirrors sets the node aside instead (it offers nothing, with the
reason on its page and in the API), and the cluster's sessions, pages and ``/metrics`` go on."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engine.resources import MAX_AMOUNT
from scheduling import sessions
from scheduling.agent import offer
from scheduling.models import Node, NodeAgentBinding, SchedulingSession
from tests.conftest import error_attrs
from tests.scheduling.conftest import World, rl

pytestmark = pytest.mark.django_db

HUGE = "4611686018427387903m"  # the probe: 2**62 - 1 millicores, below MAX_AMOUNT on its own


@pytest.fixture
def clients(world: World, api: Any, make_user: Any) -> dict[str, Any]:
    team = Group.objects.create(name="team-a")
    from quotas.models import Queue

    Queue.objects.get(name="team-a").teams.add(team)
    kubelet = make_user("kubelet", groups=("node-agents",))
    for name in (*world.nodes, "gpu-01"):
        NodeAgentBinding.objects.create(user=kubelet, cluster=world.cluster, node=name)
    return {"agent": api(kubelet), "admin": api(make_user("boss", staff=True)), "member": api(make_user("alice"))}


def _everything_answers(world: World, admin: Any) -> None:
    """A session, the recycling pass, the pages and /metrics of the cluster (``admin``: a signed-in Django test client):
    no exception, no 5xx."""
    ran = sessions.run_scheduling_session(world.cluster)
    assert ran.status == "ok", ran.error
    sessions.run_recycle_pass(world.cluster)
    assert not SchedulingSession.objects.filter(cluster=world.cluster).exclude(status="ok").exists()
    for url in (
        f"/?cluster={world.cluster.name}",
        "/trees/queues/",
        "/trees/quotas/",
        "/nodes/",
        "/nodes/n1/",
        "/api/v1/queues/tree/",
        "/api/v1/quota-groups/tree/",
        "/api/v1/quota-groups/qa/explain/",
        "/api/v1/audit/",
        "/metrics",
    ):
        response = admin.get(url)
        assert response.status_code == 200, (url, response.status_code)


def test_registering_a_node_above_the_bound_is_a_400_naming_the_field(clients: dict[str, Any]) -> None:
    r = clients["agent"].post(
        "/api/v1/nodes/", {"name": "gpu-01", "cluster": "c1", "allocatable": {"cpu": HUGE}}, format="json"
    )
    assert r.status_code == 400
    detail = error_attrs(r)["allocatable.cpu"]
    assert detail == f"{HUGE} is more than one node may have (230 billion cores; FAIRWAY_MAX_NODE_AMOUNT)"
    assert not Node.objects.filter(name="gpu-01").exists()


def test_an_admin_edit_above_the_bound_is_a_400(world: World, clients: dict[str, Any]) -> None:
    r = clients["admin"].patch("/api/v1/nodes/n1/?cluster=c1", {"allocatable": {"memory": "300Ti"}}, format="json")
    assert r.status_code == 400
    assert "209 TiB" in error_attrs(r)["allocatable.memory"]
    assert Node.objects.get(cluster=world.cluster, name="n1").allocatable == rl(cpu="8", memory="32Gi", pods="110")


def test_a_cluster_holds_at_most_max_nodes(world: World, clients: dict[str, Any], monkeypatch: Any) -> None:
    monkeypatch.setattr(settings, "FAIRWAY_LIMITS", dataclasses.replace(settings.FAIRWAY_LIMITS, max_nodes=3))
    r = clients["agent"].post("/api/v1/nodes/", {"name": "gpu-01", "cluster": "c1"}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["name"] == "cluster c1 holds 3 nodes, the most one cluster may have (FAIRWAY_MAX_NODES)"


def test_a_pod_asking_more_than_one_node_may_have_is_a_400(world: World, clients: dict[str, Any]) -> None:
    r = clients["admin"].post(
        "/api/v1/pods/",
        {"cluster": "c1", "namespace": "ns-a", "name": "giant", "request": {"cpu": HUGE}},
        format="json",
    )
    assert r.status_code == 400
    assert "more than one node may have" in error_attrs(r)["request.cpu"]


def test_a_heartbeat_above_the_bound_sets_the_node_aside(
    world: World, clients: dict[str, Any], client: Any, make_user: Any
) -> None:
    r = clients["agent"].post("/api/v1/nodes/n1/heartbeat/?cluster=c1", {"allocatable": {"cpu": HUGE}}, format="json")
    assert r.status_code == 200
    body = r.json()
    assert body["set_aside"].startswith("set aside: allocatable cpu above the per-node bound (the heartbeat said cpu ")
    assert body["allocatable"] == {} and body["ready"] is True  # alive, offering nothing
    node = Node.objects.get(cluster=world.cluster, name="n1")
    assert node.allocatable == {} and node.set_aside
    client.force_login(make_user("ops", staff=True))
    _everything_answers(world, client)
    page = client.get("/nodes/n1/").content.decode()
    assert 'id="node-set-aside"' in page and "above the per-node bound" in page
    # a heartbeat within the bound brings it back
    r = clients["agent"].post("/api/v1/nodes/n1/heartbeat/?cluster=c1", {"allocatable": {"cpu": "8"}}, format="json")
    assert r.status_code == 200 and r.json()["set_aside"] is None and r.json()["allocatable"] == {"cpu": "8"}


def test_the_admin_form_refuses_a_node_above_the_bound(world: World, admin_client: Any) -> None:
    client = admin_client
    node = world.nodes["n1"]
    url = f"/admin/scheduling/node/{node.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and not isinstance(v, (dict, list))}
    data.update(
        cluster=world.cluster.pk,
        name="n1",
        allocatable='{"cpu": 4611686018427387903}',
        labels="{}",
        taints="[]",
        ready="on",
        pool="",
    )
    response = client.post(url, data)
    assert response.status_code < 500
    assert response.status_code == 200  # the form again, with the error
    assert "more than one node may have" in response.content.decode()
    assert Node.objects.get(pk=node.pk).allocatable == rl(cpu="8", memory="32Gi", pods="110")


def test_whatif_adding_a_node_above_the_bound_is_a_400(world: World, clients: dict[str, Any]) -> None:
    r = clients["admin"].post(
        "/api/v1/whatif/?cluster=c1",
        {"changes": [{"op": "add", "kind": "node", "spec": {"name": "big", "allocatable": {"cpu": HUGE}}}]},
        format="json",
    )
    assert r.status_code == 400, r.content
    assert "changes.0.spec.allocatable.cpu" in error_attrs(r)


def test_the_kubernetes_mirror_sets_a_node_aside(world: World) -> None:
    node = Node(name="k1", cluster=world.cluster)
    offer(node, rl(cpu=HUGE), "the cluster")
    assert node.allocatable == {} and "the cluster said cpu" in (node.set_aside or "")
    offer(node, rl(cpu="4"), "the cluster")
    assert node.allocatable == rl(cpu="4") and node.set_aside is None


@pytest.fixture
def agent_client(world: World, api: Any, make_user: Any, client: Any) -> Iterator[tuple[World, Any, Any, Any]]:
    kubelet = make_user("kubelet2", groups=("node-agents",))
    for name in world.nodes:
        NodeAgentBinding.objects.create(user=kubelet, cluster=world.cluster, node=name)
    boss = make_user("boss2", staff=True)
    client.force_login(boss)
    yield world, api(kubelet), api(boss), client


_AMOUNT = st.one_of(
    st.integers(min_value=0, max_value=MAX_AMOUNT),
    st.sampled_from([0, 1, MAX_AMOUNT // 20_000, MAX_AMOUNT // 20_000 + 1, MAX_AMOUNT - 1, MAX_AMOUNT]),
)
_RESOURCE = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods"])


@hsettings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(
    beats=st.lists(st.dictionaries(_RESOURCE, _AMOUNT, max_size=3), min_size=1, max_size=3),
    requests=st.lists(st.dictionaries(st.sampled_from(["cpu", "memory"]), _AMOUNT, max_size=2), max_size=3),
)
def test_extreme_amounts_through_every_entry_fail_nothing(
    agent_client: tuple[World, Any, Any, Any], beats: list[dict[str, int]], requests: list[dict[str, int]]
) -> None:
    """Random extreme allocatables (registration, heartbeat, admin edit, what-if) and requests (pods), then a session,
    the pages and /metrics: every answer a 2xx or 4xx, no exception."""
    world, agent, admin, pages = agent_client
    for i, amounts in enumerate(beats):
        body = {"allocatable": {r: f"{a}m" if r == "cpu" else str(a) for r, a in amounts.items()}}
        node = f"n{i % 3 + 1}"
        for response in (
            agent.post(f"/api/v1/nodes/{node}/heartbeat/?cluster=c1", body, format="json"),
            admin.patch(f"/api/v1/nodes/{node}/?cluster=c1", body, format="json"),
            admin.post(
                "/api/v1/whatif/?cluster=c1",
                {"changes": [{"op": "add", "kind": "node", "spec": {"name": f"w{i}", **body}}]},
                format="json",
            ),
        ):
            assert response.status_code < 500, response.content
    for i, amounts in enumerate(requests):
        body = {
            "cluster": "c1",
            "namespace": "ns-a",
            "name": f"x{i}-{len(str(amounts))}",
            "request": {r: f"{a}m" if r == "cpu" else str(a) for r, a in amounts.items()},
        }
        assert admin.post("/api/v1/pods/", body, format="json").status_code < 500
    _everything_answers(world, pages)
