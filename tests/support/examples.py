"""How many examples a property test draws: the count it names, scaled by ``FAIRWAY_EXAMPLES`` (default 0.5).

The suite is bound by CPU on two cores (docs/testing.md, "The suite's time") and its property tests spent about a
fifth of it. Under ``make test`` each draws half the examples it names (at least 20, or all of them when it names
fewer): Hypothesis draws fresh examples on every run (no test derandomizes but one), so the runs together cover what
one longer run would, and a failing example is kept in ``.hypothesis`` and tried first next time. For a thorough run
name a larger scale, e.g. ``FAIRWAY_EXAMPLES=4 make test`` (eight times the default's examples)."""

from __future__ import annotations

import os

FLOOR = 20
SCALE = float(os.environ.get("FAIRWAY_EXAMPLES", "0.5"))


def examples(count: int) -> int:
    """The examples to draw for a test that names ``count``."""
    return max(min(count, FLOOR), round(count * SCALE))
