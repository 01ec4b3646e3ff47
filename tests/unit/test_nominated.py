"""A pod pipelined by the last session keeps the room on its node (Kubernetes' nominated node): the next session
holds its request there against every other job until its own job's turn (issue 26, "no thrash": the room a
preemption freed was taken by a queue served first, and the preemptor evicted again)."""

from __future__ import annotations

import dataclasses

from engine.objects import PodGroupPhase, Snapshot, TaskInfo, TaskStatus
from engine.session.run import run_session
from tests.unit.test_session_support import bound, evicted, node, pipelined, pod, podgroup, policy, queue, snapshot

TIERS = (["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "nodeorder"])


def _nominee(name: str, nominated: str | None) -> TaskInfo:
    """Queue b's 4-cpu pod, pipelined to ``nominated`` by the last session (None: never pipelined)."""
    task = pod("ns-b", name, "nominee", "4", "1Gi")
    return dataclasses.replace(task, pipelined=nominated is not None, nominated=nominated)


def _world(nominated: str | None, *, b_queue: str = "b", a_priority: int = 0) -> Snapshot:
    # one 4-cpu node; queue a (first in queue order: equal shares, then by name) has a 4-cpu job too
    return snapshot(
        nodes=[node("n1", "4", "16Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[
            podgroup("ns-a", "first", "a", 1, priority=a_priority),
            podgroup("ns-b", "nominee", b_queue, 1, priority=10),
        ],
        pods=[pod("ns-a", "first-0", "first", "4", "1Gi"), _nominee("nominee-0", nominated)],
        policy=policy("enqueue, allocate, backfill", *TIERS),
    )


def test_the_nominated_room_goes_to_its_pod_even_when_another_queue_is_served_first() -> None:
    assert bound(run_session(_world(None), now=0.0)) == {"ns-a/first-0": "n1"}  # without a nomination
    assert bound(run_session(_world("n1"), now=0.0)) == {"ns-b/nominee-0": "n1"}


def test_a_nomination_holds_against_more_important_jobs_too() -> None:
    # unlike Kubernetes (equal or lower priorities only): letting more important jobs in fragmented GPU machines
    assert bound(run_session(_world("n1", a_priority=11), now=0.0)) == {"ns-b/nominee-0": "n1"}


def test_a_nomination_to_a_node_that_is_gone_or_not_ready_holds_nothing() -> None:
    assert bound(run_session(_world("n9"), now=0.0)) == {"ns-a/first-0": "n1"}
    snap = _world("n1")
    snap = snap.replace(nodes={"n1": dataclasses.replace(snap.nodes["n1"], ready=False)})
    assert bound(run_session(snap, now=0.0)) == {}


def test_a_job_that_takes_no_part_holds_nothing() -> None:
    # the nominee's queue does not exist: its job has no turn, so its room is free for queue a at once
    assert bound(run_session(_world("n1", b_queue="gone"), now=0.0)) == {"ns-a/first-0": "n1"}


def test_a_nomination_the_node_can_no_longer_hold_holds_nothing() -> None:
    # the nominee now asks 8 cpu of a 4-cpu node (the node shrank since): a stale nomination; queue a takes the node
    snap = _world("n1")
    big = dataclasses.replace(snap.tasks["ns-b/nominee-0"], request=pod("x", "y", "z", "8", "1Gi").request)
    assert bound(run_session(snap.with_tasks([big]), now=0.0)) == {"ns-a/first-0": "n1"}


def test_the_preemptor_keeps_what_its_evictions_freed_until_its_victims_are_gone() -> None:
    # session 1: queue b's high-priority pod evicts one of b's low pods on n1 and is pipelined there; session 2
    # (the victim gone): queue a's new job, served first, does not take the freed cpu; b's pod is bound there
    snap = snapshot(
        nodes=[node("n1", "2", "8Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[
            podgroup("ns-b", "low", "b", 1, phase=PodGroupPhase.RUNNING, priority=1),
            podgroup("ns-b", "high", "b", 1, priority=100),
        ],
        pods=[
            *(pod("ns-b", f"low-{i}", "low", "1", "1Gi", status=TaskStatus.RUNNING, node="n1", started=0.0)
              for i in range(2)),
            pod("ns-b", "high-0", "high", "1", "1Gi"),
        ],
        policy=policy("enqueue, allocate, backfill, preempt", *TIERS),
    )  # fmt: skip
    first = run_session(snap, now=10.0)
    assert pipelined(first) == {"ns-b/high-0": "n1"} and evicted(first) == ["ns-b/low-1"]
    # the victim is gone, a job of queue a has arrived, the pipelined pod is Pending again, nominated to n1
    tasks = {uid: t for uid, t in snap.tasks.items() if uid != "ns-b/low-1"}
    tasks["ns-b/high-0"] = dataclasses.replace(tasks["ns-b/high-0"], pipelined=True, nominated="n1")
    tasks["ns-a/first-0"] = pod("ns-a", "first-0", "first", "1", "1Gi")
    after = snap.replace(tasks=tasks, podgroups={**snap.podgroups, "ns-a/first": podgroup("ns-a", "first", "a", 1)})
    assert bound(run_session(after, now=20.0)) == {"ns-b/high-0": "n1"}
    # without the nomination queue a takes the cpu, and b's pod would evict again (the thrash this prevents)
    without = after.with_tasks([dataclasses.replace(tasks["ns-b/high-0"], pipelined=False, nominated=None)])
    assert bound(run_session(without, now=20.0)) == {"ns-a/first-0": "n1"}
