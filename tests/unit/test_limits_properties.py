"""Invariants of borrowing and lending limits, checked with hypothesis on the random clusters of the queue and
elastic property tests:

* limits that cannot bind (a borrowing limit past any amount, a lending limit equal to the whole entitlement) change
  no value: capacity (flat and hierarchical), proportion and elastic quota;
* a borrowing limit bounds realCapability (queues) and runtime (quota groups) by entitlement + limit;
* lent never passes a lending limit;
* a lending limit of 0 on one queue never raises another queue's realCapability.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.fairshare.deserved import compute_capacity
from engine.fairshare.elastic import compute_runtimes
from engine.fairshare.elastic_sets import round_up
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage, QueueBook
from engine.objects import QueueSpec, QuotaGroupSpec
from engine.resources import ResourceList, is_unlimited, split_unit
from tests.unit.test_elastic_properties import FIELDS, Case, cases
from tests.unit.test_queue_properties import SETTINGS, clusters

FAR = 10**12


def _unbinding(spec: QueueSpec) -> QueueSpec:
    """Limits that cannot bind: borrowing past any amount, lending the whole entitlement (deserved raised to the
    guarantee: the generator does not hold guarantee <= deserved, which the rules do)."""
    names = set(spec.deserved) | set(spec.guarantee)
    return replace(
        spec,
        borrowing_limit=ResourceList({r: FAR for r in names}),
        lending_limit=ResourceList({r: max(spec.deserved[r], spec.guarantee[r]) for r in names}),
    )


def _bounded(rl: ResourceList) -> dict[str, int]:
    """A realCapability with the amounts an unbinding borrowing limit put on an unlimited one left out again."""
    return {r: v for r, v in rl.items() if v < FAR // 2}  # (children inherit it, less their siblings' reserves)


def _values(book: QueueBook) -> dict[str, Any]:
    return {
        name: (q.deserved, _bounded(q.real_capability), q.share, q.borrowed, q.lent, q.capability)
        for name, q in ((n, book[n]) for n in book)
    }


Cluster = tuple[list[QueueSpec], list[JobUsage], ResourceList]


@SETTINGS
@given(clusters(), st.booleans())
def test_unbinding_limits_change_nothing_flat(cluster: Cluster, proportion: bool) -> None:
    queues, jobs, total = cluster
    compute = compute_proportion if proportion else compute_capacity
    plain = compute(queues, jobs, total)
    limited = compute([_unbinding(q) for q in queues], jobs, total)
    assert _values(limited) == _values(plain)
    for q in queues:
        for r in ("cpu", "memory"):
            assert limited.allocatable(q.name, {r: 1}).allowed == plain.allocatable(q.name, {r: 1}).allowed


@SETTINGS
@given(clusters(hierarchy=True))
def test_unbinding_limits_change_nothing_in_a_hierarchy(cluster: Cluster) -> None:
    queues, jobs, total = cluster
    plain = compute_capacity(queues, jobs, total, hierarchy=True)
    limited = compute_capacity([q if q.name == "root" else _unbinding(q) for q in queues], jobs, total, hierarchy=True)
    assert _values(limited) == _values(plain)
    assert limited.problems == plain.problems


@SETTINGS
@given(clusters(hierarchy=True), st.integers(min_value=0, max_value=6), st.integers(min_value=0, max_value=20_000))
def test_borrowing_limit_bounds_real_capability(cluster: Cluster, pick: int, limit: int) -> None:
    queues, jobs, total = cluster
    members = [q for q in queues if q.name != "root"]
    chosen = members[pick % len(members)]
    limited = [
        replace(q, borrowing_limit=ResourceList({r: limit for r in q.deserved})) if q is chosen else q for q in queues
    ]
    book = compute_capacity(limited, jobs, total, hierarchy=True)
    st_ = book.state(chosen.name)
    for r in chosen.deserved:
        nominal = max(chosen.deserved[r], chosen.guarantee.get(r, 0) if r in chosen.guarantee else 0)
        rc = st_.real_capability[r]
        assert is_unlimited(nominal + limit) or rc <= nominal + limit


@SETTINGS
@given(clusters(), st.integers(min_value=0, max_value=6))
def test_a_zero_lending_limit_never_raises_anothers_real_capability(cluster: Cluster, pick: int) -> None:
    queues, jobs, total = cluster
    chosen = queues[pick % len(queues)]
    lender = replace(chosen, lending_limit=ResourceList({r: 0 for r in chosen.deserved}))
    plain = compute_capacity(queues, jobs, total)
    limited = compute_capacity([lender if q is chosen else q for q in queues], jobs, total)
    for q in queues:
        if q is chosen:
            continue
        for r, v in limited.state(q.name).real_capability.items():
            assert v <= plain.state(q.name).real_capability[r]
    for r in lender.lending_limit:
        assert limited[chosen.name].lent[r] == 0


@SETTINGS
@given(cases(valid=True))
def test_elastic_unbinding_limits_change_nothing(case: Case) -> None:
    plain = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    groups = [
        g
        if g.parent is None
        else replace(
            g,
            borrowing_limit=ResourceList({k: FAR for k in g.max}),
            lending_limit=ResourceList(dict(g.min.items())),
        )
        for g in case.groups
    ]
    limited = compute_runtimes(groups, case.requests, case.total, **case.kwargs())
    for name in plain:
        for f in FIELDS:
            assert dict(getattr(limited[name], f)) == dict(getattr(plain[name], f)), (name, f)


@SETTINGS
@given(cases(valid=True), st.integers(min_value=0, max_value=40))
def test_elastic_limits_bound_runtime_and_lent(case: Case, limit: int) -> None:
    groups = [
        g
        if g.parent is None
        else replace(
            g,
            borrowing_limit=ResourceList({k: limit for k in g.max}),
            lending_limit=ResourceList({k: min(limit, g.min[k]) for k in g.max if k in g.min}),
        )
        for g in case.groups
    ]
    result = compute_runtimes(groups, case.requests, case.total, **case.kwargs())
    for g in groups:
        if g.parent is None or g.name not in result:
            continue
        q = result[g.name]
        for k in g.max:
            unit = split_unit(k)  # runtimes are handed out in whole units of it (GPUs, bytes...)
            assert q.runtime[k] <= max(round_up(g.min[k] + limit, unit), q.auto_scaled_min[k])
            if k in g.lending_limit:
                assert q.lent[k] <= round_up(g.lending_limit[k], unit)


def test_a_lending_limit_equal_to_a_fractional_gpu_min_lends_what_the_min_lends() -> None:
    """Found by the property above: a min of a thousandth of a GPU is one whole GPU to the split, and a lending
    limit equal to it must lend that GPU too (it was read rounded down, so it lent nothing)."""
    gpu = "nvidia.com/gpu"

    def group(name: str, amount: int, *, lends: bool, limit: int | None = None) -> QuotaGroupSpec:
        return QuotaGroupSpec(
            name=name,
            parent="root",
            is_parent=False,
            min=ResourceList({gpu: amount}),
            max=ResourceList({gpu: amount}),
            allow_lent=lends,
            lending_limit=ResourceList({gpu: limit}) if limit is not None else ResourceList(),
        )

    zero = ResourceList({gpu: 0})
    requests = {"a": zero, "b": zero}
    used = {"a": zero, "b": ResourceList({gpu: 1})}
    for limit, lent in ((None, 1000), (1, 1000), (1000, 1000), (0, 0)):
        result = compute_runtimes(
            [group("a", 1, lends=True, limit=limit), group("b", 0, lends=False)],
            requests,
            zero,
            used=used,
            enable_min_scale=False,
        )
        assert result["a"].lent[gpu] == lent, limit
        assert result["b"].borrowed[gpu] == 1000
