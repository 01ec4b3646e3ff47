"""Each FAIRWAY number is checked at start (controlplane/ranges.py): one below its range, infinity and NaN stop
the start with a sentence naming the variable; its lowest allowed value passes."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from django.conf import settings

from controlplane.ranges import HIGHEST, RANGES, check_ranges


def test_the_defaults_are_within_range() -> None:
    check_ranges(settings.FAIRWAY)


@pytest.mark.parametrize(("name", "lowest", "lowest_allowed", "expected"), RANGES, ids=[r[0] for r in RANGES])
def test_each_range_names_its_variable(name: str, lowest: float, lowest_allowed: bool, expected: str) -> None:
    base = dict(settings.FAIRWAY)
    below = lowest - 1 if lowest_allowed else lowest
    for bad in (below, math.inf, math.nan):
        with pytest.raises(ValueError, match=rf"^FAIRWAY_{name}={bad}: expected "):
            check_ranges({**base, name: bad})
    check_ranges({**base, name: lowest if lowest_allowed else lowest + 0.5})


@pytest.mark.parametrize(("name", "highest", "expected"), HIGHEST, ids=[h[0] for h in HIGHEST])
def test_a_number_bounded_above_names_its_variable(name: str, highest: float, expected: str) -> None:
    base = dict(settings.FAIRWAY)
    with pytest.raises(ValueError, match=rf"^FAIRWAY_{name}={highest + 1}: expected {expected}$"):
        check_ranges({**base, name: highest + 1})
    check_ranges({**base, name: highest})


def test_a_process_with_a_value_out_of_range_does_not_start() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **__import__("os").environ,
            "DJANGO_SETTINGS_MODULE": "controlplane.settings",
            "FAIRWAY_MAX_PENDING_PODS_PER_TEAM": "0",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "FAIRWAY_MAX_PENDING_PODS_PER_TEAM=0: expected a whole number of pods, at least 1" in done.stderr
