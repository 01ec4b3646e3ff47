"""Kueue's ``batch/v1`` Jobs in a live cluster (``engine.manifests.kueuejobs``): the reader's live mode, the rows the
adapter writes, the live sessions (a Job short of its pods waits; partial admission sized by ``engine.partial`` and
kept to its count), and the adapter's patch of ``spec.parallelism`` through the emulator."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from django.utils import timezone

from tests.kube.conftest import node, pod

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ORIGINAL = "fairway.io/original-parallelism"
STAMP = "2026-12-01T08:00:00Z"  # the time a resume writes in fairway.io/resumed (``_job_patch``'s ``now`` below)


def job(name: str, parallelism: int = 3, *, ns: str = "team", uid: str = "", **spec: Any) -> dict[str, Any]:
    """A Job of LocalQueue ``lq`` whose template asks for 1 core (``spec``: more fields, ``annotations`` aside)."""
    annotations = spec.pop("annotations", {})
    template = {"spec": {"schedulerName": "fairway", "restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}  # fmt: skip
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}", "labels": {QUEUE_LABEL: "lq"},
                         "annotations": annotations},
            "spec": {"parallelism": parallelism, "template": template, **spec}}  # fmt: skip


def job_pod(owner: str, name: str, *, ns: str = "team", uid: str = "", node_name: str = "") -> dict[str, Any]:
    """A pod the Job controller made for ``owner``: its controller reference, the template's request, no queue
    label (the Job has it); ``node_name``: bound there."""
    out = pod(ns, name, scheduler="fairway", labels={"batch.kubernetes.io/job-name": owner})
    out["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": owner,
                                           "uid": uid or f"uid-{owner}", "controller": True}]  # fmt: skip
    if node_name:
        out["spec"]["nodeName"] = node_name
    return out


LOCAL_QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip


# -- the reader's live mode (no database) --------------------------------------------------------------------


def test_live_a_jobs_pods_are_one_podgroup_and_its_template_is_not_expanded() -> None:
    from engine.manifests import load_objects

    stranger = job_pod("train", "train-x", uid="uid-an-older-train")  # the label says train; its controller does not
    objects = [LOCAL_QUEUE, job("train", 4, completions=3), job_pod("train", "train-a"), job_pod("train", "train-b"),
               stranger]  # fmt: skip
    result, invalid = load_objects(objects, live=True)
    snap = result.snapshot
    assert not invalid
    assert {k: t.podgroup for k, t in snap.tasks.items()} == {
        "team/train-a": "team/train", "team/train-b": "team/train", "team/train-x": "team/podgroup-train-x"}  # fmt: skip
    group = snap.podgroups["team/train"]
    # Kueue's count: the parallelism, or the completions when fewer; the template's request that many times
    assert (group.queue, group.min_member, group.min_resources.raw) == ("ml", 3, {"cpu": 3000})
    assert result.kueue_jobs["team/train"].stored() == {"minCount": None, "suspended": False}
    assert dict(snap.admission.pod_group_waits)["team/train"].startswith("2 of its 3 pods exist")
    # simulate expands the template as before (its own pods aside)
    expanded, _ = load_objects(objects)
    assert len([t for t in expanded.snapshot.tasks.values() if t.podgroup == "team/train"]) == 3
    assert not expanded.kueue_jobs


def test_live_a_suspended_job_is_admissible_from_its_template() -> None:
    """Kueue's own sample Job is ``suspend: true``: it has no pods, and it does not wait; its podgroup's minimum and
    minimum resources are its template's, so a session can admit it and the adapter resume it."""
    from engine.manifests import load_objects

    result, invalid = load_objects([LOCAL_QUEUE, job("train", 2, suspend=True)], live=True)
    assert not invalid
    assert "team/train" not in dict(result.snapshot.admission.pod_group_waits)
    group = result.snapshot.podgroups["team/train"]
    assert (group.min_member, group.min_resources.raw, group.phase) == (2, {"cpu": 2000}, "Pending")
    assert not [t for t in result.snapshot.tasks.values() if t.podgroup == "team/train"]
    assert not any("suspend" in w for w in result.warnings)
    # where its pods may run is kept with it (nothing here), and its template's pod stands for its pods
    assert result.kueue_jobs["team/train"].stored() == {"minCount": None, "suspended": True, "template": {}}
    [(key, template)] = result.snapshot.admission.templates
    assert (key, template.podgroup, template.request.raw) == ("team/train", "team/train", {"cpu": 2000})


def _flavored_queue() -> list[dict[str, Any]]:
    """ClusterQueue ``ml`` whose cpu has quota in two flavors (on-demand, spot), and its LocalQueue ``lq``."""
    kueue = "kueue.x-k8s.io/v1beta2"
    flavors = [{"apiVersion": kueue, "kind": "ResourceFlavor", "metadata": {"name": name},
                "spec": {"nodeLabels": {"instance": name}}} for name in ("on-demand", "spot")]  # fmt: skip
    quota = [{"name": name, "resources": [{"name": "cpu", "nominalQuota": "4"}]} for name in ("on-demand", "spot")]
    queue = {"apiVersion": kueue, "kind": "ClusterQueue", "metadata": {"name": "ml"},
             "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": quota}]}}  # fmt: skip
    return [*flavors, queue, LOCAL_QUEUE]


def test_live_a_suspended_job_is_given_flavors_from_its_template() -> None:
    """In a ClusterQueue with flavored resource groups a suspended Job does not wait either: its template's pod (the
    whole Job's request, the template's node selector) is what Kueue's flavor assigner reads, so it is given the
    flavor its template allows; a row without its template (or a workload's without its pod sets') waits, saying so."""
    from engine.flavors import assign_flavors
    from engine.manifests import load_objects
    from engine.manifests.kueuejobs import SUSPENDED_FLAVORED, job_wait

    pinned = job("train", 2, suspend=True)
    pinned["spec"]["template"]["spec"]["nodeSelector"] = {"instance": "spot"}
    result, invalid = load_objects([*_flavored_queue(), pinned], live=True)
    assert not invalid and not any("suspend" in w for w in result.warnings)
    assert "team/train" not in dict(result.snapshot.admission.pod_group_waits)
    assert result.kueue_jobs["team/train"].stored()["template"] == {"nodeSelector": {"instance": "spot"}}
    flavored, chosen = assign_flavors(result.snapshot)
    assert chosen["team/train"].flavors == {"cpu": "spot"}
    assert flavored.podgroups["team/train"].min_resources.raw == {"cpu@spot": 2000}
    assert not flavored.tasks  # the template's pod is not one of the cluster's pods
    # unsuspended there, it waits for its pods as any Job does
    result, _ = load_objects([*_flavored_queue(), job("train", 2)], live=True)
    assert dict(result.snapshot.admission.pod_group_waits)["team/train"].startswith("0 of its 2 pods exist")
    assert not result.snapshot.admission.templates
    assert job_wait(3, [], True, "JobSet") is None  # no flavors: admitted from its templates and resumed
    assert "its pod sets are given their flavors once the adapter reads the JobSet again" in (
        job_wait(3, [], True, "JobSet", untemplated=True) or ""
    )
    assert job_wait(3, [], True) is None and job_wait(3, [], True, untemplated=True) == SUSPENDED_FLAVORED


def test_a_suspended_job_is_sized_on_its_template_for_a_partial_admission_then_given_its_flavor() -> None:
    """6 pods of 1 core, at least 2, in a ClusterQueue of 4 cores in each of two flavors: no flavor holds 6, so it is
    tried with 4 (the most that fit), its template then asks for 4 and is given on-demand; no pod is made for it.
    Not admitted by the session, it is whole again; admitted (Inqueue), its cut is kept."""
    from engine.flavors import assign_flavors
    from engine.manifests import load_objects
    from engine.partial import PartialAdmission
    from engine.session.decisions import PodGroupStatus

    annotations = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    result, invalid = load_objects(
        [*_flavored_queue(), job("train", 6, annotations=annotations, suspend=True)], live=True
    )
    assert not invalid
    partial = PartialAdmission(result.snapshot)
    cut = partial.before(result.snapshot)
    assert (cut.podgroups["team/train"].min_member, partial.cuts()) == (4, {"team/train": 4})
    assert partial.sized["team/train"].sentence() == "all 6 pods: does not fit; 4 pods (the most from 2 up): fits"
    assert dict(cut.admission.templates)["team/train"].request.raw == {"cpu": 4000} and not cut.tasks
    flavored, _ = assign_flavors(cut)
    assert flavored.podgroups["team/train"].min_resources.raw == {"cpu@on-demand": 4000}
    whole = partial.after_session(cut, [], {})
    assert whole.podgroups["team/train"].min_member == 6 and partial.cuts() == {}
    assert dict(whole.admission.templates)["team/train"].request.raw == {"cpu": 6000}
    again = PartialAdmission(result.snapshot)
    kept = again.after_session(
        again.before(result.snapshot), [], {"team/train": PodGroupStatus("team/train", "Inqueue")}
    )
    assert (kept.podgroups["team/train"].min_member, again.cuts()) == (4, {"team/train": 4})


def test_a_jobs_annotations_are_read_once_so_a_bad_value_is_warned_about_once() -> None:
    """Three readers ask about a live Job's annotations (its original parallelism, its minimum, its resume): one
    reading, so a value that is not a string gives one warning."""
    from engine.manifests import load_objects

    result, invalid = load_objects(
        [LOCAL_QUEUE, job("train", 2, annotations={"team.example/cost-center": 42})], live=True
    )
    assert not invalid
    assert len([w for w in result.warnings if "team.example/cost-center" in w]) == 1, result.warnings


def test_live_the_original_parallelism_counts_the_job_and_checks_its_minimum() -> None:
    """A Job admitted with 4 of its 6 pods has ``parallelism: 4`` and the annotation 6: it is still a Job of 6 pods
    with a minimum of 5 (5 < 6 is valid; read from its parallelism alone, 5 would be refused)."""
    from engine.manifests import load_objects

    annotations = {"kueue.x-k8s.io/job-min-parallelism": "5", ORIGINAL: "6"}
    result, invalid = load_objects([LOCAL_QUEUE, job("train", 4, annotations=annotations)], live=True)
    assert not invalid
    assert result.snapshot.podgroups["team/train"].min_member == 6
    assert dict(result.snapshot.admission.partial_admission) == {"team/train": 5}
    assert (result.kueue_jobs["team/train"].count, result.kueue_jobs["team/train"].parallelism) == (6, 4)
    bad = job("train", 4, annotations={ORIGINAL: "six"})
    _, invalid = load_objects([LOCAL_QUEUE, bad], live=True)
    assert [i.message for i in invalid] == [f"metadata.annotations.{ORIGINAL}: 'six' is not a whole number"]


# -- the rows and the live sessions ----------------------------------------------------------------------------


def _world(**queue: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1, **queue})
    return Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")


def test_a_job_short_of_its_pods_holds_nothing_until_its_last_pod_then_runs_whole(db: Any) -> None:
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup

    cluster = _world()
    others = [node("n1"), LOCAL_QUEUE, job("train", 3)]
    report = mirror(cluster, [*others, job_pod("train", "train-a"), job_pod("train", "train-b")], timezone.now())
    assert not report.problems, report.problems
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.queue.name, group.min_member, group.kueue_pod_group_count) == ("ml", 3, 3)
    assert (group.kube_owner, group.kueue_job) == ("Job train (batch/v1)", {"minCount": None, "suspended": False})
    assert sessions.run_scheduling_session(cluster).status == "ok"
    group.refresh_from_db()
    assert (group.phase, group.reason) == ("Pending", "NotEnoughPods"), (group.phase, group.message)
    assert "2 of its 3 pods exist" in group.message
    assert not Pod.objects.filter(cluster=cluster, node__isnull=False).exists()
    mirror(cluster, [*others, *(job_pod("train", f"train-{c}") for c in "abc")], timezone.now())
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    assert set(Pod.objects.filter(cluster=cluster).values_list("node__name", flat=True)) == {"n1"}
    # a pod the Job controller makes later (one failed and was replaced) joins the admitted job and is placed
    failed = job_pod("train", "train-a", node_name="n1")
    failed["status"]["phase"] = "Failed"
    pods = [failed, *(job_pod("train", f"train-{c}", node_name="n1") for c in "bc"), job_pod("train", "train-d")]
    mirror(cluster, [*others, *pods], timezone.now())
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    assert Pod.objects.get(cluster=cluster, name="train-d").node.name == "n1"


def test_the_pods_of_a_refused_job_wait_with_it_and_say_why(db: Any) -> None:
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import KubeObjectProblem, Pod

    cluster = _world()
    bad = job("train", 2, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"})  # not below its 2 pods
    report = mirror(cluster, [node("n1"), LOCAL_QUEUE, bad, job_pod("train", "train-a")], timezone.now())
    assert report.problems[("Job", "team", "train")].startswith("metadata.annotations.kueue.x-k8s.io/job-min-par")
    assert report.problems[("Pod", "team", "train-a")].startswith("not applied: its Job team/train was refused (")
    assert not Pod.objects.filter(cluster=cluster).exists()  # not a job of its own either
    assert KubeObjectProblem.objects.filter(cluster=cluster, kind="Pod", name="train-a").exists()


def _partial_world(db: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Kueue's sample-job-partial-admission shape, smaller: a Job of 6 pods of 1 core, at least 2, in queue ``ml``
    of 4 cores (as a ClusterQueue alone in its tree: its nominal quota is its capability), on a node of 8."""
    cluster = _world(deserved={"cpu": 4000}, capability={"cpu": 4000})  # a ClusterQueue of nominal quota 4
    annotations = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    return cluster, [node("n1"), LOCAL_QUEUE, job("sample", 6, annotations=annotations)]


def test_a_partial_admission_is_sized_as_simulate_sizes_it_and_kept_to_its_count(db: Any) -> None:
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup

    cluster, others = _partial_world(db)
    pods = [job_pod("sample", f"sample-{i}") for i in range(6)]
    mirror(cluster, [*others, *pods], timezone.now())
    group = PodGroup.objects.get(cluster=cluster, name="sample")
    assert group.kueue_job == {"minCount": 2, "suspended": False}
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    group.refresh_from_db()
    placed = sorted(Pod.objects.filter(cluster=cluster, node__isnull=False).values_list("name", flat=True))
    assert placed == [f"sample-{i}" for i in range(4)], placed  # the first 4: the most that fit
    assert group.kueue_admitted_count == 4
    from scheduling.serializers import PodGroupSerializer

    assert PodGroupSerializer(group).data["kueue_admitted_count"] == 4  # the API shows it, read-only
    assert PodGroupSerializer().fields["kueue_admitted_count"].read_only
    # the adapter lowered the parallelism (the annotation keeps 6); the controller has not deleted the others yet:
    # the sessions keep the job to its 4 pods meanwhile, though its queue now has room for them
    from engine.resources import parse_resource_list
    from quotas import services
    from quotas.models import Queue

    room = parse_resource_list({"cpu": "8"})
    services.save_queue(Queue.objects.get(name="ml"), {"name": "ml", "deserved": room, "capability": room})
    lowered = job("sample", 4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2", ORIGINAL: "6"})
    bound = [job_pod("sample", f"sample-{i}", node_name="n1") for i in range(4)]
    mirror(cluster, [*others[:2], lowered, *bound, *pods[4:]], timezone.now())
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    assert Pod.objects.filter(cluster=cluster, node__isnull=False).count() == 4
    assert PodGroup.objects.get(pk=group.pk).kueue_admitted_count == 4
    # the controller deleted them: nothing changes
    mirror(cluster, [*others[:2], lowered, *bound], timezone.now())
    sessions.run_scheduling_session(cluster)
    assert PodGroup.objects.get(pk=group.pk).kueue_admitted_count == 4
    # the annotation taken off: it may no longer be admitted in part, the count goes (the adapter gives the Job 6)
    del lowered["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"]
    mirror(cluster, [*others[:2], lowered, *bound], timezone.now())
    assert PodGroup.objects.get(pk=group.pk).kueue_admitted_count is None


def test_a_suspended_job_is_admitted_in_part_from_its_template_and_resumed_with_that_parallelism(db: Any) -> None:
    """Kueue's partial admission of a suspended Job (it has no pods): sized on its template (6 pods of 1 core, at
    least 2, in a queue of 4 cores: 4), admitted with 4, the count kept on its row for the adapter, which resumes
    it with that parallelism (the annotation keeps 6); the 4 pods the controller then makes are placed."""
    from datetime import datetime

    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.kube.mirror_out import _job_patch
    from scheduling.models import Pod, PodGroup

    cluster, others = _partial_world(db)
    annotations = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    suspended = job("sample", 6, annotations=annotations, suspend=True)
    mirror(cluster, [*others[:2], suspended], timezone.now())
    sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="sample")
    assert (group.phase, group.kueue_admitted_count) == ("Inqueue", 4), (group.phase, group.message)
    sessions.run_scheduling_session(cluster)  # not resumed yet: the count is kept
    group.refresh_from_db()
    assert (group.phase, group.kueue_admitted_count) == ("Inqueue", 4), (group.phase, group.message)
    what, patch, _ = _job_patch(suspended, "Inqueue", 4, datetime(2026, 12, 1, 8, tzinfo=UTC)) or ("", {}, 0)
    assert what == "job_resumed" and patch["spec"] == {"suspend": False, "parallelism": 4}, patch
    assert patch["metadata"]["annotations"][ORIGINAL] == "6"
    resumed = job("sample", 4, annotations={**annotations, ORIGINAL: "6", "fairway.io/resumed": STAMP})
    pods = [job_pod("sample", f"sample-{i}") for i in range(4)]
    mirror(cluster, [*others[:2], resumed, *pods], timezone.now())
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    assert Pod.objects.filter(cluster=cluster, node__isnull=False).count() == 4
    assert PodGroup.objects.get(pk=group.pk).kueue_admitted_count == 4


def test_a_job_admitted_in_part_that_waits_again_loses_its_count(db: Any) -> None:
    """Evicted (its pods gone, the job Pending again): the count is cleared, for the adapter to give the Job its
    parallelism back; the job is sized afresh once its pods exist again."""
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup

    cluster, others = _partial_world(db)
    mirror(cluster, [*others, *(job_pod("sample", f"sample-{i}") for i in range(6))], timezone.now())
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="sample")
    assert group.kueue_admitted_count == 4
    lowered = job("sample", 4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2", ORIGINAL: "6"})
    mirror(cluster, [*others[:2], lowered], timezone.now())  # every pod gone (evicted), none made yet
    PodGroup.objects.filter(pk=group.pk).update(phase="Pending")
    sessions.run_scheduling_session(cluster)
    group.refresh_from_db()
    assert group.kueue_admitted_count is None
    assert (group.phase, group.reason) == ("Pending", "NotEnoughPods"), (group.phase, group.reason)


# -- the adapter's patch, through the emulator ----------------------------------------------------------------


@pytest.fixture
def batch(kube: Any) -> Any:
    from kubernetes import client as k8s

    return k8s.BatchV1Api(kube)


def test_the_adapter_lowers_the_parallelism_once_the_pods_are_bound_and_gives_it_back(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any, batch: Any
) -> None:
    from kubernetes import client as k8s

    from quotas import services
    from scheduling import tasks
    from scheduling.models import PodGroup
    from tests.kube.conftest import wait_for

    services.save_queue(None, {"name": "ml", "weight": 1, "deserved": {"cpu": 4000}, "capability": {"cpu": 4000}})
    seed.namespace("team")
    seed.node(node("n1"))
    k8s.CustomObjectsApi(seed.core.api_client).create_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", "team", "localqueues", LOCAL_QUEUE)  # fmt: skip
    made = batch.create_namespaced_job("team", job("sample", 6, annotations={
        "kueue.x-k8s.io/job-min-parallelism": "2"}))  # fmt: skip
    for i in range(6):
        seed.pod(job_pod("sample", f"sample-{i}", uid=made.metadata.uid))
    unlabelled = job("plain", 2)
    unlabelled["metadata"]["labels"] = {}
    batch.create_namespaced_job("team", unlabelled)  # not Kueue's: not listed at all (the label selector)
    adapter = make_adapter(renew_seconds=0.0)
    jobs = next(i for i in adapter.informers if i.kind.plural == "jobs")
    wait_for(lambda: "team/sample" in jobs.cache, what="the Job listed")
    assert set(jobs.cache) == {"team/sample"}
    adapter.reconcile()
    for _ in range(3):
        tasks.run_session(kcluster.pk)
    assert PodGroup.objects.get(cluster=kcluster, name="sample").kueue_admitted_count == 4
    out = adapter.reconcile()  # the bindings go; the watch has not brought them back yet: no patch
    assert out is not None and out["sent"].get("bound") == 4 and "job_parallelism" not in out["sent"], out
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")
    wait_for(lambda: sum(bool(p["spec"].get("nodeName")) for p in pods.snapshot()) == 4, what="the bound pods")
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("job_parallelism") == 1, out
    patched = emulator.get("batch", "jobs", "team", "sample")
    assert patched["spec"]["parallelism"] == 4 and patched["metadata"]["annotations"][ORIGINAL] == "6"
    wait_for(lambda: jobs.cache["team/sample"]["spec"]["parallelism"] == 4, what="the patched Job")
    out = adapter.reconcile()
    assert out is not None and "job_parallelism" not in out["sent"], out  # once
    # evicted and waiting again: the count cleared (the sessions do it), the parallelism given back
    PodGroup.objects.filter(cluster=kcluster, name="sample").update(kueue_admitted_count=None)
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("job_parallelism") == 1, out
    restored = emulator.get("batch", "jobs", "team", "sample")
    assert restored["spec"]["parallelism"] == 6 and ORIGINAL not in (restored["metadata"].get("annotations") or {})


def test_the_adapter_resumes_a_suspended_job_once_admitted_and_suspends_it_again_when_it_waits(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any, batch: Any
) -> None:
    """Kueue's sample Job, ``suspend: true``: the session admits it from its template (Inqueue, nothing placed: it has
    no pods yet), the adapter resumes it (``spec.suspend: false``, ``fairway.io/resumed``) once; given back to
    Pending (evicted, or not placed in time) it is suspended again, as Kueue suspends an evicted Job. One that does not
    fit stays suspended."""
    from kubernetes import client as k8s

    from quotas import services
    from scheduling import tasks
    from scheduling.models import PodGroup
    from tests.kube.conftest import wait_for

    services.save_queue(None, {"name": "ml", "weight": 1, "deserved": {"cpu": 4000}, "capability": {"cpu": 4000}})
    seed.namespace("team")
    seed.node(node("n1"))
    k8s.CustomObjectsApi(seed.core.api_client).create_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", "team", "localqueues", LOCAL_QUEUE)  # fmt: skip
    batch.create_namespaced_job("team", job("sample", 3, suspend=True))
    batch.create_namespaced_job("team", job("large", 5, suspend=True))  # 5 cores: never within the queue's 4
    adapter = make_adapter(renew_seconds=0.0)
    jobs = next(i for i in adapter.informers if i.kind.plural == "jobs")
    wait_for(lambda: {"team/sample", "team/large"} <= set(jobs.cache), what="the Jobs listed")
    adapter.reconcile()
    tasks.run_session(kcluster.pk)
    phases = dict(PodGroup.objects.filter(cluster=kcluster).values_list("name", "phase"))
    assert (phases["sample"], phases["large"]) == ("Inqueue", "Pending"), phases
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("job_resumed") == 1 and out["problems"] == [], out
    resumed = emulator.get("batch", "jobs", "team", "sample")
    stamp = resumed["metadata"]["annotations"]["fairway.io/resumed"]
    assert resumed["spec"]["suspend"] is False and abs(datetime.fromisoformat(stamp).timestamp() - time.time()) < 600
    assert emulator.get("batch", "jobs", "team", "large")["spec"]["suspend"] is True
    wait_for(lambda: jobs.cache["team/sample"]["spec"].get("suspend") is False, what="the resumed Job")
    out = adapter.reconcile()
    assert out is not None and "job_resumed" not in out["sent"], out  # once
    PodGroup.objects.filter(cluster=kcluster, name="sample").update(phase="Pending")  # given back
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("job_suspended") == 1, out
    again = emulator.get("batch", "jobs", "team", "sample")
    assert again["spec"]["suspend"] is True and "fairway.io/resumed" not in (again["metadata"].get("annotations") or {})


def test_the_sessions_await_a_resumed_jobs_pods_for_a_while_and_no_longer(db: Any, settings: Any) -> None:
    """An admitted (Inqueue) Kueue Job without its pods is awaited, so the requeue rule does not give its reservation
    back while its controller makes them: while the adapter is still to resume it, and for
    ``FAIRWAY_POD_CREATION_SECONDS`` after the resume its annotation records or after its newest pod was made;
    not after that, not for a time ahead of the clock, and not once its pods are all there."""
    from scheduling import store
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup

    settings.FAIRWAY = {**settings.FAIRWAY, "POD_CREATION_SECONDS": 30.0}
    cluster = _world()
    now = time.time()

    def awaited(
        spec: dict[str, Any], annotations: dict[str, str], pods: int = 0, phase: str = "Inqueue", made: float = 10
    ) -> bool:
        objects = [node("n1"), LOCAL_QUEUE, job("train", 2, annotations=annotations, **spec)]
        made_pods = [job_pod("train", f"train-{i}") for i in range(pods)]
        mirror(cluster, [*objects, *made_pods], timezone.now())
        # stored ``made`` seconds ago (the row's time: when the adapter first saw the pod)
        Pod.objects.filter(cluster=cluster).update(created=datetime.fromtimestamp(now - made, UTC))
        PodGroup.objects.filter(cluster=cluster, name="train").update(phase=phase)
        snapshot = store.load_snapshot(Cluster.objects.get(pk=cluster.pk))
        return "team/train" in snapshot.admission.pods_awaited

    def stamp(seconds_ago: float) -> dict[str, str]:
        return {"fairway.io/resumed": datetime.fromtimestamp(now - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}

    assert awaited({"suspend": True}, {})  # admitted, the adapter still to resume it
    assert not awaited({"suspend": True}, {}, phase="Pending")  # not admitted: nothing awaited
    assert awaited({}, stamp(10))
    assert awaited({}, stamp(10), pods=1)  # one of its two pods made
    assert not awaited({}, stamp(10), pods=2)  # all there: the requeue rule counts again
    assert not awaited({}, stamp(40))  # past the setting
    # a large Job whose controller is still making its pods: the window runs from its newest pod
    assert awaited({}, stamp(40), pods=1, made=10)
    assert not awaited({}, stamp(80), pods=1, made=50)  # none made for longer than the setting
    assert not awaited({}, stamp(40), pods=1, made=-3600)  # a pod made "in the future" counts for nothing
    assert not awaited({}, stamp(-3600))  # ahead of the clock: counts for nothing
    assert not awaited({}, {})  # submitted unsuspended: never awaited


def test_a_resumed_annotation_that_is_not_a_time_is_left_out_with_a_warning() -> None:
    from engine.manifests import load_objects

    result, invalid = load_objects(
        [LOCAL_QUEUE, job("train", 2, annotations={"fairway.io/resumed": "soon"})], live=True
    )
    assert not invalid and result.kueue_jobs["team/train"].resumed_at is None
    assert any("fairway.io/resumed" in w for w in result.warnings)
    result, _ = load_objects([LOCAL_QUEUE, job("train", 2, annotations={"fairway.io/resumed": STAMP})], live=True)
    assert result.kueue_jobs["team/train"].stored()["resumedAt"] == datetime.fromisoformat(STAMP).timestamp()


@pytest.mark.parametrize(
    ("spec", "annotations", "phase", "count", "expected"),
    [
        # admitted while suspended: resumed, with the partial count in the same patch (no pod exists to lose)
        ({"suspend": True, "parallelism": 6}, {}, "Inqueue", None,
         ("job_resumed", {"metadata": {"annotations": {"fairway.io/resumed": STAMP}}, "spec": {"suspend": False}}, 0)),
        ({"suspend": True, "parallelism": 6}, {}, "Running", 4,
         ("job_resumed", {"metadata": {"annotations": {"fairway.io/resumed": STAMP, ORIGINAL: "6"}},
                          "spec": {"suspend": False, "parallelism": 4}}, 0)),
        ({"suspend": True}, {}, "Pending", None, None),  # not admitted: stays suspended
        ({"suspend": True}, {}, "Completed", None, None),
        # resumed by the adapter and waiting again: suspended again, its parallelism given back
        ({"parallelism": 4}, {"fairway.io/resumed": "true", ORIGINAL: "6"}, "Pending", None,
         ("job_suspended", {"metadata": {"annotations": {"fairway.io/resumed": None, ORIGINAL: None}},
                            "spec": {"suspend": True, "parallelism": 6}}, 0)),
        ({}, {"fairway.io/resumed": "true"}, "Running", None, None),  # resumed and running: nothing
        ({}, {}, "Pending", None, None),  # submitted unsuspended: never suspended by the adapter
        # a Job that runs unsuspended, admitted in part: lowered once 4 pods are seen bound; given back
        ({"parallelism": 6}, {}, "Running", 4,
         ("job_parallelism", {"metadata": {"annotations": {ORIGINAL: "6"}}, "spec": {"parallelism": 4}}, 4)),
        ({"parallelism": 4}, {ORIGINAL: "6"}, "Pending", None,
         ("job_parallelism", {"metadata": {"annotations": {ORIGINAL: None}}, "spec": {"parallelism": 6}}, 0)),
    ],
)  # fmt: skip
def test_what_the_adapter_patches_on_a_kueue_job(
    spec: dict[str, Any], annotations: dict[str, str], phase: str, count: int | None, expected: Any
) -> None:
    from scheduling.kube.mirror_out import _job_patch

    now = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
    assert _job_patch({"metadata": {"annotations": annotations}, "spec": spec}, phase, count, now) == expected


SPOT = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
MINE = {"key": "team", "operator": "Exists"}


def test_a_resume_writes_the_jobs_flavors_into_its_template_as_kueue_does() -> None:
    """A suspended Job given flavors is resumed with their node labels in its template's node selector and their
    tolerations after its own (Kueue's ``RunWithPodSetsInfo``), the template's own placement kept in
    ``fairway.io/original-placement``; resumed again later on another flavor, the new one replaces the earlier one
    (from the kept placement, not from the template the earlier resume changed); a Job without flavors gets its own
    placement back."""
    import json

    from scheduling.kube.mirror_out import _flavor_placement, _job_patch

    now = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
    own = {"nodeSelector": {"zone": "a"}, "tolerations": [MINE]}
    obj = {"metadata": {"annotations": {}}, "spec": {"suspend": True, "template": {"spec": dict(own)}}}
    specs = {"spot": ({"type": "spot"}, [SPOT]), "on-demand": ({"type": "on-demand"}, []), "plain": ({}, [])}
    spot = _flavor_placement({"cpu": "spot", "memory": "spot"}, specs)
    assert spot == ({"type": "spot"}, [SPOT]) and _flavor_placement({"cpu": "plain"}, specs) is None
    what, patch, _ = _job_patch(obj, "Inqueue", None, now, spot) or ("", {}, 0)
    assert what == "job_resumed"
    assert patch["spec"]["template"] == {"spec": {"nodeSelector": {"zone": "a", "type": "spot"},
                                                  "tolerations": [MINE, SPOT]}}  # fmt: skip
    kept = patch["metadata"]["annotations"]["fairway.io/original-placement"]
    assert json.loads(kept) == own
    # suspended again (evicted) and admitted on on-demand: the template still holds spot's
    changed = {"nodeSelector": {"zone": "a", "type": "spot"}, "tolerations": [MINE, SPOT]}
    again = {"metadata": {"annotations": {"fairway.io/original-placement": kept}},
             "spec": {"suspend": True, "template": {"spec": changed}}}  # fmt: skip
    _, patch, _ = _job_patch(again, "Inqueue", None, now, _flavor_placement({"cpu": "on-demand"}, specs)) or ("", {}, 0)
    assert patch["spec"]["template"] == {"spec": {"nodeSelector": {"zone": "a", "type": "on-demand"},
                                                  "tolerations": [MINE]}}  # fmt: skip
    _, patch, _ = _job_patch(again, "Inqueue", None, now) or ("", {}, 0)  # no flavor now: its own placement
    assert patch["spec"]["template"] == {"spec": {"nodeSelector": {"zone": "a", "type": None}, "tolerations": [MINE]}}
    assert "template" not in (_job_patch(obj, "Inqueue", None, now) or ("", {"spec": {}}, 0))[1]["spec"]


def test_a_suspended_jobs_kept_placement_is_its_templates() -> None:
    """The reader takes a suspended Job's placement from ``fairway.io/original-placement`` when a resume wrote its
    flavors into its template (so its next flavors are chosen on its own constraints); one that cannot be read is
    left out with a warning."""
    import json

    from engine.manifests import load_objects

    written = job("train", 2, suspend=True, annotations={
        "fairway.io/original-placement": json.dumps({"nodeSelector": {"zone": "a"}})})  # fmt: skip
    written["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a", "type": "spot"}
    result, invalid = load_objects([LOCAL_QUEUE, written], live=True)
    assert not invalid and result.kueue_jobs["team/train"].stored()["template"] == {"nodeSelector": {"zone": "a"}}
    written["metadata"]["annotations"]["fairway.io/original-placement"] = '{"tolerations": 3}'
    result, invalid = load_objects([LOCAL_QUEUE, written], live=True)
    assert result.kueue_jobs["team/train"].stored()["template"] == {"nodeSelector": {"zone": "a", "type": "spot"}}
    assert any("original-placement" in w for w in result.warnings)


def test_a_refused_patch_is_a_problem_and_a_job_deleted_meanwhile_is_not(db: Any) -> None:
    from kubernetes import client as k8s

    from scheduling.kube.mirror_in import mirror
    from scheduling.kube.mirror_out import Sender
    from scheduling.models import PodGroup

    cluster = _world()
    sample = job("sample", 6, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"})
    bound = [job_pod("sample", f"sample-{i}", node_name="n1") for i in range(4)]
    mirror(cluster, [node("n1"), LOCAL_QUEUE, sample, *bound], timezone.now())
    PodGroup.objects.filter(cluster=cluster, name="sample").update(kueue_admitted_count=4)
    caches = {"batch/jobs": [sample], "/pods": bound}

    class Refusing:
        def __init__(self, status: int) -> None:
            self.status = status

        def patch_namespaced_job(self, *args: Any, **kwargs: Any) -> Any:
            raise k8s.ApiException(status=self.status, reason="refused")

    for status, problems in ((404, 0), (403, 1)):
        sender = Sender(k8s.ApiClient(), cluster, caches, timezone.now())
        sender.batch = Refusing(status)
        sender.write_kueue_jobs()
        assert len(sender.problems) == problems and not sender.counts, (status, sender.problems)
    assert "setting the parallelism of Job team/sample" in sender.problems[0]


def test_live_a_suspended_jobs_template_gets_its_runtime_class_as_its_pods_will() -> None:
    """A suspended Job has no pods yet: its template is sized and placed as the API server will admit its pods, with
    its RuntimeClass's overhead and scheduling (Kueue adds the overhead too); a pod read live has them already."""
    from engine.manifests import load_objects
    from tests.unit.test_manifests import KATA

    sized = job("train", 2, suspend=True)
    sized["spec"]["template"]["spec"]["runtimeClassName"] = "kata"
    result, invalid = load_objects([LOCAL_QUEUE, KATA, sized], live=True)
    assert not invalid, invalid
    assert result.snapshot.podgroups["team/train"].min_resources.raw == {"cpu": 2500, "memory": 240 * 2**20}
    assert result.kueue_jobs["team/train"].stored()["template"]["nodeSelector"] == {"runtime": "kata"}
    made = job_pod("train", "train-a")
    made["spec"]["runtimeClassName"] = "kata"  # as stored: the API server gave it the overhead already
    live, _ = load_objects([LOCAL_QUEUE, KATA, made], live=True)
    assert live.snapshot.tasks["team/train-a"].request.raw == {"cpu": 1000, "memory": 2**30}
