"""A tree node's page: its values per resource, children, namespaces, samples over time, jobs and the engine's
explanation."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from engine.usage import node_key
from engine.userlimits import UserLimit
from frontend import figures
from frontend.presenters import balances, details, jobs, trees, units
from frontend.presenters.kueue import kueue_lines
from frontend.presenters.links import node_url, node_urls
from frontend.presenters.user_limits import user_limit_rows
from frontend.views.common import (
    Page,
    can_see,
    gone_node,
    owned_sentence,
    pick,
    render_page,
    state,
    trees_owner,
    viewer_required,
    visible_names,
)
from quotas.access import is_admin
from quotas.models import Queue, QuotaGroup

PATH_OF_KIND = {"queue": "queues", "quota": "quotas"}


def _limits_of(st: Any, kind: str, name: str) -> tuple[UserLimit, ...]:
    """The node's per-user limits: the snapshot's, else (no cluster) the row's."""
    specs = None if st.snapshot is None else (st.snapshot.queues if kind == "queue" else st.snapshot.quota_groups)
    if specs is not None:
        spec = specs.get(name)
        return spec.user_limits if spec is not None else ()
    row = (Queue if kind == "queue" else QuotaGroup).objects.filter(name=name).first()
    return row.to_spec().user_limits if row is not None else ()


def _node_page(request: HttpRequest, kind: trees.Kind, name: str) -> HttpResponse:
    """The page of queue or quota group ``name``, restricted to what the user may read."""
    if not can_see(request, kind, name):
        raise Http404(gone_node(trees.TITLES[kind].lower(), name))
    st = state(request)
    full = st.tree(kind)
    if name not in full.nodes:
        raise Http404(gone_node(trees.TITLES[kind].lower(), name))
    visible = visible_names(request, kind)
    node = full.nodes[name]
    resources = units.resources_of(node.cap, node.floor, node.entitled, node.used, node.request) or ["cpu"]
    r = pick(request.GET.get("resource"), resources, resources[0])
    window = pick(request.GET.get("window"), list(details.WINDOWS), details.DEFAULT_WINDOW)
    terms = trees.TERMS[kind]
    borrows, lends = trees.node_loans(full, name)
    children = [full.nodes[c] for c in node.children if visible is None or c in visible]
    ns_rows = details.namespace_rows(st.values, name) if kind == "queue" else []
    effective = {x: trees.effective_cap(full, name, x) for x in resources}
    admin = is_admin(request.user)
    owner = trees_owner(request) if admin else None  # only an admin is offered the editing buttons
    crumbs = [
        {"name": a, "url": node_url(kind, a) if visible is None or a in visible else ""} for a in full.ancestors(name)
    ]
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
        "windows": list(details.WINDOWS),
        "resource_rows": balances.resource_rows(full, node, resources),
        "borrows": balances.loan_rows(borrows, True, kind, visible),
        "lends": balances.loan_rows(lends, False, kind, visible),
        "children": balances.children_rows(kind, children, resources),
        "namespaces": details.namespace_display(ns_rows, resources),
        "namespace_objs": details.namespaces_of(kind, name),
        "user_limits": user_limit_rows(st.snapshot, kind, name, _limits_of(st, kind, name)),
        "kueue": kueue_lines(name, getattr(node.spec, "kueue", None)) if kind == "queue" else {},
        **jobs.of_subtree(st.cluster, kind, full.subtree(name)),
        "jobs_caption": "Jobs in this subtree" if node.children else "Jobs",
        "explain": details.explain(st.values, kind, name),
        # fairness over time (only when the policy turns it on): the line under the time series
        "past_usage": st.values.past.get(node_key(kind, name)) if st.values is not None else None,
        "is_admin": admin,
        "owned": owned_sentence(owner) if owner is not None else "",
        "version": details.version(kind, name),
        "history_url": reverse("frontend:history", args=[PATH_OF_KIND[kind], name]),
        "edit_url": reverse("frontend:edit-" + kind, args=[name]),
    }
    figs = {
        "resources": figures.resources_figure(node, resources, effective),
        "timeseries": figures.timeseries_figure(details.samples(st.cluster, kind, name, window), r, kind),
    }
    if children:
        shown_tree = full if visible is None else st.tree(kind, visible)
        figs["subtree"] = figures.tree_figure(shown_tree, r, node_urls(shown_tree), root=name, height=420)
        figs["children"] = figures.borrow_lend_figure([(c.name, c.borrowed, c.lent) for c in children], resources)
    if kind == "queue" and ns_rows:  # without namespaces the table alone says so, once
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
    if context["user_limits"]:
        fragments["frag-user-limits"] = "frontend/partials/node_user_limits.html"
    return render_page(request, Page("frontend/node.html", context, figs, fragments))


@viewer_required
def queue_page(request: HttpRequest, name: str) -> HttpResponse:
    """One queue: its values per resource, children, namespaces, history of samples, jobs, explanation."""
    return _node_page(request, "queue", name)


@viewer_required
def quota_page(request: HttpRequest, name: str) -> HttpResponse:
    """One quota group: min, runtime, used and max per resource, children, samples, jobs, explanation."""
    return _node_page(request, "quota", name)
