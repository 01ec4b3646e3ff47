"""The soak's test of whether admitted work could start on the room free after a session (``tests/support/soak.py``:
``fits`` and ``could_start``), which splits the saturated rounds into those where it could (their GPU allocation is
the figure ``gpu_utilisation_usable_min``) and the shape-blocked ones (counted, with their longest run)."""

from __future__ import annotations

from tests.support.soak import GPU, could_start, fits

GI = 1024**3


def node(gpus: int, cpu: int = 64, memory_gi: int = 512) -> dict[str, int]:
    return {"cpu": cpu * 1000, "memory": memory_gi * GI, GPU: gpus * 1000}


def pod(gpus: int, cpu: int = 0, memory_gi: int = 0) -> dict[str, int]:
    return {"cpu": (cpu or 8 * gpus) * 1000, "memory": (memory_gi or 64 * gpus) * GI, GPU: gpus * 1000}


GANG = [pod(2)] * 4  # the demo's 4 x 2-GPU gang (16 cores, 128 GiB a pod)


def test_a_gang_one_slot_short_does_not_fit_eight_free_gpus_in_holes() -> None:
    # the soak's seed 1 at 08:52:10: 3 and 5 GPUs free on two machines, 8 in all, room for 3 of the 4 pods
    assert not fits(GANG, [node(3, 24, 192), node(5, 40, 320)])
    # seed 4 at 08:32:00: 7 and 1
    assert not fits(GANG, [node(7, 56, 448), node(1, 8, 64)])
    assert fits(GANG, [node(4), node(4)])


def test_memory_counts_as_well_as_gpus() -> None:
    assert not fits([pod(2)], [node(2, 16, 64)])
    assert fits([pod(2)], [node(2, 16, 128)])


def test_the_search_is_exact_where_largest_first_would_fail() -> None:
    # largest first, first fit: 3 + 3 on the first node, 2 + 2 + 2 on the second, the last 2 nowhere; but 3 + 2 + 2
    # on each node fits
    pods = [pod(3), pod(3), pod(2), pod(2), pod(2), pod(2)]
    assert fits(pods, [node(7), node(7)])
    assert not fits([*pods, pod(1)], [node(7), node(7)])


def test_past_its_budget_the_search_counts_the_room_as_usable() -> None:
    holes = [node(3, 24, 192), node(5, 40, 320)]
    assert not fits(GANG, holes)
    assert fits(GANG, holes, budget=0)


def test_a_job_needs_only_what_its_minimum_still_lacks() -> None:
    holes = [node(3, 24, 192), node(5, 40, 320)]
    assert not could_start([(GANG, 4)], holes)
    assert could_start([(GANG, 1)], holes)  # three of its pods already run: one more starts it
    assert could_start([(GANG[:1], 0)], holes)  # its minimum met: any one pod counts
    assert could_start([(GANG, 4), ([pod(1)], 1)], holes)  # another admitted job fits
    assert not could_start([], holes)


def test_a_job_is_tried_with_its_smallest_pods() -> None:
    assert could_start([([pod(4), pod(1)], 1)], [node(1)])


def test_a_saturated_round_is_shape_blocked_only_with_gpus_idle_that_no_admitted_job_can_use() -> None:
    from tests.support.soak import Soak

    soak = Soak(hours=0)
    holes = [node(3, 24, 192), node(5, 40, 320), node(0, 0, 0)]
    soak._free = holes
    soak._saturated(56_000, 64_000, [(GANG, 4)])  # 8 GPUs idle, the gang one 2-GPU slot short
    soak._saturated(56_000, 64_000, [(GANG, 4)])
    soak._saturated(60_000, 64_000, [(GANG, 4), ([pod(1)], 1)])  # a 1-GPU job could start: waste if left waiting
    soak._free = [node(0, 0, 0)]
    soak._saturated(64_000, 64_000, [(GANG, 4)])  # every GPU allocated: nothing to blame on shapes
    report = soak.report
    assert report.saturated_rounds == 4
    assert report.gpu_utilisation == [0.875, 0.875, 0.9375, 1.0]
    assert report.gpu_utilisation_usable == [0.9375, 1.0]
    assert (report.shape_blocked_rounds, report.shape_blocked_longest) == (2, 2)
    summary = report.summary()
    assert (summary["gpu_utilisation_min"], summary["gpu_utilisation_usable_min"]) == (0.875, 0.938)
