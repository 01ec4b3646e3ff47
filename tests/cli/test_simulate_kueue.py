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


def test_several_flavors_for_one_resource_are_skipped_named(tmp_path: Path, capsys: Any) -> None:
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
    assert (
        "warning: resource cpu has quota in several flavors (on-demand, spot); Fairway reads one flavor per "
        "resource, so cpu is left out of every ClusterQueue and Cohort"
    ) in err
    assert doc["queues"]["cq"]["deserved"] == {"memory": "36Gi"}


def test_unknown_local_queue_and_unlabelled_job(tmp_path: Path, capsys: Any) -> None:
    tree = FLAVOR + cluster_queue("team-a", "team-ab", "9")
    stray = pods("team-x", 1) + job("team-a", 1, "plain").replace("  labels: {kueue.x-k8s.io/queue-name: lq}\n", "")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree + stray)
    assert doc["podgroups"]["team-x/podgroup-p0"]["queue"] == "default"
    assert code == 0, err
    assert "label kueue.x-k8s.io/queue-name=lq: no LocalQueue team-x/lq in the input; queue default used" in err
    assert "(Job team-a/plain): a Job without the label kueue.x-k8s.io/queue-name; skipped" in err


def test_bad_trees_exit_2_naming_the_document(tmp_path: Path, capsys: Any) -> None:
    clash = cluster_queue("team-a", "team-a", "9")
    code, _, err = simulate(tmp_path, capsys, NODES + clash)
    assert code == 2 and "team-a" in err
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
def test_shared_quota_setup_skips_the_two_cpu_flavors(tmp_path: Path, capsys: Any) -> None:
    text = (PEER_MANIFESTS / "kueue" / "site__static__examples__admin__shared-quota-setup.yaml").read_text()
    code, doc, err = simulate(tmp_path, capsys, NODES + text)
    assert code == 0, err
    assert "resource cpu has quota in several flavors (on-demand, spot)" in err
    assert doc["queues"]["team-cluster-queue"]["deserved"] == {"cpu_credits": "14"}


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
