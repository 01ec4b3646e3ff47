"""Who changed what and when: the audit records (django-simple-history) per node, and the latest changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import Group
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from frontend import units
from frontend.views.common import can_see, node_url, viewer_required, visible_names
from quotas.access import is_admin
from quotas.models import Namespace, Queue, QuotaGroup

MODELS: dict[str, tuple[Any, str, str]] = {
    "queues": (Queue, "queue", "Queue"),
    "quotas": (QuotaGroup, "quota", "Quota group"),
    "namespaces": (Namespace, "", "Namespace"),
}
TYPES = {"+": "created", "~": "changed", "-": "deleted"}
SKIP = {"created", "updated", "version"}


def _show(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, Mapping):
        return ", ".join(f"{r}={units.quantity(int(v), r)}" for r, v in sorted(value.items()))
    if isinstance(value, list):  # a many-to-many field: the rows of its through table
        ids = [row.get("group") for row in value if isinstance(row, Mapping)]
        names = dict(Group.objects.filter(pk__in=[i for i in ids if i is not None]).values_list("pk", "name"))
        return ", ".join(sorted(names.get(i, f"#{i}") for i in ids)) or "—"
    return str(value)


def _related_name(field: Any, pk: Any) -> str | None:
    """The name of the row a foreign key points at (``#id (deleted)`` when it is gone)."""
    if pk is None:
        return None
    model = field.related_model
    return model.objects.filter(pk=pk).values_list("name", flat=True).first() or f"#{pk} (deleted)"


def _changes(record: Any, previous: Any) -> list[dict[str, str]]:
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
            shown = _related_name(f, value) if f.name in foreign else value
            out.append({"field": f.name, "old": "", "new": _show(shown)})
        return out
    delta = record.diff_against(previous, excluded_fields=list(SKIP))
    out = []
    for change in delta.changes:
        old, new = change.old, change.new
        if change.field in foreign:
            old, new = _related_name(foreign[change.field], old), _related_name(foreign[change.field], new)
        out.append({"field": change.field, "old": _show(old), "new": _show(new)})
    return out


def _rows(records: list[Any], with_node: bool = False) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        previous = record.prev_record if record.history_type != "+" else None
        rows.append(
            {
                "when": record.history_date,
                "who": record.history_user.username if record.history_user else "system",
                "what": TYPES.get(record.history_type, record.history_type),
                "node": record.name if with_node else "",
                "changes": _changes(record, previous),
            }
        )
    return rows


@viewer_required
def node_history(request: HttpRequest, kind_path: str, name: str) -> HttpResponse:
    """Every audit record of one node (also after a rename or a delete: records are matched by the row)."""
    if kind_path not in MODELS:
        raise Http404("no such history")
    model, kind, title = MODELS[kind_path]
    if kind and not can_see(request, kind, name):
        raise Http404("no such node")
    if not kind and not is_admin(request.user):
        raise Http404("no such namespace")
    ids = set(model.history.filter(name=name).values_list("id", flat=True))
    if not ids:
        raise Http404("no history")
    records = list(
        model.history.filter(id__in=ids).select_related("history_user").order_by("-history_date", "-history_id")[:200]
    )
    context = {
        "nav": "history",
        "title": f"{title} {name}",
        "node_url": node_url(kind, name) if kind and model.objects.filter(name=name).exists() else "",
        "rows": _rows(records),
    }
    return render(request, "frontend/history.html", context)


@viewer_required
def recent(request: HttpRequest) -> HttpResponse:
    """The latest changes to the trees (what the user may read)."""
    sections = []
    for kind_path, (model, kind, title) in MODELS.items():
        qs = model.history.select_related("history_user").order_by("-history_date", "-history_id")
        if kind:
            names = visible_names(request, kind)
            if names is not None:
                qs = qs.filter(name__in=sorted(names))
        elif not is_admin(request.user):
            continue
        rows = _rows(list(qs[:40]), with_node=True)
        for row in rows:
            row["history_url"] = reverse("frontend:history", args=[kind_path, row["node"]])
        sections.append({"title": f"{title}s", "rows": rows})
    return render(request, "frontend/history.html", {"nav": "history", "title": "Recent changes", "sections": sections})
