"""The per-user limits of a queue or quota group (``engine.userlimits``) with each user's and group's use against
them now, as the node page's table shows them. The counting is the engine's (``UserLimitBook.of_snapshot``: the one
computation the sessions use); this only words it."""

from __future__ import annotations

from typing import Any

from engine.objects import Snapshot
from engine.session.userlimits import UsageRow, UserLimitBook
from engine.userlimits import UserLimit, subject_words
from engine.wording import amount, plural

TREE = {"queue": "queue", "quota": "quota"}


def _most(limit: UserLimit) -> str:
    parts = [] if limit.max_jobs is None else [plural(limit.max_jobs, "job")]
    parts += [amount(a, r) for r, a in limit.max_resources.items()]
    return ", ".join(parts)


def _use(row: UsageRow | None, limit: UserLimit) -> tuple[str, list[dict[str, Any]]]:
    """(running jobs against the limit, each resource's use against it)."""
    jobs = row.jobs if row is not None else 0
    most = "unlimited" if limit.max_jobs is None else str(limit.max_jobs)
    cells = []
    for r, a in limit.max_resources.items():
        used = row.used.get(r, 0) if row is not None else 0
        cells.append({"text": f"{amount(used, r)} of {amount(a, r)}", "full": used >= a, "resource": r})
    return f"{jobs} of {most}", cells


def user_limit_rows(
    snapshot: Snapshot | None, kind: str, name: str, limits: tuple[UserLimit, ...]
) -> list[dict[str, Any]]:
    """One row per limit and subject: who it binds, its maxima, and what they run and use now (a wildcard: one row
    per user or group it binds now, or one saying nobody runs a job here yet). Without a snapshot (no cluster) the
    use is left out."""
    if not limits:
        return []
    rows = UserLimitBook.of_snapshot(snapshot).rows(TREE[kind], name) if snapshot is not None else []  # type: ignore[arg-type]
    out: list[dict[str, Any]] = []
    for limit in limits:
        mine = [r for r in rows if r.limit == limit]
        if not mine:
            jobs, cells = _use(None, limit)
            idle = limit.wildcard or snapshot is None
            out.append(
                {
                    "who": subject_words(limit),
                    "most": _most(limit),
                    "jobs": "" if idle else jobs,
                    "cells": [] if idle else cells,
                    "note": "no one runs a job here now" if limit.wildcard and snapshot is not None else "",
                    "full": False,
                }
            )
            continue
        for row in mine:
            jobs, cells = _use(row, limit)
            full = (limit.max_jobs is not None and row.jobs >= limit.max_jobs) or any(c["full"] for c in cells)
            out.append(
                {
                    "who": subject_words(limit, row.subject if limit.wildcard else None),
                    "most": _most(limit),
                    "jobs": jobs,
                    "cells": cells,
                    "note": "",
                    "full": full,
                }
            )
    return out
