"""The live sessions' inputs recorded, for ``fairway replay session ID`` (``planning.session_replay``).

After a scheduling session committed (``scheduling.sessions.run_scheduling_session``), the snapshot the engine was
fed, its ``now`` and what it decided are written as a ``SessionRecord``: a keyframe (the whole snapshot) or a delta
against the snapshot of this process's previous record of the cluster (``engine.replay.recorded``: the pods,
podgroups and nodes whose objects changed, found by identity, and the small parts that changed). A keyframe is
written when there is no previous record in this process (a new worker, a failed recording), every
``FAIRWAY_SESSION_RECORD_KEYFRAME_SESSIONS`` sessions, once the deltas since the keyframe hold
``FAIRWAY_SESSION_RECORD_KEYFRAME_DELTA_RATIO`` times the keyframe's bytes (a replay then reads at most that much more
than the keyframe; a keyframe costs about what as many bytes of deltas cost), when most of the cluster's objects are new (after a full read), and
when the keyframe is older than half the retention (so that a chain is never older than the retention as a whole).

The recording runs after the session's transaction, so it never holds the session's rows locked, and a failure of
its own is logged and costs the next record a keyframe: never the session. ``prune`` (the periodic compaction)
deletes the records older than ``FAIRWAY_SESSION_RECORD_RETENTION_HOURS``, a chain (a keyframe and its deltas) only
as a whole: a delta is never left without the records it is built on. Retention 0 records nothing.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from time import process_time
from typing import Any

from django.conf import settings
from django.db import connection

from engine import collector
from engine.objects import Snapshot
from engine.replay.recorded import Recorder, compact_decisions, dump_decisions
from engine.session.decisions import SessionResult
from scheduling.models import Cluster, RecordKind, SchedulingSession, SessionRecord, SessionStatus

__all__ = ["enabled", "forget", "prune", "record", "retention_hours"]

logger = logging.getLogger(__name__)


def retention_hours() -> float:
    return float(settings.FAIRWAY["SESSION_RECORD_RETENTION_HOURS"])


def enabled() -> bool:
    """Whether sessions are recorded (``FAIRWAY_SESSION_RECORD_RETENTION_HOURS`` above 0)."""
    return retention_hours() > 0


@dataclass
class _Chain:
    """This process's recording of one cluster: the recorder (the last snapshot recorded) and its chain."""

    recorder: Recorder = field(default_factory=Recorder)
    last_session: int | None = None
    last_time: float = 0.0
    keyframe_session: int | None = None
    keyframe_time: float = 0.0
    keyframe_bytes: int = 0
    sessions_since: int = 0
    bytes_since: int = 0
    # the last session's result (the object: a session whose result was reused hands in the same one) and digest
    last_result: Any = None
    last_digest: str = ""
    # the podgroups' statuses of ``last_result`` as its decisions hold them (``compact_decisions``'s ``previous``)
    last_statuses: Any = None

    def reset(self) -> None:
        self.recorder.clear()
        self.last_session = self.keyframe_session = None
        self.last_result, self.last_digest, self.last_statuses = None, "", None


_lock = threading.Lock()
_chains: dict[int, _Chain] = {}


def _chain(cluster_id: int) -> _Chain:
    with _lock:
        chain = _chains.get(cluster_id)
        if chain is None:
            chain = _chains[cluster_id] = _Chain()
        return chain


def forget(cluster_id: int | None = None) -> None:
    """Drop this process's recording state of one cluster or of all (its next record is a keyframe)."""
    with _lock:
        if cluster_id is None:
            _chains.clear()
        else:
            _chains.pop(cluster_id, None)


def _wants_keyframe(chain: _Chain, now: float) -> bool:
    fw = settings.FAIRWAY
    half = retention_hours() * 3600.0 / 2.0
    return (
        chain.last_session is None
        or not chain.recorder.primed
        or chain.sessions_since >= fw["SESSION_RECORD_KEYFRAME_SESSIONS"]
        or chain.bytes_since >= fw["SESSION_RECORD_KEYFRAME_DELTA_RATIO"] * chain.keyframe_bytes
        or now - chain.keyframe_time >= half
        or now - chain.last_time >= half
    )


def record(
    cluster: Cluster,
    session: SchedulingSession,
    snapshot: Snapshot,
    result: SessionResult,
    now: float,
    tasks_note: tuple[Any, Any, Any] | None = None,
) -> SessionRecord | None:
    """Record a session that committed (status ok): its inputs (``snapshot``, ``now``) and ``result``. Returns the
    row, or None when recording is off or failed (logged; the next record is then a keyframe). ``tasks_note``: the
    mirror's note of which pods changed since its previous copy (``ClusterMirror.tasks_note``), which spares the
    delta a look at every pod. A delta whose session reused its predecessor's result (nothing changed: the same
    result object) stores no decisions of its own: they are its parent's (the same digest)."""
    if not enabled() or session.status != SessionStatus.OK:
        return None
    chain = _chain(cluster.pk)
    # the collector paused as for the session itself (``engine.collector``): else the first collection after the
    # session's, which walks everything the session allocated, would fall inside the recording (tens of ms)
    with collector.paused():
        return _record(chain, cluster, session, snapshot, result, now, tasks_note)


def _record(
    chain: _Chain,
    cluster: Cluster,
    session: SchedulingSession,
    snapshot: Snapshot,
    result: SessionResult,
    now: float,
    tasks_note: tuple[Any, Any, Any] | None,
) -> SessionRecord | None:
    t0 = process_time()
    try:
        delta = None if _wants_keyframe(chain, now) else chain.recorder.delta(snapshot, tasks_note)
        if delta is None:
            payload, kind, parent, keyframe = chain.recorder.keyframe(snapshot), RecordKind.KEYFRAME, None, session.pk
        else:
            payload, kind = delta.payload, RecordKind.DELTA
            parent, keyframe = chain.last_session, chain.keyframe_session
        statuses = chain.last_statuses
        if kind == RecordKind.DELTA and result is chain.last_result:
            decisions, digest = b"", chain.last_digest  # the parent's, unchanged
        else:
            last = chain.last_result
            previous = None if last is None or statuses is None else (last.podgroups, statuses)
            compact = compact_decisions(result, snapshot, previous)  # (only the computed statuses, when it can)
            decisions, digest = dump_decisions(compact)
            statuses = compact["podgroups"]
        row = SessionRecord(
            cluster=cluster,
            session_id=session.pk,
            time=session.started,
            now=now,
            kind=kind,
            parent_session=parent,
            keyframe_session=keyframe,
            payload=payload,
            decisions=decisions,
            digest=digest,
            bound=result.bound,
            evicted=result.evicted,
        )
        row.record_ms = round((process_time() - t0) * 1000.0, 3)
        _insert(row)
    except Exception:
        logger.exception("cluster %s: session %s could not be recorded", cluster.name, session.pk)
        chain.reset()
        return None
    if kind == RecordKind.KEYFRAME:
        chain.keyframe_session, chain.keyframe_time, chain.keyframe_bytes = session.pk, now, len(payload)
        chain.sessions_since = chain.bytes_since = 0
    else:
        chain.sessions_since += 1
        chain.bytes_since += len(payload)
    chain.last_session, chain.last_time = session.pk, now
    chain.last_result, chain.last_digest, chain.last_statuses = result, digest, statuses
    return row


_COLUMNS = (
    "cluster_id",
    "session_id",
    "time",
    "now",
    "kind",
    "parent_session",
    "keyframe_session",
    "payload",
    "decisions",
    "digest",
    "bound",
    "evicted",
    "record_ms",
)
_BINARY = frozenset({"payload", "decisions"})


def _insert(row: SessionRecord) -> None:
    """Insert ``row``: on PostgreSQL one prepared statement with the payloads sent as binary parameters (a quarter
    of the ORM's CPU time, which a session a second pays), else through the ORM."""
    if connection.vendor != "postgresql":
        row.save(force_insert=True)
        return
    import psycopg

    marks = ", ".join("%b" if name in _BINARY else "%s" for name in _COLUMNS)
    sql = f"INSERT INTO {SessionRecord._meta.db_table} ({', '.join(_COLUMNS)}) VALUES ({marks})"
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, [getattr(row, name) for name in _COLUMNS], prepare=True)


def prune(cluster: Cluster, now: datetime) -> int:
    """Delete the cluster's records older than the retention (all of them when recording is off), each chain only
    when none of its records is recent; returns how many went."""
    hours = retention_hours()
    rows = SessionRecord.objects.filter(cluster=cluster)
    if hours <= 0:
        return int(rows.delete()[0])
    cutoff = now - timedelta(hours=hours)
    kept: Any = rows.filter(time__gte=cutoff).values("keyframe_session")
    return int(rows.filter(time__lt=cutoff).exclude(keyframe_session__in=kept).delete()[0])
