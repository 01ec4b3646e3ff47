"""The range of priority and preemptibility a queue allows its jobs (``engine.rules.priority_range``) and the
protected share of non-preemptible pods (``engine.fairshare.elastic.protected_non_preemptible``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.fairshare.elastic import protected_non_preemptible
from engine.rules import hold_to_range, priority_range, validate_priority_range
from tests.support.examples import examples


def test_the_strictest_along_the_path_holds() -> None:
    rng = priority_range("nlp", [("nlp", 100, True), ("research", 50, False), ("root", None, True)])
    assert (rng.max_priority, rng.max_from, rng.non_preemptible, rng.refused_by) == (50, "research", False, "research")
    free = priority_range("q", [("q", None, True), ("root", None, True)])
    assert free.max_priority is None and free.non_preemptible
    assert validate_priority_range("pod a/b", free, priority=2**31 - 1, preemptible=False) == []


def test_validation_names_the_field_and_the_limit() -> None:
    rng = priority_range("nlp", [("nlp", 100, False)])
    errors = validate_priority_range("pod nlp/p", rng, priority=101, preemptible=False)
    assert [(e.field, e.code) for e in errors] == [
        ("priority", "out_of_range"),
        ("preemptible", "non_preemptible_not_allowed"),
    ]
    assert "maximum 100 that queue nlp allows" in errors[0].message
    assert validate_priority_range("pod nlp/p", rng, priority=100, preemptible=True) == []
    assert validate_priority_range("podgroup nlp/g", rng, priority=-5) == []  # a podgroup has no preemptible


def test_hold_to_range_clamps_and_says_so() -> None:
    rng = priority_range("nlp", [("nlp", 10, False)])
    assert hold_to_range("pod a/b", rng, priority=5, preemptible=True) == (5, True, [])
    priority, preemptible, notes = hold_to_range("pod a/b", rng, priority=5000, preemptible=False)
    assert (priority, preemptible, len(notes)) == (10, True, 2)


def test_the_most_important_non_preemptible_pods_within_min_are_protected() -> None:
    pods = [("a", 0, 1.0, {"cpu": 4}), ("b", 9, 5.0, {"cpu": 4}), ("c", 0, 0.0, {"cpu": 4}), ("d", 0, None, {"cpu": 1})]
    assert protected_non_preemptible({"cpu": 9}, pods) == {"b", "c"}  # then a (4) would pass min; d is not reached
    assert protected_non_preemptible({}, pods) == {"a", "b", "c", "d"}  # min sets nothing: nothing is governed
    assert protected_non_preemptible({"cpu": 0}, pods) == set()


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 8)), max_size=10), st.integers(0, 30))
def test_protected_pods_never_exceed_min(spec: list[tuple[int, int]], min_cpu: int) -> None:
    pods = [(f"p{i}", prio, float(i), {"cpu": cpu}) for i, (prio, cpu) in enumerate(spec)]
    protected = protected_non_preemptible({"cpu": min_cpu}, pods)
    assert sum(p[3]["cpu"] for p in pods if p[0] in protected) <= min_cpu
    # no unprotected pod is more important than a protected one
    key = {p[0]: (-p[1], p[2]) for p in pods}
    if protected and len(protected) < len(pods):
        assert max(key[u] for u in protected) <= min(key[p[0]] for p in pods if p[0] not in protected)
