"""``fairway namespace weight NAME [WEIGHT]``: a namespace's fair-share weight within its queue, read or set."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client
from controlplane.cli.output import emit


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    ns = sub.add_parser("namespace", help="namespaces' fair-share weights", parents=[common])
    nsub = ns.add_subparsers(dest="namespace_cmd", required=True, metavar="COMMAND")
    weight = nsub.add_parser(
        "weight", help="show a namespace's weight, or set it when WEIGHT is given", parents=[common]
    )
    weight.add_argument("name", metavar="NAME")
    weight.add_argument("weight", nargs="?", type=int, metavar="WEIGHT", help="the new weight (1 or more)")


def run(args: argparse.Namespace, client: Client) -> int:
    obj = f'namespace "{args.name}"'
    if args.weight is None:
        ns = client.call("GET", f"namespaces/{args.name}/", obj=obj)
        emit(ns, args.output, lambda d: print(f"namespace {d['name']}: weight {d['weight']}"))
    else:
        before = client.call("GET", f"namespaces/{args.name}/", obj=obj)
        ns = client.call("PATCH", f"namespaces/{args.name}/", {"weight": args.weight}, obj=obj)
        emit(
            ns,
            args.output,
            lambda d: print(f"namespace {d['name']}: weight {before['weight']} -> {d['weight']}"),
        )
    return EXIT_OK
