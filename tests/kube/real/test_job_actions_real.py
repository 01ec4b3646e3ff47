"""Job actions against the real API server, as the ServiceAccount of ``deploy/kubernetes/rbac.yaml`` (RBAC enforced):
a requeue's evictions go through the real Eviction API, and a delete is carried out by the adapter (the pods, then the
PodGroup, deleted there), after which the job is recorded as removed by the person who asked."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import ADAPTER_NAMESPACE, make_cluster
from tests.support.kube_apiserver import ControlPlane


def test_requeue_and_delete_through_the_real_api_server(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, adapter_token: str, tag: str, kubelets: Any,
    make_adapter: Any,
) -> None:  # fmt: skip
    from scheduling import job_actions, tasks
    from scheduling.models import Eviction, PodGroup, RemovedJob

    cluster = make_cluster(control_plane.kubeconfig(adapter_token), tag)
    seed, ns = Seeder(admin), f"ns-{tag}"
    seed.queue(queue(f"q-{tag}"))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.podgroup(podgroup(ns, "train", f"q-{tag}", min_member=2))
    for name in ("train-0", "train-1"):
        seed.pod(pod(ns, name, group="train", scheduler=cluster.scheduler_name))
    kubelet = kubelets({f"n-{tag}": {"cpu": "8", "memory": "32Gi", "pods": "110"}})
    adapter = make_adapter(cluster, lease_namespace=ADAPTER_NAMESPACE)
    adapter.reconcile()
    assert tasks.run_session(cluster.pk) == "ran"
    out = adapter.reconcile()
    assert out is not None and out["sent"]["bound"] == 2, out
    kubelet.sync()
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    wait_for(lambda: all((pods.cache.get(f"{ns}/train-{i}") or {}).get("status", {}).get("phase") == "Running"
                         for i in range(2)), what="the Running pods")  # fmt: skip
    adapter.reconcile()
    # (the API server is shared by the module's tests: another namespace may hold a "train" too)
    pg = PodGroup.objects.get(cluster=cluster, namespace__name=ns, name="train")

    done = job_actions.requeue(pg, None, timezone.now())
    assert done.released == 2
    out = adapter.reconcile()
    assert out is not None and out["problems"] == [] and out["sent"]["evicted"] == 2, out
    assert set(Eviction.objects.filter(cluster=cluster, action="requeue").values_list("api_status", flat=True)) == {
        "done"
    }
    assert sorted(kubelet.sync()["deleted"]) == [f"{ns}/train-0", f"{ns}/train-1"]  # the kubelet stops them

    core = k8s.CoreV1Api(admin)
    seed.pod(pod(ns, "train-2", group="train", scheduler=cluster.scheduler_name))  # the job's controller, again
    wait_for(lambda: f"{ns}/train-2" in pods.cache, what="the new pod")
    adapter.reconcile()
    done = job_actions.delete(PodGroup.objects.get(pk=pg.pk), None, timezone.now())
    assert done.pending
    out = adapter.reconcile()
    assert out is not None and out["problems"] == [] and out["sent"]["jobs_deleted"] == 1, out
    podgroups = next(i for i in adapter.informers if i.kind.plural == "podgroups")
    wait_for(lambda: f"{ns}/train" not in podgroups.cache, what="the PodGroup gone")
    wait_for(lambda: not [k for k in pods.cache if k.startswith(f"{ns}/")], what="the pods gone")
    assert [p.metadata.name for p in core.list_namespaced_pod(ns).items if not p.metadata.deletion_timestamp] == []
    adapter.reconcile()
    assert not PodGroup.objects.filter(pk=pg.pk).exists()
    assert RemovedJob.objects.get(cluster=cluster, namespace=ns, name="train").cause == "deleted"
