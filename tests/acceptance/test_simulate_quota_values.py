"""The seeds' worked examples through `fairway simulate`: manifests in, the numbers of the seeds out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from tests.acceptance import manifests as m


def simulate(tmp_path: Path, capsys: Any, text: str, *args: str) -> dict[str, Any]:
    f = tmp_path / "snapshot.yaml"
    f.write_text(text)
    code = main(["simulate", "-f", str(f), "-o", "json", *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def seed000_snapshot(q_weights: tuple[int, int], rows: list[tuple[str, str, int, int]]) -> str:
    """rows: (queue, namespace, namespace weight, requested cpu) on a 16-cpu cluster, 1-cpu pods."""
    docs: list[Any] = [m.node("n1", cpu="16", memory="64Gi"), m.queue("q1", q_weights[0]), m.queue("q2", q_weights[1])]
    seen: set[str] = set()
    for q, ns, w, cpu in rows:
        if ns not in seen:
            docs.append(m.namespace(ns, w))
            seen.add(ns)
        group = f"{q}-{ns}"
        docs.append(m.podgroup(ns, group, q))
        docs.extend(m.pod(ns, f"{group}-{i}", group=group, cpu="1") for i in range(cpu))
    return m.dump(*docs)


@pytest.mark.parametrize(
    ("q_weights", "rows", "queue_assigned", "namespace_assigned"),
    [
        # table 1: default weights
        (
            (1, 1),
            [("q1", "ns1", 1, 5), ("q1", "ns2", 1, 10), ("q2", "ns3", 1, 10), ("q2", "ns4", 1, 2)],
            {"q1": "8", "q2": "8"},
            {"q1/ns1": "4", "q1/ns2": "4", "q2/ns3": "6", "q2/ns4": "2"},
        ),
        # table 2: q1 w1, q2 w3; ns1 w3, ns2 w1, ns3 w2, ns4 w6
        (
            (1, 3),
            [("q1", "ns1", 3, 5), ("q1", "ns2", 1, 10), ("q2", "ns3", 2, 10), ("q2", "ns4", 6, 2)],
            {"q1": "4", "q2": "12"},
            {"q1/ns1": "3", "q1/ns2": "1", "q2/ns3": "10", "q2/ns4": "2"},
        ),
        # table 3: ns1 (w2) in both queues; its q1 request must be at least 4 cpu for the table's values
        (
            (1, 3),
            [("q1", "ns1", 2, 4), ("q2", "ns1", 2, 5), ("q2", "ns2", 6, 20)],
            {"q1": "4", "q2": "12"},
            {"q1/ns1": "4", "q2/ns1": "3", "q2/ns2": "9"},
        ),
    ],
)
def test_seed_000_namespace_fair_share_tables(
    tmp_path: Path, capsys: Any, q_weights: tuple[int, int], rows: list, queue_assigned: dict, namespace_assigned: dict
) -> None:
    doc = simulate(tmp_path, capsys, seed000_snapshot(q_weights, rows))
    assert {q: doc["queues"][q]["deserved"]["cpu"] for q in ("q1", "q2")} == queue_assigned
    assert {k: v["deserved"]["cpu"] for k, v in doc["namespaces"].items()} == namespace_assigned


def seed001_snapshot(unit: str) -> str:
    """Cluster 100; A/B/C/D min 10/15/20/15, max 40/60/50/80, request 5/20/40/70 (in ``unit`` of cpu)."""
    docs: list[Any] = [m.node("n1", cpu=f"100{unit}", memory="1000Gi")]
    for name, mn, mx, req in (("a", 10, 40, 5), ("b", 15, 60, 20), ("c", 20, 50, 40), ("d", 15, 80, 70)):
        docs.append(m.elastic_quota(name, min={"cpu": f"{mn}{unit}"}, max={"cpu": f"{mx}{unit}"}))
        docs.append(m.pod("default", f"{name}-pod", quota=name, cpu=f"{req}{unit}"))
    return m.dump(*docs)


def test_seed_001_runtime_example(tmp_path: Path, capsys: Any) -> None:
    """The seed counts in whole quota units; in millicores (the calculator's unit) its numbers come out exactly:
    runtime 5/20/35/40."""
    doc = simulate(tmp_path, capsys, seed001_snapshot("m"))
    runtime = {g: doc["quotas"][g]["runtime"]["cpu"] for g in "abcd"}
    assert runtime == {"a": "5m", "b": "20m", "c": "35m", "d": "40m"}
    assert doc["quotas"]["d"]["sharedWeight"] == {"cpu": "80m"}  # shared-weight defaults to max


def test_seed_001_example_in_whole_cpus_is_split_to_the_millicore(tmp_path: Path, capsys: Any) -> None:
    """With whole cpus the 45 shared cpus split by 60/50/80 to the millicore, as Koordinator computes in
    millicores: B is capped at its request 20, C gets 35385m and D 39615m; the runtimes add up to 100 exactly."""
    doc = simulate(tmp_path, capsys, seed001_snapshot(""))
    runtime = {g: doc["quotas"][g]["runtime"]["cpu"] for g in "abcd"}
    assert runtime == {"a": "5", "b": "20", "c": "35385m", "d": "39615m"}


def test_seed_001_tree_example(tmp_path: Path, capsys: Any) -> None:
    """ParentA min 20 / ParentB min 80; A-1/A-2 min 10 max 10, B-1 min 20 max 40, B-2 min 40 max 70; all ask 100."""
    docs: list[Any] = [
        m.node("n1", cpu="100", memory="1000Gi"),
        m.elastic_quota("parent-a", min={"cpu": "20"}, max={"cpu": "100"}, is_parent=True),
        m.elastic_quota("parent-b", min={"cpu": "80"}, max={"cpu": "100"}, is_parent=True),
    ]
    for name, parent, mn, mx in (
        ("a-1", "parent-a", 10, 10),
        ("a-2", "parent-a", 10, 10),
        ("b-1", "parent-b", 20, 40),
        ("b-2", "parent-b", 40, 70),
    ):
        docs.append(m.elastic_quota(name, min={"cpu": f"{mn}m"}, max={"cpu": f"{mx}m"}, parent=parent))
        docs.append(m.pod("default", f"{name}-pod", quota=name, cpu="100m"))
    docs[0] = m.node("n1", cpu="100m", memory="1000Gi")
    docs[1] = m.elastic_quota("parent-a", min={"cpu": "20m"}, max={"cpu": "100m"}, is_parent=True)
    docs[2] = m.elastic_quota("parent-b", min={"cpu": "80m"}, max={"cpu": "100m"}, is_parent=True)
    doc = simulate(tmp_path, capsys, m.dump(*docs))
    runtime = {g: doc["quotas"][g]["runtime"]["cpu"] for g in ("parent-a", "parent-b", "a-1", "a-2", "b-1", "b-2")}
    assert runtime == {"parent-a": "20m", "parent-b": "80m", "a-1": "10m", "a-2": "10m", "b-1": "27m", "b-2": "53m"}
    assert doc["quotas"]["parent-b"]["request"] == {"cpu": "110m"}  # min(100, 40) + min(100, 70) passes upward


def test_proportion_real_capability_and_guarantee(tmp_path: Path, capsys: Any) -> None:
    """realCapability = (total - all guarantees) + own guarantee, capped by capability (volcano.md §2.1)."""
    docs = [
        m.node("n1", cpu="10", memory="10Gi"),
        m.queue("a", 1, guarantee={"resource": {"cpu": "2"}}, deserved={"cpu": "2"}, capability={"cpu": "7"}),
        m.queue("b", 1, guarantee={"resource": {"cpu": "3"}}, deserved={"cpu": "3"}),
        m.namespace("ns"),
        m.podgroup("ns", "ja", "a"),
        m.podgroup("ns", "jb", "b"),
        *[m.pod("ns", f"a{i}", group="ja", cpu="1") for i in range(9)],
        *[m.pod("ns", f"b{i}", group="jb", cpu="1") for i in range(2)],
    ]
    doc = simulate(tmp_path, capsys, m.dump(*docs))
    assert doc["queues"]["a"]["realCapability"]["cpu"] == "7"  # (10 - 5) + 2 = 7, capability 7
    assert doc["queues"]["b"]["realCapability"]["cpu"] == "8"  # (10 - 5) + 3
    assert doc["queues"]["b"]["deserved"]["cpu"] == "3"  # guarantee floor above its request of 2
    assert doc["queues"]["a"]["deserved"]["cpu"] == "7"


def test_simulate_contract_shape_and_exit_codes(tmp_path: Path, capsys: Any) -> None:
    text = m.dump(
        m.node("n1", cpu="4", memory="8Gi"),
        m.queue("q1"),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}},
    )
    f = tmp_path / "s.yaml"
    f.write_text(text)
    assert main(["simulate", "-f", str(f), "-o", "json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert set(doc) >= {"queues", "namespaces", "quotas", "podgroups", "bindings", "pipelined", "evictions", "sessions"}
    assert {"root", "default", "q1"} <= set(doc["queues"])
    assert "Deployment" in out.err and "web" in out.err  # skipped kind: a warning, not an error
    bad = tmp_path / "bad.yaml"
    bad.write_text(m.dump(m.node("n1", cpu="4"), m.queue("q1", capability={"cpu": "-1"})))
    assert main(["simulate", "-f", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml" in err[0] and "document 2" in err[0] and "Queue" in err[0] and "q1" in err[0]
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Node\nmetadata: {name: [unclosed\n")
    assert main(["simulate", "-f", str(broken)]) == 2
    assert "broken.yaml" in capsys.readouterr().err
    assert main(["simulate", "-f", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    assert main(["simulate", "-f", str(f), "-o", "table"]) == 0
    assert "QUEUES" in capsys.readouterr().out


@m.needs_peer_manifests
def test_every_fixture_manifest_simulates_or_names_its_problem(capsys: Any) -> None:
    files = sorted(m.PEER_MANIFESTS.glob("*/*.yaml"))
    assert files, m.PEER_MANIFESTS
    for f in files:
        code = main(["simulate", "-f", str(f), "-o", "json"])
        out = capsys.readouterr()
        if code == 0:
            json.loads(out.out)
        else:
            assert code == 2 and str(f) in out.err and len(out.err.strip().splitlines()) == 1, (f, out.err)


NAMESPACE_ORDER_POLICY = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enableNamespaceOrder: true
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def test_seed_000_table_2_through_simulated_sessions(tmp_path: Path, capsys: Any) -> None:
    """With drf's namespace order, one session binds exactly the namespace assigned column of seed 000's table 2."""
    text = seed000_snapshot(
        (1, 3), [("q1", "ns1", 3, 5), ("q1", "ns2", 1, 10), ("q2", "ns3", 2, 10), ("q2", "ns4", 6, 2)]
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(NAMESPACE_ORDER_POLICY)
    doc = simulate(tmp_path, capsys, text, "--policy", str(policy))
    bound: dict[str, int] = {}
    for pod in doc["bindings"]:
        ns = pod.split("/")[0]
        bound[ns] = bound.get(ns, 0) + 1
    assert bound == {"ns1": 3, "ns2": 1, "ns3": 10, "ns4": 2}
    assert doc["sessions"][0]["bound"] == 16 and doc["sessions"][0]["duration_ms"] > 0
    waiting = {k: v for k, v in doc["podgroups"].items() if v["phase"] != "Running"}
    assert all(v["message"] for v in waiting.values()), waiting


def test_reclaim_returns_lent_resources_within_two_sessions(tmp_path: Path, capsys: Any) -> None:
    """q2 borrows the whole cluster while q1 is idle; q1's gang of 2 arrives: the session reclaims q2's pods above
    its deserved (2 of 4) and pipelines q1's pods onto the resources being released; they run in the next one."""
    docs: list[Any] = [
        m.node("n1", cpu="4", memory="16Gi"),
        m.queue("q1"),
        m.queue("q2"),
        m.namespace("ns"),
        m.podgroup("ns", "borrower", "q2"),
        m.podgroup("ns", "owner", "q1", min_member=2),
    ]
    docs += [m.pod("ns", f"b{i}", group="borrower", cpu="1", node_name="n1") for i in range(4)]
    docs += [m.pod("ns", f"o{i}", group="owner", cpu="1") for i in range(2)]
    policy = tmp_path / "policy.yaml"
    policy.write_text('actions: "enqueue, allocate, reclaim, backfill"\n' + NAMESPACE_ORDER_POLICY.split("\n", 2)[2])
    doc = simulate(tmp_path, capsys, m.dump(*docs), "--policy", str(policy), "--sessions", "2")
    assert len(doc["evictions"]) == 2 and all(e.startswith("ns/b") for e in doc["evictions"])
    assert sorted(doc["pipelined"]) == ["ns/o0", "ns/o1"]
    assert doc["sessions"][0]["evicted"] == 2 and doc["sessions"][1]["evicted"] == 0
    assert doc["podgroups"]["ns/owner"]["phase"] == "Running"
    assert doc["queues"]["q1"]["allocated"] == {"cpu": "2"} and doc["queues"]["q2"]["allocated"] == {"cpu": "2"}


def test_recycle_takes_back_overused_quota_least_important_first(tmp_path: Path, capsys: Any) -> None:
    """Seed 001: group a borrowed the whole cluster while b was idle; b's pods arrive, so a's runtime drops to its
    min and `--recycle` evicts a's least important pods until a's used fits its runtime."""
    docs: list[Any] = [
        m.node("n1", cpu="4", memory="16Gi"),
        m.elastic_quota("a", min={"cpu": "2"}, max={"cpu": "4"}),
        m.elastic_quota("b", min={"cpu": "2"}, max={"cpu": "4"}),
    ]
    docs += [m.pod("default", f"a{i}", quota="a", cpu="1", node_name="n1", priority=10 * i) for i in range(4)]
    docs += [m.pod("default", f"b{i}", quota="b", cpu="1") for i in range(2)]
    doc = simulate(tmp_path, capsys, m.dump(*docs), "--recycle")
    assert doc["quotas"]["a"]["runtime"] == {"cpu": "2"} and doc["quotas"]["b"]["runtime"] == {"cpu": "2"}
    assert doc["evictions"] == ["default/a0", "default/a1"]  # the two lowest priorities
    assert doc["quotas"]["a"]["used"] == {"cpu": "2"}
