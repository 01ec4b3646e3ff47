"""The authentication backend of OpenID Connect sign-in: mozilla-django-oidc's authorization-code flow (token
request, ID token verified against the provider's JWKS, nonce, PKCE), with Fairway's account linking and roles."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from identity import provider
from identity.mapping import groups_of, sync_roles
from identity.models import OidcIdentity
from security.log import security_event


class SignInRefused(SuspiciousOperation):
    """The provider's answer cannot be trusted; the message is a sentence for the person signing in."""


_NOT_IN_USERNAME = re.compile(r"[^\w.@+-]")


class OidcBackend(OIDCAuthenticationBackend):
    """Signs in the user of an authorization-code callback (``identity.views.Callback``); every other
    ``authenticate`` call (a local login) passes through untouched."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Django builds a backend for every authenticate() and for every request's session user: no endpoint is
        # resolved here (mozilla-django-oidc's own __init__ would read them all).
        self.UserModel = get_user_model()

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return provider.setting(attr, *args)

    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        if request is None or not provider.enabled() or "nonce" not in kwargs or "username" in kwargs:
            return None
        endpoints = provider.endpoints()
        self.endpoints = endpoints
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
        self.OIDC_RP_CLIENT_ID = provider.setting("OIDC_RP_CLIENT_ID")
        self.OIDC_RP_CLIENT_SECRET = provider.setting("OIDC_RP_CLIENT_SECRET", "")
        self.OIDC_RP_SIGN_ALGO = provider.setting("OIDC_RP_SIGN_ALGO", "RS256")
        self.OIDC_RP_IDP_SIGN_KEY = None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> Any:
        """The library checks the signature against the provider's JWKS, the algorithm and the nonce; this adds the
        issuer and the audience (an ID token issued by another provider, or to another client, is refused)."""
        try:
            payload = super().verify_token(token, **kwargs)
        except SuspiciousOperation as exc:
            raise SignInRefused(
                f"the identity provider's ID token did not verify ({str(exc).rstrip('.')}): it was not signed with "
                "a key the provider publishes, or it is not the answer to this sign-in"
            ) from None
        if payload.get("iss") != self.endpoints.issuer:
            raise SignInRefused(f"the ID token was issued by {payload.get('iss')!r}, not by {self.endpoints.issuer!r}")
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.OIDC_RP_CLIENT_ID not in audiences:
            raise SignInRefused("the ID token was issued to another client, not to this Fairway")
        return payload

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        """The account linked to the token's (issuer, subject), created on the first sign-in, with its name, e-mail
        and roles synced from the claims (the ID token's and the userinfo endpoint's; userinfo wins)."""
        userinfo = self.get_userinfo(access_token, id_token, payload)
        subject = payload.get("sub")
        if not subject or userinfo.get("sub", subject) != subject:
            raise SuspiciousOperation("the userinfo answer is about another subject than the ID token")
        claims = {**payload, **userinfo}
        cfg = provider.config()
        issuer = self.endpoints.issuer
        with transaction.atomic():
            identity = (
                OidcIdentity.objects.select_for_update().select_related("user").filter(issuer=issuer, subject=subject)
            ).first()
            if identity is None:
                user = self.UserModel.objects.create_user(self._free_username(claims, subject))
                identity = OidcIdentity.objects.create(user=user, issuer=issuer, subject=str(subject))
            user = identity.user
            self._update_profile(user, claims)
            groups = groups_of(claims, str(cfg.get("GROUPS_CLAIM") or "groups"))
            result = sync_roles(user, groups, provider.grants())
            identity.last_synced = timezone.now()
            identity.save(update_fields=["last_synced"])
        security_event(
            "roles_synced",
            self.request,
            user=user.get_username(),
            provider=issuer,
            admin="yes" if result.admin else "no",
            teams=",".join(result.teams) or "-",
            added=",".join(result.added) or "-",
            removed=",".join(result.removed) or "-",
            skipped="; ".join(result.skipped) or "-",
        )
        return user

    def _free_username(self, claims: dict[str, Any], subject: str) -> str:
        """A username for a new account: the username claim (``preferred_username``), else the e-mail's local part,
        else ``oidc-<subject>``; suffixed ``-2``, ``-3`` … when a local account already has it."""
        claim = str(provider.config().get("USERNAME_CLAIM") or "preferred_username")
        base = str(claims.get(claim) or str(claims.get("email") or "").partition("@")[0] or f"oidc-{subject}")
        base = _NOT_IN_USERNAME.sub("-", base)[:140] or "oidc-user"
        name, n = base, 1
        while self.UserModel.objects.filter(username__iexact=name).exists():
            n += 1
            name = f"{base}-{n}"
        return name

    @staticmethod
    def _update_profile(user: Any, claims: dict[str, Any]) -> None:
        fields = {
            "email": str(claims.get("email") or "")[:254],
            "first_name": str(claims.get("given_name") or "")[:150],
            "last_name": str(claims.get("family_name") or "")[:150],
        }
        changed = [name for name, value in fields.items() if getattr(user, name) != value]
        for name in changed:
            setattr(user, name, fields[name])
        if changed:
            user.save(update_fields=changed)
