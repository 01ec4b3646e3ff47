"""``make run``'s supervisor stopping a child that ignores its TERM: beat, which holds no work, is killed after its
short grace and the stop is still clean; any other child waits for ``STOP_TIMEOUT`` and makes the stop unclean.
Real child processes, no Django."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from controlplane import devserver

IGNORES_TERM = [
    sys.executable,
    "-c",
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(120)\n",
]


def _stop_after(supervisor: devserver.Supervisor, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, supervisor._on_signal, args=(signal.SIGTERM, None))
    timer.start()
    return timer


def _serve(name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, float, devserver.Supervisor]:
    monkeypatch.setattr(devserver, "HOLDS_NO_WORK", {"beat": 1.0})
    monkeypatch.setattr(devserver, "STOP_TIMEOUT", 4.0)
    supervisor = devserver.Supervisor(dict(os.environ))
    timer = _stop_after(supervisor, 1.0)
    started = time.monotonic()
    try:
        status = supervisor.serve({name: IGNORES_TERM})
    finally:
        timer.cancel()
    return status, time.monotonic() - started, supervisor


def test_beat_ignoring_its_term_is_killed_after_its_grace_and_the_stop_is_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, _, supervisor = _serve("beat", monkeypatch)
    assert status == 0
    assert supervisor.killed_idle == {"beat"}
    assert supervisor.children["beat"].returncode == -signal.SIGKILL


def test_another_child_ignoring_its_term_waits_for_the_stop_timeout_and_the_stop_is_unclean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, took, supervisor = _serve("worker", monkeypatch)
    assert status == 1
    assert supervisor.killed_idle == set()
    assert took >= 4.0
