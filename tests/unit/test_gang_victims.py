"""Victims chosen with gangs in mind (issue 26 item 1): spare pods first, then the least-waste cover of whole gangs
(``engine.session.gangcover``), never a piece of a gang that leaves it below its minimum."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import Snapshot, TaskInfo, TaskStatus
from engine.resources import ResourceList
from engine.session.gangcover import Unit, least_waste_cover, pod_work
from engine.session.recycle import gangs_of, revoke_victims
from tests.support.examples import examples
from tests.unit.test_session_support import podgroup

GPU = "nvidia.com/gpu"


def test_pod_work_counts_whole_seconds_plus_one() -> None:
    assert pod_work(None, 100.0) == 1 and pod_work(10.0, None) == 1 and pod_work(10.0, 5.0) == 1
    assert pod_work(0.0, 59.9) == 60 and pod_work(0.0, 60.0) == 61


def test_exact_cover_takes_the_cheapest_set_that_covers() -> None:
    # need 6 GPUs: a (8 GPUs, 800 pod-seconds) covers alone; b + c (4 + 4, 100 + 150) cover for 250: b + c
    units = [Unit("a", {GPU: 8}, 800, 0), Unit("b", {GPU: 4}, 100, 0), Unit("c", {GPU: 4}, 150, 0)]
    assert sorted(u.key for u in least_waste_cover({GPU: 6}, units)) == ["b", "c"]
    # a lower priority wins over less work: a set's priority is its most important unit's
    units = [Unit("a", {GPU: 8}, 800, 0), Unit("b", {GPU: 4}, 100, 5), Unit("c", {GPU: 4}, 150, 0)]
    assert [u.key for u in least_waste_cover({GPU: 6}, units)] == ["a"]
    # equal work: the least freed beyond the need
    units = [Unit("big", {GPU: 8}, 10, 0), Unit("fit", {GPU: 6}, 10, 0)]
    assert [u.key for u in least_waste_cover({GPU: 6}, units)] == ["fit"]


def test_no_cover_takes_every_candidate_and_nothing_needed_takes_none() -> None:
    units = [Unit("a", {GPU: 2}, 1, 0), Unit("b", {"cpu": 9}, 1, 0)]
    assert least_waste_cover({GPU: 5}, units) == units
    assert least_waste_cover({GPU: 0}, units) == []


def test_greedy_above_the_exact_limit_takes_least_work_per_part_freed() -> None:
    # 14 candidates: greedy. need 8 GPUs; cheap ones free 4 for 40 (10 per GPU), dear ones 8 for 800
    units = [Unit(f"cheap{i}", {GPU: 4}, 40, 0) for i in range(2)]
    units += [Unit(f"dear{i}", {GPU: 8}, 800, 0) for i in range(12)]
    assert sorted(u.key for u in least_waste_cover({GPU: 8}, units)) == ["cheap0", "cheap1"]


def _brute(need: dict[str, int], units: list[Unit]) -> tuple[int, int]:
    """(priority, work) of the best covering set, by trying every set."""
    best: tuple[int, int] | None = None
    for n in range(1, len(units) + 1):
        for combo in itertools.combinations(units, n):
            if all(sum(u.freed.get(r, 0) for u in combo) >= v for r, v in need.items()):
                key = (max(u.priority for u in combo), sum(u.work for u in combo))
                best = key if best is None or key < best else best
    assert best is not None
    return best


unit_strategy = st.lists(
    st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 500), st.integers(0, 2)), min_size=1, max_size=15
)


@settings(max_examples=examples(200), deadline=None)
@given(unit_strategy, st.integers(0, 20), st.integers(0, 20))
def test_cover_frees_the_need_and_is_least_work_when_exact(
    spec: list[tuple[int, int, int, int]], need_gpu: int, need_cpu: int
) -> None:
    units = [Unit(f"u{i}", {GPU: g, "cpu": c}, w, p) for i, (g, c, w, p) in enumerate(spec)]
    need = {GPU: need_gpu, "cpu": need_cpu}
    chosen = least_waste_cover(need, units)
    can = all(sum(u.freed[r] for u in units) >= v for r, v in need.items())
    freed = {r: sum(u.freed[r] for u in chosen) for r in need}
    if not need_gpu and not need_cpu:
        assert chosen == []
    elif not can:
        assert chosen == units
    else:
        assert all(freed[r] >= v for r, v in need.items())
        if len(units) <= 12:
            assert (max(u.priority for u in chosen), sum(u.work for u in chosen)) == _brute(need, units)


# -- the recycling victims: random gangs and overuses -------------------------------------------------------------

gang_strategy = st.lists(
    # (minMember, extra pods above it, priority, gpus per pod, cpus per pod, seconds running, ps role minimum)
    st.tuples(st.integers(1, 5), st.integers(0, 3), st.integers(0, 2), st.integers(0, 4), st.integers(1, 4),
              st.integers(0, 600), st.integers(0, 2)),
    min_size=1, max_size=16,
)  # fmt: skip


def _world(spec: list[tuple[int, int, int, int, int, int, int]], pinned: int) -> tuple[list[TaskInfo], Snapshot]:
    pods: list[TaskInfo] = []
    groups = []
    for g, (m, extra, prio, gpu, cpu, ran, ps) in enumerate(spec):
        ps = min(ps, m)
        groups.append(podgroup("ns", f"g{g}", "default", m, min_task_member={"ps": ps} if ps else None))
        pods += [
            TaskInfo("ns", f"g{g}-{i}", f"ns/g{g}", request=ResourceList({GPU: gpu, "cpu": cpu * 1000}), priority=prio,
                     task_role="ps" if i < ps else "worker", start_timestamp=1000.0 - ran,
                     quota_preemptible=not (g == pinned and i == 0), status=TaskStatus.RUNNING, node="n")
            for i in range(m + extra)
        ]  # fmt: skip
    return pods, Snapshot.build(podgroups=groups, tasks=pods)


@settings(max_examples=examples(300), deadline=None)
@given(gang_strategy, st.integers(0, 40), st.integers(0, 40), st.integers(-1, 15))
def test_no_gang_below_its_minimum_and_the_need_is_freed(
    spec: list[tuple[int, int, int, int, int, int, int]], runtime_gpu: int, runtime_cpu: int, pinned: int
) -> None:
    pods, snap = _world(spec, pinned)
    gangs = gangs_of(snap)
    used = {r: sum(p.request.get(r, 0) for p in pods) for r in (GPU, "cpu")}
    runtime = {GPU: runtime_gpu, "cpu": runtime_cpu * 1000}
    victims = revoke_victims(pods, used, runtime, gangs, now=1000.0)
    gone = {p.uid for p in victims}
    assert len(gone) == len(victims) and all(p.quota_preemptible for p in victims)
    left = {r: used[r] - sum(p.request.get(r, 0) for p in victims) for r in used}
    for key, pg in snap.podgroups.items():
        mine = [p for p in pods if p.podgroup == key and p.uid not in gone]
        ps = sum(1 for p in mine if p.task_role == "ps")
        # no gang left below its minimum holding resources: whole or gone
        assert not mine or (len(mine) >= pg.min_member and ps >= pg.min_task_member.get("ps", 0)), key
    # the candidates could cover the need (every pod of a gang without a pinned pod): the need is covered
    movable = {r: sum(p.request.get(r, 0) for p in pods if p.podgroup != f"ns/g{pinned}") for r in used}
    if all(used[r] - movable[r] <= runtime[r] for r in used):
        assert all(left[r] <= runtime[r] for r in used)
    if all(used[r] <= runtime[r] for r in used):
        assert victims == []


def test_spare_pods_go_before_a_whole_gang_and_a_whole_gang_before_breaking_one() -> None:
    # the group uses 36 GPUs, runtime 30: gang big (8 pods x 4 GPUs, minMember 8) cannot spare a pod; elastic (2
    # pods of 1 GPU, minMember 1: not a gang) spares both; small (2 x 1 GPU, minMember 2) cannot. need 6: elastic's
    # pods (2) are not enough; of the whole gangs, small (2) cannot cover the other 4, big (32) can: big goes whole
    # rather than a piece of it, and walking back, elastic's pods are kept (34 - 32 + 2 <= 30).
    pods = [_gpu_pod("big", i, 4) for i in range(8)] + [_gpu_pod("elastic", i, 1) for i in range(2)]
    pods += [_gpu_pod("small", i, 1) for i in range(2)]
    snap = Snapshot.build(
        podgroups=[podgroup("ns", "big", "default", 8), podgroup("ns", "elastic", "default", 1),
                   podgroup("ns", "small", "default", 2)],
        tasks=pods,
    )  # fmt: skip
    victims = revoke_victims(pods, {GPU: 36}, {GPU: 30}, gangs_of(snap), now=100.0)
    assert sorted(p.name for p in victims) == [f"big-{i}" for i in range(8)]
    # need 3: elastic's two pods, then small whole (2 GPUs, the least work); walking back, small does not fit and
    # one of elastic's pods does: 3 freed, big runs on
    victims = revoke_victims(pods, {GPU: 36}, {GPU: 33}, gangs_of(snap), now=100.0)
    assert sorted(p.name for p in victims) == ["elastic-0", "small-0", "small-1"]


def _gpu_pod(gang: str, i: int, gpu: int) -> TaskInfo:
    return TaskInfo("ns", f"{gang}-{i}", f"ns/{gang}", request=ResourceList({GPU: gpu}), start_timestamp=0.0,
                    status=TaskStatus.RUNNING, node="n")  # fmt: skip


def test_the_readmes_worked_example() -> None:
    # docs/recycling-and-gangs.md, "Victims chosen with gangs in mind": runtime 36 GPUs, used 44, need 8
    def gang(name: str, n: int, gpu: int, ran: float) -> list[TaskInfo]:
        return [TaskInfo("ml", f"{name}-{i}", f"ml/{name}", request=ResourceList({GPU: gpu}), priority=100,
                         start_timestamp=1000.0 - ran, status=TaskStatus.RUNNING, node="n") for i in range(n)]  # fmt: skip

    pods = gang("eval", 2, 1, 10) + gang("finetune", 2, 2, 30) + gang("rl", 3, 2, 120) + gang("llm-pretrain", 8, 4, 600)
    snap = Snapshot.build(
        podgroups=[podgroup("ml", "eval", "default", 1), podgroup("ml", "finetune", "default", 2),
                   podgroup("ml", "rl", "default", 3), podgroup("ml", "llm-pretrain", "default", 8)],
        tasks=pods,
    )  # fmt: skip
    victims = revoke_victims(pods, {GPU: 44}, {GPU: 36}, gangs_of(snap), now=1000.0)
    assert sorted(p.name for p in victims) == ["eval-0", "eval-1", "rl-0", "rl-1", "rl-2"]
    pod_by_pod = revoke_victims(pods, {GPU: 44}, {GPU: 36})
    assert sorted(p.name for p in pod_by_pod) == ["eval-0", "eval-1", "finetune-0", "finetune-1", "rl-0"]
    units = [Unit("finetune", {GPU: 4}, 62, 100), Unit("rl", {GPU: 6}, 363, 100), Unit("llm", {GPU: 32}, 4808, 100)]
    assert [u.key for u in least_waste_cover({GPU: 6}, units)] == ["rl"]
    assert [u.key for u in least_waste_cover({GPU: 6}, units, exact_limit=0)] == ["finetune", "rl"]
