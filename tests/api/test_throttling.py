"""Guessing is throttled: failed token authentications per client address (429 with ``Retry-After``), and logins
through the dashboard's form and the admin's per username + address (django-axes: a lockout, then a cool-off).

The suite turns axes off (``tests/conftest.py``); these tests turn it on, each with its own attempts (axes keeps them
in the database, rolled back with the test) and an empty cache (``_fresh_cache``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from security.tokens import create_token

pytestmark = pytest.mark.django_db

LIMITS = {"TOKEN_FAILURE_LIMIT": 3, "TOKEN_FAILURE_WINDOW_SECONDS": 120}


@pytest.fixture
def limits(settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, **LIMITS}


def get(key: str, ip: str = "10.0.0.1", path: str = "/api/v1/queues/") -> Any:
    client = APIClient(REMOTE_ADDR=ip)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(path)


def test_bad_tokens_from_one_address_get_429_with_retry_after(limits: None, make_user: Any) -> None:
    _, good = create_token(make_user("alice", staff=True), "ci")
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        for _ in range(3):
            assert get("guess-" + "x" * 40).status_code == 401
        r = get("guess-" + "y" * 40)
        assert r.status_code == 429 and r["Retry-After"] == "120"
        assert "Too many requests with an invalid token from your address" in r.json()["errors"][0]["detail"]
        assert get(good).status_code == 429  # while blocked, a right guess learns nothing either
        assert get(good, ip="10.0.0.2").status_code == 200  # another address is not affected
        assert get("nope", path="/metrics").status_code == 429  # the metrics' token check counts the same
    with time_machine.travel(start + dt.timedelta(seconds=60), tick=False):
        assert get(good)["Retry-After"] == "60"
    with time_machine.travel(start + dt.timedelta(seconds=121), tick=False):
        assert get(good).status_code == 200  # the window is over


def test_good_tokens_and_other_schemes_are_not_counted(limits: None, make_user: Any) -> None:
    _, good = create_token(make_user("alice", staff=True), "ci")
    for _ in range(10):
        assert get(good).status_code == 200
        assert (
            APIClient(REMOTE_ADDR="10.0.0.1").get("/api/v1/queues/", HTTP_AUTHORIZATION="Basic eDp5").status_code == 401
        )
    assert get("bad").status_code == 401  # the first failure: not blocked


@pytest.fixture
def axes_on(settings: Any) -> None:
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = dt.timedelta(minutes=15)


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_logins_are_locked_out_per_username_and_address_then_cool_off(axes_on: None, make_user: Any, url: str) -> None:
    make_user("alice", staff=True)  # password pw-alice
    client = Client(REMOTE_ADDR="10.0.0.9")
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        for _ in range(2):
            r = client.post(url, {"username": "alice", "password": "wrong"})
            assert r.status_code == 200  # the form again, with its error
        r = client.post(url, {"username": "alice", "password": "wrong"})
        assert r.status_code == 429 and "Too many failed logins" in r.content.decode()
        r = client.post(url, {"username": "alice", "password": "pw-alice"})  # the right password is refused too
        assert r.status_code == 429
        other = Client(REMOTE_ADDR="10.0.0.10")  # the same username from another address: not locked
        assert other.post(url, {"username": "alice", "password": "pw-alice"}).status_code == 302
    with time_machine.travel(start + dt.timedelta(minutes=16), tick=False):
        assert client.post(url, {"username": "alice", "password": "pw-alice"}).status_code == 302


def test_a_successful_login_clears_the_failures(axes_on: None, make_user: Any) -> None:
    make_user("alice")
    client = Client(REMOTE_ADDR="10.0.0.9")
    for _ in range(2):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"}).status_code == 302
    client.logout()
    for _ in range(2):
        assert client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code == 200


@override_settings(AXES_ENABLED=True)
def test_the_settings_hold_a_lockout_per_username_and_address() -> None:
    from django.conf import settings

    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"
