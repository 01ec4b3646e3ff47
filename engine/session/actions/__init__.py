"""The actions a policy may run, by name, in the order the policy lists them (one module per action)."""

from __future__ import annotations

from collections.abc import Callable

from engine.session.actions.allocate import allocate
from engine.session.actions.backfill import backfill
from engine.session.actions.enqueue import enqueue
from engine.session.actions.preempt import preempt
from engine.session.actions.reclaim import reclaim
from engine.session.session import Session

__all__ = ["ACTIONS"]

ACTIONS: dict[str, Callable[[Session], None]] = {
    "enqueue": enqueue,
    "allocate": allocate,
    "backfill": backfill,
    "reclaim": reclaim,
    "preempt": preempt,
}
