"""Per-node agent identity (issue 9, item 3): a node agent's credential is bound to one node or to a named pool of
nodes (``NodeAgentBinding``); registration, heartbeats, pod listings, status reports and gone confirmations for
any other node are 403 with a message naming the node. Staff keep full access."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from scheduling import sessions
from scheduling.models import Cluster, Node, NodeAgentBinding, Pod
from security.models import ApiToken
from security.tokens import find_token
from tests.scheduling.conftest import World

pytestmark = pytest.mark.django_db


def _agent(make_user: Any, name: str, cluster: Cluster, *, node: str = "", pool: str = "") -> Any:
    user = make_user(name, groups=("node-agents",))
    if node or pool:
        NodeAgentBinding.objects.create(user=user, cluster=cluster, node=node, pool=pool)
    return user


def _detail(response: Any) -> str:
    return str(response.json()["errors"][0]["detail"])


@pytest.fixture
def placed(world: World) -> World:
    """The world's pods bound to nodes by one session; a-0 and a-1 end up on different nodes or not, the tests
    look the nodes up."""
    sessions.run_scheduling_session(world.cluster)
    return world


def test_an_agent_acts_only_for_its_own_node(placed: World, api: Any, make_user: Any) -> None:
    pod = placed.pod("ns-a/a-0")
    mine = pod.node.name
    other = next(n for n in placed.nodes if n != mine)
    agent = api(_agent(make_user, "kubelet-1", placed.cluster, node=mine))

    r = agent.post(f"/api/v1/nodes/{other}/heartbeat/", {"allocatable": {"cpu": "9999"}}, format="json")
    assert r.status_code == 403, r.content
    assert _detail(r).startswith(f"agent kubelet-1 is not bound to node {other} (cluster c1)")
    assert f"node {mine} (cluster c1)" in _detail(r)  # what it is bound to
    assert Node.objects.get(cluster=placed.cluster, name=other).allocatable["cpu"] == 8000
    r = agent.get(f"/api/v1/nodes/{other}/pods/")
    assert r.status_code == 403 and f"node {other}" in _detail(r)

    r = agent.post(f"/api/v1/nodes/{mine}/heartbeat/", {"allocatable": {"cpu": "16"}}, format="json")
    assert r.status_code == 200
    listed = agent.get(f"/api/v1/nodes/{mine}/pods/").json()["results"]
    assert pod.name in {p["name"] for p in listed}
    assert agent.post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Running"}, format="json").status_code == 200


def test_status_reports_and_gone_confirmations_for_pods_on_other_nodes_are_403(
    placed: World, api: Any, make_user: Any
) -> None:
    pod = placed.pod("ns-a/a-0")
    other = next(n for n in placed.nodes if n != pod.node.name)
    agent = api(_agent(make_user, "kubelet-2", placed.cluster, node=other))
    r = agent.post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Failed", "node": other}, format="json")
    assert r.status_code == 403, r.content
    assert f"pod ns-a/a-0 is on node {pod.node.name}" in _detail(r) and f"not bound to node {pod.node.name}" in _detail(
        r
    )
    Pod.objects.filter(pk=pod.pk).update(status="Releasing")
    r = agent.post(f"/api/v1/pods/{pod.pk}/gone/", {}, format="json")
    assert r.status_code == 403 and f"node {pod.node.name}" in _detail(r)
    assert Pod.objects.get(pk=pod.pk).status == "Releasing"
    # a pod on no node is nobody's to report
    pending = Pod.objects.create(cluster=placed.cluster, namespace=pod.namespace, name="waiting")
    r = agent.post(f"/api/v1/pods/{pending.pk}/status/", {"status": "Running"}, format="json")
    assert r.status_code == 403 and "pod ns-a/waiting is on no node" in _detail(r)


def test_an_agent_registers_only_the_nodes_it_is_bound_to(world: World, api: Any, make_user: Any) -> None:
    agent = api(_agent(make_user, "kubelet-9", world.cluster, node="n9"))
    r = agent.post("/api/v1/nodes/", {"cluster": "c1", "name": "n10", "allocatable": {"cpu": "4"}}, format="json")
    assert r.status_code == 403 and "not bound to node n10 (cluster c1)" in _detail(r)
    r = agent.post("/api/v1/nodes/", {"cluster": "c1", "name": "n9", "allocatable": {"cpu": "4"}}, format="json")
    assert r.status_code == 201, r.content
    # the same name in another cluster is another node
    Cluster.objects.create(name="c2")
    r = agent.post("/api/v1/nodes/", {"cluster": "c2", "name": "n9"}, format="json")
    assert r.status_code == 403 and "(cluster c2)" in _detail(r)
    assert set(Node.objects.filter(name__in=["n9", "n10"]).values_list("cluster__name", "name")) == {("c1", "n9")}


def test_a_pool_agent_acts_for_every_node_of_its_pool(world: World, api: Any, make_user: Any) -> None:
    Node.objects.filter(cluster=world.cluster, name__in=["n1", "n2"]).update(pool="rack-1")
    Node.objects.filter(cluster=world.cluster, name="n3").update(pool="rack-2")
    agent = api(_agent(make_user, "rack-1-agent", world.cluster, pool="rack-1"))
    for name in ("n1", "n2"):
        assert agent.post(f"/api/v1/nodes/{name}/heartbeat/", {}, format="json").status_code == 200
    r = agent.post("/api/v1/nodes/n3/heartbeat/", {}, format="json")
    assert r.status_code == 403 and "not bound to node n3 (cluster c1, pool rack-2)" in _detail(r)
    assert "pool rack-1 (cluster c1)" in _detail(r)
    # it registers new nodes into its pool, not into another pool nor outside any
    r = agent.post("/api/v1/nodes/", {"cluster": "c1", "name": "n4", "pool": "rack-1"}, format="json")
    assert r.status_code == 201 and r.json()["pool"] == "rack-1"
    assert agent.post("/api/v1/nodes/n4/heartbeat/", {}, format="json").status_code == 200
    for body in ({"name": "n5", "pool": "rack-2"}, {"name": "n6"}):
        r = agent.post("/api/v1/nodes/", {"cluster": "c1", **body}, format="json")
        assert r.status_code == 403, r.content
    r = agent.post("/api/v1/nodes/", {"cluster": "c1", "name": "n7", "pool": "Not A Pool"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["attr"] == "pool"
    # an admin moving a node out of the pool takes it away from the pool's agent
    admin = api(make_user("boss", staff=True))
    assert admin.patch("/api/v1/nodes/n2/", {"pool": "rack-2"}, format="json").status_code == 200
    assert agent.post("/api/v1/nodes/n2/heartbeat/", {}, format="json").status_code == 403


def test_an_agent_without_bindings_acts_for_nothing_and_staff_for_everything(
    placed: World, api: Any, make_user: Any
) -> None:
    pod = placed.pod("ns-a/a-0")
    unbound = api(_agent(make_user, "kubelet-x", placed.cluster))
    r = unbound.post("/api/v1/nodes/n1/heartbeat/", {}, format="json")
    assert r.status_code == 403 and _detail(r).endswith("it may act only for the nodes it is bound to: nothing")
    admin = api(make_user("boss", staff=True))
    for name in placed.nodes:
        assert admin.post(f"/api/v1/nodes/{name}/heartbeat/", {}, format="json").status_code == 200
        assert admin.get(f"/api/v1/nodes/{name}/pods/").status_code == 200
    assert admin.post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Running"}, format="json").status_code == 200
    assert admin.post("/api/v1/nodes/", {"cluster": "c1", "name": "anywhere"}, format="json").status_code == 201


def test_a_binding_names_one_node_or_one_pool(world: World, make_user: Any) -> None:
    user = make_user("k")
    for node, pool in (("", ""), ("n1", "rack-1")):
        binding = NodeAgentBinding(user=user, cluster=world.cluster, node=node, pool=pool)
        with pytest.raises(ValidationError):
            binding.full_clean()
        with pytest.raises(IntegrityError), transaction.atomic():
            binding.save()
    NodeAgentBinding.objects.create(user=user, cluster=world.cluster, node="n1")
    with pytest.raises(IntegrityError), transaction.atomic():
        NodeAgentBinding.objects.create(user=user, cluster=world.cluster, node="n1")


def test_create_node_agent_makes_a_bound_credential(world: World, api: Any) -> None:
    out, err = StringIO(), StringIO()
    call_command("create_node_agent", "agent-n1", "--node", "n1", "--cluster", "c1", stdout=out, stderr=err)
    token = out.getvalue().strip()
    user = get_user_model().objects.get(username="agent-n1")
    assert find_token(token).user == user and not user.has_usable_password()
    assert [t.name for t in ApiToken.objects.filter(user=user)] == ["node agent"]
    assert user.groups.filter(name="node-agents").exists()
    assert "created node agent agent-n1 for node n1 (cluster c1)" in err.getvalue()
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.post("/api/v1/nodes/n1/heartbeat/", {}, format="json").status_code == 200
    assert client.post("/api/v1/nodes/n2/heartbeat/", {}, format="json").status_code == 403
    # again with a pool: one more binding; the token stays valid and is not printed again (only its hash is kept)
    out2, err2 = StringIO(), StringIO()
    call_command("create_node_agent", "agent-n1", "--pool", "rack-9", "--cluster", "c1", stdout=out2, stderr=err2)
    assert out2.getvalue() == "" and "its token is unchanged" in err2.getvalue()
    assert find_token(token).user == user
    out3 = StringIO()
    call_command(
        "create_node_agent",
        "agent-n1",
        "--pool",
        "rack-9",
        "--cluster",
        "c1",
        "--new-token",
        stdout=out3,
        stderr=StringIO(),
    )
    assert find_token(out3.getvalue().strip()).user == user and ApiToken.objects.filter(user=user).count() == 2
    assert set(NodeAgentBinding.objects.filter(user=user).values_list("node", "pool")) == {("n1", ""), ("", "rack-9")}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a1", "--node", "n1", "--cluster", "nope"], "cluster nope does not exist"),
        (["a1", "--node", "Bad_Name", "--cluster", "c1"], "node name"),
        (["a1", "--pool", "-x", "--cluster", "c1"], "pool"),
        (["boss", "--node", "n1", "--cluster", "c1"], "is staff"),
    ],
)
def test_create_node_agent_refuses_bad_input(world: World, make_user: Any, args: list[str], message: str) -> None:
    make_user("boss", staff=True)
    with pytest.raises(CommandError, match=message):
        call_command("create_node_agent", *args, stdout=StringIO(), stderr=StringIO())
    assert not NodeAgentBinding.objects.exists()


def test_create_node_agent_needs_exactly_one_target(world: World) -> None:
    for args in (["a1"], ["a1", "--node", "n1", "--pool", "p"]):
        with pytest.raises(CommandError):
            call_command("create_node_agent", *args, stdout=StringIO(), stderr=StringIO())


def test_bindings_are_edited_in_the_admin(world: World, client: Any, make_user: Any) -> None:
    client.force_login(get_user_model().objects.create_superuser("root-admin", password="pw-root-1"))
    agent = make_user("kubelet-7", groups=("node-agents",))
    assert client.get("/admin/scheduling/nodeagentbinding/").status_code == 200
    r = client.post(
        "/admin/scheduling/nodeagentbinding/add/",
        {"user": agent.pk, "cluster": world.cluster.pk, "node": "n1", "pool": ""},
    )
    assert r.status_code == 302, r.content[:500]
    r = client.post(
        "/admin/scheduling/nodeagentbinding/add/",
        {"user": agent.pk, "cluster": world.cluster.pk, "node": "n1", "pool": "rack-1"},
    )
    assert r.status_code == 200 and b"exactly one of node and pool" in r.content
    assert list(NodeAgentBinding.objects.values_list("node", "pool")) == [("n1", "")]
    assert Group.objects.get(name="node-agents").user_set.filter(pk=agent.pk).exists()
