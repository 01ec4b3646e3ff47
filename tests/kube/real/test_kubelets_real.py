"""Kubelets stood in through the API (``tests/support/kube_kubelet.py``) on a server of this module's own with
kube-controller-manager's node lifecycle and disruption controllers (``--node-monitor-grace-period=4s``):

* nodes register and renew their Leases in ``kube-node-lease``; the controller takes the new nodes' ``not-ready``
  taint off (nothing here takes it off by hand);
* a node whose Lease lapses goes NotReady (the controller sets its Ready condition Unknown and taints it
  unreachable); the adapter mirrors it NotReady, and Fairway's dead-node handling (``agent.evict_lost_nodes``, the
  docs' dead-nodes page) marks its pods Failed/NodeLost once the cluster's ``pod_eviction_timeout`` has
  passed, while the pods of the live node run on; the mirror keeps them lost though the server still shows them;
* a PodDisruptionBudget whose allowance the disruption controller computed lets one eviction through and refuses
  the next (429), which Fairway records and retries.

Its own server, because the controllers act on every node of a server: on the session's shared one they would
turn the other tests' lease-less nodes NotReady."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane, binaries
from tests.support.kube_kubelet import KubeletStandIn

NODE = {"cpu": "4", "memory": "32Gi", "pods": "110"}


@pytest.fixture(scope="module")
def managed_plane(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """``control_plane`` first: it skips or fails with the reason when the binaries are not built."""
    args = ("--node-monitor-grace-period=4s", "--node-monitor-period=1s", "--node-startup-grace-period=4s")
    with ControlPlane(binaries(), controllers=("nodelifecycle", "disruption"), controller_manager_args=args) as plane:
        yield plane


@pytest.fixture
def managed_admin(managed_plane: ControlPlane) -> Iterator[k8s.ApiClient]:
    with managed_plane.api_client() as api:
        yield api


def _node(core: k8s.CoreV1Api, name: str) -> k8s.V1Node:
    return core.read_node(name)


def _ready(node: k8s.V1Node) -> str:
    return next((c.status for c in node.status.conditions or [] if c.type == "Ready"), "")


def _start(adapter: Any, kubelet: KubeletStandIn, ns: str, names: list[str]) -> None:
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    kubelet.sync()
    wait_for(lambda: all((pods.cache.get(f"{ns}/{n}") or {}).get("status", {}).get("phase") == "Running"
                         for n in names), what=f"{names} Running")  # fmt: skip
    adapter.reconcile()


def _taints(core: Any, name: str) -> set[tuple[str, str]]:
    return {(t.key, t.effect) for t in _node(core, name).spec.taints or []}


def test_a_node_whose_lease_lapses_goes_not_ready_and_loses_its_pods(
    db: Any, managed_plane: ControlPlane, managed_admin: k8s.ApiClient, tag: str, make_adapter: Any
) -> None:
    from django.utils import timezone

    from scheduling import agent, tasks
    from scheduling.models import Eviction, Node, Pod

    core, seed, ns = k8s.CoreV1Api(managed_admin), Seeder(managed_admin), f"ns-{tag}"
    live, dying = f"live-{tag}", f"dying-{tag}"
    kubelet = KubeletStandIn(managed_admin, {live: NODE, dying: NODE})
    kubelet.register()  # the not-ready taint stays on: the node lifecycle controller takes it off
    cluster = make_cluster(managed_plane.kubeconfig(), tag, pod_eviction_timeout=60)
    seed.queue(queue(f"q-{tag}"))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.podgroup(podgroup(ns, "job", f"q-{tag}", min_member=2))
    for name in ("job-0", "job-1"):
        seed.pod(pod(ns, name, cpu="4", group="job", scheduler=cluster.scheduler_name))
    with kubelet.renewing(0.5):
        for name in (live, dying):
            wait_for(lambda name=name: not _node(core, name).spec.taints and _ready(_node(core, name)) == "True",
                     timeout=30, what=f"the controller to untaint {name}")  # fmt: skip
        adapter = make_adapter(cluster)
        adapter.reconcile()
        assert tasks.run_session(cluster.pk) == "ran"
        adapter.reconcile()
        _start(adapter, kubelet, ns, ["job-0", "job-1"])
        on = dict(Pod.objects.filter(cluster=cluster).values_list("node__name", "name"))
        assert sorted(on) == [dying, live] and set(Pod.objects.values_list("status", flat=True)) == {"Running"}

        kubelet.down.add(dying)  # its kubelet dies: no more Lease renewals
        # The lifecycle controller writes the Unknown condition first and taints the node in a later pass of its own
        wait_for(lambda: _ready(_node(core, dying)) == "Unknown", timeout=60, what="the node lifecycle controller")
        wait_for(lambda: ("node.kubernetes.io/unreachable", "NoSchedule") in _taints(core, dying),
                 timeout=60, what="the unreachable taint")  # fmt: skip
        assert _ready(_node(core, live)) == "True"  # the live one renews on
        nodes = next(i for i in adapter.informers if i.kind.plural == "nodes")
        wait_for(lambda: any(c.get("status") == "Unknown" for c in nodes.cache[dying]["status"]["conditions"]),
                 what="the watch to bring the NotReady node")  # fmt: skip
        adapter.reconcile()
        row = Node.objects.get(cluster=cluster, name=dying)
        assert not row.ready and row.not_ready_since is not None
        assert Node.objects.get(cluster=cluster, name=live).ready

        # Fairway's dead-node handling, once the pod eviction timeout has passed (the check is run at that time)
        later = row.not_ready_since + timedelta(seconds=cluster.pod_eviction_timeout + 1)
        assert agent.evict_lost_nodes(cluster, timezone.now())["lost"] == 0  # not before the timeout
        assert agent.evict_lost_nodes(cluster, later)["lost"] == 1
        lost = Pod.objects.get(cluster=cluster, name=on[dying])
        assert (lost.status, lost.reason) == ("Failed", "NodeLost")
        eviction = Eviction.objects.get(pod=lost)
        assert eviction.action == "node-lost" and eviction.node == dying
        assert Pod.objects.get(cluster=cluster, name=on[live]).status == "Running"
        adapter.reconcile()  # the server still shows the pod Running on the dead node: the mirror keeps it lost
        assert core.read_namespaced_pod(on[dying], ns).status.phase == "Running"
        assert Pod.objects.get(pk=lost.pk).status == "Failed"


def test_a_budget_computed_by_the_disruption_controller_lets_one_eviction_through(
    db: Any, managed_plane: ControlPlane, managed_admin: k8s.ApiClient, tag: str, make_adapter: Any
) -> None:
    from django.utils import timezone

    from scheduling import tasks
    from scheduling.models import Eviction, Pod

    core, seed, ns = k8s.CoreV1Api(managed_admin), Seeder(managed_admin), f"ns-{tag}"
    kubelet = KubeletStandIn(managed_admin, {f"a-{tag}": NODE, f"b-{tag}": NODE})
    kubelet.register()
    cluster = make_cluster(managed_plane.kubeconfig(), tag)
    seed.queue(queue(f"q-{tag}"))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.podgroup(podgroup(ns, "web", f"q-{tag}", min_member=2))
    for name in ("web-0", "web-1"):
        seed.pod(pod(ns, name, cpu="4", group="web", labels={"app": "web"}, scheduler=cluster.scheduler_name))
    policy = k8s.PolicyV1Api(managed_admin)
    policy.create_namespaced_pod_disruption_budget(ns, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-one"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})  # fmt: skip
    with kubelet.renewing(0.5):
        for name in kubelet.nodes:
            wait_for(lambda name=name: not _node(core, name).spec.taints, timeout=30, what=f"{name} untainted")
        adapter = make_adapter(cluster)
        adapter.reconcile()
        assert tasks.run_session(cluster.pk) == "ran"
        adapter.reconcile()
        _start(adapter, kubelet, ns, ["web-0", "web-1"])
        wait_for(lambda: policy.read_namespaced_pod_disruption_budget("keep-one", ns).status.disruptions_allowed == 1,
                 timeout=30, what="the disruption controller's allowance")  # fmt: skip
        for row in Pod.objects.filter(cluster=cluster):  # a session evicts both (as store.apply_decisions writes)
            Pod.objects.filter(pk=row.pk).update(status="Releasing", reason="Evicted")
            Eviction.objects.create(cluster=cluster, pod=row, pod_uid=f"{ns}/{row.name}", namespace=ns,
                                    node=row.node.name, action="reclaim", reason="reclaim", created=timezone.now())  # fmt: skip
        out = adapter.reconcile()
        assert out is not None and (out["sent"].get("evicted"), out["sent"].get("eviction_refused")) == (1, 1)
        done = Eviction.objects.get(api_status="done")
        refused = Eviction.objects.get(api_status="refused")
        assert refused.api_refusal.startswith("429:") and "disruption budget" in refused.api_refusal
        assert core.read_namespaced_pod(done.pod.name, ns).metadata.deletion_timestamp is not None
        assert core.read_namespaced_pod(refused.pod.name, ns).metadata.deletion_timestamp is None
        assert Pod.objects.get(pk=refused.pod_id).status == "Releasing"  # holding its node until it may go
