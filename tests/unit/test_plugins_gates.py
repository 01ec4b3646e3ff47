"""Plugin gates at unit level: the proportion / capacity fast paths agree with the fairshare books, overcommit's
exact factor, predicates' masks, gang's minimum, priority's victims, drf's job order."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import NodeSelectorRequirement, Taint, Toleration
from engine.session.framework import PERMIT, REJECT
from engine.session.session import Session
from tests.support.examples import examples
from tests.unit.test_session_support import (
    Q,
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


def open_session(**objects: Any) -> Session:
    snap = snapshot(**objects)
    return Session(snap, snap.policy, 0.0)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sampled_from(["proportion", "capacity", "hier"]),
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=5),
    st.integers(0, 3000),
    st.integers(0, 3),
    st.sampled_from(["Open", "Closed"]),
)
def test_fast_allocatable_agrees_with_the_book(
    which: str, running_pods: list[tuple[int, int]], request_cpu: int, request_gpu: int, state: str
) -> None:
    queue_plugin = plugin("capacity", enableHierarchy=True) if which == "hier" else which
    parent = "p" if which == "hier" else "root"
    queues = [queue("q", capability=rl("6", "8Gi", gpu=2), deserved=rl("3", "4Gi", gpu=1), state=state, parent=parent)]
    if which == "hier":
        queues.append(queue("p", capability=rl("5", "64Gi"), deserved=rl("4", "8Gi", gpu=2)))
    pods = [running("ns", f"r{i}", "run", "n1", str(c), f"{m}Gi") for i, (c, m) in enumerate(running_pods)]
    pods.append(pod("ns", "p", "pend", f"{request_cpu}m", "1Gi", **({"gpu": request_gpu} if request_gpu else {})))
    ssn = open_session(
        nodes=[node("n1", "32", "64Gi", gpu=4)],
        queues=queues,
        podgroups=[podgroup("ns", "run", "q", phase=Q.RUNNING), podgroup("ns", "pend", "q")],
        pods=pods,
        policy=policy("allocate", [queue_plugin]),
    )
    p = ssn.framework.plugin("capacity" if which == "hier" else which)
    assert p is not None
    task = ssn.tasks["ns/p"]
    fast = p.allocatable("q", task)
    slow = p.book.allocatable("q", task.req)  # type: ignore[attr-defined]
    assert (fast is None) == slow.allowed


def test_overcommit_factor_is_exact() -> None:
    # 10 cpu * 1.1 = 11 cpu exactly; float64 would give 11.000000000000002
    objects: dict[str, Any] = {
        "nodes": [node("n1", "10", "8Gi")],
        "podgroups": [podgroup("ns", "a", min_resources=rl("11"), phase=Q.PENDING)],
    }
    ssn = open_session(
        policy=policy("enqueue", [plugin("overcommit", arguments={"overcommit-factor": 1.1})]), **objects
    )
    p = ssn.framework.plugin("overcommit")
    assert p is not None
    assert p.job_enqueueable(ssn.jobs["ns/a"]) == (PERMIT, None)
    bigger = open_session(
        policy=policy("enqueue", [plugin("overcommit", arguments={"overcommit-factor": 1.1})]),
        nodes=objects["nodes"],
        podgroups=[podgroup("ns", "a", min_resources=rl("11001m"), phase=Q.PENDING)],
    )
    vote, why = bigger.framework.plugin("overcommit").job_enqueueable(bigger.jobs["ns/a"])  # type: ignore[union-attr]
    assert vote == REJECT and why is not None and why.available == 11000


def test_overcommit_counts_used_and_inqueue() -> None:
    ssn = open_session(
        nodes=[node("n1", "10", "8Gi")],
        podgroups=[
            podgroup("ns", "run", phase=Q.RUNNING),
            podgroup("ns", "waiting", min_resources=rl("3"), phase=Q.INQUEUE),
            podgroup("ns", "new", min_resources=rl("4"), phase=Q.PENDING),
        ],
        pods=[running("ns", "r", "run", "n1", "4", "1Gi")],
        policy=policy("enqueue", [plugin("overcommit", arguments={"overcommit-factor": 1.2})]),
    )
    p = ssn.framework.plugin("overcommit")
    assert p is not None
    # idle = 12 - 4 = 8; inqueue 3; 3 + 4 <= 8
    assert p.job_enqueueable(ssn.jobs["ns/new"])[0] == PERMIT
    p.job_enqueued(ssn.jobs["ns/new"])
    vote, why = p.job_enqueueable(ssn.jobs["ns/new"])
    assert vote == REJECT and why is not None and (why.requested, why.available) == (4000, 1000)


def test_predicate_masks() -> None:
    ssn = open_session(
        nodes=[
            node("a", labels={"zone": "x", "disk": "ssd"}),
            node("b", labels={"zone": "x"}),
            node("c", labels={"zone": "y"}, taints=[Taint("gpu", "", "NoExecute")]),
            node("d", labels={"zone": "y"}, unschedulable=True),
            node("e", labels={"zone": "y"}, ready=False),
        ],
        podgroups=[podgroup("ns", "pg")],
        pods=[pod("ns", "p", "pg")],
        policy=policy("allocate", ["predicates"]),
    )
    mask = ssn.placement.static_mask  # a signature: (node selector, tolerations, required node affinity)
    assert mask(((("zone", "x"),), (), ())).tolist() == [True, True, False, False, False]
    assert mask(((("disk", "ssd"), ("zone", "x")), (), ())).tolist() == [True, False, False, False, False]
    assert mask(((), (), ())).tolist() == [True, True, False, False, False]
    tolerant = (Toleration(key="gpu", operator="Exists", effect="NoExecute"),)
    assert mask(((("zone", "y"),), tolerant, ())).tolist() == [False, False, True, False, False]
    no_ssd = ((NodeSelectorRequirement("disk", "NotIn", ("ssd",)),),)
    assert mask(((), tolerant, no_ssd)).tolist() == [False, True, True, False, False]


def test_gang_keeps_the_minimum_in_candidate_order() -> None:
    ssn = open_session(
        nodes=[node("n1", "8", "8Gi")],
        podgroups=[podgroup("ns", "job", min_member=2, phase=Q.RUNNING), podgroup("ns", "p", min_member=1)],
        pods=[*(running("ns", f"job-{i}", "job", "n1") for i in range(4)), pod("ns", "p-0", "p")],
        policy=policy("preempt", ["gang"]),
    )
    gang = ssn.framework.plugin("gang")
    assert gang is not None
    candidates = [ssn.tasks[f"ns/job-{i}"] for i in (3, 1, 0, 2)]
    victims = gang.preemptable(ssn.tasks["ns/p-0"], candidates)
    assert [t.uid for t in victims or []] == ["ns/job-3", "ns/job-1"]  # 4 ready, minMember 2: two may go


def test_priority_victims() -> None:
    ssn = open_session(
        nodes=[node("n1", "8", "8Gi")],
        podgroups=[
            podgroup("ns", "low", priority=1, phase=Q.RUNNING),
            podgroup("ns", "same", priority=5, phase=Q.RUNNING),
            podgroup("ns", "me", priority=5),
        ],
        pods=[
            running("ns", "low-0", "low", "n1"),
            running("ns", "same-0", "same", "n1"),
            running("ns", "me-low", "me", "n1", priority=0),
            running("ns", "me-high", "me", "n1", priority=9),
            pod("ns", "me-0", "me", priority=3),
        ],
        policy=policy("preempt", ["priority"]),
    )
    prio = ssn.framework.plugin("priority")
    assert prio is not None
    candidates = [ssn.tasks[u] for u in ("ns/low-0", "ns/same-0", "ns/me-low", "ns/me-high")]
    victims = prio.preemptable(ssn.tasks["ns/me-0"], candidates)
    assert [t.uid for t in victims or []] == ["ns/low-0", "ns/me-low"]


def test_drf_orders_jobs_by_dominant_share() -> None:
    ssn = open_session(
        nodes=[node("n1", "10", "10Gi")],
        podgroups=[podgroup("ns", "cpu-heavy", phase=Q.RUNNING), podgroup("ns", "mem-heavy", phase=Q.RUNNING)],
        pods=[running("ns", "c", "cpu-heavy", "n1", "5", "1Gi"), running("ns", "m", "mem-heavy", "n1", "1", "6Gi")],
        policy=policy("allocate", ["drf"]),
    )
    drf = ssn.framework.plugin("drf")
    assert drf is not None
    assert drf.job_order_key(ssn.jobs["ns/cpu-heavy"]) == 0.5
    assert drf.job_order_key(ssn.jobs["ns/mem-heavy"]) == 0.6
    order = sorted(ssn.jobs.values(), key=ssn.framework.job_key)
    assert [j.name for j in order] == ["cpu-heavy", "mem-heavy"]
    assert np.isclose(drf.namespace_order_key("ns"), 0.7)  # the namespace-wide dominant share: 7Gi of 10Gi
