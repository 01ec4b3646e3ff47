"""The editor's display data: its tree listings with their action links, and the message a stale save gets."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from frontend import staging
from frontend.presenters import trees
from frontend.presenters.links import node_url
from quotas.models import Namespace, Queue, QuotaGroup

MODELS: dict[str, Any] = {"queue": Queue, "quota": QuotaGroup}


def _last_change(model: Any, pk: int) -> dict[str, Any] | None:
    """Who saved the row last and when, from its audit history."""
    record = model.history.filter(id=pk).order_by("-history_date", "-history_id").select_related("history_user").first()
    if record is None:
        return None
    return {"user": record.history_user.username if record.history_user else "someone", "when": record.history_date}


def differences(kind: str, current: Any, mine: dict[str, Any]) -> str:
    """The fields where the current row differs from what the user submitted, e.g. "weight is 3 (yours: 5)"."""
    now = staging.current_fields(kind, current)
    theirs = staging.node_entry(kind, current, mine)["change"].get("spec", {})
    parts = []
    for key, value in theirs.items():
        shown_now, shown_mine = now.get(key), value
        if isinstance(shown_now, dict) or isinstance(shown_mine, dict):
            shown_now = ", ".join(f"{r}={q}" for r, q in (shown_now or {}).items()) or "none"
            shown_mine = ", ".join(f"{r}={q}" for r, q in (shown_mine or {}).items()) or "none"
        parts.append(f"{key} is {shown_now} (yours: {shown_mine})")
    return "; ".join(parts)


def conflict_message(kind: str, current: Any, stale: int | None, mine: dict[str, Any] | None = None) -> str:
    """What the editor says when the row moved since the form was read: who changed it, the versions, and (with
    ``mine``, the user's services data) the fields where the row now differs."""
    who = _last_change(MODELS.get(kind, Namespace), current.pk)
    by = f" by {who['user']} at {who['when']:%H:%M:%S}" if who else ""
    differs = differences(kind, current, mine) if mine is not None and kind in MODELS else ""
    return (
        f"{trees.TITLES.get(kind, 'Namespace')} {current.name} was changed{by} after you opened this form "
        f"(you read version {stale}, it is now version {current.version}). Your change was NOT saved. "
        + (f"Now: {differs}. " if differs else "")
        + "The form below shows your values over the current version: review them, then save again to "
        "overwrite, or reload to start over."
    )


def tree_rows(kind: str) -> list[dict[str, Any]]:
    """The editor's rows of a whole tree in depth-first order: indent, built-in flag and the action links."""
    model = MODELS[kind]
    rows = list(model.objects.select_related("parent").order_by("name"))
    parents = {r.name: (r.parent.name if r.parent_id else None) for r in rows}
    by_name = {r.name: r for r in rows}
    kids: dict[str | None, list[str]] = {}
    for name, parent in parents.items():
        kids.setdefault(parent if parent in by_name else None, []).append(name)
    out: list[dict[str, Any]] = []
    stack = [(n, 0) for n in sorted(kids.get(None, []), reverse=True)]
    while stack:
        name, depth = stack.pop()
        r = by_name[name]
        out.append(
            {
                "name": name,
                "depth": depth,
                "indent": depth * 14,
                "obj": r,
                "builtin": r.is_builtin,
                "url": node_url(kind, name),
                "edit": reverse(f"frontend:edit-{kind}", args=[name]),
                "delete": reverse("frontend:delete", args=["queues" if kind == "queue" else "quotas", name]),
                "add_child": reverse(f"frontend:new-{kind}") + f"?parent={name}"
                if kind == "queue" or r.is_parent
                else "",
            }
        )
        stack.extend((c, depth + 1) for c in sorted(kids.get(name, []), reverse=True))
    return out
