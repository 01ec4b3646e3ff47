"""The ``fairway`` command: the control plane from a terminal, through the REST API, and ``simulate`` offline.

    fairway queue create|view|list|operate|delete|tree          (like ``vcctl queue``)
    fairway quota-group create|view|list|update|delete|tree
    fairway job list|view|why
    fairway eviction list [--team T] [--namespace NS] [--job NS/NAME] [--since 2h]
    fairway whatif -f changes.yaml
    fairway namespace weight NAME [WEIGHT]|labels NAME [KEY=VALUE ...]|local-queues [NAME]
    fairway cluster list|show NAME|delete NAME [--force]
    fairway node list [--cluster C] [--state S]|show NAME
    fairway audit [--cluster C] [--days N] [--team T]
    fairway request create -f changes.yaml|list [--to-review]|show ID|approve ID|reject ID --comment C|withdraw ID
    fairway simulate -f cluster.yaml
    fairway trace export --since 7d -o trace.jsonl | replay -f trace.jsonl [--changes changes.yaml]

Global flags go anywhere on the line (``fairway -o json queue list`` = ``fairway queue list -o json``):
``--server``/``FAIRWAY_URL`` (default http://127.0.0.1:8000), ``--token``/``FAIRWAY_TOKEN``, ``-o table|json|yaml``.
Exit codes: 0 done, 1 the API refused or could not be reached (``error: queue "foo" not found``), 2 usage.
One module per command group; each has ``add_parser(sub, common)`` and ``run(args, client)``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from controlplane.cli import (
    audit,
    cluster,
    eviction,
    export,
    job,
    namespace,
    node,
    queue,
    quota_group,
    request,
    trace,
    whatif,
)
from controlplane.cli.client import EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, ApiError, Client, UsageError
from controlplane.cli.output import fmt_resources

__all__ = ["EXIT_API_ERROR", "EXIT_OK", "EXIT_USAGE", "build_parser", "entry", "main"]

_fmt_resources = fmt_resources  # the name older callers import
DEFAULT_SERVER = "http://127.0.0.1:8000"
GROUPS = {
    "queue": queue,
    "quota-group": quota_group,
    "job": job,
    "eviction": eviction,
    "whatif": whatif,
    "namespace": namespace,
    "cluster": cluster,
    "node": node,
    "audit": audit,
    "request": request,
    "export": export,
    "trace": trace,
}


def common_flags() -> argparse.ArgumentParser:
    """The global flags, accepted before the command and after it: every parser takes them as a parent, with no
    default of its own (so a subcommand's parser never overwrites a value given earlier on the line)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--server", default=argparse.SUPPRESS, help=f"control plane URL (env FAIRWAY_URL, default {DEFAULT_SERVER})"
    )
    common.add_argument("--token", default=argparse.SUPPRESS, help="API token (env FAIRWAY_TOKEN)")
    common.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml"),
        default=argparse.SUPPRESS,
        help="output format (default table; simulate: table or json)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = common_flags()
    parser = argparse.ArgumentParser(prog="fairway", description="Fairway control plane command line", parents=[common])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in GROUPS.values():
        module.add_parser(sub, common)
    from controlplane import simulate_cli

    simulate_cli.add_parser(sub, common)
    from controlplane import replay_cli

    replay_cli.add_parser(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors are 2, --help is 0
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    args.server = getattr(args, "server", None) or os.environ.get("FAIRWAY_URL") or DEFAULT_SERVER
    args.token = getattr(args, "token", None) or os.environ.get("FAIRWAY_TOKEN")
    args.output = getattr(args, "output", None) or "table"
    if args.command == "simulate":
        from controlplane import simulate_cli

        if args.output == "yaml":
            parser.print_usage(sys.stderr)
            print("fairway: error: simulate prints -o table or json", file=sys.stderr)
            return EXIT_USAGE
        return simulate_cli.run(args)
    if args.command == "replay":
        from controlplane import replay_cli

        if args.output == "yaml":
            print("fairway: error: replay prints -o table or json", file=sys.stderr)
            return EXIT_USAGE
        return replay_cli.run(args)
    client = Client(args.server, args.token)
    try:
        return GROUPS[args.command].run(args, client)
    except UsageError as exc:
        print(f"fairway: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ApiError as exc:
        for line in exc.lines:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_API_ERROR


def entry() -> None:
    """The ``fairway`` command: ``main()``, then out of the process at once.

    A big ``simulate`` leaves hundreds of thousands of objects alive at the end; letting the interpreter free them
    one by one (and run a last collection) took about 0.4 s of a 6 s run on a 10,000-group tree, for nothing: the
    process is ending. So once the output is flushed the process exits without that teardown (as mypy's command
    does). Nothing of Fairway's registers exit handlers; ``main()`` itself, for callers in-process, returns."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (``fairway simulate ... | head``): nothing more to say
        code = code or 1
    os._exit(code)
