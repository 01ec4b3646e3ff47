"""mypy, strict on the pure engine (pyproject's ``[tool.mypy]``), as part of the suite: `make test` and plain
`pytest` both run it, beside the other tests rather than before them.

It keeps mypy's own cache outside the checkout, in ``~/.cache/fairway/mypy`` (under ``XDG_CACHE_HOME`` when set), so
that every clone and worktree on a machine shares it: a later run re-checks only the modules whose source differs from
what the cache saw and those that depend on them, with the same result as a cold run (mypy's incremental mode: a
file whose time stamp changed is compared by its hash, so a fresh clone of unchanged code reuses the cache; 27 s of
CPU cold, under 1 s warm on these machines). ``FAIRWAY_TEST_MYPY_CACHE`` names another cache folder (an empty
temporary one for a cold run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts with the long modules, so it overlaps the rest

REPO = Path(__file__).resolve().parent.parent


def test_mypy_is_clean_on_the_engine() -> None:
    cache = os.environ.get("FAIRWAY_TEST_MYPY_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fairway" / "mypy"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", cache],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success" in result.stdout
