"""The allocate action: Volcano's allocate_test.go cases, gang all-or-nothing, minTaskMember, pipelining,
predicates, node order, queue gates, namespace order and the reasons left on podgroups."""

from __future__ import annotations

from typing import Any

import pytest

from engine.objects import PodGroupPhase, Taint, Toleration
from engine.session.run import run_session
from tests.unit.test_session_support import (
    ST,
    VOLCANO_ALLOCATE,
    Q,
    bound,
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)

GANG_POLICY = policy("allocate", ["priority", "gang"], ["drf", "predicates", "proportion", "nodeorder"])


# -- Volcano actions/allocate/allocate_test.go (TestAllocate), same numbers, same expectations ----------------------

VOLCANO_CASES: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    (
        "prepredicate failed: node selector does not match",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 1)],
            "pods": [
                pod("c1", "p1", "pg1", "1", "1G", role="master", selector={"nodeRole": "master"}),
                pod("c1", "p2", "pg1", "1", "1G", role="worker", selector={"nodeRole": "worker"}),
            ],
            "nodes": [node("n1", "2", "4Gi", pods=10, labels={"nodeRole": "worker"})],
            "queues": [queue("c1")],
        },
        {"c1/p2": "n1"},
    ),
    (
        "prepredicate failed and tasks are not used up, continue on until min member meet",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 2, min_task_member={"master": 1, "worker": 1})],
            "pods": [
                pod("c1", "p0", "pg1", "1", "1G", role="master", selector={"nodeRole": "master"}),
                pod("c1", "p1", "pg1", "1", "1G", role="master", selector={"nodeRole": "master"}),
                pod("c1", "p2", "pg1", "1", "1G", role="worker", selector={"nodeRole": "worker"}),
                pod("c1", "p3", "pg1", "1", "1G", role="worker", selector={"nodeRole": "worker"}),
            ],
            "nodes": [
                node("n1", "1", "2Gi", pods=10, labels={"nodeRole": "master"}),
                node("n2", "1", "2Gi", pods=10, labels={"nodeRole": "worker"}),
            ],
            "queues": [queue("c1")],
        },
        {"c1/p0": "n1", "c1/p2": "n2"},
    ),
    (
        "master's min member can not be allocated, break from allocating",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 2, min_task_member={"master": 2, "worker": 0})],
            "pods": [
                pod("c1", "p0", "pg1", "1", "1G", role="master", selector={"nodeRole": "master"}),
                pod("c1", "p1", "pg1", "1", "1G", role="master", selector={"nodeRole": "master"}),
                pod("c1", "p2", "pg1", "1", "1G", role="worker", selector={"nodeRole": "worker"}),
                pod("c1", "p3", "pg1", "1", "1G", role="worker", selector={"nodeRole": "worker"}),
            ],
            "nodes": [
                node("n1", "1", "2Gi", pods=10, labels={"nodeRole": "master"}),
                node("n2", "2", "2Gi", pods=10, labels={"nodeRole": "worker"}),
            ],
            "queues": [queue("c1")],
        },
        {},
    ),
    (
        "one Job with two Pods on one node",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 0)],
            "pods": [pod("c1", "p1", "pg1", "1", "1G"), pod("c1", "p2", "pg1", "1", "1G")],
            "nodes": [node("n1", "2", "4Gi", pods=10)],
            "queues": [queue("c1")],
        },
        {"c1/p1": "n1", "c1/p2": "n1"},
    ),
    (
        "two Jobs on one node",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 0), podgroup("c2", "pg2", "c2", 0)],
            "pods": [
                pod("c1", "pg1-p-1", "pg1", "1", "1G"),
                pod("c1", "pg1-p-2", "pg1", "1", "1G"),
                pod("c2", "pg2-p-1", "pg2", "1", "1G"),
                pod("c2", "pg2-p-2", "pg2", "1", "1G"),
            ],
            "nodes": [node("n1", "2", "4G", pods=10)],
            "queues": [queue("c1"), queue("c2")],
        },
        {"c2/pg2-p-1": "n1", "c1/pg1-p-1": "n1"},
    ),
    (
        "high priority queue should not block others",
        {
            "podgroups": [podgroup("c1", "pg1", "c1", 0), podgroup("c1", "pg2", "c2", 0)],
            "pods": [pod("c1", "p1", "pg1", "3", "1G"), pod("c1", "p2", "pg2", "1", "1G")],
            "nodes": [node("n1", "2", "4G", pods=10)],
            "queues": [queue("c1"), queue("c2")],
        },
        {"c1/p2": "n1"},
    ),
]


@pytest.mark.parametrize(("name", "objects", "expected"), VOLCANO_CASES, ids=[c[0] for c in VOLCANO_CASES])
def test_volcano_allocate_cases(name: str, objects: dict[str, Any], expected: dict[str, str]) -> None:
    result = run_session(snapshot(policy=VOLCANO_ALLOCATE, **objects), now=0.0)
    assert bound(result) == expected
    assert not result.evictions


# -- gang ------------------------------------------------------------------------------------------------------------


def test_gang_that_cannot_reach_min_member_places_nothing_and_says_why() -> None:
    # 3 nodes of 3 cpu: each takes one 2-cpu pod of the gang, the fourth does not fit anywhere
    snap = snapshot(
        nodes=[node(f"n{i}", "3", "8Gi") for i in range(1, 4)],
        podgroups=[
            podgroup("ns", "big", "default", 4, created=0.0),
            podgroup("ns", "small", "default", 1, created=1.0),
        ],
        pods=[*(pod("ns", f"big-{i}", "big", "2", "1Gi") for i in range(4)), pod("ns", "small-0", "small", "2", "1Gi")],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    placed = bound(result)
    assert not any(uid.startswith("ns/big-") for uid in placed)  # all or nothing
    assert placed == {"ns/small-0": "n1"}  # the discarded statement gave every node back
    status = result.podgroups["ns/big"]
    assert status.phase == PodGroupPhase.INQUEUE
    assert status.reason == "NotEnoughResources"
    assert (
        status.message
        == "gang: 3 of minMember 4 tasks could be placed; 1 task needs cpu 2, the largest idle node has 1"
    )
    assert status.blocker is not None
    assert (status.blocker.kind, status.blocker.resource, status.blocker.requested, status.blocker.available) == (
        "cluster",
        "cpu",
        2000,
        1000,
    )
    assert result.podgroups["ns/small"].phase == PodGroupPhase.RUNNING


def test_gang_is_placed_whole_when_it_fits() -> None:
    snap = snapshot(
        nodes=[node(f"n{i}", "2", "8Gi") for i in range(1, 5)],
        podgroups=[podgroup("ns", "big", "default", 4)],
        pods=[pod("ns", f"big-{i}", "big", "2", "1Gi") for i in range(4)],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert sorted(bound(result).values()) == ["n1", "n2", "n3", "n4"]
    assert result.podgroups["ns/big"].phase == PodGroupPhase.RUNNING


def test_min_task_member_role_that_cannot_be_met_places_nothing() -> None:
    # minMember 3 = ps 1 + worker 2; only one worker node
    snap = snapshot(
        nodes=[node("ps-node", "4", "8Gi", labels={"role": "ps"}), node("w-node", "1", "8Gi", labels={"role": "w"})],
        podgroups=[podgroup("ns", "tf", "default", 3, min_task_member={"ps": 1, "worker": 2})],
        pods=[
            pod("ns", "tf-ps-0", "tf", "1", "1Gi", role="ps", selector={"role": "ps"}),
            pod("ns", "tf-worker-0", "tf", "1", "1Gi", role="worker", selector={"role": "w"}),
            pod("ns", "tf-worker-1", "tf", "1", "1Gi", role="worker", selector={"role": "w"}),
        ],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {}
    assert result.podgroups["ns/tf"].reason == "NotEnoughResources"


def test_min_task_member_missing_pods_make_the_job_invalid() -> None:
    snap = snapshot(
        nodes=[node("n1", "8", "8Gi")],
        podgroups=[podgroup("ns", "tf", "default", 2, min_task_member={"ps": 1, "worker": 1})],
        pods=[pod("ns", "tf-worker-0", "tf", role="worker"), pod("ns", "tf-worker-1", "tf", role="worker")],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {}
    status = result.podgroups["ns/tf"]
    assert status.reason == "NotEnoughPods"
    assert "minTaskMember" in status.message and "ps 1" in status.message


def test_gang_with_fewer_pods_than_min_member_waits_for_its_pods() -> None:
    snap = snapshot(
        nodes=[node("n1", "8", "8Gi")],
        podgroups=[podgroup("ns", "pg", "default", 3)],
        pods=[pod("ns", "p-0", "pg")],
        policy=GANG_POLICY,
    )
    status = run_session(snap, now=0.0).podgroups["ns/pg"]
    assert status.reason == "NotEnoughPods"
    assert (
        status.message
        == "gang ns/pg minMember: 1 of minMember 3 pods exist (pods are created once the podgroup is Inqueue)"
    )


def test_elastic_job_beyond_min_member_takes_the_rest_one_by_one() -> None:
    snap = snapshot(
        nodes=[node("n1", "4", "8Gi")],
        podgroups=[podgroup("ns", "pg", "default", 2)],
        pods=[pod("ns", f"p-{i}", "pg") for i in range(6)],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert sorted(bound(result)) == ["ns/p-0", "ns/p-1", "ns/p-2", "ns/p-3"]
    assert result.podgroups["ns/pg"].phase == PodGroupPhase.RUNNING


def test_pipelined_gang_keeps_its_reservation_without_decisions() -> None:
    # n2's only pod is being released: the second task can only be pipelined there; the gang is pipelined,
    # not ready, so the statement is kept (Volcano) and nothing is bound in this session.
    snap = snapshot(
        nodes=[node("n1", "1", "4Gi"), node("n2", "1", "4Gi")],
        podgroups=[podgroup("ns", "old", "default", 1, phase=Q.RUNNING), podgroup("ns", "pg", "default", 2)],
        pods=[
            pod("ns", "old-0", "old", "1", "1Gi", status=ST.RELEASING, node="n2"),
            pod("ns", "p-0", "pg", "1", "1Gi"),
            pod("ns", "p-1", "pg", "1", "1Gi"),
        ],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert result.bindings == []
    status = result.podgroups["ns/pg"]
    assert status.reason == "Pipelined"
    assert status.message.startswith("1 placed and 1 pipelined of minMember 2")
    assert "n2" in status.message


# -- order -------------------------------------------------------------------------------------------------------------


def test_higher_priority_job_goes_first_within_a_queue() -> None:
    snap = snapshot(
        nodes=[node("n1", "1", "4Gi")],
        podgroups=[podgroup("ns", "low", created=0.0, priority=1), podgroup("ns", "high", created=5.0, priority=10)],
        pods=[pod("ns", "low-0", "low"), pod("ns", "high-0", "high")],
        policy=GANG_POLICY,
    )
    assert bound(run_session(snap, now=0.0)) == {"ns/high-0": "n1"}


def test_first_come_first_served_among_equal_jobs() -> None:
    snap = snapshot(
        nodes=[node("n1", "1", "4Gi")],
        podgroups=[podgroup("ns", "b", created=2.0), podgroup("ns", "a", created=3.0)],
        pods=[pod("ns", "a-0", "a"), pod("ns", "b-0", "b")],
        policy=GANG_POLICY,
    )
    assert bound(run_session(snap, now=0.0)) == {"ns/b-0": "n1"}


# -- predicates and node order ---------------------------------------------------------------------------------------


def test_predicates_taints_cordon_and_readiness() -> None:
    taint = Taint("dedicated", "gpu", "NoSchedule")
    soft = Taint("soft", "x", "PreferNoSchedule")
    snap = snapshot(
        nodes=[
            node("a-cordoned", "8", "8Gi", unschedulable=True),
            node("b-not-ready", "8", "8Gi", ready=False),
            node("c-tainted", "8", "8Gi", taints=[taint]),
            node("d-soft", "1", "8Gi", taints=[soft]),
        ],
        podgroups=[podgroup("ns", "plain", created=0.0), podgroup("ns", "tolerant", created=1.0)],
        pods=[
            pod("ns", "plain-0", "plain"),
            pod("ns", "plain-1", "plain"),
            pod("ns", "tolerant-0", "tolerant", tolerations=[Toleration(key="dedicated", operator="Exists")]),
        ],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    placed = bound(result)
    assert placed["ns/plain-0"] == "d-soft"  # PreferNoSchedule never blocks
    assert "ns/plain-1" not in placed  # d-soft is full; the others are cordoned, not ready or tainted
    assert placed["ns/tolerant-0"] == "c-tainted"


def test_pod_count_of_a_node_is_a_resource() -> None:
    snap = snapshot(
        nodes=[node("n1", "8", "8Gi", pods=2)],
        podgroups=[podgroup("ns", "pg", "default", 0)],
        pods=[pod("ns", f"p-{i}", "pg", "100m", "1Mi") for i in range(3)],
        policy=GANG_POLICY,
    )
    assert len(bound(run_session(snap, now=0.0))) == 2


def test_nodeorder_spreads_and_binpack_packs() -> None:
    objects: dict[str, Any] = {
        "nodes": [node("n1", "4", "8Gi"), node("n2", "4", "8Gi")],
        "podgroups": [podgroup("ns", "pg", "default", 0)],
        "pods": [pod("ns", "p-0", "pg"), pod("ns", "p-1", "pg")],
    }
    spread = run_session(snapshot(policy=policy("allocate", ["gang", "nodeorder"]), **objects), now=0.0)
    assert bound(spread) == {"ns/p-0": "n1", "ns/p-1": "n2"}
    packed = run_session(snapshot(policy=policy("allocate", ["gang", "binpack"]), **objects), now=0.0)
    assert bound(packed) == {"ns/p-0": "n1", "ns/p-1": "n1"}


def test_unschedulable_everywhere_names_the_predicates() -> None:
    snap = snapshot(
        nodes=[node("n1", "8", "8Gi", labels={"zone": "a"})],
        podgroups=[podgroup("ns", "pg")],
        pods=[pod("ns", "p-0", "pg", selector={"zone": "b"})],
        policy=GANG_POLICY,
    )
    status = run_session(snap, now=0.0).podgroups["ns/pg"]
    assert status.reason == "NotEnoughResources"
    assert "no node passes the predicates" in status.message and "0 of 1 ready nodes" in status.message


# -- queue gates ----------------------------------------------------------------------------------------------------


def test_proportion_caps_a_queue_at_its_deserved_and_says_so() -> None:
    # two queues of weight 1 on 4 cpu: each deserves 2; q1 asks 3 single-pod jobs
    snap = snapshot(
        nodes=[node("n1", "4", "16Gi")],
        queues=[queue("q1"), queue("q2")],
        podgroups=[
            *(podgroup("ns", f"a{i}", "q1", created=float(i)) for i in range(3)),
            *(podgroup("ns", f"b{i}", "q2", created=float(i)) for i in range(2)),
        ],
        pods=[*(pod("ns", f"a{i}-0", f"a{i}") for i in range(3)), *(pod("ns", f"b{i}-0", f"b{i}") for i in range(2))],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert sorted(bound(result)) == ["ns/a0-0", "ns/a1-0", "ns/b0-0", "ns/b1-0"]
    status = result.podgroups["ns/a2"]
    assert status.blocker is not None and status.blocker.kind == "queue" and status.blocker.name == "q1"
    assert "queue q1" in status.message and "deserved" in status.message


def test_capacity_lets_a_queue_borrow_up_to_its_real_capability() -> None:
    cap_policy = policy("allocate", ["priority", "gang"], ["drf", "predicates", "capacity", "nodeorder"])
    snap = snapshot(
        nodes=[node("n1", "4", "16Gi")],
        queues=[queue("q1", deserved=rl("1", "1Gi"), capability=rl("3", "16Gi")), queue("q2", deserved=rl("3", "8Gi"))],
        podgroups=[podgroup("ns", "a", "q1", 0)],
        pods=[pod("ns", f"a-{i}", "a") for i in range(4)],
        policy=cap_policy,
    )
    result = run_session(snap, now=0.0)
    assert len(bound(result)) == 3  # capability 3 cpu, above its deserved of 1
    status = result.podgroups["ns/a"]
    assert status.phase == PodGroupPhase.RUNNING


def test_without_enqueue_action_pending_podgroups_are_promoted() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "4Gi")],
        podgroups=[podgroup("ns", "pg", phase=Q.PENDING)],
        pods=[pod("ns", "p-0", "pg")],
        policy=GANG_POLICY,
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {"ns/p-0": "n1"}
    assert result.podgroups["ns/pg"].phase == PodGroupPhase.RUNNING


def test_with_enqueue_action_pending_podgroups_wait_for_it() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "4Gi")],
        podgroups=[podgroup("ns", "pg", phase=Q.PENDING)],
        pods=[pod("ns", "p-0", "pg")],
        policy=policy("enqueue, allocate", ["gang"], ["proportion", "predicates"]),
    )
    assert bound(run_session(snap, now=0.0)) == {"ns/p-0": "n1"}  # enqueued first, then allocated
    late = snapshot(
        nodes=[node("n1", "2", "4Gi")],
        podgroups=[podgroup("ns", "pg", phase=Q.PENDING)],
        pods=[pod("ns", "p-0", "pg")],
        policy=policy("allocate, enqueue", ["gang"], ["proportion", "predicates"]),
    )
    result = run_session(late, now=0.0)
    assert result.bindings == []
    assert result.podgroups["ns/pg"].phase == PodGroupPhase.INQUEUE


def test_overused_queue_is_skipped_with_its_numbers() -> None:
    snap = snapshot(
        nodes=[node("n1", "4", "16Gi")],
        queues=[queue("q1"), queue("q2")],
        podgroups=[
            podgroup("ns", "run", "q1", phase=Q.RUNNING),
            podgroup("ns", "more", "q1"),
            podgroup("ns", "b", "q2"),
        ],
        pods=[
            running("ns", "run-0", "run", "n1", "2", None),
            running("ns", "run-1", "run", "n1", "2", None),
            pod("ns", "more-0", "more", "1", None),
            pod("ns", "b-0", "b", "1", None),
        ],
        policy=policy("allocate", ["gang"], ["proportion", "predicates"]),
    )
    result = run_session(snap, now=0.0)
    assert bound(result) == {}  # q2's pod: the node is full; q1 (deserved 3 of 4 cpu) holds 4
    status = result.podgroups["ns/more"]
    assert status.reason == "QueueOverused"
    assert "queue q1 deserved: overused" in status.message and "cpu 4 of 3" in status.message


def test_switching_a_callback_off_removes_it() -> None:
    # q2 (weight 3) asks a lot but its pods fit no node: q1 (weight 1) deserves 1 cpu of 4
    objects: dict[str, Any] = {
        "nodes": [node("n1", "4", "16Gi")],
        "queues": [queue("q1"), queue("q2", 3)],
        "podgroups": [podgroup("ns", "a", "q1", 0), podgroup("ns", "b", "q2", 0)],
        "pods": [
            *(pod("ns", f"a-{i}", "a", "1", None) for i in range(4)),
            *(pod("ns", f"b-{i}", "b", "1", None, selector={"zone": "x"}) for i in range(4)),
        ],
    }
    on = run_session(snapshot(policy=policy("allocate", ["gang", "proportion", "predicates"]), **objects), now=0.0)
    assert sorted(bound(on)) == ["ns/a-0"]
    no_gate = policy("allocate", ["gang", plugin("proportion", enabledAllocatable=False), "predicates"])
    assert sorted(bound(run_session(snapshot(policy=no_gate, **objects), now=0.0))) == ["ns/a-0"]  # still overused
    off_policy = policy(
        "allocate", ["gang", plugin("proportion", enabledAllocatable=False, enabledOverused=False), "predicates"]
    )
    off = run_session(snapshot(policy=off_policy, **objects), now=0.0)
    assert sorted(bound(off)) == ["ns/a-0", "ns/a-1", "ns/a-2", "ns/a-3"]
