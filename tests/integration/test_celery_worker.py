"""A real Celery worker on Redis against the test database: a session submitted with ``apply_async`` binds pods,
and a worker killed (SIGKILL) in the middle of a session leaves nothing half done: its transaction rolls back, its
advisory lock goes with its connection, and the next session binds every pod exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from scheduling import locks
from scheduling.models import Pod, SchedulingSession
from scheduling.tasks import run_session
from tests.scheduling.conftest import build_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BASE_DIR = Path(settings.BASE_DIR)
CELERY = BASE_DIR / ".venv" / "bin" / "celery"


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("FAIRWAY_TEST_REDIS_URL", "")
    if not url:
        pytest.skip("FAIRWAY_TEST_REDIS_URL is not set (make test sets it)")
    import redis

    redis.Redis.from_url(url).ping()
    return url


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def on_redis(redis_url: str) -> Iterator[Any]:
    """Point this process's Celery app at Redis (as the worker's settings do), and back afterwards."""
    from controlplane.celery import app

    keys = ("broker_url", "result_backend", "broker_transport_options")
    saved = {k: app.conf[k] for k in keys}

    def reset() -> None:
        from kombu import pools

        pools.reset()  # kombu keeps its connection pools per connection, globally
        app._pool = None
        amqp = app.__dict__.get("amqp")
        if amqp is not None:
            amqp._producer_pool = None
        app._backend_cache = None
        app._local.__dict__.pop("backend", None)

    app.conf.update(
        broker_url=redis_url,
        result_backend=redis_url,
        broker_transport_options={"visibility_timeout": 3600, "global_keyprefix": "fairway:"},
    )
    reset()
    yield app
    app.conf.update(saved)
    reset()


@pytest.fixture
def workers(redis_url: str, tmp_path: Path) -> Iterator[SimpleNamespace]:
    """``workers.start(pause_marker=None)`` starts a worker on a queue of this test only."""
    queue = f"fairway-test-{uuid.uuid4().hex[:10]}"
    started: list[subprocess.Popen[bytes]] = []

    def start(
        pause_marker: Path | None = None, *, pool: tuple[str, ...] = ("--pool", "solo"), **extra: str
    ) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            **extra,
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": redis_url,
            "CELERY_RESULT_BACKEND": redis_url,
            "DJANGO_SETTINGS_MODULE": "controlplane.settings",
            "FAIRWAY_TEST_PAUSE_MARKER": str(pause_marker or ""),
        }
        log = (tmp_path / f"worker-{len(started)}.log").open("wb")
        proc = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "controlplane",
                "worker",
                *pool,
                "-Q",
                queue,
                "--include",
                "tests.integration.worker_hooks",
                "-n",
                f"{queue}-{len(started)}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(proc)
        return proc

    yield SimpleNamespace(start=start, queue=queue, logs=tmp_path)
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    _forget_queue(redis_url, queue)


def _forget_queue(redis_url: str, queue: str) -> None:
    """Remove this test's queue from Redis, with the message a killed worker left unacknowledged."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"*{queue}*"):
        client.delete(key)
    for tag, payload in client.hgetall("fairway:unacked").items():
        if queue.encode() in payload:
            client.hdel("fairway:unacked", tag)
            client.zrem("fairway:unacked_index", tag)


def _wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _lock_is_free(cluster_id: int) -> bool:
    with connection.cursor() as cursor:  # autocommit: a free xact lock is taken and released at once
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [locks.SCHEDULING_SESSION_LOCK, cluster_id])
        return bool(cursor.fetchone()[0])


def _logs(workers: SimpleNamespace) -> str:
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(workers.logs.glob("worker-*.log")))


def test_a_real_worker_runs_a_session(on_redis: Any, workers: SimpleNamespace) -> None:
    world = build_world()
    workers.start()
    result = run_session.apply_async(args=[world.cluster.pk], queue=workers.queue)
    assert result.get(timeout=120) == "ran", _logs(workers)
    assert set(Pod.objects.filter(cluster=world.cluster).values_list("status", flat=True)) == {"Bound"}
    session = SchedulingSession.objects.get(cluster=world.cluster)
    assert (session.status, session.bound) == ("ok", 3)


def test_a_worker_killed_mid_session_loses_nothing(on_redis: Any, workers: SimpleNamespace, tmp_path: Path) -> None:
    world = build_world(nodes=2, node_cpu="4")  # 8 cpu for 5 cpu of pods: every pod fits
    marker = tmp_path / "paused"
    doomed = workers.start(pause_marker=marker)
    run_session.apply_async(args=[world.cluster.pk], queue=workers.queue)
    _wait_for(marker.exists, 120, "the session to pause after writing its decisions\n" + _logs(workers))
    # Mid-session: the decisions are written but not committed, and the cluster is locked.
    assert set(Pod.objects.filter(cluster=world.cluster).values_list("status", flat=True)) == {"Pending"}
    assert not _lock_is_free(world.cluster.pk)
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.wait(30)
    # The server drops the dead connection: its transaction rolls back and its lock goes with it.
    _wait_for(lambda: _lock_is_free(world.cluster.pk), 60, "the advisory lock to be released")
    assert set(Pod.objects.filter(cluster=world.cluster).values_list("status", flat=True)) == {"Pending"}
    assert not SchedulingSession.objects.filter(cluster=world.cluster).exists()
    # The next session carries on.
    workers.start()
    result = run_session.apply_async(args=[world.cluster.pk], queue=workers.queue)
    assert result.get(timeout=120) == "ran", _logs(workers)
    pods = list(Pod.objects.filter(cluster=world.cluster).select_related("node"))
    assert len(pods) == 3 and {p.status for p in pods} == {"Bound"}  # none lost
    session = SchedulingSession.objects.get(cluster=world.cluster)
    assert session.bound == 3 and sorted(b[0] for b in session.bindings) == sorted(
        f"{p.namespace.name}/{p.name}" for p in pods
    )  # each bound once
    for node in world.nodes.values():
        used = sum(p.request["cpu"] for p in pods if p.node_id == node.pk)
        assert used <= node.allocatable["cpu"]
    assert run_session.apply_async(args=[world.cluster.pk], queue=workers.queue).get(timeout=120) == "ran"
    assert SchedulingSession.objects.filter(cluster=world.cluster).order_by("-id").first().bound == 0


def test_a_prefork_worker_serves_the_metrics_of_its_children(on_redis: Any, workers: SimpleNamespace) -> None:
    """``FAIRWAY_WORKER_METRICS_PORT``: the worker's main process serves what its pool's child processes counted."""
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    from tests.support.ports import free_port

    world = build_world()
    port = free_port()
    workers.start(pool=("--pool", "prefork", "--concurrency", "2"), FAIRWAY_WORKER_METRICS_PORT=str(port))
    for _ in range(3):
        assert run_session.apply_async(args=[world.cluster.pk], queue=workers.queue).get(timeout=120) == "ran"

    def scrape() -> dict[str, float]:
        try:
            text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        except requests.ConnectionError:
            return {}
        return {
            f"{s.name}{sorted(s.labels.items())}": s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    task = "scheduling.tasks.run_session"
    ran = f"fairway_worker_tasks_total{sorted({'task': task, 'outcome': 'ran'}.items())}"
    _wait_for(lambda: scrape().get(ran) == 3.0, 60, f"three sessions counted on :{port}\n" + _logs(workers))
    count = f"fairway_worker_task_duration_seconds_count{sorted({'task': task}.items())}"
    assert scrape()[count] == 3.0


def test_a_session_goes_to_the_worker_that_holds_the_cluster(on_redis: Any, workers: SimpleNamespace) -> None:
    """``scheduling.feed.affinity``: each solo worker also consumes a queue of its own; a session that reaches another
    worker than the one that ran the cluster's last session is sent on to that one, which runs it on its current
    copy; once the holder is gone for the window (``FAIRWAY_AFFINITY_WINDOW_SECONDS``), the worker that receives the session runs it itself."""
    import socket

    from scheduling.feed import affinity
    from scheduling.models import ClusterFeed

    world = build_world()
    pk = world.cluster.pk
    # A window far longer than a worker takes to start on a busy machine; its passing is simulated below.
    window = {"FAIRWAY_AFFINITY_WINDOW_SECONDS": "600"}
    holder = workers.start(**window)
    assert run_session.apply_async(args=[pk], queue=workers.queue).get(timeout=120) == "ran", _logs(workers)
    own = [affinity.queue_of(f"{workers.queue}-{n}@{socket.gethostname()}") for n in (0, 1)]
    assert ClusterFeed.objects.get(cluster_id=pk).last_queue == own[0]

    workers.start(**window)
    # the second worker receives the cluster's session (on its own queue, to choose it): it sends it on
    assert run_session.apply_async(args=[pk], queue=own[1]).get(timeout=120) == "forwarded", _logs(workers)
    _wait_for(lambda: SchedulingSession.objects.filter(cluster_id=pk).count() == 2, 60, "the forwarded session")
    assert ClusterFeed.objects.get(cluster_id=pk).last_queue == own[0]
    logs = [(workers.logs / f"worker-{n}.log").read_text(errors="replace") for n in (0, 1)]
    # one session read in full, the holder's first; the second worker read its standby copy when it sent one on
    assert logs[0].count("full read at") == 1 and "full read at" not in logs[1], _logs(workers)
    assert "standby copy: full read" in logs[1], _logs(workers)

    # the holder stops: once the window has passed without its sessions (its last one dated back past the window,
    # as the clock would after 600 s), the second worker runs the session itself
    os.killpg(holder.pid, signal.SIGTERM)
    holder.wait(30)
    ClusterFeed.objects.filter(cluster_id=pk).update(last_session_at=timezone.now() - timedelta(seconds=601))
    assert run_session.apply_async(args=[pk], queue=own[1]).get(timeout=120) == "ran", _logs(workers)
    assert ClusterFeed.objects.get(cluster_id=pk).last_queue == own[1]
    assert "full read at" not in (workers.logs / "worker-1.log").read_text(errors="replace")  # from its standby


def test_a_killed_holders_cluster_is_taken_over_at_once_from_the_standby_copy(
    on_redis: Any, workers: SimpleNamespace
) -> None:
    """The holder of a cluster is killed (SIGKILL): its beacon goes with its connection, so the other worker runs
    the cluster's next session itself although the affinity window (600 s here) has not passed, and from the
    standby copy it kept while sending sessions on, reading only what changed (no full read)."""
    import socket

    from scheduling.feed import affinity
    from scheduling.models import ClusterFeed

    world = build_world()
    pk = world.cluster.pk
    window = {"FAIRWAY_AFFINITY_WINDOW_SECONDS": "600"}
    holder = workers.start(**window)
    assert run_session.apply_async(args=[pk], queue=workers.queue).get(timeout=120) == "ran", _logs(workers)
    own = [affinity.queue_of(f"{workers.queue}-{n}@{socket.gethostname()}") for n in (0, 1)]
    assert ClusterFeed.objects.get(cluster_id=pk).last_queue == own[0]
    workers.start(**window)
    assert run_session.apply_async(args=[pk], queue=own[1]).get(timeout=120) == "forwarded", _logs(workers)
    assert "standby copy: full read" in (workers.logs / "worker-1.log").read_text(errors="replace")
    # a change the standby has not seen, then the holder dies
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(priority=5)
    os.killpg(holder.pid, signal.SIGKILL)
    holder.wait(30)
    _wait_for(lambda: not affinity.alive(own[0]), 60, "the killed worker's beacon freed")
    assert run_session.apply_async(args=[pk], queue=own[1]).get(timeout=120) == "ran", _logs(workers)
    feed = ClusterFeed.objects.get(cluster_id=pk)
    assert feed.last_queue == own[1] and feed.last_session_at > timezone.now() - timedelta(seconds=600)
    log = (workers.logs / "worker-1.log").read_text(errors="replace")
    assert "full read at" not in log, _logs(workers)
    session = SchedulingSession.objects.filter(cluster_id=pk).order_by("-id").first()
    assert session is not None and session.status == "ok"


def _waiting_for_lock(cluster_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2 "
            "AND classid = %s AND objid = %s)",
            [locks.SCHEDULING_SESSION_LOCK, cluster_id],
        )
        return bool(cursor.fetchone()[0])


@pytest.mark.parametrize("holder_ends", ["commits", "is killed"])
def test_a_session_message_waits_for_the_running_session_instead_of_skipping(
    on_redis: Any, workers: SimpleNamespace, tmp_path: Path, holder_ends: str
) -> None:
    """Issue 31: the beat's next message reaches another worker while the cluster's session still runs (a session
    longer than the period). It waits for the lock (``FAIRWAY_SESSION_LOCK_WAIT_SECONDS``, long here) and runs as
    soon as the holder commits, or as soon as the server frees a killed holder's lock: no skipped session."""
    world = build_world(nodes=2, node_cpu="4")
    marker, release = tmp_path / "paused", tmp_path / "go on"
    holder = workers.start(pause_marker=marker, FAIRWAY_TEST_PAUSE_RELEASE=str(release))
    first = run_session.apply_async(args=[world.cluster.pk], queue=workers.queue)
    _wait_for(marker.exists, 120, "the first session to pause holding the lock\n" + _logs(workers))
    workers.start(FAIRWAY_SESSION_LOCK_WAIT_SECONDS="60")  # the holder is busy: the next message goes here
    second = run_session.apply_async(args=[world.cluster.pk], queue=workers.queue)
    _wait_for(lambda: _waiting_for_lock(world.cluster.pk), 120, "the second session waiting\n" + _logs(workers))
    if holder_ends == "commits":
        release.touch()
        assert first.get(timeout=120) == "ran", _logs(workers)
    else:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(30)
    assert second.get(timeout=120) == "ran", _logs(workers)
    sessions = list(SchedulingSession.objects.filter(cluster=world.cluster).order_by("id"))
    assert [s.status for s in sessions] == (["ok", "ok"] if holder_ends == "commits" else ["ok"])
    assert sum(s.bound for s in sessions) == 3  # every pod bound once, by whichever session committed it
    assert set(Pod.objects.filter(cluster=world.cluster).values_list("status", flat=True)) == {"Bound"}
