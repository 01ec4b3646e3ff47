"""The read pages: overview, trees, a tree node, a team's view. Each builds a ``Page`` (context, figures and
live fragments) from the engine's values for the cluster, restricted to what the user may read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from frontend import figures, jobs, trees, units
from frontend.ledger import POOL, Loan
from frontend.views.common import (
    Page,
    State,
    can_see,
    node_url,
    node_urls,
    render_page,
    state,
    viewer_required,
    visible_names,
)
from quotas.access import is_admin
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import QuotaSample

WINDOWS = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
DEFAULT_WINDOW = "1h"
MAX_POINTS = 1500
TABLE_ROWS = 250  # rows of a tree table shown before "show all"
KIND_OF_PATH = {"queues": "queue", "quotas": "quota"}
PATH_OF_KIND = {"queue": "queues", "quota": "quotas"}


def _pick(value: str | None, choices: Sequence[str], default: str) -> str:
    return value if value in choices else default


def _resource(request: HttpRequest, tree: trees.Tree) -> str:
    names = tree.resources or ["cpu"]
    return _pick(request.GET.get("resource"), names, names[0])


def _balance(node: trees.TreeNode, r: str, *, unit: bool = True) -> dict[str, Any]:
    b, lent = node.borrowed.get(r, 0), node.lent.get(r, 0)
    return {
        "borrowed": units.human(b, r, unit=unit) if b else "",
        "lent": units.human(lent, r, unit=unit) if lent else "",
        "css": "borrows" if b > lent else "lends" if lent > b else "",
    }


def _tree_rows(tree: trees.Tree, r: str, urls: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for name in tree.order:
        node = tree.nodes[name]
        cap = node.cap.get(r)
        rows.append(
            {
                "name": name,
                "url": urls[name],
                "depth": node.depth,
                "indent": node.depth * 14,
                "leaf": node.is_leaf,
                "state": node.state,
                "weight": node.weight,
                "cap": units.human(cap, r, unit=False) if cap is not None else "unlimited",
                "floor": units.human(node.floor.get(r, 0), r, unit=False),
                "entitled": units.human(node.entitled.get(r, 0), r, unit=False),
                "used": units.human(node.used.get(r, 0), r, unit=False),
                "request": units.human(node.request.get(r, 0), r, unit=False),
                **_balance(node, r, unit=False),
            }
        )
    return rows


def _top_balances(tree: trees.Tree, resources: Sequence[str], n: int = 8) -> list[trees.TreeNode]:
    total = tree.total

    def weight(node: trees.TreeNode) -> float:
        return sum((node.borrowed.get(r, 0) + node.lent.get(r, 0)) / total[r] for r in resources if total.get(r, 0) > 0)

    ranked = [tree.nodes[nm] for nm in tree.order if tree.nodes[nm].parent is not None]
    ranked = [x for x in ranked if weight(x) > 0]
    ranked.sort(key=lambda x: (-weight(x), x.name))
    return ranked[:n]


def _loan_rows(items: Sequence[Loan], borrowing: bool, kind: str, visible: set[str] | None) -> list[dict[str, Any]]:
    """Loans as rows: the other party (linked when the user may open it), the resource and the amount."""
    rows = []
    order = {r: i for i, r in enumerate(units.resource_order({x.resource for x in items}))}
    for loan in sorted(items, key=lambda x: (order.get(x.resource, 99), -x.amount)):
        if loan.resource in units.HIDDEN_RESOURCES:
            continue
        other = loan.lender if borrowing else loan.borrower
        rows.append(
            {
                "other": other or "unreserved capacity",
                "url": node_url(kind, other) if other != POOL and (visible is None or other in visible) else "",
                "resource": loan.resource,
                "amount": "≈ " + units.human(round(loan.amount), loan.resource),
            }
        )
    return rows


# -- home and overview -------------------------------------------------------------------------------------------


@viewer_required
def home(request: HttpRequest) -> HttpResponse:
    """The start page: the overview for admins; for a team member their team's page (or the list of their teams
    when they are in several), served right here so that ``/`` is where each user starts."""
    if is_admin(request.user):
        return overview(request)
    teams = _teams_of(request)
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
    allocated, requested = trees.cluster_usage(st.snapshot) if st.snapshot is not None else ({}, {})
    total = dict(st.values.total) if st.values is not None else {}
    health = jobs.session_health(st.cluster)
    waiting, n_waiting = jobs.podgroups(
        st.cluster, queues=None if qnames is None else sorted(qnames), waiting_only=True, limit=25
    )
    phases = jobs.phase_counts(st.cluster, None if qnames is None else sorted(qnames))
    nodes_total = st.snapshot.nodes if st.snapshot is not None else {}
    top_q, top_g = _top_balances(qtree, resources), _top_balances(gtree, resources)
    qurls, gurls = node_urls(qtree), node_urls(gtree)
    capacity_rows = [
        {
            "resource": r,
            "total": units.human(total.get(r, 0), r),
            "allocated": units.human(allocated.get(r, 0), r),
            "requested": units.human(requested.get(r, 0), r),
            "pct": round(100.0 * allocated.get(r, 0) / total[r], 1) if total.get(r) else 0.0,
        }
        for r in resources
    ]
    top_rows = [
        {
            "kind": kind_label,
            "name": node.name,
            "url": urls[node.name],
            "items": [
                {"resource": r, **_balance(node, r)}
                for r in resources
                if node.borrowed.get(r, 0) or node.lent.get(r, 0)
            ],
        }
        for kind_label, nodes_, urls in (("queue", top_q, qurls), ("quota group", top_g, gurls))
        for node in nodes_
    ]
    context = {
        "nav": "overview",
        "cluster": st.cluster,
        "policy": st.values.queue_policy if st.values is not None else "",
        "ready_nodes": sum(1 for n in nodes_total.values() if n.schedulable) if nodes_total else 0,
        "nodes": len(nodes_total),
        "phases": phases,
        "running_jobs": phases.get("Running", 0),
        "pods": jobs.pod_counts(st.cluster, queues=None if qnames is None else sorted(qnames)),
        "waiting_jobs": sum(phases.get(p, 0) for p in jobs.WAITING_PHASES),
        "capacity_rows": capacity_rows,
        "health": health,
        "waiting": waiting,
        "n_waiting": n_waiting,
        "top_rows": top_rows,
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


# -- trees ---------------------------------------------------------------------------------------------------------


@viewer_required
def tree_page(request: HttpRequest, kind_path: str) -> HttpResponse:
    """A tree as a sunburst or icicle beside a table; a click on a sector opens the node."""
    kind = KIND_OF_PATH.get(kind_path)
    if kind is None:
        raise Http404("no such tree")
    st = state(request)
    tree = st.tree(kind, visible_names(request, kind))
    r = _resource(request, tree)
    size_by = _pick(request.GET.get("size"), trees.SIZE_BY, "cap")
    style = _pick(request.GET.get("style"), ("sunburst", "icicle"), "sunburst")
    urls = node_urls(tree)
    terms = trees.TERMS[kind]
    query = (request.GET.get("q") or "").strip()
    rows = _tree_rows(tree, r, urls)
    if query:
        rows = [row for row in rows if query.lower() in row["name"].lower()]
    show_all = request.GET.get("all") == "1"
    shown = rows if show_all else rows[:TABLE_ROWS]
    context = {
        "nav": f"tree-{kind}",
        "kind": kind,
        "kind_path": kind_path,
        "title": "Queue tree" if kind == "queue" else "Quota trees",
        "terms": terms,
        "cluster": st.cluster,
        "policy": tree.policy,
        "resource": r,
        "resources": tree.resources or ["cpu"],
        "size_by": size_by,
        "size_choices": [(key, terms[key]) for key in trees.SIZE_BY],
        "style": style,
        "rows": shown,
        "matching": len(rows),
        "hidden_rows": len(rows) - len(shown),
        "query": query,
        "deep": len(tree.nodes) > figures.DEEP_TREE,
        "count": len(tree.nodes),
        "resource_label": units.label(r),
    }
    fig = figures.tree_figure(tree, r, urls, size_by=size_by, style=style)
    return render_page(
        request,
        Page("frontend/tree.html", context, {"tree": fig}, {"frag-tree-table": "frontend/partials/tree_table.html"}),
    )


# -- a node ----------------------------------------------------------------------------------------------------


def _explain(st: State, kind: str, name: str) -> dict[str, Any]:
    if st.values is None:
        return {}
    if kind == "queue":
        if name not in st.values.queues:
            return {}
        groups: dict[str, list[str]] = {}
        for step in st.values.queues.explain(name).steps:
            if step.resource in units.HIDDEN_RESOURCES:
                continue
            groups.setdefault(step.quantity, []).append(str(step))
        return {"queue": [{"quantity": q, "steps": s} for q, s in groups.items()]}
    if name not in st.values.quotas:
        return {}
    raw = st.values.quotas.explain(name)
    if raw.get("outside_tree"):
        return {"quota_text": raw.get("text", "")}
    out = []
    for r, e in (raw.get("resources") or {}).items():
        details = [
            ("min", e.get("min")),
            ("auto-scaled min (floor)", e.get("auto_scaled_min")),
            ("request", e.get("request")),
            ("limited request", e.get("limited_request")),
            ("max", e.get("max")),
            ("parent runtime", e.get("parent_runtime")),
            ("runtime", e.get("runtime")),
            ("used", e.get("used")),
        ]
        out.append(
            {
                "resource": r,
                "text": e.get("text", ""),
                "state": e.get("state", ""),
                "bound_by": e.get("bound_by", ""),
                "details": [
                    (k, units.quantity(v, r) if v is not None else "unlimited")
                    for k, v in details
                    if k != "parent runtime" or v is not None
                ],
                "rounds": [
                    {
                        "round": rd["round"],
                        "pool": units.quantity(rd["pool"], r),
                        "share": units.quantity(rd["share"], r),
                        "weight": rd["weight"],
                        "total_weight": rd["total_weight"],
                        "capped": rd["capped"],
                    }
                    for rd in e.get("rounds", [])
                ],
            }
        )
    return {"quota": out}


def _samples(st: State, kind: str, name: str, window: str) -> list[figures.Point]:
    if st.cluster is None:
        return []
    since = timezone.now() - WINDOWS[window]
    rows = list(
        QuotaSample.objects.filter(cluster=st.cluster, kind=kind, name=name, time__gte=since)
        .order_by("time", "id")
        .values_list("time", "request", "allocated", "deserved", "borrowed", "lent")
    )
    if len(rows) > MAX_POINTS:
        step = -(-len(rows) // MAX_POINTS)
        rows = rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else [])
    return [
        figures.Point(t, req or {}, use or {}, ent or {}, b or {}, lent or {}) for t, req, use, ent, b, lent in rows
    ]


def _resource_rows(tree: trees.Tree, node: trees.TreeNode, resources: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for r in resources:
        cap = node.cap.get(r)
        extra_key = "real_capability" if node.kind == "queue" else "auto_scaled_min"
        extra = node.extra.get(extra_key, {}).get(r)
        rows.append(
            {
                "resource": r,
                "unit": units.unit_of(r)[1],
                "floor": units.human(node.floor.get(r, 0), r),
                "entitled": units.human(node.entitled.get(r, 0), r),
                "used": units.human(node.used.get(r, 0), r),
                "cap": units.human(cap, r) if cap is not None else "unlimited",
                "effective_cap": units.human(trees.effective_cap(tree, node.name, r), r),
                "request": units.human(node.request.get(r, 0), r),
                "extra": units.human(extra, r) if extra is not None else "—",
                **_balance(node, r),
            }
        )
    return rows


def _namespace_rows(st: State, queue: str) -> list[dict[str, Any]]:
    if st.values is None:
        return []
    rows = []
    for (q, ns), v in sorted(st.values.namespaces.items()):
        if q != queue:
            continue
        rows.append(
            {
                "namespace": ns,
                "weight": v.weight,
                "request": dict(v.request),
                "allocated": dict(v.allocated),
                "deserved": dict(v.deserved),
                "share": round(float(v.share), 3),
            }
        )
    return rows


def _version(kind: str, name: str) -> int | None:
    model = Queue if kind == "queue" else QuotaGroup
    return model.objects.filter(name=name).values_list("version", flat=True).first()


def _node_page(request: HttpRequest, kind: trees.Kind, name: str) -> HttpResponse:
    if not can_see(request, kind, name):
        raise Http404(f"no {trees.TITLES[kind].lower()} {name}")
    st = state(request)
    full = st.tree(kind)
    if name not in full.nodes:
        raise Http404(f"no {trees.TITLES[kind].lower()} {name}")
    visible = visible_names(request, kind)
    node = full.nodes[name]
    resources = units.resources_of(node.cap, node.floor, node.entitled, node.used, node.request) or ["cpu"]
    r = _pick(request.GET.get("resource"), resources, resources[0])
    window = _pick(request.GET.get("window"), list(WINDOWS), DEFAULT_WINDOW)
    terms = trees.TERMS[kind]
    borrows, lends = trees.node_loans(full, name)
    children = [full.nodes[c] for c in node.children if visible is None or c in visible]
    subtree = full.subtree(name)
    if kind == "queue":
        job_rows, job_total = jobs.podgroups(st.cluster, queues=subtree, limit=50)
        pods = jobs.pod_counts(st.cluster, queues=subtree)
    else:
        job_rows, job_total = jobs.podgroups(st.cluster, quota_groups=subtree, limit=50)
        pods = jobs.pod_counts(st.cluster, quota_groups=subtree)
    ns_rows = _namespace_rows(st, name) if kind == "queue" else []
    effective = {x: trees.effective_cap(full, name, x) for x in resources}
    crumbs = [
        {"name": a, "url": node_url(kind, a) if visible is None or a in visible else ""} for a in full.ancestors(name)
    ]
    namespace_objs = (
        list(Namespace.objects.filter(default_queue__name=name).values("name", "weight", "version"))
        if kind == "queue"
        else list(Namespace.objects.filter(quota_group__name=name).values("name", "weight", "version"))
    )
    context = {
        "nav": f"tree-{kind}",
        "kind": kind,
        "kind_path": PATH_OF_KIND[kind],
        "kind_title": trees.TITLES[kind],
        "terms": terms,
        "node": node,
        "cluster": st.cluster,
        "policy": full.policy,
        "crumbs": crumbs,
        "resource": r,
        "resources": resources,
        "window": window,
        "windows": list(WINDOWS),
        "resource_rows": _resource_rows(full, node, resources),
        "borrows": _loan_rows(borrows, True, kind, visible),
        "lends": _loan_rows(lends, False, kind, visible),
        "children": [
            {
                "name": c.name,
                "url": node_url(kind, c.name),
                "items": [{"resource": x, **_balance(c, x)} for x in resources],
            }
            for c in children
        ],
        "namespaces": [
            {
                **row,
                "request_h": ", ".join(units.human(v, k) for k, v in row["request"].items() if k in resources),
                "deserved_h": ", ".join(units.human(v, k) for k, v in row["deserved"].items() if k in resources),
                "allocated_h": ", ".join(units.human(v, k) for k, v in row["allocated"].items() if k in resources),
            }
            for row in ns_rows
        ],
        "namespace_objs": namespace_objs,
        "jobs": job_rows,
        "jobs_total": job_total,
        "pod_counts": pods,
        "jobs_caption": "Jobs in this subtree" if node.children else "Jobs",
        "explain": _explain(st, kind, name),
        "is_admin": is_admin(request.user),
        "version": _version(kind, name),
        "history_url": reverse("frontend:history", args=[PATH_OF_KIND[kind], name]),
        "edit_url": reverse("frontend:edit-" + kind, args=[name]),
    }
    figs = {
        "resources": figures.resources_figure(node, resources, effective),
        "timeseries": figures.timeseries_figure(_samples(st, kind, name, window), r, kind),
    }
    if children:
        shown_tree = full if visible is None else st.tree(kind, visible)
        figs["subtree"] = figures.tree_figure(shown_tree, r, node_urls(shown_tree), root=name, height=420)
        figs["children"] = figures.borrow_lend_figure([(c.name, c.borrowed, c.lent) for c in children], resources)
    if kind == "queue":
        figs["namespaces"] = figures.namespaces_figure(ns_rows, resources)
    fragments = {
        "frag-resources": "frontend/partials/node_resources.html",
        "frag-loans": "frontend/partials/node_loans.html",
        "frag-jobs": "frontend/partials/jobs_table.html",
        "frag-explain": "frontend/partials/node_explain.html",
    }
    if children:
        fragments["frag-children"] = "frontend/partials/node_children.html"
    if kind == "queue":
        fragments["frag-namespaces"] = "frontend/partials/node_namespaces.html"
    return render_page(request, Page("frontend/node.html", context, figs, fragments))


@viewer_required
def queue_page(request: HttpRequest, name: str) -> HttpResponse:
    """One queue: its values per resource, children, namespaces, history of samples, jobs, explanation."""
    return _node_page(request, "queue", name)


@viewer_required
def quota_page(request: HttpRequest, name: str) -> HttpResponse:
    """One quota group: min, runtime, used and max per resource, children, samples, jobs, explanation."""
    return _node_page(request, "quota", name)


# -- team view ---------------------------------------------------------------------------------------------------


def _teams_of(request: HttpRequest) -> list[Group]:
    groups = Group.objects.filter(user=request.user).order_by("name")
    return [g for g in groups if g.queues.exists() or g.quota_groups.exists()]


@viewer_required
def team(request: HttpRequest) -> HttpResponse:
    """A team member lands here: their team's page (or a choice when they are in several teams)."""
    teams = _teams_of(request)
    if len(teams) == 1:
        return redirect("frontend:team-detail", teams[0].name)
    if not teams and is_admin(request.user):
        teams = [g for g in Group.objects.order_by("name") if g.queues.exists() or g.quota_groups.exists()]
    return render(request, "frontend/team_index.html", {"nav": "team", "teams": teams})


@viewer_required
def team_detail(request: HttpRequest, group: str) -> HttpResponse:
    """A team's subtrees: its runtime quota now, what it borrows and lends and from whom, its jobs and why
    each waits."""
    team_group = Group.objects.filter(name=group).first()
    if team_group is None or not (is_admin(request.user) or request.user.groups.filter(pk=team_group.pk).exists()):
        raise Http404("no such team")
    st = state(request)
    qtree, gtree = st.tree("queue"), st.tree("quota")
    sections = []
    figs: dict[str, Any] = {}
    job_queues: set[str] = set()
    job_groups: set[str] = set()
    for kind, tree, names in (
        ("quota", gtree, sorted(team_group.quota_groups.values_list("name", flat=True))),
        ("queue", qtree, sorted(team_group.queues.values_list("name", flat=True))),
    ):
        for name in names:
            if name not in tree.nodes:
                continue
            node = tree.nodes[name]
            resources = units.resources_of(node.cap, node.floor, node.entitled, node.used) or ["cpu"]
            borrows, lends = trees.node_loans(tree, name)
            (job_queues if kind == "queue" else job_groups).update(tree.subtree(name))
            key = f"{kind}-{name}".replace(".", "-")
            figs[key] = figures.resources_figure(
                node, resources, {x: trees.effective_cap(tree, name, x) for x in resources}
            )
            sections.append(
                {
                    "key": key,
                    "kind": kind,
                    "kind_title": trees.TITLES[kind],
                    "name": name,
                    "url": node_url(kind, name),
                    "terms": trees.TERMS[kind],
                    "resource_rows": _resource_rows(tree, node, resources),
                    "borrows": _loan_rows(borrows, True, kind, visible_names(request, kind)),
                    "lends": _loan_rows(lends, False, kind, visible_names(request, kind)),
                    "children": len(node.children),
                }
            )
    if job_queues:
        job_rows, job_total = jobs.podgroups(st.cluster, queues=sorted(job_queues), limit=50)
        pods = jobs.pod_counts(st.cluster, queues=sorted(job_queues))
    else:
        job_rows, job_total = jobs.podgroups(st.cluster, quota_groups=sorted(job_groups), limit=50)
        pods = jobs.pod_counts(st.cluster, quota_groups=sorted(job_groups))
    context = {
        "nav": "team",
        "pod_counts": pods,
        "team": team_group,
        "sections": sections,
        "cluster": st.cluster,
        "jobs": job_rows,
        "jobs_total": job_total,
        "jobs_caption": "Your jobs, and why each waits",
    }
    return render_page(
        request,
        Page(
            "frontend/team.html",
            context,
            figs,
            {"frag-team": "frontend/partials/team_sections.html", "frag-jobs": "frontend/partials/jobs_table.html"},
        ),
    )
