"""The elasticquota plugin in a session: the runtime gate (and max when enableRuntimeQuota is off), the min
gate of non-preemptible pods, the optional parent check, and preemption only inside one quota group."""

from __future__ import annotations

from typing import Any

from engine.objects import Snapshot
from engine.session.run import run_session
from tests.unit.test_session_support import (
    Q,
    bound,
    evicted,
    group,
    node,
    pipelined,
    plugin,
    pod,
    podgroup,
    policy,
    rl,
    running,
    snapshot,
)


def eq_policy(actions: str = "allocate", **arguments: Any) -> Any:
    return policy(
        actions,
        ["priority", "gang", "conformance"],
        ["drf", "predicates", plugin("elasticquota", arguments=arguments)],
    )


def two_groups(a_max: str = "8", **arguments: Any) -> Snapshot:
    """8 cpu; a (min 4) asks 6 one-cpu pods; b (min 4) asks 4 that fit no node, so a's runtime is 4."""
    return snapshot(
        nodes=[node("n1", "8", "64Gi")],
        groups=[group("a", min=rl("4"), max=rl(a_max)), group("b", min=rl("4"), max=rl("8"))],
        podgroups=[podgroup("ns", "a", "default", 0), podgroup("ns", "b", "default", 0)],
        pods=[
            *(pod("ns", f"a-{i}", "a", "1", None, quota="a") for i in range(6)),
            *(pod("ns", f"b-{i}", "b", "1", None, quota="b", selector={"zone": "none"}) for i in range(4)),
        ],
        policy=eq_policy(**arguments),
    )


def test_runtime_gate() -> None:
    result = run_session(two_groups(), now=0.0)
    assert sorted(bound(result)) == [f"ns/a-{i}" for i in range(4)]
    assert result.quota_values["a"].runtime["cpu"] == 4000
    status = result.podgroups["ns/a"]
    assert status.phase == "Running"  # minMember 0: running with what it got
    # a podgroup that needs a fifth pod of a is refused with the group's numbers
    extra = (
        two_groups()
        .with_podgroups([podgroup("ns", "more", "default", 1, priority=-1)])
        .with_tasks([pod("ns", "more-0", "more", "1", None, quota="a")])
    )
    status = run_session(extra, now=0.0).podgroups["ns/more"]
    assert "quota group a runtime: insufficient cpu, requested 1, available 0" in status.message
    assert status.blocker is not None
    assert (status.blocker.kind, status.blocker.name, status.blocker.limit) == ("quota", "a", "runtime")


def test_a_gang_larger_than_its_groups_min_is_told_it_waits_for_lenders() -> None:
    """a (min 4) is lent nothing while b asks its whole min: a gang of 6 needs 2 more than a's min, whatever the
    division does, and says so (with what would let it start without borrowing); a gang within the min does not."""
    busy = (
        two_groups()
        .with_tasks([pod("ns", f"b-{i}", "b", "1", None, quota="b") for i in range(4)])
        .replace(policy=eq_policy("enqueue, allocate"))
    )
    gang = busy.with_podgroups([podgroup("ns", "a", "default", 6, phase=Q.PENDING, min_resources=rl("6"))])
    status = run_session(gang, now=0.0).podgroups["ns/a"]
    assert "quota group a runtime: insufficient cpu, requested 6, available 4" in status.message
    assert (
        "its minimum alone is above quota group a's min 4: however fair the division, it starts only while other "
        "groups lend at least 2; a min of 6 or a smaller gang would let it start without borrowing"
    ) in status.message
    small = podgroup("ns", "a", "default", 4, phase=Q.PENDING, min_resources=rl("4"))
    within = run_session(busy.with_podgroups([small]), now=0.0).podgroups["ns/a"]
    assert within.phase == Q.RUNNING and "its minimum alone" not in within.message


def test_without_runtime_quota_max_is_the_limit() -> None:
    result = run_session(two_groups(a_max="6", enableRuntimeQuota=False), now=0.0)
    assert len(bound(result)) == 6
    capped = run_session(two_groups(a_max="5", enableRuntimeQuota=False), now=0.0)
    assert len(bound(capped)) == 5


def test_parent_quota_check() -> None:
    # p (parent, min 4) holds c1 and c2 (min 2 each); q (min 4) asks 4 cpu it cannot place, so p's runtime is 4.
    # c2 already runs 4 pods (above its runtime 2): c1's own runtime (2) has room, p's (4, all used) has none.
    def build(check: bool) -> Snapshot:
        return snapshot(
            nodes=[node("n1", "8", "64Gi")],
            groups=[
                group("p", is_parent=True, min=rl("4"), max=rl("8")),
                group("c1", parent="p", min=rl("2"), max=rl("8")),
                group("c2", parent="p", min=rl("2"), max=rl("8")),
                group("q", min=rl("4"), max=rl("8")),
            ],
            podgroups=[
                podgroup("ns", "c1", "default", 1),
                podgroup("ns", "c2", "default", 0, phase=Q.RUNNING),
                podgroup("ns", "q", "default", 0),
            ],
            pods=[
                *(pod("ns", f"c1-{i}", "c1", "1", None, quota="c1") for i in range(2)),
                *(running("ns", f"c2-{i}", "c2", "n1", "1", None, quota="c2") for i in range(4)),
                *(pod("ns", f"q-{i}", "q", "1", None, quota="q", selector={"zone": "none"}) for i in range(4)),
            ],
            policy=eq_policy(enableCheckParentQuota=check),
        )

    assert sorted(bound(run_session(build(False), now=0.0))) == ["ns/c1-0", "ns/c1-1"]
    checked = run_session(build(True), now=0.0)
    assert bound(checked) == {}
    message = checked.podgroups["ns/c1"].message
    assert "quota group p runtime: insufficient cpu, requested 1, available 0" in message
    assert "parent of quota group c1 (enableCheckParentQuota)" in message


def preemption(a_low_preemptible: bool = True, quota_label: bool = True, a_min: str = "1") -> Snapshot:
    """2 cpu full: a-low (group a) and b-low (group b), priority 1; a-high (group a, priority 10) is pending.

    elasticquota sits in the first tier: victims are decided by the first tier whose plugins agree on some, so a
    victim filter in a later tier would never be asked (priority, gang and conformance accept both pods)."""
    a = "a" if quota_label else None
    return snapshot(
        nodes=[node("n1", "2", "64Gi")],
        groups=[group("a", min=rl(a_min), max=rl("2")), group("b", min=rl("1"), max=rl("2"))],
        podgroups=[
            podgroup("ns", "a-low", "default", 0, phase=Q.RUNNING, priority=1),
            podgroup("ns", "b-low", "default", 0, phase=Q.RUNNING, priority=1),
            podgroup("ns", "a-high", "default", 1, priority=10),
        ],
        pods=[
            running(
                "ns", "a-low-0", "a-low", "n1", "1", None, priority=1, quota=a, quota_preemptible=a_low_preemptible
            ),
            running("ns", "b-low-0", "b-low", "n1", "1", None, priority=1, quota="b"),
            pod("ns", "a-high-0", "a-high", "1", None, priority=10, quota=a),
        ],
        policy=policy("allocate, preempt", ["priority", "gang", "conformance", "elasticquota"], ["drf", "predicates"]),
    )


def test_preemption_only_inside_the_same_quota_group() -> None:
    result = run_session(preemption(), now=0.0)
    assert evicted(result) == ["ns/a-low-0"]  # b-low-0 has the same priority but another group
    assert pipelined(result) == {"ns/a-high-0": "n1"}


def test_non_preemptible_pods_are_never_preempted() -> None:
    assert run_session(preemption(a_low_preemptible=False), now=0.0).evictions == []


def test_non_preemptible_usage_above_min_is_preemptable() -> None:
    """Issue 25: a pod flipped to non-preemptible after it was placed holds more than its group's min (here min 0):
    the label protects only what fits within min, so the pod is a victim like a preemptible one."""
    result = run_session(preemption(a_low_preemptible=False, a_min="0"), now=0.0)
    assert evicted(result) == ["ns/a-low-0"]
    assert pipelined(result) == {"ns/a-high-0": "n1"}


def test_no_preemption_in_the_default_group() -> None:
    # disableDefaultQuotaPreemption (Koordinator's default): pods of the default group preempt nobody
    assert run_session(preemption(quota_label=False), now=0.0).evictions == []
