"""Manifests' YAML read as PyYAML's safe loader reads it, in about 0.6 of its time.

A big snapshot (tens of thousands of documents, millions of scalars) spends most of its loading time not in
libyaml's parser but in PyYAML's Python half: the resolver runs its regular expressions on every plain scalar, and
the constructor walks every node through ``construct_object`` (a call, a dictionary of constructed objects and a
generator per mapping). Manifests repeat the same few thousand scalars (keys, resource names, quantities, label
values) over and over, so ``ManifestLoader`` keeps libyaml's parser and composer (``yaml.CSafeLoader``, through
``engine.limits.SafeLoader`` and its error messages) and makes the Python half lean:

* ``resolve``: a plain scalar's tag is looked up in a dictionary filled by PyYAML's own resolver, once per
  distinct text (the resolver's answer depends only on the text);
* ``construct_document``: one recursive walk over the composed nodes that builds ``dict``, ``list`` and the plain
  scalars directly; a string is the node's own text, and an ``int``, ``float``, ``bool``, null or timestamp is
  built by PyYAML's constructor once per distinct (tag, text) and reused (they are immutable).

Everything else goes through PyYAML's own constructor, node by node: a merge key (``<<``), a mapping key that is
a collection, any tag other than the standard map, seq, str, int, float, bool, null and timestamp (``!!binary``,
``!!set``, ``!!omap``, a local tag: the same values or the same errors). A text with an alias (any ``*``) is read
entirely by PyYAML's constructor, so that an anchored node shared by several places stays one object, exactly as
before. ``tests/unit/test_manifest_yaml.py`` holds the two loaders equal on every manifest the tests know and on
generated texts full of YAML's corner cases.

A big text goes first to ``engine.manifests.fastyaml`` (rapidyaml), which reads it about three times faster when it
can show that PyYAML would read the same, and otherwise hands it back here.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from engine.limits import SafeLoader, check_yaml_depth
from engine.manifests import fastyaml

__all__ = ["ManifestLoader", "load_manifest_documents"]

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
# scalars PyYAML's safe constructor builds into immutable values, which can be shared
_SHARED_SCALARS = frozenset(
    {
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:timestamp",
    }
)
_IMMUTABLE = (int, float, bool, type(None), datetime, date)


class ManifestLoader(SafeLoader):
    """``engine.limits.SafeLoader`` (libyaml) with a memoised resolver and a direct constructor (module docstring)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        if self.yaml_path_resolvers:  # pragma: no cover - nothing registers one on the safe loader
            raise RuntimeError("ManifestLoader assumes no path resolvers")
        # The composer calls these around every node for path resolvers, which the safe loader has none of: a
        # built-in that takes the same arguments and does nothing is the cheapest call there is.
        self.descend_resolver = slice
        self.ascend_resolver = tuple
        self._plain_tags: dict[str, str] = {}  # a plain scalar's text -> its resolved tag
        self._scalars: dict[str, dict[str, Any]] = {tag: {} for tag in _SHARED_SCALARS}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            if implicit[0]:
                tag = self._plain_tags.get(value)
                if tag is None:
                    tag = self._plain_tags[value] = super().resolve(kind, value, implicit)
                return tag
            return _STR  # a quoted scalar without a tag (no path resolvers: see __init__)
        return _MAP if kind is MappingNode else _SEQ

    def construct_document(self, node: Any) -> Any:
        try:
            return self._build(node)
        finally:
            self.constructed_objects: dict[Any, Any] = {}
            self.recursive_objects: dict[Any, Any] = {}
            self.state_generators: list[Any] = []
            self.deep_construct = False

    def _build(self, node: Any) -> Any:
        cls = node.__class__
        tag = node.tag
        if cls is ScalarNode:
            if tag == _STR:
                return node.value
            return self._scalar(node, tag)
        if cls is MappingNode and tag == _MAP:
            out: dict[Any, Any] = {}
            build = self._build
            for key_node, value_node in node.value:
                if key_node.__class__ is not ScalarNode or key_node.tag == _MERGE:
                    return self._standard(node)  # a merge or a collection as a key: PyYAML's own rules and errors
                key = key_node.value if key_node.tag == _STR else self._scalar(key_node, key_node.tag)
                value_cls = value_node.__class__
                if value_cls is ScalarNode and value_node.tag == _STR:
                    out[key] = value_node.value
                else:
                    out[key] = build(value_node)
            return out
        if cls is SequenceNode and tag == _SEQ:
            build = self._build
            return [
                item.value if item.__class__ is ScalarNode and item.tag == _STR else build(item) for item in node.value
            ]
        return self._standard(node)

    def _scalar(self, node: Any, tag: str) -> Any:
        cache = self._scalars.get(tag)
        if cache is None:
            return self._standard(node)
        text = node.value
        if text in cache:
            return cache[text]
        value = self._standard(node)
        if isinstance(value, _IMMUTABLE):
            cache[text] = value
        return value

    def _standard(self, node: Any) -> Any:
        """One node (and what it holds) built by PyYAML's own constructor."""
        data = self.construct_object(node, deep=True)
        self.constructed_objects = {}
        return data


def load_manifest_documents(text: str, max_depth: int) -> Iterator[Any]:
    """The documents of a YAML text, after the depth check (``engine.limits.check_yaml_depth``), as
    ``engine.limits.load_yaml_all`` gives them. Raises ``yaml.YAMLError`` (``YAMLTooDeep`` for depth)."""
    check_yaml_depth(text, max_depth)
    fast = fastyaml.documents(text)  # a big text rapidyaml can vouch for (engine.manifests.fastyaml)
    if fast is not None:
        yield from fast
        return
    loader: SafeLoader = SafeLoader(text) if "*" in text else ManifestLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            yield loader.construct_document(node)
    finally:
        loader.dispose()
