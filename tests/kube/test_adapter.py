"""The Kubernetes adapter against the emulated API server (real HTTP, the official client): the first list mirrors
every kind (ResourceQuota weights, PriorityClasses, quota groups), watch events keep the mirror current. A session's
bindings and the statuses written back run against a real kube-apiserver in ``tests/kube/real/``."""

from __future__ import annotations

from typing import Any

from engine.resources import parse_resource_list
from tests.kube.conftest import elastic_quota, node, pod, podgroup, queue, wait_for


def _world(seed: Any) -> None:
    seed.priority_class("high", 1000)
    seed.queue(queue("research", weight=2, deserved={"cpu": "8"}, capability={"cpu": "16"}))
    seed.queue(queue("ml", parent="research", weight=1, deserved={"cpu": "8"}))
    seed.namespace("team-ml", queue_name="ml")
    seed.resource_quota("team-ml", {"volcano.sh/namespace.weight": "3", "requests.cpu": "32"})
    seed.elastic_quota(elastic_quota("qml", "team-ml", min={"cpu": "4"}, max={"cpu": "16"}, namespaces=("team-ml",)))
    seed.node(node("n1"))
    seed.node(node("n2", cpu="4"))
    seed.podgroup(podgroup("team-ml", "train", "ml", min_member=2, minResources={"cpu": "2"}))
    seed.pod(pod("team-ml", "train-0", group="train", priorityClassName="high"))
    seed.pod(pod("team-ml", "train-1", group="train", priorityClassName="high"))
    seed.pod(pod("team-ml", "other", scheduler="default-scheduler"))


def test_the_first_list_mirrors_every_kind(kcluster: Any, seed: Any, make_adapter: Any) -> None:
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Node, Pod, PodGroup

    kcluster.tree_source = "kubernetes"
    kcluster.save()
    _world(seed)
    adapter = make_adapter()
    out = adapter.reconcile()
    assert out is not None and out["mirrored"].problems == {}
    assert sorted(Node.objects.filter(cluster=kcluster).values_list("name", flat=True)) == ["n1", "n2"]
    n2 = Node.objects.get(cluster=kcluster, name="n2")
    assert n2.allocatable["cpu"] == 4000 and n2.ready and n2.labels == {"zone": "a"}
    ml = Queue.objects.get(name="ml")
    assert (ml.parent.name, ml.weight, ml.deserved) == ("research", 1, parse_resource_list({"cpu": "8"}))
    assert Queue.objects.get(name="research").capability == parse_resource_list({"cpu": "16"})
    ns = Namespace.objects.get(name="team-ml")
    assert (ns.weight, ns.default_queue.name, ns.hard) == (3, "ml", parse_resource_list({"cpu": "32"}))
    qml = QuotaGroup.objects.get(name="qml")
    assert qml.max == parse_resource_list({"cpu": "16"}) and ns.quota_group_id == qml.pk
    pg = PodGroup.objects.get(cluster=kcluster, name="train")
    assert (pg.queue.name, pg.min_member, pg.phase) == ("ml", 2, "Pending")
    pods = {p.name: p for p in Pod.objects.filter(cluster=kcluster)}
    assert sorted(pods) == ["train-0", "train-1"]  # the other scheduler's pod is not Fairway's
    assert pods["train-0"].priority == 1000 and pods["train-0"].podgroup_id == pg.pk
    assert pods["train-0"].quota_group_id == qml.pk and pods["train-0"].status == "Pending"


def _pods(adapter: Any) -> Any:
    """The adapter's informer of pods."""
    return next(i for i in adapter.informers if i.kind.plural == "pods")


def test_watch_events_update_the_mirror(kcluster: Any, seed: Any, make_adapter: Any, kube: Any) -> None:
    from kubernetes import client as k8s

    from scheduling.models import Node, Pod

    _world(seed)
    adapter = make_adapter()
    adapter.reconcile()
    core = k8s.CoreV1Api(kube)
    seed.node(node("n3", cpu="2"))
    core.patch_node("n1", {"metadata": {"labels": {"zone": "b"}}})
    core.delete_node("n2")
    seed.pod(pod("team-ml", "late"))
    nodes = next(i for i in adapter.informers if i.kind.plural == "nodes")
    wait_for(lambda: len(nodes.cache) == 2 and "late" in str(_pods(adapter).cache), what="the watch events")
    assert nodes.lists == 1  # nothing was listed again: the watch brought it
    adapter.reconcile()
    assert sorted(Node.objects.filter(cluster=kcluster).values_list("name", "labels__zone")) == [
        ("n1", "b"), ("n3", "a")]  # fmt: skip
    assert Pod.objects.filter(cluster=kcluster, name="late", status="Pending").exists()
    core.delete_namespaced_pod("late", "team-ml")
    wait_for(lambda: "late" not in str(_pods(adapter).cache), what="the deletion")
    adapter.reconcile()
    assert not Pod.objects.filter(cluster=kcluster, name="late").exists()
