"""What every page needs: who may see it, the cluster's computed values once per request, and the page
renderer that serves both the HTML page and its live JSON (``?live=1``: the figures and the fragments that the
page's small script swaps in every few seconds)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from core import tree_owner
from frontend import figures
from frontend.presenters import trees
from planning import valuecache
from quotas import access
from quotas.access import is_admin, is_team_member
from scheduling.models import Cluster

View = Callable[..., HttpResponse]
LIVE_SECONDS = 5  # default refresh period; settings.FAIRWAY_LIVE_SECONDS overrides it (0 turns it off)


def live_seconds() -> int:
    return int(getattr(settings, "FAIRWAY_LIVE_SECONDS", LIVE_SECONDS))


@dataclass
class State:
    """The cluster a page shows and its values now (``snapshot`` and ``values`` are None without a cluster)."""

    cluster: Cluster | None
    snapshot: Any = None
    values: Any = None
    _trees: dict[tuple[str, bool], trees.Tree] = field(default_factory=dict)

    def tree(self, kind: trees.Kind, visible: set[str] | None = None) -> trees.Tree:
        """The tree of ``kind`` (restricted to ``visible`` names when given); the whole trees are built once per
        change of the values, a user's visible part once per request."""
        key = (kind, visible is None)
        if key not in self._trees:
            if self.snapshot is None:
                self._trees[key] = trees.Tree(kind, {}, (), (), {})
            elif visible is None:
                self._trees[key] = trees.whole(kind, self.snapshot, self.values)
            else:
                self._trees[key] = trees.build(kind, self.snapshot, self.values, visible)
        return self._trees[key]


CLUSTER_SESSION_KEY = "fairway_cluster"


def current_cluster(request: HttpRequest) -> Cluster | None:
    """The cluster the pages show: ``?cluster=<name>`` when it names one (then kept in the session, so that every
    later page shows the same cluster), else the one kept in the session, else the default cluster
    (``FAIRWAY_DEFAULT_CLUSTER``), else the first by name. None only when there is no cluster at all. One query
    (cached on the request)."""
    if hasattr(request, "_fairway_cluster"):
        return request._fairway_cluster  # type: ignore[no-any-return]
    asked = request.GET.get("cluster") or ""
    kept = request.session.get(CLUSTER_SESSION_KEY, "") if hasattr(request, "session") else ""
    default = settings.FAIRWAY["DEFAULT_CLUSTER"]
    wanted = [n for n in (asked, kept, default) if n]
    found = {c.name: c for c in Cluster.objects.filter(name__in=wanted)} if wanted else {}
    cluster = next((found[n] for n in wanted if n in found), None)
    if cluster is None:
        cluster = Cluster.objects.order_by("name").first()
    if asked and cluster is not None and cluster.name == asked and hasattr(request, "session"):
        request.session[CLUSTER_SESSION_KEY] = asked
    request._fairway_cluster = cluster  # type: ignore[attr-defined]
    return cluster


def state(request: HttpRequest) -> State:
    """The state of the chosen cluster (:func:`current_cluster`): the engine's values (``current_values``),
    recomputed only when the database changed since they were last computed (``planning.valuecache``)."""
    cached = getattr(request, "_fairway_state", None)
    if cached is not None:
        return cached
    cluster = current_cluster(request)
    result = State(cluster)
    if cluster is not None:
        result.snapshot, result.values = valuecache.current(cluster)
    request._fairway_state = result  # type: ignore[attr-defined]
    return result


def visible_names(request: HttpRequest, kind: trees.Kind) -> set[str] | None:
    """Names of the nodes of ``kind`` the user may read; ``None`` means all (admins)."""
    key = f"_fairway_visible_{kind}"
    if hasattr(request, key):
        return getattr(request, key)  # type: ignore[no-any-return]
    names = access.visible_names(request.user, kind)
    setattr(request, key, names)
    return names


def can_see(request: HttpRequest, kind: trees.Kind, name: str) -> bool:
    names = visible_names(request, kind)
    return names is None or name in names


def pick(value: str | None, choices: Sequence[str], default: str) -> str:
    """``value`` when it is one of ``choices`` (a query parameter), else ``default``."""
    return value if value in choices else default


def resource_of(request: HttpRequest, tree: trees.Tree) -> str:
    """The ``?resource=`` of the request when ``tree`` has it, else the tree's first resource (cpu when none)."""
    names = tree.resources or ["cpu"]
    return pick(request.GET.get("resource"), names, names[0])


def safe_next(request: HttpRequest, default: str) -> str:
    """The form's ``next`` when it is a path of this site, else ``default``: never a redirect to another host
    (``//evil.example/x``, ``https://evil.example/``, ``/\\evil.example``), whatever the form was given."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


def viewer_required(view: View) -> View:
    """Logged in, and an admin or a member of a team linked to some tree node (others get a 403 page)."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not (is_admin(request.user) or is_team_member(request.user)):
            return render(
                request,
                "frontend/forbidden.html",
                {"why": "Your account is not linked to any team yet. Ask an admin to add you to a team."},
                status=403,
            )
        return view(request, *args, **kwargs)

    return wrapper


def admin_required(view: View) -> View:
    """Logged in as an admin (staff); others get a 403 page."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_admin(request.user):
            return render(
                request,
                "frontend/forbidden.html",
                {"why": "Only admins can change the trees. Your team's pages show everything you may read."},
                status=403,
            )
        return view(request, *args, **kwargs)

    return wrapper


def trees_owner(request: HttpRequest) -> str | None:
    """The name of the cluster that owns the trees (``Cluster.tree_source = kubernetes``), or None when Fairway does:
    one query, cached on the request. The services check again under the tree write lock, so a cluster that took
    the trees during the request still refuses the write (``TreesOwnedByCluster``)."""
    if not hasattr(request, "_fairway_trees_owner"):
        request._fairway_trees_owner = tree_owner.owner()  # type: ignore[attr-defined]
    return request._fairway_trees_owner  # type: ignore[no-any-return]


def owned_sentence(cluster: str) -> str:
    """What the editing pages say instead of their forms while ``cluster`` owns the trees."""
    return tree_owner.editing_sentence(cluster)


def owned_page(request: HttpRequest, cluster: str, *, status: int) -> HttpResponse:
    """The page an editing page shows instead of its form (GET, 200) or a refused edit gets (POST, 409)."""
    context = {"nav": "edit", "owned": owned_sentence(cluster), "refused": request.method == "POST"}
    return render(request, "frontend/trees_owned.html", context, status=status)


def tree_editor(view: View) -> View:
    """An editing page of the trees (an admin's): while a cluster owns them it offers no form but says so
    (``owned_sentence``), and a POST is refused with that sentence (409), also when the cluster took the trees
    after the page's own check (the services refuse it under the tree write lock)."""

    @admin_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        owner = trees_owner(request)
        if owner is not None:
            return owned_page(request, owner, status=409 if request.method == "POST" else 200)
        try:
            return view(request, *args, **kwargs)
        except tree_owner.TreesOwnedByCluster as exc:
            return owned_page(request, exc.cluster, status=409)

    return wrapper


@dataclass
class Page:
    """A page's data: its template context, its figures, and the fragments the live refresh re-renders."""

    template: str
    context: dict[str, Any]
    figures: Mapping[str, Any] = field(default_factory=dict)
    fragments: Mapping[str, str] = field(default_factory=dict)  # element id -> partial template
    live: bool = True


def render_page(request: HttpRequest, page: Page) -> HttpResponse:
    """The HTML page, or with ``?live=1`` its figures and fragments as JSON for the live refresh."""
    data = {key: figures.to_json(fig) for key, fig in page.figures.items()}
    if request.GET.get("live") == "1":
        context = {**page.context, "request": request, "user": request.user}
        fragments = {
            fid: render_to_string(template, context, request=request) for fid, template in page.fragments.items()
        }
        return JsonResponse(
            {"figures": data, "fragments": fragments, "updated": timezone.now().isoformat(timespec="seconds")}
        )
    context = {
        **page.context,
        "figures": data,
        "figure_config": figures.CONFIG,
        "live_seconds": live_seconds() if page.live else 0,
        "updated": timezone.now(),
    }
    return render(request, page.template, context)


def gone_node(what: str, name: str) -> str:
    """The 404 page's sentence for a tree node that is not there (or not the user's to see): it may have been
    renamed or deleted, which the latest changes show."""
    return (
        f"There is no {what} named {name}, or it is in a part of the trees your teams cannot see. It may have been "
        "renamed or deleted: the latest changes list both."
    )


def named_or_404(model: Any, name: str, what: str) -> Any:
    """The row of ``model`` named ``name``, or a 404 whose page says which node was not found."""
    instance = model.objects.filter(name=name).first()
    if instance is None:
        raise Http404(gone_node(what, name))
    return instance
