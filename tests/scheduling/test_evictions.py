"""Evictions after the fact (``scheduling.evictions``): whose each eviction was, the record of a removed job (written
by the garbage collection, the API's delete and the backfill of older rows), and the retention window."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from engine.session.decisions import Binding, SessionResult
from engine.session.decisions import Eviction as EvictionDecision
from scheduling import agent, evictions, store
from scheduling.models import Eviction, Pod, PodGroup, RemovalCause, RemovedJob
from tests.scheduling.conftest import World

pytestmark = pytest.mark.django_db


@pytest.fixture
def evicted(world: World) -> World:
    """Everything bound and running; then a-1 (of ns-a/pg-a) reclaimed for ns-b/solo and solo (no podgroup)
    recycled, both written by the store as a session writes them."""
    t0 = timezone.now() - timedelta(minutes=5)
    store.apply_decisions(
        world.cluster,
        SessionResult(bindings=[Binding("ns-a/a-0", "n1"), Binding("ns-a/a-1", "n1"), Binding("ns-b/solo", "n2")]),
        t0,
    )
    Pod.objects.filter(cluster=world.cluster).update(status="Running")
    store.apply_decisions(
        world.cluster,
        SessionResult(
            evictions=[
                EvictionDecision("ns-a/a-1", "reclaim", "Reclaimed", "queue team-a over its deserved cpu", "ns-b/solo"),
                EvictionDecision("ns-b/solo", "recycle", "Recycled", "quota group qb uses 1 core above its runtime"),
            ]
        ),
        t0 + timedelta(minutes=1),
    )
    return world


def _finish(world: World, at: Any) -> None:
    """pg-a finished: its pods Succeeded (a-1 after its eviction: Failed), the podgroup Completed."""
    Pod.objects.filter(podgroup=world.podgroups["ns-a/pg-a"], name="a-0").update(status="Succeeded", finished=at)
    Pod.objects.filter(podgroup=world.podgroups["ns-a/pg-a"], name="a-1").update(
        status="Failed", reason="Evicted", finished=at - timedelta(seconds=30)
    )
    PodGroup.objects.filter(pk=world.podgroups["ns-a/pg-a"].pk).update(phase="Completed")


def test_each_eviction_keeps_whose_it_was(evicted: World) -> None:
    rows = {e.pod_uid: e for e in Eviction.objects.filter(cluster=evicted.cluster)}
    assert (rows["ns-a/a-1"].job, rows["ns-a/a-1"].queue, rows["ns-a/a-1"].quota_group) == ("pg-a", "team-a", "qa")
    # a pod without a podgroup has no job or queue; its quota group is its own
    assert (rows["ns-b/solo"].job, rows["ns-b/solo"].queue, rows["ns-b/solo"].quota_group) == ("", "", "qb")


def test_a_pod_without_a_quota_group_counts_against_its_namespaces(evicted: World) -> None:
    pod = evicted.pod("ns-a/a-0")
    Pod.objects.filter(pk=pod.pk).update(quota_group=None)
    row = Eviction.objects.create(
        cluster=evicted.cluster, pod=pod, pod_uid="ns-a/a-0", namespace="ns-a", action="preempt", created=timezone.now()
    )
    assert (row.job, row.queue, row.quota_group) == ("pg-a", "team-a", "qa")


def test_garbage_collection_records_the_removed_job_and_keeps_its_evictions(evicted: World) -> None:
    finished = timezone.now()
    _finish(evicted, finished)
    now = timezone.now() + timedelta(seconds=301)
    assert agent.collect_garbage(evicted.cluster, now, 300) == 1
    assert not PodGroup.objects.filter(name="pg-a").exists()
    record = RemovedJob.objects.get(cluster=evicted.cluster, namespace="ns-a", name="pg-a")
    assert record.removed_at == now and record.cause == RemovalCause.GARBAGE_COLLECTED
    assert record.reason == "it had finished, and finished jobs are removed 5 min after they finish"
    assert (record.queue, record.quota_groups, record.phase) == ("team-a", ["qa"], "Completed")
    assert record.finished == finished and record.submitted == evicted.podgroups["ns-a/pg-a"].created
    kept = Eviction.objects.get(pod_uid="ns-a/a-1")
    assert kept.pod_id is None and kept.removed_job_id == record.pk and kept.job == "pg-a"


def test_an_eviction_whose_pod_went_first_follows_its_job(evicted: World) -> None:
    """a-1 deleted on its own before the job: its eviction (pod now null) still goes with the job's record."""
    Pod.objects.filter(pk=evicted.pod("ns-a/a-1").pk).delete()
    now = timezone.now()
    evictions.remove_podgroups(PodGroup.objects.filter(name="pg-a"), now, RemovalCause.DELETED, "deleted in a test")
    record = RemovedJob.objects.get(name="pg-a")
    assert list(record.evictions.values_list("pod_uid", flat=True)) == ["ns-a/a-1"]
    # the solo pod's eviction is nobody's job: untouched
    assert Eviction.objects.get(pod_uid="ns-b/solo").removed_job_id is None


def test_retention_keeps_a_removed_jobs_evictions_for_the_window_then_deletes_them(
    evicted: World, settings: Any
) -> None:
    _finish(evicted, timezone.now())
    removed_at = timezone.now() + timedelta(seconds=301)
    agent.collect_garbage(evicted.cluster, removed_at, 300)
    old_live = Eviction.objects.create(  # a job still there: its evictions stay, however old
        cluster=evicted.cluster,
        pod=evicted.pod("ns-b/solo"),
        pod_uid="ns-b/solo",
        namespace="ns-b",
        action="preempt",
        created=removed_at - timedelta(days=30),
    )
    orphan = Eviction.objects.filter(pod_uid="ns-b/solo").exclude(pk=old_live.pk)
    orphan.update(pod=None, created=removed_at + timedelta(hours=1))  # its pod went alone, with no job to record
    assert settings.FAIRWAY["EVICTION_RETENTION_DAYS"] == 7
    within = evictions.expire(evicted.cluster, removed_at + timedelta(days=7) - timedelta(seconds=1))
    assert within == {"removed_jobs": 0, "evictions": 0}
    assert Eviction.objects.filter(pod_uid="ns-a/a-1").exists()
    past = evictions.expire(evicted.cluster, removed_at + timedelta(days=7, seconds=1))
    assert past == {"removed_jobs": 1, "evictions": 1}
    assert not RemovedJob.objects.exists() and not Eviction.objects.filter(pod_uid="ns-a/a-1").exists()
    # the orphan (pod gone, no record of a removal) counts from when it happened: 7 days after that, it goes
    assert Eviction.objects.filter(pod_uid="ns-b/solo", pod__isnull=True).exists()
    later = evictions.expire(evicted.cluster, removed_at + timedelta(days=7, hours=1, seconds=1))
    assert later == {"removed_jobs": 0, "evictions": 1}
    assert list(Eviction.objects.values_list("pk", flat=True)) == [old_live.pk]


def test_the_window_is_a_setting_and_the_compaction_applies_it(evicted: World, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "EVICTION_RETENTION_DAYS": 1}
    _finish(evicted, timezone.now())
    removed_at = timezone.now() + timedelta(seconds=301)
    agent.collect_garbage(evicted.cluster, removed_at, 300)
    kept = store.compact_records(evicted.cluster, removed_at + timedelta(hours=23))
    assert (kept["removed_jobs"], kept["evictions"]) == (0, 0)
    done = store.compact_records(evicted.cluster, removed_at + timedelta(days=1, seconds=1))
    assert (done["removed_jobs"], done["evictions"]) == (1, 1)
    assert not Eviction.objects.filter(pod_uid="ns-a/a-1").exists()
    assert Eviction.objects.filter(pod_uid="ns-b/solo").exists()  # its pod is still there


def test_deleting_a_job_through_the_api_records_who_and_when(evicted: World, admin_api: Any) -> None:
    pg = evicted.podgroups["ns-a/pg-a"]
    before = timezone.now()
    assert admin_api.delete(f"/api/v1/podgroups/{pg.pk}/").status_code == 204
    record = RemovedJob.objects.get(name="pg-a")
    assert record.cause == RemovalCause.DELETED and record.reason == "deleted through the API by admin"
    assert before <= record.removed_at <= timezone.now() and record.phase == "Pending"
    assert record.evictions.count() == 1
    assert not Pod.objects.filter(podgroup_id=pg.pk).exists()
