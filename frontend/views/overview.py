"""The start page and the overview: cluster capacity per resource, session health, top borrowers and lenders,
jobs waiting and why."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from engine.vocabulary import WAITING_PHASES, PodGroupPhase
from frontend import figures
from frontend.presenters import jobs, trees, units
from frontend.presenters import overview as overview_rows
from frontend.presenters.links import node_urls
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from frontend.views.team import team, team_detail, teams_of
from quotas.access import is_admin


@viewer_required
def home(request: HttpRequest) -> HttpResponse:
    """The start page: the overview for admins; for a team member their team's page (or the list of their teams
    when they are in several), served right here so that ``/`` is where each user starts."""
    if is_admin(request.user):
        return overview(request)
    teams = teams_of(request)
    if len(teams) == 1:
        return team_detail(request, teams[0].name)
    return team(request)


@viewer_required
def overview(request: HttpRequest) -> HttpResponse:
    """Cluster capacity per resource, session health, top borrowers and lenders, jobs waiting and why."""
    st = state(request)
    qnames, gnames = visible_names(request, "queue"), visible_names(request, "quota")
    qtree, gtree = st.tree("queue", qnames), st.tree("quota", gnames)
    resources = units.resource_order(st.values.total) if st.values is not None else []
    allocated, requested = trees.cluster_usage(st.snapshot, st.values) if st.snapshot is not None else ({}, {})
    total = dict(st.values.total) if st.values is not None else {}
    health = jobs.session_health(st.cluster)
    waiting, n_waiting = jobs.podgroups(
        st.cluster, queues=None if qnames is None else sorted(qnames), waiting_only=True, limit=25
    )
    phases = jobs.phase_counts(st.cluster, None if qnames is None else sorted(qnames))
    nodes_total = st.snapshot.nodes if st.snapshot is not None else {}
    top_q, top_g = overview_rows.top_balances(qtree, resources), overview_rows.top_balances(gtree, resources)
    tops = (("queue", top_q, node_urls(qtree)), ("quota group", top_g, node_urls(gtree)))
    context = {
        "nav": "overview",
        "cluster": st.cluster,
        "policy": st.values.queue_policy if st.values is not None else "",
        "ready_nodes": sum(1 for n in nodes_total.values() if n.schedulable) if nodes_total else 0,
        "nodes": len(nodes_total),
        "phases": phases,
        "running_jobs": phases.get(PodGroupPhase.RUNNING, 0),
        "pods": jobs.pod_counts(st.cluster, queues=None if qnames is None else sorted(qnames)),
        "waiting_jobs": sum(phases.get(p, 0) for p in WAITING_PHASES),
        "capacity_rows": overview_rows.capacity_rows(resources, total, allocated, requested),
        "health": health,
        "waiting": waiting,
        "n_waiting": n_waiting,
        "top_rows": overview_rows.top_rows(tops, resources),
        "scope_note": "" if qnames is None else "Limited to your teams' subtrees.",
    }
    figs = {
        "capacity": figures.capacity_figure(total, allocated, requested, resources),
        "sessions": figures.sessions_figure(health["recent"]),
        "top_queues": figures.borrow_lend_figure(
            [(n.name, n.borrowed, n.lent) for n in top_q], resources, title="Queues"
        ),
        "top_quotas": figures.borrow_lend_figure(
            [(n.name, n.borrowed, n.lent) for n in top_g], resources, title="Quota groups"
        ),
    }
    fragments = {
        "frag-kpis": "frontend/partials/overview_kpis.html",
        "frag-capacity": "frontend/partials/capacity_table.html",
        "frag-health": "frontend/partials/session_health.html",
        "frag-top": "frontend/partials/top_table.html",
        "frag-waiting": "frontend/partials/jobs_table.html",
    }
    context["jobs"] = waiting
    context["jobs_total"] = n_waiting
    context["jobs_caption"] = "Jobs waiting, and why"
    context["jobs_empty"] = "No job is waiting."
    return render_page(request, Page("frontend/overview.html", context, figs, fragments))
