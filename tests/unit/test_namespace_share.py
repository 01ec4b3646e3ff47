"""Namespace fair share (seed 000; Volcano drf plugin's namespace order and preemption rule, v1.7)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.fairshare.namespace import (
    compare_namespaces,
    compute_namespace_shares,
    drf_preemptable,
    namespace_order,
    namespace_preemption,
    namespace_share,
    namespace_weight,
)
from engine.fairshare.queues import JobUsage, TaskRef
from engine.resources import ResourceList


def cpu(cores: float) -> ResourceList:
    return ResourceList({"cpu": int(cores * 1000)})


def rl(**quantities: Any) -> ResourceList:
    return ResourceList.parse({("nvidia.com/gpu" if k == "gpu" else k): v for k, v in quantities.items()})


def job(queue: str, namespace: str, request: ResourceList, allocated: ResourceList | None = None) -> JobUsage:
    return JobUsage(queue=queue, namespace=namespace, request=request, allocated=allocated or ResourceList())


def t(name: str, namespace: str, request: ResourceList, job_name: str = "") -> TaskRef:
    return TaskRef(name=name, queue="q", request=request, namespace=namespace, job=job_name or f"{namespace}/{name}")


@pytest.mark.parametrize(
    ("values", "weight"),
    [
        ([], 1),  # no ResourceQuota with the key: default 1
        ([1], 1),
        (["3", 2], 3),  # the highest over the namespace's quotas
        ([2, "5", "4"], 5),
        (["abc", 0, -1, None, True], 1),  # invalid values are ignored
        ([0, 2], 2),
        (["2.5"], 3),  # Quantity.Value() rounds a fraction up
        (["1k"], 1000),
    ],
)
def test_namespace_weight(values: list[object], weight: int) -> None:
    assert namespace_weight(values) == weight


def test_namespace_compare_from_the_design() -> None:
    # fairshare.md: "(6 / 3 < 3 / 1)": a namespace of weight 3 using 6 cpu is served before one of weight 1
    # using 3 cpu (the prose quotes weight 2 and 2 cpu, but the formula is the one the code implements)
    total = cpu(16)
    assert compare_namespaces(cpu(6), 3, cpu(3), 1, total) < 0
    assert compare_namespaces(cpu(3), 1, cpu(6), 3, total) > 0
    assert compare_namespaces(cpu(4), 2, cpu(2), 1, total) == 0
    assert namespace_share(cpu(6), total, 3) == pytest.approx(6 / 16 / 3)


def test_namespace_share_is_dominant_over_the_cluster() -> None:
    total = rl(cpu="10", memory="10Gi", gpu="4")
    # 1/10 of cpu, 2/10 of memory, 2/4 of gpu: gpu dominates
    assert namespace_share(rl(cpu="1", memory="2Gi", gpu="2"), total) == 0.5
    assert namespace_share(rl(cpu="1", memory="2Gi", gpu="2"), total, 2) == 0.25
    assert namespace_share(ResourceList(), total) == 0.0


def test_namespace_order() -> None:
    total = cpu(16)
    allocated = {"ns-a": cpu(6), "ns-b": cpu(3), "ns-c": cpu(0)}
    assert namespace_order(allocated, {"ns-a": 3, "ns-b": 1}, total) == ["ns-c", "ns-a", "ns-b"]
    assert namespace_order(allocated, {}, total) == ["ns-c", "ns-b", "ns-a"]


@pytest.mark.parametrize(
    ("deserved", "requests", "weights", "expected"),
    [
        # seed 000 table 1 (weights 1): q1 8 cpu -> 4/4, q2 8 cpu -> 6/2
        (8, {"ns1": 5, "ns2": 10}, {}, {"ns1": 4, "ns2": 4}),
        (8, {"ns3": 10, "ns4": 2}, {}, {"ns3": 6, "ns4": 2}),
        # table 2: q1 4 cpu, ns1 w3 / ns2 w1 -> 3/1; q2 12 cpu, ns3 w2 / ns4 w6 -> 10/2
        (4, {"ns1": 5, "ns2": 10}, {"ns1": 3, "ns2": 1}, {"ns1": 3, "ns2": 1}),
        (12, {"ns3": 10, "ns4": 2}, {"ns3": 2, "ns4": 6}, {"ns3": 10, "ns4": 2}),
        # table 3: q2 12 cpu, ns1 w2 asks 5 / ns2 w6 asks 20 -> 3/9
        (12, {"ns1": 5, "ns2": 20}, {"ns1": 2, "ns2": 6}, {"ns1": 3, "ns2": 9}),
        # everybody satisfied: the rest of the queue's deserved stays unassigned
        (12, {"a": 1, "b": 2}, {}, {"a": 1, "b": 2}),
        # fractions: 10 cpu among 3 equal namespaces -> 3334m / 3333m / 3333m
        (10, {"a": 10, "b": 10, "c": 10}, {}, {"a": 3.334, "b": 3.333, "c": 3.333}),
    ],
)
def test_namespace_deserved_within_a_queue(
    deserved: int, requests: dict[str, int], weights: dict[str, int], expected: dict[str, float]
) -> None:
    jobs = [job("q", ns, cpu(r)) for ns, r in requests.items()]
    shares = compute_namespace_shares({"q": cpu(deserved)}, jobs, weights, cpu(16))
    assert {ns: shares[("q", ns)].deserved["cpu"] for ns in requests} == {
        ns: round(v * 1000) for ns, v in expected.items()
    }


def test_namespace_values_and_explanation() -> None:
    jobs = [job("q1", "ns1", cpu(5), cpu(2)), job("q2", "ns1", cpu(3), cpu(2)), job("q1", "ns2", cpu(10), cpu(1))]
    shares = compute_namespace_shares({"q1": cpu(8), "q2": cpu(4)}, jobs, {"ns1": 2, "ns2": "bad"}, cpu(16))  # type: ignore[dict-item]
    entry = shares[("q1", "ns1")]
    assert entry.weight == 2
    assert entry.request == cpu(5) and entry.allocated == cpu(2)
    # the share is namespace-wide: ns1 holds 4 of 16 cpu across both queues, weight 2
    assert entry.dominant_share == 0.25 and entry.share == 0.125 and entry.dominant_resource == "cpu"
    assert shares[("q2", "ns1")].share == 0.125
    assert shares[("q1", "ns2")].weight == 1  # invalid weight -> 1
    # 8 cpu, weights 2 and 1: the level 8/3 gives ns1 5.33 > its request 5, so ns1 5 and ns2 the other 3
    assert shares[("q1", "ns1")].deserved == cpu(5) and shares[("q1", "ns2")].deserved == cpu(3)
    text = str(shares.explain(("q1", "ns1")))
    assert text == str(entry.explain())
    assert [v.namespace for v in shares.in_queue("q1")] == ["ns1", "ns2"]
    assert list(shares) == [("q1", "ns1"), ("q1", "ns2"), ("q2", "ns1")]
    assert text.startswith("q1/ns1")
    assert "stopped at its request 5" in text
    assert "divided by weight 2" in text
    assert "namespace weight 1 of 1 sharing 3" in str(shares[("q1", "ns2")].explain())


def test_queue_without_deserved_gives_nothing() -> None:
    shares = compute_namespace_shares({}, [job("q", "ns", cpu(2))], {}, cpu(4))
    assert shares[("q", "ns")].deserved == ResourceList()
    assert "has no deserved" in str(shares[("q", "ns")].explain())


def test_multi_resource_namespace_deserved() -> None:
    jobs = [job("q", "a", rl(cpu="4", memory="1Gi")), job("q", "b", rl(cpu="1", memory="8Gi", gpu="1"))]
    shares = compute_namespace_shares({"q": rl(cpu="4", memory="4Gi")}, jobs, {}, rl(cpu="8", memory="8Gi", gpu="1"))
    assert shares[("q", "a")].deserved == rl(cpu="3", memory="1Gi")
    assert shares[("q", "b")].deserved == rl(cpu="1", memory="3Gi")  # the queue deserves no gpu


# ------------------------------------------------------------------------------------------------------------
# preemption
# ------------------------------------------------------------------------------------------------------------


def test_poorer_namespace_may_preempt_richer_one() -> None:
    total = cpu(16)
    allocated = {"ns-a": cpu(2), "ns-b": cpu(10)}
    verdict = namespace_preemption("ns-a", cpu(2), [t("b1", "ns-b", cpu(2))], allocated, {}, total)
    # after the move: ns-a 4/16 < ns-b 8/16
    assert [x.name for x in verdict.victims] == ["b1"]


def test_richer_namespace_may_not_preempt_and_weights_count() -> None:
    total = cpu(16)
    allocated = {"ns-a": cpu(8), "ns-b": cpu(4)}
    verdict = namespace_preemption("ns-a", cpu(2), [t("b1", "ns-b", cpu(2))], allocated, {}, total)
    assert [x.name for x in verdict.protected] == ["b1"]
    # with weight 4, ns-a's 10 cpu count as 2.5 against ns-b's 2: still protected; with weight 8, 1.25 < 2
    assert namespace_preemption("ns-a", cpu(2), [t("b1", "ns-b", cpu(2))], allocated, {"ns-a": 4}, total).protected
    assert namespace_preemption("ns-a", cpu(2), [t("b1", "ns-b", cpu(2))], allocated, {"ns-a": 8}, total).victims


def test_running_allocation_across_several_preemptees() -> None:
    # removing ns-b's tasks one by one lowers its share: the third removal would leave it below ns-a
    total = cpu(16)
    allocated = {"ns-a": cpu(2), "ns-b": cpu(10)}
    tasks = [t(f"b{i}", "ns-b", cpu(2)) for i in range(4)]
    verdict = namespace_preemption("ns-a", cpu(2), tasks, allocated, {}, total)
    # ns-a after the move: 4; ns-b after each removal: 8, 6, 4, 2
    assert [x.name for x in verdict.victims] == ["b0", "b1"]
    assert [x.name for x in verdict.undecided] == ["b2"]  # 4 vs 4: a tie goes to the job shares
    assert [x.name for x in verdict.protected] == ["b3"]


def test_same_namespace_is_undecided() -> None:
    verdict = namespace_preemption("ns", cpu(1), [t("x", "ns", cpu(1))], {"ns": cpu(4)}, {}, cpu(16))
    assert verdict.undecided and not verdict.victims and not verdict.protected


def test_drf_preemptable_falls_back_to_job_shares() -> None:
    total = cpu(16)
    preemptor = t("p", "ns-a", cpu(2), "job-p")
    tie = t("b", "ns-b", cpu(2), "job-b")  # namespaces tie after the move: 4 vs 4
    same_ns = t("a", "ns-a", cpu(2), "job-a")
    namespaces = {"ns-a": cpu(2), "ns-b": cpu(6)}
    jobs = {"job-p": cpu(0), "job-b": cpu(6), "job-a": cpu(2)}
    victims = drf_preemptable(preemptor, [tie, same_ns], namespaces, jobs, {}, total)
    # job-p after: 2; job-b after: 4 -> victim; job-a after: 0 < 2 -> kept
    assert [v.name for v in victims] == ["b"]
    # without namespace order only the job shares count
    assert [
        v.name
        for v in drf_preemptable(preemptor, [tie, same_ns], namespaces, jobs, {}, total, namespace_order_enabled=False)
    ] == ["b"]


def test_drf_job_share_tie_within_delta_is_a_victim() -> None:
    total = cpu(16)
    preemptor = t("p", "ns", cpu(2), "job-p")
    other = t("o", "ns", cpu(2), "job-o")
    victims = drf_preemptable(preemptor, [other], {"ns": cpu(6)}, {"job-p": cpu(2), "job-o": cpu(6)}, {}, total)
    assert [v.name for v in victims] == ["o"]  # 4/16 vs 4/16
