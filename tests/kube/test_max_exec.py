"""Kueue's maximum execution time (``kueue.x-k8s.io/max-exec-time-seconds``; ``scheduling.max_exec``): a Kueue
workload (a Job, a pod group, a plain pod) admitted that long in all is suspended, as Kueue deactivates it, and stays
so until a person resumes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine
from django.utils import timezone

from tests.kube.conftest import node, pod
from tests.kube.test_kueue_jobs import LOCAL_QUEUE, _world, job, job_pod

LABEL = "kueue.x-k8s.io/max-exec-time-seconds"


def limited(name: str, pods: int, seconds: str) -> dict[str, Any]:
    out = job(name, pods)
    out["metadata"]["labels"][LABEL] = seconds
    return out


def test_the_time_admitted_adds_every_admission_since_the_last_resume() -> None:
    from scheduling.max_exec import admitted_seconds

    t0 = datetime(2026, 12, 1, 8, tzinfo=UTC)

    def at(seconds: int, phase: str, reason: str = "") -> tuple[datetime, str, str]:
        return t0 + timedelta(seconds=seconds), phase, reason

    history = [at(0, "Pending", "Unschedulable"), at(10, "Inqueue", "NotEnoughPods"), at(20, "Running"),
               at(50, "Pending", "Requeued"), at(100, "Running")]  # fmt: skip
    now = t0 + timedelta(seconds=130)
    assert admitted_seconds(history, "Running", now) == 40 + 30
    assert admitted_seconds(history[:4], "Pending", now) == 40  # waiting again: nothing runs on
    resumed = [*history[:4], at(60, "Pending", "Resumed"), at(100, "Running")]
    assert admitted_seconds(resumed, "Running", now) == 30  # a person's resume gives it a new budget
    assert admitted_seconds([], "Running", now) == 0


def test_the_label_is_read_with_kueues_rule() -> None:
    from engine.manifests import load_objects

    result, invalid = load_objects([LOCAL_QUEUE, limited("train", 2, "600")], live=True)
    assert not invalid and result.kueue_max_exec == {"team/train": 600}
    assert "maxExecSeconds" not in result.kueue_jobs["team/train"].stored()  # kept in a column of its own
    for bad in ("0", "-5", "ten", "2147483648"):
        _, invalid = load_objects([LOCAL_QUEUE, limited("train", 2, bad)], live=True)
        assert [i.kind for i in invalid] == ["Job"], bad
        assert f"metadata.labels[{LABEL}]: {bad!r} is not a whole number of seconds" in invalid[0].message


def test_a_job_admitted_longer_than_its_maximum_is_suspended_until_a_person_resumes_it(db: Any) -> None:
    from scheduling import job_actions, max_exec, sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Eviction, Pod, PodGroup, PodGroupReason

    cluster = _world()
    objects = [node("n1"), LOCAL_QUEUE, limited("train", 2, "60"), job("other", 1)]
    pods = [job_pod("train", "train-a"), job_pod("train", "train-b"), job_pod("other", "other-a")]
    assert not mirror(cluster, [*objects, *pods], timezone.now()).problems
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert group.phase == "Running" and group.kueue_max_exec_seconds == 60
    assert max_exec.enforce(cluster.pk, timezone.now()) == []  # within its minute
    # what its team reads: the time used and left (the job page, fairway job why, the why endpoint)
    now = timezone.now()
    PodGroupReason.objects.filter(podgroup__cluster=cluster).update(time=now - timedelta(seconds=45))
    assert max_exec.budget(group, now) == {
        "limit_seconds": 60, "admitted_seconds": 45.0, "left_seconds": 15.0, "text": "45 s of its 1 min admitted, 15 s left"
    }  # fmt: skip
    assert max_exec.budget(PodGroup.objects.get(cluster=cluster, name="other"), now) is None
    # a minute and more since it was admitted (its history moved back), the other job has no maximum
    PodGroupReason.objects.filter(podgroup__cluster=cluster).update(time=timezone.now() - timedelta(seconds=61))
    [done] = max_exec.enforce(cluster.pk, timezone.now())
    assert done.released == 2 and "MaximumExecutionTimeExceeded" in done.message, done.message
    group.refresh_from_db()
    assert group.suspended_at is not None and group.suspended_by.startswith("Fairway (MaximumExecutionTimeExceeded")
    said = max_exec.budget(group, timezone.now())
    assert said is not None and said["left_seconds"] == 0, said
    assert said["text"] == f"used up: suspended at {group.suspended_at:%H:%M:%S} UTC (MaximumExecutionTimeExceeded); " \
        "a resume gives it 1 min"  # fmt: skip
    assert set(Pod.objects.filter(podgroup=group).values_list("status", flat=True)) == {"Releasing"}
    assert Eviction.objects.filter(pod__podgroup=group, action="suspend").count() == 2
    assert PodGroup.objects.get(cluster=cluster, name="other").suspended_at is None
    assert max_exec.enforce(cluster.pk, timezone.now()) == []  # once
    # a person resumes it: a new budget, counted from the resume
    job_actions.resume(group, None, timezone.now())
    PodGroup.objects.filter(pk=group.pk).update(phase="Running")  # admitted again at once
    assert max_exec.overdue(cluster.pk, timezone.now()) == []


def group_pod(name: str, *, seconds: str | None = "60", group: str = "train", queue: str = "lq") -> dict[str, Any]:
    """A pod of 1 core in namespace ``team`` of Kueue pod group ``group`` of 2 pods in LocalQueue ``queue``, labelled
    with a maximum execution time of ``seconds`` (None: none)."""
    labels = {"kueue.x-k8s.io/queue-name": queue, "kueue.x-k8s.io/pod-group-name": group}
    if seconds is not None:
        labels[LABEL] = seconds
    out = pod("team", name, scheduler="fairway", labels=labels)
    out["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": "2"}
    return out


def plain_pod(name: str, seconds: str, queue: str = "lq") -> dict[str, Any]:
    """A plain pod Kueue manages (a workload of its own) in LocalQueue ``queue``, with a maximum execution time."""
    return pod("team", name, scheduler="fairway", labels={"kueue.x-k8s.io/queue-name": queue, LABEL: seconds})


def test_a_pod_groups_and_a_plain_pods_label_are_read_and_a_groups_pods_give_one() -> None:
    from engine.manifests import load_objects

    objects = [LOCAL_QUEUE, group_pod("a"), group_pod("b"), plain_pod("solo", "30"), pod("team", "free")]
    result, invalid = load_objects(objects, live=True)
    assert not invalid and result.kueue_max_exec == {"team/podgroup-solo": 30, "team/train": 60}
    _, invalid = load_objects([LOCAL_QUEUE, group_pod("a"), group_pod("b", seconds="90")], live=True)
    assert [(i.name, i.kind) for i in invalid] == [("a", "Pod")], invalid
    assert f"metadata.labels[{LABEL}]: '90' where pod" in invalid[0].message, invalid[0].message
    assert "the pods of a group give one maximum execution time" in invalid[0].message
    _, invalid = load_objects([LOCAL_QUEUE, group_pod("a", seconds=None), group_pod("b", seconds=None)], live=True)
    assert not invalid
    for bad in ("0", "ten"):
        _, invalid = load_objects([LOCAL_QUEUE, plain_pod("solo", bad)], live=True)
        assert [i.name for i in invalid] == ["solo"] and f"metadata.labels[{LABEL}]: {bad!r}" in invalid[0].message
    # a pod Kueue does not manage (no LocalQueue label): its label is not Kueue's to read
    free = pod("team", "free", scheduler="fairway", labels={LABEL: "ten"})
    result, invalid = load_objects([LOCAL_QUEUE, free], live=True)
    assert not invalid and result.kueue_max_exec == {}


def test_a_pod_group_and_a_plain_pod_admitted_longer_than_their_maximum_are_suspended(db: Any) -> None:
    from scheduling import max_exec, sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup, PodGroupReason

    cluster = _world()
    # a LocalQueue of the namespace's default queue: a plain pod there gets a row all the same, to keep its maximum
    default_lq = {**LOCAL_QUEUE, "metadata": {"name": "lq-default", "namespace": "team"},
                  "spec": {"clusterQueue": "default"}}  # fmt: skip
    objects = [
        node("n1"),
        LOCAL_QUEUE,
        default_lq,
        group_pod("a"),
        group_pod("b"),
        plain_pod("solo", "30", "lq-default"),
    ]
    assert not mirror(cluster, objects, timezone.now()).problems
    rows = dict(PodGroup.objects.filter(cluster=cluster).values_list("name", "kueue_max_exec_seconds"))
    assert rows == {"train": 60, "podgroup-solo": 30}, rows
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    phases = dict(PodGroup.objects.filter(cluster=cluster).values_list("name", "phase"))
    assert phases == {"train": "Running", "podgroup-solo": "Running"}, phases
    assert max_exec.enforce(cluster.pk, timezone.now()) == []
    # 45 s admitted: the plain pod's 30 s are used up, the group's minute is not
    PodGroupReason.objects.filter(podgroup__cluster=cluster).update(time=timezone.now() - timedelta(seconds=45))
    [done] = max_exec.enforce(cluster.pk, timezone.now())
    assert done.released == 1 and "maximum execution time of 30 s" in done.message, done.message
    solo = PodGroup.objects.get(cluster=cluster, name="podgroup-solo")
    assert solo.suspended_by.startswith("Fairway (MaximumExecutionTimeExceeded")
    assert Pod.objects.get(cluster=cluster, name="solo").status == "Releasing"  # the adapter deletes it
    PodGroupReason.objects.filter(podgroup__name="train").update(time=timezone.now() - timedelta(seconds=61))
    [done] = max_exec.enforce(cluster.pk, timezone.now())
    assert done.released == 2 and "of 60 s" in done.message, done.message
    assert set(Pod.objects.filter(podgroup__name="train").values_list("status", flat=True)) == {"Releasing"}
    # the label taken off the group's pods: no maximum any more
    again = [node("n1"), LOCAL_QUEUE, default_lq, group_pod("a", seconds=None), group_pod("b", seconds=None)]
    mirror(cluster, again, timezone.now())
    assert PodGroup.objects.get(cluster=cluster, name="train").kueue_max_exec_seconds is None


def test_the_time_left_is_on_the_job_page_in_job_why_and_in_the_api(db: Any, admin_client: Any, capsys: Any) -> None:
    from django.contrib.auth import get_user_model

    from controlplane.cli.job import print_why
    from planning.why import why_podgroup
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup, PodGroupReason

    cluster = _world()
    assert not mirror(cluster, [node("n1"), LOCAL_QUEUE, group_pod("a", seconds="3600"), group_pod("b", seconds="3600")],
                      timezone.now()).problems  # fmt: skip
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="train")
    now = timezone.now()
    PodGroupReason.objects.filter(podgroup=group).update(time=now - timedelta(minutes=12))
    text = "12 min of its 1 h admitted, 48 min left"
    with time_machine.travel(now, tick=False):  # the clock stopped: every reader says the same
        page = admin_client.get(f"/jobs/team/train/?cluster={cluster.name}").content.decode()
        why = why_podgroup(group, get_user_model().objects.get(username="admin"))
        api = admin_client.get(f"/api/v1/podgroups/{group.pk}/why/").json()
    assert f'<p data-testid="job-max-exec"><strong>Maximum execution time:</strong> {text}' in page
    assert why["max_exec"]["text"] == text and why["max_exec"]["limit_seconds"] == 3600
    assert api["max_exec"]["text"] == text
    print_why({"why": api})
    assert f"Maximum execution time: {text}" in capsys.readouterr().out
    other = PodGroup.objects.exclude(pk=group.pk).filter(kueue_max_exec_seconds=None).first()
    assert other is None or 'data-testid="job-max-exec"' not in admin_client.get(
        f"/jobs/{other.namespace.name}/{other.name}/?cluster={cluster.name}").content.decode()  # fmt: skip


def test_a_pod_group_admitted_but_not_placed_has_every_pod_released_as_kueue_stops_them(db: Any) -> None:
    from scheduling import max_exec
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Eviction, Pod, PodGroup, PodGroupReason

    cluster = _world()
    assert not mirror(cluster, [node("n1"), LOCAL_QUEUE, group_pod("a"), group_pod("b")], timezone.now()).problems
    # admitted a minute ago and not placed since (a session admits and places a group at once on a free node: its
    # history says so here)
    group = PodGroup.objects.get(cluster=cluster, name="train")
    PodGroup.objects.filter(pk=group.pk).update(phase="Inqueue")
    PodGroupReason.objects.create(podgroup=group, time=timezone.now() - timedelta(seconds=61), phase="Inqueue")
    assert not Pod.objects.filter(podgroup=group, node__isnull=False).exists()
    [done] = max_exec.enforce(cluster.pk, timezone.now())
    assert done.released == 2 and "2 pods released, placed or not" in done.message, done.message
    # every pod of it goes (the adapter deletes each through the API server), as Kueue stops a pod group's pods
    assert set(Pod.objects.filter(podgroup=group).values_list("status", flat=True)) == {"Releasing"}
    assert set(Eviction.objects.filter(pod__podgroup=group).values_list("action", "node")) == {("suspend", "")}
