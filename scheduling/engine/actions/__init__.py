"""The actions a policy may run, by name, in the order the policy lists them (one module per action)."""

from __future__ import annotations

from collections.abc import Callable

from scheduling.engine.actions.allocate import allocate
from scheduling.engine.actions.backfill import backfill
from scheduling.engine.actions.enqueue import enqueue
from scheduling.engine.actions.preempt import preempt
from scheduling.engine.actions.reclaim import reclaim
from scheduling.engine.session import Session

__all__ = ["ACTIONS"]

ACTIONS: dict[str, Callable[[Session], None]] = {
    "enqueue": enqueue,
    "allocate": allocate,
    "backfill": backfill,
    "reclaim": reclaim,
    "preempt": preempt,
}
