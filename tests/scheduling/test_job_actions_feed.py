"""A job action that changes only ``PodGroup.suspended_at`` (the engine reads it: ``PodGroupInfo.suspended``) is
logged by the change feed, so the incremental mirror that feeds the sessions sees the hold and its lifting without a
full read (the podgroup UPDATE trigger, ``scheduling.feed.triggers``); and the job actions wait for a running session of the cluster."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from scheduling import job_actions
from scheduling.feed.mirror import ClusterMirror
from scheduling.locks import SCHEDULING_SESSION_LOCK, cluster_lock
from scheduling.models import PodGroup, RowChange
from tests.scheduling.conftest import World
from tests.scheduling.test_mirror import assert_same


@pytest.mark.django_db
def test_suspending_a_pending_job_is_logged_and_mirrored(world: World) -> None:
    pg = world.podgroups["ns-a/pg-a"]
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    assert mirror.snapshot(world.cluster).podgroups["ns-a/pg-a"].suspended is False
    # only the hold changes (the row is Pending already, its reason set to what the action writes)
    PodGroup.objects.filter(pk=pg.pk).update(reason=job_actions.SUSPENDED)
    mirror.refresh()
    before = RowChange.objects.filter(cluster_id=world.cluster.pk).count()
    PodGroup.objects.filter(pk=pg.pk).update(suspended_at=timezone.now())
    assert RowChange.objects.filter(cluster_id=world.cluster.pk).count() == before + 1
    done = mirror.refresh()
    assert not done.full and done.changes == 1
    assert mirror.snapshot(world.cluster).podgroups["ns-a/pg-a"].suspended is True
    assert_same(mirror, world)
    job_actions.resume(pg, None, timezone.now())
    assert not mirror.refresh().full
    assert mirror.snapshot(world.cluster).podgroups["ns-a/pg-a"].suspended is False
    assert_same(mirror, world)


@pytest.mark.django_db(transaction=True)
def test_an_action_waits_for_the_running_session(world: World) -> None:
    """A session holds the cluster's session lock for its whole run: a suspend sent meanwhile commits after it, so
    the session's bindings cannot land after the hold. (PostgreSQL: the advisory lock; SQLite runs one writer.)"""
    if connection.vendor != "postgresql":
        pytest.skip("advisory locks: PostgreSQL only")
    pg = world.podgroups["ns-a/pg-a"]
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def session() -> None:
        try:
            with cluster_lock(SCHEDULING_SESSION_LOCK, world.cluster.pk) as acquired:
                assert acquired
                holding.set()
                release.wait(10)
                order.append("session committed")
        finally:
            connections.close_all()

    worker = threading.Thread(target=session)
    worker.start()
    assert holding.wait(10)

    def act() -> None:
        try:
            job_actions.suspend(pg, None, timezone.now())
            order.append("suspended")
        finally:
            connections.close_all()

    actor = threading.Thread(target=act)
    actor.start()
    actor.join(0.3)  # not a timing assertion: only gives the action the chance to (wrongly) go first
    assert order == []
    release.set()
    worker.join(10)
    actor.join(10)
    assert order == ["session committed", "suspended"]
    with transaction.atomic():
        assert PodGroup.objects.get(pk=pg.pk).suspended_at is not None
