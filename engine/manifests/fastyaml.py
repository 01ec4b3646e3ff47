"""Big manifests read by rapidyaml, with PyYAML's answer vouched for, or not read here at all.

A 15 MB snapshot takes libyaml's parser and PyYAML's composer over a second before the first object is built.
rapidyaml (``ryml``, C++) parses the same text into its own tree and writes it out as JSON in about a quarter of
that, and orjson reads the JSON back into ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``
in about as much again. The two parsers agree on the structure of ordinary block YAML; they part on the meaning of
plain scalars, which PyYAML reads by YAML 1.1's implicit types (``yes`` is ``True``, ``0777`` is 511, ``1:30`` is
90, ``2024-01-01`` a date) and rapidyaml's JSON by JSON's, and on a few texts one of them refuses. ``documents``
gives PyYAML's documents only when it can show, from the text and the JSON, that every scalar means the same to
both; otherwise it returns ``None`` and the caller reads the text the usual way (``engine.manifests.yamlload``).
It never guesses:

* **What it does not take** (``_declines``): non-ASCII text, tabs, carriage returns and other control characters,
  anchors, aliases and tags (any ``&``, ``*`` or ``!``), directives, merge keys, complex keys (``?``), a block
  scalar that is a whole document, an escaped line break in a double-quoted scalar, an empty stream. Where YAML
  1.1 and 1.2, or libyaml and rapidyaml, read a valid text differently, it was there (the differences were found
  by fuzzing the two against each other); a text with any of them, even inside a quoted scalar, goes the usual
  way.
* **Numbers and spellings rapidyaml writes bare or rewrites** (``_rewritten_or_bare_in_doubt``): it writes a plain
  scalar that looks like a number bare (unquoted), and rewrites some: ``.5`` as ``0.5``, ``-.5`` as ``-0.5``,
  ``inf``, ``-inf`` and ``.Inf`` as ``.inf``, ``-.inf``, ``nan`` as ``.nan`` (a key's even between quotes). A
  JSON integer or decimal fraction otherwise means what PyYAML reads from the same plain text; a text with a plain
  number with an exponent (PyYAML takes ``1e3`` for a string, ``1.0e+3`` for a float), a signed fraction without
  a leading digit, an integer of 19 digits or more (orjson reads it as a float) or a spelling of infinity or
  not-a-number declines.
* **Strings whose text PyYAML's resolver takes for something else** (``yes``, ``~``, ``0x1F``, ``1_000``, a
  date; ``_IMPLICIT``, from PyYAML's own table) are the doubt left: rapidyaml writes such a plain scalar as a
  string, and the JSON cannot say whether it was plain or quoted (a JSON number or word between quotes can only
  have been quoted: plain, rapidyaml writes it bare). For each distinct such text the YAML text is searched for it
  standing alone as a plain scalar could (``_alone``); found anywhere, the text declines. A key's text is doubted
  even when it looks like a JSON number (rapidyaml quotes every key; PyYAML reads a plain ``1:`` as the integer 1).

**Errors stay PyYAML's**: rapidyaml reads some texts libyaml refuses, so libyaml's parser first runs over the text
in C alone (``_libyaml_reads``: no Python object per event, about an eighth of PyYAML's reading); a text it refuses
goes the usual way, to PyYAML's error with its line and column. rapidyaml's error handler prints its message on the standard error before it raises, so the parse runs with file
descriptor 2 pointed at ``/dev/null``, and only where nothing else can write there meanwhile: in a process's
main thread with no other thread alive (``fairway simulate``; a web or worker process reads the usual way). A text
rapidyaml refuses goes the usual way too. ``FAIRWAY_FAST_YAML=0`` turns the path
off. ``tests/unit/test_manifest_yaml.py`` holds its documents equal to PyYAML's, type for type, or the text
declined, on YAML's corner cases, on generated texts (structures, plain numbers near every implicit type's edges,
what PyYAML writes in every style, broken texts) and on every peer manifest.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import orjson
from yaml import YAMLError
from yaml._yaml import CParser
from yaml.resolver import Resolver

__all__ = ["FAST_MIN_CHARS", "available", "documents"]

# Below this size the usual loader takes a few milliseconds and this path would only add a second way to read.
FAST_MIN_CHARS = 1 << 18

try:  # an optional accelerator: without it every text goes the usual way
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - the project's dependencies include it
    ryml = None


def available() -> bool:
    return ryml is not None


# Every text PyYAML's resolver takes for something other than a string (its own table, in verbose mode).
_IMPLICIT = re.compile(
    "|".join(
        sorted(
            {
                f"(?:{regexp.pattern[1:-1]})"
                for resolvers in Resolver.yaml_implicit_resolvers.values()
                for tag, regexp in resolvers
                if tag != "tag:yaml.org,2002:str"
            }
        )
    ),
    re.VERBOSE,
)
# a JSON literal rapidyaml would have written bare had the scalar been plain: its quotes prove it was not
_JSON_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")
# A JSON string that may be such a text: it starts like a number (or ~ or =) and holds only what numbers, dates and
# times hold (a quantity such as "4Gi" stops at its G), or it is one of the resolver's words.
# Each starts with a literal quote, which the regular expression engine skips to at C speed; ':' after it is a key.
_WORDS = "yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|null|Null|NULL"
_CANDIDATE = re.compile(rf'"([-+.0-9~=][-+.0-9_:xXbBoOa-fA-FtTzZiInN ]*|{_WORDS})"(:?)')
# a plain number with an exponent, in the text with every digit made 0 (bytes.translate): "0e" is a literal to look
# for at C speed, the rest is checked around each find
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_NUMBER_BYTES = frozenset(b"0123456789_.-+")
_EXPONENT = re.compile(rb"[-+]?[0-9_]*\.?[0-9_]*[eE][-+]?[0-9]+")
_SIGNED_POINT = re.compile(rb"[-+]\.[0-9][0-9_]*")
_INFINITY = re.compile(rb"[-+.]*(?:infinity|inf|nan)")
# the bytes a text may hold: printable ASCII and line feeds, but not the anchor, alias and tag indicators
_ALLOWED = bytes(range(32, 127)).translate(None, b"&*!") + b"\n"
# what may stand right before a plain scalar: a blank, a line break, a flow indicator, or an indicator and its blank
_MAY_PRECEDE = frozenset(b" \n[{,:-?")

_PARSE_LOCK = threading.Lock()


def _declines(data: bytes) -> bool:
    """True for a text (its ASCII bytes) this path does not take (module docstring), judged at C speed."""
    if data.translate(None, _ALLOWED) or b"<<" in data or data.startswith(b"%") or b"\n%" in data:
        return True
    if b"\\\n" in data:  # an escaped line break in a double-quoted scalar: a blank line after it folds differently
        return True
    for indicator in (b"|", b">"):  # a block scalar that is a whole document (rapidyaml reads on past its end)
        at = data.find(indicator)
        while at != -1:
            if at == 0 or data[at - 1 : at] == b"\n" or data[max(at - 4, 0) : at] == b"--- ":
                return True
            at = data.find(indicator, at + 1)
    at = data.find(b"?")  # a complex key: "?" where a plain scalar could start (in a flow, even without a blank)
    while at != -1:
        if _starts_scalar(data, at):
            return True
        at = data.find(b"?", at + 1)
    return False


def _alone(value: str, data: bytes) -> bool:
    """Whether ``value`` could stand in the YAML text (its ASCII bytes) as a whole plain scalar: not right after a
    character a plain scalar cannot start after (a quote, a letter, ...), and followed by the end of a scalar (blanks,
    then a line break, a comment, a flow indicator, the end of the text, or a colon and a blank for a key). A space
    of the value matches any run of blanks and line breaks (a plain scalar folded over lines). Each place the value's
    first word stands is found by ``bytes.find`` (C speed); the rest is matched there."""
    words = value.encode("ascii").split(b" ")
    rest = re.compile(rb"\s+".join(re.escape(word) for word in words) + rb"(?=[ ]*(?:$|[\n#,\]}]|:(?:\s|$)))")
    at = data.find(words[0])
    while at != -1:
        if _starts_scalar(data, at) and rest.match(data, at) is not None:
            return True
        at = data.find(words[0], at + 1)
    return False


def _scalar_ends(data: bytes, end: int) -> bool:
    """Whether a plain scalar ending at ``end`` would end there (blanks, then the end of the line, a comment, a flow
    indicator, or a colon and a blank)."""
    while data[end : end + 1] == b" ":
        end += 1
    after = data[end : end + 1]
    return after in (b"", b"\n", b"#", b",", b"]", b"}") or (
        after == b":" and data[end + 1 : end + 2] in (b"", b" ", b"\n")
    )


def _starts_scalar(data: bytes, start: int) -> bool:
    return start == 0 or data[start - 1] in _MAY_PRECEDE


def _rewritten_or_bare_in_doubt(data: bytes) -> bool:
    """Whether a plain scalar of the text may be one that rapidyaml writes bare or rewrites, where PyYAML reads
    something else: a number with an exponent (``1e3`` is a string to PyYAML), a fraction with a sign before its
    point (``-.5``), an integer of 19 digits or more (orjson would read it as a float), or a spelling of infinity or
    not-a-number (rapidyaml writes ``inf``, ``-inf``, ``.Inf``, ``nan`` as ``.inf``, ``-.inf``, ``.nan``). Each is
    looked for by a literal (``bytes.find`` at C speed) in the text with every digit made 0 or in lower case; what
    stands around each find is checked here."""
    flat = data.translate(_DIGITS_AS_ZERO)
    if b"0" * 19 in flat:
        return True
    for needle, pattern in ((b"0e", _EXPONENT), (b"-.0", _SIGNED_POINT)):
        at = flat.find(needle)
        while at != -1:
            start = at
            while start > 0 and data[start - 1] in _NUMBER_BYTES:
                start -= 1
            found = pattern.match(data, start)
            if found is not None and _starts_scalar(data, start) and _scalar_ends(data, found.end()):
                return True
            at = flat.find(needle, at + 1)
    lower = data.lower()
    for needle in (b"inf", b"nan"):
        at = lower.find(needle)
        while at != -1:
            start = at
            while start > 0 and lower[start - 1] in b"-+.":
                start -= 1
            found = _INFINITY.match(lower, start)
            if found is not None:
                end = found.end()
                # rapidyaml rewrites a key's spelling even between quotes: quotes count as the scalar's bounds too
                if start > 0 and lower[start - 1] in b"'\"" and lower[end : end + 1] in (b"'", b'"'):
                    return True
                if _starts_scalar(lower, start) and _scalar_ends(lower, end):
                    return True
            at = lower.find(needle, at + 1)
    return False


def _doubted(json: str, data: bytes) -> bool:
    """True when a scalar of the JSON may mean something else to PyYAML (module docstring)."""
    if _rewritten_or_bare_in_doubt(data):
        return True
    if '"":' in json:  # an empty key: PyYAML's null (or its error), rapidyaml's ""
        return True
    words: list[str] = []
    for value, colon in set(_CANDIDATE.findall(json)):
        if _IMPLICIT.fullmatch(value) is None:
            continue  # a string to PyYAML too
        if not colon and _JSON_LITERAL.fullmatch(value) is not None:
            continue  # a value in quotes: rapidyaml writes a plain one bare
        if " " in value:  # a scalar of several words (rare): matched across the line breaks it may fold over
            if _alone(value, data):
                return True
            continue
        words.append(value)
    if len(words) <= _SEARCHES:  # a few: a search of the text each (bytes.find) costs less than the two passes
        return any(_alone(value, data) for value in words)
    plain = _plain_words(data)  # many (a snapshot's distinct timestamps): one pass for all, not one each
    return any(value.encode("ascii") in plain for value in words)


# Up to this many one-word candidates are searched for one by one; more are looked up in ``_plain_words``.
_SEARCHES = 16


# A word that may be a whole plain scalar where it stands (``_alone``'s rule for a value of one word): it starts the
# text or follows a character a plain scalar may follow, and the end of a scalar follows it. Matched in a lookahead
# so that every start is tried, also inside another word (after its "-" or ":"), as ``_alone`` tries them.
def _plain_word_pattern(repeat: bytes) -> re.Pattern[bytes]:
    return re.compile(
        rb"(?:^|(?<=[ \n\[{,:\-?]))(?=([-+.0-9~=][-+.0-9_:xXbBoOa-fA-FtTzZiInN]"
        + repeat
        + rb"|"
        + _WORDS.encode("ascii")
        + rb")(?=[ ]*(?:$|[\n#,\]}]|:(?:\s|$))))",
        re.MULTILINE,
    )


_LONGEST_PLAIN_WORD = _plain_word_pattern(rb"*")
_SHORTEST_PLAIN_WORD = _plain_word_pattern(rb"*?")


def _plain_words(data: bytes) -> set[bytes]:
    """Every one-word value that ``_alone`` would find standing as a whole plain scalar in ``data``, in two passes
    over the text. A start gives at most two such words, since the only character of a word that can also end a
    scalar is a colon followed by a blank (``12: `` as a key, and ``12:`` before a blank and a line end): the
    longest and the shortest match find both."""
    return set(_LONGEST_PLAIN_WORD.findall(data)) | set(_SHORTEST_PLAIN_WORD.findall(data))


def _libyaml_reads(data: bytes) -> bool:
    """Whether libyaml parses the text without an error. rapidyaml reads some texts libyaml refuses (content after
    ``...`` without ``---``, a quoted scalar followed by more on its line, a plain scalar starting with ``]``); libyaml's
    parser alone, without a Python object per event (``CParser.raw_parse``), takes about an eighth of PyYAML's
    reading, and a text it refuses goes the usual way, to PyYAML's error."""
    parser = CParser(data)
    try:
        parser.raw_parse()
    except YAMLError:
        return False
    return True


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 on /dev/null for the block (rapidyaml prints its errors before raising them)."""
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _only_thread() -> bool:
    return threading.current_thread() is threading.main_thread() and threading.active_count() == 1


def _json_stream(data: bytes) -> tuple[str, bool] | None:
    """The text as rapidyaml writes it in JSON, and whether it is a stream (a JSON array of its documents) rather
    than one document; ``None`` if rapidyaml refuses the text or writes nothing (a text of comments)."""
    assert ryml is not None
    with _PARSE_LOCK, _quiet_stderr():
        try:
            tree = ryml.parse_in_arena(data)
        except Exception:  # rapidyaml's parse error: the usual path gives PyYAML's
            return None
        root = tree.root_id()
        out = ryml.emit_json_malloc(tree, root)
        return (out, bool(tree.is_stream(root))) if out else None


def documents(text: str, *, force: bool = False) -> list[Any] | None:
    """The documents of ``text`` exactly as PyYAML's safe loader builds them, or ``None`` when this path does not
    read it (too small, unusual, a scalar in doubt, rapidyaml refuses it, or other threads alive): then the caller
    reads the usual way. ``force`` skips the size and thread conditions (the tests; it still silences fd 2)."""
    if ryml is None or os.environ.get("FAIRWAY_FAST_YAML", "1") == "0":
        return None
    if not force and (len(text) < FAST_MIN_CHARS or not _only_thread()):
        return None
    if not text.strip() or not text.isascii():
        return None
    data = text.encode("ascii")
    if _declines(data):
        return None
    if not _libyaml_reads(data):
        return None
    try:
        written = _json_stream(data)
    except OSError:  # no standard error to point elsewhere (a daemon that closed it): the usual way
        return None
    if written is None or _doubted(written[0], data):
        return None
    json, stream = written
    try:
        loaded = orjson.loads(json)
    except orjson.JSONDecodeError:  # a bare scalar JSON does not take (+1, 0x1F.)
        return None
    return cast(list[Any], loaded) if stream else [loaded]
