"""The water-filling primitive, Volcano's resource comparisons, and the proportion policy.

Volcano cases are quoted by test name from ``pkg/scheduler/plugins/proportion/proportion_test.go``,
``pkg/scheduler/actions/allocate/allocate_test.go``, ``pkg/scheduler/api/resource_info_test.go`` and
``docs/design/resource-comparison.md`` (volcano-sh/volcano at ed72c7c). Their scheduling outcomes are
restated as the quota decisions that produce them.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.amounts import (
    INFINITY,
    ZERO,
    greater_partly_with_relevant_dimensions,
    insufficient_resources,
    less,
    less_equal,
    less_equal_partly,
    less_equal_partly_with_dimension_zero_filtered,
    less_partly,
)
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage, job_elastic, job_inqueue, summarize_jobs
from engine.fairshare.verdicts import TaskRef
from engine.fairshare.waterfill import SETTLED_CAP, SETTLED_FLOOR, SETTLED_SHARE, hamilton, water_fill
from engine.objects import QueueSpec
from engine.resources import ResourceList

GI = 2**30


def rl(**quantities: Any) -> ResourceList:
    """``rl(cpu="2", memory="4Gi", gpu="1")``; ``gpu`` stands for nvidia.com/gpu."""
    data = {("nvidia.com/gpu" if k == "gpu" else k.replace("_", "-")): v for k, v in quantities.items()}
    return ResourceList.parse(data)


def job(queue: str, request: ResourceList, allocated: ResourceList | None = None, **kw: Any) -> JobUsage:
    return JobUsage(
        queue=queue, namespace=kw.pop("namespace", "ns1"), request=request, allocated=allocated or ResourceList(), **kw
    )


# ------------------------------------------------------------------------------------------------------------
# hamilton / water_fill
# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "weights", "names", "expected"),
    [
        (10, [1, 1, 1], ["a", "b", "c"], [4, 3, 3]),
        (10, [1, 1, 1], ["c", "b", "a"], [3, 3, 4]),  # the tie goes to the name that sorts first
        (4000, [1, 1, 1], ["q1", "q2", "q3"], [1334, 1333, 1333]),
        (16, [1, 3], ["q1", "q2"], [4, 12]),
        (7, [2, 2, 3], ["x", "y", "z"], [2, 2, 3]),
        (5, [0, 0], ["a", "b"], [0, 0]),
        (0, [1, 2], ["a", "b"], [0, 0]),
        (1, [1, 1], None, [1, 0]),
    ],
)
def test_hamilton(amount: int, weights: list[int], names: list[str] | None, expected: list[int]) -> None:
    assert hamilton(amount, weights, names) == expected
    assert sum(hamilton(amount, weights, names)) == (amount if any(weights) else 0)


def test_hamilton_rejects_negative() -> None:
    with pytest.raises(ValueError, match="amount"):
        hamilton(-1, [1])
    with pytest.raises(ValueError, match="weights"):
        hamilton(1, [-1])


@pytest.mark.parametrize(
    ("amount", "weights", "caps", "floors", "values", "settled"),
    [
        # seed 000 table 1, queue q2: namespaces requesting 10 and 2 share 8 -> 6 / 2
        (8, [1, 1], [10, 2], [0, 0], [6, 2], [SETTLED_SHARE, SETTLED_CAP]),
        # seed 000 table 2: queues weight 1 and 3 requesting 15 and 12 share 16 -> 4 / 12
        (16, [1, 3], [15, 12], [0, 0], [4, 12], [SETTLED_SHARE, SETTLED_CAP]),
        # everybody capped: 6 of 10 given, 4 left over
        (10, [1, 1], [2, 4], [0, 0], [2, 4], [SETTLED_CAP, SETTLED_CAP]),
        # no caps at all
        (9, [1, 2], [None, None], [0, 0], [3, 6], [SETTLED_SHARE, SETTLED_SHARE]),
        # a large guarantee is a floor *within* the level: Volcano's float rounds would hand out 8 + 5
        (10, [1, 1], [10, 10], [8, 0], [8, 2], [SETTLED_FLOOR, SETTLED_SHARE]),
        # a small guarantee changes nothing
        (10, [1, 1], [10, 10], [2, 0], [5, 5], [SETTLED_SHARE, SETTLED_SHARE]),
        # a guarantee above the request wins over the cap
        (10, [1, 1], [1, 10], [3, 0], [3, 7], [SETTLED_CAP, SETTLED_SHARE]),
        # guarantees larger than the amount: everybody held at the floor
        (5, [1, 1], [10, 10], [4, 4], [4, 4], [SETTLED_FLOOR, SETTLED_FLOOR]),
        # no weight: the floor only
        (10, [0, 1], [10, 10], [3, 0], [3, 7], [SETTLED_FLOOR, SETTLED_SHARE]),
        # fractions: 3 claimants share 10 -> 4, 3, 3 (name order breaks the tie)
        (10, [1, 1, 1], [None, None, None], [0, 0, 0], [4, 3, 3], [SETTLED_SHARE] * 3),
    ],
)
def test_water_fill(
    amount: int,
    weights: list[int],
    caps: list[int | None],
    floors: list[int],
    values: list[int],
    settled: list[str],
) -> None:
    names = [f"c{i}" for i in range(len(weights))]
    result = water_fill(amount, names, weights, caps, floors)
    assert list(result.values) == values
    assert list(result.settled) == settled


def test_water_fill_rounds_and_explanation() -> None:
    # 3 claimants share 12: c stops at 1 in round 1 (level 4), b at 5 in round 2 (level 5.5), a takes the rest
    result = water_fill(12, ["a", "b", "c"], [1, 1, 1], [None, 5, 1])
    assert result.as_dict() == {"a": 6, "b": 5, "c": 1}
    assert result.settled_round == (3, 2, 1)
    assert result.rounds == 3
    assert result.leftover == 0
    assert "stopped at its cap 5 in round 2" in result.explain(1)
    assert "weight 1 of 1 sharing 6 in round 3" in result.explain(0)
    # everyone capped in the same round leave together
    assert water_fill(12, ["a", "b", "c"], [1, 1, 1], [None, 3, 1]).settled_round == (2, 1, 1)


def test_water_fill_validates() -> None:
    with pytest.raises(ValueError, match="unique"):
        water_fill(1, ["a", "a"], [1, 1])
    with pytest.raises(ValueError, match="length"):
        water_fill(1, ["a"], [1, 1])
    with pytest.raises(ValueError, match="weight"):
        water_fill(1, ["a"], [-1])


# ------------------------------------------------------------------------------------------------------------
# Resource comparison: docs/design/resource-comparison.md and resource_info_test.go
# ------------------------------------------------------------------------------------------------------------

# The design note's three examples, Less / LessEqual / LessPartly / LessEqualPartly for Zero and Infinity.
# Volcano's code differs from the note in two cells of example 3 (marked): cpu and memory are struct fields
# in Volcano and never "infinite" when missing, so {cpu 1, memory 1G} vs {gpu 2} with Infinity is not partly
# less. The port reproduces the code, which is what decides scheduling outcomes.
EX1 = (rl(cpu="1", memory="1G"), rl(cpu="2", memory="2G", gpu="2"))
EX2 = (rl(cpu="1", memory="1G", gpu="1"), rl(cpu="2", memory="2G"))
EX3 = (rl(cpu="1", memory="1G"), rl(gpu="2"))


@pytest.mark.parametrize(
    ("example", "default", "expected"),
    [
        (EX1, ZERO, (True, True, True, True)),
        (EX1, INFINITY, (False, False, True, True)),
        (EX2, ZERO, (False, False, True, True)),
        (EX2, INFINITY, (True, True, True, True)),
        (EX3, ZERO, (False, False, True, True)),
        (EX3, INFINITY, (False, False, False, False)),  # the note says (False, False, True, True); see above
    ],
)
def test_resource_comparison_truth_table(
    example: tuple[ResourceList, ResourceList], default: Any, expected: tuple[bool, bool, bool, bool]
) -> None:
    left, right = example
    got = (
        less(left, right, default),
        less_equal(left, right, default),
        less_partly(left, right, default),
        less_equal_partly(left, right, default),
    )
    assert got == expected


S1, HP = "scalar.test/scalar1", "hugepages-test"


def res(cpu: int = 0, memory: int = 0, **scalars: int) -> dict[str, int]:
    out = {"cpu": cpu, "memory": memory}
    out.update({S1 if k == "s1" else HP if k == "hp" else k.replace("_", "/"): v for k, v in scalars.items()})
    return out


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    [  # TestLess
        (res(), res(), ZERO, False),
        (res(), res(4000, 2000, s1=1000, hp=2000), ZERO, True),
        (res(4000, 4000, s1=1000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, True),
        (res(4000, 4000, s1=5000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, False),
        (res(9000, 4000, s1=1000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, False),
        (res(1000, 1000, s1=1000, hp=2000), res(2000, 2000, hp=3000), INFINITY, True),
        (res(1000, 1000, hp=1000), res(2000, 2000, s1=1000, hp=2000), INFINITY, False),
        (res(1000, 1000, hp=2000), res(2000, 2000, s1=1000, hp=2000), INFINITY, False),
    ],
)
def test_volcano_less(left: dict[str, int], right: dict[str, int], default: Any, expected: bool) -> None:
    assert less(left, right, default) is expected


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    [  # TestLessEqual
        (res(), res(), ZERO, True),
        (res(), res(4000, 2000, s1=1000, hp=2000), ZERO, True),
        (res(4000, 2000, s1=1000, hp=2000), res(), ZERO, False),
        (res(4000, 4000, s1=1000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, True),
        (res(4000, 8000, s1=1000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, True),
        (res(4000, 4000, s1=4000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, True),
        (res(4000, 4000, s1=5000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, False),
        (res(9000, 4000, s1=1000, hp=2000), res(8000, 8000, s1=4000, hp=5000), ZERO, False),
        (res(), res(), INFINITY, True),
        (res(), res(4000, 2000, s1=1000, hp=2000), INFINITY, False),
        (res(4000, 2000, s1=1000, hp=2000), res(), INFINITY, False),
        (res(4000, 2000), res(4000, 2000, s1=1000, hp=2000), INFINITY, False),
        (res(4000, 2000, s1=1000, hp=2000), res(4000, 2000), INFINITY, True),
    ],
)
def test_volcano_less_equal(left: dict[str, int], right: dict[str, int], default: Any, expected: bool) -> None:
    assert less_equal(left, right, default) is expected


@pytest.mark.parametrize(
    ("left", "right", "default", "partly", "partly_equal"),
    [  # TestLessPartly / TestLessEqualPartly
        (res(), res(), ZERO, False, True),
        (res(), res(2000, 2000, s1=1000, hp=2000), ZERO, True, True),
        (res(2000, 2000, s1=1000, hp=2000), res(), ZERO, False, False),
        (res(2000, 2000, s1=1000, hp=2000), res(4000, 2000, s1=1000, hp=2000), ZERO, True, True),
        (res(2000, 2000, s1=1000, hp=2000), res(2000, 4000, s1=1000, hp=2000), ZERO, True, True),
        (res(2000, 2000, s1=1000, hp=2000), res(2000, 2000, s1=2000, hp=2000), ZERO, True, True),
        (res(2000, 2000, hp=2000), res(2000, 2000, s1=1000, hp=2000), ZERO, True, True),
        (res(4000, 4000, s1=1000, hp=2000), res(2000, 2000, s1=1000, hp=2000), ZERO, False, True),
        (res(2000, 2000, s1=1000, hp=2000), res(2000, 2000, hp=2000), ZERO, False, True),
        (res(2000, 2000, hp=2000), res(2000, 2000, s1=1000, hp=2000), INFINITY, False, True),
        (res(2000, 2000, s1=1000, hp=2000), res(2000, 2000, hp=2000), INFINITY, True, True),
    ],
)
def test_volcano_less_partly(
    left: dict[str, int], right: dict[str, int], default: Any, partly: bool, partly_equal: bool
) -> None:
    assert less_partly(left, right, default) is partly
    assert less_equal_partly(left, right, default) is partly_equal


@pytest.mark.parametrize(
    ("used", "limit", "req", "insufficient"),
    [  # TestLessEqualWithDimensionAndResourcesName (strict, only the request's dimensions)
        ({"cpu": 5000}, res(4000, 2000, s1=1000), {"cpu": 1000}, ["cpu"]),
        (res(3000, 3000), res(4000, 2000), {"memory": 1000}, ["memory"]),
        (res(4, 4000), res(), res(), []),
        (
            {"cpu": 4, "memory": 4000, "nvidia.com/gpu": 1},
            res(8, 8000),
            {"cpu": 4, "memory": 2000, "nvidia.com/gpu": 1},
            ["nvidia.com/gpu"],
        ),
        (
            {"cpu": 10, "memory": 4000, "nvidia.com/gpu": 1},
            {"cpu": 100, "memory": 8000, "nvidia.com/A100": 1},
            {"cpu": 10, "memory": 4000, "nvidia.com/gpu": 0, "nvidia.com/A100": 1, "scalar": 1},
            [],
        ),
        (
            {"cpu": 110, "memory": 4000, "nvidia.com/gpu": 1, "nvidia.com/A100": 1, "scalar": 1},
            {"cpu": 100, "memory": 8000, "nvidia.com/A100": 1, "scalar": 1},
            {"memory": 4000, "nvidia.com/gpu": 0, "nvidia.com/A100": 1, "scalar": 1},
            [],
        ),
        # equality passes: the strict check
        (res(2000, 2000), res(2000, 2000), res(1000, 1000), []),
        # pods are never checked
        ({"pods": 11}, {"pods": 10}, {"pods": 1}, []),
    ],
)
def test_volcano_less_equal_with_dimension(
    used: dict[str, int], limit: dict[str, int], req: dict[str, int], insufficient: list[str]
) -> None:
    assert insufficient_resources(used, limit, req) == insufficient


@pytest.mark.parametrize(
    ("left", "right", "req", "ok", "names"),
    [  # TestLessEqualPartlyWithDimensionZeroFiltered
        ({"cpu": 0, "memory": 0}, {"cpu": 0, "memory": 0}, {"cpu": 1000, "memory": 512}, False, []),
        ({"cpu": 1000, "memory": 0}, {"cpu": 2000, "memory": 0}, {"cpu": 1000, "memory": 512}, True, ["cpu"]),
        ({"cpu": 0, "memory": 0}, {"cpu": 0, "memory": 2048}, {"cpu": 1000, "memory": 512}, True, ["memory"]),
        (
            {"cpu": 1000, "memory": 1024},
            {"cpu": 2000, "memory": 2048},
            {"cpu": 1000, "memory": 512},
            True,
            ["cpu", "memory"],
        ),
        (
            {"cpu": 0, "memory": 1024},
            {"cpu": 2000, "memory": 0, "nvidia.com/gpu": 4},
            {"cpu": 1000, "memory": 512, "nvidia.com/gpu": 2},
            True,
            ["cpu", "nvidia.com/gpu"],
        ),
        (
            {"rdma": 2, "fpga": 2},
            {"rdma": 2},
            {"cpu": 1000, "memory": 512, "nvidia.com/gpu": 2, "rdma": 1, "fpga": 1},
            True,
            ["rdma"],
        ),
        (
            {"rdma": 1, "fpga": 2, "nvidia.com/gpu": 2},
            {"rdma": 2, "fpga": 2},
            {"cpu": 1000, "memory": 512, "nvidia.com/gpu": 2, "rdma": 1, "fpga": 1},
            True,
            ["fpga", "rdma"],
        ),
    ],
)
def test_volcano_less_equal_partly_zero_filtered(
    left: dict[str, int], right: dict[str, int], req: dict[str, int], ok: bool, names: list[str]
) -> None:
    assert less_equal_partly_with_dimension_zero_filtered(left, right, req) == (ok, names)


@pytest.mark.parametrize(
    ("left", "right", "req", "ok", "names"),
    [  # TestGreaterPartlyWithRelevantDimensions and the examples in its doc comment
        ({"cpu": 2000}, {"cpu": 1000}, {"cpu": 1000}, True, ["cpu"]),
        ({"cpu": 2000}, {}, {"cpu": 1000}, False, []),
        ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 1}, True, ["nvidia.com/gpu"]),
        ({"nvidia.com/gpu": 2}, {}, {"nvidia.com/gpu": 1}, False, []),
        ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 0}, {"nvidia.com/gpu": 1}, True, ["nvidia.com/gpu"]),
        ({"cpu": 1000, "memory": 2048}, {"cpu": 1000, "memory": 1024}, {"cpu": 1000, "memory": 1024}, True, ["memory"]),
        ({"cpu": 1000, "memory": 1024}, {"cpu": 2000, "memory": 2048}, {"cpu": 1000, "memory": 1024}, False, []),
        (
            {"cpu": 4000, "memory": 8192, "nvidia.com/gpu": 2},
            {"cpu": 2000, "memory": 8192, "nvidia.com/gpu": 1},
            {"cpu": 2000, "nvidia.com/gpu": 1},
            True,
            ["cpu", "nvidia.com/gpu"],
        ),
        (
            {"cpu": 4000, "memory": 8192, "nvidia.com/gpu": 2},
            {"cpu": 2000, "memory": 8192, "nvidia.com/gpu": 1},
            {"memory": 4096},
            False,
            [],
        ),
    ],
)
def test_volcano_greater_partly_relevant(
    left: dict[str, int], right: dict[str, int], req: dict[str, int], ok: bool, names: list[str]
) -> None:
    assert greater_partly_with_relevant_dimensions(left, right, req) == (ok, names)


# ------------------------------------------------------------------------------------------------------------
# proportion: TestEnqueueAndAllocable (proportion_test.go)
# ------------------------------------------------------------------------------------------------------------

# two nodes of 2 cpu, 2G, 10 pods; q1 capability 2 cpu 2G, q2 capability 3 cpu 3G, both weight 1
TOTAL_4C4G = rl(cpu="4", memory="4G", pods="20")
Q1 = QueueSpec("q1", weight=1, capability=rl(cpu="2", memory="2G"))
Q2 = QueueSpec("q2", weight=1, capability=rl(cpu="3", memory="3G"))
Q3_CLOSED = QueueSpec("q3", weight=1, capability=rl(cpu="3", memory="3G"), state="Closed")
RUNNING_PG1 = job(
    "q1",
    rl(cpu="1", memory="2G"),
    rl(cpu="1", memory="2G"),
    min_resources=rl(cpu="1", memory="2G"),
    phase="Running",
    min_member=1,
    allocated_tasks=1,
    name="pg1",
)
RUNNING_PG2 = job(
    "q2",
    rl(cpu="2", memory="1G"),
    rl(cpu="2", memory="1G"),
    min_resources=rl(cpu="2", memory="1G"),
    phase="Running",
    min_member=1,
    allocated_tasks=1,
    name="pg2",
)


def pending(queue: str, request: ResourceList, name: str) -> JobUsage:
    return job(queue, request, min_resources=request, phase="Pending", min_member=1, name=name)


def test_enqalloc_case0_memory_exceeds_deserved_cpu_only_job_passes() -> None:
    pg3 = pending("q1", rl(cpu="1", memory="0"), "pg3")
    result = compute_proportion([Q1, Q2], [RUNNING_PG1, RUNNING_PG2, pg3], TOTAL_4C4G)
    assert result["q1"].deserved == rl(cpu="2", memory="2G")
    assert result["q1"].real_capability.only(["cpu", "memory"]) == rl(cpu="2", memory="2G")
    assert result["q1"].inqueue == ResourceList()  # a running gang holding its minimum reserves nothing more
    assert result.enqueueable(pg3)
    assert result.allocatable("q1", rl(cpu="1", memory="0"))  # 1 + 1 <= 2 on cpu; memory not asked


def test_enqalloc_case1_cpu_exceeds_deserved_memory_only_job_passes() -> None:
    pg4 = pending("q2", rl(cpu="0", memory="1G"), "pg4")
    result = compute_proportion([Q1, Q2], [RUNNING_PG1, RUNNING_PG2, pg4], TOTAL_4C4G)
    assert result["q2"].deserved == rl(cpu="2", memory="2G")
    assert result.enqueueable(pg4)
    assert result.allocatable("q2", rl(cpu="0", memory="1G"))


def test_enqalloc_case2_exceeds_capability_cannot_enqueue() -> None:
    pg5 = pending("q1", rl(cpu="1", memory="1G"), "pg5")
    result = compute_proportion([Q1, Q2], [RUNNING_PG1, RUNNING_PG2, pg5], TOTAL_4C4G)
    verdict = result.enqueueable(pg5)
    assert not verdict
    assert [(r.node, r.check, r.resource) for r in verdict.reasons] == [("q1", "realCapability", "memory")]
    assert str(verdict.reason) == (
        "queue q1 realCapability: insufficient memory, requested 1G, available 0 = 2G capability − 2G allocated"
    )


def test_enqalloc_case3_exceeds_deserved_cannot_allocate() -> None:
    pg5 = pending("q1", rl(cpu="1", memory="1G"), "pg5")
    result = compute_proportion([Q1, Q2], [RUNNING_PG1, RUNNING_PG2, pg5], TOTAL_4C4G)
    # q1 asks 2 cpu 3G: memory stops at its realCapability of 2G in the second round
    assert result["q1"].deserved == rl(cpu="2", memory="2G")
    verdict = result.allocatable("q1", rl(cpu="1", memory="1G"))
    assert not verdict
    assert str(verdict) == (
        "queue q1 deserved: insufficient memory, requested 1G, available 0 = 2G deserved − 2G allocated"
    )


def test_enqalloc_case4_closed_queue_cannot_enqueue_or_allocate() -> None:
    pg6 = pending("q3", rl(cpu="1", memory="1G"), "pg6")
    result = compute_proportion([Q3_CLOSED], [pg6], TOTAL_4C4G)
    verdict = result.enqueueable(pg6)
    assert not verdict
    assert verdict.reason is not None and verdict.reason.check == "state"
    assert "Closed" in str(verdict)
    assert not result.allocatable("q3", rl(cpu="1"))


# ------------------------------------------------------------------------------------------------------------
# proportion: TestAllocate (queue priority order) and allocate_test.go
# ------------------------------------------------------------------------------------------------------------


def test_queue_priority_orders_queues_before_share() -> None:
    # q1 priority 5 (running 2 cpu 4Gi), q2 priority 1, q3 priority 10; nodes 2 x (2 cpu, 4Gi)
    queues = [
        QueueSpec("q1", priority=5, capability=rl(cpu="2", memory="4Gi")),
        QueueSpec("q2", priority=1, capability=rl(cpu="2", memory="4Gi")),
        QueueSpec("q3", priority=10, capability=rl(cpu="2", memory="4Gi")),
    ]
    jobs = [
        job("q1", rl(cpu="2", memory="4Gi"), rl(cpu="2", memory="4Gi"), phase="Running"),
        job("q2", rl(cpu="2", memory="4Gi"), phase="Inqueue"),
        job("q3", rl(cpu="2", memory="4Gi"), phase="Inqueue"),
    ]
    result = compute_proportion(queues, jobs, rl(cpu="4", memory="8Gi", pods="20"))
    assert result.sorted_queues() == ["q3", "q1", "q2"]
    # a third of 4 cpu each: 1334m / 1333m / 1333m, the extra millicore to the first name
    assert [result[q].deserved["cpu"] for q in ("q1", "q2", "q3")] == [1334, 1333, 1333]
    assert sum(result[q].deserved["memory"] for q in ("q1", "q2", "q3")) == 8 * GI
    assert result.overused("q1")
    assert not result.overused("q3")


def test_alloc_high_priority_queue_should_not_block_others() -> None:
    # c1 asks 3 cpu (more than the 2-cpu node), c2 asks 1 cpu: c2 is allocatable, c1 is not
    queues = [QueueSpec("c1"), QueueSpec("c2")]
    jobs = [job("c1", rl(cpu="3", memory="1G"), phase="Inqueue"), job("c2", rl(cpu="1", memory="1G"), phase="Inqueue")]
    result = compute_proportion(queues, jobs, rl(cpu="2", memory="4G", pods="10"))
    assert result["c1"].deserved == rl(cpu="1", memory="1G")
    assert result["c2"].deserved == rl(cpu="1", memory="1G")
    assert not result.allocatable("c1", rl(cpu="3", memory="1G"))
    assert str(result.allocatable("c1", rl(cpu="3", memory="1G"))) == (
        "queue c1 deserved: insufficient cpu, requested 3, available 1 = 1 deserved"
    )
    assert result.allocatable("c2", rl(cpu="1", memory="1G"))


def test_alloc_two_jobs_on_one_node_alternate_between_queues() -> None:
    # each queue deserves half the 2-cpu node: one 1-cpu pod each
    queues = [QueueSpec("c1"), QueueSpec("c2")]
    jobs = [job("c1", rl(cpu="2", memory="2G"), phase="Inqueue"), job("c2", rl(cpu="2", memory="2G"), phase="Inqueue")]
    result = compute_proportion(queues, jobs, rl(cpu="2", memory="4G", pods="10"))
    pod = rl(cpu="1", memory="1G")
    assert result.allocatable("c1", pod)
    result.on_allocate("c1", pod)
    assert result["c1"].share == 1.0
    assert result.sorted_queues() == ["c2", "c1"]
    assert not result.allocatable("c1", pod)
    assert result.allocatable("c2", pod)
    result.on_allocate("c2", pod)
    assert not result.allocatable("c2", pod)
    result.on_deallocate("c1", pod)
    assert result.allocatable("c1", pod)


# ------------------------------------------------------------------------------------------------------------
# proportion: inqueue / elastic bookkeeping (TestNoDoubleCounting..., TestJobEnqueuedOnOtherPluginsReject)
# ------------------------------------------------------------------------------------------------------------


def test_no_double_counting_for_inqueue_job_with_binding_tasks() -> None:
    # jobA: Inqueue, minResources 3 cpu 3Gi, its 3 tasks of 1 cpu already allocated (binding);
    # jobB: Pending, minResources 1 cpu 1Gi; q1 capability 4 cpu 8Gi on a 4-cpu node
    job_a = job(
        "q1",
        rl(cpu="3", memory="3Gi"),
        rl(cpu="3", memory="3Gi"),
        min_resources=rl(cpu="3", memory="3Gi"),
        phase="Inqueue",
        min_member=3,
        allocated_tasks=3,
        name="pgA",
    )
    job_b = pending("q1", rl(cpu="1", memory="1Gi"), "pgB")
    result = compute_proportion(
        [QueueSpec("q1", capability=rl(cpu="4", memory="8Gi"))], [job_a, job_b], rl(cpu="4", memory="8Gi", pods="10")
    )
    assert result["q1"].inqueue == ResourceList()  # (3 cpu - 3 cpu allocated)+ = 0, not 3 cpu again
    assert result["q1"].elastic == ResourceList()
    assert result.enqueueable(job_b)  # 1 + 3 + 0 - 0 <= 4


def test_job_enqueued_only_counts_after_every_plugin_admitted() -> None:
    # q1 holds 1 cpu; pgA is rejected by another plugin (on_enqueued not called), pgB must still pass
    pg_a = pending("q1", rl(cpu="1", memory="1G"), "pgA")
    pg_b = pending("q1", rl(cpu="1", memory="1G"), "pgB")
    result = compute_proportion(
        [QueueSpec("q1", capability=rl(cpu="1", memory="4G"))], [pg_a, pg_b], rl(cpu="4", memory="4G", pods="10")
    )
    assert result.enqueueable(pg_a)
    assert result.enqueueable(pg_b)
    result.on_enqueued(pg_b)
    assert result["q1"].inqueue == rl(cpu="1", memory="1G")
    verdict = result.enqueueable(pg_a)
    assert str(verdict) == (
        "queue q1 realCapability: insufficient cpu, requested 1, available 0"
        " = 1 capability − 1 reserved by 1 admitted job"
    )


def test_inqueue_of_running_gang_below_min_member_is_not_reserved() -> None:
    # Running with fewer allocated tasks than minMember (a finished Spark driver): nothing reserved
    running = job(
        "q1", rl(cpu="4"), rl(cpu="1"), min_resources=rl(cpu="3"), phase="Running", min_member=3, allocated_tasks=1
    )
    inqueue = job(
        "q1", rl(cpu="4"), rl(cpu="1"), min_resources=rl(cpu="3"), phase="Inqueue", min_member=3, allocated_tasks=1
    )
    total = rl(cpu="10")
    assert compute_proportion([QueueSpec("q1")], [running], total)["q1"].inqueue == ResourceList()
    assert compute_proportion([QueueSpec("q1")], [inqueue], total)["q1"].inqueue == rl(cpu="2")


def test_elastic_is_allocated_beyond_min_resources_and_whole_without_them() -> None:
    elastic_job = job(
        "q1", rl(cpu="5"), rl(cpu="5"), min_resources=rl(cpu="2"), phase="Running", min_member=1, allocated_tasks=5
    )
    plain_job = job("q1", rl(cpu="1", memory="1Gi"), rl(cpu="1", memory="1Gi"), phase="Running")
    result = compute_proportion([QueueSpec("q1", capability=rl(cpu="8"))], [elastic_job, plain_job], rl(cpu="10"))
    assert result["q1"].elastic == rl(cpu="4", memory="1Gi")
    # enqueue: minResources + allocated + inqueue - elastic = 6 + 6 + 0 - 4 = 8 <= 8 (strict check)
    assert result.enqueueable(pending("q1", rl(cpu="6"), "fits"))
    assert not result.enqueueable(pending("q1", rl(cpu="7"), "too-big"))


def test_job_without_min_resources_is_always_enqueueable() -> None:
    result = compute_proportion([QueueSpec("q1", capability=rl(cpu="1"))], [job("q1", rl(cpu="9"))], rl(cpu="10"))
    assert result.enqueueable(job("q1", rl(cpu="9")))


# ------------------------------------------------------------------------------------------------------------
# proportion: realCapability, guarantee, deserved rules
# ------------------------------------------------------------------------------------------------------------


def test_realcapability_with_capability_scalars() -> None:
    # TestProportion "realcapability-test": q2 capability 2 cpu, 2k memory, 10 pods, 4 gpu; the cluster has
    # 11 cpu, 11k memory, 45 pods, 8 gpu and 1k rdma/hca. rdma is not in the capability: not limited.
    total = rl(cpu="11", memory="11k", pods="45", gpu="8", **{"rdma/hca": "1k"})
    q2 = QueueSpec("q2", capability=rl(cpu="2", memory="2k", pods="10", gpu="4"))
    rdma_job = job(
        "q2",
        rl(cpu="1", memory="1k", gpu="1", **{"rdma/hca": "1"}),
        rl(cpu="1", memory="1k", gpu="1", **{"rdma/hca": "1"}),
        phase="Running",
    )
    result = compute_proportion([q2], [rdma_job], total)
    assert result["q2"].real_capability == rl(cpu="2", memory="2k", pods="10", gpu="4", **{"rdma/hca": "1k"})
    assert result["q2"].deserved == rl(cpu="1", memory="1k", gpu="1", **{"rdma/hca": "1"})


def test_realcapability_reserves_other_queues_guarantees() -> None:
    queues = [QueueSpec("a", guarantee=rl(cpu="8")), QueueSpec("b"), QueueSpec("idle", guarantee=rl(cpu="1"))]
    jobs = [job("a", rl(cpu="10")), job("b", rl(cpu="10"))]
    result = compute_proportion(queues, jobs, rl(cpu="10"))
    assert result["a"].real_capability["cpu"] == 9000  # (10 - 9) + 8
    assert result["b"].real_capability["cpu"] == 1000  # every queue's guarantee counts, with jobs or not
    assert result["a"].deserved["cpu"] == 9000 and result["b"].deserved["cpu"] == 1000
    assert not result["idle"].participating
    assert result["idle"].deserved == ResourceList()


def test_cpu_or_memory_capability_of_zero_is_unlimited_but_scalar_zero_forbids() -> None:
    spec = QueueSpec("q1", capability=rl(cpu="0", memory="0", gpu="0"))
    result = compute_proportion([spec], [job("q1", rl(cpu="4", gpu="1"))], rl(cpu="4", gpu="2"))
    assert result["q1"].capability.to_dict() == {"nvidia.com/gpu": 0}  # cpu and memory unlimited: not listed
    assert result["q1"].deserved == rl(cpu="4")
    assert not result.allocatable("q1", rl(gpu="1"))


def test_guarantee_is_a_floor_even_above_the_request() -> None:
    queues = [QueueSpec("a", guarantee=rl(cpu="3")), QueueSpec("b")]
    result = compute_proportion(queues, [job("a", rl(cpu="1")), job("b", rl(cpu="20"))], rl(cpu="10"))
    assert result["a"].deserved["cpu"] == 3000
    assert result["b"].deserved["cpu"] == 7000
    assert "held at its guarantee 3" in str(result.explain("a"))


def test_weight_zero_counts_as_one() -> None:
    queues = [QueueSpec("a", weight=0), QueueSpec("b", weight=1)]
    result = compute_proportion(queues, [job("a", rl(cpu="10")), job("b", rl(cpu="10"))], rl(cpu="10"))
    assert result["a"].deserved == result["b"].deserved == rl(cpu="5")


def test_scalar_missing_from_request_is_not_deserved() -> None:
    result = compute_proportion([QueueSpec("q")], [job("q", rl(cpu="1"))], rl(cpu="4", gpu="4", pods="110"))
    assert result["q"].deserved == rl(cpu="1")


def test_unknown_queue_jobs_are_reported_and_ignored() -> None:
    result = compute_proportion([QueueSpec("q")], [job("q", rl(cpu="1")), job("ghost", rl(cpu="1"))], rl(cpu="4"))
    assert result.warnings == ("1 job names queue 'ghost', which does not exist; ignored",)  # no "(s)" (issue 30)
    assert not result.allocatable("ghost", rl(cpu="1"))
    assert result.allocatable("ghost", rl(cpu="1")).reason.check == "unknown"  # type: ignore[union-attr]


def test_duplicate_queue_names_are_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        compute_proportion([QueueSpec("q"), QueueSpec("q")], [], rl(cpu="1"))


# ------------------------------------------------------------------------------------------------------------
# proportion: reclaim, overused, borrowed and lent, explanations
# ------------------------------------------------------------------------------------------------------------


def test_reclaimable_takes_victims_while_the_queue_is_above_deserved() -> None:
    queues = [QueueSpec("q1"), QueueSpec("q2"), QueueSpec("locked", reclaimable=False)]
    jobs = [
        job("q1", rl(cpu="4"), rl(cpu="4"), phase="Running"),
        job("q2", rl(cpu="2"), phase="Inqueue"),
        job("locked", rl(cpu="1"), rl(cpu="1"), phase="Running"),
    ]
    result = compute_proportion(queues, jobs, rl(cpu="4"))
    # q1 4 / q2 2 / locked 1 ask 7 of 4: the water level is 4/3, so locked stops at 1 and the others share 3
    assert [result[q].deserved["cpu"] for q in ("q1", "q2", "locked")] == [1500, 1500, 1000]
    assert result.overused("q1")
    assert result.preemptive("q2", rl(cpu="1"))
    tasks = [TaskRef(f"t{i}", "q1", rl(cpu="1")) for i in range(4)] + [TaskRef("l", "locked", rl(cpu="1"))]
    selection = result.reclaimable(TaskRef("r", "q2", rl(cpu="1")), tasks)
    # 4 > 1.5, 3 > 1.5, 2 > 1.5: three victims, then q1 is at 1 cpu
    assert [t.name for t in selection.victims] == ["t0", "t1", "t2"]
    assert dict((t.name, why) for t, why in selection.skipped) == {
        "t3": "queue q1 is not above its deserved",
        "l": "queue locked is not reclaimable",
    }


def test_borrowed_and_lent_after_a_backfill() -> None:
    queues = [QueueSpec("a"), QueueSpec("b"), QueueSpec("c")]
    jobs = [job("a", rl(cpu="6")), job("b", rl(cpu="6")), job("c", rl(cpu="6"))]
    result = compute_proportion(queues, jobs, rl(cpu="6"))
    assert [result[q].deserved["cpu"] for q in "abc"] == [2000, 2000, 2000]
    result.on_allocate("a", rl(cpu="3"))  # backfill ignores deserved
    result.on_allocate("b", rl(cpu="1"))
    assert result["a"].borrowed == rl(cpu="1")
    # a's 1 borrowed cpu comes out of b's 1 and c's 2 unused cpu, in proportion: 333m and 667m
    assert result["b"].lent == rl(cpu="333m")
    assert result["c"].lent == rl(cpu="667m")
    assert sum(result[q].lent.get("cpu", 0) for q in "abc") == result["a"].borrowed["cpu"]


def test_whole_gpus_are_lent_in_whole_gpus() -> None:
    """A borrowed GPU comes out of the lenders' unused GPUs whole: never "0.4 GPUs lent" (the cpu case above keeps
    its milli split)."""
    gpu = "nvidia.com/gpu"
    queues = [QueueSpec("a"), QueueSpec("b"), QueueSpec("c")]
    jobs = [job(q, rl(**{"cpu": "1", gpu: "6"})) for q in "abc"]
    result = compute_proportion(queues, jobs, rl(**{"cpu": "3", gpu: "6"}))
    assert [result[q].deserved[gpu] for q in "abc"] == [2000, 2000, 2000]
    result.on_allocate("a", rl(**{gpu: "3"}))
    result.on_allocate("b", rl(**{gpu: "1"}))
    # a borrows 1 GPU; b has 1 unused, c 2: in proportion 1/3 and 2/3 of one GPU, so the whole GPU goes to c (the
    # largest remainder), never 333m and 667m
    assert result["b"].lent == rl()
    assert result["c"].lent == rl(**{gpu: "1"})
    # an entitlement that is not whole GPUs (water-filled) keeps the exact split in base units
    jobs = [job(q, rl(**{gpu: "6"})) for q in "abc"]
    result = compute_proportion(queues, jobs, rl(**{gpu: "5"}))
    assert result["a"].deserved[gpu] % 1000 != 0
    result.on_allocate("a", rl(**{gpu: "3"}))
    lent = [result[q].lent.get(gpu, 0) for q in "bc"]
    assert sum(lent) == result["a"].borrowed[gpu] and any(x % 1000 for x in lent)


def test_explain_names_every_step() -> None:
    queues = [QueueSpec("q1", weight=1, capability=rl(cpu="3")), QueueSpec("q2", weight=3)]
    result = compute_proportion(queues, [job("q1", rl(cpu="15")), job("q2", rl(cpu="12"))], rl(cpu="16"))
    text = str(result.explain("q1"))
    assert "realCapability[cpu] = 16" in text
    assert "capped by capability 3" in text
    assert "deserved[cpu] = 3" in text and "stopped at its realCapability 3" in text
    q2 = result.explain("q2")
    [step] = q2.for_quantity("deserved", "cpu")
    assert step.value == 12000 and step.rule == "des.cap.request"
    assert "share" in str(q2)


def test_a_job_summary_gives_the_same_result_and_is_not_changed_by_the_session() -> None:
    queues = [QueueSpec("q1", weight=2), QueueSpec("q2")]
    jobs = [
        job(
            "q1",
            rl(cpu="4", memory="2Gi"),
            rl(cpu="1"),
            min_resources=rl(cpu="2"),
            phase="Running",
            min_member=1,
            allocated_tasks=1,
        ),
        job("q2", rl(cpu="6"), min_resources=rl(cpu="3"), phase="Inqueue"),
        job("ghost", rl(cpu="1")),
    ]
    summary = summarize_jobs(jobs)
    assert summary.job_count == 3 and summary.totals["q1"].jobs == 1
    direct = compute_proportion(queues, jobs, rl(cpu="8", memory="8Gi"))
    reused = compute_proportion(queues, summary, rl(cpu="8", memory="8Gi"))
    assert {q: direct[q] for q in direct} == {q: reused[q] for q in reused}
    assert reused.warnings == direct.warnings
    reused.on_allocate("q1", rl(cpu="1"))
    assert summary.totals["q1"].allocated == {"cpu": 1000}
    # the inlined sums agree with the per-job helpers
    assert summary.totals["q1"].inqueue == job_inqueue(jobs[0]) == {"cpu": 1000}
    assert summary.totals["q1"].elastic == job_elastic(jobs[0]) == {}
    assert summary.totals["q2"].inqueue == job_inqueue(jobs[1]) == {"cpu": 3000}
