"""Reclaim and preempt victims chosen with gangs in mind (``wholeGangs: true``, issue 26 item 1;
``engine.session.actions.gangvictims``): spare pods first, then whole gangs by the least-waste cover of what the node
still lacks, never a piece of a gang; off, Volcano's pod-by-pod choice is unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import Snapshot, TaskInfo
from engine.policy.policy import Policy, PolicyError
from engine.session.run import run_session
from engine.vocabulary import READY_STATUSES
from tests.support.examples import examples
from tests.unit.test_session_support import (
    Q,
    evicted,
    node,
    pipelined,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)

TIERS = (["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"])
NO_GANG_VICTIM_RULE = (
    ["priority", {"name": "gang", "enablePreemptable": False, "enableReclaimable": False}, "conformance"],
    TIERS[1],
)


def preempt_policy(whole: bool | None, tiers: Any = TIERS) -> Policy:
    return policy("preempt", *tiers, **({"preempt": {"wholeGangs": whole}} if whole is not None else {}))


def _gang_pods(name: str, nodes: list[str], gpu: int, started: float, priority: int = 0) -> list[TaskInfo]:
    return [
        running("ml", f"{name}-{i}", name, n, "1", "1Gi", gpu=gpu, started=started, priority=priority)
        for i, n in enumerate(nodes)
    ]


def worked_example(pol: Policy) -> Snapshot:
    """The module doc's example: n1 (10 GPUs) holds c (2 x 1 GPU, minMember 1, 5 s), a (2 x 2, minMember 2, 100 s)
    and two pods of b (4 x 2, minMember 4, 10 s), whose other two run on n2; a pod of 4 GPUs of a more important job,
    which may run on n1 only, preempts (now = 1000)."""
    return snapshot(
        nodes=[node("n1", "16", "64Gi", gpu=10, labels={"pool": "big"}), node("n2", "16", "64Gi", gpu=4)],
        queues=[queue("q1")],
        podgroups=[
            podgroup("ml", "c", "q1", 1, phase=Q.RUNNING, priority=1),
            podgroup("ml", "a", "q1", 2, phase=Q.RUNNING, priority=1),
            podgroup("ml", "b", "q1", 4, phase=Q.RUNNING, priority=1),
            podgroup("ml", "high", "q1", 1, priority=100),
        ],
        pods=[
            *_gang_pods("c", ["n1", "n1"], 1, 995.0),
            *_gang_pods("a", ["n1", "n1"], 2, 900.0),
            *_gang_pods("b", ["n1", "n1", "n2", "n2"], 2, 990.0),
            pod("ml", "high-0", "high", "1", "1Gi", gpu=4, selector={"pool": "big"}),
        ],
        policy=pol,
    )


def test_the_worked_example_takes_the_cheapest_whole_gang_even_across_nodes() -> None:
    result = run_session(worked_example(preempt_policy(True)), now=1000.0)
    assert sorted(evicted(result)) == [f"ml/b-{i}" for i in range(4)]  # b whole, its pods on n2 too
    assert pipelined(result) == {"ml/high-0": "n1"}
    words = next(e.message for e in result.evictions if e.task == "ml/b-2")
    assert "evicted with its whole gang ml/b (4 pods on 2 nodes)" in words
    # off, with Volcano's gang rule: only a pod c can spare may go (1 GPU): nothing is placed, nothing evicted
    off = run_session(worked_example(preempt_policy(None)), now=1000.0)
    assert evicted(off) == [] and pipelined(off) == {}
    # off, without the gang rule (the demo's enablePreemptable: false): pod by pod, a gang is cut below its minimum
    loose = run_session(worked_example(preempt_policy(None, NO_GANG_VICTIM_RULE)), now=1000.0)
    gone = set(evicted(loose))
    assert pipelined(loose) == {"ml/high-0": "n1"}
    assert any(0 < sum(f"ml/{g}-{i}" in gone for i in range(n)) < n for g, n in (("a", 2), ("b", 4)))
    # on, without the gang rule in the policy: the same whole-gang choice
    on_loose = run_session(worked_example(preempt_policy(True, NO_GANG_VICTIM_RULE)), now=1000.0)
    assert sorted(evicted(on_loose)) == [f"ml/b-{i}" for i in range(4)]


def test_spare_pods_are_enough_when_they_cover_the_need() -> None:
    # a pod of 2 GPUs: c's two pods are spare and cover it; no gang is touched
    snap = worked_example(preempt_policy(True))
    high = snap.tasks["ml/high-0"]
    snap = snap.with_tasks([pod("ml", "high-0", "high", "1", "1Gi", gpu=2, selector=high.node_selector)])
    result = run_session(snap, now=1000.0)
    assert sorted(evicted(result)) == ["ml/c-0", "ml/c-1"] and pipelined(result) == {"ml/high-0": "n1"}


def test_a_gang_with_a_pod_protected_by_its_minimum_runtime_is_never_taken() -> None:
    # b's pods on n2 started 10 s ago and are protected (minRuntime 1m, equal pod priorities) -- so are all of b's:
    # a is taken whole instead (202 pod-seconds, all of its pods older than a minute)
    pol = policy("preempt", *TIERS, preempt={"wholeGangs": True, "minRuntime": "60s"})
    snap = worked_example(pol)
    result = run_session(snap, now=1000.0)
    assert sorted(evicted(result)) == ["ml/a-0", "ml/a-1"]


# every victim filter in the first tier, as the demo's and the recommended policy have them
ONE_TIER = (["priority", "gang", "conformance", "proportion"], ["overcommit", "drf", "predicates", "nodeorder"])


def lent_gangs(whole: bool | None, tiers: Any = ONE_TIER, b_guarantee: int | None = None) -> Snapshot:
    """Queue b borrows both 8-GPU nodes with two gangs (4 x 2 GPUs each, minMember 4, two pods on each node; old
    started at 0, new at 900); queue a's gang (2 pods of 4 GPUs, minMember 2: a deserves 8) reclaims at 1000."""
    configurations = {"reclaim": {"wholeGangs": whole}} if whole is not None else {}
    pol = policy("reclaim", *tiers, **configurations)
    guarantee = rl(gpu=b_guarantee) if b_guarantee is not None else None
    return snapshot(
        nodes=[node("n1", "16", "64Gi", gpu=8), node("n2", "16", "64Gi", gpu=8)],
        queues=[queue("a"), queue("b", guarantee=guarantee)],
        podgroups=[
            podgroup("ml", "old", "b", 4, phase=Q.RUNNING),
            podgroup("ml", "new", "b", 4, phase=Q.RUNNING),
            podgroup("ns-a", "job", "a", 2),
        ],
        pods=[
            *_gang_pods("old", ["n1", "n1", "n2", "n2"], 2, 0.0),
            *_gang_pods("new", ["n1", "n1", "n2", "n2"], 2, 900.0),
            pod("ns-a", "job-0", "job", "1", "1Gi", gpu=4),
            pod("ns-a", "job-1", "job", "1", "1Gi", gpu=4),
        ],
        policy=pol,
    )


def test_reclaim_takes_a_whole_gang_of_the_borrowing_queue() -> None:
    result = run_session(lent_gangs(True), now=1000.0)
    # need 4 GPUs on n1: old (4 x 1001 pod-seconds) or new (4 x 101): new goes whole, on both nodes, and the
    # second pod takes what new freed on n2 (proportion lets b go down to its deserved 8)
    assert sorted(evicted(result)) == [f"ml/new-{i}" for i in range(4)]
    assert pipelined(result) == {"ns-a/job-0": "n1", "ns-a/job-1": "n2"}
    # off: Volcano's gang rule spares both gangs (none is above its minMember), and no other tier has a victim
    # filter: nothing is reclaimed
    off = run_session(lent_gangs(None), now=1000.0)
    assert evicted(off) == [] and pipelined(off) == {}


def test_reclaim_keeps_the_queue_filters() -> None:
    # b is within its guarantee: proportion refuses every pod, whole gangs or not
    result = run_session(lent_gangs(True, b_guarantee=16), now=1000.0)
    assert evicted(result) == [] and pipelined(result) == {}


def test_off_volcanos_tiers_can_break_a_gang_and_on_they_cannot() -> None:
    # proportion in the second tier: the gang rule leaves the first tier empty, so Volcano lets the second decide
    # alone and reclaims pod by pod -- two pods of each gang of minMember 4, whose other two hold GPUs that run nothing
    off = run_session(lent_gangs(None, TIERS), now=1000.0)
    assert sorted(evicted(off)) == ["ml/new-0", "ml/new-1", "ml/old-0", "ml/old-1"]
    on = run_session(lent_gangs(True, TIERS), now=1000.0)
    assert sorted(evicted(on)) == [f"ml/new-{i}" for i in range(4)]


# -- the option ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_bad_whole_gangs_value_is_refused_naming_the_key(value: object) -> None:
    with pytest.raises(PolicyError, match="configurations preempt: wholeGangs: expected true or false"):
        policy("preempt", *TIERS, preempt={"wholeGangs": value})


def test_the_option_is_off_by_default_and_written_only_as_given() -> None:
    plain = preempt_policy(None)
    assert not plain.whole_gangs("preempt") and not plain.whole_gangs("reclaim")
    assert "configurations" not in plain.to_dict()
    on = preempt_policy(True)
    assert on.whole_gangs("preempt") and not on.whole_gangs("reclaim")
    assert Policy.from_yaml(on.to_yaml()) == on
    assert on.to_dict()["configurations"] == [{"name": "preempt", "arguments": {"wholeGangs": True}}]


# -- property: random gangs and preemptors ---------------------------------------------------------------------------

victim_gangs = st.lists(
    # (minMember, extra pods above it, gpus per pod, seconds running)
    st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(1, 4), st.integers(0, 600)),
    min_size=1,
    max_size=7,
)
preemptor = st.tuples(st.integers(1, 3), st.integers(1, 6))  # (minMember = pods, gpus per pod)


def _random_world(gangs: list[tuple[int, int, int, int]], job: tuple[int, int], action: str, whole: bool) -> Snapshot:
    """Three 8-GPU nodes filled by the victim gangs (pods spread round-robin where they fit); a pending gang of a
    more important job (preempt: same queue) or of a lending queue (reclaim: the victims' queue b borrows)."""
    free = {"n1": 8, "n2": 8, "n3": 8}
    names = sorted(free)
    pods: list[TaskInfo] = []
    groups = []
    victim_queue = "q1" if action == "preempt" else "b"
    turn = 0
    for g, (m, extra, gpu, ran) in enumerate(gangs):
        groups.append(podgroup("v", f"g{g}", victim_queue, m, phase=Q.RUNNING, priority=1))
        for i in range(m + extra):
            for k in range(3):
                n = names[(turn + k) % 3]
                if free[n] >= gpu:
                    free[n] -= gpu
                    pods.append(running("v", f"g{g}-{i}", f"g{g}", n, "1", "1Gi", gpu=gpu, started=1000.0 - ran))
                    break
            turn += 1
    m, gpu = job
    groups.append(podgroup("p", "job", "q1" if action == "preempt" else "a", m, priority=100))
    pods += [pod("p", f"job-{i}", "job", "1", "1Gi", gpu=gpu) for i in range(m)]
    configurations = {action: {"wholeGangs": True}} if whole else {}
    pol = policy(action, *TIERS, **configurations)
    queues = [queue("q1")] if action == "preempt" else [queue("a"), queue("b")]
    return snapshot(
        nodes=[node(n, "32", "128Gi", gpu=8) for n in names], queues=queues, podgroups=groups, pods=pods, policy=pol
    )


def _check(snap: Snapshot, action: str) -> None:
    result = run_session(snap, now=1000.0)
    gone = set(evicted(result))
    placed = pipelined(result)
    # every eviction has its beneficiary placed, and the beneficiary's gang reaches its minimum
    assert {e.preemptor for e in result.evictions} <= set(placed)
    if gone:
        assert len([t for t in placed if t.startswith("p/job-")]) >= snap.podgroups["p/job"].min_member
    # no gang is left below its minimum while holding resources: whole or gone
    for key, pg in snap.podgroups.items():
        if key == "p/job":
            continue
        mine = [t for t in snap.tasks.values() if t.podgroup == key and t.status in READY_STATUSES]
        if len(mine) < pg.min_member:
            continue  # below its minimum before the session (did not fit the nodes)
        left = [t for t in mine if t.uid not in gone]
        assert not left or len(left) >= pg.min_member, (action, key, sorted(gone))


@settings(max_examples=examples(80), deadline=None)
@given(victim_gangs, preemptor, st.sampled_from(["preempt", "reclaim"]))
def test_no_gang_is_broken_and_every_eviction_places_its_beneficiary(
    gangs: list[tuple[int, int, int, int]], job: tuple[int, int], action: str
) -> None:
    _check(_random_world(gangs, job, action, True), action)


@settings(max_examples=examples(30), deadline=None)
@given(victim_gangs, preemptor, st.sampled_from(["preempt", "reclaim"]))
def test_with_the_option_off_the_pod_by_pod_choice_is_unchanged(
    gangs: list[tuple[int, int, int, int]], job: tuple[int, int], action: str
) -> None:
    # the option written false decides exactly as the policy without it: Volcano's pod-by-pod choice (which the
    # golden corpus records; ``tests.support.corpus --check`` finds no difference), gangs broken by its tiers included
    snap = _random_world(gangs, job, action, False)
    explicit = snap.replace(policy=policy(action, *TIERS, **{action: {"wholeGangs": False}}))
    plain, same = run_session(snap, now=1000.0), run_session(explicit, now=1000.0)
    assert plain.evictions == same.evictions and plain.bindings == same.bindings


# -- no thrash: evictions are kept only with their beneficiary placed (issue 26 item 3) ------------------------------


def partial_room(whole: bool | None) -> Snapshot:
    """a's gang needs 3 pods of 3 cpu; b's borrowed pods on two 4-cpu nodes make room for only 2 of them. The gang
    plugin's job-pipelined vote is switched off, so the policy alone would keep the evictions of a partial gang."""
    tiers = (
        ["priority", {"name": "gang", "enableJobPipelined": False}, "conformance", "proportion"],
        ["overcommit", "drf", "predicates", "nodeorder"],
    )
    configurations = {"reclaim": {"wholeGangs": whole}} if whole is not None else {}
    return snapshot(
        nodes=[node("n1", "4", "16Gi"), node("n2", "4", "16Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("ns-b", "borrower", "b", 1, phase=Q.RUNNING), podgroup("ns-a", "job", "a", 3)],
        pods=[
            *(running("ns-b", f"borrower-{i}", "borrower", "n1" if i < 4 else "n2", "1", "1Gi") for i in range(8)),
            *(pod("ns-a", f"job-{i}", "job", "3", "1Gi") for i in range(3)),
        ],
        policy=policy("reclaim", *tiers, **configurations),
    )


def test_a_gang_beneficiary_below_its_minimum_keeps_no_eviction() -> None:
    # Volcano's switches decide without the option: pods of a gang of three are pipelined over evictions, fewer than
    # its minimum (they would hold nodes for a job that cannot run)
    off = run_session(partial_room(None), now=0.0)
    assert 0 < len(pipelined(off)) < 3 and evicted(off)
    # with wholeGangs the gang minimum is the action's own condition: nothing is evicted, nothing pipelined
    on = run_session(partial_room(True), now=0.0)
    assert evicted(on) == [] and pipelined(on) == {}
