"""The kernel's rows: the revision counters every reader of the state keys its caches on, and the versioned row
(compare-and-swap saves, the API's ETag) the trees are made of.

``Revision`` serves the trees (``quotas``) and the clusters (``scheduling``) alike; its table keeps the name it was
created with (``quotas_revision``), which the change feed's triggers write (``scheduling.feed.triggers``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models, transaction
from django.db.models import F


class VersionConflict(Exception):
    """A save based on a version of the row that is no longer the current one: another writer saved it since this
    instance was read. Nothing was written; reload and decide again."""

    def __init__(self, obj: models.Model, expected: int, current: int) -> None:
        self.obj, self.expected, self.current = obj, expected, current
        super().__init__(
            f"{type(obj).__name__} {obj} was read at version {expected} and is now at version {current}; "
            "it changed meanwhile, nothing was written"
        )


class RevisionManager(models.Manager["Revision"]):
    def bump(self, *keys: str) -> None:
        """Move each counter of ``keys`` by one (creating it at 1). Call it inside the transaction of the write it
        stands for, before that write's rows, so that every writer locks the counter row first."""
        for key in keys:
            if self.filter(key=key).update(value=F("value") + 1):
                continue
            _, created = self.get_or_create(key=key, defaults={"value": 1})
            if not created:  # another writer created it meanwhile
                self.filter(key=key).update(value=F("value") + 1)

    def values_of(self, *keys: str) -> tuple[int, ...]:
        """The counters of ``keys`` now (0 for one never moved), in one query."""
        found = dict(self.filter(key__in=keys).values_list("key", "value"))
        return tuple(found.get(key, 0) for key in keys)


class Revision(models.Model):
    """A counter the database keeps for one part of the state the engine reads: ``trees`` (queues, quota groups,
    namespaces) or ``cluster-<id>`` (a cluster's settings, nodes, podgroups and pods; ``scheduling.models``).

    Every write of that part moves it by one in the write's own transaction (``Revision.objects.bump``), so a
    rolled-back write leaves it as it was, and a reader that reads the counters before the rows it computes from
    may keep its result for as long as the counters stay the same (``planning.valuecache``).
    """

    TREES = "trees"

    key = models.CharField(max_length=64, unique=True)
    value = models.PositiveBigIntegerField(default=0)

    objects = RevisionManager()

    class Meta:
        db_table = "quotas_revision"

    def __str__(self) -> str:
        return f"{self.key} at {self.value}"

    @staticmethod
    def cluster_key(cluster_id: int) -> str:
        return f"cluster-{cluster_id}"


def _one_transaction(using: str) -> Any:
    """The transaction a revised write and its counters' bump share: a new one outside any, the caller's own inside
    one. Inside, no savepoint: a failed write already fails the caller's whole transaction (nothing in the code
    catches a database error within one and goes on), and a savepoint costs two statements a write (the live loop
    makes tens of such writes a second)."""
    return transaction.atomic(using=using, savepoint=False)


class RevisedQuerySet(models.QuerySet[Any]):
    """A queryset whose bulk writes (``update``, ``bulk_create``, ``delete``) move the revisions of the rows they
    write, first and in the same transaction (``Revision``). For the trees' rows that is the ``trees`` counter;
    other apps' rows name theirs in ``revision_keys``."""

    def revision_keys(self, objs: list[Any] | None = None) -> set[str]:
        """The counters that the rows of this queryset (or ``objs``, about to be created) move."""
        return {Revision.TREES}

    def update(self, **kwargs: Any) -> int:
        with _one_transaction(self.db):
            keys = self.revision_keys()
            if not keys:  # no row matches (``revision_keys`` looked): nothing to write, no statement for it
                return 0
            Revision.objects.bump(*sorted(keys))
            return super().update(**kwargs)

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        rows = list(objs)
        with _one_transaction(self.db):
            Revision.objects.bump(*sorted(self.revision_keys(rows)))
            return super().bulk_create(rows, *args, **kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        with _one_transaction(self.db):
            keys = self.revision_keys()
            if not keys:  # no row matches: nothing to delete
                return 0, {}
            Revision.objects.bump(*sorted(keys))
            return super().delete()


class VersionedModel(models.Model):
    """A row whose ``version`` grows on every save (the ETag of the API).

    The bump is a compare-and-swap in the database: saving an existing row runs
    ``UPDATE … SET version = <read> + 1, … WHERE id = %s AND version = <read>``, so a writer that read the row
    before somebody else saved it cannot overwrite that change: it gets ``VersionConflict`` and writes nothing
    (instead of the silent lost update of a plain ``UPDATE … WHERE id = %s``). Writers that hold the tree write
    lock (``quotas.services.lock_tree_writes``) and read the row under it never see a conflict.

    Every write of a tree row, one by one or in bulk, also moves the ``trees`` revision in its transaction.
    """

    version = models.PositiveBigIntegerField(default=1, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = RevisedQuerySet.as_manager()

    _expected_version: int | None = None

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with transaction.atomic(using=kwargs.get("using")):
            Revision.objects.bump(Revision.TREES)
            self._save_versioned(*args, **kwargs)

    def delete(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with transaction.atomic(using=kwargs.get("using")):
            Revision.objects.bump(Revision.TREES)
            return super().delete(*args, **kwargs)

    def _save_versioned(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.pk is not None and not kwargs.get("force_insert"):
            read = self.version or 0
            self._expected_version = read if not self._state.adding else None
            self.version = read + 1
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "version", "updated"}
            try:
                super().save(*args, **kwargs)
            except VersionConflict:
                self.version = read  # the instance stays as it was read
                raise
            finally:
                self._expected_version = None
            return
        super().save(*args, **kwargs)

    def _do_update(self, base_qs, using, pk_val, values, update_fields, forced_update):  # type: ignore[no-untyped-def]
        """Django's UPDATE of an existing row, with the version condition (see the class docstring)."""
        expected = self._expected_version
        if expected is None or not values:
            return super()._do_update(base_qs, using, pk_val, values, update_fields, forced_update)
        filtered = base_qs.filter(pk=pk_val)
        if filtered.filter(version=expected)._update(values) > 0:
            return True
        current = filtered.values_list("version", flat=True).first()
        if current is None:
            return False  # the row is gone: Django's own behaviour (insert, or DatabaseError with update_fields)
        raise VersionConflict(self, expected, current)
