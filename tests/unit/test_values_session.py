"""One computation of the quota values: the session opens on ``engine.values.compute_values`` and recycling reads
``compute_quotas``, so a page, ``fairway simulate`` and the scheduler agree on every number. A Releasing pod is in
no queue's ``allocated`` and no quota group's ``used`` (it is leaving); ``QuotaValues.releasing`` shows it apart."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import ALLOCATED_STATUSES, Snapshot, TaskStatus
from engine.policy.policy import Policy
from engine.session.session import Session
from engine.values import compute_quotas, compute_values
from tests.support.examples import examples
from tests.unit.test_session_properties import clusters
from tests.unit.test_session_support import group, node, pod, podgroup, policy, queue, rl, running, snapshot

CPU = "cpu"
DONE = (TaskStatus.SUCCEEDED, TaskStatus.FAILED)


def _releasing_example() -> Snapshot:
    return snapshot(
        nodes=[node("n1", "8", "16Gi")],
        queues=[queue("q")],
        groups=[group("a", min=rl("4"), max=rl("8"))],
        podgroups=[podgroup("ns", "j", "q", 1, phase="Running")],  # type: ignore[arg-type]
        pods=[
            running("ns", "j-0", "j", "n1", "1", quota="a"),
            pod("ns", "j-1", "j", "3", status=TaskStatus.RELEASING, node="n1", quota="a"),
        ],
        policy=policy("allocate", ["priority", "gang"], ["proportion", "elasticquota", "predicates"]),
    )


def test_a_releasing_pod_is_not_used_in_the_session_nor_in_the_values() -> None:
    snap = _releasing_example()
    values = compute_values(snap)
    ssn = Session(snap, snap.policy, now=0.0)
    assert ssn.elastic is not None
    assert values.quotas["a"].used[CPU] == 1000
    assert ssn.elastic["a"].used[CPU] == 1000
    assert compute_quotas(snap)["a"].used[CPU] == 1000
    # every pod not finished is still requested; what is leaving is shown apart
    assert values.quotas["a"].request[CPU] == 4000
    assert values.releasing["a"][CPU] == 3000
    # the queue counts the Running pod only, in the session as in the values
    assert ssn.queue_values_at_open is not None
    assert ssn.queue_values_at_open.state("q").allocated[CPU] == 1000
    assert values.queues.state("q").allocated[CPU] == 1000
    assert values.queues.state("q").request[CPU] == 1000


@st.composite
def clusters_with_quotas(draw: Any) -> Snapshot:
    """The session property test's clusters, some placed pods turned Releasing and the pods spread over two quota
    groups (and the default one), with the elasticquota plugin on or off."""
    snap: Snapshot = draw(clusters())
    changed = []
    for task in snap.tasks.values():
        quota = draw(st.sampled_from([None, "ga", "gb"]))
        status = task.status
        if task.node is not None and draw(st.integers(0, 3)) == 0:
            status = TaskStatus.RELEASING
        changed.append(dataclasses.replace(task, quota_group=quota, status=status))
    groups = [
        group("ga", min=rl(str(draw(st.integers(0, 4)))), max=rl(str(draw(st.integers(4, 12))))),
        group("gb", min=rl(str(draw(st.integers(0, 4)))), max=rl(str(draw(st.integers(4, 12))))),
    ]
    pol = snap.policy
    if draw(st.booleans()):
        data = pol.to_dict()
        data["tiers"][-1]["plugins"].append({"name": "elasticquota"})
        pol = Policy.from_dict(data)
    return snap.with_tasks(changed).with_quota_groups(groups).with_policy(pol)


def _sums(ssn: Session) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """From the session's own tasks: per queue what is allocated, per quota group what is used and requested."""
    allocated: dict[str, dict[str, int]] = {}
    used: dict[str, dict[str, int]] = {}
    request: dict[str, dict[str, int]] = {}
    for task in ssn.tasks.values():
        if task.status in DONE:
            continue
        for r, v in task.info.request.raw.items():
            req = request.setdefault(task.quota_group, {})
            req[r] = req.get(r, 0) + v
            if task.status in ALLOCATED_STATUSES:
                use = used.setdefault(task.quota_group, {})
                use[r] = use.get(r, 0) + v
                if task.pg is not None:
                    alloc = allocated.setdefault(task.pg.queue, {})
                    alloc[r] = alloc.get(r, 0) + v
    return allocated, used, request


def _nonzero(amounts: Any) -> dict[str, int]:
    return {r: int(v) for r, v in dict(amounts).items() if v}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters_with_quotas())
def test_the_session_opens_on_the_values_of_its_snapshot(snap: Snapshot) -> None:
    values = compute_values(snap, snap.policy)
    ssn = Session(snap, snap.policy, now=0.0)
    book = ssn.queue_values_at_open
    assert book is not None
    allocated, used, request = _sums(ssn)
    for name in values.queues:
        mine, theirs = book.state(name), values.queues.state(name)
        assert (mine.deserved, mine.allocated, mine.request) == (theirs.deserved, theirs.allocated, theirs.request)
        if name != "root" and not theirs.children:
            assert _nonzero(theirs.allocated) == _nonzero(allocated.get(name, {}))
    assert ssn.namespace_values is not None
    assert dict(ssn.namespace_values) == dict(values.namespaces)
    if ssn.elastic is None:
        assert not snap.policy.has_plugin("elasticquota")
        return
    for name in values.quotas:
        mine_q, theirs_q = ssn.elastic[name], values.quotas[name]
        assert mine_q == theirs_q
        if name in ("ga", "gb"):  # their quotas name cpu only, and the values keep the resources a group names
            assert theirs_q.used.get(CPU, 0) == used.get(name, {}).get(CPU, 0)
            assert theirs_q.request.get(CPU, 0) == request.get(name, {}).get(CPU, 0)
