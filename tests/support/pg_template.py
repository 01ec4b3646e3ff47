"""One PostgreSQL test database migrated per run, copied for each xdist worker (``CREATE DATABASE ... TEMPLATE``).

Under ``make test`` every worker needs its own test database (``test_<name>_gw0``, ``_gw1``, ...). Migrating one
costs about six seconds of CPU in the worker, and PostgreSQL's own; copying a migrated one is a file copy inside
PostgreSQL. So the first worker that sets up its database migrates it as Django always does (``setup_databases``),
then PostgreSQL copies it into this run's template (``test_<name>_tpl_<run>``); the other workers, taking turns
through a lock file in the run's base temporary folder, make theirs as a copy of the template and let Django check
it (``keepdb``: ``migrate`` finds every migration applied, and the ``post_migrate`` handlers run again, as under
``--reuse-db``). Each worker drops its own database at the end as before; the run's controller drops the template
(``drop``).

The template belongs to one run: its name comes from the run's base temporary folder, so it is never used by a later
run, whatever changed in between (a migration edited, a trigger's SQL, a ``post_migrate`` handler); ``--create-db``
has nothing more to do than without it. A run that was killed leaves its template behind; the next run that makes
one drops every template of the same database name whose run folder is gone (pytest keeps the last three).

Not used (Django's own set-up, unchanged): with ``FAIRWAY_TEST_PG_TEMPLATE=0``, without xdist (one database, nothing to copy), on SQLite, with
``--reuse-db`` (the databases are kept between runs) or ``--nomigrations``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

NAME_FILE = "pg-template.name"  # in the run's base temporary folder: the template this run made, for ``drop``


def wanted(keepdb: bool, use_migrations: bool) -> bool:
    """True in an xdist worker of a run on PostgreSQL that makes its test database afresh, unless
    ``FAIRWAY_TEST_PG_TEMPLATE=0`` (each worker then migrates its own, as Django does)."""
    from django.db import connection

    worker = bool(os.environ.get("PYTEST_XDIST_WORKER")) and os.environ.get("FAIRWAY_TEST_PG_TEMPLATE") != "0"
    return worker and connection.vendor == "postgresql" and not keepdb and use_migrations


def template_name(root: Path) -> str:
    """``test_<name>_tpl_<10 hex digits of the run's folder>`` (PostgreSQL names stop at 63 characters)."""
    from django.db import connection

    run = hashlib.sha256(str(root).encode()).hexdigest()[:10]
    return f"test_{connection.settings_dict['NAME']}"[:45] + f"_tpl_{run}"


def _execute(sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """``sql`` on the server's maintenance database (outside a transaction, as ``CREATE DATABASE`` needs)."""
    from django.db import connection

    with connection.creation._nodb_cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


def _exists(name: str) -> bool:
    return bool(_execute("SELECT 1 FROM pg_database WHERE datname = %s", name))


def _quote(name: str) -> str:
    from django.db import connection

    return connection.ops.quote_name(name)


def _drop_orphans(template: str) -> None:
    """Drop the templates of this database name whose run folder is gone (a run killed before its end)."""
    prefix = template.rsplit("_tpl_", 1)[0] + "_tpl_"
    rows = _execute(
        "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database WHERE datname LIKE %s",
        prefix.replace("_", r"\_") + "%",
    )
    for name, root in rows:
        if name != template and (not root or not Path(root).exists()):
            _execute(f"DROP DATABASE IF EXISTS {_quote(name)} WITH (FORCE)")


def set_up(root: Path, migrate: Callable[[bool], Any]) -> Any:
    """This worker's test database, copied from the run's template, or migrated by ``migrate(keepdb)`` (Django's
    ``setup_databases``) and then copied into the template when this worker is the first. Returns what ``migrate``
    returned (the configuration ``teardown_databases`` needs)."""
    from django.db import connection, connections

    template = template_name(root)
    mine = connection.creation._get_test_db_name()
    with (root / "pg-template.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker at a time: the first makes the template, the others copy it
        if _exists(template):
            _execute(f"DROP DATABASE IF EXISTS {_quote(mine)}")
            _execute(f"CREATE DATABASE {_quote(mine)} TEMPLATE {_quote(template)}")
            fcntl.flock(lock, fcntl.LOCK_UN)
            return migrate(True)  # Django checks it: every migration applied, nothing to do
        _drop_orphans(template)
        config = migrate(False)
        connections.close_all()  # PostgreSQL copies a database nobody is connected to
        _execute(f"CREATE DATABASE {_quote(template)} TEMPLATE {_quote(mine)}")
        _execute(f"COMMENT ON DATABASE {_quote(template)} IS %s", str(root))
        (root / NAME_FILE).write_text(template)
    return config


def drop(root: Path) -> None:
    """The run's controller, at its end: drop the template the workers made, if they made one."""
    marker = root / NAME_FILE
    if not marker.exists():
        return
    _execute(f"DROP DATABASE IF EXISTS {_quote(marker.read_text().strip())} WITH (FORCE)")
    marker.unlink()
