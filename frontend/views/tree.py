"""A tree page: the queue tree or the quota trees as a sunburst or icicle beside a table."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from frontend import figures
from frontend.presenters import tree_table, trees, units
from frontend.presenters.links import node_urls
from frontend.views.common import Page, pick, render_page, resource_of, state, viewer_required, visible_names

TABLE_ROWS = 250  # rows of a tree table shown before "show all"
KIND_OF_PATH = {"queues": "queue", "quotas": "quota"}


@viewer_required
def tree_page(request: HttpRequest, kind_path: str) -> HttpResponse:
    """A tree as a sunburst or icicle beside a table; a click on a sector opens the node."""
    kind = KIND_OF_PATH.get(kind_path)
    if kind is None:
        raise Http404("no such tree")
    st = state(request)
    tree = st.tree(kind, visible_names(request, kind))
    r = resource_of(request, tree)
    size_by = pick(request.GET.get("size"), trees.SIZE_BY, "cap")
    style = pick(request.GET.get("style"), ("sunburst", "icicle"), "sunburst")
    urls = node_urls(tree)
    terms = trees.TERMS[kind]
    query = (request.GET.get("q") or "").strip()
    rows = tree_table.tree_rows(tree, r, urls)
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
