"""The baseline and the proposal side by side (``controlplane.side_by_side``): the proposal's report from the second
process is the one the same replay makes here; progress only goes forward; an error of the proposal's replay, a
cancel and a second process that dies each end the call with a sentence, and the second process never outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any

import pytest

from controlplane import side_by_side
from controlplane.side_by_side import BOTH, replay_both
from engine.replay import ReplayError, read_trace
from tests.unit.test_replay import HEADER, TREE, job, text

# two queues sharing one 4-GPU node for two hours: 24 jobs of 1-4 GPUs, 5 to 40 minutes each
JOBS = [
    job(f"j{i}", "ab"[i % 2], f"2026-03-02T08:{(i * 4) % 60:02d}:00Z" if i < 15 else f"2026-03-02T09:{i:02d}:00Z",
        1 + i % 4, 300 + (i * 97) % 2100)
    for i in range(24)
]  # fmt: skip
TRACE = read_trace(text([HEADER, TREE, *JOBS]))
HEAVIER_B = [{"op": "update", "kind": "queue", "name": "b", "spec": {"weight": 3}}]


class _Stop(Exception):
    pass


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[Any]]:
    """The second processes started, to see that each has ended (and been waited for) when the call returns."""
    started: list[subprocess.Popen[Any]] = []
    real = subprocess.Popen

    def spy(*args: Any, **kw: Any) -> subprocess.Popen[Any]:
        child = real(*args, **kw)
        started.append(child)
        return child

    monkeypatch.setattr(side_by_side.subprocess, "Popen", spy)
    return started


def test_side_by_side_gives_the_reports_one_after_the_other_gives(children: list[subprocess.Popen[Any]]) -> None:
    seen: list[tuple[float, str]] = []
    both = replay_both(TRACE, HEAVIER_B, processes=2, progress=lambda f, p: seen.append((f, p)), poll=0.05)
    alone = replay_both(TRACE, HEAVIER_B, processes=1)
    assert json.dumps(both, sort_keys=True) == json.dumps(alone, sort_keys=True)
    assert both[0] != both[1]  # the proposal's weights moved something
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0 < fractions[-1] <= 1.0
    assert seen[0][1] == BOTH
    assert len(children) == 1 and children[0].returncode == 0


def test_a_change_that_does_not_apply_is_told_from_the_second_process(children: list[subprocess.Popen[Any]]) -> None:
    gone = [{"op": "remove", "kind": "node", "name": "nope"}]
    with pytest.raises(ReplayError, match=r"--changes: .*nope"):
        replay_both(TRACE, gone, processes=2)
    assert len(children) == 1 and children[0].returncode is not None


def test_a_cancel_stops_the_second_process(children: list[subprocess.Popen[Any]]) -> None:
    def cancel(fraction: float, phase: str) -> None:
        raise _Stop

    with pytest.raises(_Stop):
        replay_both(TRACE, HEAVIER_B, processes=2, progress=cancel)
    (child,) = children
    assert child.returncode is not None  # ended and waited for
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)


def test_a_second_process_that_dies_ends_the_call_with_its_exit(children: list[subprocess.Popen[Any]]) -> None:
    def kill_it(fraction: float, phase: str) -> None:
        if children[0].poll() is None:
            children[0].send_signal(signal.SIGKILL)
            children[0].wait()

    with pytest.raises(ReplayError, match=r"ended without a result \(its process exited with -9\)"):
        replay_both(TRACE, HEAVIER_B, processes=2, progress=kill_it, poll=0.05)
