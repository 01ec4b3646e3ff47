"""The adapter mirrors Kueue's quota tree from the real API server, whose Kueue CRDs (``tests/fixtures/crds``) validate
the objects: a Cohort with two ClusterQueues (one named ``root``, Fairway's built-in name), a LocalQueue, a pod
labelled with it; a change of a nominal quota, and a namespace's labels, on the server reach the rows at the next pass; a deleted
ClusterQueue goes. ResourceFlavors (issue 28 item 7): two flavors of cpu (labels, a taint, tolerations) are stored as
rows and the ClusterQueue's quota per flavor (``cpu@spot``) with its resource group, not added up. The objects carry this test's tag, and go at its end (the server is shared by the session)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, pod, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


def _quota(cpu: str, **limits: str) -> list[dict[str, Any]]:
    resources = [{"name": "cpu", "nominalQuota": cpu, **limits}]
    return [{"coveredResources": ["cpu"], "flavors": [{"name": "default-flavor", "resources": resources}]}]


def _adapter(cluster: Any, identity: str) -> Any:
    """An adapter of ``cluster`` holding its lease briefly (the server is shared by the session's tests)."""
    from scheduling.kube.adapter import Adapter

    return Adapter(cluster, identity=identity, lease_namespace="kube-system", lease_seconds=5.0, renew_seconds=0.5,
                   watch_seconds=5)  # fmt: skip


def _first_pass(adapter: Any) -> dict[str, Any]:
    """The adapter's informers started, their first lists read, and its first pass, which must find no problem."""
    adapter.start_informers()
    wait_for(adapter.synced, what="the first lists")
    out: dict[str, Any] | None = adapter.reconcile()
    assert out is not None and out["problems"] == [], out
    return out


def _stop(adapter: Any) -> None:
    adapter.stop_informers()
    adapter.elector.release()


@pytest.fixture
def kueue_cluster(db: Any, control_plane: ControlPlane) -> Any:
    return make_cluster(control_plane.kubeconfig(), "", name="kueue1", scheduler_name="fairway-kueue")


def test_the_adapter_mirrors_kueues_tree_from_the_real_server(
    kueue_cluster: Any, admin: k8s.ApiClient, tag: str
) -> None:
    from quotas.models import Namespace, Queue
    from scheduling.models import PodGroup

    custom = k8s.CustomObjectsApi(admin)
    cohort, team, other, ns = f"kq-{tag}", f"kq-nlp-{tag}", "root", f"kq-{tag}"
    made: list[tuple[str, str]] = []

    def create(plural: str, body: dict[str, Any]) -> None:
        body = {"apiVersion": f"{GROUP}/{VERSION}", **body}
        if plural == "localqueues":
            custom.create_namespaced_custom_object(GROUP, VERSION, ns, plural, body)
        else:
            custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
            made.append((plural, body["metadata"]["name"]))

    Seeder(admin).namespace(ns)
    create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}})
    create("cohorts", {"kind": "Cohort", "metadata": {"name": cohort}, "spec": {"resourceGroups": _quota("4")}})
    create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": team},
                             "spec": {"cohortName": cohort, "resourceGroups": _quota("10", lendingLimit="2")}})  # fmt: skip
    create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": other},
                             "spec": {"cohortName": cohort, "resourceGroups": _quota("6")}})  # fmt: skip
    create("localqueues", {"kind": "LocalQueue", "metadata": {"name": "team-queue", "namespace": ns},
                           "spec": {"clusterQueue": team}})  # fmt: skip
    Seeder(admin).pod(pod(ns, "p0", labels={"kueue.x-k8s.io/queue-name": "team-queue"}, scheduler="fairway-kueue"))

    adapter = _adapter(kueue_cluster, f"kq-{tag}")
    try:
        _first_pass(adapter)
        rows = {q.name: q.to_spec() for q in Queue.objects.filter(name__in=[cohort, team, "root-clusterqueue"])}
        assert rows[cohort].parent == "root" and int(rows[cohort].deserved["cpu"]) == 20_000  # its own 4 + 10 + 6
        assert rows[team].parent == cohort and int(rows[team].deserved["cpu"]) == 10_000
        assert int(rows[team].lending_limit["cpu"]) == 2_000
        # Kueue's ClusterQueue `root` is not Fairway's root: it gets a name of its own
        assert rows["root-clusterqueue"].parent == cohort and int(rows["root-clusterqueue"].deserved["cpu"]) == 6_000
        # the pod's LocalQueue leads to its ClusterQueue's queue
        assert PodGroup.objects.get(cluster=kueue_cluster, namespace__name=ns).queue.name == team

        # a nominal quota changed on the server reaches the row at the next pass
        custom.patch_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", team, {"spec": {"resourceGroups": _quota("12", lendingLimit="2")}}
        )
        informer = next(i for i in adapter.informers if i.kind.plural == "clusterqueues")
        wait_for(
            lambda: (informer.cache.get(team) or {}).get("spec", {}).get("resourceGroups", [{}])[0]
            .get("flavors", [{}])[0].get("resources", [{}])[0].get("nominalQuota") == "12",
            what="the watch to bring the change",
        )  # fmt: skip
        assert adapter.reconcile() is not None
        assert int(Queue.objects.get(name=team).deserved["cpu"]) == 12_000
        assert int(Queue.objects.get(name=cohort).deserved["cpu"]) == 22_000
        assert PodGroup.objects.get(cluster=kueue_cluster, namespace__name=ns).queue.name == team  # kept

        # the namespace's labels (what a namespaceSelector matches) reach its row; the server's own name label is
        # implied, not stored
        k8s.CoreV1Api(admin).patch_namespace(ns, {"metadata": {"labels": {"team": "nlp"}}})
        namespaces = next(i for i in adapter.informers if i.kind.plural == "namespaces")
        wait_for(
            lambda: ((namespaces.cache.get(ns) or {}).get("metadata", {}).get("labels") or {}).get("team") == "nlp",
            what="the watch to bring the label",
        )
        assert adapter.reconcile() is not None
        assert Namespace.objects.get(name=ns).labels == {"team": "nlp"}
    finally:
        _stop(adapter)
        k8s.CoreV1Api(admin).delete_namespaced_pod("p0", ns)
        custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", "team-queue")
        for plural, name in reversed(made):
            custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)


def test_the_adapter_stores_kueues_flavors_from_the_real_server(
    kueue_cluster: Any, admin: k8s.ApiClient, tag: str
) -> None:
    from quotas.models import Queue, ResourceFlavor

    custom = k8s.CustomObjectsApi(admin)
    team, spot, ondemand = f"kf-{tag}", f"spot-{tag}", f"on-demand-{tag}"
    made: list[tuple[str, str]] = []

    def create(plural: str, body: dict[str, Any]) -> None:
        custom.create_cluster_custom_object(GROUP, VERSION, plural, {"apiVersion": f"{GROUP}/{VERSION}", **body})
        made.append((plural, body["metadata"]["name"]))

    taint = {"key": "spot", "value": "true", "effect": "NoSchedule"}
    create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": ondemand},
                               "spec": {"nodeLabels": {"type": "on-demand"}}})  # fmt: skip
    create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": spot},
                               "spec": {"nodeLabels": {"type": "spot"}, "nodeTaints": [taint],
                                        "tolerations": [{**taint, "operator": "Equal"}]}})  # fmt: skip
    groups = [{"coveredResources": ["cpu"], "flavors": [
        {"name": ondemand, "resources": [{"name": "cpu", "nominalQuota": "4"}]},
        {"name": spot, "resources": [{"name": "cpu", "nominalQuota": "8"}]},
    ]}]  # fmt: skip
    create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": team},
                             "spec": {"resourceGroups": groups, "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}}})  # fmt: skip
    adapter = _adapter(kueue_cluster, f"kf-{tag}")
    try:
        _first_pass(adapter)
        stored = ResourceFlavor.objects.get(name=spot)
        assert stored.node_labels == {"type": "spot"} and stored.node_taints == [taint]
        queue = Queue.objects.get(name=team)
        assert queue.deserved == {f"cpu@{ondemand}": 4_000, f"cpu@{spot}": 8_000}
        # (with the preemption policies the server's defaults add)
        assert {k: queue.kueue[k] for k in ("resourceGroups", "flavorFungibility")} == {
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [ondemand, spot]}],
            "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"},
        }
    finally:
        _stop(adapter)
        for plural, name in reversed(made):
            custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)


def test_the_adapter_stores_kueues_local_queues_from_the_real_server(
    kueue_cluster: Any, admin: k8s.ApiClient, tag: str
) -> None:
    """A LocalQueue with a fractional ``fairSharing.weight`` (issue 28 items 5 and 9): its row appears with the exact
    weight and its ClusterQueue, a pod labelled with it keeps it on its podgroup, a changed weight reaches the row,
    and once deleted from the server the row goes."""
    from quotas.models import LocalQueue
    from scheduling.models import PodGroup

    custom = k8s.CustomObjectsApi(admin)
    team, ns = f"klq-{tag}", f"klq-{tag}"
    made: list[tuple[str, str]] = []

    def create(plural: str, body: dict[str, Any]) -> None:
        custom.create_cluster_custom_object(GROUP, VERSION, plural, {"apiVersion": f"{GROUP}/{VERSION}", **body})
        made.append((plural, body["metadata"]["name"]))

    Seeder(admin).namespace(ns)
    create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}})
    create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": team},
                             "spec": {"resourceGroups": _quota("4")}})  # fmt: skip
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
        "spec": {"clusterQueue": team, "fairSharing": {"weight": "0.75"}},
    })  # fmt: skip
    Seeder(admin).pod(pod(ns, "p0", labels={"kueue.x-k8s.io/queue-name": "lq"}, scheduler="fairway-kueue"))
    adapter = _adapter(kueue_cluster, f"klq-{tag}")

    def weight_on_server(value: str) -> Any:
        local = next(i for i in adapter.informers if i.kind.plural == "localqueues")
        return lambda: (
            ((local.cache.get(f"{ns}/lq") or {}).get("spec", {}).get("fairSharing") or {}).get("weight") == value
        )

    try:
        adapter.start_informers()
        wait_for(adapter.synced, what="the first lists")
        local = next(i for i in adapter.informers if i.kind.plural == "localqueues")
        out = adapter.reconcile()
        assert out is not None and out["problems"] == [], out
        row = LocalQueue.objects.select_related("queue").get(namespace__name=ns, name="lq")
        assert (row.queue.name, row.weight) == (team, "0.75")
        assert PodGroup.objects.get(cluster=kueue_cluster, namespace__name=ns).local_queue == "lq"

        custom.patch_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", "lq",
                                              {"spec": {"fairSharing": {"weight": "2"}}})  # fmt: skip
        wait_for(weight_on_server("2"), what="the watch to bring the weight")
        assert adapter.reconcile() is not None
        assert LocalQueue.objects.get(namespace__name=ns, name="lq").weight == "2"

        k8s.CoreV1Api(admin).delete_namespaced_pod("p0", ns, grace_period_seconds=0)
        custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", "lq")
        wait_for(lambda: local.cache.get(f"{ns}/lq") is None, what="the watch to bring the deletion")
        out = adapter.reconcile()
        assert out is not None and out["problems"] == [], out
        assert not LocalQueue.objects.filter(namespace__name=ns).exists()
    finally:
        _stop(adapter)
        with contextlib.suppress(k8s.ApiException):  # gone already when the test got that far
            k8s.CoreV1Api(admin).delete_namespaced_pod("p0", ns, grace_period_seconds=0)
        with contextlib.suppress(k8s.ApiException):
            custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", "lq")
        for plural, name in reversed(made):
            custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)


def test_a_kueue_pod_group_waits_for_its_pods_then_runs_until_its_maximum_execution_time(
    kueue_cluster: Any, admin: k8s.ApiClient, tag: str
) -> None:
    """A Kueue pod group of 2 pods with 1 on the server: its row keeps the count, the session leaves it Pending with
    ``NotEnoughPods`` (no node, no quota held); once the second pod is on the server the next pass and session admit it
    and bind both, and the server takes the bindings. Its pods' ``max-exec-time-seconds`` (60) kept on its row, a
    minute admitted later the adapter's pass suspends the group and evicts its pods through the server."""
    from datetime import timedelta

    from django.utils import timezone

    from scheduling import tasks
    from scheduling.models import Pod, PodGroup, PodGroupReason
    from tests.kube.conftest import node

    custom, core = k8s.CustomObjectsApi(admin), k8s.CoreV1Api(admin)
    team, ns, node_name = f"kpg-{tag}", f"kpg-{tag}", f"kpg-n-{tag}"
    made: list[tuple[str, str]] = []

    def create(plural: str, body: dict[str, Any]) -> None:
        custom.create_cluster_custom_object(GROUP, VERSION, plural, {"apiVersion": f"{GROUP}/{VERSION}", **body})
        made.append((plural, body["metadata"]["name"]))

    def member(name: str) -> dict[str, Any]:
        labels = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/pod-group-name": "train",
                  "kueue.x-k8s.io/max-exec-time-seconds": "60"}  # fmt: skip
        obj = pod(ns, name, labels=labels, scheduler="fairway-kueue")
        obj["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": "2"}
        return obj

    Seeder(admin).namespace(ns)
    create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}})
    create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": team},
                             "spec": {"resourceGroups": _quota("8")}})  # fmt: skip
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
        "spec": {"clusterQueue": team},
    })  # fmt: skip
    box = node(node_name, cpu="8")  # Ready, without the not-ready taint the server adds (``test_adapter_real``)
    core.create_node({key: value for key, value in box.items() if key != "status"})
    core.patch_node(node_name, {"spec": {"taints": None}})
    core.patch_node_status(node_name, {"status": box["status"]})
    Seeder(admin).pod(member("leader"))
    adapter = _adapter(kueue_cluster, f"kpg-{tag}")
    try:
        out = _first_pass(adapter)
        group = PodGroup.objects.get(cluster=kueue_cluster, namespace__name=ns, name="train")
        assert (group.queue.name, group.min_member, group.kueue_pod_group_count) == (team, 2, 2)
        assert group.kueue_max_exec_seconds == 60
        assert tasks.run_session(kueue_cluster.pk) == "ran"
        group.refresh_from_db()
        assert (group.phase, group.reason) == ("Pending", "NotEnoughPods"), (group.phase, group.message)
        assert "1 of its 2 pods exist" in group.message
        assert not Pod.objects.filter(cluster=kueue_cluster, node__isnull=False).exists()

        Seeder(admin).pod(member("worker"))
        pods = next(i for i in adapter.informers if i.kind.plural == "pods")
        wait_for(lambda: pods.cache.get(f"{ns}/worker") is not None, what="the watch to bring the second pod")
        assert adapter.reconcile() is not None
        assert tasks.run_session(kueue_cluster.pk) == "ran"
        group.refresh_from_db()
        assert group.phase in ("Inqueue", "Running") and group.reason != "NotEnoughPods", (group.phase, group.reason)
        for _ in range(3):  # admitted, then placed whole
            if Pod.objects.filter(cluster=kueue_cluster, node__name=node_name).count() == 2:
                break
            assert tasks.run_session(kueue_cluster.pk) == "ran"
        bound = dict(Pod.objects.filter(cluster=kueue_cluster, namespace__name=ns).values_list("name", "node__name"))
        assert bound == {"leader": node_name, "worker": node_name}, bound
        out = adapter.reconcile()
        assert out is not None and out["sent"]["bound"] == 2, out
        assert {core.read_namespaced_pod(p, ns).spec.node_name for p in ("leader", "worker")} == {node_name}

        # a minute admitted (its history moved back): the next pass suspends it and evicts its pods on the server
        PodGroupReason.objects.filter(podgroup=group).update(time=timezone.now() - timedelta(seconds=61))
        out = adapter.reconcile()
        assert out is not None and out["sent"].get("max_exec_suspended") == 1, out
        assert out["sent"].get("evicted") == 2, out
        group.refresh_from_db()
        assert group.suspended_by.startswith("Fairway (MaximumExecutionTimeExceeded"), group.suspended_by
        for name in ("leader", "worker"):  # no kubelet here to finish the deletion: being deleted
            assert core.read_namespaced_pod(name, ns).metadata.deletion_timestamp is not None
    finally:
        _stop(adapter)
        core.delete_node(node_name)  # the next tests' sessions must not place pods on a node nobody plays
        for name in ("leader", "worker"):
            with contextlib.suppress(k8s.ApiException):
                core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
        with contextlib.suppress(k8s.ApiException):
            custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "localqueues", "lq")
        for plural, name in reversed(made):
            custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
