"""The kinds of security events and their outcomes (``security.models.SecurityEvent``)."""

from __future__ import annotations

from django.db import models


class SecurityEventKind(models.TextChoices):
    LOGIN = "login", "login"
    LOGOUT = "logout", "logout"
    LOGIN_FAILED = "login_failed", "login failed"
    LOCKOUT = "lockout", "lockout (too many failed logins)"
    TOKEN_CREATED = "token_created", "token created"
    TOKEN_REVOKED = "token_revoked", "token revoked"
    TOKEN_REFUSED = "token_refused", "token refused (bad, expired or malformed)"
    TOKEN_THROTTLED = "token_throttled", "token requests throttled"
    TOKEN_SCOPE_REFUSED = "token_scope_refused", "read-only token refused a write"
    ADMIN_CHANGE = "admin_change", "admin change"
    ROLES_SYNCED = "roles_synced", "roles synced at a sign-in with OpenID Connect"


class SecurityOutcome(models.TextChoices):
    SUCCESS = "success", "success"
    FAILURE = "failure", "failure"  # wrong credentials
    REFUSED = "refused", "refused"  # right or wrong, turned away by a limit (lockout, throttle, scope)


OUTCOMES: dict[str, str] = {
    SecurityEventKind.LOGIN_FAILED: SecurityOutcome.FAILURE,
    SecurityEventKind.TOKEN_REFUSED: SecurityOutcome.FAILURE,
    SecurityEventKind.LOCKOUT: SecurityOutcome.REFUSED,
    SecurityEventKind.TOKEN_THROTTLED: SecurityOutcome.REFUSED,
    SecurityEventKind.TOKEN_SCOPE_REFUSED: SecurityOutcome.REFUSED,
}  # every other kind: success
