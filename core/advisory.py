"""Advisory writes of a reading request: done after its transaction commits, skipped when the database is busy.

A request with a safe method on SQLite reads one snapshot (``controlplane.middleware.SQLiteReadsMiddleware``); a write
inside it fails ("database is locked", a 503) as soon as a session committed since the request began reading. The
few writes a reading request makes are advisory (when a token was last used, a round of start estimates a page
computed, the claim that asks the estimates worker for a new round): ``after_commit`` runs them once the request's
transaction commits, in statements of their own, and on SQLite without waiting for the write lock. A write the
database refuses at that moment is skipped (a later request makes it); it never fails or slows the request."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connection, transaction

__all__ = ["after_commit", "without_waiting"]

log = logging.getLogger("fairway.advisory")


@contextmanager
def without_waiting() -> Iterator[None]:
    """On SQLite, a statement that finds the write lock taken fails at once instead of waiting the busy timeout
    (the worker's session may hold it for seconds); elsewhere nothing changes."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (before,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(before)}")


def after_commit(write: Callable[[], None], what: str) -> None:
    """Run ``write`` once the current transaction commits (at once outside one), skipped if the database refuses it
    then; ``what`` names it in the log line of a skip."""

    def run() -> None:
        try:
            with without_waiting():
                write()
        except DatabaseError as exc:
            log.info("skipped %s: %s", what, exc)

    transaction.on_commit(run)
