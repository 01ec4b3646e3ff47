"""The "Borrow from a sibling" form: a lead picks its node, a sibling, what is lent (amounts in each resource's unit)
and for how long; the loan is filed through ``changerequests.services.file_loan`` and its page shows the what-if."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from changerequests import loans, services
from engine.resources import QuantityError, format_quantity, parse_in_unit
from frontend.presenters import units
from frontend.views.common import viewer_required
from frontend.views.requests import KIND_PATHS, _nodes

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
DURATIONS = (("12h", "12 hours"), ("1d", "1 day"), ("3d", "3 days"), ("7d", "7 days"), ("14d", "14 days"))


def _siblings(kind: str, name: str) -> list[str]:
    model = KIND_PATHS[kind][1]
    node = model.objects.filter(name=name).first()
    if node is None or node.parent_id is None:
        return []
    rows = model.objects.filter(parent_id=node.parent_id).exclude(name__in=[name, *model.BUILTIN])
    return list(rows.order_by("name").values_list("name", flat=True))


def _amounts(post: Any) -> tuple[dict[str, str], list[str]]:
    """The amounts typed in each resource's unit (a bare 2 under GPUs is 2 GPUs), as quantities."""
    out, problems = {}, []
    for r in RESOURCES:
        text = post.get(f"amount__{r}", "").strip()
        if not text:
            continue
        try:
            out[r] = format_quantity(parse_in_unit(text, r, f"amount of {r}"), r)
        except QuantityError as exc:
            problems.append(str(exc))
    return out, problems


@viewer_required
def loan_new(request: HttpRequest) -> HttpResponse:
    """The form (``?node=queue:nlp`` picks the borrower), then the loan filed and its page."""
    choices = _nodes(request)
    picked = request.POST.get("node") or request.GET.get("node") or (choices[0][0] if choices else "")
    if picked and picked not in {v for v, _ in choices}:
        raise Http404(f"There is no node {picked} in your subtrees to borrow for.")
    context: dict[str, Any] = {"nav": "requests", "choices": choices, "picked": picked, "problems": []}
    if not picked:
        context["problems"] = ["No queue or quota group is linked to your teams, so there is nothing to borrow for."]
        return render(request, "frontend/loan_new.html", context)
    kind, name = picked.split(":", 1)
    post = request.POST if request.method == "POST" else None
    context.update(
        {
            "kind": kind,
            "name": name,
            "what": loans.WHAT[kind],
            "siblings": _siblings(kind, name),
            "fields": loans.KINDS[kind],
            "durations": DURATIONS,
            "rows": [
                {"resource": r, "unit": units.label(r), "value": post.get(f"amount__{r}", "") if post else ""}
                for r in RESOURCES
            ],
            "lender": post.get("lender", "") if post else "",
            "field": post.get("field", loans.KINDS[kind][0]) if post else loans.KINDS[kind][0],
            "duration": post.get("duration", "3d") if post else "3d",
            "reason": post.get("reason", "") if post else "",
        }
    )
    if post is None:
        return render(request, "frontend/loan_new.html", context)
    amounts, problems = _amounts(post)
    if not problems and not amounts:
        problems.append("Name what is lent: an amount of at least one resource.")
    if problems:
        context["problems"] = problems
        return render(request, "frontend/loan_new.html", context, status=400)
    loan = {
        "kind": kind,
        "from": context["lender"],
        "to": name,
        "field": context["field"],
        "amounts": amounts,
        "duration": context["duration"],
    }
    try:
        filed = services.file_loan(request.user, loan, reason=context["reason"])
    except services.RequestInvalid as exc:
        context["problems"] = [e.message for e in exc.errors]
        return render(request, "frontend/loan_new.html", context, status=400)
    messages.success(request, f"Loan #{filed.pk} is asked; the lender's lead has been told.")
    return redirect("frontend:change-request", filed.pk)
