"""``fairway cluster list|delete``: the clusters, and deleting one (with what it holds only with ``--force``)."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client
from controlplane.cli.output import emit_list

LIST_COLUMNS = ("Name", "Source", "Trees from", "Simulated", "Description")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    cluster = sub.add_parser("cluster", help="clusters: list, delete", parents=[common])
    csub = cluster.add_subparsers(dest="cluster_cmd", required=True, metavar="COMMAND")
    csub.add_parser("list", help="list clusters", parents=[common])
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


def run(args: argparse.Namespace, client: Client) -> int:
    if args.cluster_cmd == "list":
        emit_list(client.list_all("clusters/"), args.output, "No clusters found", _row, LIST_COLUMNS)
        return EXIT_OK
    obj = f'cluster "{args.name}"'
    client.call("DELETE", f"clusters/{args.name}/", params={"force": str(args.force).lower()}, obj=obj)
    if args.output == "table":
        print(f"cluster {args.name} deleted")
    return EXIT_OK
