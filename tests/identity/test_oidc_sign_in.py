"""Sign-in with OpenID Connect against a real provider (issue 30, item 4): django-oauth-toolkit with OIDC on and an
RS256 key generated here, in a process of its own (``tests.support.oidc_server``); Fairway on the live server; the
whole authorization-code flow (Fairway → provider login → authorize → Fairway's callback → token, JWKS, userinfo)
driven over HTTP by ``requests``, following the redirects. Nothing of the provider is mocked.

Probes: the first sign-in creates the account with the mapped roles (admin, a team, a department); a later sign-in
re-syncs them (a group removed at the provider removes the role, a membership no entry names stays); a user in no
mapped group is signed in with no team and no admin; a local account of the same name is never taken over; a
``member`` entry never makes a department lead; a forged state, and an ID token whose signature does not verify
against the keys Fairway trusts, are refused; API tokens and the local login keep working; all of it is off
(404, no button) unless configured."""

from __future__ import annotations

import html
import http.server
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from identity.models import OidcIdentity
from quotas import services
from quotas.models import Queue
from scheduling.models import Cluster
from security.models import SecurityEvent
from security.tokens import create_token
from tests.support.oidc_server import OidcProvider

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CLIENT_ID, CLIENT_SECRET = "fairway-test", "a-client-secret-for-the-test"
GROUP_MAP = (
    "fairway-admins=admin, research-leads=department-lead:research-dept, nlp-people=member:nlp, "
    "nlp-leads=team-lead:nlp, staff=member:research-dept, ghosts=member:no-such-team"
)
HTTP = 30  # seconds a request of the test may take (a busy machine)


@pytest.fixture(scope="module")
def idp() -> Iterator[OidcProvider]:
    provider = OidcProvider().start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def fairway(idp: OidcProvider, live_server: Any, settings: Any) -> str:
    """Fairway on the live server, configured for the provider through its discovery document, with a small
    organisation: department research (team research-dept) above team nlp; team vision elsewhere."""
    settings.FAIRWAY_OIDC = {
        "CLIENT_ID": CLIENT_ID,
        "CLIENT_SECRET": CLIENT_SECRET,
        "ISSUER": idp.issuer,
        "SCOPES": "openid email profile groups",
        "GROUPS_CLAIM": "groups",
        "USERNAME_CLAIM": "preferred_username",
        "GROUP_MAP": GROUP_MAP,
        "PROVIDER_NAME": "Test IdP",
        "SIGN_ALGO": "RS256",
        "USE_PKCE": True,
        "TIMEOUT_SECONDS": HTTP,
        "DISCOVERY_CACHE_SECONDS": 0,
    }
    redirect_uri = f"{live_server.url}/oidc/callback/"
    if getattr(idp, "registered", None) != redirect_uri:  # the live server's address is the session's
        idp.client(CLIENT_ID, CLIENT_SECRET, redirect_uri)
        idp.registered = redirect_uri  # type: ignore[attr-defined]
    services.ensure_builtins()  # the transactional test's flush took the migrations' built-ins with it
    Cluster.objects.get_or_create(name="default")
    services.save_queue(None, {"name": "research", "parent": "root", "weight": 1})
    services.save_queue(None, {"name": "nlp", "parent": "research", "weight": 1})
    services.save_queue(None, {"name": "vision", "parent": "root", "weight": 1})
    for team, queue in (("research-dept", "research"), ("nlp", "nlp"), ("vision", "vision")):
        Queue.objects.get(name=queue).teams.add(Group.objects.create(name=team))
    return str(live_server.url)


def _login_form(page: requests.Response) -> dict[str, str]:
    fields = {
        k: html.unescape(v) for k, v in re.findall(r'name="(csrfmiddlewaretoken|next)" value="([^"]*)"', page.text)
    }
    assert "csrfmiddlewaretoken" in fields, page.text[:500]
    return fields


def sign_in(fairway: str, username: str, password: str) -> tuple[requests.Session, requests.Response]:
    s = requests.Session()
    page = s.get(f"{fairway}/oidc/authenticate/?next=/team/", timeout=HTTP)
    assert page.status_code == 200 and "Test identity provider" in page.text, (page.url, page.text[:300])
    done = s.post(page.url, data={**_login_form(page), "username": username, "password": password}, timeout=HTTP)
    return s, done


def to_callback(fairway: str, username: str, password: str) -> tuple[requests.Session, str]:
    """The flow up to the provider's answer, not followed: the URL of Fairway's callback with its code and state."""
    s = requests.Session()
    page = s.get(f"{fairway}/oidc/authenticate/", timeout=HTTP)
    r = s.post(
        page.url,
        data={**_login_form(page), "username": username, "password": password},
        allow_redirects=False,
        timeout=HTTP,
    )
    while r.is_redirect:
        location = urllib.parse.urljoin(r.url, r.headers["Location"])
        if location.startswith(f"{fairway}/oidc/callback/"):
            return s, location
        r = s.get(location, allow_redirects=False, timeout=HTTP)
    raise AssertionError(f"the provider did not answer with Fairway's callback: {r.status_code} {r.text[:300]}")


def who(s: requests.Session, fairway: str) -> dict[str, Any]:
    """What Fairway's API says of the session's user: its queues (team membership at work)."""
    r = s.get(f"{fairway}/api/v1/queues/", timeout=HTTP)
    return {"status": r.status_code, "queues": sorted(q["name"] for q in r.json()["results"]) if r.ok else []}


def account(username: str) -> tuple[bool, list[str]]:
    user = get_user_model().objects.get(username=username)
    return user.is_staff and user.is_superuser, sorted(user.groups.values_list("name", flat=True))


def test_first_sign_in_creates_the_account_with_its_mapped_roles(idp: OidcProvider, fairway: str) -> None:
    idp.user("alice", "alice-password-1", ["nlp-people", "fairway-admins", "unrelated"], email="alice@example.org")
    s, done = sign_in(fairway, "alice", "alice-password-1")
    assert done.status_code == 200 and done.url == f"{fairway}/team/nlp/", done.url  # "next" kept: its team page
    assert account("alice") == (True, ["nlp"])
    user = get_user_model().objects.get(username="alice")
    assert user.email == "alice@example.org" and not user.has_usable_password()  # no local password to guess
    identity = OidcIdentity.objects.get(user=user)
    assert identity.issuer == idp.issuer and identity.subject and identity.last_synced is not None
    assert who(s, fairway)["status"] == 200  # the session works for the API too
    event = SecurityEvent.objects.get(kind="roles_synced")
    assert event.actor == "alice" and "admin=yes" in event.detail and "teams=nlp" in event.detail


def test_each_sign_in_resyncs_the_roles_from_the_groups_claim(idp: OidcProvider, fairway: str) -> None:
    idp.user("bob", "bob-password-1", ["nlp-leads", "fairway-admins"])
    s, _ = sign_in(fairway, "bob", "bob-password-1")
    assert account("bob") == (True, ["nlp"])
    # an admin also put bob in vision by hand: no entry of the map names vision, so sign-ins leave it alone
    get_user_model().objects.get(username="bob").groups.add(Group.objects.get(name="vision"))
    # at the provider bob leaves the admins and the nlp leads and becomes a research department lead
    idp.user("bob", "bob-password-1", ["research-leads"])
    s, done = sign_in(fairway, "bob", "bob-password-1")
    assert done.status_code == 200
    assert account("bob") == (False, ["research-dept", "vision"])
    assert get_user_model().objects.filter(username__startswith="bob").count() == 1  # the same account
    assert who(s, fairway) == {"status": 200, "queues": ["nlp", "research", "vision"]}  # the department's subtree
    r = s.get(f"{fairway}/api/v1/teams/research-dept/department/", timeout=HTTP)
    assert r.status_code == 200 and [t["name"] for t in r.json()["teams"]] == ["nlp"], r.text
    last = SecurityEvent.objects.filter(kind="roles_synced").order_by("-id").first()
    assert last is not None and "removed=nlp" in last.detail and "admin=no" in last.detail
    # and with every group gone, every mapped role goes
    idp.user("bob", "bob-password-1", [])
    sign_in(fairway, "bob", "bob-password-1")
    assert account("bob") == (False, ["vision"])


def test_a_user_in_no_mapped_group_is_signed_in_with_no_team(idp: OidcProvider, fairway: str) -> None:
    idp.user("carol", "carol-password-1", ["unrelated", "ghosts"])
    s, done = sign_in(fairway, "carol", "carol-password-1")
    # signed in (its name in the navigation), and its start page explains instead of showing anything
    assert done.status_code == 403 and done.url == f"{fairway}/team/" and ">carol<" in done.text
    assert "Your account is not linked to any team yet. Ask an admin to add you to a team." in done.text
    assert account("carol") == (False, [])
    r = s.get(f"{fairway}/api/v1/queues/", timeout=HTTP)
    assert r.status_code == 403 and "not a member of any team" in r.text  # signed in, nothing to read
    event = SecurityEvent.objects.get(kind="roles_synced", actor="carol")
    assert "no team of that name" in event.detail  # ghosts=member:no-such-team, reported


def test_a_member_entry_never_makes_a_department_lead(idp: OidcProvider, fairway: str) -> None:
    idp.user("dave", "dave-password-1", ["staff", "nlp-people"])  # staff=member:research-dept
    sign_in(fairway, "dave", "dave-password-1")
    assert account("dave") == (False, ["nlp"])
    event = SecurityEvent.objects.get(kind="roles_synced", actor="dave")
    assert "staff=member:research-dept (a department: only department-lead joins it)" in event.detail


def test_a_local_account_of_the_same_name_is_never_taken_over(idp: OidcProvider, fairway: str) -> None:
    local = get_user_model().objects.create_user("admin", password="local-admin-pw", is_staff=True, is_superuser=True)
    idp.user("admin", "idp-admin-password", ["nlp-people"])
    _, done = sign_in(fairway, "admin", "idp-admin-password")
    assert done.status_code == 200
    local.refresh_from_db()
    assert local.is_staff and local.check_password("local-admin-pw") and not hasattr(local, "oidc_identity")
    linked = OidcIdentity.objects.get().user
    assert linked.username == "admin-2" and account("admin-2") == (False, ["nlp"])


def test_a_forged_state_is_refused_and_the_genuine_answer_still_signs_in(idp: OidcProvider, fairway: str) -> None:
    idp.user("erin", "erin-password-1", ["nlp-people"])
    s, callback = to_callback(fairway, "erin", "erin-password-1")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query)
    forged = callback.replace(f"state={query['state'][0]}", "state=" + "x" * 32)
    r = s.get(forged, timeout=HTTP)
    assert r.url == f"{fairway}/accounts/login/" and "not for a sign-in started in this browser" in r.text
    assert who(s, fairway)["status"] in (401, 403)
    assert not get_user_model().objects.filter(username="erin").exists()
    failed = SecurityEvent.objects.get(kind="login_failed")
    assert "via=oidc" in failed.detail
    # the state was not used up by the forgery: the genuine answer signs erin in
    assert s.get(callback, timeout=HTTP).status_code == 200
    assert who(s, fairway) == {"status": 200, "queues": ["nlp"]}
    # an answer is used once: replayed, it is refused
    replay = s.get(callback, timeout=HTTP)
    assert replay.url == f"{fairway}/accounts/login/" and "already used" in replay.text


@pytest.fixture
def forged_jwks(idp: OidcProvider) -> Iterator[str]:
    """A key set that names the provider's key id with another RSA key: what Fairway would fetch if somebody put
    their own key in place of the provider's (served by a plain HTTP server here)."""
    published = requests.get(f"{idp.issuer}/.well-known/jwks.json", timeout=HTTP).json()["keys"][0]
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    forged = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(other)), "kid": published["kid"], "alg": "RS256"}
    body = json.dumps({"keys": [forged]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()


def test_an_id_token_whose_signature_does_not_verify_is_refused(
    idp: OidcProvider, fairway: str, forged_jwks: str, settings: Any
) -> None:
    # the endpoints given one by one (no discovery); the keys Fairway trusts are not the ones the provider signs with
    settings.FAIRWAY_OIDC = {
        **settings.FAIRWAY_OIDC,
        "AUTHORIZATION_ENDPOINT": f"{idp.issuer}/authorize/",
        "TOKEN_ENDPOINT": f"{idp.issuer}/token/",
        "USERINFO_ENDPOINT": f"{idp.issuer}/userinfo/",
        "JWKS_URI": forged_jwks,
    }
    idp.user("frank", "frank-password-1", ["fairway-admins"])
    s, done = sign_in(fairway, "frank", "frank-password-1")
    assert done.url == f"{fairway}/accounts/login/"
    assert "Sign-in with Test IdP failed: the identity provider&#x27;s ID token did not verify" in done.text
    assert who(s, fairway)["status"] in (401, 403)
    assert not get_user_model().objects.filter(username="frank").exists()
    assert "JWS token verification failed" in SecurityEvent.objects.get(kind="login_failed").detail


def test_api_tokens_and_the_local_login_keep_working(idp: OidcProvider, fairway: str) -> None:
    idp.user("gina", "gina-password-1", ["nlp-people"])
    sign_in(fairway, "gina", "gina-password-1")
    _, key = create_token(get_user_model().objects.get(username="gina"), "ci")
    r = requests.get(f"{fairway}/api/v1/queues/", headers={"Authorization": f"Token {key}"}, timeout=HTTP)
    assert r.status_code == 200 and [q["name"] for q in r.json()["results"]] == ["nlp"]
    # the login page offers both; the local form still signs a local account in
    get_user_model().objects.create_user("local-lead", password="local-lead-pw").groups.add(
        Group.objects.get(name="vision")
    )
    s = requests.Session()
    page = s.get(f"{fairway}/accounts/login/", timeout=HTTP)
    assert 'id="oidc-sign-in"' in page.text and "Sign in with Test IdP" in page.text
    csrf = s.cookies["csrftoken"]
    done = s.post(
        page.url,
        data={"csrfmiddlewaretoken": csrf, "username": "local-lead", "password": "local-lead-pw", "next": "/"},
        headers={"Referer": page.url},
        timeout=HTTP,
    )
    assert done.status_code == 200 and who(s, fairway) == {"status": 200, "queues": ["vision"]}


def test_off_unless_configured(live_server: Any, settings: Any) -> None:
    settings.FAIRWAY_OIDC = {**settings.FAIRWAY_OIDC, "CLIENT_ID": ""}
    assert requests.get(f"{live_server.url}/oidc/authenticate/", timeout=HTTP).status_code == 404
    assert requests.get(f"{live_server.url}/oidc/callback/?code=x&state=y", timeout=HTTP).status_code == 404
    page = requests.get(f"{live_server.url}/accounts/login/", timeout=HTTP)
    assert page.status_code == 200 and "oidc-sign-in" not in page.text


def test_the_providers_seed_endpoints_answer_the_tests_token_only(idp: OidcProvider) -> None:
    """The test sets the provider's users over HTTP (``oidc_provider/seed.py``): nobody else may."""
    body = {"username": "mallory", "password": "mallory-password-1", "groups": ["fairway-admins"]}
    for headers in ({}, {"Authorization": "Bearer not-the-token"}):
        r = requests.post(f"{idp.base}/seed/user/", json=body, headers=headers, timeout=HTTP)
        assert r.status_code == 403 and r.json() == {"detail": "the seed token is missing or wrong"}
    r = requests.post(f"{idp.base}/seed/user/", data="{", headers={"Authorization": f"Bearer {idp.seed_token}"},
                      timeout=HTTP)  # fmt: skip
    assert r.status_code == 400 and r.json()["detail"].startswith("JSONDecodeError")
