"""The field flags and detail lines of ``fairway queue`` and ``fairway quota-group``, read from the engine's table of
each tree kind (``engine.treefields``): a field added there gets its ``--flag``, its place in the request body and
its line in ``view`` without a change here."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence
from typing import Any

from controlplane.cli.client import UsageError
from controlplane.cli.output import fmt_limits, fmt_resources, parse_resources
from engine.treefields import LIST_KINDS, FieldKind, TreeField

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
        else:
            out[f.name] = given
    return out


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
    if f.kind in LIST_KINDS:
        return fmt_resources(value)
    if f.kind is FieldKind.BOOL:
        return str(value).lower()
    if f.kind is FieldKind.SECONDS:
        return "unset" if value is None else f"{value} s"
    if f.kind is FieldKind.TEXT:
        return value or "-"
    return value
