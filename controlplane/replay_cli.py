"""``fairway replay -f trace.jsonl [--policy FILE] [--changes changes.yaml] [--tree snapshot.yaml] [--seed N]``: replay
a trace in virtual time with the real engine, offline (``engine.replay``; ``docs/replay.md``).

``fairway replay session ID|--at T [--cluster NAME] [--explain NS/NAME]`` and ``fairway replay sessions [--cluster
NAME]``: replay one recorded session through the server (``controlplane.cli.session_replay``).

Exit 0 on success; exit 2 with one line on stderr naming the file, the line or document and the field for input that
cannot be used (as ``fairway simulate``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_parser(sub: Any, common: argparse.ArgumentParser | None = None) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a trace in virtual time (offline), optionally with proposed changes side by side",
        description="Replay a trace (fairway trace export) with Fairway's engine in virtual time and report per team "
        "and for the cluster; with --changes, the baseline and the proposal side by side. 'fairway replay session ID' "
        "re-runs one recorded session of the cluster instead (through the server; admins), 'fairway replay sessions' "
        "lists the recorded ones.",
        parents=[common] if common is not None else [],
    )
    p.add_argument(
        "target",
        nargs="*",
        metavar="session ID | sessions",
        help="replay one recorded session ('session ID', or 'session --at T'), or list them ('sessions')",
    )
    p.add_argument("-f", "--filename", metavar="FILE", help="the trace (JSON Lines; '-' is stdin)")
    p.add_argument("--cluster", help="recorded sessions: which cluster (default: the default cluster)")
    p.add_argument("--at", help="recorded sessions: the session in force at this moment (14:02, 2026-11-29T14:02, 2h)")
    p.add_argument("--explain", metavar="NS/NAME", help="recorded sessions: what it decided about this job or pod, why")
    p.add_argument("--limit", type=int, default=30, help="replay sessions: how many to list (default 30)")
    p.add_argument("--policy", metavar="FILE", help="scheduler policy in Volcano's configuration format")
    p.add_argument("--changes", metavar="FILE", help="proposed changes (YAML or JSON, the what-if change language)")
    p.add_argument("--tree", metavar="FILE", help="the tree and nodes as manifests, instead of the trace's Tree")
    p.add_argument("--seed", type=int, default=0, help="seed of the runtime draws for jobs without a runtime")
    p.add_argument(
        "--processes",
        type=int,
        choices=(1, 2),
        default=2 if (os.cpu_count() or 1) > 1 else 1,
        help="with --changes: 2 replays the proposal in a second process beside the baseline (the default with more "
        "than one core), 1 one after the other",
    )
    if common is None:
        p.add_argument("-o", "--output", choices=("json", "table"), default="table")


class BadInput(Exception):
    """Input that cannot be used; ``str()`` is one line."""


def _text(path: str) -> tuple[str, str]:
    name = "<stdin>" if path == "-" else path
    try:
        return name, sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{name}: {getattr(exc, 'strerror', None) or exc}") from None


def _changes(path: str) -> list[Any]:
    name, text = _text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInput(f"{name}: not YAML or JSON ({str(exc).splitlines()[0]})") from None
    if isinstance(data, dict) and isinstance(data.get("changes"), list):
        data = data["changes"]
    if not isinstance(data, list) or not data:
        raise BadInput(f"{name}: changes: expected a non-empty list of changes or a mapping with 'changes'")
    return data


def load(args: argparse.Namespace) -> dict[str, Any]:
    """The replay's document for ``args``; raises ``BadInput``."""
    from controlplane.side_by_side import replay_both
    from engine.manifests import ManifestError, load_manifests
    from engine.policy.policy import Policy, PolicyError
    from engine.replay import ReplayError, TraceError, read_trace, replay_document, replay_result

    name, text = _text(args.filename)
    try:
        trace = read_trace(text.splitlines(), name)
    except TraceError as exc:
        raise BadInput(str(exc)) from None
    policy = None
    if args.policy:
        pname, ptext = _text(args.policy)
        try:
            policy = Policy.from_yaml(ptext)
        except (PolicyError, ValueError) as exc:
            raise BadInput(f"{pname}: {exc}") from None
    tree = None
    if args.tree:
        try:
            tree = load_manifests([_text(args.tree)]).snapshot  # Kueue's ResourceFlavors kept: the replay assigns them
        except ManifestError as exc:
            raise BadInput(str(exc)) from None
        if policy is None:
            policy = tree.policy
    changes = _changes(args.changes) if args.changes else None
    try:
        if not changes:
            return replay_document(trace, policy=policy, tree=tree, seed=args.seed)
        baseline, proposal = replay_both(
            trace, changes, seed=args.seed, processes=args.processes, policy=policy, tree=tree
        )
        return replay_result(baseline, proposal, seed=args.seed)
    except ReplayError as exc:
        raise BadInput(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from engine.replay import render_table

    if args.target:
        from controlplane.cli import session_replay

        return session_replay.run(args)
    if not args.filename:
        print(
            "fairway replay: -f FILE is required (or 'session ID' / 'sessions' for a recorded session)", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    try:
        document = load(args)
    except BadInput as exc:
        print(f"fairway replay: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.output == "json":
        print(json.dumps(document, indent=1))
    else:
        print(render_table(document))
    return EXIT_OK
