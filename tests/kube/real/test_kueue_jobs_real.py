"""Kueue's ``batch/v1`` Jobs against the real API server with the real Job controller (kube-controller-manager with
only the ``job`` controller, which the folder's shared server runs): the controller makes a Job's pods from its template
(with the template's ``schedulerName``, without the Job's queue label) and deletes the active pods beyond a lowered
``spec.parallelism``. Through the adapter, as the ServiceAccount of ``deploy/kubernetes/rbac.yaml`` (its real token: the
server's RBAC allows each list, watch, binding and the Job's patch), and real sessions:

(a) a Job of 3 pods in a ClusterQueue of 4 cores is one podgroup, its 3 pods bound;
(b) Kueue's ``sample-job-partial-admission`` shape (20 pods of 1 core, ``job-min-parallelism: 5``) in a ClusterQueue
    of 9 cores: admitted with 9 pods, its parallelism patched to 9 (the annotation keeps 20), 9 pods bound, the
    other 11 deleted by the controller;
(c) a Job that does not fit waits whole: no pod bound;
(d) Kueue's sample Job as Kueue's samples write it, ``suspend: true`` (3 pods of 1 core) in a ClusterQueue of 4 cores:
    admitted from its template, resumed by the adapter, its 3 pods made by the controller and bound; a suspended Job of
    5 cores beside it stays suspended, without pods;
(e) the same Job in a ClusterQueue of two flavors: given the flavor it fits from its template, its pods bound there."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import node, wait_for
from tests.kube.real.conftest import ADAPTER_NAMESPACE, make_cluster
from tests.support.kube_apiserver import ControlPlane

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
ORIGINAL = "fairway.io/original-parallelism"


@pytest.fixture
def jadmin(control_plane: ControlPlane) -> Iterator[k8s.ApiClient]:
    with control_plane.api_client() as api:
        yield api


class _World:
    """A namespace, a ClusterQueue of ``cpu`` cores alone in its tree with LocalQueue ``lq``, a node of 32 cores, a
    cluster of this test and its adapter; ``job`` submits a Kueue Job; ``close`` deletes what it made."""

    def __init__(self, plane: ControlPlane, admin: k8s.ApiClient, tag: str, cpu: str, token: str) -> None:
        from scheduling.kube.adapter import Adapter

        self.admin, self.tag, self.ns = admin, tag, f"kj-{tag}"
        self.core, self.batch, self.custom = k8s.CoreV1Api(admin), k8s.BatchV1Api(admin), k8s.CustomObjectsApi(admin)
        self.cluster = make_cluster(plane.kubeconfig(token), tag)  # the adapter as rbac.yaml's ServiceAccount
        self.core.create_namespace({"metadata": {"name": self.ns}})
        # the flavor is this test's own (the server is the folder's: another test may make a ``default-flavor``)
        self.flavor, self.cq = f"kj-{tag}", f"cq-{tag}"
        flavors = [{"name": self.flavor, "resources": [{"name": "cpu", "nominalQuota": cpu}]}]
        for plural, body in (("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": self.flavor}}),
                             ("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": self.cq}, "spec": {
                                 "resourceGroups": [{"coveredResources": ["cpu"], "flavors": flavors}]}})):  # fmt: skip
            self.custom.create_cluster_custom_object(GROUP, VERSION, plural, {"apiVersion": f"{GROUP}/{VERSION}",
                                                                              **body})  # fmt: skip
        self.custom.create_namespaced_custom_object(GROUP, VERSION, self.ns, "localqueues", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "lq"},
            "spec": {"clusterQueue": self.cq}})  # fmt: skip
        self.node = f"kj-n-{tag}"
        box = node(self.node, cpu="32")  # Ready, untainted (no node lifecycle controller runs here)
        self.core.create_node({key: value for key, value in box.items() if key != "status"})
        self.core.patch_node(self.node, {"spec": {"taints": None}})
        self.core.patch_node_status(self.node, {"status": box["status"]})
        # short watches: its threads stop soon after the test
        self.adapter = Adapter(
            self.cluster, identity=f"kj-{tag}", lease_namespace=ADAPTER_NAMESPACE, lease_seconds=5.0,
            renew_seconds=0.0, watch_seconds=2,
        )  # fmt: skip
        for informer in self.adapter.informers:
            informer.backoff, informer.max_backoff = 0.05, 0.5

    def job(
        self, name: str, parallelism: int, *, suspend: bool = False, resources: Any = None, **annotations: str
    ) -> None:
        """A Job whose pods ask for 1 core each (``resources``: the container's own instead)."""
        asked = {"requests": {"cpu": "1"}} if resources is None else resources
        container = {"name": "main", "image": "busybox", "resources": asked}
        self.batch.create_namespaced_job(self.ns, {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq"}, "annotations": annotations},
            "spec": {"parallelism": parallelism, "completions": parallelism, "suspend": suspend, "template": {"spec": {
                "schedulerName": self.cluster.scheduler_name, "restartPolicy": "Never", "containers": [container]}}},
        })  # fmt: skip

    def server_pods(self, job: str) -> list[k8s.V1Pod]:
        pods = self.core.list_namespaced_pod(self.ns, label_selector=f"batch.kubernetes.io/job-name={job}").items
        return [p for p in pods if p.metadata.deletion_timestamp is None]

    def cached(self, job: str, count: int) -> None:
        """Wait for the Job and ``count`` of its pods in the adapter's caches, then mirror them in."""
        informers = {i.kind.plural: i for i in self.adapter.informers}
        wait_for(lambda: f"{self.ns}/{job}" in informers["jobs"].cache, what="the Job in the cache")
        wait_for(lambda: sum(1 for p in informers["pods"].snapshot() if p["metadata"]["namespace"] == self.ns
                             and p["metadata"]["name"].startswith(f"{job}-")) == count,
                 what=f"{count} pods of {job} in the cache")  # fmt: skip
        assert self.adapter.reconcile(force=True) is not None

    def sessions(self, until: Any, most: int = 4) -> None:
        from scheduling import tasks

        for _ in range(most):
            assert tasks.run_session(self.cluster.pk) == "ran"
            if until():
                return
        raise AssertionError("the sessions did not get there")

    def close(self) -> None:
        """Everything this test made goes, its Jobs and pods first: the folder's server runs no garbage collector and
        no namespace controller, so a deleted namespace keeps its objects (Terminating), and a Kueue Job left there
        would be in the view of every later test's adapter."""
        self.adapter.stop_informers()
        self.adapter.elector.release()
        with contextlib.suppress(k8s.ApiException):
            self.batch.delete_collection_namespaced_job(self.ns, propagation_policy="Background")
        with contextlib.suppress(k8s.ApiException):  # no kubelet confirms a graceful deletion: at once
            self.core.delete_collection_namespaced_pod(self.ns, grace_period_seconds=0)
        wait_for(lambda: not self.batch.list_namespaced_job(self.ns).items, timeout=30, what="the Jobs deleted")
        # the Job controller takes its tracking finalizer off each pod of a deleted Job
        wait_for(lambda: not self.core.list_namespaced_pod(self.ns).items, timeout=30, what="the pods deleted")
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_node(self.node)
        with contextlib.suppress(k8s.ApiException):
            self.core.delete_namespace(self.ns)
        with contextlib.suppress(k8s.ApiException):
            self.custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", self.cq)
        with contextlib.suppress(k8s.ApiException):
            self.custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", self.flavor)


def worlds(kind: type[_World], plane: ControlPlane, admin: k8s.ApiClient, token: str, tag: str) -> Iterator[Any]:
    """A fixture's maker of ``kind`` worlds (``make(cpu)``, its adapter started and synced); closes them after."""
    made: list[_World] = []

    def make(cpu: str) -> _World:
        made.append(kind(plane, admin, tag, cpu, token))
        made[-1].adapter.start_informers()
        wait_for(made[-1].adapter.synced, what="the first lists")
        return made[-1]

    yield make
    for w in made:
        w.close()


@pytest.fixture
def world(db: Any, control_plane: ControlPlane, jadmin: k8s.ApiClient, adapter_token: str, tag: str) -> Iterator[Any]:
    yield from worlds(_World, control_plane, jadmin, adapter_token, tag)


def _bound(w: _World, job: str) -> list[str]:
    from scheduling.models import Pod

    rows = Pod.objects.filter(cluster=w.cluster, podgroup__name=job, node__isnull=False)
    return sorted(rows.values_list("name", flat=True))


def test_a_job_of_3_pods_is_one_podgroup_and_its_pods_are_bound(world: Any) -> None:
    from scheduling.models import Pod, PodGroup

    w = world("4")
    w.job("small", 3)
    w.cached("small", 3)
    group = PodGroup.objects.get(cluster=w.cluster, name="small")
    assert (group.queue.name, group.min_member, group.kube_owner, group.local_queue) == (
        w.cq, 3, "Job small (batch/v1)", "lq")  # fmt: skip
    assert Pod.objects.filter(cluster=w.cluster, namespace__name=w.ns, podgroup=group).count() == 3
    w.sessions(lambda: len(_bound(w, "small")) == 3)
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == 3 and out["problems"] == [], out
    assert {p.spec.node_name for p in w.server_pods("small")} == {w.node}


def test_kueues_partial_admission_sample_is_admitted_with_9_pods_and_the_controller_deletes_the_rest(
    world: Any,
) -> None:
    from scheduling.models import Pod, PodGroup

    w = world("9")
    w.job("sample-job", 20, **{"kueue.x-k8s.io/job-min-parallelism": "5"})
    w.cached("sample-job", 20)
    w.sessions(lambda: len(_bound(w, "sample-job")) == 9)
    group = PodGroup.objects.get(cluster=w.cluster, name="sample-job")
    assert group.kueue_admitted_count == 9
    out = w.adapter.reconcile()  # the bindings; the parallelism once the watch shows them
    assert out is not None and out["sent"].get("bound") == 9, out
    pods = next(i for i in w.adapter.informers if i.kind.plural == "pods")
    wait_for(lambda: sum(1 for p in pods.snapshot() if p["spec"].get("nodeName")) == 9, what="the 9 bindings")
    out = w.adapter.reconcile()  # (a patch rbac.yaml did not allow would be a problem of the pass)
    assert out is not None and out["sent"].get("job_parallelism") == 1 and out["problems"] == [], out
    job = w.batch.read_namespaced_job("sample-job", w.ns)
    assert (job.spec.parallelism, job.metadata.annotations[ORIGINAL]) == (9, "20")
    # the Job controller deletes the 11 pods no node holds
    wait_for(lambda: len(w.server_pods("sample-job")) == 9, timeout=30.0, what="the controller to delete 11 pods")
    assert {p.spec.node_name for p in w.server_pods("sample-job")} == {w.node}
    wait_for(lambda: sum(1 for p in pods.snapshot() if p["metadata"]["name"].startswith("sample-job-")) == 9,
             what="the deletions in the cache")  # fmt: skip
    w.adapter.reconcile()
    w.sessions(lambda: True)
    assert Pod.objects.filter(cluster=w.cluster, podgroup=group).count() == 9
    assert len(_bound(w, "sample-job")) == 9
    group.refresh_from_db()
    assert (group.min_member, group.kueue_admitted_count) == (20, 9)  # still a Job of 20, admitted with 9


def test_a_job_that_does_not_fit_waits_whole(world: Any) -> None:
    from scheduling.models import PodGroup

    w = world("4")
    w.job("big", 6)
    w.cached("big", 6)
    w.sessions(lambda: PodGroup.objects.get(cluster=w.cluster, name="big").reason != "", most=2)
    group = PodGroup.objects.get(cluster=w.cluster, name="big")
    assert group.phase == "Pending" and _bound(w, "big") == [], (group.phase, group.reason, group.message)
    assert "cpu" in group.message, group.message
    out = w.adapter.reconcile()
    assert out is not None and not out["sent"].get("bound")
    assert {p.spec.node_name for p in w.server_pods("big")} == {None}


def test_kueues_suspended_sample_job_is_resumed_once_admitted_and_its_pods_are_bound(world: Any) -> None:
    from scheduling.models import PodGroup

    w = world("4")
    w.job("sample-job", 3, suspend=True)
    w.job("large", 5, suspend=True)
    informers = {i.kind.plural: i for i in w.adapter.informers}
    wait_for(lambda: {f"{w.ns}/sample-job", f"{w.ns}/large"} <= set(informers["jobs"].cache), what="the Jobs")
    assert w.adapter.reconcile(force=True) is not None
    w.sessions(lambda: PodGroup.objects.get(cluster=w.cluster, name="sample-job").phase == "Inqueue")
    out = w.adapter.reconcile()  # (a patch rbac.yaml did not allow would be a problem of the pass)
    assert out is not None and out["sent"].get("job_resumed") == 1 and out["problems"] == [], out
    assert w.batch.read_namespaced_job("sample-job", w.ns).spec.suspend is False
    wait_for(lambda: len(w.server_pods("sample-job")) == 3, timeout=30.0, what="the controller to make 3 pods")
    w.cached("sample-job", 3)
    w.sessions(lambda: len(_bound(w, "sample-job")) == 3)
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == 3 and out["problems"] == [], out
    assert {p.spec.node_name for p in w.server_pods("sample-job")} == {w.node}
    large = w.batch.read_namespaced_job("large", w.ns)
    assert large.spec.suspend is True and not w.server_pods("large")
    assert PodGroup.objects.get(cluster=w.cluster, name="large").phase == "Pending"


def test_a_suspended_job_in_a_flavored_clusterqueue_is_given_its_flavor_and_its_pods_are_bound_there(
    world: Any,
) -> None:
    """(e) A ClusterQueue with two flavors (``a``: 2 cores on the first node, ``b``: 4 cores on a second node): Kueue's
    sample Job, suspended, 3 pods of 1 core, has no pods to choose a flavor on; its template stands for them, so it
    is given ``b`` (it does not fit ``a``), admitted, resumed, and the pods the controller makes are bound on ``b``'s
    node, its flavor kept with the Job."""
    from scheduling.models import PodGroup

    w = world("2")
    with two_flavors(w, "2", "4") as (flavor_b, node_b):
        w.job("sample-job", 3, suspend=True)
        informers = {i.kind.plural: i for i in w.adapter.informers}
        wait_for(lambda: f"{w.ns}/sample-job" in informers["jobs"].cache, what="the Job")
        assert w.adapter.reconcile(force=True) is not None
        w.sessions(lambda: PodGroup.objects.get(cluster=w.cluster, name="sample-job").phase == "Inqueue")
        group = PodGroup.objects.get(cluster=w.cluster, name="sample-job")
        assert group.flavors == {"cpu": flavor_b}, group.flavor_assignment
        out = w.adapter.reconcile()
        assert out is not None and out["sent"].get("job_resumed") == 1 and out["problems"] == [], out
        # the flavor's node labels written into the template as Kueue writes them: the controller's pods carry them
        job = w.batch.read_namespaced_job("sample-job", w.ns)
        assert job.spec.template.spec.node_selector == {"kj-flavor": f"{w.tag}-b"}
        assert job.metadata.annotations["fairway.io/original-placement"] == '{"nodeSelector":{},"tolerations":[]}'
        wait_for(lambda: len(w.server_pods("sample-job")) == 3, timeout=30.0, what="the controller to make 3 pods")
        selectors = [p.spec.node_selector for p in w.server_pods("sample-job")]
        assert selectors == [{"kj-flavor": f"{w.tag}-b"}] * 3, selectors
        w.cached("sample-job", 3)
        w.sessions(lambda: len(_bound(w, "sample-job")) == 3)
        out = w.adapter.reconcile()
        assert out is not None and out["sent"].get("bound") == 3 and out["problems"] == [], out
        assert {p.spec.node_name for p in w.server_pods("sample-job")} == {node_b}


@contextlib.contextmanager
def two_flavors(w: _World, cpu_a: str, cpu_b: str) -> Iterator[tuple[str, str]]:
    """The world's ClusterQueue with two flavors of cpu: its own (``a``: ``cpu_a`` cores, node label ``kj-flavor:
    <tag>-a``, on the world's node) and ``<flavor>-b`` (``cpu_b`` cores, ``kj-flavor: <tag>-b``, on a second node);
    yields (flavor b, its node) once the adapter's caches hold them; removes them after."""
    flavor_b, node_b = f"{w.flavor}-b", f"{w.node}-b"
    try:
        w.custom.patch_cluster_custom_object(
            GROUP, VERSION, "resourceflavors", w.flavor, {"spec": {"nodeLabels": {"kj-flavor": f"{w.tag}-a"}}}
        )
        w.custom.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": flavor_b},
            "spec": {"nodeLabels": {"kj-flavor": f"{w.tag}-b"}}})  # fmt: skip
        quota = [{"name": name, "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                 for name, cpu in ((w.flavor, cpu_a), (flavor_b, cpu_b))]  # fmt: skip
        w.custom.patch_cluster_custom_object(GROUP, VERSION, "clusterqueues", w.cq, {
            "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": quota}]}})  # fmt: skip
        w.core.patch_node(w.node, {"metadata": {"labels": {"kj-flavor": f"{w.tag}-a"}}})
        box = node(node_b, cpu="32")
        box["metadata"].setdefault("labels", {})["kj-flavor"] = f"{w.tag}-b"
        w.core.create_node({key: value for key, value in box.items() if key != "status"})
        w.core.patch_node(node_b, {"spec": {"taints": None}})
        w.core.patch_node_status(node_b, {"status": box["status"]})
        informers = {i.kind.plural: i for i in w.adapter.informers}
        wait_for(lambda: node_b in {n["metadata"]["name"] for n in informers["nodes"].snapshot()}, what="the node")

        def both_flavors() -> bool:
            groups = (informers["clusterqueues"].cache.get(w.cq) or {}).get("spec", {}).get("resourceGroups", [{}])
            return len(groups[0].get("flavors", [])) == 2

        wait_for(both_flavors, what="the ClusterQueue's two flavors")
        yield flavor_b, node_b
    finally:
        with contextlib.suppress(k8s.ApiException):
            w.core.delete_node(node_b)
        with contextlib.suppress(k8s.ApiException):
            w.custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_b)


def test_a_namespaces_limit_ranges_size_a_suspended_job_as_the_api_server_sizes_its_pods(world: Any) -> None:
    """(f) A LimitRange as the API server completes it is what Fairway reads from manifests; a suspended Job whose
    template asks for nothing is sized with its default request (3 pods of 1 core in 4 cores: admitted, resumed,
    and the pods the controller makes ask for what Fairway counted); a Job whose template is above the LimitRange's
    max waits with Kueue's words and is not resumed."""
    from engine.manifests.limitranges import LIMIT_RANGE_WAIT, read_limit_range
    from scheduling.models import PodGroup

    w = world("4")
    sent = {"limits": [{"type": "Container", "max": {"cpu": "3", "memory": "1Gi"}, "min": {"memory": "64Mi"}},
                       {"type": "Pod", "max": {"cpu": "8"}}]}  # fmt: skip
    made = w.core.create_namespaced_limit_range(w.ns, {"metadata": {"name": "probe"}, "spec": sent})
    served = w.admin.sanitize_for_serialization(made)["spec"]
    assert read_limit_range(served) == read_limit_range(sent), served
    w.core.delete_namespaced_limit_range("probe", w.ns)
    w.core.create_namespaced_limit_range(w.ns, {"metadata": {"name": "limits"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "defaultRequest": {"cpu": "1"}}]}})  # fmt: skip
    w.job("sample-job", 3, suspend=True, resources={})
    w.job("big", 1, suspend=True, resources={"requests": {"cpu": "3"}, "limits": {"cpu": "3"}})
    informers = {i.kind.plural: i for i in w.adapter.informers}
    wait_for(lambda: {f"{w.ns}/sample-job", f"{w.ns}/big"} <= set(informers["jobs"].cache), what="the Jobs")
    wait_for(lambda: any(lr["metadata"]["namespace"] == w.ns for lr in informers["limitranges"].snapshot()),
             what="the LimitRange")  # fmt: skip
    assert w.adapter.reconcile(force=True) is not None
    assert PodGroup.objects.get(cluster=w.cluster, name="sample-job").min_resources == {"cpu": 3000}
    w.sessions(lambda: PodGroup.objects.get(cluster=w.cluster, name="sample-job").phase == "Inqueue")
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("job_resumed") == 1 and out["problems"] == [], out
    wait_for(lambda: len(w.server_pods("sample-job")) == 3, timeout=30.0, what="the controller to make 3 pods")
    asked = [(p.spec.containers[0].resources.requests, p.spec.containers[0].resources.limits)
             for p in w.server_pods("sample-job")]  # fmt: skip
    assert asked == [({"cpu": "1"}, {"cpu": "2"})] * 3, asked
    w.cached("sample-job", 3)
    w.sessions(lambda: len(_bound(w, "sample-job")) == 3)
    big = PodGroup.objects.get(cluster=w.cluster, name="big")
    assert big.phase == "Pending", big.phase
    assert f"{LIMIT_RANGE_WAIT}: spec.template.spec.containers[0]" in big.message, big.message
    assert "cpu (2 cores): requests must not be above the LimitRange max" in big.message
    assert w.batch.read_namespaced_job("big", w.ns).spec.suspend is True and not w.server_pods("big")
