"""A big ``kind: List`` (``kubectl get -o yaml``) read item by item, with what the engine does not read left out.

``kubectl get nodes,pods -A -o yaml`` of a real cluster is one YAML document of 100 MB and more: every object with its
``metadata.managedFields`` and its full ``status`` (a node's images, addresses, nodeInfo; a pod's conditions and
container statuses). Read whole, as one document, it becomes one Python object of several GB. ``list_items`` reads it
in pieces instead, and gives the same items the whole document would have held, one at a time:

* **The cut.** kubectl writes the List as a block mapping whose ``items`` is a block sequence at the start of its
  lines (``items:`` then ``- apiVersion: v1`` ...; an indented sequence is read too). An item starts at a line
  beginning with ``- `` at the sequence's column, and the sequence ends at the first line left of it that is not such
  a line; a piece is a run of whole items (about ``PIECE_CHARS``), a YAML sequence text of its own, read by the usual
  reader (``engine.manifests.yamlload``, after the depth check). YAML ends a plain or block scalar at a line less
  indented than its parent, so only a quoted scalar or a flow collection can run over such a line, and cut there,
  it is unterminated in its piece: a YAML error. Any YAML error in a piece, and anything the text holds that a cut
  could separate (an anchor, an alias, a tag directive, a second document), sends the whole text back the usual way
  (``Unstreamable``), which also gives the error its line in the whole file.
* **What is left out before anything is built.** ``metadata.managedFields`` is taken out of the text of each piece
  (its lines: the key at the metadata's column and everything more indented below it, or a dash at its column) when
  no block scalar (``|``, ``>``) is in the items; each item built is then ``lean``: no ``managedFields``, a Pod's
  ``status`` reduced to ``phase`` and ``startTime``, a Node's to ``allocatable``, ``capacity`` and ``conditions`` —
  the fields the readers of ``engine.manifests.core`` take. Everything else of every kind is kept, so the documents
  and their errors are those of the whole text.

A text below ``STREAM_MIN_CHARS`` is read the usual way: nothing to gain there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from engine.manifests.yamlload import load_manifest_documents

__all__ = ["PIECE_CHARS", "STREAM_MIN_CHARS", "Unstreamable", "lean", "list_items"]

STREAM_MIN_CHARS = 1 << 22  # 4 MiB
PIECE_CHARS = 1 << 18  # 256 KiB: big enough for the fast reader (engine.manifests.fastyaml), small in memory

_ITEMS_KEY = re.compile(r"^items:[ \t]*(?:#[^\n]*)?\n", re.MULTILINE)
_FIRST_ITEM = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*( *)-(?:[ \t]|\n)")
# a second document, a directive, an anchor or alias, a tag: what a cut could separate from what it refers to
_UNCUTTABLE = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)|^%|(?:^|[ \t\[{,])[&*!][^ \t\r\n]", re.MULTILINE)
_BLOCK_SCALAR = re.compile(r"[:\-][ \t]+[|>][-+0-9]*[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_OTHER_BREAKS = re.compile("\r|[\x85\u2028\u2029]")

_POD_STATUS = ("phase", "startTime")
_NODE_STATUS = ("allocatable", "capacity", "conditions")


class Unstreamable(Exception):
    """The text cannot be read in pieces after all: read it whole (the usual way)."""


def lean(item: Any) -> Any:
    """``item`` without what no reader takes: ``metadata.managedFields``; a Pod's ``status`` but ``phase`` and
    ``startTime``; a Node's but ``allocatable``, ``capacity`` and ``conditions``. Anything not shaped as expected is
    given back as it is (its reader names the problem)."""
    if type(item) is not dict:
        return item
    meta = item.get("metadata")
    if type(meta) is dict and "managedFields" in meta:
        item["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    status = item.get("status")
    if type(status) is dict and item.get("apiVersion") == "v1":
        kind = item.get("kind")
        keep = _POD_STATUS if kind == "Pod" else _NODE_STATUS if kind == "Node" else None
        if keep is not None:
            item["status"] = {k: status[k] for k in keep if k in status}
    return item


def list_items(text: str, max_depth: int) -> tuple[Mapping[str, Any], Iterator[tuple[int, Any]]] | None:
    """For a text that is one big ``kind: ...List`` written as kubectl writes it: the List without its items, and an
    iterator of (1-based item number, item made ``lean``), read piece by piece. ``None`` for any other text (read it
    the usual way). The iterator raises ``Unstreamable`` when a piece cannot be read alone (the caller then reads
    the whole text the usual way, which gives the same items or the error with its line)."""
    if len(text) < STREAM_MIN_CHARS:
        return None
    found = _ITEMS_KEY.search(text)
    if found is None or _ITEMS_KEY.search(text, found.end()) is not None:
        return None
    first = _FIRST_ITEM.match(text, found.end())
    if first is None:
        return None
    indent = len(first.group(1))
    start = first.start(1)
    item_line = re.compile(rf"^ {{{indent}}}-(?:[ \t]|$)", re.MULTILINE)
    # the sequence ends at the first line that is not blank, a comment, more indented, or one of its dashes
    outside = re.compile(rf"^(?! {{{indent}}}-(?:[ \t]|$))(?! {{{indent + 1}}})(?:[ \t]*[^ \t\n#])", re.MULTILINE)
    end_match = outside.search(text, start)
    end = end_match.start() if end_match is not None else len(text)
    if _UNCUTTABLE.search(text) is not None or _OTHER_BREAKS.search(text) is not None:
        return None
    try:
        rest = list(load_manifest_documents(text[: found.start()] + text[end:], max_depth))
    except yaml.YAMLError:
        return None
    if len(rest) != 1 or not isinstance(rest[0], dict) or "items" in rest[0]:
        return None
    kind = rest[0].get("kind")
    if not isinstance(kind, str) or not kind.endswith("List"):
        return None
    strip = _managed_fields(indent) if _BLOCK_SCALAR.search(text, start, end) is None else None
    return rest[0], _pieces(text, start, end, indent, item_line, strip, max_depth)


def _managed_fields(indent: int) -> re.Pattern[str]:
    """The lines of an item's ``metadata.managedFields`` block (the item's keys at ``indent + 2``, metadata's at
    ``indent + 4``): the key line, then every line more indented, blank, or a dash at the key's column."""
    col = " " * (indent + 4)
    return re.compile(rf"^{col}managedFields:[ \t]*\n(?:{col}(?: [^\n]*|-(?:[ \t][^\n]*)?)\n|[ \t]*\n)*", re.MULTILINE)


def _pieces(
    text: str,
    start: int,
    end: int,
    indent: int,
    item_line: re.Pattern[str],
    strip: re.Pattern[str] | None,
    max_depth: int,
) -> Iterator[tuple[int, Any]]:
    number = 0
    dedent = re.compile(rf"^ {{1,{indent}}}", re.MULTILINE) if indent else None
    at = start
    while at < end:
        cut = item_line.search(text, min(at + PIECE_CHARS, end), end)
        stop = cut.start() if cut is not None else end
        piece = text[at:stop]
        at = stop
        if not piece.endswith("\n"):
            piece += "\n"  # the last line of a block taken out ends with its line break too
        if strip is not None:
            piece = strip.sub("", piece)
        if dedent is not None:
            piece = dedent.sub("", piece)
        try:
            documents = list(load_manifest_documents(piece, max_depth - 1))
        except yaml.YAMLError:
            raise Unstreamable from None
        if len(documents) != 1 or not isinstance(documents[0], list):
            raise Unstreamable
        items = documents[0]
        documents.clear()
        for index in range(len(items)):
            number += 1
            item, items[index] = items[index], None
            yield number, lean(item)
