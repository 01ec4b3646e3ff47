"""Kueue's lending-limit rule at every depth (issue 28 item 1): what a node keeps by its lending limit never reaches
any ancestor, so no queue outside its subtree (a sibling, a cousin, a queue of another branch) may use it.

The cases are Kueue's own, with its numbers (kubernetes-sigs/kueue at commit
ff69552e79ad21652c36caa97038382e55625cf7): ``pkg/scheduler/scheduler_test.go`` "hierarchical cohort respects lending
limit when borrowing" and "hierarchical cohort allows borrowing up to lending limit" (depth 2),
``test/integration/singlecluster/scheduler/scheduler_test.go`` "Should admit only up to the lendingLimit of sibling
cohort" and "Long distance resource allows workload to be scheduled" (depth 3), and the probe of issue 28 (cousins).
Each runs through the capacity engine on the tree the Kueue importer builds (a cohort deserves its subtree's nominal
quota; the top of a tree is capped at it), and through ``tests/support/kueue_reference.py`` (Kueue's arithmetic written
plainly), which must agree; a property test then holds the two equal on random trees of depth up to 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.fairshare.capacity import CapacityResult
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.elastic import compute_runtimes
from engine.fairshare.queues import JobUsage
from engine.fairshare.verdicts import TaskRef
from engine.manifests import load_manifests
from engine.objects import QueueSpec, QuotaGroupSpec
from engine.resources import ResourceList
from tests.support.examples import examples
from tests.support.kueue_reference import KueueNode, KueueTree

CPU = 1000  # millicores per cpu


def node(
    name: str, parent: str | None, nominal: int, *, borrow: int | None = None, lend: int | None = None
) -> KueueNode:
    return KueueNode(name, parent, nominal, borrowing_limit=borrow, lending_limit=lend)


def manifests(nodes: list[KueueNode]) -> str:
    """``nodes`` as Kueue's objects: a node with children is a Cohort, a leaf a ClusterQueue (one resource, cpu)."""
    parents = {n.parent for n in nodes}
    docs = []
    for n in nodes:
        row = f"{{name: cpu, nominalQuota: '{n.nominal}'"
        row += "" if n.borrowing_limit is None else f", borrowingLimit: '{n.borrowing_limit}'"
        row += "" if n.lending_limit is None else f", lendingLimit: '{n.lending_limit}'"
        groups = f"[{{coveredResources: [cpu], flavors: [{{name: default-flavor, resources: [{row}}}]}}]}}]"
        if n.name in parents:
            parent = "" if n.parent is None else f"parentName: {n.parent}, "
            docs.append(f"kind: Cohort\nmetadata: {{name: {n.name}}}\nspec: {{{parent}resourceGroups: {groups}}}")
        else:
            parent = "" if n.parent is None else f"cohortName: {n.parent}, "
            docs.append(f"kind: ClusterQueue\nmetadata: {{name: {n.name}}}\nspec: {{{parent}resourceGroups: {groups}}}")
    return "".join(f"---\napiVersion: kueue.x-k8s.io/v1beta2\n{d}\n" for d in docs)


def fairway_tree(nodes: list[KueueNode], usage: dict[str, int]) -> tuple[CapacityResult, dict[str, str]]:
    """The queues ``fairway simulate`` reads from ``nodes``, with ``usage`` running; and each Kueue name's queue."""
    snapshot = load_manifests([("kueue.yaml", manifests(nodes))]).snapshot
    ident = {n.name: n.name for n in nodes}
    ident.update({k.name: q for q, k in snapshot.kueue_names.items()})
    jobs = [
        JobUsage(
            ident[leaf], "ns", cpu(amount), cpu(amount), phase="Running", min_member=1, allocated_tasks=1, name=leaf
        )
        for leaf, amount in usage.items()
        if amount
    ]
    result = compute_capacity(list(snapshot.queues.values()), jobs, cpu(1_000_000), hierarchy=True)
    assert not result.problems
    return result, ident


def cpu(amount: int) -> ResourceList:
    return ResourceList({"cpu": amount * CPU})


def most_admissible(result: CapacityResult, leaf: str, ceiling: int) -> int:
    """The largest whole-cpu request ``allocatable`` lets into ``leaf`` (0 to ``ceiling``)."""
    low, high = 0, ceiling
    while low < high:
        mid = (low + high + 1) // 2
        if result.allocatable(leaf, cpu(mid)):
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(frozen=True)
class Case:
    """A Kueue tree, what runs in it, the workloads submitted in order to one ClusterQueue each, and which of them
    Kueue admits; ``most`` is the most one more workload may take in each named ClusterQueue afterwards."""

    nodes: tuple[KueueNode, ...]
    usage: tuple[tuple[str, int], ...]
    submitted: tuple[tuple[str, int], ...]
    admitted: tuple[bool, ...]
    most: tuple[tuple[str, int], ...] = ()


CASES = {
    # scheduler_test.go: ROOT <- CHILD <- lender(10, lendingLimit 3), borrower(5, borrowingLimit 10, using 5):
    # a 4-cpu workload does not fit (3 lendable), "insufficient unused quota for cpu in flavor on-demand, 1 more needed"
    "hierarchical cohort respects lending limit when borrowing": Case(
        (
            node("root", None, 0),
            node("child", "root", 0),
            node("cq-lender", "child", 10, lend=3),
            node("cq-borrower", "child", 5, borrow=10),
        ),
        (("cq-borrower", 5),),
        (("cq-borrower", 4),),
        (False,),
        (("cq-borrower", 3), ("cq-lender", 10)),
    ),
    # scheduler_test.go: the same with lendingLimit 5: a 5-cpu workload is admitted
    "hierarchical cohort allows borrowing up to lending limit": Case(
        (
            node("root", None, 0),
            node("child", "root", 0),
            node("cq-lender", "child", 10, lend=5),
            node("cq-borrower", "child", 5, borrow=10),
        ),
        (("cq-borrower", 5),),
        (("cq-borrower", 5),),
        (True,),
        (("cq-borrower", 0), ("cq-lender", 5)),
    ),
    # integration scheduler_test.go: root(0) <- lender(1, lendingLimit 500m) <- lender-cq(1);
    # root <- borrower(0) <- borrower-cq(0): of two 500m workloads in borrower-cq only one is admitted (in
    # millicpu here: the reference and the engine count in whole units of the test)
    "cohort lendingLimit caps sibling borrowing in hierarchy": Case(
        (
            node("root", None, 0),
            node("lender", "root", 1000, lend=500),
            node("lender-cq", "lender", 1000),
            node("borrower", "root", 0),
            node("borrower-cq", "borrower", 0),
        ),
        (),
        (("borrower-cq", 500), ("borrower-cq", 500)),
        (True, False),
        (("lender-cq", 1500),),
    ),
    # integration scheduler_test.go: root <- left <- cq(0), root <- right <- bank(10): cq borrows 10 from a cousin
    "long distance resource allows workload to be scheduled": Case(
        (
            node("root", None, 0),
            node("left", "root", 0),
            node("right", "root", 0),
            node("cq", "left", 0),
            node("bank", "right", 10),
        ),
        (),
        (("cq", 10),),
        (True,),
        (("cq", 0),),
    ),
    # issue 28: root <- left(10) <- cq1(10), root <- right(10) <- cq2(10, lendingLimit 0); cq1 runs 10, cq2 runs 5;
    # of 25 one-cpu workloads in cq1 Kueue admits 20 (cq1's maximum is 30): the 5 cpu cq2 keeps reach no cousin
    "issue 28 probe: a cousin's lending limit": Case(
        (
            node("root", None, 0),
            node("left", "root", 10),
            node("right", "root", 10),
            node("cq1", "left", 10),
            node("cq2", "right", 10, lend=0),
        ),
        (("cq1", 10), ("cq2", 5)),
        (("cq1", 1),) * 25,
        (True,) * 20 + (False,) * 5,
        (("cq1", 0), ("cq2", 5)),
    ),
    # depth 3 with reserves at two levels: keeper (6, lendingLimit 1) keeps 5; mid (own 2, lendingLimit 4) sees
    # 2 + 1 + 2 = 5 and keeps 1, which absorbs spare's 1 in use; so top holds mid's 4 and other's 1: cousin may take
    # 5 (not 6), and after that spare nothing more while keeper still has its 5
    "nested lending limits at depth 3": Case(
        (
            node("top", None, 0),
            node("branch", "top", 0),
            node("mid", "branch", 2, lend=4),
            node("keeper", "mid", 6, lend=1),
            node("spare", "mid", 2),
            node("other", "top", 0),
            node("cousin", "other", 1),
        ),
        (("spare", 1),),
        (("cousin", 6), ("cousin", 5), ("spare", 1)),
        (False, True, False),
        (("keeper", 5), ("spare", 0), ("cousin", 0)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kueue_lending_cases(name: str) -> None:
    case = CASES[name]
    usage = dict(case.usage)
    reference = KueueTree(list(case.nodes), usage)
    result, ident = fairway_tree(list(case.nodes), usage)
    got, expected_by_reference = [], []
    for leaf, request in case.submitted:
        ok = bool(result.allocatable(ident[leaf], cpu(request)))
        got.append(ok)
        expected_by_reference.append(reference.admit(leaf, request))
        if ok:
            result.on_allocate(ident[leaf], cpu(request))
    assert tuple(expected_by_reference) == case.admitted  # the oracle reads Kueue's rule as Kueue's tests do
    assert tuple(got) == case.admitted
    for leaf, most in case.most:
        assert reference.available(leaf) == most
        assert most_admissible(result, ident[leaf], 100_000) == most, leaf


def test_the_probe_names_the_cousin_that_keeps_its_quota() -> None:
    """cq1's maximum is 30 (40 less the 10 cq2 keeps), and a refusal at the top says whose lending limit keeps what;
    Kueue's top cohort ``root`` is the queue ``root-cohort`` (``root`` is Fairway's)."""
    case = CASES["issue 28 probe: a cousin's lending limit"]
    result, ident = fairway_tree(list(case.nodes), dict(case.usage))
    assert ident["root"] == "root-cohort"
    assert result["cq1"].real_capability["cpu"] == 30 * CPU
    assert result["left"].real_capability["cpu"] == 30 * CPU
    assert result["cq2"].real_capability["cpu"] == 40 * CPU
    steps = [str(s) for s in result.explain("left").for_quantity("realCapability", "cpu")]
    assert steps == [
        "realCapability[cpu] = 30 (rc.tree.kept): (parent root-cohort realCapability 40 - siblings' guarantees and "
        "lending-limit reserves 10)+ + own reserve 0"
    ]
    assert str(result.allocatable("cq1", cpu(21))) == (
        "queue cq1 realCapability: insufficient cpu, requested 21, available 20 = 30 capability (after 10 kept by "
        "other queues' lending limits) − 10 allocated"
    )
    # a queue beside cq2 (in right's subtree) may not use what cq2 keeps either
    nodes = [*case.nodes, node("cq3", "right", 0)]
    beside, _ = fairway_tree(nodes, dict(case.usage))
    assert str(beside.allocatable("cq3", cpu(21))) == (
        "queue root-cohort lendingLimit: insufficient cpu, requested 21, available 20 = 40 realCapability − 15 "
        "allocated − 5 kept for cq2 by its lending limit"
    )
    assert KueueTree(nodes, dict(case.usage)).available("cq3") == 20
    # lent and lendable: right lends nothing of what cq2 keeps and does not use
    assert beside.kept_below("right") == {"cpu": 5 * CPU}
    assert beside.kept_below("left") == {}


def test_lendable_now_leaves_out_what_the_limits_below_keep() -> None:
    """What is "lendable now" (metrics, pages): right deserves 20, uses 5, and cq2 keeps 5 more unused, so right can
    lend 10 (Kueue: right's subtree quota is 10, none of it used in root), not 15; and it lends left what left
    borrows."""
    from types import SimpleNamespace

    from engine.lending import lendable_queues

    case = CASES["issue 28 probe: a cousin's lending limit"]
    result, _ = fairway_tree(list(case.nodes), {"cq1": 30, "cq2": 5})
    values: Any = SimpleNamespace(queues=result)
    lendable = lendable_queues(values)
    assert lendable["right"]["cpu"] == 10 * CPU
    assert lendable["cq2"].get("cpu", 0) == 0  # lending limit 0
    assert (result["left"].borrowed["cpu"], result["right"].lent["cpu"]) == (10 * CPU, 10 * CPU)


def test_a_keeper_short_of_its_reserve_reclaims_from_a_cousin() -> None:
    """A Volcano hierarchy (capacity below the deserved sum): top (deserved 50, capability 40) <- left (35) <- cq1
    (35), top <- right (15) <- cq2 (15, lending limit 5: it keeps 10). cq1's realCapability is 40 - 10 = 30; it holds
    33, within its deserved (lent before the limit was set): cq2, short of what it keeps, takes back the 3 beyond 30
    from its cousin, first, and no more."""
    specs = [
        QueueSpec("root", parent=None, reclaimable=False),
        QueueSpec("top", deserved=cpu(50), capability=cpu(40)),
        QueueSpec("left", parent="top", deserved=cpu(35)),
        QueueSpec("right", parent="top", deserved=cpu(15)),
        QueueSpec("cq1", parent="left", deserved=cpu(35)),
        QueueSpec("cq3", parent="left", deserved=cpu(0)),
        QueueSpec("cq2", parent="right", deserved=cpu(15), lending_limit=cpu(5)),
    ]
    held = JobUsage("cq1", "ns", cpu(33), cpu(33), phase="Running", min_member=1, allocated_tasks=1, name="held")
    result = compute_capacity(specs, [held], cpu(100), hierarchy=True)
    assert not result.problems
    assert result["cq1"].real_capability["cpu"] == 30 * CPU
    assert result.sorted_victim_queues("cq2", ["cq3", "cq1"]) == ["cq1", "cq3"]
    victims = [TaskRef(f"cq1-{i}", "cq1", cpu(1)) for i in range(5)]
    selection = result.reclaimable(TaskRef("cq2-0", "cq2", cpu(5)), victims)
    assert [t.name for t in selection.victims] == ["cq1-0", "cq1-1", "cq1-2"]


def test_the_elastic_tree_keeps_a_cousins_reserve_too() -> None:
    """Quota groups: the same probe (left and right with min 20 each, g2 lending 0); g1 asking 35 gets a runtime of
    30, since g2 asks at least what it keeps and its floor is its min (Koordinator's tree has no lending limit; its
    ``allow-lent-resource: false`` keeps the whole min the same way)."""
    big = cpu(100)
    specs = [
        QuotaGroupSpec("left", min=cpu(20), max=big, is_parent=True),
        QuotaGroupSpec("right", min=cpu(20), max=big, is_parent=True),
        QuotaGroupSpec("g1", parent="left", min=cpu(10), max=big),
        QuotaGroupSpec("g2", parent="right", min=cpu(10), max=big, lending_limit=cpu(0)),
    ]
    result = compute_runtimes(specs, {"g1": cpu(35), "g2": cpu(5)}, cpu(40), used={"g1": cpu(10), "g2": cpu(5)})
    assert result["g1"].runtime["cpu"] == 30 * CPU
    assert result["g2"].runtime["cpu"] == 10 * CPU


# -- random trees of depth up to 3 ------------------------------------------------------------------------------


@st.composite
def kueue_trees(draw: st.DrawFn) -> tuple[list[KueueNode], list[tuple[str, int]]]:
    """A tree of depth up to 3 below its top (cohorts ``c*`` under ``top`` or each other, ClusterQueues ``q*`` under
    any of them; a node without children is a ClusterQueue), random quotas and limits (a lending limit at most the
    node's own quota, as Kueue validates), and workloads submitted to its ClusterQueues in order."""
    limit = st.one_of(st.none(), st.integers(0, 8))
    nodes = [node("top", None, draw(st.integers(0, 6)))]
    inner = ["top"]
    for i in range(draw(st.integers(1, 3))):
        own = draw(st.integers(0, 6))
        lend = draw(st.one_of(st.none(), st.integers(0, own)))
        nodes.append(node(f"c{i}", draw(st.sampled_from(inner)), own, borrow=draw(limit), lend=lend))
        inner.append(f"c{i}")
    for i in range(draw(st.integers(2, 4))):
        own = draw(st.integers(0, 8))
        lend = draw(st.one_of(st.none(), st.integers(0, own)))
        nodes.append(node(f"q{i}", draw(st.sampled_from(inner)), own, borrow=draw(limit), lend=lend))
    parents = {n.parent for n in nodes}
    leaves = [n.name for n in nodes if n.name not in parents]
    submitted = draw(st.lists(st.tuples(st.sampled_from(leaves), st.integers(1, 6)), min_size=1, max_size=12))
    return nodes, submitted


@settings(max_examples=examples(150), deadline=None)
@given(kueue_trees())
def test_admissions_match_kueue_on_random_trees(tree: tuple[list[KueueNode], list[tuple[str, int]]]) -> None:
    """Every workload Kueue admits, Fairway admits, and no other; afterwards the most one more workload may take
    in each ClusterQueue is Kueue's ``available``."""
    nodes, submitted = tree
    reference = KueueTree(nodes)
    result, ident = fairway_tree(nodes, {})
    for leaf, request in submitted:
        expected = reference.admit(leaf, request)
        assert bool(result.allocatable(ident[leaf], cpu(request))) == expected, (leaf, request)
        if expected:
            result.on_allocate(ident[leaf], cpu(request))
    for leaf in sorted({q for q, _ in submitted}):
        assert most_admissible(result, ident[leaf], 200) == reference.available(leaf), leaf
