"""The change feed's triggers (``scheduling.models.RowChange``; read by ``scheduling.feed.mirror``)."""

from django.db import migrations

# The change feed's triggers (PostgreSQL only; elsewhere the mirror always reads in full). One statement-level
# trigger per table and operation, with its transition table: inserted and deleted rows are logged, updated rows
# only when a column the engine reads changed (a heartbeat is not a change). Each statement that logs rows
# moves the revision of every cluster it touched, so that a writer that did not move it (a cascade, raw SQL) is
# still serialised with the others, and every logged change has a revision above that of any reader that could
# have seen the rows before it (even one reading inside the writer's transaction); the log rows carry it.
TABLES = {
    # table: (kind, the columns the engine reads)
    "scheduling_node": (1, ["cluster_id", "name", "allocatable", "labels", "taints", "unschedulable", "ready"]),
    "scheduling_podgroup": (
        2,
        [
            "cluster_id", "namespace_id", "name", "queue_id", "min_member", "min_task_member", "min_resources",
            "priority", "priority_class_name", "phase", "created", "conditions", "unplaced_sessions", "requeues",
            "backoff_until",
            # not read by the engine, but written with its statuses: a session that reuses the last result
            # (``scheduling.feed.mirror``) knows from their silence that its statuses are written already
            "reason", "message", "blocker",
        ],
    ),
    "scheduling_pod": (
        3,
        [
            "cluster_id", "namespace_id", "name", "podgroup_id", "task_name", "request", "priority", "preemptible",
            "quota_group_id", "status", "node_id", "node_selector", "tolerations", "labels", "created", "started",
        ],
    ),
}

# One statement: the rows logged (computed once), the revisions moved (one row per cluster, RETURNING the new
# value), the log rows at those revisions. Updated rows are found with EXCEPT (a hashed set operation): a join of
# the two transition tables, which have no statistics, can be planned as a nested loop over 50,000 x 50,000 rows.
LOG = """
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


def _function(table: str, op: str) -> str:
    kind, columns = TABLES[table]
    if op == "UPDATE":
        cols = ", ".join(["id", *columns])
        rows = f"SELECT cluster_id, id FROM (SELECT {cols} FROM new_rows EXCEPT SELECT {cols} FROM old_rows) AS d"
    elif op == "INSERT":
        rows = "SELECT cluster_id, id FROM new_rows"
    else:
        rows = "SELECT cluster_id, id FROM old_rows"
    body = LOG.format(rows=rows, kind=kind)
    name = f"fairway_feed_{table}_{op.lower()}"
    transition = {"INSERT": "NEW TABLE AS new_rows", "UPDATE": "NEW TABLE AS new_rows OLD TABLE AS old_rows",
                  "DELETE": "OLD TABLE AS old_rows"}[op]
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
{body}
    RETURN NULL;
END
$body$;
DROP TRIGGER IF EXISTS {name} ON {table};
CREATE TRIGGER {name} AFTER {op} ON {table} REFERENCING {transition} FOR EACH STATEMENT EXECUTE FUNCTION {name}();
"""


def install_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            schema_editor.execute(_function(table, op))


def remove_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            name = f"fairway_feed_{table}_{op.lower()}"
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}; DROP FUNCTION IF EXISTS {name}();")



class Migration(migrations.Migration):

    dependencies = [
        ("scheduling", "0009_change_feed"),
        ("quotas", "0003_revision_counters"),
    ]

    operations = [migrations.RunPython(install_triggers, remove_triggers)]
