"""``deploy/kubernetes/rbac.yaml`` grants what the adapter does: every request of a full run against the emulator
(mirror, session, bindings, an eviction, statuses, an invalid object's Event, Fairway's trees written, the lease)
is allowed by its rules, and every verb it grants was used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s

from engine.manifests.kueuepodsets import KUBEFLOW_KINDS
from tests.kube.conftest import elastic_quota, node, pod, podgroup, queue, wait_for

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "rbac.yaml"


def _granted() -> set[tuple[str, str, str]]:
    out = set()
    for doc in yaml.safe_load_all(MANIFEST.read_text()):
        if doc["kind"] in ("ClusterRole", "Role"):
            for rule in doc["rules"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            assert "*" not in (group, resource, verb)
                            out.add((group, resource, verb))
    return out


def _kueue_job(kube: Any, seed: Any) -> str:
    """A LocalQueue of queue ``kjob`` and a Job of 4 pods of 1 core in it (``job-min-parallelism: 1``), with its pods
    as the Job controller makes them (seeded: the emulator runs no controller); returns the Job's name."""
    k8s.CustomObjectsApi(kube).create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "team-ml", "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
        "spec": {"clusterQueue": "kjob"}})  # fmt: skip
    template = pod("team-ml", "template")
    job = k8s.BatchV1Api(kube).create_namespaced_job("team-ml", {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "sample", "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                     "annotations": {"kueue.x-k8s.io/job-min-parallelism": "1"}},
        "spec": {"parallelism": 4, "template": {"spec": template["spec"]}}})  # fmt: skip
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "sample", "uid": job.metadata.uid, "controller": True}
    for i in range(4):
        member = pod("team-ml", f"sample-{i}")
        member["metadata"]["ownerReferences"] = [owner]
        seed.pod(member)
    return "sample"


def _suspended_workloads(kube: Any) -> list[tuple[str, str, str]]:
    """A LocalQueue ``lq2`` of queue ``kwl`` and one suspended workload of each kind Kueue runs as several pod sets
    (a JobSet, each Kubeflow kind, an MPIJob), of one pod of 100m each: admitted from their templates, the adapter
    resumes each (``patch``). Returns their (group, plural, name)."""
    api = k8s.CustomObjectsApi(kube)
    api.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "team-ml", "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq2"},
        "spec": {"clusterQueue": "kwl"}})  # fmt: skip
    template = {"spec": pod("team-ml", "template", cpu="100m")["spec"]}
    meta = {"labels": {"kueue.x-k8s.io/queue-name": "lq2"}}
    made = []
    jobset = {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {"template": template}}}],
              "suspend": True}  # fmt: skip
    api.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "team-ml", "jobsets", {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", **meta},
        "spec": jobset})  # fmt: skip
    made.append(("jobset.x-k8s.io", "jobsets", "js"))
    for kind, (field, types) in KUBEFLOW_KINDS.items():
        version = "v2beta1" if kind == "MPIJob" else "v1"
        name, plural = kind.lower(), f"{kind.lower()}s"
        api.create_namespaced_custom_object("kubeflow.org", version, "team-ml", plural, {
            "apiVersion": f"kubeflow.org/{version}", "kind": kind, "metadata": {"name": name, **meta},
            "spec": {field: {types[-1]: {"replicas": 1, "template": template}},
                     "runPolicy": {"suspend": True}}})  # fmt: skip
        made.append(("kubeflow.org", plural, name))
    return made


def test_the_manifest_allows_every_request_and_grants_nothing_unused(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any, kube: Any
) -> None:
    from django.utils import timezone

    from engine.resources import parse_resource_list
    from quotas import services
    from scheduling import tasks
    from scheduling.models import Eviction, Pod

    services.save_queue(None, {"name": "ml", "deserved": parse_resource_list({"cpu": "8"})})
    services.save_queue(None, {"name": "gone", "weight": 1})
    two = parse_resource_list({"cpu": "2"})
    services.save_queue(None, {"name": "kjob", "deserved": two, "capability": two})  # a Kueue Job's ClusterQueue
    services.save_queue(None, {"name": "kwl", "deserved": two, "capability": two})  # the suspended workloads'
    services.save_quota_group(
        None,
        {
            "name": "qml",
            "min": parse_resource_list({"cpu": "1"}),
            "max": parse_resource_list({"cpu": "4"}),
            "namespaces": ["team-ml"],
        },
    )
    services.save_quota_group(None, {"name": "qgone", "max": parse_resource_list({"cpu": "1"})})
    seed.namespace("team-ml", queue_name="ml")
    seed.node(node("n1"))
    seed.queue(queue("ml", deserved={"cpu": "8"}))
    seed.elastic_quota(elastic_quota("qml", "default", min={"cpu": "1"}, max={"cpu": "4"}))
    seed.podgroup(podgroup("team-ml", "train", "ml"))
    seed.pod(pod("team-ml", "train-0", group="train"))
    seed.pod(pod("team-ml", "stray", group="missing"))  # an object Fairway cannot apply: an Event
    seed.podgroup(podgroup("team-ml", "old", "ml"))  # a job a person deletes (job_actions): its pod, then itself
    seed.pod(pod("team-ml", "old-0", group="old"))
    k8s.CustomObjectsApi(kube).create_namespaced_custom_object("scheduling.x-k8s.io", "v1alpha1", "team-ml",
        "elasticquotas", {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                          "metadata": {"name": "team-ml"}, "spec": {"max": {"cpu": "4"}}})  # fmt: skip
    # a Kueue Job of 4 pods (at least 1) in a ClusterQueue of 2 cores: admitted with 2, its parallelism patched
    made = _kueue_job(kube, seed)
    workloads = _suspended_workloads(kube)
    adapter = make_adapter(renew_seconds=0.0)  # every pass renews the lease, however fast the machine
    informers = {(i.kind.group, i.kind.plural): i for i in adapter.informers}
    wait_for(lambda: all(f"team-ml/{name}" in informers[(g, plural)].cache for g, plural, name in workloads),
             what="the suspended workloads listed")  # fmt: skip
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    adapter.reconcile()
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    wait_for(lambda: sum(1 for p in pods.snapshot() if p["metadata"]["name"].startswith("sample-")
                         and p["spec"].get("nodeName")) == 2, what="the Job's 2 pods bound")  # fmt: skip
    adapter.reconcile()
    assert emulator.get("batch", "jobs", "team-ml", made)["spec"]["parallelism"] == 2
    for group, plural, name in workloads:  # resumed, each with its own patch
        stored = emulator.get(group, plural, "team-ml", name)["spec"]
        assert (stored if plural == "jobsets" else stored["runPolicy"])["suspend"] is False, (plural, stored)
    row = Pod.objects.get(cluster=kcluster, name="train-0")
    Pod.objects.filter(pk=row.pk).update(status="Releasing")
    Eviction.objects.create(cluster=kcluster, pod=row, pod_uid="team-ml/train-0", namespace="team-ml",
                            action="preempt", created=timezone.now())  # fmt: skip
    from scheduling import job_actions
    from scheduling.models import PodGroup

    job_actions.delete(PodGroup.objects.get(cluster=kcluster, name="old"), None, timezone.now())
    services.delete_queue(services.Queue.objects.get(name="gone"))
    services.delete_quota_group(services.QuotaGroup.objects.get(name="qgone"))
    wait_for(lambda: "gone" in next(i for i in adapter.informers if i.kind.plural == "queues").cache)
    wait_for(
        lambda: "default/qgone" in next(i for i in adapter.informers if i.kind.group.endswith("sigs.k8s.io")).cache
    )
    adapter.reconcile()
    used = set()
    for verb, group, plural, sub, _ in emulator.verbs():
        used.add((group, f"{plural}/{sub}" if sub else plural, verb))
    seeded = {("", "namespaces", "create"), ("", "nodes", "create"), ("", "pods", "create"),
              ("batch", "jobs", "create"), ("kueue.x-k8s.io", "localqueues", "create"),
              *((group, plural, "create") for group, plural, _ in workloads),
              ("scheduling.volcano.sh", "podgroups", "create"), ("scheduling.x-k8s.io", "elasticquotas", "create")}  # fmt: skip
    granted = _granted()
    adapter_requests = used - seeded | (used & granted)
    assert sorted(adapter_requests - granted) == []
    # read again only when a write met a 409 Conflict (test_resilience makes one happen)
    on_conflict = {(g, plural, "get") for g, plural in (("scheduling.volcano.sh", "podgroups"),
                   ("scheduling.volcano.sh", "queues"), ("scheduling.sigs.k8s.io", "elasticquotas"))}  # fmt: skip
    unused = sorted(granted - used - on_conflict)
    assert unused == [], unused
