"""The baseline and the proposal of a replay side by side, each on a core of its own (issue 29 item 5).

A replay with changes runs the same trace twice, and the two runs share nothing: with ``processes`` 2 the proposal
runs in a second process while this one replays the baseline, so an admin waits for one replay rather than two (a
week of the small demo: minutes of CPU each). The second process is a fresh interpreter (``python -m`` this module,
with this one's import path), so nothing of the caller is inherited, neither its database connections nor its
threads, and it imports the engine alone. Over a pipe it is sent the trace, the changes, the seed and the replay's
arguments, and it sends back its virtual time as it goes (at most a thousand times a window), then the proposal's
report, which is the report the same call makes in this process (the engine is deterministic for a seed:
``tests/unit/test_side_by_side.py`` compares them).

``progress(fraction, phase)`` is called in this process only, as the replays go: while both run, with their mean
fraction of the window; while this one waits for the other, every ``poll`` seconds. It may raise (a cancel, a time
limit): the second process is then stopped at once, and so it is whenever this call ends before it. An error of the
proposal's replay (``ReplayError``: a change that does not apply) is raised here as soon as it is known, without
waiting for the baseline to end.

No Django here: the task (``planning.replay.execute``) and the offline command (``fairway replay --changes``) both
use it. ``processes`` 1 runs the two one after the other in this process (``FAIRWAY_REPLAY_PROCESSES``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

from controlplane.children import die_with_parent
from engine.replay import ReplayError, replay, run_report
from engine.replay.trace import Trace

__all__ = ["BASELINE", "BOTH", "PROPOSAL", "replay_both"]

BASELINE = "replaying the baseline"
PROPOSAL = "replaying with the changes"
BOTH = "replaying the baseline and the changes side by side"
WAITING = "replaying with the changes (the baseline is done)"

Progress = Callable[[float, str], None]
Report = dict[str, Any]


def replay_both(
    trace: Trace,
    changes: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    processes: int = 2,
    progress: Progress | None = None,
    poll: float = 0.5,
    **replay_args: Any,
) -> tuple[Report, Report]:
    """The baseline's report and the proposal's (``run_report`` of each ``replay``); ``replay_args`` (a policy, a
    tree) go to both replays."""
    say = progress or (lambda fraction, phase: None)
    start, span = trace.header.start, max(1e-9, trace.header.end - trace.header.start)

    def done(t: float) -> float:
        return min(1.0, max(0.0, (t - start) / span))

    if processes <= 1:
        baseline = run_report(replay(trace, seed=seed, progress=lambda t: say(0.5 * done(t), BASELINE), **replay_args))
        say(0.5, PROPOSAL)
        proposal = run_report(
            replay(trace, changes=changes, seed=seed, progress=lambda t: say(0.5 + 0.5 * done(t), PROPOSAL),
                   **replay_args)
        )  # fmt: skip
        return baseline, proposal
    return _Pair(trace, changes, seed, replay_args, say, done, poll).run()


class _Pair:
    """The proposal in a second process, the baseline here (the module docstring)."""

    def __init__(
        self,
        trace: Trace,
        changes: Sequence[Mapping[str, Any]],
        seed: int,
        replay_args: Mapping[str, Any],
        say: Progress,
        done: Callable[[float], float],
        poll: float,
    ) -> None:
        self.trace, self.changes, self.seed, self.replay_args = trace, list(changes), seed, dict(replay_args)
        self.say, self.done, self.poll = say, done, poll
        self.reached = trace.header.start  # the proposal's virtual time, as it last said
        self.answer: tuple[str, Any] | None = None
        inbox, to_parent = os.pipe()
        from_parent, outbox = os.pipe()
        self.child = subprocess.Popen(
            [sys.executable, "-m", __name__, str(from_parent), str(to_parent)],
            pass_fds=(from_parent, to_parent), stdin=subprocess.DEVNULL, env=_child_env(),
            preexec_fn=die_with_parent,
        )  # fmt: skip
        os.close(from_parent)
        os.close(to_parent)  # the child's exit closes the pipe: a read then ends instead of waiting
        self.inbox = Connection(inbox, writable=False)
        self.outbox = Connection(outbox, readable=False)

    def run(self) -> tuple[Report, Report]:
        try:
            self.outbox.send((self.trace, self.changes, self.seed, self.replay_args))
            baseline = run_report(replay(self.trace, seed=self.seed, progress=self._baseline_step, **self.replay_args))
            while self.answer is None:
                self._check(wait=self.poll)
                self.say(0.5 + 0.5 * self.done(self.reached), WAITING)
            return baseline, self.answer[1]
        finally:
            self._stop()

    def _baseline_step(self, t: float) -> None:
        self._check()
        self.say(0.5 * (self.done(t) + self.done(self.reached)), BOTH)

    def _check(self, *, wait: float = 0.0) -> None:
        """Read what the proposal's process said: how far it has come, then its report; raise its error at once."""
        while self.answer is None and self.inbox.poll(wait):
            wait = 0.0
            try:
                kind, value = self.inbox.recv()
            except EOFError:
                code = self.child.wait()
                raise ReplayError(
                    f"the proposal's replay ended without a result (its process exited with {code})"
                ) from None
            if kind == "at":
                self.reached = value
            elif kind == "error":
                raise value
            else:
                self.answer = (kind, value)

    def _stop(self) -> None:
        if self.answer is not None:  # it has said all: let it end by itself
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.child.wait(5)
        if self.child.poll() is None:
            self.child.terminate()
        self.child.wait()
        self.inbox.close()
        self.outbox.close()


def _child_env() -> dict[str, str]:
    """The caller's environment, with its import path: the second process imports what this one did."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _proposal(inbox: Connection, outbox: Connection) -> None:
    """The second process's body: the proposal's report, or its error, sent back; its virtual time said at most a
    thousand times over the window."""
    trace, changes, seed, args = inbox.recv()
    start, end = trace.header.start, trace.header.end
    least, said = (end - start) / 1000, [start]

    def step(t: float) -> None:
        if t - said[0] >= least:
            said[0] = t
            outbox.send(("at", t))

    try:
        report = run_report(replay(trace, changes=changes, seed=seed, progress=step, **args))
    except ReplayError as exc:
        outbox.send(("error", exc))
    except Exception as exc:  # anything else still ends the caller's wait with a sentence
        outbox.send(("error", ReplayError(f"the proposal's replay failed: {type(exc).__name__}: {exc}")))
    else:
        outbox.send(("report", report))


if __name__ == "__main__":
    _proposal(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False))
