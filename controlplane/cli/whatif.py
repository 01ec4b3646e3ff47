"""``fairway whatif -f changes.yaml``: what proposed changes would do (``POST /api/v1/whatif/``), written nowhere.

The file holds the API's change language: a list of changes, or a mapping with ``changes`` (and optionally
``session`` and ``cluster``). The table lists every tree node value that changes, before and after; ``-o json``
prints the API's answer as it is.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import emit, fmt_resources, table
from engine.wording import plural

SECTIONS = (("queues", "queue"), ("quota_groups", "quota-group"), ("namespaces", "namespace"))
FIELD_NAMES = {
    "real_capability": "realCapability",
    "auto_scaled_min": "autoScaledMin",
    "limited_request": "limitedRequest",
}


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "whatif",
        help="show what proposed changes would do to every tree node (nothing is written)",
        parents=[common],
        description="Apply proposed changes in memory and print the values that change. The file is YAML or JSON: "
        "a list of changes, or {changes: [...], session: true}, in the language of POST /api/v1/whatif/.",
    )
    p.add_argument("-f", "--filename", required=True, metavar="FILE", help="the changes ('-' is stdin)")
    p.add_argument("--session", action="store_true", help="also run one scheduling session before and after")
    p.add_argument("--cluster", help="the cluster (default: the default cluster)")


def _read(path: str) -> dict[str, Any]:
    import yaml

    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    if isinstance(data, list):
        return {"changes": data}
    if isinstance(data, dict) and isinstance(data.get("changes"), list):
        return dict(data)
    raise UsageError(f"{path}: expected a list of changes or a mapping with 'changes'")


def _value(field: str, value: Any) -> str:
    if isinstance(value, dict):
        return fmt_resources(value)
    return "-" if value is None else str(value)


def _change(field: str, delta: Any) -> str:
    if isinstance(delta, dict):
        parts = []
        for name, text in delta.items():
            amount = fmt_resources({name: text.lstrip("-")}) if isinstance(text, str) else f"{name}={text}"
            sign = "-" if isinstance(text, str) and text.startswith("-") else "+"
            parts.append(amount.replace("=", "=" + sign, 1))
        return ",".join(parts)
    return f"{delta:+g}" if isinstance(delta, int | float) else str(delta)


def rows(result: dict[str, Any]) -> list[list[str]]:
    out: list[list[str]] = []
    for section, kind in SECTIONS:
        for name, fields in (result.get("diff") or {}).get(section, {}).items():
            if fields.get("added") is True:
                out.append([kind, name, "(added)", "-", "-", ""])
                continue
            if fields.get("removed") is True:
                out.append([kind, name, "(removed)", "-", "-", ""])
                continue
            before = result.get("before", {}).get(section, {}).get(name, {})
            after = result.get("after", {}).get(section, {}).get(name, {})
            for field, delta in fields.items():
                out.append(
                    [
                        kind,
                        name,
                        FIELD_NAMES.get(field, field),
                        _value(field, before.get(field)),
                        _value(field, after.get(field)),
                        _change(field, delta),
                    ]
                )
    return out


def print_result(result: dict[str, Any]) -> None:
    diff_rows = rows(result)
    if diff_rows:
        table(diff_rows, ("Kind", "Name", "Value", "Before", "After", "Change"))
    else:
        print("No tree node value changes.")
    impact = result.get("impact")
    if impact:
        jobs = impact.get("podgroups") or {}
        print()
        if jobs:
            table(
                [
                    [
                        key,
                        f"{v['before']['phase']} ({plural(v['before']['placed'], 'pod')} placed)"
                        if v["before"]["phase"]
                        else "not submitted",
                        f"{v['after']['phase'] or '-'} ({plural(v['after']['placed'], 'pod')} placed)",
                        v["after"].get("reason") or "",
                    ]
                    for key, v in jobs.items()
                ],
                ("Job", "Session before", "Session after", "Reason after"),
            )
        else:
            print("One scheduling session would do the same for every job.")
        for e in impact.get("evictions") or []:
            print(f"evicts {e['task']} ({e['action']}): {e['message']}")


def run(args: argparse.Namespace, client: Client) -> int:
    body = _read(args.filename)
    if args.session:
        body["session"] = True
    if args.cluster:
        body["cluster"] = args.cluster
    result = client.call("POST", "whatif/", body, obj=f"what-if {args.filename}")
    emit(result, args.output, print_result)
    return EXIT_OK
