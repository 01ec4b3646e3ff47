"""engine.manifests.yamlload: the manifests' lean loader gives what PyYAML's safe loader gives (the same documents,
or the same error), and the depth bound it runs first still never underestimates, document by document. Pure."""

from __future__ import annotations

import base64
import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.limits import SafeLoader, YAMLTooDeep, check_yaml_depth, yaml_depth_bound
from engine.manifests import fastyaml
from engine.manifests.yamlload import ManifestLoader, load_manifest_documents
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests
from tests.support.examples import examples
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
@settings(max_examples=examples(300), deadline=None)
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
@settings(max_examples=examples(400), deadline=None)
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


# -- big texts through rapidyaml (engine.manifests.fastyaml): PyYAML's documents, or a refusal ------------------------
needs_ryml = pytest.mark.skipif(not fastyaml.available(), reason="rapidyaml is not installed")


def assert_fast_agrees(text: str, taken: bool | None = None) -> None:
    """The fast path gives PyYAML's documents, type for type, or declines; it never reads a text PyYAML refuses.
    ``taken`` True/False: it must read / must decline this text."""
    expected = outcome(reference, text)
    got = fastyaml.documents(text, force=True)
    if got is None:
        assert taken is not True, f"declined {text!r}"
        return
    assert taken is not False, f"read {text!r} as {got!r}, PyYAML: {expected!r}"
    assert expected[0] == "ok", (text, expected, got)
    assert same(expected[1], got), (text, expected[1], got)


@needs_ryml
@pytest.mark.parametrize("text", CORNERS)
def test_the_fast_path_reads_every_corner_as_pyyaml_does_or_declines(text: str) -> None:
    assert_fast_agrees(text)


TAKEN = [
    # a manifest as kubectl or yaml.dump write it: block style, empty flow collections, quoted numbers and words
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    note: 'a: b, c'\n  labels:\n    tier: '1'\n"
    "spec:\n  containers:\n  - name: c\n    securityContext: {}\n    args: []\n    resources:\n"
    "      requests:\n        cpu: 500m\n        nvidia.com/gpu: '1'\n      limits:\n        cpu: '2'\n",
    # quoted texts of every implicit type stay strings; bare JSON numbers and words mean the same to both
    "a: 'yes'\nb: \"017\"\nc: '1e3'\nd: '2024-01-01'\ne: '~'\nf: 'Null'\ng: '0x1F'\nh: '1:30'\nj: '='\nk: '-.5'\n",
    "a: 1\nb: -0\nc: 1.5\nd: 0.\ne: .5\ng: true\nh: false\ni: null\nj: 123456789012345678\nk: 1.0\nl: -2.50\n",
    "creationTimestamp: \"2026-11-25T10:00:00Z\"\nwhen: 'at 2026-11-25 10:00:00'\nlevel: info\nname: nanny\n",
    # block scalars (their text is never resolved), folded and multi-line quoted scalars, comments, markers
    "a: |\n  yes it is\n  one: two\nb: >-\n  one\n  two\n\n  three\nc: |-\n  x\nd: \"x\\ny\\\"z\\u0041\"\ne: 'it''s'\n",
    "# head\n---\na: b  # tail\n...\n---\n- x\n- - 1\n  - 'two'\n  - three: 3\n---\n---\nk: v\n",
    "a: multi\n  line plain\nb: 'multi\n  line'\nc: \"folded\n\n  twice\"\n",
    "a:\n- \n- x\n-\nb:\n",
    "a: 1\na: 2\nb:\n  x: 1\n  x: 3\n",
    # flow collections, and JSON in a quoted annotation (Koordinator's)
    'a: [1, \'two\', {three: 3, four: [x, y]}]\nb: {c: d, e: []}\nc: \'{"cpu": "3", "pods": ["a"]}\'\n',
    'ns: \'["team-72",\n  "team-73"]\'\nw: \'{"cpu": "3", "memory": "1Gi",\n  "pods": "2"}\'\n',
]

DECLINED = [
    # plain scalars of YAML 1.1's implicit types that JSON reads otherwise
    "a: yes\n",
    "a: [x, No]\n",
    "a: ~\n",
    "a: Null\n",
    "a: TRUE\n",
    "a: 0777\n",
    "a: 0x1F\n",
    "a: 1_000\n",
    "a: 1:30\n",
    "a: +1\n",
    "a: .inf\n",
    "a: 1e3\n",
    "a: 1.0e+3\n",
    "a: 2024-01-01\n",
    "a: 2001-12-14\n  21:59:43.10\n",  # a timestamp folded over two lines
    "a: =\n",
    "a: -.5\n",
    "a: inf\n",
    "a: -Infinity\n",
    "'nan': v\n",  # rapidyaml rewrites even a quoted key's spelling
    "a: 123456789012345678901234\n",
    # keys PyYAML reads as other types
    "1: a\n",
    "true: a\n",
    "{1.5: x}\n",
    # what this path does not take at all
    "a: [x, ?y]\n",  # a complex key in a flow
    "a: >\n  x\n---\n|\n",
    "a: |x\n  t\n",
    'a: "k\n  k": v\n',
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "<<: {a: 1}\n",
    "? a\n: b\n",
    ": x\n",
    "a:\tb\n",
    "a: b\r\n",
    "a: caf\u00e9\n",
    "a: \x07\n",
    "",
    "# only a comment\n",
]


@needs_ryml
@pytest.mark.parametrize("text", TAKEN)
def test_the_fast_path_reads_ordinary_manifests(text: str) -> None:
    assert_fast_agrees(text, taken=True)


@needs_ryml
@pytest.mark.parametrize("text", DECLINED)
def test_the_fast_path_declines_what_json_reads_otherwise(text: str) -> None:
    assert_fast_agrees(text, taken=False)


@needs_ryml
@given(st.lists(st.dictionaries(keys, structures, min_size=1, max_size=4), min_size=1, max_size=3))
@settings(max_examples=examples(300), deadline=None)
def test_the_fast_path_reads_generated_texts_as_pyyaml_does_or_declines(documents: list[dict[str, Any]]) -> None:
    assert_fast_agrees("".join("---" + _block(doc, 0) for doc in documents))


# plain scalars close to the implicit types' edges, written as a person would (no quoting)
plain_scalars = st.from_regex(r"\A[-+]?[0-9._]{0,4}(?:[eE:xob][-+]?[0-9a-f_.]{0,3})?[0-9TtZ:. -]{0,9}\Z")
printable = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=10)
dumped = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | printable,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(printable, inner, max_size=3),
    max_leaves=20,
)


@needs_ryml
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), plain_scalars, min_size=1), st.booleans())
@settings(max_examples=examples(500), deadline=None)
def test_the_fast_path_reads_plain_numbers_as_pyyaml_does_or_declines(values: dict[str, str], flow: bool) -> None:
    if flow:
        text = "{" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}\n"
    else:
        text = "".join(f"{k}: {v}\n" for k, v in values.items())
    assert_fast_agrees(text)


@needs_ryml
@given(
    st.lists(dumped, min_size=1, max_size=3),
    st.sampled_from([False, None, True]),
    st.sampled_from([None, '"', "'"]),
    st.sampled_from([20, 80]),
)
@settings(max_examples=examples(400), deadline=None)
def test_the_fast_path_reads_what_pyyaml_writes(
    values: list[Any], flow: bool | None, style: str | None, width: int
) -> None:
    text = yaml.safe_dump_all(values, default_flow_style=flow, default_style=style, width=width, explicit_start=True)
    assert_fast_agrees(text)


MUTABLE = TAKEN[0] + "---\n" + TAKEN[4] + "---\n" + TAKEN[5]


@needs_ryml
@given(st.lists(st.tuples(st.integers(0, len(MUTABLE)), st.integers(0, 3), st.sampled_from(list(" \n-:#'\"[]{},|>?.0y1e"))), min_size=1, max_size=4))  # fmt: skip
@settings(max_examples=examples(600), deadline=None)
def test_the_fast_path_on_broken_texts_reads_as_pyyaml_does_or_declines(edits: list[tuple[int, int, str]]) -> None:
    text = MUTABLE
    for at, cut, char in edits:
        at = min(at, len(text))
        text = text[:at] + char + text[at + cut :]
    assert_fast_agrees(text)


@needs_ryml
@needs_peer_manifests
def test_the_fast_path_reads_every_peer_manifest_as_pyyaml_does_or_declines() -> None:
    paths = sorted(PEER_MANIFESTS.glob("*/*.yaml"))
    taken = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert_fast_agrees(text)
        taken += fastyaml.documents(text, force=True) is not None
    assert taken > len(paths) // 3  # most of them are ordinary manifests


@needs_ryml
def test_rapidyaml_refusing_a_text_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    assert fastyaml.documents("a: b: c\n" + "x: 1\n" * 10, force=True) is None
    assert fastyaml.documents("a: [1, 2\n", force=True) is None
    out = capfd.readouterr()
    assert out.err == "" and out.out == ""


@needs_ryml
def test_a_process_without_a_standard_error_reads_the_usual_way() -> None:
    script = (
        "import os\n"
        "os.close(2)\n"
        "from engine.manifests import fastyaml\n"
        "print(fastyaml.documents('a: 1\\n', force=True))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2]
    )
    assert done.returncode == 0 and done.stdout.strip() == "None"


@needs_ryml
def test_small_texts_and_other_threads_go_the_usual_way() -> None:
    big = "".join(f"---\nkind: Pod\nmetadata:\n  name: p{i}\nspec: {{replicas: {i}}}\n" for i in range(8000))
    assert len(big) >= fastyaml.FAST_MIN_CHARS
    assert fastyaml.documents("a: 1\n") is None  # under the size
    seen: list[Any] = []
    worker = threading.Thread(target=lambda: seen.append(fastyaml.documents(big)))
    worker.start()
    worker.join()
    assert seen == [None]  # not the main thread: the standard error cannot be silenced for it alone


def test_a_big_manifest_takes_the_fast_path_in_a_process_of_its_own(tmp_path: Any) -> None:
    """Through ``load_manifest_documents``, as ``fairway simulate`` reads: the main thread of a process alone; the
    documents equal the usual path's (``FAIRWAY_FAST_YAML=0``)."""
    if not fastyaml.available():
        pytest.skip("rapidyaml is not installed")
    script = (
        "import json, sys\n"
        "from engine.manifests import fastyaml, yamlload\n"
        "text = sys.stdin.read()\n"
        "calls = []\n"
        "real = fastyaml.documents\n"
        "def spy(t, **kw):\n"
        "    out = real(t, **kw)\n"
        "    calls.append(out is not None)\n"
        "    return out\n"
        "fastyaml.documents = spy\n"
        "docs = list(yamlload.load_manifest_documents(text, 64))\n"
        "print(json.dumps({'fast': calls, 'docs': docs}, sort_keys=True))\n"
    )
    text = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  labels:\n    team: t{i % 7}\n    gpu: 'yes'\n"
        f"spec:\n  priority: {i}\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: 250m\n"
        for i in range(2500)
    )
    assert len(text) >= fastyaml.FAST_MIN_CHARS
    runs = {}
    for switch in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
            env={**os.environ, "FAIRWAY_FAST_YAML": switch},
        )
        runs[switch] = json.loads(done.stdout)
    assert runs["1"]["fast"] == [True] and runs["0"]["fast"] == [False]
    assert runs["1"]["docs"] == runs["0"]["docs"] == reference(text)


_PLAIN_ALPHABET = "0123456789-+.:eE ,#\n[]{}?xab'\"yesnoYESNO~=tTzZ_"
_ONE_WORD_VALUES = ["1", "12", "-5", "5", "1.5", "12:30", "2026-11-29T03:45:11Z", "2026-11-29", "yes", "no", "on",
                    "0x1F", "1e3", "~", "=", "12:", "3:4", ".5", "+1", "5:"]  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=_PLAIN_ALPHABET, max_size=40))
def test_the_one_pass_plain_words_agree_with_the_search_per_value(text: str) -> None:
    """``fastyaml._plain_words`` (one pass over the text for every candidate value) finds a one-word value exactly
    where ``_alone`` (a search of the whole text per value, quadratic over a big snapshot's many distinct quoted
    timestamps) finds it."""
    data = text.encode()
    words = fastyaml._plain_words(data)
    for value in _ONE_WORD_VALUES:
        assert (value.encode() in words) == fastyaml._alone(value, data), (text, value)
