"""The what-if page calls a job admitted only when it is Inqueue or Running after the proposal, and shows plain
increases and decreases in neutral ink, not in the borrow/lend colours."""

from __future__ import annotations

import re
from pathlib import Path

from frontend.presenters.impact import _from_session


def _pg(phase: str, placed: int, message: str = "") -> dict[str, object]:
    return {"phase": phase, "placed": placed, "message": message}


def test_admitted_means_inqueue_or_running_after() -> None:
    result = {
        "podgroups": {
            "ns/starts": {"before": _pg("Pending", 0), "after": _pg("Running", 4)},
            "ns/enqueued": {"before": _pg("Pending", 0), "after": _pg("Inqueue", 0)},
            "ns/runs-now": {"before": _pg("Inqueue", 0), "after": _pg("Running", 2)},
            # places one more pod but stays blocked: not admitted
            "ns/still-waits": {
                "before": _pg("Pending", 0),
                "after": _pg("Pending", 1, "queue q: insufficient cpu, requested 8, available 2"),
            },
            "ns/loses": {"before": _pg("Running", 4), "after": _pg("Pending", 0)},
            "ns/same": {"before": _pg("Running", 4), "after": _pg("Running", 4)},
        },
        "evictions": [],
    }
    rows = _from_session(result)
    keys = {k: [r["key"] for r in rows[k]] for k in ("admitted", "closer", "blocked", "changed")}
    assert keys == {
        "admitted": ["ns/enqueued", "ns/runs-now", "ns/starts"],
        "closer": ["ns/still-waits"],
        "blocked": ["ns/loses"],
        "changed": ["ns/same"],
    }


def test_increases_and_decreases_use_neutral_ink() -> None:
    css = (Path(__file__).resolve().parents[2] / "frontend/static/frontend/fairway.css").read_text()
    rules = {m.group(1).strip(): m.group(2) for m in re.finditer(r"([^{}]*\.delta\.(?:up|down)[^{}]*)\{([^}]*)\}", css)}
    assert rules, "no rule for .delta.up / .delta.down"
    for body in rules.values():
        assert "--borrow" not in body and "--lend" not in body
        assert "var(--ink)" in body
