"""``fairway cluster list|show|delete``: the clusters, one with its nodes' totals, and deleting one (with what it
holds only with ``--force``)."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client
from controlplane.cli.node import resource_rows, state
from controlplane.cli.output import details, emit, emit_list, table
from engine.wording import duration, plural

LIST_COLUMNS = ("Name", "Source", "Trees from", "Simulated", "Description")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    cluster = sub.add_parser("cluster", help="clusters: list, show one, delete", parents=[common])
    csub = cluster.add_subparsers(dest="cluster_cmd", required=True, metavar="COMMAND")
    csub.add_parser("list", help="list clusters", parents=[common])
    for alias in ("show", "view", "get"):
        show = csub.add_parser(alias, help="one cluster: its settings, nodes and their totals", parents=[common])
        show.add_argument("name", metavar="NAME")
    delete = csub.add_parser(
        "delete",
        help="delete a cluster; one that holds nodes, podgroups or pods only with --force",
        parents=[common],
    )
    delete.add_argument("name", metavar="NAME")
    delete.add_argument(
        "--force",
        action="store_true",
        help="also delete its nodes, podgroups and pods (its running session finishes first)",
    )


def _row(c: dict[str, Any]) -> list[Any]:
    trees = c.get("tree_source", "") if c.get("source") == "kubernetes" else ""
    return [c["name"], c.get("source", ""), trees, "yes" if c.get("simulated") else "no", c.get("description", "")]


def totals(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The nodes' amounts added up (as one node's fields, so ``node.resource_rows`` words them) and their states."""
    from engine.resources import format_quantity, parse_quantity

    sums: dict[str, dict[str, int]] = {"allocatable": {}, "allocated": {}, "reserved": {}}
    states: dict[str, int] = {}
    for n in nodes:
        states[state(n)] = states.get(state(n), 0) + 1
        for key, into in sums.items():
            for resource, quantity in (n.get(key) or {}).items():
                if quantity is not None:
                    into[resource] = into.get(resource, 0) + parse_quantity(quantity, resource)
    return {
        "nodes": len(nodes),
        "states": states,
        **{key: {r: format_quantity(v, r) for r, v in into.items()} for key, into in sums.items()},
    }


def print_cluster(data: dict[str, Any]) -> None:
    c, nodes = data["cluster"], data["nodes"]
    trees = c.get("tree_source", "") if c.get("source") == "kubernetes" else "fairway"
    details(
        [
            ("Name", c["name"]),
            ("Description", c.get("description") or "-"),
            ("Source", c.get("source", "-")),
            ("Trees from", trees),
            ("Simulated", "yes" if c.get("simulated") else "no"),
            ("Node heartbeat timeout", duration(c.get("node_heartbeat_timeout") or 0)),
            ("Pod eviction timeout", duration(c.get("pod_eviction_timeout") or 0)),
            ("Created", (c.get("created") or "")[:19].replace("T", " ") or "-"),
            (
                "Nodes",
                plural(nodes["nodes"], "node")
                + (
                    " (" + ", ".join(f"{n} {s}" for s, n in sorted(nodes["states"].items())) + ")"
                    if nodes["nodes"]
                    else ""
                ),
            ),
        ]
    )
    rows = resource_rows(nodes)
    if rows:
        print()
        table(rows, ("Resource", "Allocatable", "Allocated", "Reserved", "Free"))
    policy = (c.get("scheduler_policy") or "").strip()
    if policy:
        print("\nScheduler policy:")
        for line in policy.splitlines():
            print(f"  {line}")


def run(args: argparse.Namespace, client: Client) -> int:
    if args.cluster_cmd == "list":
        emit_list(client.list_all("clusters/"), args.output, "No clusters found", _row, LIST_COLUMNS)
        return EXIT_OK
    if args.cluster_cmd in ("show", "view", "get"):
        cluster = client.call("GET", f"clusters/{args.name}/", obj=f'cluster "{args.name}"')
        nodes = totals(client.list_all("nodes/", {"cluster": args.name}))
        emit({"cluster": cluster, "nodes": nodes}, args.output, print_cluster)
        return EXIT_OK
    obj = f'cluster "{args.name}"'
    client.call("DELETE", f"clusters/{args.name}/", params={"force": str(args.force).lower()}, obj=obj)
    if args.output == "table":
        print(f"cluster {args.name} deleted")
    return EXIT_OK
