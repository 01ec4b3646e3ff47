"""The security log's rows (``SecurityEvent``): every event ``security.log.security_event`` writes to the
``fairway.security`` logger is also stored, so that admins can list and filter it (the Security page, ``GET
/api/v1/security-events/``) without access to the servers' logs.

**A failed write never fails what it records.** Inside a request the rows wait on the request and are written by
``SecurityEventsMiddleware`` after the view has returned, outside its transaction (``ATOMIC_REQUESTS``): a refused
token's 401 rolls the view's transaction back, and its event must outlive that; a failing insert cannot break the
login's own transaction either. Outside a request (a management command, a shell) the row is written at once, in a
savepoint when a transaction is open. Any error of the write is logged (the event's line is already in the log) and
swallowed.

``token_throttled`` is stored once per client address and throttle window (every refused request still gets its
log line): a blocked guesser does not turn each of its requests into a row."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from engine.wording import plural

logger = logging.getLogger("fairway.security")

PENDING = "_fairway_security_events"  # the request attribute the middleware flushes
ACTING_KINDS = frozenset(
    {"login", "logout", "token_created", "token_revoked", "token_scope_refused", "admin_change", "roles_synced"}
)
THROTTLED_KEY = "fairway:security-throttled:{ip}"
_TARGET_LENGTH = 255


def _username(user: Any) -> str:
    if user is None or not getattr(user, "is_authenticated", False):
        return ""
    return str(user.get_username())


def _address(request: Any) -> str:
    meta = getattr(request, "META", None) or {}
    return str(meta.get("REMOTE_ADDR") or "")


def current_request() -> Any:
    """The request being handled in this thread, as django-simple-history's middleware keeps it (for the events
    whose signal carries none: the admin's ``LogEntry``); None outside a request."""
    from simple_history.models import HistoricalRecords

    return getattr(HistoricalRecords.context, "request", None)


def value_text(value: Any) -> str:
    """A value of a log line: quoted when it is empty or holds spaces, quotes or '='."""
    text = str(value)
    return repr(text) if (not text or any(c.isspace() or c in "\"'=" for c in text)) else text


def row_of(event: str, request: Any, fields: Mapping[str, Any], now: dt.datetime) -> dict[str, Any]:
    """The stored fields of one event: the actor is the signed-in user of the request, else the user the event names
    when that user is the one acting (a login, a token made or revoked, an admin change), else ``anonymous``."""
    from security.choices import OUTCOMES, SecurityOutcome

    named = str(fields.get("user") or "")
    named = "" if named == "-" else named  # "-": the log line's "nobody"
    actor = _username(getattr(request, "user", None)) or (named if event in ACTING_KINDS else "") or "anonymous"
    if event in ("login", "logout", "login_failed", "lockout", "roles_synced"):
        target, used = named, {"user", "ip", "path"}
    elif event in ("token_created", "token_revoked", "token_scope_refused"):
        name = f" ({fields['name']!r})" if fields.get("name") else ""
        target, used = f"token {fields.get('token', '?')}…{name} of {named or '?'}", {"user", "token", "name", "ip"}
    elif event == "admin_change":
        target = f"{fields.get('model', '-')} {fields.get('object_id', '-')} ({fields.get('object', '')})"
        used = {"user", "model", "object_id", "object", "ip"}
    else:  # a refused or throttled token: what it asked for
        target, used = str(fields.get("path") or ""), {"ip", "path"}
    detail = " ".join(f"{key}={value_text(value)}" for key, value in fields.items() if key not in used)
    return {
        "time": now,
        "actor": actor[:150],
        "remote_address": str(fields.get("ip") or _address(request)).strip("-")[:64],
        "kind": event,
        "target": target[:_TARGET_LENGTH],
        "outcome": OUTCOMES.get(event, SecurityOutcome.SUCCESS),
        "detail": detail,
    }


def _worth_storing(event: str, fields: Mapping[str, Any]) -> bool:
    if event != "token_throttled":
        return True
    window = int(settings.FAIRWAY["TOKEN_FAILURE_WINDOW_SECONDS"])
    try:
        return bool(cache.add(THROTTLED_KEY.format(ip=fields.get("ip", "-")), 1, timeout=window))
    except Exception:  # the cache is down: store it (the throttle itself then counts nothing either)
        return True


def record(event: str, request: Any, fields: Mapping[str, Any]) -> None:
    """Store one event: after the request when there is one the middleware handles, else now. Never raises."""
    try:
        if not _worth_storing(event, fields):
            return
        row = row_of(event, request, fields, timezone.now())
        pending = getattr(request, PENDING, None) if request is not None else None
        if pending is not None:
            pending.append(row)
        else:
            write([row])
    except Exception:
        logger.exception("security event %s not stored (it is in this log)", event)


def write(rows: list[dict[str, Any]]) -> None:
    """Insert the rows, in a savepoint when a transaction is open; any error is logged, never raised."""
    if not rows:
        return
    from security.models import SecurityEvent

    try:
        with transaction.atomic():
            SecurityEvent.objects.bulk_create([SecurityEvent(**row) for row in rows])
    except Exception:
        logger.exception("%s not stored (they are in this log)", plural(len(rows), "security event"))


def prune(now: dt.datetime) -> int:
    """Delete the events older than ``FAIRWAY_SECURITY_EVENT_RETENTION_DAYS``; returns how many went."""
    from security.models import SecurityEvent

    days = int(settings.FAIRWAY["SECURITY_EVENT_RETENTION_DAYS"])
    deleted, _ = SecurityEvent.objects.filter(time__lt=now - dt.timedelta(days=days)).delete()
    return deleted


class SecurityEventsMiddleware:
    """Collects the request's security events (``record``) and stores them once the view has returned, outside the
    view's transaction, whatever the answer (a 401 or a 500 included)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        setattr(request, PENDING, [])
        try:
            return self.get_response(request)
        finally:
            rows = getattr(request, PENDING, None) or []
            setattr(request, PENDING, None)  # anything later is written at once
            write(rows)
