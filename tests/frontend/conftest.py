"""Fixtures of the page tests: a fresh value cache, the cluster, users of each role and logged-in clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.frontend import builders as b


@pytest.fixture(autouse=True)
def _fresh_values() -> Iterator[None]:
    from planning import valuecache

    valuecache.clear()
    yield
    valuecache.clear()


@pytest.fixture
def admin(db: Any) -> Any:
    return b.user("boss", staff=True)


@pytest.fixture
def admin_client(client: Any, admin: Any) -> Any:
    client.force_login(admin)
    return client


@pytest.fixture
def lending(db: Any) -> None:
    """The two-group lending example plus a team for each side (x-team: lead-x; y-team: lead-y)."""
    build_lending()


def build_lending() -> None:
    b.lending()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.team("y-team", queues=["yq"], groups=["y"])
    b.user("lead-x", teams=["x-team"])
    b.user("lead-y", teams=["y-team"])


def login(client: Any, username: str) -> Any:
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))
    return client
