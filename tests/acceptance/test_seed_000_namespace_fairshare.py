"""Seed 000 (Volcano ``docs/design/fairshare.md``): namespace fair share, the three 16-cpu tables, exactly.

Each table is run end to end: queue deserved from the proportion policy, then the namespace deserved
amounts inside each queue from ``compute_namespace_shares``.
"""

from __future__ import annotations

import pytest

from engine.fairshare.namespace import compare_namespaces, compute_namespace_shares, namespace_weight
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage
from engine.objects import QueueSpec
from engine.resources import ResourceList

CLUSTER = ResourceList.parse({"cpu": "16"})


def cpu(cores: int) -> ResourceList:
    return ResourceList.parse({"cpu": str(cores)})


# (queue, queue weight, namespace, namespace weight, requested cpu, queue assigned, namespace assigned)
Row = tuple[str, int, str, int, int, int, int | None]

TABLE_1: list[Row] = [  # queue and namespace have default weight
    ("q1", 1, "ns1", 1, 5, 8, 4),
    ("q1", 1, "ns2", 1, 10, 8, 4),
    ("q2", 1, "ns3", 1, 10, 8, 6),
    ("q2", 1, "ns4", 1, 2, 8, 2),
]
TABLE_2: list[Row] = [  # q1 w1, q2 w3; ns1 w3, ns2 w1, ns3 w2, ns4 w6
    ("q1", 1, "ns1", 3, 5, 4, 3),
    ("q1", 1, "ns2", 1, 10, 4, 1),
    ("q2", 3, "ns3", 2, 10, 12, 10),
    ("q2", 3, "ns4", 6, 2, 12, 2),
]
TABLE_3: list[Row] = [  # q1 w1, q2 w3; ns1 w2, ns2 w6. The table leaves q1/ns1's request and assignment blank:
    # q1 is assigned 4 cpu, so its namespace must ask for at least 4; it then receives all 4.
    ("q1", 1, "ns1", 2, 4, 4, None),
    ("q2", 3, "ns1", 2, 5, 12, 3),
    ("q2", 3, "ns2", 6, 20, 12, 9),
]


@pytest.mark.parametrize("table", [TABLE_1, TABLE_2, TABLE_3], ids=["table-1", "table-2", "table-3"])
def test_seed_000_tables(table: list[Row]) -> None:
    queue_weights = {q: w for q, w, *_ in table}
    ns_weights = {ns: w for _, _, ns, w, *_ in table}
    queues = [QueueSpec(name=q, weight=w) for q, w in sorted(queue_weights.items())]
    jobs = [
        JobUsage(queue=q, namespace=ns, request=cpu(req), allocated=ResourceList()) for q, _, ns, _, req, _, _ in table
    ]

    proportion = compute_proportion(queues, jobs, CLUSTER)
    for q, _, _, _, _, queue_assigned, _ in table:
        assert proportion[q].deserved == cpu(queue_assigned), q

    shares = compute_namespace_shares({q: proportion[q].deserved for q in proportion}, jobs, ns_weights, CLUSTER)
    for q, _, ns, _, req, _, ns_assigned in table:
        expected = ns_assigned if ns_assigned is not None else min(req, proportion[q].deserved["cpu"] // 1000)
        assert shares[(q, ns)].deserved == cpu(expected), (q, ns)
    # nothing is assigned beyond the queue's deserved
    for q in proportion:
        assert sum(v.deserved["cpu"] for (queue, _), v in shares.items() if queue == q) <= proportion[q].deserved["cpu"]


def test_seed_000_table_3_needs_at_least_4_cpu_in_q1() -> None:
    # with a smaller request q1 keeps only what it asks for and q2 takes the rest
    jobs = [
        JobUsage("q1", "ns1", cpu(3), ResourceList()),
        JobUsage("q2", "ns1", cpu(5), ResourceList()),
        JobUsage("q2", "ns2", cpu(20), ResourceList()),
    ]
    proportion = compute_proportion([QueueSpec("q1", weight=1), QueueSpec("q2", weight=3)], jobs, CLUSTER)
    assert proportion["q1"].deserved == cpu(3)
    assert proportion["q2"].deserved == cpu(13)


def test_seed_000_weight_rules_and_order() -> None:
    # "If many ResourceQuota in the same namespace have weight, the weight for this namespace is the highest
    # one of them. This weight should be positive, any invalid value is treated as default value 1."
    assert namespace_weight(["2", "7", "3"]) == 7
    assert namespace_weight(["-4"]) == 1
    assert namespace_weight([]) == 1
    # "the resource usage of n1 less than n2 can be defined as (u1 / w1 < u2 / w2)"
    assert compare_namespaces(cpu(6), 3, cpu(3), 1, CLUSTER) < 0


def test_seed_000_allocated_resources_set_the_order() -> None:
    # after a job of ns1 is scheduled its weighted share rises and ns2 is served first
    jobs = [JobUsage("q", "ns1", cpu(8), cpu(4)), JobUsage("q", "ns2", cpu(8), cpu(1))]
    shares = compute_namespace_shares({"q": cpu(16)}, jobs, {"ns1": 2, "ns2": 1}, CLUSTER)
    assert shares[("q", "ns1")].share == pytest.approx(4 / 16 / 2)
    assert shares[("q", "ns2")].share == pytest.approx(1 / 16)
    assert shares[("q", "ns2")].share < shares[("q", "ns1")].share
