"""Probes for whatever runs the processes (Kubernetes, docker compose, a load balancer).

``/healthz`` is liveness: the process answers requests. It touches nothing else, so a database outage does not get
every web replica restarted at once. ``/readyz`` is readiness: the database answers and every migration the code
knows is applied, so a replica started before the migration Job finished gets no traffic. Both need no login and
send no cookie; a probe that names no host still gets an answer (see ``HealthHostMiddleware`` below).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

__all__ = ["PATHS", "HealthHostMiddleware", "healthz", "readyz"]

PATHS = frozenset({"/healthz", "/readyz"})

# Once every migration is seen applied, later probes of this process only check that the database answers: the
# code of a running process cannot gain migrations.
_migrated = False


@never_cache
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> HttpResponse:
    global _migrated
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        if not _migrated:
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
            if pending:
                names = ", ".join(f"{m.app_label}.{m.name}" for m, _ in pending[:5])
                more = f" and {len(pending) - 5} more" if len(pending) > 5 else ""
                return JsonResponse(
                    {"status": "unready", "reason": f"{len(pending)} migrations not applied yet: {names}{more}"},
                    status=503,
                    headers={"Retry-After": "5"},
                )
            _migrated = True
    except DatabaseError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return JsonResponse(
            {"status": "unready", "reason": f"the database does not answer: {reason}"},
            status=503,
            headers={"Retry-After": "5"},
        )
    return JsonResponse({"status": "ok"})


class HealthHostMiddleware:
    """Lets the probes through whatever Host header they carry.

    A kubelet's HTTP probe sends the pod's IP as its Host, which ``ALLOWED_HOSTS`` rightly refuses for every real
    page. The probes reveal nothing, so they are answered here, before ``CommonMiddleware`` checks the host.
    """

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        path = request.path_info.rstrip("/")
        if path == "/healthz":
            return healthz(request)
        if path == "/readyz":
            return readyz(request)
        return self.get_response(request)
