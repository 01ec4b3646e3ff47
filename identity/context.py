"""``oidc_sign_in`` for the login page: the provider's name when sign-in with OpenID Connect is on."""

from __future__ import annotations

from typing import Any

from identity import provider


def oidc_sign_in(request: Any) -> dict[str, Any]:
    return {"oidc_sign_in": {"provider_name": provider.provider_name()}} if provider.enabled() else {}
