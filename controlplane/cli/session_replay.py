"""``fairway replay session ID [--cluster NAME] [--explain NS/NAME] [-o json]``: re-run one recorded session on the
server and say whether it decides the same (``GET /api/v1/sessions/{id}/replay/``); ``--at 14:02`` instead of an id
picks the session in force then; ``fairway replay sessions [--cluster NAME]`` lists the recorded sessions. Admins
only (``planning.session_replay``, ``docs/replay.md``)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from controlplane.cli.client import EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, ApiError, Client, UsageError
from controlplane.cli.eviction import moment
from controlplane.cli.output import table

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")


def at_moment(text: str, now: datetime) -> str:
    """``--at``: a time of day (UTC; today's, or yesterday's when today's is still to come), a span back from now
    (``2h``) or a moment (``2026-11-29T14:02``), as the API's ISO 8601 moment."""
    clock = _CLOCK.match(text)
    if clock:
        hour, minute, second = int(clock.group(1)), int(clock.group(2)), int(clock.group(3) or 0)
        if hour > 23 or minute > 59 or second > 59:
            raise UsageError(f"--at: {text!r} is not a time of day")
        day = now.astimezone(UTC).replace(hour=hour, minute=minute, second=second, microsecond=0)
        if day > now:
            day -= timedelta(days=1)
        return day.isoformat()
    return moment(text, "--at", now)


def _usage(args: argparse.Namespace) -> tuple[str, int | None]:
    target = list(args.target)
    verb = target[0]
    if verb == "sessions":
        if len(target) > 1:
            raise UsageError("replay sessions takes no argument (use --cluster)")
        return verb, None
    if verb != "session":
        raise UsageError(f"replay: unknown {verb!r}: 'session ID', 'session --at T' or 'sessions' (or -f FILE)")
    if args.filename:
        raise UsageError("replay session: -f is for a trace; a recorded session is named by its id or --at")
    if len(target) > 2:
        raise UsageError("replay session takes one session id")
    if len(target) == 2:
        if args.at:
            raise UsageError("replay session: give a session id or --at, not both")
        try:
            return verb, int(target[1])
        except ValueError:
            raise UsageError(f"replay session: the session id is a number, got {target[1]!r}") from None
    if not args.at:
        raise UsageError("replay session: give the session's id (fairway replay sessions lists them) or --at T")
    return verb, None


def _print_list(data: dict[str, Any]) -> None:
    rows = [[s["session"], s["time"], s["kind"], s["bound"], s["evicted"], s["digest"][:12]] for s in data["sessions"]]
    if not rows:
        print(f"no recorded session of cluster {data['cluster']} (kept {data['retention_hours']:g} h)")
        return
    table(rows, ["SESSION", "OPENED", "RECORD", "BOUND", "EVICTED", "DECISIONS"])


def _print_replay(data: dict[str, Any]) -> None:
    inputs = data["inputs"]
    print(
        f"Session {data['session']} of cluster {data['cluster']}, opened {data['time']}: replayed from the keyframe "
        f"of session {inputs['keyframe']} and {inputs['deltas']} delta(s) ({inputs['nodes']} nodes, "
        f"{inputs['pods']} pods, {inputs['podgroups']} jobs)"
    )
    rec, rep = data["recorded"], data["replayed"]
    print(
        f"Recorded: {rec['bound']} bound, {rec['pipelined']} pipelined, {rec['evicted']} evicted, "
        f"{rec['podgroups']} job statuses"
    )
    if data["identical"]:
        print("Replayed: identical decisions")
    else:
        print(
            f"Replayed: {rep['bound']} bound, {rep['pipelined']} pipelined, {rep['evicted']} evicted, "
            f"{rep['podgroups']} job statuses; {len(data['differences'])} difference(s):"
        )
        for line in data["differences"]:
            print(f"  - {line}")
    explained = data.get("explain")
    if explained:
        print(f"\nWhy ({explained['target']}, job {explained['job']}, queue {explained['queue'] or '-'}):")
        for line in explained["sentences"]:
            print(f"  {line}")
        for e in explained["evictions"]:
            if e.get("preemptor"):
                print(
                    f"  for {e['preemptor']} (job {e.get('preemptor_job') or '-'}, queue "
                    f"{e.get('preemptor_queue') or '-'}); victims taken for it, in order: "
                    + ", ".join(e["victims_of_preemptor"])
                )
        for queue, steps in explained["queue_values"].items():
            print(f"\n  Queue {queue} when the session opened:")
            for step in steps:
                detail = step.get("detail") or ""
                print(f"    {step.get('quantity')}{'/' + step['resource'] if step.get('resource') else ''}: {detail}")


def run(args: argparse.Namespace) -> int:
    try:
        verb, session_id = _usage(args)
        params: dict[str, str] = {}
        if args.cluster:
            params["cluster"] = args.cluster
        client = Client(args.server, args.token)
        if verb == "sessions":
            params["limit"] = str(max(1, min(args.limit, 1000)))
            data = client.call("GET", "sessions/recorded/", params=params)
            printer = _print_list
        else:
            if args.explain:
                params["explain"] = args.explain
            if session_id is None:
                params["at"] = at_moment(args.at, datetime.now(UTC))
                data = client.call("GET", "sessions/replay/", params=params)
            else:
                data = client.call("GET", f"sessions/{session_id}/replay/", params=params)
            printer = _print_replay
    except UsageError as exc:
        print(f"fairway: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ApiError as exc:
        for line in exc.lines:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_API_ERROR
    if args.output == "json":
        print(json.dumps(data, indent=1))
    else:
        printer(data)
    return EXIT_OK
