"""``fairway queue``: queues, as ``vcctl queue`` manages them."""

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
    table,
    warn,
)
from engine.treefields import QUEUE_FIELDS

LIST_COLUMNS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    queue = sub.add_parser("queue", help="manage queues", parents=[common])
    qsub = queue.add_subparsers(dest="queue_cmd", required=True, metavar="COMMAND")
    create = qsub.add_parser("create", help="create a queue", parents=[common])
    create.add_argument("-n", "--name", required=True)
    create.add_argument("-w", "--weight", type=int, default=1)
    create.add_argument("-S", "--state", choices=("Open", "Closed"), default="Open")
    _fields(create)
    update = qsub.add_parser("update", help="change fields of a queue (the others stay)", parents=[common])
    update.add_argument("name_pos", metavar="NAME")
    update.add_argument("-w", "--weight", type=int)
    _fields(update)
    for alias in ("view", "get"):
        view = qsub.add_parser(alias, help="show one queue", parents=[common])
        view.add_argument("name_pos", nargs="?", metavar="NAME")
        view.add_argument("-n", "--name")
    qsub.add_parser("list", help="list queues", parents=[common])
    operate = qsub.add_parser("operate", help="open, close or update a queue", parents=[common])
    operate.add_argument("-n", "--name", required=True)
    operate.add_argument("-a", "--action", required=True, choices=("open", "close", "update"))
    operate.add_argument("-w", "--weight", type=int)
    _fields(operate)
    delete = qsub.add_parser("delete", help="delete a queue", parents=[common])
    delete.add_argument("name_pos", nargs="?", metavar="NAME")
    delete.add_argument("-n", "--name")
    delete.add_argument("--cascade", action="store_true", help="delete its child queues first")
    delete.add_argument("--force", action="store_true", help="also delete the podgroups and pods inside")
    qsub.add_parser("tree", help="show the queue hierarchy", parents=[common])


def _fields(p: argparse.ArgumentParser) -> None:
    p.add_argument("-p", "--parent", help="parent queue (default root)")
    fields.add_flags(p, QUEUE_FIELDS, skip={"weight"})  # -w/--weight is spelled above, per command
    p.add_argument("--teams", help="teams (Django groups) that may read it, comma-separated ('' for none)")


def _body(args: argparse.Namespace) -> dict[str, Any]:
    """The request body of the field flags given (none given: empty)."""
    body: dict[str, Any] = {}
    if args.parent is not None:
        body["parent"] = args.parent
    body.update(fields.body(args, QUEUE_FIELDS))
    if args.teams is not None:
        body["teams"] = [t for t in (x.strip() for x in args.teams.split(",")) if t]
    return body


def _update(args: argparse.Namespace, client: Client, name: str, obj: str, usage: str) -> None:
    body = _body(args)
    if not body:
        raise UsageError(f"{usage}: nothing to change (give at least one of -w/--weight and the field flags)")
    q = client.call("PATCH", f"queues/{name}/", body, obj=obj)
    changed = ", ".join(f"weight {q['weight']}" if k == "weight" else k for k in sorted(body))
    emit(q, args.output, lambda d: print(f"queue {d['name']} updated: {changed}"))
    warn(q, args.output)


def queue_row(q: dict[str, Any]) -> list[Any]:
    s = q.get("status") or {}
    return [
        q["name"],
        q["weight"],
        q["state"],
        q.get("parent") or "-",
        s.get("inqueue", 0),
        s.get("pending", 0),
        s.get("running", 0),
        s.get("unknown", 0),
        s.get("completed", 0),
    ]


def print_queue_detail(q: dict[str, Any]) -> None:
    table([queue_row(q)], LIST_COLUMNS)
    print()
    details(
        [
            *fields.detail_lines(q, QUEUE_FIELDS, skip={"weight", "state"}),  # those two are in the row above
            ("Children", ", ".join(q.get("children") or []) or "-"),
            ("Teams", ", ".join(q.get("teams") or []) or "-"),
            ("Created", q.get("created", "")),
        ]
    )


def _describe(node: dict[str, Any]) -> str:
    extra = f"  weight={node['weight']} state={node['state']}"
    if node.get("deserved"):
        extra += f" deserved={fmt_resources(node['deserved'])}"
    if node.get("capability"):
        extra += f" capability={fmt_resources(node['capability'])}"
    return extra


def name_of(args: argparse.Namespace, what: str) -> str:
    name: str | None = getattr(args, "name_pos", None) or getattr(args, "name", None)
    if not name:
        raise UsageError(f"{what}: a name is required ({what} NAME)")
    return name


def run(args: argparse.Namespace, client: Client) -> int:
    action = args.queue_cmd
    name = getattr(args, "name_pos", None) or getattr(args, "name", None)
    obj = f'queue "{name}"'
    if action == "create":
        q = client.call("POST", "queues/", {"name": args.name, **_body(args)}, obj=obj)
        warnings = q.get("warnings")
        if args.state == "Closed":
            q = {**client.call("POST", f"queues/{args.name}/close/", obj=obj)["queue"], "warnings": warnings}
        emit(q, args.output, lambda d: print(f"queue {d['name']} created"))
        warn(q, args.output)
    elif action == "update":
        _update(args, client, args.name_pos, obj, "fairway queue update")
    elif action in ("view", "get"):
        name = name_of(args, "fairway queue view")
        emit(client.call("GET", f"queues/{name}/", obj=obj), args.output, print_queue_detail)
    elif action == "list":
        emit_list(client.list_all("queues/"), args.output, "No queues found", queue_row, LIST_COLUMNS)
    elif action == "operate":
        if args.action in ("open", "close"):
            result = client.call("POST", f"queues/{args.name}/{args.action}/", obj=obj)
            emit(
                result,
                args.output,
                lambda d: print(
                    "\n".join(f"queue {k}: {v['state']}" for k, v in d["changed"].items())
                    or f"queue {args.name} already {d['queue']['state']}"
                ),
            )
        else:
            _update(args, client, args.name, obj, "fairway queue operate -a update")
    elif action == "delete":
        name = name_of(args, "fairway queue delete")
        params = {"cascade": str(args.cascade).lower(), "force": str(args.force).lower()}
        client.call("DELETE", f"queues/{name}/", params=params, obj=obj)
        if args.output == "table":
            print(f"queue {name} deleted")
    elif action == "tree":
        emit(client.call("GET", "queues/tree/"), args.output, lambda d: print_tree(d, _describe))
    return EXIT_OK
