"""The ranges of the FAIRWAY settings that are numbers: what each takes, checked once at start (``settings.py``), so a
wrong value stops the process with a sentence naming the variable instead of misbehaving later."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# (name under FAIRWAY, the lowest value, whether the lowest itself is allowed, what is expected, said to people)
RANGES: tuple[tuple[str, float, bool, str], ...] = (
    ("AFFINITY_WINDOW_SECONDS", 0, True, "a number of seconds, 0 or more"),
    ("SESSION_LOCK_WAIT_SECONDS", 0, True, "a number of seconds, 0 (no wait) or more"),
    ("SESSION_LOCK_POLL_SECONDS", 0, False, "a number of seconds above 0"),
    ("NODE_CHECK_GAP_SECONDS", 0, False, "a number of seconds above 0"),
    ("POD_CREATION_SECONDS", 0, True, "a number of seconds, 0 (no wait) or more"),
    ("METRICS_NODE_SERIES_LIMIT", 0, True, "a number of nodes, 0 (counts only) or more"),
    ("METRICS_WAIT_WINDOW_SECONDS", 60, True, "a whole number of seconds, at least 60"),
    ("METRICS_WAITS_EVERY_SECONDS", 0, True, "a number of seconds, 0 (every scrape) or more"),
    ("MAX_PENDING_PODS_PER_TEAM", 1, True, "a whole number of pods, at least 1"),
    ("MAX_PENDING_PODGROUPS_PER_TEAM", 1, True, "a whole number of podgroups, at least 1"),
    ("TOKEN_LIFETIME_DAYS", 1, True, "a whole number of days, at least 1"),
    ("TOKEN_MAX_LIFETIME_DAYS", 1, True, "a whole number of days, at least 1"),
    ("TOKEN_LAST_USED_SECONDS", 0, True, "a whole number of seconds, 0 or more"),
    ("TOKEN_FAILURE_LIMIT", 1, True, "a whole number, at least 1"),
    ("TOKEN_FAILURE_WINDOW_SECONDS", 1, True, "a whole number of seconds, at least 1"),
    ("SECURITY_EVENT_RETENTION_DAYS", 1, True, "a whole number of days, at least 1"),
    ("EVICTION_RETENTION_DAYS", 0, True, "a number of days, 0 or more"),
    ("JOB_HISTORY_DAYS", 1, True, "a whole number of days, at least 1"),
    ("SAMPLE_RETENTION_DAYS", 1, True, "a whole number of days, at least 1"),
    ("SAMPLE_EVERY_SECONDS", 0, True, "a number of seconds, 0 or more"),
    ("CHANGE_REQUEST_WEBHOOK_TIMEOUT_SECONDS", 0, False, "a number of seconds above 0"),
    ("LOAN_MAX_DAYS", 1, True, "a whole number of days, at least 1"),
    ("LOAN_CHECK_SECONDS", 1, True, "a whole number of seconds, at least 1"),
    ("REPLAY_MAX_WINDOW_DAYS", 1, True, "a whole number of days, at least 1"),
    ("REPLAY_PROGRESS_SECONDS", 0, True, "a number of seconds, 0 or more"),
    ("REPLAY_TIME_LIMIT_SECONDS", 0, False, "a number of seconds above 0"),
    ("REPLAY_RETENTION_DAYS", 1, True, "a whole number of days, at least 1"),
    ("START_ESTIMATE_DRAWS", 1, True, "a whole number, at least 1"),
    ("START_ESTIMATE_JOBS_PER_QUEUE", 1, True, "a whole number, at least 1"),
    *(
        (f"START_ESTIMATE_{name}", 0, False, "a number above 0")
        for name in (
            "HORIZON_HOURS",
            "ARRIVALS_HOURS",
            "PERIOD_SECONDS",
            "BUDGET_SECONDS",
            "PAGE_BUDGET_SECONDS",
            "TTL_SECONDS",
        )
    ),
    ("START_ESTIMATE_WORKER_WAIT_SECONDS", 0, True, "a number of seconds, 0 or more"),
    ("THRASH_WINDOW_SECONDS", 0, False, "a number of seconds above 0"),
    ("SESSION_RECORD_RETENTION_HOURS", 0, True, "a number of hours, 0 (recording off) or more"),
    ("SESSION_RECORD_KEYFRAME_SESSIONS", 1, True, "a whole number of sessions, at least 1"),
    ("SESSION_RECORD_KEYFRAME_DELTA_RATIO", 0, False, "a number above 0"),
)

# (name under FAIRWAY, the highest value allowed, what is expected) for the few numbers bounded above
HIGHEST: tuple[tuple[str, float, str], ...] = (
    # the wait counts toward the session task's time limit (120 s, scheduling/tasks.py)
    ("SESSION_LOCK_WAIT_SECONDS", 60, "a number of seconds, at most 60"),
    # each rebuild reads the window's jobs: a day of a busy cluster is some 15,000 rows
    ("METRICS_WAIT_WINDOW_SECONDS", 86400, "a whole number of seconds, at most 86400, a day"),
)


def check_ranges(fairway: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first FAIRWAY_ variable out of its range (infinity and NaN never pass)."""
    for name, lowest, lowest_allowed, expected in RANGES:
        value = fairway[name]
        if not (value >= lowest if lowest_allowed else value > lowest) or value == float("inf"):
            raise ValueError(f"FAIRWAY_{name}={value}: expected {expected}")
    for name, highest, expected in HIGHEST:
        if fairway[name] > highest:
            raise ValueError(f"FAIRWAY_{name}={fairway[name]}: expected {expected}")
