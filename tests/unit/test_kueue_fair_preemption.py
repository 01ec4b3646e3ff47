"""Kueue's Fair Sharing preemption (``engine.fairshare.kueue_preemption``), case by case from Kueue's own table.

Source: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/preemption/preemption_fair_test.go``, ``TestFairPreemptions`` (case names quoted), numbers only: the
ClusterQueues and Cohorts (nominal cpu, fair weight, the preemptor's preemption policies), the admitted workloads
(ClusterQueue, cpu, priority), the incoming one, the strategies, and the set Kueue preempts. Every workload is
admitted at the same instant, as in Kueue's table (its candidates then go by name, as its UIDs are the names). Every
case of the table is here. cpu is in millicores; a flavor-resource is (flavor, resource), "" for the one flavor.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from engine.fairshare.drs import FairNode, FairTree
from engine.fairshare.kueue_preemption import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    Candidate,
    fair_targets,
    find_candidates,
)
from engine.objects import KueuePreemption

CPU = ("", "cpu")
PREMIUM, CHEAP = ("premium", "cpu"), ("cheap", "cpu")
M = 1000  # millicores per cpu
BASE_POLICY = KueuePreemption("Any", "LowerPriority", -3, "LowerPriority")


def cq(name: str, parent: str | None, cpu: float, weight: str = "1") -> FairNode:
    return FairNode(name, parent, False, {CPU: int(cpu * M)}, weight=Fraction(weight))


def cohort(name: str, parent: str | None = None, cpu: float = 0, weight: str = "1") -> FairNode:
    return FairNode(name, parent, True, {CPU: int(cpu * M)} if cpu else {}, weight=Fraction(weight))


BASE = [cq("a", "all", 3), cq("b", "all", 3), cq("c", "all", 3), cq("preemptible", "all", 0), cohort("all")]


def units(queue: str, *names: str, priority: int = 0) -> list[tuple[str, str, float, int]]:
    return [(n, queue, 1, priority) for n in names]


# case -> nodes, the preemptor's policy, admitted (name, queue, cpu, priority), incoming (queue, cpu, priority),
# strategies (None: Kueue's default, both), the names Kueue preempts
CASES: dict[str, dict[str, Any]] = {
    "reclaim nominal from user using the most": {
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5") + units("c", "c1"),
        "incoming": ("c", 1, 0),
        "want": {"b1"},
    },
    "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough": {
        "admitted": [("a1", "a", 3, 0), ("a2", "a", 1, 0), ("b1", "b", 2, 0), ("b2", "b", 3, 0)],
        "incoming": ("c", 3, 0),
        "want": {"a1"},
    },
    "reclaim borrowable quota from user using the most": {
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5") + units("c", "c1"),
        "incoming": ("a", 1, 0),
        "want": {"b1"},
    },
    "preempt one from each CQ borrowing": {
        "admitted": [
            ("a1", "a", 0.5, 0),
            ("a2", "a", 0.5, 0),
            ("a3", "a", 3, 0),
            ("b1", "b", 0.5, 0),
            ("b2", "b", 0.5, 0),
            ("b3", "b", 3, 0),
        ],
        "incoming": ("c", 2, 0),
        "want": {"a1", "b1"},
    },
    "can't preempt when everyone under nominal": {
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3") + units("c", "c1", "c2", "c3"),
        "incoming": ("c", 1, 0),
        "want": set(),
    },
    "can't preempt when it would switch the imbalance": {
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5"),
        "incoming": ("a", 2, 0),
        "want": set(),
    },
    "can preempt lower priority workloads from same CQ": {
        "admitted": units("a", "a1_low", "a2_low", priority=-1)
        + units("a", "a3", "a4")
        + units("b", "b1", "b2", "b3", "b4", "b5"),
        "incoming": ("a", 2, 0),
        "want": {"a1_low", "a2_low"},
    },
    "can preempt a combination of same CQ and highest user": {
        "admitted": units("a", "a_low", priority=-1)
        + units("a", "a2", "a3")
        + units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
        "incoming": ("a", 2, 0),
        "want": {"a_low", "b1"},
    },
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": {
        "admitted": [("b1", "b", 9, 0)],
        "incoming": ("a", 2, 0),
        "want": {"b1"},
    },
    "can't preempt huge workload if the incoming is also huge": {
        "admitted": [("a1", "a", 2, 0), ("b1", "b", 7, 0)],
        "incoming": ("a", 5, 0),
        "want": set(),
    },
    "can't preempt 2 smaller workloads if the incoming is huge": {
        "admitted": [("b1", "b", 2, 0), ("b2", "b", 2, 0), ("b3", "b", 3, 0)],
        "incoming": ("a", 6, 0),
        "want": set(),
    },
    "preempt from target and others even if over nominal": {
        "admitted": [("a1_low", "a", 2, -1), ("a2_low", "a", 1, -1), ("b1", "b", 3, 0), ("b2", "b", 3, 0)],
        "incoming": ("a", 4, 0),
        "want": {"a1_low", "b1"},
    },
    "prefer to preempt workloads that don't make the target CQ have the biggest share": {
        "admitted": [("b1", "b", 2, 0), ("b2", "b", 1, 0), ("b3", "b", 2, 0), ("c1", "c", 1, 0)],
        "incoming": ("a", 3.5, 0),
        "want": {"b2"},
    },
    "preempt from different cluster queues if the end result has a smaller max share": {
        "admitted": [("b1", "b", 2, 0), ("b2", "b", 2.5, 0), ("c1", "c", 2, 0), ("c2", "c", 2.5, 0)],
        "incoming": ("a", 3.5, 0),
        "want": {"b1", "c1"},
    },
    "scenario above does not flap": {
        "admitted": [("a1", "a", 3.5, 0), ("b2", "b", 2.5, 0), ("c2", "c", 2.5, 0)],
        "incoming": ("b", 2, 0),
        "want": set(),
    },
    "cannot preempt if it would make the candidate CQ go under nominal after preempting one element": {
        "admitted": [("b1", "b", 3, 0), ("b2", "b", 3, 0), ("c1", "c", 3, 0)],
        "incoming": ("a", 4, 0),
        "want": set(),
    },
    "workloads under priority threshold not capriciously preempted": {
        "admitted": units("a", "a1", "a2", "a3")
        + units("b", "b1", "b2", "b3")
        + units("preemptible", "preemptible1", "preemptible2", "preemptible3", priority=-3),
        "incoming": ("a", 2, 0),
        "want": set(),
    },
    "preempt lower priority first, even if big": {
        "strategies": (LESS_THAN_INITIAL_SHARE,),
        "admitted": [("a1", "a", 3, 0), ("b_low", "b", 5, 0), ("b_high", "b", 1, 1)],
        "incoming": ("a", 1, 0),
        "want": {"b_low"},
    },
    "preempt workload that doesn't transfer the imbalance, even if high priority": {
        "strategies": (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
        "admitted": [("a1", "a", 3, 0), ("b_low", "b", 5, 0), ("b_high", "b", 1, 1)],
        "incoming": ("a", 1, 0),
        "want": {"b_high"},
    },
    "CQ with higher weight can preempt more": {
        "nodes": [cq("a", "all", 3, "2"), cq("b", "all", 3), cq("c", "all", 3), cohort("all")],
        "policy": KueuePreemption("Any", "Never", None, "LowerPriority"),
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
        "incoming": ("a", 2, 0),
        "want": {"b1", "b2"},
    },
    "can preempt anything borrowing from CQ with 0 weight": {
        "nodes": [cq("a", "all", 3), cq("b", "all", 3, "0"), cq("c", "all", 3), cohort("all")],
        "policy": KueuePreemption("Any", "Never", None, "LowerPriority"),
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
        "incoming": ("a", 3, 0),
        "want": {"b1", "b2", "b3"},
    },
    "can't preempt nominal from CQ with 0 weight": {
        "nodes": [cq("a", "all", 3), cq("b", "all", 3, "0"), cohort("all")],
        "policy": KueuePreemption("Any", "Never", None, "LowerPriority"),
        "admitted": units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3"),
        "incoming": ("a", 1, 0),
        "want": set(),
    },
    "can't preempt nominal from Cohort with 0 weight": {
        "nodes": [
            cq("left-cq", "root", 0),
            cq("right-cq", "right-cohort", 0, "0"),
            cohort("right-cohort", "root", 1, "0"),
            cohort("root"),
        ],
        "policy": KueuePreemption("Any"),
        "admitted": units("right-cq", "right-1"),
        "incoming": ("left-cq", 1, 0),
        "want": set(),
    },
    "can preempt within cluster queue when no cohort": {
        "nodes": [cq("a", None, 1)],
        "policy": KueuePreemption(within_cluster_queue="LowerPriority"),
        "admitted": units("a", "a1"),
        "incoming": ("a", 1, 1000),
        "want": {"a1"},
    },
    "hierarchical preemption": {
        "nodes": [
            cq("a", "LEFT", 1, "2"),
            cq("b", "LEFT", 1),
            cq("c", "ROOT", 1),
            cq("d", "RIGHT", 1),
            cq("e", "RIGHT", 1, "0.99"),
            cohort("ROOT", None, 5),
            cohort("LEFT", "ROOT", 5, "2"),
            cohort("RIGHT", "ROOT", 5),
        ],
        "policy": KueuePreemption("Any"),
        "admitted": [(f"{q}{i}", q, 1, i) for q in "bcde" for i in range(1, 6)],
        "incoming": ("a", 5, 0),
        "want": {"b1", "b2", "c1", "c2", "e1"},
    },
    "borrowing cq in non-borrowing cohort is protected": {
        "nodes": [
            cq("a", "ROOT", 5, "10"),
            cq("b", "RIGHT", 0, "0.1"),
            cohort("ROOT"),
            cohort("RIGHT", "ROOT", 1, "0.1"),
        ],
        "policy": KueuePreemption("Any", "Never", None, "LowerPriority"),
        "admitted": units("a", "a1", "a2", "a3", priority=-1) + units("b", "b1", priority=-1),
        "incoming": ("a", 5, 0),
        "want": {"a1", "a2", "a3"},
    },
    "forced to preempt within clusterqueue because borrowing workload too important": {
        "nodes": [
            cq("a", "ROOT", 5, "10"),
            cq("b", "RIGHT", 0, "0.1"),
            cohort("ROOT"),
            cohort("RIGHT", "ROOT", 3, "0.1"),
        ],
        "policy": KueuePreemption("LowerPriority", "Never", None, "LowerPriority"),
        "admitted": [*units("a", "a1", "a2", "a3", priority=-1), ("b1", "b", 4, 100)],
        "incoming": ("a", 4, 0),
        "want": {"a1", "a2", "a3"},
    },
    "deep preemption": {
        "nodes": [
            cq("a", "AAA", 0),
            cq("b", "BBB", 0),
            cohort("ROOT"),
            cohort("A", "ROOT", weight="1.01"),
            cohort("AA", "A"),
            cohort("AAA", "AA"),
            cohort("B", "ROOT", weight="0.99"),
            cohort("BB", "B"),
            cohort("BBB", "BB"),
            cohort("C", "ROOT"),
            cohort("CC", "C"),
            cohort("CCC", "CC"),
            cohort("CCCC", "CCC", 1),
        ],
        "policy": KueuePreemption("Any"),
        "admitted": units("b", "b1"),
        "incoming": ("a", 1, 0),
        "want": {"b1"},
    },
    "cq with zero weight can reclaim nominal quota": {
        "nodes": [cq("a", "ROOT", 1, "0"), cq("b", "ROOT", 0), cohort("ROOT")],
        "policy": KueuePreemption("Any"),
        "admitted": units("b", "b1"),
        "incoming": ("a", 1, 0),
        "want": {"b1"},
    },
    "cohort with zero weight can reclaim nominal quota": {
        "nodes": [cq("a", "A", 0, "0"), cq("b", "ROOT", 0), cohort("A", "ROOT", 1, "0"), cohort("ROOT")],
        "policy": KueuePreemption("Any"),
        "admitted": units("b", "b1"),
        "incoming": ("a", 1, 0),
        "want": {"b1"},
    },
    "nominal first: workload fitting within nominal can preempt despite high aggregate DRS": {
        "nodes": [
            FairNode("a", "all", False, {PREMIUM: 3 * M, CHEAP: 0}),
            FairNode("b", "all", False, {PREMIUM: 0, CHEAP: 6 * M}),
            cohort("all"),
        ],
        "policy": KueuePreemption("Any"),
        "admitted": [(f"a_prem{i}", "a", 1, 0, PREMIUM) for i in (1, 2)]
        + [(f"a_cheap{i}", "a", 1, 0, CHEAP) for i in range(1, 6)]
        + [("b_prem1", "b", 1, 0, PREMIUM)],
        "incoming": ("a", 1, 0, PREMIUM),
        "want": {"b_prem1"},
    },
    "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight": {
        "nodes": [cq("a", "all", 1, "0"), cq("b", "all", 1), cohort("all")],
        "policy": KueuePreemption("Any"),
        "admitted": units("a", "a1") + units("b", "b1", "b2"),
        "incoming": ("a", 1, 0),
        "want": set(),
    },
    "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight": {
        "nodes": [cq("a", "all", 1, "0"), cq("b", "all", 0, "0"), cohort("all", None, 3)],
        "policy": KueuePreemption("Any"),
        "admitted": units("b", "b1", "b2", "b3"),
        "incoming": ("a", 2, 0),
        "want": {"b1"},
    },
    "non-zero weight borrowing preemptor preempts from a borrowing CQ": {
        "nodes": [cq("a", "all", 1), cq("b", "all", 0), cohort("all", None, 3)],
        "policy": KueuePreemption("Any"),
        "admitted": units("b", "b1", "b2", "b3"),
        "incoming": ("a", 2, 0),
        "want": {"b1"},
    },
    "candidates skipped by the first strategy are still available to the second strategy": {
        "nodes": [
            cq("p", "A", 2),
            cq("y", "A", 2),
            cq("x", "ROOT", 1),
            cohort("A", "ROOT", 1, "0"),
            cohort("ROOT"),
        ],
        "policy": KueuePreemption("Any"),
        "admitted": [("p1", "p", 2, 0), ("y1", "y", 2, 0), ("y2", "y", 2, 0), *units("x", "x1", "x2")],
        "incoming": ("p", 1, 0),
        "want": {"y1", "x1"},
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fair_preemptions(case: str) -> None:
    spec = CASES[case]
    tree = FairTree(spec.get("nodes", BASE))
    admitted = []
    for name, queue, cpu, priority, *flavor in spec["admitted"]:
        usage = {flavor[0] if flavor else CPU: int(cpu * M)}
        tree.add_usage(queue, usage)
        admitted.append(Candidate(name, queue, usage, priority))
    queue, cpu, priority, *flavor = spec["incoming"]
    request = {flavor[0] if flavor else CPU: int(cpu * M)}
    candidates = find_candidates(tree, queue, request, admitted, spec.get("policy", BASE_POLICY), priority)
    before = {n: dict(tree.usage_of(n)) for n in tree.nodes}
    strategies = spec.get("strategies") or (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
    targets, fits = fair_targets(tree, queue, request, candidates, strategies)
    assert ({c.name for c in targets} if fits else set()) == spec["want"]
    assert {n: dict(tree.usage_of(n)) for n in tree.nodes} == before  # the tree is left as it was
