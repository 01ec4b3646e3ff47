"""The admin editor: create, edit, move and delete queues and quota groups, open and close queues, and set
namespace weights, through ``quotas.services`` (the API's writers, the API's messages).

Every form carries the ``version`` of the row it was read at; a save whose version is stale is refused with a
conflict message that says who changed what, and the form comes back with the user's input over the new version
so that saving again is a deliberate overwrite. Any form can also *stage* its change for the what-if page
instead of saving it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from engine import rules
from frontend import staging, trees
from frontend.forms import DeleteForm, NamespaceWeightForm, QueueForm, QuotaGroupForm, VersionForm
from frontend.views.common import admin_required, node_url, safe_next
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup

MODELS: dict[str, Any] = {"queue": Queue, "quota": QuotaGroup}
FORMS: dict[str, Any] = {"queue": QueueForm, "quota": QuotaGroupForm}
KIND_OF_PATH = {"queues": "queue", "quotas": "quota"}


def _last_change(model: Any, pk: int) -> dict[str, Any] | None:
    record = model.history.filter(id=pk).order_by("-history_date", "-history_id").select_related("history_user").first()
    if record is None:
        return None
    return {"user": record.history_user.username if record.history_user else "someone", "when": record.history_date}


def _differences(kind: str, current: Any, mine: dict[str, Any]) -> str:
    """The fields where the current row differs from what the user submitted, e.g. "weight is 3 (yours: 5)"."""
    now = staging.current_fields(kind, current)
    theirs = staging.node_entry(kind, current, mine)["change"].get("spec", {})
    parts = []
    for key, value in theirs.items():
        shown_now, shown_mine = now.get(key), value
        if isinstance(shown_now, dict) or isinstance(shown_mine, dict):
            shown_now = ", ".join(f"{r}={q}" for r, q in (shown_now or {}).items()) or "none"
            shown_mine = ", ".join(f"{r}={q}" for r, q in (shown_mine or {}).items()) or "none"
        parts.append(f"{key} is {shown_now} (yours: {shown_mine})")
    return "; ".join(parts)


def _conflict_message(kind: str, current: Any, stale: int | None, mine: dict[str, Any] | None = None) -> str:
    who = _last_change(MODELS.get(kind, Namespace), current.pk)
    by = f" by {who['user']} at {who['when']:%H:%M:%S}" if who else ""
    differs = _differences(kind, current, mine) if mine is not None and kind in MODELS else ""
    return (
        f"{trees.TITLES.get(kind, 'Namespace')} {current.name} was changed{by} after you opened this form "
        f"(you read version {stale}, it is now version {current.version}). Your change was NOT saved. "
        + (f"Now: {differs}. " if differs else "")
        + "The form below shows your values over the current version: review them, then save again to "
        "overwrite, or reload to start over."
    )


def _tree_rows(kind: str) -> list[dict[str, Any]]:
    model = MODELS[kind]
    rows = list(model.objects.select_related("parent").order_by("name"))
    parents = {r.name: (r.parent.name if r.parent_id else None) for r in rows}
    by_name = {r.name: r for r in rows}
    kids: dict[str | None, list[str]] = {}
    for name, parent in parents.items():
        kids.setdefault(parent if parent in by_name else None, []).append(name)
    out: list[dict[str, Any]] = []
    stack = [(n, 0) for n in sorted(kids.get(None, []), reverse=True)]
    while stack:
        name, depth = stack.pop()
        r = by_name[name]
        out.append(
            {
                "name": name,
                "depth": depth,
                "indent": depth * 14,
                "obj": r,
                "builtin": r.is_builtin,
                "url": node_url(kind, name),
                "edit": reverse(f"frontend:edit-{kind}", args=[name]),
                "delete": reverse("frontend:delete", args=["queues" if kind == "queue" else "quotas", name]),
                "add_child": reverse(f"frontend:new-{kind}") + f"?parent={name}"
                if kind == "queue" or r.is_parent
                else "",
            }
        )
        stack.extend((c, depth + 1) for c in sorted(kids.get(name, []), reverse=True))
    return out


@admin_required
def index(request: HttpRequest) -> HttpResponse:
    """Both trees with their actions, and the namespaces with their weights."""
    namespaces = list(Namespace.objects.select_related("default_queue", "quota_group").order_by("name"))
    context = {
        "nav": "edit",
        "queues": _tree_rows("queue"),
        "groups": _tree_rows("quota"),
        "namespaces": [
            {"obj": ns, "form": NamespaceWeightForm(instance=ns, prefix=f"ns-{ns.pk}")} for ns in namespaces
        ],
        "staged": staging.staged(request),
    }
    return render(request, "frontend/editor.html", context)


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


def _stage(request: HttpRequest, kind: str, form: Any, instance: Any) -> HttpResponse | None:
    """Stage the form's change for the what-if page after checking it against the staged list; returns the
    redirect, or None when the form got errors."""
    from django.conf import settings

    from controlplane.resource_names import known_resource_names
    from engine.changes import ProposalError, apply_changes
    from planning.values_api import current_snapshot

    entry = staging.node_entry(kind, instance, form.service_data())
    entries = [*staging.staged(request), entry]
    try:
        apply_changes(
            current_snapshot(settings.FAIRWAY["DEFAULT_CLUSTER"]),
            staging.changes(entries),
            max_depth=int(settings.FAIRWAY["MAX_QUEUE_DEPTH"]),
            resource_names=known_resource_names(),
        )
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
    return redirect("frontend:whatif")


def _edit(request: HttpRequest, kind: str, name: str | None) -> HttpResponse:
    model, form_class = MODELS[kind], FORMS[kind]
    instance = get_object_or_404(model, name=name) if name is not None else None
    if request.method != "POST":
        initial = {"parent": request.GET["parent"]} if instance is None and request.GET.get("parent") else {}
        return _form_page(request, kind, form_class(instance=instance, initial=initial), instance)
    form = form_class(request.POST, instance=instance)
    if not form.is_valid():
        return _form_page(request, kind, form, instance, status=400)
    data = form.service_data()
    if form.errors:  # quantities that did not parse
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
                        conflict=_conflict_message(kind, current, form.cleaned_data.get("version"), data),
                        status=409,
                    )
                instance = current
            saved = (services.save_queue if kind == "queue" else services.save_quota_group)(instance, data)
    except rules.RuleViolation as exc:
        form.attach_rule_errors(exc.errors)
        return _form_page(request, kind, form, instance, status=400)
    messages.success(request, f"Saved {trees.TITLES[kind].lower()} {saved.name} (version {saved.version}).")
    return redirect(node_url(kind, saved.name))


@admin_required
def edit_queue(request: HttpRequest, name: str) -> HttpResponse:
    """Edit (or move, or rename) a queue."""
    return _edit(request, "queue", name)


@admin_required
def new_queue(request: HttpRequest) -> HttpResponse:
    """Create a queue (``?parent=`` preselects its parent)."""
    return _edit(request, "queue", None)


@admin_required
def edit_quota(request: HttpRequest, name: str) -> HttpResponse:
    """Edit (or move, or rename) a quota group."""
    return _edit(request, "quota", name)


@admin_required
def new_quota(request: HttpRequest) -> HttpResponse:
    """Create a quota group."""
    return _edit(request, "quota", None)


@admin_required
def delete(request: HttpRequest, kind_path: str, name: str) -> HttpResponse:
    """Confirm, then delete (or stage the deletion of) a queue or a quota group."""
    kind = KIND_OF_PATH.get(kind_path)
    if kind is None:
        raise Http404("no such tree")
    model = MODELS[kind]
    instance = get_object_or_404(model, name=name)
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
                context["conflict"] = _conflict_message(kind, current, form.cleaned_data["version"])
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


@admin_required
def queue_action(request: HttpRequest, name: str, action: str) -> HttpResponse:
    """Open or close a queue (POST) with the hierarchical state rules; children follow as the rules say."""
    if request.method != "POST" or action not in ("open", "close"):
        raise Http404("use the buttons")
    queue = get_object_or_404(Queue, name=name)
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
                messages.error(request, _conflict_message("queue", current, form.cleaned_data["version"]))
                return redirect(back)
            changed = services.queue_action(current, action)
    except rules.RuleViolation as exc:
        for err in exc.errors:
            messages.error(request, err.message)
        return redirect(back)
    summary = ", ".join(f"{n} → {s}" for n, (s, _) in sorted(changed.items())) or "no state changed"
    messages.success(request, f"{action.capitalize()} {name}: {summary}.")
    return redirect(back)


@admin_required
def namespace_weight(request: HttpRequest, name: str) -> HttpResponse:
    """Set a namespace's weight (POST from the editor or a queue page), or stage it for the what-if page."""
    ns = get_object_or_404(Namespace, name=name)
    if request.method != "POST":
        raise Http404("use the form")
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
            messages.error(request, _conflict_message("namespace", current, form.cleaned_data["version"]))
            return redirect(back)
        try:
            services.set_namespace_weight(current, weight)
        except rules.RuleViolation as exc:
            for err in exc.errors:
                messages.error(request, err.message)
            return redirect(back)
    messages.success(request, f"Namespace {name}: weight {ns.weight} → {weight}.")
    return redirect(back)
