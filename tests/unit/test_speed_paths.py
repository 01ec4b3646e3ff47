"""The shortcuts taken for speed give what the plain ways gave: the collector pause restores the collector, the
queue book's session copy is independent of the book it copies, the elastic result built all at once holds each
group's governed resources only, and a what-if prints an unchanged node exactly as it printed it before."""

from __future__ import annotations

import copy
import gc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from engine import collector
from engine.changes import apply_changes, as_quantities, compare, node_values
from engine.fairshare.elastic import compute_runtimes
from engine.objects import Snapshot
from engine.policy.policy import default_policy_with
from engine.values import compute_values
from tests.support.examples import examples
from tests.unit.test_session_properties import clusters
from tests.unit.test_session_support import group, rl


def test_collector_pause_nests_and_restores() -> None:
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost block turns it back on
    assert gc.isenabled()


def test_collector_pause_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_pause_restores_after_an_exception() -> None:
    @collector.paused_during
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_queue_book_copy_is_independent(snap: Snapshot) -> None:
    book = compute_values(snap).queues
    before = {name: (dict(book[name].allocated), dict(book[name].deserved), book[name].share) for name in book}
    clone = copy.deepcopy(book)
    assert {name: clone[name] for name in clone} == {name: book[name] for name in book}
    for name in clone:
        clone.on_allocate(name, {"cpu": 1000, "memory": 2**20})
    after = {name: (dict(book[name].allocated), dict(book[name].deserved), book[name].share) for name in book}
    assert after == before
    for name in clone:
        assert clone.state(name) is not book.state(name)
        assert clone.state(name).allocated is not book.state(name).allocated


def test_elastic_groups_hold_their_governed_resources() -> None:
    groups = [
        group("top", is_parent=True, min=rl("10", "10Gi"), max=rl("40", "40Gi")),
        group("cpu-only", parent="top", min=rl("4"), max=rl("20")),
        group("both", parent="top", min=rl("2", "2Gi"), max=rl("30", "30Gi")),
        group("mem-only", min=rl(memory="4Gi"), max=rl(memory="8Gi")),
    ]
    requests = {"cpu-only": rl("6", "1Gi"), "both": rl("3", "5Gi"), "mem-only": rl(memory="6Gi")}
    result = compute_runtimes(groups, requests, rl("64", "256Gi"))
    assert set(result["mem-only"].runtime) == {"memory"}
    assert set(result["cpu-only"].request) == {"cpu"}
    assert set(result["both"].runtime) == {"cpu", "memory"}
    assert result["cpu-only"].request["cpu"] == 6000
    # every group answers the same however many were read before it
    again = compute_runtimes(groups, requests, rl("64", "256Gi"))
    assert {name: again[name] for name in reversed(list(again))} == {name: result[name] for name in result}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_whatif_prints_every_node_as_printing_it_afresh_would(snap: Snapshot) -> None:
    before = compute_values(snap)
    first_queue = sorted(snap.queues)[-1]
    changes: list[dict[str, Any]] = [{"op": "update", "kind": "queue", "name": first_queue, "spec": {"weight": 7}}]
    after_snap = apply_changes(snap, changes, max_depth=5)
    after = compute_values(after_snap, base=before)
    result = compare(before, after)
    assert result["after"] == as_quantities(node_values(after))
    assert result["before"] == as_quantities(node_values(before))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_a_queues_plain_values_are_its_exported_values(snap: Snapshot) -> None:
    """``QueueBook.plain_values`` (what a what-if compares, read from the accounts) holds the amounts of the queue's
    exported ``QueueQuota`` without zeros or unlimited entries, under both queue policies."""
    capacity = default_policy_with({"name": "capacity", "enableHierarchy": True})
    for values in (compute_values(snap), compute_values(snap, capacity)):
        book = values.queues
        for name in book:
            q = book[name]
            plain = {
                key: {r: v for r, v in amounts.raw.items() if v}
                for key, amounts in (
                    ("request", q.request),
                    ("allocated", q.allocated),
                    ("deserved", q.deserved),
                    ("guarantee", q.guarantee),
                    ("real_capability", q.real_capability),
                    ("borrowed", q.borrowed),
                    ("lent", q.lent),
                    ("reserved", q.inqueue),
                    ("pipelined", q.pipelined),
                )
            }
            plain.update(share=round(q.share, 6), reserved_jobs=q.reserved_jobs, pipelined_pods=q.pipelined_pods)
            assert book.plain_values(name) == plain
            assert book.deserved_of(name) == q.deserved
    # and the four amounts a replay's report reads of each queue, before any queue's exported values are built and
    # after
    for policy in (None, capacity):
        book = compute_values(snap, policy).queues
        read = {name: book.flows_of(name) for name in book}
        assert read == {
            name: (book[name].allocated, book[name].deserved, book[name].borrowed, book[name].lent) for name in book
        }
        assert read == {name: book.flows_of(name) for name in book}


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_a_finished_session_leaves_no_cycle_for_the_collector(snap: Snapshot) -> None:
    """``Session.release`` cuts the session's cycles: once the result is out, reference counting has freed it all,
    with or without a carry (whose kept state lives on), and the result is whole; the cyclic collector finds
    nothing of the session to collect.

    Everything alive before the sessions (the test process's modules, Django, the example) is frozen for the test
    (``gc.freeze``): each ``gc.collect()`` then walks what was allocated since, the sessions' objects, instead of the
    whole process, which in a worker of the full suite made this test take 40 s instead of 4. (A cycle that ran
    through an object older than the sessions, which a session made unreachable, would go unseen: none of the
    sessions' inputs is dropped while they run, the example and the carry are held here.)"""
    from engine.session.run import SessionCarry, run_session

    gc.disable()
    gc.freeze()  # also sets aside any garbage already there: the counts below are the sessions' only
    carry = SessionCarry()  # after the freeze: its kept state is seen by every collection below
    try:
        plain = run_session(snap, now=100.0)
        assert gc.collect() == 0
        carried = run_session(snap, now=100.0, carry=carry)
        assert gc.collect() == 0
        again = run_session(snap, now=101.0, carry=carry)  # opens on the kept state
        assert gc.collect() == 0
    finally:
        gc.unfreeze()
        gc.enable()
    assert plain.bindings == carried.bindings and plain.podgroups == carried.podgroups
    assert [b.task for b in again.bindings] == [b.task for b in plain.bindings]
