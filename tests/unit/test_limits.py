"""engine.limits: depth checks that run before any recursive parser, the loaders after them, quantities that cannot
overflow, the limits read from the environment and the cooperative deadline. Pure (no Django)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.limits import (
    BudgetExceeded,
    Deadline,
    Limits,
    TooDeep,
    YAMLTooDeep,
    check_json_depth,
    check_yaml_depth,
    json_depth,
    load_yaml,
    load_yaml_all,
    loads_json,
    yaml_depth_bound,
)
from engine.resources import QuantityError, parse_quantity
from tests.support.examples import examples

BOMB = "[" * 100_000 + "]" * 100_000  # the 200 KB body that crashed a web worker


def depth_of(value: Any) -> int:
    """Nesting depth of parsed data, the reference the checks are measured against (containers count, scalars not)."""
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


tricky_text = st.text(alphabet="[]{}\"\\ab:-# \n'", max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=40,
)


# -- JSON ------------------------------------------------------------------------------------------------------------
@given(json_values)
@settings(max_examples=examples(300), deadline=None)
def test_json_depth_is_exact_whatever_the_strings_hold(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=1), json.dumps(value, ensure_ascii=False)):
        assert json_depth(text) == depth_of(value)


def test_json_bomb_is_refused_without_parsing() -> None:
    with pytest.raises(TooDeep, match=r"JSON nested 100000 levels deep, more than 64 \(FAIRWAY_MAX_JSON_DEPTH\)"):
        check_json_depth(BOMB.encode(), 64)
    with pytest.raises(TooDeep):
        loads_json('{"a": ' * 1000 + "1" + "}" * 1000)
    assert loads_json('{"a": [[["]]]]]]"]]]}', 4) == {"a": [[["]]]]]]"]]]}


def test_json_depth_at_the_limit_passes() -> None:
    check_json_depth("[" * 64 + "]" * 64, 64)
    with pytest.raises(TooDeep):
        check_json_depth("[" * 65 + "]" * 65, 64)


# -- YAML ------------------------------------------------------------------------------------------------------------
yaml_keys = st.text(alphabet="abc-?: ", min_size=1, max_size=4).filter(lambda s: s.strip() == s and s != "")
yaml_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet="[]{}ab-:# '\"", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(yaml_keys, inner, max_size=3),
    max_leaves=30,
)


@given(
    yaml_values,
    st.sampled_from([False, None, True]),
    st.integers(min_value=2, max_value=6),
    st.integers(min_value=1, max_value=12),
)
@settings(max_examples=examples(400), deadline=None)
def test_the_yaml_text_bound_never_underestimates(value: Any, flow: bool | None, indent: int, limit: int) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent)
    depth = depth_of(yaml.safe_load(text))
    if yaml_depth_bound(text, limit):
        assert depth <= limit
    if depth > limit:
        with pytest.raises(YAMLTooDeep):
            check_yaml_depth(text, limit)
    else:
        check_yaml_depth(text, limit)


@pytest.mark.parametrize(
    "text",
    [
        "- " * 10 + "a\n",  # compact sequences on one line
        "--- &top\n" + "- " * 10 + "a\n",  # after a document marker and an anchor
        "? a\n: " + "- " * 10 + "b\n",  # the value of a complex key
        "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 11)) + "  " * 11 + "x: 1\n",
        "a:\n- b:\n  - c:\n    - d:\n      - e:\n        - f: 1\n",  # sequences sharing their keys' columns
        "a: &x [[[[1]]]]\nb: [[[[[[*x]]]]]]\n",  # an alias carries its anchor's depth
        "a:\r  b:\r    c:\r      d:\r        e:\r          f: 1\r",  # old Mac line breaks
    ],
)
def test_yaml_depth_is_measured_in_every_layout(text: str) -> None:
    depth = depth_of(yaml.safe_load(text))
    assert depth >= 5
    check_yaml_depth(text, depth)
    with pytest.raises(YAMLTooDeep):
        check_yaml_depth(text, depth - 1)
    assert not yaml_depth_bound(text, depth - 1)


def test_yaml_bombs_are_refused_before_composition() -> None:
    for text in (BOMB, "- " * 50_000 + "a", "{a: " * 50_000 + "1" + "}" * 50_000):
        with pytest.raises(YAMLTooDeep, match="nested more than 64 levels deep"):
            load_yaml(text)
    with pytest.raises(YAMLTooDeep, match="alias \\*a refers to itself"):
        load_yaml("a: &a [1, *a]")


def test_yaml_too_deep_names_its_document() -> None:
    with pytest.raises(YAMLTooDeep) as info:
        list(load_yaml_all("a: 1\n---\nb: 2\n---\nc: " + "[" * 70 + "]" * 70))
    assert info.value.document == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n: 1" + "0" * 5000, "an integer of 5001 digits is too large"),
        ("t: 2024-13-45", "'2024-13-45' is not a valid date or time"),
    ],
)
def test_scalars_that_python_refuses_are_yaml_errors(text: str, message: str) -> None:
    with pytest.raises(yaml.YAMLError, match=message):
        load_yaml(text)


def test_ordinary_yaml_loads_as_before() -> None:
    text = "a: 1\nb: [x, {c: 2024-01-02}]\nd: &d {e: 1.5}\nf: *d\n"
    assert load_yaml(text) == yaml.safe_load(text)


# -- quantities --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    ["1e999999999", "1e999999999Ki", "9" * 64, 10**5000, 1e308, "1E400"],
    ids=["exponent", "exponent-suffix", "64-digits", "5000-digit-int", "float", "E400"],
)
def test_absurd_quantities_are_refused_naming_the_field(value: object) -> None:
    # the bound in the resource's unit, never in base units (issue 30: "at most 4611686018427387904 base units")
    with pytest.raises(QuantityError, match=r"^deserved.cpu: .* is too large \(at most about 4\.6e15 cores\)$"):
        parse_quantity(value, "cpu", "deserved.cpu")


@pytest.mark.parametrize("value", ["1e-999999999", "1e-999999999Ki", "1e-25"])
def test_tiny_positive_quantities_round_up_to_one_base_unit(value: str) -> None:
    assert parse_quantity(value, "memory") == 1


# -- limits and the deadline -------------------------------------------------------------------------------------------
def test_limits_come_from_the_environment() -> None:
    limits = Limits.from_env({"FAIRWAY_MAX_PODS": "500", "FAIRWAY_REQUEST_BUDGET_SECONDS": "2.5"})
    assert (limits.max_pods, limits.request_budget_seconds, limits.max_replicas) == (500, 2.5, Limits.max_replicas)
    with pytest.raises(ValueError, match="FAIRWAY_MAX_PODS='many': expected a whole number"):
        Limits.from_env({"FAIRWAY_MAX_PODS": "many"})
    with pytest.raises(ValueError, match="must be greater than 0"):
        Limits.from_env({"FAIRWAY_MAX_SESSIONS": "0"})


def test_the_deadline_raises_once_passed() -> None:
    now = [100.0]
    deadline = Deadline(5, "FAIRWAY_REQUEST_BUDGET_SECONDS", clock=lambda: now[0])
    deadline.check()
    now[0] = 105.5
    deadline.progress = "session 3 of 20"
    with pytest.raises(BudgetExceeded, match=r"budget of 5 s of computation \(session 3 of 20\)"):
        deadline.check()


def test_simulate_stops_between_podgroups_once_its_deadline_passes() -> None:
    """The session engine calls the deadline's check before every podgroup: with a clock that moves one second per
    reading and a budget of 30 s, the 31st check raises, among the first session's 200 podgroups, and no
    check (nor work) follows."""
    from engine.manifests import load_manifests
    from engine.simulate import simulate
    from tests.acceptance import manifests as m

    docs: list[object] = [m.node("n1", cpu="1000", memory="1000Gi")]
    docs += [m.podgroup("ns1", f"pg{i}", "default") for i in range(200)]
    docs += [m.pod("ns1", f"p{i}", group=f"pg{i}", cpu="1") for i in range(200)]
    loaded = load_manifests([("busy.yaml", m.dump(*docs))])
    readings = []

    def clock() -> float:
        readings.append(None)
        return float(len(readings))

    deadline = Deadline(30, "FAIRWAY_REQUEST_BUDGET_SECONDS", clock=clock)
    with pytest.raises(BudgetExceeded, match=r"\(in session 1 of 5\)"):
        simulate(loaded.snapshot, sessions=5, deadline=deadline)
    assert len(readings) == 32  # the reading that set the deadline, then 31 checks: 200 podgroups were not reached

    # with time enough, the same simulation runs all five sessions
    done = simulate(loaded.snapshot, sessions=5, deadline=Deadline(10**9, "FAIRWAY_REQUEST_BUDGET_SECONDS"))
    assert len(done.document["sessions"]) == 5 and len(done.document["bindings"]) == 200
