"""Token authentication that also tells Django (and so the audit history) who the user is."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication
from rest_framework.request import Request


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token auth; the authenticated user is copied onto the underlying Django request so that
    django-simple-history records API changes with their author."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        result = super().authenticate(request)
        if result is not None:
            request._request.user = result[0]
        return result
