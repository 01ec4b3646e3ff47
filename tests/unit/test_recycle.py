"""Quota overuse revoke (recycling): the debounce, the victim order, non-preemptible pods, the add-back, and
properties of the victim choice (Koordinator quota_overuse_revoke.go semantics, koordinator.md section 8)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import Snapshot, TaskInfo, TaskStatus
from engine.policy.policy import ElasticQuotaArgs
from engine.resources import ResourceList
from engine.session.recycle import gangs_of, revoke_victims
from engine.session.run import run_recycle
from tests.support.examples import examples
from tests.unit.test_session_support import group, node, pod, podgroup, rl, running, snapshot


def overused(*pods: TaskInfo, runtime_cpu: int = 50) -> Snapshot:
    """Group ``a`` (min = its runtime) holds ``pods``; group ``b`` claims the rest of 100 cpu with pending pods,
    so ``a``'s runtime is ``runtime_cpu``."""
    b_pending = [
        TaskInfo("nsb", f"b-{i}", "nsb/b", request=rl("10", None), quota_group="b")
        for i in range((100 - runtime_cpu) // 10)
    ]
    return snapshot(
        nodes=[node(f"n{i}", "10", "64Gi") for i in range(10)],
        groups=[
            group("a", min=rl(str(runtime_cpu)), max=rl("100")),
            group("b", min=rl(str(100 - runtime_cpu)), max=rl("100")),
        ],
        podgroups=[podgroup("nsa", "a", "default", 0, phase="Running"), podgroup("nsb", "b", "default", 1)],  # type: ignore[arg-type]
        pods=[*pods, *b_pending],
    )


def a_pod(name: str, cpu: int, *, priority: int = 0, started: float | None = 0.0, preemptible: bool = True) -> TaskInfo:
    return running(
        "nsa",
        name,
        "a",
        "n0",
        str(cpu),
        None,
        priority=priority,
        started=started,
        quota="a",
        quota_preemptible=preemptible,
    )


def test_debounce_over_for_119_seconds_nothing_121_evictions() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i) for i in range(7)))  # used 70 > runtime 50
    evictions, since = run_recycle(snap, now=119.0, over_since={"a": 0.0})
    assert evictions == [] and since == {"a": 0.0}
    evictions, since = run_recycle(snap, now=121.0, over_since=since)
    assert [e.task for e in evictions] == ["nsa/a-0", "nsa/a-1"]  # lowest priority first, 20 cpu over
    assert since == {"a": 121.0}  # the clock restarts after a trigger
    first = evictions[0]
    assert first.action == "recycle" and first.reason == "QuotaOverused" and first.preemptor is None
    assert first.message == (
        "quota group a uses 70 cpu, above its runtime 50, for 121.0s (delayEvictTime 120s); pod priority 0, running for 121s"
    )
    assert first.blocker is not None
    assert (first.blocker.kind, first.blocker.name, first.blocker.requested, first.blocker.available) == (
        "quota",
        "a",
        70000,
        50000,
    )
    # right after a trigger a new full delay is needed
    again, _ = run_recycle(snap, now=200.0, over_since=since)
    assert again == []


def test_first_sighting_starts_the_clock_and_recovery_clears_it() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10) for i in range(6)))
    evictions, since = run_recycle(snap, now=1000.0, over_since={})
    assert evictions == [] and since == {"a": 1000.0}
    fine = overused(*(a_pod(f"a-{i}", 10) for i in range(5)))
    evictions, since = run_recycle(fine, now=1001.0, over_since=since)
    assert evictions == [] and since == {}


def test_delay_comes_from_the_elasticquota_arguments() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10) for i in range(6)))
    short = snap.replace(elastic_quota_args=ElasticQuotaArgs(delay_evict_time=5.0))
    assert run_recycle(short, now=4.0, over_since={"a": 0.0})[0] == []
    assert len(run_recycle(short, now=6.0, over_since={"a": 0.0})[0]) == 1


def test_delay_zero_evicts_at_once() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10) for i in range(6)))
    assert len(run_recycle(snap, now=0.0, over_since={}, delay=0)[0]) == 1


def test_equal_priority_most_recently_started_first() -> None:
    snap = overused(
        a_pod("old", 10, started=10.0),
        a_pod("new", 10, started=50.0),
        a_pod("never", 10, started=None),
        *(a_pod(f"keep-{i}", 10, priority=5) for i in range(4)),
    )
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == ["nsa/never", "nsa/new"]


def test_non_preemptible_pods_are_never_evicted() -> None:
    snap = overused(
        a_pod("pinned-0", 10, priority=0, preemptible=False),
        a_pod("pinned-1", 10, priority=0, preemptible=False),
        *(a_pod(f"a-{i}", 10, priority=1) for i in range(5)),
    )
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == ["nsa/a-0", "nsa/a-1"]


def test_pods_that_still_fit_are_added_back() -> None:
    # runtime 50, used 70: the least important (10 cpu) is taken, still 60; then the 30-cpu pod, 30; adding back
    # from the most important: the 30-cpu pod does not fit (60), the 10-cpu pod does (40): only the big one goes
    snap = overused(
        a_pod("small", 10, priority=0),
        a_pod("big", 30, priority=1),
        a_pod("rest", 30, priority=9),
    )
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == ["nsa/big"]


def test_when_used_cannot_get_under_runtime_every_candidate_goes() -> None:
    pods = [a_pod("pinned", 60, preemptible=False), a_pod("x", 10, priority=1), a_pod("y", 10, priority=2)]
    victims = revoke_victims(pods, {"cpu": 80_000}, {"cpu": 50_000})  # every non-preemptible pod protected
    assert [p.name for p in victims] == ["x", "y"]
    # recycle() protects only the pinned pods within min (here given: as when the group's min is 60 or more)
    victims = revoke_victims(pods, {"cpu": 80_000}, {"cpu": 50_000}, protected={"nsa/pinned"})
    assert [p.name for p in victims] == ["x", "y"]


def test_non_preemptible_usage_above_min_is_recycled() -> None:
    """Issue 25's probe: the group borrowed with preemptible pods and then made them non-preemptible (90 cpu
    against a min and runtime of 50). The most important pinned pods within min stay; the rest is recycled, least
    important first, as preemptible pods would be."""
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i, preemptible=False) for i in range(9)))
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == [f"nsa/a-{i}" for i in range(4)]  # 90 - 40 = 50
    assert "non-preemptible, but above the group's min" in evictions[0].message
    # within min nothing pinned goes: the preemptible pods do
    snap = overused(
        *(a_pod(f"pin-{i}", 10, priority=0, preemptible=False) for i in range(5)),
        *(a_pod(f"a-{i}", 10, priority=9) for i in range(2)),
    )
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == ["nsa/a-0", "nsa/a-1"]


def test_pending_and_releasing_pods_are_not_candidates() -> None:
    snap = overused(
        *(a_pod(f"a-{i}", 10, priority=5) for i in range(6)),
        pod("nsa", "going", "a", "10", None, status=TaskStatus.RELEASING, node="n0", quota="a"),
    )
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert [e.task for e in evictions] == ["nsa/a-0"]  # the releasing pod (priority 0) is neither used nor a candidate


def test_recycling_is_idempotent_once_applied() -> None:
    snap = overused(*(a_pod(f"a-{i}", 10, priority=i) for i in range(8)))
    evictions, since = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert len(evictions) == 3
    after = snap.without_tasks(e.task for e in evictions)
    assert run_recycle(after, now=1.0, over_since=since, delay=0) == ([], {})


# -- gangs stay whole (revokeWholeGangs) --------------------------------------------------------------------------


def gang_pod(gang: str, i: int, cpu: int, *, priority: int = 0, role: str = "", preemptible: bool = True) -> TaskInfo:
    return running(
        "nsa", f"{gang}-{i}", gang, "n0", str(cpu), None, priority=priority, started=0.0, quota="a", role=role,
        quota_preemptible=preemptible,
    )  # fmt: skip


WHOLE_GANGS = ElasticQuotaArgs(revoke_whole_gangs=True)


def with_gangs(snap: Snapshot, *gangs: tuple[str, int], roles: dict[str, dict[str, int]] | None = None) -> Snapshot:
    """``snap`` with these gangs, and ``revokeWholeGangs: true``."""
    return snap.with_podgroups(
        [podgroup("nsa", name, "default", m, phase="Running", min_task_member=(roles or {}).get(name))  # type: ignore[arg-type]
         for name, m in gangs]
    ).replace(elastic_quota_args=WHOLE_GANGS)  # fmt: skip


def test_the_pod_that_would_break_a_gang_takes_the_gang_with_it() -> None:
    # used 80 > runtime 50: the 8-pod gang (minMember 8, priority 0) is the least important; Koordinator (and Fairway
    # by default) takes six of its pods and leaves two running that cannot work; with revokeWholeGangs the whole
    # gang goes (40 cpu, used 40)
    pods = [gang_pod("train", i, 5) for i in range(8)] + [gang_pod(f"solo{i}", 0, 10, priority=5) for i in range(4)]
    snap = with_gangs(overused(*pods), ("train", 8), *((f"solo{i}", 1) for i in range(4)))
    evictions, _ = run_recycle(snap, now=300.0, over_since={}, delay=0)
    assert sorted(e.task for e in evictions) == [f"nsa/train-{i}" for i in range(8)]
    assert evictions[0].message.endswith(
        "evicted with its gang nsa/train (8 of its 8 ready pods): fewer than minMember 8 cannot run"
    )
    pod_by_pod = snap.replace(elastic_quota_args=ElasticQuotaArgs())  # the default: Koordinator's revoke
    assert len(run_recycle(pod_by_pod, now=300.0, over_since={}, delay=0)[0]) == 6  # 30 cpu of 5-cpu pods


def test_a_gang_loses_its_pods_above_minmember_one_at_a_time() -> None:
    # minMember 4 of 8 ready: four pods may go alone; 20 cpu over takes exactly four 5-cpu pods, the gang runs on
    pods = [gang_pod("elastic", i, 5) for i in range(8)] + [gang_pod(f"solo{i}", 0, 10, priority=5) for i in range(3)]
    snap = with_gangs(overused(*pods), ("elastic", 4), *((f"solo{i}", 1) for i in range(3)))
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    assert len(evictions) == 4 and all(e.task.startswith("nsa/elastic-") for e in evictions)
    assert "evicted with its gang" not in evictions[0].message


def test_a_pod_is_not_put_back_alone_when_its_gang_went() -> None:
    # gang g: 3 pods of 4 cpu, minMember 2 (one spare); solo: 18 cpu, more important. used 30, runtime 24.
    # g-0 is spare and goes alone (26); g-1 would break g, so it goes with g-2 (18). Walking back, g-1 and g-2 do
    # not fit (26); g-0 would (22) but alone it cannot run, so it goes too. Pod by pod, g-0 and g-1 would go and
    # g-2 would be left running alone.
    pods = [gang_pod("g", i, 4) for i in range(3)] + [gang_pod("solo", 0, 18, priority=9)]
    gangs = gangs_of(Snapshot.build(podgroups=[podgroup("nsa", "g", "default", 2)], tasks=pods))
    victims = revoke_victims(pods, {"cpu": 30_000}, {"cpu": 24_000}, gangs)
    assert sorted(p.name for p in victims) == ["g-0", "g-1", "g-2"]
    assert sorted(p.name for p in revoke_victims(pods, {"cpu": 30_000}, {"cpu": 24_000})) == ["g-0", "g-1"]


def test_a_gang_holding_a_non_preemptible_pod_is_never_broken() -> None:
    pods = [gang_pod("g", 0, 10, preemptible=False), *(gang_pod("g", i, 10) for i in range(1, 4))]
    pods += [gang_pod("other", 0, 30, priority=5)]
    snap = with_gangs(overused(*pods), ("g", 3), ("other", 1))  # used 70, runtime 50
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)
    # one pod of g is spare (4 ready, minMember 3); the next would break g, which holds a pinned pod: "other" goes
    assert sorted(e.task for e in evictions) == ["nsa/other-0"]


def test_each_roles_minimum_is_kept() -> None:
    # minMember 3 of 5 ready, but the ps role needs both its pods: only the workers are spare
    pods = [gang_pod("job", i, 10, role="ps") for i in range(2)] + [
        gang_pod("job", i, 10, priority=1, role="worker") for i in range(2, 5)
    ]
    pods += [gang_pod("other", 0, 20, priority=5)]
    snap = with_gangs(overused(*pods), ("job", 3), ("other", 1), roles={"job": {"ps": 2, "worker": 1}})
    evictions, _ = run_recycle(snap, now=0.0, over_since={}, delay=0)  # used 70, runtime 50: 20 cpu over
    assert sorted(e.task for e in evictions) == ["nsa/job-2", "nsa/job-3"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(0, 5), st.integers(1, 8), st.booleans()),
             min_size=1, max_size=6),
    st.integers(0, 80),
)  # fmt: skip
def test_no_gang_is_left_below_its_minimum(spec: list[tuple[int, int, int, int, bool]], runtime_cpu: int) -> None:
    pods: list[TaskInfo] = []
    podgroups = []
    for g, (m, size, prio, cpu, pinned) in enumerate(spec):
        podgroups.append(podgroup("ns", f"g{g}", "default", m))  # m > size: a gang already broken
        pods += [
            TaskInfo("ns", f"g{g}-{i}", f"ns/g{g}", request=ResourceList({"cpu": cpu * 1000}), priority=prio,
                     quota_preemptible=not (pinned and i == 0), start_timestamp=0.0, status=TaskStatus.RUNNING, node="n")
            for i in range(size)
        ]  # fmt: skip
    gangs = gangs_of(Snapshot.build(podgroups=podgroups, tasks=pods))
    used = {"cpu": sum(p.request["cpu"] for p in pods)}
    victims = revoke_victims(pods, used, {"cpu": runtime_cpu * 1000}, gangs)
    assert len({p.uid for p in victims}) == len(victims) and all(p.quota_preemptible for p in victims)
    if used["cpu"] <= runtime_cpu * 1000:
        assert victims == []
    for pg in podgroups:
        mine = [p for p in pods if p.podgroup == pg.key]
        gone = sum(1 for p in victims if p.podgroup == pg.key)
        assert gone in (0, len(mine)) or len(mine) - gone >= pg.min_member, (pg.key, gone, len(mine))


# -- properties of the victim choice ------------------------------------------------------------------------------

pods_strategy = st.lists(
    st.tuples(st.integers(1, 8), st.integers(0, 3), st.booleans(), st.integers(0, 100)), min_size=0, max_size=12
)


def _tasks(spec: list[tuple[int, int, bool, int]]) -> list[TaskInfo]:
    return [
        TaskInfo(
            "ns",
            f"p{i}",
            "ns/pg",
            request=ResourceList({"cpu": cpu * 1000}),
            priority=prio,
            quota_preemptible=preemptible,
            start_timestamp=float(start),
            status=TaskStatus.RUNNING,
            node="n",
        )
        for i, (cpu, prio, preemptible, start) in enumerate(spec)
    ]


@settings(max_examples=examples(300), deadline=None)
@given(pods_strategy, st.integers(0, 40))
def test_revoke_victims_properties(spec: list[tuple[int, int, bool, int]], runtime_cpu: int) -> None:
    pods = _tasks(spec)
    used = {"cpu": sum(p.request["cpu"] for p in pods)}
    runtime = {"cpu": runtime_cpu * 1000}
    victims = revoke_victims(pods, used, runtime)
    chosen = {p.uid for p in victims}
    assert len(chosen) == len(victims)
    assert all(p.quota_preemptible for p in victims)  # never a non-preemptible pod
    left = used["cpu"] - sum(p.request["cpu"] for p in victims)
    movable = sum(p.request["cpu"] for p in pods if p.quota_preemptible)
    if used["cpu"] <= runtime["cpu"]:
        assert victims == []
    elif used["cpu"] - movable <= runtime["cpu"]:
        assert left <= runtime["cpu"]  # enough was taken
        for p in victims:  # and none of the victims would still fit back
            assert left + p.request["cpu"] > runtime["cpu"]
    else:
        assert chosen == {p.uid for p in pods if p.quota_preemptible}  # cannot get under: every candidate goes
