"""``fairway namespace weight NAME [WEIGHT]``: a namespace's fair-share weight within its queue, read or set.
``fairway namespace labels NAME [KEY=VALUE ...] [KEY- ...]``: its labels (what a queue's Kueue ``namespaceSelector``
matches), shown, or changed as ``kubectl label`` changes them: ``KEY=VALUE`` sets, ``KEY-`` removes.
``fairway namespace local-queues [NAME]``: Kueue's LocalQueues (of one namespace, or all): the queue each points at,
its ``fairSharing.weight`` and the usage Admission Fair Sharing orders it by, per cluster."""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import emit, emit_list

LOCAL_QUEUE_COLUMNS = ("NAMESPACE", "NAME", "QUEUE", "WEIGHT", "USAGE")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    ns = sub.add_parser("namespace", help="namespaces' fair-share weights and labels", parents=[common])
    nsub = ns.add_subparsers(dest="namespace_cmd", required=True, metavar="COMMAND")
    weight = nsub.add_parser(
        "weight", help="show a namespace's weight, or set it when WEIGHT is given", parents=[common]
    )
    weight.add_argument("name", metavar="NAME")
    weight.add_argument("weight", nargs="?", type=int, metavar="WEIGHT", help="the new weight (1 or more)")
    labels = nsub.add_parser(
        "labels", help="show a namespace's labels, or change them (KEY=VALUE sets, KEY- removes)", parents=[common]
    )
    labels.add_argument("name", metavar="NAME")
    labels.add_argument("changes", nargs="*", metavar="KEY=VALUE|KEY-", help="labels to set or remove")
    local = nsub.add_parser(
        "local-queues",
        help="list Kueue's LocalQueues (of namespace NAME, or all): queue, weight, Admission Fair Sharing usage",
        parents=[common],
    )
    local.add_argument("name", nargs="?", metavar="NAME")


def _usage(usage: dict[str, dict[str, str]]) -> str:
    """Per cluster, the usage in people's units (``c1: cpu=2.5,memory=2Gi``); ``-`` before any session kept one."""
    parts = [
        f"{cluster}: " + (",".join(f"{r}={v}" for r, v in amounts.items()) or "0") for cluster, amounts in usage.items()
    ]
    return "; ".join(parts) or "-"


def _local_queue_row(q: dict[str, Any]) -> list[Any]:
    return [q["namespace"], q["name"], q["queue"], q["weight"], _usage(q.get("usage") or {})]


def _local_queues(args: argparse.Namespace, client: Client) -> int:
    items = client.list_all("local-queues/", {"namespace": args.name} if args.name else None)
    empty = f"No LocalQueues in namespace {args.name}" if args.name else "No LocalQueues found"
    emit_list(items, args.output, empty, _local_queue_row, LOCAL_QUEUE_COLUMNS)
    return EXIT_OK


def _show_labels(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "none"


def _changed_labels(before: dict[str, str], changes: list[str]) -> dict[str, str] | str:
    """``before`` with ``changes`` applied, or the sentence refusing the first change that is neither form."""
    after = dict(before)
    for change in changes:
        if "=" in change:
            key, _, value = change.partition("=")
            after[key] = value
        elif change.endswith("-") and len(change) > 1:
            if change[:-1] not in after:
                return f"label {change[:-1]} is not set on this namespace"
            del after[change[:-1]]
        else:
            return f"{change!r}: write KEY=VALUE to set a label or KEY- to remove one"
    return after


def _labels(args: argparse.Namespace, client: Client, obj: str) -> int:
    ns = client.call("GET", f"namespaces/{args.name}/", obj=obj)
    if not args.changes:
        emit(ns, args.output, lambda d: print(f"namespace {d['name']}: labels {_show_labels(d['labels'])}"))
        return EXIT_OK
    after = _changed_labels(ns["labels"], args.changes)
    if isinstance(after, str):
        raise UsageError(after)
    ns2 = client.call("PATCH", f"namespaces/{args.name}/", {"labels": after}, obj=obj)
    emit(
        ns2,
        args.output,
        lambda d: print(f"namespace {d['name']}: labels {_show_labels(ns['labels'])} -> {_show_labels(d['labels'])}"),
    )
    return EXIT_OK


def run(args: argparse.Namespace, client: Client) -> int:
    if args.namespace_cmd == "local-queues":
        return _local_queues(args, client)
    obj = f'namespace "{args.name}"'
    if args.namespace_cmd == "labels":
        return _labels(args, client, obj)
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
