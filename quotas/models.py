"""The organisation's trees: queues (Volcano), elastic quota groups (Koordinator), namespaces and weights.

Resource amounts are ``ResourceListField`` (JSON of integers in base units). Every tree model keeps an audit
history (django-simple-history) and a ``version`` that feeds the API's ETag.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import Group
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.db.models import F
from simple_history.models import HistoricalRecords

from engine import treefields
from engine.objects import DEFAULT_GROUP, DEFAULT_QUEUE, ROOT_GROUP, ROOT_QUEUE, SYSTEM_GROUP, QueueSpec, QuotaGroupSpec
from quotas.choices import QueueState
from quotas.fields import ResourceListField


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

    def __str__(self) -> str:
        return f"{self.key} at {self.value}"

    @staticmethod
    def cluster_key(cluster_id: int) -> str:
        return f"cluster-{cluster_id}"


class RevisedQuerySet(models.QuerySet[Any]):
    """A queryset whose bulk writes (``update``, ``bulk_create``, ``delete``) move the revisions of the rows they
    write, first and in the same transaction (``Revision``). For the trees' rows that is the ``trees`` counter;
    other apps' rows name theirs in ``revision_keys``."""

    def revision_keys(self, objs: list[Any] | None = None) -> set[str]:
        """The counters that the rows of this queryset (or ``objs``, about to be created) move."""
        return {Revision.TREES}

    def update(self, **kwargs: Any) -> int:
        with transaction.atomic(using=self.db):
            Revision.objects.bump(*sorted(self.revision_keys()))
            return super().update(**kwargs)

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        rows = list(objs)
        with transaction.atomic(using=self.db):
            Revision.objects.bump(*sorted(self.revision_keys(rows)))
            return super().bulk_create(rows, *args, **kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        with transaction.atomic(using=self.db):
            Revision.objects.bump(*sorted(self.revision_keys()))
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


class Queue(VersionedModel):
    """A Volcano queue: a node of the queue tree. Jobs (podgroups) are submitted to leaf queues."""

    BUILTIN = (ROOT_QUEUE, DEFAULT_QUEUE)

    name = models.CharField(max_length=63, unique=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    weight = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(65535)])
    capability = ResourceListField(default=dict, blank=True)
    deserved = ResourceListField(default=dict, blank=True)
    guarantee = ResourceListField(default=dict, blank=True)
    # Kueue's levers, per resource (null, or a resource left out: unlimited); measured against deserved
    borrowing_limit = ResourceListField(null=True, blank=True)
    lending_limit = ResourceListField(null=True, blank=True)
    reclaimable = models.BooleanField(default=True)
    priority = models.PositiveIntegerField(default=0)
    # Fairway's range of the jobs' priority and preemptibility (admins set it; the strictest along the queue's path
    # holds: ``engine.rules.priority_range``)
    max_priority = models.IntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(-(2**31)), MaxValueValidator(2**31 - 1)],
        help_text="The highest priority a podgroup or pod of this queue (or of a queue below it) may have; "
        "empty: no maximum. Set by admins; raising or lowering it does not change existing jobs.",
    )
    allow_non_preemptible = models.BooleanField(
        default=True,
        help_text="Whether pods of this queue (and of the queues below it) may be non-preemptible (they are still "
        "held to their quota group's min).",
    )
    # KAI's min-runtime for this queue's subtree (``QueueSpec.min_runtime``): whole seconds; null: unset
    min_runtime = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Seconds a pod of this queue (or of a queue below it) is kept from reclaim and preempt after it "
        "starts, unless its evictor's priority is strictly higher; empty: the nearest ancestor's, else the scheduler "
        "policy's minRuntime; 0: none.",
    )
    state = models.CharField(max_length=8, choices=QueueState.choices, default=QueueState.OPEN)
    closed_by_parent = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="", help_text=treefields.DESCRIPTION_HELP)
    teams = models.ManyToManyField(Group, blank=True, related_name="queues")
    history = HistoricalRecords(excluded_fields=["version", "updated"], m2m_fields=[teams])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gte=1, weight__lte=65535), name="queue_weight_range"),
            models.CheckConstraint(
                condition=models.Q(parent__isnull=False) | models.Q(name=ROOT_QUEUE), name="queue_parent_unless_root"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_builtin(self) -> bool:
        return self.name in self.BUILTIN

    def to_spec(self, parent_name: str | None = None) -> QueueSpec:
        return QueueSpec(
            name=self.name,
            parent=parent_name if parent_name is not None or self.parent_id is None else self.parent.name,
            **{f.name: treefields.from_stored(f, getattr(self, f.name)) for f in treefields.QUEUE_FIELDS},
        )


class QuotaGroup(VersionedModel):
    """A Koordinator elastic quota group: a node of a quota tree (min, max, shared-weight, lending)."""

    BUILTIN = (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP)

    name = models.CharField(max_length=253, unique=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    is_parent = models.BooleanField(default=False)
    min = ResourceListField(default=dict, blank=True)
    max = ResourceListField(default=dict, blank=True)
    shared_weight = ResourceListField(null=True, blank=True)
    # Kueue's levers, per resource (null, or a resource left out: unlimited); measured against min
    borrowing_limit = ResourceListField(null=True, blank=True)
    lending_limit = ResourceListField(null=True, blank=True)
    allow_lent = models.BooleanField(default=True)
    tree_id = models.CharField(max_length=63, blank=True, default="")
    min_scale_exempt = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="", help_text=treefields.DESCRIPTION_HELP)
    teams = models.ManyToManyField(Group, blank=True, related_name="quota_groups")
    history = HistoricalRecords(excluded_fields=["version", "updated"], m2m_fields=[teams])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(parent__isnull=False) | models.Q(name=ROOT_GROUP),
                name="quota_group_parent_unless_root",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_builtin(self) -> bool:
        return self.name in self.BUILTIN

    def to_spec(self, parent_name: str | None = None) -> QuotaGroupSpec:
        return QuotaGroupSpec(
            name=self.name,
            parent=parent_name if parent_name is not None or self.parent_id is None else self.parent.name,
            **{f.name: treefields.from_stored(f, getattr(self, f.name)) for f in treefields.QUOTA_GROUP_FIELDS},
        )


class Namespace(VersionedModel):
    """A tenant namespace: its fair-share weight inside queues (seed 000), its default queue, its quota group,
    and its resource quota (hard limits) that bounds the sum of its podgroups' minResources (seed 003)."""

    name = models.CharField(max_length=63, unique=True)
    weight = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    default_queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.SET_NULL, related_name="default_for_namespaces"
    )
    quota_group = models.ForeignKey(
        QuotaGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="namespaces"
    )
    hard = ResourceListField(null=True, blank=True)
    history = HistoricalRecords(excluded_fields=["version", "updated"])

    class Meta:
        ordering = ["name"]
        constraints = [models.CheckConstraint(condition=models.Q(weight__gte=1), name="namespace_weight_positive")]

    def __str__(self) -> str:
        return self.name
