"""A PodGroup deleted from the Kubernetes cluster is recorded as a removed job, with its evictions
(``scheduling.evictions``), when the adapter's mirror next applies the cluster's objects."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from tests.kube.conftest import node, pod, podgroup


def test_a_podgroup_gone_from_the_cluster_is_recorded_with_its_evictions(db: Any) -> None:
    from quotas import services
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Eviction, Pod, PodGroup, RemovalCause, RemovedJob

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1})
    cluster = Cluster.objects.create(name="west", source="kubernetes")
    now = timezone.now()
    mirror(cluster, [node("n1"), podgroup("team-ml", "train", "ml"), pod("team-ml", "train-0", group="train")], now)
    evicted = Pod.objects.get(cluster=cluster, name="train-0")
    Eviction.objects.create(
        cluster=cluster, pod=evicted, pod_uid="team-ml/train-0", namespace="team-ml", action="preempt", created=now
    )
    later = now + timedelta(minutes=1)
    report = mirror(cluster, [node("n1")], later)
    assert report.deleted["PodGroup"] == 1 and not PodGroup.objects.filter(cluster=cluster).exists()
    record = RemovedJob.objects.get(cluster=cluster, namespace="team-ml", name="train")
    assert (record.cause, record.removed_at, record.queue) == (RemovalCause.KUBERNETES, later, "ml")
    assert record.reason == "its PodGroup was deleted from the Kubernetes cluster west"
    eviction = Eviction.objects.get(pod_uid="team-ml/train-0")
    assert eviction.removed_job_id == record.pk and eviction.job == "train" and eviction.pod_id is None
