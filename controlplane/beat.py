"""Celery beat's scheduler for Fairway: django-celery-beat's database schedule, stopped between ticks.

Celery beat handles SIGTERM and SIGINT by saving the schedule *inside the signal handler* and raising
``SystemExit`` from it. A signal that lands while beat is itself in the database (setting up its entries at start,
or saving last-run times) then runs a second database operation inside the first: on SQLite the handler meets a
closed connection and prints a traceback, on a locked database the save fails and the loop swallows the exit, and
beat goes on sending tasks as if it had never been told to stop. Here the signal only records the request; the
next tick raises ``SystemExit`` in beat's own loop, which then saves the schedule once, outside any handler. The
wait between ticks happens here, in short slices that look at the request, so a stop takes a fraction of a second
instead of the rest of beat's ``max_interval`` (5 s).
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType
from typing import Any

from django_celery_beat.schedulers import DatabaseScheduler

STOP_CHECK_SECONDS = 0.2  # how often the wait between ticks looks for a stop request
AFTER_WAIT_SECONDS = 1e-3  # what tick hands beat's loop once it waited itself (positive: beat then syncs as usual)


class Scheduler(DatabaseScheduler):  # type: ignore[misc]
    """``DatabaseScheduler`` whose SIGTERM / SIGINT ask for a stop at the next tick instead of acting in the handler."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.stop_requested = threading.Event()
        if threading.current_thread() is threading.main_thread():  # beat's own process, not a test's helper thread
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, self._request_stop)
        super().__init__(*args, **kwargs)

    def _request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_requested.set()

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if self.stop_requested.is_set():
            raise SystemExit(0)  # beat's Service.start stops on it and saves the schedule in its ``finally``
        interval: float = super().tick(*args, **kwargs)
        if not interval or interval <= AFTER_WAIT_SECONDS:
            return interval
        # Beat's loop would sleep ``interval`` in one go, deaf to the request; wait here instead, a slice at a time.
        until = time.monotonic() + interval - AFTER_WAIT_SECONDS
        while not self.stop_requested.is_set() and (left := until - time.monotonic()) > 0:
            time.sleep(min(STOP_CHECK_SECONDS, left))
        return AFTER_WAIT_SECONDS
