"""``fairway simulate`` with Kueue's plain-Pod groups (``engine.manifests.kueuegroups``): the pods labelled
``kueue.x-k8s.io/pod-group-name`` with ``kueue.x-k8s.io/pod-group-total-count`` are one workload, admitted whole once
all its pods exist; what Kueue refuses exits 2 naming the document and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.manifests import ManifestError, load_manifests
from engine.manifests.export import job_manifests
from tests.cli.test_simulate_kueue import bound, simulate

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}}}
"""
    for i in range(3)
)


def queue(cpu: str) -> str:
    """A ClusterQueue ``cq`` of ``cpu`` cores without a cohort, and its LocalQueues ``lq`` and ``other`` in namespace
    ``ns`` (three documents)."""
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
""" + "".join(
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {local}, namespace: ns}}\n"
        "spec: {clusterQueue: cq}\n"
        for local in ("lq", "other")
    )


def pod(name: str, cpu: int = 3, group: str | None = "g", count: str | None = "2", **extra: str) -> str:
    """A pod of ``cpu`` cores in namespace ``ns``, in Kueue pod group ``group`` of ``count`` (None: without the key);
    ``queue`` (default ``lq``; "" for none), ``node``, ``phase``, ``created``, ``labels`` and ``annotations`` (more
    YAML map entries) as given."""
    labels = [f"kueue.x-k8s.io/queue-name: {extra.get('queue', 'lq')}"] if extra.get("queue", "lq") else []
    if group is not None:
        labels.append(f"kueue.x-k8s.io/pod-group-name: {group}")
    labels += [extra["labels"]] if "labels" in extra else []
    annotations = [f'kueue.x-k8s.io/pod-group-total-count: "{count}"'] if count is not None else []
    annotations += [extra["annotations"]] if "annotations" in extra else []
    created = f'\n  creationTimestamp: "{extra["created"]}"' if "created" in extra else ""
    node = f"\n  nodeName: {extra['node']}" if "node" in extra else ""
    status = f"\nstatus: {{phase: {extra['phase']}}}" if "phase" in extra else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: ns{created}
  labels: {{{", ".join(labels)}}}
  annotations: {{{", ".join(annotations)}}}
spec:{node}
  containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]{status}
"""


def test_a_group_is_one_podgroup_named_after_it() -> None:
    wpc = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    text = (
        queue("9")
        + wpc
        + pod("leader", 3, created="2026-01-01T00:05:00Z", labels="kueue.x-k8s.io/priority-class: high")
        + pod("worker", 2, created="2026-01-01T00:01:00Z", labels="kueue.x-k8s.io/priority-class: high")
    )
    snap = load_manifests([("in.yaml", text)]).snapshot
    assert set(snap.podgroups) == {"ns/g"}
    pg = snap.podgroups["ns/g"]
    assert (pg.queue, pg.min_member, pg.min_resources, pg.priority) == ("cq", 2, {"cpu": 5000}, 1000)
    assert pg.creation_timestamp == snap.tasks["ns/worker"].creation_timestamp  # the earliest pod's
    assert {t.podgroup for t in snap.tasks.values()} == {"ns/g"}
    assert snap.admission.pod_group_waits == ()


def test_a_group_that_does_not_fit_whole_admits_none_of_its_pods(tmp_path: Path, capsys: Any) -> None:
    """5 cores of quota, two pods of 3: as two workloads one is admitted; as one group of two, none."""
    code, doc, err = simulate(
        tmp_path, capsys, NODES + queue("5") + pod("a", group=None, count=None) + pod("b", group=None, count=None)
    )
    assert code == 0, err
    assert bound(doc, "ns") == 1
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("5") + pod("a") + pod("b"))
    assert code == 0, err
    assert bound(doc, "ns") == 0
    group = doc["podgroups"]["ns/g"]
    assert group["phase"] == "Pending" and "requested 6, available 5" in group["message"], group
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("6") + pod("a") + pod("b"))
    assert code == 0, err
    assert bound(doc, "ns") == 2 and doc["podgroups"]["ns/g"]["phase"] == "Running"


def test_a_group_short_of_its_pods_waits_and_reserves_nothing(tmp_path: Path, capsys: Any) -> None:
    """One pod of a group of 2: Kueue makes no workload of it yet, so it is not admitted and holds no quota (the
    4 one-core pods beside it all run in the 4 cores)."""
    others = "".join(pod(f"o{i}", 1, group=None, count=None) for i in range(4))
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("4") + pod("a") + others)
    assert code == 0, err
    group = doc["podgroups"]["ns/g"]
    assert (group["phase"], group["reason"]) == ("Pending", "NotEnoughPods")
    assert "1 of its 2 pods exist (kueue.x-k8s.io/pod-group-total-count)" in group["message"]
    assert bound(doc, "ns") == 4 and "ns/a" not in doc["bindings"]


def test_an_admitted_group_short_of_a_pod_keeps_running(tmp_path: Path, capsys: Any) -> None:
    code, doc, err = simulate(
        tmp_path, capsys, NODES + queue("9") + pod("a", count="3", node="n0") + pod("b", count="3", node="n1")
    )
    assert code == 0, err
    assert doc["podgroups"]["ns/g"]["phase"] == "Running"
    assert "2 of its 3 pods (kueue.x-k8s.io/pod-group-total-count) can run and it is admitted" in err


def test_a_failed_pod_is_not_counted_nor_checked() -> None:
    """Kueue skips a Failed pod of the group: its count may differ, and the two others make the group whole."""
    text = queue("9") + pod("old", count="5", phase="Failed") + pod("a") + pod("b")
    snap = load_manifests([("in.yaml", text)]).snapshot
    pg = snap.podgroups["ns/g"]
    assert (pg.min_member, pg.min_resources) == (2, {"cpu": 6000})
    assert snap.tasks["ns/old"].podgroup == "ns/g" and snap.admission.pod_group_waits == ()


def test_a_group_without_the_queue_label_is_not_kueues(tmp_path: Path, capsys: Any) -> None:
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("9") + pod("a", queue="") + pod("b", queue=""))
    assert code == 0, err
    assert set(doc["podgroups"]) == {"ns/podgroup-a", "ns/podgroup-b"}
    assert "Kueue pod group ns/g: no pod of it has the label kueue.x-k8s.io/queue-name" in err


def test_fast_admission_admits_on_the_first_pod_and_reserves_the_whole_count(tmp_path: Path, capsys: Any) -> None:
    """``pod-group-fast-admission``: one pod of a group of 2 runs at once, and the quota of the second (3 more of the
    8 cores) stays reserved: the 3-core pod beside it waits. Without it the group waits, and that pod runs."""
    fast = 'kueue.x-k8s.io/pod-group-fast-admission: "true"'
    other = pod("other", group=None, count=None, created="2026-01-01T00:09:00Z")
    group = pod("a", annotations=fast, created="2026-01-01T00:00:00Z")
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("8") + group + other)
    assert code == 0, err
    assert list(doc["bindings"]) == ["ns/a"]
    assert doc["podgroups"]["ns/podgroup-other"]["phase"] == "Pending"
    assert "requested 3, available 2" in doc["podgroups"]["ns/podgroup-other"]["message"]
    snap = load_manifests([("in.yaml", queue("8") + group)]).snapshot
    pg = snap.podgroups["ns/g"]
    assert (pg.min_member, pg.min_resources, snap.admission.pod_group_waits) == (1, {"cpu": 6000}, ())
    code, doc, err = simulate(tmp_path, capsys, NODES + queue("8") + group.replace(fast, "") + other)
    assert code == 0, err
    assert list(doc["bindings"]) == ["ns/other"]


MALFORMED = {
    "counts disagree": (
        pod("a") + pod("b", count="3"),
        "document 5 (Pod ns/b): metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: 3 where pod ns/a",
    ),
    "count zero": (pod("a", count="0"), "total-count]: '0' is not a whole number of pods from 1 to 2147483647"),
    "count not a number": (pod("a", count="two"), "total-count]: 'two' is not a whole number"),
    "name without count": (pod("a", count=None), "total-count]: missing: a pod of a Kueue pod group gives"),
    "count without name": (pod("a", group=None), "metadata.labels[kueue.x-k8s.io/pod-group-name]: missing"),
    "name not a Kubernetes name": (pod("a", group="Bad_Group"), "'Bad_Group' is not a valid Kubernetes name"),
    "different LocalQueues": (
        pod("a") + pod("b", queue="other"),
        "document 5 (Pod ns/b): metadata.labels[kueue.x-k8s.io/queue-name]: 'other' where pod ns/a of Kueue pod "
        "group ns/g has 'lq'",
    ),
    "one pod without the queue label": (
        pod("a") + pod("b", queue=""),
        "document 5 (Pod ns/b): metadata.labels[kueue.x-k8s.io/queue-name]: missing where pod ns/a",
    ),
    "a Volcano PodGroup of the same name": (
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\n"
        "spec: {minMember: 1}\n" + pod("a") + pod("b"),
        "document 5 (Pod ns/a): metadata.labels[kueue.x-k8s.io/pod-group-name]: PodGroup ns/g is in the input too",
    ),
    "more pods than the count": (
        pod("a") + pod("b") + pod("c"),
        "document 6 (Pod ns/c): metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: 2, but 3 pods of Kueue "
        "pod group ns/g that can run are in the input",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_group_is_refused_naming_the_field(case: str, tmp_path: Path, capsys: Any) -> None:
    pods, message = MALFORMED[case]
    code, _, err = simulate(tmp_path, capsys, queue("9") + pods)
    assert code == 2 and message in err, err
    with pytest.raises(ManifestError) as refused:
        load_manifests([("in.yaml", queue("9") + pods)])
    assert message in str(refused.value)


def test_a_group_short_of_its_pods_takes_no_flavor_in_kueues_cycle(tmp_path: Path, capsys: Any) -> None:
    """cpu in two flavors, on-demand first: the waiting group (older) is no workload yet, so it takes no on-demand
    cpu in the cycle, and the pod after it is given on-demand."""
    flavors = "".join(
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {f}}}\n"
        f"spec: {{nodeLabels: {{tier: {f}}}}}\n"
        for f in ("on-demand", "spot")
    )
    tree = queue("4").replace(
        "    - name: default-flavor\n      resources: [{name: cpu, nominalQuota: 4}]\n",
        "    - {name: on-demand, resources: [{name: cpu, nominalQuota: 4}]}\n"
        "    - {name: spot, resources: [{name: cpu, nominalQuota: 4}]}\n",
    )
    nodes = NODES.replace("metadata: {name: n0}", "metadata: {name: n0, labels: {tier: on-demand}}").replace(
        "metadata: {name: n1}", "metadata: {name: n1, labels: {tier: spot}}"
    )
    later = pod("later", group=None, count=None, created="2026-01-01T00:09:00Z")
    code, doc, err = simulate(
        tmp_path, capsys, nodes + flavors + tree + pod("a", created="2026-01-01T00:00:00Z") + later
    )
    assert code == 0, err
    assert doc["podgroups"]["ns/podgroup-later"]["flavors"] == {"cpu": "on-demand"}
    assert doc["bindings"] == {"ns/later": "n0"}
    assert doc["podgroups"]["ns/g"]["reason"] == "NotEnoughPods"


def test_a_group_short_of_its_pods_is_no_head_of_kueues_fair_cycle(tmp_path: Path, capsys: Any) -> None:
    """Fair Sharing on, two ClusterQueues of 2 cores in one cohort: the waiting group of a (older) and the pod of b
    each fit by borrowing, not both; the group is no workload yet, so it takes nothing in the cycle and b's pod runs."""
    fair = "---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}\n"
    tree = "".join(
        queue("2")
        .replace("metadata: {name: cq}\nspec:\n", f"metadata: {{name: {name}}}\nspec:\n  cohortName: co\n")
        .replace("namespace: ns", f"namespace: {name}")
        .replace("clusterQueue: cq", f"clusterQueue: {name}")
        for name in ("a", "b")
    )
    group = pod("g0", created="2026-01-01T00:00:00Z").replace("namespace: ns", "namespace: a")
    other = pod("p", group=None, count=None, created="2026-01-01T00:09:00Z").replace("namespace: ns", "namespace: b")
    code, doc, err = simulate(tmp_path, capsys, NODES + fair + tree + group + other)
    assert code == 0, err
    assert list(doc["bindings"]) == ["b/p"], doc["podgroups"]
    assert doc["podgroups"]["a/g"]["reason"] == "NotEnoughPods"


def test_the_job_page_yaml_of_a_group_reads_back_the_same() -> None:
    """``job_manifests`` writes a group as a Volcano PodGroup with its pods (``scheduling.k8s.io/group-name``, the
    Kueue keys kept as labels): read back, the same podgroup and pods."""
    text = queue("9") + pod("a", created="2026-01-01T00:00:00Z") + pod("b", 2)
    snap = load_manifests([("in.yaml", text)]).snapshot
    group = snap.podgroups["ns/g"]
    written = yaml.safe_dump_all(job_manifests(group, list(snap.tasks.values()), None))
    again = load_manifests([("in.yaml", queue("9")), ("job.yaml", written)]).snapshot
    assert again.podgroups == {"ns/g": group}
    assert again.tasks == snap.tasks


def test_the_group_name_as_an_annotation_is_read_first() -> None:
    """Since Kueue 0.18 the group's name may be an annotation, which Kueue reads before the label."""
    named = 'kueue.x-k8s.io/pod-group-name: "h"'
    text = queue("9") + pod("a", group=None, annotations=named) + pod("b", group="other", annotations=named)
    snap = load_manifests([("in.yaml", text)]).snapshot
    assert set(snap.podgroups) == {"ns/h"} and snap.podgroups["ns/h"].min_member == 2
    bad = queue("9") + pod("a", group=None, annotations='kueue.x-k8s.io/pod-group-name: "H!"')
    with pytest.raises(ManifestError, match=r"metadata\.annotations\[kueue\.x-k8s\.io/pod-group-name\]: 'H!' is not"):
        load_manifests([("in.yaml", bad)])
