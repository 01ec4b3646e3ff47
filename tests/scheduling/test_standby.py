"""Taking a cluster over (``scheduling.feed.standby``, ``scheduling.feed.affinity``): a worker process keeps a copy of
the clusters whose sessions it sends on, and when it takes one over, its session reads only the rows changed since
that copy was last brought up to date and decides exactly what the engine decides on a full read; the holder of a
cluster is passed over at once when its process is gone (its beacon free), and after the affinity window when it
ran none of the cluster's sessions for that long."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from core.locks import WORKER_BEACON_LOCK
from engine.objects import Snapshot
from scheduling import sessions, store
from scheduling.feed import affinity, standby
from scheduling.feed import mirror as mirrors
from scheduling.feed.mirror import ClusterMirror, mirror_of
from scheduling.models import ClusterFeed, Pod
from scheduling.tasks import run_session
from tests.scheduling.conftest import World, build_world, rl
from tests.scheduling.test_mirror import Writer, assert_same


def _as_this_process(mirror: ClusterMirror) -> None:
    """Make ``mirror`` this process's copy of its cluster (two mirrors in one process stand for two workers)."""
    mirrors._mirrors[mirror.cluster_id] = mirror


@pytest.fixture
def no_mirrors() -> Iterator[None]:
    mirrors.forget()
    yield
    mirrors.forget()


class RowWriter(Writer):
    """``Writer``'s random writes, without the tree edit that renames what the rows refer to (a namespace's default
    queue: every copy reads that in full, standby or not)."""

    def step(self) -> str:
        ops = [m for m in dir(self) if m.startswith("op_") and m != "op_namespace_default_queue"]
        op = self.rng.choice(ops)
        getattr(self, op)()
        return op


def _more_pods(world: World, count: int) -> None:
    """Plain pods enough that a few changed ones are under a quarter of them (the engine then updates its state)."""
    ns = world.pods["ns-b/solo"].namespace
    Pod.objects.bulk_create(
        Pod(cluster=world.cluster, namespace=ns, name=f"extra-{i}", request=rl(cpu="1"), quota_group=ns.quota_group)
        for i in range(count)
    )


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_standby_that_lagged_takes_over_with_the_changes_and_decides_as_a_full_read(
    seed: int, no_mirrors: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker A runs the sessions while worker B keeps a standby copy, brought up to date only now and then; rows
    change through the real write paths (A's sessions' own writes among them). When B takes over, its session reads
    the changes since its last catch-up (no full read), opens the engine on its kept state, and decides what the
    engine decides on a fresh full read at the same moment; its copy equals a full read's."""
    from engine.session import run as engine_run

    real = engine_run.run_session
    seen: list[tuple[Any, Any]] = []

    def checked(snapshot: Snapshot, *, now: float, carry: Any = None, **kwargs: Any) -> Any:
        # a full read now, in the session's transaction, before the session streams its bindings on its connection
        fresh, _ = store.read_cluster(world.cluster)
        expected = real(fresh, now=now)
        result = real(snapshot, now=now, carry=carry, **kwargs)
        seen.append((result, expected))
        return result

    rng = random.Random(seed)
    world = build_world(f"standby-{seed}")
    _more_pods(world, 40)
    writer = RowWriter(world, rng)
    a, b = ClusterMirror(world.cluster.pk), ClusterMirror(world.cluster.pk)
    _as_this_process(a)
    assert sessions.run_scheduling_session(world.cluster).status == "ok"
    _as_this_process(b)
    assert standby.keep_warm(world.cluster).startswith("full read (no copy yet)")
    assert b.carry.last.startswith("full build")
    for round_no in range(8):
        for _ in range(rng.randint(1, 2)):
            with transaction.atomic():
                writer.step()
        _as_this_process(a)
        assert sessions.run_scheduling_session(world.cluster).status == "ok"
        if round_no % 3 == 0:  # the standby catches up on some of A's sessions only
            _as_this_process(b)
            assert not standby.keep_warm(world.cluster).startswith("full read")
    with transaction.atomic():  # and a change after A's last session, a new pod among it (the engine must run)
        writer.step()
        writer.op_create_pod()

    _as_this_process(b)  # A is gone: B takes the cluster's session over
    monkeypatch.setattr(engine_run, "run_session", checked)
    session = sessions.run_scheduling_session(world.cluster)
    assert session.status == "ok", session.error
    assert not b.last.full and b.last.reason == mirrors.TAKEOVER
    ((result, expected),) = seen
    assert result.bindings == expected.bindings and result.evictions == expected.evictions
    assert list(result.podgroups.items()) == list(expected.podgroups.items())
    assert (result.queue_values, result.namespace_values, result.quota_values) == (
        expected.queue_values,
        expected.namespace_values,
        expected.quota_values,
    )
    assert ClusterFeed.objects.get(cluster=world.cluster).last_mirror == b.generation
    # the next session reads back only the takeover's own writes, as any session after another does
    assert sessions.run_scheduling_session(world.cluster).status == "ok"
    assert not b.last.full and b.last.reason == ""
    assert_same(b, world)


@pytest.mark.django_db
def test_the_standby_opens_the_engine_state_so_a_takeover_updates_it(world: World, no_mirrors: None) -> None:
    """A copy kept warm holds the engine's state opened on it: the takeover's engine updates that state for the
    few pods that changed instead of building it over every pod."""
    _more_pods(world, 40)
    a, b = ClusterMirror(world.cluster.pk), ClusterMirror(world.cluster.pk)
    _as_this_process(a)
    sessions.run_scheduling_session(world.cluster)
    _as_this_process(b)
    standby.keep_warm(world.cluster)
    _as_this_process(a)
    sessions.run_scheduling_session(world.cluster)  # binds what fits: B's copy is behind by those writes
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(priority=7)
    _as_this_process(b)
    opened = b.carry.opened
    sessions.run_scheduling_session(world.cluster)
    assert b.carry.opened == opened + 1 and b.carry.last.startswith("update"), b.carry.last
    assert b.last.reason == mirrors.TAKEOVER and not b.last.full


@pytest.mark.django_db
def test_the_standby_opens_the_engine_state_again_only_when_something_changed(world: World, no_mirrors: None) -> None:
    """A catch-up that found nothing new leaves the engine's state as it was opened (no second open); a change, or
    a session of this process having opened it meanwhile, opens it again."""
    standby.keep_warm(world.cluster)
    mirror = mirror_of(world.cluster.pk)
    opened = mirror.carry.opened
    assert "engine state as it was" in standby.keep_warm(world.cluster)
    assert mirror.carry.opened == opened
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(priority=9)
    assert "engine state as it was" not in standby.keep_warm(world.cluster)
    assert mirror.carry.opened == opened + 1
    sessions.run_scheduling_session(world.cluster)  # this process runs a session: it opens the state itself
    standby.keep_warm(world.cluster)
    assert mirror.carry.opened >= opened + 3


@pytest.mark.django_db
def test_a_forwarded_session_keeps_the_standby_warm_unless_turned_off(
    world: World, no_mirrors: None, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """``run_session`` sends a session on to the holder, then brings this process's copy of the cluster up to date
    (``FAIRWAY_WARM_STANDBY``); with the setting off it keeps none."""
    sent: list[Any] = []
    monkeypatch.setattr(affinity, "warm_elsewhere", lambda cluster_id: "fairway.session.other")
    monkeypatch.setattr(run_session, "apply_async", lambda *args, **kwargs: sent.append((args, kwargs)))
    settings.FAIRWAY = {**settings.FAIRWAY, "WARM_STANDBY": False}
    assert run_session(world.cluster.pk) == "forwarded"
    assert len(sent) == 1 and sent[0][1]["queue"] == "fairway.session.other"
    assert mirror_of(world.cluster.pk).cluster_rev is None  # no copy
    settings.FAIRWAY = {**settings.FAIRWAY, "WARM_STANDBY": True}
    assert run_session(world.cluster.pk) == "forwarded"
    mirror = mirror_of(world.cluster.pk)
    assert mirror.cluster_rev is not None and mirror.carry.last.startswith("full build")
    assert_same(mirror, world)
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(priority=3)
    assert run_session(world.cluster.pk) == "forwarded"
    assert not mirror.last.full and mirror.last.changes == 1
    assert_same(mirror, world)


@pytest.mark.django_db
def test_a_session_skipped_while_another_process_runs_one_keeps_the_standby_warm(
    world: World, no_mirrors: None, beacons: list[Any]
) -> None:
    """A holder slower than the window gets no forwarded sessions: the process that received one finds the session
    lock taken (``"skipped"``) and brings its copy up to date all the same."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        pytest.skip("the session lock held from another connection is PostgreSQL's")
    from core.locks import SCHEDULING_SESSION_LOCK

    other = connections.create_connection(DEFAULT_DB_ALIAS)  # another process, in its session
    beacons.append(other)
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [SCHEDULING_SESSION_LOCK, world.cluster.pk])
    assert run_session(world.cluster.pk) == "skipped"
    mirror = mirror_of(world.cluster.pk)
    assert mirror.cluster_rev is not None and mirror.carry.last.startswith("full build")
    assert_same(mirror, world)


# -- who holds a cluster -----------------------------------------------------------------------------------------


@pytest.fixture
def beacons() -> Iterator[list[Any]]:
    """Connections holding beacons for the test; closed afterwards (with this process's own)."""
    held: list[Any] = []
    yield held
    for conn in held:
        conn.close()
    for conn in affinity._beacon.values():
        conn.close()
    affinity._beacon.clear()


def _hold_beacon_of(queue: str, held: list[Any]) -> Any:
    """Another process's beacon: the advisory lock taken on a connection of its own."""
    conn = connections.create_connection(DEFAULT_DB_ALIAS)
    with conn.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [WORKER_BEACON_LOCK, affinity._beacon_key(queue)])
        assert cursor.fetchone()[0]
    held.append(conn)
    return conn


def _freed(queue: str) -> bool:
    """Whether the beacon of ``queue`` is free, waiting for the server to end the backend of a connection just
    closed (it frees the lock as it exits, a moment after the client went)."""
    deadline = time.monotonic() + 30
    while affinity.alive(queue):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _held_by(world: World, queue: str, seconds_ago: float) -> None:
    ClusterFeed.objects.update_or_create(
        cluster=world.cluster,
        defaults={"last_queue": queue, "last_session_at": timezone.now() - timedelta(seconds=seconds_ago)},
    )


@pytest.mark.django_db
def test_the_holder_keeps_its_cluster_while_alive_and_within_the_window(
    world: World, beacons: list[Any], monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """``warm_elsewhere``: a holder whose beacon is held and whose last session is newer than the window
    (``FAIRWAY_AFFINITY_WINDOW_SECONDS``) keeps the cluster; past the window, or with its beacon free (the process
    gone), the process that received the session runs it."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        pytest.skip("the beacon is a PostgreSQL advisory lock")
    monkeypatch.setenv(affinity.ENV, "fairway.session.mine")
    other = "fairway.session.other"
    settings.FAIRWAY = {**settings.FAIRWAY, "AFFINITY_WINDOW_SECONDS": 2.0}
    conn = _hold_beacon_of(other, beacons)
    _held_by(world, other, 1.0)
    assert affinity.warm_elsewhere(world.cluster.pk) == other
    _held_by(world, other, 2.5)
    assert affinity.warm_elsewhere(world.cluster.pk) is None  # past the window
    settings.FAIRWAY = {**settings.FAIRWAY, "AFFINITY_WINDOW_SECONDS": 5.0}
    assert affinity.warm_elsewhere(world.cluster.pk) == other  # within the longer window
    conn.close()  # the holder's process dies: its connection closes, the server frees its beacon
    assert _freed(other)
    assert affinity.warm_elsewhere(world.cluster.pk) is None  # at once, well within the window
    _held_by(world, "fairway.session.mine", 0.0)
    assert affinity.warm_elsewhere(world.cluster.pk) is None  # its own


@pytest.mark.django_db
def test_a_process_holds_its_beacon_and_takes_it_again_when_its_connection_is_lost(
    beacons: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        pytest.skip("the beacon is a PostgreSQL advisory lock")
    assert not affinity.hold_beacon()  # no queue of its own: no beacon
    mine = "fairway.session.beacon-test"
    monkeypatch.setenv(affinity.ENV, mine)
    assert not affinity.alive(mine)
    assert affinity.hold_beacon() and affinity.alive(mine)
    assert affinity.hold_beacon()  # held: checked, not taken twice
    conn = affinity._beacon[mine]
    conn.close()  # its connection lost (a database restart)
    assert _freed(mine)
    assert affinity.hold_beacon() and affinity.alive(mine)
    assert affinity._beacon[mine] is not conn
    # a process of the same name holding it already: not taken, and said
    for held in affinity._beacon.values():
        held.close()
    affinity._beacon.clear()
    _hold_beacon_of(mine, beacons)
    assert not affinity.hold_beacon()
