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
from engine.fairshare.queues import JobUsage
from engine.fairshare.verdicts import TaskRef
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


def test_the_water_fillings_run_when_the_first_entry_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # a session computes the namespace values at open and, unless a plugin orders namespaces, reads none of them
    import engine.fairshare.namespace as namespace

    runs: list[int] = []
    split = namespace._split_queues

    def counting(*args: Any) -> Any:
        runs.append(1)
        return split(*args)

    monkeypatch.setattr(namespace, "_split_queues", counting)
    weights = {"ns1": 2}
    jobs = [job("q1", "ns1", cpu(5), cpu(2)), job("q1", "ns2", cpu(10), cpu(1)), job("q2", "ns1", cpu(3))]
    shares = compute_namespace_shares({"q1": cpu(8), "q2": cpu(4)}, jobs, weights, cpu(16))
    assert runs == [] and list(shares) == [("q1", "ns1"), ("q1", "ns2"), ("q2", "ns1")]
    weights["ns1"] = 1  # (the caller's mapping is read as it was given)
    assert shares[("q1", "ns1")].deserved == cpu(5) and shares[("q1", "ns2")].deserved == cpu(3)
    assert shares[("q2", "ns1")].deserved == cpu(3)
    assert runs == [1]  # once, for every queue


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


# ------------------------------------------------------------------------------------------------------------
# the one-pass computation (every job its own namespace) against the rule written plainly
# ------------------------------------------------------------------------------------------------------------


def _reference(
    queue_deserved: dict[str, ResourceList], jobs: list[JobUsage], weights: dict[str, Any], total: ResourceList
) -> dict[tuple[str, str], tuple[int, dict[str, int], dict[str, int], dict[str, int], float, str]]:
    """Per (queue, namespace): weight, request, allocated, deserved, share and dominant resource, computed with
    one ``water_fill`` per queue and resource and one dictionary per sum, as the model says."""
    from engine.amounts import dominant_share
    from engine.fairshare.namespace import _clean_weight
    from engine.fairshare.waterfill import water_fill

    usage: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]] = {}
    held: dict[str, dict[str, int]] = {}
    for j in jobs:
        req, alloc = usage.setdefault((j.queue, j.namespace), ({}, {}))
        for r, v in j.request.items():
            req[r] = req.get(r, 0) + v
        for r, v in j.allocated.items():
            alloc[r] = alloc.get(r, 0) + v
            held.setdefault(j.namespace, {})[r] = held.get(j.namespace, {}).get(r, 0) + v
        held.setdefault(j.namespace, {})
    out = {}
    for queue in sorted({q for q, _ in usage}):
        members = sorted(ns for q, ns in usage if q == queue)
        ws = [_clean_weight(weights.get(ns, 1)) for ns in members]
        deserved: list[dict[str, int]] = [{} for _ in members]
        qd = queue_deserved.get(queue)
        if qd is not None:
            for r in sorted(set(qd) | {r for ns in members for r in usage[(queue, ns)][0]}):
                fill = water_fill(qd.get(r, 0), members, ws, [usage[(queue, ns)][0].get(r, 0) for ns in members])
                for i, v in enumerate(fill.values):
                    if v:
                        deserved[i][r] = v
        for i, ns in enumerate(members):
            name, dom = dominant_share(held[ns], total)
            req, alloc = usage[(queue, ns)]
            out[(queue, ns)] = (ws[i], req, alloc, deserved[i], dom / ws[i], name)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_many_namespaces_match_the_plain_rule(seed: int) -> None:
    import random

    rnd = random.Random(seed)
    resources = ["cpu", "memory", "nvidia.com/gpu"]
    queues = [f"q{i}" for i in range(rnd.randint(1, 6))]
    spaces = [f"ns{i}" for i in range(rnd.choice((3, 40, 400)))]
    jobs = []
    for _ in range(rnd.randint(1, 600)):
        request = {
            r: rnd.choice((0, 1, 7, 1000, 2**33, rnd.randint(1, 10**6))) for r in resources if rnd.random() < 0.8
        }
        allocated = {r: v * rnd.randint(0, 2) // 2 for r, v in request.items()}
        jobs.append(job(rnd.choice(queues), rnd.choice(spaces), ResourceList(request), ResourceList(allocated)))
    scale = rnd.choice((1, 1000, 2**30))
    deserved = {
        q: ResourceList({r: rnd.randint(0, 40) * scale for r in resources if rnd.random() < 0.9})
        for q in queues
        if rnd.random() < 0.9
    }
    weights: dict[str, Any] = {ns: rnd.choice((1, 2, 3, 9, 0, -1, "2", "bad")) for ns in spaces if rnd.random() < 0.5}
    total = ResourceList({r: rnd.randint(1, 10**6) * scale for r in resources})
    shares = compute_namespace_shares(deserved, jobs, weights, total)
    expected = _reference(deserved, jobs, weights, total)
    assert list(shares) == list(expected)
    assert len(shares) == len(expected)
    for key, (weight, req, alloc, des, share, dominant) in expected.items():
        entry = shares[key]
        assert (entry.weight, entry.share, entry.dominant_resource) == (weight, share, dominant)
        assert entry.request == ResourceList(req) and entry.allocated == ResourceList(alloc)
        assert entry.deserved == ResourceList(des), key
        # the explanation replays the same water-fillings
        for r, fill in entry.fills:
            assert fill.values[entry.index] == des.get(r, 0)
    assert dict(shares.items()) == {k: shares[k] for k in expected}
    for queue in queues:
        assert [e.namespace for e in shares.in_queue(queue)] == [ns for q, ns in expected if q == queue]
    assert ("nowhere", "ns0") not in shares and shares.get(("nowhere", "ns0")) is None
    # the jobs' own amounts are shared, never written
    again = _reference(deserved, jobs, weights, total)
    assert again == expected


def test_huge_amounts_are_split_with_python_integers() -> None:
    big = 2**61
    jobs = [job("q", f"ns{i}", ResourceList({"memory": big + i})) for i in range(3)]
    shares = compute_namespace_shares(
        {"q": ResourceList({"memory": big})}, jobs, {"ns1": 3}, ResourceList({"memory": 4 * big})
    )
    expected = _reference({"q": ResourceList({"memory": big})}, jobs, {"ns1": 3}, ResourceList({"memory": 4 * big}))
    assert {k: shares[k].deserved for k in shares} == {k: ResourceList(v[3]) for k, v in expected.items()}
    assert sum(shares[k].deserved["memory"] for k in shares) == big


def _matches_the_plain_rule(
    deserved: dict[str, ResourceList], jobs: list[JobUsage], weights: dict[str, Any], total: ResourceList
) -> None:
    shares = compute_namespace_shares(deserved, jobs, weights, total)
    expected = _reference(deserved, jobs, weights, total)
    assert list(shares) == list(expected)
    for key, (weight, req, alloc, des, share, dominant) in expected.items():
        entry = shares[key]
        assert (entry.weight, entry.share, entry.dominant_resource) == (weight, share, dominant), key
        assert entry.request == ResourceList(req) and entry.allocated == ResourceList(alloc), key
        assert entry.deserved == ResourceList(des), key
        for r, fill in entry.fills:
            assert fill.values[entry.index] == des.get(r, 0)


_EDGES: dict[str, tuple[dict[str, ResourceList], list[JobUsage], dict[str, Any]]] = {
    "no jobs": ({"q": cpu(4)}, [], {}),
    "an unknown queue only": ({}, [job("q", "a", cpu(2))], {}),
    "a queue with none to share": ({"q": cpu(0)}, [job("q", "a", cpu(2)), job("q", "b", cpu(2))], {}),
    "a request beyond int64": ({"q": cpu(3)}, [job("q", "a", ResourceList({"cpu": 2**70})), job("q", "b", cpu(2))], {}),
    "beyond int64 in a resource no queue has": (
        {"q": cpu(3)},
        [job("q", "a", ResourceList({"cpu": 2000, "example.com/x": 2**70})), job("q", "b", cpu(2))],
        {},
    ),
    "a weight beyond int64": ({"q": cpu(3)}, [job("q", "a", cpu(2)), job("q", "b", cpu(2))], {"a": 10**30}),
    "a request that is a plain mapping": ({"q": cpu(3)}, [job("q", "a", {"cpu": 2000}), job("q", "b", cpu(2))], {}),  # type: ignore[arg-type]
    "a namespace in two queues, twice in one": (
        {"q": cpu(3), "r": cpu(5)},
        [job("q", "a", cpu(2), cpu(1)), job("r", "a", cpu(2), cpu(2)), job("q", "a", cpu(1)), job("q", "b", cpu(2))],
        {"a": "3"},
    ),
    "caps adding up to the amount exactly": (
        {"q": cpu(6)},
        [job("q", n, cpu(c)) for n, c in (("a", 1), ("b", 2), ("c", 3))],
        {},
    ),
    "caps one over the amount": (
        {"q": cpu(5)},
        [job("q", n, cpu(c)) for n, c in (("a", 1), ("b", 2), ("c", 3))],
        {"c": 2},
    ),
}


@pytest.mark.parametrize("case", list(_EDGES))
def test_edge_cases_match_the_plain_rule(case: str) -> None:
    deserved, jobs, weights = _EDGES[case]
    _matches_the_plain_rule(deserved, jobs, weights, ResourceList({"cpu": 16_000, "example.com/x": 2**80}))


@pytest.mark.parametrize("seed", range(4))
def test_every_job_its_own_namespace_matches_the_plain_rule(seed: int) -> None:
    """The common case the computation is built for (every pair one job, read in job order), at a size where most
    queues' requests exceed their deserved and some do not."""
    import random

    rnd = random.Random(seed)
    resources = ["cpu", "memory", "nvidia.com/gpu"]
    queues = [f"q{i}" for i in range(25)]
    jobs = [
        job(
            rnd.choice(queues),
            f"own-{i}",
            ResourceList({r: rnd.randint(1, 8) * 1000 for r in resources if rnd.random() < 0.7}),
            ResourceList({"cpu": rnd.randint(0, 4) * 1000}),
        )
        for i in range(3000)
    ]
    deserved = {q: ResourceList({r: rnd.randint(0, 400) * 1000 for r in resources}) for q in queues[:-1]}
    weights = {f"own-{i}": 1 + i % 5 for i in range(0, 3000, 3)}
    _matches_the_plain_rule(deserved, jobs, weights, ResourceList({r: 10**7 for r in resources}))


def test_entries_read_in_any_order_agree() -> None:
    """Entries, the namespaces' totals and a queue's values are gathered when first read: any order gives the same."""
    jobs = [job(f"q{i % 3}", f"ns{i % 7}", cpu(1 + i % 4), cpu(i % 2)) for i in range(60)]
    deserved = {"q0": cpu(10), "q1": cpu(3), "q2": cpu(100)}
    first = compute_namespace_shares(deserved, jobs, {"ns3": 4}, cpu(64))
    second = compute_namespace_shares(deserved, jobs, {"ns3": 4}, cpu(64))
    backwards = [(key, second[key]) for key in reversed(list(second))]
    assert list(first.items()) == backwards[::-1]
    assert first.in_queue("q1") == second.in_queue("q1")
