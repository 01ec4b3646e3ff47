"""Change request pages: the list of open and past requests, the "Request a change" form (a node of the user's
subtree, its amounts pre-filled, the what-if shown before submitting) and a request's page, where its approvers
approve or reject it and its requester withdraws it. All of it through ``changerequests.services``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import yaml
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from changerequests import services
from changerequests.choices import RequestStatus
from changerequests.models import ChangeRequest
from engine import limits
from engine.manifests.common import yaml_problem
from engine.resources import (
    QuantityError,
    ResourceList,
    check_resource_name,
    format_in_unit,
    format_quantity,
    parse_in_unit,
)
from frontend.forms import LIST_LABELS
from frontend.presenters import request_effect, units
from frontend.views.common import viewer_required, visible_names
from quotas.models import Queue, QuotaGroup

FIELD_LABELS = {**LIST_LABELS, "capability": "Capability (max)"}
KIND_PATHS = {"queue": ("queue", Queue, "Queue"), "quota_group": ("quota", QuotaGroup, "Quota group")}


def _readable(request: HttpRequest, pk: int) -> ChangeRequest:
    found = services.readable_by(request.user).filter(pk=pk).first()
    if found is None:
        raise Http404(f"There is no change request #{pk} that you filed or may review.")
    return found


@viewer_required
def request_list(request: HttpRequest) -> HttpResponse:
    """The requests the user may review, its own open ones, and the decided ones."""
    qs = services.readable_by(request.user).order_by("-created", "-id")
    review = services.to_review(request.user, qs)
    review_ids = set(review.values_list("pk", flat=True))
    context = {
        "nav": "requests",
        "to_review": list(review),
        "open": [r for r in qs.filter(status=RequestStatus.OPEN) if r.pk not in review_ids],
        "past": list(qs.exclude(status=RequestStatus.OPEN)[:200]),
    }
    return render(request, "frontend/requests.html", context)


def _nodes(request: HttpRequest) -> list[tuple[str, str]]:
    """The nodes the user may ask about: (value, label), queues then quota groups, builtins left out."""
    out = []
    for kind, (path, model, title) in KIND_PATHS.items():
        names = visible_names(request, path)  # type: ignore[arg-type]
        rows = model.objects.exclude(name__in=model.BUILTIN).order_by("name").values_list("name", flat=True)
        out += [(f"{kind}:{n}", f"{title} {n}") for n in rows if names is None or n in names]
    return out


def _resources(node: Any, fields: tuple[str, ...]) -> list[str]:
    lists = [getattr(node, f) or {} for f in fields]
    return units.resource_order({"cpu", "memory", "nvidia.com/gpu", *(r for rl in lists for r in rl)})


def _current(node: Any, field: str) -> dict[str, int]:
    return {r: int(v) for r, v in (getattr(node, field) or {}).items()}


def _parse(post: Mapping[str, str], kind: str, resources: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The form's amounts in base units per field (a blank cell leaves the resource out), and the problems."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for field in services.RESOURCE_FIELDS[kind]:
        parsed: dict[str, int] = {}
        for r in resources:
            text = (post.get(f"{field}__{r}") or "").strip()
            if not text:
                continue
            try:
                check_resource_name(r, f"{field}.{r}")
                parsed[r] = parse_in_unit(text, r, f"{field}.{r}")
            except QuantityError as exc:
                problems.append(f"{FIELD_LABELS[field]} {r}: {exc.message}")
        out[field] = parsed
    if kind == "queue":
        text = (post.get("weight") or "").strip()
        if text:
            if not text.isdigit():
                problems.append(f"Weight: {text!r} is not a whole number")
            else:
                out["weight"] = int(text)
    return out, problems


def _quantities(amounts: Mapping[str, int]) -> dict[str, str]:
    return {r: format_quantity(v, r) for r, v in amounts.items()}


def _changes(kind: str, node: Any, parsed: Mapping[str, Any], child: str) -> list[dict[str, Any]]:
    """The change language for the form: the fields that differ from the node's (an update), or every field set
    (a new child under the node)."""
    spec: dict[str, Any] = {}
    for field, value in parsed.items():
        if field == "weight":
            if child or value != node.weight:
                spec["weight"] = value
            continue
        limit = field in ("borrowing_limit", "lending_limit", "shared_weight")
        if child:
            if value:
                spec[field] = _quantities(value)
        elif value != _current(node, field):
            spec[field] = None if (limit and not value) else _quantities(value)
    if child:
        return [{"op": "create", "kind": kind, "name": child, "spec": {"name": child, "parent": node.name, **spec}}]
    return [{"op": "update", "kind": kind, "name": node.name, "spec": spec}] if spec else []


def _fingerprint(changes: Any, reason: str) -> str:
    return hashlib.sha256(json.dumps([changes, reason], sort_keys=True).encode()).hexdigest()[:16]


@viewer_required
def request_new(request: HttpRequest) -> HttpResponse:
    """The form: pick a node (``?node=queue:nlp``), change its amounts or name a new child, Preview (the what-if),
    then Submit."""
    choices = _nodes(request)
    picked = request.POST.get("node") or request.GET.get("node") or (choices[0][0] if choices else "")
    if picked not in {v for v, _ in choices}:
        if request.GET.get("node") or request.POST.get("node"):
            raise Http404(f"There is no node {picked} in your subtrees to ask a change of.")
        picked = choices[0][0] if choices else ""
    context: dict[str, Any] = {"nav": "requests", "choices": choices, "picked": picked, "problems": []}
    if not picked:
        context["problems"] = ["No queue or quota group is linked to your teams, so there is nothing to ask about."]
        return render(request, "frontend/request_new.html", context)
    kind, name = picked.split(":", 1)
    node = KIND_PATHS[kind][1].objects.get(name=name)
    fields = services.RESOURCE_FIELDS[kind]
    resources = _resources(node, fields)
    post = request.POST if request.method == "POST" else None
    rows = []
    for r in resources:
        cells = []
        for field in fields:
            value = (
                post.get(f"{field}__{r}", "") if post is not None else format_in_unit(_current(node, field).get(r), r)
            )
            if post is None and r not in _current(node, field):
                value = ""
            cells.append({"name": f"{field}__{r}", "value": value, "label": f"{FIELD_LABELS[field]} {r}"})
        rows.append({"resource": r, "unit": units.unit_of(r)[1], "cells": cells})
    context.update(
        {
            "kind": kind,
            "node": node,
            "title": KIND_PATHS[kind][2],
            "headers": [FIELD_LABELS[f] for f in fields],
            "rows": rows,
            "weight": (post.get("weight", "") if post is not None else getattr(node, "weight", "")),
            "child": (post.get("child", "") if post is not None else "").strip(),
            "reason": post.get("reason", "") if post is not None else "",
        }
    )
    if post is None:
        return render(request, "frontend/request_new.html", context)
    parsed, problems = _parse(post, kind, resources)
    changes = _changes(kind, node, parsed, context["child"]) if not problems else []
    if not problems and not changes:
        problems.append("Nothing differs from the node as it is: change an amount, or name a new child.")
    if problems:
        context["problems"] = problems
        return render(request, "frontend/request_new.html", context, status=400)
    try:
        evaluation = services.preview(request.user, changes)
    except services.RequestInvalid as exc:
        context["problems"] = [e.message for e in exc.errors]
        return render(request, "frontend/request_new.html", context, status=400)
    fingerprint = _fingerprint(changes, context["reason"])
    if post.get("action") == "submit" and post.get("previewed") == fingerprint:
        filed = services.file_request(request.user, changes, reason=context["reason"])
        messages.success(request, f"Change request #{filed.pk} is filed; its approvers have been told.")
        return redirect("frontend:change-request", filed.pk)
    context.update(
        {
            "whatif": services.visible_whatif(request.user, evaluation.whatif),
            "value_rows": whatif_rows(services.visible_whatif(request.user, evaluation.whatif)),
            "needs_room": [e.message for e in evaluation.errors],
            "previewed": fingerprint,
        }
    )
    return render(request, "frontend/request_new.html", context)


@viewer_required
def request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One request: its changes, its what-if, its steps; approve / reject for its approvers, withdraw for its
    requester."""
    obj = _readable(request, pk)
    is_requester = obj.requester_id == request.user.pk
    context = {
        "nav": "requests",
        "req": obj,
        "whatif": services.visible_whatif(request.user, obj.whatif),
        "value_rows": whatif_rows(services.visible_whatif(request.user, obj.whatif)),
        "may_review": obj.is_open and services.may_review(request.user, obj),
        # the approver's amended list starts as the request's own (a loan is approved as asked, never amended)
        "amendable": obj.loan is None,
        "amend_yaml": yaml.safe_dump(obj.changes, sort_keys=False, allow_unicode=True),
        "may_withdraw": obj.is_open and is_requester,
        "steps": _with_replays(request, obj, list(services.steps(obj))),
        "node_links": _node_links(obj),
        "effect": request_effect.page_effect(obj, request.user, timezone.now()),
    }
    return render(request, "frontend/request.html", context)


def _with_replays(request: HttpRequest, obj: ChangeRequest, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's steps with the replays of its changes that the user may read (``planning.replay``), each linked
    to its run's page, in time order."""
    from planning import replay

    for run in replay.runs_for(request.user).filter(change_request=obj):
        steps.append(
            {
                "when": run.created,
                "who": run.requester.get_username() if run.requester else "a deleted user",
                "step": f"replayed the last {run.window_text} with "
                + ("an approver's amended changes" if ", amended: " in run.summary else "its changes")
                + f" (replay #{run.pk}, {run.state})",
                "comment": "",
                "url": reverse("frontend:replay", args=[run.pk]),
            }
        )
    return sorted(steps, key=lambda s: s["when"])


def _node_links(obj: ChangeRequest) -> list[dict[str, str]]:
    out = []
    for change in obj.changes:
        kind = str(change.get("kind"))
        path = KIND_PATHS.get(kind, ("queue",))[0]
        name = (change.get("spec") or {}).get("name") if change.get("op") == "create" else change.get("name")
        exists = KIND_PATHS[kind][1].objects.filter(name=name).exists() if kind in KIND_PATHS else False
        out.append(
            {
                "label": f"{services.WHAT.get(kind, kind)} {name}",
                "history": reverse("frontend:history", args=[f"{path}s" if path == "queue" else "quotas", name])
                if exists
                else "",
            }
        )
    return out


@viewer_required
def request_decide(request: HttpRequest, pk: int, decision: str) -> HttpResponse:
    """Approve, reject or withdraw (POST from the request's page)."""
    if request.method != "POST" or decision not in ("approve", "reject", "withdraw"):
        raise Http404("This address decides a change request when its page's buttons send it.")
    obj = _readable(request, pk)
    comment = (request.POST.get("comment") or "").strip()
    if decision == "reject" and not comment:
        messages.error(request, "Say why in the comment: the requester reads it.")
        return redirect("frontend:change-request", obj.pk)
    decide = {"approve": services.approve, "reject": services.reject, "withdraw": services.withdraw}[decision]
    extra: dict[str, Any] = {}
    if decision == "approve" and request.POST.get("amend"):  # the approver's amended list of changes
        amended = amended_changes(request.POST.get("changes") or "")
        if isinstance(amended, str):
            messages.error(request, f"Not applied: changes: {amended}")
            return redirect("frontend:change-request", obj.pk)
        extra["changes"] = amended
    try:
        done = decide(obj.pk, request.user, comment=comment, **extra)
    except services.RequestInvalid as exc:
        for e in exc.errors:
            messages.error(request, f"Not applied: {e.message}")
    except (services.NotAllowed, services.NotOpen) as exc:
        messages.error(request, str(exc))
    else:
        if done.status == RequestStatus.STALE:
            messages.warning(request, f"Change request #{done.pk} is stale. {done.outcome}")
        else:
            messages.success(request, f"Change request #{done.pk} is {done.get_status_display()}.")
    return redirect("frontend:change-request", obj.pk)


def amended_changes(text: str) -> list[Any] | str:
    """The approver's list of changes written in the page's box (YAML, or JSON, which YAML reads), or why it is not
    one; what each change says is the rules' to check (``services.approve``)."""
    try:
        # an alias repeats what its anchor holds without bounds (a few lines can stand for millions of entries); a text
        # without an anchor (``&``) has none, and is parsed once, below
        if "&" in text and any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=limits.SafeLoader)):
            return "anchors and aliases (& and *) are not read here: write each change out"
        changes = limits.load_yaml(text)
    except yaml.YAMLError as exc:
        return f"not YAML: {yaml_problem(exc)}"
    if not isinstance(changes, list) or not changes:
        return "write a list of changes (each a mapping with op and kind), as the box showed them"
    return changes


def whatif_rows(whatif: Mapping[str, Any]) -> list[dict[str, str]]:
    """The computed values that change, one row per node and value, for people."""
    rows = []
    for section, title in (("queues", "queue"), ("quota_groups", "quota group")):
        for name, fields in sorted(((whatif.get("values") or {}).get(section) or {}).items()):
            if fields.get("added") or fields.get("removed"):
                what = "added" if fields.get("added") else "removed"
                rows.append({"node": f"{title} {name}", "value": what, "before": "", "after": ""})
                continue
            for field, pair in fields.items():
                rows.append(
                    {
                        "node": f"{title} {name}",
                        "value": field.replace("_", " "),
                        "before": amounts_text(pair.get("before")),
                        "after": amounts_text(pair.get("after")),
                    }
                )
    return rows


def amounts_text(value: Any) -> str:
    """A stored resource list for people (the what-if's quantities)."""
    if not isinstance(value, Mapping):
        return "—" if value is None else str(value)
    parsed = ResourceList.parse({k: v for k, v in value.items() if v is not None})
    unlimited = [k for k, v in value.items() if v is None]
    parts = [f"{r} {units.quantity(int(v), r)}" for r, v in sorted(parsed.items())]
    return ", ".join(parts + [f"{r} unlimited" for r in unlimited]) or "—"
