"""One SQLite database migrated once for the whole test run, copied by the tests that need a fresh, migrated
embedded database but do not test migrating it (``migrate`` costs about eight seconds of CPU on a fresh file).

``template(root)`` migrates ``root/migrated.sqlite3`` the first time any process of the run asks (the xdist workers
share ``root``, the session's base temporary folder, and take turns through a lock file) with ``manage.py migrate``
in a process of its own: every migration, the data migrations' rows, the schedules made after ``migrate`` and
SQLite's change-feed triggers, as on a fresh install. ``demo_template(root)`` is a copy of it with ``manage.py
load_demo`` run on it (about seven seconds of CPU more: the demo's users' passwords are hashed with the product's
hasher), for the tests of ``make run``'s embedded default. ``copy_to(template, dest)`` gives a test its own copy.

A pytest run in a subprocess (the SQLite pass of a module, the pytest configuration's own runs) gets its test
database the same way: ``FAIRWAY_TEST_SQLITE_TEMPLATE`` names the template and ``tests/conftest.py`` copies it as
the test database (a file; Django keeps it and only checks that every migration is applied).

The tests of migrating itself (``tests/test_migrations.py``, ``/readyz`` before and after, the installed wheel)
still migrate an empty database of their own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ENV = "FAIRWAY_TEST_SQLITE_TEMPLATE"


def _manage(path: Path, *args: str) -> None:
    """``manage.py *args`` on the SQLite file ``path``, in a process of its own as on a fresh install (in this
    process, django-celery-beat's change tracking of the schedules that ``migrate`` creates would write to the
    default database whatever database is migrated)."""
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", ENV)}
    env.update(DATABASE_URL=f"sqlite:///{path}", FAIRWAY_VAR_DIR=str(path.parent / "var"))
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    conn = sqlite3.connect(path)  # one file: WAL's log folded back in, a copy needs nothing beside it
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _made_once(path: Path, make: Callable[[Path], None]) -> Path:
    """``path``, made by ``make(part)`` then renamed by the first process that asks; the others wait for it."""
    with path.with_name(path.name + ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker making it: wait for it
        if not path.exists():
            part = path.with_name(f"{path.name}.{os.getpid()}.part")
            part.unlink(missing_ok=True)
            make(part)
            part.rename(path)  # complete or absent
    return path


def template(root: Path) -> Path:
    """The migrated SQLite file of this run under ``root`` (``manage.py migrate`` on an empty file)."""
    return _made_once(root / "migrated.sqlite3", lambda part: _manage(part, "migrate", "--noinput", "-v", "0"))


def demo_template(root: Path) -> Path:
    """The migrated SQLite file with the demo loaded (``manage.py load_demo``, the small demo of ``make run``)."""
    migrated = template(root)

    def make(part: Path) -> None:
        copy_to(migrated, part)
        _manage(part, "load_demo")

    return _made_once(root / "demo.sqlite3", make)


def copy_to(source: Path, dest: Path) -> Path:
    """A copy of the template at ``dest`` (its folder made if needed)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return dest
