"""This app's answers to the lower apps' questions about the clusters (``core.facts.ClusterFacts``), registered when
the app is ready (``scheduling.apps``): the resource names the nodes offer across all clusters (the trees are global,
so a queue may name a GPU only one cluster has), each cluster's total and queue policy, the clusters the Kubernetes
adapter mirrors and the cluster that owns the trees. One or two queries each, whatever the number of nodes."""

from __future__ import annotations

from django.db import connection

from core.facts import ClusterSummary, JobMinimum
from engine.policy.policy import PolicyError
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase
from scheduling.models import Cluster, ClusterSource, Node, PodGroup, TreeSource, parse_scheduler_policy

__all__ = ["DatabaseFacts"]


class DatabaseFacts:
    """``core.facts.ClusterFacts`` read from this app's tables."""

    def offered_resource_names(self) -> set[str]:
        """Every resource name in some node's ``allocatable`` (computed by the database where it can)."""
        table = connection.ops.quote_name(Node._meta.db_table)
        column = connection.ops.quote_name(Node._meta.get_field("allocatable").column)
        if connection.vendor == "postgresql":
            sql = f"SELECT DISTINCT jsonb_object_keys({column}) FROM {table} WHERE jsonb_typeof({column}) = 'object'"
        elif connection.vendor == "sqlite":
            sql = f"SELECT DISTINCT j.key FROM {table}, json_each({table}.{column}) AS j WHERE j.key IS NOT NULL"
        else:  # pragma: no cover - the project runs on PostgreSQL and SQLite
            names: set[str] = set()
            for allocatable in Node.objects.values_list("allocatable", flat=True):
                names.update(allocatable or ())
            return names
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return {row[0] for row in cursor.fetchall()}

    def clusters(self) -> list[ClusterSummary]:
        """Total allocatable of the Ready, schedulable nodes and the queue policy, per cluster."""
        totals: dict[int, list[ResourceList]] = {}
        for cluster_id, allocatable in Node.objects.filter(ready=True, unschedulable=False).values_list(
            "cluster_id", "allocatable"
        ):
            totals.setdefault(cluster_id, []).append(ResourceList(allocatable or {}))
        from engine.values import queue_policy_of  # here: the engine's values are not needed at start-up

        out = []
        for cluster in Cluster.objects.order_by("name").only("id", "name", "scheduler_policy"):
            try:
                name, hierarchy, _level = queue_policy_of(parse_scheduler_policy(cluster.scheduler_policy or ""))
            except PolicyError:  # an unreadable policy is the scheduler's to report; warn as under Volcano's default
                name, hierarchy = "proportion", False
            policy = "capacity-hierarchy" if hierarchy else name
            out.append(ClusterSummary(cluster.name, dict(ResourceList.total(totals.get(cluster.id, []))), policy))
        return out

    def mirrored_clusters(self) -> set[str]:
        """The clusters whose nodes, podgroups and pods the Kubernetes adapter writes (``scheduling.ownership``)."""
        return set(Cluster.objects.filter(source=ClusterSource.KUBERNETES).values_list("name", flat=True))

    def tree_owner(self) -> str | None:
        """The cluster whose API server owns the trees (``Cluster.tree_source = kubernetes``), if any."""
        return (
            Cluster.objects.filter(source=ClusterSource.KUBERNETES, tree_source=TreeSource.KUBERNETES)
            .values_list("name", flat=True)
            .first()
        )

    def largest_job_minimums(
        self, *, queue: str | None = None, quota_group: str | None = None
    ) -> dict[str, JobMinimum]:
        """Per resource, the unfinished podgroup of leaf queue ``queue`` (or of quota group ``quota_group``'s
        namespaces) whose ``min_resources`` asks the most of it; ties go to the first by cluster, namespace, name."""
        jobs = PodGroup.objects.exclude(phase=PodGroupPhase.COMPLETED).exclude(min_resources=None)
        if queue is not None:
            jobs = jobs.filter(queue__name=queue)
        if quota_group is not None:
            jobs = jobs.filter(namespace__quota_group__name=quota_group)
        if queue is None and quota_group is None:
            return {}
        out: dict[str, JobMinimum] = {}
        rows = jobs.order_by("cluster__name", "namespace__name", "name").values_list(
            "cluster__name", "namespace__name", "name", "min_resources"
        )
        for cluster, namespace, name, minimum in rows.iterator(chunk_size=2000):
            for resource, amount in (minimum or {}).items():
                best = out.get(resource)
                if amount > 0 and (best is None or amount > best.min_resources[resource]):
                    out[resource] = JobMinimum(cluster, namespace, name, dict(minimum))
        return out
