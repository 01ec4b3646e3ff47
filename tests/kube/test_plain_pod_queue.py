"""A plain pod (no PodGroup) that names its queue keeps it through the adapter: Volcano's queue annotation and a
Kueue LocalQueue's label give its own podgroup a row in that queue; a pod in its namespace's default queue stays
without a row (the store makes its podgroup again, as before)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from tests.kube.conftest import pod


def test_a_plain_pod_keeps_the_queue_it_names(db: Any) -> None:
    from quotas import services
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1})
    cluster = Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")
    named = pod("team", "named", scheduler="fairway")
    named["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "ml"}
    kueue = pod("team", "kueued", scheduler="fairway", labels={"kueue.x-k8s.io/queue-name": "lq"})
    plain = pod("team", "plain", scheduler="fairway")
    local_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip
    report = mirror(cluster, [named, kueue, plain, local_queue], timezone.now())
    assert not report.problems, report.problems
    rows = dict(Pod.objects.filter(cluster=cluster).values_list("name", "podgroup__queue__name"))
    assert rows == {"named": "ml", "kueued": "ml", "plain": None}
    assert PodGroup.objects.filter(cluster=cluster).count() == 2
    again = mirror(cluster, [named, kueue, plain, local_queue], timezone.now())  # nothing moves the second time
    assert again.written["PodGroup"] == 0 and not again.deleted
