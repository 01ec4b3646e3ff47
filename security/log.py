"""The security log: one line per event on the ``fairway.security`` logger (README, "Security").

Each line is ``<event> key=value …`` with the client address and the path when there is a request; the values are
quoted when they hold spaces. No secret is ever passed here (a token appears as its prefix)."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("fairway.security")

WARNINGS = frozenset({"login_failed", "lockout", "token_refused", "token_throttled", "token_scope_refused"})


def client_ip(request: Any) -> str:
    meta = getattr(request, "META", None) or {}
    return str(meta.get("REMOTE_ADDR") or "-")


def _value(value: Any) -> str:
    text = str(value)
    return repr(text) if (not text or any(c.isspace() or c in "\"'=" for c in text)) else text


def security_event(event: str, request: Any = None, **fields: Any) -> None:
    """Writes one event to the security log."""
    if request is not None:
        fields = {"ip": client_ip(request), "path": getattr(request, "path", "-"), **fields}
    line = " ".join([event, *(f"{key}={_value(value)}" for key, value in fields.items())])
    level = logging.WARNING if event in WARNINGS else logging.INFO
    logger.log(level, line, extra={"security_event": event, "security_fields": fields})
