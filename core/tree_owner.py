"""Who owns the organisation's trees: Fairway (its API, editor and admin write them) or one Kubernetes cluster whose
Volcano Queues and Koordinator ElasticQuotas are the truth (``Cluster.tree_source = kubernetes``), in which case
every tree write of Fairway's own is refused with the cluster's name, and only that cluster's adapter writes them.

The app that keeps the clusters answers which one owns the trees (``core.facts.tree_owner``); the trees' writers
(``quotas.services``, the tree endpoints, the editor) ask ``check_writable``. The adapter writes inside
``from_cluster()``.

The services ask under the tree write lock (``quotas.services.lock_tree_writes``), and a cluster takes the trees
under the same lock (``Cluster.clean``), so a write either finished before the cluster took the trees or is
refused. The endpoints and pages also ask before (for an early answer, no form offered); ``owner()`` is one query.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from core import facts

__all__ = ["TreesOwnedByCluster", "check_writable", "editing_sentence", "from_cluster", "owner"]

_from_cluster: contextvars.ContextVar[bool] = contextvars.ContextVar("fairway_tree_write_from_cluster", default=False)


class TreesOwnedByCluster(Exception):
    """A tree write refused because a cluster's API server owns the trees."""

    def __init__(self, cluster: str) -> None:
        self.cluster = cluster
        super().__init__(
            f"the queue and quota trees are read-only here: cluster {cluster} owns them (tree_source=kubernetes), "
            f"so they are edited as Volcano Queues and Koordinator ElasticQuotas in that cluster and mirrored into "
            f"Fairway by its adapter"
        )


def editing_sentence(cluster: str) -> str:
    """What an editing page (the dashboard's editor, the admin) says instead of its forms while ``cluster`` owns
    the trees."""
    return (
        f"The trees are owned by cluster {cluster}: edit its Volcano Queues / Koordinator ElasticQuotas in "
        "Kubernetes; Fairway mirrors them."
    )


def owner() -> str | None:
    """The name of the cluster that owns the trees, or None when Fairway does."""
    return facts.tree_owner()


def check_writable() -> None:
    """Raise ``TreesOwnedByCluster`` when a cluster owns the trees and the caller is not its adapter."""
    if _from_cluster.get():
        return
    name = owner()
    if name is not None:
        raise TreesOwnedByCluster(name)


@contextmanager
def from_cluster() -> Iterator[None]:
    """The adapter of the owning cluster writes the trees inside this block."""
    token = _from_cluster.set(True)
    try:
        yield
    finally:
        _from_cluster.reset(token)
