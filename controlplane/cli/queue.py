"""``fairway queue``: queues, as ``vcctl queue`` manages them."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import (
    details,
    emit,
    emit_list,
    fmt_resources,
    limit_lines,
    parse_resources,
    print_tree,
    table,
    warn,
)

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
    p.add_argument("--capability", help="the most it may use, e.g. cpu=8,memory=16Gi")
    p.add_argument("--deserved", help="what it deserves (capacity policy), e.g. cpu=4")
    p.add_argument("--guarantee", help="what is reserved for it whatever the others do")
    p.add_argument(
        "--borrowing-limit",
        help="the most it may take beyond its deserved from outside its subtree, e.g. cpu=2 ('' for unlimited)",
    )
    p.add_argument(
        "--lending-limit",
        help="the most of its unused deserved others may take; the rest stays reserved for it ('' for unlimited)",
    )
    p.add_argument("--priority", type=int, help="its priority among its siblings")
    p.add_argument("--reclaimable", choices=("true", "false"), help="may others reclaim what it borrowed")
    p.add_argument(
        "--min-runtime",
        help="seconds a pod of it is kept from reclaim and preempt after it starts, unless by a higher priority "
        "('' for unset: the parent's, else the policy's minRuntime)",
    )
    p.add_argument("--teams", help="teams (Django groups) that may read it, comma-separated ('' for none)")


def _body(args: argparse.Namespace) -> dict[str, Any]:
    """The request body of the field flags given (none given: empty)."""
    body: dict[str, Any] = {}
    if getattr(args, "weight", None) is not None:
        body["weight"] = args.weight
    if args.parent is not None:
        body["parent"] = args.parent
    for key in ("capability", "deserved", "guarantee", "borrowing_limit", "lending_limit"):
        value = parse_resources(getattr(args, key), "--" + key.replace("_", "-"))
        if value is not None:
            body[key] = value
    if args.priority is not None:
        body["priority"] = args.priority
    if args.reclaimable is not None:
        body["reclaimable"] = args.reclaimable == "true"
    if getattr(args, "min_runtime", None) is not None:
        body["min_runtime"] = _seconds(args.min_runtime)
    if args.teams is not None:
        body["teams"] = [t for t in (x.strip() for x in args.teams.split(",")) if t]
    return body


def _seconds(text: str) -> int | None:
    """``--min-runtime``: whole seconds, or '' for unset (the server checks the range)."""
    if not text.strip():
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise UsageError(f"--min-runtime: {text!r} is not a whole number of seconds ('' for unset)") from None


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
            ("Capability", fmt_resources(q.get("capability"))),
            ("Deserved", fmt_resources(q.get("deserved"))),
            ("Guarantee", fmt_resources(q.get("guarantee"))),
            *limit_lines(q),
            ("Priority", q.get("priority", 0)),
            ("Reclaimable", str(q.get("reclaimable", True)).lower()),
            ("Min runtime", "unset" if q.get("min_runtime") is None else f"{q['min_runtime']} s"),
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
