"""Kueue's workloads of several pod sets (``engine.manifests.kueuepodsets``): a JobSet, Kubeflow's training jobs and an
MPIJob labelled with a LocalQueue are one podgroup of their pod sets' pods, admitted whole, with Kueue's priority;
what cannot be used exits 2 naming the field. Kueue's own sample manifests are in ``test_kueue_examples``."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.limits import Limits
from engine.manifests import ManifestError, load_manifests, load_objects
from tests.cli.test_simulate_kueue import simulate

NODES = "".join(
    f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
    'status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}\n'
    for i in range(3)
)
CLASSES = """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 5000
"""


def queue(cpu: str) -> str:
    """A ClusterQueue ``cq`` of ``cpu`` cores and its LocalQueue ``lq`` in namespace ``ns``."""
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{{name: cpu, nominalQuota: {cpu}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
"""


def template(cpu: str = "1", klass: str = "") -> str:
    """A pod template (a YAML flow map) of one container asking for ``cpu``, with ``priorityClassName`` ``klass``."""
    pc = f", priorityClassName: {klass}" if klass else ""
    return f"{{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]{pc}}}}}"


def job(kind: str, body: str, name: str = "train", labels: str = "kueue.x-k8s.io/queue-name: lq") -> str:
    """An object ``kind`` (JobSet, or a Kubeflow kind) in namespace ``ns`` with ``spec`` ``body`` (YAML lines)."""
    api = {"JobSet": "jobset.x-k8s.io/v1alpha2", "MPIJob": "kubeflow.org/v2beta1"}.get(kind, "kubeflow.org/v1")
    return f"---\napiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: ns\n  labels: {{{labels}}}\nspec:\n{body}"


def replicated(
    name: str, replicas: int | None = 1, parallelism: int = 1, completions: int | None = None, **t: str
) -> str:
    fields = [f"name: {name}"] + ([f"replicas: {replicas}"] if replicas is not None else [])
    job_spec = f"parallelism: {parallelism}" + (f", completions: {completions}" if completions is not None else "")
    return f"  - {{{', '.join(fields)}, template: {{spec: {{{job_spec}, template: {template(**t)}}}}}}}\n"


def replica(kind: str, replicas: int | None = 1, **t: str) -> str:
    count = f"replicas: {replicas}, " if replicas is not None else ""
    return f"    {kind}: {{{count}template: {template(**t)}}}\n"


@dataclass
class Shape:
    """The input and what it reads as: the pods (name -> role) of the podgroup ``ns/train``, its cpu in milli-cores,
    its priority and priority class."""

    text: str
    pods: dict[str, str]
    milli: int
    priority: int = 0
    klass: str = ""


SHAPES: dict[str, Shape] = {
    # Kueue's podsCount: replicas x min(parallelism, completions); pods <jobset>-<replicatedJob>-<job>-<pod>
    "JobSet": Shape(
        job(
            "JobSet",
            "  replicatedJobs:\n"
            + replicated("driver", None, cpu="2")
            + replicated("workers", 2, parallelism=3, completions=2),
        ),
        {"train-driver-0-0": "driver", **{f"train-workers-{j}-{p}": "workers" for j in (0, 1) for p in (0, 1)}},
        6000,
    ),
    # replica types in Kueue's order whatever the map's; a missing replicas is 1; the first pod set's class counts
    "PyTorchJob": Shape(
        job(
            "PyTorchJob",
            "  pytorchReplicaSpecs:\n" + replica("Worker", 2, klass="low") + replica("Master", None, klass="high"),
        ),
        {"train-master-0": "master", "train-worker-0": "worker", "train-worker-1": "worker"},
        3000,
        1000,
        "high",
    ),
    # TF's order: Chief, Master, PS, Worker, Evaluator; the training operator's lower-case key is read as its type
    "TFJob": Shape(
        job(
            "TFJob",
            "  tfReplicaSpecs:\n" + replica("worker", 2, klass="low") + replica("Evaluator", 1) + replica("PS", 1),
        ),
        {"train-ps-0": "ps", "train-worker-0": "worker", "train-worker-1": "worker", "train-evaluator-0": "evaluator"},
        4000,
        10,
        "low",
    ),
    # runPolicy.schedulingPolicy.priorityClass before the pod sets' classes
    "XGBoostJob": Shape(
        job(
            "XGBoostJob",
            "  runPolicy: {schedulingPolicy: {priorityClass: low}}\n  xgbReplicaSpecs:\n"
            + replica("Master", 1, klass="high")
            + replica("Worker", 1, cpu="500m"),
        ),
        {"train-master-0": "master", "train-worker-0": "worker"},
        1500,
        10,
        "low",
    ),
    "PaddleJob": Shape(
        job("PaddleJob", "  paddleReplicaSpecs:\n" + replica("Worker", 3)),
        {f"train-worker-{i}": "worker" for i in range(3)},
        3000,
    ),
    # the WorkloadPriorityClass label before every PriorityClass
    "JAXJob": Shape(
        job(
            "JAXJob",
            "  runPolicy: {schedulingPolicy: {priorityClass: high}}\n  jaxReplicaSpecs:\n" + replica("Worker", 2),
            labels="kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: urgent",
        ),
        {"train-worker-0": "worker", "train-worker-1": "worker"},
        2000,
        5000,
        "high",
    ),
    # Launcher, then Worker
    "MPIJob": Shape(
        job(
            "MPIJob", "  mpiReplicaSpecs:\n" + replica("Worker", 2, klass="low") + replica("Launcher", 1, klass="high")
        ),
        {"train-launcher-0": "launcher", "train-worker-0": "worker", "train-worker-1": "worker"},
        3000,
        1000,
        "high",
    ),  # a Worker without replicas counts 1, as Kueue counts it (not the MPI operator's 0)
    "MPIJob, Worker without replicas": Shape(
        job("MPIJob", "  mpiReplicaSpecs:\n" + replica("Launcher", None) + replica("Worker", None, cpu="2")),
        {"train-launcher-0": "launcher", "train-worker-0": "worker"},
        3000,
    ),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_pod_sets_read_as_one_podgroup(name: str) -> None:
    shape = SHAPES[name]
    snapshot = load_manifests([("in.yaml", CLASSES + queue("10") + shape.text)]).snapshot
    pods = {t.name: t.task_role for t in snapshot.tasks.values() if t.namespace == "ns"}
    assert pods == shape.pods
    assert all(t.podgroup == "ns/train" for t in snapshot.tasks.values())
    pg = snapshot.podgroups["ns/train"]
    assert (pg.queue, pg.min_member) == ("cq", len(shape.pods))
    assert sum(t.request["cpu"] for t in snapshot.tasks.values()) == pg.min_resources["cpu"] == shape.milli
    assert (pg.priority, pg.priority_class) == (shape.priority, shape.klass)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_pod_sets_admitted_whole(name: str, tmp_path: Path, capsys: Any) -> None:
    """A ClusterQueue's quota of what all the pods ask: all are bound; one milli-core less: none is."""
    shape = SHAPES[name]
    for milli, want in ((shape.milli, True), (shape.milli - 1, False)):
        code, doc, err = simulate(tmp_path, capsys, NODES + CLASSES + queue(f"{milli}m") + shape.text)
        assert code == 0, err
        assert sorted(doc["bindings"]) == (sorted(f"ns/{p}" for p in shape.pods) if want else [])
        assert doc["podgroups"]["ns/train"]["phase"] == ("Running" if want else "Pending")


BAD: dict[str, tuple[str, str]] = {
    "negative replicas": (
        job("JobSet", "  replicatedJobs:\n" + replicated("a") + replicated("b", -1)),
        "spec.replicatedJobs[1].replicas: ",
    ),
    "replicas over the limit": (
        job("JobSet", "  replicatedJobs:\n" + replicated("a", 10001)),
        "spec.replicatedJobs[0].replicas: 10001 is more than 10000 (FAIRWAY_MAX_REPLICAS)",
    ),
    "parallelism over the limit": (
        job("JobSet", "  replicatedJobs:\n" + replicated("a", 1, parallelism=10001)),
        "spec.replicatedJobs[0].template.spec.parallelism: 10001 is more than 10000 (FAIRWAY_MAX_REPLICAS)",
    ),
    "pods over the limit": (
        job("JobSet", "  replicatedJobs:\n" + replicated("a", 400, parallelism=300)),
        "spec.replicatedJobs: the snapshot would hold 120000 pods, more than 100000 (FAIRWAY_MAX_PODS)",
    ),
    "a replicated job twice": (
        job("JobSet", "  replicatedJobs:\n" + replicated("a") + replicated("a")),
        "spec.replicatedJobs[1].name: 'a' is the name of an earlier replicated job",
    ),
    "a replicated job without a name": (
        job("JobSet", "  replicatedJobs:\n  - {replicas: 1}\n"),
        "spec.replicatedJobs[0].name: missing",
    ),
    "no replicated job": (job("JobSet", "  replicatedJobs: []\n"), "spec.replicatedJobs: missing"),
    "a replica type of another kind": (
        job("PyTorchJob", "  pytorchReplicaSpecs:\n" + replica("PS")),
        "spec.pytorchReplicaSpecs.PS: not a replica type of PyTorchJob (one of Master, Worker)",
    ),
    "a replica type twice": (
        job("TFJob", "  tfReplicaSpecs:\n" + replica("Worker") + replica("worker")),
        "spec.tfReplicaSpecs.worker: replica type Worker is given twice",
    ),
    "replicas not a number": (
        job("MPIJob", "  mpiReplicaSpecs:\n" + replica("Launcher") + "    Worker: {replicas: two}\n"),
        "spec.mpiReplicaSpecs.Worker.replicas: expected an integer",
    ),
    "an MPIJob's replica type in another case": (
        job("MPIJob", "  mpiReplicaSpecs:\n" + replica("launcher")),
        "spec.mpiReplicaSpecs.launcher: not a replica type of MPIJob (one of Launcher, Worker)",
    ),
    "no replica spec": (job("JAXJob", "  jaxReplicaSpecs: {}\n"), "spec.jaxReplicaSpecs: missing"),
    "a bad request in a template": (
        job("PaddleJob", "  paddleReplicaSpecs:\n" + replica("Worker", 2, cpu="lots")),
        "spec.paddleReplicaSpecs.Worker.template.spec.containers[0].resources.requests",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_pod_sets_name_the_field(name: str) -> None:
    text, message = BAD[name]
    with pytest.raises(ManifestError) as info:
        load_manifests([("in.yaml", queue("10") + text)], limits=Limits())
    assert message in str(info.value)


def test_bad_input_exits_2(tmp_path: Path, capsys: Any) -> None:
    text, message = BAD["negative replicas"]
    code, _, err = simulate(tmp_path, capsys, NODES + queue("10") + text)
    assert code == 2 and message in err, err


def test_unlabelled_or_other_version_is_skipped() -> None:
    unlabelled = job("PyTorchJob", "  pytorchReplicaSpecs:\n" + replica("Worker"), labels="team: a")
    v1_mpi = job("MPIJob", "  mpiReplicaSpecs:\n" + replica("Worker")).replace(
        "kubeflow.org/v2beta1", "kubeflow.org/v1"
    )
    result = load_manifests([("in.yaml", queue("10") + unlabelled + v1_mpi)])  # two kinds: one name is no clash
    assert not result.snapshot.podgroups and not result.snapshot.tasks
    assert not any("replaces" in w for w in result.warnings)
    assert any("a PyTorchJob without the label kueue.x-k8s.io/queue-name; skipped" in w for w in result.warnings)
    assert any(
        "kubeflow.org/v1 MPIJob is not read (Kueue reads kubeflow.org/v2beta1); skipped" in w for w in result.warnings
    )


def flavored(on_demand: str, master: str = "", worker: str = "") -> str:
    """Nodes ``od`` and ``sp`` of 4 cores, labelled ``instance`` on-demand and spot; flavors of those labels; a
    ClusterQueue of ``on_demand`` cores in on-demand then 4 in spot; a PyTorchJob ``ns/train`` of a Master of one
    core and two Workers of one core, with the node selectors ``master`` and ``worker`` (an instance or "")."""
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{instance: {i}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}\n'
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
        f"metadata: {{name: {i}}}\nspec: {{nodeLabels: {{instance: {i}}}}}\n"
        for n, i in (("od", "on-demand"), ("sp", "spot"))
    )
    tree = f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {{name: on-demand, resources: [{{name: cpu, nominalQuota: {on_demand}}}]}}
    - {{name: spot, resources: [{{name: cpu, nominalQuota: 4}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
"""

    def spec(instance: str) -> str:
        selector = f"nodeSelector: {{instance: {instance}}}, " if instance else ""
        return f"{{spec: {{{selector}containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}}}"

    body = (
        f"  pytorchReplicaSpecs:\n    Master: {{replicas: 1, template: {spec(master)}}}\n"
        f"    Worker: {{replicas: 2, template: {spec(worker)}}}\n"
    )
    return nodes + tree + job("PyTorchJob", body)


def test_each_pod_set_its_own_flavor(tmp_path: Path, capsys: Any) -> None:
    """Kueue's flavor assigner gives each pod set its own flavor, in pod-set order, each on the usage the earlier
    ones were given (docs/simulate.md, "Kueue's workloads of several pod sets"): (1) the Master selecting on-demand
    and the Workers spot: the Master on on-demand, the Workers on spot; (2) 2 cores in on-demand: the Master (1 core)
    on on-demand, the Workers (2 more, 3 > 2) on spot; (3) 3 cores in on-demand: all of it there, the pod sets named
    in no sentence."""
    want = {"master": {"cpu": "on-demand"}, "worker": {"cpu": "spot"}}
    for text in (flavored("4", "on-demand", "spot"), flavored("2")):
        code, doc, err = simulate(tmp_path, capsys, text)
        assert code == 0, err
        row = doc["podgroups"]["ns/train"]
        assert row["phase"] == "Running" and row["podSetFlavors"] == want
        assert row["flavors"] == {"cpu": "on-demand"}  # the first pod set's
        assert doc["bindings"] == {"ns/train-master-0": "od", "ns/train-worker-0": "sp", "ns/train-worker-1": "sp"}
        assert row["flavorAssignment"].startswith(
            "pod set master: flavor on-demand for cpu; pod set worker: flavor spot for cpu (tried pod set master: "
            "on-demand: fits; pod set worker: on-demand: "
        ), row["flavorAssignment"]
    assert (
        "on-demand: does not fit (3 cores of cpu asked (1 core of it by the pod sets before), at most 2 cores)"
        in (row["flavorAssignment"])
    )
    code, doc, err = simulate(tmp_path, capsys, flavored("3"))
    row = doc["podgroups"]["ns/train"]
    assert "podSetFlavors" not in row and row["flavors"] == {"cpu": "on-demand"}
    assert set(doc["bindings"].values()) == {"od"} and len(doc["bindings"]) == 3
    assert (
        row["flavorAssignment"]
        == "flavor on-demand for cpu (tried pod set master: on-demand: fits; pod set worker: on-demand: fits)"
    )


def test_a_pod_set_that_fits_no_flavor_holds_the_workload(tmp_path: Path, capsys: Any) -> None:
    """The workload's mode is the worst of its pod sets': Workers selecting a flavor their 2 cores no longer fit (1 of
    on-demand's 2 taken by the Master) keep the whole workload waiting, none of its pods bound."""
    code, doc, err = simulate(tmp_path, capsys, flavored("2", worker="on-demand"))
    assert code == 0, err
    row = doc["podgroups"]["ns/train"]
    assert not doc["bindings"] and not doc["pipelined"] and row["phase"] == "Pending"
    assert row["flavorAssignment"].startswith(
        "no flavor fits: held on flavor on-demand for cpu (tried pod set master: on-demand: fits; pod set worker: "
        "on-demand: does not fit (3 cores of cpu asked (1 core of it by the pod sets before), at most 2 cores); "
        "spot: does not match (node selector instance=on-demand excludes it))"
    ), row["flavorAssignment"]


def test_a_bad_pod_set_leaves_nothing_half_written() -> None:
    """Read tolerantly (objects of a live API server), a JobSet whose second template is bad is set aside whole: none
    of its first pod set's pods nor its podgroup is left in the snapshot."""
    good_then_bad = job("JobSet", "  replicatedJobs:\n" + replicated("a", 2) + replicated("b", 1, cpu="lots"))
    objects = list(yaml.safe_load_all(queue("10") + good_then_bad))
    result, invalid = load_objects(objects)
    assert [(i.kind, i.name) for i in invalid] == [("JobSet", "train")]
    assert "spec.replicatedJobs[1].template.spec.template.spec.containers[0]" in invalid[0].message
    assert not result.snapshot.tasks and not result.snapshot.podgroups


def test_launcher_and_workers_on_different_flavors(tmp_path: Path, capsys: Any) -> None:
    """An MPIJob in a ClusterQueue of spot (tainted, 4 cores) then on-demand (2 cores) whose Launcher tolerates only
    on-demand's taint: the Launcher on on-demand, the Workers on spot, each pod on its flavor's node; the sentence
    names each pod set and what it tried."""
    flavors = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{instance: {i}}}}}\n"
        f"spec: {{taints: [{{key: {k}, value: 'yes', effect: NoSchedule}}]}}\n"
        'status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}\n'
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
        f"metadata: {{name: {i}}}\nspec: {{nodeLabels: {{instance: {i}}}, "
        f"nodeTaints: [{{key: {k}, value: 'yes', effect: NoSchedule}}]}}\n"
        for n, i, k in (("od", "on-demand", "dedicated"), ("sp", "spot", "spot"))
    )
    tree = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: spot, resources: [{name: cpu, nominalQuota: 4}]}
    - {name: on-demand, resources: [{name: cpu, nominalQuota: 2}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
"""

    def spec(keys: tuple[str, ...]) -> str:
        tolerations = ", ".join(f"{{key: {k}, operator: Exists, effect: NoSchedule}}" for k in keys)
        request = "{cpu: '1'}"
        return (
            f"{{spec: {{tolerations: [{tolerations}], containers: [{{name: c, resources: {{requests: {request}}}}}]}}}}"
        )

    body = (
        f"  mpiReplicaSpecs:\n    Launcher: {{replicas: 1, template: {spec(('dedicated',))}}}\n"
        f"    Worker: {{replicas: 2, template: {spec(('dedicated', 'spot'))}}}\n"
    )
    code, doc, err = simulate(tmp_path, capsys, flavors + tree + job("MPIJob", body))
    assert code == 0, err
    row = doc["podgroups"]["ns/train"]
    assert row["podSetFlavors"] == {"launcher": {"cpu": "on-demand"}, "worker": {"cpu": "spot"}}
    assert doc["bindings"] == {"ns/train-launcher-0": "od", "ns/train-worker-0": "sp", "ns/train-worker-1": "sp"}
    assert row["flavorAssignment"] == (
        "pod set launcher: flavor on-demand for cpu; pod set worker: flavor spot for cpu (tried pod set launcher: "
        "spot: does not match (untolerated taint spot=yes:NoSchedule); on-demand: fits; pod set worker: spot: fits)"
    )


def _kueue_pod_set_flavors(quota: list[int], pod_sets: list[tuple[int, int, int | None]]) -> list[int] | None:
    """Kueue's flavor assigner written plainly for one ClusterQueue without a Cohort or admitted workloads: each pod
    set (pods, cores a pod, the flavor its node selector names or None) in order takes the first flavor it may use
    whose quota holds it on top of the earlier pod sets' (``assignmentUsage``); None when one fits none."""
    used = [0] * len(quota)
    out = []
    for count, cores, only in pod_sets:
        fits = [f for f in range(len(quota)) if only in (None, f) and used[f] + count * cores <= quota[f]]
        if not fits:
            return None
        used[fits[0]] += count * cores
        out.append(fits[0])
    return out


@pytest.mark.parametrize("seed", range(24))
def test_pod_set_flavors_against_kueues_arithmetic(seed: int, tmp_path: Path, capsys: Any) -> None:
    """Random JobSets (2 or 3 replicated jobs, some selecting a flavor) in a ClusterQueue of three flavors of random
    quota: each pod set's flavor is what Kueue's assigner gives (``_kueue_pod_set_flavors``), or none is bound."""
    rng = random.Random(seed)
    quota = [rng.randint(0, 8) for _ in range(3)]
    pod_sets = [
        (rng.randint(1, 3), rng.randint(1, 3), rng.choice([None, None, rng.randrange(3)]))
        for _ in range(rng.randint(2, 3))
    ]
    docs = [
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{f}, labels: {{instance: f{f}}}}}\n"
        'status: {allocatable: {cpu: "64", memory: 64Gi, pods: "110"}}\n'
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
        f"metadata: {{name: f{f}}}\nspec: {{nodeLabels: {{instance: f{f}}}}}\n"
        for f in range(3)
    ]
    listed = ", ".join(f"{{name: f{f}, resources: [{{name: cpu, nominalQuota: {q}}}]}}" for f, q in enumerate(quota))
    docs.append(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
        f"spec: {{resourceGroups: [{{coveredResources: [cpu], flavors: [{listed}]}}]}}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\n"
        "spec: {clusterQueue: cq}\n"
    )
    jobs = ""
    for i, (count, cores, only) in enumerate(pod_sets):
        selector = f"nodeSelector: {{instance: f{only}}}, " if only is not None else ""
        pod = f"{{spec: {{{selector}containers: [{{name: c, resources: {{requests: {{cpu: '{cores}'}}}}}}]}}}}"
        jobs += f"  - {{name: s{i}, replicas: {count}, template: {{spec: {{parallelism: 1, template: {pod}}}}}}}\n"
    code, doc, err = simulate(tmp_path, capsys, "".join(docs) + job("JobSet", "  replicatedJobs:\n" + jobs))
    assert code == 0, err
    want = _kueue_pod_set_flavors(quota, pod_sets)
    if want is None:
        assert not doc["bindings"] and not doc["pipelined"], (quota, pod_sets)
        return
    expected = {
        f"ns/train-s{i}-{j}-0": f"n{flavor}"
        for i, ((count, _, _), flavor) in enumerate(zip(pod_sets, want, strict=True))
        for j in range(count)
    }
    assert doc["bindings"] == expected, (quota, pod_sets)
