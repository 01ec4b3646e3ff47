"""The team pages: a member's team (or the choice of their teams) with its subtrees' runtime quota, loans and
jobs."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from engine.usage import node_key
from frontend.presenters import jobs, recycling
from frontend.presenters.department import department_rows
from frontend.presenters.evictions import may_open, team_evictions
from frontend.presenters.past_usage import half_life_of, sentence
from frontend.presenters.team import owned_nodes, team_cards, team_view, waiting_counts
from frontend.presenters.team_waits import team_waits
from frontend.views.common import Page, render_page, state, viewer_required, visible_names
from planning.department import department
from quotas.access import is_admin, may_read_team, team_scope


def teams_of(request: HttpRequest) -> list[Group]:
    groups = Group.objects.filter(user=request.user).order_by("name")
    return [g for g in groups if g.queues.exists() or g.quota_groups.exists()]


@viewer_required
def team(request: HttpRequest) -> HttpResponse:
    """A team member lands here: their team's page (or a choice when they are in several teams)."""
    teams = teams_of(request)
    if len(teams) == 1:
        return redirect("frontend:team-detail", teams[0].name)
    if not teams and is_admin(request.user):
        teams = list(
            Group.objects.filter(Q(queues__isnull=False) | Q(quota_groups__isnull=False)).distinct().order_by("name")
        )
    st = state(request)
    kinds = {"queue": st.tree("queue"), "quota": st.tree("quota")}
    cards = team_cards(teams, owned_nodes(teams), kinds, waiting_counts(st.cluster))
    return render(request, "frontend/team_index.html", {"nav": "team", "teams": teams, "cards": cards})


@viewer_required
def team_detail(request: HttpRequest, group: str) -> HttpResponse:
    """A team's subtrees: its runtime quota now, what it borrows and lends and from whom, its jobs and why
    each waits."""
    team_group = Group.objects.filter(name=group).first()
    if team_group is None or not may_read_team(request.user, team_group):
        raise Http404(f"There is no team named {group} whose page you may read.")
    st = state(request)
    qtree, gtree = st.tree("queue"), st.tree("quota")
    shown = team_view(
        (
            ("quota", gtree, sorted(team_group.quota_groups.values_list("name", flat=True))),
            ("queue", qtree, sorted(team_group.queues.values_list("name", flat=True))),
        ),
        lambda kind: visible_names(request, kind),
    )
    # fairness over time (only when the policy turns it on): what the team's past usage does to its weight
    member = request.user.groups.filter(pk=team_group.pk).exists()  # type: ignore[union-attr]
    for s in shown.sections:
        share = st.values.past.get(node_key(s["kind"], s["name"])) if st.values is not None else None
        subject = "Your team" if member else f"Team {team_group.name}"
        s["past_usage"] = sentence(share, subject, half_life_of(st.snapshot, s["kind"])) if share else ""
        s["past_usage_ratio"] = share.to_dict()["past_usage_ratio"] if share else None
    # a department lead's team: the teams below it side by side (planning.department)
    below = department(team_group, st.cluster, st.snapshot, st.values) if st.cluster is not None else []
    # the jobs of the team's queues, or of its quota groups when it has no queue; its evictions are theirs
    scope = team_scope(team_group)
    jobs_of = (scope.kind, sorted(scope.names))
    can_open = may_open(visible_names(request, "queue"), visible_names(request, "quota"))
    now = timezone.now()
    context = {
        "nav": "team",
        "team": team_group,
        "sections": shown.sections,
        "department": department_rows(below, st.snapshot),
        "cluster": st.cluster,
        **jobs.of_subtree(st.cluster, *jobs_of),
        "jobs_caption": "Your jobs, and why each waits",
        # pods recycling will take unless usage falls (scheduling.recycle_outlook, as `fairway job why` says it)
        "recycling": recycling.for_team(
            recycling.warnings_of(st, now),
            gtree,
            [s["name"] for s in shown.sections if s["kind"] == "quota"],
            scope,
            visible_names(request, "quota"),
        ),
        **team_evictions(st.cluster, team_group.name, scope, can_open),
    }
    if request.GET.get("live") != "1":  # the last days' waits: drawn with the page, not with each live refresh
        context.update(team_waits(st.cluster, st.snapshot, [(s["kind"], s["name"]) for s in shown.sections], now))
    return render_page(
        request,
        Page(
            "frontend/team.html",
            context,
            shown.figures,
            {
                "frag-team": "frontend/partials/team_sections.html",
                "frag-jobs": "frontend/partials/jobs_table.html",
                "frag-evictions": "frontend/partials/team_evictions.html",
                **({"frag-department": "frontend/partials/team_department.html"} if below else {}),
            },
        ),
    )
