"""The pod table's change feed trigger (0010) takes a statement's word that every row it updated changed.

The trigger compares the updated rows with their old versions (``new_rows EXCEPT old_rows`` over every column the
engine reads) to log only the rows that changed. The session's binding statement changes the status of every row
it updates (a compare-and-swap from Pending to Bound or Pipelined), so for it the comparison, a hashed set
operation over 100,000 rows at 50,000 bindings, only finds every row again: the statement says so with the
transaction-local setting ``fairway.feed_every_row_changed = 'on'`` around itself (``scheduling.store``), and
the trigger then logs its rows as they are. Any other statement, and any transaction that never set it, is
compared as before. PostgreSQL only (SQLite's row-level triggers compare one row each, 0011).
"""

import importlib

from django.db import migrations

_feed = importlib.import_module("scheduling.migrations.0010_change_feed_triggers")

TABLE = "scheduling_pod"
SETTING = "fairway.feed_every_row_changed"


def _function() -> str:
    kind, columns = _feed.TABLES[TABLE]
    cols = ", ".join(["id", *columns])
    compared = f"SELECT cluster_id, id FROM (SELECT {cols} FROM new_rows EXCEPT SELECT {cols} FROM old_rows) AS d"
    every = "SELECT cluster_id, id FROM new_rows"
    name = f"fairway_feed_{TABLE}_update"
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
IF current_setting('{SETTING}', true) = 'on' THEN
{_feed.LOG.format(rows=every, kind=kind)}
ELSE
{_feed.LOG.format(rows=compared, kind=kind)}
END IF;
    RETURN NULL;
END
$body$;
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_function())


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_feed._function(TABLE, "UPDATE"))


class Migration(migrations.Migration):

    dependencies = [
        ("scheduling", "0015_pod_node_no_db_constraint"),
    ]

    operations = [migrations.RunPython(install, restore)]
