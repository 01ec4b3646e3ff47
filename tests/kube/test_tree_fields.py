"""The Kubernetes adapter mirrors every field of the table of each tree kind (``engine.treefields``) from a cluster
that owns the trees: the Volcano Queue and Koordinator ElasticQuota that Fairway's export writes for a node with
every sample value are read back into the same database row (the description from its ``fairway.io/`` annotation),
and mirroring them again writes nothing (the adapter's comparison covers every field)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from engine.manifests.export import export_trees
from engine.objects import QueueSpec, QuotaGroupSpec, Snapshot
from engine.resources import ResourceList
from tests.unit.test_treefields import SAMPLES, sample_spec


def test_every_tree_field_is_mirrored_from_the_cluster(db: Any) -> None:
    from quotas import services
    from quotas.models import Queue, QuotaGroup
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster

    services.ensure_builtins()
    dept = QueueSpec(name="dept", deserved=ResourceList({"cpu": 16000}), guarantee=ResourceList({"cpu": 8000}))
    team = QueueSpec(name="team", parent="dept", **sample_spec("queue"))
    pool = QuotaGroupSpec(name="team", **sample_spec("quota_group"))
    snap = Snapshot(queues={"dept": dept, "team": team}, quota_groups={"team": pool})
    objects = export_trees(snap, "volcano") + export_trees(snap, "koordinator")
    cluster = Cluster.objects.create(name="west", source="kubernetes", tree_source="kubernetes")

    report = mirror(cluster, objects, timezone.now())
    assert not report.problems, report.problems
    queue, group = Queue.objects.get(name="team").to_spec(), QuotaGroup.objects.get(name="team").to_spec()
    assert {n: getattr(queue, n) for n in SAMPLES["queue"]} == sample_spec("queue")
    assert {n: getattr(group, n) for n in SAMPLES["quota_group"]} == sample_spec("quota_group")

    again = mirror(cluster, objects, timezone.now())
    assert again.written["Queue"] == 0 and again.written["ElasticQuota"] == 0
