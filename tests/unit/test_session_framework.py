"""How plugin answers are combined (Volcano framework/session_plugins.go): order functions, gates, votes,
starving, victims across tiers, victim order, and the switches. Fake plugins make each rule visible."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engine.session.framework import ABSTAIN, PERMIT, REJECT, Plugin
from engine.session.reasons import GateRefusal
from engine.session.registry import PLUGINS
from engine.session.session import Session
from tests.unit.test_session_support import node, plugin, pod, podgroup, policy, queue, running, snapshot


def fake(name: str, **answers: Any) -> type[Plugin]:
    """A plugin class whose hooks return fixed answers (only the hooks given are overridden)."""
    namespace: dict[str, Any] = {"name": name}
    for hook, answer in answers.items():
        if callable(answer):
            namespace[hook] = answer
        else:
            namespace[hook] = lambda self, *args, _a=answer: _a
    return type(f"Fake_{name}", (Plugin,), namespace)


def build(tiers: Sequence[Sequence[Any]], monkeypatch: pytest.MonkeyPatch, plugins: Sequence[type[Plugin]]) -> Session:
    for cls in plugins:
        monkeypatch.setitem(PLUGINS, cls.name, cls)
    snap = snapshot(
        nodes=[node("n1", "4", "8Gi")],
        queues=[queue("q1"), queue("q2")],
        podgroups=[
            podgroup("ns", "a", "q1", created=2.0),
            podgroup("ns", "b", "q1", created=1.0),
            podgroup("ns", "c", "q2", created=0.0),
        ],
        pods=[
            running("ns", "a-0", "a", "n1"),
            running("ns", "a-1", "a", "n1"),
            running("ns", "b-0", "b", "n1"),
            running("ns", "c-0", "c", "n1"),
            pod("ns", "c-1", "c"),
        ],
        policy=policy("allocate", *tiers),
    )
    return Session(snap, snap.policy, 0.0)


def refusal(name: str) -> GateRefusal:
    return GateRefusal("policy", name, "test")


# -- order ----------------------------------------------------------------------------------------------------------


def test_first_decisive_order_function_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    undecided = fake("undecided", job_order_key=0)
    by_name = fake("by_name", job_order_key=lambda self, job: -ord(job.name[0]))
    ssn = build([["undecided"], ["by_name"]], monkeypatch, [undecided, by_name])
    jobs = sorted(ssn.jobs.values(), key=ssn.framework.job_key)
    assert [j.name for j in jobs] == ["c", "b", "a"]


def test_order_falls_back_to_creation_time_then_key(monkeypatch: pytest.MonkeyPatch) -> None:
    ssn = build([["gang"]], monkeypatch, [])
    # gang: every job here is ready (ready 1 or 2 >= minMember 1) except none; equal keys -> creation time
    jobs = sorted(ssn.jobs.values(), key=ssn.framework.job_key)
    assert [j.name for j in jobs] == ["c", "b", "a"]


def test_switch_removes_an_order_function(monkeypatch: pytest.MonkeyPatch) -> None:
    by_name = fake("by_name", job_order_key=lambda self, job: job.name)
    ssn = build([[plugin("by_name", enableJobOrder=False)]], monkeypatch, [by_name])
    assert [j.name for j in sorted(ssn.jobs.values(), key=ssn.framework.job_key)] == ["c", "b", "a"]


# -- gates ----------------------------------------------------------------------------------------------------------


def test_allocatable_is_an_and_and_keeps_the_first_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    yes = fake("yes", allocatable=None)
    no1 = fake("no1", allocatable=refusal("first"))
    no2 = fake("no2", allocatable=refusal("second"))
    ssn = build([["yes"], ["no1", "no2"]], monkeypatch, [yes, no1, no2])
    task = ssn.tasks["ns/c-1"]
    got = ssn.framework.allocatable("q2", task)
    assert got is not None and got.name == "first"
    off = build([["yes"], [plugin("no1", enabledAllocatable=False), "no2"]], monkeypatch, [yes, no1, no2])
    got = off.framework.allocatable("q2", off.tasks["ns/c-1"])
    assert got is not None and got.name == "second"
    only_yes = build([["yes"]], monkeypatch, [yes])
    assert only_yes.framework.allocatable("q2", only_yes.tasks["ns/c-1"]) is None


def test_overused_is_an_or(monkeypatch: pytest.MonkeyPatch) -> None:
    fine = fake("fine", overused=None)
    full = fake("full", overused=refusal("full"))
    ssn = build([["fine"], ["full"]], monkeypatch, [fine, full])
    assert ssn.framework.overused("q1") is not None
    assert build([["fine"]], monkeypatch, [fine]).framework.overused("q1") is None


@pytest.mark.parametrize(
    ("tiers", "expected"),
    [
        ([["permit"], ["reject"]], True),  # a Permit ends the walk after its tier
        ([["permit", "reject"]], False),  # a Reject in the same tier still wins
        ([["abstain"], ["reject"]], False),
        ([["abstain"], ["abstain2"]], True),  # all abstain: yes
        ([["abstain"], ["permit"], ["reject"]], True),
    ],
)
def test_enqueue_and_pipeline_votes(monkeypatch: pytest.MonkeyPatch, tiers: list[list[str]], expected: bool) -> None:
    classes = [
        fake("permit", job_enqueueable=(PERMIT, None), job_pipelined=PERMIT),
        fake("reject", job_enqueueable=(REJECT, refusal("no")), job_pipelined=REJECT),
        fake("abstain", job_enqueueable=(ABSTAIN, None), job_pipelined=ABSTAIN),
        fake("abstain2", job_enqueueable=(ABSTAIN, None), job_pipelined=ABSTAIN),
    ]
    ssn = build(tiers, monkeypatch, classes)
    job = ssn.jobs["ns/a"]
    ok, why = ssn.framework.job_enqueueable(job)
    assert ok is expected
    assert (why is not None) is (not expected)
    assert ssn.framework.job_pipelined(job) is expected


def test_starving_is_decided_by_the_first_tier_that_has_a_function(monkeypatch: pytest.MonkeyPatch) -> None:
    yes = fake("yes", job_starving=True)
    no = fake("no", job_starving=False)
    other = fake("other")
    ssn = build([["other"], ["yes"], ["no"]], monkeypatch, [yes, no, other])
    assert ssn.framework.job_starving(ssn.jobs["ns/a"])  # tier 2 decides; tier 3 is never asked
    ssn = build([["yes", "no"]], monkeypatch, [yes, no])
    assert not ssn.framework.job_starving(ssn.jobs["ns/a"])
    ssn = build([["other"]], monkeypatch, [other])
    assert not ssn.framework.job_starving(ssn.jobs["ns/a"])  # nobody registered: not starving


# -- victims --------------------------------------------------------------------------------------------------------


def victims_of(ssn: Session) -> list[str]:
    candidates = [ssn.tasks[u] for u in ("ns/a-0", "ns/a-1", "ns/b-0")]
    return [t.uid for t in ssn.framework.preemptable(ssn.tasks["ns/c-1"], candidates)]


def pick(*uids: str) -> Any:
    return lambda self, preemptor, preemptees: [t for t in preemptees if t.uid in uids]


def test_victims_are_the_intersection_within_a_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    one = fake("one", preemptable=pick("ns/a-0", "ns/a-1"))
    two = fake("two", preemptable=pick("ns/a-1", "ns/b-0"))
    abstain = fake("abstain", preemptable=None)
    assert victims_of(build([["one", "abstain", "two"]], monkeypatch, [one, two, abstain])) == ["ns/a-1"]


def test_the_first_tier_with_victims_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    one = fake("one", preemptable=pick("ns/a-0"))
    two = fake("two", preemptable=pick("ns/b-0"))
    assert victims_of(build([["one"], ["two"]], monkeypatch, [one, two])) == ["ns/a-0"]


def test_a_tier_without_victims_hands_over_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    none = fake("none", preemptable=[])
    one = fake("one", preemptable=pick("ns/a-0"))
    two = fake("two", preemptable=pick("ns/b-0"))
    three = fake("three", preemptable=pick("ns/b-0"))
    # an empty answer, then an empty intersection: both leave the decision to the next tier
    assert victims_of(build([["none", "one"], ["two"]], monkeypatch, [none, one, two])) == ["ns/b-0"]
    assert victims_of(build([["one", "two"], ["three"]], monkeypatch, [one, two, three])) == ["ns/b-0"]
    assert victims_of(build([["none"]], monkeypatch, [none])) == []


def test_victim_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    one = fake("one", preemptable=pick("ns/a-0"))
    two = fake("two", preemptable=pick("ns/b-0"))
    ssn = build([[plugin("one", enablePreemptable=False)], ["two"]], monkeypatch, [one, two])
    assert victims_of(ssn) == ["ns/b-0"]


def test_victim_order(monkeypatch: pytest.MonkeyPatch) -> None:
    by_name = fake("by_name", job_order_key=lambda self, job: job.name, task_order_key=lambda self, t: t.name)
    ssn = build([["by_name", "proportion"]], monkeypatch, [by_name])
    tasks = [ssn.tasks[u] for u in ("ns/b-0", "ns/a-0", "ns/c-0", "ns/a-1")]
    order = [t.uid for t in ssn.framework.sort_victims(tasks, ssn.tasks["ns/c-1"])]
    # q1 holds 3 cpu of its deserved 2 (share 1.5), q2 1 of 2 (0.5): q2 comes first in queue order, so q1's pods
    # go first (reverse queue order); within q1 job b comes after a in job order -> b first; within job a, the
    # reverse task order
    assert order == ["ns/b-0", "ns/a-1", "ns/a-0", "ns/c-0"]


def test_job_valid_first_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = fake("bad", job_valid=refusal("bad"))
    worse = fake("worse", job_valid=refusal("worse"))
    ssn = build([["bad"], ["worse"]], monkeypatch, [bad, worse])
    got = ssn.framework.job_valid(ssn.jobs["ns/a"])
    assert got is not None and got.name == "bad"


def test_unsupported_plugins_are_reported_and_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    ssn = build([["sla", "gang"]], monkeypatch, [])
    assert ssn.framework.plugin("sla") is None and ssn.framework.plugin("gang") is not None
    assert any("sla" in w for w in ssn.warnings)
