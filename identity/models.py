"""The link between a Fairway account and an identity at an OpenID Connect provider."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class OidcIdentity(models.Model):
    """One account's identity at an OpenID Connect provider: the issuer and the subject (``sub``) of its ID tokens.
    A sign-in finds its account by this pair only, never by username or e-mail, so an identity provider's user
    can never take over a local account (``admin``) that happens to share its name."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identity")
    issuer = models.CharField(max_length=255, help_text="The provider's issuer (the ID token's iss).")
    subject = models.CharField(max_length=255, help_text="The user's subject at that provider (the ID token's sub).")
    created = models.DateTimeField(default=timezone.now)
    last_synced = models.DateTimeField(null=True, blank=True, help_text="When a sign-in last synced its roles.")

    class Meta:
        verbose_name = "OpenID Connect identity"
        verbose_name_plural = "OpenID Connect identities"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="oidc_identity_issuer_subject")]

    def __str__(self) -> str:
        return f"{self.user} = {self.subject} at {self.issuer}"
