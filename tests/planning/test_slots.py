"""Issue 25, item 2: simulate and what-if are capped per deployment, not per process (``planning.slots``).

With a real Redis (``FAIRWAY_TEST_REDIS_URL``) and with PostgreSQL: N holders in other processes and this one, the
N+1st gets no slot (the API answers 503 ``busy`` with ``Retry-After``); a holder killed without releasing frees its
slot (Redis: when its lease runs out; PostgreSQL: when the server drops its connection). The waits below poll for
the slot to come back, with a generous bound; nothing asserts how long it took.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from planning import slots
from scheduling.locks import SIMULATION_SLOT_LOCK

ROOT = Path(__file__).resolve().parents[2]
PATIENCE = 60.0  # seconds: how long a freed slot may take to come back before the test gives up


@pytest.fixture
def redis_url() -> Iterator[str]:
    url = os.environ.get("FAIRWAY_TEST_REDIS_URL", "")
    if not url:
        pytest.skip("FAIRWAY_TEST_REDIS_URL is not set (make test sets it)")
    import redis

    client = redis.Redis.from_url(url)
    client.ping()
    keys = [slots.REDIS_KEY.format(i) for i in range(8)]
    client.delete(*keys)
    yield url
    client.delete(*keys)


def _holder(code: str) -> subprocess.Popen[str]:
    """A child process (another web process, as far as the slots can tell) that runs ``code`` to take a slot, prints
    ``held`` and then sleeps until it is killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code + "\nprint('held' if held else 'none', flush=True)\nimport time\ntime.sleep(600)"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)  # no release, no clean close: as a web process killed by the OOM killer
    proc.wait(timeout=30)


def _comes_back(take: Any) -> Any:
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        held = take()
        if held is not None:
            return held
        time.sleep(0.05)
    return None


def test_redis_slots_are_shared_by_processes_and_a_killed_holder_frees_its_slot_after_the_lease(
    redis_url: str,
) -> None:
    child = _holder(f"from planning.slots import RedisSlots\nheld = RedisSlots({redis_url!r}, 2, 1.0).try_acquire()")
    try:
        mine = slots.RedisSlots(redis_url, 2, 1.0)
        first = mine.try_acquire()
        assert first is not None  # the second of the two slots
        assert mine.try_acquire() is None  # N + 1: busy, although this process holds only one
        first.release()
        again = mine.try_acquire()
        assert again is not None and mine.try_acquire() is None  # a released slot is free at once
        _kill(child)
        back = _comes_back(mine.try_acquire)  # the dead process's slot, once its lease of 1 s ran out
        assert back is not None
        back.release()
        again.release()
    finally:
        if child.poll() is None:
            _kill(child)


def _holder_on_postgres() -> subprocess.Popen[str]:
    db = connection.settings_dict
    dsn = {
        "dbname": db["NAME"],
        "user": db["USER"],
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
    }
    return _holder(
        "import psycopg\n"
        f"conn = psycopg.connect(**{dsn!r}, autocommit=True)\n"
        f"held = conn.execute('SELECT pg_try_advisory_lock(%s, 0)', [{SIMULATION_SLOT_LOCK}]).fetchone()[0]"
    )


@pytest.mark.django_db(transaction=True)
def test_database_slots_are_shared_by_processes_and_a_killed_holder_frees_its_slot() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the database slots are PostgreSQL's advisory locks")
    child = _holder_on_postgres()  # another process holds slot 0
    try:
        mine = slots.DatabaseSlots(2, 60.0)
        first = mine.try_acquire()
        assert first is not None  # slot 1
        assert mine.try_acquire() is None  # N + 1: busy
        first.release()
        again = mine.try_acquire()
        assert again is not None and mine.try_acquire() is None
        _kill(child)
        back = _comes_back(mine.try_acquire)  # the server dropped the dead process's connection and its lock
        assert back is not None
        back.release()
        again.release()
    finally:
        if child.poll() is None:
            _kill(child)


@pytest.mark.django_db
def test_simulate_is_busy_when_every_redis_slot_is_held_elsewhere(
    redis_url: str, admin_api: Any, settings: Any
) -> None:
    import dataclasses

    settings.FAIRWAY_SIMULATION_SLOTS = redis_url
    admin_api.raise_request_exception = False  # a 503 is answered, as a real server would (no re-raise in the test)
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, max_concurrent_simulations=2)
    elsewhere = slots.RedisSlots(redis_url, 2, 60.0)
    held = [elsewhere.try_acquire(), elsewhere.try_acquire()]  # two web processes' simulations, still running
    body = {"manifests": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"}
    try:
        r = admin_api.post("/api/v1/simulate/", body, format="json")
        assert r.status_code == 503 and r.headers["Retry-After"] == "5"
        assert r.json()["errors"][0]["code"] == "busy"
        r = admin_api.post("/api/v1/whatif/", {"changes": [{"op": "set_weight", "kind": "namespace"}]}, format="json")
        assert r.status_code == 503 and r.json()["errors"][0]["code"] == "busy"
    finally:
        for h in held:
            assert h is not None
            h.release()
    r = admin_api.post("/api/v1/simulate/", body, format="json")
    assert r.status_code == 200, r.content[:300]


@pytest.mark.django_db
def test_an_unreachable_redis_is_a_503_not_an_uncounted_simulation(admin_api: Any, settings: Any) -> None:
    from tests.support.ports import free_port

    settings.FAIRWAY_SIMULATION_SLOTS = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    admin_api.raise_request_exception = False
    r = admin_api.post("/api/v1/simulate/", {"manifests": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"},
                       format="json")  # fmt: skip
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert "cannot count its running simulations" in r.json()["errors"][0]["detail"]
