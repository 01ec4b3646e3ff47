"""The fairness audit page: who is starved and who borrows from the same parent, who lends and what could be lent
now, which guarantees sat idle over the window (with a what-if that frees them), and each node's use against its
share over the window, and how long the jobs submitted in the window waited to start (``engine.audit`` through
``planning.audit``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import PermissionDenied, ValidationError

from engine.audit import QUEUE, QUOTA, TREND_DAY, TREND_HOUR, Audit
from engine.resources import ResourceList
from engine.waits import NodeWaits
from engine.wording import duration, duration_or
from frontend import figures, staging
from frontend.presenters.units import human
from frontend.views.common import Page, admin_required, render_page, state, viewer_required
from planning.audit import MAX_DAYS, run, scope, within
from quotas.access import is_admin
from quotas.models import Queue, QuotaGroup

WINDOWS = (1, 7, 14, 30)
ROWS = 10  # per table, the first (most pressing) ones; ``?all=1`` shows every row
SUGGESTION_GONE = (
    "This suggestion no longer applies: the node, its guarantee or the resource changed since the audit was drawn. "
    "Open the Audit page again for the current suggestions."
)


def _node_url(tree: str, name: str) -> str:
    return reverse("frontend:queue" if tree == QUEUE else "frontend:quota", args=[name])


def _ratio(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.2f}\u00d7"


@viewer_required
def audit_page(request: HttpRequest) -> HttpResponse:
    """Admins: the whole cluster (or ``?team=``'s subtrees); a team member, a department lead above all: its own
    subtrees (``planning.audit.scope``), without the suggestions, which only an admin can apply."""
    team = request.GET.get("team") or ""
    try:
        nodes = scope(request.user, team or None)
    except PermissionDenied as refused:
        return render(request, "frontend/forbidden.html", {"why": str(refused.detail)}, status=403)
    except ValidationError:
        raise Http404(f"There is no team named {team}.") from None
    st = state(request)
    try:
        days = min(MAX_DAYS, max(1, int(request.GET.get("days", "7"))))
    except ValueError:
        days = 7
    context: dict[str, Any] = {
        "nav": "audit",
        "days": days,
        "windows": WINDOWS,
        "cluster": st.cluster,
        "team": team,
        "scoped": nodes is not None,
        "may_stage": is_admin(request.user),
    }
    if st.cluster is None:
        return render(request, "frontend/audit.html", context)
    _, result = run(st.cluster, days)
    result = within(result, nodes)

    def node(tree: str, name: str) -> dict[str, str]:
        return {"tree": "queue" if tree == QUEUE else "quota group", "name": name, "url": _node_url(tree, name)}

    context["starved"] = [
        {
            **node(s.tree, s.name),
            "resource": s.resource,
            "waiting": human(s.waiting, s.resource),
            "held": human(s.held, s.resource),
            "entitled": human(s.entitled, s.resource),
            "borrowers": [
                {"name": n, "url": _node_url(s.tree, n), "amount": human(v, s.resource)} for n, v in s.borrowers
            ],
        }
        for s in result.starved
    ]
    context["lending"] = [
        {
            **node(x.tree, x.name),
            "resource": x.resource,
            "lent": human(x.lent, x.resource),
            "lendable": human(x.lendable, x.resource),
        }
        for x in result.lending
    ]
    context["idle"] = [
        {
            **node(i.tree, i.name),
            "kind": "queue" if i.tree == QUEUE else "quota",
            "field": "guarantee" if i.tree == QUEUE else "min",
            "resource_name": i.resource,
            "resource": i.resource,
            "guaranteed": human(i.guaranteed, i.resource),
            "average": human(i.average, i.resource),
            "peak": human(i.peak, i.resource),
            "freeable": human(i.freeable, i.resource),
            "to": i.peak,
            "to_text": human(i.peak, i.resource),
            "covered": duration(i.covered),
        }
        for i in result.idle
    ]
    context["usage"] = [
        {
            **node(u.tree, u.name),
            "resource": u.resource,
            "average": human(u.average, u.resource),
            "entitled": human(u.entitled, u.resource),
            "ratio": _ratio(u.ratio),
            "over": u.ratio is not None and u.ratio > 1.0,
            "covered": duration(u.covered),
        }
        for u in result.usage
    ]
    context["waits"] = [{**node(w.tree, w.name), **_wait_cells(w)} for w in result.waits]
    context["submitters"] = [
        {"name": w.name, "gpu_hours": f"{w.gpu_hours:,.1f}", **_wait_cells(w)} for w in result.submitters
    ]
    context["trend_period"] = "hour" if days <= 2 else "day"
    step = TREND_HOUR if days <= 2 else TREND_DAY
    end = datetime.now(UTC)
    first = (end.timestamp() - days * 86400) // step * step  # the period the window opens in
    window = (datetime.fromtimestamp(first, UTC).isoformat(), end.isoformat())
    figs = {"waits_trend": figures.waits_trend_figure(_trend_series(result), step, window)}
    show_all = request.GET.get("all") == "1"
    for key in ("starved", "lending", "idle", "usage", "waits", "submitters"):
        context[f"{key}_count"] = len(context[key])
        if not show_all:
            context[key] = context[key][:ROWS]
    context["show_all"] = show_all
    return render_page(request, Page("frontend/audit.html", context, figs, {}, live=False))


def _wait_cells(w: NodeWaits) -> dict[str, Any]:
    """A row of waits (a tree node's or a submitter's) in words."""
    return {
        "started": w.started,
        "p50": duration_or(w.p50, "—"),
        "p95": duration_or(w.p95, "—"),
        "longest": duration_or(w.longest, "—"),
        "waiting": w.waiting,
        "finished": w.finished,
        "preempted": w.preempted,
        "recycled": w.recycled,
    }


TREND_LINES = 6  # nodes drawn on the waits' trend: the first of the table's


def _trend_series(result: Audit) -> list[dict[str, Any]]:
    """The waits' trend of the first ``TREND_LINES`` rows of the waits table: of the queues when some have a row
    (the quota groups of the demo's organisation mirror them), else of the quota groups."""
    tree = QUEUE if any(w.tree == QUEUE for w in result.waits) else QUOTA
    rows = [w for w in result.waits if w.tree == tree][:TREND_LINES]
    return [
        {
            "name": w.name,
            "points": [
                (datetime.fromtimestamp(p.time, UTC).isoformat(), p.p95, p.started, p.waiting)
                for p in result.trend.get((w.tree, w.name), ())
            ],
        }
        for w in rows
    ]


@admin_required
@require_POST
def stage_suggestion(request: HttpRequest) -> HttpResponse:
    """Stage the audit's suggestion for an idle guarantee (lower it to the peak use of the window), then open the
    what-if page with it."""
    kind, name, resource = request.POST.get("kind"), request.POST.get("name", ""), request.POST.get("resource", "")
    try:
        amount = int(request.POST.get("to", ""))
    except ValueError:
        raise Http404(SUGGESTION_GONE) from None
    if kind == "queue":
        instance: Any = Queue.objects.filter(name=name).first()
        field = "guarantee"
    elif kind == "quota":
        instance = QuotaGroup.objects.filter(name=name).first()
        field = "min"
    else:
        raise Http404(SUGGESTION_GONE)
    current = getattr(instance, field, None) if instance is not None else None
    if instance is None or not current or resource not in current or amount < 0:
        raise Http404(SUGGESTION_GONE)
    lowered = ResourceList({**current, resource: amount})
    staging.add(request, staging.node_entry(kind, instance, {field: lowered}))
    messages.info(request, f"Staged: {field} of {name} lowered to its peak use. Check the what-if, then apply.")
    return redirect("frontend:whatif")
