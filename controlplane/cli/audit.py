"""``fairway audit``: the fairness audit of a cluster's trees (``GET /api/v1/audit/``, admins only): who is
starved while siblings borrow, who lends, which guarantees sat idle over the window, and each node's use against
what it is entitled to, and how long the jobs submitted in the window waited to start, per node.

fairway audit [--cluster C] [--days N] [--team T]
"""

from __future__ import annotations

import argparse
from typing import Any

from controlplane.cli.client import EXIT_OK, Client
from controlplane.cli.output import emit, table
from engine.resources import QuantityError, parse_quantity
from engine.wording import amount, duration, duration_or, plural

TREES = {"queue": "queue", "quota": "quota group"}


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    audit = sub.add_parser(
        "audit",
        help="the fairness audit: starved nodes, lending, idle guarantees, use over time, waits to start",
        parents=[common],
    )
    audit.add_argument("--cluster", help="the cluster (default: the server's default cluster)")
    audit.add_argument("--days", type=int, help="the window of the history, 1 to 31 days (default 7)")
    audit.add_argument("--team", help="only this team's subtrees (a team you may read)")


def words(quantity: str | None, resource: str) -> str:
    """An audit amount as people say it: ``12 cores``, ``96 GiB``, ``4 GPUs``."""
    if quantity is None:
        return "unlimited"
    try:
        return amount(parse_quantity(quantity, resource), resource)
    except QuantityError:  # not ours to judge: print what the server sent
        return quantity


def _node(entry: dict[str, Any]) -> list[str]:
    return [TREES.get(entry["tree"], entry["tree"]), entry["name"], entry["resource"]]


def _hours(hours: float) -> str:
    return duration(hours * 3600.0)


def print_audit(data: dict[str, Any]) -> None:
    window = data["window_days"]
    where = f"cluster {data['cluster']}" if data.get("cluster") else "the default cluster"
    team = f", the subtrees of team {data['team']}" if data.get("team") else ""
    print(f"Fairness audit of {where}{team}, over the last {duration(window * 86400.0)}")

    def section(title: str, rows: list[list[str]], columns: tuple[str, ...], empty: str) -> None:
        print(f"\n{title} ({len(rows)}):" if rows else f"\n{title}: {empty}")
        if rows:
            table(rows, columns)

    section(
        "Starved while siblings borrow",
        [
            [
                *_node(s),
                words(s["waiting"], s["resource"]),
                words(s["held"], s["resource"]),
                words(s["entitled"], s["resource"]),
                words(s["shortfall"], s["resource"]),
                ", ".join(f"{b['name']} ({words(b['borrowed'], s['resource'])})" for b in s["borrowers"]) or "-",
            ]
            for s in data["starved"]
        ],
        ("Tree", "Node", "Resource", "Waiting", "Holds", "Entitled to", "Short of", "Borrowed by"),
        "none",
    )
    section(
        "Lending",
        [
            [*_node(x), words(x["lent"], x["resource"]), words(x["lendable_now"], x["resource"])]
            for x in data["lending"]
        ],
        ("Tree", "Node", "Resource", "Lent", "Could lend now"),
        "none",
    )
    section(
        "Guarantees idle over the window",
        [
            [
                *_node(i),
                words(i["guaranteed"], i["resource"]),
                words(i["average_used"], i["resource"]),
                words(i["peak_used"], i["resource"]),
                words(i["freeable"], i["resource"]),
                _hours(i["covered_hours"]),
            ]
            for i in data["idle_guarantees"]
        ],
        ("Tree", "Node", "Resource", "Guaranteed", "Average use", "Peak use", "Could free", "Samples cover"),
        "none",
    )
    section(
        "Use against entitlement over the window",
        [
            [
                *_node(u),
                words(u["average_used"], u["resource"]),
                words(u["average_entitled"], u["resource"]),
                "-" if u["ratio"] is None else f"{u['ratio']:g}",
                _hours(u["covered_hours"]),
            ]
            for u in data["usage_over_time"]
        ],
        ("Tree", "Node", "Resource", "Average use", "Average entitled to", "Use / entitled", "Samples cover"),
        f"no samples recorded in the last {plural(round(window), 'day')}",
    )
    section(
        "Waits to start of the jobs submitted in the window, subtrees included",
        [
            [
                TREES.get(w["tree"], w["tree"]),
                w["name"],
                str(w["jobs_started"]),
                duration_or(w["wait_p50_seconds"], "-"),
                duration_or(w["wait_p95_seconds"], "-"),
                duration_or(w["wait_max_seconds"], "-"),
                str(w["jobs_waiting"]),
                str(w["jobs_finished"]),
                str(w["preempted_pods"]),
                str(w["recycled_pods"]),
            ]
            for w in data.get("waits", [])
        ],
        (
            "Tree",
            "Node",
            "Started",
            "Wait p50",
            "Wait p95",
            "Longest",
            "Still waiting",
            "Finished",
            "Pods preempted",
            "Pods recycled",
        ),
        f"no job submitted in the last {plural(round(window), 'day')}",
    )
    section(
        "Per submitter (a job of no known user counts for its namespace), the most GPU-hours first",
        [
            [
                w["name"],
                f"{w['gpu_hours']:,.1f}",
                str(w["jobs_started"]),
                duration_or(w["wait_p50_seconds"], "-"),
                duration_or(w["wait_p95_seconds"], "-"),
                str(w["jobs_waiting"]),
                str(w["preempted_pods"]),
                str(w["recycled_pods"]),
            ]
            for w in data.get("submitters", [])
        ],
        (
            "Submitter",
            "GPU-hours",
            "Started",
            "Wait p50",
            "Wait p95",
            "Still waiting",
            "Pods preempted",
            "Pods recycled",
        ),
        f"no job submitted in the last {plural(round(window), 'day')}",
    )


def run(args: argparse.Namespace, client: Client) -> int:
    asked = (("cluster", args.cluster), ("days", args.days), ("team", args.team))
    params = {k: str(v) for k, v in asked if v is not None}
    result = client.call("GET", "audit/", params=params or None)
    if args.output != "table":
        emit(result, args.output, print_audit)
        return EXIT_OK
    print_audit({"cluster": args.cluster, "team": args.team, **result})
    return EXIT_OK
