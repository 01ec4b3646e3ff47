"""mypy, strict on the pure engine (pyproject's ``[tool.mypy]``), as part of the suite: `make test` and plain
`pytest` both run it, beside the other tests rather than before them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts with the long modules, so it overlaps the rest

REPO = Path(__file__).resolve().parent.parent


def test_mypy_is_clean_on_the_engine(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success" in result.stdout
