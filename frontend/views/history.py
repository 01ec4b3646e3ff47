"""Who changed what and when: the audit records (django-simple-history) per node, and the latest changes."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from frontend.presenters import history as history_rows
from frontend.presenters.links import node_url
from frontend.views.common import can_see, gone_node, viewer_required, visible_names
from quotas.access import is_admin
from quotas.models import Namespace, Queue, QuotaGroup

MODELS: dict[str, tuple[Any, str, str]] = {
    "queues": (Queue, "queue", "Queue"),
    "quotas": (QuotaGroup, "quota", "Quota group"),
    "namespaces": (Namespace, "", "Namespace"),
}


@viewer_required
def node_history(request: HttpRequest, kind_path: str, name: str) -> HttpResponse:
    """Every audit record of one node (also after a rename or a delete: records are matched by the row)."""
    if kind_path not in MODELS:
        raise Http404(f"There is no history of {kind_path}: history is kept for queues, quotas and namespaces.")
    model, kind, title = MODELS[kind_path]
    if kind and not can_see(request, kind, name):
        raise Http404(gone_node(title.lower(), name))
    if not kind and not is_admin(request.user):
        raise Http404("The history of namespaces is for admins.")
    ids = set(model.history.filter(name=name).values_list("id", flat=True))
    current = model.objects.filter(name=name).first()
    if not ids and current is None:
        raise Http404(f"There is no {title.lower()} named {name}, and none by that name was ever recorded.")
    records = list(
        model.history.filter(id__in=ids).select_related("history_user").order_by("-history_date", "-history_id")[:200]
    )
    context = {
        "nav": "history",
        "title": f"{title} {name}",
        "node_url": node_url(kind, name) if kind and current is not None else "",
        "rows": history_rows.rows(records),
        "note": "" if records else history_rows.unrecorded(current, title.lower()),
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
        rows = history_rows.rows(list(qs[:40]), with_node=True)
        for row in rows:
            row["history_url"] = reverse("frontend:history", args=[kind_path, row["node"]])
        sections.append({"title": f"{title}s", "rows": rows})
    return render(request, "frontend/history.html", {"nav": "history", "title": "Recent changes", "sections": sections})
