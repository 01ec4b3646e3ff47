"""Kueue's example setups (``site/static/examples`` of kubernetes-sigs/kueue at ``ff69552e79``, v0.17), read by
``fairway simulate`` as Kueue ships them: the YAML files are copied unchanged under ``tests/fixtures/kueue-examples``
(``<dir>__<file>.yaml``, a header line naming the source). Each case names the examples it reads (a file may be
given several times: ``kubectl create`` names each copy from its ``generateName``), the nodes it runs on, the
ClusterQueues' quota, the jobs admitted (their pods bound) and those left waiting, as Kueue's documentation
describes them (``site/content/en/docs``: the quick start, "Run a Kubernetes Job", "Run plain Pods", "Administer
cluster quotas", "Admission Fair Sharing"). The examples left out, and why, are listed in ``docs/simulate.md``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from engine.manifests import ManifestError, load_manifests
from engine.objects import Taint, Toleration

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "kueue-examples"


def nodes(count: int, cpu: str, labels: dict[str, str] | None = None, prefix: str = "n") -> str:
    shown = f", labels: {json.dumps(labels)}" if labels else ""
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {prefix}{i}{shown}}}\n"
        f'status: {{allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110"}}}}\n'
        for i in range(count)
    )


@dataclass
class Example:
    """Kueue's example files (by their fixture name), the nodes, each ClusterQueue's ``deserved`` quota, the jobs
    admitted (podgroup -> pods bound) and the number of jobs left waiting."""

    files: list[str]
    nodes: str
    quota: dict[str, dict[str, str]]
    admitted: dict[str, int] = field(default_factory=dict)
    waiting: int = 0
    flavors: dict[str, dict[str, str]] = field(default_factory=dict)  # podgroup -> resource -> flavor
    members: dict[str, str] = field(default_factory=dict)  # pod -> its podgroup, where its name does not say


CASES: dict[str, Example] = {
    # quick start: a ClusterQueue of 9 cpu and 9Gi, a Job of 3 one-cpu pods: admitted
    "getting-started": Example(
        files=["getting-started__quick-start-setup.yaml", "getting-started__quick-start-job.yaml"],
        nodes=nodes(3, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "9Gi"}},
        admitted={"default/sample-job": 3},
    ),
    # "Run a Kubernetes Job": each Job asks for 3 cpu of the 9: three are admitted, the fourth waits
    "single ClusterQueue, four sample Jobs": Example(
        files=["admin__single-clusterqueue-setup.yaml", *["jobs__sample-job.yaml"] * 4],
        nodes=nodes(4, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "36Gi"}},
        admitted={f"default/sample-job-0000{i}": 3 for i in (1, 2, 3)},
        waiting=1,
    ),
    # "Run plain Pods": a Pod of 3 cpu and a group of two Pods of 3 cpu (one workload, sample-group) fit the 9 cpu
    "plain Pods": Example(
        files=[
            "admin__single-clusterqueue-setup.yaml",
            "pods-kueue__kueue-pod.yaml",
            "pods-kueue__kueue-pod-group.yaml",
        ],
        nodes=nodes(3, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "36Gi"}},
        admitted={"default/podgroup-kueue-sleep-00001": 1, "default/sample-group": 2},
        members={f"default/sample-{role}-00001": "default/sample-group" for role in ("leader", "worker")},
    ),
    # an elastic Job (parallelism 3 of 100m) is admitted as it stands
    "scalable Job": Example(
        files=["getting-started__quick-start-setup.yaml", "jobs__sample-scalable-job.yaml"],
        nodes=nodes(1, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "9Gi"}},
        admitted={"default/sample-elastic-job": 3},
    ),
    # partial admission: a Job of 20 one-cpu pods that may run with 5 or more; the 9 cpu hold 9 of them
    "partial admission": Example(
        files=["admin__single-clusterqueue-setup.yaml", "jobs__sample-job-partial-admission.yaml"],
        nodes=nodes(3, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "36Gi"}},
        admitted={"default/sample-job-partial-admission": 9},
    ),
    # "Run a JobSet": a workers Job of one 1-cpu pod and a driver Job of one 2-cpu pod, one workload of 3 cpu admitted
    # whole: three of four fit the 9 cpu, the fourth waits
    "four sample JobSets": Example(
        files=["admin__single-clusterqueue-setup.yaml", *["jobs__sample-jobset.yaml"] * 4],
        nodes=nodes(4, "4"),
        quota={"cluster-queue": {"cpu": "9", "memory": "36Gi"}},
        admitted={f"default/sleep-job-0000{i}": 2 for i in (1, 2, 3)},
        waiting=1,
    ),
    # Kubeflow's training jobs and the MPIJob, each one workload of its pod sets (Master/Launcher, PS, Worker):
    # every one fits the 9 cpu and is admitted whole
    **{
        f"sample {kind}": Example(
            files=["admin__single-clusterqueue-setup.yaml", f"jobs__sample-{kind.lower()}.yaml"],
            nodes=nodes(3, "4"),
            quota={"cluster-queue": {"cpu": "9", "memory": "36Gi"}},
            admitted={f"default/{job}": pods},
        )
        for kind, job, pods in (
            ("PyTorchJob", "pytorch-simple", 2),
            ("TFJob", "tensorflow-dist-mnist", 3),
            ("XGBoostJob", "xgboost-dist-iris-test-train", 3),
            ("PaddleJob", "paddle-simple-cpu", 2),
            ("JAXJob", "jax-simple", 2),
            ("MPIJob", "pi", 3),  # limits without requests: the limits are the requests
        )
    },
    # cpu in two flavors of 9 (on-demand, spot) and cpu_credits: the sample Job's 3 cpu fit on-demand
    "shared quota": Example(
        files=["admin__shared-quota-setup.yaml", "admin__shared-quota-sample-job.yaml"],
        nodes=nodes(3, "4", {"node-type": "on-demand"}, "od") + nodes(3, "4", {"node-type": "spot"}, "spot"),
        quota={"team-cluster-queue": {"cpu@on-demand": "9", "cpu@spot": "9", "cpu_credits": "14"}},
        admitted={"default/sample-job-00001": 1},
        flavors={"default/sample-job-00001": {"cpu": "on-demand"}},
    ),
    # Admission Fair Sharing: one Job of 3 cpu from each LocalQueue, both within the 9 cpu
    "admission fair sharing": Example(
        files=[
            "admission-fs__admission-fair-sharing-setup.yaml",
            "admission-fs__lq-a-simple-job.yaml",
            "admission-fs__lq-b-simple-job.yaml",
        ],
        nodes=nodes(2, "4"),
        quota={"cluster-queue": {"cpu": "9"}},
        admitted={"default/sample-job-00001": 1, "default/sample-job-00002": 1},
    ),
    # three flavors of cpu and memory in order of preference (concurrentAdmissionPolicy is not read): quota per flavor
    "concurrent admission setup": Example(
        files=["admin__concurrent-admission-setup.yaml"],
        nodes=nodes(1, "4"),
        quota={
            "team-cluster-queue": {
                "cpu@reservation": "4",
                "cpu@on-demand": "8",
                "cpu@spot": "16",
                "memory@reservation": "16Gi",
                "memory@on-demand": "32Gi",
                "memory@spot": "64Gi",
            }
        },
    ),
    # a ClusterQueue with admission checks only (not read) and no quota; the empty ResourceFlavor
    "minimal ClusterQueue": Example(
        files=["admin__minimal-cq.yaml", "admin__resource-flavor-empty.yaml"],
        nodes=nodes(1, "4"),
        quota={"cluster-queue-2": {}},
    ),
}


def run(tmp_path: Path, capsys: Any, files: list[str], extra: str) -> dict[str, Any]:
    inputs = tmp_path / "nodes.yaml"
    inputs.write_text(extra)
    args = ["-f", str(inputs)]
    for name in files:
        args += ["-f", str(EXAMPLES / name)]
    code = main(["simulate", *args, "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc: dict[str, Any] = json.loads(out.out)
    return doc


@pytest.mark.parametrize("name", sorted(CASES))
def test_kueue_example_simulates_as_documented(name: str, tmp_path: Path, capsys: Any) -> None:
    case = CASES[name]
    doc = run(tmp_path, capsys, case.files, case.nodes)
    for queue, quota in case.quota.items():
        assert doc["queues"][queue]["deserved"] == quota
    bound: dict[str, int] = {}
    for pod in doc["bindings"]:
        group = case.members.get(pod) or next(
            pg for pg in doc["podgroups"] if pod == pg.replace("podgroup-", "") or pod.startswith(f"{pg}-")
        )
        bound[group] = bound.get(group, 0) + 1
    assert bound == case.admitted
    waiting = [pg for pg, row in doc["podgroups"].items() if row["phase"] == "Pending"]
    assert len(waiting) == case.waiting
    for pg, want in case.flavors.items():
        assert doc["podgroups"][pg]["flavors"] == want


def test_every_example_file_is_used() -> None:
    used = {f for case in CASES.values() for f in case.files} | set(FLAVOR_EXAMPLES)
    assert used == {p.name for p in EXAMPLES.glob("*.yaml")}


# the ResourceFlavor examples: each beside a flavor of our own, "on-demand", in a ClusterQueue of 4 cpu in each
FLAVOR_EXAMPLES = {
    "admin__resource-flavor-taints.yaml": ((Taint("spot", "true", "NoSchedule"),), ()),
    "admin__resource-flavor-tolerations.yaml": ((), (Toleration("spot-taint", "Exists", "", "NoSchedule"),)),
}
TWO_FLAVORS = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {instance-type: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: spot, resources: [{name: cpu, nominalQuota: 4}]}
    - {name: on-demand, resources: [{name: cpu, nominalQuota: 4}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


@pytest.mark.parametrize("name", sorted(FLAVOR_EXAMPLES))
def test_resource_flavor_examples_read_their_labels_taints_and_tolerations(name: str) -> None:
    taints, tolerations = FLAVOR_EXAMPLES[name]
    snap = load_manifests([("flavor.yaml", (EXAMPLES / name).read_text()), ("cq.yaml", TWO_FLAVORS)]).snapshot
    assert snap.kueue_flavors is not None
    spot = snap.kueue_flavors.flavors["spot"]
    assert (dict(spot.node_labels), spot.node_taints, spot.tolerations) == (
        {"instance-type": "spot"},
        taints,
        tolerations,
    )


def test_the_tainted_flavor_is_skipped_by_a_pod_that_does_not_tolerate_it(tmp_path: Path, capsys: Any) -> None:
    """Kueue's taints example: a workload that does not tolerate ``spot=true:NoSchedule`` is given the next flavor,
    one that tolerates it is given spot."""
    pods = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
  tolerations: {tolerations}
"""
        for name, tolerations in (("plain", "[]"), ("tolerant", '[{key: spot, value: "true", effect: NoSchedule}]'))
    )
    spot_nodes = nodes(1, "4", {"instance-type": "spot"}, "spot").replace(
        "status:", "spec: {taints: [{key: spot, value: 'true', effect: NoSchedule}]}\nstatus:"
    )
    extra = spot_nodes + nodes(1, "4", {"instance-type": "on-demand"}, "od") + TWO_FLAVORS + pods
    doc = run(tmp_path, capsys, ["admin__resource-flavor-taints.yaml"], extra)
    assert doc["podgroups"]["default/podgroup-plain"]["flavors"] == {"cpu": "on-demand"}
    assert doc["podgroups"]["default/podgroup-tolerant"]["flavors"] == {"cpu": "spot"}
    assert doc["bindings"] == {"default/plain": "od0", "default/tolerant": "spot0"}


def test_the_pod_group_example_is_one_workload_of_two_pods() -> None:
    """``kueue-pod-group.yaml``: the leader and the worker (3 cpu each, ``pod-group-total-count: "2"``) are one
    podgroup named after the group, admitted whole; the leader alone waits for the worker."""
    setup = (EXAMPLES / "admin__single-clusterqueue-setup.yaml").read_text()
    group = (EXAMPLES / "pods-kueue__kueue-pod-group.yaml").read_text()
    snap = load_manifests([("setup.yaml", setup), ("group.yaml", group)]).snapshot
    pg = snap.podgroups["default/sample-group"]
    assert (pg.queue, pg.min_member, pg.min_resources) == ("cluster-queue", 2, {"cpu": 6000})
    assert sorted(t.name for t in snap.tasks.values() if t.podgroup == pg.key) == [
        "sample-leader-00001",
        "sample-worker-00001",
    ]
    leader = group[: group.index("---", group.index("kind: Pod"))]
    alone = load_manifests([("setup.yaml", setup), ("leader.yaml", leader)]).snapshot
    assert dict(alone.admission.pod_group_waits) == {
        "default/sample-group": "1 of its 2 pods exist (kueue.x-k8s.io/pod-group-total-count): Kueue admits a pod "
        "group only once all its pods exist"
    }


def test_generate_name_numbers_each_copy_and_a_missing_name_is_named() -> None:
    job = (EXAMPLES / "jobs__sample-job.yaml").read_text()
    snap = load_manifests(
        [("a.yaml", job), ("b.yaml", job), ("c.yaml", job.replace("namespace: default", "namespace: x"))]
    ).snapshot
    assert {k for k in snap.podgroups if "sample-job" in k} == {
        "default/sample-job-00001",
        "default/sample-job-00002",
        "x/sample-job-00001",
    }
    with pytest.raises(ManifestError, match=r"metadata\.name: missing"):
        load_manifests([("d.yaml", job.replace("generateName: sample-job-", "labels2: {}"))])
