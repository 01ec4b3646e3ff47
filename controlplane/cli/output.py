"""How the ``fairway`` command prints: ``-o table`` for people (cores, whole GPUs, ``Gi``, ``unlimited``), ``json``
and ``yaml`` as the API sends them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any


def fmt_resources(rl: dict[str, str | None] | None) -> str:
    """The API's quantities for people: cores, whole GPUs, Gi, and ``unlimited`` for null (an unbounded amount)."""
    from engine.resources import QuantityError, format_amount, parse_quantity

    def text(name: str, quantity: str | None) -> str:
        try:
            return format_amount(None if quantity is None else parse_quantity(quantity, name), name)
        except QuantityError:  # not ours to judge: print what the server sent
            return str(quantity)

    return ",".join(f"{k}={text(k, v)}" for k, v in (rl or {}).items()) or "-"


def fmt_limits(rl: dict[str, str | None] | None) -> str:
    """A borrowing or lending limit for people: its amounts (zeros kept), ``unlimited`` when it names nothing."""
    return fmt_resources(rl) if rl else "unlimited"


def emit(data: Any, output: str, table: Callable[[Any], None]) -> None:
    if output == "json":
        print(json.dumps(data, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=True), end="")
    else:
        table(data)


def warn(data: Any, output: str) -> None:
    """The warnings of an accepted write, one line each on stderr (in json and yaml they are in the document)."""
    if output != "table" or not isinstance(data, dict):
        return
    for w in data.get("warnings") or ():
        sys.stderr.write(f"warning: {w['attr']}: {w['detail']}\n")


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    cells = [[str(c) for c in headers], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def details(pairs: Sequence[tuple[str, Any]]) -> None:
    """``Label:`` and value lines, the values in one column (``Reclaimable: true``)."""
    width = max(len(label) for label, _ in pairs) + 2
    for label, value in pairs:
        print(f"{label + ':':<{width}}{value}")


def emit_list(
    items: list[dict[str, Any]],
    output: str,
    empty: str,
    row: Callable[[dict[str, Any]], list[Any]],
    columns: Sequence[str],
) -> None:
    """A listing: ``empty`` for none in a table, else one row per item (JSON and YAML as they are)."""
    if not items and output == "table":
        print(empty)
        return
    emit(items, output, lambda d: table([row(i) for i in d], columns))


def parse_resources(text: str | None, flag: str) -> dict[str, str] | None:
    """``cpu=8,memory=16Gi`` -> {"cpu": "8", "memory": "16Gi"}; quantities are checked by the server."""
    from controlplane.cli.client import UsageError

    if text is None:
        return None
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"{flag}: expected name=quantity[,name=quantity], got {part!r}")
        out[name.strip()] = value.strip()
    return out


def print_tree(nodes: list[dict[str, Any]], describe: Callable[[dict[str, Any]], str], prefix: str = "") -> None:
    for i, node in enumerate(nodes):
        last = i == len(nodes) - 1
        branch = "" if not prefix and len(nodes) == 1 and not node.get("parent") else ("└── " if last else "├── ")
        print(f"{prefix}{branch}{node['name']}{describe(node)}")
        child_prefix = prefix + ("" if not branch else ("    " if last else "│   "))
        print_tree(node.get("children", []), describe, child_prefix)
