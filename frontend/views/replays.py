"""Replays in the dashboard (``planning.replay``): "replay the last days with these changes" from the what-if page (the
staged changes) and from a change request (its changes), a page per run (progress bar polling ``status/``, Cancel,
and once done the charts and the table per team) and the list of past runs."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect

from changerequests import services as change_requests
from engine.changes import describe
from engine.wording import plural
from frontend import figures, staging
from frontend.presenters import replay as present
from frontend.views.common import Page, current_cluster, render_page, viewer_required
from frontend.views.requests import amended_changes
from planning import replay
from planning.models import ReplayRun

POST_ONLY = "This address starts or cancels a replay when a page's button sends it; open the Replays page to use it."


def _window(request: HttpRequest) -> str:
    return (request.POST.get("window") or "7d").strip()


def _refused(request: HttpRequest, exc: replay.Refused) -> None:
    for field, sentences in exc.errors.items():
        for sentence in sentences:
            messages.error(request, f"No replay was started: {field}: {sentence}")


@viewer_required
def start(request: HttpRequest) -> HttpResponse:
    """Replay the last days with the staged changes (POST from the what-if page)."""
    if request.method != "POST":
        raise Http404(POST_ONLY)
    entries = staging.staged(request)
    if not entries:
        messages.info(request, "Nothing is staged: stage a change first, then replay the last days with it.")
        return redirect("frontend:whatif")
    cluster = current_cluster(request)
    summary = "; ".join(str(e.get("summary", "")) for e in entries)
    try:
        run = replay.start(
            request.user,
            staging.changes(entries),
            window=_window(request),
            cluster=cluster.name if cluster is not None else None,
            summary=summary,
        )
    except replay.Refused as exc:
        _refused(request, exc)
        return redirect("frontend:whatif")
    return redirect("frontend:replay", run.pk)


@viewer_required
def start_from_request(request: HttpRequest, pk: int) -> HttpResponse:
    """Replay the last days with a change request's changes (POST from its page); the run is linked from its steps."""
    if request.method != "POST":
        raise Http404(POST_ONLY)
    obj = change_requests.readable_by(request.user).filter(pk=pk).first()
    if obj is None:
        raise Http404(f"There is no change request #{pk} that you filed or may review.")
    changes, summary = obj.changes, f"change request #{obj.pk}: {obj.summary}"
    if request.POST.get("amend"):  # the approver's amended list, from the box of the request's page, before approving
        amended = amended_changes(request.POST.get("changes") or "")
        if isinstance(amended, str):
            messages.error(request, f"No replay was started: changes: {amended}")
            return redirect("frontend:change-request", obj.pk)
        changes, summary = amended, f"change request #{obj.pk}, amended: {describe(amended)}"
    try:
        run = replay.start(
            request.user,
            changes,
            window=_window(request),
            cluster=obj.cluster,
            change_request=obj,
            summary=summary,
        )
    except replay.Refused as exc:
        _refused(request, exc)
        return redirect("frontend:change-request", obj.pk)
    return redirect("frontend:replay", run.pk)


def _run(request: HttpRequest, pk: int) -> ReplayRun:
    found = replay.runs_for(request.user).filter(pk=pk).first()
    if found is None:
        raise Http404(f"There is no replay #{pk} that you started (or it is older than the kept ones).")
    return found


def status_of(run: ReplayRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "state": run.state,
        "progress": run.progress,
        "percent": round(100 * run.progress),
        "phase": run.phase,
        "error": run.error,
    }


@viewer_required
def run_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One run: its progress while it runs, its charts and table once done."""
    run = _run(request, pk)
    context: dict[str, Any] = {"nav": "replays", "run": run, "status": status_of(run), "windows": replay.WINDOW_CHOICES}
    figs: dict[str, Any] = {}
    result = replay.visible_result(run, request.user)
    if result is not None:
        rows = present.team_rows(result)
        context.update(
            {
                "rows": rows,
                "cluster_rows": present.cluster_rows(result),
                "trace": {**result.get("trace", {}), "jobs_text": f"{result.get('trace', {}).get('jobs', 0):,}"},
                "warnings": [*result["baseline"].get("warnings", []), *result.get("proposal", {}).get("warnings", [])],
                "changed_teams": sum(1 for r in rows if r["changed"]),
            }
        )
        figs["replay_waits"] = figures.replay_waits_figure(present.wait_rows(result))
        figs["replay_utilisation"] = figures.replay_utilisation_figure(present.utilisation(result))
        figs["replay_borrow"] = figures.replay_borrow_figure(present.borrow_rows(result))
    return render_page(request, Page("frontend/replay.html", context, figs, {}, live=False))


@viewer_required
def run_status(request: HttpRequest, pk: int) -> JsonResponse:
    """The run's state and progress (the page's progress bar polls it)."""
    return JsonResponse(status_of(_run(request, pk)))


@viewer_required
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a queued or running run (POST)."""
    if request.method != "POST":
        raise Http404(POST_ONLY)
    run = _run(request, pk)
    if replay.cancel(run, request.user):
        messages.info(request, f"Replay #{run.pk} was cancelled.")
    else:
        messages.info(request, f"Replay #{run.pk} had already ended ({run.state}).")
    return redirect("frontend:replay", run.pk)


@viewer_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The past runs (kept for FAIRWAY_REPLAY_RETENTION_DAYS), newest first."""
    runs = list(replay.runs_for(request.user)[:200])
    context = {"nav": "replays", "runs": runs, "count": plural(len(runs), "replay")}
    return render_page(request, Page("frontend/replays.html", context, {}, {}, live=False))
