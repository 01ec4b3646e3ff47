"""The resource names the nodes offer, across all clusters (the trees are global, so a queue may name a GPU that
only one cluster has). ``scheduling.apps`` registers ``offered_names`` with ``controlplane.resource_names``, which
holds the rule's entry points (``known_resource_names``, ``check_known``).
"""

from __future__ import annotations

from django.db import connection

from scheduling.models import Node


def offered_names() -> set[str]:
    """Every resource name in some node's ``allocatable`` (one query, computed by the database where it can)."""
    table = connection.ops.quote_name(Node._meta.db_table)
    column = connection.ops.quote_name(Node._meta.get_field("allocatable").column)
    if connection.vendor == "postgresql":
        sql = f"SELECT DISTINCT jsonb_object_keys({column}) FROM {table} WHERE jsonb_typeof({column}) = 'object'"
    elif connection.vendor == "sqlite":
        sql = f"SELECT DISTINCT j.key FROM {table}, json_each({table}.{column}) AS j WHERE j.key IS NOT NULL"
    else:  # pragma: no cover - the project runs on PostgreSQL and SQLite
        names: set[str] = set()
        for allocatable in Node.objects.values_list("allocatable", flat=True):
            names.update(allocatable or ())
        return names
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return {row[0] for row in cursor.fetchall()}
