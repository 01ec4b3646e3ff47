"""``fairway simulate``: run the engine offline on manifests and print what the control plane would decide.

The contract is ``shared/SIMULATE.md``: exit 0 on success, exit 2 with one line on stderr naming the file, the
document, the kind and the name for input that cannot be used; skipped kinds are warnings on stderr.

A size limit protects a server from its clients; on a local file it only stops its owner. So the input limits of
``engine.limits`` that the server reads from ``FAIRWAY_MAX_*`` (the manifests' size, pods, podgroups, sessions) do not
apply here unless asked for with their option (``LIFTABLE``: ``--max-manifest-bytes``, ``--max-pods``, ...); nor a
wall-clock budget, unless ``--budget SECONDS`` (or ``FAIRWAY_CLI_BUDGET_SECONDS``) sets one. What protects the parser
and the arithmetic stays on, from the same variables as the server: nesting depth and aliases
(``FAIRWAY_MAX_YAML_DEPTH``), the replicas of one vcjob task (a few bytes that would expand into millions of pods;
``--max-replicas`` lifts it), the nodes and what one node may offer (``FAIRWAY_MAX_NODES``,
``FAIRWAY_MAX_NODE_AMOUNT``), the tree depths. Input over a limit is input that cannot be used: exit 2, one line,
naming the option that lifts it. ``-f`` takes a regular file or ``-`` (standard input): a FIFO or a device is refused
at once rather than read without end.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import re
import stat
import sys
from typing import Any

import orjson

from engine.limits import ENV_VARS, BudgetExceeded, Deadline, Limits

EXIT_OK, EXIT_BAD_INPUT = 0, 2

# The input limits the command applies only when asked: Limits field -> its option. Without the option the field is
# UNLIMITED (a number no input reaches); refusals name the option instead of the server's variable.
LIFTABLE = {
    "max_manifest_bytes": "--max-manifest-bytes",
    "max_pods": "--max-pods",
    "max_podgroups": "--max-podgroups",
    "max_sessions": "--max-sessions",
}
UNLIMITED = 2**62


def add_parser(sub: Any, common: argparse.ArgumentParser | None = None) -> None:
    """``common``: the ``fairway`` command's global flags (``-o`` among them), accepted here too; without it (a
    parser of simulate alone) ``-o json|table`` is simulate's own."""
    p = sub.add_parser(
        "simulate",
        help="run the engine offline on Kubernetes manifests",
        description="Run Fairway's engine on a cluster snapshot written as Kubernetes manifests.",
        parents=[common] if common is not None else [],
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
    limits = p.add_argument_group(
        "limits",
        "A local run reads input of any size: the server's input limits (FAIRWAY_MAX_*) apply here only when given "
        "as options. Nesting depth and aliases (FAIRWAY_MAX_YAML_DEPTH), nodes (FAIRWAY_MAX_NODES) and replicas "
        "stay bounded.",
    )
    for option, what in (
        ("--max-manifest-bytes", "bytes of all the -f files together"),
        ("--max-pods", "pods of the snapshot (vcjobs expanded)"),
        ("--max-podgroups", "podgroups of the snapshot (a pod without one counts as one)"),
        ("--max-sessions", "--sessions"),
    ):
        limits.add_argument(
            option, type=_positive_int, metavar="N", help=f"refuse more than N {what} (default: no limit)"
        )
    limits.add_argument(
        "--max-replicas",
        type=_positive_int,
        metavar="N",
        help=f"replicas of one vcjob task (default: {ENV_VARS['max_replicas']} or {Limits.max_replicas})",
    )
    limits.add_argument(
        "--budget",
        type=_positive_float,
        metavar="SECONDS",
        help=f"stop a run after SECONDS of wall clock (default: {ENV_VARS['cli_budget_seconds']} if set, else none)",
    )
    if common is None:
        p.add_argument("-o", "--output", choices=("json", "table"), default="table")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds greater than 0")
    return value


class InputError(Exception):
    """A file that cannot be read as text within the size limit; ``str()`` is one line naming it."""


def _read(path: str, budget: int) -> tuple[str, str]:
    """The file's text (``-``: stdin), refused when it is over ``budget`` bytes or not UTF-8, or when it is neither
    ``-`` nor a regular file (a FIFO, a device, a directory: reading one could block or never end)."""
    name = "<stdin>" if path == "-" else path
    unlimited = budget >= UNLIMITED
    try:
        if path == "-":
            data = sys.stdin.buffer.read() if unlimited else sys.stdin.buffer.read(budget + 1)
        else:
            with open(path, "rb", opener=_open_regular) as fh:
                data = fh.read() if unlimited else fh.read(budget + 1)
    except OSError as exc:
        raise InputError(f"{name}: {exc.strerror or exc}") from None
    if len(data) > budget:
        raise InputError(f"{name}: the input is larger than {budget} bytes in all ({LIFTABLE['max_manifest_bytes']})")
    try:
        return name, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


class _Collector:
    """A one-shot command's memory, managed for speed: the cyclic garbage collector is off from the start of the
    reading to the end of the run. A big snapshot is millions of containers, none of them garbage, and the sessions,
    values and document built from it hundreds of thousands more, all alive until the output is written; every
    collection would walk them again. There is next to nothing for the collector to find: a session cuts its own
    cycles when it ends (``Session.release``), and a whole run (three sessions and a recycling pass on the
    10,000-group benchmark) leaves about a thousand objects in cycles, the argument parser's
    (``tests/unit/test_simulate_json.py`` keeps that bound). Reference counting frees everything else as usual.
    ``restore`` puts the collector back as it was (the tests run the command inside their own process)."""

    def __init__(self) -> None:
        self.enabled = gc.isenabled()

    def reading(self) -> None:
        gc.disable()

    def read(self) -> None:
        """The manifests are read; the collector stays off for the rest of the run (see the class)."""

    def restore(self) -> None:
        if self.enabled:
            gc.enable()
        else:
            gc.disable()


def dump_json(document: dict[str, Any]) -> str:
    """The document as ``-o json`` prints it, byte for byte ``json.dumps(document, indent=2, sort_keys=True)`` and a
    newline: written by orjson (a 10 MB document in a twentieth of the time), then brought to the standard
    library's spelling where the two differ: characters outside ASCII (and DEL) as ``\\uXXXX`` escapes, and floats
    as Python's ``repr`` (``1e-06``, not ``1e-6``). A document orjson cannot write (an integer past 64 bits) goes
    through ``json.dumps``. The document holds no NaN or infinity (shares and durations are finite)."""
    try:
        data = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(document, indent=2, sort_keys=True) + "\n"
    data = _python_floats(data)
    text = data.decode("utf-8")
    if not text.isascii() or "\x7f" in text:
        text = _NOT_ASCII.sub(_escape, text)
    return text


# A float orjson spells otherwise than Python's repr: with an exponent (orjson: 1e-6, Python: 1e-06), small and
# written out (0.00001 where Python writes 1e-05), or of 16 digits and more before the point; alone on its line
# after a key or as an array's item. A string holds no line break, so nothing inside one matches.
_FLOAT = rb"(-?(?:[0-9]+(?:\.[0-9]+)?[eE][-+]?[0-9]+|0\.0000[0-9]*|[0-9]{16,}\.[0-9]+))(?=,?\n)"
_VALUE_FLOAT = re.compile(rb": " + _FLOAT)  # starts with a literal: scanned at C speed
_ITEM_FLOAT = re.compile(rb"\n +" + _FLOAT)


def _python_floats(data: bytes) -> bytes:
    """orjson's indented text with every float respelled as ``repr`` spells it. Values of keys are found by one scan;
    array items only inside the arrays (``[`` at a line's end up to the ``]`` at its indentation), which are few."""
    found = [(m.start(1), m.end(1)) for m in _VALUE_FLOAT.finditer(data)]
    covered = at = 0
    while (at := data.find(b"[\n", at)) >= 0:
        if at >= covered:
            line = data.rfind(b"\n", 0, at) + 1
            indent = len(data[line:at]) - len(data[line:at].lstrip(b" "))
            end = data.find(b"\n" + b" " * indent + b"]", at)
            covered = len(data) if end < 0 else end
            found += [(m.start(1), m.end(1)) for m in _ITEM_FLOAT.finditer(data, at, covered + 1)]
        at += 2
    if not found:
        return data
    out: list[bytes] = []
    last = 0
    for start, end in sorted(found):
        out += (data[last:start], repr(float(data[start:end])).encode())
        last = end
    out.append(data[last:])
    return b"".join(out)


_NOT_ASCII = re.compile("[^\x00-\x7e]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def run(args: argparse.Namespace) -> int:
    collector = _Collector()
    try:
        return _run(args, collector)
    finally:
        collector.restore()


def _open_regular(path: str, flags: int) -> int:
    """``os.open`` that refuses anything but a regular file, judged on the open descriptor (no race with a rename);
    ``O_NONBLOCK`` so that opening a FIFO with no writer does not wait for one."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a directory"
                if stat.S_ISDIR(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a regular file"
            )
            raise OSError(0, f"{what}: -f takes a regular file, or - for standard input")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _cli_limits(args: argparse.Namespace) -> tuple[Limits, float | None]:
    """The limits of this run: the server's variables for what protects the parser and the arithmetic, the options
    for the input limits (``LIFTABLE``; unlimited without), and the budget in seconds (``None``: no budget).
    ``ValueError`` for a variable that is not a number."""
    limits = Limits.from_env()
    values: dict[str, int] = {field: getattr(args, field, None) or UNLIMITED for field in LIFTABLE}
    if getattr(args, "max_replicas", None):
        values["max_replicas"] = args.max_replicas
    budget = getattr(args, "budget", None)
    if budget is None and os.environ.get(ENV_VARS["cli_budget_seconds"], "").strip():
        budget = limits.cli_budget_seconds
    return dataclasses.replace(limits, **values), budget


def _named_options(message: str) -> str:
    """A refusal as the command says it: the option that lifts a limit named in place of the server's variable."""
    for field, option in LIFTABLE.items():
        message = message.replace(f"({ENV_VARS[field]})", f"({option})")
    return message


def _run(args: argparse.Namespace, collector: _Collector) -> int:
    from engine.manifests import ManifestError, load_manifests
    from engine.manifests.kueuefair import is_kueue_configuration_text
    from engine.policy.policy import Policy, PolicyError
    from engine.simulate import SimulationError, render_table, simulate

    try:
        limits, budget = _cli_limits(args)
    except ValueError as exc:
        print(f"fairway simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.sessions < 1:
        print("fairway simulate: --sessions must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.sessions > limits.max_sessions:
        print(
            f"fairway simulate: --sessions {args.sessions} is more than {limits.max_sessions} "
            f"({LIFTABLE['max_sessions']})",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    setting = "--budget" if getattr(args, "budget", None) else ENV_VARS["cli_budget_seconds"]
    deadline = Deadline(budget, setting) if budget is not None else None
    try:
        sources, left = [], limits.max_manifest_bytes
        for path in args.filename:
            sources.append(_read(path, left))
            if left < UNLIMITED:
                left -= len(sources[-1][1].encode("utf-8"))
        policy_source = _read(args.policy, limits.max_manifest_bytes) if args.policy else None
    except InputError as exc:
        print(f"fairway simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if deadline is not None:
            deadline.progress = "while reading the manifests"
        collector.reading()
        if policy_source is not None and is_kueue_configuration_text(policy_source[1], limits.max_yaml_depth):
            # a Kueue Configuration as the policy: read with the manifests (fairSharing, waitForPodsReady, ...)
            sources, policy_source = [*sources, policy_source], None
        loaded = load_manifests(sources, limits=limits, checkpoint=deadline.check if deadline is not None else None)
        collector.read()
        policy = None
        if policy_source is not None:
            name, text = policy_source
            try:
                policy = Policy.from_yaml(text, max_depth=limits.max_yaml_depth)
            except PolicyError as exc:
                print(f"{name}: {exc}", file=sys.stderr)
                return EXIT_BAD_INPUT
        result = simulate(
            loaded.snapshot,
            policy=policy,
            sessions=args.sessions,
            recycle=args.recycle,
            origins=loaded.origins,
            limits=limits,
            deadline=deadline,
        )
    except ManifestError as exc:
        message = _named_options(str(exc))
        if getattr(args, "max_replicas", None):  # the bound the option set (the server's variable's otherwise)
            message = message.replace(f"({ENV_VARS['max_replicas']})", "(--max-replicas)")
        print(message, file=sys.stderr)
        return EXIT_BAD_INPUT
    except SimulationError as exc:
        print(_named_options(str(exc)), file=sys.stderr)
        return EXIT_BAD_INPUT
    except BudgetExceeded as exc:
        print(f"fairway simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in [*loaded.warnings, *result.warnings]:
        print(f"warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.output == "json":
        sys.stdout.write(dump_json(result.document))
    else:
        print(render_table(result.document))
    return EXIT_OK
