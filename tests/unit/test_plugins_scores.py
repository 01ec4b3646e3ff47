"""Node scores: nodeorder (kube-scheduler's least / most allocated and balanced allocation) and binpack, their
known values, and the exact agreement of the vectorised and the one-node (plain int) versions that the
placement cache relies on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.session.framework import Plugin
from engine.session.session import Session, TaskState
from tests.support.examples import examples
from tests.unit.test_session_support import node, plugin, pod, podgroup, policy, running, snapshot

GiB = 2**30


def session_with(*plugins: object, nodes: list | None = None, pods: list | None = None) -> Session:  # type: ignore[type-arg]
    snap = snapshot(
        nodes=nodes or [node("n1", "4", "8Gi"), node("n2", "8", "16Gi")],
        podgroups=[podgroup("ns", "pg")],
        pods=pods or [pod("ns", "p", "pg", "1", "2Gi")],
        policy=policy("allocate", list(plugins)),  # type: ignore[arg-type]
    )
    return Session(snap, snap.policy, 0.0)


def scorer(ssn: Session, name: str) -> Plugin:
    p = ssn.framework.plugin(name)
    assert p is not None
    return p


def test_least_allocated_known_values() -> None:
    # node 4 cpu / 8Gi holding 1 cpu / 2Gi; pod 1 cpu / 2Gi -> cpu (4-2)*100//4 = 50, memory (8-4)*100//8 = 50
    ssn = session_with(
        plugin("nodeorder", arguments={"balancedresource.weight": 0}),
        nodes=[node("n1", "4", "8Gi")],
        pods=[running("ns", "r", "pg", "n1", "1", "2Gi"), pod("ns", "p", "pg", "1", "2Gi")],
    )
    p = scorer(ssn, "nodeorder")
    vec = ssn.tasks["ns/p"].vec
    assert p.node_scores(ssn.nodes, slice(None), vec).tolist() == [50.0]


def test_balanced_allocation_known_values() -> None:
    # after the pod: cpu 2/4 = 0.5, memory 2Gi/8Gi = 0.25 -> std 0.125 -> int(87.5) = 87
    ssn = session_with(
        plugin("nodeorder", arguments={"leastrequested.weight": 0}),
        nodes=[node("n1", "4", "8Gi")],
        pods=[running("ns", "r", "pg", "n1", "1", None), pod("ns", "p", "pg", "1", "2Gi")],
    )
    p = scorer(ssn, "nodeorder")
    assert p.node_scores(ssn.nodes, slice(None), ssn.tasks["ns/p"].vec).tolist() == [87.0]


def test_binpack_known_values_and_overflow() -> None:
    # n1: cpu (1+1)/4 = 0.5, memory (2+2)/8 = 0.5 -> mean 0.5 * 100 = 50; n2 cannot hold the pod -> 0
    ssn = session_with(
        "binpack",
        nodes=[node("n1", "4", "8Gi"), node("n2", "1", "64Gi")],
        pods=[
            running("ns", "r", "pg", "n1", "1", "2Gi"),
            running("ns", "s", "pg", "n2", "1", None),
            pod("ns", "p", "pg", "1", "2Gi"),
        ],
    )
    p = scorer(ssn, "binpack")
    assert p.node_scores(ssn.nodes, slice(None), ssn.tasks["ns/p"].vec).tolist() == [50.0, 0.0]


amounts = st.integers(min_value=0, max_value=2**40)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(amounts, amounts, amounts, amounts), min_size=1, max_size=6),
    st.tuples(st.integers(0, 2**34), st.integers(0, 2**40)),
    st.sampled_from(["nodeorder", "binpack", "both", "most"]),
)
def test_one_node_scores_equal_the_vectorised_ones(
    nodes: list[tuple[int, int, int, int]], request: tuple[int, int], which: str
) -> None:
    names = {
        "nodeorder": ["nodeorder"],
        "binpack": ["binpack"],
        "both": ["nodeorder", "binpack"],
        "most": [plugin("nodeorder", arguments={"mostrequested.weight": 3, "leastrequested.weight": 2})],
    }[which]
    ssn = session_with(*names, nodes=[node(f"n{i}", "1", "1Gi") for i in range(len(nodes))])
    t = ssn.nodes
    cpu, mem = t.col["cpu"], t.col["memory"]
    for i, (cap_cpu, cap_mem, free_cpu, free_mem) in enumerate(nodes):
        t.alloc[i, cpu], t.alloc[i, mem] = cap_cpu, cap_mem
        t.idle[i, cpu], t.idle[i, mem] = min(free_cpu, cap_cpu), min(free_mem, cap_mem)
    vec = np.zeros(len(t.resources), dtype=np.int64)
    vec[cpu], vec[mem] = request
    scorers = ssn.framework.hook_plugins("node_scores")
    for p in scorers:
        vectorised = p.node_scores(t, slice(None), vec)
        for i in range(len(nodes)):
            one = p.node_score_one(t.alloc[i].tolist(), t.idle[i].tolist(), vec.tolist())
            if vectorised is None:
                assert one is None
            else:
                assert one == vectorised[i]
    # and the placement cache's combined score for a row equals the full computation
    placement = ssn.placement
    full = placement.raw_scores(slice(None), vec)
    rows = np.arange(len(nodes), dtype=np.int64)
    assert placement.raw_scores(rows, vec).tolist() == full.tolist()


@pytest.mark.parametrize("names", [["nodeorder"], ["binpack"], ["nodeorder", "binpack"], []])
def test_cached_placement_matches_a_fresh_computation(names: list[str]) -> None:
    # place many pods one by one; after each, the cache's best node equals an uncached argmax
    ssn = session_with(
        "gang",
        *names,
        nodes=[node(f"n{i}", str(2 + i % 3), f"{4 + i % 5}Gi") for i in range(12)],
        pods=[pod("ns", f"p-{i}", "pg", ["1", "500m", "2"][i % 3], ["1Gi", "512Mi", "2Gi"][i % 3]) for i in range(30)],
    )
    placement = ssn.placement
    for uid in sorted(ssn.tasks):
        task = ssn.tasks[uid]
        pick = placement.best(task)
        entry = placement._entry(task)
        fresh = np.where(entry.static, placement._compute(entry.shape, slice(None)), -np.inf)
        if pick is None:
            assert fresh.max() == -np.inf
            continue
        assert pick == (int(fresh.argmax()), False)
        ssn.allocate_task(task, pick[0])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.booleans()), min_size=1, max_size=60))
def test_classes_of_one_request_share_its_scores(steps: list[tuple[int, bool]]) -> None:
    # pods of the same two requests under different node selectors: a class of one signature takes the scores its
    # request's other classes brought up to date, for any order of placements and undone placements (discards)
    zones = ["a", "b", "c"]
    ssn = session_with(
        "gang",
        "nodeorder",
        "predicates",
        nodes=[node(f"n{i}", str(2 + i % 3), f"{4 + i % 5}Gi", labels={"zone": zones[i % 3]}) for i in range(9)],
        pods=[
            pod(
                "ns",
                f"p-{i}",
                "pg",
                ["1", "500m"][i % 2],
                ["1Gi", "2Gi"][i % 2],
                selector=[{}, {"zone": "a"}, {"zone": "b"}, {"zone": "c"}][i % 4],
            )
            for i in range(12)
        ],
    )
    placement = ssn.placement
    tasks = [ssn.tasks[uid] for uid in sorted(ssn.tasks)]
    placed: list[TaskState] = []
    for index, undo in steps:
        if undo and placed:
            ssn.unallocate_task(placed.pop())
            continue
        task = tasks[index]
        if task.node >= 0:
            continue
        pick = placement.best(task)
        entry = placement._entry(task)
        fresh = np.where(placement.static_mask(task.sig), placement._compute(entry.shape, slice(None)), -np.inf)
        if pick is None:
            assert fresh.max() == -np.inf
            continue
        assert pick == (int(fresh.argmax()), False)
        ssn.allocate_task(task, pick[0])
        placed.append(task)
