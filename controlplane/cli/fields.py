"""The field flags and detail lines of ``fairway queue`` and ``fairway quota-group``, read from the engine's table of
each tree kind (``engine.treefields``): a field added there gets its ``--flag``, its place in the request body and
its line in ``view`` without a change here."""

from __future__ import annotations

import argparse
import json
from collections.abc import Collection, Sequence
from typing import Any

from controlplane.cli.client import UsageError
from controlplane.cli.output import fmt_limits, fmt_resources, parse_resources
from engine.treefields import LIST_KINDS, FieldKind, TreeField
from engine.wording import plural

BOOL = ("true", "false")


def add_flags(p: argparse.ArgumentParser, table: Sequence[TreeField], skip: Collection[str] = ()) -> None:
    """One ``--flag`` per field an edit may set (``skip``: those the command spells itself, e.g. ``-w/--weight``)."""
    for f in table:
        if not f.writable or f.name in skip:
            continue
        if f.kind is FieldKind.BOOL:
            p.add_argument(f.flag, choices=BOOL, help=f.meaning)
        elif f.kind is FieldKind.INT:
            p.add_argument(f.flag, type=int, help=f.meaning)
        else:
            p.add_argument(f.flag, help=f.meaning)


def body(args: argparse.Namespace, table: Sequence[TreeField]) -> dict[str, Any]:
    """The request body of the field flags given (none given: empty); quantities and ranges are the server's."""
    out: dict[str, Any] = {}
    for f in table:
        given = getattr(args, f.name, None) if f.writable else None
        if given is None:
            continue
        if f.kind in LIST_KINDS:
            out[f.name] = parse_resources(given, f.flag)
        elif f.kind is FieldKind.BOOL:
            out[f.name] = given == "true"
        elif f.kind is FieldKind.SECONDS:
            out[f.name] = _seconds(given, f.flag)
        elif f.kind is FieldKind.USER_LIMITS:
            out[f.name] = parse_user_limits_flag(given, f.flag)
        elif f.kind is FieldKind.KUEUE:
            out[f.name] = _json_object(given, f.flag)
        else:
            out[f.name] = given
    return out


def _json_object(text: str, flag: str) -> Any:
    """A JSON object flag ('' for none: null); what it holds is checked by the server."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(f'{flag}: not JSON ({exc}); e.g. \'{{"queueingStrategy": "StrictFIFO"}}\'') from None


def parse_user_limits_flag(text: str, flag: str) -> list[dict[str, Any]]:
    """``user alice: jobs=3, nvidia.com/gpu=4; group ml-interns: nvidia.com/gpu=8; user *: jobs=2`` (or the API's
    JSON list; '' for none) -> the API's list; names, amounts and duplicates are checked by the server."""
    text = text.strip()
    if text.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{flag}: not a JSON list of limits: {exc}") from None
        if not isinstance(data, list):
            raise UsageError(f"{flag}: expected a JSON list of limits")
        return data
    out: list[dict[str, Any]] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        head, sep, rest = part.partition(":")
        kind, _, name = head.strip().partition(" ")
        if not sep or kind not in ("user", "group") or not name.strip():
            raise UsageError(
                f"{flag}: expected 'user NAME: jobs=N, RESOURCE=QUANTITY; group NAME: ...' (NAME '*' for each), "
                f"got {part!r}"
            )
        entry: dict[str, Any] = {kind: name.strip()}
        amounts = parse_resources(rest, flag) or {}
        jobs = amounts.pop("jobs", None)
        if jobs is not None:
            try:
                entry["max_jobs"] = int(jobs)
            except ValueError:
                raise UsageError(f"{flag}: jobs={jobs!r} is not a whole number") from None
        if amounts:
            entry["max_resources"] = amounts
        out.append(entry)
    return out


def fmt_user_limits(limits: list[dict[str, Any]] | None) -> str:
    """The API's user limits for people: ``user alice: 3 jobs, nvidia.com/gpu=4; each user: 2 jobs``; ``none``."""
    parts = []
    for limit in limits or ():
        kind = "user" if "user" in limit else "group"
        name = limit.get(kind)
        who = f"each {kind}" if name == "*" else f"{kind} {name}"
        most = []
        if limit.get("max_jobs") is not None:
            most.append(plural(int(limit["max_jobs"]), "job"))
        if limit.get("max_resources"):
            most.append(fmt_resources(limit["max_resources"]))
        parts.append(f"{who}: at most {', '.join(most)}")
    return "; ".join(parts) or "none"


def _seconds(text: str, flag: str) -> int | None:
    """Whole seconds, or '' for unset (the server checks the range)."""
    if not text.strip():
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise UsageError(f"{flag}: {text!r} is not a whole number of seconds ('' for unset)") from None


def detail_lines(node: dict[str, Any], table: Sequence[TreeField], skip: Collection[str] = ()) -> list[tuple[str, Any]]:
    """``view``'s label and value of each field for people; the limits only when the node has one (none: both are
    unlimited)."""
    limited = any(node.get(f.name) for f in table if f.kind is FieldKind.LIMITS)
    out: list[tuple[str, Any]] = []
    for f in table:
        if f.name in skip or (f.kind is FieldKind.LIMITS and not limited):
            continue
        out.append((f.label, _shown(f, node.get(f.name, f.default))))
    return out


def _shown(f: TreeField, value: Any) -> Any:
    if f.kind is FieldKind.LIMITS:
        return fmt_limits(value)
    if f.kind is FieldKind.USER_LIMITS:
        return fmt_user_limits(value)
    if f.kind in LIST_KINDS:
        return fmt_resources(value)
    if f.kind is FieldKind.BOOL:
        return str(value).lower()
    if f.kind is FieldKind.SECONDS:
        return "unset" if value is None else f"{value} s"
    if f.kind is FieldKind.TEXT:
        return value or "-"
    if f.kind is FieldKind.KUEUE:
        return json.dumps(value, sort_keys=False) if value else "-"
    return value
