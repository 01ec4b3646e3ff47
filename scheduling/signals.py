"""The scheduling app's signal receivers, connected by ``SchedulingConfig.ready`` (``scheduling.apps``).

They import the tasks and the mirror when a cluster is saved or deleted, not here: this module is imported at
every process's start-up, and those modules bring the whole store and engine with them."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from scheduling.models import Cluster, RowChange


def cluster_saved(sender: type[Cluster], instance: Cluster, raw: bool = False, **kwargs: Any) -> None:
    """Every cluster gets its periodic tasks (``scheduling.tasks.ensure_schedules``); not while fixtures load."""
    if raw:
        return
    from scheduling.tasks import ensure_schedules

    ensure_schedules(instance)


def cluster_deleted(sender: type[Cluster], instance: Cluster, **kwargs: Any) -> None:
    """A deleted cluster's periodic tasks go with it, and its change feed and this process's mirror of it."""
    from scheduling.feed.mirror import forget
    from scheduling.tasks import delete_schedules

    delete_schedules(instance.pk)
    RowChange.objects.filter(cluster_id=instance.pk)._raw_delete(RowChange.objects.db)
    forget(instance.pk)


def connect() -> None:
    """Connect the receivers (idempotent: each has a ``dispatch_uid``)."""
    post_save.connect(cluster_saved, sender=Cluster, dispatch_uid="fairway-cluster-schedules")
    post_delete.connect(cluster_deleted, sender=Cluster, dispatch_uid="fairway-cluster-schedules-gone")
