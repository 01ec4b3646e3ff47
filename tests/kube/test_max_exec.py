"""Kueue's maximum execution time (``kueue.x-k8s.io/max-exec-time-seconds``; ``scheduling.max_exec``): a Kueue
workload admitted that long in all is suspended, as Kueue deactivates it, and stays so until a person resumes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from tests.kube.conftest import node
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
    assert not invalid and result.kueue_jobs["team/train"].stored()["maxExecSeconds"] == 600
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
    assert group.phase == "Running" and group.kueue_job["maxExecSeconds"] == 60
    assert max_exec.enforce(cluster.pk, timezone.now()) == []  # within its minute
    # a minute and more since it was admitted (its history moved back), the other job has no maximum
    PodGroupReason.objects.filter(podgroup__cluster=cluster).update(time=timezone.now() - timedelta(seconds=61))
    [done] = max_exec.enforce(cluster.pk, timezone.now())
    assert done.released == 2 and "MaximumExecutionTimeExceeded" in done.message, done.message
    group.refresh_from_db()
    assert group.suspended_at is not None and group.suspended_by.startswith("Fairway (MaximumExecutionTimeExceeded")
    assert set(Pod.objects.filter(podgroup=group).values_list("status", flat=True)) == {"Releasing"}
    assert Eviction.objects.filter(pod__podgroup=group, action="suspend").count() == 2
    assert PodGroup.objects.get(cluster=cluster, name="other").suspended_at is None
    assert max_exec.enforce(cluster.pk, timezone.now()) == []  # once
    # a person resumes it: a new budget, counted from the resume
    job_actions.resume(group, None, timezone.now())
    PodGroup.objects.filter(pk=group.pk).update(phase="Running")  # admitted again at once
    assert max_exec.overdue(cluster.pk, timezone.now()) == []
