"""What one request (or one ``fairway simulate`` run) may ask of the control plane, and the parsers that hold to it.

Plain Python (no Django) so the REST API, ``fairway simulate`` and the engine's policy reader share one set of limits
and one set of messages:

* ``Limits``: the named limits with their defaults; ``Limits.from_env()`` reads the ``FAIRWAY_*`` variables of
  ``ENV_VARS`` (the Django settings expose the result as ``settings.FAIRWAY_LIMITS``; the CLI reads the environment
  itself). The table of docs/limits.md lists them.
* Nesting depth is checked **before** a recursive parser runs: ``check_json_depth`` is one linear pass (strings cut
  out by a regular expression, then a running bracket count in numpy); ``check_yaml_depth`` first bounds the depth
  from the text (indentation and bracket counts, a few C-speed scans) and only when that bound is too high walks
  libyaml's event stream (an iterative parser: nothing recurses) to measure it exactly, aliases included. Only then
  do ``loads_json`` / ``load_yaml`` / ``load_yaml_all`` build the objects.
* ``Deadline``: a wall-clock budget checked cooperatively (between sessions, between podgroups); ``check()`` raises
  ``BudgetExceeded`` once it has passed, so the work stops instead of running on after the client gave up.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import yaml

from engine.resources import MAX_AMOUNT, format_quantity, milli_scale

__all__ = [
    "DEFAULT_MAX_NODES",
    "ENV_VARS",
    "BudgetExceeded",
    "Deadline",
    "LimitExceeded",
    "Limits",
    "TooDeep",
    "YAMLTooDeep",
    "brief",
    "check_json_depth",
    "check_yaml_depth",
    "json_depth",
    "load_yaml",
    "load_yaml_all",
    "loads_json",
    "node_amount_errors",
    "node_bound_text",
]

# 20,000 nodes (four times Kubernetes' tested 5,000; this project's benchmarks go up to it) leave each node up to
# 2**62 // 20,000 base units of every resource: 230 billion cores, 209 TiB of memory or ephemeral storage, 230 billion
# GPUs; the largest machines sold hold 64 TiB of memory (IBM Power E1080) and 32 TiB in a cloud (AWS u7in-32tb).
DEFAULT_MAX_NODES = 20_000


@dataclass(frozen=True)
class Limits:
    """The limits, with their defaults (see ``ENV_VARS`` for the variables that set them)."""

    max_json_depth: int = 64  # nesting of a JSON request body (or a JSON annotation inside a manifest)
    max_yaml_depth: int = 64  # nesting of manifests and scheduler policies (aliases included)
    max_body_bytes: int = 2_621_440  # request body of every route but simulate (Django's own default, 2.5 MiB)
    simulate_max_body_bytes: int = 33_554_432  # request body of POST /api/v1/simulate/ (32 MiB: room for JSON escapes)
    max_manifest_bytes: int = 20_000_000  # simulate's manifests (the API's field, the CLI's files together)
    max_replicas: int = 10_000  # replicas of one vcjob task or of one what-if podgroup
    max_pods: int = 100_000  # pods of one simulate snapshot, pods one what-if proposal adds
    max_podgroups: int = 20_000  # podgroups of one simulate snapshot, podgroups one what-if proposal adds
    max_sessions: int = 20  # sessions of one simulate request or run
    request_budget_seconds: float = 20.0  # wall clock of one simulate or what-if request over the API
    cli_budget_seconds: float = 600.0  # wall clock of one fairway simulate run
    max_concurrent_simulations: int = 2  # simulate and what-if computations at once, in the whole deployment
    # how long a simulate or what-if slot is held at most (Redis): a web process killed while holding one frees it then
    simulation_lease_seconds: float = 60.0
    max_queue_depth: int = 5  # levels of the queue tree below root (Volcano's --max-queue-depth)
    max_quota_group_depth: int = 10  # levels of a quota tree below its root
    # nodes of one cluster, and what one node may offer of any resource (base units): chosen together so that a
    # cluster's total stays below MAX_AMOUNT (2**62), the bound of every amount the engine computes with
    max_nodes: int = DEFAULT_MAX_NODES
    max_node_amount: int = MAX_AMOUNT // DEFAULT_MAX_NODES

    def __post_init__(self) -> None:
        if self.max_nodes * self.max_node_amount >= MAX_AMOUNT:
            raise ValueError(
                f"{ENV_VARS['max_nodes']}={self.max_nodes} times {ENV_VARS['max_node_amount']}={self.max_node_amount} "
                f"reaches 2**62 base units, the largest total a cluster may have: lower one of them (set only one and "
                f"the other follows)"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, overridden by the ``FAIRWAY_*`` variables set in ``environ`` (default ``os.environ``).
        ``FAIRWAY_MAX_NODES`` and ``FAIRWAY_MAX_NODE_AMOUNT`` go together: set one and the other becomes the largest
        that keeps a cluster's total below 2**62 base units; set both and their product must stay below it."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            text = environ.get(ENV_VARS[f.name], "").strip()
            if not text:
                continue
            kind = float if f.type in ("float", float) else int
            try:
                value = kind(text)
            except ValueError:
                raise ValueError(
                    f"{ENV_VARS[f.name]}={text!r}: expected a {'number' if kind is float else 'whole number'}"
                ) from None
            if value <= 0:
                raise ValueError(f"{ENV_VARS[f.name]}={text!r}: must be greater than 0")
            values[f.name] = value
        if "max_nodes" in values and "max_node_amount" not in values:
            values["max_node_amount"] = (MAX_AMOUNT - 1) // values["max_nodes"]
        elif "max_node_amount" in values and "max_nodes" not in values:
            values["max_nodes"] = max(1, (MAX_AMOUNT - 1) // values["max_node_amount"])
        return cls(**values)


ENV_VARS: dict[str, str] = {
    "max_json_depth": "FAIRWAY_MAX_JSON_DEPTH",
    "max_yaml_depth": "FAIRWAY_MAX_YAML_DEPTH",
    "max_body_bytes": "FAIRWAY_MAX_BODY_BYTES",
    "simulate_max_body_bytes": "FAIRWAY_SIMULATE_MAX_BODY_BYTES",
    "max_manifest_bytes": "FAIRWAY_MAX_MANIFEST_BYTES",
    "max_replicas": "FAIRWAY_MAX_REPLICAS",
    "max_pods": "FAIRWAY_MAX_PODS",
    "max_podgroups": "FAIRWAY_MAX_PODGROUPS",
    "max_sessions": "FAIRWAY_MAX_SESSIONS",
    "request_budget_seconds": "FAIRWAY_REQUEST_BUDGET_SECONDS",
    "cli_budget_seconds": "FAIRWAY_CLI_BUDGET_SECONDS",
    "max_concurrent_simulations": "FAIRWAY_MAX_CONCURRENT_SIMULATIONS",
    "simulation_lease_seconds": "FAIRWAY_SIMULATION_LEASE_SECONDS",
    "max_queue_depth": "FAIRWAY_MAX_QUEUE_DEPTH",
    "max_quota_group_depth": "FAIRWAY_MAX_QUOTA_GROUP_DEPTH",
    "max_nodes": "FAIRWAY_MAX_NODES",
    "max_node_amount": "FAIRWAY_MAX_NODE_AMOUNT",
}


class LimitExceeded(ValueError):
    """Input over one of the limits. ``field`` names where (``""`` for the whole input), ``setting`` the variable."""

    def __init__(self, field: str, message: str, setting: str = "") -> None:
        self.field = field
        self.setting = setting
        self.message = f"{message} ({setting})" if setting else message
        super().__init__(f"{field}: {self.message}" if field else self.message)


class TooDeep(LimitExceeded):
    """Nesting deeper than the limit."""


# -- what one node may offer ---------------------------------------------------------------------------------------
_NUMBER_WORDS = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"))
_BYTE_UNITS = ((2**60, "EiB"), (2**50, "PiB"), (2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def node_bound_text(bound: int, resource: str) -> str:
    """The per-node bound of ``resource`` as people read it, rounded down: "230 billion cores", "209 TiB",
    "230 billion nvidia.com/gpu"."""
    if milli_scale(resource) == 1:
        for factor, unit in _BYTE_UNITS:
            if bound >= factor:
                return f"{bound // factor:,} {unit}"
        return f"{bound:,} bytes"
    whole = bound // 1000
    noun = "cores" if resource == "cpu" else resource
    for factor, word in _NUMBER_WORDS:
        if whole >= factor:
            return f"{whole // factor:,} {word} {noun}"
    return f"{whole:,} {noun}"


def node_amount_errors(amounts: Mapping[str, int], bound: int, field: str = "allocatable") -> list[LimitExceeded]:
    """One error per resource of a node's ``amounts`` (base units) above ``bound`` (``Limits.max_node_amount``):
    ``allocatable.cpu: 4611686018427387903m is more than one node may have (230 billion cores;
    FAIRWAY_MAX_NODE_AMOUNT)``. Every writer of a node (API, admin, what-if, simulate, the Kubernetes adapter) asks
    this, so that no cluster's total can reach 2**62 base units."""
    setting = ENV_VARS["max_node_amount"]
    out: list[LimitExceeded] = []
    for name, amount in sorted(amounts.items()):
        if amount > bound:
            error = LimitExceeded(
                f"{field}.{name}",
                f"{format_quantity(amount, name)} is more than one node may have "
                f"({node_bound_text(bound, name)}; {setting})",
            )
            error.setting = setting
            out.append(error)
    return out


def brief(value: object, limit: int = 60) -> str:
    """``repr(value)`` for messages, never long: big integers by their digit count, long texts and containers cut."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 200:
            return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str | bytes):
        text = repr(value)
        return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- JSON -----------------------------------------------------------------------------------------------------------
# A JSON string: no raw quote inside, backslash escapes anything (one character); valid JSON has no other quotes.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_CHUNK = 1 << 22


def json_depth(data: bytes | str) -> int:
    """The nesting depth of a JSON text (exact for valid JSON; for invalid JSON a number the parser will refuse
    anyway). Linear: strings are cut out, then the brackets are counted as a running sum."""
    import numpy as np

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"[" not in raw and b"{" not in raw:
        return 0
    brackets = _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", raw))
    deepest, level = 0, 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = np.frombuffer(brackets[start : start + _CHUNK], dtype=np.uint8)
        steps = np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1).astype(np.int64)
        running = np.cumsum(steps) + level
        deepest = max(deepest, int(running.max()))
        level = int(running[-1])
    return deepest


def check_json_depth(data: bytes | str, max_depth: int, field: str = "") -> None:
    opening = data.count("[") + data.count("{") if isinstance(data, str) else data.count(b"[") + data.count(b"{")
    if opening <= max_depth:
        return  # each level opens one bracket: a small text needs no closer look
    depth = json_depth(data)
    if depth > max_depth:
        raise TooDeep(field, f"JSON nested {depth} levels deep, more than {max_depth}", ENV_VARS["max_json_depth"])


def loads_json(text: str | bytes, max_depth: int = Limits.max_json_depth, field: str = "") -> Any:
    """``json.loads`` after the depth check. Raises ``TooDeep`` or ``ValueError`` (``json.JSONDecodeError``)."""
    check_json_depth(text, max_depth, field)
    return json.loads(text)


# -- YAML -----------------------------------------------------------------------------------------------------------
try:  # libyaml: ~10x faster, and its parser (the event stream) is iterative
    _CBase: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _CBase = yaml.SafeLoader


class YAMLTooDeep(yaml.MarkedYAMLError):
    """A YAML text nested deeper than the limit (or with a recursive alias); ``document`` is its 1-based index."""

    def __init__(self, problem: str, mark: Any, document: int) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.document = document


class SafeLoader(_CBase):  # type: ignore[misc]
    """libyaml's safe loader whose scalars cannot raise anything but ``yaml.YAMLError``: an integer too long for
    Python (more than 4,300 digits) or an impossible date (``2024-13-45``) is a YAML error at its line."""

    def construct_yaml_int(self, node: Any) -> Any:
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            digits = sum(ch.isdigit() for ch in str(node.value))
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {digits} digits is too large", node.start_mark
            ) from None

    def construct_yaml_timestamp(self, node: Any) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{brief(node.value)} is not a valid date or time ({exc})", node.start_mark
            ) from None

    def construct_yaml_float(self, node: Any) -> Any:
        try:
            return super().construct_yaml_float(node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{brief(node.value)} is not a valid number ({exc})", node.start_mark
            ) from None


SafeLoader.add_constructor("tag:yaml.org,2002:int", SafeLoader.construct_yaml_int)
SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", SafeLoader.construct_yaml_timestamp)
SafeLoader.add_constructor("tag:yaml.org,2002:float", SafeLoader.construct_yaml_float)

# The leading run of a line: indentation, block indicators and node properties. A block collection starts at the end
# of a line's indentation or after one of the indicators of that run, so its column is at most the run's length.
_LEAD = r"^(?:[ \t]|(?:---|\.\.\.|[-?:])(?=[ \t]|$)|[&!][^ \t\r\n]*)"
# Line breaks YAML knows besides "\n" and "\r\n" (a regular expression's "^" would not see them): such texts are
# measured exactly.
_OTHER_BREAKS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")
# A document marker: "---" or "..." at the start of a line, followed by a blank or the line's end. libyaml reads one
# there in any context (it ends a block scalar; inside a quoted scalar or a flow collection it is an error), so no
# collection spans two of the parts the markers cut a text into. (One at the very start cuts nothing.)
_DOCUMENT_MARKER = re.compile(r"\n(?:---|\.\.\.)(?=[ \t\r\n]|$)")


def yaml_depth_bound(text: str, max_depth: int) -> bool:
    """True when the text cannot nest deeper than ``max_depth`` (aliases aside), judged from the text alone.

    Block collections nest at most two per column (a mapping and a sequence as the value of one of its keys share
    a column) and each starts within its line's leading run; flow collections need one bracket each. So the depth of
    a document is at most 2 * (longest leading run + 1) plus the number of opening brackets in that document.
    Bounded in a few C-speed passes (a big snapshot of 15 MB takes about 50 ms).
    """
    if _other_breaks(text):
        return False
    room = max_depth - _most_brackets(text)
    if room < 2:
        return False
    longest_run = room // 2 - 1  # a run of this many characters keeps the block part within the room left
    return not _longer_lead(text, longest_run)


def _other_breaks(text: str) -> bool:
    # "in" runs at C speed where a regular expression steps through every character
    return ("\r" in text and _OTHER_BREAKS.search(text) is not None) or any(c in text for c in "\x85\u2028\u2029")


def _longer_lead(text: str, longest_run: int) -> bool:
    """Whether a line's leading run is longer than ``longest_run`` items."""
    if "&" in text or "!" in text:  # anchors or tags may stand in a leading run: the full pattern
        return re.search(f"{_LEAD}{{{longest_run + 1}}}", text, re.MULTILINE) is not None
    # Without them a leading run is made of blanks and the indicators - ? : --- ..., one character or more each: a
    # line whose run of those characters is no longer than longest_run has no longer leading run. A pattern that
    # starts with a literal ("\n") is searched for at C speed.
    if re.match(f"{_LEAD}{{{longest_run + 1}}}", text) is not None:  # the first line
        return True
    return re.search(f"\\n[ \\t\\-?:.]{{{longest_run + 1}}}", text) is not None


def _most_brackets(text: str) -> int:
    """The most opening brackets (``[`` and ``{``) in one document of the text: a bound on the flow nesting of any
    of its documents (a big snapshot's JSON annotations add up to far more brackets than any one document holds)."""
    total = text.count("[") + text.count("{")
    if total <= 2:
        return total
    most, start = 0, 0
    for marker in _DOCUMENT_MARKER.finditer(text):
        end = marker.start()
        most = max(most, text.count("[", start, end) + text.count("{", start, end))
        start = end
    return max(most, text.count("[", start) + text.count("{", start))


def check_yaml_depth(text: str, max_depth: int) -> None:
    """Refuse (``YAMLTooDeep``) a YAML text nested deeper than ``max_depth`` or with a recursive alias, before any
    node is composed; other syntax errors raise the parser's ``yaml.YAMLError``. Nothing here recurses."""
    if "*" not in text and yaml_depth_bound(text, max_depth):
        return
    setting = ENV_VARS["max_yaml_depth"]
    document = 0
    heights: dict[str, int] = {}  # anchor -> nesting height of its node
    stack: list[list[Any]] = []  # open collections: [anchor, tallest child so far]
    for event in yaml.parse(text, Loader=_CBase):
        kind = type(event)
        if kind is yaml.DocumentStartEvent:
            document += 1
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(stack) + 1 > max_depth:
                raise YAMLTooDeep(f"nested more than {max_depth} levels deep ({setting})", event.start_mark, document)
            stack.append([cast(yaml.NodeEvent, event).anchor, 0])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            anchor, tallest = stack.pop()
            height = tallest + 1
            if anchor is not None:
                heights[anchor] = height
            if stack:
                stack[-1][1] = max(stack[-1][1], height)
        elif kind is yaml.AliasEvent:
            alias = cast(yaml.AliasEvent, event).anchor
            if alias not in heights:
                if any(entry[0] == alias for entry in stack):
                    raise YAMLTooDeep(f"alias *{alias} refers to itself", event.start_mark, document)
                continue  # an alias to a scalar (or an unknown anchor, which the composer refuses)
            height = heights[alias]
            if len(stack) + height > max_depth:
                raise YAMLTooDeep(
                    f"alias *{alias} nests more than {max_depth} levels deep ({setting})",
                    event.start_mark,
                    document,
                )
            if stack:
                stack[-1][1] = max(stack[-1][1], height)


def load_yaml_all(text: str, max_depth: int = Limits.max_yaml_depth) -> Iterator[Any]:
    """The documents of a YAML text, after the depth check. Raises ``yaml.YAMLError`` (``YAMLTooDeep`` for depth)."""
    check_yaml_depth(text, max_depth)
    return yaml.load_all(text, Loader=SafeLoader)


def load_yaml(text: str, max_depth: int = Limits.max_yaml_depth) -> Any:
    """One YAML document, after the depth check. Raises ``yaml.YAMLError`` (``YAMLTooDeep`` for depth)."""
    check_yaml_depth(text, max_depth)
    return yaml.load(text, Loader=SafeLoader)


# -- the wall-clock budget --------------------------------------------------------------------------------------------
class BudgetExceeded(Exception):
    """The work ran past its wall-clock budget and was stopped; ``str()`` says which budget and where."""

    def __init__(self, seconds: float, setting: str, where: str = "") -> None:
        self.seconds = seconds
        self.setting = setting
        self.where = where
        at = f" ({where})" if where else ""
        super().__init__(f"stopped after the budget of {seconds:g} s of computation{at} ({setting})")


class Deadline:
    """A wall-clock budget. ``check()`` raises ``BudgetExceeded`` once it has passed; ``progress`` (a short text such
    as "session 3 of 20") says where the work was, for the message. The engine receives ``check`` as a callable and
    never reads the clock itself."""

    def __init__(
        self,
        seconds: float,
        setting: str,
        clock: Callable[[], float] = time.monotonic,
        started: float | None = None,
    ) -> None:
        """``started`` (a reading of ``clock``) dates the budget back, to when the request came in, say: the time
        spent reading and parsing it counts too. Default: now."""
        self.seconds = seconds
        self.setting = setting
        self.clock = clock
        self.end = (clock() if started is None else started) + seconds
        self.progress = ""

    def remaining(self) -> float:
        return self.end - self.clock()

    def check(self) -> None:
        if self.clock() > self.end:
            raise BudgetExceeded(self.seconds, self.setting, self.progress)
