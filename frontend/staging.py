"""Staged edits for the what-if page: kept in the user's session, evaluated by the what-if service
(``planning.whatif``) and applied all together, in one transaction, through ``quotas.services`` (the same writers
as the API).

A staged entry is ``{"change": <a what-if change>, "kind": "queue" | "quota" | "namespace", "name": <target>,
"version": <the target's version when staged, None for a create>, "summary": <one line>}``. The change is
written in the engine's change language: ``engine.changes.apply_changes`` is the only reader of it, for the preview
and for the write (each write takes its values from the snapshot the engine produced). Applying checks every
target's version first: if any row changed since it was staged the whole set is refused (nothing is written) and
the page says which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from engine import rules, treefields
from engine.changes import ProposalError
from engine.objects import Snapshot
from engine.resources import ResourceList, format_quantity
from engine.userlimits import parse_user_limits, user_limits_from_stored, user_limits_json, user_limits_text
from planning import whatif
from quotas import services
from quotas.models import Namespace

SESSION_KEY = "fairway_staged"
MAX_STAGED = 50
QUEUE_RESOURCES = treefields.list_fields(treefields.QUEUE_FIELDS)
GROUP_RESOURCES = treefields.list_fields(treefields.QUOTA_GROUP_FIELDS)
WHATIF_KIND = {"queue": "queue", "quota": "quota_group", "namespace": "namespace"}
USER_LIMITS = "user_limits"  # the per-user limits (``engine.userlimits``): staged in the API's form


class Conflict(Exception):
    """A staged target changed (or vanished) since it was staged."""

    def __init__(self, index: int, kind: str, name: str, staged: int | None, current: int | None) -> None:
        self.index, self.kind, self.name, self.staged, self.current = index, kind, name, staged, current
        now = "was deleted" if current is None else f"is now at version {current}"
        super().__init__(f"change {index + 1}: {kind} {name} was at version {staged} when you staged it and {now}")


class StagedRuleViolation(Exception):
    """A staged change the services refused when applying; ``errors`` are the rule errors."""

    def __init__(self, index: int, errors: Sequence[rules.FieldError]) -> None:
        self.index, self.errors = index, list(errors)
        super().__init__("; ".join(f"change {index + 1}: {e.message}" for e in self.errors))


# -- the session list ------------------------------------------------------------------------------------------


def staged(request: HttpRequest) -> list[dict[str, Any]]:
    """The user's staged entries, in order."""
    return list(request.session.get(SESSION_KEY, []))


def save(request: HttpRequest, entries: list[dict[str, Any]]) -> None:
    request.session[SESSION_KEY] = entries[:MAX_STAGED]


def add(request: HttpRequest, entry: dict[str, Any]) -> None:
    """Append an entry (a later edit of the same target does not replace an earlier one: both apply in order)."""
    save(request, [*staged(request), entry])


def changes(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The what-if changes of ``entries``."""
    return [dict(e["change"]) for e in entries]


# -- building entries ----------------------------------------------------------------------------------------


def _quantities(rl: ResourceList | None) -> dict[str, str] | None:
    return None if rl is None else {r: format_quantity(v, r) for r, v in rl.items()}


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in new.items() if old.get(k) != v}


def _spec(data: Mapping[str, Any], resource_keys: Sequence[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("teams",):
            continue
        if key == USER_LIMITS:  # the what-if's form (the API's), which a session can keep as JSON
            spec[key] = user_limits_json(value)
            continue
        spec[key] = _quantities(value) if key in resource_keys else value
    return spec


def current_fields(kind: str, instance: Any) -> dict[str, Any]:
    """A queue's or quota group's editable fields as a what-if spec (resource lists as quantities)."""
    keys = QUEUE_RESOURCES if kind == "queue" else GROUP_RESOURCES
    current = {"name": instance.name, "parent": instance.parent.name if instance.parent_id else None}
    fields = services.QUEUE_FIELDS if kind == "queue" else services.GROUP_FIELDS
    for f in fields:
        value = getattr(instance, f)
        if f == USER_LIMITS:
            current[f] = user_limits_json(user_limits_from_stored(value))
            continue
        current[f] = _quantities(ResourceList(value) if value is not None else None) if f in keys else value
    if kind == "quota":
        current["namespaces"] = sorted(instance.namespaces.values_list("name", flat=True))
    return current


def node_entry(kind: str, instance: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    """An entry for a create (``instance`` None) or an update of a queue / quota group from the services'
    ``data`` (only the fields that change are staged)."""
    keys = QUEUE_RESOURCES if kind == "queue" else GROUP_RESOURCES
    spec = _spec(data, keys)
    what = "queue" if kind == "queue" else "quota group"
    if instance is None:
        return {
            "change": {"op": "create", "kind": WHATIF_KIND[kind], "spec": spec},
            "kind": kind,
            "name": spec.get("name", ""),
            "version": None,
            "summary": f"create {what} {spec.get('name')} under {spec.get('parent') or 'root'}",
        }
    spec = _diff(current_fields(kind, instance), spec)
    moved = "parent" in spec
    parts = []
    for key, value in spec.items():
        if key in keys:
            parts.append(f"{key} {', '.join(f'{r}={q}' for r, q in (value or {}).items()) or 'cleared'}")
        elif key == "parent":
            parts.append(f"move under {value}")
        elif key == "name":
            parts.append(f"rename to {value}")
        elif key == "namespaces":
            parts.append(f"namespaces {', '.join(value) or 'none'}")
        elif key == USER_LIMITS:
            parts.append(
                f"user limits {user_limits_text(parse_user_limits(value)[0]).replace(chr(10), '; ') or 'none'}"
            )
        else:
            parts.append(f"{key} {value}")
    return {
        "change": {"op": "update", "kind": WHATIF_KIND[kind], "name": instance.name, "spec": spec},
        "kind": kind,
        "name": instance.name,
        "version": instance.version,
        "summary": f"{'move' if moved and len(spec) == 1 else 'edit'} {what} {instance.name}: "
        + ("; ".join(parts) if parts else "no change"),
    }


def delete_entry(kind: str, instance: Any, *, cascade: bool = False, force: bool = False) -> dict[str, Any]:
    change: dict[str, Any] = {"op": "delete", "kind": WHATIF_KIND[kind], "name": instance.name}
    if kind == "queue":
        change.update({"cascade": cascade, "force": force})
    flags = " (with children)" if cascade else ""
    flags += " (and its jobs)" if force else ""
    return {
        "change": change,
        "kind": kind,
        "name": instance.name,
        "version": instance.version,
        "summary": f"delete {'queue' if kind == 'queue' else 'quota group'} {instance.name}{flags}",
    }


def weight_entry(namespace: Namespace, weight: int) -> dict[str, Any]:
    return {
        "change": {"op": "set_weight", "kind": "namespace", "name": namespace.name, "weight": weight},
        "kind": "namespace",
        "name": namespace.name,
        "version": namespace.version,
        "summary": f"namespace {namespace.name}: weight {namespace.weight} → {weight}",
    }


# -- applying ------------------------------------------------------------------------------------------------


def _write(entry: Mapping[str, Any], after: Snapshot) -> services.Write:
    """The services' write of ``entry``, its values read from ``after`` (the snapshot once ``engine.changes`` has
    applied the entry's change): the engine parses the change, the frontend only picks the fields it names."""
    change, kind = entry["change"], WHATIF_KIND[entry["kind"]]
    target = None if change["op"] == "create" else str(change["name"])
    if kind == "namespace":
        return services.Write(kind, target, entry["version"], {"weight": after.namespace(str(target)).weight})
    if change["op"] == "delete":
        flags = {"cascade": bool(change.get("cascade")), "force": bool(change.get("force"))}
        return services.Write(kind, target, entry["version"], delete=True, **flags)
    spec = change.get("spec") or {}
    name = spec.get("name", target)
    node = after.queues[name] if kind == "queue" else after.quota_groups[name]
    fields = services.QUEUE_FIELDS if kind == "queue" else services.GROUP_FIELDS
    data = {key: getattr(node, key) for key in spec if key in (*fields, "name", "parent")}
    if "namespaces" in spec:  # membership is the trees' business, not the engine's: written as staged
        data["namespaces"] = list(spec["namespaces"])
    return services.Write(kind, target, entry["version"], data)


def writes(snapshot: Snapshot, entries: Sequence[Mapping[str, Any]]) -> list[services.Write]:
    """The services' writes of ``entries``: each change is applied to the snapshot the earlier ones left (the
    what-if service's evaluation, as the preview's) and its write takes its values from the result. Raises
    ``ProposalError`` with the paths of the whole list."""
    afters = whatif.apply_each(snapshot, [entry["change"] for entry in entries])
    return [_write(entry, after) for entry, after in zip(entries, afters, strict=True)]


def _bare(entry: Mapping[str, Any]) -> services.Write:
    """An entry's target and version only (enough to check the versions)."""
    change = entry["change"]
    target = None if change["op"] == "create" else str(change["name"])
    return services.Write(WHATIF_KIND[entry["kind"]], target, entry["version"], dict(change.get("spec") or {}))


def _conflict(entries: Sequence[Mapping[str, Any]], exc: services.StaleWrite) -> Conflict:
    e = entries[exc.index]
    return Conflict(exc.index, e["kind"], e["name"], e["version"], exc.current)


@dataclass(frozen=True)
class Applied:
    count: int
    summaries: list[str]


def apply(entries: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> Applied:
    """Apply every entry in order in one transaction through ``quotas.services.apply_writes``; nothing is written
    when any target moved since it was staged (``Conflict``, checked first) or a change breaks a rule
    (``StagedRuleViolation``)."""
    try:
        planned = writes(snapshot, entries)
    except ProposalError as exc:
        try:
            services.check_versions([_bare(e) for e in entries])
        except services.StaleWrite as stale:
            raise _conflict(entries, stale) from exc
        index = int(exc.errors[0].field.split(".")[1])
        prefix = f"changes.{index}"
        raise StagedRuleViolation(
            index, [rules.FieldError(e.field.removeprefix(prefix).lstrip("."), e.message, e.code) for e in exc.errors]
        ) from exc
    try:
        services.apply_writes(planned)
    except services.StaleWrite as exc:
        raise _conflict(entries, exc) from exc
    except services.WriteRefused as exc:
        raise StagedRuleViolation(exc.index, exc.errors) from exc
    return Applied(len(entries), [str(e["summary"]) for e in entries])
