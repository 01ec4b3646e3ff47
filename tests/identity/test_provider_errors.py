"""Sign-in with OpenID Connect when the provider cannot be asked: the login page says so (and the security log), the
local login is untouched; and a callback that does not carry a code and a state is refused with a sentence."""

from __future__ import annotations

from typing import Any

import pytest

from security.models import SecurityEvent
from tests.support.ports import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def unreachable(settings: Any) -> str:
    issuer = f"http://127.0.0.1:{free_port()}/o"  # nothing listens there
    settings.FAIRWAY_OIDC = {
        **settings.FAIRWAY_OIDC,
        "CLIENT_ID": "fairway",
        "ISSUER": issuer,
        "PROVIDER_NAME": "Keycloak",
        "TIMEOUT_SECONDS": 5,
        "DISCOVERY_CACHE_SECONDS": 0,
    }
    return issuer


def test_an_unreachable_provider_is_a_sentence_on_the_login_page(client: Any, unreachable: str) -> None:
    r = client.get("/oidc/authenticate/", follow=True)
    assert r.redirect_chain == [("/accounts/login/", 302)]
    text = r.content.decode()
    assert (
        f"Sign-in with Keycloak failed: the identity provider&#x27;s discovery document {unreachable}"
        "/.well-known/openid-configuration could not be read (ConnectionError)." in text
    )
    assert 'id="oidc-sign-in"' in text and 'name="password"' in text  # both ways in are still offered
    assert SecurityEvent.objects.get(kind="login_failed").detail.startswith("via=oidc reason=")


def test_a_callback_without_code_and_state_is_refused(client: Any, unreachable: str) -> None:
    r = client.get("/oidc/callback/?state=abc", follow=True)
    assert r.redirect_chain == [("/accounts/login/", 302)]
    assert "the identity provider&#x27;s answer has no code or no state" in r.content.decode()
    r = client.get("/oidc/callback/?error=access_denied&error_description=User+not+assigned", follow=True)
    assert "the identity provider answered &#x27;User not assigned&#x27;" in r.content.decode()
