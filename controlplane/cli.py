"""The ``fairway`` command: queue management against the REST API (like ``vcctl queue``), and ``simulate``.

    fairway queue create --name myqueue --weight 10 [--parent root] [--capability cpu=8,memory=16Gi]
    fairway queue view myqueue            (alias: get)
    fairway queue list
    fairway queue operate -n myqueue -a open|close|update [-w 5]
    fairway queue delete myqueue [--cascade] [--force]
    fairway queue tree

Server and token come from ``--server``/``FAIRWAY_URL`` (default http://127.0.0.1:8000) and
``--token``/``FAIRWAY_TOKEN``. Output: ``-o table`` (default), ``json`` or ``yaml``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

EXIT_OK, EXIT_API_ERROR, EXIT_USAGE = 0, 1, 2
LIST_COLUMNS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")


class ApiError(Exception):
    def __init__(self, status: int, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.status = status
        self.lines = lines


class Client:
    """A tiny REST client: token auth, JSON in and out, the API's error envelope turned into readable lines."""

    def __init__(self, server: str, token: str | None) -> None:
        import requests

        self.server = server.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Token {token}"

    def call(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Any:
        import requests

        url = f"{self.server}/api/v1/{path.lstrip('/')}"
        try:
            resp = self.session.request(method, url, json=body, params=params, timeout=30)
        except requests.RequestException as exc:
            raise ApiError(0, [f"cannot reach {self.server}: {exc.__class__.__name__}: {exc}"]) from exc
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, _error_lines(resp))
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    def list_all(self, path: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        query = {"limit": "1000", "offset": "0", **(params or {})}
        while True:
            page = self.call("GET", path, params=query)
            if isinstance(page, list):
                return page
            out.extend(page["results"])
            if not page.get("next"):
                return out
            query["offset"] = str(int(query["offset"]) + int(query["limit"]))


def _error_lines(resp: Any) -> list[str]:
    try:
        body = resp.json()
    except ValueError:
        return [f"HTTP {resp.status_code}: {resp.text[:200]}"]
    errors = body.get("errors") if isinstance(body, dict) else None
    if not errors:
        return [f"HTTP {resp.status_code}: {body}"]
    return [f"{e['attr']}: {e['detail']}" if e.get("attr") else str(e.get("detail")) for e in errors]


def _parse_resources(text: str | None, flag: str) -> dict[str, str] | None:
    """``cpu=8,memory=16Gi`` -> {"cpu": "8", "memory": "16Gi"}; quantities are checked by the server."""
    if text is None:
        return None
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name or not value:
            raise SystemExit(f"fairway: {flag}: expected name=quantity[,name=quantity], got {part!r}")
        out[name.strip()] = value.strip()
    return out


def _fmt_resources(rl: dict[str, str | None] | None) -> str:
    """The API's quantities for people: cores, whole GPUs, Gi, and ``unlimited`` for null (an unbounded amount)."""
    from engine.resources import QuantityError, format_amount, parse_quantity

    def text(name: str, quantity: str | None) -> str:
        try:
            return format_amount(None if quantity is None else parse_quantity(quantity, name), name)
        except QuantityError:  # not ours to judge: print what the server sent
            return str(quantity)

    return ",".join(f"{k}={text(k, v)}" for k, v in (rl or {}).items()) or "-"


def _print(data: Any, output: str, table: Any) -> None:
    if output == "json":
        print(json.dumps(data, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=True), end="")
    else:
        table(data)


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    cells = [[str(c) for c in headers], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _queue_row(q: dict[str, Any]) -> list[Any]:
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


def _print_queue_detail(q: dict[str, Any]) -> None:
    _table([_queue_row(q)], LIST_COLUMNS)
    print()
    for key in ("capability", "deserved", "guarantee"):
        print(f"{key.capitalize() + ':':<12}{_fmt_resources(q.get(key))}")
    print(f"{'Priority:':<12}{q.get('priority', 0)}")
    print(f"{'Reclaimable:':<12}{str(q.get('reclaimable', True)).lower()}")
    print(f"{'Children:':<12}{', '.join(q.get('children') or []) or '-'}")
    print(f"{'Created:':<12}{q.get('created', '')}")


def _print_tree(nodes: list[dict[str, Any]], prefix: str = "") -> None:
    for i, node in enumerate(nodes):
        last = i == len(nodes) - 1
        branch = "" if not prefix and len(nodes) == 1 and not node.get("parent") else ("└── " if last else "├── ")
        extra = f"  weight={node['weight']} state={node['state']}"
        if node.get("deserved"):
            extra += f" deserved={_fmt_resources(node['deserved'])}"
        if node.get("capability"):
            extra += f" capability={_fmt_resources(node['capability'])}"
        print(f"{prefix}{branch}{node['name']}{extra}")
        child_prefix = prefix + ("" if not branch else ("    " if last else "│   "))
        _print_tree(node.get("children", []), child_prefix)


def cmd_queue(args: argparse.Namespace, client: Client) -> int:
    action = args.queue_cmd
    if action == "create":
        body: dict[str, Any] = {"name": args.name, "weight": args.weight}
        if args.parent:
            body["parent"] = args.parent
        for key in ("capability", "deserved", "guarantee"):
            value = _parse_resources(getattr(args, key), f"--{key}")
            if value is not None:
                body[key] = value
        if args.priority is not None:
            body["priority"] = args.priority
        if args.reclaimable is not None:
            body["reclaimable"] = args.reclaimable == "true"
        q = client.call("POST", "queues/", body)
        if args.state == "Closed":
            q = client.call("POST", f"queues/{args.name}/close/")["queue"]
        _print(q, args.output, lambda d: print(f"queue {d['name']} created"))
    elif action in ("view", "get"):
        name = args.name_pos or args.name
        if not name:
            raise SystemExit("fairway: queue view: a queue name is required (fairway queue view NAME)")
        _print(client.call("GET", f"queues/{name}/"), args.output, _print_queue_detail)
    elif action == "list":
        queues = client.list_all("queues/")
        if not queues and args.output == "table":
            print("No resources found")
            return EXIT_OK
        _print(queues, args.output, lambda d: _table([_queue_row(q) for q in d], LIST_COLUMNS))
    elif action == "operate":
        if args.action in ("open", "close"):
            result = client.call("POST", f"queues/{args.name}/{args.action}/")
            _print(
                result,
                args.output,
                lambda d: print(
                    "\n".join(f"queue {k}: {v['state']}" for k, v in d["changed"].items())
                    or f"queue {args.name} already {d['queue']['state']}"
                ),
            )
        else:
            if args.weight is None:
                raise SystemExit("fairway: queue operate -a update needs -w/--weight")
            q = client.call("PATCH", f"queues/{args.name}/", {"weight": args.weight})
            _print(q, args.output, lambda d: print(f"queue {d['name']} updated: weight {d['weight']}"))
    elif action == "delete":
        name = args.name_pos or args.name
        if not name:
            raise SystemExit("fairway: queue delete: a queue name is required")
        params = {"cascade": str(args.cascade).lower(), "force": str(args.force).lower()}
        client.call("DELETE", f"queues/{name}/", params=params)
        if args.output == "table":
            print(f"queue {name} deleted")
    elif action == "tree":
        _print(client.call("GET", "queues/tree/"), args.output, _print_tree)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairway", description="Fairway control plane command line")
    parser.add_argument(
        "--server",
        default=os.environ.get("FAIRWAY_URL", "http://127.0.0.1:8000"),
        help="control plane URL (env FAIRWAY_URL)",
    )
    parser.add_argument("--token", default=os.environ.get("FAIRWAY_TOKEN"), help="API token (env FAIRWAY_TOKEN)")
    sub = parser.add_subparsers(dest="command", required=True)

    queue = sub.add_parser("queue", help="manage queues")
    qsub = queue.add_subparsers(dest="queue_cmd", required=True)

    def out(p: argparse.ArgumentParser) -> None:
        p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")

    create = qsub.add_parser("create", help="create a queue")
    create.add_argument("-n", "--name", required=True)
    create.add_argument("-w", "--weight", type=int, default=1)
    create.add_argument("-p", "--parent")
    create.add_argument("-S", "--state", choices=("Open", "Closed"), default="Open")
    create.add_argument("--capability", help="e.g. cpu=8,memory=16Gi")
    create.add_argument("--deserved")
    create.add_argument("--guarantee")
    create.add_argument("--priority", type=int)
    create.add_argument("--reclaimable", choices=("true", "false"))
    out(create)
    for alias in ("view", "get"):
        view = qsub.add_parser(alias, help="show one queue")
        view.add_argument("name_pos", nargs="?", metavar="NAME")
        view.add_argument("-n", "--name")
        out(view)
    lst = qsub.add_parser("list", help="list queues")
    out(lst)
    operate = qsub.add_parser("operate", help="open, close or update a queue")
    operate.add_argument("-n", "--name", required=True)
    operate.add_argument("-a", "--action", required=True, choices=("open", "close", "update"))
    operate.add_argument("-w", "--weight", type=int)
    out(operate)
    delete = qsub.add_parser("delete", help="delete a queue")
    delete.add_argument("name_pos", nargs="?", metavar="NAME")
    delete.add_argument("-n", "--name")
    delete.add_argument("--cascade", action="store_true", help="delete its child queues first")
    delete.add_argument("--force", action="store_true", help="also delete the podgroups and pods inside")
    out(delete)
    tree = qsub.add_parser("tree", help="show the queue hierarchy")
    out(tree)

    from controlplane import simulate_cli

    simulate_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "simulate":
        from controlplane import simulate_cli

        return simulate_cli.run(args)
    client = Client(args.server, args.token)
    try:
        return cmd_queue(args, client)
    except ApiError as exc:
        for line in exc.lines:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_API_ERROR


if __name__ == "__main__":
    sys.exit(main())
