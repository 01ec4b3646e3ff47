"""The elastic quota tree kept between computations (``engine.values.QuotaTreeMemo``, issue 29 item 4): a session and
the recycling pass after it, and the next session, bring the last tree up to date with the groups whose request or
used changed instead of building a tree again, and every number is the one a new tree gives."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.fairshare.elastic import FIELDS, ElasticResult
from engine.objects import Snapshot, TaskInfo, TaskStatus
from engine.session.carry import SessionCarry
from engine.session.run import run_recycle, run_session
from engine.values import QuotaTreeMemo, compute_quotas, compute_values, group_usage
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


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(pods_strategy, st.sampled_from([40, 40, 40, 32]), st.sampled_from([10, 10, 4])),
        min_size=2,
        max_size=6,
    )
)
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
