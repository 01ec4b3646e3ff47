"""The security log: one line per event on the ``fairway.security`` logger (docs/security.md), and one row
(``SecurityEvent``, ``security.records``) that admins list on the Security page and the API.

Each line is ``<event> key=value …`` with the client address and the path when there is a request; the values are
quoted when they hold spaces. No secret is ever passed here (a token appears as its prefix)."""

from __future__ import annotations

import logging
from typing import Any

from security import records

logger = logging.getLogger("fairway.security")

WARNINGS = frozenset({"login_failed", "lockout", "token_refused", "token_throttled", "token_scope_refused"})


def client_ip(request: Any) -> str:
    meta = getattr(request, "META", None) or {}
    return str(meta.get("REMOTE_ADDR") or "-")


def security_event(event: str, request: Any = None, **fields: Any) -> None:
    """Writes one event to the security log and stores it (``security.records.record``: after the request, and a
    failed write is logged, never raised)."""
    if request is not None:
        fields = {"ip": client_ip(request), "path": getattr(request, "path", "-"), **fields}
    line = " ".join([event, *(f"{key}={records.value_text(value)}" for key, value in fields.items())])
    level = logging.WARNING if event in WARNINGS else logging.INFO
    logger.log(level, line, extra={"security_event": event, "security_fields": fields})
    records.record(event, request if request is not None else records.current_request(), fields)
