"""One leader per cluster: PostgreSQL advisory transaction locks, and the lease of the SQLite fallback."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection, connections
from django.utils import timezone

from scheduling import locks, tasks
from scheduling.feed import mirror
from scheduling.models import ClusterLease, Pod, SchedulingSession
from tests.scheduling.conftest import build_world


def _held_elsewhere(key: int, cluster_id: int) -> bool:
    """Whether another connection holds the lock (tried from a fresh connection in a thread)."""
    answer: dict[str, bool] = {}

    def probe() -> None:
        try:
            with locks.cluster_lock(key, cluster_id) as acquired:
                answer["free"] = acquired
        finally:
            connections.close_all()

    t = threading.Thread(target=probe)
    t.start()
    t.join(30)
    return not answer["free"]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_sessions_one_runs_the_other_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    world = build_world()
    entered, release = threading.Event(), threading.Event()
    real_load = mirror.ClusterMirror.read

    def slow_load(self: mirror.ClusterMirror, cluster: Any, **kwargs: Any) -> Any:
        entered.set()  # the first session holds the lock from here until release
        assert release.wait(30)
        return real_load(self, cluster, **kwargs)

    monkeypatch.setattr(mirror.ClusterMirror, "read", slow_load)
    results: dict[str, str] = {}

    def run(name: str) -> None:
        try:
            results[name] = tasks.run_session(world.cluster.pk)
        finally:
            connection.close()

    first = threading.Thread(target=run, args=("first",))
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=run, args=("second",))
    second.start()
    second.join(30)
    release.set()
    first.join(30)
    assert [results["first"], results["second"]] == ["ran", "skipped"]
    assert sorted(SchedulingSession.objects.values_list("status", flat=True)) == ["ok", "skipped"]
    assert Pod.objects.filter(status="Bound").count() == 3
    # the lock went with the first session's transaction: the next session runs
    monkeypatch.setattr(mirror.ClusterMirror, "read", real_load)
    assert tasks.run_session(world.cluster.pk) == "ran"


@pytest.mark.django_db(transaction=True)
def test_advisory_lock_lives_as_long_as_its_transaction() -> None:
    world = build_world()
    cid = world.cluster.pk
    with locks.cluster_lock(locks.SCHEDULING_SESSION_LOCK, cid) as acquired:
        assert acquired
        assert connection.in_atomic_block  # the work runs in the lock's transaction
        assert _held_elsewhere(locks.SCHEDULING_SESSION_LOCK, cid)
        assert not _held_elsewhere(locks.RECYCLE_LOCK, cid)  # another job of the same cluster
        assert not _held_elsewhere(locks.SCHEDULING_SESSION_LOCK, cid + 1000)  # another cluster
    assert not _held_elsewhere(locks.SCHEDULING_SESSION_LOCK, cid)
    with pytest.raises(RuntimeError), locks.cluster_lock(locks.SCHEDULING_SESSION_LOCK, cid) as acquired:
        assert acquired
        raise RuntimeError("the session crashed")
    assert not _held_elsewhere(locks.SCHEDULING_SESSION_LOCK, cid)  # released by the rollback


def test_the_lock_keys_are_distinct_named_int4_constants() -> None:
    keys = list(locks.LOCK_NAMES)
    assert len(set(keys)) == len(keys) == 6
    assert all(0 < k < 2**31 for k in keys)


@pytest.mark.django_db
def test_lease_fallback_compare_and_swap_and_expiry() -> None:
    world = build_world()
    cid, key = world.cluster.pk, locks.SCHEDULING_SESSION_LOCK
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert locks._take_lease(key, cid, "worker-1", 120, "default")
        assert not locks._take_lease(key, cid, "worker-2", 120, "default")
        assert locks._take_lease(locks.RECYCLE_LOCK, cid, "worker-2", 120, "default")  # another key
        locks._release_lease(key, cid, "worker-2", "default")  # not the owner: no effect
        assert not locks._take_lease(key, cid, "worker-2", 120, "default")
        clock.shift(timedelta(seconds=121))  # worker-1 died: its lease expires with the time limit
        assert locks._take_lease(key, cid, "worker-2", 120, "default")
        locks._release_lease(key, cid, "worker-2", "default")
        assert locks._take_lease(key, cid, "worker-3", 120, "default")
    lease = ClusterLease.objects.get(cluster_id=cid, key=key)
    assert lease.owner == "worker-3"


@pytest.mark.django_db
def test_lease_fallback_context_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    world = build_world()
    monkeypatch.setattr(locks, "uses_advisory_locks", lambda using="default": False)
    cid = world.cluster.pk
    with locks.cluster_lock(locks.AGENT_TICK_LOCK, cid, ttl=30) as first:
        assert first
        with locks.cluster_lock(locks.AGENT_TICK_LOCK, cid, ttl=30) as second:
            assert not second
    with locks.cluster_lock(locks.AGENT_TICK_LOCK, cid, ttl=30) as again:
        assert again  # released on exit
    with pytest.raises(ValueError), locks.cluster_lock(locks.AGENT_TICK_LOCK, cid, ttl=30):
        raise ValueError("crash")
    assert ClusterLease.objects.get(cluster_id=cid, key=locks.AGENT_TICK_LOCK).expires is None
