"""The editor's delete page: confirm, then delete (or stage the deletion of) a queue or a quota group through
``quotas.services``, refused when the row moved since the page was read.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from engine import rules
from frontend import staging
from frontend.forms import DeleteForm
from frontend.presenters import editor as editor_rows
from frontend.presenters import trees
from frontend.presenters.links import node_url
from frontend.views.common import named_or_404, tree_editor
from quotas import services
from quotas.models import Queue, QuotaGroup

MODELS: dict[str, Any] = {"queue": Queue, "quota": QuotaGroup}
KIND_OF_PATH = {"queues": "queue", "quotas": "quota"}


@tree_editor
def delete(request: HttpRequest, kind_path: str, name: str) -> HttpResponse:
    """Confirm, then delete (or stage the deletion of) a queue or a quota group."""
    kind = KIND_OF_PATH.get(kind_path)
    if kind is None:
        raise Http404(f"There is no tree named {kind_path}: the trees are queues and quotas.")
    model = MODELS[kind]
    instance = named_or_404(model, name, "queue" if kind == "queue" else "quota group")
    children = list(instance.children.order_by("name").values_list("name", flat=True))
    context: dict[str, Any] = {
        "nav": "edit",
        "kind": kind,
        "kind_title": trees.TITLES[kind],
        "instance": instance,
        "children": children,
        "node_url": node_url(kind, name),
    }
    if request.method != "POST":
        context["form"] = DeleteForm(initial={"version": instance.version})
        return render(request, "frontend/delete.html", context)
    form = DeleteForm(request.POST)
    context["form"] = form
    if not form.is_valid():
        return render(request, "frontend/delete.html", context, status=400)
    cascade, force = form.cleaned_data["cascade"], form.cleaned_data["force"]
    if request.POST.get("action") == "stage":
        entry = staging.delete_entry(kind, instance, cascade=cascade, force=force)
        staging.add(request, entry)
        messages.info(request, f"Staged: {entry['summary']}.")
        return redirect("frontend:whatif")
    try:
        with transaction.atomic():
            services.lock_tree_writes()
            current = model.objects.select_for_update().get(pk=instance.pk)
            if form.cleaned_data["version"] != current.version:
                context["conflict"] = editor_rows.conflict_message(kind, current, form.cleaned_data["version"])
                context["form"] = DeleteForm(initial={"version": current.version, "cascade": cascade, "force": force})
                return render(request, "frontend/delete.html", context, status=409)
            if kind == "queue":
                services.delete_queue(current, cascade=cascade, force=force)
            else:
                services.delete_quota_group(current)
    except rules.RuleViolation as exc:
        context["errors"] = [e.message for e in exc.errors]
        return render(request, "frontend/delete.html", context, status=400)
    messages.success(request, f"Deleted {trees.TITLES[kind].lower()} {name}.")
    return redirect("frontend:edit")
