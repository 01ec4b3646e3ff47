"""``fairway node``: a cluster's nodes, their state, what they offer and what their pods take of it.

fairway node list [--cluster C] [--state ready|notready|cordoned]
fairway node show NAME [--cluster C]

Amounts read as the nodes pages write them: cores, GiB, whole GPUs. ``allocated`` is what the pods running on the
node ask (Running, and Releasing until gone), ``reserved`` what pods placed there but not running yet ask.
"""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client
from controlplane.cli.output import details, emit, emit_list, fmt_resources, table
from engine.resources import QuantityError, parse_quantity
from engine.wording import amount

LIST_COLUMNS = ("Name", "Cluster", "State", "Pool", "Allocatable", "Allocated", "Reserved")
STATES = {"ready": "Ready", "notready": "NotReady", "cordoned": "cordoned", "set-aside": "set aside"}


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    node = sub.add_parser("node", help="nodes: list, show one", parents=[common])
    nsub = node.add_subparsers(dest="node_cmd", required=True, metavar="COMMAND")
    lst = nsub.add_parser("list", help="list nodes with what they offer and what their pods take", parents=[common])
    lst.add_argument("--cluster", help="only this cluster's nodes")
    lst.add_argument("--state", choices=sorted(STATES), help="only the nodes in this state")
    for alias in ("show", "view", "get"):
        show = nsub.add_parser(
            alias, help="one node: state, heartbeat, taints, its amounts per resource", parents=[common]
        )
        show.add_argument("name", metavar="NAME")
        show.add_argument("--cluster", help="the node's cluster (when names repeat across clusters)")


def state(node: dict[str, Any]) -> str:
    """As the nodes pages say it: NotReady, set aside (it reported more than a node may have), cordoned, Ready."""
    if not node.get("ready", True):
        return "NotReady"
    if node.get("set_aside"):
        return "set aside"
    return "cordoned" if node.get("unschedulable") else "Ready"


def _base(quantities: dict[str, str | None] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for resource, quantity in (quantities or {}).items():
        try:
            out[resource] = parse_quantity(quantity, resource) if quantity is not None else 0
        except QuantityError:
            continue  # not ours to judge: that row is left out of the sums
    return out


def resource_rows(node: dict[str, Any]) -> list[list[str]]:
    """Per resource the node offers (or its pods ask): allocatable, allocated, reserved and free, in words."""
    offered, allocated, reserved = (_base(node.get(k)) for k in ("allocatable", "allocated", "reserved"))
    rows = []
    for resource in sorted(set(offered) | set(allocated) | set(reserved)):
        total, used, held = offered.get(resource, 0), allocated.get(resource, 0), reserved.get(resource, 0)
        free = max(0, total - used - held)
        rows.append([resource, *(amount(v, resource) for v in (total, used, held, free))])
    return rows


def _time(text: str | None) -> str:
    return (text or "")[:19].replace("T", " ") or "-"


def print_node(node: dict[str, Any]) -> None:
    taints = [
        f"{t.get('key', '')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect', '')}"
        for t in node.get("taints") or []
    ]
    lines = [
        ("Name", node["name"]),
        ("Cluster", node.get("cluster", "-")),
        ("State", state(node)),
        ("Pool", node.get("pool") or "-"),
        ("Last heartbeat", _time(node.get("last_heartbeat"))),
        ("Taints", ", ".join(taints) or "-"),
        ("Labels", ", ".join(f"{k}={v}" for k, v in sorted((node.get("labels") or {}).items())) or "-"),
    ]
    if node.get("not_ready_since"):
        lines.insert(3, ("NotReady since", _time(node["not_ready_since"])))
    if node.get("set_aside"):
        lines.insert(3, ("Set aside", node["set_aside"]))
    details(lines)
    print()
    rows = resource_rows(node)
    if rows:
        table(rows, ("Resource", "Allocatable", "Allocated", "Reserved", "Free"))
    else:
        print("It offers nothing.")


def _row(n: dict[str, Any]) -> list[Any]:
    return [
        n["name"],
        n.get("cluster", ""),
        state(n),
        n.get("pool") or "-",
        fmt_resources(n.get("allocatable")),
        fmt_resources(n.get("allocated")),
        fmt_resources(n.get("reserved")),
    ]


def run(args: argparse.Namespace, client: Client) -> int:
    cluster = getattr(args, "cluster", None)
    if args.node_cmd == "list":
        nodes = client.list_all("nodes/", {"cluster": cluster} if cluster else None)
        if args.state:
            nodes = [n for n in nodes if state(n) == STATES[args.state]]
        emit_list(nodes, args.output, "No nodes found", _row, LIST_COLUMNS)
        return EXIT_OK
    node = client.call(
        "GET", f"nodes/{args.name}/", params={"cluster": cluster} if cluster else None, obj=f'node "{args.name}"'
    )
    emit(node, args.output, print_node)
    return EXIT_OK
