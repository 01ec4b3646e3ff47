"""``fairway simulate``: run the engine offline on manifests and print what the control plane would decide.

The contract is ``shared/SIMULATE.md``: exit 0 on success, exit 2 with one line on stderr naming the file, the
document, the kind and the name for input that cannot be used; skipped kinds are warnings on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="run the engine offline on Kubernetes manifests",
        description="Run Fairway's engine on a cluster snapshot written as Kubernetes manifests.",
    )
    p.add_argument(
        "-f",
        "--filename",
        action="append",
        required=True,
        metavar="FILE",
        help="YAML manifests (multi-document or kind: List); '-' is stdin; repeatable, merged in order",
    )
    p.add_argument("--policy", metavar="FILE", help="scheduler policy in Volcano's configuration format")
    p.add_argument("--sessions", type=int, default=1, metavar="N", help="consecutive sessions to run (default 1)")
    p.add_argument("--recycle", action="store_true", help="run one recycling pass after the sessions")
    p.add_argument("-o", "--output", choices=("json", "table"), default="table")


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    with open(path, encoding="utf-8") as fh:
        return path, fh.read()


def run(args: argparse.Namespace) -> int:
    from scheduling.engine.policy import Policy, PolicyError
    from scheduling.manifests import ManifestError, load_manifests
    from scheduling.simulate import SimulationError, render_table, simulate

    if args.sessions < 1:
        print("fairway simulate: --sessions must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        sources = [_read(p) for p in args.filename]
    except OSError as exc:
        print(f"fairway simulate: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as exc:
        print(f"fairway simulate: input is not UTF-8 text: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        loaded = load_manifests(sources)
        policy = None
        if args.policy:
            name, text = _read(args.policy)
            try:
                policy = Policy.from_yaml(text)
            except PolicyError as exc:
                print(f"{name}: {exc}", file=sys.stderr)
                return EXIT_BAD_INPUT
        result = simulate(
            loaded.snapshot, policy=policy, sessions=args.sessions, recycle=args.recycle, origins=loaded.origins
        )
    except ManifestError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"fairway simulate: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SimulationError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in [*loaded.warnings, *result.warnings]:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output == "json":
        print(json.dumps(result.document, indent=2, sort_keys=True))
    else:
        print(render_table(result.document))
    return EXIT_OK
