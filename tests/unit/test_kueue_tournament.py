"""Kueue's Fair Sharing order of a cycle's heads (``engine.fairshare.tournament``).

``COMPARER``: the cases of Kueue's ``TestEntryComparerLess`` (kubernetes-sigs/kueue at commit ff69552,
``pkg/scheduler/scheduler_test.go``), numbers only: two heads, the shares of the children offering them (Kueue's
``BorrowingDRS(cpu)``: borrowing on cpu of flavor ``default`` with a ratio of 0; ``NegativeDRS``: below every share;
none: 0), what each asks, and whether the first is taken before the second. The two cases with the alpha feature
gate ``PrioritizePreemptorWorkloads`` on are not rows (Fairway does not offer it: ``SKIPPED``).

The tournament itself: the numbers of ``TestScheduleForFairSharing``'s "hierarchical fair sharing schedule workload
which wins tournament" (its session is in ``tests/cli/test_kueue_fair_schedule_table.py``), taken head by head.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from engine.fairshare.drs import NO_SHARE, FairNode, FairTree, Share
from engine.fairshare.tournament import Head, Tournament, less, next_head

CPU = ("default", "cpu")
BORROWING = Share(borrowed_on=(CPU,))  # Kueue's BorrowingDRS(cpu default)
ZERO = Share()
ONE = {CPU: 1}

# name: (a, a's child's share, b, b's child's share, is a taken before b)
COMPARER: dict[str, tuple[Head, Share, Head, Share, bool]] = {
    "non-borrowing subtree preferred over borrowing subtree": (
        Head("default/nominal", "qa", ONE, created=1),
        ZERO,
        Head("default/borrowing", "qb", ONE, created=0),
        BORROWING,
        True,
    ),
    "both borrowing on requested flavors falls through to FIFO": (
        Head("default/borrow-a", "qa", ONE, created=1),
        BORROWING,
        Head("default/borrow-b", "qb", ONE, created=0),
        BORROWING,
        False,
    ),
    "lower DRS preferred over higher DRS": (
        Head("default/lower-drs", "qa", {}, created=1),
        NO_SHARE,
        Head("default/higher-drs", "qb", {}, created=0),
        ZERO,
        True,
    ),
    "both non-borrowing falls through to FIFO": (
        Head("default/older", "qa", {}, created=0),
        ZERO,
        Head("default/newer", "qb", {}, created=1),
        ZERO,
        True,
    ),
    "a is preemptor, b not, feature disabled": (
        Head("default/preemptor-borrowing", "qa", ONE),
        BORROWING,
        Head("default/not-preemptor-nominal", "qb", ONE),
        ZERO,
        False,
    ),
}
SKIPPED = {
    "a is preemptor, b not, feature enabled": "PrioritizePreemptorWorkloads (alpha, off by default) is not offered",
    "both are preemptors, feature enabled": "PrioritizePreemptorWorkloads, as above",
}


@pytest.mark.parametrize("name", sorted(COMPARER))
def test_kueue_entry_comparer_less(name: str) -> None:
    a, a_share, b, b_share, want = COMPARER[name]
    assert less(a, a_share, b, b_share) is want


def test_borrowing_on_a_flavor_the_head_does_not_ask_for_is_not_borrowing() -> None:
    # FairSharingPrioritizeNonBorrowing looks at the flavor-resources the head asks for only
    spot = Share(borrowed_on=(("spot", "cpu"),), ratio=Fraction(500))
    assert less(Head("ns/a", "qa", ONE, created=1), spot, Head("ns/b", "qb", ONE), BORROWING)
    assert not less(Head("ns/a", "qa", {("spot", "cpu"): 1}, created=1), spot, Head("ns/b", "qb", ONE), BORROWING)


def test_weight_zero_ranks_above_every_finite_share() -> None:
    infinite = Share(ratio=Fraction(1), weight=Fraction(0))
    huge = Share(ratio=Fraction(10**9))
    assert less(Head("ns/a", "qa", {}), huge, Head("ns/b", "qb", {}), infinite)
    assert not less(Head("ns/b", "qb", {}), infinite, Head("ns/a", "qa", {}), huge)


def _tournament_tree() -> FairTree:
    """Cohort a (200 cores) <- b <- d (10 used), e (20 used); a <- c <- f, g (100 used); no quota below a."""
    nodes = [
        FairNode("a", cohort=True, nominal={CPU: 200}),
        FairNode("b", "a", cohort=True),
        FairNode("c", "a", cohort=True),
        *(FairNode(q, parent, nominal={CPU: 0}) for q, parent in (("d", "b"), ("e", "b"), ("f", "c"), ("g", "c"))),
    ]
    return FairTree(nodes, {"d": {CPU: 10}, "e": {CPU: 20}, "g": {CPU: 100}})


def test_the_tournament_takes_the_winner_of_each_level() -> None:
    # with its head admitted: d 80 and e 81 under b, so b nominates d1 (b: 100); f 1, g 101 under c, c nominates f1
    # (c: 101); at a, b's 100 beats c's 101: d1, though e1 would leave b lower (91)
    tree = _tournament_tree()
    heads = {
        "d": Head("ns/d1", "d", {CPU: 70}),
        "e": Head("ns/e1", "e", {CPU: 61}),
        "f": Head("ns/f1", "f", {CPU: 1}),
        "g": Head("ns/g1", "g", {CPU: 1}),
    }
    order = []
    while heads:
        head = next_head(tree, heads)
        order.append(head.key)
        del heads[head.queue]
        tree.add_usage(head.queue, head.usage)  # each admitted (the quota is not checked here)
    # then b with e1 (161) against c with f1 (101): f1; b with e1 (161) against c with g1 (102): g1; e1 last
    assert order == ["ns/d1", "ns/f1", "ns/g1", "ns/e1"]


def test_a_clusterqueue_without_a_cohort_gives_its_head_at_once() -> None:
    tree = FairTree([FairNode("solo", nominal={CPU: 1}), FairNode("z", cohort=True), FairNode("q", "z")])
    heads = {"q": Head("ns/q1", "q", ONE), "solo": Head("ns/s1", "solo", ONE)}
    assert next_head(tree, heads).key == "ns/s1"  # trees by the name of their top: solo before z


def test_an_exact_tie_keeps_the_first_met() -> None:
    a, b = Head("ns/a", "qa", ONE, priority=3, created=5), Head("ns/b", "qb", ONE, priority=3, created=5)
    assert not less(a, BORROWING, b, BORROWING) and not less(b, BORROWING, a, BORROWING)


def _random_case(rng: random.Random) -> tuple[list[FairNode], dict[str, Head], dict[str, dict[tuple[str, str], int]]]:
    """A random tree of two to three levels, each ClusterQueue with a head and some usage."""
    nodes = [FairNode("top", cohort=True, nominal={CPU: rng.randint(0, 20)})]
    cohorts = ["top"]
    for i in range(rng.randint(1, 4)):
        nodes.append(FairNode(f"c{i}", rng.choice(cohorts), cohort=True, nominal={CPU: rng.randint(0, 10)}))
        cohorts.append(f"c{i}")
    heads, usage = {}, {}
    for i in range(rng.randint(2, 9)):
        q = f"q{i}"
        weight = Fraction(rng.choice([0, 1, 1, 2, 3]), rng.choice([1, 2]))
        nodes.append(FairNode(q, rng.choice(cohorts), nominal={CPU: rng.randint(0, 5)}, weight=weight))
        usage[q] = {CPU: rng.randint(0, 8)}
        heads[q] = Head(f"ns/{q}", q, {CPU: rng.randint(0, 6)}, rng.randint(0, 2), rng.randint(0, 3))
    return nodes, heads, usage


def test_the_kept_tournament_takes_the_heads_as_one_computed_afresh_each_time() -> None:
    # ``Tournament`` keeps the shares and nominees between pops; ``changed`` forgets what an admission moves. The
    # order must be that of a tournament run afresh on the same usage before each pop
    rng = random.Random(28)
    for _ in range(300):
        nodes, heads, usage = _random_case(rng)
        kept_tree, fresh_tree = FairTree(nodes, usage), FairTree(nodes, usage)
        kept, left = Tournament(kept_tree, heads), dict(heads)
        while left:
            head, again = kept.pop(), next_head(fresh_tree, left)
            assert head == again
            del left[head.queue]
            if all(v <= kept_tree.available(head.queue, fr) for fr, v in head.usage.items()):
                kept_tree.add_usage(head.queue, head.usage)
                fresh_tree.add_usage(head.queue, head.usage)
                kept.changed(head.queue)
