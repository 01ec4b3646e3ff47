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


def _waiting(key: int, cluster_id: int) -> bool:
    """Whether a connection waits for lock ``key`` of ``cluster_id`` (PostgreSQL: an advisory lock not granted)."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2 "
            "AND classid = %s AND objid = %s)",
            [key, cluster_id],
        )
        return bool(cursor.fetchone()[0])


def _until(check: Any, what: str) -> None:
    for _ in range(600):
        if check():
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("wait", [0.0, 0.05])
def test_two_concurrent_sessions_one_runs_the_other_skips(
    monkeypatch: pytest.MonkeyPatch, settings: Any, wait: float
) -> None:
    """The first session holds the lock for longer than the second one's wait (0: none): the second is skipped, and
    its row says why."""
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_WAIT_SECONDS": wait}
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
    error = SchedulingSession.objects.get(status="skipped").error
    assert error == (
        "another worker held this cluster's lock for the whole wait (0.05 s)"
        if wait
        else "another worker holds this cluster's lock"
    )
    assert Pod.objects.filter(status="Bound").count() == 3
    # the lock went with the first session's transaction: the next session runs
    monkeypatch.setattr(mirror.ClusterMirror, "read", real_load)
    assert tasks.run_session(world.cluster.pk) == "ran"


@pytest.mark.django_db(transaction=True)
def test_a_session_waits_for_the_running_one_and_runs_after_it(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """Issue 31: the beat's next message, taken by another process while the previous session still runs, waits
    for the lock (``FAIRWAY_SESSION_LOCK_WAIT_SECONDS``) and runs once that session commits: nothing skipped."""
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_WAIT_SECONDS": 60.0}
    world = build_world()
    cid = world.cluster.pk
    entered, release = threading.Event(), threading.Event()
    real_load = mirror.ClusterMirror.read

    def slow_load(self: mirror.ClusterMirror, cluster: Any, **kwargs: Any) -> Any:
        entered.set()
        assert release.wait(30)
        return real_load(self, cluster, **kwargs)

    monkeypatch.setattr(mirror.ClusterMirror, "read", slow_load)
    results: dict[str, str] = {}

    def run(name: str) -> None:
        try:
            results[name] = tasks.run_session(cid)
        finally:
            connection.close()

    first = threading.Thread(target=run, args=("first",))
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=run, args=("second",))
    second.start()
    _until(lambda: _waiting(locks.SCHEDULING_SESSION_LOCK, cid), "the second session waiting for the lock")
    assert "second" not in results
    release.set()
    first.join(30)
    second.join(30)
    assert results == {"first": "ran", "second": "ran"}
    assert list(SchedulingSession.objects.order_by("id").values_list("status", flat=True)) == ["ok", "ok"]
    assert Pod.objects.filter(status="Bound").count() == 3
    # the wait's lock_timeout was the waiter's alone: the work after it waits for row locks as before
    with locks.cluster_lock(locks.SCHEDULING_SESSION_LOCK, cid, wait=5) as acquired:
        assert acquired
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('lock_timeout')")
            assert cursor.fetchone()[0] == "0"


@pytest.mark.django_db(transaction=True)
def test_a_holder_that_outlasted_a_wait_is_not_waited_for_again(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """Once a message has waited the whole bound and was skipped, the next ones skip at once while that holder still
    runs (their worker process goes on with its other tasks); once it has committed, a message waits again."""
    from scheduling import store

    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_WAIT_SECONDS": 60.0}
    world = build_world()
    cid = world.cluster.pk
    assert tasks.run_session(cid) == "ran"  # an earlier session, finished
    assert not tasks._outlasted_a_wait(cid)
    entered, release = threading.Event(), threading.Event()
    real_run = tasks.sessions.run_scheduling_session

    def slow_run(cluster: Any) -> Any:
        entered.set()
        assert release.wait(60)
        return real_run(cluster)

    monkeypatch.setattr(tasks.sessions, "run_scheduling_session", slow_run)
    results: dict[str, str] = {}

    def run() -> None:
        try:
            results["holder"] = tasks.run_session(cid)
        finally:
            connection.close()

    holder = threading.Thread(target=run)
    holder.start()
    assert entered.wait(30)
    store.record_skipped(cid, why="another worker held this cluster's lock for the whole wait (60 s)")
    assert tasks._outlasted_a_wait(cid)
    assert tasks.run_session(cid) == "skipped"  # at once: no wait of 60 s
    last = SchedulingSession.objects.filter(status="skipped").order_by("-id").first()
    assert last.error == "another worker still holds this cluster's lock, past an earlier session's wait"
    release.set()
    holder.join(60)
    assert results == {"holder": "ran"}
    assert not tasks._outlasted_a_wait(cid)  # the holder's row finished after the skipped ones: wait again


@pytest.mark.django_db(transaction=True)
def test_a_waiting_session_takes_over_when_the_holders_connection_dies(settings: Any) -> None:
    """A holder whose connection drops (a worker killed mid-session) frees the lock at once: the waiting session runs
    then, without waiting out its bound."""
    import psycopg

    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_WAIT_SECONDS": 60.0}
    world = build_world()
    cid = world.cluster.pk
    db = connection.settings_dict
    holder = psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        user=db["USER"],
        dbname=db["NAME"],
        password=db.get("PASSWORD") or None,
    )
    holder.execute("BEGIN")
    holder.execute("SELECT pg_advisory_xact_lock(%s, %s)", [locks.SCHEDULING_SESSION_LOCK, cid])
    results: dict[str, str] = {}

    def run() -> None:
        try:
            results["waiter"] = tasks.run_session(cid)
        finally:
            connection.close()

    waiter = threading.Thread(target=run)
    waiter.start()
    _until(lambda: _waiting(locks.SCHEDULING_SESSION_LOCK, cid), "the session waiting for the lock")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [holder.info.backend_pid])
    waiter.join(60)
    holder.close()
    assert results == {"waiter": "ran"}
    assert list(SchedulingSession.objects.values_list("status", flat=True)) == ["ok"]


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


@pytest.mark.django_db(transaction=True)
def test_lease_fallback_waits_for_its_holder(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """SQLite's lease is tried again every ``FAIRWAY_SESSION_LOCK_POLL_SECONDS`` while the wait lasts: a holder that
    lets go within the wait hands it over."""
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_POLL_SECONDS": 0.01}
    world = build_world()
    monkeypatch.setattr(locks, "uses_advisory_locks", lambda using="default": False)
    cid, key = world.cluster.pk, locks.SCHEDULING_SESSION_LOCK
    tried, taken = threading.Event(), threading.Event()
    real_pause = locks._pause
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        tried.set()
        real_pause(seconds)

    monkeypatch.setattr(locks, "_pause", pause)
    results: list[bool] = []

    def waiter() -> None:
        try:
            with locks.cluster_lock(key, cid, ttl=30, wait=60) as acquired:
                results.append(acquired)
                taken.set()
        finally:
            connections.close_all()

    with locks.cluster_lock(key, cid, ttl=30) as held:
        assert held
        thread = threading.Thread(target=waiter)
        thread.start()
        assert tried.wait(30)  # it found the lease held and waits
        assert not taken.is_set()
    thread.join(30)
    assert results == [True] and pauses and set(pauses) == {0.01}
    assert ClusterLease.objects.get(cluster_id=cid, key=key).expires is None  # the waiter released it in turn


@pytest.mark.django_db
def test_lease_fallback_gives_up_when_the_wait_has_passed(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_LOCK_POLL_SECONDS": 0.25}
    world = build_world()
    monkeypatch.setattr(locks, "uses_advisory_locks", lambda using="default": False)
    clock = [100.0]
    pauses: list[float] = []

    def pause(seconds: float) -> None:  # the clock moves by the pause, nothing sleeps
        pauses.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(locks, "_clock", lambda: clock[0])
    monkeypatch.setattr(locks, "_pause", pause)
    cid, key = world.cluster.pk, locks.SCHEDULING_SESSION_LOCK
    with locks.cluster_lock(key, cid, ttl=30) as held:
        assert held
        with locks.cluster_lock(key, cid, ttl=30, wait=0.6) as second:
            assert not second
    assert pauses == [0.25, 0.25, pytest.approx(0.1)]  # tried 4 times in 0.6 s, the last pause cut to the bound
    with locks.cluster_lock(key, cid, ttl=30, wait=0) as third:
        assert third
    assert len(pauses) == 3  # a free lease is taken at once
