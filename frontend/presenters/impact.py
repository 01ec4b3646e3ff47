"""The impact of a what-if proposal on jobs: which waiting jobs would be admitted (or stop fitting) and which
running pods would be reclaimed or recycled.

When the session engine is installed, one session runs on the snapshot before and after the proposal (the API's
``session`` what-if, ``planning.values_api``) and its decisions are compared: that is the answer. Without it the
page falls back to an *estimate from the quota values* and says so:

* a waiting podgroup *fits* when what it still needs to start (its ``minResources`` less what it holds, else
  the requests of the pods it still needs to reach ``minMember``) fits in its queue's room,
  ``min(deserved, realCapability) - allocated``, and in the room of the quota groups of its pods,
  ``runtime - used``; jobs whose fit changes are listed;
* a quota group whose ``used`` passes its ``runtime`` by more than before is recycled (seed 001): its running
  pods go lowest priority first (newest first among equals) until the excess is covered;
* a reclaimable queue whose ``allocated`` passes its ``deserved`` by more than before can lose that much to
  reclaim when other queues ask: its running pods are listed in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontend.presenters import units

_WAITING = ("Pending", "Inqueue", "Unknown")


def _session_impact(before: Any, after: Any) -> dict[str, Any] | None:
    from planning.values_api import _session_impact as run

    return run(before, after)


def impact(before: Any, after: Any, before_values: Any, after_values: Any) -> dict[str, Any]:
    """The impact rows for the what-if page (``source`` is "session" or "estimate")."""
    result = _session_impact(before, after)
    if result is not None:
        return _from_session(result)
    return estimate(before, after, before_values, after_values)


def _from_session(result: Mapping[str, Any]) -> dict[str, Any]:
    admitted, blocked, changed = [], [], []
    for key, change in sorted(result.get("podgroups", {}).items()):
        b, a = change["before"], change["after"]
        row = {
            "key": key,
            "before": f"{b.get('phase') or '—'} ({b.get('placed', 0)} placed)",
            "after": f"{a.get('phase') or '—'} ({a.get('placed', 0)} placed)",
            "why": a.get("message") or a.get("reason") or "",
        }
        if a.get("placed", 0) > b.get("placed", 0) or (a.get("phase") == "Running" and b.get("phase") != "Running"):
            admitted.append(row)
        elif a.get("placed", 0) < b.get("placed", 0):
            blocked.append(row)
        else:
            changed.append(row)
    evicted = [
        {"pod": e["task"], "action": e.get("action", ""), "why": e.get("message", "")}
        for e in result.get("evictions", [])
    ]
    return {"source": "session", "admitted": admitted, "blocked": blocked, "changed": changed, "evicted": evicted}


def _room(amounts: Mapping[str, int], used: Mapping[str, int]) -> dict[str, int]:
    return {r: a - used.get(r, 0) for r, a in amounts.items()}


def _fits(need: Mapping[str, int], room: Mapping[str, int] | None) -> tuple[bool, str]:
    if room is None:
        return True, ""
    for r, amount in sorted(need.items()):
        if r in units.HIDDEN_RESOURCES or amount <= 0 or r not in room:
            continue
        if amount > room[r]:
            return False, f"needs {units.human(amount, r)} of {r}, room {units.human(max(room[r], 0), r)}"
    return True, ""


def _needs(snap: Any) -> dict[str, tuple[dict[str, int], dict[str, dict[str, int]]]]:
    """Per waiting podgroup: what it still needs (total) and split by quota group."""
    from engine.objects import ALLOCATED_STATUSES, TaskStatus

    out: dict[str, tuple[dict[str, int], dict[str, dict[str, int]]]] = {}
    by_pg = snap.tasks_by_podgroup
    groups = snap.task_quota_groups
    for key, pg in snap.podgroups.items():
        tasks = by_pg.get(key, ())
        pending = sorted((t for t in tasks if t.status == TaskStatus.PENDING), key=lambda t: t.name)
        if str(pg.phase) not in _WAITING or not pending:
            continue
        held = [t for t in tasks if t.status in ALLOCATED_STATUSES]
        missing = max(pg.min_member - len(held), 1)
        chosen = pending[:missing]
        need: dict[str, int] = {}
        by_group: dict[str, dict[str, int]] = {}
        for t in chosen:
            g = by_group.setdefault(groups.get(t.uid, "default"), {})
            for r, v in t.request.items():
                need[r] = need.get(r, 0) + v
                g[r] = g.get(r, 0) + v
        if pg.min_resources:
            holding: dict[str, int] = {}
            for t in held:
                for r, v in t.request.items():
                    holding[r] = holding.get(r, 0) + v
            need = {r: max(v - holding.get(r, 0), 0) for r, v in pg.min_resources.items()}
        out[key] = (need, by_group)
    return out


def _queue_room(values: Any, snap: Any, queue: str) -> dict[str, int] | None:
    if queue not in values.queues:
        return None
    q = values.queues[queue]
    spec = snap.queues.get(queue)
    if spec is not None and str(spec.state) != "Open":
        return {r: -1 for r in ("cpu", "memory")}
    limit = {r: min(v, q.real_capability[r]) if r in q.real_capability else v for r, v in q.deserved.items()}
    return _room(limit, q.allocated)


def _group_room(values: Any, group: str) -> dict[str, int] | None:
    if group not in values.quotas:
        return None
    g = values.quotas[group]
    return _room(g.runtime, g.used)


def _verdict(
    values: Any, snap: Any, queue: str, need: Mapping[str, int], by_group: Mapping[str, Mapping[str, int]]
) -> tuple[bool, str]:
    ok, why = _fits(need, _queue_room(values, snap, queue))
    if not ok:
        return False, f"queue {queue}: {why}"
    for group, amounts in sorted(by_group.items()):
        ok, why = _fits(amounts, _group_room(values, group))
        if not ok:
            return False, f"quota group {group}: {why}"
    return True, ""


def _victims(snap: Any, tasks: list[Any], excess: Mapping[str, int]) -> list[dict[str, Any]]:
    from engine.objects import PREEMPTABLE_STATUSES

    left = {r: v for r, v in excess.items() if v > 0}
    running = [t for t in tasks if t.status in PREEMPTABLE_STATUSES and t.quota_preemptible]
    running.sort(key=lambda t: (t.priority, -(t.start_timestamp or 0.0), t.uid))
    out = []
    for t in running:
        if not any(v > 0 for v in left.values()):
            break
        if not any(t.request.get(r, 0) > 0 for r, v in left.items() if v > 0):
            continue
        for r in left:
            left[r] -= t.request.get(r, 0)
        out.append({"pod": t.uid, "priority": t.priority, "node": t.node or ""})
    return out


def _excess(amounts: Mapping[str, int], limit: Mapping[str, int]) -> dict[str, int]:
    return {r: v - limit.get(r, 0) for r, v in amounts.items() if r in limit and v > limit.get(r, 0)}


def estimate(before: Any, after: Any, before_values: Any, after_values: Any) -> dict[str, Any]:
    """The quota-value estimate of the impact (see the module docstring)."""
    admitted, blocked = [], []
    needs_after = _needs(after)
    for key, (need, by_group) in sorted(_needs(before).items()):
        if key not in needs_after:
            continue
        queue = before.podgroups[key].queue
        fit_b, why_b = _verdict(before_values, before, queue, need, by_group)
        fit_a, why_a = _verdict(after_values, after, after.podgroups[key].queue, *needs_after[key])
        row = {"key": key, "queue": after.podgroups[key].queue, "need": _describe(need)}
        if fit_a and not fit_b:
            admitted.append({**row, "why": f"was blocked by {why_b}"})
        elif fit_b and not fit_a:
            blocked.append({**row, "why": why_a})
    recycled = []
    groups_after = after.tasks_by_quota_group
    for name in sorted(after_values.quotas):
        if name not in before_values.quotas:
            continue
        a, b = after_values.quotas[name], before_values.quotas[name]
        grown = {r: v for r, v in _excess(a.used, a.runtime).items() if v > _excess(b.used, b.runtime).get(r, 0)}
        if grown:
            recycled.append(
                {
                    "node": name,
                    "excess": _describe(grown),
                    "pods": _victims(after, list(groups_after.get(name, ())), grown),
                }
            )
    reclaimable = []
    by_queue: dict[str, list[Any]] = {}
    for t in after.tasks.values():
        pg = after.podgroups.get(t.podgroup)
        if pg is not None:
            by_queue.setdefault(pg.queue, []).append(t)
    for name in sorted(after_values.queues):
        spec = after.queues.get(name)
        if name not in before_values.queues or spec is None or not spec.reclaimable or name not in by_queue:
            continue
        a, b = after_values.queues[name], before_values.queues[name]
        grown = {
            r: v - _excess(b.allocated, b.deserved).get(r, 0)
            for r, v in _excess(a.allocated, a.deserved).items()
            if r not in units.HIDDEN_RESOURCES and v > _excess(b.allocated, b.deserved).get(r, 0)
        }
        if grown:
            reclaimable.append(
                {"node": name, "excess": _describe(grown), "pods": _victims(after, by_queue[name], grown)}
            )
    return {
        "source": "estimate",
        "admitted": admitted,
        "blocked": blocked,
        "recycled": recycled,
        "reclaimable": reclaimable,
    }


def _describe(amounts: Mapping[str, int]) -> str:
    parts = [units.human(v, r) for r, v in sorted(amounts.items()) if v and r not in units.HIDDEN_RESOURCES]
    return ", ".join(parts) or "nothing"
