"""Invariants of the queue fair-share engine, checked with hypothesis on random clusters.

* water-filling: floors and caps hold, the amount is never exceeded when the floors fit, and it is used up
  unless everybody is capped; the values depend only on the set of claimants;
* proportion: the deserved amounts add up to at most the cluster when the guarantees fit, nothing exceeds its
  realCapability or request except by the guarantee floor, the result is deterministic and independent of the
  input order, and raising one queue's weight never lowers its deserved;
* namespaces: their deserved amounts within a queue add up to at most the queue's deserved;
* capacity: input order does not matter, usage rolls up, and lent never exceeds what is borrowed.
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fairshare.capacity import CapacityResult
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.namespace import compute_namespace_shares
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queue_order import capacity_order_key
from engine.fairshare.queues import JobUsage, QueueAccount, QueueBook, QueueQuota
from engine.fairshare.waterfill import hamilton, water_fill
from engine.objects import QueueSpec
from engine.resources import ResourceList
from tests.support.examples import examples

T = TypeVar("T")
RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "ephemeral-storage")
SETTINGS = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])

amounts = st.integers(min_value=0, max_value=50_000)


def _masked(mask: int, values: list[int]) -> ResourceList:
    return ResourceList({r: v for i, (r, v) in enumerate(zip(RESOURCES, values, strict=True)) if mask >> i & 1})


def resource_lists(max_amount: int = 50_000, min_size: int = 0) -> st.SearchStrategy[ResourceList]:
    """A ResourceList over a random subset of RESOURCES (two draws: a bit mask and four amounts)."""
    return st.builds(
        _masked,
        st.integers(min_value=1 if min_size else 0, max_value=15),
        st.lists(st.integers(min_value=0, max_value=max_amount), min_size=4, max_size=4),
    )


# The strategies ``clusters`` draws from, made once: a strategy built inside the composite is looked up again (and
# a ``one_of`` built and checked again) at every draw, which cost Hypothesis more than the values themselves.
_COUNTS = st.integers(min_value=1, max_value=7)
_WEIGHTS = st.integers(min_value=1, max_value=6)
_CAPABILITIES = st.one_of(st.just(ResourceList()), resource_lists(80_000))
_DESERVED = resource_lists(20_000)
_GUARANTEES = st.one_of(st.just(ResourceList()), resource_lists(5_000))
_PRIORITIES = st.integers(min_value=0, max_value=2)
_JOB_COUNTS = st.integers(min_value=0, max_value=12)
_REQUESTS = resource_lists(30_000)
_QUARTERS = st.integers(min_value=0, max_value=4)
_MINIMUMS = resource_lists(10_000)
_NAMESPACES = st.sampled_from(["ns-a", "ns-b", "ns-c"])
_PHASES = st.sampled_from(["Pending", "Inqueue", "Running"])
_SMALL = st.integers(min_value=0, max_value=3)
_TOTALS = resource_lists(100_000, min_size=1)


@st.composite
def clusters(draw: st.DrawFn, *, hierarchy: bool = False) -> tuple[list[QueueSpec], list[JobUsage], ResourceList]:
    count = draw(_COUNTS)
    names = [f"q{i}" for i in range(count)]
    queues: list[QueueSpec] = []
    if hierarchy:
        queues.append(QueueSpec("root", parent=None))
    for i, name in enumerate(names):
        parent = "root"
        if hierarchy and i > 0 and draw(st.booleans()):
            parent = names[draw(st.integers(min_value=0, max_value=i - 1))]
        queues.append(
            QueueSpec(
                name=name,
                parent=parent,
                weight=draw(_WEIGHTS),
                capability=draw(_CAPABILITIES),
                deserved=draw(_DESERVED),
                guarantee=draw(_GUARANTEES),
                priority=draw(_PRIORITIES),
            )
        )
    leaves = [q.name for q in queues if q.name != "root" and not any(o.parent == q.name for o in queues)]
    jobs: list[JobUsage] = []
    for j in range(draw(_JOB_COUNTS)):
        request = draw(_REQUESTS)
        held = draw(_QUARTERS)  # quarters of the request already allocated
        allocated = ResourceList({r: a * held // 4 for r, a in request.items()})
        has_min = draw(st.booleans())
        jobs.append(
            JobUsage(
                queue=draw(st.sampled_from(leaves)),
                namespace=draw(_NAMESPACES),
                request=request,
                allocated=allocated,
                min_resources=draw(_MINIMUMS) if has_min else None,
                phase=draw(_PHASES),
                min_member=draw(_SMALL),
                allocated_tasks=draw(_SMALL),
                name=f"job{j}",
            )
        )
    total = draw(_TOTALS)
    return queues, jobs, total


def snapshot(result: QueueBook) -> dict[str, QueueQuota]:
    return {name: result[name] for name in result}


def shuffled(items: Sequence[T], seed: int) -> list[T]:
    out = list(items)
    random.Random(seed).shuffle(out)
    return out


# ------------------------------------------------------------------------------------------------------------
# water-filling and largest remainder
# ------------------------------------------------------------------------------------------------------------


@st.composite
def fills(draw: st.DrawFn) -> tuple[int, list[str], list[int], list[int | None], list[int]]:
    n = draw(st.integers(min_value=1, max_value=9))
    names = [f"c{i}" for i in range(n)]
    weights = draw(st.lists(st.integers(min_value=0, max_value=7), min_size=n, max_size=n))
    caps = draw(st.lists(st.one_of(st.none(), amounts), min_size=n, max_size=n))
    floors = draw(st.lists(st.integers(min_value=0, max_value=5_000), min_size=n, max_size=n))
    return draw(st.integers(min_value=0, max_value=200_000)), names, weights, caps, floors


@SETTINGS
@given(fills(), st.integers())
def test_water_fill_invariants(case: tuple[int, list[str], list[int], list[int | None], list[int]], seed: int) -> None:
    amount, names, weights, caps, floors = case
    result = water_fill(amount, names, weights, caps, floors)
    for value, cap, floor in zip(result.values, caps, floors, strict=True):
        assert value >= floor
        if cap is not None:
            assert value <= max(cap, floor)
    if sum(floors) <= amount:
        assert result.given <= amount
        if result.given < amount:
            # only when nobody with a weight can take more
            for i, w in enumerate(weights):
                if w > 0:
                    assert caps[i] is not None and result.values[i] == max(caps[i] or 0, floors[i])
    order = shuffled(range(len(names)), seed)
    again = water_fill(
        amount,
        [names[i] for i in order],
        [weights[i] for i in order],
        [caps[i] for i in order],
        [floors[i] for i in order],
    )
    assert again.as_dict() == result.as_dict()


@SETTINGS
@given(fills())
def test_water_fill_is_weight_fair_among_uncapped(
    case: tuple[int, list[str], list[int], list[int | None], list[int]],
) -> None:
    amount, names, weights, caps, floors = case
    result = water_fill(amount, names, weights, caps, floors)
    # two claimants that both received a plain share get amounts proportional to their weights, within 1 unit
    shares = [i for i, how in enumerate(result.settled) if how == "share"]
    for i in shares:
        for j in shares:
            assert abs(result.values[i] * weights[j] - result.values[j] * weights[i]) <= weights[i] + weights[j]


@SETTINGS
@given(
    st.integers(min_value=0, max_value=10**12),
    st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=12),
)
def test_hamilton_adds_up_and_stays_within_one_of_the_quota(amount: int, weights: list[int]) -> None:
    parts = hamilton(amount, weights, [f"n{i}" for i in range(len(weights))])
    total_weight = sum(weights)
    if total_weight == 0:
        assert parts == [0] * len(weights)
        return
    assert sum(parts) == amount
    for part, w in zip(parts, weights, strict=True):
        low = amount * w // total_weight
        assert low <= part <= low + 1


# ------------------------------------------------------------------------------------------------------------
# proportion
# ------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(clusters())
def test_proportion_deserved_bounds(cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList]) -> None:
    queues, jobs, total = cluster
    result = compute_proportion(queues, jobs, total)
    guarantees: dict[str, int] = {}
    for q in queues:
        for r, a in q.guarantee.items():
            guarantees[r] = guarantees.get(r, 0) + a
    for r in RESOURCES:
        given_out = sum(result[q.name].deserved.get(r, 0) for q in queues)
        if guarantees.get(r, 0) <= total.get(r, 0):
            assert given_out <= total.get(r, 0)
    for q in queues:
        quota = result[q.name]
        for r in RESOURCES:
            rc = quota.real_capability.get(r, 0) if r in quota.real_capability else None
            limit = quota.request.get(r, 0) if rc is None else min(rc, quota.request.get(r, 0))
            if quota.participating:
                assert quota.deserved.get(r, 0) <= max(limit, q.guarantee.get(r, 0))
            else:
                assert quota.deserved.get(r, 0) == 0
    quotas = snapshot(result).values()
    for r in RESOURCES:
        assert sum(x.lent.get(r, 0) for x in quotas) <= sum(x.borrowed.get(r, 0) for x in quotas)


@SETTINGS
@given(clusters(), st.integers())
def test_proportion_is_deterministic_and_order_independent(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], seed: int
) -> None:
    queues, jobs, total = cluster
    first = snapshot(compute_proportion(queues, jobs, total))
    assert snapshot(compute_proportion(queues, jobs, total)) == first
    again = compute_proportion(shuffled(queues, seed), shuffled(jobs, seed + 1), total)
    assert snapshot(again) == first


@SETTINGS
@given(clusters(), st.data())
def test_raising_a_weight_never_lowers_deserved(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], data: st.DataObject
) -> None:
    queues, jobs, total = cluster
    index = data.draw(st.integers(min_value=0, max_value=len(queues) - 1))
    bump = data.draw(st.integers(min_value=1, max_value=10))
    before = compute_proportion(queues, jobs, total)[queues[index].name].deserved
    raised = list(queues)
    raised[index] = replace(queues[index], weight=queues[index].weight + bump)
    after = compute_proportion(raised, jobs, total)[queues[index].name].deserved
    for r in RESOURCES:
        assert after.get(r, 0) >= before.get(r, 0)


@SETTINGS
@given(clusters())
def test_proportion_gates_agree_with_values(cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList]) -> None:
    queues, jobs, total = cluster
    result = compute_proportion(queues, jobs, total)
    for q in queues:
        quota = result[q.name]
        room = {r: quota.deserved.get(r, 0) - quota.allocated.get(r, 0) for r in RESOURCES}
        fits = ResourceList({r: v for r, v in room.items() if v > 0})
        if fits and q.state == "Open":
            assert result.allocatable(q.name, fits)
        for r, v in room.items():
            if v >= 0:
                verdict = result.allocatable(q.name, ResourceList({r: v + 1}))
                assert not verdict
                assert verdict.reasons[0].available == v


# ------------------------------------------------------------------------------------------------------------
# namespaces
# ------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(clusters(), st.dictionaries(st.sampled_from(["ns-a", "ns-b", "ns-c"]), st.integers(min_value=-1, max_value=9)))
def test_namespace_deserved_adds_up_to_at_most_the_queue(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], weights: dict[str, int]
) -> None:
    queues, jobs, total = cluster
    result = compute_proportion(queues, jobs, total)
    deserved = {q: result[q].deserved for q in result}
    shares = compute_namespace_shares(deserved, jobs, weights, total)
    for q in result:
        for r in RESOURCES:
            assigned = sum(v.deserved.get(r, 0) for (queue, _), v in shares.items() if queue == q)
            assert assigned <= deserved[q].get(r, 0)
    for entry in shares.values():
        assert entry.weight >= 1
        for r, v in entry.deserved.items():
            assert v <= entry.request.get(r, 0)
    again = compute_namespace_shares(deserved, shuffled(jobs, len(jobs)), weights, total)
    assert list(again.items()) == list(shares.items())


# ------------------------------------------------------------------------------------------------------------
# capacity
# ------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(clusters(), st.integers())
def test_flat_capacity_bounds_and_order_independence(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], seed: int
) -> None:
    queues, jobs, total = cluster
    result = compute_capacity(queues, jobs, total)
    for q in queues:
        quota = result[q.name]
        for r, v in quota.deserved.items():
            rc = quota.real_capability.get(r, 0) if r in quota.real_capability else v
            assert v <= max(rc, q.guarantee.get(r, 0))
    again = compute_capacity(shuffled(queues, seed), shuffled(jobs, seed), total)
    assert snapshot(again) == snapshot(result)


@SETTINGS
@given(clusters(hierarchy=True), st.integers())
def test_hierarchical_capacity_rolls_up_and_is_order_independent(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], seed: int
) -> None:
    queues, jobs, total = cluster
    result = compute_capacity(queues, jobs, total, hierarchy=True)
    root_allocated: dict[str, int] = {}
    for j in jobs:
        for r, a in j.allocated.items():
            root_allocated[r] = root_allocated.get(r, 0) + a
    assert result["root"].allocated == ResourceList(root_allocated)
    for q in queues:
        children = [c.name for c in queues if c.parent == q.name]
        if children:
            for r in RESOURCES:
                assert result[q.name].allocated.get(r, 0) == sum(result[c].allocated.get(r, 0) for c in children)
                lent = sum(result[c].lent.get(r, 0) for c in children)
                assert lent <= sum(result[c].borrowed.get(r, 0) for c in children)
    again = compute_capacity(shuffled(queues, seed), shuffled(jobs, seed), total, hierarchy=True)
    assert snapshot(again) == snapshot(result)
    assert again.problems == result.problems


@SETTINGS
@given(clusters(hierarchy=True), st.data())
def test_hierarchical_allocatable_never_exceeds_any_ancestor(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], data: st.DataObject
) -> None:
    queues, jobs, total = cluster
    result = compute_capacity(queues, jobs, total, hierarchy=True)
    leaves = [q.name for q in queues if q.name != "root" and result.is_leaf(q.name)]
    leaf = data.draw(st.sampled_from(leaves))
    request = data.draw(resource_lists(40_000, min_size=1))
    if not result.allocatable(leaf, request):
        return
    assert result.ready_to_schedule
    for node in (leaf, *result.ancestors(leaf)):
        quota = result[node]
        for r, a in request.items():
            if a > 0 and r in quota.real_capability:
                assert quota.allocated.get(r, 0) + a <= quota.real_capability[r]


def _fresh_order_key(result: CapacityResult, name: str) -> tuple[object, ...]:
    """``name``'s queue order key computed from the accounts now, without the book's kept steps."""
    st_ = result._states[name]
    path: tuple[QueueAccount, ...] = ()
    if result.hierarchy and not st_.children:
        path = (*(result._states[a] for a in st_.ancestors[1:]), st_)
    key = capacity_order_key(st_, path, hierarchy=result.hierarchy, past_ratio=result.past_ratio)
    return key.head, key.path


@SETTINGS
@given(clusters(hierarchy=True), st.booleans(), st.data())
def test_capacity_order_keys_follow_every_share_move(
    cluster: tuple[list[QueueSpec], list[JobUsage], ResourceList], hierarchy: bool, data: st.DataObject
) -> None:
    """The book keeps each queue's step of the order key until its share moves: after any sequence of
    allocations, deallocations, admissions, copies and new past-usage ratios, every key equals the one computed
    afresh."""
    queues, jobs, total = cluster
    if not hierarchy:
        queues = [replace(q, parent=None) for q in queues if q.name != "root"]
    result = compute_capacity(queues, jobs, total, hierarchy=hierarchy)
    leaves = [n for n in result if result.is_leaf(n) and n != "root"]
    for _ in range(data.draw(st.integers(min_value=1, max_value=12))):
        for name in result:  # read every key (so steps are kept), then move something
            kept = result.queue_order_key(name)
            assert (kept.head, kept.path) == _fresh_order_key(result, name)
        move = data.draw(st.sampled_from(["allocate", "deallocate", "enqueue", "copy", "ratios"]))
        leaf = data.draw(st.sampled_from(leaves))
        request = data.draw(resource_lists(20_000, min_size=1))
        if move == "allocate":
            result.on_allocate(leaf, request)
        elif move == "deallocate":
            result.on_deallocate(leaf, request)
        elif move == "enqueue":
            result.on_enqueued(
                JobUsage(queue=leaf, namespace="ns-a", request=request, allocated=ResourceList(), min_resources=request)
            )
        elif move == "copy":
            result = copy.deepcopy(result)
        else:
            result.past_ratios = {n: Fraction(data.draw(st.integers(1, 9)), 4) for n in result}
    for name in result:
        kept = result.queue_order_key(name)
        assert (kept.head, kept.path) == _fresh_order_key(result, name)


def test_engine_modules_are_pure() -> None:
    """The fair-share modules import no Django (and so can run in simulate, what-ifs and replays)."""
    code = (
        "import sys\n"
        "import engine.fairshare.capacity, engine.fairshare.namespace, engine.fairshare.proportion\n"
        "import engine.fairshare.queues, engine.fairshare.waterfill\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'celery')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
