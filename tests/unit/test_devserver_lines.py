"""What ``make run`` says once its servers start: where, and the ``FAIRWAY_URL`` the command line needs when that is
not where it looks by default (``make run PORT=8765`` printed the token, and ``fairway`` then reached nothing)."""

from __future__ import annotations

from controlplane import devserver
from controlplane.cli import DEFAULT_SERVER


def test_the_default_address_needs_no_url_another_says_which_to_export() -> None:
    assert devserver.CLI_DEFAULT_URL == DEFAULT_SERVER
    (only,) = devserver.started_lines("127.0.0.1", 8000)
    assert only.startswith("Fairway is starting on http://127.0.0.1:8000/  (API docs: http://127.0.0.1:8000/api/docs/")
    first, cli = devserver.started_lines("0.0.0.0", 8765)
    assert "http://0.0.0.0:8765/admin/" in first
    assert cli == "the command line: export FAIRWAY_URL=http://0.0.0.0:8765  (beside FAIRWAY_TOKEN above)"
