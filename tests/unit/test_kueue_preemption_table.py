"""Kueue's classical preemption (fair sharing off; ``engine.fairshare.kueue_preemption.classical_targets``), case by
case from Kueue's own table.

Source: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/preemption/preemption_test.go``, ``TestPreemption`` (case names quoted), numbers only: the
ClusterQueues of that table (``QUEUES`` below: nominal quota, borrowing and lending limits, the three preemption
policies), the admitted workloads (ClusterQueue, requests per flavor, priority, and when one was admitted or created
if the case says), the incoming workload and the set Kueue preempts. Every workload is admitted at the same instant
unless a case says otherwise (its candidates then go by name, as Kueue's by UID). All 36 cases of the table are here;
below them 14 of the 15 of ``preemption_hierarchical_test.go`` (``TestHierarchicalPreemptions``) and 4 of the 9 of
``TestCandidatesOrdering`` (each group says which it leaves out, and why).

A request is written ``resource[@flavor]=amount`` (flavor ``default`` when not named), comma-separated; cpu is kept
in millicores, memory in MiB (``Gi`` amounts) or as a bare number where Kueue's case gives one. Every flavor-resource
of the incoming request counts as needing preemption (Kueue's table marks them ``Preempt``; where it marks one
``Fit`` — "only preempt workloads using the chosen flavor", "reclaim quota if workload requests 0 resources ..." —
no candidate uses that one, or it asks 0, so the answer is the same).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from engine.fairshare.drs import FairNode, FairTree, FlavorResource
from engine.fairshare.kueue_preemption import Candidate, candidate_key, classical_targets, hierarchical_advantage
from engine.objects import KueuePreemption

LP, ANY, NEVER, NEWER = "LowerPriority", "Any", "Never", "LowerOrNewerEqualPriority"


def amounts(text: str) -> dict[FlavorResource, int]:
    """``"cpu=2,memory@beta=1Gi"`` as flavor-resources: cpu in millicores, memory in MiB for ``Gi``."""
    out: dict[FlavorResource, int] = {}
    for part in filter(None, text.split(",")):
        key, value = part.split("=")
        resource, _, flavor = key.partition("@")
        if value.endswith("Gi"):
            n = int(value[:-2]) * 1024
        elif resource == "cpu":
            n = int(float(value) * 1000)
        else:
            n = int(value)
        fr = (flavor or "default", resource)
        out[fr] = out.get(fr, 0) + n
    return out


@dataclass(frozen=True)
class Q:
    """A ClusterQueue: its Cohort, nominal quota, borrowing and lending limits (same notation) and policies
    (``within``, ``reclaim``; ``threshold`` set means ``borrowWithinCohort: LowerPriority`` with that
    ``maxPriorityThreshold``)."""

    cohort: str | None
    nominal: str
    borrow: str = ""
    lend: str = ""
    within: str = NEVER
    reclaim: str = NEVER
    threshold: int | None = None

    def policy(self) -> KueuePreemption:
        borrow = NEVER if self.threshold is None else LP
        return KueuePreemption(self.reclaim, borrow, self.threshold, self.within)


# The ClusterQueues the table shares (its ``defaultClusterQueues``).
QUEUES: dict[str, Q] = {
    "standalone": Q(None, "cpu=6,memory@alpha=3Gi,memory@beta=3Gi", within=LP),
    "c1": Q("cohort", "cpu=6,memory=3Gi", "cpu=6,memory=3Gi", within=LP, reclaim=LP),
    "c2": Q("cohort", "cpu=6,memory=3Gi", "cpu=6,memory=3Gi", within=NEVER, reclaim=ANY),
    "d1": Q("cohort-no-limits", "cpu=6,memory=3Gi", within=LP, reclaim=LP),
    "d2": Q("cohort-no-limits", "cpu=6,memory=3Gi", within=NEVER, reclaim=ANY),
    "l1": Q("legion", "cpu=6,memory=3Gi", "cpu=12,memory=6Gi", within=LP, reclaim=LP),
    "preventStarvation": Q(None, "cpu=6", within=NEWER),
    "a_standard": Q("with_shared_cq", "cpu=1", "cpu=12", within=NEVER, reclaim=LP, threshold=0),
    "b_standard": Q("with_shared_cq", "cpu=1", "cpu=12", within=LP, reclaim=ANY, threshold=0),
    "a_best_effort": Q("with_shared_cq", "cpu=1", "cpu=12", within=NEVER, reclaim=LP, threshold=0),
    "b_best_effort": Q("with_shared_cq", "cpu=0", "cpu=13", within=NEVER, reclaim=LP, threshold=0),
    "shared": Q("with_shared_cq", "cpu=10"),
    "lend1": Q("cohort-lend", "cpu=6", lend="cpu=4", within=LP, reclaim=LP),
    "lend2": Q("cohort-lend", "cpu=6", lend="cpu=2", within=LP, reclaim=LP),
    "a": Q("cohort-three", "cpu=2,memory=2", within=LP, reclaim=ANY),
    "b": Q("cohort-three", "cpu=2,memory=2"),
    "c": Q("cohort-three", "cpu=2,memory=2"),
}


def tree_of(queues: dict[str, Q], cohorts: dict[str, tuple[str | None, str]]) -> FairTree:
    """The ClusterQueues and Cohorts (name -> parent, nominal quota; a Cohort only named by a ClusterQueue has no
    quota and no parent) as Kueue's tree."""
    named = {q.cohort for q in queues.values() if q.cohort} - set(cohorts)
    nodes = [FairNode(c, None, True) for c in sorted(named)]
    nodes += [FairNode(c, parent, True, amounts(nominal)) for c, (parent, nominal) in cohorts.items()]
    nodes += [
        FairNode(name, q.cohort, False, amounts(q.nominal), amounts(q.borrow), amounts(q.lend))
        for name, q in queues.items()
    ]
    return FairTree(nodes)


@dataclass(frozen=True)
class W:
    """An admitted workload: name, ClusterQueue, requests, priority; ``admitted`` and ``created`` in seconds."""

    name: str
    queue: str
    request: str
    priority: int = 0
    admitted: float = 0.0
    created: float = 0.0


@dataclass(frozen=True)
class Case:
    admitted: tuple[W, ...]
    queue: str  # the incoming workload's ClusterQueue, request, priority, creation
    request: str
    priority: int
    want: frozenset[str]
    created: float = 0.0
    queues: tuple[tuple[str, Q], ...] = ()  # the case's own ClusterQueues (none: ``QUEUES``)
    cohorts: tuple[tuple[str, str | None, str], ...] = ()  # Cohorts: name, parent, nominal quota


def case(
    admitted: list[W], incoming: tuple[str, str, int], want: set[str], created: float = 0.0, **own: object
) -> Case:
    return Case(tuple(admitted), *incoming, frozenset(want), created, **own)  # type: ignore[arg-type]


STANDALONE_2_2_2 = [
    W("low", "standalone", "cpu=2", -1),
    W("mid", "standalone", "cpu=2"),
    W("high", "standalone", "cpu=2", 1),
]
EXHAUSTED = [
    W("a1", "a", "cpu=1", -2),
    W("a2", "a", "cpu=1", -2),
    W("a3", "a", "cpu=1", -1),
    W("b1", "b", "cpu=1"),
    W("b2", "b", "cpu=1"),
    W("b3", "b", "cpu=1"),
]
EXHAUSTED_TWO = [W(w.name, w.queue, "cpu=1,memory=1", w.priority) for w in EXHAUSTED]

CASES: dict[str, Case] = {
    "preempt lowest priority": case(STANDALONE_2_2_2, ("standalone", "cpu=2", 1), {"low"}),
    "preempt multiple": case(STANDALONE_2_2_2, ("standalone", "cpu=3", 1), {"low", "mid"}),
    "no preemption for low priority": case(
        [W("low", "standalone", "cpu=3", -1), W("mid", "standalone", "cpu=3")], ("standalone", "cpu=1", -1), set()
    ),
    "not enough low priority workloads": case(
        [W("low", "standalone", "cpu=3", -1), W("mid", "standalone", "cpu=3")], ("standalone", "cpu=4", 0), set()
    ),
    "some free quota, preempt low priority": case(
        [W("low", "standalone", "cpu=1", -1), W("mid", "standalone", "cpu=1"), W("high", "standalone", "cpu=3", 1)],
        ("standalone", "cpu=2", 1),
        {"low"},
    ),
    "minimal set excludes low priority": case(
        [W("low", "standalone", "cpu=1", -1), W("mid", "standalone", "cpu=2"), W("high", "standalone", "cpu=3", 1)],
        ("standalone", "cpu=2", 1),
        {"mid"},
    ),
    "only preempt workloads using the chosen flavor": case(
        [
            W("low", "standalone", "memory@alpha=2Gi", -1),
            W("mid", "standalone", "memory@beta=1Gi"),
            W("high", "standalone", "memory@beta=1Gi", 1),
        ],
        ("standalone", "cpu=1,memory@beta=2Gi", 1),
        {"mid"},
    ),
    "reclaim quota from borrower": case(
        [W("c1-low", "c1", "cpu=3", -1), W("c2-mid", "c2", "cpu=3"), W("c2-high", "c2", "cpu=6", 1)],
        ("c1", "cpu=3", 1),
        {"c2-mid"},
    ),
    "reclaim quota if workload requests 0 resources for a resource at nominal quota": case(
        [W("c1-low", "c1", "cpu=3,memory=3Gi", -1), W("c2-mid", "c2", "cpu=3"), W("c2-high", "c2", "cpu=6", 1)],
        ("c1", "cpu=3,memory=0Gi", 1),
        {"c2-mid"},
    ),
    "no workloads borrowing": case(
        [W("c1-high", "c1", "cpu=4", 1), W("c2-low-1", "c2", "cpu=4", -1)], ("c1", "cpu=4", 1), set()
    ),
    "not enough workloads borrowing": case(
        [W("c1-high", "c1", "cpu=4", 1), W("c2-low-1", "c2", "cpu=4", -1), W("c2-low-2", "c2", "cpu=4", -1)],
        ("c1", "cpu=4", 1),
        set(),
    ),
    "preempting locally and borrowing other resources in cohort, without cohort candidates": case(
        [W("c1-low", "c1", "cpu=4", -1), W("c2-low-1", "c2", "cpu=4", -1), W("c2-high-2", "c2", "cpu=4", 1)],
        ("c1", "cpu=4,memory=5Gi", 1),
        {"c1-low"},
    ),
    "preempting locally and borrowing same resource in cohort": case(
        [W("c1-med", "c1", "cpu=4"), W("c1-low", "c1", "cpu=4", -1), W("c2-low-1", "c2", "cpu=4", -1)],
        ("c1", "cpu=4", 1),
        {"c1-low"},
    ),
    "preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort": case(
        [W("d1-med", "d1", "cpu=4"), W("d1-low", "d1", "cpu=4", -1), W("d2-low-1", "d2", "cpu=4", -1)],
        ("d1", "cpu=4", 1),
        {"d1-low"},
    ),
    "preempting locally and borrowing other resources in cohort, with cohort candidates": case(
        [
            W("c1-med", "c1", "cpu=4"),
            W("c2-low-1", "c2", "cpu=5", -1),
            W("c2-low-2", "c2", "cpu=1", -1),
            W("c2-low-3", "c2", "cpu=1", -1),
        ],
        ("c1", "cpu=2,memory=5Gi", 1),
        {"c1-med"},
    ),
    "preempting locally and not borrowing same resource in 1-queue cohort": case(
        [W("l1-med", "l1", "cpu=4"), W("l1-low", "l1", "cpu=2", -1)], ("l1", "cpu=4", 1), {"l1-med"}
    ),
    "do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority": case(
        [W("c1", "c1", "cpu=2"), W("c2-1", "c2", "cpu=4"), W("c2-2", "c2", "cpu=4")], ("c1", "cpu=4", 0), set()
    ),
    "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny": case(
        [W("c1-1", "c1", "cpu=4"), W("c1-2", "c1", "cpu=4", 1), W("c2", "c2", "cpu=2")], ("c2", "cpu=4", 0), {"c1-1"}
    ),
    "preempt from all ClusterQueues in cohort": case(
        [
            W("c1-low", "c1", "cpu=3", -1),
            W("c1-mid", "c1", "cpu=2"),
            W("c2-low", "c2", "cpu=3", -1),
            W("c2-mid", "c2", "cpu=4"),
        ],
        ("c1", "cpu=4", 0),
        {"c1-low", "c2-low"},
    ),
    "can't preempt workloads in ClusterQueue for withinClusterQueue=Never": case(
        [W("c2-low", "c2", "cpu=3", -1)], ("c2", "cpu=4", 1), set()
    ),
    "each podset preempts a different flavor": case(
        [W("low-alpha", "standalone", "memory@alpha=2Gi", -1), W("low-beta", "standalone", "memory@beta=2Gi", -1)],
        # a launcher of 2Gi in alpha and two workers of 1Gi in beta
        ("standalone", "memory@alpha=2Gi,memory@beta=1Gi,memory@beta=1Gi", 0),
        {"low-alpha", "low-beta"},
    ),
    "preempt newer workloads with the same priority": case(
        [
            W("wl1", "preventStarvation", "cpu=2", 2),
            W("wl2", "preventStarvation", "cpu=2", 1, admitted=1),
            W("wl3", "preventStarvation", "cpu=2", 1),
        ],
        ("preventStarvation", "cpu=2", 1),
        {"wl2"},
        created=-15,
    ),
    "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing": (
        case(
            [
                W("a_best_effort_low", "a_best_effort", "cpu=10", -1),
                W("b_best_effort_low", "b_best_effort", "cpu=1", -1),
            ],
            ("a_standard", "cpu=10", 0),
            {"a_best_effort_low"},
        )
    ),
    "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
    "MaxPriorityThreshold, if borrowing is required even after the preemption": case(
        [W("b_standard", "b_standard", "cpu=10", 1)], ("a_standard", "cpu=10", 2), set()
    ),
    "use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, "
    "if borrowing is not required after the preemption": case(
        [W("b_standard", "b_standard", "cpu=13", 1)], ("a_standard", "cpu=1", 2), {"b_standard"}
    ),
    "use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue": case(
        [W("a_standard", "a_standard", "cpu=13", 1)], ("a_standard", "cpu=1", 2), set()
    ),
    "use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal": case(
        [
            W("a_standard_1", "a_standard", "cpu=10", 1),
            W("a_standard_2", "a_standard", "cpu=1", 1),
            W("b_standard_1", "b_standard", "cpu=1", 1),
            W("b_standard_2", "b_standard", "cpu=1", 2),
        ],
        ("b_standard", "cpu=1", 3),
        {"b_standard_1"},
    ),
    "use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold": case(
        [
            W("b_standard_high", "b_standard", "cpu=10", 2),
            W("b_standard_mid", "b_standard", "cpu=1", 1),
            W("a_best_effort_low", "a_best_effort", "cpu=1", -1),
            W("a_best_effort_lower", "a_best_effort", "cpu=1", -2),
        ],
        ("b_standard", "cpu=2", 2),
        {"a_best_effort_lower", "b_standard_mid"},
    ),
    "reclaim quota from lender": case(
        [W("lend1-low", "lend1", "cpu=3", -1), W("lend2-mid", "lend2", "cpu=3"), W("lend2-high", "lend2", "cpu=4", 1)],
        ("lend1", "cpu=3", 1),
        {"lend2-mid"},
    ),
    "preempt from all ClusterQueues in cohort-lend": case(
        [
            W("lend1-low", "lend1", "cpu=3", -1),
            W("lend1-mid", "lend1", "cpu=2"),
            W("lend2-low", "lend2", "cpu=3", -1),
            W("lend2-mid", "lend2", "cpu=4"),
        ],
        ("lend1", "cpu=4", 0),
        {"lend1-low", "lend2-low"},
    ),
    "cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit": case(
        [W("lend2-low", "lend2", "cpu=10", -1)], ("lend1", "cpu=9", 0), set()
    ),
    "preemptions from cq when target queue is exhausted for the single requested resource": case(
        EXHAUSTED, ("a", "cpu=2", 0), {"a1", "a2"}
    ),
    "preemptions from cq when target queue is exhausted for two requested resources": case(
        EXHAUSTED_TWO, ("a", "cpu=2,memory=2", 0), {"a1", "a2"}
    ),
    "preemptions from cq when target queue is exhausted for one requested resource, but not the other": case(
        EXHAUSTED, ("a", "cpu=2,memory=2", 0), {"a1", "a2"}
    ),
    "allow preemption from other cluster queues if target cq is not exhausted for the requested resource": case(
        [
            W("a1", "a", "cpu=1", -1),
            W("b1", "b", "cpu=1"),
            W("b2", "b", "cpu=1"),
            W("b3", "b", "cpu=1"),
            W("b4", "b", "cpu=1"),
            W("b5", "b", "cpu=1", -1),
        ],
        ("a", "cpu=2", 0),
        {"a1", "b5"},
    ),
    "long range preemption": case(
        [W("to-be-preempted", "cq-right", "cpu=5")],
        ("cq-left", "cpu=8", 0),
        {"to-be-preempted"},
        queues=(("cq-left", Q("cohort-left", "cpu=10", reclaim=ANY)), ("cq-right", Q("cohort-right", "cpu=0"))),
        cohorts=(("root", None, ""), ("cohort-left", "root", ""), ("cohort-right", "root", "")),
    ),
}


# ``preemption_hierarchical_test.go``, ``TestHierarchicalPreemptions``: Cohorts with quota of their own, nested. Every
# ClusterQueue there has ``withinClusterQueue: LowerPriority`` and ``reclaimWithinCohort: Any`` unless said; one
# without quota has no cpu quota at all. Not here: "prefer to preempt evicted workloads" (a workload already being
# evicted goes first in Kueue's order; Fairway's candidates are never half-evicted).
def hq(cohort: str, nominal: str = "", **policy: object) -> Q:
    return Q(cohort, nominal, **{"within": LP, "reclaim": ANY, **policy})  # type: ignore[arg-type]


R_C2 = (("r", None, ""), ("c", "r", "cpu=2"))
ADVANTAGE = (("q", hq("c")), ("q_borrowing", hq("r")))
R1_C4 = (("r", None, "cpu=1"), ("c", "r", "cpu=4"))
R1_C4_QUEUES = (
    ("q", hq("c", reclaim=LP, threshold=0)),
    ("q_borrowing", hq("r")),
    ("q_same_cohort", hq("c")),
)

HIERARCHICAL: dict[str, Case] = {
    "preempt with hierarchical advantage": case(
        [W("admitted2", "q_borrowing", "cpu=2")],
        ("q", "cpu=2", 0),
        {"admitted2"},
        queues=ADVANTAGE,
        cohorts=R_C2,
    ),
    "avoid queues within nominal quota": case(
        [W("admitted1", "q_nominal", "cpu=2", -10), W("admitted2", "q_borrowing", "cpu=2")],
        ("q", "cpu=2", 0),
        {"admitted2"},
        queues=(*ADVANTAGE, ("q_nominal", hq("r", "cpu=2"))),
        cohorts=R_C2,
    ),
    "preempt multiple with hierarchical advantage": case(
        [W("admitted1", "q_borrowing", "cpu=1", 1), W("admitted2", "q_borrowing", "cpu=1", 2)],
        ("q", "cpu=2", 0),
        {"admitted1", "admitted2"},
        queues=ADVANTAGE,
        cohorts=R_C2,
    ),
    "preempt in cohort and own CQ": case(
        [
            W("admitted_not_preemptible", "q_same_cohort", "cpu=1", 1),
            W("admitted_preemptible", "q_same_cohort", "cpu=2"),  # requests 1, assigned 2: the assignment counts
            W("admitted_own_queue", "q", "cpu=1", -1),
        ],
        ("q", "cpu=2", 1),
        {"admitted_own_queue", "admitted_preemptible"},
        queues=(("q", hq("c", threshold=0)), ("q_same_cohort", hq("c"))),
        cohorts=(("r", None, ""), ("c", "r", "cpu=3")),
    ),
    "prefer to preempt hierarchical candidate": case(
        [W("admitted_borrowing", "q_borrowing", "cpu=1", 1), W("admitted_same_queue", "q", "cpu=1", -2)],
        ("q", "cpu=1", 0),
        {"admitted_borrowing"},
        queues=ADVANTAGE,
        cohorts=R_C2,
    ),
    "forced to preempt priority candidate": case(
        [W("admitted_nominal", "q_nominal", "cpu=2", -10), W("admitted_same_cohort", "q_same_cohort", "cpu=2", -1)],
        ("q", "cpu=2", 0),
        {"admitted_same_cohort"},
        queues=(("q", hq("c", threshold=0)), ("q_nominal", hq("r", "cpu=2")), ("q_same_cohort", hq("c"))),
        cohorts=R_C2,
    ),
    "incoming workload fits in CQ nominal quota": case(
        [W("admitted_borrowing", "q_borrowing", "cpu=3", 10), W("admitted_same_cohort", "q_same_cohort", "cpu=3", 10)],
        ("q", "cpu=4", 0),
        {"admitted_borrowing", "admitted_same_cohort"},
        queues=(("q", hq("c", "cpu=4")), ("q_borrowing", hq("r")), ("q_same_cohort", hq("c"))),
        cohorts=R_C2,
    ),
    "preempt hierarchical and priority candidates": case(
        [
            W("admitted_borrowing", "q_borrowing", "cpu=2", -1),
            W("admitted_same_cohort_preemptible", "q_same_cohort", "cpu=1", -1),
            W("admitted_borrowing_not_preemptible", "q_borrowing", "cpu=2", 1),
        ],
        ("q", "cpu=3", 0),
        {"admitted_borrowing", "admitted_same_cohort_preemptible"},
        queues=R1_C4_QUEUES,
        cohorts=R1_C4,
    ),
    "preempt hierarchical candidates and inside CQ": case(
        [
            W("admitted_borrowing", "q_borrowing", "cpu=2", -1),
            W("admitted_same_queue_preemptible", "q", "cpu=1", -1),
            W("admitted_borrowing_not_preemptible", "q_borrowing", "cpu=2", 1),
        ],
        ("q", "cpu=3", 0),
        {"admitted_borrowing", "admitted_same_queue_preemptible"},
        queues=R1_C4_QUEUES,
        cohorts=R1_C4,
    ),
    "reclaim nominal quota from lowest priority workload, excluding non-borrowing": case(
        [
            W("admitted_borrowing_prio_8", "q_borrowing", "cpu=1", 8),
            W("admitted_borrowing_prio_9", "q_borrowing", "cpu=1", 9),
            W("admitted_borrowing_prio_10", "q_borrowing", "cpu=1", 9),
            W("admitted_nominal", "q_nominal", "cpu=2", -2),
        ],
        ("q", "cpu=1", 0),
        {"admitted_borrowing_prio_8"},
        queues=(*ADVANTAGE, ("q_nominal", hq("r", "cpu=2"))),
        cohorts=(("r", None, ""), ("c", "r", "cpu=3")),
    ),
    "infeasible preemption all available workloads in pruned subtrees": case(
        [
            W("admitted_other_1", "q_other", "cpu=1", -10),
            W("admitted_other_2", "q_other", "cpu=1", -10),
            W("admitted_same_cohort", "q_same_cohort", "cpu=2"),
        ],
        ("q", "cpu=2", 0),
        set(),
        queues=(("q_other", hq("c_other")), ("q", hq("c")), ("q_same_cohort", hq("c"))),
        cohorts=(*R_C2, ("c_other", "r", "cpu=2")),
    ),
    "hiearchical preemption with multiple resources": case(
        [
            W("admitted_borrowing", "q_borrowing", "cpu=3,memory=1Gi"),
            W("admitted_same_cohort", "q_same_cohort", "cpu=1,memory=3Gi", -2),
        ],
        ("q", "cpu=2,memory=1Gi", -2),
        {"admitted_borrowing"},
        queues=(("q", hq("c")), ("q_borrowing", hq("r")), ("q_same_cohort", hq("c"))),
        cohorts=(("r", None, "cpu=3"), ("c", "r", "cpu=4,memory=4Gi")),
    ),
    "respect lending limits": case(
        [W("admitted_borrowing", "q_borrowing", "cpu=4")],
        ("q", "cpu=5", -2),
        {"admitted_borrowing"},
        queues=(("q", hq("c", "cpu=3", lend="cpu=2")), ("q_borrowing", hq("r"))),
        cohorts=R_C2,
    ),
    "reclaim in complex hierarchy": case(
        [
            W("admitted_borrowing_1", "q1", "cpu=4", -6),
            W("admitted_borrowing_2", "q1", "cpu=4", -5),
            W("admitted_borrowing_3", "q2", "cpu=4", -9),
            W("admitted_borrowing_4", "q2", "cpu=4", -10),
            W("admitted_borrowing_5", "q3", "cpu=4", -4),
            W("admitted_borrowing_6", "q3", "cpu=3", -3),
            W("admitted_borrowing_7", "q4", "cpu=2", 4),
            W("admitted_borrowing_8", "q4", "cpu=3", 2),
        ],
        ("q5", "cpu=7", -2),
        {"admitted_borrowing_1", "admitted_borrowing_4"},
        queues=(("q1", hq("c12")), ("q2", hq("c23")), ("q3", hq("c22")), ("q4", hq("c32")), ("q5", hq("c31"))),
        cohorts=(
            ("r", None, ""),
            ("c11", "r", "cpu=4"),
            ("c12", "r", "cpu=4"),
            ("c21", "c11", "cpu=4"),
            ("c22", "c11", "cpu=4"),
            ("c23", "c11", "cpu=4"),
            ("c31", "c21", "cpu=4"),
            ("c32", "c21", "cpu=4"),
        ),
    ),
}


def run(spec: Case) -> set[str]:
    queues = dict(spec.queues) or QUEUES
    tree = tree_of(queues, {name: (parent, nominal) for name, parent, nominal in spec.cohorts})
    admitted = []
    for w in spec.admitted:
        usage = amounts(w.request)
        tree.add_usage(w.queue, usage)
        admitted.append(Candidate(w.name, w.queue, usage, w.priority, w.admitted, w.created))
    before = {n: dict(tree.usage_of(n)) for n in tree.nodes}
    policy = queues[spec.queue].policy()
    targets = classical_targets(tree, spec.queue, amounts(spec.request), admitted, policy, spec.priority, spec.created)
    assert {n: dict(tree.usage_of(n)) for n in tree.nodes} == before  # the tree is left as it was
    return {c.name for c in targets}


def test_every_case_of_the_tables_is_here() -> None:
    assert len(CASES) == 36  # TestPreemption: all
    assert len(HIERARCHICAL) == 14  # TestHierarchicalPreemptions: all but the evicted-workload one


@pytest.mark.parametrize("name", sorted(CASES))
def test_classical_preemption(name: str) -> None:
    assert run(CASES[name]) == CASES[name].want


@pytest.mark.parametrize("name", sorted(HIERARCHICAL))
def test_hierarchical_preemption(name: str) -> None:
    assert run(HIERARCHICAL[name]) == HIERARCHICAL[name].want


# ``TestCandidatesOrdering`` (``preemption_test.go``): the order candidates are tried in, the preemptor's
# ClusterQueue being "preemptor". Each candidate: name, ClusterQueue, priority, admitted (seconds). Not here: the
# evicted-first case, the three priority-boost cases and the LocalQueue-usage case (Admission Fair Sharing's
# preemption by usage): Fairway reads neither a priority boost nor a half-evicted workload.
ORDERINGS: dict[str, tuple[list[tuple[str, str, int, float]], list[str]]] = {
    "workloads sorted by priority": ([("high", "preemptor", 10, 0), ("low", "preemptor", -10, 0)], ["low", "high"]),
    "workload from different CQ first": (
        [("preemptorCq", "preemptor", 10, 0), ("other", "other", 10, 0)],
        ["other", "preemptorCq"],
    ),
    "old workloads last": (
        [("older", "preemptor", 0, -1), ("younger", "preemptor", 0, 1), ("current", "preemptor", 0, 0)],
        ["younger", "current", "older"],
    ),
    "workloads from different CQ are sorted based on priority and timestamp": (
        [("mid_lq_usage", "preemptor", 10, 0), ("high_lq_usage_different_cq", "different_cq", 1, 0)],
        ["high_lq_usage_different_cq", "mid_lq_usage"],
    ),
}


@pytest.mark.parametrize("name", sorted(ORDERINGS))
def test_candidates_ordering(name: str) -> None:
    given, want = ORDERINGS[name]
    candidates = [Candidate(n, queue, {}, priority, admitted) for n, queue, priority, admitted in given]
    assert [c.name for c in sorted(candidates, key=candidate_key("preemptor"))] == want


def test_hierarchical_advantage_is_room_in_the_queue_or_a_cohort_on_its_path() -> None:
    """The enqueue vote's test: q (no quota) under c (2 cpu) under r has the advantage for 2 cpu while c's quota is
    unused, not for 3 (r, the top, has 4 with q_nominal's: room there is borrowing, no advantage), nor once another
    queue of c uses it; a ClusterQueue with quota of its own has it within that."""
    queues = {"q": hq("c"), "q_same_cohort": hq("c"), "q_nominal": hq("r", "cpu=2")}
    tree = tree_of(queues, {"r": (None, ""), "c": ("r", "cpu=2")})
    assert hierarchical_advantage(tree, "q", amounts("cpu=2"))
    assert not hierarchical_advantage(tree, "q", amounts("cpu=3"))
    assert hierarchical_advantage(tree, "q_nominal", amounts("cpu=2"))
    assert not hierarchical_advantage(tree, "q_nominal", amounts("cpu=3"))
    tree.add_usage("q_same_cohort", amounts("cpu=1"))
    assert not hierarchical_advantage(tree, "q", amounts("cpu=2"))
    assert hierarchical_advantage(tree, "q", amounts("cpu=1"))
