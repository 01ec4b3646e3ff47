"""``fairway simulate -o json``'s writer (orjson brought to ``json.dumps(indent=2, sort_keys=True)``'s exact text),
and the command's garbage-collector settings, put back as they were when it returns."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane.cli import main
from controlplane.simulate_cli import dump_json
from tests.support.examples import examples


def reference(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from([1e-06, 1.5e-05, 0.0001, 1e16, 1e22, 123456789012345678.0, -0.0, 5e-324, 0.1, 2.0])
)
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@given(st.dictionaries(st.text(max_size=8), documents, max_size=5))
@settings(max_examples=examples(500), deadline=None)
def test_the_json_is_the_standard_librarys_byte_for_byte(document: dict[str, Any]) -> None:
    assert dump_json(document) == reference(document)


def test_what_orjson_spells_otherwise() -> None:
    document = {
        "share": [1e-06, 1.5e-05, 0.00001, 1e-7, -2.5e-10, 1e16, 1.2345678901234568e17, 0.5],
        "nested": [[1e-6, [2e-7, {"a": [3e-8]}]], {"b": 4e-9}, []],
        "shares": {"q1": 1e-06, "q2": 0.25, "q3": -3e-05},
        "names": {"\u00e9t\u00e9": "a\u2212b", "emoji": "\U0001f600", "del": "\x7f", "ctl": "\x01\t\n"},
        "message": "available 2 = 32 capability \u2212 12 allocated: 1e-6 stays text",
        "strings that look like numbers": ["1e-6", ": 1e-6", "  0.00001"],
        "big": 2**70,  # past 64 bits: written by json.dumps
        "empty": {"d": {}, "l": []},
    }
    assert dump_json(document) == reference(document)
    without_big = {k: v for k, v in document.items() if k != "big"}
    assert dump_json(without_big) == reference(without_big)


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n",
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: -4}}\n",  # exit 2
])  # fmt: skip
def test_the_collector_is_put_back_as_it_was(tmp_path: Path, text: str, capsys: Any) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    before = (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count())
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr().out
    assert code in (0, 2)
    if code == 0:
        assert out == reference(json.loads(out))
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == before


def test_a_run_leaves_next_to_nothing_for_the_collector(tmp_path: Path) -> None:
    """``fairway simulate`` keeps the cyclic collector off for the whole run (``simulate_cli._Collector``), which is
    sound only while a run leaves next to no garbage in cycles: over the corpus's generated clusters (reclaim,
    preempt, gangs, trees, three sessions and recycling among them), each run leaves at most a few hundred objects
    that only the collector could free.

    The collector stays off over the whole loop, so everything a run allocates is still in the youngest generation
    when it returns: ``gc.collect(0)`` finds that run's garbage without walking the test process's heap (a full
    collection walks millions of objects, pytest's and Django's, and took most of this test's time). Garbage that
    hangs on to older objects is not seen by a young collection; the full collection at the end finds it, for all
    the runs together, under the same bound."""
    from tests.support import corpus

    gc.collect()
    worst = (0, "")
    gc.disable()
    try:
        for case in corpus.generated_cases(range(24)):
            directory = tmp_path / case.id
            directory.mkdir()
            corpus.run_case(case, directory)
            worst = max(worst, (gc.collect(0), case.id))
        older = gc.collect()
    finally:
        gc.enable()
    assert worst[0] <= 1_000, f"{worst[1]} left {worst[0]} objects in cycles"
    assert older <= 1_000, f"the runs left {older} objects in cycles with older objects"
