"""The change feed's database triggers: the SQL that logs a ``RowChange`` (``scheduling.models``) for every write to a
node, podgroup or pod, whoever writes it (services, API, node agents, bulk querysets, raw SQL, the admin, cascades),
in the transaction of the write. ``scheduling.feed.mirror`` reads the log; the migrations import this module.

What each trigger logs, one ``RowChange(cluster_id, rev, kind, row_id)`` per row (``kind``: 1 node, 2 podgroup,
3 pod), named ``fairway_feed_<table>_<insert|update|delete>``:

* ``INSERT``: every inserted row; ``DELETE``: every deleted row (with the old row's cluster).
* ``UPDATE``: only the rows where a column of ``COLUMNS`` changed (a heartbeat is not a change), with the new row's
  cluster. The podgroup's reason, message and blocker are not read by the engine but logged with its statuses: a
  session that reuses the last result knows from their silence that its statuses are written already. On
  PostgreSQL, a statement run with the transaction-local setting ``EVERY_ROW_CHANGED`` on (the session's binding
  compare-and-swap, ``scheduling.store.bindings``, which changes the status of every row it updates) has its pod
  rows logged as they are, without comparing them with their old versions.
* Each logged change moves its cluster's revision (``quotas_revision``, key ``cluster-<id>``, created at 1) and is
  logged at the moved value, so that every logged change has a revision above that of any reader that could have
  seen the rows before it, even one reading inside the writer's transaction, and a writer that did not move the
  revision itself (a cascade, raw SQL) is still serialised with the others.

PostgreSQL: one statement-level trigger per table and operation, with its transition tables; the revision moves
once per statement and cluster. Updated rows are found with ``EXCEPT`` (a hashed set operation), not a join of
the two transition tables (which have no statistics and can be planned as a nested loop).

SQLite (the embedded default of ``make run``): row-level triggers only, so the revision moves once per logged row.
Revisions still follow commit order: one connection writes at a time, holding the write lock from its first write
(``BEGIN IMMEDIATE``) to its commit, so the next writer starts from a counter that includes every committed change;
a reader's snapshot (WAL) sees a prefix of that order. A migration that makes Django rebuild one of these tables
on SQLite (it copies the table and drops the old one, triggers included) must run ``SQLITE_CREATE`` again after
it (``RunSQLOn``); until then the mirror, which checks that they all exist (``mirror.supported``), reads in full.

This is the current SQL. A migration that changes it (say, one more logged column) edits it here and runs the
new statements after its schema change. The initial migration creates the triggers of ``INITIAL_COLUMNS``, the
columns its tables have: on SQLite a trigger must never name a column not there yet, since any table's rebuild
(a later migration's) re-reads every trigger of the database and fails on it. ``postgresql_create`` /
``sqlite_create`` make the triggers of a given column list (``columns_as_of``: a migration that adds a logged column
makes those of its own list, and goes back with those of the one before).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

__all__ = [
    "COLUMNS",
    "EVERY_ROW_CHANGED",
    "INITIAL_COLUMNS",
    "OPERATIONS",
    "POSTGRESQL_CREATE",
    "POSTGRESQL_DROP",
    "SQLITE_CREATE",
    "SQLITE_DROP",
    "TRIGGER_NAMES",
    "RunSQLOn",
    "columns_as_of",
    "postgresql_create",
    "sqlite_create",
    "trigger_name",
]

# table: (kind, the columns whose change an UPDATE logs)
# fmt: off
COLUMNS: dict[str, tuple[int, list[str]]] = {
    "scheduling_node": (1, ["cluster_id", "name", "allocatable", "labels", "taints", "unschedulable", "ready"]),
    "scheduling_podgroup": (
        2,
        [
            "cluster_id", "namespace_id", "name", "queue_id", "min_member", "min_task_member", "min_resources",
            "priority", "priority_class_name", "phase", "created", "conditions", "unplaced_sessions", "requeues",
            "backoff_until",
            "reason", "message", "blocker",  # not read by the engine, written with its statuses (above)
            "suspended_at",
            "kueue_pod_group_count", "kueue_job", "kueue_admitted_count",
        ],
    ),
    "scheduling_pod": (
        3,
        [
            "cluster_id", "namespace_id", "name", "podgroup_id", "task_name", "request", "priority", "preemptible",
            "quota_group_id", "status", "node_id", "node_selector", "tolerations", "labels", "created", "started",
            "node_affinity",
        ],
    ),
}
# fmt: on
# the columns added to ``COLUMNS`` by a migration after the initial one, in migration order: (migration, table, column)
_ADDED_LATER: tuple[tuple[str, str, str], ...] = (
    ("0037_pod_node_affinity", "scheduling_pod", "node_affinity"),
    ("0038_podgroup_kueue_pod_group_count", "scheduling_podgroup", "kueue_pod_group_count"),
    ("0039_podgroup_kueue_job", "scheduling_podgroup", "kueue_job"),
    ("0039_podgroup_kueue_job", "scheduling_podgroup", "kueue_admitted_count"),
)


def columns_as_of(migration: str | None) -> dict[str, tuple[int, list[str]]]:
    """The columns the triggers log once ``migration`` (one of ``_ADDED_LATER``'s) has run; None: the initial
    migration's (those its tables have). A migration makes the triggers of its own list, never ``COLUMNS``: on SQLite a
    trigger naming a column a later migration adds breaks every table rebuild in between."""
    names = [m for m, _, _ in _ADDED_LATER]
    upto = len(names) - names[::-1].index(migration) if migration is not None else 0  # past its last column
    later: dict[str, set[str]] = {}
    for _, table, column in _ADDED_LATER[upto:]:
        later.setdefault(table, set()).add(column)
    return {
        table: (kind, [c for c in columns if c not in later.get(table, set())])
        for table, (kind, columns) in COLUMNS.items()
    }


# the columns the initial migration's triggers log: those its tables have
INITIAL_COLUMNS = columns_as_of(None)
OPERATIONS = ("INSERT", "UPDATE", "DELETE")
EVERY_ROW_CHANGED = "fairway.feed_every_row_changed"  # PostgreSQL, pod updates: log every row without comparing


def trigger_name(table: str, op: str) -> str:
    """The trigger's name (and on PostgreSQL its function's)."""
    return f"fairway_feed_{table}_{op.lower()}"


TRIGGER_NAMES = tuple(trigger_name(table, op) for table in COLUMNS for op in OPERATIONS)

# -- PostgreSQL --------------------------------------------------------------------------------------------------

# One statement: the rows logged (computed once), the revisions moved (one row per cluster, RETURNING the new
# value), the log rows at those revisions.
_PG_LOG = """
    WITH c AS MATERIALIZED ({rows}),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, {kind}, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;
"""
_PG_TRANSITION = {
    "INSERT": "NEW TABLE AS new_rows",
    "UPDATE": "NEW TABLE AS new_rows OLD TABLE AS old_rows",
    "DELETE": "OLD TABLE AS old_rows",
}


def _pg_body(table: str, op: str, logged: dict[str, tuple[int, list[str]]]) -> str:
    kind, columns = logged[table]
    if op == "INSERT":
        return _PG_LOG.format(rows="SELECT cluster_id, id FROM new_rows", kind=kind)
    if op == "DELETE":
        return _PG_LOG.format(rows="SELECT cluster_id, id FROM old_rows", kind=kind)
    cols = ", ".join(["id", *columns])
    changed = f"SELECT cluster_id, id FROM (SELECT {cols} FROM new_rows EXCEPT SELECT {cols} FROM old_rows) AS d"
    if table != "scheduling_pod":
        return _PG_LOG.format(rows=changed, kind=kind)
    every = _PG_LOG.format(rows="SELECT cluster_id, id FROM new_rows", kind=kind)
    return (
        f"IF current_setting('{EVERY_ROW_CHANGED}', true) = 'on' THEN\n{every}\n"
        f"ELSE\n{_PG_LOG.format(rows=changed, kind=kind)}\nEND IF;"
    )


def _pg_create(table: str, op: str, logged: dict[str, tuple[int, list[str]]]) -> list[str]:
    name = trigger_name(table, op)
    return [
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
        f"BEGIN\n{_pg_body(table, op, logged)}\n    RETURN NULL;\nEND\n$body$",
        f"CREATE TRIGGER {name} AFTER {op} ON {table} REFERENCING {_PG_TRANSITION[op]} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
    ]


def postgresql_create(logged: dict[str, tuple[int, list[str]]]) -> list[str]:
    """The PostgreSQL triggers logging the changes of ``logged``'s columns (``COLUMNS``, or an older migration's)."""
    return [sql for table in logged for op in OPERATIONS for sql in _pg_create(table, op, logged)]


POSTGRESQL_CREATE = postgresql_create(COLUMNS)
POSTGRESQL_DROP = [
    sql
    for table in COLUMNS
    for op in OPERATIONS
    for sql in (
        f"DROP TRIGGER IF EXISTS {trigger_name(table, op)} ON {table}",
        f"DROP FUNCTION IF EXISTS {trigger_name(table, op)}()",
    )
]

# -- SQLite ------------------------------------------------------------------------------------------------------

# One row: move the cluster's revision (creating it at 1), then log the row at the moved value. An updated row only
# when a logged column changed (``IS NOT``: NULL-safe).
_SQLITE_BODY = """
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || {ref}.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT {ref}.cluster_id, value, {kind}, {ref}.id FROM quotas_revision WHERE key = 'cluster-' || {ref}.cluster_id;
"""


def _sqlite_create(table: str, op: str, logged: dict[str, tuple[int, list[str]]]) -> str:
    kind, columns = logged[table]
    ref = "OLD" if op == "DELETE" else "NEW"
    when = " WHEN " + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns) if op == "UPDATE" else ""
    return (
        f"CREATE TRIGGER IF NOT EXISTS {trigger_name(table, op)} AFTER {op} ON {table} FOR EACH ROW{when}\n"
        f"BEGIN{_SQLITE_BODY.format(ref=ref, kind=kind)}END;"
    )


def sqlite_create(logged: dict[str, tuple[int, list[str]]]) -> list[str]:
    """The SQLite triggers logging the changes of ``logged``'s columns (``COLUMNS``, or an older migration's)."""
    return [_sqlite_create(table, op, logged) for table in logged for op in OPERATIONS]


SQLITE_CREATE = sqlite_create(COLUMNS)
SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {name};" for name in TRIGGER_NAMES]


class RunSQLOn(migrations.RunSQL):
    """``RunSQL`` on one database vendor only (``"postgresql"``, ``"sqlite"``): a no-op on the others."""

    def __init__(self, vendor: str, sql: Any, reverse_sql: Any = None, **kwargs: Any) -> None:
        super().__init__(sql, reverse_sql, **kwargs)
        self.vendor = vendor

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        name, args, kwargs = super().deconstruct()
        return name, [self.vendor, *args], kwargs

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Raw SQL operation on {self.vendor}"
