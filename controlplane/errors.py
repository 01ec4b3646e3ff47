"""JSON error pages for ``/api/`` (pages keep Django's HTML ones)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"type": "client_error", "errors": [{"code": "not_found", "detail": "Not found.", "attr": None}]},
            status=404,
        )
    return defaults.page_not_found(request, exception)  # type: ignore[arg-type]


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"type": "server_error", "errors": [{"code": "error", "detail": "Server error.", "attr": None}]},
            status=500,
        )
    return defaults.server_error(request)
