"""The jobs list: search, filters, sorting and pages over every job the user may read."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from frontend.presenters import job_list
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from scheduling.models import SchedulingSession

INLINE_ERRORS = ("namespace", "queue", "quota_group", "submitted_after")  # shown under their controls
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
    names = {
        "namespace": job_list.namespace_names(base),
        "queue": [n for n in qtree.order if queues is None or n in queues],
        "quota_group": [n for n in gtree.order if groups is None or n in groups],
    }
    data = {k: v for k, v in params.items() if k not in ("sort", "cluster") and v}
    filters = job_list.JobFilterSet(data, queryset=base, subtrees={"queue": qtree, "quota": gtree})
    unknown = job_list.unknown_names(params, names)
    qs = filters.qs if filters.is_valid() and not unknown else base.none()
    errors = {**{k: " ".join(v) for k, v in filters.errors.items()}, **unknown}
    page = job_list.paginate(qs, sort, request.GET.get("page"))
    ran = SchedulingSession.objects.filter(cluster=st.cluster).exists()
    context.update(
        {
            "rows": job_list.rows(page, ran),
            "page": page,
            "total": page.paginator.count,
            "total_text": f"{page.paginator.count:,} job{'' if page.paginator.count == 1 else 's'}",
            "filtered": bool(data),
            "choices": job_list.choices(base, names, params),
            "errors": errors,
            "other_errors": [text for field, text in errors.items() if field not in INLINE_ERRORS],
            "sort_links": {key: job_list.query_string(params, sort=key, page=None) for key in job_list.SORTS},
            "prev_link": job_list.query_string(params, page=page.previous_page_number()) if page.has_previous() else "",
            "next_link": job_list.query_string(params, page=page.next_page_number()) if page.has_next() else "",
            "clear_link": job_list.query_string({"cluster": params.get("cluster", "")}),
        }
    )
    return render_page(request, Page("frontend/jobs.html", context, live=False))


@viewer_required
def job_filter_names(request: HttpRequest) -> JsonResponse:
    """``{"names": [...]}``: the names a filter of the jobs list suggests for what was typed (``field`` is
    ``namespace``, ``queue`` or ``quota_group``, ``q`` the text), among those the user may read."""
    field, typed = request.GET.get("field", ""), request.GET.get("q", "")
    if field not in job_list.FILTER_LABELS:
        fields = ", ".join(job_list.FILTER_LABELS)
        return JsonResponse({"field": [f"Must be one of: {fields}."]}, status=400)
    st = state(request)
    if st.cluster is None:
        return JsonResponse({"names": []})
    queues, groups = visible_names(request, "queue"), visible_names(request, "quota")
    if field == "namespace":
        names = job_list.namespace_names(job_list.visible_jobs(st.cluster, queues, groups))
    else:
        kind, readable = ("queue", queues) if field == "queue" else ("quota", groups)
        names = [n for n in st.tree(kind).order if readable is None or n in readable]
    return JsonResponse({"names": job_list.suggest(names, typed)})
