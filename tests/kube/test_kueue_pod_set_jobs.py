"""Kueue's workloads of several pod sets in a live cluster (``engine.manifests.kueuepodsets``, live): a JobSet, a
Kubeflow job and an MPIJob labelled with a LocalQueue are each one podgroup of the pods their controllers made (never
made from the templates), with every pod of their pod sets as its minimum, each pod's pod set its role; such a
workload waits, holding no quota, until all its pods exist, as a Kueue Job does; pods of an older object of the same
name, or another owner's, are not its own. Through the reader, then the rows the adapter writes and real sessions."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from tests.kube.conftest import node, pod
from tests.kube.test_kueue_jobs import LOCAL_QUEUE, QUEUE_LABEL, _world

CPU = {"resources": {"requests": {"cpu": "1"}}}


def _template(cpu: str = "1") -> dict[str, Any]:
    return {"spec": {"schedulerName": "fairway", "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}  # fmt: skip


def jobset(name: str, workers: int = 2, *, uid: str = "", **spec: Any) -> dict[str, Any]:
    """A JobSet of a ``driver`` (one Job of one pod of 2 cores) and ``workers`` Jobs of one pod of 1 core."""
    replicated = [
        {"name": "driver", "replicas": 1, "template": {"spec": {"parallelism": 1, "template": _template("2")}}},
        {"name": "workers", "replicas": workers, "template": {"spec": {"parallelism": 1, "template": _template()}}},
    ]
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": "team", "uid": uid or f"uid-{name}", "labels": {QUEUE_LABEL: "lq"}},
            "spec": {"replicatedJobs": replicated, **spec}}  # fmt: skip


def jobset_pod(owner: str, rjob: str, index: int, *, uid: str = "", node_name: str = "") -> dict[str, Any]:
    """A pod as the JobSet controller's Job makes it: the JobSet's labels, its Job as its controller."""
    job_name = f"{owner}-{rjob}-{index}"
    labels = {"jobset.sigs.k8s.io/jobset-name": owner, "jobset.sigs.k8s.io/jobset-uid": uid or f"uid-{owner}",
              "jobset.sigs.k8s.io/replicatedjob-name": rjob, "batch.kubernetes.io/job-name": job_name}  # fmt: skip
    out = pod("team", f"{job_name}-0", scheduler="fairway", labels=labels, cpu="2" if rjob == "driver" else "1")
    out["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                           "uid": f"uid-{job_name}", "controller": True}]  # fmt: skip
    if node_name:
        out["spec"]["nodeName"] = node_name
    return out


def pytorchjob(name: str, workers: int = 2, **run_policy: Any) -> dict[str, Any]:
    specs = {
        "Master": {"replicas": 1, "template": _template()},
        "Worker": {"replicas": workers, "template": _template()},
    }
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": "team", "uid": f"uid-{name}", "labels": {QUEUE_LABEL: "lq"}},
            "spec": {"pytorchReplicaSpecs": specs, "runPolicy": run_policy}}  # fmt: skip


def operator_pod(kind: str, api_version: str, owner: str, role: str, index: int, **labels: str) -> dict[str, Any]:
    """A pod a Kubeflow operator made: the job as its controller, the replica type (or MPI's job role) label."""
    out = pod("team", f"{owner}-{role}-{index}", scheduler="fairway", labels={
        "training.kubeflow.org/job-name": owner, **labels})  # fmt: skip
    out["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": kind, "name": owner,
                                           "uid": f"uid-{owner}", "controller": True}]  # fmt: skip
    return out


def mpijob(name: str, workers: int = 2) -> dict[str, Any]:
    specs = {
        "Launcher": {"replicas": 1, "template": _template()},
        "Worker": {"replicas": workers, "template": _template()},
    }
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": "team", "uid": f"uid-{name}", "labels": {QUEUE_LABEL: "lq"}},
            "spec": {"mpiReplicaSpecs": specs}}  # fmt: skip


def mpi_launcher_pod(owner: str, job_name: str = "") -> dict[str, Any]:
    """The MPI operator's launcher pod: made by its Job ``<mpijob>-launcher``, with the MPIJob's labels."""
    job_name = job_name or f"{owner}-launcher"
    out = pod("team", f"{job_name}-x1", scheduler="fairway", labels={
        "training.kubeflow.org/job-name": owner, "training.kubeflow.org/job-role": "launcher"})  # fmt: skip
    out["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                           "uid": f"uid-{job_name}", "controller": True}]  # fmt: skip
    return out


# -- the reader's live mode (no database) --------------------------------------------------------------------


def test_live_a_jobsets_pods_are_one_podgroup_by_its_labels_and_uid() -> None:
    from engine.manifests import load_objects

    older = jobset_pod("train", "workers", 5, uid="uid-an-older-train")  # the name matches, the uid does not
    objects = [LOCAL_QUEUE, jobset("train", 2), jobset_pod("train", "driver", 0), jobset_pod("train", "workers", 0),
               older]  # fmt: skip
    result, invalid = load_objects(objects, live=True)
    snap = result.snapshot
    assert not invalid
    assert {k: (t.podgroup, t.task_role) for k, t in snap.tasks.items()} == {
        "team/train-driver-0-0": ("team/train", "driver"), "team/train-workers-0-0": ("team/train", "workers"),
        "team/train-workers-5-0": ("team/podgroup-train-workers-5-0", "")}  # fmt: skip
    group = snap.podgroups["team/train"]
    # every pod of its pod sets, from the object: a driver of 2 cores and two workers of 1
    assert (group.queue, group.min_member, group.min_resources.raw) == ("ml", 3, {"cpu": 4000})
    job = result.kueue_jobs["team/train"]
    stored = job.stored()
    assert [(t["name"], t["count"], t["request"]) for t in stored.pop("podSetTemplates")] == [
        ("driver", 1, {"cpu": 2000}), ("workers", 2, {"cpu": 2000})]  # fmt: skip
    assert stored == {"minCount": None, "suspended": False, "kind": "JobSet", "podSets": ["driver", "workers"]}
    assert job.owner("train") == "JobSet train (jobset.x-k8s.io/v1alpha2)"
    assert dict(snap.admission.pod_group_waits)["team/train"] == (
        "2 of its 3 pods exist (all its pod sets' pods): a JobSet is admitted once all its pods exist"
    )
    # simulate still makes the pods from the templates
    expanded, _ = load_objects([LOCAL_QUEUE, jobset("train", 2)])
    assert len([t for t in expanded.snapshot.tasks.values() if t.podgroup == "team/train"]) == 3
    assert not expanded.kueue_jobs


def test_live_kubeflow_and_mpi_pods_join_by_their_controller_the_launcher_by_its_job() -> None:
    from engine.manifests import load_objects

    torch = [operator_pod("PyTorchJob", "kubeflow.org/v1", "pt", role, i, **{
        "training.kubeflow.org/replica-type": role}) for role, i in (("master", 0), ("worker", 0), ("worker", 1))]  # fmt: skip
    mpi = [mpi_launcher_pod("mpi"), *(operator_pod("MPIJob", "kubeflow.org/v2beta1", "mpi", "worker", i, **{
        "training.kubeflow.org/job-role": "worker"}) for i in range(2))]  # fmt: skip
    # hostile or foreign: a launcher pod of another Job than ``<mpijob>-launcher``, a pod naming the PyTorchJob with
    # another kind in its controller reference
    stray_launcher = mpi_launcher_pod("mpi", job_name="something-else")
    wrong_kind = operator_pod("TFJob", "kubeflow.org/v1", "pt", "worker", 9)
    objects = [LOCAL_QUEUE, pytorchjob("pt"), mpijob("mpi"), *torch, *mpi, stray_launcher, wrong_kind]
    result, invalid = load_objects(objects, live=True)
    snap = result.snapshot
    assert not invalid
    assert sorted((t.name, t.task_role) for t in snap.tasks.values() if t.podgroup == "team/pt") == [
        ("pt-master-0", "master"), ("pt-worker-0", "worker"), ("pt-worker-1", "worker")]  # fmt: skip
    assert sorted((t.name, t.task_role) for t in snap.tasks.values() if t.podgroup == "team/mpi") == [
        ("mpi-launcher-x1", "launcher"), ("mpi-worker-0", "worker"), ("mpi-worker-1", "worker")]  # fmt: skip
    assert snap.tasks["team/something-else-x1"].podgroup != "team/mpi"
    assert snap.tasks["team/pt-worker-9"].podgroup != "team/pt"
    assert not snap.admission.pod_group_waits  # both complete
    assert (snap.podgroups["team/pt"].min_member, snap.podgroups["team/mpi"].min_member) == (3, 3)
    assert result.kueue_jobs["team/mpi"].owner("mpi") == "MPIJob mpi (kubeflow.org/v2beta1)"


def test_live_a_suspended_workload_is_admissible_from_its_templates_and_a_bad_suspend_names_its_field() -> None:
    """A suspended workload has no pods: its templates size it (every pod of its pod sets), it does not wait, and the
    adapter resumes it once admitted; its pod sets' templates are kept (``podSetTemplates``) and stand for its pods
    (``AdmissionLevers.templates``: one per pod set, asking for the whole pod set), so in a ClusterQueue with flavored
    resource groups each pod set is given its flavors from them. A template the row keeps that cannot be read makes
    it wait there, saying why."""
    from engine.manifests import load_objects
    from tests.kube.test_kueue_jobs import _flavored_queue

    resumed = jobset("js", suspend=True)
    resumed["metadata"]["annotations"] = {"fairway.io/resumed": "2026-12-01T08:00:00Z"}
    result, invalid = load_objects([LOCAL_QUEUE, pytorchjob("pt", suspend=True), resumed], live=True)
    assert not invalid and not result.snapshot.admission.pod_group_waits
    assert result.snapshot.podgroups["team/pt"].min_resources.raw == {"cpu": 3000}
    assert result.snapshot.podgroups["team/js"].min_resources.raw == {"cpu": 4000}
    stored = result.kueue_jobs["team/pt"].stored()
    assert stored.pop("podSetTemplates") == [
        {"name": "master", "count": 1, "request": {"cpu": 1000}, "placement": {}},
        {"name": "worker", "count": 2, "request": {"cpu": 2000}, "placement": {}},
    ]
    assert stored == {"minCount": None, "suspended": True, "kind": "PyTorchJob", "podSets": ["master", "worker"]}
    assert result.kueue_jobs["team/js"].stored()["resumedAt"] == 1796112000.0
    spot = pytorchjob("pt", suspend=True)
    spot["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {"type": "spot"}
    result, _ = load_objects([*_flavored_queue(), spot], live=True)
    assert not result.snapshot.admission.pod_group_waits
    [(key, pods)] = result.snapshot.admission.templates
    assert [(t.task_role, t.request.raw, t.node_selector) for t in pods] == [
        ("master", {"cpu": 1000}, {}), ("worker", {"cpu": 2000}, {"type": "spot"})]  # fmt: skip
    # a resume wrote its flavors' labels into the templates: the pod sets' own placements are read back
    spot["metadata"]["annotations"] = {"fairway.io/original-placement": '{"master":{"nodeSelector":{},"tolerations":'
                                       '[]},"worker":{"nodeSelector":{},"tolerations":[]}}'}  # fmt: skip
    result, _ = load_objects([*_flavored_queue(), spot], live=True)
    assert [t.node_selector for t in dict(result.snapshot.admission.templates)[key]] == [{}, {}]
    spot["metadata"]["annotations"] = {"fairway.io/original-placement": '{"worker":{"nodeSelector":"x"}}'}
    result, _ = load_objects([*_flavored_queue(), spot], live=True)
    assert any("original-placement: metadata.annotations" in w and "the templates' placements are used" in w
               for w in result.warnings), result.warnings  # fmt: skip
    _, invalid = load_objects([LOCAL_QUEUE, jobset("train", suspend="yes")], live=True)
    assert [b.kind for b in invalid] == ["JobSet"]
    assert invalid[0].message.endswith("spec.suspend: 'yes' is not true or false")


# -- the rows the adapter writes, and real sessions ----------------------------------------------------------------


def test_a_jobset_short_of_its_pods_holds_nothing_then_runs_whole(db: Any) -> None:
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup

    cluster = _world()
    others = [node("n1"), LOCAL_QUEUE, jobset("train", 2)]
    report = mirror(cluster, [*others, jobset_pod("train", "driver", 0), jobset_pod("train", "workers", 0)],
                    timezone.now())  # fmt: skip
    assert not report.problems, report.problems
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.min_member, group.kueue_pod_group_count, group.kube_owner) == (
        3, 3, "JobSet train (jobset.x-k8s.io/v1alpha2)")  # fmt: skip
    assert {k: v for k, v in group.kueue_job.items() if k != "podSetTemplates"} == {
        "minCount": None, "suspended": False, "kind": "JobSet", "podSets": ["driver", "workers"]}  # fmt: skip
    assert sessions.run_scheduling_session(cluster).status == "ok"
    group.refresh_from_db()
    assert (group.phase, group.reason) == ("Pending", "NotEnoughPods"), (group.phase, group.message)
    assert "a JobSet is admitted once all its pods exist" in group.message
    assert not Pod.objects.filter(cluster=cluster, node__isnull=False).exists()
    pods = [jobset_pod("train", "driver", 0), *(jobset_pod("train", "workers", i) for i in range(2))]
    mirror(cluster, [*others, *pods], timezone.now())
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    bound = Pod.objects.filter(cluster=cluster, podgroup__name="train")
    assert sorted(bound.values_list("name", "task_name", "node__name")) == [
        ("train-driver-0-0", "driver", "n1"), ("train-workers-0-0", "workers", "n1"),
        ("train-workers-1-0", "workers", "n1")]  # fmt: skip


def test_the_pods_of_a_refused_jobset_wait_with_it_and_say_why(db: Any) -> None:
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod

    cluster = _world()
    bad = jobset("train", 1)
    bad["spec"]["replicatedJobs"][1]["replicas"] = -1
    report = mirror(cluster, [node("n1"), LOCAL_QUEUE, bad, jobset_pod("train", "driver", 0)], timezone.now())
    assert "spec.replicatedJobs[1].replicas" in report.problems[("JobSet", "team", "train")]
    assert report.problems[("Pod", "team", "train-driver-0-0")].startswith(
        "not applied: its JobSet team/train was refused (")  # fmt: skip
    assert not Pod.objects.filter(cluster=cluster).exists()


def test_live_a_cluster_holds_more_pods_and_podgroups_than_one_simulate_request_may() -> None:
    """The simulate bounds (``FAIRWAY_MAX_PODS``, ``FAIRWAY_MAX_PODGROUPS``) are for what a request makes; a live
    cluster's pods are its own: 20,050 single pods (each its own podgroup, above the 20,000 podgroups of a simulate
    snapshot) are all read live, while the same objects as a simulate input are refused past the bound."""
    from engine.manifests import load_objects

    pods = [pod("team", f"p{i}", scheduler="fairway") for i in range(20_050)]
    result, invalid = load_objects(pods, live=True)
    assert not invalid
    assert (len(result.snapshot.tasks), len(result.snapshot.podgroups)) == (20_050, 20_050)
    _, invalid = load_objects(pods)
    assert len(invalid) == 50 and "more than 20000 (FAIRWAY_MAX_PODGROUPS)" in invalid[0].message


def test_what_the_adapter_patches_on_a_suspended_workload() -> None:
    """A JobSet's suspend field is ``spec.suspend``, the others' ``spec.runPolicy.suspend``: resumed once admitted,
    suspended again when it waits again after the adapter resumed it; nothing otherwise."""
    from datetime import UTC, datetime

    from scheduling.kube.mirror_out import _suspension_patch

    now = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
    stamp = {"fairway.io/resumed": "2026-12-01T08:00:00Z"}
    js, pt = jobset("js", suspend=True), pytorchjob("pt", suspend=True)
    for listed in (js, pt):
        listed.pop("kind")  # (an informer's list items need not carry it: the kind is the adapter's)
    assert _suspension_patch(js, "JobSet", "Inqueue", now) == (
        "job_resumed", {"metadata": {"annotations": stamp}, "spec": {"suspend": False}})  # fmt: skip
    assert _suspension_patch(pt, "PyTorchJob", "Running", now) == (
        "job_resumed", {"metadata": {"annotations": stamp}, "spec": {"runPolicy": {"suspend": False}}})  # fmt: skip
    assert _suspension_patch(js, "JobSet", "Pending", now) is None  # not admitted: left suspended
    running = pytorchjob("pt", suspend=False)
    assert (
        _suspension_patch(running, "PyTorchJob", "Pending", now) is None
    )  # never resumed by the adapter: never suspended
    running["metadata"]["annotations"] = stamp
    assert _suspension_patch(running, "PyTorchJob", "Pending", now) == (
        "job_suspended", {"metadata": {"annotations": {"fairway.io/resumed": None}},
                          "spec": {"runPolicy": {"suspend": True}}})  # fmt: skip
    assert _suspension_patch(running, "PyTorchJob", "Inqueue", now) is None


def test_a_resume_writes_each_pod_sets_flavors_into_its_template() -> None:
    """Resumed with flavors per pod set, a workload's pod set templates get their own flavor's node labels and
    tolerations over their own placement, as Kueue's ``RunWithPodSetsInfo`` writes them: a PyTorchJob's replica specs
    (maps: a merge patch), a JobSet's replicated jobs (a list: sent whole, each template changed); the own placements
    are kept by pod set in ``fairway.io/original-placement``, which the next resume starts from."""
    import json

    from scheduling.kube.mirror_out import _pod_set_template_patch

    spot = ({"type": "spot"}, [{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}])
    demand = ({"type": "on-demand"}, [])
    pt = pytorchjob("pt", suspend=True)
    pt["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    change, own = _pod_set_template_patch(pt, "PyTorchJob", {"master": demand, "worker": spot})
    assert change == {
        "pytorchReplicaSpecs": {
            "Master": {"template": {"spec": {"nodeSelector": {"type": "on-demand"}, "tolerations": None}}},
            "Worker": {"template": {"spec": {"nodeSelector": {"zone": "a", "type": "spot"}, "tolerations": spot[1]}}},
        }
    }
    assert json.loads(own) == {"master": {"nodeSelector": {}, "tolerations": []},
                               "worker": {"nodeSelector": {"zone": "a"}, "tolerations": []}}  # fmt: skip
    # resumed again later, the templates holding the earlier flavors: from the kept placements, the old labels gone
    worker = pt["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["nodeSelector"], worker["tolerations"] = {"zone": "a", "type": "spot"}, spot[1]
    pt["metadata"]["annotations"] = {"fairway.io/original-placement": own}
    change, again = _pod_set_template_patch(pt, "PyTorchJob", {"worker": demand})
    assert change["pytorchReplicaSpecs"]["Worker"] == {"template": {"spec": {
        "nodeSelector": {"zone": "a", "type": "on-demand"}, "tolerations": None}}}  # fmt: skip
    assert again == own
    js = jobset("js", suspend=True)
    change, own = _pod_set_template_patch(js, "JobSet", {"workers": spot})
    driver, workers = change["replicatedJobs"]
    assert driver == js["spec"]["replicatedJobs"][0] | {"template": {"spec": {"parallelism": 1, "template": {
        "spec": {**_template("2")["spec"], "nodeSelector": {}}}}}}  # fmt: skip
    pod_spec = workers["template"]["spec"]["template"]["spec"]
    assert (pod_spec["nodeSelector"], pod_spec["tolerations"], pod_spec["containers"]) == (
        {"type": "spot"}, spot[1], _template()["spec"]["containers"])  # fmt: skip
    assert "nodeSelector" not in js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]  # (a copy)
    assert json.loads(own) == {"driver": {"nodeSelector": {}, "tolerations": []},
                               "workers": {"nodeSelector": {}, "tolerations": []}}  # fmt: skip
