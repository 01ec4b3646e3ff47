"""The cluster the control plane is the system of record of: nodes, podgroups (jobs) and pods; and what the
scheduler did to it: sessions, evictions, podgroup reasons over time, quota samples for the charts.

Records written by ``scheduling/store/`` (the only bridge between these rows and the engine):

* ``SchedulingSession``: one row per session or recycling pass that ran (or was skipped, or failed), with its
  counts, timings and the bindings it made.
* ``Eviction``: one row per pod the scheduler evicted (reclaim, preempt, recycle), with the reason and numbers,
  and whose it was (job, queue, quota group by name).
* ``RemovedJob``: a podgroup that was deleted (garbage-collected, deleted through the API or in Kubernetes): when
  and why; its evictions point at it and go with it after the retention window (``scheduling.evictions``).
* ``PodGroupReason``: a podgroup's phase and reason, written only when they change (its history).
* ``QuotaSample``: per session, one row per tree node (queue or quota group) with its computed values in base
  units; compacted over time (full resolution for an hour, one per minute for a day, then one per hour).
* ``QuotaOverState``: since when each quota group has been over its runtime (the recycling debounce survives a
  worker restart because it lives here).
* ``UsageHistory``: fairness over time's decayed past usage of every tree node, one row per cluster (``engine.usage``),
  written only while the cluster's policy turns it on.
* ``ClusterLease``: the lock of the SQLite fallback (``scheduling/locks.py``); PostgreSQL uses advisory locks.

And the change feed that keeps a worker's in-memory copy of a cluster current (``scheduling/feed/mirror.py``):

* ``RowChange``: one row per node, podgroup or pod written (inserted, updated in a column the engine reads, or
  deleted), with the cluster revision of the transaction that wrote it; written by database triggers
  (``scheduling/feed/triggers.py``), so every writer is covered, raw SQL and cascades included.
* ``ClusterFeed``: per cluster, the feed's epoch, how far it was pruned, and which mirror ran the last session.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.db.models.expressions import Col
from django.db.models.lookups import Exact
from django.utils import timezone

from core.models import RevisedQuerySet, Revision
from engine.limits import node_amount_errors
from engine.manifests.kueuestored import StoredConfiguration, read_stored_configuration
from engine.policy.policy import DEFAULT_POLICY, Policy, PolicyError
from quotas.fields import ResourceListField
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.choices import PodGroupPhase, PodStatus

if TYPE_CHECKING:
    from engine.policy.policy import Policy


def default_scheduler_policy() -> str:
    """Volcano's default scheduler configuration (``engine.policy.policy.DEFAULT_POLICY``) as YAML."""

    return DEFAULT_POLICY.to_yaml()


@lru_cache(maxsize=32)
def parse_scheduler_policy(text: str) -> Policy:
    """The policy of a ``volcano-scheduler.conf`` text (cached by text; empty means Volcano's default).

    Raises ``engine.policy.policy.PolicyError``.
    """

    return Policy.from_yaml(text) if text.strip() else DEFAULT_POLICY


@lru_cache(maxsize=32)
def parse_kueue_configuration(text: str) -> StoredConfiguration | None:
    """Kueue's Configuration of a cluster (cached by text; blank: None). Raises ``ValueError`` naming the field."""
    return read_stored_configuration(text, "kueue_configuration")


class ClusterSource(models.TextChoices):
    AGENT = "agent", "node agents (REST API)"
    KUBERNETES = "kubernetes", "Kubernetes API server (the adapter)"


class TreeSource(models.TextChoices):
    FAIRWAY = "fairway", "Fairway (written to the cluster)"
    KUBERNETES = "kubernetes", "Kubernetes (read from the cluster)"


class Cluster(models.Model):
    """One cluster with its own nodes, scheduler policy and scheduling sessions.

    ``simulated`` clusters get the simulated node agent and the workload generator (Celery beat tasks); the
    others wait for real node agents to call the API.
    """

    name = models.CharField(max_length=63, unique=True)
    description = models.CharField(max_length=255, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    scheduler_policy = models.TextField(
        default=default_scheduler_policy,
        blank=True,
        help_text="Volcano's scheduler configuration (volcano-scheduler.conf): actions and plugin tiers. "
        "Empty means Volcano's default.",
    )
    simulated = models.BooleanField(
        default=False, help_text="Run the simulated node agent and workload generator on this cluster (the demo)."
    )
    node_heartbeat_timeout = models.PositiveIntegerField(
        default=40,
        validators=[MinValueValidator(1)],
        help_text="Seconds without a heartbeat after which a node turns NotReady and leaves the total.",
    )
    pod_eviction_timeout = models.PositiveIntegerField(
        default=300,
        validators=[MinValueValidator(1)],
        help_text="Seconds a node may stay NotReady before its pods are marked Failed (NodeLost) and their usage is "
        "released (Kubernetes' default toleration of not-ready nodes).",
    )
    source = models.CharField(
        max_length=10,
        choices=ClusterSource.choices,
        default=ClusterSource.AGENT,
        help_text="Who feeds the cluster's nodes and pods: node agents through the API, or the Kubernetes adapter "
        "(manage.py kube_adapter) mirroring an API server.",
    )
    kubeconfig_encrypted = models.TextField(
        blank=True,
        default="",
        editable=False,
        help_text="source=kubernetes: the kubeconfig (YAML) the adapter connects with, encrypted with the first key "
        "of FAIRWAY_SECRET_KEYS (Fernet); blank means the in-cluster service account. Write it through "
        "``kubeconfig`` and read it through ``read_kubeconfig()``.",
    )
    scheduler_name = models.CharField(
        max_length=63,
        default="fairway",
        help_text="source=kubernetes: the adapter mirrors and binds the pods whose spec.schedulerName is this.",
    )
    tree_source = models.CharField(
        max_length=10,
        choices=TreeSource.choices,
        default=TreeSource.FAIRWAY,
        help_text="source=kubernetes: who owns the queue and quota trees. fairway: Fairway's edits are written to the "
        "cluster as Volcano Queues and Koordinator ElasticQuotas. kubernetes: the cluster's objects are the truth "
        "and Fairway's tree editor and API are read-only.",
    )
    kueue_configuration = models.TextField(
        blank=True,
        default="",
        help_text="Kueue's Configuration (config.kueue.x-k8s.io, YAML), the policy input Kueue's manager reads: its "
        "fairSharing, admissionFairSharing and waitForPodsReady apply to this cluster's sessions as `fairway simulate` "
        "applies a Configuration file. The Kubernetes adapter keeps it from Kueue's ConfigMap (FAIRWAY_KUEUE_CONFIGMAP "
        "in FAIRWAY_KUEUE_NAMESPACE); empty: none.",
    )
    nodes_checked_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the node heartbeat check last ran."
    )
    nodes_grace_from = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the node check resumed after it could not run: heartbeats missed before then are forgiven.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Check the policy (every writer, API, admin or shell, gets one the engine can read) and move the
        cluster's revision with the write (``ClusterRow``)."""
        self.clean()
        with transaction.atomic(using=kwargs.get("using")):
            adding = self._state.adding
            if self.pk is not None:
                Revision.objects.bump(Revision.cluster_key(self.pk))
            super().save(*args, **kwargs)
            if adding:  # its change feed's state, made with it (a mirror that reads never has to write it)
                ClusterFeed.objects.using(self._state.db).get_or_create(cluster=self)

    @property
    def kubeconfig(self) -> str:
        """Write-only: reading it raises (use ``read_kubeconfig()``, the adapter's one accessor), so that no template,
        form or serializer can show it; setting it (``Cluster(kubeconfig=...)``, a serializer's save) encrypts."""
        raise AttributeError("the kubeconfig is write-only: read it with Cluster.read_kubeconfig()")

    @kubeconfig.setter
    def kubeconfig(self, text: str) -> None:
        from security.crypto import encrypt

        self.kubeconfig_encrypted = encrypt(text if text and text.strip() else "")

    @property
    def kubeconfig_set(self) -> bool:
        """Whether a kubeconfig is stored (what the API and the admin show instead of it)."""
        return bool(self.kubeconfig_encrypted)

    def read_kubeconfig(self) -> str:
        """The kubeconfig in clear ("" for the in-cluster service account): the only way to read it."""
        from security.crypto import decrypt

        return decrypt(self.kubeconfig_encrypted)

    @property
    def policy(self) -> Policy:
        """The parsed scheduler policy."""
        return parse_scheduler_policy(self.scheduler_policy or "")

    @property
    def kueue_config(self) -> StoredConfiguration | None:
        """The parsed Kueue Configuration (None: none)."""
        return parse_kueue_configuration(self.kueue_configuration or "")

    def clean(self) -> None:

        try:
            parse_scheduler_policy(self.scheduler_policy or "")
        except PolicyError as exc:
            raise ValidationError({"scheduler_policy": str(exc)}, code="invalid") from exc
        try:
            parse_kueue_configuration(self.kueue_configuration or "")
        except ValueError as exc:
            raise ValidationError({"kueue_configuration": str(exc)}, code="invalid") from exc
        self.clean_tree_source()

    def clean_tree_source(self) -> None:
        """The trees are global (one queue tree, one quota tree for every cluster), so at most one cluster may
        take them from its API server; and only a cluster the adapter mirrors has one.

        Inside a transaction (a request's, the admin's) the claim is checked under the tree write lock
        (``quotas.services.lock_tree_writes``), held until the save commits: two clusters cannot take the trees
        at once, and a tree write of Fairway's own either finished before or sees the owner (``tree_owner``)."""
        if self.tree_source != TreeSource.KUBERNETES:
            return
        if self.source != ClusterSource.KUBERNETES:
            raise ValidationError(
                {"tree_source": "only a cluster with source=kubernetes can own the trees from its API server"},
                code="invalid",
            )
        if transaction.get_connection().in_atomic_block:
            from quotas.services import lock_tree_writes

            lock_tree_writes()
        other = (
            Cluster.objects.filter(tree_source=TreeSource.KUBERNETES, source=ClusterSource.KUBERNETES)
            .exclude(pk=self.pk)
            .values_list("name", flat=True)
            .first()
        )
        if other is not None:
            raise ValidationError(
                {
                    "tree_source": f"cluster {other} already owns the trees from its API server; the queue and quota "
                    "trees are global (shared by every cluster), so only one cluster can take them from Kubernetes"
                },
                code="invalid",
            )

    @property
    def owns_trees(self) -> bool:
        """Its API server's Queues and ElasticQuotas are the trees (and Fairway's editor is read-only)."""
        return self.source == ClusterSource.KUBERNETES and self.tree_source == TreeSource.KUBERNETES


class ClusterRowQuerySet(RevisedQuerySet):
    """Bulk writes of a cluster's rows move that cluster's revision (``core.models.Revision``)."""

    def revision_keys(self, objs: list[Any] | None = None) -> set[str]:
        if objs is not None:
            ids = {obj.cluster_id for obj in objs}
        else:
            named = _filtered_cluster(self.query)
            if named is not None:  # one cluster at most: does any row match? (stops at the first)
                ids = {named} if self.exists() else set()
            else:
                ids = set(self.order_by().values_list("cluster_id", flat=True).distinct())
        return {Revision.cluster_key(i) for i in ids}


def _filtered_cluster(query: Any) -> int | None:
    """The cluster id that an ``AND``-ed top-level ``cluster=`` (or ``cluster_id=``) filter of ``query`` names, if it
    has one: its rows are of that cluster only, and the bulk write's revision key needs no query of their
    distinct clusters (which reads every matching row)."""
    where = query.where
    if where.connector != "AND" or where.negated:
        return None
    for child in where.children:
        if isinstance(child, Exact) and isinstance(child.lhs, Col) and child.lhs.target.attname == "cluster_id":
            value = getattr(child.rhs, "pk", child.rhs)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


class ClusterRow(models.Model):
    """A row of a cluster's state that the engine reads (a node, podgroup or pod): every write of it, one by one
    or in bulk, first moves the cluster's revision in the same transaction, so ``planning.valuecache`` knows its
    values changed."""

    objects = ClusterRowQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        with transaction.atomic(using=kwargs.get("using")):
            Revision.objects.bump(Revision.cluster_key(self.cluster_id))
            super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic(using=kwargs.get("using")):
            Revision.objects.bump(Revision.cluster_key(self.cluster_id))
            return super().delete(*args, **kwargs)


class Node(ClusterRow):
    """A worker node as its agent registered it; its allocatable counts toward the cluster total while Ready."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=253)
    allocatable = ResourceListField(default=dict, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    taints = models.JSONField(default=list, blank=True)
    unschedulable = models.BooleanField(default=False)
    ready = models.BooleanField(default=True)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    not_ready_since = models.DateTimeField(
        null=True, blank=True, help_text="When it turned NotReady (cleared when it is Ready again)."
    )
    # Null, not "", when unset: a column with a default makes Django rebuild the table on SQLite, which drops the
    # change feed's triggers (scheduling/feed/triggers.py).
    set_aside = models.TextField(  # noqa: DJ001 - see above
        null=True,
        blank=True,
        help_text="Why the node is set aside (an agent or the cluster reported more than one node may have): it "
        "offers nothing until a report within the bound comes. Empty when it is not.",
    )
    pool = models.CharField(
        max_length=63,
        blank=True,
        default="",
        db_index=True,
        help_text="The named pool of nodes it belongs to; agents bound to the pool may act for it "
        "(NodeAgentBinding). Set by the admin or when a pool's agent registers the node.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="node_unique_name_per_cluster")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Keep ``not_ready_since`` with ``ready`` for every writer (admin, API, agents)."""
        if self.ready:
            self.not_ready_since = None
        elif self.not_ready_since is None:
            self.not_ready_since = timezone.now()
        fields = kwargs.get("update_fields")
        if fields is not None and "ready" in fields and "not_ready_since" not in fields:
            kwargs["update_fields"] = [*fields, "not_ready_since"]
        super().save(*args, **kwargs)

    def clean(self) -> None:
        """The admin's form (the API's serializer checks the same): every amount within what one node may have, and
        at most ``FAIRWAY_MAX_NODES`` nodes in a cluster, so that no cluster's total can reach 2**62 base units."""
        limits = settings.FAIRWAY_LIMITS
        errors = node_amount_errors(self.allocatable or {}, limits.max_node_amount)
        if errors:
            raise ValidationError({"allocatable": [str(e) for e in errors]})
        if self.cluster_id is not None:
            others = Node.objects.filter(cluster_id=self.cluster_id).exclude(pk=self.pk)
            if others.count() >= limits.max_nodes:
                raise ValidationError(
                    {"cluster": f"this cluster holds {limits.max_nodes:,} nodes, the most one cluster may have "
                     "(FAIRWAY_MAX_NODES)"}
                )  # fmt: skip


class NodeAgentBinding(models.Model):
    """What one node-agent credential (a user in the ``node-agents`` group, with its API token) may act for: one
    node of a cluster, by name, or a named pool of nodes (every node of the cluster whose ``pool`` is that name).

    An agent registers only nodes it is bound to (the node's name, or the pool given with the registration),
    heartbeats only those, lists their pods and reports the status of (or confirms gone) only pods on them; the
    API refuses anything else with 403 naming the node. A user may hold several bindings. Staff need none.
    Bound by name, not by row, so that a binding can exist before its node registers. Create agents with
    ``manage.py create_node_agent`` or in the admin (*Node agent bindings*).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="node_bindings")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="agent_bindings")
    node = models.CharField(max_length=253, blank=True, default="", help_text="One node, by name.")
    pool = models.CharField(max_length=63, blank=True, default="", help_text="Or every node of a named pool.")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id", "cluster_id", "node", "pool"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(node="") & ~models.Q(pool="")) | (~models.Q(node="") & models.Q(pool="")),
                name="node_agent_binding_node_xor_pool",
            ),
            models.UniqueConstraint(fields=["user", "cluster", "node", "pool"], name="node_agent_binding_unique"),
        ]

    def __str__(self) -> str:
        target = f"node {self.node}" if self.node else f"pool {self.pool}"
        return f"{self.user} -> {target} ({self.cluster})"

    def clean(self) -> None:
        if bool(self.node) == bool(self.pool):
            raise ValidationError("bind the agent to one node or to one pool (exactly one of node and pool)")


class PodGroup(ClusterRow):
    """A gang job (Volcano PodGroup): admitted as a whole (minMember, minResources) into a leaf queue."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="podgroups")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="podgroups")
    name = models.CharField(max_length=253)
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="podgroups")
    min_member = models.PositiveIntegerField(default=1)
    min_task_member = models.JSONField(default=dict, blank=True)
    min_resources = ResourceListField(null=True, blank=True)
    priority = models.IntegerField(default=0)
    priority_class_name = models.CharField(max_length=253, blank=True, default="")
    phase = models.CharField(max_length=10, choices=PodGroupPhase.choices, default=PodGroupPhase.PENDING)
    conditions = models.JSONField(default=list, blank=True)
    reason = models.CharField(max_length=63, blank=True, default="", help_text="Why it is not Running.")
    message = models.TextField(blank=True, default="", help_text="The reason with its numbers.")
    blocker = models.JSONField(null=True, blank=True, help_text="The tree node, resource and numbers that block it.")
    unplaced_sessions = models.PositiveIntegerField(
        default=0, help_text="Sessions in a row it ended Inqueue with nothing placed (the requeue rule)."
    )
    requeues = models.PositiveIntegerField(
        default=0, help_text="Times it gave its reservation back for lack of a place since it last ran."
    )
    backoff_until = models.DateTimeField(
        null=True, blank=True, help_text="After a requeue, it is not admitted again before this moment."
    )
    gang_releases = models.PositiveIntegerField(
        default=0, help_text="Times the gang was released whole after staying below its minimum too long."
    )
    idle_gpu_seconds = models.PositiveBigIntegerField(
        default=0, help_text="GPU-seconds its pods held while the gang was below its minimum, over its releases."
    )
    released_at = models.DateTimeField(null=True, blank=True, help_text="When it was last released whole.")
    release_reason = models.TextField(blank=True, default="", help_text="Why it was last released whole.")
    # job actions (``scheduling.job_actions``). Null, not "", when unset: a column with a default makes Django
    # rebuild the table on SQLite, which drops the change feed's triggers (see ``Node.set_aside``).
    suspended_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a person suspended it: the sessions neither admit nor place it until it is resumed. Null "
        "when it is not suspended.",
    )
    suspended_by = models.CharField(  # noqa: DJ001 - see above
        max_length=150, null=True, blank=True, help_text="Who suspended it (a user name)."
    )
    deletion_requested_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="source=kubernetes: when a person asked to delete it; the adapter deletes its PodGroup and pods "
        "from the API server, and the row goes when the mirror sees them gone.",
    )
    deletion_requested_by = models.CharField(  # noqa: DJ001 - see above
        max_length=150, null=True, blank=True, help_text="Who asked to delete it (a user name)."
    )
    # Kueue's ResourceFlavors (``engine.flavors``), written by the sessions (null when unset, as above)
    flavors = models.JSONField(
        null=True,
        blank=True,
        help_text="The Kueue ResourceFlavor it was given for each resource it asks for (resource -> flavor, e.g. "
        '{"cpu": "spot"}); null: its queue has no resource in several flavors.',
    )
    pod_set_flavors = models.JSONField(
        null=True,
        blank=True,
        help_text="For a workload of several pod sets (a JobSet, a Kubeflow job, an MPIJob) whose pod sets were given "
        'different flavors, each pod set\'s (pod set -> resource -> flavor, e.g. {"master": {"cpu": "on-demand"}, '
        '"worker": {"cpu": "spot"}}); null otherwise.',
    )
    flavor_assignment = models.TextField(  # noqa: DJ001 - see above
        null=True,
        blank=True,
        help_text="Why these flavors: the flavors the last session's assignment tried for it, in order, and what "
        "each gave (fits, fits by borrowing, does not fit, with the numbers).",
    )
    kube_owner = models.CharField(  # noqa: DJ001 - see above
        max_length=400,
        null=True,
        blank=True,
        help_text="source=kubernetes: the controller that owns its PodGroup (its ownerReference with controller: "
        "true), as 'Kind name (apiVersion)'; such a PodGroup is deleted through its owner, not by Fairway.",
    )
    # Kueue's LocalQueue (``kueue.x-k8s.io/queue-name``), which Admission Fair Sharing orders it by (null: none)
    local_queue = models.CharField(  # noqa: DJ001 - see above
        max_length=63,
        null=True,
        blank=True,
        help_text="The Kueue LocalQueue of its namespace it was submitted to (its pods' label "
        "kueue.x-k8s.io/queue-name); Admission Fair Sharing orders its queue's jobs by that LocalQueue's usage.",
    )
    # Kueue's plain-Pod group (``engine.manifests.kueuegroups``): its pod-group-total-count (null: any other podgroup)
    kueue_pod_group_count = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="source=kubernetes: a Kueue pod group's pod count (its pods' annotation "
        "kueue.x-k8s.io/pod-group-total-count), which Kueue admits only once all its pods exist: while fewer of its "
        "pods can run and none is on a node, the sessions do not admit it. Null: any other podgroup (a Volcano "
        "PodGroup, a Kueue pod group with fast admission).",
    )
    # Kueue's batch/v1 Job read live (``engine.manifests.kueuejobs``): what the reader found (null: any other podgroup)
    kueue_job = models.JSONField(
        null=True,
        blank=True,
        help_text='source=kubernetes: a Kueue batch/v1 Job\'s podgroup: {"minCount": its '
        'kueue.x-k8s.io/job-min-parallelism or null, "suspended": whether spec.suspend is true}. Its pod count is '
        "kueue_pod_group_count. Null: any other podgroup.",
    )
    # Kueue's partial admission, live (``engine.partial``): the count a session admitted a Job with, below its own
    kueue_admitted_count = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="source=kubernetes: the pods a session admitted a Kueue Job with when that is fewer than its count "
        "(partial admission, kueue.x-k8s.io/job-min-parallelism): the adapter lowers the Job's spec.parallelism to it, "
        "and gives the Job its own back once it waits again. Null: admitted whole, or not admitted.",
    )
    # Kueue's maximum execution time, read live (``LoadResult.kueue_max_exec``; enforced by ``scheduling.max_exec``)
    kueue_max_exec_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="source=kubernetes: a Kueue workload's kueue.x-k8s.io/max-exec-time-seconds (a Job, JobSet, Kubeflow "
        "job or MPIJob, a pod group's pods, a plain pod): admitted that long in all, it is suspended "
        "(MaximumExecutionTimeExceeded) until a person resumes it. Null: no maximum.",
    )
    # who submitted it, for the per-user limits (``engine.userlimits``); null: its namespace counts as its user
    user = models.CharField(  # noqa: DJ001 - see above
        max_length=253,
        null=True,
        blank=True,
        help_text="Who submitted it: the API token's user, or for a Kubernetes object its annotation "
        "yunikorn.apache.org/user.info or fairway.io/user. Empty: its namespace counts as its user.",
    )
    user_groups = models.JSONField(
        null=True, blank=True, help_text="That user's groups (the Django user's groups, or the annotation's)."
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="podgroup_unique_name")]
        indexes = [models.Index(fields=["queue", "phase"])]

    def __str__(self) -> str:
        return f"{self.namespace.name}/{self.name}"


class Pod(ClusterRow):
    """A task of a podgroup: its request, priority, quota group, and where it runs."""

    # Every session's bindings update tens of thousands of pods, and each update writes every index (a binding
    # changes the status and the node, so no update can be HOT): no index of its own for ``cluster`` and ``node``,
    # which lead ``pod_unique_name`` and the (node, status) index; none for ``namespace`` either, second in
    # ``pod_unique_name`` (a namespace's pods in a cluster use it; only deleting a namespace scans the table), nor
    # for ``quota_group``, which nothing looks pods up by but the team scope's OR of three conditions (a scan with
    # or without it) and deleting a quota group (refused while pods name it). Each was ~3 µs of a binding:
    # 130 ms and 150 ms of a 50,000-pod session's writes.
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pods", db_index=False)
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="pods", db_index=False)
    name = models.CharField(max_length=253)
    podgroup = models.ForeignKey(PodGroup, null=True, blank=True, on_delete=models.CASCADE, related_name="pods")
    task_name = models.CharField(max_length=63, blank=True, default="")
    request = ResourceListField(default=dict, blank=True)
    priority = models.IntegerField(default=0)
    preemptible = models.BooleanField(default=True)
    quota_group = models.ForeignKey(
        QuotaGroup, null=True, blank=True, on_delete=models.PROTECT, related_name="pods", db_index=False
    )
    status = models.CharField(max_length=10, choices=PodStatus.choices, default=PodStatus.PENDING)
    reason = models.CharField(max_length=63, blank=True, default="", help_text="e.g. Evicted")
    message = models.TextField(blank=True, default="")
    # Bound / Running / Releasing: the node it runs on; Pipelined: the node it waits for (nominated).
    # No database constraint: PostgreSQL checked every bound row against it at COMMIT (180 ms of a 50,000-pod
    # session). The ORM still sets it NULL when its node is deleted (``on_delete``, after ``ClusterRow.delete``
    # has locked the cluster's revision, which a session's commit locks first too), the session's bindings bind
    # only to nodes of the cluster still there (``scheduling.store``), and a reader takes an unknown node_id for
    # none.
    node = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="pods",
        db_index=False,
        db_constraint=False,
    )
    node_selector = models.JSONField(default=dict, blank=True)
    node_affinity = models.JSONField(
        default=list,
        blank=True,
        help_text="Its required node affinity: the nodeSelectorTerms of Kubernetes' "
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution (each its matchExpressions and "
        "matchFields; terms ORed, entries ANDed); empty: none.",
    )
    tolerations = models.JSONField(default=list, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    # who submitted a pod of no podgroup (its own podgroup's user, ``PodGroup.user``); null: its namespace
    user = models.CharField(max_length=253, null=True, blank=True)  # noqa: DJ001 - see PodGroup.suspended_by
    user_groups = models.JSONField(null=True, blank=True)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True, validators=[MinValueValidator(0)])
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pod_unique_name")]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["node", "status"])]

    def __str__(self) -> str:
        return f"{self.namespace.name}/{self.name}"


# -- what the scheduler did ---------------------------------------------------------------------------------


class SessionKind(models.TextChoices):
    SESSION = "session"
    RECYCLE = "recycle"


class SessionStatus(models.TextChoices):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


class SchedulingSession(models.Model):
    """One scheduling session (or recycling pass) of a cluster: when, how long, what it decided, or why not.

    ``bindings`` lists the placements that took effect as ``[pod uid, node, pipelined]`` (a replayed session
    whose pods were already bound records none); evictions and podgroup reasons are rows of their own.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sessions")
    kind = models.CharField(max_length=8, choices=SessionKind.choices, default=SessionKind.SESSION)
    status = models.CharField(max_length=8, choices=SessionStatus.choices, default=SessionStatus.OK)
    started = models.DateTimeField()
    finished = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(default=0.0)
    timings = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "Milliseconds per phase: load, engine, bindings_wait (the engine done, its last bindings still being "
            "written), write."
        ),
    )
    bound = models.PositiveIntegerField(default=0)
    pipelined = models.PositiveIntegerField(default=0)
    evicted = models.PositiveIntegerField(default=0)
    podgroups = models.JSONField(default=dict, blank=True, help_text="Podgroups per phase after the session.")
    pending_pods = models.PositiveIntegerField(default=0, help_text="Pods waiting when the session opened.")
    warnings = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, default="")
    bindings = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started", "-id"]
        indexes = [models.Index(fields=["cluster", "started"]), models.Index(fields=["status", "started"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} of {self.cluster_id} ({self.status})"


class RecordKind(models.TextChoices):
    KEYFRAME = "keyframe"
    DELTA = "delta"


class SessionRecord(models.Model):
    """The inputs of one scheduling session, kept so that it can be run again (``fairway replay session ID``;
    ``scheduling.recording``): a keyframe (the whole snapshot the engine was fed) or a delta (what changed since the
    record ``parent_session``), compressed, its ``now``, and what the session decided (``decisions``: compact,
    compressed JSON; ``digest``: its SHA-256). The records of a chain are a keyframe and the deltas that follow it;
    ``keyframe_session`` names the chain's keyframe. The sessions are named by their ``SchedulingSession`` id (a
    plain number: a session row may go before its record and the other way round)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="session_records")
    session_id = models.BigIntegerField(unique=True)
    time = models.DateTimeField(help_text="When the session opened (its clock, as the engine was given it).")
    now = models.FloatField(help_text="The engine's now: epoch seconds, exactly as the session ran with.")
    kind = models.CharField(max_length=8, choices=RecordKind.choices)
    parent_session = models.BigIntegerField(null=True, blank=True)
    keyframe_session = models.BigIntegerField()
    payload = models.BinaryField()
    decisions = models.BinaryField()
    digest = models.CharField(max_length=64)
    bound = models.PositiveIntegerField(default=0)
    evicted = models.PositiveIntegerField(default=0)
    record_ms = models.FloatField(default=0.0, help_text="CPU milliseconds the recording took.")

    class Meta:
        ordering = ["-time", "-session_id"]
        indexes = [models.Index(fields=["cluster", "time"])]

    def __str__(self) -> str:
        return f"{self.kind} of session {self.session_id}"


class EvictionAction(models.TextChoices):
    RECLAIM = "reclaim"
    PREEMPT = "preempt"
    RECYCLE = "recycle"
    NODE_LOST = "node-lost", "node lost"
    GANG_RELEASE = "gang-release", "gang released"
    SUSPEND = "suspend", "suspended by a person"
    REQUEUE = "requeue", "requeued by a person"


class EvictionApiStatus(models.TextChoices):
    PENDING = "pending"
    REFUSED = "refused"
    DONE = "done"


class RemovalCause(models.TextChoices):
    GARBAGE_COLLECTED = "garbage-collected", "finished and garbage-collected"
    DELETED = "deleted", "deleted through the API"
    KUBERNETES = "kubernetes", "deleted from its Kubernetes cluster"


class RemovedJob(models.Model):
    """A job (podgroup) that was deleted: whose it was, when and why it went. Its evictions point at it, so that
    the job's page and the team's evictions still show them after the podgroup and pod rows are gone; kept
    ``FAIRWAY_EVICTION_RETENTION_DAYS`` after the removal, then deleted with its evictions
    (``scheduling.evictions``)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="removed_jobs")
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    queue = models.CharField(max_length=253, blank=True, default="")
    quota_groups = models.JSONField(default=list, blank=True, help_text="The quota groups its pods counted against.")
    phase = models.CharField(max_length=10, choices=PodGroupPhase.choices, help_text="Its phase when removed.")
    submitted = models.DateTimeField()
    finished = models.DateTimeField(null=True, blank=True, help_text="When its last pod finished, if any did.")
    removed_at = models.DateTimeField(help_text="When its row was deleted (recorded in the deleting transaction).")
    cause = models.CharField(max_length=20, choices=RemovalCause.choices)
    reason = models.TextField(blank=True, default="", help_text="Why it was removed, in a sentence.")

    class Meta:
        ordering = ["-removed_at", "-id"]
        indexes = [
            models.Index(fields=["cluster", "namespace", "name", "removed_at"]),
            models.Index(fields=["cluster", "removed_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} (removed {self.removed_at:%Y-%m-%d %H:%M:%S})"


class JobRecord(models.Model):
    """A job's history row (issue 29), written when its podgroup is removed (garbage-collected, deleted): what a
    trace needs of it (``scheduling.history``; ``fairway trace export``) once the podgroup and pod rows are gone. Kept
    ``FAIRWAY_JOB_HISTORY_DAYS`` (default 30) after its submission. Compact: the pods are counted per role with one
    request each (``roles``: ``[[role, pods, {resource: base units}], ...]``), about 300 bytes a job (docs/replay.md)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="job_records")
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    queue = models.CharField(max_length=253)
    quota_group = models.CharField(max_length=253, blank=True, default="")
    priority = models.IntegerField(default=0)
    preemptible = models.BooleanField(default=True)
    min_member = models.PositiveIntegerField(default=1)
    roles = models.JSONField(default=list, help_text="[[role, pods, {resource: base units}], ...]")
    min_resources = models.JSONField(
        null=True,
        blank=True,
        help_text="Its minResources (base units) where they are not the requests of its first minMember pods "
        "(the usual, kept as null); {}: none.",
    )
    submitted = models.DateTimeField()
    started = models.DateTimeField(null=True, blank=True, help_text="When its first pod started.")
    finished = models.DateTimeField(null=True, blank=True, help_text="When its last pod finished (all finished).")
    runtime = models.FloatField(null=True, blank=True, help_text="Seconds of work of its longest finished pod run.")
    pod_runtimes = models.JSONField(
        null=True,
        blank=True,
        help_text="Each pod's seconds of work (roles in order) where they differ (null: all ran runtime).",
    )
    evictions = models.PositiveIntegerField(default=0)
    flavors = models.JSONField(
        null=True,
        blank=True,
        help_text="The Kueue ResourceFlavor the cluster gave it, per resource ({resource: flavor}); null: none.",
    )
    user = models.CharField(
        max_length=253, blank=True, default="", help_text="Who submitted it (empty: its namespace counts as its user)."
    )
    user_groups = models.JSONField(default=list, blank=True, help_text="That user's groups (the per-user limits').")
    gpu_seconds = models.FloatField(
        default=0.0,
        help_text="The GPUs its pods held while they ran, in whole GPUs x seconds (evicted runs included).",
    )

    class Meta:
        indexes = [models.Index(fields=["cluster", "submitted"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} (submitted {self.submitted:%Y-%m-%d %H:%M:%S})"


class Eviction(models.Model):
    """A pod the scheduler evicted: which action, why (with numbers) and for whom; and whose it was (job, queue,
    quota group, by name, so that it still says so once the pod and its podgroup are deleted)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="evictions")
    session = models.ForeignKey(
        SchedulingSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="eviction_rows"
    )
    pod = models.ForeignKey(Pod, null=True, blank=True, on_delete=models.SET_NULL, related_name="evictions")
    pod_uid = models.CharField(max_length=520, help_text="namespace/name (kept when the pod is deleted)")
    namespace = models.CharField(max_length=63)
    node = models.CharField(max_length=253, blank=True, default="")
    action = models.CharField(max_length=16, choices=EvictionAction.choices)
    reason = models.CharField(max_length=63, blank=True, default="")
    message = models.TextField(blank=True, default="")
    preemptor = models.CharField(max_length=520, blank=True, default="")
    blocker = models.JSONField(null=True, blank=True)
    created = models.DateTimeField()
    # source=kubernetes: the Eviction API call that carries it out (``scheduling.kube.mirror_out``)
    api_status = models.CharField(
        max_length=10,
        choices=EvictionApiStatus.choices,
        blank=True,
        default="",
        help_text="source=kubernetes: where the policy/v1 Eviction of the pod stands.",
    )
    api_attempts = models.PositiveIntegerField(default=0, help_text="Eviction API calls made for it.")
    api_refusal = models.TextField(
        blank=True, default="", help_text="Why the API server refused the eviction last (e.g. a PodDisruptionBudget)."
    )
    api_retry_at = models.DateTimeField(null=True, blank=True, help_text="When a refused eviction is tried again.")
    # whose it was, written with the row (``stamp_owners``)
    job = models.CharField(max_length=253, blank=True, default="", help_text="Its pod's podgroup (the job), by name.")
    queue = models.CharField(max_length=253, blank=True, default="", help_text="The job's queue, by name.")
    quota_group = models.CharField(
        max_length=253, blank=True, default="", help_text="The quota group its pod counted against, by name."
    )
    removed_job = models.ForeignKey(
        RemovedJob,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="evictions",
        help_text="The job once it was removed (the eviction goes with the record of its removal).",
    )

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["cluster", "created"]),
            models.Index(fields=["queue", "created"]),
            models.Index(fields=["quota_group", "created"]),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.pod_uid}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding and self.pod_id is not None and not self.job:
            self.stamp_owners([self])
        super().save(*args, **kwargs)

    @staticmethod
    def stamp_owners(rows: Sequence[Eviction]) -> None:
        """Fill each row's ``job``, ``queue`` and ``quota_group`` from its pod (one query for all of them): the
        pod's quota group, or its namespace's when it names none (as the pod counts)."""
        ids = {row.pod_id for row in rows if row.pod_id is not None}
        if not ids:
            return
        owners = {
            pk: (job or "", queue or "", group or ns_group or "")
            for pk, job, queue, group, ns_group in Pod.objects.filter(pk__in=ids).values_list(
                "id", "podgroup__name", "podgroup__queue__name", "quota_group__name", "namespace__quota_group__name"
            )
        }
        for row in rows:
            if row.pod_id in owners:
                row.job, row.queue, row.quota_group = owners[row.pod_id]


class PodGroupReason(models.Model):
    """A podgroup's phase and reason from the session that changed them (its reason history)."""

    podgroup = models.ForeignKey(PodGroup, on_delete=models.CASCADE, related_name="reasons")
    session = models.ForeignKey(
        SchedulingSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="reason_rows"
    )
    time = models.DateTimeField()
    phase = models.CharField(max_length=10, choices=PodGroupPhase.choices)
    reason = models.CharField(max_length=63, blank=True, default="")
    message = models.TextField(blank=True, default="")
    blocker = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-time", "-id"]
        indexes = [models.Index(fields=["podgroup", "time"])]

    def __str__(self) -> str:
        return f"{self.podgroup_id} {self.phase} {self.reason}"


class SampleKind(models.TextChoices):
    QUEUE = "queue"
    QUOTA = "quota"


class QuotaSample(models.Model):
    """A tree node's computed values at one session, in base units (JSON of integers), for the charts.

    Queues: ``allocated`` and ``deserved``; quota groups: ``allocated`` holds ``used`` and ``deserved`` holds
    ``runtime``. ``borrowed`` and ``lent`` are relative to the node's deserved (queue) or min (quota group).
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="samples")
    time = models.DateTimeField()
    kind = models.CharField(max_length=5, choices=SampleKind.choices)
    name = models.CharField(max_length=253)
    request = models.JSONField(default=dict)
    allocated = models.JSONField(default=dict)
    deserved = models.JSONField(default=dict)
    borrowed = models.JSONField(default=dict)
    lent = models.JSONField(default=dict)

    class Meta:
        ordering = ["time", "id"]
        indexes = [models.Index(fields=["cluster", "kind", "name", "time"]), models.Index(fields=["time"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.name} @ {self.time:%Y-%m-%d %H:%M:%S}"


class QuotaOverState(models.Model):
    """Since when a quota group has been over its runtime in a cluster (the recycling debounce)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="quota_over_states")
    name = models.CharField(max_length=253, help_text="The quota group.")
    over_since = models.DateTimeField()

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="quota_over_state_unique")]

    def __str__(self) -> str:
        return f"{self.name} over since {self.over_since:%H:%M:%S}"


class UsageHistory(models.Model):
    """Fairness over time: each tree node's decayed past usage in a cluster, ONE row per cluster (``engine.usage``).

    ``nodes`` maps a node key (``queue/<name>``, ``quota/<name>``) to ``[used, deserved]``, two decayed integrals of
    dominant shares (millionths of the cluster x seconds); ``updated`` is when the session that wrote them ran. Read
    into the session's snapshot and written in the session's transaction, only while a policy turns it on."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="usage_history")
    updated = models.DateTimeField(help_text="When the session that wrote the integrals ran.")
    nodes = models.JSONField(default=dict, help_text="Node key -> [used, deserved] (decayed integrals).")

    class Meta:
        ordering = ["cluster_id"]
        verbose_name_plural = "usage histories"

    def __str__(self) -> str:
        return f"past usage of {len(self.nodes)} tree nodes @ {self.updated:%Y-%m-%d %H:%M:%S}"


class LocalQueueUsage(models.Model):
    """Admission Fair Sharing: a Kueue LocalQueue's decayed usage in a cluster (``engine.localqueues``), one row per
    cluster and LocalQueue, as Kueue keeps it in the LocalQueue's status.

    ``consumed`` is the decayed consumed resources, ``penalty`` the entry penalties of the jobs admitted since the last
    sample (base units: millicores, bytes), ``sampled`` when it was last sampled (null: seeded from Kueue's status and
    not sampled yet). Read into the live session's snapshot and written in its transaction, only while some queue has
    Admission Fair Sharing on; the Kubernetes adapter seeds it from Kueue's status the first time it sees the
    LocalQueue. Deleting the LocalQueue deletes its rows."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="local_queue_usages")
    local_queue = models.ForeignKey("quotas.LocalQueue", on_delete=models.CASCADE, related_name="usages")
    consumed = models.JSONField(default=dict, blank=True, help_text="Decayed consumed resources (base units).")
    penalty = models.JSONField(
        default=dict, blank=True, help_text="Entry penalties since the last sample (base units)."
    )
    sampled = models.DateTimeField(null=True, blank=True, help_text="When it was last sampled (null: never).")

    class Meta:
        ordering = ["cluster_id", "local_queue_id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "local_queue"], name="local_queue_usage_unique")]

    def __str__(self) -> str:
        return f"usage of LocalQueue {self.local_queue_id} in cluster {self.cluster_id}"


class ClusterLease(models.Model):
    """A lock held until ``expires`` (the SQLite fallback of the advisory locks; see ``scheduling/locks.py``)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="leases")
    key = models.BigIntegerField()
    owner = models.CharField(max_length=64, blank=True, default="")
    expires = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster_id", "key"]
        constraints = [models.UniqueConstraint(fields=["cluster", "key"], name="cluster_lease_unique")]

    def __str__(self) -> str:
        return f"lease {self.key} of {self.cluster_id}"


# -- the change feed --------------------------------------------------------------------------------------------


class ChangeKind(models.IntegerChoices):
    NODE = 1
    PODGROUP = 2
    POD = 3


class RowChange(models.Model):
    """A node, podgroup or pod of a cluster written at cluster revision ``rev`` (``core.models.Revision``).

    Written only by the database triggers (``scheduling.feed.triggers``), in the transaction of the write, for
    an insert, a delete, or an update that changed a column the engine reads (a heartbeat is not a change). The
    trigger moves the cluster's revision itself, so a writer that did not (a cascade, raw SQL) is still ordered,
    and logs the changes at the moved revision. ``row_id`` is the written row's primary key; what it holds now is
    read from its table (a row no longer there was deleted). No foreign key: the rows outlive what they name.
    """

    cluster_id = models.BigIntegerField()
    rev = models.BigIntegerField()
    kind = models.SmallIntegerField(choices=ChangeKind.choices)
    row_id = models.BigIntegerField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["cluster_id", "rev"], name="rowchange_cluster_rev")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.row_id} of cluster {self.cluster_id} at {self.rev}"


class ClusterFeed(models.Model):
    """The state of a cluster's change feed (``RowChange``) that a mirror must check before trusting it.

    ``epoch`` is drawn when the row is created (a mirror built under another epoch, before the database was
    emptied or the cluster recreated, reads in full); ``pruned_through`` is the revision up to which changes were
    deleted (a mirror older than that reads in full); ``last_mirror`` is the mirror generation (worker process
    and build) that ran the cluster's last scheduling session, at revision ``last_mirror_rev``. ``last_queue`` is
    the queue of the worker process that ran it, when that process has one of its own, and ``last_session_at`` when
    (``scheduling.feed.affinity``: the next sessions are sent to that process, where the cluster's copy is current).
    """

    cluster = models.OneToOneField(Cluster, primary_key=True, on_delete=models.CASCADE, related_name="feed")
    epoch = models.UUIDField(default=uuid.uuid4)
    pruned_through = models.BigIntegerField(default=0)
    last_mirror = models.CharField(max_length=64, blank=True, default="")
    last_mirror_rev = models.BigIntegerField(default=0)
    last_queue = models.CharField(max_length=200, blank=True, default="")
    last_session_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"feed of {self.cluster_id} (pruned through {self.pruned_through})"


class ClusterCounters(models.Model):
    """What a cluster's sessions did since the cluster was created, for ``/metrics``: cumulative counts that only
    grow (``scheduling.counters``), written in the transaction of what they count. The session and eviction rows
    they count are pruned after a week; these are not, so a Prometheus counter read from them never goes back.

    ``counts`` holds ``{"sessions": {"<kind>:<status>": n}, "duration": {"<kind>": {"buckets": [n per bound of
    counters.BUCKETS, then +Inf], "sum": seconds}}, "binds": n, "pipelined": n, "evictions": {"<action>": n},
    "tree_evictions": {"queue" | "quota_group": {"<node>": {"<action>": n}}}, "tree_thrash", "subtree_evictions",
    "subtree_thrash": the same}`` (a subtree's counts: its node's own and every descendant's).
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, primary_key=True, related_name="counters")
    counts = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"counters of {self.cluster_id}"


# -- the Kubernetes adapter -------------------------------------------------------------------------------------


class KubeObjectProblem(models.Model):
    """An object of a ``source=kubernetes`` cluster that the adapter could not apply (a bad field, or a tree rule
    it breaks), with the reason. Nothing of such an object is written: the rows keep what the last valid version
    made of them. The row goes when the object is fixed or deleted; a Kubernetes Event with the same reason is
    created on the object.

    ``reason`` ``FairwayHeldToRange`` marks an object that was applied, but held to its queue's range of priority
    and preemptibility (``engine.rules.priority_range``): the message says what Fairway schedules it with."""

    INVALID = "FairwayInvalid"
    HELD_TO_RANGE = "FairwayHeldToRange"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="kube_problems")
    kind = models.CharField(max_length=63)
    namespace = models.CharField(max_length=63, blank=True, default="")
    name = models.CharField(max_length=253)
    message = models.TextField()
    reason = models.CharField(
        max_length=63,
        default=INVALID,
        help_text="The Event's reason: FairwayInvalid (not applied) or FairwayHeldToRange (applied, its priority or "
        "preemptibility held to its queue's range).",
    )
    resource_version = models.CharField(max_length=63, blank=True, default="")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    event_sent = models.BooleanField(default=False, help_text="A Kubernetes Event was created for this message.")

    class Meta:
        ordering = ["cluster_id", "kind", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "kind", "namespace", "name"], name="kube_problem_unique")
        ]

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}: {self.message}"
