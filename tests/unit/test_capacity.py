"""The capacity policy, flat and hierarchical.

Cases are Volcano's ``pkg/scheduler/plugins/capacity/capacity_test.go`` (volcano-sh/volcano at ed72c7c):
``Test_capacityPlugin_OnSessionOpenWithoutHierarchy`` (flat case0-10), ``TestEnqueueAndAllocatable``,
``Test_capacityPlugin_OnSessionOpenWithHierarchy`` (case0-12), ``Test_capacityPlugin_AncestorReclaimScenarios``
and ``Test_updateQueueAttrShare``, plus the user guide's queue1/queue2 example
(``docs/user-guide/how_to_use_capacity_plugin.md``). Each scheduling outcome (bind, evict, stay pending) is
restated as the plugin decisions that produce it; node fitting is the session's part and is noted where it
decides the outcome.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.fairshare.deserved import compute_capacity
from engine.fairshare.queues import JobUsage
from engine.fairshare.verdicts import TaskRef
from engine.objects import QueueSpec
from engine.resources import ResourceList


def rl(**quantities: Any) -> ResourceList:
    """``rl(cpu="2", memory="4Gi", gpu="1", a100="1")``."""
    alias = {"gpu": "nvidia.com/gpu", "a100": "nvidia.com/a100", "A100": "nvidia.com/A100", "rdma": "rdma/hca"}
    return ResourceList.parse({alias.get(k, k.replace("_", "-")): v for k, v in quantities.items()})


def running(queue: str, request: ResourceList, name: str = "", **kw: Any) -> JobUsage:
    return JobUsage(
        queue=queue,
        namespace="ns1",
        request=request,
        allocated=request,
        phase="Running",
        min_member=1,
        allocated_tasks=1,
        name=name,
        **kw,
    )


def waiting(queue: str, request: ResourceList, name: str = "", phase: str = "Inqueue", **kw: Any) -> JobUsage:
    return JobUsage(
        queue=queue,
        namespace="ns1",
        request=request,
        allocated=ResourceList(),
        phase=phase,
        min_member=1,
        name=name,
        **kw,
    )


def q(
    name: str,
    parent: str | None = "root",
    deserved: ResourceList | None = None,
    capability: ResourceList | None = None,
    **kw: Any,
) -> QueueSpec:
    """Volcano's ``buildQueueWithParents(name, parent, deserved, capability)``."""
    return QueueSpec(
        name=name, parent=parent, deserved=deserved or ResourceList(), capability=capability or ResourceList(), **kw
    )


def task(name: str, queue: str, request: ResourceList) -> TaskRef:
    return TaskRef(name=name, queue=queue, request=request)


# ------------------------------------------------------------------------------------------------------------
# Flat: Test_capacityPlugin_OnSessionOpenWithoutHierarchy
# ------------------------------------------------------------------------------------------------------------

TWO_NODES = rl(cpu="4", memory="8Gi", pods="20")  # n1 + n2: 2 cpu, 4Gi, 10 pods each


def test_flat_case0_allocatable_within_capability() -> None:
    result = compute_capacity(
        [q("q1", capability=rl(cpu="2", memory="2Gi"))],
        [running("q1", rl(cpu="1", memory="1Gi")), waiting("q1", rl(cpu="1", memory="1Gi"))],
        TWO_NODES,
    )
    assert result["q1"].real_capability.only(["cpu", "memory"]) == rl(cpu="2", memory="2Gi")
    assert result.allocatable("q1", rl(cpu="1", memory="1Gi"))


def test_flat_case1_not_allocatable_beyond_capability() -> None:
    result = compute_capacity(
        [q("q2", capability=rl(cpu="1.5", memory="1.5Gi"))],
        [running("q2", rl(cpu="1", memory="1Gi")), waiting("q2", rl(cpu="1", memory="1Gi"))],
        TWO_NODES,
    )
    verdict = result.allocatable("q2", rl(cpu="1", memory="1Gi"))
    assert not verdict
    assert [str(r) for r in verdict.reasons] == [
        "queue q2 realCapability: insufficient cpu, requested 1, available 0.5 = 1.5 capability − 1 allocated",
        "queue q2 realCapability: insufficient memory, requested 1Gi, available 512Mi = 1.5Gi capability − 1Gi allocated",
    ]


def test_flat_case2_reclaim_from_queue_above_deserved() -> None:
    # q3 runs 2 pods of 2 cpu 4Gi (p5 is not preemptable, so the action only offers p6); q4 wants 2 cpu 4Gi
    queues = [q("q3", deserved=rl(cpu="2", memory="4Gi")), q("q4", deserved=rl(cpu="2", memory="4Gi"))]
    jobs = [running("q3", rl(cpu="4", memory="8Gi")), waiting("q4", rl(cpu="2", memory="4Gi"))]
    result = compute_capacity(queues, jobs, TWO_NODES)
    p7 = task("p7", "q4", rl(cpu="2", memory="4Gi"))
    assert result.preemptive("q4", p7.request)
    selection = result.reclaimable(p7, [task("p6", "q3", rl(cpu="2", memory="4Gi"))])
    assert [t.name for t in selection.victims] == ["p6"]


def test_flat_case3_scalar_only_reclaimer_reclaims_scalar_overuse() -> None:
    # q5 holds 20 A100 (deserved 10); q6 holds 4 cpu 8Gi (its whole deserved) and wants 10 A100
    total = rl(cpu="4", memory="8Gi", A100="20", pods="20")
    deserved = rl(cpu="2", memory="4Gi", A100="10")
    queues = [q("q5", deserved=deserved), q("q6", deserved=deserved)]
    jobs = [running("q5", rl(A100="20")), running("q6", rl(cpu="4", memory="8Gi")), waiting("q6", rl(A100="10"))]
    result = compute_capacity(queues, jobs, total)
    p12 = task("p12", "q6", rl(cpu="0", memory="0", A100="10"))
    assert result.preemptive("q6", p12.request)
    selection = result.reclaimable(p12, [task("p9", "q5", rl(cpu="0", memory="0", A100="10"))])
    assert [t.name for t in selection.victims] == ["p9"]


def test_flat_case4_queue_priority_first() -> None:
    queues = [
        q("q7", capability=rl(cpu="2", memory="4Gi"), priority=5),
        q("q8", capability=rl(cpu="2", memory="4Gi"), priority=1),
        q("q9", capability=rl(cpu="2", memory="4Gi"), priority=10),
    ]
    jobs = [
        running("q7", rl(cpu="2", memory="4Gi")),
        waiting("q8", rl(cpu="2", memory="4Gi")),
        waiting("q9", rl(cpu="2", memory="4Gi")),
    ]
    result = compute_capacity(queues, jobs, TWO_NODES)
    assert result.sorted_queues() == ["q9", "q7", "q8"]
    assert result.allocatable("q9", rl(cpu="2", memory="4Gi"))


def test_flat_case5_reclaim_when_one_dimension_stays_within_deserved() -> None:
    # one node of 2 cpu 4Gi; q10 deserved 2 cpu 2Gi (capability 4/4Gi) runs 1 cpu 3Gi and wants 1 cpu 1Gi;
    # q11 deserves 0 cpu 0Gi and runs 1 cpu 1Gi
    queues = [
        q("q10", deserved=rl(cpu="2", memory="2Gi"), capability=rl(cpu="4", memory="4Gi")),
        q("q11", deserved=rl(cpu="0", memory="0Gi"), capability=rl(cpu="2", memory="2Gi")),
    ]
    jobs = [
        running("q10", rl(cpu="1", memory="3Gi")),
        waiting("q10", rl(cpu="1", memory="1Gi")),
        running("q11", rl(cpu="1", memory="1Gi")),
    ]
    result = compute_capacity(queues, jobs, rl(cpu="2", memory="4Gi", pods="10"))
    p17 = task("p17", "q10", rl(cpu="1", memory="1Gi"))
    assert result.preemptive("q10", p17.request)  # cpu 2 <= deserved 2, although memory 4Gi > 2Gi
    selection = result.reclaimable(p17, [task("p18", "q11", rl(cpu="1", memory="1Gi"))])
    assert [t.name for t in selection.victims] == ["p18"]  # q11 deserves nothing it uses: immediate victim
    assert result["q11"].share == 1.0  # best effort


def test_flat_case6_no_reclaim_when_every_dimension_exceeds_deserved() -> None:
    queues = [
        q("q12", deserved=rl(cpu="1", memory="2Gi"), capability=rl(cpu="4", memory="4Gi")),
        q("q13", deserved=rl(cpu="0", memory="0Gi"), capability=rl(cpu="2", memory="2Gi")),
    ]
    jobs = [
        running("q12", rl(cpu="1", memory="1Gi")),
        waiting("q12", rl(cpu="1", memory="2Gi")),
        running("q13", rl(cpu="1", memory="1Gi")),
    ]
    result = compute_capacity(queues, jobs, rl(cpu="2", memory="4Gi", pods="10"))
    verdict = result.preemptive("q12", rl(cpu="1", memory="2Gi"))
    assert not verdict
    assert {r.check for r in verdict.reasons} == {"deserved"}


def test_flat_case7_allocated_without_the_scalar_deserved_has_is_not_reclaimed() -> None:
    # volcano issue #4918 bug 2: p22 (queue14) uses only cpu/memory at exactly its deserved; p23 (queue15,
    # best effort) holds one gpu; queue16 wants 2 cpu 3Gi 1 gpu
    deserved = rl(cpu="2", memory="4Gi", gpu="2")
    queues = [q("queue14", deserved=deserved), q("queue15"), q("queue16", deserved=deserved)]
    jobs = [
        running("queue14", rl(cpu="2", memory="4Gi")),
        running("queue15", rl(gpu="1")),
        running("queue16", rl(cpu="2", memory="1Gi", gpu="1")),
        waiting("queue16", rl(cpu="2", memory="3Gi", gpu="1")),
    ]
    result = compute_capacity(queues, jobs, rl(cpu="4", memory="8Gi", gpu="4", pods="10"))
    p25 = task("p25", "queue16", rl(cpu="2", memory="3Gi", gpu="1"))
    assert result.preemptive("queue16", p25.request)
    selection = result.reclaimable(
        p25, [task("p22", "queue14", rl(cpu="2", memory="4Gi")), task("p23", "queue15", rl(gpu="1"))]
    )
    assert [t.name for t in selection.victims] == ["p23"]
    assert selection.skipped[0][1] == "queue queue14 is not above its deserved on what the task uses"
    # the action then finds that evicting p23 frees no cpu on the node, so nothing is evicted


def test_flat_case8_only_the_reclaimers_dimensions_count() -> None:
    # volcano issue #4918 bug 1: queue17 (deserved 2 cpu 2Gi) runs p26 (4Gi), p27 (1 cpu), p28 (1 gpu);
    # queue18 wants 1 cpu + 1 gpu: only p28 (gpu, not deserved by queue17) is a victim
    queues = [
        q("queue17", deserved=rl(cpu="2", memory="2Gi")),
        q("queue18", deserved=rl(cpu="2", memory="4Gi", gpu="1")),
    ]
    jobs = [
        running("queue17", rl(memory="4Gi")),
        running("queue17", rl(cpu="1")),
        running("queue17", rl(gpu="1")),
        running("queue18", rl(cpu="2", memory="4Gi")),
        waiting("queue18", rl(cpu="1", gpu="1")),
    ]
    result = compute_capacity(queues, jobs, rl(cpu="4", memory="8Gi", gpu="1", pods="10"))
    p30 = task("p30", "queue18", rl(cpu="1", memory="0", gpu="1"))
    selection = result.reclaimable(
        p30,
        [
            task("p26", "queue17", rl(cpu="0", memory="4Gi")),
            task("p27", "queue17", rl(cpu="1", memory="0")),
            task("p28", "queue17", rl(cpu="0", memory="0", gpu="1")),
        ],
    )
    assert [t.name for t in selection.victims] == ["p28"]
    assert [why for _, why in selection.skipped] == [
        "shares no resource with the reclaimer",
        "queue queue17 is not above its deserved on what the task uses",
    ]


def test_flat_case9_scalar_only_deserved_protects_cpu_memory_use() -> None:
    # issue #4918 bug 3: queue19 deserves only 1 gpu; p31 uses all 4 cpu and 1 gpu; queue20 wants 1 cpu
    queues = [q("queue19", deserved=rl(gpu="1")), q("queue20", deserved=rl(cpu="2", memory="2Gi"))]
    jobs = [running("queue19", rl(cpu="4", memory="4Gi", gpu="1")), waiting("queue20", rl(cpu="1", memory="1Gi"))]
    result = compute_capacity(queues, jobs, rl(cpu="4", memory="8Gi", gpu="1", pods="10"))
    p32 = task("p32", "queue20", rl(cpu="1", memory="1Gi"))
    assert result.preemptive("queue20", p32.request)
    selection = result.reclaimable(p32, [task("p31", "queue19", rl(cpu="4", memory="4Gi", gpu="1"))])
    assert selection.victims == ()


def test_reclaim_never_takes_a_queue_below_its_guarantee() -> None:
    # g deserves 1 cpu but is guaranteed 2 (so deserves 2) and holds 3: a 2-cpu task would leave it at 1
    queues = [q("g", deserved=rl(cpu="1"), guarantee=rl(cpu="2")), q("r", deserved=rl(cpu="4"))]
    jobs = [running("g", rl(cpu="3")), waiting("r", rl(cpu="2"))]
    result = compute_capacity(queues, jobs, rl(cpu="6"))
    assert result["g"].deserved == rl(cpu="2")
    offered = [task("big", "g", rl(cpu="2")), task("small", "g", rl(cpu="1"))]
    selection = result.reclaimable(task("x", "r", rl(cpu="2")), offered)
    assert [t.name for t in selection.victims] == ["small"]
    assert selection.skipped == ((offered[0], "queue g would drop below its guarantee"),)


def test_flat_case10_preemptive_respects_capability() -> None:
    # issue #5048: queue21 capability = deserved = 8 cpu 100Gi, holds 7 cpu 90Gi, wants 2 cpu 5Gi
    queues = [
        q("queue21", deserved=rl(cpu="8", memory="100Gi"), capability=rl(cpu="8", memory="100Gi")),
        q("queue22", capability=rl(cpu="2", memory="5Gi")),
    ]
    jobs = [
        running("queue21", rl(cpu="7", memory="90Gi")),
        waiting("queue21", rl(cpu="2", memory="5Gi")),
        running("queue22", rl(cpu="2", memory="5Gi")),
    ]
    result = compute_capacity(queues, jobs, rl(cpu="16", memory="200Gi", pods="20"))
    verdict = result.preemptive("queue21", rl(cpu="2", memory="5Gi"))
    assert str(verdict) == (
        "queue queue21 realCapability: insufficient cpu, requested 2, available 1 = 8 capability − 7 allocated"
    )


# ------------------------------------------------------------------------------------------------------------
# Flat: TestEnqueueAndAllocatable
# ------------------------------------------------------------------------------------------------------------

ENQ_TOTAL = rl(cpu="6", memory="6G", pods="20")  # n1 + n2: 3 cpu 3G each
ENQ_QUEUES = [
    q("q1", deserved=rl(cpu="2", memory="2G"), capability=rl(cpu="2", memory="2G")),
    q("q2", deserved=rl(cpu="2", memory="2G"), capability=rl(cpu="3", memory="3G")),
    q("q3", capability=rl(cpu="3", memory="3G"), state="Closed"),
]
ENQ_RUNNING = [
    running("q1", rl(cpu="1", memory="3G"), "pg1", min_resources=rl(cpu="1", memory="3G")),
    running("q2", rl(cpu="3", memory="1G"), "pg2", min_resources=rl(cpu="3", memory="1G")),
]


def _pending(queue: str, request: ResourceList, name: str) -> JobUsage:
    return waiting(queue, request, name, phase="Pending", min_resources=request)


@pytest.mark.parametrize(
    ("case", "pending", "enqueue", "allocate"),
    [
        (
            "case0: memory exceeds deserved, a cpu-only job enqueues and allocates",
            _pending("q1", rl(cpu="1", memory="0"), "pg3"),
            True,
            True,
        ),
        (
            "case1: cpu exceeds deserved, a memory-only job enqueues and allocates",
            _pending("q2", rl(cpu="0", memory="1G"), "pg4"),
            True,
            True,
        ),
        ("case2: exceeds capacity, cannot enqueue", _pending("q1", rl(cpu="1", memory="1G"), "pg5"), False, False),
        ("case4: queue not open, cannot enqueue", _pending("q3", rl(cpu="1", memory="1G"), "pg6"), False, False),
    ],
)
def test_enqueue_and_allocatable(case: str, pending: JobUsage, enqueue: bool, allocate: bool) -> None:
    result = compute_capacity(ENQ_QUEUES, [*ENQ_RUNNING, pending], ENQ_TOTAL)
    assert bool(result.enqueueable(pending)) is enqueue, case
    assert bool(result.allocatable(pending.queue, pending.request)) is allocate, case


def test_enqueue_refusal_names_the_numbers() -> None:
    pg5 = _pending("q1", rl(cpu="1", memory="1G"), "pg5")
    result = compute_capacity(ENQ_QUEUES, [*ENQ_RUNNING, pg5], ENQ_TOTAL)
    assert str(result.enqueueable(pg5)) == (
        "queue q1 realCapability: insufficient memory, requested 1G, available 0 = max(0, 2G capability − 3G allocated)"
    )


# ------------------------------------------------------------------------------------------------------------
# Shares: Test_updateQueueAttrShare
# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deserved", "allocated", "share"),
    [
        (ResourceList(), rl(cpu="1", memory="1Gi"), 1.0),  # best effort: always 1
        (ResourceList(), ResourceList(), 1.0),
        (ResourceList(), rl(cpu="1", memory="0"), 1.0),
        (rl(cpu="2", memory="2Gi"), ResourceList(), 0.0),
        (rl(cpu="2", memory="2Gi"), rl(cpu="1", memory="1Gi"), 0.5),
        (rl(cpu="2", memory="2Gi"), rl(cpu="2", memory="2Gi"), 1.0),
        (rl(cpu="2", memory="2Gi"), rl(cpu="3", memory="2Gi"), 1.5),
        (rl(cpu="2", memory="4Gi"), rl(cpu="1", memory="3Gi"), 0.75),
        (rl(cpu="2", memory="4Gi"), rl(cpu="1.5", memory="2Gi"), 0.75),
        (rl(cpu="2", memory="2Gi"), rl(cpu="3", memory="3Gi"), 1.5),
        (rl(cpu="0", memory="0Gi"), rl(cpu="1", memory="1Gi"), 1.0),  # zero deserved is best effort
        (rl(cpu="2", memory="2Gi"), rl(cpu="0", memory="0Gi"), 0.0),
    ],
)
def test_update_queue_attr_share(deserved: ResourceList, allocated: ResourceList, share: float) -> None:
    jobs = [running("q", allocated)] if allocated else [waiting("q", rl(cpu="1"))]
    result = compute_capacity([q("q", deserved=deserved)], jobs, rl(cpu="100", memory="100Gi"))
    assert result["q"].share == share


def test_flat_queue_order_tie_prefers_queue_with_deserved() -> None:
    queues = [q("a-best-effort"), q("b-entitled", deserved=rl(cpu="1"))]
    jobs = [running("a-best-effort", rl(cpu="1")), running("b-entitled", rl(cpu="1"))]
    result = compute_capacity(queues, jobs, rl(cpu="4"))
    assert result["a-best-effort"].share == result["b-entitled"].share == 1.0
    assert result.sorted_queues() == ["b-entitled", "a-best-effort"]


def test_flat_deserved_is_capped_by_real_capability_and_raised_to_guarantee() -> None:
    queues = [
        q("a", deserved=rl(cpu="8"), capability=rl(cpu="3")),
        q("b", deserved=rl(cpu="1"), guarantee=rl(cpu="2", memory="1Gi")),
        q("idle", deserved=rl(cpu="5")),
    ]
    jobs = [waiting("a", rl(cpu="1")), waiting("b", rl(cpu="1"))]
    result = compute_capacity(queues, jobs, rl(cpu="10", memory="8Gi"))
    assert result["a"].deserved == rl(cpu="3")
    assert result["b"].deserved == rl(cpu="2", memory="1Gi")
    assert result["a"].real_capability["cpu"] == 3000
    assert result["b"].real_capability["memory"] == 8 * 2**30  # (8Gi - 1Gi) + 1Gi
    assert not result["idle"].participating
    text = str(result.explain("a"))
    assert "deserved set on the queue: 8" in text and "capped by realCapability 3" in text
    assert not result.overused("a")  # capacity registers no Overused function


def test_user_guide_borrow_then_reclaim() -> None:
    # how_to_use_capacity_plugin.md: 2 nodes of 4 cpu 16Gi; queue1 deserves 2 cpu 8Gi, queue2 6 cpu 24Gi.
    # demo-1 (queue1, 8 pods of 1 cpu 4Gi) runs on the whole cluster while queue2 is idle.
    queues = [q("queue1", deserved=rl(cpu="2", memory="8Gi")), q("queue2", deserved=rl(cpu="6", memory="24Gi"))]
    pod = rl(cpu="1", memory="4Gi")
    demo1 = JobUsage("queue1", "default", rl(cpu="8", memory="32Gi"), rl(cpu="8", memory="32Gi"), phase="Running")
    demo2 = JobUsage("queue2", "default", rl(cpu="8", memory="32Gi"), ResourceList(), phase="Inqueue")
    result = compute_capacity(queues, [demo1, demo2], rl(cpu="8", memory="32Gi", pods="220"))
    assert result["queue1"].borrowed == rl(cpu="6", memory="24Gi")
    assert result["queue2"].lent == rl(cpu="6", memory="24Gi")
    assert not result.allocatable("queue1", pod)  # 8 + 1 cpu > realCapability 8 (the whole cluster)
    assert result.allocatable("queue2", pod)
    # queue2 reclaims pod by pod until queue1 is back at its deserved: 6 pods
    victims = [TaskRef(f"demo-1-{i}", "queue1", pod) for i in range(8)]
    selection = result.reclaimable(TaskRef("demo-2-0", "queue2", pod), victims)
    assert len(selection.victims) == 6
    for victim in selection.victims:
        result.on_deallocate("queue1", victim.request)
        result.on_allocate("queue2", pod)
    assert result["queue1"].allocated == rl(cpu="2", memory="8Gi")
    assert result["queue2"].allocated == rl(cpu="6", memory="24Gi")
    assert result["queue1"].borrowed == ResourceList() and result["queue2"].lent == ResourceList()
    assert not result.preemptive("queue2", pod)  # at deserved on every dimension


# ------------------------------------------------------------------------------------------------------------
# Hierarchy: Test_capacityPlugin_OnSessionOpenWithHierarchy
# ------------------------------------------------------------------------------------------------------------

N1 = rl(cpu="8", memory="8Gi", pods="11")
ROOT = q("root", parent=None)
Q1 = q("q1", capability=rl(cpu="4", memory="4Gi"))
Q2 = q("q2", capability=rl(cpu="4", memory="4Gi"))
Q11 = q("q11", "q1", capability=rl(cpu="1", memory="1Gi"))
Q12 = q("q12", "q1", capability=rl(cpu="3", memory="3Gi"))
Q3 = q("q3", deserved=rl(cpu="4", memory="4Gi", pods="10"), capability=rl(cpu="4", memory="4Gi", pods="10"))
Q4 = q("q4", deserved=rl(cpu="2", memory="2Gi", pods="1"), capability=rl(cpu="4", memory="4Gi", pods="4"))
Q31 = q("q31", "q3", deserved=rl(cpu="2", memory="2Gi", pods="2"), capability=rl(cpu="4", memory="4Gi", pods="4"))
Q32 = q("q32", "q3", deserved=rl(cpu="2", memory="2Gi", pods="2"), capability=rl(cpu="4", memory="4Gi", pods="4"))
Q33 = q("q33", "q3", deserved=rl(cpu="0", memory="0Gi", pods="2"), capability=rl(cpu="4", memory="4Gi", pods="4"))


def hier(queues: list[QueueSpec], jobs: list[JobUsage], total: ResourceList = N1, level: int = 0) -> Any:
    return compute_capacity(queues, jobs, total, hierarchy=True, ancestor_reclaim_level=level)


def test_hier_case0_leaf_queue_allocatable() -> None:
    result = hier([ROOT, Q1, Q2, Q11, Q12], [waiting("q11", rl(cpu="1", memory="1Gi"))])
    assert result.ready_to_schedule
    assert result.allocatable("q11", rl(cpu="1", memory="1Gi"))


def test_hier_case1_job_in_inner_queue_stops_everything() -> None:
    job = waiting("q1", rl(cpu="1", memory="1Gi"), "pg2", phase="Pending")
    result = hier([ROOT, Q1, Q2, Q11, Q12], [job])
    assert not result.ready_to_schedule
    assert result.problems == ("the queue q1 of job ns1/pg2 is not a leaf queue",)
    verdict = result.allocatable("q1", rl(cpu="1", memory="1Gi"))
    assert not verdict and verdict.reasons[0].check == "hierarchy"
    assert not result.enqueueable(job)
    assert not result.allocatable("q11", rl(cpu="1"))  # every gate refuses, not only q1's


def test_hier_case2_gang_fits_leaf_and_parent() -> None:
    pg3 = JobUsage("q31", "ns1", rl(cpu="4", memory="4Gi"), ResourceList(), phase="Inqueue", min_member=2)
    result = hier([ROOT, Q3, Q4, Q31, Q32], [pg3])
    assert result.ready_to_schedule
    pod = rl(cpu="2", memory="2Gi")
    assert result["q31"].real_capability.only(["cpu", "memory"]) == rl(cpu="4", memory="4Gi")
    assert result.allocatable("q31", pod)
    result.on_allocate("q31", pod)
    assert result.allocatable("q31", pod)
    result.on_allocate("q31", pod)
    assert result["q3"].allocated == rl(cpu="4", memory="4Gi")
    assert result["root"].allocated == rl(cpu="4", memory="4Gi")


def test_hier_case3_reclaim_takes_the_sibling_first() -> None:
    # p5 (4 cpu) runs in q4; p6 (not preemptable) and p7 (2 cpu each) run in q31; p8 waits in q32
    jobs = [
        running("q4", rl(cpu="4", memory="4Gi"), "pg4"),
        running("q31", rl(cpu="4", memory="4Gi"), "pg5"),
        waiting("q32", rl(cpu="2", memory="2Gi"), "pg6"),
    ]
    result = hier([ROOT, Q3, Q31, Q32, Q4], jobs)
    p8 = task("p8", "q32", rl(cpu="2", memory="2Gi"))
    assert result.preemptive("q32", p8.request)
    assert result.sorted_victim_queues("q32", ["q4", "q31"]) == ["q31", "q4"]
    # the session offers victims in that order; the first one frees enough on the node
    selection = result.reclaimable(
        p8, [task("p7", "q31", rl(cpu="2", memory="2Gi")), task("p5", "q4", rl(cpu="4", memory="4Gi"))]
    )
    assert selection.victims[0].name == "p7"


def test_hier_case4_ancestor_real_capability_blocks() -> None:
    jobs = [
        running("q31", rl(cpu="2", memory="2Gi")),
        running("q32", rl(cpu="2", memory="2Gi")),
        waiting("q33", rl(cpu="3", memory="3Gi")),
    ]
    result = hier([ROOT, Q3, Q31, Q32, Q33], jobs)
    verdict = result.allocatable("q33", rl(cpu="3", memory="3Gi"))
    assert [str(r) for r in verdict.reasons] == [
        "queue q3 realCapability: insufficient cpu, requested 3, available 0 = 4 capability − 4 allocated",
        "queue q3 realCapability: insufficient memory, requested 3Gi, available 0 = 4Gi capability − 4Gi allocated",
    ]


def test_hier_case5_cpu_capability_inherited_from_parent() -> None:
    queues = [ROOT, q("q5", capability=rl(memory="4Gi")), q("q51", "q5", capability=rl(memory="2Gi"))]
    result = hier(queues, [running("q51", ResourceList()), waiting("q51", rl(cpu="1"))])
    assert result["q51"].capability.to_dict() == {"memory": 2 * 2**30}  # cpu inherited unlimited: not listed
    assert "cpu" not in result["q51"].real_capability
    assert result.allocatable("q51", rl(cpu="1"))


def test_hier_case6_enqueue_checks_every_ancestor() -> None:
    queues = [ROOT, q("q6", capability=rl(cpu="2", memory="4Gi")), q("q61", "q6"), q("q62", "q6")]
    pg10 = JobUsage("q61", "ns1", rl(cpu="2", memory="4Gi"), ResourceList(), rl(cpu="2", memory="4Gi"), "Pending")
    pg11 = JobUsage("q62", "ns1", rl(cpu="2", memory="4Gi"), ResourceList(), rl(cpu="2", memory="4Gi"), "Pending")
    result = hier(queues, [pg10, pg11])
    assert result["q61"].capability == rl(cpu="2", memory="4Gi")  # inherited
    assert result.enqueueable(pg10)
    result.on_enqueued(pg10)
    assert result["q6"].inqueue == rl(cpu="2", memory="4Gi")
    verdict = result.enqueueable(pg11)
    assert not verdict
    assert verdict.reasons[0].node == "q6"


def test_hier_case7_children_guarantees_above_parent_are_a_problem_not_a_crash() -> None:
    g = rl(cpu="4", memory="3Gi")
    queues = [
        ROOT,
        q("q7", capability=rl(cpu="6", memory="4Gi")),
        q("q71", "q7", capability=rl(cpu="6", memory="4Gi"), guarantee=g),
        q("q72", "q7", capability=rl(cpu="6", memory="4Gi"), guarantee=g),
    ]
    result = hier(queues, [])
    assert not result.ready_to_schedule
    assert "sum of queue q7's children's guarantee cpu 8 exceeds its guarantee 0" in result.problems
    # still computed: (6 - 8)+ + 4 = 4 cpu, (4Gi - 6Gi)+ + 3Gi = 3Gi
    assert result["q71"].real_capability.only(["cpu", "memory"]) == rl(cpu="4", memory="3Gi")


def test_hier_case8_scalar_deserved_passes_the_checks() -> None:
    queues = [
        ROOT,
        q("q8", deserved=rl(cpu="4", memory="4Gi", gpu="8")),
        q("q81", "q8", deserved=rl(cpu="2", memory="2Gi", gpu="4")),
        q("q82", "q8", deserved=rl(cpu="2", memory="2Gi", gpu="4")),
    ]
    result = hier(queues, [waiting("q81", rl(cpu="2", memory="2Gi", gpu="1"))], rl(cpu="8", memory="8Gi", gpu="8"))
    assert result.ready_to_schedule
    assert result.allocatable("q81", rl(cpu="2", memory="2Gi", gpu="1"))
    assert result["root"].deserved == rl(cpu="4", memory="4Gi", gpu="8")


def test_hier_case9_zero_scalar_in_deserved_passes() -> None:
    queues = [
        ROOT,
        q("q9", deserved=rl(cpu="2", memory="2Gi", gpu="8", hugepages_1Gi="0")),
        q("q91", "q9", deserved=rl(cpu="2", memory="2Gi", gpu="4", hugepages_1Gi="0")),
    ]
    result = hier(
        queues,
        [waiting("q91", rl(cpu="2", memory="2Gi", gpu="1"))],
        rl(cpu="8", memory="8Gi", gpu="8", hugepages_1Gi="0"),
    )
    assert result.ready_to_schedule
    assert "hugepages-1Gi" in result["q91"].deserved  # an explicit 0 is kept
    assert result.allocatable("q91", rl(cpu="2", memory="2Gi", gpu="1"))


def test_hier_case10_root_capability_above_the_cluster() -> None:
    queues = [q("root", None, capability=rl(cpu="16", memory="16Gi")), q("q10", capability=rl(cpu="10", memory="4Gi"))]
    result = hier(queues, [])
    assert result.ready_to_schedule
    # not limited by the 8-cpu cluster; pods (in the cluster) unlimited: not listed
    assert result["root"].real_capability.to_dict() == {"cpu": 16000, "memory": 16 * 2**30}
    assert result["q10"].real_capability.to_dict() == {"cpu": 10000, "memory": 4 * 2**30}


def test_hier_case11_scalar_capability_inheritance() -> None:
    cap = rl(cpu="4", memory="4Gi", gpu="4")
    queues = [ROOT, q("c11q1"), q("c11q11", "c11q1", capability=cap), q("c11q12", "c11q1", capability=cap)]
    pod = rl(cpu="1", memory="1Gi", gpu="4")
    result = hier(queues, [waiting("c11q11", pod), waiting("c11q12", pod)], rl(cpu="8", memory="8Gi", gpu="8"))
    assert result.allocatable("c11q11", pod) and result.allocatable("c11q12", pod)
    result.on_allocate("c11q11", pod)
    assert not result.allocatable("c11q11", pod)  # its own 4 gpu are used


def test_hier_case12_reclaim_on_a_single_scalar_dimension() -> None:
    root = q("root", None, deserved=rl(cpu="16", memory="16Gi", a100="4", rdma="1000"))
    queues = [
        root,
        q("c12q1", deserved=rl(a100="2")),
        q("c12q11", "c12q1", deserved=rl(a100="2")),
        q("c12q12", "c12q1"),
    ]
    pod = rl(cpu="1", memory="1Gi", a100="2", rdma="1")
    jobs = [waiting("c12q11", pod), running("c12q12", pod, "pg17"), running("c12q12", pod, "pg18")]
    result = hier(queues, jobs, rl(cpu="16", memory="16Gi", a100="5", rdma="1001", pods="11"))
    assert result.ready_to_schedule
    assert result["root"].deserved == rl(a100="2")  # root's deserved is the sum of its children's
    assert result.preemptive("c12q11", pod)
    selection = result.reclaimable(task("p16", "c12q11", pod), [task("p17", "c12q12", pod)])
    assert [t.name for t in selection.victims] == ["p17"]


# ------------------------------------------------------------------------------------------------------------
# Hierarchy: Test_capacityPlugin_AncestorReclaimScenarios
# ------------------------------------------------------------------------------------------------------------

POD_A100 = rl(cpu="1", memory="1Gi", a100="1", rdma="1")
GPU_NODE = rl(cpu="16", memory="16Gi", a100="4", rdma="1001", pods="11")
ROOT_A100 = q("root", None, deserved=rl(cpu="16", memory="16Gi", a100="4", rdma="1000"))


def project_tree() -> list[QueueSpec]:
    return [
        ROOT_A100,
        q("project1_root", deserved=rl(a100="1"), capability=rl(a100="2")),
        q("project1_non-preemptable", "project1_root", deserved=rl(a100="1"), capability=rl(a100="1")),
        q("project1_preemptable", "project1_root"),
        q("project2_root", deserved=rl(a100="3"), capability=rl(a100="4")),
        q("project2_non-preemptable", "project2_root", deserved=rl(a100="3"), capability=rl(a100="3")),
        q("project2_preemptable", "project2_root"),
    ]


def level_tree() -> list[QueueSpec]:
    return [
        ROOT,
        q("grand-a", deserved=rl(cpu="2", memory="2Gi"), capability=rl(cpu="4", memory="4Gi")),
        q("parent-a", "grand-a", deserved=rl(cpu="2", memory="2Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("queue-a", "parent-a", deserved=rl(cpu="2", memory="2Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("grand-b", deserved=rl(cpu="3", memory="3Gi"), capability=rl(cpu="4", memory="4Gi")),
        q("parent-b", "grand-b", deserved=rl(cpu="1", memory="1Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("queue-b", "parent-b", deserved=rl(cpu="1", memory="1Gi"), capability=rl(cpu="2", memory="2Gi")),
    ]


def test_ancestor_case1_reclaim_on_parent_deserved_at_level_1() -> None:
    queues = [ROOT_A100, q("c1q1", deserved=rl(a100="1")), q("c1q11", "c1q1"), q("c1q2")]
    victim_pod = rl(cpu="1", memory="1Gi", a100="4", rdma="1")
    jobs = [running("c1q2", victim_pod), waiting("c1q11", POD_A100)]
    result = hier(queues, jobs, GPU_NODE, level=1)
    # the leaf deserves nothing; its parent c1q1 deserves 1 A100 and holds none
    assert result.preemptive("c1q11", POD_A100)
    assert not hier(queues, jobs, GPU_NODE, level=0).preemptive("c1q11", POD_A100)
    selection = result.reclaimable(task("p2", "c1q11", POD_A100), [task("p1", "c1q2", victim_pod)])
    assert [t.name for t in selection.victims] == ["p1"]


def test_ancestor_case2_cross_parent_reclaim_takes_the_low_priority_pod_only() -> None:
    jobs = [running("project2_preemptable", POD_A100, f"pg{i}") for i in range(1, 5)]
    jobs.append(waiting("project1_preemptable", POD_A100, "pg5", phase="Pending"))
    result = hier(project_tree(), jobs, GPU_NODE, level=1)
    assert result.ready_to_schedule
    assert result.preemptive("project1_preemptable", POD_A100)  # via project1_root's deserved
    # the session offers p4 (priority 1) before p1..p3 (priority 2)
    offered = [task(n, "project2_preemptable", POD_A100) for n in ("p4", "p1", "p2", "p3")]
    selection = result.reclaimable(task("p5", "project1_preemptable", POD_A100), offered)
    assert [t.name for t in selection.victims] == ["p4"]  # then project2_root is back at its deserved 3
    assert selection.skipped[0][1] == "ancestor project2_root is not above its deserved on what the task uses"


def test_ancestor_case4_cross_parent_blocked_when_victim_child_within_deserved() -> None:
    queues = [
        ROOT_A100,
        q("parent1", deserved=rl(a100="1")),
        q("child1", "parent1", deserved=rl(a100="1")),
        q("child1_sibling", "parent1"),
        q("parent2", deserved=rl(a100="1")),
        q("child2", "parent2", deserved=rl(a100="1")),
    ]
    jobs = [
        running("child1", POD_A100),
        running("child1_sibling", POD_A100),
        waiting("child2", POD_A100, phase="Pending"),
    ]
    result = hier(queues, jobs, rl(cpu="8", memory="8Gi", a100="1", rdma="1001", pods="11"), level=1)
    selection = result.reclaimable(task("p2", "child2", POD_A100), [task("p1", "child1", POD_A100)])
    assert selection.victims == ()


@pytest.mark.parametrize(
    ("level", "evicted"),
    [
        (0, True),  # case5: leaf checks only: queue-b holds 2 of its deserved 1
        (1, True),  # case6: parent-b holds 2 of its deserved 1 as well
        (2, False),  # case7: grand-b holds 2 of its deserved 3: no real contention at that level
    ],
)
def test_ancestor_level_semantics(level: int, evicted: bool) -> None:
    pod = rl(cpu="2", memory="2Gi")
    jobs = [running("queue-b", pod), waiting("queue-a", pod)]
    result = hier(level_tree(), jobs, rl(cpu="2", memory="2Gi", pods="10"), level=level)
    assert result.ready_to_schedule
    assert result.preemptive("queue-a", pod)
    selection = result.reclaimable(task("reclaimer", "queue-a", pod), [task("victim", "queue-b", pod)])
    assert bool(selection.victims) is evicted


def test_ancestor_case8_siblings_without_leaf_deserved_do_not_reclaim() -> None:
    queues = [
        ROOT,
        q("parent", deserved=rl(cpu="4", memory="4Gi"), capability=rl(cpu="4", memory="4Gi")),
        q("queue-a", "parent"),
        q("queue-b", "parent"),
    ]
    pod = rl(cpu="2", memory="2Gi")
    result = hier(queues, [running("queue-b", pod), waiting("queue-a", pod)], rl(cpu="2", memory="2Gi"), level=1)
    assert result.preemptive("queue-a", pod)  # through the parent's deserved
    selection = result.reclaimable(task("r", "queue-a", pod), [task("v", "queue-b", pod)])
    assert selection.victims == ()
    assert "no real contention" in selection.skipped[0][1]
    # at level 0 the immediate victim is taken
    flat = hier(queues, [running("queue-b", pod), waiting("queue-a", pod)], rl(cpu="2", memory="2Gi"), level=0)
    assert [t.name for t in flat.reclaimable(task("r", "queue-a", pod), [task("v", "queue-b", pod)]).victims] == ["v"]


def test_ancestor_case9_shared_grandparent_at_level_2() -> None:
    queues = [
        ROOT,
        q("grand", deserved=rl(cpu="2", memory="2Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("parent-a", "grand"),
        q("queue-a", "parent-a"),
        q("parent-b", "grand"),
        q("queue-b", "parent-b"),
    ]
    pod = rl(cpu="2", memory="2Gi")
    result = hier(queues, [running("queue-b", pod), waiting("queue-a", pod)], rl(cpu="2", memory="2Gi"), level=2)
    assert result.reclaimable(task("r", "queue-a", pod), [task("v", "queue-b", pod)]).victims == ()


def test_ancestor_case10_unbalanced_shared_grandparent() -> None:
    queues = [
        ROOT,
        q("grand", deserved=rl(cpu="1", memory="1Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("parent-deep", "grand", deserved=rl(cpu="1", memory="1Gi"), capability=rl(cpu="2", memory="2Gi")),
        q("queue-deep", "parent-deep"),
        q("queue-shallow", "grand"),
    ]
    pod = rl(cpu="2", memory="2Gi")
    result = hier(
        queues, [running("queue-deep", pod), waiting("queue-shallow", pod)], rl(cpu="2", memory="2Gi"), level=2
    )
    assert not result.preemptive("queue-shallow", pod)
    assert result.reclaimable(task("r", "queue-shallow", pod), [task("v", "queue-deep", pod)]).victims == ()


def test_ancestor_case11_depth_2_ancestor_within_deserved_blocks() -> None:
    queues = [
        ROOT,
        q("shallow-parent", deserved=rl(a100="1")),
        q("queue-shallow", "shallow-parent", deserved=rl(a100="1")),
        q("deep-grand", deserved=rl(a100="2")),
        q("deep-parent", "deep-grand", deserved=rl(a100="1")),
        q("queue-deep", "deep-parent", deserved=rl(a100="1")),
    ]
    victim_pod = rl(cpu="1", memory="1Gi", a100="2")
    pod = rl(cpu="1", memory="1Gi", a100="1")
    jobs = [running("queue-deep", victim_pod), waiting("queue-shallow", pod)]
    result = hier(queues, jobs, rl(cpu="4", memory="4Gi", a100="2", pods="10"), level=2)
    assert result.ready_to_schedule
    assert result.preemptive("queue-shallow", pod)
    selection = result.reclaimable(task("r", "queue-shallow", pod), [task("v", "queue-deep", victim_pod)])
    assert selection.victims == ()
    assert selection.skipped[0][1] == "ancestor deep-grand is not above its deserved on what the task uses"
    # at level 1 only deep-parent is checked, and it is above its deserved
    result1 = hier(queues, jobs, rl(cpu="4", memory="4Gi", a100="2", pods="10"), level=1)
    assert [
        t.name
        for t in result1.reclaimable(task("r", "queue-shallow", pod), [task("v", "queue-deep", victim_pod)]).victims
    ] == ["v"]


# ------------------------------------------------------------------------------------------------------------
# Hierarchy: structure, consistency, roll-up, order, borrowed/lent
# ------------------------------------------------------------------------------------------------------------


def test_cycle_and_missing_parent_are_problems() -> None:
    queues = [ROOT, q("a", "b"), q("b", "a"), q("orphan", "nowhere"), q("fine")]
    result = hier(queues, [waiting("fine", rl(cpu="1"))])
    assert not result.ready_to_schedule
    assert "cycle detected in queue hierarchy for queue a" in result.problems
    assert "the queue orphan has invalid parent queue nowhere" in result.problems
    assert not result.allocatable("fine", rl(cpu="1"))
    assert not result["a"].participating and result["fine"].participating


def test_child_capability_above_parent_is_a_problem() -> None:
    queues = [ROOT, q("p", capability=rl(cpu="10")), q("c", "p", capability=rl(cpu="20"))]
    result = hier(queues, [])
    assert result.problems == ("queue c capability cpu 20 exceeds its parent p's 10",)


def test_children_deserved_above_parent_is_a_problem() -> None:
    queues = [
        ROOT,
        q("p", deserved=rl(cpu="2")),
        q("c1", "p", deserved=rl(cpu="2")),
        q("c2", "p", deserved=rl(cpu="1", memory="1Gi")),
    ]
    result = hier(queues, [])
    assert set(result.problems) == {
        "sum of queue p's children's deserved cpu 3 exceeds its deserved 2",
        "sum of queue p's children's deserved memory 1Gi exceeds its deserved 0",
    }


def test_missing_root_is_assumed_unlimited() -> None:
    result = hier([q("a"), q("b")], [waiting("a", rl(cpu="100"))], rl(cpu="4"))
    assert result.warnings == ("no root queue given: an unlimited root was assumed",)
    assert "root" in result
    assert result.allocatable("a", rl(cpu="100"))  # the root is not limited by the cluster size
    assert result.ancestors("a") == ("root",)


def test_usage_rolls_up_and_mutators_update_ancestors() -> None:
    queues = [ROOT, q("a"), q("a1", "a"), q("a2", "a"), q("b")]
    jobs = [
        running("a1", rl(cpu="1")),
        JobUsage("a2", "ns", rl(cpu="3"), rl(cpu="2"), rl(cpu="3"), "Inqueue"),
        running("b", rl(cpu="4")),
    ]
    result = hier(queues, jobs, rl(cpu="16"))
    assert result["a"].allocated == rl(cpu="3") and result["a"].request == rl(cpu="4")
    assert result["a"].inqueue == rl(cpu="1")  # (3 - 2)+ of the Inqueue gang
    assert result["root"].allocated == rl(cpu="7")
    result.on_allocate("a2", rl(cpu="1"))
    assert result["a2"].allocated == rl(cpu="3") and result["a"].allocated == rl(cpu="4")
    assert result["root"].allocated == rl(cpu="8")
    result.on_deallocate("a1", rl(cpu="1"))
    assert result["a"].allocated == rl(cpu="3") and result["root"].allocated == rl(cpu="7")


def test_queue_order_compares_children_of_the_lowest_common_ancestor() -> None:
    # a (share 0.5) holds a1 (share 2.0); b (share 1.0) holds b1 (share 0.1): a1 goes before b1 because
    # a is below b, whatever the leaves' own shares; a1 vs a2 compare the leaves themselves
    queues = [
        ROOT,
        q("a", deserved=rl(cpu="8")),
        q("a1", "a", deserved=rl(cpu="2")),
        q("a2", "a", deserved=rl(cpu="4")),
        q("b", deserved=rl(cpu="2")),
        q("b1", "b", deserved=rl(cpu="20")),
    ]
    jobs = [running("a1", rl(cpu="4")), running("b1", rl(cpu="2"))]
    result = hier(queues, jobs, rl(cpu="40"))
    assert (result["a"].share, result["b"].share) == (0.5, 1.0)
    assert (result["a1"].share, result["b1"].share) == (2.0, 0.1)
    assert result.compare_queues("a1", "b1") < 0
    assert result.compare_queues("a2", "a1") < 0
    assert result.compare_queues("a1", "a") < 0  # leaves before inner queues
    # inner queues by share: a 0.5, root 6/10, b 1.0
    assert result.sorted_queues() == ["a2", "a1", "b1", "a", "root", "b"]


def test_hierarchical_borrowed_and_lent_per_sibling_set() -> None:
    queues = [
        ROOT,
        q("a", deserved=rl(cpu="6")),
        q("a1", "a", deserved=rl(cpu="2")),
        q("a2", "a", deserved=rl(cpu="4")),
        q("b", deserved=rl(cpu="4")),
    ]
    jobs = [running("a1", rl(cpu="5")), running("b", rl(cpu="1"))]
    result = hier(queues, jobs, rl(cpu="10"))
    # inside a (pool = a's deserved 6): a1 borrows 3, all of it from a2's unused 4
    assert result["a1"].borrowed == rl(cpu="3") and result["a2"].lent == rl(cpu="3")
    # under root (pool = the 10-cpu cluster): a and b are within their deserved
    assert result["a"].borrowed == ResourceList() and result["b"].lent == ResourceList()


def test_root_is_never_consulted_for_ancestor_reclaim() -> None:
    # a has no deserved; root's deserved (its children's sum, 4 cpu) must not make a preemptive
    queues = [ROOT, q("a"), q("b", deserved=rl(cpu="4"))]
    result = hier(queues, [waiting("a", rl(cpu="2"))], rl(cpu="8"), level=1)
    assert result["root"].deserved == rl(cpu="4")
    verdict = result.preemptive("a", rl(cpu="2"))
    assert str(verdict) == "queue a deserved: insufficient cpu, requested 2, available 0 = 0 deserved"


def test_lent_counts_only_borrowing_beyond_the_free_capacity() -> None:
    # 10 cpu, a and b deserve 2 each: 6 cpu are nobody's. a borrowing 3 takes them from the free part;
    # a borrowing 7 takes 1 of b's unused 2
    queues = [q("a", deserved=rl(cpu="2")), q("b", deserved=rl(cpu="2"))]
    some = compute_capacity(queues, [running("a", rl(cpu="5")), waiting("b", rl(cpu="1"))], rl(cpu="10"))
    assert some["a"].borrowed == rl(cpu="3") and some["b"].lent.to_dict() == {}
    more = compute_capacity(queues, [running("a", rl(cpu="9")), waiting("b", rl(cpu="1"))], rl(cpu="10"))
    assert more["a"].borrowed == rl(cpu="7") and more["b"].lent == rl(cpu="1")
    assert "unused deserved consumed" in str(more.explain("b"))


def test_explain_hierarchy() -> None:
    queues = [
        q("root", None, capability=rl(cpu="10")),
        q("a", guarantee=rl(cpu="2")),
        q("b", guarantee=rl(cpu="3")),
        q("b1", "b", capability=rl(cpu="4")),
    ]
    result = hier(queues, [], rl(cpu="10"))
    assert result["a"].real_capability["cpu"] == 7000  # (10 - 5)+ + 2
    assert result["b1"].real_capability["cpu"] == 4000  # min((8 - 0)+ + 0, 4)
    text = str(result.explain("b1"))
    assert "(parent b realCapability 8 - siblings' guarantees 0)+ + own guarantee 0" in text
    assert "capped by capability 4" in text
    assert "inherited from parent b" in text  # memory
    root_text = str(result.explain("root"))
    assert "guarantee[cpu] = 5" in root_text


def test_best_effort_answer_follows_a_new_deserved() -> None:
    """A queue's best effort (nothing deserved: share 1) is kept with the deserved dict it was found for; a queue
    given a new deserved (here in a session's copy of the book) is asked again, both ways."""
    queues = [q("q1", deserved=rl(cpu="2", memory="4Gi")), q("q2")]
    jobs = [running("q1", rl(cpu="1", memory="1Gi")), running("q2", rl(cpu="1", memory="1Gi"))]
    result = compute_capacity(queues, jobs, TWO_NODES)
    assert result["q1"].share == 0.5 and result["q2"].share == 1.0
    book = copy.deepcopy(result)
    book.on_allocate("q1", rl(cpu="1"))
    book.on_allocate("q2", rl(cpu="1"))
    assert book["q1"].share == 1.0 and book["q2"].share == 1.0
    book._states["q1"].deserved = {}  # now deserves nothing: best effort
    book._states["q2"].deserved = {"cpu": 8000}
    book.on_allocate("q1", rl(cpu="1"))
    book.on_allocate("q2", rl(cpu="1"))
    assert book["q1"].share == 1.0
    assert book["q2"].share == 3000 / 8000
    assert result["q1"].share == 0.5 and result["q2"].share == 1.0  # the book copied from is as it was
