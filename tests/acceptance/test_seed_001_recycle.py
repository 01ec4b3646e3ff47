"""Seed 001 (multi-hierarchy elastic quota), "Min Guarantee and Preemption", through sessions and recycling.

"Suppose that the cluster has two quotas group A\\B. At t0 time, only quota groupA has job submission, it can
borrow from quota group B's resource, and the request and used of quota group are both 100. At t1 time, quota
groupB has job submission too, so the runtime of quota group A\\B is both 50. However, if quota groupA don't
return resource back, quota groupB can't assign any resource ... we will monitor the relationship between used
and runtime of each quota group ... If quota group's used continues to be greater than runtime, we will start the
forced recycling mechanism to kill several pods in the order of priority from low to high until the used is less
than or equal to runtime. If some pods in the quota group do not want to be recycled, we require such pods can
only use resource up to min."
"""

from __future__ import annotations

from engine.objects import PodGroupPhase, Snapshot
from engine.session.run import apply_result, run_recycle, run_session
from tests.unit.test_session_support import bound, group, node, plugin, pod, podgroup, policy, rl, snapshot

ELASTIC = policy(
    "enqueue, allocate, backfill",
    ["priority", "gang", "conformance"],
    ["drf", "predicates", "proportion", "nodeorder", plugin("elasticquota")],
)


def t0() -> Snapshot:
    """100 cpu; groups A and B, min 50 / max 100 each; only A has work: ten 10-cpu pods of rising priority."""
    return snapshot(
        nodes=[node(f"n{i}", "10", "64Gi") for i in range(10)],
        groups=[group("a", min=rl("50"), max=rl("100")), group("b", min=rl("50"), max=rl("100"))],
        podgroups=[podgroup("team-a", f"job-{i}", created=float(i)) for i in range(10)],
        pods=[pod("team-a", f"job-{i}-0", f"job-{i}", "10", None, priority=i, quota="a") for i in range(10)],
        policy=ELASTIC,
    )


def test_a_borrows_b_claims_recycling_returns_it() -> None:
    snap = t0()
    first = run_session(snap, now=0.0)
    assert len(bound(first)) == 10  # A borrows B's idle min: runtime 100
    assert first.quota_values["a"].runtime["cpu"] == 100_000
    snap = apply_result(snap, first, now=0.0)

    # t1: B submits five 10-cpu pods; runtimes become 50 / 50, but A holds the whole cluster
    snap = snap.with_podgroups([podgroup("team-b", "job", min_member=5, created=100.0)]).with_tasks(
        [pod("team-b", f"job-{i}", "job", "10", None, quota="b") for i in range(5)]
    )
    second = run_session(snap, now=100.0)
    assert bound(second) == {}
    values = second.quota_values
    assert (values["a"].runtime["cpu"], values["b"].runtime["cpu"], values["a"].used["cpu"]) == (
        50_000,
        50_000,
        100_000,
    )
    status = second.podgroups["team-b/job"]
    assert status.phase != PodGroupPhase.RUNNING
    assert "0 of minMember 5 pods placed" in status.message  # the (single) queue is full of A's pods

    # the monitor sees A over its runtime from t1 = 100 s; nothing before the delay ...
    evictions, since = run_recycle(snap, now=100.0, over_since={})
    assert evictions == [] and since == {"a": 100.0}
    evictions, since = run_recycle(snap, now=219.0, over_since=since)
    assert evictions == []
    # ... then the five least important of A's pods, lowest priority first
    evictions, since = run_recycle(snap, now=221.0, over_since=since)
    assert [e.task for e in evictions] == [f"team-a/job-{i}-0" for i in range(5)]
    assert since == {"a": 221.0}

    snap = snap.without_tasks(e.task for e in evictions)
    third = run_session(snap, now=222.0)
    assert sorted(bound(third)) == [f"team-b/job-{i}" for i in range(5)]
    assert third.podgroups["team-b/job"].phase == PodGroupPhase.RUNNING
    assert run_recycle(apply_result(snap, third, now=222.0), now=400.0, over_since=since) == ([], {})


def test_non_preemptible_pods_only_use_min() -> None:
    # "such pods can only use resource up to min": A's non-preemptible pods stop at 50 cpu, even with idle nodes
    snap = snapshot(
        nodes=[node(f"n{i}", "10", "64Gi") for i in range(10)],
        groups=[group("a", min=rl("50"), max=rl("100")), group("b", min=rl("50"), max=rl("100"))],
        podgroups=[podgroup("team-a", f"job-{i}", created=float(i)) for i in range(7)],
        pods=[
            pod("team-a", f"job-{i}-0", f"job-{i}", "10", None, quota="a", quota_preemptible=False) for i in range(7)
        ],
        policy=ELASTIC,
    )
    result = run_session(snap, now=0.0)
    assert len(bound(result)) == 5
    status = result.podgroups["team-a/job-5"]
    assert status.message == (
        "gang: 0 of minMember 1 tasks could be placed; quota group a min: insufficient cpu, requested 10, "
        "available 0 = 50 min − 50 used by non-preemptible pods (non-preemptible pods are held to the group's min)"
    )
    assert status.blocker is not None and (status.blocker.kind, status.blocker.limit) == ("quota", "min")
