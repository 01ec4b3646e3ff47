"""The history pages' rows: django-simple-history records as who changed which fields, when, old and new."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import Group

from engine.userlimits import user_limits_from_stored, user_limits_text
from frontend.presenters import units

TYPES = {"+": "created", "~": "changed", "-": "deleted"}
SKIP = {"created", "updated", "version"}


def show(value: Any) -> str:
    """A recorded field value as the page prints it: resource lists as quantities, a team list as names, a flag as
    yes or no."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{r}={units.quantity(int(v), r)}" for r, v in sorted(value.items()))
    if isinstance(value, list) and all(isinstance(row, Mapping) and "kind" in row for row in value):
        return user_limits_text(user_limits_from_stored(value)).replace("\n", "; ")  # per-user limits, stored form
    if isinstance(value, list):  # a many-to-many field: the rows of its through table
        ids = [row.get("group") for row in value if isinstance(row, Mapping)]
        names = dict(Group.objects.filter(pk__in=[i for i in ids if i is not None]).values_list("pk", "name"))
        return ", ".join(sorted(names.get(i, f"#{i}") for i in ids)) or "—"
    return str(value)


def label(field: Any) -> str:
    """A field as people name it: its verbose name ("closed by parent", not ``closed_by_parent``)."""
    return str(getattr(field, "verbose_name", field.name))


def related_name(field: Any, pk: Any) -> str | None:
    """The name of the row a foreign key points at (``#id (deleted)`` when it is gone)."""
    if pk is None:
        return None
    model = field.related_model
    return model.objects.filter(pk=pk).values_list("name", flat=True).first() or f"#{pk} (deleted)"


def changes(record: Any, previous: Any) -> list[dict[str, str]]:
    """The fields ``record`` changed since ``previous`` (every set field for a creation), old and new printed."""
    model = record.instance_type
    foreign = {f.name: f for f in model._meta.fields if f.is_relation}
    if previous is None:
        out = []
        for f in model._meta.fields:
            if f.name in SKIP or f.name == "id":
                continue
            value = getattr(record, f.attname, None)
            if value in (None, "", {}, []):
                continue
            shown = related_name(f, value) if f.name in foreign else value
            out.append({"field": label(f), "old": "", "new": show(shown)})
        return out
    delta = record.diff_against(previous, excluded_fields=list(SKIP))
    fields = {f.name: f for f in model._meta.get_fields()}
    out = []
    for change in delta.changes:
        old, new = change.old, change.new
        if change.field in foreign:
            old, new = related_name(foreign[change.field], old), related_name(foreign[change.field], new)
        field = fields.get(change.field)
        out.append({"field": label(field) if field is not None else change.field, "old": show(old), "new": show(new)})
    return out


def rows(records: list[Any], with_node: bool = False) -> list[dict[str, Any]]:
    """One row per audit record: when, who, what kind of change, the node (``with_node``) and the changes."""
    rows = []
    for record in records:
        previous = record.prev_record if record.history_type != "+" else None
        rows.append(
            {
                "when": record.history_date,
                "who": record.history_user.username if record.history_user else "system",
                "what": TYPES.get(record.history_type, record.history_type),
                "node": record.name if with_node else "",
                "changes": changes(record, previous),
                "why": record.history_change_reason or "",  # e.g. the change request that made it
            }
        )
    return rows


def unrecorded(node: Any, kind: str) -> str:
    """What the history page of a node without a record says instead of an empty table: a built-in node (``root``,
    ``default``, ``system``) is made with the database, before the first audit record, and so is listed from its
    first change on."""
    if getattr(node, "is_builtin", False):
        return (
            f"No change to the built-in {kind} {node.name} has been recorded. Fairway created it with the database, "
            "before any audit record; each change made to it from now on is listed here, with who made it."
        )
    return (
        f"No change to the {kind} {node.name} has been recorded: it was created without an audit record (by a data "
        "import or a migration). Each change made to it from now on is listed here, with who made it."
    )
