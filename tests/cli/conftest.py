"""The ``fairway`` command against a live server (real HTTP, real PostgreSQL), as a person or a script runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from controlplane.cli import main

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(live_server: Any, transactional_db: Any, make_user: Any, capsys: Any) -> Run:
    """``cli(*argv)`` -> (exit code, stdout, stderr), with ``--server`` and an admin's ``--token`` given first;
    ``cli(*argv, token=…)`` for another user, ``token=None`` for none."""
    from quotas.services import ensure_builtins
    from security.tokens import create_token

    ensure_builtins()
    admin = create_token(make_user("ops", staff=True), "test")[1]

    def run(*argv: str, token: str | None = admin) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["--server", live_server.url, *(["--token", token] if token else []), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def world(cli: Run) -> None:
    """The small organisation of the API tests (departments, teams nlp/vision/analytics, namespaces, four nodes)."""
    from tests.api.live import small_world

    small_world()
