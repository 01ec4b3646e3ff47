"""The recycling outlook (issue 26 item 4): a dry run of the pass's own victim choice, so that a warning names the
pods the pass then takes, the amount usage must fall to and the time left from the recorded over-since time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.session.recycle import recycle_outlook, recycle_plan
from engine.session.run import run_recycle
from engine.values import compute_quotas
from tests.support.examples import examples
from tests.unit.test_recycle import a_pod, gang_pod, overused, with_gangs


def test_a_group_not_due_yet_has_its_victims_and_the_time_left() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i) for i in range(7)))  # used 70 > runtime 50
    [entry] = recycle_outlook(snap, now=20.0, over_since={"a": 0.0})
    assert entry.group == "a" and entry.over == ("cpu",) and entry.resource == "cpu"
    assert (entry.used["cpu"], entry.runtime["cpu"]) == (70000, 50000)
    assert [t.uid for t in entry.victims or ()] == ["nsa/a-0", "nsa/a-1"]
    assert (entry.since, entry.due, entry.delay) == (0.0, 120.0, 120.0)
    assert entry.seconds_left(20.0) == 100.0 and not entry.is_due(20.0)
    assert entry.seconds_left(130.0) == 0.0 and entry.is_due(130.0)
    # the pass itself asks for the victims of due groups only, and evicts nothing yet
    [pending] = recycle_plan(snap, now=20.0, over_since={"a": 0.0}, due_only=True)
    assert pending.victims is None
    assert run_recycle(snap, now=20.0, over_since={"a": 0.0}) == ([], {"a": 0.0})


def test_a_group_never_seen_over_gets_the_whole_delay() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i) for i in range(7)))
    [entry] = recycle_outlook(snap, now=500.0, over_since={})
    assert (entry.since, entry.seconds_left(500.0)) == (500.0, 120.0)


def test_no_outlook_within_the_runtime() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10) for i in range(5)))  # used 50 = runtime 50
    assert recycle_outlook(snap, now=0.0, over_since={"a": 0.0}) == []


def test_the_values_the_caller_has_give_the_same_outlook() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i) for i in range(7)))
    assert recycle_outlook(snap, now=20.0, over_since={}, quotas=compute_quotas(snap)) == recycle_outlook(
        snap, now=20.0, over_since={}
    )


@settings(max_examples=examples(60), deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=9),
    priorities=st.lists(st.integers(0, 3), min_size=9, max_size=9),
    pinned=st.lists(st.booleans(), min_size=9, max_size=9),
    gang_size=st.integers(0, 4),
    runtime=st.sampled_from([20, 30, 50]),
)
def test_the_outlook_names_exactly_the_pods_the_pass_evicts(
    sizes: list[int], priorities: list[int], pinned: list[bool], gang_size: int, runtime: int
) -> None:
    """Whatever the pods, priorities, protected pods and gangs: the victims the outlook shows at a moment are the
    pods a pass due at that moment evicts (one computation, not two rules that could disagree)."""
    pods = [
        a_pod(f"a-{i}", cpu, priority=priorities[i], started=float(i), preemptible=not pinned[i])
        for i, cpu in enumerate(sizes)
    ]
    pods += [gang_pod("g", i, 5) for i in range(gang_size)]
    snap = overused(*pods, runtime_cpu=runtime)
    if gang_size:
        snap = with_gangs(snap, ("g", gang_size))
    outlook = {e.group: e for e in recycle_outlook(snap, now=500.0, over_since={"a": 0.0})}
    evictions, _ = run_recycle(snap, now=500.0, over_since={"a": 0.0})
    expected = [t.uid for t in outlook["a"].victims or ()] if "a" in outlook else []
    assert [e.task for e in evictions] == expected
