"""Python's cyclic garbage collector paused while the engine builds and walks a large state.

A snapshot of a big cluster, a session and a set of quota values are hundreds of thousands of small objects
(dataclasses, dicts, tuples) that are nearly all alive until the computation ends. With the collector on, every
few hundred container allocations start a collection, and the older generations are walked again and again over
everything allocated so far: measured at 1,000 nodes / 500 queues, that doubled the time of ``compute_values``
and ``compare``, and it took a fifth of a 50,000-pod session. Reference counting frees memory as usual while
the collector is paused; the cycles a computation leaves (a session's jobs and tasks point at each other) are
collected by the first automatic collection after it.

``paused()`` nests and is safe across threads: only the outermost block that found the collector on turns it
back on, so a block never leaves it off for good (a thread may see it on again before its own block ends, which
costs time, never correctness).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["collect_young", "paused", "paused_during", "settle", "thawed_after"]

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block, then back as the block found it."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def collect_young() -> None:
    """Collect the youngest generation now, for a caller with time to spare inside a paused block (waiting on the
    database): with the collector paused every object a computation allocated is still in it, so the first
    allocation after the pause would otherwise walk them all at once (70 ms after a 50,000-pod session)."""
    gc.collect(0)


def settle() -> None:
    """Collect the youngest generation, then set every object the collector tracks aside for good (``gc.freeze``:
    moved to its permanent generation, in constant time), for a long computation that keeps most of what it makes
    (a replay's results): no later collection walks them again, where collecting the middle generation from time
    to time walked each survivor twice. Reference counting still frees them; only a reference cycle that becomes
    garbage after it was set aside waits for ``thawed_after``."""
    gc.collect(0)
    gc.freeze()


@contextmanager
def thawed_after() -> Iterator[None]:
    """What ``settle`` set aside in the block goes back to the oldest generation when it ends (``gc.unfreeze``),
    unless objects were set aside before it began (someone else's: a process that froze its modules keeps them so)."""
    before = gc.get_freeze_count()
    try:
        yield
    finally:
        if before == 0:
            gc.unfreeze()


def paused_during(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` run with the collector paused (see ``paused``)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return func(*args, **kwargs)

    return wrapper
