"""API tokens (``security``): stored hashed, shown once, expiring, optionally read-only, revocable; the header format
``Authorization: Token <key>`` unchanged; DRF's plaintext tokens moved by a migration."""

from __future__ import annotations

import datetime as dt
import hashlib
from io import StringIO
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from security.models import ApiToken
from security.tokens import create_token, find_token, revoke_token

pytestmark = pytest.mark.django_db


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_key_is_stored_only_as_a_prefix_and_a_hash(make_user: Any) -> None:
    user = make_user("alice", staff=True)
    token, key = create_token(user, "ci")
    row = ApiToken.objects.values().get(pk=token.pk)
    assert key not in {str(v) for v in row.values()}  # no column holds the key
    assert row["prefix"] == key[:12] and row["digest"] == hashlib.sha256(key.encode()).hexdigest()
    assert key.startswith("fw_") and len(key) == 3 + 43  # 32 random bytes; never starts with a dash (a CLI flag)
    assert client_with(key).get("/api/v1/queues/").status_code == 200


def test_a_wrong_key_with_the_right_prefix_is_refused(make_user: Any) -> None:
    _, key = create_token(make_user("alice", staff=True), "ci")
    forged = key[:12] + "x" * (len(key) - 12)
    r = client_with(forged).get("/api/v1/queues/")
    assert r.status_code == 401 and r["WWW-Authenticate"] == "Token"
    assert r.json()["errors"][0]["detail"] == "Invalid token."


def test_the_default_lifetime_comes_from_the_settings_and_can_be_overridden(make_user: Any, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "TOKEN_LIFETIME_DAYS": 30, "TOKEN_MAX_LIFETIME_DAYS": 400}
    user = make_user("alice")
    token, _ = create_token(user, "default")
    assert dt.timedelta(days=29, hours=23) < token.expires - timezone.now() <= dt.timedelta(days=30)
    token, _ = create_token(user, "longer", days=400)
    assert token.expires - timezone.now() > dt.timedelta(days=399)
    with pytest.raises(ValidationError) as exc:
        create_token(user, "too long", days=401)
    assert exc.value.message_dict == {"expires_in_days": ["must be a whole number of days between 1 and 400"]}
    with pytest.raises(ValidationError) as exc:
        create_token(user, "  ")
    assert "name" in exc.value.message_dict
    assert ApiToken.objects.filter(user=user).count() == 2  # nothing written by the refused ones


def test_an_expired_token_gets_401_with_a_sentence(make_user: Any) -> None:
    token, key = create_token(make_user("alice", staff=True), "short", days=1)
    with time_machine.travel(timezone.now() + dt.timedelta(days=1, seconds=1), tick=False):
        r = client_with(key).get("/api/v1/queues/")
    assert r.status_code == 401
    detail = r.json()["errors"][0]["detail"]
    assert detail.startswith(f"This token ({token.prefix}…, 'short') expired on ") and "Tokens page" in detail
    assert client_with(key).get("/api/v1/queues/").status_code == 200  # before its expiry it works


def test_a_read_only_token_reads_and_gets_403_on_every_unsafe_method(make_user: Any) -> None:
    token, key = create_token(make_user("alice", staff=True), "dashboards", read_only=True)
    client = client_with(key)
    assert client.get("/api/v1/queues/").status_code == 200
    for method in ("post", "put", "patch", "delete"):
        r = getattr(client, method)("/api/v1/queues/default/", {"weight": 2}, format="json")
        assert r.status_code == 403, method
        assert r.json()["errors"][0]["detail"].startswith(f"This token ({token.prefix}…) is read-only")
    r = client.post("/api/v1/queues/", {"name": "ro", "weight": 1}, format="json")
    assert r.status_code == 403
    from quotas.models import Queue

    assert not Queue.objects.filter(name="ro").exists()
    _, rw = create_token(token.user, "admin work")
    assert client_with(rw).post("/api/v1/queues/", {"name": "rw", "weight": 1}, format="json").status_code == 201


def test_last_used_is_written_after_the_request_at_most_once_per_setting_window(
    make_user: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "TOKEN_LAST_USED_SECONDS": 60}
    token, key = create_token(make_user("alice", staff=True), "ci")
    assert token.last_used is None
    start = timezone.now()
    for offset, expected in ((0, 0), (30, 0), (61, 61)):
        with (
            time_machine.travel(start + dt.timedelta(seconds=offset), tick=False),
            django_capture_on_commit_callbacks(execute=True),  # the write runs once the request has committed
        ):
            assert client_with(key).get("/api/v1/queues/").status_code == 200
        token.refresh_from_db()
        assert token.last_used == start + dt.timedelta(seconds=expected), offset


def test_a_revoked_token_is_refused(make_user: Any) -> None:
    token, key = create_token(make_user("alice", staff=True), "ci")
    revoke_token(token)
    assert client_with(key).get("/api/v1/queues/").status_code == 401


def test_an_inactive_users_token_is_refused(make_user: Any) -> None:
    user = make_user("alice", staff=True)
    _, key = create_token(user, "ci")
    user.is_active = False
    user.save()
    assert client_with(key).get("/api/v1/queues/").status_code == 401


def test_create_token_command_prints_the_key_once(make_user: Any) -> None:
    user = make_user("alice")
    out, err = StringIO(), StringIO()
    call_command("create_token", "alice", "--name", "laptop", "--days", "7", "--read-only", stdout=out, stderr=err)
    token = find_token(out.getvalue().strip())
    assert (token.user, token.name, token.read_only) == (user, "laptop", True)
    assert "read-only" in err.getvalue()
    with pytest.raises(CommandError, match="--days: must be a whole number of days between 1 and"):
        call_command("create_token", "alice", "--days", "0", stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="user nobody does not exist"):
        call_command("create_token", "nobody", stdout=StringIO(), stderr=StringIO())


def test_ensure_admin_keeps_its_key_in_var_and_makes_a_new_one_once_revoked(tmp_path: Any, db: Any) -> None:
    with override_settings(VAR_DIR=tmp_path):
        first = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=first)
        key = (tmp_path / "admin-token").read_text().strip()
        assert (
            f"FAIRWAY_TOKEN={key}" in first.getvalue() and oct((tmp_path / "admin-token").stat().st_mode)[-3:] == "600"
        )
        again = StringIO()
        call_command("ensure_admin", "--username", "boss", stdout=again)
        assert f"FAIRWAY_TOKEN={key}" in again.getvalue()  # the same live token, not a new one per run
        assert ApiToken.objects.filter(user__username="boss").count() == 1
        revoke_token(find_token(key))
        call_command("ensure_admin", "--username", "boss", stdout=StringIO())
        new = (tmp_path / "admin-token").read_text().strip()
        assert new != key and find_token(new).user.username == "boss"
