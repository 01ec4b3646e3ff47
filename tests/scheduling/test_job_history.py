"""The job history (issue 29): a garbage-collected job leaves a compact ``JobRecord``, kept
``FAIRWAY_JOB_HISTORY_DAYS``; ``GET /api/v1/trace/`` writes it (and the live jobs) in the trace format."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from engine.replay import read_trace
from scheduling import agent, store
from scheduling.models import JobRecord, Pod, PodGroup
from tests.scheduling.conftest import World
from tests.scheduling.test_evictions import _finish, evicted  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_garbage_collection_leaves_a_compact_history_row(evicted: World) -> None:  # noqa: F811
    started = timezone.now() - timedelta(minutes=4)
    Pod.objects.filter(podgroup=evicted.podgroups["ns-a/pg-a"]).update(started=started)
    finished = timezone.now()
    _finish(evicted, finished)
    PodGroup.objects.filter(pk=evicted.podgroups["ns-a/pg-a"].pk).update(user="ann")
    gpu = Pod.objects.filter(podgroup=evicted.podgroups["ns-a/pg-a"], started__isnull=False, finished__isnull=False)
    for pod in gpu:  # one GPU each: every run counts, the evicted one's too (its submitter held the GPU)
        Pod.objects.filter(pk=pod.pk).update(request={**pod.request.to_dict(), "nvidia.com/gpu": 1000})
    held = sum((p.finished - p.started).total_seconds() for p in gpu)
    agent.collect_garbage(evicted.cluster, timezone.now() + timedelta(seconds=301), 300)
    record = JobRecord.objects.get(cluster=evicted.cluster, namespace="ns-a", name="pg-a")
    assert record.user == "ann" and held > 0 and record.gpu_seconds == pytest.approx(held, abs=0.1)
    assert record.queue == "team-a" and record.quota_group == "qa"
    assert record.started == started and record.finished == finished
    assert record.runtime == pytest.approx((finished - started).total_seconds())
    assert record.evictions == 1
    assert [r[1] for r in record.roles] == [1]  # a-1 (Failed: evicted) is not counted; its replacement would be
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_column_size(t.*) FROM scheduling_jobrecord t WHERE id = %s", [record.pk])
            (size,) = cursor.fetchone()
        # docs/replay.md's figure (309 bytes a job on average over a soak's jobs: tests/integration/
        # test_replay_fidelity.py); this row is a little larger: its minResources (two pods' worth, with one pod
        # counted) are not the usual ones, so they are kept
        assert record.min_resources == {"cpu": 4000, "memory": 8 * 2**30}
        assert size <= 340


def test_retention_is_a_setting_and_the_compaction_prunes(evicted: World, settings: Any) -> None:  # noqa: F811
    settings.FAIRWAY = {**settings.FAIRWAY, "JOB_HISTORY_DAYS": 2}
    _finish(evicted, timezone.now())
    agent.collect_garbage(evicted.cluster, timezone.now() + timedelta(seconds=301), 300)
    submitted = JobRecord.objects.get(name="pg-a").submitted
    assert (
        store.compact_records(evicted.cluster, submitted + timedelta(days=2) - timedelta(seconds=1))["job_records"] == 0
    )
    assert store.compact_records(evicted.cluster, submitted + timedelta(days=2, seconds=1))["job_records"] == 1
    assert not JobRecord.objects.filter(name="pg-a").exists()


def test_the_trace_export_writes_removed_and_live_jobs_with_a_version_header(
    evicted: World,  # noqa: F811
    admin_api: Any,
) -> None:
    _finish(evicted, timezone.now())
    # who submitted them: kept on the history row, read from the live row (the per-user limits replay with them)
    PodGroup.objects.filter(pk=evicted.podgroups["ns-a/pg-a"].pk).update(user="ann", user_groups=["ml"])
    pg_a_row = PodGroup.objects.get(pk=evicted.podgroups["ns-a/pg-a"].pk)
    other = PodGroup.objects.create(
        cluster=evicted.cluster, namespace=pg_a_row.namespace, name="pg-b", queue=pg_a_row.queue, user="bob"
    )
    Pod.objects.create(
        cluster=evicted.cluster, namespace=pg_a_row.namespace, name="b-0", podgroup=other, request={"cpu": 1000}
    )
    agent.collect_garbage(evicted.cluster, timezone.now() + timedelta(seconds=301), 300)
    since = (timezone.now() - timedelta(days=1)).isoformat()
    resp = admin_api.get("/api/v1/trace/", {"since": since, "cluster": evicted.cluster.name, "period": 30})
    assert resp.status_code == 200 and resp["Content-Type"] == "application/x-ndjson"
    lines = b"".join(resp.streaming_content).decode().splitlines()
    header = json.loads(lines[0])
    # version 4: its jobs name their submitters (a fairway of version 3 would count them for their namespaces)
    assert header["kind"] == "FairwayTrace" and header["version"] == 4 and header["period"] == 30
    trace = read_trace(lines)
    jobs = {j.key: j for j in trace.jobs}
    assert "ns-a/pg-a" in jobs  # removed: from its history row
    live = [k for k, pg in ((f"{p.namespace.name}/{p.name}", p) for p in PodGroup.objects.all())]
    assert all(k in jobs for k in live)  # still there: read from the rows
    pg_a = jobs["ns-a/pg-a"]
    assert pg_a.queue == "team-a" and pg_a.quota_group == "qa" and pg_a.evictions == 1
    assert (pg_a.user, pg_a.user_groups) == ("ann", ("ml",))
    assert jobs[f"{other.namespace.name}/{other.name}"].user == "bob"
    assert trace.tree is not None and any(o["kind"] == "Node" for o in trace.tree)
    # the jobs' namespaces were created during the window (the change language cannot create one), so the tree is
    # as it was once they all existed, and the edits before that moment are in it, not repeated
    assert any(o["kind"] == "Namespace" and o["metadata"]["name"] == "ns-a" for o in trace.tree)
    assert any(o["kind"] == "Queue" and o["metadata"]["name"] == "team-a" for o in trace.tree)
    created = [e.change for e in trace.edits if e.change["op"] == "create" and e.change["kind"] == "queue"]
    assert not any(c["spec"]["name"] == "team-a" for c in created)


def test_a_tree_that_existed_at_the_windows_start_is_taken_then_and_later_edits_come_as_edits(
    world: World, admin_api: Any
) -> None:
    from quotas import services
    from quotas.models import Queue

    since = timezone.now()
    services.save_queue(Queue.objects.get(name="team-a"), {"weight": 7})
    PodGroup.objects.filter(namespace__name="ns-a").update(created=timezone.now())  # a job of the window
    resp = admin_api.get("/api/v1/trace/", {"since": since.isoformat(), "cluster": world.cluster.name})
    trace = read_trace(b"".join(resp.streaming_content).decode().splitlines())
    (team_a,) = [o for o in trace.tree if o["kind"] == "Queue" and o["metadata"]["name"] == "team-a"]
    assert team_a["spec"]["weight"] != 7  # as it was at the start
    updates = [e.change for e in trace.edits if e.change["op"] == "update" and e.change["kind"] == "queue"]
    assert any(c["spec"]["name"] == "team-a" and c["spec"]["weight"] == 7 for c in updates)


def test_the_trace_export_names_the_field_of_bad_input(admin_api: Any, world: World) -> None:
    resp = admin_api.get("/api/v1/trace/", {"since": "yesterday"})
    assert resp.status_code == 400 and "since" in json.dumps(resp.json())
    resp = admin_api.get("/api/v1/trace/", {"since": timezone.now().isoformat(), "cluster": "nope"})
    assert resp.status_code == 400 and "cluster 'nope' does not exist" in resp.json()["errors"][0]["detail"]
