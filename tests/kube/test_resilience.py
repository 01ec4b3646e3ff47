"""The adapter against the emulated API server where the real one cannot show it: a watch connection dropped
mid-stream (resumed from its last version), an invalid object's Event and Fairway's trees written (not yet ported),
and the trees' owner (no server involved). 410 Gone after a compaction, bookmarks, 409 on a status write, evictions
refused by a PodDisruptionBudget, a real preemption's eviction and the Lease takeover run against a real
kube-apiserver in ``tests/kube/real/``."""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from tests.kube.conftest import node, pod, podgroup, queue, wait_for


def _small(seed: Any) -> None:
    from engine.resources import parse_resource_list
    from quotas import services

    if not services.Queue.objects.filter(name="ml").exists():  # Fairway's queue (tree_source=fairway, the default)
        services.save_queue(None, {"name": "ml", "deserved": parse_resource_list({"cpu": "8"})})
    seed.queue(queue("ml", deserved={"cpu": "8"}))
    seed.namespace("team-ml", queue_name="ml")
    seed.node(node("n1"))
    seed.node(node("n2"))
    seed.podgroup(podgroup("team-ml", "train", "ml", min_member=1))
    seed.pod(pod("team-ml", "train-0", group="train", labels={"app": "train"}))


def _informer(adapter: Any, plural: str) -> Any:
    return next(i for i in adapter.informers if i.kind.plural == plural)


def test_a_dropped_watch_resumes_from_its_last_version(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any
) -> None:
    _small(seed)
    adapter = make_adapter()
    pods = _informer(adapter, "pods")
    seed.pod(pod("team-ml", "p1"))
    wait_for(lambda: "team-ml/p1" in pods.cache)
    version, watches = pods.resource_version, pods.watches
    emulator.call(emulator.emulator.drop_watches)
    seed.pod(pod("team-ml", "p2"))
    wait_for(lambda: "team-ml/p2" in pods.cache and pods.watches > watches, what="the resumed watch")
    assert pods.lists == 1  # resumed, not listed again
    resumed = [q for v, _, plural, _, q in emulator.verbs() if v == "watch" and plural == "pods"]
    assert any(q.get("resourceVersion") == version for q in resumed[1:])
    assert all(q.get("allowWatchBookmarks") == "true" for q in resumed)


def test_an_invalid_queue_is_recorded_and_not_half_applied(
    kcluster: Any, seed: Any, make_adapter: Any, kube: Any, emulator: Any
) -> None:
    from quotas.models import Queue
    from scheduling.models import KubeObjectProblem

    _small(seed)
    kcluster.tree_source = "kubernetes"
    kcluster.save()
    seed.queue(queue("bad", weight=3, deserved={"cpu": "8"}, capability={"cpu": "4"}))
    adapter = make_adapter()
    adapter.reconcile()
    assert not Queue.objects.filter(name="bad").exists()
    problem = KubeObjectProblem.objects.get(cluster=kcluster, kind="Queue", name="bad")
    assert "capability" in problem.message and "deserved" in problem.message, problem.message
    events = emulator.objects("", "events")
    assert [(e["reason"], e["involvedObject"]["name"], e["type"]) for e in events] == [
        ("FairwayInvalid", "bad", "Warning")]  # fmt: skip
    assert events[0]["message"] == problem.message and problem.event_sent
    # a valid queue made invalid keeps what it had: nothing of the bad version is written
    custom = k8s.CustomObjectsApi(kube)
    patch = {"spec": {"weight": 9, "capability": {"cpu": "1"}}}
    custom.patch_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", "ml", patch,
                                       _content_type="application/merge-patch+json")  # fmt: skip
    queues = _informer(adapter, "queues")
    wait_for(lambda: queues.cache["ml"]["spec"]["weight"] == 9)
    adapter.reconcile()
    ml = Queue.objects.get(name="ml")
    assert ml.weight == 1 and not ml.capability
    assert KubeObjectProblem.objects.filter(cluster=kcluster, kind="Queue", name="ml").exists()
    # fixed in the cluster: applied, and the problem goes
    custom.patch_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", "bad",
                                       {"spec": {"capability": {"cpu": "16"}}},
                                       _content_type="application/merge-patch+json")  # fmt: skip
    wait_for(lambda: queues.cache["bad"]["spec"]["capability"]["cpu"] == "16")
    adapter.reconcile()
    assert Queue.objects.get(name="bad").weight == 3
    assert not KubeObjectProblem.objects.filter(cluster=kcluster, name="bad").exists()


def test_trees_owned_by_the_cluster_refuse_the_api_s_writes(
    kcluster: Any, admin_api: Any, seed: Any, make_adapter: Any
) -> None:
    from quotas import services

    services.save_queue(None, {"name": "before", "weight": 1})  # Fairway owns them: writable
    kcluster.tree_source = "kubernetes"
    kcluster.save()
    response = admin_api.post("/api/v1/queues/", {"name": "x", "weight": 1}, format="json")
    assert response.status_code == 409, response.content
    detail = response.json()["errors"][0]["detail"]
    assert "cluster k1 owns them" in detail and "tree_source=kubernetes" in detail
    assert admin_api.delete("/api/v1/queues/before/").status_code == 409
    assert admin_api.get("/api/v1/queues/before/").status_code == 200  # reads are fine


def test_only_one_cluster_may_own_the_trees(kcluster: Any) -> None:
    import pytest
    from django.core.exceptions import ValidationError

    from scheduling.models import Cluster

    kcluster.tree_source = "kubernetes"
    kcluster.save()
    other = Cluster(name="k2", source="kubernetes", tree_source="kubernetes")
    with pytest.raises(ValidationError, match="cluster k1 already owns the trees"):
        other.save()
    with pytest.raises(ValidationError, match="only a cluster with source=kubernetes"):
        Cluster(name="k3", tree_source="kubernetes").save()


def test_fairway_owned_trees_are_written_to_the_cluster(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any
) -> None:
    from quotas import services
    from tests.scheduling.conftest import rl

    services.save_queue(None, {"name": "eng", "weight": 2, "deserved": rl(cpu="4")})
    services.save_quota_group(None, {"name": "qeng", "min": rl(cpu="2"), "max": rl(cpu="8")})
    seed.node(node("n1"))
    adapter = make_adapter()
    out = adapter.reconcile()
    assert out["sent"]["tree_written"] >= 2
    q = emulator.get("scheduling.volcano.sh", "queues", "", "eng")
    assert q["spec"]["weight"] == 2 and q["spec"]["deserved"] == {"cpu": "4"}
    assert q["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "fairway"
    eq = emulator.get("scheduling.sigs.k8s.io", "elasticquotas", "default", "qeng")
    assert eq["spec"]["max"] == {"cpu": "8"}
    services.delete_queue(services.Queue.objects.get(name="eng"))
    wait_for(lambda: "eng" in _informer(adapter, "queues").cache)
    adapter.reconcile()
    assert emulator.get("scheduling.volcano.sh", "queues", "", "eng") is None
