"""Error responses: JSON error pages for ``/api/`` (pages keep Django's HTML ones), the DRF exception handler, and the
answers to an unreachable database (503 with ``Retry-After``) and to a body over its limit (413).

Every API error has the drf-standardized-errors envelope ``{"type", "errors": [{"code", "detail", "attr"}]}``.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404
from django.utils.html import escape
from django.views import defaults
from drf_standardized_errors.handler import ExceptionHandler as StandardExceptionHandler
from rest_framework import exceptions, status

from core.tree_owner import TreesOwnedByCluster
from engine.limits import BudgetExceeded, LimitExceeded

# What a client is told to wait before it retries when the database cannot be reached (or the server is busy).
RETRY_AFTER_SECONDS = 5
DATABASE_ERRORS = (OperationalError, InterfaceError)
DATABASE_UNAVAILABLE = "The database cannot be reached at the moment; retry in a few seconds."


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def envelope(kind: str, code: str, detail: str, attr: str | None = None) -> dict[str, Any]:
    return {"type": kind, "errors": [{"code": code, "detail": detail, "attr": attr}]}


def _plain_page(title: str, detail: str, status_code: int) -> HttpResponse:
    body = f"<!doctype html><title>{escape(title)}</title><h1>{escape(title)}</h1><p>{escape(detail)}</p>\n"
    return HttpResponse(body, status=status_code, content_type="text/html; charset=utf-8")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404: the API's envelope, or the dashboard's page (``404.html``), which says what was not found when the view
    said it (``raise Http404("There is no queue named …")``): an unknown address has only the generic sentence."""
    if is_api(request):
        return JsonResponse(envelope("client_error", "not_found", "Not found."), status=404)
    reason = ""
    if isinstance(exception, Http404) and not isinstance(exception, Resolver404) and exception.args:
        reason = exception.args[0] if isinstance(exception.args[0], str) else ""
    try:
        return render(request, "404.html", {"reason": reason, "request_path": request.path}, status=404)
    except DATABASE_ERRORS:  # the page's menu reads the database: without it, the small page
        return _plain_page("Not found", reason or "This page does not exist.", 404)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with ``Retry-After``: JSON for the API, a small page (no template, no database) for the rest."""
    if is_api(request):
        response: HttpResponse = JsonResponse(
            envelope("server_error", "database_unavailable", DATABASE_UNAVAILABLE), status=503
        )
    else:
        response = _plain_page("Service unavailable", DATABASE_UNAVAILABLE, 503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def bad_request(request: HttpRequest, detail: str) -> HttpResponse:
    if is_api(request):
        return JsonResponse(envelope("client_error", "bad_request", detail), status=400)
    return _plain_page("Bad request", detail, 400)


def too_large(request: HttpRequest, detail: str) -> HttpResponse:
    if is_api(request):
        return JsonResponse(envelope("client_error", "request_too_large", detail), status=413)
    return _plain_page("Request too large", detail, 413)


REFERENCE_GONE = (
    "Something this request refers to (its cluster, queue or podgroup) was deleted while the request ran; nothing "
    "was written. Check that it still exists and try again."
)


def reference_gone(request: HttpRequest) -> HttpResponse:
    """409 for a write whose row lost what it points to between the checks and the commit (a foreign key that the
    database refused at commit): a concurrent delete won, not a server fault."""
    if is_api(request):
        return JsonResponse(envelope("client_error", "reference_deleted", REFERENCE_GONE), status=409)
    return _plain_page("Deleted meanwhile", REFERENCE_GONE, 409)


def over_budget(request: HttpRequest, detail: str) -> HttpResponse:
    if is_api(request):
        return JsonResponse(envelope("client_error", "budget_exceeded", detail), status=422)
    return _plain_page("Too much computation for one request", detail, 422)


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    # Django calls this while handling the exception: one raised by a middleware (a session saved to an unreachable
    # database, say) is still current here.
    if isinstance(sys.exc_info()[1], DATABASE_ERRORS):
        return database_unavailable(request)
    if is_api(request):
        return JsonResponse(envelope("server_error", "error", "Server error."), status=500)
    return defaults.server_error(request)


# -- DRF ------------------------------------------------------------------------------------------------------------
class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = DATABASE_UNAVAILABLE
    default_code = "database_unavailable"

    def __init__(self, detail: str | None = None, code: str | None = None) -> None:
        super().__init__(detail, code)
        self.wait = RETRY_AFTER_SECONDS  # DRF's handlers turn this into Retry-After


class Busy(ServiceUnavailable):
    default_detail = "The server is running as many simulations as it may at once; retry in a few seconds."
    default_code = "busy"


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than this endpoint accepts."
    default_code = "request_too_large"


class OverBudget(exceptions.APIException):
    """The computation ran past the request's wall-clock budget and was stopped (422: the same request would be
    stopped again; ask for less)."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "The request needed more computation than one request may use."
    default_code = "budget_exceeded"


class TreesReadOnly(exceptions.APIException):
    """A tree write while a Kubernetes cluster owns the trees (``core.tree_owner``): 409, naming it."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The trees are owned by a Kubernetes cluster."
    default_code = "trees_owned_by_cluster"


class ExceptionHandler(StandardExceptionHandler):
    """drf-standardized-errors' handler, with the failures that are not the server's fault mapped to their status:
    an unreachable database (503, ``Retry-After``), a body over the limit (413), a limit or a budget (400, 422)."""

    def convert_known_exceptions(self, exc: Exception) -> Exception:
        if isinstance(exc, DATABASE_ERRORS):
            return ServiceUnavailable()
        if isinstance(exc, RequestDataTooBig):
            return RequestTooLarge()
        if isinstance(exc, BudgetExceeded):
            return OverBudget(f"{exc}; ask for less (fewer sessions, a smaller snapshot or proposal)")
        if isinstance(exc, TreesOwnedByCluster):
            return TreesReadOnly(str(exc))
        if isinstance(exc, LimitExceeded):
            return exceptions.ValidationError({exc.field or "non_field_errors": [exc.message]})
        return super().convert_known_exceptions(exc)
