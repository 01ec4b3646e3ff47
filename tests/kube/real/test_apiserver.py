"""The real control plane itself, through the official client: the peers' CRDs are installed and serve objects
(their schemas enforced), core objects round-trip with etcd's resourceVersions, and RBAC is enforced for a real
ServiceAccount token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.kube.conftest import pod, podgroup, queue, wait_for
from tests.support.kube_apiserver import CRDS, ControlPlane

VOLCANO = ("scheduling.volcano.sh", "v1beta1")


def _crd_names(folder: Path) -> set[str]:
    return {yaml.safe_load(p.read_text())["metadata"]["name"] for p in folder.glob("*.yaml")}


def _body(exc: ApiException) -> dict[str, Any]:
    return json.loads(exc.body)  # type: ignore[no-any-return]


def test_every_crd_the_adapter_reads_is_installed_and_established(control_plane: ControlPlane) -> None:
    from scheduling.kube.client import KINDS

    expected = _crd_names(CRDS)
    # the issue's list: the four that were missing are there
    assert {"podgroups.scheduling.volcano.sh", "elasticquotaprofiles.quota.koordinator.sh",
            "workloads.kueue.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"} <= expected  # fmt: skip
    with control_plane.api_client() as api:
        listed = json.loads(
            k8s.ApiextensionsV1Api(api).list_custom_resource_definition(_preload_content=False).data
        )["items"]  # fmt: skip
    established = {
        crd["metadata"]["name"]
        for crd in listed
        if any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"])
    }
    assert expected <= established
    # every custom kind the adapter lists is served (the workload integrations' CRDs are installed by their tests)
    for kind in KINDS:
        if kind.crd and not kind.integration:
            assert kind.crd in established, kind


def test_queue_and_pod_round_trip_with_real_resource_versions(control_plane: ControlPlane) -> None:
    with control_plane.api_client() as api:
        core, custom = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api)
        core.create_namespace({"metadata": {"name": "smoke"}})
        created = custom.create_cluster_custom_object(*VOLCANO, "queues", queue("smoke-q", weight=3,
                                                      capability={"cpu": "16"}))  # fmt: skip
        custom.create_namespaced_custom_object(*VOLCANO, "smoke", "podgroups", podgroup("smoke", "pg", "smoke-q", 2))
        made = core.create_namespaced_pod("smoke", pod("smoke", "p0", cpu="2", group="pg"))

        queues = custom.list_cluster_custom_object(*VOLCANO, "queues")
        mine = [q for q in queues["items"] if q["metadata"]["name"] == "smoke-q"]
        assert len(mine) == 1 and mine[0]["spec"]["weight"] == 3 and mine[0]["spec"]["capability"] == {"cpu": "16"}
        assert mine[0]["metadata"]["uid"] == created["metadata"]["uid"]
        pods = core.list_namespaced_pod("smoke")
        assert [p.metadata.name for p in pods.items] == ["p0"]
        listed = pods.items[0]
        assert listed.spec.scheduler_name == "fairway" and listed.spec.node_name is None
        assert listed.spec.containers[0].resources.requests == {"cpu": "2", "memory": "1Gi"}
        assert listed.metadata.annotations == {"scheduling.k8s.io/group-name": "pg"}
        # etcd's revisions: one counter for every kind, the list at or after each object
        assert int(made.metadata.resource_version) > int(created["metadata"]["resourceVersion"])
        assert int(pods.metadata.resource_version) >= int(made.metadata.resource_version)
        assert int(queues["metadata"]["resourceVersion"]) >= int(created["metadata"]["resourceVersion"])

        # the CRD's schema is enforced (the emulation accepts anything)
        with pytest.raises(ApiException) as refused:
            custom.create_cluster_custom_object(*VOLCANO, "queues", queue("smoke-bad", weight="heavy"))
        assert refused.value.status == 422
        assert "spec.weight" in _body(refused.value)["message"]


def test_rbac_is_enforced_for_a_service_account_token(control_plane: ControlPlane) -> None:
    with control_plane.api_client() as api:
        core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
        core.create_namespace({"metadata": {"name": "rbac-smoke"}})
        token = control_plane.service_account_token("rbac-smoke", "reader")

        with control_plane.api_client(token) as as_reader:
            reader = k8s.CoreV1Api(as_reader)
            with pytest.raises(ApiException) as denied:
                reader.list_namespaced_pod("rbac-smoke")
            assert denied.value.status == 403
            body = _body(denied.value)
            assert body["reason"] == "Forbidden"
            assert 'User "system:serviceaccount:rbac-smoke:reader" cannot list resource "pods"' in body["message"]

            rbac.create_namespaced_role("rbac-smoke", {
                "metadata": {"name": "pod-reader"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
            })  # fmt: skip
            rbac.create_namespaced_role_binding("rbac-smoke", {
                "metadata": {"name": "reader-reads-pods"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
                "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "rbac-smoke"}],
            })  # fmt: skip

            def allowed() -> bool:
                try:
                    return reader.list_namespaced_pod("rbac-smoke").items == []
                except ApiException as exc:
                    if exc.status != 403:
                        raise
                    return False

            wait_for(allowed, what="the RoleBinding to take effect")
            # only what was granted: other namespaces and other verbs are still refused
            with pytest.raises(ApiException) as still_denied:
                reader.list_namespaced_pod("default")
            assert still_denied.value.status == 403
            with pytest.raises(ApiException) as create_denied:
                reader.create_namespaced_pod("rbac-smoke", pod("rbac-smoke", "nope"))
            assert create_denied.value.status == 403

        with control_plane.api_client("not-a-token") as stranger, pytest.raises(ApiException) as unknown:
            k8s.CoreV1Api(stranger).list_namespaced_pod("rbac-smoke")
        assert unknown.value.status == 401


# a pod's own ``spec.resources`` (pod-level resources, on by default since Kubernetes 1.34) with its containers'
# requests, and what Fairway counts for the pod (``engine.manifests.core._pod_level``)
POD_LEVEL = {
    "requests only": ({"requests": {"cpu": "4"}}, [{}], {"cpu": 4000}),
    "limits only": ({"limits": {"cpu": "4", "memory": "1Gi"}}, [{}], {"cpu": 4000, "memory": 2**30}),
    "limit over the containers' requests": (
        {"limits": {"cpu": "4"}}, [{"requests": {"cpu": "1"}}, {"requests": {"cpu": "500m"}}], {"cpu": 1500},
    ),
    "request over a container's, a GPU the pod cannot set": (
        {"requests": {"cpu": "3"}},
        [{"requests": {"cpu": "1", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}],
        {"cpu": 3000, "nvidia.com/gpu": 1000},
    ),
    "limit over a container's limit": ({"limits": {"cpu": "4"}}, [{"limits": {"cpu": "2"}}], {"cpu": 2000}),
}  # fmt: skip


def test_pod_level_resources_count_as_the_api_server_defaults_them(control_plane: ControlPlane) -> None:
    """Each pod is read twice, as submitted (``fairway simulate``: what the API server will make of it) and as the
    API server stored it (the adapter: its defaults given): both count the same request."""
    from engine.manifests import load_objects

    with control_plane.api_client() as api:
        core = k8s.CoreV1Api(api)
        for i, (case, (own, containers, counted)) in enumerate(POD_LEVEL.items()):
            named = [{"name": f"c{j}", "image": "busybox", "resources": r} for j, r in enumerate(containers)]
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-level-{i}", "namespace": "default"},
                    "spec": {"schedulerName": "fairway", "resources": own, "containers": named}}  # fmt: skip
            stored = api.sanitize_for_serialization(core.create_namespaced_pod("default", body))
            stored.update(apiVersion="v1", kind="Pod")
            try:
                for doc, live in ((body, False), (stored, True)):
                    result, invalid = load_objects([doc], live=live)
                    assert not invalid, (case, invalid)
                    assert result.snapshot.tasks[f"default/pod-level-{i}"].request.raw == counted, (case, live, doc)
            finally:
                core.delete_namespaced_pod(f"pod-level-{i}", "default", grace_period_seconds=0)


def test_a_runtime_class_gives_a_pod_what_fairway_counts_from_its_manifest(control_plane: ControlPlane) -> None:
    """The API server's RuntimeClass admission gives a pod naming a class the class's overhead, node selector and
    tolerations; Fairway's reading of the submitted pod with the class (``fairway simulate``, a suspended Job's
    template) counts the same request and placement as its reading of the pod the server stored."""
    from engine.manifests import load_objects
    from tests.unit.test_manifests import KATA

    with control_plane.api_client() as api:
        k8s.NodeV1Api(api).create_runtime_class({k: v for k, v in KATA.items() if k not in ("apiVersion", "kind")})
        core = k8s.CoreV1Api(api)
        container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kata-pod", "namespace": "default"},
                "spec": {"schedulerName": "fairway", "runtimeClassName": "kata", "nodeSelector": {"zone": "a"},
                         "containers": [container]}}  # fmt: skip
        stored = api.sanitize_for_serialization(core.create_namespaced_pod("default", body))
        stored.update(apiVersion="v1", kind="Pod")
        try:
            read = {}
            for doc, live in ((body, False), (stored, True)):
                result, invalid = load_objects([KATA, doc], live=live)
                assert not invalid, invalid
                read[live] = result.snapshot.tasks["default/kata-pod"]
            assert read[False].request == read[True].request and read[True].request.raw == {
                "cpu": 1250, "memory": 120 * 2**20}  # fmt: skip
            assert read[False].node_selector == read[True].node_selector == {"zone": "a", "runtime": "kata"}
            assert "kata" in {t.key for t in read[False].tolerations} & {t.key for t in read[True].tolerations}
        finally:
            core.delete_namespaced_pod("kata-pod", "default", grace_period_seconds=0)
            k8s.NodeV1Api(api).delete_runtime_class("kata")


# a LimitRange of type Pod, and pods the API server's LimitRanger admits or refuses (True: admitted): its max bounds
# the pod's limits (which must name the resource), its min the pod's requests, and a RuntimeClass's overhead counts in
# neither (Kueue, checking a workload's templates, counts it: ``engine.manifests.limitranges``)
POD_RANGE = {"type": "Pod", "max": {"cpu": "1"}, "min": {"memory": "600Mi"}}
POD_RANGE_CASES = {
    "within": ({"cpu": "800m", "memory": "700Mi"}, {"cpu": "800m"}, None, True),
    "within-with-overhead": ({"cpu": "900m", "memory": "700Mi"}, {"cpu": "900m"}, "kata", True),
    "limit-above-max": ({"cpu": "500m", "memory": "700Mi"}, {"cpu": "1500m"}, None, False),
    "no-limit": ({"cpu": "500m", "memory": "700Mi"}, {}, None, False),
    "below-min-without-overhead": ({"cpu": "500m", "memory": "500Mi"}, {"cpu": "500m"}, "kata", False),
}
# the same range with pod-level resources (``spec.resources``, beta and on in Kubernetes 1.34): (the containers'
# requests, the pod's requests, the pod's limits, admitted)
POD_LEVEL_CASES = {
    "pod-level-within": ({"cpu": "200m", "memory": "100Mi"}, {"cpu": "800m", "memory": "700Mi"}, {"cpu": "1"}, True),
    "pod-level-limit-above-max": ({"cpu": "200m"}, {"cpu": "500m", "memory": "700Mi"}, {"cpu": "1500m"}, False),
    "pod-level-below-min": ({"cpu": "200m"}, {"cpu": "500m", "memory": "500Mi"}, {"cpu": "1"}, False),
    "pod-level-no-limit": ({"cpu": "200m"}, {"cpu": "500m", "memory": "700Mi"}, {}, False),
    "pod-level-memory-limit-only": ({"cpu": "200m"}, {"cpu": "500m", "memory": "700Mi"}, {"memory": "1Gi"}, False),
}


def test_a_pod_limit_range_refuses_the_pods_the_api_server_refuses(control_plane: ControlPlane) -> None:
    """Fairway reading a pod from manifests (``fairway simulate``) refuses it where the API server's LimitRanger
    refuses it, for a LimitRange of type Pod: the same verdict for every case."""
    from engine.manifests import load_objects
    from tests.unit.test_manifests import KATA

    ranges = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "pods", "namespace": "lr"},
              "spec": {"limits": [POD_RANGE]}}  # fmt: skip
    with control_plane.api_client() as api:
        core, node = k8s.CoreV1Api(api), k8s.NodeV1Api(api)
        node.create_runtime_class({k: v for k, v in KATA.items() if k not in ("apiVersion", "kind")})
        core.create_namespace({"metadata": {"name": "lr"}})
        core.create_namespaced_limit_range("lr", {k: v for k, v in ranges.items() if k not in ("apiVersion", "kind")})
        cases = {name: (*case, None) for name, case in POD_RANGE_CASES.items()}
        cases.update({name: (mine, {}, None, ok, {"requests": asked, "limits": capped})
                      for name, (mine, asked, capped, ok) in POD_LEVEL_CASES.items()})  # fmt: skip
        try:
            for name, (requests, limits, runtime_class, admitted, pod_level) in cases.items():
                spec: dict[str, Any] = {
                    "schedulerName": "fairway",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": requests, "limits": limits}}
                    ],
                }
                if runtime_class:
                    spec["runtimeClassName"] = runtime_class
                if pod_level is not None:
                    spec["resources"] = pod_level
                body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "lr"}, "spec": spec}
                try:
                    core.create_namespaced_pod("lr", body)
                    server = True
                except ApiException as exc:
                    assert exc.status == 403 and "usage per Pod" in _body(exc)["message"], exc
                    server = False
                _, invalid = load_objects([KATA, ranges, body])
                assert (server, not invalid) == (admitted, admitted), (name, _body_or(invalid))
                if not admitted:
                    assert "the pod: the m" in invalid[0].message, invalid[0].message
        finally:
            core.delete_namespace("lr")
            node.delete_runtime_class("kata")


def _body_or(invalid: list[Any]) -> str:
    return invalid[0].message if invalid else "admitted"


# a LimitRange of type Container (defaults) and pods with and without pod-level resources: (the container's resources,
# the pod's spec.resources or None, the field Fairway's refusal names or None where the server admits the pod)
CONTAINER_RANGE = {"type": "Container", "default": {"cpu": "500m", "memory": "512Mi"},
                   "defaultRequest": {"cpu": "300m", "memory": "256Mi"}}  # fmt: skip
OVER_DEFAULTS = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
DEFAULTED_CASES: dict[str, tuple[dict[str, Any], dict[str, Any] | None, str | None]] = {
    "defaults": ({}, None, None),
    "pod-level-over-defaults": ({}, OVER_DEFAULTS, None),
    "pod-level-cpu-only": ({}, {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}, None),
    "own-request": ({"requests": {"cpu": "100m"}}, {"requests": {"cpu": "400m"}, "limits": {"cpu": "1"}}, None),
    "pod-level-below-defaults": ({}, {"requests": {"cpu": "200m"}, "limits": {"cpu": "2"}}, "spec.resources.requests[cpu]"),
    "pod-limit-below-container-limit": (
        {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}, {"limits": {"cpu": "500m"}},
        "spec.containers[0].resources.limits[cpu]",
    ),
    "pod-request-above-pod-limit": (
        {"requests": {"cpu": "100m"}}, {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, "spec.resources.requests[cpu]"
    ),
    "pod-level-ephemeral": ({}, {"requests": {"ephemeral-storage": "1Gi"}}, "spec.resources.requests[ephemeral-storage]"),
}  # fmt: skip


def _server_request(obj: Any) -> dict[str, int]:
    """Kubernetes' PodRequests of a pod as the server stored it (one container, no overhead): the pod-level request
    where it sets one, else the container's."""
    from engine.resources import parse_quantity

    [container] = obj.spec.containers
    asked = {**((container.resources and container.resources.requests) or {})}
    asked.update((obj.spec.resources and obj.spec.resources.requests) or {})
    return {r: parse_quantity(v, r) for r, v in asked.items()}


def test_pod_level_resources_under_container_defaults_read_and_refused_as_the_api_server_does(
    control_plane: ControlPlane,
) -> None:
    """Fairway reading a pod from manifests (``fairway simulate``) under a LimitRange of container defaults, with and
    without pod-level resources (``spec.resources``), finds the request the API server stores, and refuses, naming
    the field, the pods the server refuses (a pod-level request below the containers' or above the pod's limit, a
    container limit above the pod's, a resource that cannot be set at pod level)."""
    from engine.manifests import load_objects

    ranges = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "lrd"},
              "spec": {"limits": [CONTAINER_RANGE]}}  # fmt: skip
    with control_plane.api_client() as api:
        core = k8s.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "lrd"}})
        core.create_namespaced_limit_range("lrd", {k: v for k, v in ranges.items() if k not in ("apiVersion", "kind")})
        try:
            for name, (resources, pod_level, refused) in DEFAULTED_CASES.items():
                spec: dict[str, Any] = {"schedulerName": "fairway",
                                        "containers": [{"name": "c", "image": "busybox", "resources": resources}]}  # fmt: skip
                if pod_level is not None:
                    spec["resources"] = pod_level
                body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "lrd"}, "spec": spec}
                result, invalid = load_objects([ranges, body])
                try:
                    stored = _server_request(core.create_namespaced_pod("lrd", body))
                except ApiException as exc:
                    assert exc.status == 422 and refused is not None, (name, _body(exc)["message"])
                    assert [i.name for i in invalid] == [name] and refused in invalid[0].message, (name, invalid)
                    continue
                assert refused is None and not invalid, (name, _body_or(invalid))
                assert dict(result.snapshot.tasks[f"lrd/{name}"].request.items()) == stored, name
        finally:
            core.delete_namespace("lrd")


# PriorityClasses (the global default one never preempts) and pods: the fields each sets, and what the API server's
# priority admission makes of it, (priority, priorityClassName, preemptionPolicy), or None where it refuses the pod
PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc-high"}, "value": 1000},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc-low"}, "value": 10,
     "globalDefault": True, "preemptionPolicy": "Never"},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc-polite"}, "value": 500,
     "preemptionPolicy": "Never"},
]  # fmt: skip
PRIORITY_CASES: dict[str, tuple[dict[str, Any], tuple[int, str, str] | None]] = {
    "no-class": ({}, (10, "pc-low", "Never")),
    "high": ({"priorityClassName": "pc-high"}, (1000, "pc-high", "PreemptLowerPriority")),
    "high-same-priority": ({"priorityClassName": "pc-high", "priority": 1000}, (1000, "pc-high", "PreemptLowerPriority")),
    "polite": ({"priorityClassName": "pc-polite"}, (500, "pc-polite", "Never")),
    "node-critical": ({"priorityClassName": "system-node-critical"},
                      (2000001000, "system-node-critical", "PreemptLowerPriority")),
    # refused by the server, read as written by Fairway (simulate's inputs use a priority without its class as a
    # shortcut; a class missing from the input is a warning): docs/simulate.md
    "missing": ({"priorityClassName": "pc-missing"}, None),
    "high-wrong-priority": ({"priorityClassName": "pc-high", "priority": 5}, None),
    "priority-only": ({"priority": 7}, None),
    "polite-but-preempting": ({"priorityClassName": "pc-polite", "preemptionPolicy": "PreemptLowerPriority"}, None),
}  # fmt: skip


def test_a_pods_priority_is_what_the_api_servers_priority_admission_gives_it(control_plane: ControlPlane) -> None:
    """Fairway reading a pod from manifests (``fairway simulate``) gives it the priority, class and preemption policy
    the API server's priority admission stores (a pod without a class: the global default class's); a pod the
    server refuses for a priority or policy its class does not give is read as written."""
    from engine.manifests import load_objects

    with control_plane.api_client() as api:
        core, classes = k8s.CoreV1Api(api), k8s.SchedulingV1Api(api)
        for pc in PRIORITY_CLASSES:
            classes.create_priority_class({k: v for k, v in pc.items() if k not in ("apiVersion", "kind")})
        core.create_namespace({"metadata": {"name": "prio"}})
        try:
            for name, (fields, admitted) in PRIORITY_CASES.items():
                spec = {"schedulerName": "fairway", "containers": [{"name": "c", "image": "busybox"}], **fields}
                body = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": "prio"},
                    "spec": spec,
                }
                try:
                    made = core.create_namespaced_pod("prio", body).spec
                    server: Any = (made.priority, made.priority_class_name, made.preemption_policy)
                except ApiException as exc:
                    assert exc.status == 403 and "priority" in _body(exc)["message"].lower(), (name, exc)
                    server = None
                assert server == admitted, name
                result, invalid = load_objects([*PRIORITY_CLASSES, body])
                assert not invalid, (name, invalid)
                t = result.snapshot.tasks[f"prio/{name}"]
                read = (t.priority, t.priority_class, t.preemption_policy)
                assert read == (admitted or read), (name, read)
                if admitted is None and "priority" in fields:  # read as written
                    assert t.priority == fields["priority"], name
                unlike = [w for w in result.warnings if "the API server refuses such a pod" in w]
                # refused for what its (known) class does not give: read as written, with a warning naming the field
                assert bool(unlike) == (admitted is None and name not in ("missing", "priority-only")), (name, unlike)
        finally:
            core.delete_namespace("prio")
            for pc in PRIORITY_CLASSES:
                classes.delete_priority_class(pc["metadata"]["name"])


# a Kueue Job whose template sets pod-level resources: (the template's spec.resources, its container's resources,
# the field the API server's refusal names, or None where it creates the Job)
JOB_TEMPLATE_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str | None]] = {
    "over-its-container": ({"requests": {"cpu": "1"}}, {"requests": {"cpu": "500m"}}, None),
    "below-its-container": ({"requests": {"cpu": "200m"}}, {"requests": {"cpu": "500m"}},
                            "spec.template.spec.resources.requests[cpu]"),
    "a-gpu": ({"requests": {"nvidia.com/gpu": "1"}}, {}, "spec.template.spec.resources.requests[nvidia.com/gpu]"),
}  # fmt: skip


def test_a_jobs_template_with_pod_level_resources_is_refused_where_the_api_server_refuses_the_job(
    control_plane: ControlPlane,
) -> None:
    """A Kueue Job (suspended, as Kueue's webhook leaves it) whose template's own resources the API server refuses
    is refused by ``fairway simulate`` too, naming the same field; one it creates is read."""
    from engine.manifests import load_objects

    lq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "jpl"},
          "spec": {"clusterQueue": "cq"}}  # fmt: skip
    with control_plane.api_client() as api:
        core, batch = k8s.CoreV1Api(api), k8s.BatchV1Api(api)
        core.create_namespace({"metadata": {"name": "jpl"}})
        try:
            for name, (own, container, refused) in JOB_TEMPLATE_CASES.items():
                body = {"apiVersion": "batch/v1", "kind": "Job",
                        "metadata": {"name": name, "namespace": "jpl", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
                        "spec": {"suspend": True, "parallelism": 1, "completions": 1, "template": {"spec": {
                            "restartPolicy": "Never", "resources": own,
                            "containers": [{"name": "c", "image": "busybox", "resources": container}]}}}}  # fmt: skip
                _, invalid = load_objects([lq, body])
                try:
                    batch.create_namespaced_job("jpl", body)
                except ApiException as exc:
                    assert exc.status == 422 and refused is not None and refused in _body(exc)["message"], (name, exc)
                    assert [i.name for i in invalid] == [name] and refused in invalid[0].message, (name, invalid)
                    continue
                assert refused is None and not invalid, (name, _body_or(invalid))
        finally:
            core.delete_namespace("jpl")
