"""``fairway simulate`` with Kueue's admission levers (issue 28 items 5 and 6): ``queueingStrategy``,
``stopPolicy: HoldAndDrain``, ``namespaceSelector``, WorkloadPriorityClass, ``waitForPodsReady`` and Admission Fair
Sharing, each read from Kueue's own objects and changing what is admitted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.test_simulate_kueue import FLAVOR, NODES, bound, cluster_queue, running, simulate


def batch_job(namespace: str, name: str, cpu: int, created: str, labels: str = "", queue: str = "lq") -> str:
    """A batch/v1 Job of ``cpu`` one-cpu pods in LocalQueue ``queue`` of ``namespace``, created at ``created``."""
    return f"""---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "{created}"
  labels: {{kueue.x-k8s.io/queue-name: {queue}{labels}}}
spec:
  parallelism: {cpu}
  template:
    spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""


def alone(name: str, cpu: str, extra: str = "") -> str:
    """A ClusterQueue without a cohort (it cannot borrow) and its LocalQueue ``lq`` in namespace ``name``."""
    text = cluster_queue(name, "unused", cpu).replace("  cohortName: unused\n", "")
    return text.replace("  namespaceSelector: {}\n", f"  namespaceSelector: {{}}\n{extra}")


BIG_FIRST = batch_job("team-a", "big", 5, "2026-01-01T00:00:00Z") + batch_job(
    "team-a", "small", 1, "2026-01-01T00:01:00Z"
)


def test_strict_fifo_blocks_behind_a_head_that_cannot_be_admitted(tmp_path: Path, capsys: Any) -> None:
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + alone("team-a", "4") + BIG_FIRST)
    assert code == 0, err
    assert bound(doc, "team-a") == 1  # BestEffortFIFO (Kueue's default): the small job goes ahead
    strict = alone("team-a", "4", "  queueingStrategy: StrictFIFO\n")
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + strict + BIG_FIRST)
    assert code == 0, err
    assert bound(doc, "team-a") == 0
    small = doc["podgroups"]["team-a/small"]
    assert small["phase"] == "Pending"
    assert "StrictFIFO: its first waiting job, team-a/big, cannot be admitted yet: in strict FIFO order" in str(small)
    bad = alone("team-a", "4", "  queueingStrategy: LIFO\n")
    code, _, err = simulate(tmp_path, capsys, NODES + FLAVOR + bad)
    assert code == 2 and "spec.queueingStrategy: 'LIFO' is not one of BestEffortFIFO, StrictFIFO" in err, err


def test_strict_fifo_on_a_volcano_queue_through_the_annotation(tmp_path: Path, capsys: Any) -> None:
    def tree(annotation: str) -> str:
        return f"""---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: q
  annotations: {{{annotation}}}
spec: {{capability: {{cpu: "4"}}}}
"""

    def group(name: str, members: int, created: str) -> str:
        return f"""---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: ns, creationTimestamp: "{created}"}}
spec: {{queue: q, minMember: {members}, minResources: {{cpu: "{members}"}}}}
""" + "".join(
            f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}-{i}
  namespace: ns
  annotations: {{scheduling.k8s.io/group-name: {name}}}
spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""
            for i in range(members)
        )

    jobs = group("big", 5, "2026-01-01T00:00:00Z") + group("small", 1, "2026-01-01T00:01:00Z")
    code, doc, err = simulate(tmp_path, capsys, NODES + tree("") + jobs)
    assert code == 0, err
    assert bound(doc, "ns") == 1
    code, doc, err = simulate(tmp_path, capsys, NODES + tree("fairway.io/queueing-strategy: StrictFIFO") + jobs)
    assert code == 0, err
    assert bound(doc, "ns") == 0


def test_hold_and_drain_evicts_what_runs_and_hold_keeps_it(tmp_path: Path, capsys: Any) -> None:
    work = running("team-a", 3) + batch_job("team-a", "next", 1, "2026-01-01T00:00:00Z")
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + alone("team-a", "8", "  stopPolicy: Hold\n") + work)
    assert code == 0, err
    assert doc["evictions"] == [] and bound(doc, "team-a") == 0  # closed: nothing new, what runs stays
    drain = alone("team-a", "8", "  stopPolicy: HoldAndDrain\n")
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + drain + work)
    assert code == 0, err
    assert sorted(doc["evictions"]) == ["team-a/r0", "team-a/r1", "team-a/r2"]
    assert bound(doc, "team-a") == 0
    status = doc["podgroups"]["team-a/podgroup-r0"]
    assert status["phase"] == "Pending" and "stopped with stopPolicy HoldAndDrain" in str(status), status


NAMESPACES = """---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: research}}
---
apiVersion: v1
kind: Namespace
metadata: {name: guests}
"""
GUEST_QUEUE = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: guests}
spec: {clusterQueue: team-a}
"""


def test_a_namespace_selector_refuses_other_namespaces_with_a_reason(tmp_path: Path, capsys: Any) -> None:
    jobs = batch_job("team-a", "mine", 2, "2026-01-01T00:01:00Z") + batch_job(
        "guests", "theirs", 2, "2026-01-01T00:00:00Z"
    )
    for selector in (
        "  namespaceSelector: {matchLabels: {team: research}}\n",
        "  namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [team-a]}]}\n",
    ):
        cq = alone("team-a", "8").replace("  namespaceSelector: {}\n", selector)
        code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + NAMESPACES + cq + GUEST_QUEUE + jobs)
        assert code == 0, err
        assert bound(doc, "team-a") == 2 and bound(doc, "guests") == 0
        theirs = str(doc["podgroups"]["guests/theirs"])
        assert "namespaceSelector: namespace guests (kubernetes.io/metadata.name=guests) does not match" in theirs
    code, doc, err = simulate(tmp_path, capsys, NODES + FLAVOR + NAMESPACES + alone("team-a", "8") + GUEST_QUEUE + jobs)
    assert bound(doc, "guests") == 2  # {} admits every namespace
    bad = alone("team-a", "8").replace("{}", "{matchExpressions: [{key: team, operator: Near}]}", 1)
    code, _, err = simulate(tmp_path, capsys, NODES + FLAVOR + bad)
    assert code == 2 and "spec.namespaceSelector.matchExpressions[0].operator: 'Near' is not one of" in err, err


PRIORITY_CLASSES = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 10000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: background}
value: 10
"""


def test_a_workload_priority_class_orders_admission(tmp_path: Path, capsys: Any) -> None:
    early = ", kueue.x-k8s.io/priority-class: background"
    late = ", kueue.x-k8s.io/priority-class: urgent"
    jobs = batch_job("team-a", "early", 3, "2026-01-01T00:00:00Z", early) + batch_job(
        "team-a", "late", 3, "2026-01-01T00:05:00Z", late
    )
    tree = NODES + FLAVOR + alone("team-a", "4")
    code, doc, err = simulate(tmp_path, capsys, tree + jobs.replace(early, "").replace(late, ""))
    assert code == 0, err
    assert "team-a/early-0" in doc["bindings"] and "team-a/late-0" not in doc["bindings"]  # first come
    code, doc, err = simulate(tmp_path, capsys, tree + PRIORITY_CLASSES + jobs)
    assert code == 0, err
    assert "team-a/late-0" in doc["bindings"] and "team-a/early-0" not in doc["bindings"]
    code, doc, err = simulate(tmp_path, capsys, tree + jobs)
    assert "no WorkloadPriorityClass urgent in the input" in err


def gang_broken_since(when: str) -> str:
    """A Volcano gang of 3 in ClusterQueue team-a: two pods run, the third waits with no room; Unknown since
    ``when``."""
    return f"""---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: train, namespace: team-a}}
spec: {{queue: team-a, minMember: 3, minResources: {{cpu: "3"}}}}
status:
  phase: Unknown
  conditions:
  - {{type: Unschedulable, status: "True", reason: Unknown, lastTransitionTime: "{when}"}}
""" + "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: train-{i}
  namespace: team-a
  annotations: {{scheduling.k8s.io/group-name: train}}
spec: {{{"nodeName: n" + str(i) + ", " if i < 2 else ""}containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
status: {{phase: {"Running" if i < 2 else "Pending"}}}
"""
        for i in range(3)
    )


def kueue_config(body: str, api: str = "v1beta1") -> str:
    return f"""---
apiVersion: v1
kind: ConfigMap
metadata: {{name: kueue-manager-config, namespace: kueue-system}}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/{api}
    kind: Configuration
{body}"""


def test_wait_for_pods_ready_sets_the_gang_repair_wait(tmp_path: Path, capsys: Any) -> None:
    """Two nodes of 1 cpu: the gang's third pod never fits; it went below its minimum in 2020."""
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: '1', pods: '110'}}}}\n"
        for i in range(2)
    )
    tree = nodes + FLAVOR + alone("team-a", "3") + gang_broken_since("2020-01-01T00:00:00Z")
    enabled = kueue_config(
        "    waitForPodsReady:\n      enable: true\n      timeout: 10m\n"
        "      requeuingStrategy: {backoffBaseSeconds: 30, backoffMaxSeconds: 600}\n"
    )
    code, doc, err = simulate(tmp_path, capsys, tree + enabled)
    assert code == 0, err
    assert sorted(doc["evictions"]) == ["team-a/train-0", "team-a/train-1"]
    assert "gangRepairTimeout 600s" in str(doc["podgroups"]["team-a/train"])
    assert "waitForPodsReady: a gang below its minimum is released whole after 10 minutes" in err, err
    code, doc, err = simulate(tmp_path, capsys, tree + kueue_config("    waitForPodsReady: {enable: false}\n"))
    assert code == 0, err
    assert doc["evictions"] == []  # Kueue without waitForPodsReady never evicts for readiness
    assert "waitForPodsReady is off" in err
    code, _, err = simulate(
        tmp_path, capsys, tree + kueue_config("    waitForPodsReady: {enable: true, timeout: soon}\n")
    )
    assert code == 2 and "waitForPodsReady.timeout" in err, err


def local_queue(namespace: str, weight: str | None, consumed: str | None) -> str:
    spec = "{clusterQueue: shared" + (f', fairSharing: {{weight: "{weight}"}}' if weight else "") + "}"
    status = (
        f'status: {{fairSharing: {{admissionFairSharingStatus: {{consumedResources: {{cpu: "{consumed}"}}}}}}}}\n'
        if consumed
        else ""
    )
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: {namespace}}}
spec: {spec}
{status}"""


AFS_CONFIG = kueue_config(
    "    admissionFairSharing:\n      usageHalfLifeTime: 168h\n      usageSamplingInterval: 5m\n"
    "      resourceWeights: {cpu: 1}\n",
    api="v1beta2",
)


def test_admission_fair_sharing_orders_local_queues_by_their_usage(tmp_path: Path, capsys: Any) -> None:
    """Team a used 30 cpu lately, team b 10: in a 4-cpu ClusterQueue, b's later job goes first; with b's weight
    a quarter of a's, its usage counts four times (40 > 30) and a's goes first."""
    shared = alone("shared", "4", "  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n")
    shared = shared.split("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue")[0]
    jobs = batch_job("a", "ja", 3, "2026-01-01T00:00:00Z") + batch_job("b", "jb", 3, "2026-01-01T00:05:00Z")
    base = NODES + FLAVOR + shared + jobs
    code, doc, err = simulate(tmp_path, capsys, base + local_queue("a", None, "30") + local_queue("b", None, "10"))
    assert code == 0, err
    assert (bound(doc, "a"), bound(doc, "b")) == (3, 0)  # no Configuration's admissionFairSharing: first come
    lqs = local_queue("a", None, "30") + local_queue("b", None, "10")
    code, doc, err = simulate(tmp_path, capsys, base + AFS_CONFIG + lqs)
    assert code == 0, err
    assert (bound(doc, "a"), bound(doc, "b")) == (0, 3)
    lqs = local_queue("a", "1", "30") + local_queue("b", "250m", "10")
    code, doc, err = simulate(tmp_path, capsys, base + AFS_CONFIG + lqs)
    assert code == 0, err
    assert (bound(doc, "a"), bound(doc, "b")) == (3, 0)
