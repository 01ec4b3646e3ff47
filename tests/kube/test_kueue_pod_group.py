"""A Kueue pod group through the adapter: its pods (``kueue.x-k8s.io/pod-group-name`` with the total count) are one
podgroup row named after the group, in their LocalQueue's ClusterQueue, with ``minMember`` the total count."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from tests.kube.conftest import pod


def test_a_pod_group_is_one_podgroup_row(db: Any) -> None:
    from quotas import services
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1})
    cluster = Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")
    labels = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/pod-group-name": "train"}
    members = [pod("team", name, scheduler="fairway", labels=dict(labels)) for name in ("leader", "worker")]
    for member in members:
        member["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": "2"}
    local_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip
    report = mirror(cluster, [*members, local_queue], timezone.now())
    assert not report.problems, report.problems
    rows = dict(Pod.objects.filter(cluster=cluster).values_list("name", "podgroup__name"))
    assert rows == {"leader": "train", "worker": "train"}
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.namespace.name, group.queue.name, group.min_member) == ("team", "ml", 2)
    again = mirror(cluster, [*members, local_queue], timezone.now())  # nothing moves the second time
    assert again.written["PodGroup"] == 0 and not again.deleted
