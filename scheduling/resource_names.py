"""The resource names the control plane knows: the standard Kubernetes ones plus every name a node offers.

The rule is pure (``engine.resources.ResourceNames``); this module only reads the names the nodes offer, across all
clusters (the trees are global, so a queue may name a GPU that only one cluster has). Nodes introduce names: their
``allocatable`` (registration, heartbeat, admin) may carry any syntactically valid name, every other object only
known ones.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

from engine.resources import ResourceNames, is_standard_resource
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


def known_resource_names() -> ResourceNames:
    return ResourceNames(offered_names())


def check_known(names: Iterable[str], field: str) -> None:
    """Raise ``QuantityError`` at ``field.<name>`` for the first name no node offers and no standard resource is;
    asks the database only when some name is not a standard one."""
    names = list(names)
    if all(is_standard_resource(n) for n in names):
        return
    known_resource_names().check(names, field)
