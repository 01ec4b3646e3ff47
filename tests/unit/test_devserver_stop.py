"""``make run``'s supervisor stopping a child that ignores its TERM: beat, which holds no work, is killed after its
short grace and the stop is still clean; any other child waits for ``STOP_TIMEOUT`` and makes the stop unclean.
Real child processes, no Django."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from controlplane import devserver

# the child tells it ignores TERM by creating the file named in its argument: a TERM sent before that (an interpreter
# slow to start on a busy machine) would end it at once and test nothing
IGNORES_TERM = [
    sys.executable,
    "-c",
    "import pathlib, signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "pathlib.Path(sys.argv[1]).touch()\ntime.sleep(120)\n",
]
READY_WAIT = 60.0  # seconds for the child to start, however busy the machine


def _serve(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[int, float, devserver.Supervisor]:
    """Serve one child that ignores TERM, send the supervisor a TERM once the child is ready, and return the status,
    the seconds from that TERM to the end of ``serve`` and the supervisor."""
    monkeypatch.setattr(devserver, "HOLDS_NO_WORK", {"beat": 1.0})
    monkeypatch.setattr(devserver, "STOP_TIMEOUT", 4.0)
    supervisor = devserver.Supervisor(dict(os.environ))
    ready = tmp_path / "ready"
    sent: list[float] = []

    def stop() -> None:
        deadline = time.monotonic() + READY_WAIT
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        sent.append(time.monotonic())
        supervisor._on_signal(signal.SIGTERM, None)

    thread = threading.Thread(target=stop, daemon=True)
    thread.start()
    status = supervisor.serve({name: [*IGNORES_TERM, str(ready)]})
    ended = time.monotonic()
    thread.join()
    assert ready.exists(), "the child never started"
    return status, ended - sent[0], supervisor


def test_beat_ignoring_its_term_is_killed_after_its_grace_and_the_stop_is_clean(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    status, _, supervisor = _serve("beat", monkeypatch, tmp_path)
    assert status == 0
    assert supervisor.killed_idle == {"beat"}
    assert supervisor.children["beat"].returncode == -signal.SIGKILL


def test_another_child_ignoring_its_term_waits_for_the_stop_timeout_and_the_stop_is_unclean(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    status, took, supervisor = _serve("worker", monkeypatch, tmp_path)
    assert status == 1
    assert supervisor.killed_idle == set()
    assert took >= 4.0
