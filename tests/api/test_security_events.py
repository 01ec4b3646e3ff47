"""The security log kept in the database (issue 25, item 6): every event of the ``fairway.security`` logger is also a
``SecurityEvent`` row (time, actor, address, kind, target, outcome, detail) that admins list on the Security page and
at ``GET /api/v1/security-events/``; a failed write never fails what it records; rows older than
``FAIRWAY_SECURITY_EVENT_RETENTION_DAYS`` go with the periodic compaction."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from security.models import ApiToken, SecurityEvent
from security.tokens import create_token, revoke_token

pytestmark = pytest.mark.django_db


def rows(kind: str) -> list[SecurityEvent]:
    return list(SecurityEvent.objects.filter(kind=kind).order_by("id"))


def test_logins_logouts_failures_and_lockouts_are_stored(make_user: Any, settings: Any) -> None:
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 2
    make_user("alice")
    client = Client(REMOTE_ADDR="10.1.2.3")
    client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    client.post("/accounts/logout/")
    client.post("/accounts/login/", {"username": "alice", "password": "not-it"})
    client.post("/accounts/login/", {"username": "alice", "password": "still-not"})

    (login,) = rows("login")
    assert (login.actor, login.remote_address, login.target, login.outcome) == ("alice", "10.1.2.3", "alice", "success")
    (logout,) = rows("logout")
    assert (logout.actor, logout.target, logout.outcome) == ("alice", "alice", "success")
    failed = rows("login_failed")
    assert len(failed) == 2
    assert {(f.actor, f.target, f.outcome, f.remote_address) for f in failed} == {
        ("anonymous", "alice", "failure", "10.1.2.3")
    }
    (lockout,) = rows("lockout")
    assert (lockout.actor, lockout.target, lockout.outcome) == ("anonymous", "alice", "refused")
    every = " ".join(f"{e.target} {e.detail}" for e in SecurityEvent.objects.all())
    assert "not-it" not in every and "pw-alice" not in every  # no password, ever


def test_token_events_are_stored_without_the_key(make_user: Any) -> None:
    alice = make_user("alice", staff=True)
    token, key = create_token(alice, "ci job", read_only=True)
    client = APIClient(REMOTE_ADDR="10.9.9.9")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key[:8]}wrong")
    assert client.get("/api/v1/queues/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.post("/api/v1/queues/", {"name": "x"}, format="json").status_code == 403
    revoke_token(token)

    (created,) = rows("token_created")
    assert created.actor == "alice" and created.target == f"token {token.prefix}… ('ci job') of alice"
    assert "scope=read-only" in created.detail and created.outcome == "success"
    # the 401 rolled the request's transaction back; its event was stored after it
    (refused,) = rows("token_refused")
    assert (refused.actor, refused.remote_address, refused.target) == ("anonymous", "10.9.9.9", "/api/v1/queues/")
    assert refused.outcome == "failure" and "Invalid token." in refused.detail
    (scope,) = rows("token_scope_refused")
    assert (scope.actor, scope.outcome, scope.remote_address) == ("alice", "refused", "10.9.9.9")
    (revoked,) = rows("token_revoked")
    assert revoked.target == f"token {token.prefix}… ('ci job') of alice"
    assert all(key not in f"{e.target} {e.detail}" for e in SecurityEvent.objects.all())


def test_a_throttled_address_is_stored_once_per_window(settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "TOKEN_FAILURE_LIMIT": 2, "TOKEN_FAILURE_WINDOW_SECONDS": 300}
    from django.core.cache import cache

    cache.clear()
    client = APIClient(REMOTE_ADDR="10.6.6.6")
    client.credentials(HTTP_AUTHORIZATION="Token fw_guess")
    answers = [client.get("/api/v1/queues/").status_code for _ in range(6)]
    assert answers == [401, 401, 429, 429, 429, 429]
    assert len(rows("token_refused")) == 2
    (throttled,) = rows("token_throttled")  # four refusals, one row: a guesser does not fill the table
    assert throttled.remote_address == "10.6.6.6" and throttled.outcome == "refused"
    cache.clear()


def test_admin_changes_are_stored_with_the_admins_address(make_user: Any) -> None:
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    client = Client(REMOTE_ADDR="10.4.4.4")
    client.force_login(root)
    assert client.post("/admin/auth/group/add/", {"name": "auditors", "permissions": []}).status_code == 302
    (change,) = rows("admin_change")
    assert (change.actor, change.remote_address, change.outcome) == ("root", "10.4.4.4", "success")
    assert change.target.startswith("auth.group ") and change.target.endswith("(auditors)")
    assert "action=added" in change.detail


def test_an_admin_revoking_someone_elses_token_is_the_actor(make_user: Any) -> None:
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    token, _ = create_token(make_user("bob"), "laptop")
    client = Client()
    client.force_login(root)
    r = client.post(f"/admin/security/apitoken/{token.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302 and not ApiToken.objects.filter(pk=token.pk).exists()
    (revoked,) = rows("token_revoked")
    assert revoked.actor == "root" and revoked.target == f"token {token.prefix}… ('laptop') of bob"


def test_a_login_succeeds_when_the_event_cannot_be_stored(make_user: Any, monkeypatch: Any, caplog: Any) -> None:
    make_user("alice")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise DatabaseError("disk full")

    monkeypatch.setattr(SecurityEvent.objects, "bulk_create", broken)
    client = Client()
    r = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert r.status_code == 302
    assert client.get("/tokens/").status_code == 200  # signed in
    assert "login ip=127.0.0.1 path=/accounts/login/ user=alice" in caplog.text  # the log line is there
    assert "1 security event not stored" in caplog.text
    assert not SecurityEvent.objects.exists()


def test_a_failed_write_inside_a_transaction_leaves_it_usable(make_user: Any, monkeypatch: Any) -> None:
    """Outside a request the row is written at once, in a savepoint: a statement the database refuses (on
    PostgreSQL that aborts the whole transaction) does not break the caller's transaction."""
    alice = make_user("alice")

    def refused_by_the_database(*args: Any, **kwargs: Any) -> Any:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table_of_security_events")

    monkeypatch.setattr(SecurityEvent.objects, "bulk_create", refused_by_the_database)
    with transaction.atomic():
        token, _ = create_token(alice, "ci")
        assert ApiToken.objects.filter(pk=token.pk).count() == 1  # the transaction still works
    assert ApiToken.objects.filter(pk=token.pk).exists()


# -- reading it ----------------------------------------------------------------------------------------------


@pytest.fixture
def some_events() -> None:
    now = timezone.now()
    for actor, kind, hours in (("alice", "login", 1), ("anonymous", "login_failed", 2), ("bob", "login", 30)):
        SecurityEvent.objects.create(
            time=now - dt.timedelta(hours=hours),
            actor=actor,
            kind=kind,
            target=actor,
            outcome="failure" if kind == "login_failed" else "success",
        )


def test_the_api_lists_and_filters_for_admins(api: Any, make_user: Any, some_events: None) -> None:
    admin = api(make_user("boss", staff=True))
    everything = admin.get("/api/v1/security-events/").json()["results"]
    actors = [e["actor"] for e in everything if e["kind"] in ("login", "login_failed")]
    assert actors == ["alice", "anonymous", "bob"]  # newest first
    assert set(everything[0]) == {"id", "time", "kind", "outcome", "actor", "remote_address", "target", "detail"}
    assert [e["actor"] for e in admin.get("/api/v1/security-events/?kind=login").json()["results"]] == [
        "alice",
        "bob",
    ]
    assert [e["kind"] for e in admin.get("/api/v1/security-events/?actor=anonymous").json()["results"]] == [
        "login_failed"
    ]
    since = (timezone.now() - dt.timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = admin.get("/api/v1/security-events/", {"since": since, "kind": "login"}).json()["results"]
    assert [e["actor"] for e in recent] == ["alice"]
    r = admin.get("/api/v1/security-events/?since=yesterday")
    assert r.status_code == 400 and "since" in r.content.decode()
    assert admin.get("/api/v1/security-events/?kind=nonsense").status_code == 400
    assert admin.post("/api/v1/security-events/", {}, format="json").status_code == 405  # read only


def test_the_api_refuses_everyone_else(api: Any, make_user: Any, some_events: None) -> None:
    member = api(make_user("alice"))
    r = member.get("/api/v1/security-events/")
    assert r.status_code == 403 and "Only admins may read the security log." in r.content.decode()
    assert member.get(f"/api/v1/security-events/{SecurityEvent.objects.first().pk}/").status_code == 403
    assert APIClient().get("/api/v1/security-events/").status_code == 401


def test_the_page_lists_and_filters_for_admins(client: Any, make_user: Any, some_events: None) -> None:
    client.force_login(make_user("boss", staff=True))
    page = client.get("/security/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="security-events"' in html and 'data-kind="login_failed"' in html
    assert "Kept 90 days" in html
    only = client.get("/security/", {"actor": "bob"}).content.decode()
    assert only.count("<tr data-kind=") == 1 and ">bob<" in only
    bad = client.get("/security/", {"since": "yesterday"})
    assert bad.status_code == 400 and 'id="since-error"' in bad.content.decode()


def test_the_page_refuses_everyone_else(client: Any, make_user: Any) -> None:
    assert client.get("/security/").status_code == 302  # to the login page
    client.force_login(make_user("alice"))
    r = client.get("/security/")
    assert r.status_code == 403 and "Only admins can read the security log." in r.content.decode()
    assert 'href="/security/"' not in client.get("/tokens/").content.decode()  # not in a member's menu


# -- retention -----------------------------------------------------------------------------------------------


def test_compaction_deletes_the_events_past_their_retention(settings: Any) -> None:
    from scheduling import tasks
    from scheduling.models import Cluster

    settings.FAIRWAY = {**settings.FAIRWAY, "SECURITY_EVENT_RETENTION_DAYS": 30}
    now = timezone.now()
    for days in (31, 29, 0):
        SecurityEvent.objects.create(
            time=now - dt.timedelta(days=days), actor="x", kind="login", outcome="success", target=str(days)
        )
    cluster = Cluster.objects.create(name="c1")
    assert tasks.compact_records(cluster.pk) == "ran"
    assert sorted(SecurityEvent.objects.values_list("target", flat=True)) == ["0", "29"]


def test_the_retention_is_at_least_a_day() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='controlplane.settings'; django.setup()",
        ],
        env={**__import__("os").environ, "FAIRWAY_SECURITY_EVENT_RETENTION_DAYS": "0"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "FAIRWAY_SECURITY_EVENT_RETENTION_DAYS=0: expected a whole number of days, at least 1" in result.stderr
