"""Seed 003 (delay pod creation): the enqueue action and the Pending / Inqueue / Running state table.

| From    | To      | Reason                                        | test                                  |
| Pending | Inqueue | minResources fit the idle resources and quota | test_pending_to_inqueue_*             |
| Inqueue | Pending | not enough resources anymore                  | test_inqueue_back_to_pending_*        |
| Inqueue | Running | every pod of minMember is running             | test_inqueue_to_running_*             |

"enqueue will go through all PodGroup (by creation timestamp)": FCFS within a queue.
"""

from __future__ import annotations

from typing import Any

from engine.objects import NamespaceInfo, PodGroupPhase
from engine.policy.policy import Policy
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    ST,
    Q,
    bound,
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    snapshot,
)


def enqueue_policy(factor: float = 1.0, actions: str = "enqueue") -> Policy:
    return policy(
        actions,
        ["priority", "gang", "conformance"],
        [plugin("overcommit", arguments={"overcommit-factor": factor}), "drf", "predicates", "proportion", "nodeorder"],
    )


def test_pending_to_inqueue_first_come_first_served() -> None:
    # 10 cpu, factor 1.0: two podgroups of 6 cpu each; the earlier one is admitted, the later one waits
    snap = snapshot(
        nodes=[node("n1", "10", "64Gi")],
        podgroups=[
            podgroup("ns", "late", min_resources=rl("6"), phase=Q.PENDING, created=20.0),
            podgroup("ns", "early", min_resources=rl("6"), phase=Q.PENDING, created=10.0),
        ],
        policy=enqueue_policy(),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["ns/early"].phase == PodGroupPhase.INQUEUE
    late = result.podgroups["ns/late"]
    assert late.phase == PodGroupPhase.PENDING
    assert late.reason == "Unschedulable"
    assert late.message.startswith(
        "not admitted (Pending -> Inqueue): cluster overcommit: insufficient cpu, requested 6, available 4"
    )
    assert late.blocker is not None
    assert (late.blocker.kind, late.blocker.limit, late.blocker.requested, late.blocker.available) == (
        "cluster",
        "overcommit",
        6000,
        4000,
    )


def test_pending_to_inqueue_counts_the_overcommit_factor() -> None:
    # two queues (each may use the whole 10 cpu): with the factor 1.2, 12 cpu worth of admissions fit
    objects = {
        "nodes": [node("n1", "10", "64Gi")],
        "queues": [queue("q1"), queue("q2")],
        "podgroups": [
            podgroup("ns", "a", "q1", min_resources=rl("6"), phase=Q.PENDING, created=1.0),
            podgroup("ns", "b", "q2", min_resources=rl("6"), phase=Q.PENDING, created=2.0),
        ],
    }
    result = run_session(snapshot(policy=enqueue_policy(1.2), **objects), now=0.0)  # type: ignore[arg-type]
    assert {k: s.phase for k, s in result.podgroups.items()} == {"ns/a": Q.INQUEUE, "ns/b": Q.INQUEUE}
    exact = run_session(snapshot(policy=enqueue_policy(1.0), **objects), now=0.0)  # type: ignore[arg-type]
    assert {k: s.phase for k, s in exact.podgroups.items()} == {"ns/a": Q.INQUEUE, "ns/b": Q.PENDING}


def test_pending_stays_when_the_queue_quota_refuses() -> None:
    snap = snapshot(
        nodes=[node("n1", "10", "64Gi")],
        queues=[queue("q1", capability=rl(None, "2Gi"))],
        podgroups=[podgroup("ns", "pg", "q1", min_resources=rl("1", "3Gi"), phase=Q.PENDING)],
        policy=enqueue_policy(),
    )
    status = run_session(snap, now=0.0).podgroups["ns/pg"]
    assert status.phase == PodGroupPhase.PENDING
    assert status.message == (
        "not admitted (Pending -> Inqueue): queue q1 realCapability: insufficient memory, requested 3Gi, available 2Gi"
        " = 2Gi capability"
    )
    assert status.blocker is not None and (status.blocker.kind, status.blocker.name) == ("queue", "q1")


def test_pending_stays_when_the_namespace_quota_refuses() -> None:
    snap = snapshot(
        nodes=[node("n1", "10", "64Gi")],
        namespaces=[NamespaceInfo("ns", hard=rl("4"))],
        podgroups=[
            podgroup("ns", "a", min_resources=rl("3"), phase=Q.PENDING, created=1.0),
            podgroup("ns", "b", min_resources=rl("3"), phase=Q.PENDING, created=2.0),
        ],
        policy=enqueue_policy(),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["ns/a"].phase == PodGroupPhase.INQUEUE
    status = result.podgroups["ns/b"]
    assert status.phase == PodGroupPhase.PENDING
    assert "namespace ns hard: insufficient cpu, requested 3, available 1" in status.message
    assert status.blocker is not None and status.blocker.kind == "namespace"


def test_the_namespace_quota_counts_amounts_not_the_pods_count() -> None:
    """The gate compares amounts (``sorted_resources``: ``pods`` is a count, left out): a minimum naming 3 pods in a
    namespace whose ResourceQuota allows 2 is not refused here (Kubernetes' own ResourceQuota admission refuses the
    third pod when it is created), while the same minimum over the cpu hard limit is; the gate's quick answer and
    its refusal loop agree on both."""

    def status(hard_cpu: str) -> Any:
        snap = snapshot(
            nodes=[node("n1", "10", "64Gi")],
            namespaces=[NamespaceInfo("ns", hard=rl(hard_cpu, pods=2))],
            podgroups=[podgroup("ns", "a", min_resources=rl("3", pods=3), phase=Q.PENDING, created=1.0)],
            policy=enqueue_policy(),
        )
        return run_session(snap, now=0.0).podgroups["ns/a"]

    assert status("8").phase == PodGroupPhase.INQUEUE
    refused = status("2")
    assert refused.phase == PodGroupPhase.PENDING
    assert "namespace ns hard: insufficient cpu, requested 3, available 2" in refused.message


def test_podgroup_without_min_resources_is_admitted_at_once() -> None:
    snap = snapshot(
        nodes=[node("n1", "1", "1Gi")],
        podgroups=[podgroup("ns", "pg", phase=Q.PENDING)],
        policy=enqueue_policy(),
    )
    assert run_session(snap, now=0.0).podgroups["ns/pg"].phase == PodGroupPhase.INQUEUE


def test_inqueue_back_to_pending_when_the_cluster_shrinks() -> None:
    # two Inqueue podgroups reserved 4 cpu each when the cluster had 8; a node left and 6 cpu remain: the least
    # important (the later one) goes back to Pending, the earlier one keeps its place
    snap = snapshot(
        nodes=[node("n1", "6", "64Gi")],
        podgroups=[
            podgroup("ns", "first", min_resources=rl("4"), phase=Q.INQUEUE, created=1.0),
            podgroup("ns", "second", min_resources=rl("4"), phase=Q.INQUEUE, created=2.0),
        ],
        policy=enqueue_policy(),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["ns/first"].phase == PodGroupPhase.INQUEUE
    back = result.podgroups["ns/second"]
    assert back.phase == PodGroupPhase.PENDING
    assert back.reason == "Requeued"
    assert back.message.startswith("back to Pending, its reservation can no longer be met: cluster overcommit")
    assert "requested 4, available 2" in back.message


def test_inqueue_back_to_pending_when_the_queue_capability_shrinks() -> None:
    snap = snapshot(
        nodes=[node("n1", "16", "64Gi")],
        queues=[queue("q1", capability=rl("4"))],
        podgroups=[
            podgroup("ns", "first", "q1", min_resources=rl("3"), phase=Q.INQUEUE, created=1.0),
            podgroup("ns", "second", "q1", min_resources=rl("3"), phase=Q.INQUEUE, created=2.0),
        ],
        policy=enqueue_policy(),
    )
    result = run_session(snap, now=0.0)
    assert result.podgroups["ns/first"].phase == PodGroupPhase.INQUEUE
    back = result.podgroups["ns/second"]
    assert back.phase == PodGroupPhase.PENDING
    assert "queue q1 realCapability: insufficient cpu, requested 3, available 1" in back.message


def test_inqueue_podgroup_with_running_pods_is_never_sent_back() -> None:
    snap = snapshot(
        nodes=[node("n1", "2", "64Gi")],
        podgroups=[podgroup("ns", "pg", min_member=2, min_resources=rl("4"), phase=Q.INQUEUE)],
        pods=[pod("ns", "pg-0", "pg"), pod("ns", "pg-1", "pg")],
        policy=enqueue_policy(),
    )
    # nothing placed yet: it goes back; with one pod running it keeps its place (its phase is then Volcano's
    # Unknown: a pod runs but the gang is not ready)
    assert run_session(snap, now=0.0).podgroups["ns/pg"].phase == PodGroupPhase.PENDING
    running_snap = snap.with_tasks([pod("ns", "pg-0", "pg", status=ST.RUNNING, node="n1")])
    status = run_session(running_snap, now=0.0).podgroups["ns/pg"]
    assert status.phase == PodGroupPhase.UNKNOWN
    assert status.reason != "Requeued"


def test_inqueue_to_running_over_two_sessions() -> None:
    # session 1: enqueue admits the podgroup and allocate binds its 3 pods; applied, they run: Running
    snap = snapshot(
        nodes=[node("n1", "4", "64Gi")],
        podgroups=[podgroup("ns", "pg", min_member=3, min_resources=rl("3"), phase=Q.PENDING)],
        pods=[pod("ns", f"pg-{i}", "pg", "1", None) for i in range(3)],
        policy=enqueue_policy(actions="enqueue, allocate, backfill"),
    )
    first = run_session(snap, now=0.0)
    assert len(bound(first)) == 3
    after = apply_result(snap, first, now=0.0)
    assert after.podgroups["ns/pg"].phase == PodGroupPhase.RUNNING
    second = run_session(after, now=1.0)
    assert second.podgroups["ns/pg"].phase == PodGroupPhase.RUNNING and second.bindings == []


def test_delayed_pod_creation_pods_appear_after_inqueue() -> None:
    # the controller creates pods only once the podgroup is Inqueue: session 1 admits it (no pods yet), the pods
    # are created, session 2 places them
    snap = snapshot(
        nodes=[node("n1", "4", "64Gi")],
        podgroups=[podgroup("ns", "pg", min_member=2, min_resources=rl("2"), phase=Q.PENDING)],
        policy=enqueue_policy(actions="enqueue, allocate"),
    )
    first = run_session(snap, now=0.0)
    status = first.podgroups["ns/pg"]
    assert status.phase == PodGroupPhase.INQUEUE
    assert status.reason == "NotEnoughPods" and "0 of minMember 2 pods exist" in status.message
    created = apply_result(snap, first, now=0.0).with_tasks([pod("ns", f"pg-{i}", "pg", "1", None) for i in range(2)])
    second = run_session(created, now=1.0)
    assert sorted(bound(second)) == ["ns/pg-0", "ns/pg-1"]
