"""``fairway eviction``: the pods the scheduler evicted, newest first, also of jobs already removed.

fairway eviction list [--team T] [--namespace NS] [--queue Q] [--quota-group G] [--job NS/NAME] [--action A]
                      [--since 2h|2026-11-28T14:00] [--until …] [--removed | --not-removed] [--cluster C] [--limit N]
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from controlplane.cli.client import EXIT_OK, Client, UsageError
from controlplane.cli.output import emit, table
from engine.wording import EVICTED, duration, plural

ACTIONS = ("reclaim", "preempt", "recycle", "node-lost", "gang-release", "suspend", "requeue")
DEFAULT_LIMIT = 100
_SPAN = re.compile(r"^\s*(\d+)\s*(s|m|min|h|d|w)\s*$")
_SPAN_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    ev = sub.add_parser("eviction", help="evictions: list a team's, a job's, a namespace's", parents=[common])
    esub = ev.add_subparsers(dest="eviction_cmd", required=True, metavar="COMMAND")
    lst = esub.add_parser("list", help="list evictions, newest first (also of jobs already removed)", parents=[common])
    lst.add_argument("--team", "-t", help="a team you belong to: the evictions of its jobs, as its team page lists")
    lst.add_argument("--namespace", "-N")
    lst.add_argument("--queue", "-q", help="the job's queue (exactly this queue)")
    lst.add_argument("--quota-group", "-g", help="the quota group the pod counted against")
    lst.add_argument("--job", "-j", metavar="[NAMESPACE/]NAME", help="one job (with its namespace) or a job name")
    lst.add_argument("--action", "-a", choices=ACTIONS)
    lst.add_argument("--since", help="a time span back from now (30m, 2h, 7d) or a moment (2026-11-28T14:00, UTC)")
    lst.add_argument("--until", help="like --since: only evictions before it")
    removed = lst.add_mutually_exclusive_group()
    removed.add_argument("--removed", dest="removed", action="store_const", const="true", help="of removed jobs only")
    removed.add_argument(
        "--not-removed", dest="removed", action="store_const", const="false", help="of jobs still there"
    )
    lst.add_argument("--cluster")
    lst.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"the newest N (default {DEFAULT_LIMIT}; 0: all of them)"
    )
    lst.add_argument("--json", action="store_true", help="print the API's evictions as JSON (as -o json)")


def moment(text: str, flag: str, now: datetime) -> str:
    """``--since``/``--until`` as the API's ISO 8601 moment (UTC): a span back from ``now`` or a moment."""
    span = _SPAN.match(text)
    if span:
        return (now - timedelta(seconds=int(span.group(1)) * _SPAN_SECONDS[span.group(2)])).isoformat()
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{flag}: expected a span back from now (30m, 2h, 7d) or a moment (2026-11-28T14:00), got {text!r}"
        ) from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def params_of(args: argparse.Namespace, now: datetime) -> dict[str, str]:
    params: dict[str, str] = {}
    for key, value in (
        ("team", args.team),
        ("namespace", args.namespace),
        ("queue", args.queue),
        ("quota_group", args.quota_group),
        ("action", args.action),
        ("removed", args.removed),
        ("cluster", args.cluster),
    ):
        if value:
            params[key] = value
    if args.job:
        ns, sep, name = args.job.rpartition("/")
        if sep and (not ns or not name or "/" in ns):
            raise UsageError(f"--job: expected NAMESPACE/NAME or NAME, got {args.job!r}")
        if ns and args.namespace and ns != args.namespace:
            raise UsageError(f"--job {args.job} names namespace {ns}, but --namespace is {args.namespace}")
        params["job"] = name
        if ns:
            params["namespace"] = ns
    if args.since:
        params["since"] = moment(args.since, "--since", now)
    if args.until:
        params["until"] = moment(args.until, "--until", now)
    return params


def _parse(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _when(text: str | None, now: datetime) -> str:
    at = _parse(text)
    if at is None:
        return text or "-"
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} ({duration((now - at).total_seconds())} ago)"


def _job(e: dict[str, Any]) -> str:
    if not e.get("job"):
        return "-"
    removed = _parse(e.get("job_removed_at"))
    gone = f" (removed {removed.astimezone(UTC):%m-%d %H:%M})" if removed else ""
    return f"{e['namespace']}/{e['job']}{gone}"


def print_evictions(data: dict[str, Any], now: datetime) -> None:
    rows = data["evictions"]
    if not rows:
        print("No evictions found")
        return
    # the cluster and the session when the rows span clusters: what `fairway replay session ID --explain` needs
    several = len({e.get("cluster") for e in rows}) > 1
    lead = ("Cluster", "Session") if several else ()
    table(
        [
            [
                *((e.get("cluster") or "-", str(e.get("session") or "-")) if several else ()),
                _when(e.get("created"), now),
                _job(e),
                e["pod"].partition("/")[2] or e["pod"],
                e.get("node") or "-",
                EVICTED.get(e["action"], e["action"]),
                e.get("message") or "-",
            ]
            for e in rows
        ],
        (*lead, "When (UTC)", "Job", "Pod", "Node", "What happened", "Why"),
    )
    total = data["total"]
    if total > len(rows):
        print(f"\nThe newest {len(rows)} of {plural(total, 'eviction')}; --limit 0 lists all of them.")
    else:
        print(f"\n{plural(total, 'eviction')}.")


def run(args: argparse.Namespace, client: Client) -> int:
    now = datetime.now(UTC)
    if args.limit < 0:
        raise UsageError(f"--limit: expected 0 (all) or more, got {args.limit}")
    params = params_of(args, now)
    if args.limit:
        page = client.call("GET", "evictions/", params={**params, "limit": str(args.limit), "offset": "0"})
        rows, total = page["results"], int(page["count"])
    else:
        rows = client.list_all("evictions/", params)
        total = len(rows)
    output = "json" if args.json else args.output
    if output == "table":
        print_evictions({"evictions": rows, "total": total}, now)
    else:
        emit(rows, output, lambda d: None)
    return EXIT_OK
