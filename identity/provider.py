"""The configured OpenID Connect provider (``settings.FAIRWAY_OIDC``, from the ``FAIRWAY_OIDC_*`` variables): whether
sign-in is on, its endpoints (from the provider's discovery document, each overridable), and the ``OIDC_*`` settings
mozilla-django-oidc asks for, answered from that one place."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from identity.mapping import Grant, GroupMapError, parse_group_map

logger = logging.getLogger(__name__)
WELL_KNOWN = "/.well-known/openid-configuration"
SIGN_ALGOS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512")


class ProviderError(Exception):
    """The provider's discovery document cannot be had or lacks an endpoint (the message says which)."""


def config() -> dict[str, Any]:
    return dict(getattr(settings, "FAIRWAY_OIDC", {}) or {})


def enabled() -> bool:
    """Sign-in with OpenID Connect is on when a client id is configured (``FAIRWAY_OIDC_CLIENT_ID``)."""
    return bool(config().get("CLIENT_ID"))


def provider_name() -> str:
    return str(config().get("PROVIDER_NAME") or "single sign-on")


def grants() -> tuple[Grant, ...]:
    return parse_group_map(str(config().get("GROUP_MAP") or ""))


def check_settings() -> None:
    """Raises ``ImproperlyConfigured`` naming the variable when sign-in is on and a setting cannot work."""
    cfg = config()
    if not enabled():
        return
    if not (cfg.get("ISSUER") or cfg.get("DISCOVERY_URL")):
        raise ImproperlyConfigured(
            "FAIRWAY_OIDC_CLIENT_ID is set but neither FAIRWAY_OIDC_ISSUER nor FAIRWAY_OIDC_DISCOVERY_URL is: "
            "name the identity provider's issuer (its discovery document is read from <issuer>" + WELL_KNOWN + ")."
        )
    if cfg.get("SIGN_ALGO", "RS256") not in SIGN_ALGOS:
        raise ImproperlyConfigured(
            f"FAIRWAY_OIDC_SIGN_ALGO is {cfg.get('SIGN_ALGO')!r}; it is one of {', '.join(SIGN_ALGOS)} "
            "(ID tokens signed with the provider's published keys)."
        )
    if "openid" not in str(cfg.get("SCOPES", "")).split():
        raise ImproperlyConfigured("FAIRWAY_OIDC_SCOPES must include openid.")
    if int(cfg.get("TIMEOUT_SECONDS", 10)) < 1:
        raise ImproperlyConfigured("FAIRWAY_OIDC_TIMEOUT_SECONDS must be a whole number of seconds, at least 1.")
    if int(cfg.get("DISCOVERY_CACHE_SECONDS", 3600)) < 0:
        raise ImproperlyConfigured("FAIRWAY_OIDC_DISCOVERY_CACHE_SECONDS must be a whole number of seconds, 0 or more.")
    try:
        grants()
    except GroupMapError as exc:
        raise ImproperlyConfigured(str(exc)) from None


@dataclass(frozen=True)
class Endpoints:
    issuer: str
    authorization: str
    token: str
    userinfo: str
    jwks: str


def _discovery(url: str) -> dict[str, Any]:
    key = f"identity:oidc-discovery:{url}"
    document = cache.get(key)
    if document is None:
        import requests  # here, not at the top: every process imports this module at start-up (``IdentityConfig``)

        try:
            response = requests.get(url, timeout=config().get("TIMEOUT_SECONDS", 10))
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as exc:
            logger.warning("OpenID Connect discovery document %s not read: %s", url, exc)
            raise ProviderError(
                f"the identity provider's discovery document {url} could not be read ({type(exc).__name__})"
            ) from None
        if not isinstance(document, dict):
            raise ProviderError(f"the identity provider's discovery document {url} is not a JSON object")
        cache.set(key, document, config().get("DISCOVERY_CACHE_SECONDS", 3600))
    return document


def endpoints() -> Endpoints:
    """The provider's issuer and endpoints: each explicit ``FAIRWAY_OIDC_*`` value, else the discovery document's
    (read from ``FAIRWAY_OIDC_DISCOVERY_URL`` or ``<issuer>/.well-known/openid-configuration`` and cached
    ``FAIRWAY_OIDC_DISCOVERY_CACHE_SECONDS``). The discovery document's issuer must be the configured one."""
    cfg = config()
    explicit = {
        "authorization_endpoint": cfg.get("AUTHORIZATION_ENDPOINT") or "",
        "token_endpoint": cfg.get("TOKEN_ENDPOINT") or "",
        "userinfo_endpoint": cfg.get("USERINFO_ENDPOINT") or "",
        "jwks_uri": cfg.get("JWKS_URI") or "",
    }
    issuer = str(cfg.get("ISSUER") or "")
    found: dict[str, Any] = {}
    if not (issuer and all(explicit.values())):
        url = cfg.get("DISCOVERY_URL") or issuer.rstrip("/") + WELL_KNOWN
        found = _discovery(url)
        if issuer and found.get("issuer") != issuer:
            raise ProviderError(
                f"the discovery document {url} names the issuer {found.get('issuer')!r}, not FAIRWAY_OIDC_ISSUER "
                f"{issuer!r}"
            )
        issuer = issuer or str(found.get("issuer") or "")
    values = {name: value or str(found.get(name) or "") for name, value in explicit.items()}
    missing = [name for name, value in values.items() if not value]
    if not issuer:
        missing.insert(0, "issuer")
    if missing:
        raise ProviderError(f"the identity provider's configuration lacks {', '.join(missing)}")
    return Endpoints(
        issuer,
        values["authorization_endpoint"],
        values["token_endpoint"],
        values["userinfo_endpoint"],
        values["jwks_uri"],
    )


# mozilla-django-oidc's setting -> ours (keys of FAIRWAY_OIDC), or a fixed answer
_MAPPED = {
    "OIDC_RP_CLIENT_ID": "CLIENT_ID",
    "OIDC_RP_CLIENT_SECRET": "CLIENT_SECRET",
    "OIDC_RP_SIGN_ALGO": "SIGN_ALGO",
    "OIDC_RP_SCOPES": "SCOPES",
    "OIDC_TIMEOUT": "TIMEOUT_SECONDS",
    "OIDC_USE_PKCE": "USE_PKCE",
}
_FIXED: dict[str, Any] = {
    "OIDC_CREATE_USER": True,
    "OIDC_USE_NONCE": True,
    "OIDC_ALLOW_UNSECURED_JWT": False,  # never alg=none
    "OIDC_RP_IDP_SIGN_KEY": None,  # the keys come from the provider's JWKS
    "OIDC_VERIFY_SSL": True,
    "OIDC_STORE_ACCESS_TOKEN": False,
    "OIDC_STORE_ID_TOKEN": False,
    "OIDC_PROXY": None,
}
_ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization",
    "OIDC_OP_TOKEN_ENDPOINT": "token",
    "OIDC_OP_USER_ENDPOINT": "userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "jwks",
}


def setting(attr: str, *default: Any) -> Any:
    """mozilla-django-oidc's ``get_settings``, answered from ``FAIRWAY_OIDC`` (endpoints from ``endpoints()``)."""
    if attr in _MAPPED:
        return config().get(_MAPPED[attr], *default)
    if attr in _FIXED:
        return _FIXED[attr]
    if attr in _ENDPOINTS:
        return getattr(endpoints(), _ENDPOINTS[attr])
    if default:
        return getattr(settings, attr, default[0])
    return getattr(settings, attr)
