"""``fairway trace export --cluster NAME --since 7d -o trace.jsonl``: what happened on a cluster as a trace
(``GET /api/v1/trace/``; the format: ``docs/replay.md``), for ``fairway replay``. Admins only.

``fairway trace generate --tree FILE --hours N [--seed S] [--period P] -o trace.jsonl`` writes the demo's workload as a
trace, offline (no server): ``engine.replay.workload.generate``, the demo's generator run against the replay.

``-o FILE`` here names the file written (``-`` or none: standard output), not an output format: a trace has one."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controlplane.cli.client import EXIT_OK, ApiError, Client, UsageError, error_lines
from controlplane.cli.eviction import moment


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("trace", help="export what happened on a cluster as a trace for fairway replay (admins)")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    export = verbs.add_parser(
        "export",
        help="write the jobs, the tree and its edits since a moment as JSON Lines",
        description="Write the cluster's trace (jobs submitted since --since, the tree at that moment and its edits).",
    )
    export.add_argument("--server", default=argparse.SUPPRESS, help="control plane URL (env FAIRWAY_URL)")
    export.add_argument("--token", default=argparse.SUPPRESS, help="API token (env FAIRWAY_TOKEN)")
    export.add_argument("--cluster", help="which cluster (default: the default cluster)")
    export.add_argument(
        "--since", required=True, help="the window's start: a span back from now (30m, 2h, 7d) or a moment (UTC)"
    )
    export.add_argument("--period", type=float, help="the session period to write (seconds; default: the beat's)")
    export.add_argument("-o", "--output-file", dest="file", metavar="FILE", help="write to FILE ('-': stdout)")
    gen = verbs.add_parser(
        "generate",
        help="write the demo's workload as a trace, offline (no server)",
        description="Run the demo's workload generator against the replay (no database, no server) and write what "
        "it submitted, with the starts and finishes the replay gave it, as a trace for fairway replay.",
    )
    gen.add_argument(
        "--tree", required=True, metavar="FILE", help="the tree, nodes and policy: manifests, or a trace (its Tree)"
    )
    gen.add_argument("--hours", type=float, required=True, help="how long a workload (hours of virtual time)")
    gen.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    gen.add_argument(
        "--period", type=int, default=2, help="the session period (seconds, a multiple of the generator's beat, 2 s)"
    )
    gen.add_argument("--cluster", default="default", help="the cluster's name, which seeds the draws with --seed")
    gen.add_argument("--start", default="2026-03-02T08:00:00Z", help="the window's start (UTC; default as the soak)")
    gen.add_argument("-o", "--output-file", dest="file", metavar="FILE", help="write to FILE ('-': stdout)")


def _generate(args: argparse.Namespace) -> int:
    """``trace generate``: offline; bad input is a usage error naming the flag or the file."""
    import yaml

    from engine.flavors import unflavored
    from engine.manifests import ManifestError, load_manifests
    from engine.replay import TraceError, read_trace, trace_lines
    from engine.replay.loop import ReplayError, tree_snapshot
    from engine.replay.trace import parse_time
    from engine.replay.workload import BEAT_SECONDS, generate

    if not args.hours > 0:
        raise UsageError(f"--hours: must be a number of hours greater than 0, got {args.hours}")
    if not (args.period >= BEAT_SECONDS and args.period % BEAT_SECONDS == 0):
        raise UsageError(f"--period: must be a multiple of the generator's beat, {BEAT_SECONDS} s, got {args.period}")
    try:
        start = parse_time(args.start, "--start")
    except TraceError as exc:
        raise UsageError(str(exc)) from None
    try:
        text = Path(args.tree).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--tree: {args.tree}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        if text.lstrip().startswith("{"):
            objects = read_trace(text.splitlines(), args.tree).tree
            if objects is None:
                raise UsageError(f"--tree: {args.tree}: the trace holds no Tree")
            tree = tree_snapshot(objects, args.tree)
        else:
            tree = unflavored(load_manifests([(args.tree, text)]).snapshot)  # replay: one flavor per resource
            objects = [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]
    except (TraceError, ManifestError, ReplayError, yaml.YAMLError) as exc:
        raise UsageError(f"--tree: {str(exc).splitlines()[0]}") from None
    trace = generate(
        tree, objects, start=start, hours=args.hours, period=args.period, seed=args.seed, cluster=args.cluster
    )
    lines = (line + "\n" for line in trace_lines(trace))
    if not args.file or args.file == "-":
        sys.stdout.writelines(lines)
        return EXIT_OK
    path = Path(args.file)
    with path.open("w", encoding="utf-8") as fh:
        fh.writelines(lines)
    print(f"wrote {path}: {len(trace.jobs)} jobs", file=sys.stderr)
    return EXIT_OK


def run(args: argparse.Namespace, client: Client) -> int:
    if args.verb == "generate":
        return _generate(args)
    import requests

    params = {"since": moment(args.since, "--since", datetime.now(UTC))}
    if args.cluster:
        params["cluster"] = args.cluster
    if args.period is not None:
        if not args.period > 0:
            raise UsageError(f"--period: must be a number of seconds greater than 0, got {args.period}")
        params["period"] = str(args.period)
    try:
        resp = client.session.get(f"{client.server}/api/v1/trace/", params=params, timeout=600, stream=True)
    except requests.RequestException as exc:
        raise ApiError(0, [f"cannot reach {client.server}: {exc.__class__.__name__}: {exc}"]) from exc
    if resp.status_code >= 400:
        raise ApiError(resp.status_code, error_lines(resp, "trace"))
    if not args.file or args.file == "-":
        for chunk in resp.iter_content(chunk_size=65536, decode_unicode=True):
            sys.stdout.write(chunk)
        return EXIT_OK
    path = Path(args.file)
    with path.open("wb") as fh:
        for chunk in resp.iter_content(chunk_size=65536):
            fh.write(chunk)
    print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK
