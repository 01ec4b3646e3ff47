"""The jobs list: search, filters, sorting and pages over every job the user may read."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from frontend.presenters import job_list
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from scheduling.models import SchedulingSession

FILTER_KEYS = ("q", "namespace", "queue", "quota_group", "phase", "reason", "submitted_after", "sort")


@viewer_required
def jobs(request: HttpRequest) -> HttpResponse:
    st = state(request)
    params = {key: request.GET.get(key, "").strip() for key in FILTER_KEYS}
    if request.GET.get("cluster"):
        params["cluster"] = request.GET["cluster"]
    sort = params["sort"] if params["sort"] in job_list.SORTS else job_list.DEFAULT_SORT
    context: dict[str, object] = {"nav": "jobs", "cluster": st.cluster, "params": params, "sort": sort}
    if st.cluster is None:
        context.update({"rows": [], "total": 0, "all_total": 0, "choices": {}, "errors": {}})
        return render_page(request, Page("frontend/jobs.html", context, live=False))
    queues, groups = visible_names(request, "queue"), visible_names(request, "quota")
    qtree, gtree = st.tree("queue"), st.tree("quota")
    base = job_list.visible_jobs(st.cluster, queues, groups)
    data = {k: v for k, v in params.items() if k not in ("sort", "cluster") and v}
    filters = job_list.JobFilterSet(data, queryset=base, subtrees={"queue": qtree, "quota": gtree})
    qs = filters.qs if filters.is_valid() else base.none()
    page = job_list.paginate(qs, sort, request.GET.get("page"))
    ran = SchedulingSession.objects.filter(cluster=st.cluster).exists()
    queue_names = [n for n in qtree.order if queues is None or n in queues]
    group_names = [n for n in gtree.order if groups is None or n in groups]
    context.update(
        {
            "rows": job_list.rows(page, ran),
            "page": page,
            "total": page.paginator.count,
            "total_text": f"{page.paginator.count:,} job{'' if page.paginator.count == 1 else 's'}",
            "filtered": bool(data),
            "choices": job_list.choices(base, queue_names, group_names, params),
            "errors": {k: " ".join(v) for k, v in filters.errors.items()},
            "sort_links": {key: job_list.query_string(params, sort=key, page=None) for key in job_list.SORTS},
            "prev_link": job_list.query_string(params, page=page.previous_page_number()) if page.has_previous() else "",
            "next_link": job_list.query_string(params, page=page.next_page_number()) if page.has_next() else "",
            "clear_link": job_list.query_string({"cluster": params.get("cluster", "")}),
        }
    )
    return render_page(request, Page("frontend/jobs.html", context, live=False))
