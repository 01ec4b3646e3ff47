"""Outages heal (issue 8): a real Celery worker with its embedded beat runs a simulated cluster on Redis and
PostgreSQL, reached through proxies the test can cut. The broker goes away for 7 s, then the database, then the
worker is killed and restarted after 7 s — each more than twice the cluster's node heartbeat timeout (3 s) and longer
than the gap after which the node check knows it could not run (``FAIRWAY_NODE_CHECK_GAP_SECONDS``, 6 s here: three
of the check's periods, the check running every 2 s). After each, sessions resume by themselves, every node stays
Ready (the node check does not condemn nodes for its own silence) and nothing is evicted or lost because of the
control plane's own outage.

The product's figures (a check every 5 s, a 15 s gap, a 6 s timeout, with outages of 20 s) scaled down together:
the same order of events in about half the time."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.db import connection, connections
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from scheduling.models import Cluster, Eviction, Node, Pod, SchedulingSession
from tests.scheduling.conftest import build_world
from tests.support.proxy import OutageProxy

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BASE_DIR = Path(settings.BASE_DIR)
CELERY = BASE_DIR / ".venv" / "bin" / "celery"
OUTAGE = 7.0
TIMEOUT = 3
CHECK_EVERY = 2  # the node heartbeat check's period (s; 5 by default)
CHECK_GAP = 6.0  # FAIRWAY_NODE_CHECK_GAP_SECONDS (15 by default): outages are longer, so each one is a gap


def _wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def services(tmp_path: Path) -> Iterator[SimpleNamespace]:
    redis_url = os.environ.get("FAIRWAY_TEST_REDIS_URL", "")
    if not redis_url:
        pytest.skip("FAIRWAY_TEST_REDIS_URL is not set (the test settings set it)")
    import redis

    parsed = urlparse(redis_url)
    base_db = int((parsed.path or "/0").lstrip("/") or 0)
    db = (base_db + 1) % 16  # a database of its own: beat's messages go to the default queue
    redis.Redis(host=parsed.hostname, port=parsed.port or 6379, db=db).flushdb()
    db_settings = connection.settings_dict
    redis_proxy = OutageProxy(parsed.hostname or "127.0.0.1", parsed.port or 6379)
    pg_proxy = OutageProxy(db_settings["HOST"] or "127.0.0.1", int(db_settings["PORT"] or 5432))
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db_settings['USER']}@127.0.0.1:{pg_proxy.port}/{db_settings['NAME']}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_proxy.port}/{db}",
        "CELERY_RESULT_BACKEND": "",
        "FAIRWAY_NODE_CHECK_GAP_SECONDS": str(CHECK_GAP),
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
    }
    procs: list[subprocess.Popen[bytes]] = []

    def start_worker() -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(procs)}.log").open("wb")
        proc = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "controlplane",
                "worker",
                "-B",
                "--schedule",
                str(tmp_path / "beat-schedule"),
                "--pool",
                "solo",
                "-n",
                f"outage-{len(procs)}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        procs.append(proc)
        return proc

    def logs() -> str:
        return "\n".join(p.read_text(errors="replace")[-4000:] for p in sorted(tmp_path.glob("worker-*.log")))

    yield SimpleNamespace(redis=redis_proxy, pg=pg_proxy, start_worker=start_worker, workers=procs, logs=logs)
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    redis_proxy.close()
    pg_proxy.close()
    redis.Redis(host=parsed.hostname, port=parsed.port or 6379, db=db).flushdb()


class ReadinessWatch:
    """Samples every node's Ready flag four times a second from a thread of its own (its own connection)."""

    def __init__(self, cluster_id: int) -> None:
        self.cluster_id = cluster_id
        self.not_ready: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for name, ready in Node.objects.filter(cluster_id=self.cluster_id).values_list("name", "ready"):
                    if not ready:
                        self.not_ready.add(name)
                time.sleep(0.25)
        finally:
            connections.close_all()

    def stop(self) -> set[str]:
        self._stop.set()
        self._thread.join(10)
        return self.not_ready


def test_outages_heal_by_themselves(services: SimpleNamespace) -> None:
    world = build_world()
    Cluster.objects.filter(pk=world.cluster.pk).update(
        simulated=True, node_heartbeat_timeout=TIMEOUT, pod_eviction_timeout=2 * TIMEOUT
    )
    Cluster.objects.get(pk=world.cluster.pk).save()  # the simulation schedules follow the flag
    cluster = world.cluster
    # The outages are the subject, not the demo's workload: a job the generator submitted between a session and the
    # checks below would be Pending there (its draw depends on the clock), so only the simulated agent plays along.
    generator = PeriodicTask.objects.filter(
        task="scheduling.tasks.generate_workload", name__startswith=f"{cluster.name}: "
    )
    assert generator.update(enabled=False) == 1
    every, _ = IntervalSchedule.objects.get_or_create(every=CHECK_EVERY, period=IntervalSchedule.SECONDS)
    check = PeriodicTask.objects.filter(task="scheduling.tasks.check_nodes", name__startswith=f"{cluster.name}: ")
    assert check.update(interval=every, expire_seconds=CHECK_EVERY - 1) == 1

    def healthy_since(moment: object) -> Callable[[], bool]:
        def check() -> bool:
            fresh = timezone.now() - timedelta(seconds=3)
            beats = list(Node.objects.filter(cluster=cluster).values_list("last_heartbeat", flat=True))
            sessions = SchedulingSession.objects.filter(cluster=cluster, status="ok", started__gt=moment)
            return all(b is not None and b > fresh for b in beats) and sessions.count() >= 2

        return check

    services.start_worker()
    _wait_for(
        healthy_since(timezone.now()), 90, "the worker to run sessions and heartbeat the nodes\n" + services.logs()
    )
    assert set(Pod.objects.filter(cluster=cluster).values_list("status", flat=True)) <= {"Bound", "Running"}
    watch = ReadinessWatch(cluster.pk)
    try:
        for name, cut, restore in (
            ("broker", services.redis.cut, services.redis.restore),
            ("database", services.pg.cut, services.pg.restore),
        ):
            cut()
            time.sleep(OUTAGE)
            restore()
            back = timezone.now()
            _wait_for(healthy_since(back), 90, f"sessions and heartbeats after the {name} outage\n" + services.logs())
        for proc in [p for p in services.workers if p.poll() is None]:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        time.sleep(OUTAGE)
        services.start_worker()
        _wait_for(
            healthy_since(timezone.now()), 90, "sessions and heartbeats after the worker restart\n" + services.logs()
        )
        time.sleep(2 * TIMEOUT)  # what a wrongly condemned node would need to be evicted
    finally:
        not_ready = watch.stop()
    assert not_ready == set(), services.logs()
    assert not Eviction.objects.filter(cluster=cluster).exists()
    assert not Pod.objects.filter(cluster=cluster, reason="NodeLost").exists()
    assert set(Node.objects.filter(cluster=cluster).values_list("ready", flat=True)) == {True}
