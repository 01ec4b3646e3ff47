"""Words for people: counts with their nouns, lengths of time."""

from __future__ import annotations

import pytest

from engine.wording import duration, plural, spelled_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (0.7, "under 1 s"),
        (1.0, "1 s"),
        (45, "45 s"),
        (60, "1 min"),
        (250, "4 min 10 s"),
        (3600, "1 h"),
        (12000, "3 h 20 min"),
        (7 * 86400, "7 d"),
        (2 * 86400 + 4 * 3600 + 59, "2 d 4 h"),
        (-5, "0 s"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_plural() -> None:
    assert plural(1, "pod") == "1 pod"
    assert plural(2, "pod") == "2 pods"
    assert plural(2, "tax") == "2 taxes"
    assert plural(3, "child", "children") == "3 children"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (3 * 86400, "3 days"),
        (86400 + 12 * 3600, "1 day 12 hours"),
        (12 * 3600, "12 hours"),
        (5400, "1 hour 30 minutes"),
        (60, "1 minute"),
        (45, "45 seconds"),
        (0, "0 seconds"),
    ],
)
def test_a_length_spelled_out(seconds: int, words: str) -> None:
    assert spelled_duration(seconds) == words
