"""The embedded default of ``make run`` (SQLite, no servers): migrated and with the demo (a copy of the run's
SQLite file with both), the schedules, then every periodic task once in a fresh process. This exercises the SQLite
side of the store and the locks (lease rows, per-node binding updates, CASE updates of podgroups, epoch reads) that
the PostgreSQL suite does not reach."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings

from tests.support import migrated_sqlite

pytestmark = pytest.mark.slow

SCRIPT = """
import io, json
from django.core.management import call_command
from django.utils import timezone
from engine.session.decisions import SessionResult
from scheduling import locks, store, tasks
from scheduling.models import Cluster, ClusterLease, Pod, PodGroup, SchedulingSession
assert not locks.uses_advisory_locks()
schedules = io.StringIO()
call_command("ensure_schedules", "--simulated", "default", stdout=schedules)
c = Cluster.objects.get(name="default")
out = []
for _ in range(3):
    out.append([tasks.generate_workload(c.pk), tasks.run_session(c.pk), tasks.agent_tick(c.pk), tasks.recycle(c.pk),
                tasks.check_nodes(c.pk), tasks.compact_records(c.pk)])
import threading
from django.conf import settings
from django.db import connection
settings.FAIRWAY["SESSION_LOCK_WAIT_SECONDS"] = 0.05  # the holder never lets go here: the wait passes
with locks.cluster_lock(locks.SCHEDULING_SESSION_LOCK, c.pk) as first:
    second = tasks.run_session(c.pk)
# a session that ran since that skip: the next holder has outlasted no wait yet
between = tasks.run_session(c.pk)
# another worker's lease (its session's write transaction over: SQLite's write lock is free), let go while this
# process's session waits for it: that session runs
settings.FAIRWAY["SESSION_LOCK_WAIT_SECONDS"] = 60
tried, real_pause, waited = threading.Event(), locks._pause, {}
def pause(seconds):
    tried.set()
    real_pause(seconds)
locks._pause = pause
def waiter():
    try:
        waited["result"] = tasks.run_session(c.pk)
    finally:
        connection.close()
held = locks._take_lease(locks.SCHEDULING_SESSION_LOCK, c.pk, "other-worker", 120, "default")
thread = threading.Thread(target=waiter)
thread.start()
assert tried.wait(60)  # the session found the lease held and polls it
locks._release_lease(locks.SCHEDULING_SESSION_LOCK, c.pk, "other-worker", "default")
thread.join(120)
sessions = list(SchedulingSession.objects.order_by("id").values_list("status", "bound", "error"))
print(json.dumps({
    "schedules": schedules.getvalue(), "results": out, "held": [first, second], "sessions": sessions, "waited": [between, held, waited.get("result")],
    "running": Pod.objects.filter(cluster=c, status="Running").count(),
    "pending_reasons": sorted(set(PodGroup.objects.exclude(reason="").values_list("reason", flat=True))),
    "leases": ClusterLease.objects.filter(expires__isnull=False).count(),
    "replay": store.apply_decisions(c, SessionResult(), timezone.now()).bound,
}))
"""


def _embedded(tmp_path: Path, template: Path) -> Callable[..., str]:
    """``run(*args)``: ``manage.py`` on the embedded default (a SQLite file under ``tmp_path``), migrated and with
    the demo loaded; returns its output. The file is a copy of the run's SQLite file made by ``manage.py migrate``
    and ``manage.py load_demo`` (``tests.support.migrated_sqlite``, once for the run, each checked to exit 0)."""
    migrated_sqlite.copy_to(template, tmp_path / "fairway.sqlite3")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")},
        "FAIRWAY_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'fairway.sqlite3'}",
        "STATICFILES_STORAGE": "django.contrib.staticfiles.storage.StaticFilesStorage",
    }
    manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]

    def run(*args: str) -> str:
        done = subprocess.run([*manage, *args], env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        return done.stdout

    return run


def test_the_embedded_default_runs_every_task(tmp_path: Path, demo_sqlite_template: Path) -> None:
    run = _embedded(tmp_path, demo_sqlite_template)
    import json

    # ensure_schedules first, in the same process as the tasks (one start-up of Django fewer)
    report = json.loads(run("shell", "-c", SCRIPT).strip().splitlines()[-1])
    assert "cluster default (simulated): 6 of 6 periodic tasks enabled" in report["schedules"], report["schedules"]
    assert all(r == ["ran"] * 6 for r in report["results"]), report
    assert report["held"] == [True, "skipped"]  # the lease keeps a second session out for the whole wait
    assert report["waited"] == ["ran", True, "ran"]  # and hands over to a session that waits for it
    statuses = [s[0] for s in report["sessions"]]
    assert statuses == ["ok", "ok", "ok", "skipped", "ok", "ok"], report["sessions"]
    assert report["sessions"][3][2] == "another worker held this cluster's lock for the whole wait (0.05 s)"
    assert report["sessions"][0][1] > 0 and report["running"] > 0
    assert report["leases"] == 0  # every lease released
    assert report["replay"] == 0


READS_SCRIPT = """
import json, sqlite3, time
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from security.tokens import create_token
user = get_user_model().objects.create_user("reader", password="pw-reader-1234", is_staff=True)
auth = {"HTTP_AUTHORIZATION": "Token " + create_token(user, "test")[1]}
client = Client(HTTP_HOST="localhost")
client.force_login(user)
from scheduling.models import PodGroup
waiting = PodGroup.objects.filter(phase="Pending").select_related("namespace").order_by("id").first()
# no estimates worker answers: the page computes the waiting job's round itself, and keeps it (an advisory write)
settings.FAIRWAY["START_ESTIMATE_WORKER_WAIT_SECONDS"] = 0
worker = sqlite3.connect(settings.DATABASES["default"]["NAME"], isolation_level=None)
worker.execute("BEGIN IMMEDIATE")  # a session holding the write lock
worker.execute("UPDATE scheduling_pod SET priority = priority")
out = {}
job_page = f"/jobs/{waiting.namespace.name}/{waiting.name}/"
for path in ("/api/v1/queues/", "/api/v1/pods/?page_size=5", "/", "/nodes/", job_page):
    connection.close()  # as a server thread's first request: the middleware runs before anything connects
    t0 = time.perf_counter()
    status = client.get(path, **auth).status_code
    out[path] = [status, round(time.perf_counter() - t0, 2)]
worker.execute("ROLLBACK")
from planning.models import StartEstimates
out["kept"] = [StartEstimates.objects.exists(), 0]  # the write the lock refused was skipped, not retried
connection.close()
t0 = time.perf_counter()
out["again"] = [client.get(job_page).status_code, round(time.perf_counter() - t0, 2)]
out["kept again"] = [StartEstimates.objects.exists(), 0]  # with the lock free, the reader's round is kept
print(json.dumps(out))
"""


def test_pages_read_while_a_session_holds_the_write_lock(tmp_path: Path, demo_sqlite_template: Path) -> None:
    """SQLite's write lock is held by the worker's session from its read to its commit. A GET's transaction
    (``ATOMIC_REQUESTS``) begins DEFERRED (``SQLiteReadsMiddleware``): it reads WAL's snapshot at once instead of
    waiting for that lock (60 s busy timeout, then a 503)."""
    run = _embedded(tmp_path, demo_sqlite_template)
    import json

    report = json.loads(run("shell", "-c", READS_SCRIPT).strip().splitlines()[-1])
    assert report.pop("kept") == [False, 0] and report.pop("kept again") == [True, 0], report
    # a waiting job's page writes the round of start estimates it computed once its read is over, and skips it when
    # the lock is held (it answered 503 when that write ran inside its read, as soon as a session had committed)
    for status, seconds in report.values():
        assert status in (200, 302) and seconds < 10, report
