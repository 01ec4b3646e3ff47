"""Request limits that hold before any view runs, and a 503 instead of a 500 when the database is unreachable.

* ``RequestLimitsMiddleware``: a body over its route's limit is refused with 413 (and the error envelope on the API)
  from its ``Content-Length``, before anything reads it: ``FAIRWAY_SIMULATE_MAX_BODY_BYTES`` for
  ``POST /api/v1/simulate/``, ``FAIRWAY_MAX_BODY_BYTES`` for everything else. Django's own
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is set to the larger of the two, so it never refuses first with a 500.
  A null character in the URL (path or query) is a 400 there too: no lookup with one may reach PostgreSQL.
* ``CollectorPausedMiddleware``: Python's cyclic garbage collector is paused while a request is answered
  (``engine.collector``): a page or what-if right after a change builds a snapshot, the values and a tree of a
  thousand nodes, hundreds of thousands of objects that all live until the answer, and with the collector on the
  older generations were walked again and again (half of the tree page's time after a change). What a request
  leaves is collected by the first automatic collection after it; the pages' memos on the request (``_fairway_…``)
  are dropped when the answer is out, so that the values and trees they hold do not wait for the collector with it.
* ``SQLiteReadsMiddleware`` (the embedded SQLite only): the transaction of a GET, HEAD or OPTIONS request
  (``ATOMIC_REQUESTS``) begins ``DEFERRED`` instead of the settings' ``IMMEDIATE``, so a page reads in WAL's
  snapshot without the database's write lock: it neither waits behind a scheduling session (whose transaction holds
  that lock from its read to its commit) nor holds up the worker.
* ``DatabaseUnavailableMiddleware``: a view that cannot reach the database (``OperationalError`` /
  ``InterfaceError``, the transaction of ``ATOMIC_REQUESTS`` included) answers 503 with ``Retry-After``; one raised
  by a middleware reaches ``core.errors.server_error``, which answers the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from core.errors import (
    DATABASE_ERRORS,
    bad_request,
    database_unavailable,
    over_budget,
    reference_gone,
    too_large,
)
from engine import collector
from engine.limits import ENV_VARS, BudgetExceeded

# Big routes: URL name -> the limit (a field of settings.FAIRWAY_LIMITS) that replaces max_body_bytes there.
LARGE_BODY_ROUTES = {"simulate": "simulate_max_body_bytes"}
# A refused body up to this size is read and dropped before the answer, so that the client, still sending, reads
# the 413 instead of a reset connection; a bigger one is not read at all (the connection closes after the answer).
DRAIN_BYTES = 64 * 2**20


class CollectorPausedMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with collector.paused():
            try:
                return self.get_response(request)
            finally:
                forget_request_memos(request)


REQUEST_MEMO_PREFIX = "_fairway_"


def forget_request_memos(request: HttpRequest) -> None:
    """Drop what the pages memoised on ``request`` (attributes named ``_fairway_…``: the cluster, the state with its
    snapshot, values and trees, the switcher's list of clusters). A request sits in reference cycles (the messages'
    storage points back at it), so it is freed by the cyclic collector, not by reference counting: what hung from
    it (a set of values that the next change replaces in the cache, some 30,000 objects for a 1,000-queue tree)
    was moved to the collector's older generation and walked there by the next generation-1 pass, 100-150 ms in one
    request in ten. Dropped here, it is freed as soon as the cache lets go of it."""
    for name in [name for name in vars(request) if name.startswith(REQUEST_MEMO_PREFIX)]:
        delattr(request, name)


class SQLiteReadsMiddleware:
    """On SQLite, a request with a safe method opens its transaction ``DEFERRED``: it takes a read snapshot and no
    lock (WAL), so it never waits for the worker's session, however long that runs. A write in such a request
    (rare: none of the pages or the API's reads write) takes the write lock when it comes; if another writer
    committed since the request began reading, SQLite refuses it ("database is locked": a 503 with
    ``Retry-After``). Writes (POST, PUT, PATCH, DELETE) keep ``IMMEDIATE``: they wait for the lock at ``BEGIN``."""

    SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method not in self.SAFE_METHODS or connection.vendor != "sqlite":
            return self.get_response(request)
        connection.ensure_connection()  # connecting sets the mode from the settings
        mode = connection.transaction_mode
        connection.transaction_mode = "DEFERRED"
        try:
            return self.get_response(request)
        finally:
            connection.transaction_mode = mode


STARTED_ATTRIBUTE = "fairway_started"


def request_started(request: Any) -> float | None:
    """When the request came in (``time.monotonic()``, stamped by ``RequestLimitsMiddleware``), for budgets that
    count the time spent reading and parsing it; ``None`` when no middleware stamped it (a test's bare request)."""
    started = getattr(request, STARTED_ATTRIBUTE, None)
    return started if isinstance(started, float) else None


class RequestLimitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        setattr(request, STARTED_ATTRIBUTE, time.monotonic())  # the request budget counts from here
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            # no name or filter can hold one (PostgreSQL text cannot): refused before any lookup reaches the database
            return bad_request(request, "A null character (%00) in the URL cannot match anything.")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:  # Django reads no body then
            length = 0
        limits = settings.FAIRWAY_LIMITS
        if length > limits.max_body_bytes:
            field = self._route_limit(request)
            limit = getattr(limits, field)
            if length > limit:
                self._drain(request, length)
                return too_large(
                    request,
                    f"The request body is {length} bytes; this endpoint accepts at most {limit} ({ENV_VARS[field]}).",
                )
        return self.get_response(request)

    @staticmethod
    def _route_limit(request: HttpRequest) -> str:
        try:
            name = resolve(request.path_info).url_name
        except Resolver404:
            name = None
        if request.method == "POST" and name in LARGE_BODY_ROUTES:
            return LARGE_BODY_ROUTES[name]
        return "max_body_bytes"

    @staticmethod
    def _drain(request: HttpRequest, length: int) -> None:
        if length > DRAIN_BYTES:
            return
        stream = request.META.get("wsgi.input")
        if stream is None:
            return
        left = length
        try:
            while left > 0:
                chunk = stream.read(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:  # the client went away
            pass


class DatabaseUnavailableMiddleware:
    """503 for a view that cannot reach the database; and for a page (the API's views answer through DRF's
    exception handler) whose computation ran past its budget, 422 with the message."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DATABASE_ERRORS):
            return database_unavailable(request)
        if isinstance(exception, BudgetExceeded):
            return over_budget(request, str(exception))
        if isinstance(exception, IntegrityError) and _foreign_key_violation(exception):
            return reference_gone(request)
        return None


def _foreign_key_violation(exc: IntegrityError) -> bool:
    """PostgreSQL's SQLSTATE 23503, or SQLite's message (it has no codes for constraints)."""
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) == "23503":
        return True
    return "FOREIGN KEY constraint failed" in str(exc)
