"""Kueue's dominant resource share (``engine.fairshare.drs``), case by case from Kueue's own table, numbers only.

Source: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/cache/scheduler/fair_sharing_test.go``, ``TestDominantResourceShare`` (case names quoted), ``TestIsBorrowingOn``
and ``TestPreciseWeightedShareSerialized``. The expected value is Kueue's ``roundedWeightedShare`` (the weighted share
rounded up; None for its MaxInt, the infinite share of a weight 0) with the dominant resource and whether the node
borrows. cpu is in millicores, as Kueue's amounts are. Left out: "borrowing against unlimited lendable capacity
(exabyte-scale quota)", which pins the rounding of Kueue's saturated int64 sentinel (Fairway's amounts do not
saturate).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from engine.fairshare.drs import NO_SHARE, FairNode, FairTree, Share

CPU, GPU = ("default", "cpu"), ("default", "example.com/gpu")


def _cq(name: str, parent: str | None, quota: dict[Any, int], weight: str = "1", lend: dict[Any, int] | None = None):
    return FairNode(name, parent, False, quota, {}, lend or {}, Fraction(weight))


def _two(cq_quota, lending_quota, *, cq_weight="1", lending_weight="1", cq_lend=None, lending_lend=None):
    """Kueue's test set-up: ``cq`` and ``lending-cq`` in ``test-cohort`` (a Cohort no object defines)."""
    return [
        _cq("cq", "test-cohort", cq_quota, cq_weight, cq_lend),
        _cq("lending-cq", "test-cohort", lending_quota, lending_weight, lending_lend),
        FairNode("test-cohort", None, True),
    ]


ZERO = {"lending-cq": (0, "", False), "test-cohort": (0, "", False)}

# case name -> (nodes, cq usage, the workload's request added to cq (flvResQ), {node: (value, resource, borrowing)})
CASES: dict[str, tuple[list[FairNode], dict[Any, int], dict[Any, int], dict[str, tuple[int | None, str, bool]]]] = {
    "no cohort": (
        [_cq("cq", None, {CPU: 2000 * 1000, GPU: 5})],
        {CPU: 1000, GPU: 2},
        {},
        {"cq": (0, "", False)},
    ),
    "usage below nominal": (
        _two({CPU: 2000, GPU: 5}, {CPU: 8000, GPU: 5}),
        {CPU: 1000, GPU: 2},
        {},
        {"cq": (0, "", False), **ZERO},
    ),
    "usage above nominal": (
        _two({CPU: 2000, GPU: 5}, {CPU: 8000, GPU: 5}),
        {CPU: 3000, GPU: 7},
        {},
        {"cq": (200, "example.com/gpu", True), **ZERO},
    ),
    "usage slightly above nominal in a cohort with large quotas": (
        _two({GPU: 500}, {GPU: 1000}, lending_weight="300"),
        {GPU: 501},
        {},
        {"cq": (1, "example.com/gpu", True), **ZERO},
    ),
    "usage way above nominal in a cohort with large quotas and weights": (
        _two({GPU: 500}, {GPU: 1000}, cq_weight="300", lending_weight="300"),
        {GPU: 800},
        {},
        {"cq": (1, "example.com/gpu", True), **ZERO},
    ),
    "one resource above nominal": (
        _two({CPU: 2000, GPU: 5}, {CPU: 8000, GPU: 5}),
        {CPU: 3000, GPU: 3},
        {},
        {"cq": (100, "cpu", True), **ZERO},
    ),
    "usage with workload above nominal": (
        _two({CPU: 2000, GPU: 5}, {CPU: 8000, GPU: 5}),
        {CPU: 1000, GPU: 2},
        {CPU: 4000, GPU: 4},
        {"cq": (300, "cpu", True), **ZERO},
    ),
    "A resource with zero lendable": (
        _two({CPU: 2000, GPU: 2}, {CPU: 8000, GPU: 64}, cq_lend={GPU: 0}, lending_lend={GPU: 0}),
        {CPU: 1000, GPU: 1},
        {CPU: 4000, GPU: 4},
        {"cq": (300, "cpu", True), **ZERO},
    ),
    "multiple flavors": (
        _two({("on-demand", "cpu"): 20000, ("spot", "cpu"): 80000}, {("default", "cpu"): 100000}),
        {("on-demand", "cpu"): 15000, ("spot", "cpu"): 5000},
        {("on-demand", "cpu"): 10000},
        {"cq": (25, "cpu", True), **ZERO},
    ),
    "above nominal with integer weight": (
        _two({GPU: 5}, {GPU: 5}, cq_weight="2"),
        {GPU: 7},
        {},
        {"cq": (100, "example.com/gpu", True), **ZERO},
    ),
    "above nominal with decimal weight": (
        _two({GPU: 5}, {GPU: 5}, cq_weight="0.5"),
        {GPU: 7},
        {},
        {"cq": (400, "example.com/gpu", True), **ZERO},
    ),
    "above nominal with zero weight": (
        _two({GPU: 5}, {GPU: 10}, cq_weight="0"),
        {GPU: 7},
        {},
        {"cq": (None, "example.com/gpu", True), **ZERO},
    ),
    "cohort has resource share": (
        [
            _cq("cq", "child-cohort", {GPU: 5}),
            FairNode("child-cohort", "root", True, weight=Fraction(2)),
            FairNode("root", None, True, {GPU: 45}),
        ],
        {GPU: 10},
        {},
        {"cq": (100, "example.com/gpu", True), "child-cohort": (50, "example.com/gpu", True), "root": (0, "", False)},
    ),
    "resource share defined for resources only available at the root cohort": (
        [
            _cq("cq", "child-cohort", {GPU: 0}),
            FairNode("child-cohort", "root", True, weight=Fraction(2)),
            FairNode("root", None, True, {GPU: 50}),
        ],
        {GPU: 10},
        {},
        {"cq": (200, "example.com/gpu", True), "child-cohort": (100, "example.com/gpu", True), "root": (0, "", False)},
    ),
    "resource share affected by borrowing limit": (
        [
            _cq("cq", "child-cohort", {GPU: 0}),
            FairNode("child-cohort", "root", True, {GPU: 0}, {GPU: 10}),
            FairNode("root", None, True, {GPU: 50}),
        ],
        {GPU: 10},
        {},
        {"cq": (1000, "example.com/gpu", True), "child-cohort": (200, "example.com/gpu", True), "root": (0, "", False)},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dominant_resource_share(case: str) -> None:
    """TestDominantResourceShare: every node's rounded weighted share, dominant resource and borrowing."""
    nodes, usage, request, want = CASES[case]
    tree = FairTree(nodes, {"cq": usage})
    got = {}
    for name in tree.nodes:
        share = tree.share(name, request if name == "cq" else None)
        got[name] = (share.rounded(), share.resource, share.borrowing)
    assert got == want


def test_exact_values_are_fractions() -> None:
    """The weighted share is exact (Kueue's float before its rounding): 300 / 1500 * 1000 / 300 = 2/3."""
    nodes, usage, _, _ = CASES["usage way above nominal in a cohort with large quotas and weights"]
    share = FairTree(nodes, {"cq": usage}).share("cq")
    assert share.value == Fraction(2, 3)
    assert share.text() == "0.667"


@pytest.mark.parametrize(
    ("usage", "requested", "borrowing_on_requested", "borrowing"),
    [
        # TestIsBorrowingOn: "borrows on requested flavor", "borrows on unrequested flavor only",
        # "borrows on both, requests one", "no borrowing"
        ({CPU: 3000}, [CPU], True, True),
        ({CPU: 1000, GPU: 7}, [CPU], False, True),
        ({CPU: 3000, GPU: 7}, [GPU], True, True),
        ({CPU: 1000, GPU: 2}, [CPU], False, False),
    ],
)
def test_is_borrowing_on(usage: dict[Any, int], requested: list[Any], borrowing_on_requested: bool, borrowing: bool):
    tree = FairTree(_two({CPU: 2000, GPU: 5}, {CPU: 8000, GPU: 5}), {"cq": usage})
    share = tree.share("cq")
    assert share.borrowing is borrowing
    assert any(fr in requested for fr in share.borrowed_on) is borrowing_on_requested
    assert tree.borrowing("cq", requested) is borrowing_on_requested


@pytest.mark.parametrize(
    ("share", "text"),
    [
        # TestPreciseWeightedShareSerialized: "zero weight returning Inf", "zero unweighted ratio returns 0",
        # "regular integer division", "decimal division"
        (Share(ratio=Fraction(100), weight=Fraction(0)), "∞"),
        (Share(ratio=Fraction(0), weight=Fraction(1)), "0"),
        (Share(ratio=Fraction(400), weight=Fraction(2)), "200"),
        (Share(ratio=Fraction(10), weight=Fraction(4)), "2.5"),
    ],
)
def test_share_text(share: Share, text: str) -> None:
    assert share.text() == text


def test_compare_order() -> None:
    """CompareDRS: a borrowing weight-0 node ranks above every finite share; two such by their unweighted ratios;
    a weight-0 node that borrows nothing is 0; NegativeDRS is below everything."""
    inf_small = Share(ratio=Fraction(10), weight=Fraction(0))
    inf_big = Share(ratio=Fraction(20), weight=Fraction(0))
    big = Share(ratio=Fraction(10**9), weight=Fraction(1, 10**9))
    zero_weight_idle = Share(ratio=Fraction(0), weight=Fraction(0))
    ordered = sorted([inf_big, big, inf_small, zero_weight_idle, NO_SHARE], key=Share.key)
    assert ordered == [NO_SHARE, zero_weight_idle, big, inf_small, inf_big]


def test_cohort_usage_rolls_up_above_local_quota() -> None:
    """A Cohort's usage is its children's above what each keeps by its lending limit (resource_node.go): cq1 keeps 6
    of 10 (lending limit 4), runs 9: the cohort carries 3."""
    tree = FairTree(
        [
            FairNode("cq1", "c", False, {CPU: 10}, {}, {CPU: 4}),
            FairNode("cq2", "c", False, {CPU: 10}),
            FairNode("c", None, True),
        ],
        {"cq1": {CPU: 9}},
    )
    assert tree.subtree["c"] == {CPU: 14}
    assert tree.usage_of("c") == {CPU: 3}
    tree.add_usage("cq1", {CPU: 9}, -1)
    assert tree.usage_of("c") == {}


def _rolled_up(tree: FairTree, own: dict[str, dict[Any, int]]) -> dict[str, dict[Any, int]]:
    """Every node's usage from the ClusterQueues' own, computed from scratch (Kueue's ``accumulateFromChild``)."""
    out: dict[str, dict[Any, int]] = {}

    def visit(name: str) -> dict[Any, int]:
        if not tree.nodes[name].cohort:
            out[name] = {fr: v for fr, v in own.get(name, {}).items() if v}
            return out[name]
        total: dict[Any, int] = {}
        for c in tree.children[name]:
            for fr, u in visit(c).items():
                above = u - tree.local_quota(c, fr)
                if above > 0:
                    total[fr] = total.get(fr, 0) + above
        out[name] = total
        return total

    for name, node in tree.nodes.items():
        if node.parent is None:
            visit(name)
    return out


def test_usage_kept_up_to_date_equals_the_roll_up_from_scratch() -> None:
    """Adding and removing usage moves every Cohort's by what passes each lending limit on the way, as Kueue's
    ``addUsage`` / ``removeUsage`` do: after any sequence, the usage equals the roll-up computed from scratch."""
    rng = random.Random(28)
    for _ in range(30):
        nodes = [FairNode("top", None, True, {CPU: rng.randrange(0, 10)})]
        for c in ("left", "right"):
            nodes.append(FairNode(c, "top", True, {CPU: rng.randrange(0, 10)}, {}, {CPU: rng.randrange(0, 6)}))
        queues = [f"q{i}" for i in range(4)]
        for i, q in enumerate(queues):
            lend = {CPU: rng.randrange(0, 8)} if rng.random() < 0.6 else {}
            nodes.append(FairNode(q, ("left", "right")[i % 2], False, {CPU: rng.randrange(0, 10)}, {}, lend))
        tree = FairTree(nodes)
        own: dict[str, dict[Any, int]] = {}
        for _ in range(40):
            q = rng.choice(queues)
            held = own.setdefault(q, {}).get(CPU, 0)
            sign = -1 if held and rng.random() < 0.4 else 1
            v = rng.randrange(1, held + 1) if sign < 0 else rng.randrange(1, 8)
            tree.add_usage(q, {CPU: v}, sign)
            own[q][CPU] = held + sign * v
            assert {n: dict(tree.usage_of(n)) for n in tree.nodes} == _rolled_up(tree, own)
