"""The Kubernetes adapter against the real API server: its first lists mirror the objects, a real scheduling session
binds the pods through the Binding subresource, and the server's watch brings the bound pods back.

The server is shared by the session's tests: this one's objects carry the ``real-`` prefix and its pods their own
scheduler name, so it reads none of the other tests' pods."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, node, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane

SCHEDULER = "fairway-real"


@pytest.fixture
def real_cluster(db: Any, control_plane: ControlPlane) -> Any:
    return make_cluster(control_plane.kubeconfig(), "", name="real1", scheduler_name=SCHEDULER)


@pytest.fixture
def admin(control_plane: ControlPlane) -> Iterator[k8s.ApiClient]:
    with control_plane.api_client() as api:
        yield api


def _node(core: k8s.CoreV1Api, name: str, cpu: str) -> None:
    """A Ready node: the object as a kubelet registers it, then its status through the status subresource.

    The server's TaintNodesByCondition admission gives a new node the ``node.kubernetes.io/not-ready`` NoSchedule
    taint, which kube-controller-manager's node lifecycle controller takes off once the node is Ready; none runs
    here, so the test takes it off (the session keeps off a tainted node, as kube-scheduler does)."""
    obj = node(name, cpu=cpu)
    made = core.create_node({key: value for key, value in obj.items() if key != "status"})
    assert [t.key for t in made.spec.taints or []] == ["node.kubernetes.io/not-ready"]
    core.patch_node(name, {"spec": {"taints": None}})
    core.patch_node_status(name, {"status": obj["status"]})


def test_the_adapter_mirrors_and_binds_through_the_real_server(
    real_cluster: Any, control_plane: ControlPlane, admin: k8s.ApiClient
) -> None:
    from scheduling import tasks
    from scheduling.kube.adapter import Adapter
    from scheduling.models import Node, Pod, PodGroup

    seed, core = Seeder(admin), k8s.CoreV1Api(admin)
    seed.queue(queue("real-research", weight=2, deserved={"cpu": "8"}, capability={"cpu": "16"}))
    seed.queue(queue("real-ml", parent="real-research", deserved={"cpu": "8"}))
    seed.namespace("real-ml", queue_name="real-ml")
    _node(core, "real-n1", cpu="8")
    seed.podgroup(podgroup("real-ml", "train", "real-ml", min_member=2))
    for name in ("train-0", "train-1"):
        seed.pod(pod("real-ml", name, group="train", scheduler=SCHEDULER))
    seed.pod(pod("real-ml", "someone-elses", scheduler="default-scheduler"))

    adapter = Adapter(real_cluster, identity="real-a1", lease_namespace="kube-system", lease_seconds=5.0,
                      renew_seconds=0.5, watch_seconds=5)  # fmt: skip
    try:
        adapter.start_informers()
        wait_for(adapter.synced, what="the first lists")
        assert adapter.reconcile() is not None  # the Lease taken, the caches mirrored
        n1 = Node.objects.get(cluster=real_cluster, name="real-n1")
        assert n1.allocatable["cpu"] == 8000 and n1.ready
        assert sorted(Pod.objects.filter(cluster=real_cluster).values_list("name", "status")) == [
            ("train-0", "Pending"), ("train-1", "Pending")]  # fmt: skip
        assert (
            PodGroup.objects.get(cluster=real_cluster, namespace__name="real-ml", name="train").queue.name == "real-ml"
        )

        assert tasks.run_session(real_cluster.pk) == "ran"
        bound = dict(Pod.objects.filter(cluster=real_cluster, status="Bound").values_list("name", "node__name"))
        assert bound == {"train-0": "real-n1", "train-1": "real-n1"}
        out = adapter.reconcile()
        assert out is not None and out["sent"]["bound"] == 2
        for name in bound:  # what the server holds, read back
            assert core.read_namespaced_pod(name, "real-ml").spec.node_name == "real-n1"
        assert core.read_namespaced_pod("someone-elses", "real-ml").spec.node_name is None
        # the PodGroup's status changed on the server: Volcano's CRD has no status subresource (…/status is a 404),
        # so the adapter writes it with the object, as Volcano's controllers do
        assert out["problems"] == []
        group = k8s.CustomObjectsApi(admin).get_namespaced_custom_object(
            "scheduling.volcano.sh", "v1beta1", "real-ml", "podgroups", "train")  # fmt: skip
        assert (group["status"]["phase"], group["status"]["running"]) == ("Running", 2)
        assert group["status"]["conditions"][0]["type"] == "Scheduled"

        pods = next(i for i in adapter.informers if i.kind.plural == "pods")
        wait_for(lambda: all((pods.cache.get(f"real-ml/{n}") or {}).get("spec", {}).get("nodeName") == "real-n1"
                             for n in bound), what="the watch to bring the bindings")  # fmt: skip
        assert pods.lists == 1  # the watch brought them, nothing was listed again
        again = adapter.reconcile()
        assert again is not None and again["sent"].get("bound", 0) == 0  # a bound pod is not bound twice
    finally:
        adapter.stop_informers()
        adapter.elector.release()
        core.delete_node("real-n1")  # the next tests' sessions must not place pods on a node nobody plays


def test_a_status_write_at_a_stale_version_meets_a_real_409_and_is_retried_on_a_fresh_read(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, tag: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The object changed since the informer cached it: the server refuses the write at the cached version (409),
    the adapter reads the object again and writes the status onto what is there now, keeping the other change."""
    import logging

    from django.utils import timezone

    from scheduling.kube import mirror_out
    from scheduling.kube.client import KIND_BY_PATH

    ns, custom, cluster = f"ns-{tag}", k8s.CustomObjectsApi(admin), make_cluster(control_plane.kubeconfig(), tag)
    Seeder(admin).namespace(ns)
    Seeder(admin).podgroup(podgroup(ns, "train", "default"))
    for plural in ("podgroups", "queues"):  # one kind written with the object, one through …/status
        kind = KIND_BY_PATH[("scheduling.volcano.sh", plural)]
        if plural == "queues":
            Seeder(admin).queue(queue(f"q-{tag}"))
            stale = custom.get_cluster_custom_object(kind.group, kind.version, plural, f"q-{tag}")
            custom.patch_cluster_custom_object(kind.group, kind.version, plural, f"q-{tag}",
                                               {"metadata": {"labels": {"edited": "meanwhile"}}})  # fmt: skip
        else:
            stale = custom.get_namespaced_custom_object(kind.group, kind.version, ns, plural, "train")
            custom.patch_namespaced_custom_object(kind.group, kind.version, ns, plural, "train",
                                                  {"metadata": {"labels": {"edited": "meanwhile"}}})  # fmt: skip
        sender = mirror_out.Sender(admin, cluster, {}, timezone.now())
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="scheduling.kube.mirror_out"):
            assert sender.write_status(kind, stale, {"state": "Open"} if plural == "queues" else {"phase": "Inqueue"})
        assert any("conflict on status, reading it again" in r.getMessage() for r in caplog.records)
        now = (custom.get_cluster_custom_object(kind.group, kind.version, plural, f"q-{tag}") if plural == "queues"
               else custom.get_namespaced_custom_object(kind.group, kind.version, ns, plural, "train"))  # fmt: skip
        assert now["metadata"]["labels"] == {"edited": "meanwhile"}
        assert now["status"].get("state" if plural == "queues" else "phase") == (
            "Open" if plural == "queues" else "Inqueue")  # fmt: skip
