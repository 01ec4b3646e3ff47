"""Evictions through the real Eviction API (policy/v1), with real PodDisruptionBudgets: a budget that allows no
disruption answers 429, which Fairway records on the eviction row and retries after a backoff while the pod stays
Releasing on its node; once the budget allows it the pod is evicted, its stand-in kubelet finishes the graceful
deletion, and the pod comes back as Failed/Evicted. And a real session's preemption, sent the same way.

No kube-controller-manager runs on the session's server, so a budget's ``status`` is never computed: the server
refuses every eviction of a pod it covers (429, "still being processed") — a real refusal, which is what the Fairway
side needs. ``test_kubelets_real.py`` runs the disruption controller and evicts within a computed allowance."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.kube.conftest import Seeder, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane

NODE = {"cpu": "4", "memory": "32Gi", "pods": "110"}


def _running(adapter: Any, kubelet: Any, ns: str, *names: str) -> None:
    """Bound pods started by their kubelet, the phase brought back by the watch and mirrored."""
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    kubelet.sync()
    wait_for(lambda: all((pods.cache.get(f"{ns}/{n}") or {}).get("status", {}).get("phase") == "Running"
                         for n in names), what=f"{names} Running")  # fmt: skip
    adapter.reconcile()


def test_a_budget_refusal_is_recorded_and_retried_then_the_eviction_goes_through(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, tag: str, kubelets: Any, make_adapter: Any,
    admin_api: Any,
) -> None:  # fmt: skip
    from django.utils import timezone

    from scheduling import tasks
    from scheduling.models import Eviction, Pod

    cluster = make_cluster(control_plane.kubeconfig(), tag)
    seed, ns, policy = Seeder(admin), f"ns-{tag}", k8s.PolicyV1Api(admin)
    seed.queue(queue(f"q-{tag}", deserved={"cpu": "4"}))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.podgroup(podgroup(ns, "train", f"q-{tag}"))
    seed.pod(pod(ns, "train-0", group="train", labels={"app": "train"}, scheduler=cluster.scheduler_name))
    policy.create_namespaced_pod_disruption_budget(ns, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-train"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "train"}}}})  # fmt: skip
    kubelet = kubelets({f"n-{tag}": NODE})
    adapter = make_adapter(cluster)
    adapter.reconcile()
    tasks.run_session(cluster.pk)
    adapter.reconcile()
    _running(adapter, kubelet, ns, "train-0")
    row = Pod.objects.get(cluster=cluster, name="train-0")
    assert row.status == "Running"
    # a session's eviction, as store.apply_decisions writes it: Releasing, with its Eviction row
    Pod.objects.filter(pk=row.pk).update(status="Releasing", reason="Evicted")
    Eviction.objects.create(cluster=cluster, pod=row, pod_uid=f"{ns}/train-0", namespace=ns, node=f"n-{tag}",
                            action="reclaim", reason="reclaim", message="for queue other", created=timezone.now())  # fmt: skip

    out = adapter.reconcile()
    assert out is not None and out["sent"].get("eviction_refused") == 1
    eviction = Eviction.objects.get(pod=row)
    assert eviction.api_status == "refused" and eviction.api_attempts == 1
    assert eviction.api_refusal.startswith("429:"), eviction.api_refusal
    assert "disruption budget" in eviction.api_refusal and "keep-train" in eviction.api_refusal
    assert eviction.api_retry_at is not None and eviction.api_retry_at > timezone.now()
    on_server = k8s.CoreV1Api(admin).read_namespaced_pod("train-0", ns)
    assert on_server.metadata.deletion_timestamp is None  # refused for real
    assert Pod.objects.get(pk=row.pk).status == "Releasing"  # still holding its node
    adapter.reconcile()
    assert Eviction.objects.get(pod=row).api_attempts == 1  # not before its retry time
    shown = admin_api.get(f"/api/v1/evictions/?cluster={cluster.name}").json()["results"]  # what people see
    assert [(e["api_status"], e["api_attempts"]) for e in shown] == [("refused", 1)]
    assert "keep-train" in shown[0]["api_refusal"] and shown[0]["api_retry_at"]

    policy.delete_namespaced_pod_disruption_budget("keep-train", ns)
    Eviction.objects.filter(pk=eviction.pk).update(api_retry_at=timezone.now() - timedelta(seconds=1))
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("evicted") == 1
    assert Eviction.objects.get(pod=row).api_status == "done" and Eviction.objects.get(pod=row).api_attempts == 2
    # a bound pod's eviction is a graceful deletion: it is Terminating until its kubelet has stopped it
    assert k8s.CoreV1Api(admin).read_namespaced_pod("train-0", ns).metadata.deletion_timestamp is not None
    assert kubelet.sync()["deleted"] == [f"{ns}/train-0"]
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    wait_for(lambda: f"{ns}/train-0" not in pods.cache, what="the evicted pod to leave the API server")
    adapter.reconcile()
    row.refresh_from_db()
    assert (row.status, row.reason) == ("Failed", "Evicted")
    try:
        k8s.CoreV1Api(admin).read_namespaced_pod("train-0", ns)
        raise AssertionError("the pod is still on the server")
    except ApiException as exc:
        assert exc.status == 404


def test_a_real_sessions_preemption_is_sent_through_the_eviction_api(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, tag: str, kubelets: Any, make_adapter: Any
) -> None:
    """No row written by hand: a low-priority job fills the only node, a high-priority one of the same queue
    arrives, a real session (with ``preempt``) evicts the low one, the adapter sends the eviction, the kubelet stops
    the pod, which comes back as Failed/Evicted; the next session binds the high-priority pod."""
    from scheduling import tasks
    from scheduling.models import Eviction, Pod, PodGroup

    cluster = make_cluster(control_plane.kubeconfig(), tag, scheduler_policy=(
        'actions: "enqueue, allocate, preempt"\n'
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n"
        "- plugins:\n  - name: predicates\n  - name: nodeorder\n"))  # fmt: skip
    seed, ns = Seeder(admin), f"ns-{tag}"
    low, high = f"low-{tag}", f"high-{tag}"
    seed.queue(queue(f"q-{tag}"))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.priority_class(low, 1)
    seed.priority_class(high, 1000)
    scheduling = k8s.SchedulingV1Api(admin)
    try:
        kubelet = kubelets({f"n-{tag}": NODE})
        seed.podgroup(podgroup(ns, "batch", f"q-{tag}", priorityClassName=low))
        seed.pod(pod(ns, "batch-0", cpu="4", group="batch", priorityClassName=low, scheduler=cluster.scheduler_name))
        adapter = make_adapter(cluster)
        pods = next(i for i in adapter.informers if i.kind.plural == "pods")
        adapter.reconcile()
        tasks.run_session(cluster.pk)
        adapter.reconcile()  # the binding goes out
        _running(adapter, kubelet, ns, "batch-0")
        seed.podgroup(podgroup(ns, "urgent", f"q-{tag}", priorityClassName=high))
        seed.pod(pod(ns, "urgent-0", cpu="4", group="urgent", priorityClassName=high,
                     scheduler=cluster.scheduler_name))  # fmt: skip
        wait_for(lambda: f"{ns}/urgent-0" in pods.cache, what="the urgent pod")
        adapter.reconcile()
        tasks.run_session(cluster.pk)
        eviction = Eviction.objects.get(pod__name="batch-0")
        assert eviction.action == "preempt" and "urgent" in eviction.message
        assert Pod.objects.get(cluster=cluster, name="batch-0").status == "Releasing"
        assert PodGroup.objects.get(cluster=cluster, namespace__name=ns, name="urgent").reason == "Pipelined"
        out = adapter.reconcile()
        assert out is not None and out["sent"].get("evicted") == 1
        assert Eviction.objects.get(pk=eviction.pk).api_status == "done"
        assert kubelet.sync()["deleted"] == [f"{ns}/batch-0"]
        wait_for(lambda: f"{ns}/batch-0" not in pods.cache, what="the evicted pod to leave the API server")
        adapter.reconcile()
        batch = Pod.objects.get(cluster=cluster, name="batch-0")
        assert (batch.status, batch.reason) == ("Failed", "Evicted")
        tasks.run_session(cluster.pk)
        adapter.reconcile()
        wait_for(lambda: pods.cache[f"{ns}/urgent-0"]["spec"].get("nodeName") == f"n-{tag}",
                 what="the urgent pod's binding")  # fmt: skip
    finally:
        for name in (low, high):
            scheduling.delete_priority_class(name)
