"""The impact of a what-if proposal on jobs: which waiting jobs would be admitted (or stop fitting) and which
running pods would be evicted.

One session runs on the snapshot before and after the proposal (the API's ``session`` what-if,
``planning.values_api``) and its decisions are compared: that is the answer the page shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.objects import Snapshot
from engine.vocabulary import ADMITTED_PHASES, PodGroupPhase
from planning.values_api import session_impact
from scheduling.models import Cluster


def impact(before: Snapshot, after: Snapshot, cluster: Cluster | None = None) -> dict[str, Any]:
    """The impact rows for the what-if page: one session on each snapshot of ``cluster``, their podgroups and
    evictions compared (its LocalQueues' kept usage ordering Admission Fair Sharing's jobs, as live)."""
    return _from_session(session_impact(before, after, cluster=cluster))


def _from_session(result: Mapping[str, Any]) -> dict[str, Any]:
    """Sort the session's podgroup changes: **admitted** only when the job is Inqueue or Running after the proposal
    and was not before (or starts running: Inqueue -> Running); **stop fitting** when it loses placed pods or its
    admission; **closer** when it places more pods but still waits (not admitted: it is not called so)."""
    admitted, blocked, closer, changed = [], [], [], []
    for key, change in sorted(result.get("podgroups", {}).items()):
        b, a = change["before"], change["after"]
        row = {
            "key": key,
            "before": f"{b.get('phase') or '—'} ({b.get('placed', 0)} placed)",
            "after": f"{a.get('phase') or '—'} ({a.get('placed', 0)} placed)",
            "why": a.get("message") or a.get("reason") or "",
        }
        was, now = b.get("phase"), a.get("phase")
        more, fewer = a.get("placed", 0) > b.get("placed", 0), a.get("placed", 0) < b.get("placed", 0)
        if now in ADMITTED_PHASES and (
            was not in ADMITTED_PHASES or (now == PodGroupPhase.RUNNING and was != PodGroupPhase.RUNNING)
        ):
            admitted.append(row)
        elif fewer or (was in ADMITTED_PHASES and now not in ADMITTED_PHASES):
            blocked.append(row)
        elif more:
            closer.append(row)
        else:
            changed.append(row)
    evicted = [
        {"pod": e["task"], "action": e.get("action", ""), "why": e.get("message", "")}
        for e in result.get("evictions", [])
    ]
    return {
        "source": "session",
        "admitted": admitted,
        "blocked": blocked,
        "closer": closer,
        "changed": changed,
        "evicted": evicted,
    }
