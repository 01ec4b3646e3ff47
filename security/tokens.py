"""The one place API tokens are made, checked and revoked.

A key is ``fw_`` and 43 URL-safe characters from 32 random bytes (``secrets``); the database keeps its first
``PREFIX_LENGTH`` characters in clear (lookup, display) and its SHA-256. Tokens are high-entropy, so a fast hash is
enough; the lookup goes by prefix and compares digests in constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from core.advisory import after_commit
from security.log import security_event
from security.models import KEY_MARK, PREFIX_LENGTH, ApiToken


class TokenRefused(Exception):
    """A key that authenticates nobody; the message says why, in a sentence (never quoting the key)."""


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def lifetime_days(days: int | None) -> int:
    """The lifetime a new token gets: ``days`` (validated), else the default (``FAIRWAY_TOKEN_LIFETIME_DAYS``)."""
    limit = settings.FAIRWAY["TOKEN_MAX_LIFETIME_DAYS"]
    if days is None:
        return min(settings.FAIRWAY["TOKEN_LIFETIME_DAYS"], limit)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= limit:
        raise ValidationError({"expires_in_days": f"must be a whole number of days between 1 and {limit}"})
    return days


def create_token(
    user: Any, name: str, *, days: int | None = None, read_only: bool = False, request: Any = None
) -> tuple[ApiToken, str]:
    """A new token of ``user``; returns the row and the key, which is shown once and never stored."""
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "a token needs a name (what it is for)"})
    if len(name) > ApiToken._meta.get_field("name").max_length:
        raise ValidationError({"name": "must be at most 100 characters"})
    lifetime = lifetime_days(days)
    key = KEY_MARK + secrets.token_urlsafe(32)
    now = timezone.now()
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=key[:PREFIX_LENGTH],
        digest=digest(key),
        read_only=read_only,
        created=now,
        expires=now + dt.timedelta(days=lifetime),
    )
    security_event(
        "token_created",
        request,
        user=user.get_username(),
        token=token.prefix,
        name=name,
        scope=token.scope,
        expires=token.expires.isoformat(),
    )
    return token, key


def revoke_token(token: ApiToken, *, request: Any = None) -> None:
    """Deletes the token; requests bearing it are refused from now on."""
    security_event("token_revoked", request, user=token.user.get_username(), token=token.prefix, name=token.name)
    token.delete()


def find_token(key: str) -> ApiToken:
    """The live token whose key is ``key``, or ``TokenRefused`` with the reason."""
    wanted = digest(key)
    found = None
    for candidate in ApiToken.objects.select_related("user").filter(prefix=key[:PREFIX_LENGTH]):
        if hmac.compare_digest(candidate.digest, wanted):
            found = candidate
    if found is None:
        raise TokenRefused("Invalid token.")
    if found.expired:
        raise TokenRefused(
            f"This token ({found.prefix}…, {found.name!r}) expired on {found.expires:%Y-%m-%d %H:%M} UTC; "
            "create a new one on the dashboard's Tokens page."
        )
    if not found.user.is_active:
        raise TokenRefused("The user of this token is inactive or deleted.")
    return found


def mark_used(token: ApiToken) -> None:
    """Records when the token was last used, at most once per ``FAIRWAY_TOKEN_LAST_USED_SECONDS`` (a conditional
    update: no write at all on most requests).

    The write runs after the request's transaction commits (``on_commit``), in a statement of its own, so that the
    row lock is not held for the whole request (other requests with the same token never wait for it) and a reading
    request on SQLite stays a read. The mark is advisory: a write the database refuses at that moment (a locked
    SQLite, without waiting) is skipped rather than failing or slowing the request."""
    now = timezone.now()
    every = dt.timedelta(seconds=settings.FAIRWAY["TOKEN_LAST_USED_SECONDS"])
    if token.last_used is not None and now - token.last_used < every:
        return
    pk = token.pk

    def write() -> None:
        ApiToken.objects.filter(pk=pk).exclude(last_used__gt=now - every).update(last_used=now)

    after_commit(write, "a token's last use")
    token.last_used = now
