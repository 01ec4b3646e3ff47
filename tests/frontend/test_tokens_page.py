"""/tokens/: a signed-in user lists its API tokens (name, prefix, created, last used, expires, scope), creates one
(the key shown once) and revokes them; nobody else's."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from security.models import ApiToken
from security.tokens import create_token, find_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead(make_user: Any) -> Any:
    return make_user("nlp-lead")  # any signed-in user has the page, team or not


@pytest.fixture
def lead_client(lead: Any) -> Client:
    client = Client()
    client.force_login(lead)
    return client


def test_the_page_lists_only_my_tokens_without_their_keys(lead: Any, lead_client: Client, make_user: Any) -> None:
    mine, my_key = create_token(lead, "laptop CLI", read_only=True)
    theirs, _ = create_token(make_user("other"), "their secret job")
    r = lead_client.get("/tokens/")
    page = r.content.decode()
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    row = re.search(rf'<tr data-token-prefix="{re.escape(mine.prefix)}">(.*?)</tr>', page, re.S).group(1)  # type: ignore[union-attr]
    assert "laptop CLI" in row and f"{mine.prefix}…" in row and "read-only" in row and "never" in row
    assert f"{mine.expires:%Y-%m-%d}" in row and f"{mine.created:%Y-%m-%d}" in row
    assert my_key not in page and "their secret job" not in page and theirs.prefix not in page
    assert 'href="/tokens/"' in page  # the header links to it


def test_creating_a_token_shows_the_key_once(lead: Any, lead_client: Client) -> None:
    r = lead_client.post("/tokens/", {"name": "ci", "expires_in_days": "7", "read_only": "on"})
    assert r.status_code == 200
    key = re.search(r'id="new-token-key" data-token="([^"]+)"', r.content.decode()).group(1)  # type: ignore[union-attr]
    token = find_token(key)
    assert (token.user, token.name, token.read_only) == (lead, "ci", True)
    assert key not in lead_client.get("/tokens/").content.decode()  # never again
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/v1/queues/").status_code != 401  # authenticated (what it may read is its role's business)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "", "expires_in_days": "7"}, "name", "This field is required."),
        ({"name": "ci", "expires_in_days": "0"}, "expires_in_days", "greater than or equal to 1"),
        ({"name": "ci", "expires_in_days": "9999"}, "expires_in_days", "must be a whole number of days between 1 and"),
    ],
)
def test_bad_input_is_refused_at_its_field_and_writes_nothing(
    lead: Any, lead_client: Client, data: dict[str, str], field: str, message: str
) -> None:
    r = lead_client.post("/tokens/", data)
    assert r.status_code == 400 and message in r.content.decode()
    assert not ApiToken.objects.filter(user=lead).exists()


def test_revoking_a_token_ends_it_and_only_the_owner_can(lead: Any, lead_client: Client, make_user: Any) -> None:
    mine, my_key = create_token(lead, "ci")
    theirs, _ = create_token(make_user("other"), "theirs")
    assert lead_client.post(f"/tokens/{theirs.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    assert lead_client.get(f"/tokens/{mine.pk}/revoke/").status_code == 405
    r = lead_client.post(f"/tokens/{mine.pk}/revoke/", follow=True)
    assert r.status_code == 200 and f"Token ci ({mine.prefix}…) revoked" in r.content.decode()
    assert not ApiToken.objects.filter(pk=mine.pk).exists()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {my_key}")
    assert api.get("/api/v1/queues/").status_code == 401


def test_the_page_needs_a_login() -> None:
    r = Client().get("/tokens/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
