"""Writes to the trees: load the current tree as engine specs, check the change with ``engine.rules``, then write
it in one transaction. The API, the admin, the importer and the what-if endpoint all come through here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Q

from core import facts, tree_owner
from core.locks import TREE_WRITE_LOCK
from engine import rules, treefields
from engine.admission import LocalQueueSpec
from engine.kueuepolicy import parse_kueue_policy
from engine.manifests.kueue import resource_flavor_spec
from engine.objects import OCCUPYING_STATUSES, ROOT_GROUP, QueueSpec, QuotaGroupSpec, TaskStatus
from engine.resources import (
    FLAVOR_MARK,
    FLAVOR_NAME_RE,
    QuantityError,
    ResourceList,
    format_amount,
    format_exact_quantity,
    parse_exact_quantity,
    split_flavor,
)
from engine.treefields import FieldKind
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor

# The fields an edit sets, from the engine's table of each tree kind (``engine.treefields``)
QUEUE_FIELDS = treefields.editable(treefields.QUEUE_FIELDS)
# Fairway's admission policy of a queue's jobs (``engine.rules.priority_range``): no part of the engine's tree
QUEUE_POLICY_FIELDS = ("max_priority", "allow_non_preemptible")
GROUP_FIELDS = treefields.editable(treefields.QUOTA_GROUP_FIELDS)

# The pods a queue counts as allocated in the rules' facts: those that hold resources on a node or are about to
# (pipelined), including the ones still releasing them.
ACTIVE_POD_STATUSES = sorted(OCCUPYING_STATUSES | {TaskStatus.PIPELINED})


def _raise(errors: list[rules.FieldError]) -> None:
    rules.check(errors)


# The advisory-lock key of the tree writers (the first int4 of pg_advisory_xact_lock(int4, int4); the
# scheduling locks of ``scheduling/locks.py`` use other keys of the same space).


def lock_tree_writes() -> None:
    """Serialise the writers of the organisation's trees (queues, quota groups, namespaces) until the current
    transaction ends.

    Every write of a tree node — API, editor, staged what-if, admin deletes — takes this lock first, then reads the
    row it changes (and its version) and the tree its rules check. So the version an ``If-Match`` or an editor form
    is compared with is the one the write will replace (two writers with the same ``If-Match``: one wins, the other
    sees the new version and gets 412), and the tree-wide rules (children's deserved within the parent's, siblings'
    min, cycles) cannot be broken by two writes that each passed them alone. One lock for all three models, taken
    before any row lock, keeps writers that touch several of them (a quota group's namespaces, a cascade delete,
    a queue's state change that walks its children) from deadlocking. PostgreSQL: ``pg_advisory_xact_lock``,
    released at COMMIT or ROLLBACK. SQLite serialises writers already (transactions begin IMMEDIATE).
    """
    if not connection.in_atomic_block:
        raise RuntimeError("lock_tree_writes() must run inside a transaction (transaction.atomic)")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", [TREE_WRITE_LOCK])


# --- Kueue's ResourceFlavors ---------------------------------------------------------------------------------

RESOURCE_FLAVOR_FIELDS = {
    "node_labels": "nodeLabels",
    "node_taints": "nodeTaints",
    "tolerations": "tolerations",
    "topology_name": "topologyName",
}
RESOURCE_FLAVOR_EMPTY: dict[str, Any] = {"node_labels": {}, "node_taints": [], "tolerations": [], "topology_name": ""}


def check_resource_flavor(instance: ResourceFlavor | None, data: Mapping[str, Any]) -> dict[str, Any]:
    """The values of a ResourceFlavor create (``instance`` None) or update, checked as Kueue's reader checks a
    ResourceFlavor object (``engine.manifests.kueue.resource_flavor_spec``), each problem naming its field
    (``node_taints``: ``node_taints[0].effect: 'Sometimes' is not one of ...``); raises ``rules.RuleViolation``."""
    errors: list[rules.FieldError] = []
    name = data.get("name", instance.name if instance is not None else "")
    if not isinstance(name, str) or not name or len(name) > 253 or not FLAVOR_NAME_RE.match(name):
        errors.append(rules.FieldError("name", f"{name!r} is not a ResourceFlavor name (a DNS-1123 subdomain)"))
    elif instance is not None and name != instance.name:
        errors.append(rules.FieldError("name", "a ResourceFlavor keeps its name (queues' quotas name it)"))
    elif instance is None and ResourceFlavor.objects.filter(name=name).exists():
        errors.append(rules.FieldError("name", f"ResourceFlavor {name} already exists", "exists"))
    values: dict[str, Any] = {}
    for attr, kueue in RESOURCE_FLAVOR_FIELDS.items():
        value = data[attr] if attr in data else (getattr(instance, attr) if instance is not None else None)
        if value is None:
            value = RESOURCE_FLAVOR_EMPTY[attr]
        try:
            resource_flavor_spec(str(name), {kueue: value}, attr)
        except ValueError as exc:
            message = str(exc).replace(f"{attr}.{kueue}", attr)
            errors.append(rules.FieldError(attr, message))
        values[attr] = value
    _raise(errors)
    return {"name": name, **values}


_Row = TypeVar("_Row", ResourceFlavor, LocalQueue)


def _written(row: _Row, values: Mapping[str, Any]) -> _Row:
    """``row`` with the checked ``values`` set and saved (inside the caller's transaction)."""
    for key, value in values.items():
        setattr(row, key, value)
    row.save()
    return row


@transaction.atomic
def save_resource_flavor(instance: ResourceFlavor | None, data: Mapping[str, Any]) -> ResourceFlavor:
    """Create or update a ResourceFlavor (checked first; one transaction, under the trees' write lock)."""
    lock_tree_writes()
    tree_owner.check_writable()
    return _written(instance or ResourceFlavor(), check_resource_flavor(instance, data))


def resource_flavor_users(name: str) -> list[str]:
    """The queues whose quota or resource groups name the ResourceFlavor ``name``."""
    return [queue for queue, spec in sorted(queue_specs().items()) if name in _flavors_named(spec)]


def _flavors_named(spec: QueueSpec) -> set[str]:
    named = {split_flavor(key)[1] for field in _FLAVORED_FIELDS for key in getattr(spec, field) or ()}
    for group in (spec.kueue or {}).get("resourceGroups") or ():
        named.update(group.get("flavors") or ())
    return named - {""}


@transaction.atomic
def delete_resource_flavor(flavor: ResourceFlavor) -> None:
    """Delete a ResourceFlavor no queue names (else ``rules.RuleViolation`` naming the queues)."""
    lock_tree_writes()
    tree_owner.check_writable()
    users = resource_flavor_users(flavor.name)
    if users:
        _raise(
            [
                rules.FieldError(
                    "name",
                    f"ResourceFlavor {flavor.name} is in use: the quota of {', '.join(users)} names it "
                    "(remove it from their quotas and resource groups first)",
                    "in_use",
                )
            ]
        )
    flavor.delete()


# --- Kueue's LocalQueues -------------------------------------------------------------------------------------

LOCAL_QUEUE_NAME_MAX = 63  # a LocalQueue's name is the value of a job's kueue.x-k8s.io/queue-name label
LOCAL_QUEUE_WEIGHT_MAX = 64  # the characters of a weight written out (``LocalQueue.weight``)


def _local_queue_weight(value: object) -> tuple[str | None, list[rules.FieldError]]:
    """Kueue's ``fairSharing.weight`` of a LocalQueue as stored (``format_exact_quantity``: ``"500m"`` is ``"0.5"``),
    or the problem naming ``weight``."""
    if value is None or value == "":
        return "1", []
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None, [rules.FieldError("weight", f"weight: {value!r} is not a quantity (e.g. 1, 0.75, 500m)")]
    try:
        weight = parse_exact_quantity(str(value), "weight")
    except QuantityError as exc:
        return None, [rules.FieldError("weight", str(exc))]
    if weight < 0:
        return None, [rules.FieldError("weight", f"weight: {value!r} must not be negative (0 is admitted last)")]
    try:
        text = format_exact_quantity(weight)
    except ValueError:  # more digits than Python writes out
        text = ""
    if not text or len(text) > LOCAL_QUEUE_WEIGHT_MAX:
        return None, [
            rules.FieldError(
                "weight",
                f"weight: {value!r} is too large or too fine to keep (at most {LOCAL_QUEUE_WEIGHT_MAX} digits)",
            )
        ]
    return text, []


def check_local_queue(instance: LocalQueue | None, data: Mapping[str, Any]) -> dict[str, Any]:
    """The values of a LocalQueue create (``instance`` None) or update, each problem naming its field: ``namespace``
    an existing namespace, ``name`` a DNS-1123 subdomain of at most 63 characters (a label's value) not taken in
    that namespace, ``queue`` a leaf queue other than the built-in ``root`` and ``default`` (what Kueue's export
    writes as a ClusterQueue), ``weight`` a quantity >= 0. Raises ``rules.RuleViolation``."""
    errors: list[rules.FieldError] = []

    def given(attr: str) -> Any:
        if attr in data:
            return data[attr]
        return getattr(instance, attr) if instance is not None else None

    namespace, queue = given("namespace"), given("queue")
    ns_name = namespace.name if isinstance(namespace, Namespace) else namespace
    queue_name = queue.name if isinstance(queue, Queue) else queue
    name = given("name")
    errors += rules.validate_dns_subdomain(name, what="LocalQueue name", field="name", max_length=LOCAL_QUEUE_NAME_MAX)
    ns_row = Namespace.objects.filter(name=ns_name).first() if isinstance(ns_name, str) else None
    if ns_row is None:
        errors.append(rules.FieldError("namespace", f"namespace {ns_name!r} does not exist", "does_not_exist"))
    elif instance is not None and (ns_row.pk != instance.namespace_id or name != instance.name):
        errors.append(rules.FieldError("name", "a LocalQueue keeps its namespace and name (jobs' labels name it)"))
    elif instance is None and not errors and LocalQueue.objects.filter(namespace=ns_row, name=name).exists():
        errors.append(rules.FieldError("name", f"LocalQueue {ns_name}/{name} already exists", "exists"))
    queue_row = Queue.objects.filter(name=queue_name).first() if isinstance(queue_name, str) else None
    if queue_row is None:
        errors.append(rules.FieldError("queue", f"queue {queue_name!r} does not exist", "does_not_exist"))
    elif queue_row.name in Queue.BUILTIN or queue_row.children.exists():
        errors.append(
            rules.FieldError(
                "queue",
                f"queue {queue_row.name} is not a leaf queue a LocalQueue may point at (a ClusterQueue: a leaf other "
                "than the built-in root and default)",
            )
        )
    weight, problems = _local_queue_weight(given("weight"))
    errors += problems
    _raise(errors)
    return {"namespace": ns_row, "name": name, "queue": queue_row, "weight": weight}


@transaction.atomic
def save_local_queue(instance: LocalQueue | None, data: Mapping[str, Any]) -> LocalQueue:
    """Create or update a LocalQueue (checked first; one transaction, under the trees' write lock)."""
    lock_tree_writes()
    tree_owner.check_writable()
    return _written(instance or LocalQueue(), check_local_queue(instance, data))


@transaction.atomic
def delete_local_queue(row: LocalQueue) -> None:
    """Delete a LocalQueue (its jobs keep their queue; their usage ordering counts it as a LocalQueue of usage 0)."""
    lock_tree_writes()
    tree_owner.check_writable()
    row.delete()


def local_queue_usage(row: LocalQueue) -> dict[str, dict[str, str]]:
    """Per cluster (by name), the usage Admission Fair Sharing orders ``row`` by: its consumed resources plus its
    pending entry penalties, as people read amounts (cores, GiB, GPUs); through the reverse relation of the live
    sessions' rows (``scheduling.LocalQueueUsage``)."""
    out: dict[str, dict[str, str]] = {}
    for usage in sorted(row.usages.all(), key=lambda u: u.cluster.name):  # prefetched by the API's list
        total = dict(usage.consumed or {})
        for r, v in (usage.penalty or {}).items():
            total[r] = total.get(r, 0) + v
        out[usage.cluster.name] = {r: format_amount(int(v), r) for r, v in sorted(total.items())}
    return out


def local_queue_specs() -> list[LocalQueueSpec]:
    """The stored LocalQueues as the engine reads them (one query)."""
    rows = LocalQueue.objects.select_related("namespace", "queue").order_by("namespace__name", "name")
    return [row.to_spec() for row in rows]


# --- queues -------------------------------------------------------------------------------------------------
def queue_specs() -> dict[str, QueueSpec]:
    """The whole queue tree as engine specs, keyed by name (one query)."""
    rows = Queue.objects.select_related("parent").order_by("name")
    return {q.name: q.to_spec(parent_name=q.parent.name if q.parent_id else None) for q in rows}


def priority_ranges() -> dict[str, rules.PriorityRange]:
    """Per queue name, the range of priority and preemptibility its jobs may have: the strictest of the queue's and
    its ancestors' ``max_priority`` and ``allow_non_preemptible`` (one query)."""
    rows = {
        pk: (parent, name, max_priority, allow)
        for pk, parent, name, max_priority, allow in Queue.objects.values_list(
            "id", "parent_id", "name", "max_priority", "allow_non_preemptible"
        )
    }
    out: dict[str, rules.PriorityRange] = {}
    for pk, (_, name, _, _) in rows.items():
        path: list[tuple[str, int | None, bool]] = []
        at: int | None = pk
        while at is not None and at in rows and len(path) <= len(rows):  # a cycle cannot be stored; bounded anyway
            parent, n, max_priority, allow = rows[at]
            path.append((n, max_priority, allow))
            at = parent
        out[name] = rules.priority_range(name, path)
    return out


def queue_facts() -> dict[str, rules.QueueFacts]:
    """Per queue, its podgroups and active pods (counted through the reverse relations the scheduling app's
    models declare, so this module needs none of them) and whether its parent closed it."""
    rows = Queue.objects.annotate(
        n_podgroups=Count("podgroups", distinct=True),
        n_allocated=Count("podgroups__pods", filter=Q(podgroups__pods__status__in=ACTIVE_POD_STATUSES), distinct=True),
    ).values_list("name", "n_podgroups", "n_allocated", "closed_by_parent")
    return {
        name: rules.QueueFacts(podgroups=pg, allocated_pods=alloc, closed_by_parent=cbp)
        for name, pg, alloc, cbp in rows
    }


def _max_depth() -> int:
    return int(settings.FAIRWAY["MAX_QUEUE_DEPTH"])


def _null_is_empty(table: Sequence[treefields.TreeField], changes: dict[str, Any]) -> None:
    """A resource list sent as null means an empty one (a limit: unlimited); only a weights list keeps None. User
    limits sent as null are none. Kueue's levers are kept normalized (``engine.kueuepolicy``)."""
    for f in table:
        if f.name in changes and changes[f.name] is None and f.kind in (FieldKind.RESOURCES, FieldKind.LIMITS):
            changes[f.name] = ResourceList()
        elif f.name in changes and changes[f.name] is None and f.kind is FieldKind.USER_LIMITS:
            changes[f.name] = ()
        elif f.name in changes and f.kind is FieldKind.KUEUE:  # Kueue's levers, normalized (the rules say what is bad)
            value, problems = parse_kueue_policy(changes[f.name], f.name)
            if not problems:
                changes[f.name] = value


def check_queue(instance: Queue | None, data: Mapping[str, Any]) -> QueueSpec:
    """Validate a create (``instance`` None) or an update of a queue; return the resulting spec or raise."""
    tree = queue_specs()
    old = tree.get(instance.name) if instance is not None else None
    if instance is not None and instance.name != (old.name if old else None):  # pragma: no cover - defensive
        old = None
    base = old or QueueSpec(name=str(data.get("name", "")))
    changes = {k: data[k] for k in (*QUEUE_FIELDS, "name", "parent") if k in data}
    if "parent" not in changes and old is None:
        changes["parent"] = "root" if changes.get("name") != "root" else None
    _null_is_empty(treefields.QUEUE_FIELDS, changes)
    new = replace(base, **changes)
    if new.name in tree and (old is None or new.name != old.name):
        exists = rules.FieldError("name", f"queue {new.name} already exists", "exists")
        _raise([exists, *rules.queue_field_errors(new)])
    if old is not None and new.name != old.name:
        tree = {k: v for k, v in tree.items() if k != old.name}
        tree = {k: (replace(v, parent=new.name) if v.parent == old.name else v) for k, v in tree.items()}
    elif old is not None:
        tree = {k: v for k, v in tree.items() if k != old.name}
    # a queue LocalQueues point at stays a leaf
    parented = (
        _named_by_local_queues([new.parent], "parent")
        if new.parent and new.parent != getattr(old, "parent", None)
        else []
    )
    _raise(
        rules.validate_queue(tree, new, old, facts=queue_facts(), max_depth=_max_depth())
        + _flavor_errors(new)
        + parented
    )
    return new


_FLAVORED_FIELDS = ("capability", "deserved", "guarantee", "borrowing_limit", "lending_limit")


def _flavor_errors(spec: QueueSpec) -> list[rules.FieldError]:
    """A queue's quota in a ResourceFlavor (``deserved.cpu@spot``) and its resource groups' flavors
    (``kueue.resourceGroups.0.flavors.1``) must name stored ResourceFlavors."""
    named: list[tuple[str, str]] = []
    for name in _FLAVORED_FIELDS:
        for key in getattr(spec, name) or ():
            flavor = split_flavor(key)[1]
            if flavor:
                named.append((f"{name}.{key}", flavor))
    for i, group in enumerate((spec.kueue or {}).get("resourceGroups") or ()):
        for j, flavor in enumerate(group.get("flavors") or ()):
            named.append((f"kueue.resourceGroups.{i}.flavors.{j}", flavor))
    if not named:
        return []
    known = set(ResourceFlavor.objects.filter(name__in={f for _, f in named}).values_list("name", flat=True))
    return [
        rules.FieldError(
            where,
            f"queue {spec.name}: {where}: no ResourceFlavor {flavor!r}: create it first (resource-flavors)",
            "unknown_flavor",
        )
        for where, flavor in named
        if flavor not in known
    ]


def problems(kind: Literal["queue", "quota"], instance: Any, data: Mapping[str, Any]) -> list[rules.FieldError]:
    """Every rule a queue (``kind`` "queue") or quota group ("quota") change breaks, without raising: for callers
    that report the rules' problems together with their own (a form's unparsable inputs, a request's bad fields)."""
    try:
        (check_queue if kind == "queue" else check_quota_group)(instance, data)
    except rules.RuleViolation as exc:
        return list(exc.errors)
    return []


def change_warnings(kind: Literal["queue", "quota"], instance: Any, data: Mapping[str, Any]) -> list[rules.FieldError]:
    """The warnings (``engine.rules.warnings``) about a change the rules accept: deserved, guarantees or min adding
    up to more than a cluster has, a weight or deserved that the cluster's queue policy ignores, a deserved or min
    below the minimum of one of the node's own jobs (``_below_largest_job``). Empty when the change breaks a rule
    (its errors say more). One warning per field and message, whatever the clusters."""
    try:
        new: Any = (check_queue if kind == "queue" else check_quota_group)(instance, data)
    except rules.RuleViolation:
        return []
    specs: dict[str, Any] = queue_specs() if kind == "queue" else group_specs()
    old = specs.get(instance.name) if instance is not None else None
    after = {k: v for k, v in specs.items() if old is None or k != old.name}
    after[new.name] = new
    clusters = facts.clusters()
    out: list[rules.FieldError] = []
    for c in clusters:
        named = c.name if len(clusters) > 1 else ""
        if kind == "queue":
            found = rules.queue_warnings(after, new, old, total=c.total, policy=c.queue_policy, cluster=named)
        else:
            found = rules.quota_group_warnings(after, new, old, total=c.total, cluster=named)
        out += [w for w in found if w not in out]
    if kind == "queue":
        out += _plain_beside_flavored(after, new)
    if instance is not None:
        out += _below_largest_job(kind, instance.name, new)
    return out


def _below_largest_job(kind: Literal["queue", "quota"], name: str, new: Any) -> list[rules.FieldError]:
    """A warning for each resource whose deserved (a queue) or min (a quota group) the write sets below what one
    unfinished job of the node asks as its minimum (its whole gang): however fair the division, that job starts
    only while others lend it the rest, and when they take it back its gang is released whole. The job's refusal
    reason says the same once it waits (``elasticquota``); this says it to the admin who sets the quota."""
    field_name, what, others = ("deserved", "queue", "queues") if kind == "queue" else ("min", "quota group", "groups")
    amounts: Mapping[str, int] = getattr(new, field_name) or {}
    largest = facts.largest_job_minimums(**({"queue": name} if kind == "queue" else {"quota_group": name}))
    out = []
    for resource in sorted(largest):
        floor = amounts.get(resource)
        job = largest[resource]
        demand = job.min_resources[resource]
        if floor is None or demand <= floor:
            continue
        where = f" in cluster {job.cluster}" if len(facts.clusters()) > 1 else ""
        out.append(
            rules.FieldError(
                f"{field_name}.{resource}",
                f"{what} {new.name}: {field_name} {resource} {format_amount(floor, resource)} is below the minimum "
                f"of job {job.namespace}/{job.name}{where} ({format_amount(demand, resource)}): however fair the "
                f"division, it starts only while other {others} lend at least {format_amount(demand - floor, resource)}, "
                f"and is released whole when they take it back; a {field_name} of {format_amount(demand, resource)} "
                "or a smaller gang would let it start without borrowing",
                "below_job_minimum",
            )
        )
    return out


def _plain_beside_flavored(tree: Mapping[str, QueueSpec], new: QueueSpec) -> list[rules.FieldError]:
    """A warning for each plain resource of ``new``'s quota that the tree gives per ResourceFlavor elsewhere: the
    nodes then offer it per flavor (``engine.manifests.kueuestored``), so a plain quota of it admits nothing."""
    per_flavor: dict[str, set[str]] = {}
    for name, spec in tree.items():
        for resource in {
            split_flavor(k)[0] for f in _FLAVORED_FIELDS for k in getattr(spec, f) or () if FLAVOR_MARK in k
        }:
            per_flavor.setdefault(resource, set()).add(name)
    out = []
    for field_name in _FLAVORED_FIELDS:
        for key in getattr(new, field_name) or ():
            if key in per_flavor:
                where = ", ".join(sorted(per_flavor[key])[:3])
                out.append(
                    rules.FieldError(
                        f"{field_name}.{key}",
                        f"{key} has quota per ResourceFlavor in {where}: the nodes offer it per flavor, so a plain "
                        f"{key} quota admits nothing (give it per flavor, {key}@<flavor>)",
                        "plain_beside_flavored",
                    )
                )
    return out


@transaction.atomic
def save_queue(instance: Queue | None, data: Mapping[str, Any]) -> Queue:
    """Create or update a queue. ``instance`` is saved by compare-and-swap on the version it was read at
    (``VersionConflict`` when it changed since)."""
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    spec = check_queue(instance, data)
    queue = instance or Queue()
    queue.name = spec.name
    queue.parent = Queue.objects.get(name=spec.parent) if spec.parent else None
    for f in treefields.QUEUE_FIELDS:
        if f.writable:
            setattr(queue, f.name, treefields.stored(f, getattr(spec, f.name)))
    for key in QUEUE_POLICY_FIELDS:
        if key in data:
            setattr(queue, key, data[key])
    if "teams" in data:
        queue.save()
        queue.teams.set(data["teams"])
    queue.save()
    return queue


@transaction.atomic
def delete_queue(queue: Queue, *, cascade: bool = False, force: bool = False) -> list[str]:
    """Delete a queue (children first with ``cascade``; its podgroups and pods, and the Kueue LocalQueues pointing
    at it, too with ``force``; without, a queue LocalQueues point at is refused)."""
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    tree = queue_specs()
    _raise(rules.validate_queue_delete(tree, queue.name, facts=queue_facts(), cascade=cascade, force=force))
    order = rules.plan_queue_delete(tree, queue.name, cascade=cascade)
    _raise(_mirrored_jobs(order) if force else [])
    _raise([] if force else _named_by_local_queues(order))
    queues = {q.name: q for q in Queue.objects.filter(name__in=order).select_for_update()}
    for name in order:
        queues[name].podgroups.all().delete()  # pods cascade with their podgroup
        queues[name].local_queues.all().delete()  # with force: the LocalQueues pointing at it too
        Namespace.objects.filter(default_queue=queues[name]).update(default_queue=None)
        queues[name].delete()
    return order


def _named_by_local_queues(queues: Sequence[str], field: str = "name") -> list[rules.FieldError]:
    """A queue Kueue's LocalQueues point at is neither deleted nor given children: they would point at nothing, or
    at a cohort."""
    named = sorted(
        f"{ns}/{name} ({queue})"
        for ns, name, queue in LocalQueue.objects.filter(queue__name__in=list(queues)).values_list(
            "namespace__name", "name", "queue__name"
        )
    )
    if not named:
        return []
    return [
        rules.FieldError(
            field,
            f"LocalQueues point at it: {', '.join(named)} (a LocalQueue's queue is a leaf; point them elsewhere or "
            "delete them first; a forced delete deletes them)",
            "in_use",
        )
    ]


def _mirrored_jobs(queues: Sequence[str]) -> list[rules.FieldError]:
    """A forced delete would delete the podgroups of ``queues``: those of a cluster mirrored from Kubernetes are its
    adapter's to write (``core.facts.mirrored_clusters``), not people's."""
    mirrored = facts.mirrored_clusters()
    if not mirrored:
        return []
    held = (
        Queue.objects.filter(name__in=queues, podgroups__cluster__name__in=mirrored)
        .values_list("name", "podgroups__cluster__name")
        .distinct()
        .order_by("name", "podgroups__cluster__name")
    )
    return [
        rules.FieldError(
            "force",
            f"queue {name} holds podgroups of cluster {cluster}, which is mirrored from Kubernetes: delete them there "
            "with kubectl; Fairway only reads them",
            "cluster_mirrored_from_kubernetes",
        )
        for name, cluster in held
    ]


@transaction.atomic
def queue_action(queue: Queue, action: str) -> dict[str, tuple[str, bool]]:
    """Open or close a queue with the hierarchical rules; returns every queue whose state changed."""
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    rows = {q.name: q for q in Queue.objects.select_for_update(of=("self",)).select_related("parent")}
    tree = {name: q.to_spec(parent_name=q.parent.name if q.parent_id else None) for name, q in rows.items()}
    states = {name: q.state for name, q in rows.items()}
    closed_by_parent = {name: q.closed_by_parent for name, q in rows.items()}
    try:
        changes = rules.plan_queue_action(tree, states, closed_by_parent, queue.name, action, queue_facts())
    except rules.RuleViolation:
        raise
    for name, (state, cbp) in changes.items():
        q = rows[name]
        q.state, q.closed_by_parent = state, cbp
        q.save(update_fields=["state", "closed_by_parent"])
    return changes


@transaction.atomic
def settle_closing_queues() -> list[str]:
    """Closing queues whose podgroups are all gone become Closed (run after podgroup deletions)."""
    lock_tree_writes()
    settled = []
    for q in Queue.objects.filter(state="Closing").annotate(n=Count("podgroups")):
        new_state = rules.settle_queue_state(q.state, q.n)
        if new_state != q.state:
            q.state = new_state
            q.save(update_fields=["state"])
            settled.append(q.name)
    return settled


# --- quota groups -------------------------------------------------------------------------------------------
def group_specs() -> dict[str, QuotaGroupSpec]:
    rows = QuotaGroup.objects.select_related("parent").order_by("name")
    return {g.name: g.to_spec(parent_name=g.parent.name if g.parent_id else None) for g in rows}


def group_facts() -> dict[str, rules.GroupFacts]:
    """Per quota group, its pods (through the pods' reverse relation) and its namespaces."""
    pods = dict(QuotaGroup.objects.annotate(n=Count("pods")).filter(n__gt=0).values_list("name", "n"))
    namespaces: dict[str, list[str]] = {}
    for ns, group in Namespace.objects.filter(quota_group__isnull=False).values_list("name", "quota_group__name"):
        namespaces.setdefault(group, []).append(ns)
    names = set(QuotaGroup.objects.values_list("name", flat=True))
    return {n: rules.GroupFacts(pods=pods.get(n, 0), namespaces=tuple(sorted(namespaces.get(n, ())))) for n in names}


def check_quota_group(instance: QuotaGroup | None, data: Mapping[str, Any]) -> QuotaGroupSpec:
    tree = group_specs()
    old = tree.get(instance.name) if instance is not None else None
    base = old or QuotaGroupSpec(name=str(data.get("name", "")))
    changes = {k: data[k] for k in (*GROUP_FIELDS, "name", "parent") if k in data}
    if "parent" not in changes and old is None:
        changes["parent"] = "root"
    _null_is_empty(treefields.QUOTA_GROUP_FIELDS, changes)
    new = replace(base, **changes)
    if new.parent is None and new.name != ROOT_GROUP:
        # The rules know other tree roots (Koordinator's multi-tree, in simulate); the database keeps one tree
        # under root (a CheckConstraint), so an explicit null parent was a 500.
        message = f"quota group {new.name}: parent is required (use 'root' for a top-level group)"
        required = [rules.FieldError("parent", message, "required")]
        if new.name in tree and (old is None or new.name != old.name):
            required.append(rules.FieldError("name", f"quota group {new.name} already exists", "exists"))
        _raise(required + rules.group_field_errors(new))
    if new.name in tree and (old is None or new.name != old.name):
        exists = rules.FieldError("name", f"quota group {new.name} already exists", "exists")
        _raise([exists, *rules.group_field_errors(new)])
    others = {k: v for k, v in tree.items() if old is None or k != old.name}
    if old is not None and new.name != old.name:
        others = {k: (replace(v, parent=new.name) if v.parent == old.name else v) for k, v in others.items()}
    if old is None or "shared_weight" in changes or "max" in changes or "tree_id" in changes:
        new = rules.fill_quota_group_defaults(others, new)
    facts = group_facts()
    if "namespaces" in data:
        name = new.name
        facts = dict(facts)
        facts[name] = rules.GroupFacts(
            pods=facts.get(old.name if old else name, rules.GroupFacts()).pods,
            namespaces=tuple(sorted(data["namespaces"])),
        )
        if old is not None and old.name != name:
            facts.pop(old.name, None)
    _raise(
        rules.validate_quota_group(
            others, new, old, facts=facts, max_depth=int(settings.FAIRWAY["MAX_QUOTA_GROUP_DEPTH"])
        )
    )
    return new


@transaction.atomic
def save_quota_group(instance: QuotaGroup | None, data: Mapping[str, Any]) -> QuotaGroup:
    """Create or update a quota group (and the namespaces it lists); ``instance`` is saved by compare-and-swap
    on the version it was read at (``VersionConflict`` when it changed since)."""
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    spec = check_quota_group(instance, data)
    group = instance or QuotaGroup()
    group.name = spec.name
    group.parent = QuotaGroup.objects.get(name=spec.parent) if spec.parent else None
    for f in treefields.QUOTA_GROUP_FIELDS:
        if f.writable:
            setattr(group, f.name, treefields.stored(f, getattr(spec, f.name)))
    group.save()
    if "namespaces" in data:
        Namespace.objects.filter(quota_group=group).exclude(name__in=data["namespaces"]).update(quota_group=None)
        for ns in data["namespaces"]:
            obj, _ = Namespace.objects.select_for_update().get_or_create(name=ns)
            obj.quota_group = group
            obj.save()
    if "teams" in data:
        group.teams.set(data["teams"])
    return group


@transaction.atomic
def delete_quota_group(group: QuotaGroup) -> None:
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    _raise(rules.validate_quota_group_delete(group_specs(), group.name, facts=group_facts()))
    Namespace.objects.filter(quota_group=group).update(quota_group=None)
    group.delete()


# --- namespaces ---------------------------------------------------------------------------------------------
@transaction.atomic
def set_namespace_weight(namespace: Namespace, weight: int) -> Namespace:
    """Set a namespace's weight (an integer >= 1); ``namespace`` is saved by compare-and-swap on the version it
    was read at (``VersionConflict`` when it changed since)."""
    lock_tree_writes()
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
        _raise(
            [rules.FieldError("weight", f"namespace {namespace.name}: weight must be an integer >= 1, got {weight!r}")]
        )
    namespace.weight = weight
    namespace.save(update_fields=["weight", "version", "updated"])
    return namespace


# --- several writes in one transaction (a staged what-if) ----------------------------------------------------
WriteKind = Literal["queue", "quota_group", "namespace", "resource_flavor"]
_MODELS: dict[str, Any] = {
    "queue": Queue, "quota_group": QuotaGroup, "namespace": Namespace, "resource_flavor": ResourceFlavor,
}  # fmt: skip


@dataclass(frozen=True)
class Write:
    """One write of a batch. ``name`` is the target when it was read (None for a create) and ``version`` the
    version it was read at (None for a create); ``delete`` removes it (``cascade``/``force`` as for a queue
    delete), otherwise ``data`` is what ``save_queue`` / ``save_quota_group`` take, or ``{"weight": N}`` for a
    namespace."""

    kind: WriteKind
    name: str | None
    version: int | None
    data: Mapping[str, Any] = field(default_factory=dict)
    delete: bool = False
    cascade: bool = False
    force: bool = False


class StaleWrite(Exception):
    """The target of write ``index`` changed (``current`` is its version now) or vanished (``current`` None)
    since it was read; nothing was written."""

    def __init__(self, index: int, write: Write, current: int | None) -> None:
        self.index, self.write, self.current = index, write, current
        now = "was deleted" if current is None else f"is now at version {current}"
        super().__init__(f"{write.kind} {write.name} was at version {write.version} when it was read and {now}")


class WriteRefused(Exception):
    """Write ``index`` broke a rule (``errors``); nothing was written."""

    def __init__(self, index: int, errors: Sequence[rules.FieldError]) -> None:
        self.index, self.errors = index, list(errors)
        super().__init__("; ".join(e.message for e in self.errors))


def check_versions(writes: Sequence[Write]) -> None:
    """Raise ``StaleWrite`` for the first write whose target moved since it was read. A target that an earlier
    write of the batch creates, edits or renames to is not checked again (its version moves within the batch)."""
    touched: set[tuple[str, str]] = set()
    for i, w in enumerate(writes):
        if w.name is not None and w.version is not None and (w.kind, w.name) not in touched:
            current = _MODELS[w.kind].objects.filter(name=w.name).values_list("version", flat=True).first()
            if current != w.version:
                raise StaleWrite(i, w, current)
        for name in (w.name, w.data.get("name")):
            if isinstance(name, str):
                touched.add((w.kind, name))


def _write_one(w: Write) -> None:
    if w.kind == "namespace":
        set_namespace_weight(Namespace.objects.get(name=w.name), int(w.data["weight"]))
        return
    model = _MODELS[w.kind]
    instance = None if w.name is None else model.objects.get(name=w.name)
    if w.kind == "resource_flavor":
        if w.delete:
            delete_resource_flavor(instance)
        else:
            save_resource_flavor(instance, w.data)
    elif w.kind == "queue":
        if w.delete:
            delete_queue(instance, cascade=w.cascade, force=w.force)
        else:
            save_queue(instance, w.data)
    elif w.delete:
        delete_quota_group(instance)
    else:
        save_quota_group(instance, w.data)


@transaction.atomic
def apply_writes(writes: Sequence[Write]) -> None:
    """Apply ``writes`` in order, all in one transaction under the tree write lock: every target's version is
    checked first (``StaleWrite``), then each write runs through the service above and its rules
    (``WriteRefused`` names the write); on either error nothing is written."""
    lock_tree_writes()  # the versions checked are the ones the writes replace
    tree_owner.check_writable()  # under the lock: a cluster that owns the trees refuses Fairway's own edits
    check_versions(writes)
    for i, w in enumerate(writes):
        try:
            _write_one(w)
        except rules.RuleViolation as exc:
            raise WriteRefused(i, exc.errors) from exc
        except (Queue.DoesNotExist, QuotaGroup.DoesNotExist, Namespace.DoesNotExist) as exc:
            raise StaleWrite(i, w, None) from exc


def ensure_builtins() -> None:
    """Create the built-in tree nodes if missing (the data migration does this on a fresh database; tests that
    truncate tables and ``load_demo`` call it again)."""
    from quotas.migrations import _builtins

    _builtins.create(Queue, QuotaGroup)
