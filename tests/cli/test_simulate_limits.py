"""``fairway simulate`` reads borrowing and lending limits from the annotations ``fairway.io/borrowing-limit`` and
``fairway.io/lending-limit`` (JSON resource lists) on Volcano Queues and Koordinator ElasticQuotas, binds by them,
and prints them as ``borrowingLimit`` / ``lendingLimit`` on every entry of ``queues`` and ``quotas`` (an empty object:
no limit). The numbers are Kueue's documented example: two members with nominal 9 and 12 cpu, the second lending at
most 1: the first reaches 10 cpu, the second 21."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controlplane.cli import main

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}
"""
    for i in range(21)
)

CAPACITY = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: gang
    - plugins:
      - name: predicates
      - name: capacity
        enableHierarchy: true
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: ab}
spec: {deserved: {cpu: "21"}, capability: {cpu: "21"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {parent: ab, deserved: {cpu: "9"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: b
  annotations: {fairway.io/lending-limit: '{"cpu": "1"}'}
spec: {parent: ab, deserved: {cpu: "12"}}
"""

ELASTIC = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "allocate"
    tiers:
    - plugins:
      - name: predicates
      - name: elasticquota
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: a
  namespace: team-a
  annotations: {fairway.io/borrowing-limit: '{"cpu": "1"}'}
spec: {min: {cpu: "9"}, max: {cpu: "100"}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: b
  namespace: team-b
  annotations: {fairway.io/lending-limit: '{"cpu": "0"}'}
spec: {min: {cpu: "12"}, max: {cpu: "100"}}
"""


def pods(queue: str, namespace: str, count: int, label: str = "") -> str:
    labels = f"labels: {{quota.scheduling.koordinator.sh/name: {label}}}" if label else ""
    annotations = "" if label else f"annotations: {{scheduling.volcano.sh/queue-name: {queue}}}"
    head = f"""---
apiVersion: v1
kind: Namespace
metadata:
  name: {namespace}
  {annotations}
"""
    return head + "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
  namespace: {namespace}
  {labels}
spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""
        for i in range(count)
    )


def simulate(tmp_path: Path, capsys: Any, text: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out else {}, out.err


def test_queue_lending_limit_kueue_numbers(tmp_path: Path, capsys: Any) -> None:
    code, doc, err = simulate(tmp_path, capsys, NODES + CAPACITY + pods("a", "team-a", 15))
    assert code == 0, err
    queues = doc["queues"]
    assert queues["a"]["realCapability"]["cpu"] == "10"
    assert queues["b"]["realCapability"]["cpu"] == "21"
    assert (queues["b"]["lendingLimit"], queues["b"]["borrowingLimit"]) == ({"cpu": "1"}, {})
    assert (queues["a"]["lendingLimit"], queues["a"]["borrowingLimit"]) == ({}, {})
    assert all("borrowingLimit" in q and "lendingLimit" in q for q in queues.values())
    bound = [pod for pod in doc["bindings"] if pod.startswith("team-a/")]
    assert len(bound) == 10  # b keeps 11 of its 12 cpu free
    # the second member alone reaches 21
    code, doc, err = simulate(tmp_path, capsys, NODES + CAPACITY + pods("b", "team-b", 25))
    assert code == 0, err
    assert len(doc["bindings"]) == 21


def test_quota_group_limits(tmp_path: Path, capsys: Any) -> None:
    text = NODES + ELASTIC + pods("", "team-a", 15, label="a")
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0, err
    quotas = doc["quotas"]
    assert quotas["a"]["borrowingLimit"] == {"cpu": "1"} and quotas["a"]["lendingLimit"] == {}
    assert quotas["b"]["lendingLimit"] == {"cpu": "0"}  # a zero limit is printed: it lends nothing
    assert quotas["a"]["runtime"]["cpu"] == "9"  # b lends nothing; a borrows nothing
    assert quotas["b"]["runtime"]["cpu"] == "12"
    assert quotas["root"]["borrowingLimit"] == {} and quotas["root"]["lendingLimit"] == {}
    assert len(doc["bindings"]) == 9


def test_bad_limit_annotation_names_the_field(tmp_path: Path, capsys: Any) -> None:
    text = NODES + CAPACITY.replace("""'{"cpu": "1"}'""", """'["cpu"]'""")
    code, _, err = simulate(tmp_path, capsys, text)
    assert code == 2
    assert "metadata.annotations[fairway.io/lending-limit]: expected a JSON object" in err
    text = NODES + CAPACITY.replace("""'{"cpu": "1"}'""", """'{"cpu": "lots"}'""")
    code, _, err = simulate(tmp_path, capsys, text)
    assert code == 2 and "fairway.io/lending-limit" in err and "Queue" in err


def reclaim_snapshot(lending_limit: bool) -> str:
    """21 one-cpu nodes; queue a (deserved 15) runs 15 preemptable pods; b (deserved 12) waits with 11."""
    annotation = '\n  annotations: {fairway.io/lending-limit: \'{"cpu": "1"}\'}' if lending_limit else ""
    head = f"""---
apiVersion: v1
kind: ConfigMap
metadata: {{name: volcano-scheduler-configmap, namespace: volcano-system}}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, reclaim"
    tiers:
    - plugins:
      - name: priority
      - name: gang
      - name: conformance
      - name: capacity
    - plugins:
      - name: predicates
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {{name: a}}
spec: {{deserved: {{cpu: "15"}}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: b{annotation}
spec: {{deserved: {{cpu: "12"}}}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: tb, annotations: {{scheduling.volcano.sh/queue-name: b}}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: ajob, namespace: ta}}
spec: {{minMember: 1, queue: a}}
status: {{phase: Running}}
"""
    running = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: a{i}, namespace: ta, annotations: {{scheduling.k8s.io/group-name: ajob}}}}
spec: {{nodeName: n{i}, containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
status: {{phase: Running}}
"""
        for i in range(15)
    )
    return NODES + head + running + pods("b", "tb", 11)


def test_a_lender_takes_back_what_it_lent_beyond_its_new_limit(tmp_path: Path, capsys: Any) -> None:
    """b's lending limit (1 of its 12) was set while a held 15 (its deserved, 5 above the realCapability the limit now
    gives it): b reclaims those 5; without the limit a keeps them."""
    code, doc, err = simulate(tmp_path, capsys, reclaim_snapshot(lending_limit=True))
    assert code == 0, err
    assert doc["queues"]["a"]["realCapability"]["cpu"] == "10"
    assert len(doc["evictions"]) == 5 and all(v.startswith("ta/a") for v in doc["evictions"])
    assert len(doc["pipelined"]) == 5
    code, doc, err = simulate(tmp_path, capsys, reclaim_snapshot(lending_limit=False))
    assert code == 0, err
    assert doc["evictions"] == [] and doc["queues"]["a"]["realCapability"]["cpu"] == "21"


def test_the_reclaim_says_whose_lending_limit_it_serves() -> None:
    from engine.manifests import load_manifests
    from engine.session.run import run_session

    loaded = load_manifests([("snap.yaml", reclaim_snapshot(lending_limit=True))])
    result = run_session(loaded.snapshot, now=0.0)
    messages = {e.task: e.message for e in result.evictions}
    assert len(messages) == 5
    # flat capacity caps a's deserved at its realCapability, which b's reserve lowered to 10
    assert messages["ta/a0"].endswith(
        "queue a holds 15 cpu, above its deserved 10 (11 kept by other queues' lending limits)"
    )
    blocker = next(e.blocker for e in result.evictions if e.task == "ta/a0")
    assert blocker is not None and (blocker.limit, blocker.available) == ("deserved", 10_000)
