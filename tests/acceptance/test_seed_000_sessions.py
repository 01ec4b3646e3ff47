"""Seed 000 (namespace fair share), through real scheduling sessions.

The seed's three tables, on a 16-cpu cluster of one-cpu pods: with drf's ``enableNamespaceOrder`` the allocate
action serves the namespace with the lowest weighted share first, so the cpu each namespace ends up with is the
table's "namespace assigned" column, and each queue's is its "queue assigned" (proportion's deserved). Then the
seed's preemption rule: a pod of a namespace with less resources may preempt pods of a richer one (weights
counted), never the other way round.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.objects import NamespaceInfo, Snapshot
from engine.session.run import apply_result, run_session
from tests.unit.test_session_support import (
    Q,
    bound,
    cpu_per_namespace,
    evicted,
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    running,
    snapshot,
)

NS_POLICY = policy(
    "allocate",
    ["priority", "gang"],
    [plugin("drf", enableNamespaceOrder=True), "predicates", "proportion", "nodeorder"],
)


def cluster(
    queues: dict[str, int], namespaces: dict[str, tuple[str, int, int]], *, policy_: Any = NS_POLICY
) -> Snapshot:
    """16 cpu on two nodes; ``namespaces``: name -> (queue, weight, cpus requested as one-cpu pods)."""
    pods = []
    groups = []
    for ns, (q, _, requested) in namespaces.items():
        groups.append(podgroup(ns, "job", q, 1))
        pods.extend(pod(ns, f"job-{i}", "job", "1", None) for i in range(requested))
    return snapshot(
        nodes=[node("n1", "8", "64Gi"), node("n2", "8", "64Gi")],
        queues=[queue(name, weight) for name, weight in queues.items()],
        namespaces=[NamespaceInfo(ns, weight) for ns, (_, weight, _) in namespaces.items()],
        podgroups=groups,
        pods=pods,
        policy=policy_,
    )


TABLES = [
    (
        "table 1: default weights",
        {"q1": 1, "q2": 1},
        {"ns1": ("q1", 1, 5), "ns2": ("q1", 1, 10), "ns3": ("q2", 1, 10), "ns4": ("q2", 1, 2)},
        {"q1": 8, "q2": 8},
        {"ns1": 4, "ns2": 4, "ns3": 6, "ns4": 2},
    ),
    (
        "table 2: queue weights 1/3, namespace weights 3/1/2/6",
        {"q1": 1, "q2": 3},
        {"ns1": ("q1", 3, 5), "ns2": ("q1", 1, 10), "ns3": ("q2", 2, 10), "ns4": ("q2", 6, 2)},
        {"q1": 4, "q2": 12},
        {"ns1": 3, "ns2": 1, "ns3": 10, "ns4": 2},
    ),
]


@pytest.mark.parametrize(
    ("name", "queues", "namespaces", "queue_cpu", "namespace_cpu"), TABLES, ids=[t[0] for t in TABLES]
)
def test_seed_000_tables(
    name: str,
    queues: dict[str, int],
    namespaces: dict[str, tuple[str, int, int]],
    queue_cpu: dict[str, int],
    namespace_cpu: dict[str, int],
) -> None:
    snap = cluster(queues, namespaces)
    result = run_session(snap, now=0.0)
    assert cpu_per_namespace(snap, result) == namespace_cpu
    book = result.queue_values
    assert {q: book[q].deserved["cpu"] // 1000 for q in queues} == queue_cpu
    # the namespace deserved computed at open says the same
    ns_values = result.namespace_values
    assert {ns: ns_values[(q, ns)].deserved["cpu"] // 1000 for ns, (q, _, _) in namespaces.items()} == namespace_cpu
    # a second session changes nothing: every queue is at its deserved
    again = run_session(apply_result(snap, result, now=0.0), now=1.0)
    assert again.bindings == [] and again.evictions == []


def test_seed_000_table_3_namespace_weights_across_queues() -> None:
    # q1 (weight 1) has no request from ns1 in the table; for q1 to be "assigned" 4 cpu it must take part in the
    # share, so a job of another namespace (ns0) asks for those 4 cpu there. ns1 (weight 2) and ns2 (weight 6)
    # share q2's 12 cpu as 3 and 9.
    snap = cluster(
        {"q1": 1, "q2": 3},
        {"ns0": ("q1", 1, 4), "ns1": ("q2", 2, 5), "ns2": ("q2", 6, 20)},
    )
    result = run_session(snap, now=0.0)
    assert cpu_per_namespace(snap, result) == {"ns0": 4, "ns1": 3, "ns2": 9}
    assert result.queue_values["q1"].deserved["cpu"] == 4000
    assert result.queue_values["q2"].deserved["cpu"] == 12000


def test_without_namespace_order_weights_do_not_matter() -> None:
    plain = policy("allocate", ["priority", "gang"], ["drf", "predicates", "proportion", "nodeorder"])
    snap = cluster(
        {"q1": 1, "q2": 3},
        {"ns1": ("q1", 3, 5), "ns2": ("q1", 1, 10), "ns3": ("q2", 2, 10), "ns4": ("q2", 6, 2)},
        policy_=plain,
    )
    result = run_session(snap, now=0.0)
    got = cpu_per_namespace(snap, result)
    assert got["ns1"] == got["ns2"] == 2  # job DRF alone splits q1's 4 cpu evenly


# -- the namespace preemption rule --------------------------------------------------------------------------------

PREEMPT_POLICY = policy(
    "preempt",
    ["gang", "conformance", plugin("drf", enableNamespaceOrder=True)],
    ["proportion", "predicates"],
)


def crowded(weights: dict[str, int]) -> Snapshot:
    """One queue, 16 cpu full: ns1 runs 12 one-cpu pods, ns2 runs 4 and its gang wants 2 more (minMember 6)."""
    pods = [running("ns1", f"big-{i}", "big", "n1" if i < 8 else "n2", "1", None) for i in range(12)]
    pods += [running("ns2", f"small-{i}", "small", "n2", "1", None) for i in range(4)]
    pods += [pod("ns2", f"small-{i}", "small", "1", None) for i in range(4, 6)]
    return snapshot(
        nodes=[node("n1", "8", "64Gi"), node("n2", "8", "64Gi")],
        queues=[queue("q")],
        namespaces=[NamespaceInfo(ns, w) for ns, w in weights.items()],
        podgroups=[podgroup("ns1", "big", "q", 1, phase=Q.RUNNING), podgroup("ns2", "small", "q", 6, phase=Q.RUNNING)],
        pods=pods,
        policy=PREEMPT_POLICY,
    )


def test_poorer_namespace_preempts_the_richer_one() -> None:
    # ns2 after taking one more cpu: 5/16; ns1 after losing one: 11/16 -> victim
    result = run_session(crowded({"ns1": 1, "ns2": 1}), now=0.0)
    assert len(evicted(result)) == 2
    assert all(uid.startswith("ns1/") for uid in evicted(result))
    assert sorted(b.task for b in result.bindings if b.pipelined) == ["ns2/small-4", "ns2/small-5"]
    assert all(e.action == "preempt" and e.preemptor and e.preemptor.startswith("ns2/") for e in result.evictions)


def test_namespace_weight_protects_the_richer_namespace() -> None:
    # ns1 weighs 3: its weighted share after losing a cpu is 11/16/3 = 0.23, below ns2's 5/16 = 0.31 -> protected
    result = run_session(crowded({"ns1": 3, "ns2": 1}), now=0.0)
    assert evicted(result) == []
    assert bound(result) == {}
