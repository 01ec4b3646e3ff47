"""The editor's form page: create, edit, move or rename a queue or a quota group through ``quotas.services``,
or stage the change for the what-if page.

Every form carries the ``version`` of the row it was read at; a save whose version is stale is refused with a
conflict message that says who changed what, and the form comes back with the user's input over the new version
so that saving again is a deliberate overwrite.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from engine import rules
from engine.changes import ProposalError
from frontend import staging
from frontend.forms import QueueForm, QuotaGroupForm
from frontend.presenters import editor as editor_rows
from frontend.presenters import trees
from frontend.presenters.links import node_url
from frontend.views.common import named_or_404, state, tree_editor
from planning import whatif
from quotas import services
from quotas.models import Queue, QuotaGroup

MODELS: dict[str, Any] = {"queue": Queue, "quota": QuotaGroup}
FORMS: dict[str, Any] = {"queue": QueueForm, "quota": QuotaGroupForm}
WHAT = {"queue": "queue", "quota": "quota group"}


def _form_page(
    request: HttpRequest, kind: str, form: Any, instance: Any, *, status: int = 200, **extra: Any
) -> HttpResponse:
    context = {
        "nav": "edit",
        "kind": kind,
        "kind_title": trees.TITLES[kind],
        "form": form,
        "instance": instance,
        "staged": staging.staged(request),
        "node_url": node_url(kind, instance.name) if instance is not None else "",
        **extra,
    }
    return render(request, "frontend/node_form.html", context, status=status)


def _warn(request: HttpRequest, warnings: list[rules.FieldError]) -> None:
    """Show each warning of a write (accepted, but worth knowing) on the page the user lands on."""
    for w in warnings:
        messages.warning(request, f"Warning: {w.message}.")


def _stage(request: HttpRequest, kind: str, form: Any, instance: Any) -> HttpResponse | None:
    """Stage the form's change for the what-if page after checking it against the staged list; returns the
    redirect, or None when the form got errors."""
    entry = staging.node_entry(kind, instance, form.service_data())
    entries = [*staging.staged(request), entry]
    snapshot = state(request).snapshot  # the cluster the what-if page previews the staged list on
    if snapshot is None:
        form.add_error(None, "There is no cluster to check the change on: nothing was staged.")
        return None
    try:
        whatif.apply(snapshot, staging.changes(entries))
    except ProposalError as exc:
        index = len(entries) - 1
        prefix = f"changes.{index}."
        mine = []
        for err in exc.errors:
            if err.field.startswith(prefix):
                field = err.field[len(prefix) :].removeprefix("spec.")
                mine.append(rules.FieldError(field, err.message, err.code))
            else:
                form.add_error(None, f"A change staged earlier no longer holds: {err.message}")
        form.attach_rule_errors(mine)
        return None
    staging.add(request, entry)
    messages.info(request, f"Staged: {entry['summary']}. Nothing is saved until you apply the what-if.")
    _warn(request, services.change_warnings(kind, instance, form.service_data()))
    return redirect("frontend:whatif")


def _edit(request: HttpRequest, kind: str, name: str | None) -> HttpResponse:
    model, form_class = MODELS[kind], FORMS[kind]
    instance = named_or_404(model, name, WHAT[kind]) if name is not None else None
    if request.method != "POST":
        initial = {"parent": request.GET["parent"]} if instance is None and request.GET.get("parent") else {}
        return _form_page(request, kind, form_class(instance=instance, initial=initial), instance)
    form = form_class(request.POST, instance=instance)
    form.is_valid()
    data = form.service_data()
    if form.errors:  # inputs that did not parse: the rules still check the rest, so every problem shows at once
        form.attach_rule_errors(services.problems(kind, instance, data), besides_input_errors=True)
        return _form_page(request, kind, form, instance, status=400)
    if request.POST.get("action") == "stage":
        response = _stage(request, kind, form, instance)
        return response or _form_page(request, kind, form, instance, status=400)
    try:
        with transaction.atomic():
            services.lock_tree_writes()  # the version compared below is the one the save replaces
            if instance is not None:
                current = model.objects.select_for_update().get(pk=instance.pk)
                if form.cleaned_data.get("version") != current.version:
                    posted = request.POST.copy()
                    posted["version"] = str(current.version)
                    stale = form_class(posted, instance=current)
                    stale.is_valid()
                    return _form_page(
                        request,
                        kind,
                        stale,
                        current,
                        conflict=editor_rows.conflict_message(kind, current, form.cleaned_data.get("version"), data),
                        status=409,
                    )
                instance = current
            warned = services.change_warnings(kind, instance, data)
            saved = (services.save_queue if kind == "queue" else services.save_quota_group)(instance, data)
    except rules.RuleViolation as exc:
        form.attach_rule_errors(exc.errors)
        return _form_page(request, kind, form, instance, status=400)
    messages.success(request, f"Saved {trees.TITLES[kind].lower()} {saved.name} (version {saved.version}).")
    _warn(request, warned)
    return redirect(node_url(kind, saved.name))


@tree_editor
def edit_queue(request: HttpRequest, name: str) -> HttpResponse:
    """Edit (or move, or rename) a queue."""
    return _edit(request, "queue", name)


@tree_editor
def new_queue(request: HttpRequest) -> HttpResponse:
    """Create a queue (``?parent=`` preselects its parent)."""
    return _edit(request, "queue", None)


@tree_editor
def edit_quota(request: HttpRequest, name: str) -> HttpResponse:
    """Edit (or move, or rename) a quota group."""
    return _edit(request, "quota", name)


@tree_editor
def new_quota(request: HttpRequest) -> HttpResponse:
    """Create a quota group."""
    return _edit(request, "quota", None)
