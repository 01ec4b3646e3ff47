"""The adapter under the API server's failure modes: 410 Gone, a dropped watch connection, a 409 on a status write,
a PodDisruptionBudget refusing an eviction, two adapters on one Lease, an invalid object, and the trees' owner."""

from __future__ import annotations

import copy
import time
from datetime import timedelta
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


def test_410_gone_lists_again_and_loses_nothing(kcluster: Any, seed: Any, make_adapter: Any, emulator: Any) -> None:
    from scheduling.models import Node, Pod

    _small(seed)
    adapter = make_adapter()
    adapter.reconcile()
    pods, nodes = _informer(adapter, "pods"), _informer(adapter, "nodes")
    emu = emulator.emulator

    def changes_then_compaction() -> None:  # the events of these changes are compacted away before anyone saw them
        emu.put_quietly(("", "pods", "team-ml", "late"), pod("team-ml", "late"))
        emu.put_quietly(("", "nodes", "", "n2"), None)
        emu.compact()
        emu.drops += 1  # the watches end, and resume from a version older than the compaction

    emulator.call(changes_then_compaction)
    wait_for(lambda: all(i.lists >= 2 for i in adapter.informers),
             what=f"the lists after 410 Gone: {[(i.kind.plural, i.lists) for i in adapter.informers]}")  # fmt: skip
    assert "team-ml/late" in pods.cache and "n2" not in nodes.cache
    adapter.reconcile()
    assert Pod.objects.filter(cluster=kcluster, name="late").exists()
    assert list(Node.objects.filter(cluster=kcluster).values_list("name", flat=True)) == ["n1"]
    seed.pod(pod("team-ml", "after"))  # and the new watch works
    wait_for(lambda: "team-ml/after" in pods.cache, what="an event after the new list")


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


def test_bookmarks_move_the_version_of_a_quiet_watch(kcluster: Any, seed: Any, make_adapter: Any) -> None:
    _small(seed)
    adapter = make_adapter()
    queues = _informer(adapter, "queues")
    before = int(queues.resource_version)
    seed.pod(pod("team-ml", "p9"))  # another kind's change: the queues' watch hears of it by a bookmark only
    wait_for(lambda: int(queues.resource_version) > before, what="a bookmark")


def test_a_conflict_on_a_status_write_is_retried_on_a_fresh_read(
    kcluster: Any, seed: Any, make_adapter: Any, kube: Any, emulator: Any
) -> None:
    from scheduling.kube import mirror_out

    _small(seed)
    adapter = make_adapter()
    adapter.reconcile()
    stale = adapter.caches()
    custom = k8s.CustomObjectsApi(kube)
    custom.patch_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", "team-ml", "podgroups", "train",
                                          {"metadata": {"labels": {"edited": "meanwhile"}}, "status": {"phase": "X"}},
                                          _content_type="application/merge-patch+json")  # fmt: skip
    sender = mirror_out.Sender(kube, kcluster, stale, adapter.cluster.created)
    obj = stale[mirror_out.cache_key("scheduling.volcano.sh", "podgroups")][0]
    kind = next(i.kind for i in adapter.informers if i.kind.plural == "podgroups")
    assert sender.write_status(kind, obj, {"phase": "Inqueue", "running": 0})
    now = emulator.get("scheduling.volcano.sh", "podgroups", "team-ml", "train")
    assert now["status"]["phase"] == "Inqueue" and now["metadata"]["labels"] == {"edited": "meanwhile"}
    calls = [(v, s) for v, _, plural, s, _ in emulator.verbs() if plural == "podgroups" and v in ("get", "update")]
    assert calls[-3:] == [("update", "status"), ("get", ""), ("update", "status")]  # 409, fresh read, write


def test_an_eviction_goes_through_the_eviction_api_and_a_pdb_refusal_is_recorded(
    kcluster: Any, seed: Any, make_adapter: Any, kube: Any, emulator: Any
) -> None:
    from django.utils import timezone

    from scheduling import tasks
    from scheduling.models import Eviction, Pod

    _small(seed)
    k8s.PolicyV1Api(kube).create_namespaced_pod_disruption_budget("team-ml", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-train"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "train"}}}})  # fmt: skip
    adapter = make_adapter()
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    adapter.reconcile()
    emulator.call(_run_pod, emulator.emulator, "train-0")
    pods = _informer(adapter, "pods")
    wait_for(lambda: pods.cache["team-ml/train-0"]["status"]["phase"] == "Running")
    out = adapter.reconcile()
    assert out["mirrored"].problems == {}
    row = Pod.objects.get(cluster=kcluster, name="train-0")
    assert row.status == "Running"
    # a session's eviction, as store.apply_decisions writes it: Releasing, with its Eviction row
    Pod.objects.filter(pk=row.pk).update(status="Releasing", reason="Evicted")
    Eviction.objects.create(cluster=kcluster, pod=row, pod_uid="team-ml/train-0", namespace="team-ml", node="n1",
                            action="reclaim", reason="reclaim", message="for queue other", created=timezone.now())  # fmt: skip
    out = adapter.reconcile()
    assert out["sent"].get("eviction_refused") == 1
    eviction = Eviction.objects.get(pod=row)
    assert eviction.api_status == "refused" and eviction.api_attempts == 1
    assert "disruption budget" in eviction.api_refusal and "keep-train" in eviction.api_refusal
    assert emulator.get("", "pods", "team-ml", "train-0") is not None
    assert Pod.objects.get(pk=row.pk).status == "Releasing"  # still holding its node
    adapter.reconcile()
    assert Eviction.objects.get(pod=row).api_attempts == 1  # not before its retry time
    k8s.PolicyV1Api(kube).delete_namespaced_pod_disruption_budget("keep-train", "team-ml")
    Eviction.objects.filter(pk=eviction.pk).update(api_retry_at=timezone.now() - timedelta(seconds=1))
    out = adapter.reconcile()
    assert out["sent"].get("evicted") == 1 and Eviction.objects.get(pod=row).api_status == "done"
    assert emulator.get("", "pods", "team-ml", "train-0") is None
    wait_for(lambda: "team-ml/train-0" not in pods.cache)
    adapter.reconcile()
    row.refresh_from_db()
    assert (row.status, row.reason) == ("Failed", "Evicted")
    evictions = [(v, s) for v, _, plural, s, _ in emulator.verbs() if plural == "pods" and s == "eviction"]
    assert evictions == [("create", "eviction"), ("create", "eviction")]


async def _run_pod(emu: Any, name: str) -> None:
    key = ("", "pods", "team-ml", name)
    obj = copy.deepcopy(emu.store[key])
    obj["status"] = {"phase": "Running"}
    await emu.write(key, "MODIFIED", obj)


def test_one_adapter_acts_the_other_takes_over_when_the_lease_expires(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any
) -> None:
    _small(seed)
    first = make_adapter("first", lease_seconds=1.0)
    second = make_adapter("second", lease_seconds=1.0)
    assert first.reconcile() is not None
    assert second.reconcile() is None  # stands by
    assert first.reconcile() is not None
    time.sleep(0.3)
    assert second.reconcile() is None and first.reconcile() is not None  # renewed: still the first's
    # the first stops renewing (as if it hung or died): once the second has seen the same record for a whole
    # lease duration (its own clock, as client-go: the holder's timestamps are not trusted), it takes over
    time.sleep(0.5)
    assert second.reconcile() is None
    time.sleep(1.1)
    assert second.reconcile() is not None
    assert first.reconcile() is None
    lease = emulator.get("coordination.k8s.io", "leases", "kube-system", "fairway-adapter-k1")
    assert lease["spec"]["holderIdentity"] == "second" and lease["spec"]["leaseTransitions"] == 1


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


def test_a_real_sessions_preemption_is_sent_through_the_eviction_api(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any
) -> None:
    """No row written by hand: a low-priority job fills the only node, a high-priority one of the same queue
    arrives, a real session (with ``preempt``) evicts the low one, the adapter sends the eviction, the pod leaves the
    API server and comes back as Failed/Evicted; the next session binds the high-priority pod through the API."""
    from scheduling import tasks
    from scheduling.models import Cluster, Eviction, Pod, PodGroup

    Cluster.objects.filter(pk=kcluster.pk).update(
        scheduler_policy='actions: "enqueue, allocate, preempt"\n'
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n"
        "- plugins:\n  - name: predicates\n  - name: nodeorder\n"
    )
    from quotas import services

    services.save_queue(None, {"name": "ml"})  # Fairway's queue (tree_source=fairway, the default)
    seed.namespace("team-ml", queue_name="ml")
    seed.priority_class("low", 1)
    seed.priority_class("high", 1000)
    seed.node(node("n1", cpu="4"))
    seed.podgroup(podgroup("team-ml", "batch", "ml", priorityClassName="low"))
    seed.pod(pod("team-ml", "batch-0", cpu="4", group="batch", priorityClassName="low"))
    adapter = make_adapter()
    pods = _informer(adapter, "pods")
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    adapter.reconcile()  # the binding goes out
    wait_for(lambda: pods.cache["team-ml/batch-0"]["spec"].get("nodeName") == "n1", what="the binding")
    emulator.call(_run_pod, emulator.emulator, "batch-0")
    wait_for(lambda: pods.cache["team-ml/batch-0"]["status"]["phase"] == "Running", what="the pod to run")
    adapter.reconcile()
    seed.podgroup(podgroup("team-ml", "urgent", "ml", priorityClassName="high"))
    seed.pod(pod("team-ml", "urgent-0", cpu="4", group="urgent", priorityClassName="high"))
    wait_for(lambda: "team-ml/urgent-0" in pods.cache, what="the urgent pod")
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    eviction = Eviction.objects.get(pod__name="batch-0")
    assert eviction.action == "preempt" and "urgent" in eviction.message
    assert Pod.objects.get(cluster=kcluster, name="batch-0").status == "Releasing"
    urgent = PodGroup.objects.get(cluster=kcluster, name="urgent")
    assert (
        urgent.reason == "Pipelined" and "waiting for pods being evicted or released on 1 node (n1)" in urgent.message
    )
    out = adapter.reconcile()
    assert out["sent"].get("evicted") == 1 and Eviction.objects.get(pk=eviction.pk).api_status == "done"
    wait_for(lambda: "team-ml/batch-0" not in pods.cache, what="the evicted pod to leave the API server")
    adapter.reconcile()
    assert (lambda p: (p.status, p.reason))(Pod.objects.get(cluster=kcluster, name="batch-0")) == ("Failed", "Evicted")
    tasks.run_session(kcluster.pk)
    adapter.reconcile()
    wait_for(lambda: pods.cache["team-ml/urgent-0"]["spec"].get("nodeName") == "n1", what="the urgent pod's binding")
    evictions = [(v, s) for v, _, plural, s, _ in emulator.verbs() if plural == "pods" and s == "eviction"]
    assert evictions == [("create", "eviction")]
