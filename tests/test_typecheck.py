"""mypy, strict on the pure engine (pyproject's ``[tool.mypy]``), as part of the suite: `make test` and plain
`pytest` both run it, beside the other tests rather than before them.

It keeps mypy's own cache where ``make typecheck`` and a plain ``mypy`` keep it (``.mypy_cache/`` in the checkout,
ignored by git): a later run re-checks only the modules that changed and those that depend on them, with the same
result as a cold run (mypy's incremental mode). A fresh clone (CI) starts cold and pays the whole check once;
``FAIRWAY_TEST_MYPY_CACHE`` names another cache folder (an empty temporary one for a cold run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts with the long modules, so it overlaps the rest

REPO = Path(__file__).resolve().parent.parent


def test_mypy_is_clean_on_the_engine() -> None:
    cache = os.environ.get("FAIRWAY_TEST_MYPY_CACHE") or str(REPO / ".mypy_cache")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", cache],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success" in result.stdout
