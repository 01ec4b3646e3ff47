"""The change feed's triggers on SQLite (the embedded default of ``make run``): the same ``RowChange`` rows, by the
same rules, as the PostgreSQL triggers of ``0010`` (a no-op there).

SQLite has only row-level triggers (``FOR EACH ROW``), so where PostgreSQL moves the cluster's revision once per
statement, here every logged row moves it by one and is logged at the moved value. That keeps the rule the mirror
relies on (``scheduling.feed.mirror``): every logged change has a revision above that of any reader that could have
seen the rows before it, even one reading inside the writer's transaction between two of its statements; the
revision only moves faster (one step per changed row instead of per statement).

Why revision order is commit order here: SQLite lets one connection write at a time. A writer holds the
database's write lock from its first write (from ``BEGIN IMMEDIATE`` under the settings' ``transaction_mode``)
until it commits or rolls back, and every revision it takes is the committed value of the last writer plus its
own steps, made under that lock. So the next writer starts from a counter that includes every committed change,
and revisions increase in the order the transactions commit. A reader reads in one snapshot (WAL: the mirror's
refresh is one transaction): the commits it sees are a prefix of that order, so once it sees revision ``R`` it
sees every change at ``R`` or below, and a change it does not see is logged above ``R``. A writer rolled back
takes its revisions and its log rows with it.

A later migration that makes Django rebuild one of these tables on SQLite (it copies the table into a new one and
drops the old, triggers included) must install its triggers again (``install_triggers``); until then the mirror,
which checks that all of them exist (``scheduling.feed.mirror.supported``), reads in full.
"""

from django.db import migrations

TRIGGER_TABLES = {
    # table: (kind, the columns the engine reads) -- the same lists as 0010's
    "scheduling_node": (1, ["cluster_id", "name", "allocatable", "labels", "taints", "unschedulable", "ready"]),
    "scheduling_podgroup": (
        2,
        [
            "cluster_id", "namespace_id", "name", "queue_id", "min_member", "min_task_member", "min_resources",
            "priority", "priority_class_name", "phase", "created", "conditions", "unplaced_sessions", "requeues",
            "backoff_until",
            # not read by the engine, but written with its statuses (see 0010)
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

# One row: move the cluster's revision (creating it at 1), then log the row at the moved value. Inserted and
# deleted rows always; an updated row only when a column the engine reads changed (``IS NOT``: NULL-safe), with
# the new row's cluster, as 0010's ``new_rows EXCEPT old_rows`` does.
BODY = """
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || {ref}.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT {ref}.cluster_id, value, {kind}, {ref}.id FROM quotas_revision WHERE key = 'cluster-' || {ref}.cluster_id;
"""


def trigger_name(table: str, op: str) -> str:
    return f"fairway_feed_{table}_{op.lower()}"


TRIGGER_NAMES = [trigger_name(table, op) for table in TRIGGER_TABLES for op in ("INSERT", "UPDATE", "DELETE")]


def _trigger(table: str, op: str) -> str:
    kind, columns = TRIGGER_TABLES[table]
    ref = "OLD" if op == "DELETE" else "NEW"
    when = ""
    if op == "UPDATE":
        when = " WHEN " + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns)
    return (
        f"CREATE TRIGGER IF NOT EXISTS {trigger_name(table, op)} AFTER {op} ON {table} FOR EACH ROW{when}\n"
        f"BEGIN{BODY.format(ref=ref, kind=kind)}END;"
    )


def install_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for table in TRIGGER_TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            schema_editor.execute(_trigger(table, op))


def remove_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in TRIGGER_NAMES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name};")


def create_feeds(apps, schema_editor):
    """Every cluster's ``ClusterFeed`` row (new clusters get theirs when they are saved), so that a mirror that only
    reads, a page's, never has to create it: on SQLite a read-only request does not take the write lock."""
    Cluster = apps.get_model("scheduling", "Cluster")
    ClusterFeed = apps.get_model("scheduling", "ClusterFeed")
    db = schema_editor.connection.alias
    have = set(ClusterFeed.objects.using(db).values_list("cluster_id", flat=True))
    ClusterFeed.objects.using(db).bulk_create(
        [ClusterFeed(cluster_id=pk) for pk in Cluster.objects.using(db).values_list("pk", flat=True) if pk not in have]
    )


class Migration(migrations.Migration):

    dependencies = [
        ("scheduling", "0010_change_feed_triggers"),
    ]

    operations = [
        migrations.RunPython(install_triggers, remove_triggers),
        migrations.RunPython(create_feeds, migrations.RunPython.noop),
    ]
