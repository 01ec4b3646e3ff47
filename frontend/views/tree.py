"""A tree page: the queue tree or the quota trees as a sunburst or icicle beside a table."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse

from frontend import figures
from frontend.presenters import tree_table, trees, units
from frontend.presenters.links import node_urls
from frontend.views.common import Page, pick, render_page, resource_of, state, viewer_required, visible_names

TABLE_ROWS = 250  # rows of a tree table shown before "show all"
KIND_OF_PATH = {"queues": "queue", "quotas": "quota"}


def _zoom_url(params: dict[str, str], root: str | None) -> str:
    """This page's URL with the same options, zoomed into ``root`` (the whole tree for ``None``)."""
    query = {k: v for k, v in params.items() if v and k not in ("root", "live", "all")}
    if root:
        query["root"] = root
    return "?" + urlencode(query) if query else "?"


def _focus(tree: trees.Tree, root: str | None, matches: list[str]) -> str | None:
    """Where the chart starts: ``?root=`` when given; else, when "Find a node" matched exactly one node that lies
    deeper than the chart draws, that node's parent, so that the match is drawn and highlighted."""
    if root is not None or len(matches) != 1:
        return root
    node = tree.nodes[matches[0]]
    drawn = 3 if len(tree.nodes) > figures.DEEP_TREE else figures.MAX_LEVELS
    if node.parent is None or node.parent not in tree.nodes or node.depth < drawn:
        return None
    return node.parent


@viewer_required
def tree_page(request: HttpRequest, kind_path: str) -> HttpResponse:
    """A tree as a sunburst or icicle beside a table. A click on a sector with children zooms into its subtree
    (``?root=``, with a breadcrumb back up); a click on a leaf opens the node."""
    kind = KIND_OF_PATH.get(kind_path)
    if kind is None:
        raise Http404(f"There is no tree named {kind_path}: the trees are queues and quotas.")
    st = state(request)
    tree = st.tree(kind, visible_names(request, kind))
    r = resource_of(request, tree)
    size_by = pick(request.GET.get("size"), trees.SIZE_BY, "cap")
    style = pick(request.GET.get("style"), ("sunburst", "icicle"), "sunburst")
    urls = node_urls(tree)
    terms = trees.TERMS[kind]
    query = (request.GET.get("q") or "").strip()
    asked_root = request.GET.get("root") or None
    if asked_root is not None and asked_root not in tree.nodes:
        asked_root = None  # unknown or not visible: the whole tree
    matches = [n for n in tree.order if query.lower() in n.lower()] if query else []
    root = _focus(tree, asked_root, matches)
    params = {k: request.GET.get(k, "") for k in ("resource", "size", "style", "q")}
    in_view = set(tree.subtree(root)) if root is not None else None
    rows = tree_table.tree_rows(tree, r, urls)
    if in_view is not None:
        rows = [row for row in rows if row["name"] in in_view]
    if query:
        rows = [row for row in rows if query.lower() in row["name"].lower()]
    show_all = request.GET.get("all") == "1"
    shown = rows if show_all else rows[:TABLE_ROWS]
    crumbs = (
        [{"name": "whole tree", "url": _zoom_url(params, None)}]
        + [{"name": a, "url": _zoom_url(params, a)} for a in tree.ancestors(root)]
        if root is not None
        else []
    )
    up = crumbs[-1]["url"] if crumbs else ""
    zoom = {n: _zoom_url(params, n) for n in (in_view or tree.nodes) if tree.nodes[n].children}
    size_term = terms[size_by]
    highlighted = [n for n in matches if in_view is None or n in in_view]
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
        "size_term": size_term,
        "size_choices": [(key, terms[key]) for key in trees.SIZE_BY],
        "style": style,
        "rows": shown,
        "matching": len(rows),
        "hidden_rows": len(rows) - len(shown),
        "query": query,
        "highlighted": highlighted,
        "root": root,
        "root_url": urls.get(root, "") if root else "",
        "crumbs": crumbs,
        "levels": figures.tree_levels(tree, root),
        "max_levels": figures.MAX_LEVELS,
        "deep": len(tree.nodes) > figures.DEEP_TREE,
        "count": len(tree.nodes),
        "resource_label": units.label(r),
    }
    fig = figures.tree_figure(
        tree, r, urls, size_by=size_by, style=style, root=root, highlight=highlighted, zoom=zoom, up=up
    )
    return render_page(
        request,
        Page(
            "frontend/tree.html",
            context,
            {"tree": fig},
            {
                "frag-tree-table": "frontend/partials/tree_table.html",
                "frag-tree-crumbs": "frontend/partials/tree_crumbs.html",
            },
        ),
    )
