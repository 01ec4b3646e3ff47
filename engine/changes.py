"""What-if: apply proposed changes to a snapshot (validated by the same rules as a real write) and compare every
tree node's values before and after. Pure: nothing is written anywhere.

A proposal is a list of changes, each a JSON object with ``op`` and ``kind``:

* ``{"op": "create" | "update" | "delete" | "move", "kind": "queue" | "quota_group", "name": …, "spec": {…}}``
  (``spec`` holds the fields of the API's queue / quota group; ``move`` takes ``"parent"``; ``delete`` takes
  ``"cascade"`` and ``"force"`` as the API does);
* ``{"op": "set_weight", "kind": "namespace", "name": …, "weight": N}``;
* ``{"op": "add" | "remove" | "drain", "kind": "node", "name": …, "spec": {"allocatable": …, "labels": …}}``;
* ``{"op": "add", "kind": "podgroup", "spec": {"namespace", "name", "queue", "min_member", "min_resources",
  "replicas", "request", "priority"}}``.

Changes apply in order, each validated against the tree as the earlier ones left it. Errors carry the field path
``changes.<i>.<field>`` and the same messages as the API.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine import rules
from engine.collector import paused_during
from engine.kueuepolicy import parse_kueue_policy
from engine.limits import ENV_VARS, Limits, brief, node_amount_errors
from engine.objects import NodeInfo, PodGroupInfo, QueueSpec, QuotaGroupSpec, Snapshot, Taint, TaskInfo, TaskStatus
from engine.resources import (
    QuantityError,
    ResourceList,
    ResourceNames,
    format_quantity,
    is_unlimited,
    parse_resource_list,
)
from engine.treefields import LIST_KINDS, QUEUE_FIELDS, QUOTA_GROUP_FIELDS, FieldKind, TreeField, list_fields
from engine.userlimits import parse_user_limits
from engine.values import QuotaValues

__all__ = ["ProposalError", "apply_changes", "as_quantities", "compare", "describe", "node_values"]

# The scalar kinds of the tree fields (``engine.treefields``) and the type a change gives each
_SCALAR_TYPES: Mapping[FieldKind, type] = {FieldKind.INT: int, FieldKind.BOOL: bool, FieldKind.TEXT: str}
MAX_CHANGES = 200


class ProposalError(ValueError):
    """A proposal that breaks the rules; ``errors`` are ``rules.FieldError`` with ``changes.<i>.`` paths."""

    def __init__(self, errors: Sequence[rules.FieldError]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in self.errors))


def _err(i: int, field: str, message: str, code: str = "invalid") -> ProposalError:
    return ProposalError([rules.FieldError(f"changes.{i}.{field}" if field else f"changes.{i}", message, code)])


def _prefixed(i: int, errors: Sequence[rules.FieldError], base: str = "spec") -> ProposalError:
    return ProposalError(
        [
            dataclasses.replace(e, field=f"changes.{i}.{base}.{e.field}" if base else f"changes.{i}.{e.field}")
            for e in errors
        ]
    )


def _typed(i: int, spec: Mapping[str, Any], key: str, typ: type) -> Any:
    value = spec[key]
    if typ is bool and not isinstance(value, bool):
        raise _err(i, f"spec.{key}", f"{key} must be true or false, got {value!r}")
    if typ is int and (not isinstance(value, int) or isinstance(value, bool)):
        raise _err(i, f"spec.{key}", f"{key} must be an integer, got {value!r}")
    if typ is str and not isinstance(value, str):
        raise _err(i, f"spec.{key}", f"{key} must be a string, got {value!r}")
    return value


def _resources(i: int, spec: Mapping[str, Any], key: str) -> ResourceList:
    try:
        return parse_resource_list(spec[key], key)
    except QuantityError as exc:
        raise _err(i, f"spec.{exc.field}", str(exc)) from None


def _seconds(i: int, spec: Mapping[str, Any], key: str) -> float | None:
    value = spec[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _err(i, f"spec.{key}", f"{key} must be a number of seconds or null, got {value!r}")
    return float(value)


def _field_value(i: int, spec: Mapping[str, Any], f: TreeField) -> Any:
    """A change's value of tree field ``f`` as the spec holds it (null: an empty list, or None where the kind keeps
    None: weights that default, seconds unset)."""
    if f.kind in LIST_KINDS:
        if spec[f.name] is None:
            return None if f.kind is FieldKind.WEIGHTS else ResourceList()
        return _resources(i, spec, f.name)
    if f.kind is FieldKind.SECONDS:
        return _seconds(i, spec, f.name)
    if f.kind is FieldKind.USER_LIMITS:
        limits, problems = parse_user_limits(spec[f.name], f.name)
        if problems:
            raise _err(i, f"spec.{problems[0].field}", problems[0].message)
        return limits
    if f.kind is FieldKind.KUEUE:
        value, problems = parse_kueue_policy(spec[f.name], f.name)
        if problems:
            raise _err(i, f"spec.{problems[0].field}", f"{problems[0].field}: {problems[0].message}")
        return value
    return _typed(i, spec, f.name, _SCALAR_TYPES[f.kind])


def _spec_changes(i: int, spec: Any, table: Sequence[TreeField]) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise _err(i, "spec", "spec must be an object")
    fields = [f for f in table if f.writable]
    known = {"name", "parent", *(f.name for f in fields)}
    unknown = sorted(set(spec) - known - {"namespaces"})
    if unknown:
        raise _err(i, f"spec.{unknown[0]}", f"unknown field {unknown[0]!r} (known: {', '.join(sorted(known))})")
    out: dict[str, Any] = {f.name: _field_value(i, spec, f) for f in fields if f.name in spec}
    if "parent" in spec:
        if spec["parent"] is not None and not isinstance(spec["parent"], str):
            raise _err(i, "spec.parent", "parent must be a name")
        out["parent"] = spec["parent"]
    if "name" in spec:
        if not isinstance(spec["name"], str):
            raise _err(i, "spec.name", "name must be a string")
        out["name"] = spec["name"]
    return out


def _queue_facts(snap: Snapshot) -> dict[str, rules.QueueFacts]:
    by_queue = snap.podgroups_by_queue
    return {name: rules.QueueFacts(podgroups=len(by_queue.get(name, ()))) for name in snap.queues}


def _group_facts(snap: Snapshot) -> dict[str, rules.GroupFacts]:
    by_group = snap.tasks_by_quota_group
    return {
        name: rules.GroupFacts(pods=len(by_group.get(name, ())), namespaces=tuple(snap.quota_namespaces.get(name, ())))
        for name in snap.quota_groups
    }


def _named(i: int, change: Mapping[str, Any], known: Mapping[str, Any], what: str) -> str:
    name = change.get("name")
    if not isinstance(name, str) or not name:
        raise _err(i, "name", f"name of the {what} is required")
    if name not in known:
        raise _err(i, "name", f"{what} {name} does not exist", "not_found")
    return name


def _queue_change(i: int, snap: Snapshot, change: Mapping[str, Any], max_depth: int) -> Snapshot:
    op = change["op"]
    tree = dict(snap.queues)
    facts = _queue_facts(snap)
    if op == "delete":
        name = _named(i, change, tree, "queue")
        cascade, force = bool(change.get("cascade", False)), bool(change.get("force", False))
        errors = rules.validate_queue_delete(tree, name, facts=facts, cascade=cascade, force=force)
        if errors:
            raise _prefixed(i, errors, base="")
        doomed = set(rules.plan_queue_delete(tree, name, cascade=cascade))
        pgs = [pg.key for pg in snap.podgroups.values() if pg.queue in doomed]
        tasks = [t.uid for t in snap.tasks.values() if t.podgroup in set(pgs)]
        return snap.without_tasks(tasks).without_podgroups(pgs).without_queues(doomed)
    if op == "create":
        data = _spec_changes(i, change.get("spec"), QUEUE_FIELDS)
        if "name" not in data:
            raise _err(i, "spec.name", "name is required")
        old = None
        new = dataclasses.replace(QueueSpec(name=data["name"]), **data)
    else:
        name = _named(i, change, tree, "queue")
        old = tree[name]
        spec = change.get("spec")
        data = {"parent": change.get("parent")} if op == "move" else _spec_changes(i, spec, QUEUE_FIELDS)
        new = dataclasses.replace(old, **data)
        del tree[name]
        if new.name != old.name:
            tree = {k: dataclasses.replace(v, parent=new.name) if v.parent == old.name else v for k, v in tree.items()}
    if old is None and new.name in tree:
        raise _err(i, "spec.name", f"queue {new.name} already exists", "exists")
    errors = rules.validate_queue(tree, new, old, facts=facts, max_depth=max_depth)
    if errors:
        raise _prefixed(i, errors)
    tree[new.name] = new
    out = snap.replace(queues=tree)
    if old is not None and new.name != old.name:
        out = out.with_podgroups(
            dataclasses.replace(pg, queue=new.name) for pg in snap.podgroups.values() if pg.queue == old.name
        )
    return out


def _group_change(i: int, snap: Snapshot, change: Mapping[str, Any], max_depth: int) -> Snapshot:
    op = change["op"]
    tree = dict(snap.quota_groups)
    facts = _group_facts(snap)
    if op == "delete":
        name = _named(i, change, tree, "quota group")
        errors = rules.validate_quota_group_delete(tree, name, facts=facts)
        if errors:
            raise _prefixed(i, errors, base="")
        return snap.without_quota_groups([name])
    if op == "create":
        data = _spec_changes(i, change.get("spec"), QUOTA_GROUP_FIELDS)
        if "name" not in data:
            raise _err(i, "spec.name", "name is required")
        old = None
        new = dataclasses.replace(QuotaGroupSpec(name=data["name"]), **data)
    else:
        name = _named(i, change, tree, "quota group")
        old = tree[name]
        data = (
            {"parent": change.get("parent")}
            if op == "move"
            else _spec_changes(i, change.get("spec"), QUOTA_GROUP_FIELDS)
        )
        new = dataclasses.replace(old, **data)
        del tree[name]
    if old is None and new.name in tree:
        raise _err(i, "spec.name", f"quota group {new.name} already exists", "exists")
    new = rules.fill_quota_group_defaults(tree, new)
    errors = rules.validate_quota_group(tree, new, old, facts=facts, max_depth=max_depth)
    if errors:
        raise _prefixed(i, errors)
    tree[new.name] = new
    return snap.replace(quota_groups=tree)


def _namespace_change(i: int, snap: Snapshot, change: Mapping[str, Any]) -> Snapshot:
    if change["op"] != "set_weight":
        raise _err(i, "op", "namespaces support op set_weight")
    name = change.get("name")
    if not isinstance(name, str) or not name:
        raise _err(i, "name", "name of the namespace is required")
    weight = change.get("weight")
    if not isinstance(weight, int) or isinstance(weight, bool) or weight < 1:
        raise _err(i, "weight", f"weight must be an integer >= 1, got {weight!r}")
    info = snap.namespace(name)
    return snap.with_namespaces([dataclasses.replace(info, weight=weight)])


def _within_node_bound(i: int, amounts: ResourceList, limits: Limits, field: str) -> None:
    """What one node may have (``FAIRWAY_MAX_NODE_AMOUNT``): a node's allocatable, a pod's request."""
    errors = node_amount_errors(amounts, limits.max_node_amount, field)
    if errors:
        raise ProposalError([rules.FieldError(f"changes.{i}.{e.field}", e.message, "limit") for e in errors])


def _node_change(i: int, snap: Snapshot, change: Mapping[str, Any], limits: Limits) -> Snapshot:
    op = change["op"]
    if op == "add":
        spec = change.get("spec")
        if not isinstance(spec, Mapping):
            raise _err(i, "spec", "spec must be an object")
        name = spec.get("name", change.get("name"))
        errors = rules.validate_dns_subdomain(name, what="node name", field="spec.name")
        if errors:
            raise _prefixed(i, errors, base="")
        if name in snap.nodes:
            raise _err(i, "spec.name", f"node {name} already exists", "exists")
        labels = spec.get("labels", {})
        if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
            raise _err(i, "spec.labels", "labels must be an object of strings")
        taints = []
        for k, t in enumerate(spec.get("taints", []) or []):
            if not isinstance(t, Mapping) or not isinstance(t.get("key"), str):
                raise _err(i, f"spec.taints.{k}", "a taint needs a key")
            taints.append(Taint(key=t["key"], value=str(t.get("value", "")), effect=str(t.get("effect", "NoSchedule"))))
        allocatable = _resources(i, spec, "allocatable") if "allocatable" in spec else ResourceList()
        _within_node_bound(i, allocatable, limits, "spec.allocatable")
        if len(snap.nodes) >= limits.max_nodes:
            raise _err(
                i,
                "spec.name",
                f"the cluster would hold more than {limits.max_nodes:,} nodes, the most one cluster may have "
                f"({ENV_VARS['max_nodes']})",
                "limit",
            )
        return snap.with_nodes(
            [NodeInfo(name=name, allocatable=allocatable, labels=dict(labels), taints=tuple(taints))]
        )
    name = _named(i, change, snap.nodes, "node")
    displaced = [t.with_status(TaskStatus.PENDING, None) for t in snap.tasks_by_node.get(name, ())]
    out = snap.with_tasks(displaced)
    if op == "remove":
        return out.without_nodes([name])
    if op == "drain":
        return out.with_nodes([dataclasses.replace(snap.nodes[name], unschedulable=True)])
    raise _err(i, "op", "nodes support op add, remove and drain")


def _podgroup_numbers(i: int, spec: Mapping[str, Any], limits: Limits, added: list[int]) -> tuple[int, int, int]:
    """A proposed podgroup's replicas, minMember and priority, checked; ``added[0]`` counts the replicas."""
    replicas = spec.get("replicas", 1)
    min_member = spec.get("min_member", replicas)
    priority = spec.get("priority", 0)
    for key, value, low in (("replicas", replicas, 1), ("min_member", min_member, 0), ("priority", priority, None)):
        if not isinstance(value, int) or isinstance(value, bool) or (low is not None and value < low):
            raise _err(i, f"spec.{key}", f"{key} must be an integer" + (f" >= {low}" if low is not None else ""))
    if replicas > limits.max_replicas:
        raise _err(
            i,
            "spec.replicas",
            f"replicas {brief(replicas)} is more than {limits.max_replicas} ({ENV_VARS['max_replicas']})",
        )
    if added[0] + replicas > limits.max_pods:
        raise _err(
            i,
            "spec.replicas",
            f"the proposal would add {added[0] + replicas} pods, more than {limits.max_pods} ({ENV_VARS['max_pods']})",
        )
    added[0] += replicas
    return replicas, min_member, priority


def _podgroup_change(i: int, snap: Snapshot, change: Mapping[str, Any], limits: Limits, added: list[int]) -> Snapshot:
    """``added`` counts the pods the proposal added so far (one list shared by its changes)."""
    if change["op"] != "add":
        raise _err(i, "op", "podgroups support op add")
    spec = change.get("spec")
    if not isinstance(spec, Mapping):
        raise _err(i, "spec", "spec must be an object")
    ns, name = spec.get("namespace"), spec.get("name")
    if not isinstance(ns, str) or not ns:
        raise _err(i, "spec.namespace", "namespace is required")
    if not isinstance(name, str) or not name:
        raise _err(i, "spec.name", "name is required")
    queue = spec.get("queue") or snap.namespace(ns).queue or "default"
    replicas, min_member, priority = _podgroup_numbers(i, spec, limits, added)
    request = _resources(i, spec, "request") if "request" in spec else ResourceList()
    _within_node_bound(i, request, limits, "spec.request")  # a pod fits on one node or on none
    min_resources = _resources(i, spec, "min_resources") if "min_resources" in spec else None
    key = f"{ns}/{name}"
    if key in snap.podgroups:
        raise _err(i, "spec.name", f"podgroup {key} already exists", "exists")
    info = snap.namespace(ns)
    others = ResourceList.total(
        pg.min_resources for pg in snap.podgroups.values() if pg.namespace == ns and pg.min_resources
    )
    errors = rules.validate_podgroup(
        dict(snap.queues),
        queue,
        min_member=min_member,
        min_resources=min_resources or ResourceList(),
        namespace=ns,
        namespace_hard=info.hard,
        other_min_resources=others,
    )
    if errors:
        raise _prefixed(i, errors)
    pg = PodGroupInfo(
        namespace=ns, name=name, queue=queue, min_member=min_member, min_resources=min_resources, priority=priority
    )
    tasks = [
        TaskInfo(namespace=ns, name=f"{name}-{k}", podgroup=key, request=request, priority=priority)
        for k in range(replicas)
    ]
    return snap.with_podgroups([pg]).with_tasks(tasks)


_KINDS = {
    "queue": ("create", "update", "delete", "move"),
    "quota_group": ("create", "update", "delete", "move"),
    "namespace": ("set_weight",),
    "node": ("add", "remove", "drain"),
    "podgroup": ("add",),
}


def _check_pods_added(changes: Any, limits: Limits) -> None:
    """Refuse a proposal whose podgroups add more than ``max_pods`` pods before any of them is built."""
    if not isinstance(changes, list):
        return
    total = 0
    for i, change in enumerate(changes):
        spec = change.get("spec") if isinstance(change, Mapping) and change.get("kind") == "podgroup" else None
        replicas = spec.get("replicas", 1) if isinstance(spec, Mapping) else 0
        # a count over max_replicas is refused by its own change, with that limit's message
        if isinstance(replicas, int) and not isinstance(replicas, bool) and 0 < replicas <= limits.max_replicas:
            total += replicas
            if total > limits.max_pods:
                raise _err(
                    i,
                    "spec.replicas",
                    f"the proposal would add {brief(total)} pods, more than {limits.max_pods} ({ENV_VARS['max_pods']})",
                )


# The resource lists of each kind's spec that may only name known resources (a node's allocatable introduces names).
_NAMED_LISTS = {
    "queue": list_fields(QUEUE_FIELDS),
    "quota_group": list_fields(QUOTA_GROUP_FIELDS),
    "podgroup": ("request", "min_resources"),
}


def _check_resource_names(i: int, change: Mapping[str, Any], names: ResourceNames) -> ResourceNames:
    """Refuse a resource no node offers (``changes.<i>.spec.<list>.<name>``); a node added offers its names to the
    changes after it. Returns the names known from then on."""
    spec = change.get("spec")
    if not isinstance(spec, Mapping):
        return names
    kind = change.get("kind")
    if kind == "node":
        allocatable = spec.get("allocatable")
        if change.get("op") == "add" and isinstance(allocatable, Mapping):
            return names.with_offered(k for k in allocatable if isinstance(k, str))
        return names
    for key in _NAMED_LISTS.get(str(kind), ()):
        listed = spec.get(key)
        if isinstance(listed, Mapping):
            unknown = names.unknown(k for k in listed if isinstance(k, str))
            if unknown:
                raise _err(i, f"spec.{key}.{unknown[0]}", names.message(unknown[0]), "unknown_resource")
    return names


@paused_during
def apply_changes(
    snapshot: Snapshot,
    changes: Any,
    *,
    max_depth: int = 5,
    limits: Limits | None = None,
    resource_names: ResourceNames | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> Snapshot:
    """The snapshot after ``changes``, each validated in order; raises ``ProposalError``. ``limits`` (default
    ``Limits()``) bound the replicas of one podgroup and the pods the whole proposal adds (at most ``MAX_CHANGES``
    changes, so at most that many podgroups) and the quota tree's depth (``max_quota_group_depth``; the queue tree's is
    ``max_depth``). With ``resource_names`` (the control plane's, see ``scheduling.facts``) a change may only
    name known resources or those a node added before it offers. ``checkpoint`` (a request's deadline) is called
    before each change."""
    names = None
    if resource_names is not None:
        names = resource_names.with_offered(r for node in snapshot.nodes.values() for r in node.allocatable)
    limits = limits or Limits()
    added = [0]
    _check_pods_added(changes, limits)
    if not isinstance(changes, list) or not changes:
        raise ProposalError([rules.FieldError("changes", "changes must be a non-empty list")])
    if len(changes) > MAX_CHANGES:
        raise ProposalError([rules.FieldError("changes", f"at most {MAX_CHANGES} changes per proposal")])
    snap = snapshot
    for i, change in enumerate(changes):
        if checkpoint is not None:
            checkpoint()
        if not isinstance(change, Mapping):
            raise _err(i, "", "each change must be an object with op and kind")
        kind, op = change.get("kind"), change.get("op")
        if kind not in _KINDS:
            raise _err(i, "kind", f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if op not in _KINDS[kind]:
            raise _err(i, "op", f"op for {kind} must be one of {', '.join(_KINDS[kind])}, got {op!r}")
        if kind == "queue":
            snap = _queue_change(i, snap, change, max_depth)
        elif kind == "quota_group":
            snap = _group_change(i, snap, change, limits.max_quota_group_depth)
        elif kind == "namespace":
            snap = _namespace_change(i, snap, change)
        elif kind == "node":
            snap = _node_change(i, snap, change, limits)
        else:
            snap = _podgroup_change(i, snap, change, limits, added)
        if names is not None:
            names = _check_resource_names(i, change, names)
    return snap


_WHAT = {"queue": "queue", "quota_group": "quota group", "namespace": "namespace", "node": "node"}


def describe(changes: Sequence[Mapping[str, Any]]) -> str:
    """One line for people naming what a proposal changes, each change with its values as written (``queue nlp:
    weight 4, deserved cpu 40 nvidia.com/gpu 8; delete quota group old``): the summary of a replay or a request
    made by automation, which writes none."""
    return "; ".join(_described(change) for change in changes)


def _described(change: Mapping[str, Any]) -> str:
    op, kind, name = change.get("op"), str(change.get("kind")), change.get("name")
    what = _WHAT.get(kind, kind)
    given = change.get("spec")
    spec: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    if kind == "podgroup":
        return f"add podgroup {spec.get('namespace')}/{spec.get('name')}" + (
            f" to queue {spec['queue']}" if spec.get("queue") else ""
        )
    if kind == "namespace":
        return f"namespace {name}: weight {change.get('weight')}"
    if op == "create":
        return f"new {what} {spec.get('name', name)} under {spec.get('parent') or 'root'}"
    if op == "move":
        return f"move {what} {name} under {spec.get('parent') or 'root'}"
    if op in ("delete", "remove", "drain"):
        flags = " with its subtree" if change.get("cascade") else ""
        return f"{op} {what} {name}{flags}"
    fields = ", ".join(f"{field.replace('_', ' ')} {_written(value)}" for field, value in spec.items())
    return f"{'add ' if op == 'add' else ''}{what} {name}" + (f": {fields}" if fields else "")


def _written(value: Any) -> str:
    if isinstance(value, Mapping):
        return " ".join(f"{k} {_written(v)}" for k, v in value.items()) or "none"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _rl(values: Mapping[str, int] | None) -> dict[str, int]:
    if not values:
        return {}
    raw = values.raw if type(values) is ResourceList else values
    return {k: v for k, v in raw.items() if v}


def node_values(values: QuotaValues) -> dict[str, dict[str, dict[str, Any]]]:
    """Every tree node's values in base units (``{"queues": {name: {...}}, "quota_groups": …, "namespaces": …}``),
    computed once per values object (treat the result as read-only)."""
    cached = values.memo.get("node_values")
    if cached is None:
        cached = values.memo["node_values"] = _node_values(values)
    return cached


def _node_values(values: QuotaValues) -> dict[str, dict[str, dict[str, Any]]]:
    book = values.queues
    queues = {name: book.plain_values(name) for name in book}
    for name, share in values.fair_shares.items():  # Kueue's Fair Sharing on: the share as Kueue's status gives it
        if name in queues:
            queues[name] = {**queues[name], "fair_share": share.rounded()}
    held = values.reservations
    groups = {
        name: {
            "request": _rl(g.request),
            "limited_request": _rl(g.limited_request),
            "used": _rl(g.used),
            "runtime": _rl(g.runtime),
            "auto_scaled_min": _rl(g.auto_scaled_min),
            "borrowed": _rl(g.borrowed),
            "lent": _rl(g.lent),
            "reserved": _rl(held.amounts.get(name)),
            "reserved_jobs": held.jobs.get(name, 0),
            "pipelined": _rl(held.pipelined.get(name)),
            "pipelined_pods": held.pipelined_pods.get(name, 0),
        }
        for name, g in ((n, values.quotas[n]) for n in values.quotas)
    }
    namespaces = {
        f"{q}/{ns}": {
            "weight": v.weight,
            "request": _rl(v.request),
            "allocated": _rl(v.allocated),
            "deserved": _rl(v.deserved),
            "share": round(v.share, 6),
        }
        for (q, ns), v in values.namespaces.items()
    }
    return {"queues": queues, "quota_groups": groups, "namespaces": namespaces}


def _delta(before: Any, after: Any) -> Any:
    if isinstance(before, dict) or isinstance(after, dict):
        b, a = before or {}, after or {}
        return {k: a.get(k, 0) - b.get(k, 0) for k in sorted(set(a) | set(b)) if a.get(k, 0) != b.get(k, 0)}
    return round((after or 0) - (before or 0), 6)


RESOURCE_FIELDS = frozenset(
    {
        "request",
        "allocated",
        "deserved",
        "guarantee",
        "real_capability",
        "borrowed",
        "lent",
        "limited_request",
        "used",
        "runtime",
        "auto_scaled_min",
        "reserved",
        "pipelined",
    }
)


def as_quantities(tree: Mapping[str, Any], _cache: dict[tuple[int, str], str] | None = None) -> dict[str, Any]:
    """The same nested values with every resource list printed as Kubernetes quantities (signed in diffs)."""
    cache: dict[tuple[int, str], str] = {} if _cache is None else _cache
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if key in RESOURCE_FIELDS and isinstance(value, Mapping):
            printed: dict[str, str | None] = {}
            for r, v in value.items():
                if is_unlimited(v):  # an unlimited amount is null, never a sentinel number
                    printed[r] = None
                    continue
                text = cache.get((v, r))
                if text is None:
                    text = cache[(v, r)] = format_quantity(v, r)
                printed[r] = text
            out[key] = printed
        elif isinstance(value, Mapping):
            out[key] = as_quantities(value, cache)
        else:
            out[key] = value
    return out


@paused_during
def compare(before: QuotaValues, after: QuotaValues) -> dict[str, Any]:
    """Before, after and the differences of every tree node (only nodes and fields that change are in ``diff``),
    resource amounts printed as quantities."""
    b, a = node_values(before), node_values(after)
    diff: dict[str, dict[str, Any]] = {}
    for section in b:
        out: dict[str, Any] = {}
        for name in sorted(set(b[section]) | set(a[section])):
            old, new = b[section].get(name), a[section].get(name)
            if old is None or new is None:
                out[name] = {"added" if old is None else "removed": True}
                continue
            fields = {k: _delta(old[k], new[k]) for k in old if old[k] != new[k]}
            if fields:
                out[name] = fields
        diff[section] = out
    cache: dict[tuple[int, str], str] = {}
    printed_before = before.memo.get("node_quantities")
    if printed_before is None:
        printed_before = before.memo["node_quantities"] = as_quantities(b, cache)
    # a node the proposal left as it was is printed as it was: only the changed ones are formatted again
    printed_after: dict[str, Any] = {}
    for section, nodes in a.items():
        old_nodes, old_printed = b.get(section, {}), printed_before.get(section, {})
        printed_after[section] = {
            name: old_printed[name]
            if name in old_printed and old_nodes.get(name) == node
            else as_quantities(node, cache)
            for name, node in nodes.items()
        }
    return {"before": printed_before, "after": printed_after, "diff": as_quantities(diff, cache)}
