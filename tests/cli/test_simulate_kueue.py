"""``fairway simulate`` reads Kueue's ClusterQueue, Cohort (hierarchical), LocalQueue and ResourceFlavor, and pods
and batch Jobs labelled ``kueue.x-k8s.io/queue-name``, onto the queue tree; Kueue's documented examples come out
as Kueue documents them (``site/content/en/docs/concepts/cluster_queue.md``, ``cohort.md``, KEP-1224)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}
"""
    for i in range(30)
)


def cluster_queue(name: str, cohort: str, cpu: str, extra: str = "", api: str = "v1beta2") -> str:
    key = "cohortName" if api == "v1beta2" else "cohort"
    return f"""---
apiVersion: kueue.x-k8s.io/{api}
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  {key}: {cohort}
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: {cpu}
        {extra}
---
apiVersion: kueue.x-k8s.io/{api}
kind: LocalQueue
metadata: {{name: lq, namespace: {name}}}
spec: {{clusterQueue: {name}}}
"""


FLAVOR = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""


def pods(namespace: str, count: int) -> str:
    return "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""
        for i in range(count)
    )


def job(namespace: str, parallelism: int, name: str = "train") -> str:
    return f"""---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: {parallelism}
  template:
    spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""


def simulate(tmp_path: Path, capsys: Any, *texts: str) -> tuple[int, dict[str, Any], str]:
    args = []
    for i, text in enumerate(texts):
        path = tmp_path / f"in{i}.yaml"
        path.write_text(text)
        args += ["-f", str(path)]
    code = main(["simulate", *args, "-o", "json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out else {}, out.err


def bound(doc: dict[str, Any], namespace: str) -> int:
    return sum(1 for pod in doc["bindings"] if pod.startswith(f"{namespace}/"))


def test_lending_limit_example(tmp_path: Path, capsys: Any) -> None:
    tree = (
        FLAVOR + cluster_queue("team-a", "team-ab", "9") + cluster_queue("team-b", "team-ab", "12", "lendingLimit: 1")
    )
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("team-a", 15))
    assert code == 0, err
    queues = doc["queues"]
    assert (queues["team-a"]["realCapability"]["cpu"], queues["team-b"]["realCapability"]["cpu"]) == ("10", "21")
    assert queues["team-ab"]["deserved"]["cpu"] == "21" and queues["team-ab"]["capability"]["cpu"] == "21"
    assert queues["team-a"]["parent"] == "team-ab" and queues["team-b"]["lendingLimit"] == {"cpu": "1"}
    assert bound(doc, "team-a") == 10
    assert "capacity with enableHierarchy used" in err
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("team-b", 25))
    assert code == 0, err
    assert bound(doc, "team-b") == 21


def test_borrowing_limit_example_and_v1beta1_spelling(tmp_path: Path, capsys: Any) -> None:
    tree = (
        FLAVOR
        + cluster_queue("team-a", "team-ab", "9", "borrowingLimit: 1", api="v1beta1")
        + cluster_queue("team-b", "team-ab", "12", api="v1beta1")
    )
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("team-a", 15))
    assert code == 0, err
    assert bound(doc, "team-a") == 10
    assert doc["queues"]["team-a"]["borrowingLimit"] == {"cpu": "1"}
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("team-b", 25))
    assert bound(doc, "team-b") == 21  # 12 + 9


def test_hierarchical_cohort_quota_and_a_whole_job(tmp_path: Path, capsys: Any) -> None:
    cohort = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: hello-cohort}
spec:
  parentName: org
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 12
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
"""
    tree = FLAVOR + cohort + cluster_queue("my-cq", "hello-cohort", "0")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + job("my-cq", 12))
    assert code == 0, err
    queues = doc["queues"]
    assert queues["hello-cohort"]["parent"] == "org" and queues["my-cq"]["parent"] == "hello-cohort"
    assert queues["org"]["capability"]["cpu"] == "12"  # the top of the tree cannot borrow
    assert queues["my-cq"]["realCapability"]["cpu"] == "12"
    assert bound(doc, "my-cq") == 12
    assert doc["podgroups"]["my-cq/train"]["queue"] == "my-cq"
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + job("my-cq", 13))
    assert code == 0, err
    assert bound(doc, "my-cq") == 0  # admitted whole or not at all
    assert doc["podgroups"]["my-cq/train"]["phase"] == "Pending"


def test_several_flavors_for_one_resource_are_read_per_flavor(tmp_path: Path, capsys: Any) -> None:
    cq = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: on-demand
      resources: [{name: cpu, nominalQuota: 9}, {name: memory, nominalQuota: 36Gi}]
    - name: spot
      resources: [{name: cpu, nominalQuota: 9}]
"""
    code, doc, err = simulate(tmp_path, capsys, NODES + cq)
    assert code == 0, err
    # quota per flavor (engine.flavors; tests/unit/test_kueue_flavors.py): memory with cpu, their group's
    assert doc["queues"]["cq"]["deserved"] == {"cpu@on-demand": "9", "cpu@spot": "9", "memory@on-demand": "36Gi"}
    assert "30 nodes offer cpu in none of its flavors (on-demand, spot)" in err


def test_unknown_local_queue_and_unlabelled_job(tmp_path: Path, capsys: Any) -> None:
    tree = FLAVOR + cluster_queue("team-a", "team-ab", "9")
    stray = pods("team-x", 1) + job("team-a", 1, "plain").replace("  labels: {kueue.x-k8s.io/queue-name: lq}\n", "")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + stray)
    assert doc["podgroups"]["team-x/podgroup-p0"]["queue"] == "default"
    assert code == 0, err
    assert "label kueue.x-k8s.io/queue-name=lq: no LocalQueue team-x/lq in the input; queue default used" in err
    assert "(Job team-a/plain): a Job without the label kueue.x-k8s.io/queue-name; skipped" in err


def test_bad_trees_exit_2_naming_the_document(tmp_path: Path, capsys: Any) -> None:
    bad_name = cluster_queue("Team_A", "ab", "9")
    code, _, err = simulate(tmp_path, capsys, NODES + bad_name)
    assert code == 2 and "ClusterQueue Team_A" in err and "is not a valid Kubernetes name" in err, err
    cycle = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: x}
spec: {parentName: y}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: y}
spec: {parentName: x}
"""
    code, _, err = simulate(tmp_path, capsys, NODES + cycle)
    assert code == 2 and "cycle" in err and "Cohort" in err


@needs_peer_manifests
def test_kueue_examples_import(tmp_path: Path, capsys: Any) -> None:
    names = [
        "cmd__kueueviz__examples__00-resource-flavor.yaml",
        "cmd__kueueviz__examples__01-cluster-queues.yaml",
        "cmd__kueueviz__examples__01.5-cohorts.yaml",
        "cmd__kueueviz__examples__02-local-queues.yaml",
    ]
    texts = [(PEER_MANIFESTS / "kueue" / n).read_text() for n in names]
    code, doc, err = simulate(tmp_path, capsys, NODES, *texts, pods("default", 0))
    assert code == 0, err
    queues = doc["queues"]
    foundation = queues["ai-for-humanity-foundation"]
    assert foundation["parent"] == "root"
    assert foundation["deserved"]["cpu"] == "1600m"  # 1 + 300m + 300m of its three ClusterQueues
    assert foundation["capability"]["cpu"] == "1600m"
    assert {n for n, q in queues.items() if q["parent"] == "ai-for-humanity-foundation"} == {
        "emergency-cluster-queue",
        "agi-cluster-queue",
        "llm-cluster-queue",
    }
    assert (queues["research"]["parent"], queues["engineering"]["parent"]) == ("organization", "organization")
    assert queues["unused-cluster-queue"]["parent"] == "root"


@pytest.mark.skipif(not (PEER_MANIFESTS / "kueue").is_dir(), reason="the peers' manifests are not beside the repo")
def test_shared_quota_setup_reads_the_two_cpu_flavors(tmp_path: Path, capsys: Any) -> None:
    """Kueue's example with cpu in two flavors (node-type on-demand and spot, 9 cpu each): quota per flavor; two Jobs
    of 6 in the namespace of its LocalQueue: the first fits on-demand, the second no longer does there (no
    preemption policy) and is given spot, on the spot nodes."""
    text = (PEER_MANIFESTS / "kueue" / "site__static__examples__admin__shared-quota-setup.yaml").read_text()
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {kind}-{i}, labels: {{node-type: {kind}}}}}\n"
        f'status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}\n'
        for kind in ("on-demand", "spot")
        for i in range(9)
    )
    jobs = job("default", 6, "first") + job("default", 6, "second")
    jobs = (
        jobs.replace("queue-name: lq", "queue-name: team-queue")
        .replace("name: second\n", "name: second\n  creationTimestamp: '2026-01-01T00:00:01Z'\n")
        .replace("name: first\n", "name: first\n  creationTimestamp: '2026-01-01T00:00:00Z'\n")
    )
    code, doc, err = simulate(tmp_path, capsys, nodes + text + jobs)
    assert code == 0, err
    assert doc["queues"]["team-cluster-queue"]["deserved"] == {
        "cpu@on-demand": "9",
        "cpu@spot": "9",
        "cpu_credits": "14",
    }
    assert doc["podgroups"]["default/first"]["flavors"] == {"cpu": "on-demand"}
    assert doc["podgroups"]["default/second"]["flavors"] == {"cpu": "spot"}
    assert sorted(n for p, n in doc["bindings"].items() if p.startswith("default/second-")) == [
        f"spot-{i}" for i in range(6)
    ]
    assert doc["podgroups"]["default/second"]["flavorAssignment"].startswith("flavor spot for cpu (tried on-demand: ")


def test_a_required_node_affinity_skips_the_flavors_it_excludes(tmp_path: Path, capsys: Any) -> None:
    """Kueue's ``shared-quota-setup`` (cpu in on-demand then spot, 9 each): a Job of 2 whose pods require
    ``node-type NotIn [on-demand]`` is given spot though on-demand has room, and runs on the spot nodes; a term on a
    key no flavor labels (``zone``) leaves the choice to the order of the flavors."""
    text = (
        Path(__file__).resolve().parents[1] / "fixtures" / "kueue-examples" / "admin__shared-quota-setup.yaml"
    ).read_text()
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {kind}-{i}, labels: {{node-type: {kind}}}}}\n"
        f'status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}\n'
        for kind in ("on-demand", "spot")
        for i in range(9)
    )
    affinity = (
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: node-type, operator: NotIn, values: [on-demand]}]}]}}}"
    )
    spot = job("default", 2, "spot-only").replace("    spec: {containers:", f"    spec: {{{affinity}, containers:")
    zoned = job("default", 2, "zoned").replace(
        "    spec: {containers:",
        "    spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: zone, operator: In, values: [z1]}]}]}}}, containers:",
    )
    jobs = (spot + zoned).replace("queue-name: lq", "queue-name: team-queue")
    code, doc, err = simulate(tmp_path, capsys, nodes + text + jobs)
    assert code == 0, err
    assert doc["podgroups"]["default/spot-only"]["flavors"] == {"cpu": "spot"}
    assert doc["podgroups"]["default/spot-only"]["flavorAssignment"] == (
        "flavor spot for cpu (tried on-demand: does not match (required node affinity excludes it); spot: fits)"
    )
    placed = [n for p, n in doc["bindings"].items() if p.startswith("default/spot-only-")]
    assert len(placed) == 2 and all(n.startswith("spot-") for n in placed)
    assert doc["podgroups"]["default/zoned"]["flavors"] == {"cpu": "on-demand"}


def test_a_stop_policy_closes_the_cluster_queue(tmp_path: Path, capsys: Any) -> None:
    """``fairway export --format kueue`` writes a Closed leaf as ``stopPolicy: Hold``; Hold and HoldAndDrain read back
    as Closed, and a stop policy Kueue does not know is named."""
    text = (
        cluster_queue("team-a", "ab", "9")
        + cluster_queue("team-b", "ab", "3").replace("namespaceSelector: {}", "stopPolicy: Hold")
        + cluster_queue("team-c", "ab", "3").replace("namespaceSelector: {}", "stopPolicy: HoldAndDrain")
    )
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + text)
    assert code == 0, err
    assert [doc["queues"][q]["state"] for q in ("team-a", "team-b", "team-c")] == ["Open", "Closed", "Closed"]
    bad = cluster_queue("team-d", "ab", "3").replace("namespaceSelector: {}", "stopPolicy: Pause")
    code, _, err = simulate(tmp_path, capsys, NODES + FLAVOR + bad)
    assert code == 2 and "ClusterQueue team-d" in err and "spec.stopPolicy: 'Pause' is not one of" in err, err


def cohort(name: str, parent: str | None = None, cpu: str | None = None, extra: str = "") -> str:
    spec = {} if parent is None else {"parentName": parent}
    text = f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\n"
    if cpu is None:
        return text + f"spec: {json.dumps(spec)}\n"
    row = f"{{name: cpu, nominalQuota: {cpu}{', ' + extra if extra else ''}}}"
    groups = f"[{{coveredResources: [cpu], flavors: [{{name: default-flavor, resources: [{row}]}}]}}]"
    parent_key = f"parentName: {parent}, " if parent else ""
    return text + f"spec: {{{parent_key}resourceGroups: {groups}}}\n"


def running(namespace: str, count: int) -> str:
    """``count`` one-cpu pods of the LocalQueue ``lq`` of ``namespace``, Running on the nodes."""
    return "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: r{i}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {{nodeName: n{i}, containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
status: {{phase: Running}}
"""
        for i in range(count)
    )


BIG_NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}
"""
    for i in range(60)
)


def test_a_cousins_lending_limit_keeps_its_quota(tmp_path: Path, capsys: Any) -> None:
    """Issue 28's probe, as Kueue's tests name their top cohort: root <- left (10) <- cq1 (10), root <- right (10) <-
    cq2 (10, lendingLimit 0); cq1 runs 10, cq2 runs 5, 25 one-cpu pods wait in cq1: Kueue admits 20 (cq1's maximum
    is 30), since the 5 cpu cq2 keeps reach no cousin; the cohort root is the queue root-cohort."""
    tree = (
        FLAVOR
        + cohort("root")
        + cohort("left", "root", "10")
        + cohort("right", "root", "10")
        + cluster_queue("cq1", "left", "10")
        + cluster_queue("cq2", "right", "10", "lendingLimit: 0")
    )
    cq2_running = running("cq2", 5).replace("nodeName: n", "nodeName: n5")  # n50..n54, apart from cq1's n0..n9
    code, doc, err = simulate(tmp_path, capsys, BIG_NODES + tree + running("cq1", 10) + cq2_running + pods("cq1", 25))
    assert code == 0, err
    queues = doc["queues"]
    assert sum(1 for pod in doc["bindings"] if pod.startswith("cq1/p")) == 20
    assert queues["cq1"]["realCapability"]["cpu"] == "30" and queues["cq1"]["allocated"]["cpu"] == "30"
    assert queues["root-cohort"]["kueue"] == {"kind": "Cohort", "name": "root"}
    assert queues["left"]["parent"] == "root-cohort" and queues["root-cohort"]["parent"] == "root"
    waiting = [pg for key, pg in doc["podgroups"].items() if key.startswith("cq1/") and pg["phase"] == "Pending"]
    assert len(waiting) == 5


def test_cohort_and_cluster_queue_named_like_built_ins(tmp_path: Path, capsys: Any) -> None:
    """A Cohort ``root`` and a ClusterQueue ``default`` (and a ClusterQueue named like its cohort) are read under
    identities of their own, keep their names in the output, and are written back under them by the export; the
    export simulates to the same numbers. A Volcano Queue ``default`` stays the built-in, as in Volcano."""
    from engine.manifests import load_manifests
    from engine.manifests.export import FORMATS

    volcano_default = """---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 2, reclaimable: true}
"""
    tree = (
        FLAVOR
        + volcano_default
        + cohort("root", None, "2")
        + cluster_queue("default", "root", "3")
        + cluster_queue("team", "team", "4").replace("cohortName: team", "cohortName: root")
        + cluster_queue("team-b", "team", "1")
    )
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("default", 12))
    assert code == 0, err
    queues = doc["queues"]
    assert queues["root"]["parent"] is None and "kueue" not in queues["root"]
    assert "kueue" not in queues["default"] and (queues["default"]["parent"], queues["default"]["weight"]) == (
        "root",
        2,
    )
    assert queues["root-cohort"]["kueue"] == {"kind": "Cohort", "name": "root"}
    assert queues["default-clusterqueue"]["kueue"] == {"kind": "ClusterQueue", "name": "default"}
    assert queues["default-clusterqueue"]["parent"] == "root-cohort"
    # the cohort team (only named by team-b) keeps its name; the ClusterQueue team is team-clusterqueue
    assert queues["team-clusterqueue"]["kueue"] == {"kind": "ClusterQueue", "name": "team"}
    assert queues["team-clusterqueue"]["parent"] == "root-cohort"
    assert queues["team-b"]["parent"] == "team" and "kueue" not in queues["team"]
    assert queues["root-cohort"]["deserved"]["cpu"] == "9"  # 2 + 3 + 4
    # the LocalQueue of namespace default points at the ClusterQueue default: 9 of the 12 pods (its tree's quota)
    assert bound(doc, "default") == 9
    assert {pg["queue"] for pg in doc["podgroups"].values()} == {"default-clusterqueue"}
    simulate(tmp_path, capsys, NODES + tree)  # in0.yaml: the tree alone, then as a table
    table = main(["simulate", "-f", str(tmp_path / "in0.yaml")])
    out = capsys.readouterr().out
    assert (
        table == 0
        and "root-cohort (Kueue Cohort root)" in out
        and "default-clusterqueue (Kueue ClusterQueue default)" in out
    )
    # export: Kueue's names again, and the same numbers when simulated
    snapshot = load_manifests([("tree.yaml", tree)]).snapshot
    exported = dump_yaml_docs(FORMATS["kueue"](snapshot))
    names = {(d["kind"], d["metadata"]["name"]) for d in yaml_docs(exported)}
    assert {("Cohort", "root"), ("ClusterQueue", "default"), ("Cohort", "team"), ("ClusterQueue", "team")} <= names
    local_queue = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: default}
"""
    code, again, err = simulate(tmp_path, capsys, NODES + exported + local_queue + pods("default", 12))
    assert code == 0, err
    for name in ("root-cohort", "default-clusterqueue", "team", "team-clusterqueue", "team-b"):
        for key in ("parent", "deserved", "realCapability", "allocated", "weight", "kueue"):
            assert again["queues"][name].get(key) == queues[name].get(key), (name, key)
    assert bound(again, "default") == 9


def dump_yaml_docs(docs: list[dict[str, Any]]) -> str:
    import yaml

    return "".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs)


def yaml_docs(text: str) -> list[dict[str, Any]]:
    import yaml

    return [d for d in yaml.safe_load_all(text) if d]


def test_fractional_and_zero_weights(tmp_path: Path, capsys: Any) -> None:
    """``fairSharing.weight`` is a quantity: 0.75 and 250m keep their 3:1 (whole weights 3 and 1, the exact ones in
    ``kueueWeight``); a set of whole weights is unchanged; 0 is kept for fair sharing and is the whole weight 1, with a
    warning; the export writes the exact weights back and simulates to the same weights."""
    from engine.manifests import load_manifests
    from engine.manifests.export import FORMATS

    def weighted(name: str, weight: str) -> str:
        return cluster_queue(name, "ab", "4").replace("namespaceSelector: {}", f'fairSharing: {{weight: "{weight}"}}')

    tree = FLAVOR + weighted("a", "0.75") + weighted("b", "250m") + weighted("c", "2") + weighted("d", "0")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree)
    assert code == 0, err
    queues = doc["queues"]
    assert [queues[q]["weight"] for q in "abcd"] == [3, 1, 8, 1]
    assert [queues[q].get("kueueWeight") for q in "abcd"] == ["0.75", "0.25", "2", "0"]
    assert "spec.fairSharing.weight 0 (an infinite share in Kueue's fair sharing)" in err
    whole = FLAVOR + weighted("a", "2") + weighted("b", "3")
    code, doc, err = simulate(tmp_path, capsys, NODES + whole)
    assert [doc["queues"][q]["weight"] for q in "ab"] == [2, 3]
    assert "kueueWeight" not in doc["queues"]["a"]
    exported = dump_yaml_docs(FORMATS["kueue"](load_manifests([("t.yaml", tree)]).snapshot))
    weights = {
        d["metadata"]["name"]: d["spec"]["fairSharing"]["weight"]
        for d in yaml_docs(exported)
        if "spec" in d and "fairSharing" in d["spec"]
    }
    assert (weights["a"], weights["b"], weights["c"], weights["d"]) == ("0.75", "0.25", "2", "0")
    code, again, err = simulate(tmp_path, capsys, NODES + exported)
    assert code == 0, err
    assert [again["queues"][q]["weight"] for q in "abcd"] == [3, 1, 8, 1]
    tiny = FLAVOR + weighted("a", "0.000001") + weighted("b", "1")
    code, doc, err = simulate(tmp_path, capsys, NODES + tiny)
    assert code == 0, err
    assert [doc["queues"][q]["weight"] for q in "ab"] == [1, 65535]  # 1:1000000 does not fit: the nearest that does
    assert "the ratios need whole weights above 65535; read as 1, 65535" in err
    for bad, words in (
        ("1e-10", "must be 0 or greater than 10^-9"),
        ("-1", "must be 0 or"),
        ("x", "not a valid quantity"),
    ):
        code, _, err = simulate(tmp_path, capsys, NODES + FLAVOR + weighted("a", bad))
        assert code == 2 and "spec.fairSharing.weight" in err and words in err, err


def test_a_tree_with_no_quota_admits_nothing(tmp_path: Path, capsys: Any) -> None:
    """Kueue's top cohort with 0 cpu (``root (0 CPU)`` in its integration tests) gives nothing: a capability of 0 cpu
    reads as unlimited in Volcano's terms, so the reader holds the top at its quota with a borrowing limit of 0."""
    tree = FLAVOR + cohort("top", None, "0") + cluster_queue("cq", "top", "0")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + pods("cq", 1))
    assert code == 0, err
    assert bound(doc, "cq") == 0
    assert doc["queues"]["top"]["borrowingLimit"] == {"cpu": "0"}
