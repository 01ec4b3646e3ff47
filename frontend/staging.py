"""Staged edits for the what-if page: kept in the user's session, evaluated with ``engine.changes`` and applied
all together, in one transaction, through ``quotas.services`` (the same writers as the API).

A staged entry is ``{"change": <a what-if change>, "kind": "queue" | "quota" | "namespace", "name": <target>,
"version": <the target's version when staged, None for a create>, "summary": <one line>}``. The change is
exactly what ``engine.changes.apply_changes`` takes, so the evaluation and the final write read the same list.
Applying checks every target's version first: if any row changed since it was staged the whole set is refused
(nothing is written) and the page says which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.http import HttpRequest

from engine import rules
from engine.resources import ResourceList, format_quantity, parse_resource_list
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup

SESSION_KEY = "fairway_staged"
MAX_STAGED = 50
QUEUE_RESOURCES = ("capability", "deserved", "guarantee")
GROUP_RESOURCES = ("min", "max", "shared_weight")
MODELS: dict[str, Any] = {"queue": Queue, "quota": QuotaGroup, "namespace": Namespace}
WHATIF_KIND = {"queue": "queue", "quota": "quota_group", "namespace": "namespace"}


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
        spec[key] = _quantities(value) if key in resource_keys else value
    return spec


def current_fields(kind: str, instance: Any) -> dict[str, Any]:
    """A queue's or quota group's editable fields as a what-if spec (resource lists as quantities)."""
    keys = QUEUE_RESOURCES if kind == "queue" else GROUP_RESOURCES
    current = {"name": instance.name, "parent": instance.parent.name if instance.parent_id else None}
    fields = services.QUEUE_FIELDS if kind == "queue" else services.GROUP_FIELDS
    for f in fields:
        value = getattr(instance, f)
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


def _service_data(spec: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in spec.items():
        data[key] = (None if value is None else parse_resource_list(value, key)) if key in keys else value
    return data


def _apply_one(change: Mapping[str, Any]) -> None:
    kind, op = change["kind"], change["op"]
    if kind == "namespace":
        ns = Namespace.objects.select_for_update().get(name=change["name"])
        ns.weight = int(change["weight"])
        ns.save(update_fields=["weight"])
        return
    model = Queue if kind == "queue" else QuotaGroup
    keys = QUEUE_RESOURCES if kind == "queue" else GROUP_RESOURCES
    instance = None if op == "create" else model.objects.get(name=change["name"])
    if op == "delete":
        if kind == "queue":
            services.delete_queue(instance, cascade=bool(change.get("cascade")), force=bool(change.get("force")))
        else:
            services.delete_quota_group(instance)
        return
    data = {"parent": change.get("parent")} if op == "move" else _service_data(change.get("spec") or {}, keys)
    if kind == "queue":
        services.save_queue(instance, data)
    else:
        services.save_quota_group(instance, data)


def check_versions(entries: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``Conflict`` for the first entry whose target's version moved since it was staged (entries that
    target a node an earlier entry creates or edits are checked against the version they were staged at)."""
    touched: set[tuple[str, str]] = set()
    for i, e in enumerate(entries):
        key = (e["kind"], e["name"])
        if e["version"] is not None and key not in touched:
            current = MODELS[e["kind"]].objects.filter(name=e["name"]).values_list("version", flat=True).first()
            if current != e["version"]:
                raise Conflict(i, e["kind"], e["name"], e["version"], current)
        touched.add(key)
        spec = e["change"].get("spec") or {}
        if "name" in spec:
            touched.add((e["kind"], spec["name"]))


@dataclass(frozen=True)
class Applied:
    count: int
    summaries: list[str]


def apply(entries: Sequence[Mapping[str, Any]]) -> Applied:
    """Apply every entry in order in one transaction through the services; nothing is written when any entry
    conflicts (``Conflict``) or breaks a rule (``StagedRuleViolation``)."""
    with transaction.atomic():
        services.lock_tree_writes()  # the versions checked are the ones the writes replace
        check_versions(entries)
        for i, e in enumerate(entries):
            try:
                _apply_one(e["change"])
            except rules.RuleViolation as exc:
                raise StagedRuleViolation(i, exc.errors) from exc
            except (Queue.DoesNotExist, QuotaGroup.DoesNotExist, Namespace.DoesNotExist) as exc:
                raise Conflict(i, e["kind"], e["name"], e["version"], None) from exc
    return Applied(len(entries), [str(e["summary"]) for e in entries])
