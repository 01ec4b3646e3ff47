"""The job page: one podgroup, why it waits, who took its pods' room, the nodes that govern it, its place in its
queue."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from frontend.presenters import evictions as eviction_rows
from frontend.presenters import job_page, recycling
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from scheduling import evictions
from scheduling.models import Cluster, Pod, SchedulingSession


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
        return render(
            request,
            "frontend/forbidden.html",
            {"why": f"The job {namespace}/{name} belongs to another team. You can open your own team's jobs."},
            status=403,
        )
    resources = job_page.resources_of_job(podgroup, pods)
    visible = {"queue": visible_names(request, "queue"), "quota": visible_names(request, "quota")}
    ran = SchedulingSession.objects.filter(cluster=cluster).exists()
    context = {
        "nav": "jobs",
        "cluster": cluster,
        "job": job_page.header(podgroup, pods, ran),
        "pods": job_page.pod_rows(pods),
        "reasons": job_page.reason_rows(podgroup),
        "evictions": job_page.eviction_rows(cluster, podgroup, pods, visible["queue"]),
        "path": job_page.governing_path(podgroup, pods, st.tree("queue"), st.tree("quota"), visible, resources),
        "place": job_page.place_in_queue(cluster, st.snapshot, st.values, podgroup, visible["queue"]),
        # pods of this job recycling will take unless usage falls (scheduling.recycle_outlook)
        "recycling": recycling.for_job(
            recycling.warnings_of(st, timezone.now()), f"{namespace}/{name}", visible["quota"]
        ),
    }
    return render_page(request, Page("frontend/job.html", context, live=False))


def removed_job(request: HttpRequest, cluster: Cluster | None, namespace: str, name: str) -> HttpResponse:
    """The page of a job that is gone (garbage-collected after it finished, or deleted): when and why it was
    removed and its evictions, for as long as they are kept (``scheduling.evictions``); 404 when nothing is
    recorded, 403 for another team's job (as for a job that is still there)."""
    record = evictions.removed_job(cluster, namespace, name)
    if record is None:
        raise Http404("no such job")
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
