"""The Kubernetes adapter holds a cluster to the same node limits as the agents and the API (issue 25): at most
``FAIRWAY_MAX_NODES`` nodes are mirrored (those already mirrored first, then by name), the rest left out with one
problem (one Kubernetes Event) and their pods not applied; a Node whose allocatable is above
``FAIRWAY_MAX_NODE_AMOUNT`` is set aside. Either way the cluster's sessions keep running."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.conf import settings
from kubernetes import client as k8s

from tests.kube.conftest import node, pod, queue, wait_for

HUGE = "4611686018427387903m"


@pytest.fixture
def three_nodes_at_most(monkeypatch: Any) -> None:
    monkeypatch.setattr(settings, "FAIRWAY_LIMITS", dataclasses.replace(settings.FAIRWAY_LIMITS, max_nodes=3))


def _problems(cluster: Any) -> dict[tuple[str, str, str], Any]:
    from scheduling.models import KubeObjectProblem

    return {(p.kind, p.namespace, p.name): p for p in KubeObjectProblem.objects.filter(cluster=cluster)}


def test_nodes_beyond_max_nodes_are_not_mirrored(
    kcluster: Any, seed: Any, make_adapter: Any, kube: Any, three_nodes_at_most: None
) -> None:
    from scheduling import tasks
    from scheduling.models import Node, Pod

    seed.queue(queue("ml"))
    seed.namespace("team", queue_name="ml")
    for i in range(1, 6):
        seed.node(node(f"n{i}", cpu="4"))
    seed.pod(pod("team", "waits", cpu="1"))
    adapter = make_adapter()
    out = adapter.reconcile()
    assert out is not None
    assert sorted(Node.objects.filter(cluster=kcluster).values_list("name", flat=True)) == ["n1", "n2", "n3"]
    problems = _problems(kcluster)
    assert list(problems) == [("Node", "", "n4")]  # one problem, whatever the number left out
    message = problems[("Node", "", "n4")].message
    assert "lists 5 nodes, more than the 3 one cluster may have (FAIRWAY_MAX_NODES)" in message
    assert "2 are left out (n4, n5)" in message
    assert problems[("Node", "", "n4")].event_sent  # a Kubernetes Event on n4 says so
    events = k8s.CoreV1Api(kube).list_namespaced_event("default").items
    assert any(e.involved_object.name == "n4" and "FAIRWAY_MAX_NODES" in e.message for e in events)

    assert tasks.run_session(kcluster.pk) == "ran"  # the session places on the nodes it has
    assert Pod.objects.get(cluster=kcluster, name="waits").node.name in {"n1", "n2", "n3"}

    # a node that sorts first does not push out a node already mirrored
    seed.node(node("a0", cpu="4"))
    informer = next(i for i in adapter.informers if i.kind.plural == "nodes")
    wait_for(lambda: len(informer.cache) == 6, what="the new node")
    adapter.reconcile()
    assert sorted(Node.objects.filter(cluster=kcluster).values_list("name", flat=True)) == ["n1", "n2", "n3"]
    assert list(_problems(kcluster)) == [("Node", "", "a0")]
    # fewer nodes listed: the next one in line comes in and the problem goes
    core = k8s.CoreV1Api(kube)
    for name in ("n1", "n2", "n3"):
        core.delete_node(name)
    wait_for(lambda: len(informer.cache) == 3, what="the deletions")
    adapter.reconcile()
    assert sorted(Node.objects.filter(cluster=kcluster).values_list("name", flat=True)) == ["a0", "n4", "n5"]
    assert _problems(kcluster) == {}


def test_a_pod_on_a_node_left_out_is_not_applied(
    kcluster: Any, seed: Any, make_adapter: Any, three_nodes_at_most: None
) -> None:
    """Seen pending here, it could be bound to another node while it runs on that one: it is left as it is."""
    from scheduling import tasks
    from scheduling.models import Pod

    seed.queue(queue("ml"))
    seed.namespace("team", queue_name="ml")
    for i in range(1, 5):
        seed.node(node(f"n{i}", cpu="4"))
    placed = pod("team", "elsewhere", cpu="1", nodeName="n4")
    placed["status"] = {"phase": "Running"}
    seed.pod(placed)
    adapter = make_adapter()
    adapter.reconcile()
    assert not Pod.objects.filter(cluster=kcluster, name="elsewhere").exists()
    problem = _problems(kcluster)[("Pod", "team", "elsewhere")]
    assert "on node n4, which is not mirrored" in problem.message
    assert tasks.run_session(kcluster.pk) == "ran"


def test_a_node_with_an_absurd_allocatable_is_set_aside(
    kcluster: Any, seed: Any, make_adapter: Any, client: Any, make_user: Any
) -> None:
    from scheduling import tasks
    from scheduling.models import Node, Pod

    seed.queue(queue("ml"))
    seed.namespace("team", queue_name="ml")
    seed.node(node("gpu-01", cpu=HUGE))
    seed.node(node("n2", cpu="4"))
    seed.pod(pod("team", "waits", cpu="1"))
    adapter = make_adapter()
    adapter.reconcile()
    huge = Node.objects.get(cluster=kcluster, name="gpu-01")
    assert huge.allocatable == {} and "above the per-node bound" in (huge.set_aside or "")
    assert Node.objects.get(cluster=kcluster, name="n2").allocatable["cpu"] == 4000
    problem = _problems(kcluster)[("Node", "", "gpu-01")]
    assert "above the per-node bound" in problem.message and problem.event_sent

    assert tasks.run_session(kcluster.pk) == "ran"
    assert Pod.objects.get(cluster=kcluster, name="waits").node.name == "n2"
    client.force_login(make_user("ops", staff=True))
    for url in ("/nodes/", "/nodes/gpu-01/", "/overview/", "/api/v1/queues/tree/", "/metrics"):
        assert client.get(url, {"cluster": kcluster.name}).status_code == 200, url
    page = client.get("/nodes/gpu-01/", {"cluster": kcluster.name}).content.decode()
    assert "above the per-node bound" in page
