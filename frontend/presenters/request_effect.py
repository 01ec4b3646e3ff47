"""An applied change request's effect (``changerequests.effect``) as its page shows it: waits for people."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from changerequests.effect import effect, reader
from engine.waits import NodeWaits
from engine.wording import duration, duration_or

_TREES = {"queue": "queue", "quota": "quota group"}


def _figures(w: NodeWaits | None) -> dict[str, Any]:
    if w is None:
        return {"started": 0, "waiting": 0, "p50": "—", "p95": "—", "longest": "—"}
    return {
        "started": w.started,
        "waiting": w.waiting,
        "p50": duration_or(w.p50, "—"),
        "p95": duration_or(w.p95, "—"),
        "longest": duration_or(w.longest, "—"),
    }


def page_effect(obj: Any, user: Any, now: datetime) -> dict[str, Any] | None:
    """The page's rows (a node, its figures before and since), the span compared, and whether it is short yet."""
    found = effect(obj, reader(user), now)
    if found is None:
        return None
    return {
        "rows": [
            {"tree": _TREES[n.tree], "name": n.name, "before": _figures(n.before), "since": _figures(n.since)}
            for n in found.nodes
        ],
        "span": duration(found.span.total_seconds()),
        "short": found.span < timedelta(days=1),
    }
