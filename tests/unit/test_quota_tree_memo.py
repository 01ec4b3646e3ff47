"""The elastic quota tree kept between computations (``engine.values.QuotaTreeMemo``, issue 29 item 4): a session and
the recycling pass after it, and the next session, bring the last tree up to date with the groups whose request or
used changed instead of building a tree again, and every number is the one a new tree gives. A recycling pass whose
groups' requests are as the last computation left them (a session places pods, it asks for none) finds the groups over
their runtime from the kept tree without computing the values only the used moves (``groups_over_runtime``)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.fairshare.elastic import FIELDS, ElasticResult
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, Snapshot, TaskInfo, TaskStatus
from engine.session.carry import SessionCarry
from engine.session.run import run_recycle, run_session
from engine.values import QuotaTreeMemo, compute_quotas, compute_values, group_usage, groups_over_runtime
from tests.support.examples import examples
from tests.unit.test_session_support import group, node, pod, podgroup, rl, snapshot

GROUPS = ("a", "b", "c")
STATUSES = (TaskStatus.PENDING, TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.SUCCEEDED)


def _world(pods: list[tuple[int, int, int, int]], total_cpu: int = 40, a_min: int = 10) -> Snapshot:
    """Three groups under a parent ``p`` (``c`` does not lend), 4 nodes of ``total_cpu / 4`` cpu; each pod is
    (group index, cpu, status index, node index), in the default group when its index is 3."""
    tasks: list[TaskInfo] = []
    for i, (g, cpu, status, n) in enumerate(pods):
        placed = STATUSES[status] in (TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.SUCCEEDED)
        quota = GROUPS[g] if g < len(GROUPS) else None
        tasks.append(
            pod(
                "ns",
                f"t-{i}",
                "job",
                cpu,
                "1Gi",
                status=STATUSES[status],
                node=f"n{n}" if placed else None,
                quota=quota,
            )
        )
    return snapshot(
        nodes=[node(f"n{i}", str(total_cpu // 4), "64Gi") for i in range(4)],
        groups=[
            group("p", is_parent=True, min=rl("30", "100Gi"), max=rl("40", "200Gi")),
            group("a", parent="p", min=rl(str(a_min), "40Gi"), max=rl("40", "100Gi")),
            group("b", parent="p", min=rl("10", "40Gi"), max=rl("20", "100Gi")),
            group("c", parent="p", min=rl("5", "20Gi"), max=rl("40", "100Gi"), allow_lent=False),
        ],
        podgroups=[podgroup("ns", "job", "default", 1)],
        pods=tasks,
    )


def _numbers(result: ElasticResult) -> dict[str, object]:
    out: dict[str, object] = {field: result.amounts(field) for field in FIELDS}
    out["explain"] = {name: result.explain(name) for name in result}
    return out


pods_strategy = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 8), st.integers(0, len(STATUSES) - 1), st.integers(0, 3)),
    max_size=12,
)
# several worlds in a row, each (pods, total cpu, a's min cpu): what one memo is asked for, one after the other
steps_strategy = st.lists(
    st.tuples(pods_strategy, st.sampled_from([40, 40, 40, 32]), st.sampled_from([10, 10, 4])), min_size=2, max_size=6
)


@settings(max_examples=examples(60), deadline=None)
@given(steps_strategy)
def test_a_kept_tree_gives_the_numbers_of_a_new_one(
    steps: list[tuple[list[tuple[int, int, int, int]], int, int]],
) -> None:
    memo = QuotaTreeMemo()
    for pods, total, a_min in steps:
        snap = _world(pods, total, a_min)
        assert _numbers(compute_quotas(snap, memo=memo)) == _numbers(compute_quotas(snap))


def test_the_tree_is_kept_while_the_groups_stay_and_built_again_when_they_change() -> None:
    memo = QuotaTreeMemo()
    first = _world([(0, 4, 1, 0), (1, 6, 0, 0)])
    before = compute_quotas(first, memo=memo)
    kept = _numbers(before)
    assert memo.reused == 0
    busier = _world([(0, 4, 1, 0), (1, 6, 1, 1), (2, 3, 0, 0)])  # b's pod runs, c asks: request and used move
    assert _numbers(compute_quotas(busier, memo=memo)) == _numbers(compute_quotas(busier))
    assert memo.reused == 1
    assert _numbers(before) == kept  # a result handed out earlier is not changed by the tree's updates
    regrouped = _world([(0, 4, 1, 0)], a_min=4)  # a group's min changed: a new tree
    assert _numbers(compute_quotas(regrouped, memo=memo)) == _numbers(compute_quotas(regrouped))
    assert memo.reused == 1
    assert _numbers(compute_quotas(regrouped, memo=memo)) == _numbers(compute_quotas(regrouped))
    assert memo.reused == 2


def test_values_through_the_memo_are_the_values() -> None:
    memo = QuotaTreeMemo()
    for pods in ([(0, 4, 1, 0)], [(0, 4, 1, 0), (1, 8, 1, 1), (2, 2, 0, 0)], [(1, 8, 3, 1), (3, 2, 1, 2)]):
        snap = _world(pods)
        with_memo = compute_values(snap, quotas_memo=memo)
        plain = compute_values(snap)
        assert _numbers(with_memo.quotas) == _numbers(plain.quotas)
    assert memo.reused == 2


def test_a_session_and_its_recycling_pass_share_the_carrys_tree() -> None:
    # a is over its runtime: b asks back what it lends
    snap = _world([(0, 8, 1, 0), (0, 8, 1, 1), (0, 8, 1, 2), (1, 8, 0, 0), (1, 8, 0, 0)], a_min=4)
    carry = SessionCarry()
    result = run_session(snap, now=0.0, carry=carry)
    assert result.values_at_open is not None
    assert _numbers(result.values_at_open.quotas) == _numbers(compute_quotas(snap))
    shared = run_recycle(snap, now=500.0, over_since={"a": 0.0}, carry=carry)
    assert carry.quotas.reused == 1  # the pass brought the session's tree up to date
    assert shared == run_recycle(snap, now=500.0, over_since={"a": 0.0})
    assert shared[0]  # the pass evicted something: the numbers it read decided


def test_inputs_a_tree_refuses_fail_as_without_the_memo() -> None:
    memo = QuotaTreeMemo()
    snap = _world([(0, 4, 1, 0)])
    compute_quotas(snap, memo=memo)
    usage = group_usage(snap)
    bad = dataclasses.replace(usage, requests={**usage.requests, "nowhere": rl("1")})
    with pytest.raises(ValueError) as plain:
        compute_quotas(snap, usage=bad)
    with pytest.raises(ValueError) as kept:
        compute_quotas(snap, usage=bad, memo=memo)
    assert str(kept.value) == str(plain.value)
    assert _numbers(compute_quotas(snap, memo=memo)) == _numbers(compute_quotas(snap))


def _over(result: ElasticResult) -> list[str]:
    """The groups ``recycle_plan`` looks at that use more than their runtime, read from the values."""
    return sorted(
        name
        for name in result
        if name not in (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP)
        and result.parent(name) is not None
        and any(result[name].used.get(r, 0) > v for r, v in result[name].runtime.items())
    )


@settings(max_examples=examples(60), deadline=None)
@given(steps_strategy)
def test_the_groups_over_their_runtime_told_from_the_kept_tree_are_those_of_the_values(
    steps: list[tuple[list[tuple[int, int, int, int]], int, int]],
) -> None:
    memo = QuotaTreeMemo()
    for pods, total, a_min in steps:
        snap = _world(pods, total, a_min)
        over = groups_over_runtime(snap, group_usage(snap), memo)
        if over is not None:
            assert sorted(over) == _over(compute_quotas(snap))
        # and the tree it brought up to date still gives the numbers of a new one
        assert _numbers(compute_quotas(snap, memo=memo)) == _numbers(compute_quotas(snap))
        # the pending pods placed, as a session does: the requests stay, so the kept tree tells (unless the pods of
        # the default group moved, whose used takes from what the trees share)
        placed = _world([(g, cpu, 1 if status == 0 else status, n) for g, cpu, status, n in pods], total, a_min)
        over = groups_over_runtime(placed, group_usage(placed), memo)
        if not any(g == 3 and status == 0 for g, _, status, _ in pods):
            assert over is not None
        if over is not None:
            assert sorted(over) == _over(compute_quotas(placed))
        assert _numbers(compute_quotas(placed, memo=memo)) == _numbers(compute_quotas(placed))


def test_only_a_change_of_used_lets_the_kept_tree_tell_without_the_values() -> None:
    memo = QuotaTreeMemo()
    pending = _world([(0, 8, 0, 0), (0, 8, 0, 1), (1, 4, 1, 0)])
    assert groups_over_runtime(pending, group_usage(pending), memo) is None  # no tree kept yet
    compute_quotas(pending, memo=memo)
    # the pending pods placed: the requests are as they were, only the used moved
    placed = _world([(0, 8, 1, 0), (0, 8, 1, 1), (1, 4, 1, 0)])
    assert groups_over_runtime(placed, group_usage(placed), memo) == _over(compute_quotas(placed)) == []
    # a new pod asks for more: a runtime may move, only the values can tell
    more = _world([(0, 8, 1, 0), (0, 8, 1, 1), (1, 4, 1, 0), (2, 6, 0, 0)])
    assert groups_over_runtime(more, group_usage(more), memo) is None
    assert _numbers(compute_quotas(more, memo=memo)) == _numbers(compute_quotas(more))
    assert memo.reused == 1  # (the checks compute no values)


def test_a_recycling_pass_with_no_group_over_needs_no_values() -> None:
    snap = _world([(0, 4, 1, 0), (1, 4, 1, 1), (2, 2, 0, 0)])
    carry = SessionCarry()
    run_session(snap, now=0.0, carry=carry)
    reused = carry.quotas.reused
    assert (
        run_recycle(snap, now=500.0, over_since={}, carry=carry)
        == run_recycle(snap, now=500.0, over_since={})
        == (
            [],
            {},
        )
    )
    assert carry.quotas.reused == reused  # told from the kept tree, no values computed
