"""API tokens (only a short prefix, for lookup and display, and the SHA-256 of the whole key are stored) and the
security log's events."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from security.choices import SecurityEventKind, SecurityOutcome

PREFIX_LENGTH = 12
KEY_MARK = "fw_"  # every key starts so: recognisable (secret scanners), and never with a dash (a CLI flag)


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def live(self) -> ApiTokenQuerySet:
        """Tokens that have not expired."""
        return self.filter(expires__gt=timezone.now())


class ApiToken(models.Model):
    """One API key of a user, sent as ``Authorization: Token <key>``. The key itself is shown once, when it is
    created (``security.tokens.create_token``); the database keeps its first characters and its SHA-256 digest."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, as its owner named it.")
    prefix = models.CharField(max_length=PREFIX_LENGTH, db_index=True, help_text="The key's first characters.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key (hex).")
    read_only = models.BooleanField(default=False, help_text="Only safe methods (GET, HEAD, OPTIONS).")
    created = models.DateTimeField(default=timezone.now)
    expires = models.DateTimeField()
    last_used = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def expired(self) -> bool:
        return self.expires <= timezone.now()

    @property
    def scope(self) -> str:
        return "read-only" if self.read_only else "read-write"


class SecurityEvent(models.Model):
    """One event of the security log (docs/security.md): a login, a failure, a lockout, a token made, refused or
    revoked, an admin change. Written with its line on the ``fairway.security`` logger (``security.log``), kept
    ``FAIRWAY_SECURITY_EVENT_RETENTION_DAYS``; never a password or a key (a token appears as its prefix)."""

    time = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(
        max_length=150, db_index=True, help_text="Who acted: a username, or 'anonymous' (not signed in)."
    )
    remote_address = models.CharField(
        max_length=64, blank=True, default="", help_text="The client's address (REMOTE_ADDR); empty outside a request."
    )
    kind = models.CharField(max_length=32, choices=SecurityEventKind.choices, db_index=True)
    target = models.CharField(
        max_length=255,
        blank=True,
        default="",
        help_text="What it was about: the username tried, the token, the admin's object, the path refused.",
    )
    outcome = models.CharField(max_length=16, choices=SecurityOutcome.choices)
    detail = models.TextField(blank=True, default="", help_text="The rest of the log line (key=value ...).")

    class Meta:
        ordering = ["-time", "-id"]
        indexes = [models.Index(fields=["kind", "-time"], name="security_event_kind_time")]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.kind} {self.actor} {self.target}".rstrip()
