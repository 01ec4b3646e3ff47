"""The node-agent API: register, heartbeat, a node's pods, pod status reports, eviction confirmations.

Who: admins and members of the ``node-agents`` group; everybody else is refused (401 anonymous, 403 others).
Bad input is a 4xx naming the field, never a 500."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.contrib.auth.models import Group
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotas.models import Queue
from scheduling import sessions
from scheduling.models import Node, NodeAgentBinding, Pod
from tests.conftest import ensure_migrated_rows, error_attrs, forget_cluster_state
from tests.scheduling.conftest import World, build_world
from tests.support.examples import examples

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _shared(module_db: Any) -> tuple[World, dict[str, str | None]]:
    """The world and the callers' tokens, built once for the module (each test runs in a transaction of its own)."""

    def build() -> tuple[World, dict[str, str | None]]:
        from django.contrib.auth import get_user_model

        from security.tokens import create_token

        ensure_migrated_rows()
        world = build_world()
        team = Group.objects.create(name="team-a")
        Queue.objects.get(name="team-a").teams.add(team)
        users = get_user_model().objects
        kubelet = users.create_user("kubelet", password="pw-kubelet")
        kubelet.groups.add(Group.objects.get(name="node-agents"))
        for name in (
            *world.nodes,
            "new-node",
        ):  # the agent of this cluster's nodes (per-node identity: test_agent_identity)
            NodeAgentBinding.objects.create(user=kubelet, cluster=world.cluster, node=name)
        alice = users.create_user("alice", password="pw-alice")
        alice.groups.add(team)
        callers = {
            "agent": kubelet,
            "admin": users.create_user("boss", password="pw-boss", is_staff=True),
            "member": alice,
            "nobody": users.create_user("carol", password="pw-carol"),
        }
        tokens: dict[str, str | None] = {who: create_token(user, "test")[1] for who, user in callers.items()}
        return world, {**tokens, "anonymous": None}

    return module_db(build)


@pytest.fixture
def world(_shared: tuple[World, dict[str, str | None]], db: Any) -> World:
    """The module's world, as a test of its own would have built it (fresh objects, no state of a past session)."""
    forget_cluster_state(_shared[0].cluster.pk)
    return copy.deepcopy(_shared[0])


@pytest.fixture
def clients(_shared: tuple[World, dict[str, str | None]], db: Any) -> dict[str, Any]:
    from rest_framework.test import APIClient

    out = {}
    for who, token in _shared[1].items():
        out[who] = client = APIClient()
        if token is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return out


def _bound(world: World) -> None:
    sessions.run_scheduling_session(world.cluster)


AGENT_CALLS = [
    ("post", "/api/v1/nodes/", {"name": "new-node", "cluster": "c1", "allocatable": {"cpu": "4"}}),
    ("post", "/api/v1/nodes/n1/heartbeat/", {}),
    ("get", "/api/v1/nodes/n1/pods/", None),
    ("post", "/api/v1/pods/{pod}/status/", {"status": "Running"}),
    ("post", "/api/v1/pods/{pod}/gone/", {}),
]


@pytest.mark.parametrize(("method", "path", "body"), AGENT_CALLS)
@pytest.mark.parametrize(
    ("who", "allowed"),
    [("agent", True), ("admin", True), ("member", False), ("nobody", False), ("anonymous", False)],
)
def test_agent_api_permissions(
    world: World, clients: dict[str, Any], method: str, path: str, body: Any, who: str, allowed: bool
) -> None:
    _bound(world)
    pod = world.pod("ns-a/a-0")
    if path.endswith("gone/"):
        Pod.objects.filter(pk=pod.pk).update(status="Releasing")
    url = path.format(pod=pod.pk)
    response = getattr(clients[who], method)(url, body, format="json") if body is not None else clients[who].get(url)
    if allowed:
        assert response.status_code in (200, 201), response.json()
    else:
        assert response.status_code == (401 if who == "anonymous" else 403), response.content
        assert Pod.objects.get(pk=pod.pk).status in ("Bound", "Releasing")
        assert not Node.objects.filter(name="new-node").exists()


def test_heartbeat_updates_the_node(world: World, clients: dict[str, Any]) -> None:
    Node.objects.filter(pk=world.nodes["n1"].pk).update(ready=False)
    body = {
        "allocatable": {"cpu": "16", "memory": "64Gi"},
        "labels": {"zone": "b"},
        "taints": [{"key": "maintenance", "effect": "NoSchedule"}],
        "unschedulable": True,
    }
    r = clients["agent"].post("/api/v1/nodes/n1/heartbeat/?cluster=c1", body, format="json")
    assert r.status_code == 200, r.json()
    data = r.json()
    assert data["ready"] is True and data["last_heartbeat"] and data["allocatable"] == {"cpu": "16", "memory": "64Gi"}
    node = Node.objects.get(pk=world.nodes["n1"].pk)
    assert (node.labels, node.taints[0]["key"], node.unschedulable) == ({"zone": "b"}, "maintenance", True)
    # an empty heartbeat changes only the heartbeat
    assert clients["agent"].post("/api/v1/nodes/n1/heartbeat/", {}, format="json").status_code == 200
    assert Node.objects.get(pk=node.pk).allocatable["cpu"] == 16000


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({"allocatable": {"cpu": "-1"}}, "allocatable.cpu"),
        ({"allocatable": {"cpu": "lots"}}, "allocatable.cpu"),
        ({"allocatable": "32 cores"}, "allocatable"),
        ({"labels": {"zone": ["a"]}}, "labels.zone"),
        ({"taints": [{"key": "x", "effect": "Sometimes"}]}, "taints.0.effect"),
        ({"taints": [{"effect": "NoSchedule"}]}, "taints.0.key"),
        ({"unschedulable": "maybe"}, "unschedulable"),
    ],
)
def test_bad_heartbeats_are_refused_with_the_field(
    world: World, clients: dict[str, Any], body: dict[str, Any], attr: str
) -> None:
    before = Node.objects.get(pk=world.nodes["n1"].pk)
    r = clients["agent"].post("/api/v1/nodes/n1/heartbeat/", body, format="json")
    assert r.status_code == 400, r.content
    assert attr in error_attrs(r), error_attrs(r)
    after = Node.objects.get(pk=before.pk)
    assert (after.allocatable, after.last_heartbeat) == (before.allocatable, before.last_heartbeat)


def test_unknown_node_or_pod_is_404(world: World, clients: dict[str, Any]) -> None:
    agent = clients["agent"]
    assert agent.post("/api/v1/nodes/ghost/heartbeat/", {}, format="json").status_code == 404
    assert agent.get("/api/v1/nodes/ghost/pods/").status_code == 404
    assert agent.post("/api/v1/pods/999999/status/", {"status": "Running"}, format="json").status_code == 404
    assert agent.post("/api/v1/pods/999999/gone/", {}, format="json").status_code == 404
    assert agent.post("/api/v1/pods/not-a-number/gone/", {}, format="json").status_code == 404


def test_a_node_lists_what_it_should_run(world: World, clients: dict[str, Any]) -> None:
    _bound(world)
    on_n1 = set(Pod.objects.filter(node__name="n1").values_list("name", flat=True))
    r = clients["agent"].get("/api/v1/nodes/n1/pods/")
    assert r.status_code == 200
    body = r.json()
    assert {p["name"] for p in body["results"]} == on_n1 and body["count"] == len(on_n1)
    first = body["results"][0]
    assert first["status"] == "Bound" and first["node"] == "n1" and "cpu" in first["request"]
    Pod.objects.filter(node__name="n1").update(status="Succeeded")
    assert clients["agent"].get("/api/v1/nodes/n1/pods/").json()["count"] == 0


def test_status_reports_follow_the_transitions(world: World, clients: dict[str, Any]) -> None:
    _bound(world)
    pod = world.pod("ns-a/a-0")
    agent = clients["agent"]
    url = f"/api/v1/pods/{pod.pk}/status/"
    r = agent.post(url, {"status": "Running", "node": pod.node.name}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "Running" and r.json()["started"]
    assert agent.post(url, {"status": "Running"}, format="json").status_code == 200  # retried
    r = agent.post(url, {"status": "Succeeded", "message": "exit 0"}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "Succeeded" and r.json()["finished"]
    r = agent.post(url, {"status": "Running"}, format="json")
    assert r.status_code == 400 and "already finished" in error_attrs(r)["status"]


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({}, "status"),
        ({"status": "Bound"}, "status"),
        ({"status": "running"}, "status"),
        ({"status": 3}, "status"),
        ({"status": "Running", "node": "n-other"}, "node"),
        ({"status": "Running", "message": "x" * 3000}, "message"),
    ],
)
def test_bad_status_reports_are_refused_with_the_field(
    world: World, clients: dict[str, Any], body: dict[str, Any], attr: str
) -> None:
    _bound(world)
    pod = world.pod("ns-a/a-0")
    r = clients["agent"].post(f"/api/v1/pods/{pod.pk}/status/", body, format="json")
    assert r.status_code == 400, r.content
    assert attr in error_attrs(r), error_attrs(r)
    assert Pod.objects.get(pk=pod.pk).status == "Bound"


def test_a_pending_pod_cannot_be_reported_running(world: World, clients: dict[str, Any]) -> None:
    pod = world.pods["ns-a/a-0"]
    r = clients["admin"].post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Running"}, format="json")
    assert r.status_code == 400 and "not bound to a node" in error_attrs(r)["status"]
    # an agent acts only for pods on its nodes, and a pending pod is on none
    r = clients["agent"].post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Running"}, format="json")
    assert r.status_code == 403 and "is on no node" in r.json()["errors"][0]["detail"]
    assert Pod.objects.get(pk=pod.pk).status == "Pending"


def test_evicted_pods_are_releasing_until_confirmed_gone(world: World, clients: dict[str, Any]) -> None:
    _bound(world)
    pod = world.pod("ns-a/a-0")
    agent = clients["agent"]
    r = agent.post(f"/api/v1/pods/{pod.pk}/gone/", {}, format="json")
    assert r.status_code == 400 and "not being evicted" in error_attrs(r)["status"]
    Pod.objects.filter(pk=pod.pk).update(status="Releasing", reason="Evicted")
    listed = {p["name"]: p["status"] for p in agent.get(f"/api/v1/nodes/{pod.node.name}/pods/").json()["results"]}
    assert listed["a-0"] == "Releasing"  # the agent sees what to stop
    r = agent.post(f"/api/v1/pods/{pod.pk}/gone/", {}, format="json")
    assert r.status_code == 200 and (r.json()["status"], r.json()["reason"]) == ("Failed", "Evicted")
    assert agent.post(f"/api/v1/pods/{pod.pk}/gone/", {}, format="json").status_code == 200  # retried


def test_node_agents_can_register_but_not_change_the_trees(world: World, clients: dict[str, Any]) -> None:
    agent = clients["agent"]
    r = agent.post("/api/v1/nodes/", {"name": "n9", "cluster": "c1", "allocatable": {"cpu": "-2"}}, format="json")
    assert r.status_code == 400 and "allocatable.cpu" in error_attrs(r)
    assert agent.post("/api/v1/queues/", {"name": "sneaky"}, format="json").status_code == 403
    assert agent.patch("/api/v1/nodes/n1/", {"ready": False}, format="json").status_code == 403
    assert agent.delete("/api/v1/nodes/n1/").status_code == 403


def test_the_node_agents_group_comes_with_the_migrations(db: Any) -> None:
    from scheduling.views import NODE_AGENTS_GROUP

    assert NODE_AGENTS_GROUP == "node-agents" and Group.objects.filter(name=NODE_AGENTS_GROUP).exists()


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_fields = st.sampled_from(["allocatable", "labels", "taints", "unschedulable", "status", "node", "message", "cpu"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.dictionaries(_fields, _json, max_size=4) | _json, target=st.sampled_from(["heartbeat", "status", "gone"])
)
def test_agent_endpoints_never_answer_500(world: World, clients: dict[str, Any], body: Any, target: str) -> None:
    pod = world.pods["ns-a/a-0"]
    url = {
        "heartbeat": "/api/v1/nodes/n1/heartbeat/",
        "status": f"/api/v1/pods/{pod.pk}/status/",
        "gone": f"/api/v1/pods/{pod.pk}/gone/",
    }[target]
    r = clients["agent"].post(url, body, format="json")
    assert r.status_code < 500, (body, r.content[:300])
    if r.status_code == 400:
        assert r.json()["type"] == "validation_error" and r.json()["errors"]


@pytest.mark.parametrize("raw", ['{"allocatable": {"cpu": NaN}}', '{"status": "Running"', "[]", '"Running"'])
def test_malformed_json_is_400(world: World, clients: dict[str, Any], raw: str) -> None:
    pod = world.pods["ns-a/a-0"]
    for url in ("/api/v1/nodes/n1/heartbeat/", f"/api/v1/pods/{pod.pk}/status/"):
        r = clients["agent"].generic("POST", url, raw, content_type="application/json")
        assert 400 <= r.status_code < 500, (url, raw, r.content[:200])
