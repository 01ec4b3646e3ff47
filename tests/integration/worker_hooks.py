"""Loaded by the integration tests' Celery worker (``celery worker --include tests.integration.worker_hooks``).

With ``FAIRWAY_TEST_PAUSE_MARKER`` set, a scheduling session pauses right after writing its decisions, before its
transaction commits: it writes the marker file (its pid inside) and sleeps, so the test can kill the worker
mid-session; with ``FAIRWAY_TEST_PAUSE_RELEASE`` set too, it goes on (and commits) once that file exists. Without
the variables, this module does nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from celery.signals import task_prerun

_MARKER = os.environ.get("FAIRWAY_TEST_PAUSE_MARKER", "")
_RELEASE = os.environ.get("FAIRWAY_TEST_PAUSE_RELEASE", "")
_patched = False


@task_prerun.connect
def _pause_sessions(**kwargs: Any) -> None:
    global _patched
    if not _MARKER or _patched:
        return
    from scheduling import sessions

    real = sessions.apply_decisions

    def paused(*args: Any, **kw: Any) -> Any:
        session = real(*args, **kw)  # every decision written, nothing committed yet
        Path(_MARKER).write_text(str(os.getpid()))
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not (_RELEASE and Path(_RELEASE).exists()):
            time.sleep(0.1)
        return session

    sessions.apply_decisions = paused  # where the session looks it up
    _patched = True
