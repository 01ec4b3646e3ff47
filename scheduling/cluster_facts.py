"""The clusters' facts the trees' writers warn with (``controlplane.cluster_facts``): total allocatable of the Ready,
schedulable nodes and the queue policy, per cluster (two queries, whatever the number of nodes)."""

from __future__ import annotations

from controlplane.cluster_facts import ClusterFacts
from engine.resources import ResourceList
from engine.session.policy import PolicyError
from engine.values import queue_policy_of
from scheduling.models import Cluster, Node, parse_scheduler_policy


def cluster_facts() -> list[ClusterFacts]:
    totals: dict[int, list[ResourceList]] = {}
    for cluster_id, allocatable in Node.objects.filter(ready=True, unschedulable=False).values_list(
        "cluster_id", "allocatable"
    ):
        totals.setdefault(cluster_id, []).append(ResourceList(allocatable or {}))
    out = []
    for cluster in Cluster.objects.order_by("name").only("id", "name", "scheduler_policy"):
        try:
            name, hierarchy, _level = queue_policy_of(parse_scheduler_policy(cluster.scheduler_policy or ""))
        except PolicyError:  # an unreadable policy is the scheduler's to report; warn as under Volcano's default
            name, hierarchy = "proportion", False
        policy = "capacity-hierarchy" if hierarchy else name
        out.append(ClusterFacts(cluster.name, dict(ResourceList.total(totals.get(cluster.id, []))), policy))
    return out


def tree_owning_cluster() -> str | None:
    """The name of the cluster whose API server owns the trees (``Cluster.tree_source = kubernetes``), if any."""
    from scheduling.models import Cluster, ClusterSource, TreeSource

    return (
        Cluster.objects.filter(source=ClusterSource.KUBERNETES, tree_source=TreeSource.KUBERNETES)
        .values_list("name", flat=True)
        .first()
    )


def mirrored_cluster_names() -> set[str]:
    """The clusters whose nodes, podgroups and pods the Kubernetes adapter writes (``scheduling.ownership``)."""
    from scheduling.models import Cluster, ClusterSource

    return set(Cluster.objects.filter(source=ClusterSource.KUBERNETES).values_list("name", flat=True))
