"""Kueue's preemption on candidates indexed once (``engine.fairshare.kueue_preemption.CandidateIndex``) gives the
same answers as on the plain list: ``classical_targets(grouped=...)`` against ``classical_targets``, and
``find_candidates(presorted=True)`` against the sorting one, over random Kueue trees (Cohorts nested, quotas,
borrowing and lending limits, usage, the three preemption policies, priorities and admission times); and the flavor
assigner (``engine.flavors.assign_flavors``) with the index against the same assigner on the plain lists, over
random flavored clusters (the assigner's benchmark's shape at random sizes and policies)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.bench_assigner import manifests
from engine import flavors as flavors_module
from engine.fairshare.drs import FairNode, FairTree, FlavorResource
from engine.fairshare.kueue_preemption import (
    Candidate,
    CandidateIndex,
    classical_targets,
    find_candidates,
    order_key,
)
from engine.manifests import load_manifests
from engine.objects import KueuePreemption
from tests.support.examples import examples

FRS: tuple[FlavorResource, ...] = (("a", "cpu"), ("b", "cpu"), ("a", "memory"))
WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")
MANIFEST_RECLAIM = ("Never", "LowerPriority", "Any")  # (what a ClusterQueue may say)


def _amounts(rng: random.Random, top: int, frs: tuple[FlavorResource, ...] = FRS) -> dict[FlavorResource, int]:
    return {fr: rng.randint(0, top) for fr in frs if rng.random() < 0.7}


def _tree(rng: random.Random) -> tuple[FairTree, list[str]]:
    cohorts = ["root"]
    nodes = [FairNode("root", None, True, _amounts(rng, 4))]
    for i in range(rng.randint(1, 4)):
        parent = rng.choice(cohorts)
        cohorts.append(f"c{i}")
        nodes.append(FairNode(f"c{i}", parent, True, _amounts(rng, 4)))
    queues = []
    for i in range(rng.randint(2, 8)):
        parent = rng.choice([*cohorts, None]) if rng.random() < 0.1 else rng.choice(cohorts)
        borrow = _amounts(rng, 6) if rng.random() < 0.3 else {}
        lend = _amounts(rng, 6) if rng.random() < 0.3 else {}
        nodes.append(FairNode(f"q{i}", parent, False, _amounts(rng, 8), borrow, lend))
        queues.append(f"q{i}")
    return FairTree(nodes), queues


def _case(seed: int) -> tuple[FairTree, str, dict[FlavorResource, int], list[Candidate], KueuePreemption, int, float]:
    rng = random.Random(seed)
    tree, queues = _tree(rng)
    admitted = []
    for i in range(rng.randint(0, 24)):
        queue = rng.choice(queues)
        usage = {fr: v for fr, v in _amounts(rng, 4).items() if v}
        if not usage:
            continue
        tree.add_usage(queue, usage)
        c = Candidate(f"w{i:02d}", queue, usage, rng.randint(-1, 2), float(rng.randint(0, 6)), float(rng.randint(0, 6)))
        admitted.append(c)
    rng.shuffle(admitted)
    borrow = rng.choice(("Never", "LowerPriority"))
    policy = KueuePreemption(
        reclaim_within_cohort=rng.choice(RECLAIM),
        borrow_within_cohort=borrow,
        max_priority_threshold=rng.choice((None, 0, 1)) if borrow != "Never" else None,
        within_cluster_queue=rng.choice(WITHIN),
    )
    request = {fr: rng.randint(1, 6) for fr in rng.sample(FRS, rng.choice((1, 1, 1, 2)))}
    return tree, rng.choice(queues), request, admitted, policy, rng.randint(-1, 2), float(rng.randint(0, 6))


def _usage(tree: FairTree) -> dict[str, dict[FlavorResource, int]]:
    return {n: dict(tree.usage_of(n)) for n in tree.nodes}


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32))
def test_classical_targets_on_the_index_are_the_plain_ones(seed: int) -> None:
    tree, queue, request, admitted, policy, priority, created = _case(seed)
    before = _usage(tree)
    want = classical_targets(tree, queue, request, admitted, policy, priority, created)
    if len(request) == 1:  # the index as the assigner makes it: the workloads using the one flavor-resource asked
        grouped = CandidateIndex(admitted).grouped(next(iter(request)))
    else:  # every workload by ClusterQueue, in order (those using none of the request are left out by the search)
        grouped = {}
        for c in sorted(admitted, key=order_key):
            grouped.setdefault(c.queue, []).append(c)
    got = classical_targets(tree, queue, request, [], policy, priority, created, grouped=grouped)
    assert [c.name for c in got] == [c.name for c in want]
    assert _usage(tree) == before  # the tree is left as it was


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_find_candidates_presorted_are_the_sorted_ones(seed: int) -> None:
    tree, queue, request, admitted, policy, priority, created = _case(seed)
    fr = next(iter(request))
    want = find_candidates(tree, queue, {fr: request[fr]}, admitted, policy, priority, created)
    got = find_candidates(
        tree, queue, {fr: request[fr]}, CandidateIndex(admitted).of(fr), policy, priority, created, presorted=True
    )
    assert [c.name for c in got] == [c.name for c in want]


def _cluster(seed: int) -> str:
    rng = random.Random(seed)
    text = manifests(rng.choice((30, 60, 90)), rng.randint(1, 3), rng.randint(1, 4), rng.randint(1, 6))
    while "{reclaimWithinCohort: Any}" in text:  # a policy of its own for each ClusterQueue
        reclaim = rng.choice(MANIFEST_RECLAIM)
        borrow = rng.choice(("", ", borrowWithinCohort: {policy: LowerPriority}")) if reclaim != "Never" else ""
        policy = f"reclaimWithinCohort: {reclaim}, withinClusterQueue: {rng.choice(WITHIN)}{borrow}"
        text = text.replace("{reclaimWithinCohort: Any}", "{" + policy + "}", 1)
    return text


@pytest.mark.parametrize("seed", range(12))
def test_the_assigner_on_the_index_gives_the_plain_answers(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = load_manifests([("in.yaml", _cluster(seed))]).snapshot
    fast, fast_choices = flavors_module.assign_flavors(snapshot)
    monkeypatch.setattr(flavors_module._Assigner, "indexed", False)
    plain, plain_choices = flavors_module.assign_flavors(snapshot)
    assert {k: c.sentence() for k, c in fast_choices.items()} == {k: c.sentence() for k, c in plain_choices.items()}
    assert fast.admission.cycle_waits == plain.admission.cycle_waits
    assert fast.tasks == plain.tasks
    assert fast_choices


def test_the_random_clusters_make_the_assigner_preempt() -> None:
    outcomes = set()
    for seed in range(12):
        _, choices = flavors_module.assign_flavors(load_manifests([("in.yaml", _cluster(seed))]).snapshot)
        outcomes |= {t.outcome for c in choices.values() for t in c.tries}
    # (their own ClusterQueue's running pods are older and of the same priority: the random trees above take those)
    assert {"fits by reclaiming from other ClusterQueues", "would need a preemption its ClusterQueue may not make"} <= (
        outcomes
    )
