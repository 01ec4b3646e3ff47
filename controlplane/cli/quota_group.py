"""``fairway quota-group``: elastic quota groups (Koordinator's ElasticQuota), as ``fairway queue`` manages queues."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli import fields
from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import (
    details,
    emit,
    emit_list,
    fmt_resources,
    print_tree,
    warn,
)
from engine.treefields import QUOTA_GROUP_FIELDS

LIST_COLUMNS = ("Name", "Parent", "Parent group", "Min", "Max", "Allow lent", "Namespaces")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("quota-group", help="manage elastic quota groups", parents=[common])
    gsub = group.add_subparsers(dest="group_cmd", required=True, metavar="COMMAND")
    create = gsub.add_parser("create", help="create a quota group", parents=[common])
    create.add_argument("-n", "--name", required=True)
    _fields(create)
    for alias in ("view", "get"):
        view = gsub.add_parser(alias, help="show one quota group", parents=[common])
        view.add_argument("name", metavar="NAME")
    gsub.add_parser("list", help="list quota groups", parents=[common])
    update = gsub.add_parser("update", help="change fields of a quota group (the others stay)", parents=[common])
    update.add_argument("name", metavar="NAME")
    _fields(update)
    delete = gsub.add_parser("delete", help="delete a quota group (no children, no pods)", parents=[common])
    delete.add_argument("name", metavar="NAME")
    gsub.add_parser("tree", help="show the quota trees with their runtime and use", parents=[common])


def _fields(p: argparse.ArgumentParser) -> None:
    p.add_argument("-p", "--parent", help="parent group (default root); it must be a parent group")
    fields.add_flags(p, QUOTA_GROUP_FIELDS)
    p.add_argument("--namespaces", help="namespaces whose pods it governs, comma-separated ('' for none)")
    p.add_argument("--teams", help="teams (Django groups) that may read it, comma-separated ('' for none)")


def _body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if args.parent is not None:
        body["parent"] = args.parent
    body.update(fields.body(args, QUOTA_GROUP_FIELDS))
    for flag in ("namespaces", "teams"):
        if getattr(args, flag) is not None:
            body[flag] = [s.strip() for s in getattr(args, flag).split(",") if s.strip()]
    return body


def group_row(g: dict[str, Any]) -> list[Any]:
    return [
        g["name"],
        g.get("parent") or "-",
        "yes" if g.get("is_parent") else "no",
        fmt_resources(g.get("min")),
        fmt_resources(g.get("max")),
        "yes" if g.get("allow_lent", True) else "no",
        ", ".join(g.get("namespaces") or []) or "-",
    ]


def print_group_detail(g: dict[str, Any]) -> None:
    details(
        [
            ("Name", g["name"]),
            ("Parent", g.get("parent") or "-"),
            *fields.detail_lines(g, QUOTA_GROUP_FIELDS),
            ("Namespaces", ", ".join(g.get("namespaces") or []) or "-"),
            ("Children", ", ".join(g.get("children") or []) or "-"),
            ("Teams", ", ".join(g.get("teams") or []) or "-"),
            ("Created", g.get("created", "")),
        ]
    )


def _describe(node: dict[str, Any]) -> str:
    parts = []
    if node.get("min"):
        parts.append(f"min={fmt_resources(node['min'])}")
    if node.get("max"):
        parts.append(f"max={fmt_resources(node['max'])}")
    values = node.get("values") or {}
    for key, label in (("runtime", "runtime"), ("used", "used"), ("borrowed", "borrowed"), ("lent", "lent")):
        if values.get(key):
            parts.append(f"{label}={fmt_resources(values[key])}")
    return ("  " + " ".join(parts)) if parts else ""


def run(args: argparse.Namespace, client: Client) -> int:
    action = args.group_cmd
    name = getattr(args, "name", None)
    obj = f'quota group "{name}"'
    if action == "create":
        g = client.call("POST", "quota-groups/", {"name": args.name, **_body(args)}, obj=obj)
        emit(g, args.output, lambda d: print(f"quota group {d['name']} created"))
        warn(g, args.output)
    elif action in ("view", "get"):
        emit(client.call("GET", f"quota-groups/{name}/", obj=obj), args.output, print_group_detail)
    elif action == "list":
        emit_list(client.list_all("quota-groups/"), args.output, "No quota groups found", group_row, LIST_COLUMNS)
    elif action == "update":
        body = _body(args)
        if not body:
            raise UsageError("quota-group update: nothing to change (give at least one of the field flags)")
        g = client.call("PATCH", f"quota-groups/{name}/", body, obj=obj)
        emit(g, args.output, lambda d: print(f"quota group {d['name']} updated: {', '.join(sorted(body))}"))
        warn(g, args.output)
    elif action == "delete":
        client.call("DELETE", f"quota-groups/{name}/", obj=obj)
        if args.output == "table":
            print(f"quota group {name} deleted")
    elif action == "tree":
        emit(client.call("GET", "quota-groups/tree/"), args.output, lambda d: print_tree(d, _describe))
    return EXIT_OK
