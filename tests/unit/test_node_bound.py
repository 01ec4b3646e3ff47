"""What one node may have and how many nodes a cluster may hold (``engine.limits``), and the engine's defence in depth:
a node above the bound is left out of the cluster's total with a reason, and sums of requests saturate, so that no
node's numbers and no tenant's requests fail a session, a recycling pass or the quota values (issue 25, item 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane.cli import main
from engine.limits import Limits, node_amount_errors, node_bound_text
from engine.objects import NodeInfo, PodGroupInfo, QuotaGroupSpec, Snapshot, TaskInfo, TaskStatus
from engine.resources import MAX_AMOUNT, ResourceList
from engine.session.run import run_recycle, run_session
from engine.values import compute_values
from tests.support.examples import examples

BOUND = Limits().max_node_amount


def test_the_defaults_keep_any_cluster_below_max_amount() -> None:
    limits = Limits()
    assert limits.max_nodes == 20_000
    assert limits.max_nodes * limits.max_node_amount < MAX_AMOUNT
    # generous for the largest real nodes: 64 TiB of memory (IBM Power E1080), thousands of cores, 8-72 GPUs
    assert limits.max_node_amount >= 3 * 64 * 2**40
    assert node_bound_text(limits.max_node_amount, "cpu") == "230 billion cores"
    assert node_bound_text(limits.max_node_amount, "memory") == "209 TiB"


def test_setting_one_bound_derives_the_other_and_both_must_fit() -> None:
    assert Limits.from_env({"FAIRWAY_MAX_NODES": "100000"}).max_node_amount == (MAX_AMOUNT - 1) // 100_000
    assert Limits.from_env({"FAIRWAY_MAX_NODE_AMOUNT": str(2**50)}).max_nodes == (MAX_AMOUNT - 1) // 2**50
    with pytest.raises(ValueError, match="FAIRWAY_MAX_NODES=5000 times FAIRWAY_MAX_NODE_AMOUNT"):
        Limits.from_env({"FAIRWAY_MAX_NODES": "5000", "FAIRWAY_MAX_NODE_AMOUNT": str(2**50)})


def test_the_error_names_the_field_in_human_units() -> None:
    errors = node_amount_errors({"cpu": 4611686018427387903, "memory": 1}, BOUND, "nodes[3].allocatable")
    assert [str(e) for e in errors] == [
        "nodes[3].allocatable.cpu: 4611686018427387903m is more than one node may have (230 billion cores; "
        "FAIRWAY_MAX_NODE_AMOUNT)"
    ]


def test_a_node_above_the_bound_is_left_out_of_the_total_with_a_reason() -> None:
    snap = Snapshot.build(
        nodes=[
            NodeInfo("gpu-01", ResourceList({"cpu": 4611686018427387903})),
            NodeInfo("n1", ResourceList({"cpu": 8000})),
        ]
    )
    assert snap.total_allocatable == ResourceList({"cpu": 8000})
    assert "gpu-01" in snap.set_aside_nodes and "more than one node may have" in snap.set_aside_nodes["gpu-01"]
    result = run_session(snap, now=1.0)
    assert any("node gpu-01 set aside" in w for w in result.warnings)


def test_more_nodes_than_the_count_cannot_overflow_either() -> None:
    bound = MAX_AMOUNT // 3
    nodes = [NodeInfo(f"n{i}", ResourceList({"cpu": bound - i})) for i in range(5)]
    snap = Snapshot.build(nodes=nodes, node_bound=bound)
    assert snap.total_allocatable["cpu"] < MAX_AMOUNT
    assert sorted(snap.set_aside_nodes) == ["n0", "n1"]  # the largest ones, each with its reason
    compute_values(snap)


_AMOUNT = st.one_of(
    st.integers(min_value=0, max_value=MAX_AMOUNT),
    st.sampled_from([0, 1, BOUND, BOUND + 1, MAX_AMOUNT - 1, MAX_AMOUNT]),
)
_LIST = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), _AMOUNT, max_size=3)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    allocatables=st.lists(_LIST, min_size=1, max_size=6),
    requests=st.lists(st.tuples(_LIST, st.booleans(), st.booleans()), max_size=12),
)
def test_extreme_allocatables_and_requests_fail_nothing(
    allocatables: list[dict[str, int]], requests: list[tuple[dict[str, int], bool, bool]]
) -> None:
    """Whatever the nodes offer and the pods ask (each amount within MAX_AMOUNT, as the parsers allow), the values, a
    session and a recycling pass answer without an exception, and the total stays below MAX_AMOUNT."""
    nodes = [NodeInfo(f"n{i}", ResourceList(a)) for i, a in enumerate(allocatables)]
    group = QuotaGroupSpec(
        name="team", parent="root", min=ResourceList({"cpu": 1000}), max=ResourceList({"cpu": MAX_AMOUNT})
    )
    pgs = [PodGroupInfo("ns", "pg", min_member=1)]
    tasks = [
        TaskInfo(
            "ns",
            f"p{i}",
            "ns/pg",
            request=ResourceList(req),
            quota_group="team" if in_group else None,
            status=TaskStatus.RUNNING if running else TaskStatus.PENDING,
            node="n0" if running else None,
        )
        for i, (req, in_group, running) in enumerate(requests)
    ]
    snap = Snapshot.build(nodes=nodes, tasks=tasks, podgroups=pgs, quota_groups=[group])
    assert all(v < MAX_AMOUNT for v in snap.total_allocatable.values())
    compute_values(snap)
    run_session(snap, now=1.0)
    run_recycle(snap, now=1.0, over_since={"team": float("-inf")}, delay=0.0)


def test_simulate_refuses_a_node_above_the_bound_naming_its_document(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {cpu: '8'}}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-01}\nstatus: {allocatable: {cpu: 4611686018427387903m}}\n"
    )
    code = main(["simulate", "-f", str(path), "-o", "json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "(Node gpu-01): status.allocatable.cpu: 4611686018427387903m is more than one node may have" in err
    assert "Traceback" not in err
