"""The editor page: both trees with their actions and the namespaces with their weights, and the buttons it
posts (open or close a queue, set a namespace's weight), all through ``quotas.services``; each button carries
the version it was rendered at and a stale one is refused. Any change can be staged for the what-if page instead.
"""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from engine import rules
from frontend import staging
from frontend.forms import NamespaceWeightForm, VersionForm
from frontend.presenters import editor as editor_rows
from frontend.presenters.links import node_url
from frontend.views.common import (
    admin_required,
    named_or_404,
    owned_sentence,
    safe_next,
    tree_editor,
    trees_owner,
)
from quotas import services
from quotas.models import Namespace, Queue


@admin_required
def index(request: HttpRequest) -> HttpResponse:
    """Both trees with their actions, and the namespaces with their weights; while a cluster owns the trees, the
    trees and weights without an action or a form, and the sentence that says where they are edited."""
    owner = trees_owner(request)
    namespaces = list(Namespace.objects.select_related("default_queue", "quota_group").order_by("name"))
    context = {
        "nav": "edit",
        "queues": editor_rows.tree_rows("queue"),
        "groups": editor_rows.tree_rows("quota"),
        "namespaces": [
            {"obj": ns, "form": NamespaceWeightForm(instance=ns, prefix=f"ns-{ns.pk}")} for ns in namespaces
        ],
        "staged": staging.staged(request),
        "owned": owned_sentence(owner) if owner is not None else "",
    }
    return render(request, "frontend/editor.html", context)


@tree_editor
def queue_action(request: HttpRequest, name: str, action: str) -> HttpResponse:
    """Open or close a queue (POST) with the hierarchical state rules; children follow as the rules say."""
    if request.method != "POST" or action not in ("open", "close"):
        raise Http404("This address opens or closes a queue when its page's Open or Close button sends it.")
    queue = named_or_404(Queue, name, "queue")
    form = VersionForm(request.POST)
    back = safe_next(request, node_url("queue", name))
    if not form.is_valid():
        messages.error(request, "The button was missing its version; reload the page.")
        return redirect(back)
    try:
        with transaction.atomic():
            services.lock_tree_writes()
            current = Queue.objects.select_for_update().get(pk=queue.pk)
            if form.cleaned_data["version"] != current.version:
                messages.error(request, editor_rows.conflict_message("queue", current, form.cleaned_data["version"]))
                return redirect(back)
            changed = services.queue_action(current, action)
    except rules.RuleViolation as exc:
        for err in exc.errors:
            messages.error(request, err.message)
        return redirect(back)
    summary = ", ".join(f"{n} → {s}" for n, (s, _) in sorted(changed.items())) or "no state changed"
    messages.success(request, f"{action.capitalize()} {name}: {summary}.")
    return redirect(back)


@tree_editor
def namespace_weight(request: HttpRequest, name: str) -> HttpResponse:
    """Set a namespace's weight (POST from the editor or a queue page), or stage it for the what-if page."""
    ns = named_or_404(Namespace, name, "namespace")
    if request.method != "POST":
        raise Http404("This address sets a namespace's weight when the editor's weight form sends it.")
    form = NamespaceWeightForm(request.POST, instance=ns, prefix=f"ns-{ns.pk}")
    back = safe_next(request, reverse("frontend:edit"))
    if not form.is_valid():
        for field, errs in form.errors.items():
            for e in errs:
                messages.error(request, f"namespace {name}: {field}: {e}")
        return redirect(back)
    weight = form.cleaned_data["weight"]
    if request.POST.get("action") == "stage":
        entry = staging.weight_entry(ns, weight)
        staging.add(request, entry)
        messages.info(request, f"Staged: {entry['summary']}.")
        return redirect("frontend:whatif")
    with transaction.atomic():
        services.lock_tree_writes()
        current = Namespace.objects.select_for_update().get(pk=ns.pk)
        if form.cleaned_data["version"] != current.version:
            messages.error(request, editor_rows.conflict_message("namespace", current, form.cleaned_data["version"]))
            return redirect(back)
        try:
            services.set_namespace_weight(current, weight)
        except rules.RuleViolation as exc:
            for err in exc.errors:
                messages.error(request, err.message)
            return redirect(back)
    messages.success(request, f"Namespace {name}: weight {ns.weight} → {weight}.")
    return redirect(back)
