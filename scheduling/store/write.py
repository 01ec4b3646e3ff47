"""Decisions -> rows.

Writing (``apply_decisions``) happens in ONE ``transaction.atomic()``:

1. a ``SchedulingSession`` row (its id is the Volcano ``transitionID`` of the conditions written below);
2. pods pipelined by the previous session go back to Pending; then each binding is a compare-and-swap from
   Pending (``UPDATE … WHERE status = 'Pending'``), to Bound on its node or Pipelined on its nominated node, so
   a replayed result binds nothing twice. On PostgreSQL all bindings are one ``UPDATE … FROM unnest(…)`` joined
   on the namespace and node names (``RETURNING`` tells which took effect); elsewhere one ``UPDATE`` per node;
3. each eviction is a compare-and-swap from an allocated status to Releasing (reason ``Evicted``) plus an
   ``Eviction`` row with its action, reason, message, preemptor and blocker, only for pods that changed;
4. podgroup phases, reasons and Volcano conditions (``Unschedulable`` with the reason and message, or
   ``Scheduled``), for changed podgroups only, never touching one already Completed; a ``PodGroupReason``
   history row when the phase, the reason or the blocking tree node / resource changed (not when only the
   numbers in the message moved, or the history would grow every second). On PostgreSQL the statuses compared
   with are those the last session of this process left, with only the podgroups the change feed logged since
   read again (``_current_statuses``), rather than every open podgroup of the cluster;
5. one ``QuotaSample`` per queue and per quota group with its computed values in base units;
6. the session's counts and timings.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

import orjson
import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.models import Revision
from engine.amounts import raw
from engine.objects import (
    PodGroupPhase,
)
from engine.session import decisions
from engine.usage import UsageHistory as PastUsage
from scheduling import counters
from scheduling.choices import PodGroupPhase as DbPhase
from scheduling.choices import PodStatus
from scheduling.models import (
    ChangeKind,
    Cluster,
    ClusterFeed,
    Eviction,
    Pod,
    PodGroup,
    PodGroupReason,
    QuotaSample,
    RowChange,
    SampleKind,
    SchedulingSession,
    SessionKind,
    SessionStatus,
    UsageHistory,
)
from scheduling.store.bindings import apply_bindings
from scheduling.store.db import (
    ALLOCATED_DB_STATUSES,
    BATCH,
    SCHEDULED_CONDITION_REASON,
    RowIds,
    as_text,
    is_postgres,
    iso,
    pg_array,
    pg_int_array,
    split_uid,
)

logger = logging.getLogger(__name__)


def save_past_usage(cluster: Cluster, history: PastUsage) -> None:
    """Keep the record a session brought forward: ONE row per cluster, written in the caller's transaction."""
    stored = history.to_json()
    updated = datetime.fromtimestamp(history.updated if history.updated is not None else 0.0, tz=UTC)
    UsageHistory.objects.update_or_create(cluster=cluster, defaults={"updated": updated, "nodes": stored["nodes"]})


def save_partial_admissions(cluster: Cluster, cuts: Mapping[str, int]) -> int:
    """Store the count each Kueue Job admitted in part runs with (``engine.partial.PartialAdmission.cuts``: podgroup
    key -> count) as ``PodGroup.kueue_admitted_count``, and clear it on every other Job's row (admitted whole, waiting
    again, or gone): the next session keeps each to its count, and the Kubernetes adapter sets the Job's
    ``spec.parallelism`` from it. Returns the rows changed."""
    rows = PodGroup.objects.filter(cluster=cluster, kueue_job__isnull=False)
    changed = 0
    for pk, ns, name, stored in rows.values_list("id", "namespace__name", "name", "kueue_admitted_count"):
        count = cuts.get(f"{ns}/{name}")
        if count != stored:
            changed += PodGroup.objects.filter(pk=pk).update(kueue_admitted_count=count)
    return changed


def _find_pods(cluster: Cluster, uids: Iterable[str], statuses: Sequence[str]) -> dict[str, tuple[int, str, str]]:
    """uid -> (pk, status, node name) of the cluster's pods among ``uids`` in one of ``statuses``."""
    by_ns: dict[str, list[str]] = {}
    for uid in uids:
        ns, name = split_uid(uid)
        by_ns.setdefault(ns, []).append(name)
    out: dict[str, tuple[int, str, str]] = {}
    for ns, names in by_ns.items():
        for i in range(0, len(names), BATCH):
            for pk, name, status, node in Pod.objects.filter(
                cluster=cluster, namespace__name=ns, name__in=names[i : i + BATCH], status__in=statuses
            ).values_list("id", "name", "status", "node__name"):
                out[f"{ns}/{name}"] = (pk, status, node or "")
    return out


def _apply_evictions(
    cluster: Cluster, session: SchedulingSession | None, evictions: Sequence[decisions.Eviction], now: datetime
) -> Counter[str]:
    """CAS each victim from an allocated status to Releasing; an Eviction row for each one that changed. Returns
    how many per action."""
    if not evictions:
        return Counter()
    found = _find_pods(cluster, (e.task for e in evictions), ALLOCATED_DB_STATUSES)
    rows: list[Eviction] = []
    done: set[str] = set()
    for e in evictions:
        hit = found.get(e.task)
        if hit is None or e.task in done:
            continue
        pk, status, node = hit
        changed = Pod.objects.filter(pk=pk, status=status).update(
            status=PodStatus.RELEASING, reason="Evicted", message=e.message[:2000], updated=now
        )
        if not changed:
            continue
        done.add(e.task)
        rows.append(
            Eviction(
                cluster=cluster,
                session=session,
                pod_id=pk,
                pod_uid=e.task,
                namespace=split_uid(e.task)[0],
                node=node,
                action=e.action,
                reason=e.reason[:63],
                message=e.message,
                preemptor=e.preemptor or "",
                blocker=e.blocker.to_dict() if e.blocker is not None else None,
                created=now,
            )
        )
    Eviction.stamp_owners(rows)
    Eviction.objects.bulk_create(rows, batch_size=BATCH)
    if rows:  # per tree node and as thrash (the totals by action: apply_decisions)
        counters.add(cluster.pk, evicted=rows)
    return Counter(str(row.action) for row in rows)


def _conditions_out(
    old: list[dict[str, Any]], status: decisions.PodGroupStatus, session_id: int, now: datetime
) -> list[dict[str, Any]] | None:
    """Volcano's condition for the new status (keeping the old transition when type and reason are the same);
    None keeps the old conditions."""
    if status.phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED):
        ctype, reason, message = "Scheduled", SCHEDULED_CONDITION_REASON, ""
    elif status.reason:
        ctype, reason, message = "Unschedulable", status.reason, status.message
    else:
        return None
    previous = old[-1] if old else None
    same = bool(previous) and previous.get("type") == ctype and previous.get("reason") == reason  # type: ignore[union-attr]
    return [
        {
            "type": ctype,
            "status": "True",
            "reason": reason,
            "message": message,
            "transitionID": previous.get("transitionID", "") if same else str(session_id),  # type: ignore[union-attr]
            "lastTransitionTime": previous.get("lastTransitionTime", iso(now)) if same else iso(now),  # type: ignore[union-attr]
        }
    ]


def _history_key(phase: str, reason: str, blocker: Mapping[str, Any] | None) -> tuple[Any, ...]:
    b = blocker or {}
    return (phase, reason, b.get("kind"), b.get("name"), b.get("resource"), b.get("limit"))


# A podgroup's status as the database holds it: (pk, phase, reason, message, blocker, (unplaced sessions, requeues,
# backoff until in seconds to the millisecond)).
_StatusRow = tuple[int, str, str, str, Any, tuple[int, int, float | None]]
_STATUS_COLUMNS = (
    "id",
    "namespace__name",
    "name",
    "phase",
    "reason",
    "message",
    "blocker",
    "unplaced_sessions",
    "requeues",
    "backoff_until",
)


@dataclass
class _Statuses:
    """The statuses of a cluster's open podgroups the last session of this process left in the database, at the
    feed's epoch, the trees' revision and the cluster revision of that session's transaction."""

    epoch: Any
    trees_rev: int
    rev: int
    rows: dict[str, _StatusRow]
    keys: dict[int, str]  # podgroup pk -> its key among ``rows``
    counts: Counter[str]  # ``rows`` per phase
    # the statuses that session wrote from (its result's mapping, never changed): a status given again as the very
    # same object, for a row not changed since, is what the row already holds
    seen: Mapping[str, decisions.PodGroupStatus]


@dataclass
class _Current:
    """The statuses of the open podgroups as the database holds them (``_current_statuses``)."""

    rows: dict[str, _StatusRow]
    keys: dict[int, str]
    counts: Counter[str]
    seen: Mapping[str, decisions.PodGroupStatus]  # as ``_Statuses.seen``; empty when every row was read
    fresh: set[str]  # the keys of the rows read again (not to be taken as unchanged from ``seen``)


_STATUSES: dict[int, _Statuses] = {}  # per cluster (installed when the session's transaction commits)


def _status_rows(qs: Any) -> dict[str, _StatusRow]:
    out: dict[str, _StatusRow] = {}
    for pk, ns, name, phase, reason, message, blocker, unplaced, requeues, until in qs.values_list(*_STATUS_COLUMNS):
        moment = None if until is None else round(until.timestamp(), 3)
        out[f"{ns}/{name}"] = (pk, phase, reason, message, blocker, (unplaced, requeues, moment))
    return out


def _feed_position(cluster_id: int) -> tuple[Any, int, int, int] | None:
    """(feed epoch, pruned through, trees revision, cluster revision) now, in one query; None without a feed row."""
    sql = f"""
        SELECT f.epoch, f.pruned_through,
               (SELECT value FROM {Revision._meta.db_table} WHERE key = %s),
               (SELECT value FROM {Revision._meta.db_table} WHERE key = %s)
          FROM {ClusterFeed._meta.db_table} AS f WHERE f.cluster_id = %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [Revision.TREES, Revision.cluster_key(cluster_id), cluster_id])
        row = cursor.fetchone()
    return None if row is None else (row[0], row[1], row[2] or 0, row[3] or 0)


def _read_all(rows: Any) -> _Current:
    read = _status_rows(rows)
    return _Current(
        read, {row[0]: key for key, row in read.items()}, Counter(row[1] for row in read.values()), {}, set()
    )


def _current_statuses(cluster: Cluster) -> tuple[_Current, tuple[Any, int, int, int] | None]:
    """The statuses of the cluster's open podgroups in the database, and the feed's position they stand at (None:
    they are not to be remembered).

    Called in the session's transaction, which holds the cluster's revision (``apply_decisions`` moved it first), so
    no other writer commits a change of the cluster's rows until it ends, and every change committed before is in
    the feed at a lower revision (``scheduling.feed``). So the statuses the last session of this process left
    (``_STATUSES``), with the podgroups logged since its revision read again, are what the database holds: the same
    as reading every open podgroup, for a fraction of the rows. Read in full when they cannot be shown current: none
    kept (a new process, a failed or rolled back session), the feed recreated or pruned past them, a revision gone
    back, a tree change (a namespace renamed renames the keys), not PostgreSQL."""
    rows = PodGroup.objects.filter(cluster=cluster).exclude(phase=DbPhase.COMPLETED)
    if not is_postgres():
        return _read_all(rows), None
    kept = _STATUSES.pop(cluster.pk, None)  # ours from here on (put back, brought up to date, when the write commits)
    position = _feed_position(cluster.pk)
    if position is None:
        return _read_all(rows), None
    epoch, pruned, trees_rev, rev = position
    if kept is None or (epoch, trees_rev) != (kept.epoch, kept.trees_rev) or pruned > kept.rev or rev < kept.rev:
        return _read_all(rows), position
    changed = set(
        RowChange.objects.filter(cluster_id=cluster.pk, kind=ChangeKind.PODGROUP, rev__gt=kept.rev).values_list(
            "row_id", flat=True
        )
    )
    if len(changed) > BATCH:
        return _read_all(rows), position
    current = _Current(kept.rows, kept.keys, kept.counts, kept.seen, set())
    if changed:
        for pk in changed:  # the rows logged since: as they are now (gone when no longer open)
            key = current.keys.pop(pk, None)
            if key is not None:
                current.counts[current.rows.pop(key)[1]] -= 1
        for key, row in _status_rows(rows.filter(pk__in=sorted(changed))).items():
            old = current.rows.get(key)
            if old is not None:  # (another podgroup of that key: deleted and made again)
                current.keys.pop(old[0], None)
                current.counts[old[1]] -= 1
            current.rows[key] = row
            current.keys[row[0]] = key
            current.counts[row[1]] += 1
            current.fresh.add(key)
    return current, position


def _statuses_to_compare(
    statuses: Mapping[str, decisions.PodGroupStatus], changes: decisions.StatusChanges | None, now_read: _Current
) -> Iterable[tuple[str, decisions.PodGroupStatus]]:
    """The statuses that may differ from their rows, in ``statuses``' order: every one, or when the last session
    this process wrote is the one ``changes`` is based on (its statuses are ``seen``), only those the close
    computed and those of the rows read again: every other one is the very status object the last session wrote
    its row from (``StatusChanges``), which the loop of ``_apply_podgroup_statuses`` skips too."""
    if changes is None or not now_read.seen or now_read.seen is not changes.base:
        return statuses.items()
    keys = changes.computed
    if now_read.fresh:  # (the computed keys are in the mapping's order, the key order of ``Session.close``)
        keys = sorted({*keys, *(key for key in now_read.fresh if key in statuses)})
    return [(key, statuses[key]) for key in keys]


def _apply_podgroup_statuses(
    cluster: Cluster,
    session: SchedulingSession,
    statuses: Mapping[str, decisions.PodGroupStatus],
    now: datetime,
    changes: decisions.StatusChanges | None = None,
) -> dict[str, int]:
    """Write changed phases / reasons / conditions; history rows on change; returns podgroups per phase.
    ``changes``: which statuses the session computed (``_statuses_to_compare``)."""
    now_read, position = _current_statuses(cluster)
    current, counts, seen, fresh = now_read.rows, now_read.counts, now_read.seen.get, now_read.fresh
    updates: dict[int, dict[str, Any]] = {}
    written: dict[str, _StatusRow] = {}  # the rows as the updates leave them
    history: list[tuple[int, str, str, str, dict[str, Any] | None]] = []  # (podgroup, phase, reason, message, blocker)
    for key, st in _statuses_to_compare(statuses, changes, now_read):
        if seen(key) is st and key not in fresh:  # the last session wrote it from this very status: nothing moved
            continue
        row = current.get(key)
        if row is None:  # a pod's own podgroup, a Completed or deleted one
            continue
        pk, phase, reason, message, blocker, requeue = row
        new_phase = str(st.phase)
        new_reason = "" if new_phase in (DbPhase.RUNNING, DbPhase.COMPLETED) else st.reason
        new_message = "" if not new_reason else st.message
        new_blocker = st.blocker.to_dict() if st.blocker is not None and new_reason else None
        until = None if st.backoff_until is None else datetime.fromtimestamp(st.backoff_until, tz=UTC)
        new_requeue = (st.unplaced_sessions, st.requeues, None if until is None else round(st.backoff_until, 3))
        if (new_phase, new_reason, new_message, new_blocker, new_requeue) == (
            phase,
            reason,
            message,
            blocker,
            requeue,
        ):
            continue
        updates[pk] = {
            "phase": new_phase,
            "reason": new_reason[:63],
            "message": new_message,
            "blocker": new_blocker,
            "unplaced_sessions": st.unplaced_sessions,
            "requeues": st.requeues,
            "backoff_until": until,
            "status": st,
        }
        # as the database gives it back: the blocker through JSON, the moment through a timestamp (microseconds)
        moment = None if until is None else round(until.timestamp(), 3)
        stored = None if new_blocker is None else json.loads(json.dumps(new_blocker))
        written[key] = (
            pk,
            new_phase,
            new_reason[:63],
            new_message,
            stored,
            (st.unplaced_sessions, st.requeues, moment),
        )
        counts[phase] -= 1
        counts[new_phase] += 1
        if _history_key(new_phase, new_reason, new_blocker) != _history_key(phase, reason, blocker):
            history.append((pk, new_phase, new_reason[:63], new_message, new_blocker))
    if updates:
        # the conditions (as text, parsed only for the podgroups that change: most keep their status every second)
        texts = _conditions_of(list(updates))
        for pk, values in updates.items():
            st = values.pop("status")
            text = texts.get(pk)
            conditions: list[dict[str, Any]] = (json.loads(text) if text else []) or []
            new_conditions = _conditions_out(conditions, st, session.pk, now)
            values["conditions"] = conditions if new_conditions is None else new_conditions
        (_update_podgroups_postgres if is_postgres() else _update_podgroups_by_row)(updates, now)
    _write_history(session, history, now)
    out = {phase: n for phase, n in sorted(counts.items()) if n > 0}
    if position is not None:
        epoch, _, trees_rev, rev = position
        if updates:  # their triggers moved the revision (nobody else can meanwhile: see ``_current_statuses``)
            (rev,) = Revision.objects.values_of(Revision.cluster_key(cluster.pk))
        keys = now_read.keys
        for key, row in written.items():  # one turned Completed is no longer open: not among those read
            if row[1] == DbPhase.COMPLETED:
                current.pop(key, None)
                keys.pop(row[0], None)
                counts[DbPhase.COMPLETED] -= 1
            else:
                current[key] = row
        left = _Statuses(epoch, trees_rev, rev, current, keys, counts, statuses)
        transaction.on_commit(lambda: _STATUSES.__setitem__(cluster.pk, left))
    return out


def _conditions_of(pks: list[int]) -> dict[int, str | None]:
    """The podgroups' conditions as JSON text."""
    out: dict[int, str | None] = {}
    for i in range(0, len(pks), BATCH):
        qs = PodGroup.objects.filter(pk__in=pks[i : i + BATCH]).annotate(conditions_text=as_text("conditions"))
        out.update(qs.values_list("id", "conditions_text"))
    return out


def _record_gang_releases(
    cluster: Cluster,
    statuses: Mapping[str, decisions.PodGroupStatus],
    now: datetime,
    changes: decisions.StatusChanges | None = None,
) -> None:
    """Count each gang released whole (``engine.session.gangrepair``) on its podgroup, with the GPU-seconds it held
    idle and why: its page and the API show them after its status has moved on. With ``changes`` only the statuses
    the close computed are looked at: the others are settled ones, Running or Completed, never a release."""
    for key in statuses if changes is None else changes.computed:
        st = statuses[key]
        if st.released_idle_gpu_seconds is None:
            continue
        ns, name = split_uid(key)
        PodGroup.objects.filter(cluster=cluster, namespace__name=ns, name=name).update(
            gang_releases=F("gang_releases") + 1,
            idle_gpu_seconds=F("idle_gpu_seconds") + st.released_idle_gpu_seconds,
            released_at=now,
            release_reason=st.message,
        )


def _write_history(
    session: SchedulingSession, rows: Sequence[tuple[int, str, str, str, dict[str, Any] | None]], now: datetime
) -> None:
    """The ``PodGroupReason`` rows: one ``INSERT … SELECT FROM unnest(…)`` on PostgreSQL (no model instance per
    row), ``bulk_create`` elsewhere."""
    if not rows:
        return
    if not is_postgres():
        PodGroupReason.objects.bulk_create(
            (
                PodGroupReason(
                    podgroup_id=pk, session=session, time=now, phase=phase, reason=reason, message=message, blocker=b
                )
                for pk, phase, reason, message, b in rows
            ),
            batch_size=BATCH,
        )
        return
    sql = f"""
        INSERT INTO {PodGroupReason._meta.db_table} (podgroup_id, session_id, time, phase, reason, message, blocker)
        SELECT v.podgroup, %s, %s, v.phase, v.reason, v.message, v.blocker::jsonb
          FROM unnest(%s::bigint[], %s::varchar[], %s::varchar[], %s::text[], %s::text[])
               AS v(podgroup, phase, reason, message, blocker)
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                session.pk,
                now,
                pg_int_array(r[0] for r in rows),
                pg_array(r[1] for r in rows),
                pg_array(r[2] for r in rows),
                pg_array(r[3] for r in rows),
                pg_array(None if r[4] is None else json.dumps(r[4]) for r in rows),
            ],
        )


def _update_podgroups_postgres(updates: Mapping[int, Mapping[str, Any]], now: datetime) -> None:
    """One ``UPDATE … FROM unnest(…)`` for every changed podgroup, never overwriting one that turned Completed."""
    ids, phases, reasons, messages, blockers, conditions = [], [], [], [], [], []
    unplaced, requeues, until = [], [], []
    for pk, row in updates.items():
        ids.append(pk)
        phases.append(row["phase"])
        reasons.append(row["reason"])
        messages.append(row["message"])
        blockers.append(None if row["blocker"] is None else json.dumps(row["blocker"]))
        conditions.append(json.dumps(row["conditions"]))
        unplaced.append(row["unplaced_sessions"])
        requeues.append(row["requeues"])
        until.append(row["backoff_until"])
    table = PodGroup._meta.db_table
    sql = f"""
        UPDATE {table} AS g
           SET phase = v.phase, reason = v.reason, message = v.message, blocker = v.blocker::jsonb,
               conditions = v.conditions::jsonb, unplaced_sessions = v.unplaced, requeues = v.requeues,
               backoff_until = v.until, updated = %s
          FROM unnest(%s::bigint[], %s::varchar[], %s::varchar[], %s::text[], %s::text[], %s::text[],
                      %s::integer[], %s::integer[], %s::timestamptz[])
               AS v(id, phase, reason, message, blocker, conditions, unplaced, requeues, until)
         WHERE g.id = v.id AND g.phase <> %s
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                now,
                pg_int_array(ids),
                pg_array(phases),
                pg_array(reasons),
                pg_array(messages),
                pg_array(blockers),
                pg_array(conditions),
                pg_int_array(unplaced),
                pg_int_array(requeues),
                pg_array(until),
                DbPhase.COMPLETED.value,
            ],
        )


def _update_podgroups_by_row(updates: Mapping[int, Mapping[str, Any]], now: datetime) -> None:
    """SQLite and others: one prepared UPDATE per changed podgroup (``executemany``), never overwriting a podgroup
    that turned Completed meanwhile. (One UPDATE per batch with a CASE per column costs the batch's size squared in
    comparisons: 2.5 s for a thousand podgroups on the large demo's SQLite.)"""
    fields = ("phase", "reason", "message", "blocker", "conditions", "unplaced_sessions", "requeues", "backoff_until")
    columns = [PodGroup._meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in columns)
    sql = (
        f"UPDATE {connection.ops.quote_name(PodGroup._meta.db_table)} SET {assignments}, "
        f"{connection.ops.quote_name('updated')} = %s WHERE id = %s AND phase <> %s"
    )
    stamp = connection.ops.adapt_datetimefield_value(now)
    rows = []
    for pk, values in updates.items():
        row = [None if values[f.name] is None else f.get_db_prep_save(values[f.name], connection) for f in columns]
        rows.append([*row, stamp, pk, DbPhase.COMPLETED.value])
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _amounts(value: Any) -> dict[str, int]:
    if not value:
        return {}
    return {str(k): int(v) for k, v in sorted(value.items())}


_SAMPLE_COLUMNS = ("cluster", "time", "kind", "name", "request", "allocated", "deserved", "borrowed", "lent")


# Per cluster, the values of each tree node's last sample this process wrote, when, and what they were made from
# (``_sample_rows``, ``_changed_samples``).
_LAST_SAMPLES: dict[int, dict[tuple[str, str], tuple[Any, datetime, tuple[object, ...]]]] = {}

_SampleRow = tuple[str, str, dict[str, int], dict[str, int], dict[str, int], dict[str, int], dict[str, int]]


def forget(cluster_id: int) -> None:
    """Drop what this process keeps about one cluster's writes (the podgroup statuses its last session left, its last
    samples): the next write reads them again, as a new process would (tests; a cluster handed to another worker)."""
    _STATUSES.pop(cluster_id, None)
    _LAST_SAMPLES.pop(cluster_id, None)


def _queue_sample(q: Any) -> tuple[dict[str, int], ...]:
    return (_amounts(q.request), _amounts(q.allocated), _amounts(q.deserved), _amounts(q.borrowed), _amounts(q.lent))


def _quota_sample(g: Any) -> tuple[dict[str, int], ...]:
    return (_amounts(g.request), _amounts(g.used), _amounts(g.runtime), _amounts(g.borrowed), _amounts(g.lent))


def _kept(amounts: object) -> object:
    return dict(raw(amounts)) if isinstance(amounts, Mapping) else amounts  # (a class is kept as it is)


def _sample_rows(cluster_id: int, result: decisions.SessionResult) -> tuple[list[_SampleRow], dict[Any, Any]]:
    """One row per queue and per quota group of ``result``, and what each row's values were made from. A node whose
    inputs (``QueueBook.sample_inputs``, a quota group's five amounts) equal those of the last sample this process
    wrote of it gets that sample's values without making them again: the same inputs give the same values, and
    making them (a queue's ``QueueQuota``, five sorted copies) was most of the samples' cost at 20,000 nodes."""
    last = _LAST_SAMPLES.get(cluster_id, {})
    rows: list[_SampleRow] = []
    sources: dict[Any, Any] = {}
    book = result.queue_values
    if book is not None:
        inputs = getattr(book, "sample_inputs", None)
        for name in book:
            src = inputs(name) if inputs is not None else None
            seen = last.get((SampleKind.QUEUE, name))
            if src is not None and seen is not None and seen[2] == src:
                values = seen[0]
            else:
                values = _queue_sample(book[name])
                if src is not None:
                    sources[(SampleKind.QUEUE, name)] = tuple(_kept(a) for a in src)
            rows.append((SampleKind.QUEUE, name, *values))
    groups = result.quota_values
    if groups is not None:
        for name in groups:
            g = groups[name]
            src = (raw(g.request), raw(g.used), raw(g.runtime), raw(g.borrowed), raw(g.lent))
            seen = last.get((SampleKind.QUOTA, name))
            if seen is not None and seen[2] == src:
                values = seen[0]
            else:
                values = _quota_sample(g)
                sources[(SampleKind.QUOTA, name)] = tuple(dict(a) for a in src)
            rows.append((SampleKind.QUOTA, name, *values))
    return rows, sources


def _changed_samples(cluster_id: int, rows: list[Any], now: datetime, sources: Mapping[Any, Any]) -> list[Any]:
    """The rows to write: a node's sample when its values changed since the last one this process wrote, or that
    one is ``FAIRWAY_SAMPLE_EVERY_SECONDS`` old (0: every session). The charts draw samples as steps, so a value
    holds until the next sample and nothing is lost; a process with no memory (a new worker) writes them all.
    The memory (the values, their time and what they were made from, ``sources``) moves when the session's
    transaction commits."""
    every = float(settings.FAIRWAY["SAMPLE_EVERY_SECONDS"])
    if every <= 0:
        return rows
    last = _LAST_SAMPLES.get(cluster_id, {})
    out = []
    for row in rows:
        seen = last.get((row[0], row[1]))
        if seen is None or seen[0] != row[2:] or (now - seen[1]).total_seconds() >= every:
            out.append(row)
    if out:
        written = {}
        for row in out:
            key = (row[0], row[1])
            src = sources.get(key)
            if src is None:  # made from the inputs the memory holds already (or none known)
                seen = last.get(key)
                src = seen[2] if seen is not None and seen[0] == row[2:] else ()
            written[key] = (row[2:], now, src)
        transaction.on_commit(lambda: _LAST_SAMPLES.setdefault(cluster_id, {}).update(written))
    return out


def _write_samples(cluster: Cluster, result: decisions.SessionResult, now: datetime) -> int:
    """One ``QuotaSample`` per queue and per quota group of ``result`` whose values changed (``_changed_samples``).
    On PostgreSQL the rows go in with one
    ``COPY`` (a few milliseconds for hundreds of rows, where building and inserting model instances took a tenth
    of a second at 5,000 nodes); the rows are the same either way."""
    rows, sources = _sample_rows(cluster.pk, result)
    rows = _changed_samples(cluster.pk, rows, now, sources)
    if not rows:
        return 0
    if connection.vendor != "postgresql":
        fields = _SAMPLE_COLUMNS[2:]
        QuotaSample.objects.bulk_create(
            [QuotaSample(cluster=cluster, time=now, **dict(zip(fields, row, strict=True))) for row in rows],
            batch_size=BATCH,
        )
        return len(rows)
    meta = QuotaSample._meta
    columns = ", ".join(connection.ops.quote_name(meta.get_field(f).column) for f in _SAMPLE_COLUMNS)
    sql = f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for kind, name, *amounts in rows:
            copy.write_row((cluster.pk, now, str(kind), name, *(json.dumps(a) for a in amounts)))
    return len(rows)


def apply_decisions(
    cluster: Cluster,
    result: decisions.SessionResult,
    now: datetime,
    *,
    kind: str = SessionKind.SESSION,
    started: datetime | None = None,
    timings: Mapping[str, float] | None = None,
    pending_pods: int = 0,
    ids: RowIds | None = None,
    phases: Mapping[str, int] | None = None,
    bound: list[list[Any]] | None = None,
) -> SchedulingSession:
    """Write everything ``result`` decided, in one transaction, and return the session row.

    Idempotent: the bindings and evictions are compare-and-swaps, so applying the same result twice binds and
    evicts nothing the second time (the second session row records zero of each). ``ids`` (from
    ``read_cluster``) lets the bindings address pods and nodes by primary key instead of by name. ``phases``
    (podgroups per phase) says the podgroup statuses of ``result`` are in the database already (a session that
    reuses its last result on unchanged rows, ``scheduling.feed.mirror``): they are not read and compared again.
    ``bound``: the bindings a ``BindingStream`` already wrote in this transaction (``finish``), with the revision
    and the pipelined pods before them; they are not written again.
    """
    t0 = perf_counter()
    with transaction.atomic():
        # First, so that the session's writes (some of them raw SQL) move the cluster's revision with them.
        if bound is None:
            Revision.objects.bump(Revision.cluster_key(cluster.pk))
        session = SchedulingSession.objects.create(
            cluster=cluster,
            kind=kind,
            status=SessionStatus.OK,
            started=started or now,
            pending_pods=pending_pods,
            warnings=list(result.warnings)[:100],
        )
        if bound is not None:
            applied = bound
        elif kind == SessionKind.RECYCLE and not result.bindings:
            # a recycling pass binds nothing: the pods the last session pipelined keep their nominated nodes for
            # the next session (``apply_bindings`` would first put them back to Pending, as a session does)
            applied = []
        else:
            applied = apply_bindings(cluster, result.bindings, now, ids)
        evicted = _apply_evictions(cluster, session, result.evictions, now)
        if phases is None:
            phases = (
                _apply_podgroup_statuses(cluster, session, result.podgroups, now, result.status_changes)
                if result.podgroups
                else {}
            )
            _record_gang_releases(cluster, result.podgroups, now, result.status_changes)
        _write_samples(cluster, result, now)
        session.bindings = applied
        session.bound = sum(1 for a in applied if not a[2])
        session.pipelined = len(applied) - session.bound
        session.evicted = evicted.total()
        session.podgroups = phases
        session.finished = timezone.now()
        write_ms = (perf_counter() - t0) * 1000.0
        session.timings = {**(timings or {}), "write_ms": round(write_ms, 3)}
        session.duration_ms = round(sum(v for k, v in session.timings.items() if k.endswith("_ms")), 3)
        _save_session(session)
        counters.add(
            cluster.pk,
            kind=kind,
            status=SessionStatus.OK,
            seconds=session.duration_ms / 1000.0,
            binds=session.bound,
            pipelined=session.pipelined,
            evictions=evicted,
        )
    return session


def _save_session(session: SchedulingSession) -> None:
    """``session.save()``. On PostgreSQL its bindings (50,000 after a big session) go as one JSON parameter bound
    on the server, written by orjson, into a column compressed with lz4 (migration 0018): 35 ms for 50,000, where
    the ORM's save took 130 (the JSON quoted into the statement's text, parsed back out of it, then compressed with
    pglz)."""
    if not is_postgres():
        session.save()
        return
    session.save(update_fields=_SESSION_FIELDS)
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"UPDATE {SchedulingSession._meta.db_table} SET bindings = %s::jsonb WHERE id = %s",
            [orjson.dumps(session.bindings).decode(), session.pk],
        )


_SESSION_FIELDS = [
    f.name for f in SchedulingSession._meta.concrete_fields if not f.primary_key and f.name != "bindings"
]


def record_skipped(cluster_id: int, kind: str = SessionKind.SESSION, *, why: str = "") -> SchedulingSession:
    """A session row for a run that found the cluster locked by another worker."""
    now = timezone.now()
    with transaction.atomic():
        counters.add(cluster_id, kind=kind, status=SessionStatus.SKIPPED)
        return SchedulingSession.objects.create(
            cluster_id=cluster_id,
            kind=kind,
            status=SessionStatus.SKIPPED,
            started=now,
            finished=now,
            error=why or "another worker holds this cluster's lock",
        )


def record_failure(cluster: Cluster, kind: str, started: datetime, exc: BaseException) -> SchedulingSession:
    """A session row for a run that raised (its other writes were rolled back)."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    finished = timezone.now()
    with transaction.atomic():
        counters.add(cluster.pk, kind=kind, status=SessionStatus.FAILED, seconds=(finished - started).total_seconds())
        return SchedulingSession.objects.create(
            cluster=cluster,
            kind=kind,
            status=SessionStatus.FAILED,
            started=started,
            finished=finished,
            error=text[:4000],
        )
