"""Who writes a cluster's rows, and how a cluster is deleted.

**A cluster mirrored from Kubernetes** (``source=kubernetes``) has its nodes, podgroups and pods from its API server:
the adapter (``scheduling.kube.mirror_in``) writes them, and the scheduling sessions write their decisions. People's
writes of them are refused before anything is written, with a sentence that says where to make the change
(``MirroredCluster``): the API's create, change and delete of nodes, podgroups and pods, a node agent's registration,
heartbeats, pod status reports and confirmations (409 ``cluster_mirrored_from_kubernetes``), and the Django admin
(those rows are read-only there, and a form that would put a row into such a cluster gets the sentence at its
``cluster`` field). The adapter and the sessions write the rows directly, never through these entry points, so they
are not affected.

**Deleting a cluster** deletes its nodes, podgroups and pods and every record of its sessions. When it holds nodes,
podgroups or pods that needs an explicit force (``ClusterNotEmpty`` otherwise, naming what it holds). The delete
first waits for the cluster's running sessions and other periodic jobs and keeps new ones out (it takes their
per-cluster locks, ``scheduling.locks``, blocking, for its whole transaction: a job that starts meanwhile finds the
lock taken and skips, one that gets the lock after the commit finds the cluster gone), then takes the tree write lock,
the cluster's revision and the cluster's row, in the order every other writer takes them (a write of the cluster's
rows in flight commits first; one that comes later waits, instead of adding a row the delete did not see), then
deletes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.db import connection, transaction

from core.models import Revision
from engine.wording import plural
from quotas.services import lock_tree_writes, settle_closing_queues
from scheduling.locks import LOCK_NAMES, uses_advisory_locks
from scheduling.models import Cluster, ClusterSource

__all__ = [
    "ClusterNotEmpty",
    "Contents",
    "MirroredCluster",
    "Verb",
    "check_people_may_write",
    "contents",
    "delete_cluster",
    "is_mirrored",
    "keep_cluster",
    "refusal",
]

Kind = Literal["node", "podgroup", "pod"]
Verb = Literal["create", "change", "delete", "report"]


def is_mirrored(cluster: Cluster) -> bool:
    """Its nodes, podgroups and pods come from a Kubernetes API server (the adapter writes them)."""
    return cluster.source == ClusterSource.KUBERNETES


def refusal(cluster: str, kind: Kind, verb: Verb) -> str:
    """The sentence a person's write of ``kind`` rows in the mirrored cluster ``cluster`` gets."""
    head = f"cluster {cluster} is mirrored from Kubernetes: "
    if kind == "node":
        if verb == "report":
            return head + "its nodes report to its API server (kubelet); Fairway only reads them"
        return head + f"{verb} its nodes there (kubelet, kubectl); Fairway only reads them"
    if verb == "report":
        return head + "its pods' status comes from its API server (kubelet); Fairway only reads it"
    return head + f"{verb} {kind}s there with kubectl; Fairway only reads them"


class MirroredCluster(Exception):
    """A person's write of a node, podgroup or pod of a cluster mirrored from Kubernetes; nothing was written."""

    def __init__(self, cluster: str, kind: Kind, verb: Verb) -> None:
        self.cluster, self.kind, self.verb = cluster, kind, verb
        super().__init__(refusal(cluster, kind, verb))


def check_people_may_write(cluster: Cluster | None, kind: Kind, verb: Verb) -> None:
    """Raise ``MirroredCluster`` when ``cluster`` is mirrored from Kubernetes (call it for every cluster a write
    touches: a row's own, and the one it moves to)."""
    if cluster is not None and is_mirrored(cluster):
        raise MirroredCluster(cluster.name, kind, verb)


@dataclass(frozen=True)
class Contents:
    """What deleting a cluster deletes with it (its nodes, podgroups and pods)."""

    nodes: int
    podgroups: int
    pods: int

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.podgroups or self.pods)

    def __str__(self) -> str:
        parts = [plural(self.nodes, "node"), plural(self.podgroups, "podgroup"), plural(self.pods, "pod")]
        return ", ".join(parts[:-1]) + " and " + parts[-1]


def contents(cluster: Cluster) -> Contents:
    return Contents(nodes=cluster.nodes.count(), podgroups=cluster.podgroups.count(), pods=cluster.pods.count())


class ClusterNotEmpty(Exception):
    """Deleting a cluster that holds nodes, podgroups or pods, without the force; nothing was deleted."""

    def __init__(self, cluster: str, held: Contents) -> None:
        self.cluster, self.contents = cluster, held
        super().__init__(
            f"cluster {cluster} holds {held}, which would be deleted with it (and every record of its sessions)"
        )


def _stop_sessions(cluster_id: int) -> None:
    """Wait for the cluster's periodic jobs that are running (sessions, recycling, agents, node checks, compaction)
    and keep new ones out until the current transaction ends: their per-cluster locks, taken blocking, always in the
    same order. PostgreSQL only: SQLite runs one writer at a time (the delete waits for a session's transaction)."""
    if not uses_advisory_locks():
        return
    with connection.cursor() as cursor:
        for key in sorted(LOCK_NAMES):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [key, cluster_id])


def keep_cluster(cluster_id: int) -> bool:
    """Whether the cluster is still there; if so, it stays until the current transaction ends (a delete in flight is
    waited for first). For a write that refers to the cluster without holding one of its locks (the record of a
    skipped session): PostgreSQL checks such references only at COMMIT, after the delete could have removed the row.
    ``FOR KEY SHARE`` blocks only a delete of the row (or a change of its key), never another writer."""
    if connection.vendor != "postgresql":
        return Cluster.objects.filter(pk=cluster_id).exists()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {Cluster._meta.db_table} WHERE id = %s FOR KEY SHARE", [cluster_id])
        return cursor.fetchone() is not None


def delete_cluster(cluster_id: int, *, force: bool) -> Contents:
    """Delete the cluster with its nodes, podgroups, pods and records; returns what went with it.

    Raises ``Cluster.DoesNotExist`` when it is gone already and ``ClusterNotEmpty`` when it holds nodes, podgroups
    or pods and ``force`` is false. See the module's docstring for the order of the locks."""
    with transaction.atomic():
        _stop_sessions(cluster_id)
        lock_tree_writes()  # podgroups go with it: the queues they kept Closing settle below, under the lock
        # the cluster's revision before its row, as every writer of its rows takes it first (``ClusterRow``): a
        # writer in flight commits before the delete reads what to delete, and none waits for the other
        Revision.objects.bump(Revision.cluster_key(cluster_id))
        cluster = Cluster.objects.select_for_update().get(pk=cluster_id)
        held = contents(cluster)
        if not held.empty and not force:
            raise ClusterNotEmpty(cluster.name, held)
        cluster.delete()
        settle_closing_queues()
    return held
