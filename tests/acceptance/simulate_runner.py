"""Running ``fairway simulate`` as users do, in a subprocess, under a memory limit and a timeout, and reading how it
ended: exit code, stderr, the signal that killed it, its peak memory and wall time."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]
# Address space a run may map (numpy and the kubernetes client map a few hundred MB before anything is read).
MEMORY_LIMIT = 2 * 2**30
# What a run may actually use, resident (the replicas bomb took 6.2 GB), and how long it may take.
RSS_BUDGET = 600 * 2**20
TIME_BUDGET = 45.0


@dataclass
class Run:
    code: int  # exit code; negative: killed by that signal
    stdout: str
    stderr: str
    peak_rss: int  # bytes
    seconds: float
    timed_out: bool

    @property
    def signal(self) -> int | None:
        return -self.code if self.code < 0 else None


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_simulate(args: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = TIME_BUDGET) -> Run:
    """``python -m controlplane.cli simulate ARGS`` with the memory limit, killed after ``timeout``; the child is
    reaped here with ``wait4`` so that its own peak RSS is known."""
    child_env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **(env or {})}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controlplane.cli", "simulate", *args],
        cwd=REPO,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_memory,
    )
    streams: dict[str, bytes] = {}

    def drain(name: str, pipe: IO[bytes]) -> None:
        streams[name] = pipe.read()

    readers = [
        threading.Thread(target=drain, args=("out", proc.stdout), daemon=True),
        threading.Thread(target=drain, args=("err", proc.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    for reader in readers:
        reader.join()
    return Run(
        code=proc.returncode,
        stdout=streams.get("out", b"").decode("utf-8", "replace"),
        stderr=streams.get("err", b"").decode("utf-8", "replace"),
        peak_rss=usage.ru_maxrss * 1024,
        seconds=time.monotonic() - started,
        timed_out=timed_out.is_set(),
    )


def problems(run: Run) -> list[str]:
    """What is wrong with how a run ended (empty: exit 0 or 2, no traceback, within the budgets)."""
    found = []
    if run.timed_out:
        found.append(f"ran longer than {TIME_BUDGET:g} s")
    if run.signal is not None:
        found.append(f"killed by signal {run.signal}")
    elif run.code not in (0, 2):
        found.append(f"exit code {run.code}")
    if "Traceback (most recent call last)" in run.stderr:
        found.append("a traceback on stderr: " + run.stderr.strip().splitlines()[-1][:300])
    if run.peak_rss > RSS_BUDGET:
        found.append(f"peak RSS {run.peak_rss // 2**20} MB over {RSS_BUDGET // 2**20} MB")
    if run.code == 2:
        errors = [line for line in run.stderr.splitlines() if not line.startswith("warning: ")]
        if len(errors) != 1:
            found.append(f"exit 2 with {len(errors)} error lines instead of one: {errors[:3]}")
    return found
