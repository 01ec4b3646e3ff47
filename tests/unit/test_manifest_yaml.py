"""engine.manifests.yamlload: the manifests' lean loader gives what PyYAML's safe loader gives (the same documents,
or the same error), and the depth bound it runs first still never underestimates, document by document. Pure."""

from __future__ import annotations

import base64
import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.limits import SafeLoader, YAMLTooDeep, check_yaml_depth, yaml_depth_bound
from engine.manifests.yamlload import ManifestLoader, load_manifest_documents
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests
from tests.unit.test_limits import depth_of


def reference(text: str) -> list[Any]:
    """The documents as ``engine.limits.load_yaml_all`` read them before (PyYAML's constructor over libyaml)."""
    return list(yaml.load_all(text, Loader=SafeLoader))


def lean(text: str) -> list[Any]:
    loader = ManifestLoader(text)
    try:
        out = []
        while loader.check_node():
            out.append(loader.construct_document(loader.get_node()))
        return out
    finally:
        loader.dispose()


def same(a: Any, b: Any) -> bool:
    """Equal, with the types too (True is not 1, 1.0 is not 1), and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(k, k2) and same(a[k], b[k2]) for k, k2 in zip(a, b, strict=True))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def outcome(read: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", read(text)
    except yaml.YAMLError as exc:
        return "error", (type(exc).__name__, str(exc))


def assert_same_reading(text: str) -> None:
    expected, got = outcome(reference, text), outcome(lean, text)
    assert expected[0] == got[0], (expected, got)
    if expected[0] == "error":
        assert got == expected
    else:
        assert same(expected[1], got[1]), (expected[1], got[1])


CORNERS = [
    # YAML 1.1's implicit types, as PyYAML resolves them
    "a: yes\nb: No\nc: on\nd: OFF\ne: true\nf: y\ng: ~\nh:\ni: null\nj: Null\n",
    "a: 0777\nb: 0x1F\nc: 0b101\nd: 1_000\ne: 1:30\nf: -0\ng: +12\nh: 190:20:30\n",
    "a: 1.5\nb: 1e3\nc: 1.0e+3\nd: .inf\ne: -.Inf\nf: .nan\ng: 1_000.5\nh: 6.8523015e+5\ni: 685.230_15e+03\n",
    "a: 2001-12-14t21:59:43.10-05:00\nb: 2002-12-14\nc: 2001-12-14 21:59:43.10\nd: '2002-12-14'\n",
    "a: '1'\nb: \"true\"\nc: !!str 5\nd: !!int '7'\ne: !!float '1'\nf: !!bool 'yes'\ng: !!null ''\n",
    "1: one\n1.5: x\ntrue: t\n~: n\n2002-12-14: d\n'1': s\n",
    # keys repeated (the last wins), the same scalar in many roles
    "a: 1\na: 2\nb: {x: 1, x: 1}\nc: [1, '1', 1.0, true, yes, 'yes']\n",
    # merge keys, in every form PyYAML takes
    "base: {a: 1, b: 2}\nm:\n  <<: {a: 9}\n  c: 3\nn:\n  <<: [{a: 1}, {b: 2}]\n  a: 0\n",
    "a:\n  <<: 5\n",  # a merge of a scalar: PyYAML's error
    # tags: binary, set, omap, pairs, a local tag (an error), explicit map and seq
    "b: !!binary " + base64.b64encode(b"hello").decode() + "\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}, {a: 2}]\n",
    "x: !local 1\n",
    "m: !!map {a: 1}\nq: !!seq [1, 2]\n",
    # collections as keys: PyYAML's errors (a flow mapping key is unhashable)
    "? [a, b]\n: c\n",
    "? {a: 1}\n: c\n",
    # block scalars, quoted scalars with escapes, empty documents, a document that is a scalar or a list
    "a: |\n  line 1\n  line 2\nb: >-\n  folded\n  text\nc: \"tab\\there \\u00e9\"\nd: 'it''s'\n",
    "---\n---\na: 1\n...\n---\n- x\n- y\n---\njust text\n",
    "",
    "# only a comment\n",
    # values Python refuses
    "n: 1" + "0" * 5000 + "\n",
    "t: 2024-13-45\n",
    # broken YAML
    "a: [1, 2\n",
    "a: b: c\n",
    "a:\n  - b\n c: d\n",
    # aliases (the whole text is read by PyYAML's constructor)
    "a: &x {k: [1, 2]}\nb: *x\nc: *x\n",
]


@pytest.mark.parametrize("text", CORNERS)
def test_the_lean_loader_reads_every_corner_as_pyyaml_does(text: str) -> None:
    assert_same_reading(text)
    # and through the manifests' entry point (the depth check first; aliases go to PyYAML's own loader)
    expected = outcome(reference, text)
    got = outcome(lambda t: list(load_manifest_documents(t, 64)), text)
    assert expected[0] == got[0]
    if expected[0] == "ok":
        assert same(expected[1], got[1])


def test_an_anchored_node_stays_one_object() -> None:
    (doc,) = list(load_manifest_documents("a: &x {k: 1}\nb: *x\n", 64))
    assert doc["a"] is doc["b"]


scalar_texts = st.sampled_from(
    ["1", "1.5", "yes", "no", "on", "~", "", "'x'", '"2"', "0o7", "07", "1e3", "1:20", "2020-01-01", ".nan", "-.inf",
     "true", "True", "null", "abc", "a b", "100m", "2Gi", "'100m'", "!!str 1", "0x1f", "+1", "1_0"]
)  # fmt: skip
keys = st.sampled_from(["a", "b", "cpu", "1", "yes", "~", "'q'", "2020-01-01", "1.5"])


def _block(value: Any, indent: int) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return " {}\n"
        return "\n" + "".join(f"{pad}{k}:{_block(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return " []\n"
        return "\n" + "".join(f"{pad}-{_block(v, indent + 2)}" for v in value)
    return f" {value}\n"


structures = st.recursive(
    scalar_texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=25,
)


@given(st.lists(st.dictionaries(keys, structures, min_size=1, max_size=4), min_size=1, max_size=3))
@settings(max_examples=300, deadline=None)
def test_the_lean_loader_reads_generated_texts_as_pyyaml_does(documents: list[dict[str, Any]]) -> None:
    text = "".join("---" + _block(doc, 0) for doc in documents)
    assert_same_reading(text)


@needs_peer_manifests
def test_the_lean_loader_reads_every_peer_manifest_as_pyyaml_does() -> None:
    paths = sorted(PEER_MANIFESTS.glob("*/*.yaml"))
    assert paths
    for path in paths:
        assert_same_reading(path.read_text(encoding="utf-8"))


# -- the depth bound, document by document ----------------------------------------------------------------------------
yaml_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet="[]{}ab-:# '\"\n", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b-", "c d"]), inner, max_size=3),
    max_leaves=20,
)


@given(
    st.lists(yaml_values, min_size=1, max_size=4),
    st.sampled_from([False, None, True]),
    st.integers(min_value=1, max_value=12),
)
@settings(max_examples=400, deadline=None)
def test_the_bound_over_several_documents_never_underestimates(
    values: list[Any], flow: bool | None, limit: int
) -> None:
    text = yaml.safe_dump_all(values, default_flow_style=flow, explicit_start=True)
    depth = max(depth_of(v) for v in yaml.safe_load_all(text))
    if yaml_depth_bound(text, limit):
        assert depth <= limit
    if depth > limit:
        with pytest.raises(YAMLTooDeep):
            check_yaml_depth(text, limit)
    else:
        check_yaml_depth(text, limit)


def test_brackets_spread_over_many_documents_keep_the_text_bound() -> None:
    # a big snapshot's JSON annotations: thousands of brackets in all, a few per document
    text = "".join(f"---\nkind: X\nmetadata:\n  annotations:\n    ns: '[\"a{i}\", {{}}]'\n" for i in range(200))
    assert yaml_depth_bound(text, 64)
    deep = text + "---\nx: " + "[" * 70 + "]" * 70 + "\n"
    assert not yaml_depth_bound(deep, 64)
    with pytest.raises(YAMLTooDeep):
        check_yaml_depth(deep, 64)


@pytest.mark.parametrize(
    "text",
    [
        # a marker inside a quoted scalar is an error, not a cut: the brackets before it still count
        'a: "' + "x" * 3 + '\n--- b"\nc: ' + "[" * 20 + "]" * 20 + "\n",
        # a marker that is not one (no blank after it) cuts nothing
        "a: [[[[[[[[[[\n---x\n]]]]]]]]]]\n",
        # anchors and tags on the leading run
        "--- !t &a\n" + "- " * 12 + "x\n",
    ],
)
def test_the_bound_holds_where_markers_mislead(text: str) -> None:
    try:
        depth = max((depth_of(v) for v in yaml.safe_load_all(text)), default=0)
    except yaml.YAMLError:
        depth = None
    for limit in range(1, 25):
        if yaml_depth_bound(text, limit) and depth is not None:
            assert depth <= limit


def test_the_bound_reads_a_big_manifest_without_walking_its_events() -> None:
    text = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  annotations:\n    a: '[\"x\"]'\n"
        f"spec:\n  containers:\n  - name: c\n    resources:\n      requests: {{cpu: 1}}\n"
        for i in range(2000)
    )
    assert yaml_depth_bound(text, 64)
