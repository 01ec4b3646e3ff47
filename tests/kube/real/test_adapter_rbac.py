"""The adapter as the ServiceAccount of ``deploy/kubernetes/rbac.yaml`` against the real API server, which enforces
RBAC: a full pass (lists, watches, the Lease in namespace ``fairway``, bindings, the statuses of every peer kind)
meets no refusal; with one verb taken out of the ClusterRole, the server's real 403 is reported naming the verb and
the resource. Pods are started and ended by stand-in kubelets through the API (``tests/support/kube_kubelet.py``).

The statuses are written the way each CRD allows: Volcano's PodGroup and Koordinator's ElasticQuota have no status
subresource (``…/status`` is a 404 there), so they are written with the object; Volcano's Queue and
scheduler-plugins' ElasticQuota through ``…/status``."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, elastic_quota, pod, podgroup, queue, wait_for
from tests.kube.real.conftest import (
    ADAPTER_NAMESPACE,
    apply_rbac,
    make_cluster,
    rbac_documents,
)
from tests.support.kube_apiserver import ControlPlane

VOLCANO, KOORD, PLUGINS = ("scheduling.volcano.sh", "v1beta1"), ("scheduling.sigs.k8s.io", "v1alpha1"), (
    "scheduling.x-k8s.io", "v1alpha1")  # fmt: skip


def _world(admin: k8s.ApiClient, tag: str, scheduler: str) -> str:
    seed, ns = Seeder(admin), f"ns-{tag}"
    seed.queue(queue(f"q-{tag}", deserved={"cpu": "8"}))
    seed.namespace(ns, queue_name=f"q-{tag}")
    seed.elastic_quota(elastic_quota(f"eq-{tag}", "default", min={"cpu": "1"}, max={"cpu": "4"}))
    k8s.CustomObjectsApi(admin).create_namespaced_custom_object(*PLUGINS, ns, "elasticquotas", {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota", "metadata": {"name": ns},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "8"}}})  # fmt: skip
    seed.podgroup(podgroup(ns, "train", f"q-{tag}", min_member=2))
    for name in ("train-0", "train-1"):
        seed.pod(pod(ns, name, group="train", scheduler=scheduler))
    return ns


def _status(admin: k8s.ApiClient, group: tuple[str, str], plural: str, ns: str, name: str) -> dict[str, Any]:
    custom = k8s.CustomObjectsApi(admin)
    if ns:
        return dict(custom.get_namespaced_custom_object(*group, ns, plural, name))
    return dict(custom.get_cluster_custom_object(*group, plural, name))


def test_the_service_account_of_rbac_yaml_runs_a_full_pass_and_writes_every_status(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, adapter_token: str, tag: str, kubelets: Any,
    make_adapter: Any,
) -> None:  # fmt: skip
    from scheduling import tasks
    from scheduling.models import Pod, PodGroup

    cluster = make_cluster(control_plane.kubeconfig(adapter_token), tag)
    ns = _world(admin, tag, cluster.scheduler_name)
    kubelet = kubelets({f"n-{tag}": {"cpu": "8", "memory": "32Gi", "pods": "110"}})
    adapter = make_adapter(cluster, lease_namespace=ADAPTER_NAMESPACE)
    first = adapter.reconcile()
    assert first is not None and first["problems"] == [], first["problems"]
    assert tasks.run_session(cluster.pk) == "ran"
    out = adapter.reconcile()
    assert out is not None and out["problems"] == [] and out["sent"]["bound"] == 2, out
    core = k8s.CoreV1Api(admin)
    assert {core.read_namespaced_pod(n, ns).spec.node_name for n in ("train-0", "train-1")} == {f"n-{tag}"}

    # the PodGroup's status changed on the server (its CRD has no status subresource: written with the object)
    pg = _status(admin, VOLCANO, "podgroups", ns, "train")
    assert (
        pg["status"]["phase"]
        == PodGroup.objects.get(cluster=cluster, namespace__name=ns, name="train").phase
        == "Running"
    )
    assert pg["status"]["running"] == 2 and pg["status"]["conditions"][0]["type"] == "Scheduled"
    assert pg["spec"]["minMember"] == 2  # the spec as it was
    q = _status(admin, VOLCANO, "queues", "", f"q-{tag}")["status"]  # through queues/status
    assert (q["state"], q["running"], q["allocated"]["cpu"]) == ("Open", 1, "2")
    koord = _status(admin, KOORD, "elasticquotas", "default", f"eq-{tag}")  # with the object (no subresource)
    assert "used" in koord["status"]
    assert "quota.scheduling.koordinator.sh/runtime" in koord["metadata"]["annotations"]
    plugins = _status(admin, PLUGINS, "elasticquotas", ns, ns)["status"]  # through elasticquotas/status
    assert plugins["used"]["cpu"] == "2"

    # the kubelets start the pods, then one succeeds and one fails: the watch brings each phase, the mirror follows
    assert sorted(kubelet.sync()["started"]) == [f"{ns}/train-0", f"{ns}/train-1"]
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")

    def phases() -> set[str]:
        return {(pods.cache.get(f"{ns}/{n}") or {}).get("status", {}).get("phase") for n in ("train-0", "train-1")}

    wait_for(lambda: phases() == {"Running"}, what="the Running pods")
    adapter.reconcile()
    assert set(Pod.objects.filter(cluster=cluster).values_list("status", flat=True)) == {"Running"}
    kubelet.finish([(ns, "train-0")], "Succeeded")
    kubelet.finish([(ns, "train-1")], "Failed")
    wait_for(lambda: phases() == {"Succeeded", "Failed"}, what="the finished pods")
    out = adapter.reconcile()
    assert out is not None and out["problems"] == []
    assert dict(Pod.objects.filter(cluster=cluster).values_list("name", "status")) == {
        "train-0": "Succeeded", "train-1": "Failed"}  # fmt: skip
    pg = _status(admin, VOLCANO, "podgroups", ns, "train")["status"]
    assert (pg["running"], pg["succeeded"], pg["failed"]) == (0, 1, 1)
    lease = k8s.CoordinationV1Api(admin).read_namespaced_lease(f"fairway-adapter-{cluster.name}", ADAPTER_NAMESPACE)
    assert lease.spec.holder_identity == "a1"


def _without(docs: list[dict[str, Any]], resource: str, verb: str) -> list[dict[str, Any]]:
    """rbac.yaml's documents with ``verb`` taken off ``resource`` in the ClusterRole (nothing else changed)."""
    out = []
    for doc in docs:
        if doc["kind"] == "ClusterRole":
            rules = []
            for rule in doc["rules"]:
                if resource in rule["resources"] and verb in rule["verbs"]:
                    others = [r for r in rule["resources"] if r != resource]
                    if others:
                        rules.append({**rule, "resources": others})
                    if len(rule["verbs"]) > 1:
                        rules.append(
                            {**rule, "resources": [resource], "verbs": [v for v in rule["verbs"] if v != verb]}
                        )
                else:
                    rules.append(rule)
            assert rules != doc["rules"], f"rbac.yaml grants no {verb} on {resource}"
            doc = {**doc, "rules": rules}
        out.append(doc)
    return out


def test_a_verb_taken_out_of_the_cluster_role_is_a_real_403_reported_by_name(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, adapter_token: str, tag: str, kubelets: Any,
    make_adapter: Any, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    from scheduling import tasks
    from scheduling.models import Pod

    apply_rbac(admin, _without(rbac_documents(), "pods/binding", "create"))
    cluster = make_cluster(control_plane.kubeconfig(adapter_token), tag)
    ns = _world(admin, tag, cluster.scheduler_name)
    kubelets({f"n-{tag}": {"cpu": "8", "memory": "32Gi", "pods": "110"}})
    adapter = make_adapter(cluster, lease_namespace=ADAPTER_NAMESPACE)
    adapter.reconcile()
    tasks.run_session(cluster.pk)
    with caplog.at_level(logging.ERROR, logger="scheduling.kube"):
        out = adapter.reconcile()
    assert out is not None and out.get("sent", {}).get("bound", 0) == 0
    problems = [p for p in out["problems"] if "pods/binding" in p]
    assert len(problems) == 2, out["problems"]
    assert f"binding pod {ns}/train-0" in "\n".join(problems)
    assert 'cannot create resource "pods/binding"' in problems[0]
    assert f"system:serviceaccount:{ADAPTER_NAMESPACE}:fairway-adapter" in problems[0]
    assert "deploy/kubernetes/rbac.yaml" in problems[0]
    assert any('cannot create resource "pods/binding"' in r.getMessage() for r in caplog.records)
    assert k8s.CoreV1Api(admin).read_namespaced_pod("train-0", ns).spec.node_name is None  # refused for real
    assert Pod.objects.get(cluster=cluster, name="train-0").status == "Bound"  # kept: the next pass tries again

    # a read taken away: the informer says which verb on which resource, and the adapter does not act half-blind
    apply_rbac(admin, _without(rbac_documents(), "priorityclasses", "list"))
    other = make_adapter(cluster, identity="a2", start=False, lease_namespace=ADAPTER_NAMESPACE)
    with caplog.at_level(logging.ERROR, logger="scheduling.kube"):
        other.start_informers()
        classes = next(i for i in other.informers if i.kind.plural == "priorityclasses")
        wait_for(lambda: any("priorityclasses" in r.getMessage() and r.levelno == logging.ERROR
                             for r in caplog.records), what="the refused list's log line")  # fmt: skip
    assert 'cannot list resource "priorityclasses" in API group "scheduling.k8s.io"' in classes.problem
    assert "deploy/kubernetes/rbac.yaml" in classes.problem
    assert not other.synced() and classes.problem in other.problems()
