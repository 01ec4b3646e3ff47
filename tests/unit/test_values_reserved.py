"""Reservations visible: ``engine.values`` computes what admitted, not yet fully allocated jobs reserve and what
pipelined pods request, per queue and quota group, and the admission gates read those same numbers, so a reason's
"available" adds up from the values a page shows (``available 2 = 32 capability - 12 allocated - 18 reserved by 2
admitted jobs``)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.changes import as_quantities, node_values
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage
from engine.objects import PodGroupPhase, QueueSpec, Snapshot
from engine.resources import ResourceList, is_unlimited
from engine.session.run import run_session
from engine.session.session import Session
from engine.values import compute_values
from tests.support.examples import examples
from tests.unit.test_session_support import group, node, pod, podgroup, policy, queue, rl, running, snapshot

GPU = "nvidia.com/gpu"
MINUS = "\u2212"


def gpus(n: int) -> ResourceList:
    return rl("1", "1Gi", **{GPU: str(n)})


def _engineering(*, pipelined: bool = False) -> Snapshot:
    """Queue engineering (capability 32 GPUs) on 40 GPUs: one Running job holding 12, two Inqueue jobs reserving 9
    each, and a Pending job asking 8 GPUs; optionally one pod of the first Inqueue job pipelined."""
    pods = [running("eng", f"train-{i}", "train", f"n{i}", "1", "1Gi") for i in range(3)]
    pods = [dataclasses.replace(p, request=gpus(4)) for p in pods]
    for job in ("a", "b"):
        pods += [pod("eng", f"{job}-{i}", job, "1", "1Gi", **{GPU: "3"}) for i in range(3)]  # type: ignore[arg-type]
    pods += [pod("eng", f"c-{i}", "c", "1", "1Gi", **{GPU: "4"}) for i in range(2)]  # type: ignore[arg-type]
    if pipelined:
        pods = [dataclasses.replace(p, pipelined=True) if p.name == "a-0" else p for p in pods]
    minimum = rl("3", "3Gi", **{GPU: "9"})
    return snapshot(
        nodes=[node(f"n{i}", "16", "64Gi", **{GPU: "8"}) for i in range(5)],  # type: ignore[arg-type]
        queues=[queue("engineering", capability=rl("100", "1000Gi", **{GPU: "32"}))],
        podgroups=[
            podgroup("eng", "train", "engineering", 3, phase=PodGroupPhase.RUNNING, min_resources=gpus(12)),
            podgroup("eng", "a", "engineering", 3, phase=PodGroupPhase.INQUEUE, min_resources=minimum),
            podgroup("eng", "b", "engineering", 3, phase=PodGroupPhase.INQUEUE, min_resources=minimum),
            podgroup("eng", "c", "engineering", 2, phase=PodGroupPhase.PENDING, min_resources=gpus(8)),
        ],
        pods=pods,
        policy=policy("enqueue", ["priority", "gang"], ["proportion", "predicates"]),
    )


def test_a_queue_shows_what_its_admitted_jobs_reserve() -> None:
    values = compute_values(_engineering())
    q = values.queues["engineering"]
    assert q.allocated[GPU] == 12_000
    assert q.reserved == q.inqueue  # one number: what the enqueue gate counts
    assert q.reserved[GPU] == 18_000
    assert q.reserved_jobs == 2
    assert q.reserving[GPU] == 2
    assert q.pipelined_pods == 0 and not q.pipelined
    shown = as_quantities(node_values(values))["queues"]["engineering"]
    assert shown["reserved"][GPU] == "18"
    assert shown["reserved_jobs"] == 2
    assert shown["pipelined"] == {} and shown["pipelined_pods"] == 0


def test_the_reason_decomposes_available_into_the_values() -> None:
    snap = _engineering()
    result = run_session(snap, now=0.0)
    status = result.podgroups["eng/c"]
    assert status.phase == "Pending"
    assert status.message == (
        "not admitted (Pending -> Inqueue): "
        f"queue engineering realCapability: insufficient {GPU}, requested 8, available 2 = "
        f"32 capability {MINUS} 12 allocated {MINUS} 18 reserved by 2 admitted jobs"
    )
    assert status.blocker is not None and status.blocker.available == 2000


def test_a_pipelined_pod_is_counted_apart() -> None:
    plain, piped = compute_values(_engineering()), compute_values(_engineering(pipelined=True))
    q, p = plain.queues["engineering"], piped.queues["engineering"]
    assert p.pipelined_pods == 1
    assert p.pipelined[GPU] == 3000
    # neither allocated nor the reservation moves: the pipelined pod still waits for its resources
    assert p.allocated == q.allocated
    assert p.reserved == q.reserved and p.reserved_jobs == q.reserved_jobs
    assert p.request == q.request


def test_quota_groups_show_reservations_and_the_plugin_opens_on_them() -> None:
    snap = snapshot(
        nodes=[node("n1", "16", "64Gi")],
        queues=[queue("q")],
        groups=[
            group("team", is_parent=True, min=rl("8", "32Gi"), max=rl("16", "64Gi")),
            group("a", parent="team", min=rl("4", "16Gi"), max=rl("16", "64Gi")),
        ],
        podgroups=[
            podgroup("ns", "run", "q", 1, phase=PodGroupPhase.RUNNING),
            podgroup("ns", "adm", "q", 2, phase=PodGroupPhase.INQUEUE, min_resources=rl("4", "4Gi")),
            podgroup("ns", "adm2", "q", 1, phase=PodGroupPhase.INQUEUE, min_resources=rl("2", "2Gi")),
        ],
        pods=[
            running("ns", "run-0", "run", "n1", "2", "2Gi", quota="a"),
            pod("ns", "adm-0", "adm", "2", "2Gi", quota="a"),
            running("ns", "adm-1", "adm", "n1", "2", "2Gi", quota="a"),
            dataclasses.replace(pod("ns", "adm2-0", "adm2", "2", "2Gi", quota="a"), pipelined=True),
        ],
        policy=policy("enqueue, allocate", ["priority", "gang"], ["proportion", "elasticquota", "predicates"]),
    )
    values = compute_values(snap)
    held = values.reservations
    # adm: demand 4 cores, 2 already used by its Running pod; adm2: 2 cores, nothing placed
    assert held.amounts["a"]["cpu"] == 4000 and held.amounts["team"]["cpu"] == 4000
    assert held.jobs["a"] == 2 and held.reserving["a"]["cpu"] == 2
    assert held.pipelined["a"]["cpu"] == 2000 and held.pipelined_pods["team"] == 1
    shown = as_quantities(node_values(values))["quota_groups"]["a"]
    assert shown["reserved"] == {"cpu": "4", "memory": "4Gi"}
    assert shown["reserved_jobs"] == 2 and shown["pipelined_pods"] == 1
    ssn = Session(snap, snap.policy, now=0.0)
    plugin: Any = ssn.framework.plugin("elasticquota")
    assert plugin is not None
    assert {g: {r: v for r, v in amounts.items() if v} for g, amounts in plugin.reserved.items()} == held.amounts
    assert {g: {r: v for r, v in c.items() if v} for g, c in plugin.reserving.items()} == held.reserving


# -- the property: the gate's available is capability - allocated - reserved (+ elastic) of the values ----------

_AMOUNTS = st.integers(0, 12).map(lambda n: n * 1000)


@st.composite
def _jobs(draw: Any) -> tuple[list[JobUsage], JobUsage]:
    jobs = []
    for i in range(draw(st.integers(0, 6))):
        phase = draw(st.sampled_from(["Pending", "Inqueue", "Running"]))
        minimum = draw(_AMOUNTS)
        allocated = draw(_AMOUNTS) if phase == "Running" else draw(st.sampled_from([0, 0, 1000]))
        jobs.append(
            JobUsage(
                queue="q",
                namespace="ns",
                request=ResourceList({"cpu": max(minimum, allocated)}),
                allocated=ResourceList({"cpu": allocated}),
                min_resources=ResourceList({"cpu": minimum}) if draw(st.booleans()) else None,
                phase=phase,
                min_member=1,
                allocated_tasks=1 if allocated else 0,
                name=f"j{i}",
            )
        )
    want = draw(st.integers(1, 12)) * 1000
    pending = JobUsage("q", "ns", ResourceList({"cpu": want}), ResourceList(), ResourceList({"cpu": want}), name="new")
    return jobs, pending


def _number(text: str) -> int:
    return round(float(text) * 1000)


@settings(max_examples=examples(150), deadline=None)
@given(
    jobs=_jobs(),
    capability=st.integers(1, 30),
    hierarchy=st.sampled_from([None, False, True]),
)
def test_the_enqueue_gate_available_is_capability_minus_allocated_minus_reserved(
    jobs: tuple[list[JobUsage], JobUsage], capability: int, hierarchy: bool | None
) -> None:
    usages, pending = jobs
    total = ResourceList({"cpu": 40_000, "memory": 2**40})
    spec = QueueSpec("q", capability=ResourceList({"cpu": capability * 1000}))
    book = (
        compute_proportion([spec], [*usages, pending], total)
        if hierarchy is None
        else compute_capacity(
            [QueueSpec("root", parent=None), spec] if hierarchy else [spec],
            [*usages, pending],
            total,
            hierarchy=hierarchy,
        )
    )
    q = book["q"]
    limit = q.real_capability.get("cpu", 0)
    assert not is_unlimited(limit)
    available = limit - q.allocated.get("cpu", 0) - q.reserved.get("cpu", 0) + q.elastic.get("cpu", 0)
    verdict = book.enqueueable(pending)
    if available >= pending.min_resources["cpu"]:  # type: ignore[index]
        assert verdict
        return
    assert not verdict and verdict.reason is not None
    reason = verdict.reason
    assert reason.available == max(0, available)
    # the breakdown printed after "available" names the same terms, and they add up
    text = reason.breakdown
    assert text.removeprefix("max(0, ").startswith(f"{limit / 1000:g} capability")
    terms = re.findall(r"([+\u2212]?) ?([\d.]+) (capability|allocated|reserved|elastic)", text)
    sums = {name: (-1 if sign == MINUS else 1) * _number(amount) for sign, amount, name in terms}
    assert sums.get("allocated", 0) == -q.allocated.get("cpu", 0)
    assert sums.get("reserved", 0) == -q.reserved.get("cpu", 0)
    assert sum(sums.values()) == available
    assert text.startswith("max(0, ") == (available < 0)
    if q.reserved.get("cpu", 0):
        assert f"by {q.reserving['cpu']} admitted job" in text


def test_a_reservation_released_in_the_session_leaves_the_count_too() -> None:
    """Rollback (Inqueue -> Pending when the pool shrank) gives back the amount and the job count."""
    snap = _engineering()
    shrunk = snap.with_queues([queue("engineering", capability=rl("100", "1000Gi", **{GPU: "20"}))])
    ssn = Session(shrunk, shrunk.policy, now=0.0)
    from engine.session.actions.enqueue import enqueue

    enqueue(ssn)
    plugin: Any = ssn.framework.plugin("proportion")
    st_ = plugin.book.state("engineering")
    back = [j for j in ssn.jobs.values() if j.name in ("a", "b") and j.phase == PodGroupPhase.PENDING]
    assert back, "a reservation above the shrunk capability goes back to Pending"
    admitted = [j for j in ssn.jobs.values() if j.name in ("a", "b", "c") and j.phase == PodGroupPhase.INQUEUE]
    assert st_.reserved_jobs == len(admitted)
    assert st_.reserving.get(GPU, 0) == len(admitted)
    assert st_.inqueue.get(GPU, 0) == sum(j.min_resources[GPU] for j in admitted)
    assert st_.allocated[GPU] + st_.inqueue.get(GPU, 0) <= 20_000
