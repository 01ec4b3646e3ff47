"""Template context for every page: the cluster switcher of the header (shown only with more than one cluster)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest

from scheduling.models import Cluster


def cluster_switch(request: HttpRequest) -> dict[str, Callable[[], dict[str, Any] | None]]:
    """``cluster_switch``: called by the template when it renders the header (one query for the names, cached on
    the request), it gives the clusters' names and the chosen one, or None with a single cluster (no switcher)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def switch() -> dict[str, Any] | None:
        if not hasattr(request, "_fairway_switch"):
            from frontend.views.common import current_cluster

            names = list(Cluster.objects.order_by("name").values_list("name", flat=True))
            chosen = current_cluster(request) if len(names) > 1 else None
            request._fairway_switch = (  # type: ignore[attr-defined]
                {"names": names, "current": chosen.name if chosen else ""} if len(names) > 1 else None
            )
        return request._fairway_switch  # type: ignore[attr-defined,no-any-return]

    return {"cluster_switch": switch}
