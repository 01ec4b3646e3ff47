"""What-if before apply: the staged edits, every node's values before and after (``planning.whatif``), their impact
on jobs, then apply them all in one transaction through the services, or discard them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from engine.changes import ProposalError, node_values
from engine.wording import plural
from frontend import figures, staging
from frontend.presenters import impact, units
from frontend.presenters import whatif as whatif_rows
from frontend.views.common import Page, admin_required, owned_sentence, render_page, state, tree_editor, trees_owner
from planning import whatif as what_if

POST_ONLY = "This address acts when the What-if page's {button} button sends it; open the What-if page to use it."


def fingerprint(entries: Sequence[Mapping[str, Any]]) -> str:
    """A short hash of the staged list, so that Apply applies exactly what the page showed."""
    return hashlib.sha256(json.dumps(list(entries), sort_keys=True, default=str).encode()).hexdigest()[:16]


@admin_required
def whatif(request: HttpRequest) -> HttpResponse:
    """The staged edits, before/after per node, the impact on jobs, and Apply / Discard."""
    entries = staging.staged(request)
    st = state(request)
    owner = trees_owner(request)
    context: dict[str, Any] = {
        "nav": "whatif",
        "owned": owned_sentence(owner) if owner is not None else "",  # then nothing staged can be applied
        "entries": [{**e, "index": i} for i, e in enumerate(entries)],
        "fingerprint": fingerprint(entries),
        "cluster": st.cluster,
        "errors": [],
        "rows": [],
        "impact": None,
    }
    figs: dict[str, Any] = {}
    if entries and st.snapshot is not None:
        try:
            outcome = what_if.evaluate(st.snapshot, st.values, staging.changes(entries))
        except ProposalError as exc:
            context["errors"] = whatif_rows.errors(exc, entries)
        else:
            after_snap, after_values = outcome.after, outcome.values_after
            diff = outcome.comparison()["diff"]
            before, after = node_values(st.values), node_values(after_values)
            resources = units.resource_order(set(st.values.total) | set(after_values.total)) or ["cpu"]
            resource = request.GET.get("resource") if request.GET.get("resource") in resources else resources[0]
            context.update(
                {
                    "rows": whatif_rows.diff_rows(before, after, diff),
                    "changed_nodes": sum(len(v) for v in diff.values()),
                    "resource": resource,
                    "resources": resources,
                    "impact": impact.impact(st.snapshot, after_snap, st.cluster),
                }
            )
            figs["whatif_queues"] = figures.whatif_figure(
                whatif_rows.entitled_rows(before, after, diff, "queues", resource), resource, "deserved"
            )
            figs["whatif_quotas"] = figures.whatif_figure(
                whatif_rows.entitled_rows(before, after, diff, "quota_groups", resource), resource, "runtime"
            )
    page = Page("frontend/whatif.html", context, figs, {}, live=False)
    return render_page(request, page)


@tree_editor
def apply(request: HttpRequest) -> HttpResponse:
    """Apply every staged edit in one transaction (POST); all or nothing."""
    if request.method != "POST":
        raise Http404(POST_ONLY.format(button="Apply"))
    entries = staging.staged(request)
    if not entries:
        messages.info(request, "Nothing is staged.")
        return redirect("frontend:whatif")
    if request.POST.get("fingerprint") != fingerprint(entries):
        messages.error(request, "The staged list changed since this page was shown (another tab?); review it again.")
        return redirect("frontend:whatif")
    st = state(request)
    if st.snapshot is None:
        messages.error(request, "Nothing was applied: there is no cluster to evaluate the staged changes on.")
        return redirect("frontend:whatif")
    try:
        done = staging.apply(entries, st.snapshot)
    except staging.Conflict as exc:
        messages.error(request, f"Nothing was applied: {exc}. Remove or re-stage that change.")
        return redirect("frontend:whatif")
    except staging.StagedRuleViolation as exc:
        messages.error(request, f"Nothing was applied: {exc}")
        return redirect("frontend:whatif")
    staging.save(request, [])
    messages.success(
        request, f"Applied {plural(done.count, 'change')} in one transaction: " + "; ".join(done.summaries)
    )
    return redirect("frontend:whatif")


@admin_required
def discard(request: HttpRequest) -> HttpResponse:
    """Forget every staged edit (POST)."""
    if request.method != "POST":
        raise Http404(POST_ONLY.format(button="Discard"))
    n = len(staging.staged(request))
    staging.save(request, [])
    messages.info(request, f"Discarded {plural(n, 'staged change')}.")
    return redirect("frontend:whatif")


@admin_required
def remove(request: HttpRequest, index: int) -> HttpResponse:
    """Forget one staged edit (POST)."""
    if request.method != "POST":
        raise Http404(POST_ONLY.format(button="Remove"))
    entries = staging.staged(request)
    if 0 <= index < len(entries):
        gone = entries.pop(index)
        staging.save(request, entries)
        messages.info(request, f"Removed: {gone['summary']}.")
    return redirect("frontend:whatif")
