"""A suspended podgroup (``PodGroupInfo.suspended``, a person's job action) is neither admitted nor placed: it stays
Pending with reason Suspended, with or without the enqueue action, and the same snapshot unsuspended is placed; a
manifest's ``fairway.io/suspended`` annotation carries it into ``fairway simulate``; the job's manifests read back to
the same podgroup and pods."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from engine.manifests import load_manifests
from engine.manifests.export import job_manifests
from engine.objects import PodGroupPhase
from engine.session.run import run_session
from tests.unit.test_session_support import ST, Q, node, pod, podgroup, policy, queue, rl, snapshot

POLICIES = {
    "enqueue, allocate": policy(
        "enqueue, allocate, backfill", ["priority", "gang"], ["drf", "proportion", "predicates"]
    ),
    "allocate only": policy("allocate, backfill", ["priority", "gang"], ["drf", "proportion", "predicates"]),
}


def _snap(suspended: bool, phase: PodGroupPhase = Q.PENDING) -> object:
    pg = replace(podgroup("ns", "train", "q1", 2, phase=phase, min_resources=rl("2", "2Gi")), suspended=suspended)
    return snapshot(
        nodes=[node("n1", "8", "16Gi")],
        queues=[queue("q1", capability=rl("8", "16Gi"))],
        podgroups=[pg],
        pods=[pod("ns", "train-0", "train"), pod("ns", "train-1", "train")],
    )


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_a_suspended_podgroup_is_neither_admitted_nor_placed(name: str) -> None:
    held = run_session(_snap(True), now=100.0, policy=POLICIES[name])  # type: ignore[arg-type]
    assert held.bindings == []
    status = held.podgroups["ns/train"]
    assert (status.phase, status.reason) == (Q.PENDING, "Suspended")
    assert "until it is resumed" in status.message and "2 pending" in status.message
    assert status.blocker is not None and status.blocker.limit == "suspended"
    free = run_session(_snap(False), now=100.0, policy=POLICIES[name])  # type: ignore[arg-type]
    assert sorted(b.task for b in free.bindings) == ["ns/train-0", "ns/train-1"]


def test_a_suspended_podgroup_read_inqueue_gives_its_reservation_back() -> None:
    """A row still Inqueue (suspended between two sessions) is Pending to the session: it reserves nothing, so a
    second job that needs the whole queue is admitted and placed."""
    pg = replace(podgroup("ns", "held", "q1", 1, phase=Q.INQUEUE, min_resources=rl("4", "4Gi")), suspended=True)
    other = podgroup("ns", "other", "q1", 1, phase=Q.PENDING, min_resources=rl("4", "4Gi"), created=1.0)
    snap = snapshot(
        nodes=[node("n1", "4", "4Gi")],
        queues=[queue("q1", capability=rl("4", "4Gi"))],
        podgroups=[pg, other],
        pods=[pod("ns", "held-0", "held", "4", "4Gi"), pod("ns", "other-0", "other", "4", "4Gi")],
    )
    result = run_session(snap, now=5.0, policy=POLICIES["enqueue, allocate"])
    assert [b.task for b in result.bindings] == ["ns/other-0"]
    assert result.podgroups["ns/held"].reason == "Suspended"


def test_job_manifests_read_back_with_the_suspension() -> None:
    pg = replace(
        podgroup("ns", "train", "q1", 2, phase=Q.RUNNING, min_resources=rl("2", "2Gi"), priority=7, created=10.0),
        suspended=True,
    )
    tasks = [
        pod("ns", "train-0", "train", status=ST.RUNNING, node="n1", priority=7),
        pod("ns", "train-1", "train", priority=7),
    ]
    docs = job_manifests(pg, tasks, None)
    assert [d["kind"] for d in docs] == ["PodGroup", "Pod", "Pod"]
    assert docs[0]["metadata"]["annotations"] == {"fairway.io/priority": "7", "fairway.io/suspended": "true"}
    snap = load_manifests([("job.yaml", yaml.safe_dump_all(docs))]).snapshot
    back = snap.podgroups["ns/train"]
    assert (back.suspended, back.queue, back.min_member, back.priority) == (True, "q1", 2, 7)
    assert back.min_resources == pg.min_resources
    assert {t.name: (t.status, t.node) for t in snap.tasks.values()} == {
        "train-0": (ST.RUNNING, "n1"),
        "train-1": (ST.PENDING, None),
    }
    # without the annotation, the podgroup is not suspended
    docs[0]["metadata"]["annotations"].pop("fairway.io/suspended")
    again = load_manifests([("job.yaml", yaml.safe_dump_all(docs))]).snapshot
    assert again.podgroups["ns/train"].suspended is False
