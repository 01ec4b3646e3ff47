"""Enqueue refuses identical podgroups once (``engine.session.actions.enqueue``, "Identical podgroups are refused
once"): on clusters whose waiting podgroups are copies of a few jobs, in several queues and namespaces, under the
queue, namespace, elastic quota, overcommit and node-fit gates, the sessions decide exactly what they decide when
every podgroup asks the gates itself: the same bindings, evictions and podgroup statuses with their reasons."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import NamespaceInfo, PodGroupPhase, Snapshot, TaskStatus
from engine.session.run import apply_result, run_session
from tests.support.examples import examples
from tests.unit.test_session_support import group, node, plugin, pod, podgroup, policy, queue, rl, snapshot

ENQUEUE = importlib.import_module("engine.session.actions.enqueue")  # the module (the package exports the function)
POLICIES = {
    "proportion": policy(
        "enqueue, allocate, backfill, reclaim, preempt",
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder", "elasticquota"],
    ),
    "capacity": policy(
        "enqueue, allocate, backfill, reclaim",
        ["priority", "gang"],
        [plugin("overcommit", arguments={"overcommit-factor": 1.0}), "predicates", "capacity", "elasticquota"],
    ),
}
# job templates: (pods, cpu of each, memory of each, minMember, gpu)
TEMPLATES = [
    (1, "1", "1Gi", 1, 0),
    (2, "2", "2Gi", 2, 0),
    (4, "1", "4Gi", 2, 0),
    (2, "4", "8Gi", 2, 1),
    (3, "3", "1Gi", 3, 0),
]


# The strategies ``copied_jobs`` draws from, made once (by their arguments): a strategy built inside the composite is
# looked up again in Hypothesis's cache, or built and checked again, at every draw, which cost more than the values
# themselves. The same strategies, so the same values are drawn.
_integers = cache(st.integers)
_sampled = cache(st.sampled_from)
_TEMPLATE_CHOICES = st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=3)


@st.composite
def copied_jobs(draw: Any) -> Snapshot:
    """A small cluster, some running work, and many waiting copies of a few job templates."""
    nodes = [node(f"n{i}", str(draw(_integers(4, 8))), "16Gi", gpu=draw(_sampled((0, 2)))) for i in range(3)]
    queues = [
        queue(f"q{i}", draw(_integers(1, 3)), capability=rl(str(draw(_integers(4, 24)))) if i else None)
        for i in range(3)
    ]
    groups = [group("g0", min=rl("4", "16Gi"), max=rl("10", "40Gi")), group("g1", min=rl("2", "8Gi"), max=rl("6"))]
    namespaces = [
        NamespaceInfo("ns0", hard=rl(str(draw(_integers(2, 12))))),
        NamespaceInfo("ns1"),
    ]
    pods, pgs = [], []
    chosen = draw(_TEMPLATE_CHOICES)  # a few jobs, copied many times
    for j in range(draw(_integers(8, 40))):
        size, cpu, mem, min_member, gpu = draw(_sampled(tuple(chosen)))
        ns = draw(_sampled(("ns0", "ns0", "ns1")))
        q = draw(_sampled(("q0", "q1", "q1", "q2")))
        quota = draw(_sampled((None, "g0", "g0", "g1")))
        running_on = draw(_sampled((None, None, None, None, None, "n0", "n1")))
        phase = PodGroupPhase.RUNNING if running_on else PodGroupPhase.PENDING
        extra = {"gpu": gpu} if gpu else {}
        minimum = rl(str(int(cpu) * min_member), **extra) if draw(_integers(0, 7)) else None
        pgs.append(
            podgroup(ns, f"j{j}", q, min_member, phase=phase, min_resources=minimum,
                     priority=draw(_integers(0, 2)), created=float(draw(_integers(0, 3))))
        )  # fmt: skip
        for k in range(size):
            status: dict[str, Any] = {"status": TaskStatus.RUNNING, "node": running_on} if running_on else {}
            pods.append(pod(ns, f"j{j}-{k}", f"j{j}", cpu, mem, quota=quota, **status, **extra))
    return snapshot(
        nodes=nodes,
        pods=pods,
        podgroups=pgs,
        queues=queues,
        namespaces=namespaces,
        groups=groups,
        policy=POLICIES[draw(_sampled(tuple(sorted(POLICIES))))],
    )


def _decisions(snap: Snapshot, sessions: int = 3) -> list[Any]:
    out = []
    for i in range(sessions):
        result = run_session(snap, now=100.0 + i)
        out.append((result.bindings, result.evictions, result.podgroups))
        snap = apply_result(snap, result, now=100.0 + i)
    return out


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(copied_jobs())
def test_identical_podgroups_are_refused_as_if_each_asked(snap: Snapshot) -> None:
    memo = _decisions(snap)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ENQUEUE, "shape", lambda job: (object(),))  # never the same: every podgroup asks the gates
        asked = _decisions(snap)
    assert memo == asked


def test_copies_of_a_refused_podgroup_are_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory is used: ten copies of a job its queue cannot take ask the queue's gate once."""
    snap = snapshot(
        nodes=[node("n0", "4")],
        queues=[queue("q0", capability=rl("2"))],
        podgroups=[
            podgroup("ns", f"j{j}", "q0", 2, phase=PodGroupPhase.PENDING, min_resources=rl("4")) for j in range(10)
        ],
        pods=[pod("ns", f"j{j}-{k}", f"j{j}", "2", "1Gi") for j in range(10) for k in range(2)],
        policy=POLICIES["proportion"],
    )
    from engine.session.plugins.proportion.plugin import ProportionPlugin

    asked: list[str] = []
    original = ProportionPlugin.job_enqueueable

    def counting(self: ProportionPlugin, job: Any) -> Any:
        asked.append(job.key)
        return original(self, job)

    monkeypatch.setattr(ProportionPlugin, "job_enqueueable", counting)
    result = run_session(snap, now=1.0)
    assert len(asked) == 1
    reasons = {s.message for s in result.podgroups.values()}
    assert len(reasons) == 1 and "q0" in next(iter(reasons))
