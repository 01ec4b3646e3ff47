"""Fixtures of the API tests over real HTTP."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest

from tests.api.live import Live, small_world


@pytest.fixture
def live(live_server: Any, transactional_db: Any, make_user: Any) -> Live:
    """``small_world()`` behind ``live_server``, an admin and the nlp lead (a team member) with tokens."""
    return _live(live_server, make_user, small_world)


@pytest.fixture
def live_demo(live_server: Any, transactional_db: Any, make_user: Any) -> Live:
    """The whole demo organisation (``load_demo``: 8 teams, 24 nodes, jobs) behind ``live_server``."""
    from django.core.management import call_command

    from quotas.services import ensure_builtins
    from scheduling.serializers import default_cluster

    def demo() -> None:
        ensure_builtins()  # a transactional test's flush took the migrations' built-ins with it
        default_cluster()
        call_command("load_demo", stdout=StringIO())

    return _live(live_server, make_user, demo)


def _live(live_server: Any, make_user: Any, build: Any) -> Live:
    from django.contrib.auth import get_user_model

    from security.tokens import create_token

    build()
    admin = make_user("ops-admin", staff=True)
    member = get_user_model().objects.get(username="nlp-lead")
    return Live(
        url=live_server.url,
        admin_token=create_token(admin, "test")[1],
        member_token=create_token(member, "test")[1],
    )
