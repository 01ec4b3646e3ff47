"""``fairway request create|loan|list|show|approve|reject|withdraw``: change requests (``/api/v1/change-requests/``).

``create -f changes.yaml`` files the changes (the what-if change language, as ``fairway whatif`` reads it) and prints
what it asks for and what it would do; ``loan --from vision --to nlp --amount nvidia.com/gpu=2 --for 3d`` asks a
sibling for a time-bounded loan of guarantee (or min), returned automatically at its end; ``approve`` applies it (or
reports it stale), ``reject`` needs a comment.
"""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import details, emit, emit_list, table
from controlplane.cli.whatif import _read
from controlplane.cli.whatif import rows as value_rows
from engine.wording import duration, duration_or, plural

STATUSES = ("open", "applied", "rejected", "withdrawn", "stale", "returned")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "request",
        help="ask for a change of your subtree, and approve or reject the ones you review",
        parents=[common],
        description="Change requests: a team lead asks for a change of its own subtree (amounts, weights, limits, a "
        "new child queue or quota group); its department lead or an admin approves (which applies it) or rejects it.",
    )
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    c = verbs.add_parser("create", help="file a change request", parents=[common])
    c.add_argument("-f", "--filename", required=True, metavar="FILE", help="the changes, YAML or JSON ('-' is stdin)")
    c.add_argument("--reason", default="", help="why you ask (your approver reads it)")
    c.add_argument("--cluster", help="the cluster of the what-if (default: the default cluster)")
    lo = verbs.add_parser("loan", help="borrow guarantee (or min) from a sibling for a while", parents=[common])
    lo.add_argument("--from", dest="lender", required=True, metavar="SIBLING", help="the lending sibling")
    lo.add_argument("--to", dest="borrower", required=True, metavar="NODE", help="your queue or quota group")
    lo.add_argument(
        "--quota-group", action="store_true", help="the nodes are quota groups (their min); default: queues"
    )
    lo.add_argument("--field", help="what is lent: guarantee (default) or deserved of a queue, min of a quota group")
    lo.add_argument(
        "--amount",
        action="append",
        required=True,
        metavar="RESOURCE=QUANTITY",
        help="what is lent, e.g. nvidia.com/gpu=2 (repeat for several resources)",
    )
    lo.add_argument("--for", dest="duration", required=True, metavar="LENGTH", help="how long: 3d, 12h, 1d12h, 90m")
    lo.add_argument("--reason", default="", help="why you ask (the lender's lead reads it)")
    lo.add_argument("--cluster", help="the cluster of the what-if (default: the default cluster)")
    ls = verbs.add_parser("list", help="list the requests you filed or may review", parents=[common])
    ls.add_argument("--status", choices=STATUSES)
    ls.add_argument("--mine", action="store_true", help="only the ones you filed")
    ls.add_argument("--to-review", action="store_true", help="only the open ones you may approve or reject")
    show = verbs.add_parser("show", help="one request with its what-if", parents=[common])
    show.add_argument("id", type=int)
    a = verbs.add_parser("approve", help="approve and apply a request", parents=[common])
    a.add_argument("id", type=int)
    a.add_argument("--comment", default="")
    a.add_argument(
        "-f", "--filename", metavar="FILE", help="approve this amended list of changes instead (e.g. with room made)"
    )
    r = verbs.add_parser("reject", help="reject a request (a comment is required)", parents=[common])
    r.add_argument("id", type=int)
    r.add_argument("--comment", required=True)
    w = verbs.add_parser("withdraw", help="withdraw your own request", parents=[common])
    w.add_argument("id", type=int)
    w.add_argument("--comment", default="")


def _row(item: dict[str, Any]) -> list[Any]:
    return [
        f"#{item['id']}",
        item["status"],
        item.get("requester") or "-",
        (item.get("created") or "")[:16].replace("T", " "),
        item.get("reviewer") or "-",
        item["summary"],
    ]


def print_request(item: dict[str, Any]) -> None:
    pairs: list[tuple[str, Any]] = [
        ("Request", f"#{item['id']}: {item['summary']}"),
        ("Status", item["status"]),
        ("Requested by", item.get("requester") or "-"),
        ("Filed (UTC)", (item.get("created") or "")[:16].replace("T", " ")),
    ]
    if item.get("reason"):
        pairs.append(("Why", item["reason"]))
    if item.get("reviewer"):
        pairs.append(("Decided by", item["reviewer"]))
    if item.get("comment"):
        pairs.append(("Comment", item["comment"]))
    if item.get("outcome"):
        pairs.append(("Outcome", item["outcome"]))
    if item.get("return_problem"):
        pairs.append(("Return", item["return_problem"]))
    details(pairs)
    for room in item.get("needs_room") or []:
        print(f"does not fit yet: {room['message']}")
    asked = [
        [c["kind"].replace("_", "-"), c["name"], f["field"], f["before"] or "-", f["after"]]
        for c in (item.get("whatif") or {}).get("requested", [])
        for f in c["fields"]
    ]
    if asked:
        print()
        table(asked, ("Kind", "Name", "Field", "Now", "Asked"))
    values = (item.get("whatif") or {}).get("values") or {}
    diff = {
        "diff": {
            s: {n: {f: 0 for f in v} if not ("added" in v or "removed" in v) else v for n, v in nodes.items()}
            for s, nodes in values.items()
        },
        "before": {
            s: {n: {f: p["before"] for f, p in v.items() if isinstance(p, dict)} for n, v in nodes.items()}
            for s, nodes in values.items()
        },
        "after": {
            s: {n: {f: p["after"] for f, p in v.items() if isinstance(p, dict)} for n, v in nodes.items()}
            for s, nodes in values.items()
        },
    }
    changed = [r[:5] for r in value_rows(diff)]
    if changed:
        print()
        table(changed, ("Kind", "Name", "Value", "Before", "After"))


def print_effect(effect: dict[str, Any]) -> None:
    """What an applied request did (``GET .../effect/``): each node's waits before it was applied and since."""
    if not effect.get("nodes"):
        return
    span = duration(effect["span_seconds"])

    rows = [
        [
            "queue" if n["tree"] == "queue" else "quota-group",
            n["name"],
            str(n["before"]["jobs_started"]),
            duration_or(n["before"]["wait_p50_seconds"], "-"),
            duration_or(n["before"]["wait_p95_seconds"], "-"),
            str(n["since"]["jobs_started"]),
            duration_or(n["since"]["wait_p50_seconds"], "-"),
            duration_or(n["since"]["wait_p95_seconds"], "-"),
            str(n["since"]["jobs_waiting"]),
        ]
        for n in effect["nodes"]
    ]
    print(f"\nSince it was applied: the waits to start of the jobs submitted in the {span} before and the {span} since")
    table(rows, ("Kind", "Name", "Started before", "p50", "p95", "Started since", "p50", "p95", "Still waiting"))


def run(args: argparse.Namespace, client: Client) -> int:
    if args.verb == "create":
        body: dict[str, Any] = {"changes": _read(args.filename)["changes"], "reason": args.reason}
        if args.cluster:
            body["cluster"] = args.cluster
        item = client.call("POST", "change-requests/", body, obj=f"change request {args.filename}")
        emit(item, args.output, print_request)
        return EXIT_OK
    if args.verb == "loan":
        amounts: dict[str, str] = {}
        for text in args.amount:
            name, sep, quantity = text.partition("=")
            if not sep or not name or not quantity:
                raise UsageError(f"--amount {text!r}: expected RESOURCE=QUANTITY, e.g. nvidia.com/gpu=2")
            amounts[name.strip()] = quantity.strip()
        loan = {
            "kind": "quota_group" if args.quota_group else "queue",
            "from": args.lender,
            "to": args.borrower,
            "amounts": amounts,
            "duration": args.duration,
        }
        if args.field:
            loan["field"] = args.field
        body = {"loan": loan, "reason": args.reason}
        if args.cluster:
            body["cluster"] = args.cluster
        item = client.call("POST", "change-requests/", body, obj=f"loan from {args.lender}")
        emit(item, args.output, print_request)
        return EXIT_OK
    if args.verb == "list":
        params = {"status": args.status} if args.status else {}
        if args.mine:
            params["mine"] = "true"
        if args.to_review:
            params["to_review"] = "true"
        items = client.list_all("change-requests/", params)
        columns = ("ID", "Status", "Requested by", "Filed (UTC)", "Decided by", "Summary")
        emit_list(items, args.output, "No change requests.", _row, columns)
        if items and args.output == "table":
            print(f"{plural(len(items), 'request')}.")
        return EXIT_OK
    obj = f"change request #{args.id}"
    if args.verb == "show":
        item = client.call("GET", f"change-requests/{args.id}/", obj=obj)
        if args.output != "table" or item.get("status") not in ("applied", "returned"):
            emit(item, args.output, print_request)
            return EXIT_OK
        print_request(item)
        print_effect(client.call("GET", f"change-requests/{args.id}/effect/", obj=obj))
        return EXIT_OK
    decision: dict[str, Any] = {"comment": args.comment}
    if args.verb == "approve" and args.filename:
        decision["changes"] = _read(args.filename)["changes"]
    if args.verb == "reject" and not args.comment.strip():
        raise UsageError("reject needs --comment: the requester reads why")
    item = client.call("POST", f"change-requests/{args.id}/{args.verb}/", decision, obj=obj)
    emit(item, args.output, print_request)
    return EXIT_OK
