"""What a process Fairway starts inherits about its parent's life (the development server's web, worker and beat; a
replay's second process; the servers the tests start)."""

from __future__ import annotations

import contextlib
import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """A ``preexec_fn``: on Linux the child gets SIGTERM when the process that started it dies (killed, out of
    memory), so no child outlives it; elsewhere nothing."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
