"""``Authorization: Token <key>`` for the API, on ``security.models.ApiToken``: hashed keys, expiry, read-only
scope, throttled failures, and every refusal in the security log."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from security import throttle
from security.log import client_ip, security_event
from security.models import ApiToken
from security.tokens import TokenRefused, find_token, mark_used

KEYWORD = "Token"


class TokenThrottled(exceptions.Throttled):
    default_detail = "Too many requests with an invalid token from your address."

    def __init__(self, wait: int) -> None:
        super().__init__(
            wait=wait,
            detail=f"Too many requests with an invalid token from your address: try again in {wait} seconds.",
        )


def key_from_header(header: str) -> str | None:
    """The key of an ``Authorization: Token <key>`` header, None for another scheme; a malformed one is refused."""
    parts = header.split()
    if not parts or parts[0].lower() != KEYWORD.lower():
        return None
    if len(parts) != 2:
        raise TokenRefused("Invalid token header: send 'Authorization: Token <key>' with the key and no spaces.")
    return parts[1]


def authenticate_key(request: Any, header: str) -> tuple[Any, ApiToken] | None:
    """The user and token of a ``Token`` header (None for no such header), for the API and for ``/metrics``.

    Raises ``TokenThrottled`` while the client's address is blocked, ``TokenRefused`` for a bad key."""
    ip = client_ip(request)
    try:
        key = key_from_header(header)
        if key is None:
            return None
        wait = throttle.retry_after(ip)
        if wait is not None:
            security_event("token_throttled", request, retry_after=wait)
            raise TokenThrottled(wait)
        token = find_token(key)
    except TokenRefused as refused:
        throttle.record_failure(ip)
        security_event("token_refused", request, reason=str(refused))
        raise
    mark_used(token)
    return token.user, token


class TokenAuthentication(authentication.TokenAuthentication):
    """API tokens; the authenticated user is also set on the underlying Django request so that
    django-simple-history records API changes with their author. A read-only token may only read (403 with a
    sentence on POST, PUT, PATCH, DELETE). DRF's class is the base only for its ``Token`` keyword (and the OpenAPI
    security scheme drf-spectacular gives it); its lookup of ``rest_framework.authtoken`` is never used."""

    keyword = KEYWORD

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        try:
            result = authenticate_key(request._request, header)
        except TokenRefused as refused:
            raise exceptions.AuthenticationFailed(str(refused)) from None
        if result is None:
            return None
        user, token = result
        if token.read_only and request.method not in SAFE_METHODS:
            security_event("token_scope_refused", request._request, user=user.get_username(), token=token.prefix)
            raise exceptions.PermissionDenied(
                f"This token ({token.prefix}…) is read-only: it may only read (GET, HEAD, OPTIONS), not "
                f"{request.method}. Use a read-write token to change anything."
            )
        request._request.user = user
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return KEYWORD
