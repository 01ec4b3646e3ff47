"""Kueue's JobSets and Kubeflow's jobs against the real API server (the folder's shared one, with the real Job
controller), their CRDs as their projects ship them (``tests/fixtures/crds/workloads``, installed by this module): the objects are created through the
server, which checks them against those CRDs; what their controllers would do next is done here (no JobSet controller
or training operator runs): the JobSet's Jobs, with the labels and controller reference its controller gives them,
from which the real Job controller makes the pods; the PyTorchJob's pods, controlled by it. Through the adapter, as
the ServiceAccount of ``deploy/kubernetes/rbac.yaml`` (the server's RBAC allows the lists and watches of these kinds),
and real sessions:

(a) a JobSet of a driver and two workers (three Jobs of one pod) in a ClusterQueue of 4 cores waits, holding no
    quota, while one of its Jobs is missing, then its 3 pods are bound together, each with its replicated job as its
    role;
(b) a PyTorchJob of a master and two workers is one podgroup, its 3 pods bound;
(c) a suspended JobSet and a suspended PyTorchJob (Kueue's webhook leaves them so) in a ClusterQueue of 6 cores are
    admitted from their templates and resumed by the adapter's merge patches (``spec.suspend``,
    ``spec.runPolicy.suspend``: the server checks them against the CRDs, and its RBAC the ``patch`` verb), then their
    pods, once their controllers' stand-ins make them, are bound; a third, larger than the ClusterQueue, stays
    suspended;
(d) the same two, suspended, in a ClusterQueue of two flavors (``a`` on the first node, ``b`` on a second): each pod
    set is given its own flavor from its template (the master and the driver select ``a``; the workers, unselective,
    find ``a`` full and are given ``b``), and the adapter's resume writes each pod set's flavor's node labels into its
    own template (a JobSet's replicated jobs sent whole, a PyTorchJob's replica specs merged: the server checks both
    against the CRDs), so the pods made from them are bound on their own flavor's node."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import wait_for
from tests.kube.real.test_kueue_jobs_real import _World, two_flavors, worlds
from tests.support.kube_apiserver import CRDS, ControlPlane

JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
PYTORCH = ("kubeflow.org", "v1", "pytorchjobs")


class _PodSetWorld(_World):
    def _template(self, labels: dict[str, str], select: dict[str, str] | None = None) -> dict[str, Any]:
        container = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
        return {"metadata": {"labels": labels}, "spec": {
            "schedulerName": self.cluster.scheduler_name, "restartPolicy": "Never", "containers": [container],
            **({"nodeSelector": select} if select else {})}}  # fmt: skip

    def jobset(self, name: str, workers: int, **more: Any) -> dict[str, Any]:
        """A JobSet labelled with LocalQueue ``lq``, created through the server (its CRD checks it); ``more``: more
        of its spec."""
        spec = {"parallelism": 1, "completions": 1, "template": self._template({})}
        replicated = [{"name": "driver", "replicas": 1, "template": {"spec": spec}},
                      {"name": "workers", "replicas": workers, "template": {"spec": spec}}]  # fmt: skip
        return self.custom.create_namespaced_custom_object(*JOBSET[:2], self.ns, JOBSET[2], {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"replicatedJobs": replicated, **more}})  # fmt: skip

    def jobset_job(self, owner: dict[str, Any], rjob: str, index: int, select: dict[str, str] | None = None) -> None:
        """One of the JobSet's Jobs as its controller makes it: ``<jobset>-<replicated job>-<index>``, the JobSet as
        its controller, the JobSet's labels on it and on its pods; ``select``: its template's node selector."""
        meta = owner["metadata"]
        labels = {"jobset.sigs.k8s.io/jobset-name": meta["name"], "jobset.sigs.k8s.io/jobset-uid": meta["uid"],
                  "jobset.sigs.k8s.io/replicatedjob-name": rjob}  # fmt: skip
        self.batch.create_namespaced_job(self.ns, {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"{meta['name']}-{rjob}-{index}", "labels": labels, "ownerReferences": [{
                "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": meta["name"], "uid": meta["uid"],
                "controller": True}]},
            "spec": {"parallelism": 1, "completions": 1, "template": self._template(labels, select)}})  # fmt: skip

    def pytorchjob(self, name: str, workers: int, **run_policy: Any) -> dict[str, Any]:
        specs = {"Master": {"replicas": 1, "template": self._template({})},
                 "Worker": {"replicas": workers, "template": self._template({})}}  # fmt: skip
        return self.custom.create_namespaced_custom_object(*PYTORCH[:2], self.ns, PYTORCH[2], {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"pytorchReplicaSpecs": specs, **({"runPolicy": run_policy} if run_policy else {})}})  # fmt: skip

    def operator_pod(self, owner: dict[str, Any], role: str, index: int, select: dict[str, str] | None = None) -> None:
        """A pod as the training operator makes it: the job its controller, its replica type labelled; ``select``: its
        node selector (its replica spec's template's)."""
        meta = owner["metadata"]
        body = self._template({"training.kubeflow.org/job-name": meta["name"],
                               "training.kubeflow.org/replica-type": role}, select)  # fmt: skip
        body["metadata"].update(name=f"{meta['name']}-{role}-{index}", ownerReferences=[{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": meta["name"], "uid": meta["uid"],
            "controller": True}])  # fmt: skip
        self.core.create_namespaced_pod(self.ns, {"apiVersion": "v1", "kind": "Pod", **body})

    def mirrored(self, plural: str, name: str, pods: int) -> None:
        """Wait for the object and ``pods`` pods of its name in the adapter's caches, then mirror them in."""
        informers = {i.kind.plural: i for i in self.adapter.informers}
        wait_for(lambda: f"{self.ns}/{name}" in informers[plural].cache, what=f"the {plural} in the cache")
        wait_for(lambda: sum(1 for p in informers["pods"].snapshot() if p["metadata"]["namespace"] == self.ns
                             and p["metadata"]["name"].startswith(f"{name}-")) == pods,
                 what=f"{pods} pods of {name} in the cache")  # fmt: skip
        assert self.adapter.reconcile(force=True) is not None

    def close(self) -> None:
        for group, version, plural in (JOBSET, PYTORCH):
            with contextlib.suppress(k8s.ApiException):
                self.custom.delete_collection_namespaced_custom_object(group, version, self.ns, plural)
        super().close()


@pytest.fixture
def world(db: Any, control_plane: ControlPlane, adapter_token: str, tag: str) -> Iterator[Any]:
    # (kept on the folder's server once made: a second install answers 409, which ``apply_crds`` takes as done)
    control_plane.apply_crds(files=[CRDS / "workloads" / f"{g}_{p}.yaml" for g, _, p in (JOBSET, PYTORCH)])
    with control_plane.api_client() as admin:
        yield from worlds(_PodSetWorld, control_plane, admin, adapter_token, tag)


def _bound(w: _World, name: str) -> list[tuple[str, str]]:
    from scheduling.models import Pod

    # (the folder's server holds other tests' objects, which this cluster mirrors too: this namespace's only)
    rows = Pod.objects.filter(cluster=w.cluster, namespace__name=w.ns, podgroup__name=name, node__isnull=False)
    return sorted(rows.values_list("name", "task_name"))


def test_a_jobset_waits_for_its_last_job_then_its_pods_are_bound_together(world: Any) -> None:
    from scheduling.models import PodGroup

    w = world("4")
    owner = w.jobset("train", 2)
    w.jobset_job(owner, "driver", 0)
    w.jobset_job(owner, "workers", 0)
    w.mirrored("jobsets", "train", 2)
    group = PodGroup.objects.get(cluster=w.cluster, namespace__name=w.ns, name="train")
    assert (group.min_member, group.kube_owner, group.local_queue) == (
        3,
        "JobSet train (jobset.x-k8s.io/v1alpha2)",
        "lq",
    )
    w.sessions(lambda: PodGroup.objects.get(cluster=w.cluster, namespace__name=w.ns, name="train").reason != "", most=2)
    group.refresh_from_db()
    assert (group.reason, _bound(w, "train")) == ("NotEnoughPods", []), group.message
    w.jobset_job(owner, "workers", 1)
    w.mirrored("jobsets", "train", 3)
    w.sessions(lambda: len(_bound(w, "train")) == 3)
    assert [role for _, role in _bound(w, "train")] == ["driver", "workers", "workers"]
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == 3 and out["problems"] == [], out
    pods = w.core.list_namespaced_pod(w.ns, label_selector="jobset.sigs.k8s.io/jobset-name=train").items
    assert {p.spec.node_name for p in pods} == {w.node}


def test_a_pytorchjob_is_one_podgroup_and_its_pods_are_bound(world: Any) -> None:
    from scheduling.models import PodGroup

    w = world("4")
    owner = w.pytorchjob("pt", 2)
    for role, index in (("master", 0), ("worker", 0), ("worker", 1)):
        w.operator_pod(owner, role, index)
    w.mirrored("pytorchjobs", "pt", 3)
    group = PodGroup.objects.get(cluster=w.cluster, namespace__name=w.ns, name="pt")
    assert (group.min_member, group.kube_owner) == (3, "PyTorchJob pt (kubeflow.org/v1)")
    w.sessions(lambda: len(_bound(w, "pt")) == 3)
    assert [role for _, role in _bound(w, "pt")] == ["master", "worker", "worker"]
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == 3 and out["problems"] == [], out


def test_suspended_workloads_are_admitted_from_their_templates_resumed_and_their_pods_bound(world: Any) -> None:
    """(c) Kueue's webhook leaves a JobSet and a PyTorchJob suspended; the sessions admit them from their templates
    and the adapter resumes each with one merge patch, as Kueue's controller does; one that does not fit stays
    suspended."""
    from scheduling.models import PodGroup

    w = world("6")
    js = w.jobset("train", 2, suspend=True)  # 3 pods of 1 core
    pt = w.pytorchjob("pt", 2, suspend=True)  # 3 pods of 1 core
    w.jobset("big", 6, suspend=True)  # 7 pods: more than the ClusterQueue's 6 cores
    informers = {i.kind.plural: i for i in w.adapter.informers}
    wait_for(lambda: {f"{w.ns}/train", f"{w.ns}/big"} <= set(informers["jobsets"].cache)
             and f"{w.ns}/pt" in informers["pytorchjobs"].cache, what="the workloads in the caches")  # fmt: skip
    assert w.adapter.reconcile(force=True) is not None
    rows = PodGroup.objects.filter(cluster=w.cluster, namespace__name=w.ns)

    def phases() -> dict[str, str]:
        return dict(rows.values_list("name", "phase"))

    w.sessions(lambda: phases()["train"] == phases()["pt"] == "Inqueue")
    assert phases()["big"] == "Pending" and rows.get(name="train").min_resources == {"cpu": 3000}
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("job_resumed") == 2 and out["problems"] == [], out
    stored_js = w.custom.get_namespaced_custom_object(*JOBSET[:2], w.ns, JOBSET[2], "train")
    stored_pt = w.custom.get_namespaced_custom_object(*PYTORCH[:2], w.ns, PYTORCH[2], "pt")
    stored_big = w.custom.get_namespaced_custom_object(*JOBSET[:2], w.ns, JOBSET[2], "big")
    assert (stored_js["spec"]["suspend"], stored_pt["spec"]["runPolicy"]["suspend"]) == (False, False)
    assert "fairway.io/resumed" in stored_js["metadata"]["annotations"]
    assert stored_big["spec"]["suspend"] is True
    wait_for(lambda: informers["jobsets"].cache[f"{w.ns}/train"]["spec"]["suspend"] is False, what="the resume")
    out = w.adapter.reconcile()
    assert out is not None and "job_resumed" not in out["sent"], out  # once
    # their controllers, resumed, make the pods (their stand-ins here)
    for rjob, index in (("driver", 0), ("workers", 0), ("workers", 1)):
        w.jobset_job(js, rjob, index)
    for role, index in (("master", 0), ("worker", 0), ("worker", 1)):
        w.operator_pod(pt, role, index)
    w.mirrored("jobsets", "train", 3)
    w.mirrored("pytorchjobs", "pt", 3)
    w.sessions(lambda: len(_bound(w, "train")) == len(_bound(w, "pt")) == 3)
    out = w.adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == 6 and out["problems"] == [], out


def test_suspended_workloads_in_a_flavored_clusterqueue_get_a_flavor_per_pod_set(world: Any) -> None:
    """(d) Two flavors of 2 and 6 cores: the PyTorchJob's master and the JobSet's driver (1 core each) select ``a``
    and fill it; their workers (2 pods of 1 core each) are given ``b``. Resumed, each template carries its own
    flavor's labels, and the pods are bound on their flavor's node."""
    from scheduling.models import PodGroup

    w = world("2")
    with two_flavors(w, "2", "6") as (flavor_b, node_b):
        at_a = f"{w.tag}-a"
        js = w.custom.create_namespaced_custom_object(*JOBSET[:2], w.ns, JOBSET[2], {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "train", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"suspend": True, "replicatedJobs": [
                {"name": "driver", "replicas": 1, "template": {"spec": {
                    "parallelism": 1, "completions": 1, "template": w._template({}, {"kj-flavor": at_a})}}},
                {"name": "workers", "replicas": 2, "template": {"spec": {
                    "parallelism": 1, "completions": 1, "template": w._template({})}}}]}})  # fmt: skip
        specs = {"Master": {"replicas": 1, "template": w._template({}, {"kj-flavor": at_a})},
                 "Worker": {"replicas": 2, "template": w._template({})}}  # fmt: skip
        pt = w.custom.create_namespaced_custom_object(*PYTORCH[:2], w.ns, PYTORCH[2], {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "pt", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"pytorchReplicaSpecs": specs, "runPolicy": {"suspend": True}}})  # fmt: skip
        informers = {i.kind.plural: i for i in w.adapter.informers}
        wait_for(lambda: f"{w.ns}/train" in informers["jobsets"].cache
                 and f"{w.ns}/pt" in informers["pytorchjobs"].cache, what="the workloads in the caches")  # fmt: skip
        assert w.adapter.reconcile(force=True) is not None
        rows = PodGroup.objects.filter(cluster=w.cluster, namespace__name=w.ns)
        w.sessions(lambda: set(rows.values_list("phase", flat=True)) == {"Inqueue"})
        by_name = {r.name: r for r in rows}
        assert by_name["train"].pod_set_flavors == {"driver": {"cpu": w.flavor}, "workers": {"cpu": flavor_b}}
        assert by_name["pt"].pod_set_flavors == {"master": {"cpu": w.flavor}, "worker": {"cpu": flavor_b}}
        out = w.adapter.reconcile()
        assert out is not None and out["sent"].get("job_resumed") == 2 and out["problems"] == [], out
        js = w.custom.get_namespaced_custom_object(*JOBSET[:2], w.ns, JOBSET[2], "train")
        pt = w.custom.get_namespaced_custom_object(*PYTORCH[:2], w.ns, PYTORCH[2], "pt")
        selectors = {
            **{
                r["name"]: r["template"]["spec"]["template"]["spec"]["nodeSelector"]
                for r in js["spec"]["replicatedJobs"]
            },
            **{k: v["template"]["spec"]["nodeSelector"] for k, v in pt["spec"]["pytorchReplicaSpecs"].items()},
        }
        at_b = {"kj-flavor": f"{w.tag}-b"}
        assert selectors == {"driver": {"kj-flavor": at_a}, "workers": at_b, "Master": {"kj-flavor": at_a},
                             "Worker": at_b}, selectors  # fmt: skip
        assert js["spec"]["suspend"] is False and pt["spec"]["runPolicy"]["suspend"] is False
        # their controllers' stand-ins make the pods from the resumed templates
        wait_for(lambda: informers["jobsets"].cache[f"{w.ns}/train"]["spec"]["suspend"] is False, what="the resume")
        for rjob in js["spec"]["replicatedJobs"]:
            for i in range(rjob["replicas"]):
                w.jobset_job(js, rjob["name"], i, rjob["template"]["spec"]["template"]["spec"]["nodeSelector"])
        for role, count in (("Master", 1), ("Worker", 2)):
            for i in range(count):
                w.operator_pod(
                    pt, role.lower(), i, pt["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["nodeSelector"]
                )
        w.mirrored("jobsets", "train", 3)
        w.mirrored("pytorchjobs", "pt", 3)
        w.sessions(lambda: len(_bound(w, "train")) == len(_bound(w, "pt")) == 3)
        out = w.adapter.reconcile()
        assert out is not None and out["sent"].get("bound") == 6 and out["problems"] == [], out
        placed = {p.metadata.name: p.spec.node_name for p in w.core.list_namespaced_pod(w.ns).items}
        assert sorted((n.rsplit("-", 1)[0] if n.startswith("train-") else n, node) for n, node in placed.items()) == [
            ("pt-master-0", w.node), ("pt-worker-0", node_b), ("pt-worker-1", node_b),
            ("train-driver-0", w.node), ("train-workers-0", node_b), ("train-workers-1", node_b)], placed  # fmt: skip
