"""The nodes pages: every node of the chosen cluster (allocatable, allocated, reserved, pods, Ready and last
heartbeat, taints, the queues and quota groups whose pods run there), and one node with its pods.

Everyone who may read the dashboard sees every node, read-only, as YuniKorn's nodes view shows a partition's nodes
to every user: the machines are shared by all teams, and which queues use a node is what a team asks first. A
team member's links lead only to the queues and quota groups they may open, and a node's page lists only their
own pods (the others are counted)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone

from frontend.presenters import nodes as presenter
from frontend.views.common import Page, current_cluster, pick, render_page, viewer_required, visible_names


@viewer_required
def nodes(request: HttpRequest) -> HttpResponse:
    """The nodes of the chosen cluster: searchable, filterable by state, sortable, fifty to a page."""
    cluster = current_cluster(request)
    everything = presenter.read(cluster)
    resources = presenter.resources(everything)
    keys = presenter.sorts(resources)
    sort = pick(request.GET.get("sort"), [*keys, *(f"-{k}" for k in keys)], "name")
    state = pick(request.GET.get("state"), list(presenter.STATES), "")
    query = (request.GET.get("q") or "").strip()[:200]
    chosen = presenter.select(everything, query=query, state=state, sort=sort)
    page = presenter.page_of(chosen, request.GET.get("page"))
    visible = {"queue": visible_names(request, "queue"), "quota": visible_names(request, "quota")}
    now = timezone.now()
    prefixes = presenter.url_prefixes()
    context = {
        "nav": "nodes",
        "cluster": cluster,
        "resources": resources,
        "rows": [presenter.row(n, resources, visible, now, prefixes) for n in page.object_list],
        "page": page,
        "matching": len(chosen),
        "count": len(everything),
        "ready": sum(1 for n in everything if n.state == "Ready"),
        "totals": presenter.totals(everything, resources),
        "query": query,
        "state": state,
        "states": presenter.STATES,
        "sort": sort,
        "columns": [("name", "Node"), ("state", "State"), ("heartbeat", "Last heartbeat"), ("pods", "Pods")],
        "updated": now,
    }
    return render_page(request, Page("frontend/nodes.html", context, live=False))


@viewer_required
def node_detail(request: HttpRequest, name: str) -> HttpResponse:
    """One node: its amounts per resource, state, heartbeat, taints, labels, and the pods on it."""
    cluster = current_cluster(request)
    found = presenter.read(cluster, [name])
    if cluster is None or not found:
        where = f"The cluster {cluster.name} has" if cluster is not None else "There is no cluster, so it has"
        raise Http404(f"{where} no node named {name}: it may have been removed from the cluster.")
    node = found[0]
    resources = presenter.resources(found)
    visible = {"queue": visible_names(request, "queue"), "quota": visible_names(request, "quota")}
    pods, others = presenter.pod_rows(cluster, node.id, visible["queue"])
    now = timezone.now()
    context = {
        "nav": "nodes",
        "cluster": cluster,
        "node": presenter.row(node, resources, visible, now),
        "labels": sorted(node.labels.items()),
        "pods": pods,
        "other_pods": others,
        "updated": now,
    }
    return render_page(request, Page("frontend/nodes_detail.html", context, live=False))
