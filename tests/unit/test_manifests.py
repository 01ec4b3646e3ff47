"""Kubernetes manifests -> Snapshot: every input kind, the peers' defaults, one-line errors, and the round trip."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.manifests import LoadResult, ManifestError, load_manifests
from engine.objects import (
    NamespaceInfo,
    NodeInfo,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    PriorityClassInfo,
    QueueHierarchy,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.policy.policy import DEFAULT_POLICY, ElasticQuotaArgs, Policy
from engine.resources import ResourceList
from tests.support.examples import examples
from tests.support.manifest_dump import dump_snapshot, dump_yaml

GiB, MiB = 2**30, 2**20
KOORD = "quota.scheduling.koordinator.sh/"


def load(*docs: dict[str, Any], file: str = "t.yaml") -> LoadResult:
    return load_manifests([(file, yaml.safe_dump_all(docs))])


def error_of(*docs: dict[str, Any] | str, file: str = "t.yaml") -> str:
    text = "\n---\n".join(d if isinstance(d, str) else yaml.safe_dump(d) for d in docs)
    with pytest.raises(ManifestError) as info:
        load_manifests([(file, text)])
    message = str(info.value)
    assert "\n" not in message
    return message


def pod(name: str, ns: str = "default", *, spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, **meta}}
    doc["spec"] = spec if spec is not None else {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    return doc


def container(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "resources": resources, **extra}


def queue(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def podgroup(name: str, ns: str = "default", status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    doc = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }
    if status is not None:
        doc["status"] = status
    return doc


def namespace(name: str, queue_name: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if queue_name:
        meta["annotations"] = {"scheduling.volcano.sh/queue-name": queue_name}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def resource_quota(name: str, ns: str, **hard: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"hard": hard},
    }


def priority_class(name: str, value: object, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def koord_quota(
    name: str, ns: str = "default", labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = {KOORD + k: v for k, v in labels.items()}
    if annotations:
        meta["annotations"] = {KOORD + k: v for k, v in annotations.items()}
    return {"apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota", "metadata": meta, "spec": spec}


def only_task(result: LoadResult) -> TaskInfo:
    (t,) = result.snapshot.tasks.values()
    return t


# -- Pod ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"containers": [container({"cpu": "500m", "memory": "1Gi"}), container({"cpu": "1"})]},
            {"cpu": 1500, "memory": GiB},
        ),
        # an init container larger than the sum wins, per resource
        (
            {"containers": [container({"cpu": "1", "memory": "1Gi"})], "initContainers": [container({"cpu": "2"})]},
            {"cpu": 2000, "memory": GiB},
        ),
        # a limit without a request counts as the request (API-server defaulting)
        ({"containers": [container(None, {"cpu": "2", "memory": "2Gi"})]}, {"cpu": 2000, "memory": 2 * GiB}),
        ({"containers": [container({"cpu": "1"}, {"cpu": "4", "memory": "1Gi"})]}, {"cpu": 1000, "memory": GiB}),
        # overhead is added on top
        ({"containers": [container({"cpu": "1"})], "overhead": {"cpu": "250m"}}, {"cpu": 1250}),
        # a sidecar (restartPolicy Always) runs beside the containers and the later init containers
        (
            {
                "containers": [container({"cpu": "1"})],
                "initContainers": [container({"cpu": "500m"}, restartPolicy="Always"), container({"cpu": "2"})],
            },
            {"cpu": 2500},
        ),
        ({"containers": [container({"nvidia.com/gpu": 2})]}, {"nvidia.com/gpu": 2000}),
        # the pod's own resources (pod-level, Kubernetes 1.34): its request for cpu, memory and hugepages, else the
        # containers', else its limit (the API server's defaulting; tests/kube/real/test_apiserver.py)
        ({"resources": {"requests": {"cpu": "4"}}, "containers": [container()]}, {"cpu": 4000}),
        (
            {"resources": {"limits": {"cpu": "4", "hugepages-2Mi": "4Mi"}}, "containers": [container({"cpu": "1"})]},
            {"cpu": 1000, "hugepages-2Mi": 4 * 2**20},
        ),
        (
            {
                "resources": {"requests": {"memory": "2Gi"}},
                "containers": [container({"cpu": "1"})],
            },
            {"cpu": 1000, "memory": 2 * GiB},
        ),
        (
            {
                "resources": {"requests": {"cpu": "2"}},
                "containers": [container({"cpu": "1"})],
                "overhead": {"cpu": "1"},
            },
            {"cpu": 3000},
        ),
        ({"containers": [container()]}, {}),
        ({}, {}),
    ],
)
def test_pod_requests(spec: dict[str, Any], expected: dict[str, int]) -> None:
    t = only_task(load(pod("p", spec=spec)))
    assert t.request == ResourceList(expected)
    assert t.best_effort is (not expected)


@pytest.mark.parametrize(
    ("own", "containers", "refusal"),
    [
        ({"requests": {"nvidia.com/gpu": 1}}, {}, "spec.resources.requests[nvidia.com/gpu]: a pod's own resources are"),
        ({"requests": {"cpu": "500m"}}, {"cpu": "1"}, "spec.resources.requests[cpu]: 0.5 cores is below what its "
         "containers ask for in all, 1 core"),
        ({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, {}, "spec.resources.requests[cpu]: 2 cores is above the "
         "pod's limit of 1 core"),
    ],
)  # fmt: skip
def test_a_pods_own_resources_are_refused_where_the_api_server_refuses_them(
    own: dict[str, Any], containers: dict[str, Any], refusal: str
) -> None:
    """As tests/kube/real/test_apiserver.py finds the real API server doing; a container limit above the pod's too."""
    with pytest.raises(ManifestError, match=re.escape(refusal)):
        load(pod("p", spec={"resources": own, "containers": [container(containers)]}))
    capped = {"resources": {"limits": {"cpu": "1"}},
              "containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]}  # fmt: skip
    with pytest.raises(ManifestError, match=re.escape("spec.containers[0].resources.limits[cpu]: 2 cores is above")):
        load(pod("p", spec=capped))


KATA = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"}, "tolerations": [{"key": "kata", "operator": "Exists"}]}}  # fmt: skip


def test_a_pods_runtime_class_gives_it_its_overhead_and_scheduling_as_the_api_server_does() -> None:
    """The API server's RuntimeClass admission (tests/kube/real/test_apiserver.py checks the real one): the class's
    overhead (unless the pod sets its own), its node selector merged into the pod's, its tolerations after the pod's."""
    spec = {"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}, "containers": [container({"cpu": "1"})]}
    t = only_task(load(KATA, pod("p", spec=spec)))
    assert t.request == ResourceList({"cpu": 1250, "memory": 120 * 2**20})
    assert t.node_selector == {"zone": "a", "runtime": "kata"}
    assert [tol.key for tol in t.tolerations] == ["kata"]
    own = only_task(load(KATA, pod("p", spec={**spec, "overhead": {"cpu": "100m"}})))
    assert own.request == ResourceList({"cpu": 1100})
    # a class the input does not hold: nothing added, and a warning says so
    result = load(pod("p", spec=spec))
    assert only_task(result).request == ResourceList({"cpu": 1000}) and only_task(result).node_selector == {"zone": "a"}
    assert any("RuntimeClass 'kata' is not in the input" in w for w in result.warnings), result.warnings
    bad = {**KATA, "overhead": {"podFixed": {"cpu": "lots"}}}
    assert "overhead.podFixed" in error_of(bad)


@pytest.mark.parametrize(
    ("phase", "node", "deleting", "status"),
    [
        (None, None, False, TaskStatus.PENDING),
        ("Pending", None, False, TaskStatus.PENDING),
        (None, "n1", False, TaskStatus.RUNNING),  # nodeName set = bound; no phase reads as Running
        ("Running", "n1", False, TaskStatus.RUNNING),
        ("Pending", "n1", False, TaskStatus.BOUND),  # Volcano getTaskStatus
        ("Running", "n1", True, TaskStatus.RELEASING),
        ("Succeeded", "n1", False, TaskStatus.SUCCEEDED),
        ("Failed", None, False, TaskStatus.FAILED),
        ("Unknown", "n1", False, TaskStatus.UNKNOWN),
    ],
)
def test_pod_status(phase: str | None, node: str | None, deleting: bool, status: TaskStatus) -> None:
    doc = pod("p")
    if node:
        doc["spec"]["nodeName"] = node
    if phase:
        doc["status"] = {"phase": phase}
    if deleting:
        doc["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    t = only_task(load(doc))
    assert t.status is status
    assert t.node == node


def test_pod_fields() -> None:
    doc = pod(
        "web-0",
        "team-a",
        labels={"app": "web", KOORD + "name": "quota-a", KOORD + "preemptible": "false"},
        annotations={"volcano.sh/task-spec": "worker", "volcano.sh/preemptable": "false"},
        creationTimestamp="2024-03-19T11:11:24Z",
    )
    doc["spec"].update(
        {
            "priority": 77,
            "priorityClassName": "high",
            "preemptionPolicy": "Never",
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        }
    )
    doc["status"] = {"startTime": "2024-03-19T11:12:00Z"}
    t = only_task(load(doc))
    assert (t.namespace, t.name, t.uid) == ("team-a", "web-0", "team-a/web-0")
    assert t.podgroup == "team-a/podgroup-web-0"
    assert t.priority == 77  # spec.priority wins over the class
    assert t.priority_class == "high"
    assert t.preemption_policy == "Never"
    assert t.quota_group == "quota-a" and t.quota_preemptible is False
    assert t.volcano_preemptable is False and not t.preemptable
    assert t.task_role == "worker"
    assert t.labels == {"app": "web"}
    assert t.node_selector == {"zone": "a"}
    assert t.tolerations == (Toleration(key="gpu", operator="Exists", effect="NoSchedule"),)
    assert t.creation_timestamp == 1710846684.0
    assert t.start_timestamp == 1710846720.0


def test_pod_priority_from_its_class_or_the_global_default() -> None:
    classes = [priority_class("high", 1000), priority_class("normal", 5, globalDefault=True)]
    p1 = pod("a")
    p1["spec"]["priorityClassName"] = "high"
    p2 = pod("b")
    p3 = pod("c")
    p3["spec"]["priorityClassName"] = "missing"
    result = load(*classes, p1, p2, p3)
    tasks = result.snapshot.tasks
    assert (tasks["default/a"].priority, tasks["default/b"].priority, tasks["default/c"].priority) == (1000, 5, 5)
    assert any("PriorityClass missing not found; priority 5 used" in w for w in result.warnings)
    assert result.snapshot.priority_classes["normal"] == PriorityClassInfo("normal", 5, global_default=True)


def test_a_pod_unlike_its_class_is_read_as_written_with_a_warning_naming_the_field() -> None:
    """The API server refuses a pod whose spec.priority or spec.preemptionPolicy is not what its PriorityClass gives
    (tests/kube/real/test_apiserver.py); simulate reads it as written and says so, naming the field."""
    classes = [priority_class("high", 1000)]
    wrong_priority, wrong_policy, same, bare = pod("a"), pod("b"), pod("c"), pod("d")
    wrong_priority["spec"].update(priorityClassName="high", priority=5)
    wrong_policy["spec"].update(priorityClassName="high", preemptionPolicy="Never")
    same["spec"].update(priorityClassName="high", priority=1000, preemptionPolicy="PreemptLowerPriority")
    bare["spec"]["priority"] = 7  # a priority without a class: the shortcut, no warning
    result = load(*classes, wrong_priority, wrong_policy, same, bare)
    tasks = result.snapshot.tasks
    assert (tasks["default/a"].priority, tasks["default/b"].preemption_policy) == (5, "Never")
    assert (tasks["default/c"].priority, tasks["default/d"].priority) == (1000, 7)
    unlike = [w for w in result.warnings if "the API server refuses such a pod" in w]
    assert len(unlike) == 2, result.warnings
    assert "Pod default/a" in unlike[0] and "spec.priority 5 is not its PriorityClass high's 1000" in unlike[0]
    assert "spec.preemptionPolicy Never is not its PriorityClass high's PreemptLowerPriority" in unlike[1]


@pytest.mark.parametrize(
    ("annotation", "label", "expected", "warned"),
    [
        (None, None, None, False),
        ("true", None, True, False),
        ("false", "true", False, False),  # the annotation is read first
        (None, "F", False, False),  # Go's ParseBool spellings
        (None, "1", True, False),
        ("maybe", None, False, True),  # not a boolean: Volcano reads false
    ],
)
def test_volcano_preemptable(annotation: str | None, label: str | None, expected: bool | None, warned: bool) -> None:
    meta: dict[str, Any] = {}
    if annotation is not None:
        meta["annotations"] = {"volcano.sh/preemptable": annotation}
    if label is not None:
        meta["labels"] = {"volcano.sh/preemptable": label}
    result = load(pod("p", **meta))
    assert only_task(result).volcano_preemptable is expected
    assert any("is not a boolean" in w for w in result.warnings) is warned


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("koordinator-default-quota", "default"),
        ("koordinator-system-quota", "system"),
        ("koordinator-root-quota", "root"),
        ("team", "team"),
    ],
)
def test_pod_quota_label_maps_koordinators_builtins(label: str, expected: str) -> None:
    assert only_task(load(pod("p", labels={KOORD + "name": label}))).quota_group == expected


# -- own podgroups ------------------------------------------------------------------------------------------------


def test_a_pod_without_a_podgroup_gets_its_own() -> None:
    p = pod("solo", "team-a")
    p["spec"]["priorityClassName"] = "high"
    result = load(priority_class("high", 100), namespace("team-a", "q-team"), queue("q-team"), p)
    pg = result.snapshot.podgroups["team-a/podgroup-solo"]
    assert pg == PodGroupInfo(
        namespace="team-a",
        name="podgroup-solo",
        queue="q-team",  # the namespace's annotation
        min_member=1,
        min_resources=ResourceList({"cpu": 1000}),
        priority=100,
        priority_class="high",
        phase=PodGroupPhase.PENDING,
    )
    assert result.warnings == []


@pytest.mark.parametrize(
    ("pod_queue", "ns_queue", "expected"),
    [(None, None, "default"), (None, "q-ns", "q-ns"), ("q-pod", "q-ns", "q-pod"), ("default", "q-ns", "q-ns")],
)
def test_own_podgroup_queue(pod_queue: str | None, ns_queue: str | None, expected: str) -> None:
    meta: dict[str, Any] = {"annotations": {"scheduling.volcano.sh/queue-name": pod_queue}} if pod_queue else {}
    result = load(namespace("default", ns_queue), pod("p", **meta))
    assert result.snapshot.podgroups["default/podgroup-p"].queue == expected


@pytest.mark.parametrize(
    ("node", "phase", "expected"),
    [
        (None, None, PodGroupPhase.PENDING),
        ("n1", None, PodGroupPhase.RUNNING),
        ("n1", "Succeeded", PodGroupPhase.COMPLETED),
    ],
)
def test_own_podgroup_phase_follows_the_pod(node: str | None, phase: str | None, expected: PodGroupPhase) -> None:
    p = pod("p")
    if node:
        p["spec"]["nodeName"] = node
    if phase:
        p["status"] = {"phase": phase}
    assert load(p).snapshot.podgroups["default/podgroup-p"].phase is expected


def test_a_pod_naming_a_missing_podgroup_is_kept_with_a_warning() -> None:
    result = load(pod("p", annotations={"scheduling.k8s.io/group-name": "job1"}))
    assert only_task(result).podgroup == "default/job1"
    assert "default/job1" not in result.snapshot.podgroups
    assert result.warnings == ["Pod default/p: PodGroup default/job1 not found; the pod will not be scheduled"]


# -- Namespace and ResourceQuota -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "expected", "warnings"),
    [
        ([], 1, 0),
        (["3"], 3, 0),
        ([4], 4, 0),
        (["2", "5", "1"], 5, 0),  # the highest over the namespace's ResourceQuotas
        (["0"], 1, 1),
        (["-2"], 1, 1),
        (["1.5"], 1, 1),  # not a whole number (Volcano would have rounded up to 2)
        (["abc"], 1, 1),
        (["2k"], 2000, 0),  # a whole-number quantity
        (["abc", "3"], 3, 1),
    ],
)
def test_namespace_weight(weights: list[Any], expected: int, warnings: int) -> None:
    docs = [resource_quota(f"rq{i}", "team-a", **{"volcano.sh/namespace.weight": w}) for i, w in enumerate(weights)]
    result = load(namespace("team-a"), *docs)
    assert result.snapshot.namespace("team-a").weight == expected
    assert len(result.warnings) == warnings


def test_resource_quota_hard_limits() -> None:
    result = load(
        resource_quota(
            "a", "team-a", **{"volcano.sh/namespace.weight": "2", "requests.cpu": "10", "limits.memory": "8Gi"}
        ),
        resource_quota("b", "team-a", cpu="6", pods="20", **{"count/jobs.batch": "5", "requests.nvidia.com/gpu": "2"}),
        resource_quota("c", "team-b", **{"volcano.sh/namespace.weight": "3"}),
    )
    ns = result.snapshot.namespace("team-a")
    assert ns.weight == 2
    assert ns.hard == ResourceList(
        {
            "cpu": 6000,  # requests.cpu and cpu are the same limit; the tighter one binds
            "limits.memory": 8 * GiB,  # in bytes, like memory
            "pods": 20_000,
            "count/jobs.batch": 5000,
            "nvidia.com/gpu": 2000,
        }
    )
    assert result.snapshot.namespace("team-b") == NamespaceInfo("team-b", weight=3, hard=None)


def test_namespace_queue_annotation() -> None:
    assert load(namespace("ml", "q-ml")).snapshot.namespace("ml") == NamespaceInfo("ml", queue="q-ml")


# -- Queue ----------------------------------------------------------------------------------------------------------


def test_queue_fields() -> None:
    doc = queue(
        "q1",
        weight=4,
        capability={"cpu": "20", "memory": "40Gi"},
        deserved={"cpu": "10"},
        guarantee={"resource": {"cpu": "5"}},
        reclaimable=False,
        parent="org",
        priority=3,
    )
    doc["status"] = {"state": "Closing", "allocated": {"cpu": "99"}}  # allocated is computed: ignored
    spec = load(doc).snapshot.queues["q1"]
    assert spec == QueueSpec(
        name="q1",
        parent="org",
        weight=4,
        capability=ResourceList({"cpu": 20000, "memory": 40 * GiB}),
        deserved=ResourceList({"cpu": 10000}),
        guarantee=ResourceList({"cpu": 5000}),
        reclaimable=False,
        priority=3,
        state="Closing",
    )


def test_queue_defaults() -> None:
    snap = load(queue("q1"), queue("root", weight=1), queue("zero", weight=0)).snapshot
    assert snap.queues["q1"] == QueueSpec(name="q1")  # weight 1, parent root, reclaimable, Open
    assert snap.queues["root"].parent is None
    assert snap.queues["zero"].weight == 1  # Volcano's webhook turns 0 into 1


def test_queue_guarantee_without_resource_key_is_accepted_with_a_warning() -> None:
    result = load(queue("q1", guarantee={"cpu": "2"}))
    assert result.snapshot.queues["q1"].guarantee == ResourceList({"cpu": 2000})
    assert result.warnings == [
        "t.yaml: document 1 (Queue q1): spec.guarantee has no 'resource' key; read as spec.guarantee.resource"
    ]


def test_queue_hierarchy_annotations() -> None:
    doc = queue("q")
    doc["metadata"]["annotations"] = {"volcano.sh/hierarchy": "eng/prod", "volcano.sh/hierarchy-weights": "2/8"}
    snap = load(doc).snapshot
    # Volcano's webhook prefixes root/ and 1/ when the path does not start at root.
    assert snap.queue_hierarchy == {"q": QueueHierarchy(("root", "eng", "prod"), (1.0, 2.0, 8.0))}
    # and they make the tree: q under a level "eng" (weight 2) under root, with the path's last weight
    assert (snap.queues["q"].parent, snap.queues["q"].weight) == ("eng", 8)
    assert (snap.queues["eng"].parent, snap.queues["eng"].weight) == ("root", 2)


# -- PodGroup -------------------------------------------------------------------------------------------------------


def test_podgroup_fields() -> None:
    # staging/src/volcano.sh/apis/artifacts/podgroup.yaml, plus the fields it leaves out
    doc = podgroup(
        "test-pg",
        minMember=1,
        minResources={"cpu": "1000m", "memory": "2G"},
        queue="default",
        minTaskMember={"ps": 1, "worker": 2},
        priorityClassName="high",
        status={
            "phase": "Inqueue",
            "conditions": [
                {
                    "type": "Unschedulable",
                    "status": "True",
                    "reason": "NotEnoughResources",
                    "message": "1/3 tasks in gang unschedulable",
                    "transitionID": "abc",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ],
        },
    )
    doc["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    pg = load(priority_class("high", 1000), doc).snapshot.podgroups["default/test-pg"]
    assert pg == PodGroupInfo(
        namespace="default",
        name="test-pg",
        queue="default",
        min_member=1,
        min_task_member={"ps": 1, "worker": 2},
        min_resources=ResourceList({"cpu": 1000, "memory": 2 * 10**9}),
        priority=1000,
        priority_class="high",
        phase=PodGroupPhase.INQUEUE,
        creation_timestamp=1704067200.0,
        conditions=(
            PodGroupCondition(
                "Unschedulable", "True", "NotEnoughResources", "1/3 tasks in gang unschedulable", "abc", 1704067200.0
            ),
        ),
    )


def test_podgroup_defaults_and_namespace_queue() -> None:
    snap = load(
        namespace("ml", "q-ml"),
        podgroup("a", "ml"),
        podgroup("b", "ml", queue="q-other"),
        podgroup("c"),
        podgroup("d", "ml", queue="default"),
    ).snapshot
    a = snap.podgroups["ml/a"]
    assert (a.min_member, a.min_resources, a.phase, a.queue) == (0, None, PodGroupPhase.PENDING, "q-ml")
    assert snap.podgroups["ml/b"].queue == "q-other"
    assert snap.podgroups["default/c"].queue == "default"
    assert snap.podgroups["ml/d"].queue == "default"  # named explicitly: kept
    assert load(podgroup("d", minResources={})).snapshot.podgroups["default/d"].min_resources == ResourceList()


def test_pods_join_their_podgroup() -> None:
    snap = load(
        podgroup("job", minMember=2),
        pod("job-0", annotations={"scheduling.k8s.io/group-name": "job"}),
        pod("job-1", annotations={"scheduling.k8s.io/group-name": "job"}),
    ).snapshot
    assert [t.name for t in snap.tasks_by_podgroup["default/job"]] == ["job-0", "job-1"]
    assert set(snap.podgroups) == {"default/job"}


# -- ElasticQuota -----------------------------------------------------------------------------------------------------


def test_koordinator_elastic_quota_labels_and_annotations() -> None:
    result = load(
        koord_quota("parent", labels={"is-parent": "true"}, max={"cpu": 40, "memory": "40Gi"}, min={"cpu": 20}),
        koord_quota(
            "child",
            labels={"parent": "parent", "allow-lent-resource": "false"},
            annotations={"shared-weight": '{"cpu":"4"}', "namespaces": '["ml", "web"]', "runtime": '{"cpu": "9"}'},
            max={"cpu": 40, "memory": "40Gi"},
            min={"cpu": 10, "memory": "20Mi"},
        ),
    )
    snap = result.snapshot
    assert snap.quota_groups["parent"] == QuotaGroupSpec(
        name="parent", parent="root", is_parent=True, min=ResourceList({"cpu": 20000}),
        max=ResourceList({"cpu": 40000, "memory": 40 * GiB}),
    )  # fmt: skip
    assert snap.quota_groups["child"] == QuotaGroupSpec(
        name="child",
        parent="parent",
        is_parent=False,
        min=ResourceList({"cpu": 10000, "memory": 20 * MiB}),
        max=ResourceList({"cpu": 40000, "memory": 40 * GiB}),
        shared_weight=ResourceList({"cpu": 4000}),
        allow_lent=False,
    )
    assert snap.quota_namespaces == {"child": ("ml", "web")}
    assert result.warnings == []


def test_koordinator_builtin_names_and_tree_roots() -> None:
    snap = load(
        koord_quota("koordinator-root-quota", max={"cpu": 100}),
        koord_quota("koordinator-default-quota", labels={"parent": "koordinator-root-quota"}, max={"cpu": 5}),
        koord_quota("pool-root", labels={"is-parent": "true", "is-root": "true", "tree-id": "123"}),
        koord_quota("pool-team", labels={"parent": "pool-root", "is-parent": "true"}),
        koord_quota("pool-leaf", labels={"parent": "pool-team"}),
        koord_quota("zero-weight", annotations={"shared-weight": '{"cpu": "0"}'}, max={"cpu": 1}),
    ).snapshot
    assert snap.quota_groups["root"] == QuotaGroupSpec(
        name="root", parent=None, is_parent=True, max=ResourceList({"cpu": 100000}), allow_lent=False
    )
    assert snap.quota_groups["default"].max == ResourceList({"cpu": 5000})
    assert "koordinator-root-quota" not in snap.quota_groups
    assert snap.quota_groups["pool-root"].parent is None  # a tree root (is-root) has no parent
    # A missing tree-id is inherited from the nearest ancestor that has one (Koordinator's webhook).
    assert snap.quota_groups["pool-team"].tree_id == "123"
    assert snap.quota_groups["pool-leaf"].tree_id == "123"
    assert snap.quota_groups["zero-weight"].shared_weight is None  # a zero shared weight means max


def test_scheduler_plugins_elastic_quota_is_named_like_its_namespace() -> None:
    doc = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "test", "namespace": "test"},
        "spec": {
            "max": {"cpu": 20, "memory": "40Gi", "nvidia.com/gpu": 2},
            "min": {"cpu": 10, "memory": "20Gi", "nvidia.com/gpu": 1},
        },
    }
    other = {**doc, "metadata": {"name": "second", "namespace": "test"}, "spec": {"max": {"cpu": 1}}}
    result = load(doc)
    assert result.snapshot.quota_groups["test"] == QuotaGroupSpec(
        name="test",
        min=ResourceList({"cpu": 10000, "memory": 20 * GiB, "nvidia.com/gpu": 1000}),
        max=ResourceList({"cpu": 20000, "memory": 40 * GiB, "nvidia.com/gpu": 2000}),
    )
    twice = load(doc, other)
    assert twice.snapshot.quota_groups["test"].max == ResourceList({"cpu": 1000})
    assert twice.warnings == [
        "t.yaml: document 2 (ElasticQuota test/second): replaces t.yaml: document 1 (ElasticQuota test/test) "
        "(both define quota group test)"
    ]


def test_a_later_object_of_the_same_kind_and_name_replaces_the_earlier_and_says_so() -> None:
    """As ``kubectl apply`` of the documents in order: the later one is kept, and a warning names both documents (a
    Kueue ClusterQueue, a namespaced LocalQueue and a Volcano Queue alike); past five, one line counts the rest."""
    base = "kueue.x-k8s.io/v1beta1"
    cq = {"apiVersion": base, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {"resourceGroups": []}}
    lq = {"apiVersion": base, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ns"}}
    lq["spec"] = {"clusterQueue": "cq"}
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}
    kept = "(the same kind and name: the later one is kept, as kubectl apply would)"
    result = load(cq, {**cq, "spec": {"resourceGroups": [], "cohort": "c"}}, lq, lq)
    assert result.warnings[:2] == [
        f"t.yaml: document 2 (ClusterQueue cq): replaces t.yaml: document 1 (ClusterQueue cq) {kept}",
        f"t.yaml: document 4 (LocalQueue ns/lq): replaces t.yaml: document 3 (LocalQueue ns/lq) {kept}",
    ]
    assert result.snapshot.queues["cq"].parent == "c"  # the later ClusterQueue
    weights = [{**queue, "spec": {"weight": w}} for w in range(1, 9)]
    many = load(*weights)
    assert many.snapshot.queues["q"].weight == 8
    assert (
        len(many.warnings) == 6
        and many.warnings[-1] == "2 more objects replace an earlier one of the same kind and name"
    )
    assert not [w for w in load(cq, lq, queue).warnings if "replaces" in w]  # no duplicate, no such warning


# -- vcjob ----------------------------------------------------------------------------------------------------------


def vcjob(name: str, tasks: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"tasks": tasks, **spec},
    }


def role(name: str, replicas: int, cpu: str, min_available: int | None = None, pc: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "replicas": replicas,
        "template": {"spec": {"containers": [container({"cpu": cpu})]}},
    }
    if min_available is not None:
        out["minAvailable"] = min_available
    if pc:
        out["template"]["spec"]["priorityClassName"] = pc
    return out


# Volcano's job_controller_util_test TestCalcPGMinResources: master (2 x 50m) and worker (2 x 100m).
@pytest.mark.parametrize(
    ("min_member", "master_min", "worker_min", "expected_cpu"),
    [
        (2, 1, None, 100),  # fewer than the roles' minimums: the first 2 pods by priority (2 masters)
        (2, None, 1, 100),
        (3, None, None, 200),
        (3, 1, 1, 200),  # more: each role's minimum, then fill from the spare replicas
        (3, 1, None, 250),
        (2, 1, 1, 150),
    ],
)
def test_vcjob_min_resources(
    min_member: int, master_min: int | None, worker_min: int | None, expected_cpu: int
) -> None:
    job = vcjob(
        "job", [role("master", 2, "50m", master_min), role("worker", 2, "100m", worker_min)], minAvailable=min_member
    )
    pg = load(job).snapshot.podgroups["default/job"]
    assert pg.min_resources == ResourceList({"cpu": expected_cpu})
    assert pg.min_member == min_member
    assert pg.min_task_member == {"master": master_min or 2, "worker": worker_min or 2}


def test_vcjob_min_resources_order_roles_by_priority() -> None:
    # TestCalcPGMinResources's prioritised case: job min 4, each role min 1, worker priority 2 -> 300m.
    job = vcjob("job", [role("master", 2, "50m", 1), role("worker", 2, "100m", 1, pc="p2")], minAvailable=4)
    pg = load(priority_class("p2", 2), job).snapshot.podgroups["default/job"]
    assert pg.min_resources == ResourceList({"cpu": 300})
    # With fewer than the minimums, the highest-priority role's pods come first.
    job = vcjob("job", [role("master", 2, "50m"), role("worker", 2, "100m", pc="p2")], minAvailable=1)
    assert load(priority_class("p2", 2), job).snapshot.podgroups["default/job"].min_resources == ResourceList(
        {"cpu": 100}
    )


def test_vcjob_expands_into_pods() -> None:
    job = vcjob("train", [role("ps", 1, "1"), role("worker", 3, "2", pc="high")], queue="q1", priorityClassName="low")
    job["metadata"]["annotations"] = {"volcano.sh/preemptable": "false"}
    job["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    snap = load(priority_class("high", 100), priority_class("low", 10), queue("q1"), job).snapshot
    pg = snap.podgroups["default/train"]
    assert (pg.queue, pg.min_member, pg.priority, pg.priority_class, pg.phase) == (
        "q1",
        4,
        10,
        "low",
        PodGroupPhase.PENDING,
    )
    assert pg.creation_timestamp == 1704067200.0
    names = [t.name for t in snap.tasks_by_podgroup["default/train"]]
    assert names == ["train-ps-0", "train-worker-0", "train-worker-1", "train-worker-2"]
    ps, w0 = snap.tasks["default/train-ps-0"], snap.tasks["default/train-worker-0"]
    assert (ps.task_role, ps.priority, ps.request) == ("ps", 10, ResourceList({"cpu": 1000}))  # the job's class
    assert (w0.task_role, w0.priority, w0.request) == ("worker", 100, ResourceList({"cpu": 2000}))  # the template's
    assert ps.volcano_preemptable is False  # copied from the job's annotation
    assert ps.status is TaskStatus.PENDING and ps.creation_timestamp == 1704067200.0


def test_vcjob_podgroup_takes_the_namespace_queue_when_left_in_default() -> None:
    # The controller creates the PodGroup with the job's queue; Volcano's PodGroup webhook then applies the
    # namespace's queue to one left in "default".
    job = vcjob("j", [role("w", 1, "1")], queue="default")
    assert load(namespace("default", "q-ns"), job).snapshot.podgroups["default/j"].queue == "q-ns"


def test_vcjob_defaults() -> None:
    # Volcano's job webhook: unnamed task -> "default<i>", minAvailable -> replicas, job minAvailable -> their sum.
    job = vcjob("j", [{"replicas": 2, "template": {"spec": {"containers": [container({"cpu": "1"})]}}}])
    pg = load(job).snapshot.podgroups["default/j"]
    assert (pg.min_member, pg.min_task_member, pg.queue) == (2, {"default0": 2}, "default")
    assert pg.min_resources == ResourceList({"cpu": 2000})


def test_vcjob_is_not_expanded_when_its_pods_are_in_the_input() -> None:
    job = vcjob("j", [role("w", 2, "1")])
    real = pod("j-w-0", annotations={"volcano.sh/job-name": "j", "scheduling.k8s.io/group-name": "j-1234"})
    result = load(podgroup("j-1234", minMember=2), job, real)
    assert set(result.snapshot.podgroups) == {"default/j-1234"}
    assert set(result.snapshot.tasks) == {"default/j-w-0"}
    assert any("the vcjob itself is not expanded" in w for w in result.warnings)


# -- policy and Koordinator arguments ------------------------------------------------------------------------------------


def test_scheduler_configmap_is_the_policy() -> None:
    conf = 'actions: "enqueue, allocate, reclaim"\ntiers:\n- plugins:\n  - name: gang\n  - name: sla\n'
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": conf},
    }
    result = load(cm)
    assert result.snapshot.policy == Policy.from_yaml(conf)
    assert result.policy_source == "t.yaml: document 1 (ConfigMap volcano-system/volcano-scheduler-configmap)"
    assert result.warnings == [
        "t.yaml: document 1 (ConfigMap volcano-system/volcano-scheduler-configmap): policy: "
        "plugin sla is not supported by Fairway's engine; it is kept but has no effect"
    ]
    assert load(pod("p")).snapshot.policy == DEFAULT_POLICY
    assert load(pod("p")).policy_source is None


def test_kube_scheduler_configuration_elastic_quota_args() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {}},
                    {"name": "ElasticQuota", "args": {"monitorAllQuotas": True, "delayEvictTime": "30s"}},
                ]
            }
        ],
    }
    snap = load(config).snapshot
    assert snap.elastic_quota_args == ElasticQuotaArgs(monitor_all_quotas=True, delay_evict_time=30.0)
    wrapped = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "koord-scheduler-config", "namespace": "koordinator-system"},
        "data": {"koord-scheduler-config": yaml.safe_dump(config)},
    }
    assert load(wrapped).snapshot.elastic_quota_args == snap.elastic_quota_args


# -- documents, lists, merging, warnings ---------------------------------------------------------------------------------


def test_kind_list_and_typed_lists() -> None:
    text = (
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [queue("a"), queue("b"), pod("p")]})
        + "---\n"
        + yaml.safe_dump({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "QueueList", "items": [queue("c")]})
    )
    snap = load_manifests([("list.yaml", text)]).snapshot
    assert {"a", "b", "c"} <= set(snap.queues)
    assert "default/p" in snap.tasks


def test_later_objects_replace_earlier_ones_across_files() -> None:
    first = yaml.safe_dump_all([queue("q", weight=1), queue("keep", weight=7)])
    second = yaml.safe_dump(queue("q", weight=5))
    snap = load_manifests([("a.yaml", first), ("b.yaml", second)]).snapshot
    assert snap.queues["q"].weight == 5 and snap.queues["keep"].weight == 7
    assert list(snap.queues)[-2:] == ["q", "keep"]  # the first position is kept


def test_origins_name_the_document_of_each_object() -> None:
    text1 = yaml.safe_dump_all([queue("q"), pod("p"), koord_quota("koordinator-default-quota")])
    text2 = yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": [namespace("ns"), vcjob("j", [role("w", 2, "1")])]}
    )
    result = load_manifests([("a.yaml", text1), ("b.yaml", text2)])
    assert result.origins == {
        ("Queue", "q"): ("a.yaml", 1, None),
        ("Pod", "default/p"): ("a.yaml", 2, None),
        ("PodGroup", "default/podgroup-p"): ("a.yaml", 2, None),  # made from the pod
        ("ElasticQuota", "default"): ("a.yaml", 3, None),
        ("Namespace", "ns"): ("b.yaml", 1, 1),
        ("PodGroup", "default/j"): ("b.yaml", 1, 2),  # made from the vcjob
        ("Pod", "default/j-w-0"): ("b.yaml", 1, 2),
        ("Pod", "default/j-w-1"): ("b.yaml", 1, 2),
    }


def test_unused_kinds_are_skipped_with_a_warning() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"}}
    k8s_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"}}
    no_kind = {"partitions": [{"name": "default"}]}
    result = load(deployment, k8s_job, no_kind, queue("q"), file="mix.yaml")
    assert result.warnings == [
        "mix.yaml: document 1 (Deployment prod/web): kind apps/v1 Deployment is not used; skipped",
        "mix.yaml: document 3: no kind, not a Kubernetes object; skipped",
        # a batch/v1 Job is read when it carries Kueue's queue-name label (said once the jobs are read)
        "mix.yaml: document 2 (Job default/once): a Job without the label kueue.x-k8s.io/queue-name; skipped",
    ]
    assert "q" in result.snapshot.queues


def test_a_missing_api_version_is_inferred_from_the_kind() -> None:
    doc = {"kind": "Queue", "metadata": {"name": "q"}, "spec": {"weight": 3}}
    result = load(doc)
    assert result.snapshot.queues["q"].weight == 3
    assert result.warnings == ["t.yaml: document 1 (Queue q): no apiVersion; read as scheduling.volcano.sh Queue"]
    job = {"kind": "Job", "metadata": {"name": "j"}}
    assert load(job).warnings == ["t.yaml: document 1 (Job j): no apiVersion and kind Job is not used; skipped"]


def test_empty_documents_are_ignored() -> None:
    result = load_manifests([("e.yaml", "---\n---\n# nothing\n"), ("f.yaml", "")])
    assert result.warnings == []
    assert result.snapshot == Snapshot()


def test_node() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {"unschedulable": True, "taints": [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "64", "memory": "256Gi"},
            "allocatable": {"cpu": "63500m", "memory": "250Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "False"}],
        },
    }
    node = load(doc).snapshot.nodes["n1"]
    assert node == NodeInfo(
        name="n1",
        allocatable=ResourceList({"cpu": 63500, "memory": 250 * GiB, "pods": 110_000, "nvidia.com/gpu": 8000}),
        labels={"zone": "a"},
        taints=(Taint("gpu", "a100", "NoSchedule"),),
        unschedulable=True,
        ready=False,
    )
    bare = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "4"}}}
    n2 = load(bare).snapshot.nodes["n2"]
    assert (n2.allocatable, n2.ready, n2.unschedulable) == (ResourceList({"cpu": 4000}), True, False)


# -- errors -----------------------------------------------------------------------------------------------------------------


def test_the_error_names_file_document_kind_and_name() -> None:
    message = error_of(
        namespace("a"),
        namespace("b"),
        queue("q1", capability={"cpu": "-1"}),
        file="snapshot.yaml",
    )
    assert (
        message == "snapshot.yaml: document 3 (Queue q1): spec.capability.cpu: '-1' must be greater than or equal to 0"
    )


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (["a: [1,\n b: 2"], "t.yaml: document 1: invalid YAML: "),
        ([queue("ok"), "kind: Queue\nmetadata: {name: [x"], "t.yaml: document 2: invalid YAML: "),
        (["- 1\n- 2"], "t.yaml: document 1: expected a Kubernetes object (a mapping), got a list"),
        (
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "x"}}],
            "t.yaml: document 1 (Pod): metadata.name: missing",
        ),
        (
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 7}}],
            "t.yaml: document 1 (Pod): metadata.name: expected a string, got 7",
        ),
        (
            [{"apiVersion": "v1", "kind": "Pod", "metadata": "p"}],
            "t.yaml: document 1 (Pod): metadata: expected a mapping",
        ),
        ([{"apiVersion": "v1", "kind": 3}], "t.yaml: document 1: kind: expected a string, got 3"),
        (
            [queue("q", weight="abc")],
            "t.yaml: document 1 (Queue q): spec.weight: expected an integer, got the string 'abc'",
        ),
        (
            [queue("q", weight=70000)],
            "t.yaml: document 1 (Queue q): spec.weight: 70000 must be less than or equal to 65535",
        ),
        ([queue("q", reclaimable="no")], "t.yaml: document 1 (Queue q): spec.reclaimable: expected true or false"),
        (
            [queue("q", deserved=["cpu"])],
            "t.yaml: document 1 (Queue q): spec.deserved: expected an object of resource name",
        ),
        (
            [queue("q", capability={"cpu": "lots"})],
            "t.yaml: document 1 (Queue q): spec.capability.cpu: 'lots' is not a valid quantity",
        ),
        (
            [{**queue("q"), "status": {"state": "Paused"}}],
            "t.yaml: document 1 (Queue q): status.state: 'Paused' must be one of",
        ),
        ([{**queue("q"), "spec": [1]}], "t.yaml: document 1 (Queue q): spec: expected a mapping, got a list"),
        (
            [
                {
                    **queue("q"),
                    "metadata": {
                        "name": "q",
                        "annotations": {"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1/x"},
                    },
                }
            ],
            "t.yaml: document 1 (Queue q): metadata.annotations[volcano.sh/hierarchy-weights]: 'x' is not a number",
        ),
        (
            [
                {
                    **queue("q"),
                    "metadata": {
                        "name": "q",
                        "annotations": {"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1"},
                    },
                }
            ],
            "t.yaml: document 1 (Queue q): metadata.annotations[volcano.sh/hierarchy-weights]: 1 weights for 2 levels",
        ),
        (
            [podgroup("pg", minMember=-1)],
            "t.yaml: document 1 (PodGroup default/pg): spec.minMember: -1 must be greater than or equal to 0",
        ),
        (
            [podgroup("pg", status={"phase": "Done"})],
            "t.yaml: document 1 (PodGroup default/pg): status.phase: 'Done' must be one of",
        ),
        (
            [podgroup("pg", minTaskMember={"a": "two"})],
            "t.yaml: document 1 (PodGroup default/pg): spec.minTaskMember.a: expected an integer",
        ),
        (
            [pod("p", spec={"containers": {"name": "c"}})],
            "t.yaml: document 1 (Pod default/p): spec.containers: expected a list, got a mapping",
        ),
        (
            [pod("p", spec={"containers": [container({"memory": "2Xi"})]})],
            "t.yaml: document 1 (Pod default/p): spec.containers[0].resources.requests.memory: '2Xi' is not a valid quantity",
        ),
        (
            [pod("p", labels={"a": {"b": 1}})],
            "t.yaml: document 1 (Pod default/p): metadata.labels[a]: expected a string, got a mapping",
        ),
        (
            [pod("p", creationTimestamp="yesterday")],
            "t.yaml: document 1 (Pod default/p): metadata.creationTimestamp: 'yesterday' is not a time",
        ),
        (
            [pod("p", spec={"priority": "high"})],
            "t.yaml: document 1 (Pod default/p): spec.priority: expected an integer",
        ),
        (
            [koord_quota("q", annotations={"shared-weight": "{cpu: 1"})],
            "t.yaml: document 1 (ElasticQuota default/q): metadata.annotations[quota.scheduling.koordinator.sh/shared-weight]: not valid JSON",
        ),
        (
            [koord_quota("q", annotations={"namespaces": '{"a": 1}'})],
            "t.yaml: document 1 (ElasticQuota default/q): metadata.annotations[quota.scheduling.koordinator.sh/namespaces]: expected a JSON list",
        ),
        (
            [koord_quota("q", min={"cpu": "-2"})],
            "t.yaml: document 1 (ElasticQuota default/q): spec.min.cpu: '-2' must be greater than or equal to 0",
        ),
        ([priority_class("p", "high")], "t.yaml: document 1 (PriorityClass p): value: expected an integer"),
        (
            [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "volcano-scheduler-configmap"},
                    "data": {"volcano-scheduler.conf": 'actions: "allocate, shuffle"'},
                }
            ],
            "t.yaml: document 1 (ConfigMap default/volcano-scheduler-configmap): data['volcano-scheduler.conf']: actions: unknown action 'shuffle'",
        ),
        (
            [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "volcano-scheduler-configmap"},
                    "data": {},
                }
            ],
            "t.yaml: document 1 (ConfigMap default/volcano-scheduler-configmap): data['volcano-scheduler.conf']: missing",
        ),
        (
            [
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "profiles": [{"pluginConfig": [{"name": "ElasticQuota", "args": {"delayEvictTime": "soon"}}]}],
                }
            ],
            "t.yaml: document 1 (KubeSchedulerConfiguration): profiles[0].pluginConfig[0].args: elasticquota argument delayEvictTime",
        ),
        (
            [resource_quota("rq", "x", cpu="ten")],
            "t.yaml: document 1 (ResourceQuota x/rq): spec.hard.cpu: 'ten' is not a valid quantity",
        ),
        (
            [vcjob("j", [role("w", -1, "1")])],
            "t.yaml: document 1 (Job default/j): spec.tasks[0].replicas: -1 must be greater than",
        ),
        (
            [vcjob("j", [role("w", 1, "x")])],
            "t.yaml: document 1 (Job default/j): spec.tasks[0].template.spec.containers[0].resources.requests.cpu",
        ),
        (
            [{"apiVersion": "v1", "kind": "List", "items": [queue("a"), queue("b", weight=-3)]}],
            "t.yaml: document 1 item 2 (Queue b): spec.weight: -3 must be greater than or equal to 0",
        ),
        (
            [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": "n"},
                    "spec": {"taints": [{"effect": "NoSchedule"}]},
                }
            ],
            "t.yaml: document 1 (Node n): spec.taints[0].key: missing",
        ),
    ],
)
def test_malformed_inputs(docs: list[dict[str, Any] | str], expected: str) -> None:
    assert error_of(*docs).startswith(expected)


def test_manifest_error_attributes() -> None:
    with pytest.raises(ManifestError) as info:
        load(namespace("a"), queue("q1", weight=-1), file="x.yaml")
    err = info.value
    assert (err.file, err.index, err.kind, err.name, err.item) == ("x.yaml", 2, "Queue", "q1", None)
    assert err.message == "spec.weight: -1 must be greater than or equal to 0"
    assert isinstance(err, ValueError)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "1", "-1", "2Gi", "x", "true", "Open"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["a", "cpu", "name"]), children, max_size=3)
    ),
    max_leaves=6,
)
_fields = {
    "Queue": ["weight", "capability", "deserved", "guarantee", "reclaimable", "parent", "priority"],
    "PodGroup": ["minMember", "minTaskMember", "minResources", "queue", "priorityClassName"],
    "Pod": [
        "containers",
        "initContainers",
        "overhead",
        "resources",
        "priority",
        "nodeName",
        "tolerations",
        "nodeSelector",
    ],
    "Node": ["taints", "unschedulable"],
}


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(_fields)),
    data=st.data(),
    meta=st.dictionaries(st.sampled_from(["labels", "annotations", "creationTimestamp"]), _json, max_size=2),
)
def test_never_a_traceback(kind: str, data: st.DataObject, meta: dict[str, Any]) -> None:
    spec = data.draw(st.dictionaries(st.sampled_from(_fields[kind]), _json, max_size=3))
    api = {"Queue": "scheduling.volcano.sh/v1beta1", "PodGroup": "scheduling.volcano.sh/v1beta1"}.get(kind, "v1")
    doc = {"apiVersion": api, "kind": kind, "metadata": {"name": "x", **meta}, "spec": spec}
    try:
        load(doc)
    except ManifestError as err:
        assert "\n" not in str(err)
        assert str(err).startswith(f"t.yaml: document 1 ({kind} ")


# -- dump and round trip -----------------------------------------------------------------------------------------------


def test_dump_writes_koordinator_names_and_skips_unchanged_builtins() -> None:
    snap = Snapshot.build(
        quota_groups=[QuotaGroupSpec("team", max=ResourceList({"cpu": 1000}))],
        tasks=[TaskInfo("ns", "p", "ns/pg", quota_group="default")],
        podgroups=[PodGroupInfo("ns", "pg")],
    )
    docs = dump_snapshot(snap)
    kinds = [(d["kind"], d.get("metadata", {}).get("name")) for d in docs]
    assert kinds == [("ElasticQuota", "team"), ("PodGroup", "pg"), ("Pod", "p")]
    assert docs[0]["metadata"]["labels"][KOORD + "parent"] == "koordinator-root-quota"
    assert docs[2]["metadata"]["labels"][KOORD + "name"] == "koordinator-default-quota"
    assert load_manifests([("d.yaml", dump_yaml(snap))]).snapshot == snap


_res = st.builds(
    lambda cpu, mem, gpu: ResourceList(
        {k: v for k, v in (("cpu", cpu), ("memory", mem), ("nvidia.com/gpu", gpu)) if v is not None}
    ),
    st.one_of(st.none(), st.integers(0, 10**7)),
    st.one_of(st.none(), st.integers(0, 2**40)),
    st.one_of(st.none(), st.integers(0, 10**5)),
)
_name = st.sampled_from(["a", "b", "c", "team-x"])
_time = st.one_of(
    st.none(), st.integers(0, 2_000_000_000).map(float), st.integers(0, 10**6).map(lambda m: 1.7e9 + m / 4)
)
_statuses = st.sampled_from(
    [
        TaskStatus.PENDING,
        TaskStatus.BOUND,
        TaskStatus.RUNNING,
        TaskStatus.RELEASING,
        TaskStatus.SUCCEEDED,
        TaskStatus.FAILED,
        TaskStatus.UNKNOWN,
    ]
)


# The strategies the composites below draw from, made once: a strategy built inside a composite is looked up again in
# Hypothesis's cache (or built and checked again: one with a lambda is new each time) at every draw, which cost more
# than the values themselves. The same strategies, so the same values are drawn.
_NS = st.sampled_from(["ns1", "ns2"])
_MAYBE_NAME = st.one_of(st.none(), _name)
_PG = st.sampled_from(["pg1", "pg2"])
_PRIORITY = st.integers(-100, 100)
_CLASS = st.sampled_from(["", "high"])
_MAYBE_BOOL = st.one_of(st.none(), st.booleans())
_BOOL = st.booleans()
_MAYBE_GROUP = st.one_of(st.none(), st.sampled_from(["g1", "default", "system"]))
_SELECTOR = st.dictionaries(st.sampled_from(["zone", "gpu"]), st.sampled_from(["a", "b"]), max_size=2)
_TOLERATIONS = st.lists(
    st.builds(
        Toleration,
        key=st.sampled_from(["", "gpu"]),
        operator=st.sampled_from(["Equal", "Exists"]),
        value=st.sampled_from(["", "x"]),
        effect=st.sampled_from(["", "NoSchedule"]),
        toleration_seconds=st.one_of(st.none(), st.integers(0, 600)),
    ),
    max_size=2,
)
_LABELS = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["web", "db"]), max_size=2)
_ROLE = st.sampled_from(["", "worker"])
_PREEMPTION = st.sampled_from(["PreemptLowerPriority", "Never"])
_CLASS_VALUE = st.integers(-10, 10**6)
_QUEUE_PARENT = st.sampled_from(["root", "a"])
_QUEUE_WEIGHT = st.integers(1, 65535)
_QUEUE_PRIORITY = st.integers(0, 100)
_STATE = st.sampled_from(["Open", "Closed", "Closing", "Unknown"])
_QUEUE_NAMES = st.lists(st.sampled_from(["a", "b", "default"]), unique=True)
_GROUP_PARENT = st.sampled_from(["root", "g1", None])
_SHARED_WEIGHT = st.one_of(st.none(), _res.filter(lambda r: not r.is_zero()))
_TREE = st.sampled_from(["", "7"])
_GROUP_NAMES = st.lists(st.sampled_from(["g1", "g2", "default"]), unique=True)
_PG_QUEUE = st.sampled_from(["a", "default"])
_MIN_MEMBER = st.integers(0, 5)
_MIN_TASK_MEMBER = st.dictionaries(st.sampled_from(["worker"]), st.integers(0, 3))
_MAYBE_RES = st.one_of(st.none(), _res)
_PG_PRIORITY = st.integers(-5, 5)
_PG_CLASS = st.sampled_from(["", "high", "gone"])
_PHASE = st.sampled_from(list(PodGroupPhase))
_CREATED = st.integers(0, 2_000_000_000).map(float)
_CONDITIONS = st.lists(
    st.builds(
        PodGroupCondition,
        type=st.sampled_from(["Scheduled", "Unschedulable"]),
        reason=st.sampled_from(["", "NotEnoughResources"]),
        last_transition_time=_time,
    ),
    max_size=1,
)
_PG_KEYS = st.lists(st.sampled_from(["ns1/pg1", "ns2/pg2", "ns1/pg2"]), unique=True)
_NS_WEIGHT = st.integers(1, 9)
_NS_QUEUE = st.one_of(st.none(), st.just("a"))
_NS_HARD = st.one_of(st.none(), _res.filter(lambda r: bool(r)))
_NS_NAMES = st.lists(st.sampled_from(["ns1", "ns2", "g1"]), unique=True)
_NODE_LABELS = st.dictionaries(st.just("zone"), st.sampled_from(["a", "b"]))
_TAINTS = st.lists(
    st.builds(
        Taint,
        st.sampled_from(["gpu", "spot"]),
        st.sampled_from(["", "x"]),
        st.sampled_from(["NoSchedule", "NoExecute"]),
    ),
    max_size=2,
)
_NODE_NAMES = st.lists(_name, unique=True)
_POLICY = st.sampled_from([DEFAULT_POLICY, DEFAULT_POLICY.with_actions("allocate", "reclaim", "preempt")])
_EQ_ARGS = st.one_of(
    st.none(),
    st.builds(ElasticQuotaArgs, monitor_all_quotas=st.booleans(), delay_evict_time=st.sampled_from([1.0, 120.0, 0.5])),
)


@st.composite
def _task(draw: st.DrawFn) -> TaskInfo:
    ns = draw(_NS)
    status = draw(_statuses)
    node = draw(_name) if status not in (TaskStatus.PENDING,) else None
    if status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.UNKNOWN, TaskStatus.RELEASING):
        node = draw(_MAYBE_NAME)
    return TaskInfo(
        namespace=ns,
        name=draw(_name),
        podgroup=f"{ns}/{draw(_PG)}",
        request=draw(_res),
        priority=draw(_PRIORITY),
        priority_class=draw(_CLASS),
        volcano_preemptable=draw(_MAYBE_BOOL),
        quota_preemptible=draw(_BOOL),
        quota_group=draw(_MAYBE_GROUP),
        status=status,
        node=node,
        node_selector=draw(_SELECTOR),
        tolerations=tuple(draw(_TOLERATIONS)),
        labels=draw(_LABELS),
        task_role=draw(_ROLE),
        creation_timestamp=draw(_time),
        start_timestamp=draw(_time),
        preemption_policy=draw(_PREEMPTION),
    )


_TASKS = st.lists(_task(), max_size=6)


@st.composite
def _snapshot(draw: st.DrawFn) -> Snapshot:
    classes = [
        PriorityClassInfo(
            "high",
            draw(_CLASS_VALUE),
            draw(_BOOL),
            draw(_PREEMPTION),
        )
    ]
    queues = [
        QueueSpec(
            name=n, parent=draw(_QUEUE_PARENT) if n != "a" else "root", weight=draw(_QUEUE_WEIGHT),
            capability=draw(_res), deserved=draw(_res), guarantee=draw(_res), reclaimable=draw(_BOOL),
            priority=draw(_QUEUE_PRIORITY), state=draw(_STATE),
        )
        for n in draw(_QUEUE_NAMES)
    ]  # fmt: skip
    groups = [
        QuotaGroupSpec(
            name=n, parent=draw(_GROUP_PARENT) if n != "g1" else "root",
            is_parent=draw(_BOOL), min=draw(_res), max=draw(_res),
            shared_weight=draw(_SHARED_WEIGHT),
            allow_lent=draw(_BOOL), tree_id=draw(_TREE), min_scale_exempt=draw(_BOOL),
        )
        for n in draw(_GROUP_NAMES)
    ]  # fmt: skip
    podgroups = [
        PodGroupInfo(
            namespace=key.split("/")[0], name=key.split("/")[1], queue=draw(_PG_QUEUE),
            min_member=draw(_MIN_MEMBER), min_task_member=draw(_MIN_TASK_MEMBER),
            min_resources=draw(_MAYBE_RES), priority=draw(_PG_PRIORITY),
            priority_class=draw(_PG_CLASS), phase=draw(_PHASE),
            creation_timestamp=draw(_CREATED),
            conditions=tuple(draw(_CONDITIONS)),
        )
        for key in draw(_PG_KEYS)
    ]  # fmt: skip
    namespaces = [
        NamespaceInfo(n, weight=draw(_NS_WEIGHT), queue=draw(_NS_QUEUE),
                      hard=draw(_NS_HARD))
        for n in draw(_NS_NAMES)
    ]  # fmt: skip
    nodes = [
        NodeInfo(n, draw(_res), draw(_NODE_LABELS),
                 tuple(draw(_TAINTS)),
                 draw(_BOOL), draw(_BOOL))
        for n in draw(_NODE_NAMES)
    ]  # fmt: skip
    tasks = {t.uid: t for t in draw(_TASKS)}
    policy = draw(_POLICY)
    eq_args = draw(_EQ_ARGS)
    snap = Snapshot.build(
        nodes=nodes, podgroups=podgroups, queues=queues, quota_groups=groups, namespaces=namespaces,
        priority_classes=classes, policy=policy, elastic_quota_args=eq_args,
        quota_namespaces=draw(st.dictionaries(st.sampled_from([g.name for g in groups] or ["none"]), st.lists(st.sampled_from(["ns1", "web"]), min_size=1, unique=True).map(tuple), max_size=1)) if groups else {},
        # the annotations make the tree when loaded: a queue's path agrees with its place and weight (the loader's
        # own tests vary the rest)
        queue_hierarchy={q.name: QueueHierarchy(("root", "x"), (1.0, float(q.weight))) for q in draw(st.lists(st.sampled_from(queues), max_size=1))} if queues else {},
    )  # fmt: skip
    return snap.replace(tasks=tasks)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=_snapshot())
def test_dump_then_load_gives_back_an_equal_snapshot(snap: Snapshot) -> None:
    text = dump_yaml(snap)
    back = load_manifests([("dump.yaml", text)]).snapshot
    for name in ("nodes", "tasks", "podgroups", "queues", "quota_groups", "namespaces", "priority_classes"):
        assert dict(getattr(back, name)) == dict(getattr(snap, name)), name
    assert back == snap


def test_dump_is_plain_json_compatible() -> None:
    snap = Snapshot.build(podgroups=[PodGroupInfo("ns", "pg", min_resources=ResourceList({"cpu": 1500}))])
    docs = dump_snapshot(snap)
    assert json.loads(json.dumps(docs)) == docs
    assert docs[0]["spec"]["minResources"] == {"cpu": "1500m"}
