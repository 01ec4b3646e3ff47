"""Warm standby: a worker process keeps a current copy of the clusters it sends sessions on for, so that taking one
over is a catch-up from the change feed, not a full read.

A process that receives a cluster's session while another process holds the cluster (``scheduling.feed.affinity``)
sends the message on and then, with ``FAIRWAY_WARM_STANDBY`` on (the default), brings its own copy of the cluster
up to date (``keep_warm``): the mirror refreshed from the feed (``scheduling.feed.mirror``; a full read the first
time), and the engine's kept state (``engine.session.carry``) opened on that snapshot, as a session would open it,
without running any action. With several workers the beat's messages land on each of them, so every worker keeps
copies of the clusters the others hold, each as current as the last message it sent on (about a second).

When the holder dies, the process that takes the cluster's next session over finds a copy a few seconds behind: the
mirror reads only the rows changed since (every write of the holder's sessions is in the feed like any other), and
the engine updates its kept state for them instead of building it over every pod; the session's own writes are
read back next time like those of any session, so the second session after a takeover is a steady one. A copy too
far behind falls back as any copy does (changes pruned: a full read; more than a quarter of the pods changed: the
engine builds in full).

The price: each worker holds, besides the clusters it runs, a copy of every cluster whose sessions it sends on
(memory), and spends the CPU of a catch-up per message it sends on (the changed rows, not the cluster). A process
that never sends a session on (a single worker, the embedded broker) keeps no standby.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from time import perf_counter

from django.conf import settings
from django.db import transaction

from engine import collector
from scheduling.feed.mirror import mirror_of
from scheduling.models import Cluster

__all__ = ["enabled", "keep_warm", "running_session"]

logger = logging.getLogger(__name__)

_guards_lock = threading.Lock()
_guards: dict[int, threading.Lock] = {}
# cluster -> (the mirror's build and version, the carry's count of opens) when this module last opened its state
_opened: dict[int, tuple[str, int, int]] = {}


def enabled() -> bool:
    """``FAIRWAY_WARM_STANDBY``: whether a process keeps copies of the clusters it sends sessions on for."""
    return bool(settings.FAIRWAY["WARM_STANDBY"])


def _guard(cluster_id: int) -> threading.Lock:
    with _guards_lock:
        lock = _guards.get(cluster_id)
        if lock is None:
            lock = _guards[cluster_id] = threading.Lock()
        return lock


@contextmanager
def running_session(cluster_id: int) -> Iterator[None]:
    """Around a session of the cluster in this process: the engine's kept state is the session's meanwhile (a
    thread of the same process does not warm it)."""
    with _guard(cluster_id):
        yield


def keep_warm(cluster: Cluster) -> str:
    """Bring this process's copy of ``cluster`` up to date and open the engine's kept state on it; returns what was
    done, for the log ("" when the copy is busy with a session of this process, which keeps it current anyway)."""
    guard = _guard(cluster.pk)
    if not guard.acquire(blocking=False):
        return ""
    try:
        t0 = perf_counter()
        mirror = mirror_of(cluster.pk)
        with collector.paused():
            with transaction.atomic():
                done = mirror.refresh()
                # opened here on this very copy, and no session opened it since: nothing to open again (this only
                # spares work: the kept state finds what changed by itself, whatever it was opened on)
                same = _opened.get(cluster.pk) == (mirror.generation, mirror.version, mirror.carry.opened)
                snapshot = None if same else mirror.snapshot(cluster)
            state = "as it was"
            if snapshot is not None:
                # as a session opens it: no action runs, so nothing of it is undone at the next open
                mirror.carry.open(snapshot, [])
                _opened[cluster.pk] = (mirror.generation, mirror.version, mirror.carry.opened)
                state = mirror.carry.last
        what = f"full read ({done.reason})" if done.full else f"{done.changes} changed rows"
        return f"{what}, engine state {state}, {(perf_counter() - t0) * 1000.0:.0f} ms"
    finally:
        guard.release()
