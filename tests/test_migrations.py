"""The squashed migrations (one initial migration per app, with ``replaces``), from both sides.

* **From the schema before the squash**: a database migrated with every migration up to the squash
  (``tests/data/before_squash.*.sql``: its schema and its ``django_migrations`` rows, dumped at the time) takes
  the squashed migrations as applied without running them, and ends with the same schema (tables, columns, types,
  defaults, constraints, indexes, the change feed's triggers and their functions) as
* **an empty database** migrated with them, which also gets the rows every database needs.

On PostgreSQL and on SQLite (the embedded default of ``make run``), each database an extra connection of its own.
The dumps are frozen (the schema on the day of the squash): a later migration runs on both sides, so they are never
made again; the test compares the two sides whatever migrations follow the squashed ones.
"""

from __future__ import annotations

import copy
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from scheduling.feed import triggers

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
SQUASHED = {
    ("quotas", "0001_squashed_0007_tree_node_description"),
    ("scheduling", "0001_squashed_0030_job_history"),
    ("security", "0001_squashed_0004_roles_synced_event"),
}

Schema = dict[str, set[tuple[str, ...]]]


@contextmanager
def _alias(name: str, database: dict[str, Any]) -> Iterator[Any]:
    """A connection to another database under the alias ``name`` while the block runs."""
    connections.settings[name] = database
    try:
        yield connections[name]
    finally:
        connections[name].close()
        del connections[name]
        del connections.settings[name]


def _migrate(alias: str) -> list[str]:
    """``migrate`` on the alias; returns the migrations it planned to run (``app.name``)."""
    executor = MigrationExecutor(connections[alias])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    call_command("migrate", database=alias, verbosity=0, interactive=False)
    return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]


def _applied(alias: str) -> set[tuple[str, str]]:
    return set(MigrationRecorder(connections[alias]).applied_migrations())


def _norm(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value)).strip()


# -- PostgreSQL --------------------------------------------------------------------------------------------------

_PG_CATALOG = {
    "columns": """
        SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
               coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attcompression
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped""",
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
         WHERE connamespace = 'public'::regnamespace""",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'",
    "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal",
    "functions": "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace",
}


def _pg_conninfo(database: dict[str, Any], name: str) -> str:
    return psycopg.conninfo.make_conninfo(
        dbname=name,
        host=database["HOST"] or None,
        port=database["PORT"] or None,
        user=database["USER"] or None,
        password=database["PASSWORD"] or None,
    )


def _pg_schema(database: dict[str, Any]) -> Schema:
    with psycopg.connect(_pg_conninfo(database, database["NAME"])) as conn:
        return {
            kind: {tuple(_norm(v) for v in row) for row in conn.execute(query)} for kind, query in _PG_CATALOG.items()
        }


@pytest.fixture
def pg_databases(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Callable[[str], dict[str, Any]]]:
    """``new(suffix)``: the settings of an empty PostgreSQL database of its own (named after the test database),
    dropped after the test."""
    default = connections["default"]
    if default.vendor != "postgresql":
        pytest.skip("the PostgreSQL side (the SQLite side has its own test)")
    base = copy.deepcopy(connections.settings["default"])
    made: list[str] = []
    admin = _pg_conninfo(base, "postgres")

    def new(suffix: str) -> dict[str, Any]:
        name = f"{default.settings_dict['NAME']}_{suffix}"[:63]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return {**copy.deepcopy(base), "NAME": name}

    with django_db_blocker.unblock():
        yield new
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_postgresql_from_the_schema_before_the_squash(pg_databases: Callable[[str], dict[str, Any]]) -> None:
    before = pg_databases("before_squash")
    with psycopg.connect(_pg_conninfo(before, before["NAME"]), autocommit=True) as conn:
        conn.execute((DATA / "before_squash.postgresql.sql").read_text())
    with _alias("before_squash", before):
        assert not SQUASHED & _applied("before_squash")
        ran = _migrate("before_squash")
        assert not SQUASHED & {tuple(name.split(".", 1)) for name in ran}, ran  # taken as applied, not run
        assert _applied("before_squash") >= SQUASHED  # and recorded
        assert _migrate("before_squash") == []
    upgraded = _pg_schema(before)

    empty = pg_databases("from_empty")
    with _alias("from_empty", empty):
        _migrate("from_empty")
        assert _applied("from_empty") >= SQUASHED
        _assert_seeded("from_empty")
    created = _pg_schema(empty)

    for kind in _PG_CATALOG:
        assert upgraded[kind] == created[kind], (kind, upgraded[kind] ^ created[kind])
    feed = {name for _, name, _ in created["triggers"]}
    assert feed == set(triggers.TRIGGER_NAMES)
    assert ("scheduling_schedulingsession", "bindings") in {row[:2] for row in created["columns"] if row[6] == "l"}


def _assert_seeded(alias: str) -> None:
    """The rows every database needs, made by the squashed migrations."""
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT name FROM quotas_queue ORDER BY name")
        assert [r[0] for r in cursor.fetchall()] == ["default", "root"]
        cursor.execute("SELECT name FROM quotas_quotagroup ORDER BY name")
        assert [r[0] for r in cursor.fetchall()] == ["default", "root", "system"]
        cursor.execute("SELECT c.name FROM scheduling_cluster c JOIN scheduling_clusterfeed f ON f.cluster_id = c.id")
        assert [r[0] for r in cursor.fetchall()] == ["default"]
        cursor.execute("SELECT name FROM auth_group WHERE name = 'node-agents'")
        assert cursor.fetchall() == [("node-agents",)]


# -- SQLite ------------------------------------------------------------------------------------------------------


def _sqlite_settings(path: Path) -> dict[str, Any]:
    """A connection to the SQLite file ``path`` (a throwaway: no waiting for the disk after each transaction)."""
    options = {"init_command": "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;"}
    return {
        **copy.deepcopy(connections.settings["default"]),
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": options,
        "HOST": "",
        "PORT": "",
    }


def _sqlite_definition(sql: str) -> tuple[str, tuple[str, ...]]:
    """A ``CREATE TABLE``'s head and its column and constraint definitions, sorted: a table that Django added a
    column to keeps it last, one it created or rebuilt has it in the model's order."""
    head, _, rest = _norm(sql).partition("(")
    parts, depth, current = [], 0, ""
    for char in rest.rsplit(")", 1)[0]:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += (char == "(") - (char == ")")
        current += char
    parts.append(current.strip())
    return head.strip(), tuple(sorted(parts))


def _sqlite_schema(path: Path) -> set[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
    return {
        (kind, name, table, _sqlite_definition(sql) if kind == "table" else _norm(sql or ""))
        for kind, name, table, sql in rows
    }


def test_sqlite_from_the_schema_before_the_squash(tmp_path: Path, django_db_blocker: Any) -> None:
    before, empty = tmp_path / "before.sqlite3", tmp_path / "empty.sqlite3"
    with sqlite3.connect(before) as conn:
        conn.executescript((DATA / "before_squash.sqlite.sql").read_text())
    with django_db_blocker.unblock():
        with _alias("before_squash", _sqlite_settings(before)):
            ran = _migrate("before_squash")
            assert not SQUASHED & {tuple(name.split(".", 1)) for name in ran}, ran  # taken as applied, not run
            assert _applied("before_squash") >= SQUASHED
        with _alias("from_empty", _sqlite_settings(empty)):
            _migrate("from_empty")
            _assert_seeded("from_empty")
    upgraded, created = _sqlite_schema(before), _sqlite_schema(empty)
    assert upgraded == created, upgraded ^ created
    assert {name for kind, name, *_ in created if kind == "trigger"} == set(triggers.TRIGGER_NAMES)


def test_a_database_with_only_some_of_the_replaced_migrations_is_refused(
    tmp_path: Path, django_db_blocker: Any
) -> None:
    """Django would leave scheduling out of the plan without a word (its squashed migration neither applied nor
    applicable): ``migrate`` refuses instead (``core.checks``), naming what is missing."""
    path = tmp_path / "behind.sqlite3"
    dump = (DATA / "before_squash.sqlite.sql").read_text()
    behind = "".join(line for line in dump.splitlines(keepends=True) if "'0030_job_history'" not in line)
    assert behind != dump
    with sqlite3.connect(path) as conn:
        conn.executescript(behind)
    with django_db_blocker.unblock(), _alias("behind", _sqlite_settings(path)):
        with pytest.raises(SystemCheckError, match=r"core\.E001.*scheduling\.0030_job_history"):
            call_command("migrate", database="behind", verbosity=0, interactive=False, skip_checks=False)
        assert ("scheduling", "0001_squashed_0030_job_history") not in _applied("behind")


def test_a_jobs_maximum_execution_time_moves_into_its_own_column_and_back(
    pg_databases: Callable[[str], dict[str, Any]],
) -> None:
    """0041: a Kueue Job's ``maxExecSeconds`` (kept in ``kueue_job`` before) moves to ``kueue_max_exec_seconds``, the
    rest of ``kueue_job`` as it was; migrating back puts it back."""
    before, after = (
        ("scheduling", "0040_podgroup_pod_set_flavors"),
        ("scheduling", "0041_podgroup_kueue_max_exec_seconds"),
    )
    with _alias("max_exec", pg_databases("max_exec")) as connection:
        call_command("migrate", database="max_exec", verbosity=0, interactive=False)  # every app, then back to 0040
        call_command("migrate", *before, database="max_exec", verbosity=0, interactive=False)
        apps = MigrationExecutor(connection).loader.project_state(before).apps
        cluster = apps.get_model("scheduling", "Cluster").objects.using("max_exec").get(name="default")
        queue = apps.get_model("quotas", "Queue").objects.using("max_exec").get(name="default")
        namespace = apps.get_model("quotas", "Namespace").objects.using("max_exec").create(name="team")
        rows = apps.get_model("scheduling", "PodGroup").objects.using("max_exec")
        for name, job in (("limited", {"minCount": None, "suspended": False, "maxExecSeconds": 600}),
                          ("unlimited", {"minCount": 2, "suspended": True}), ("volcano", None)):  # fmt: skip
            rows.create(cluster=cluster, namespace=namespace, queue=queue, name=name, kueue_job=job)
        call_command("migrate", *after, database="max_exec", verbosity=0, interactive=False)
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, kueue_job, kueue_max_exec_seconds FROM scheduling_podgroup ORDER BY name")
            moved = {name: (json.loads(job) if isinstance(job, str) else job, s) for name, job, s in cursor.fetchall()}
        assert moved == {
            "limited": ({"minCount": None, "suspended": False}, 600),
            "unlimited": ({"minCount": 2, "suspended": True}, None),
            "volcano": (None, None),
        }
        call_command("migrate", *before, database="max_exec", verbosity=0, interactive=False)
        back = apps.get_model("scheduling", "PodGroup").objects.using("max_exec")
        assert back.get(name="limited").kueue_job == {"minCount": None, "suspended": False, "maxExecSeconds": 600}
        assert back.get(name="unlimited").kueue_job == {"minCount": 2, "suspended": True}
