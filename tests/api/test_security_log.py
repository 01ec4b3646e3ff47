"""The security log (``fairway.security``): logins, login failures, lockouts, token creation, refused tokens,
revocation and admin changes, one line each, never with a secret."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from security.tokens import create_token, revoke_token

pytestmark = pytest.mark.django_db


def events(caplog: Any) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "fairway.security"]


def test_logins_failures_and_lockouts_are_logged(caplog: Any, make_user: Any, settings: Any) -> None:
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = dt.timedelta(minutes=15)
    make_user("alice")
    client = Client(REMOTE_ADDR="10.1.2.3")
    with caplog.at_level(logging.INFO, logger="fairway.security"):
        client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
        client.post("/accounts/logout/")
        client.post("/accounts/login/", {"username": "alice", "password": "not-it"})
        client.post("/accounts/login/", {"username": "alice", "password": "still-not"})
    lines = events(caplog)
    assert "login ip=10.1.2.3 path=/accounts/login/ user=alice" in lines
    assert "login_failed ip=10.1.2.3 path=/accounts/login/ user=alice" in lines
    assert "lockout ip=10.1.2.3 path=/accounts/login/ user=alice" in lines
    assert not any("not-it" in line or "pw-alice" in line for line in lines)  # no password, ever
    levels = {r.getMessage().split()[0]: r.levelno for r in caplog.records if r.name == "fairway.security"}
    assert levels["login_failed"] == levels["lockout"] == logging.WARNING


def test_token_creation_refusal_and_revocation_are_logged_without_the_key(caplog: Any, make_user: Any) -> None:
    user = make_user("alice", staff=True)
    with caplog.at_level(logging.INFO, logger="fairway.security"):
        token, key = create_token(user, "ci job", read_only=True)
        client = APIClient(REMOTE_ADDR="10.9.9.9")
        client.credentials(HTTP_AUTHORIZATION=f"Token {key[:8]}wrong")
        client.get("/api/v1/queues/")
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        client.post("/api/v1/queues/", {"name": "x"}, format="json")
        revoke_token(token)
    lines = events(caplog)
    assert lines[0].startswith(f"token_created user=alice token={token.prefix} name='ci job' scope=read-only expires=")
    assert "token_refused ip=10.9.9.9 path=/api/v1/queues/ reason='Invalid token.'" in lines
    assert f"token_scope_refused ip=10.9.9.9 path=/api/v1/queues/ user=alice token={token.prefix}" in lines
    assert f"token_revoked user=alice token={token.prefix} name='ci job'" in lines
    assert not any(key in line for line in lines)


def test_admin_changes_are_logged(caplog: Any, make_user: Any) -> None:
    admin = make_user("root", staff=True)
    admin.is_superuser = True
    admin.save()
    client = Client()
    client.force_login(admin)
    with caplog.at_level(logging.INFO, logger="fairway.security"):
        r = client.post("/admin/auth/group/add/", {"name": "auditors", "permissions": []}, follow=False)
        assert r.status_code == 302
    assert "admin_change user=root action=added model=auth.group object_id=" in "\n".join(events(caplog))
    assert any(line.endswith("object=auditors change=Added.") for line in events(caplog))
