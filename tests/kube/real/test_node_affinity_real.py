"""A pod's required node affinity, through the real API server: the adapter mirrors it from the pod's spec (as the
server stored it, defaults and all), the session binds the pod only to a node the affinity matches, and the server
takes the binding; a pod whose affinity no node matches stays Pending with the reason on its podgroup."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, node, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane

SCHEDULER = "fairway-affinity"


@pytest.fixture
def affinity_cluster(db: Any, control_plane: ControlPlane) -> Any:
    return make_cluster(control_plane.kubeconfig(), "", name="affinity1", scheduler_name=SCHEDULER)


def _node(core: k8s.CoreV1Api, name: str, zone: str) -> None:
    """A Ready node in ``zone`` (the not-ready taint the server adds taken off, as in ``test_adapter_real``)."""
    obj = node(name, cpu="8")
    obj["metadata"]["labels"] = {"zone": zone}
    core.create_node({key: value for key, value in obj.items() if key != "status"})
    core.patch_node(name, {"spec": {"taints": None}})
    core.patch_node_status(name, {"status": obj["status"]})


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def test_the_mirrored_affinity_decides_the_node_the_server_binds(
    affinity_cluster: Any, control_plane: ControlPlane, admin: k8s.ApiClient
) -> None:
    from scheduling import tasks
    from scheduling.kube.adapter import Adapter
    from scheduling.models import Pod, PodGroup

    seed, core = Seeder(admin), k8s.CoreV1Api(admin)
    seed.queue(queue("aff-q", deserved={"cpu": "8"}))
    seed.namespace("aff-ns", queue_name="aff-q")
    nodes = {"aff-n1": "a", "aff-n2": "b"}  # aff-n1 sorts first: the session's pick without the affinity
    for name, zone in nodes.items():
        _node(core, name, zone)
    in_b = _required({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]})
    seed.podgroup(podgroup("aff-ns", "zoned", "aff-q"))
    seed.pod(pod("aff-ns", "zoned-0", group="zoned", scheduler=SCHEDULER, affinity=in_b))
    nowhere = _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["aff-n9"]}]})
    seed.podgroup(podgroup("aff-ns", "lost", "aff-q"))
    seed.pod(pod("aff-ns", "lost-0", group="lost", scheduler=SCHEDULER, affinity=nowhere))

    adapter = Adapter(affinity_cluster, identity="aff-a1", lease_namespace="kube-system", lease_seconds=5.0,
                      renew_seconds=0.5, watch_seconds=5)  # fmt: skip
    try:
        adapter.start_informers()
        wait_for(adapter.synced, what="the first lists")
        assert adapter.reconcile() is not None
        stored = dict(Pod.objects.filter(cluster=affinity_cluster).values_list("name", "node_affinity"))
        assert stored == {
            "zoned-0": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}],
            "lost-0": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["aff-n9"]}]}],
        }

        assert tasks.run_session(affinity_cluster.pk) == "ran"
        bound = dict(Pod.objects.filter(cluster=affinity_cluster, status="Bound").values_list("name", "node__name"))
        assert bound == {"zoned-0": "aff-n2"}
        lost = PodGroup.objects.get(cluster=affinity_cluster, namespace__name="aff-ns", name="lost")
        assert "node affinity: 2 nodes do not match" in lost.message, lost.message
        out = adapter.reconcile()
        assert out is not None and out["sent"]["bound"] == 1 and out["problems"] == []
        assert core.read_namespaced_pod("zoned-0", "aff-ns").spec.node_name == "aff-n2"
        assert core.read_namespaced_pod("lost-0", "aff-ns").spec.node_name is None
    finally:
        adapter.stop_informers()
        adapter.elector.release()
        for name in nodes:
            core.delete_node(name)  # the next tests' sessions must not place pods on a node nobody plays
