"""``deploy/kubernetes/rbac.yaml`` grants what the adapter does: every request of a full run against the emulator
(mirror, session, bindings, an eviction, statuses, an invalid object's Event, Fairway's trees written, the lease)
is allowed by its rules, and every verb it grants was used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s

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
    adapter = make_adapter(renew_seconds=0.0)  # every pass renews the lease, however fast the machine
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    adapter.reconcile()
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
              ("scheduling.volcano.sh", "podgroups", "create"), ("scheduling.x-k8s.io", "elasticquotas", "create")}  # fmt: skip
    granted = _granted()
    adapter_requests = used - seeded | (used & granted)
    assert sorted(adapter_requests - granted) == []
    # read again only when a write met a 409 Conflict (test_resilience makes one happen)
    on_conflict = {(g, plural, "get") for g, plural in (("scheduling.volcano.sh", "podgroups"),
                   ("scheduling.volcano.sh", "queues"), ("scheduling.sigs.k8s.io", "elasticquotas"))}  # fmt: skip
    unused = sorted(granted - used - on_conflict)
    assert unused == [], unused
