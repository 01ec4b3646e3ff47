"""A database that applied only some of the migrations a squashed migration replaces cannot take this version.

Django takes a squashed migration (``replaces``) as applied when every migration it replaces is, and runs it on a
database that applied none of them; with some applied and the replaced files gone, it leaves the app out of the
plan without a word (``migrate`` and ``/readyz`` would find nothing to do over a schema that is behind). This check
(run by ``migrate`` and ``check --database``) refuses instead: such a database must first be upgraded with the
version before the squash (docs: CHANGELOG's upgrade notes).
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.db import DatabaseError, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder


@register(Tags.database)
def squashed_migrations_applied_whole(databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        try:
            if not MigrationRecorder(connection).has_table():
                continue
            applied = set(MigrationRecorder(connection).applied_migrations())
        except DatabaseError:  # no database to read yet: nothing recorded to contradict
            continue
        disk = MigrationLoader(None, ignore_no_migrations=True).disk_migrations
        for key, migration in sorted(disk.items()):
            replaced = set(migration.replaces or ())
            done = replaced & applied
            if done and done != replaced:
                missing = ", ".join(f"{app}.{name}" for app, name in sorted(replaced - done))
                errors.append(
                    Error(
                        f"The database '{alias}' applied only some of the migrations that {key[0]}.{key[1]} "
                        f"replaces (not {missing}).",
                        hint="Upgrade it with the version before the squash and run its migrate first "
                        "(CHANGELOG.md, upgrade notes).",
                        id="core.E001",
                    )
                )
    return errors
