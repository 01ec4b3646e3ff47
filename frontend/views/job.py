"""The job page: one podgroup, why it waits, who took its pods' room, the nodes that govern it, its place in its
queue."""

from __future__ import annotations

from typing import Any

import yaml
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from engine.wording import duration
from frontend.presenters import evictions as eviction_rows
from frontend.presenters import job_page, recycling
from frontend.presenters.links import job_url
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from frontend.views.team import teams_of
from planning import estimates, why
from scheduling import evictions, job_actions
from scheduling.choices import PodGroupPhase
from scheduling.models import Cluster, Pod, PodGroup, RemovedJob, SchedulingSession


def may_read(request: HttpRequest, queue: str, quota_groups: set[str]) -> bool:
    """Admins read every job; a team member the jobs of its queues, or whose pods count against its quota groups
    (as the team page lists them)."""
    queues = visible_names(request, "queue")
    if queues is None or queue in queues:
        return True
    groups = visible_names(request, "quota")
    return groups is None or bool(quota_groups & groups)


@viewer_required
def job(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    st = state(request)
    cluster: Cluster | None = st.cluster
    podgroup = job_page.find(cluster, namespace, name)
    if podgroup is None or cluster is None:
        return removed_job(request, cluster, namespace, name)
    pods = list(
        Pod.objects.filter(podgroup=podgroup).select_related("namespace", "node", "quota_group").order_by("name")
    )
    groups = {p.quota_group.name for p in pods if p.quota_group is not None}
    if not groups and podgroup.namespace.quota_group is not None:
        groups = {podgroup.namespace.quota_group.name}
    if not may_read(request, podgroup.queue.name, groups):
        return _not_yours(request, namespace, name)
    if request.GET.get("estimate") == "1":  # the page's own poll while its estimate is being computed (estimate.js)
        return _estimate_answer(podgroup)
    resources = job_page.resources_of_job(podgroup, pods)
    visible = {"queue": visible_names(request, "queue"), "quota": visible_names(request, "quota")}
    ran = SchedulingSession.objects.filter(cluster=cluster).exists()
    context = {
        "nav": "jobs",
        "cluster": cluster,
        "actions": _actions(request, podgroup),
        "job": job_page.header(podgroup, pods, ran),
        "pods": job_page.pod_rows(pods),
        "reasons": job_page.reason_rows(podgroup),
        "evictions": job_page.eviction_rows(cluster, podgroup, pods, visible["queue"]),
        "path": job_page.governing_path(
            why.governing_path(podgroup, request.user), podgroup, st.tree("queue"), st.tree("quota"), resources
        ),
        "place": job_page.place_in_queue(cluster, st.snapshot, st.values, podgroup, visible["queue"]),
        # pods of this job recycling will take unless usage falls (scheduling.recycle_outlook)
        "recycling": recycling.for_job(
            recycling.warnings_of(st, timezone.now()), f"{namespace}/{name}", visible["quota"]
        ),
        # a waiting job: when it will likely start (planning.estimates, as the why endpoint and the CLI say it)
        "start_estimate": estimates.estimate_of(podgroup, timezone.now()),
    }
    return render_page(request, Page("frontend/job.html", context, live=False))


def _estimate_answer(podgroup: PodGroup) -> JsonResponse:
    """The start estimate alone, as the page shows it (``state`` and its paragraph's ``html``; ``state`` null and no
    html once the job no longer waits): what ``estimate.js`` puts in place of the "estimating" line."""
    found = estimates.estimate_of(podgroup, timezone.now())
    html = render_to_string("frontend/partials/start_estimate.html", {"start_estimate": found}) if found else ""
    return JsonResponse({"state": found["state"] if found else None, "html": html})


def _actions(request: HttpRequest, podgroup: PodGroup) -> dict[str, Any] | None:
    """The job actions the user may take on the page (``scheduling.job_actions``), each shown only when it applies;
    None for a user who may not act on the job (the buttons are not shown at all)."""
    if not job_actions.may_act(request.user, podgroup):
        return None
    deleting = podgroup.deletion_requested_at is not None
    done = podgroup.phase == PodGroupPhase.COMPLETED or deleting
    suspended = podgroup.suspended_at is not None
    return {
        "suspend": not done and not suspended,
        "resume": not done and suspended,
        "requeue": not done and not suspended,
        "delete": not deleting,
        "suspended_by": podgroup.suspended_by if suspended else "",
        "suspended_at": podgroup.suspended_at,
        "deleting": deleting,
    }


def _own_job(request: HttpRequest, namespace: str, name: str) -> PodGroup | HttpResponse:
    """The job of the cluster shown, if the user may act on it; else the page to answer with (404, or 403 with a
    sentence)."""
    cluster = state(request).cluster
    podgroup = job_page.find(cluster, namespace, name)
    if podgroup is None:
        return missing_job(request, cluster, namespace, name)
    if not job_actions.may_act(request.user, podgroup):
        why = job_actions.refusal(request.user, podgroup, "act on")
        return render(request, "frontend/forbidden.html", {"why": why + "."}, status=403)
    return podgroup


@viewer_required
@require_POST
def job_action(request: HttpRequest, namespace: str, name: str, action: str) -> HttpResponse:
    """A job action from the page's buttons (a POST form with its CSRF token; delete asks for a confirmation in
    the page first): done, or refused with the sentence, as a message on the job's page (the jobs list after a
    delete)."""
    if action not in job_actions.ACTIONS:
        raise Http404(f"no job action {action}")
    found = _own_job(request, namespace, name)
    if not isinstance(found, PodGroup):
        return found
    try:
        done = job_actions.perform(action, found, request.user, timezone.now())
    except job_actions.JobActionRefused as exc:
        messages.error(request, f"{exc}.")
        return redirect(job_url(namespace, name))
    messages.success(request, f"Job {namespace}/{name}: {done.message}.")
    if action == "delete" and not done.pending:
        return redirect(reverse("frontend:jobs"))
    return redirect(job_url(namespace, name))


@viewer_required
def job_yaml(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """The job as manifests (its PodGroup and pods, ``scheduling.job_actions.manifests``), as YAML text; for
    anyone who may read the job."""
    cluster = state(request).cluster
    podgroup = job_page.find(cluster, namespace, name)
    if podgroup is None:
        return missing_job(request, cluster, namespace, name)
    groups = set(Pod.objects.filter(podgroup=podgroup, quota_group__isnull=False).values_list("quota_group__name",
                                                                                              flat=True))  # fmt: skip
    if podgroup.namespace.quota_group is not None:
        groups.add(podgroup.namespace.quota_group.name)
    if not may_read(request, podgroup.queue.name, groups):
        return _not_yours(request, namespace, name)
    text = yaml.safe_dump_all(job_actions.manifests(podgroup), sort_keys=False, default_flow_style=False)
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{namespace}-{name}.yaml"'
    return response


def removed_job(request: HttpRequest, cluster: Cluster | None, namespace: str, name: str) -> HttpResponse:
    """The page of a job that is gone (garbage-collected after it finished, or deleted): when and why it was
    removed and its evictions, for as long as they are kept (``scheduling.evictions``); 404 when nothing is
    recorded, 403 for another team's job (as for a job that is still there)."""
    record = evictions.removed_job(cluster, namespace, name)
    if record is None:
        return missing_job(request, cluster, namespace, name)
    if not may_read(request, record.queue, set(record.quota_groups)):
        return render(
            request,
            "frontend/forbidden.html",
            {"why": f"The job {namespace}/{name} belonged to another team. You can open your own team's jobs."},
            status=403,
        )
    can_open = eviction_rows.may_open(visible_names(request, "queue"), visible_names(request, "quota"))
    context = {"nav": "jobs", "cluster": cluster, **eviction_rows.removed_job_view(record, can_open)}
    return render_page(request, Page("frontend/job_removed.html", context, live=False))


def missing_job(request: HttpRequest, cluster: Cluster | None, namespace: str, name: str) -> HttpResponse:
    """404 for a job of which nothing is recorded in the cluster shown: a page that says which cluster was looked
    in, that the job may have finished and been removed longer ago than removals are kept, and where to look next
    (the same job in another cluster the user may read, its namespace's jobs, the user's teams and their
    evictions)."""
    elsewhere = sorted(
        {
            pg.cluster.name
            for pg in PodGroup.objects.filter(namespace__name=namespace, name=name)
            .exclude(cluster=cluster)
            .select_related("cluster", "queue")
            if may_read(request, pg.queue.name, set())
        }
        | {
            r.cluster.name
            for r in RemovedJob.objects.filter(namespace=namespace, name=name)
            .exclude(cluster=cluster)
            .select_related("cluster")
            if may_read(request, r.queue, set(r.quota_groups))
        }
    )
    context = {
        "nav": "jobs",
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "kept": duration(evictions.retention().total_seconds()),
        "elsewhere": elsewhere,
        "teams": [g.name for g in teams_of(request)],
    }
    return render(request, "frontend/job_missing.html", context, status=404)


def _not_yours(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """The 403 page of a job another team owns."""
    return render(
        request,
        "frontend/forbidden.html",
        {"why": f"The job {namespace}/{name} belongs to another team. You can open your own team's jobs."},
        status=403,
    )
