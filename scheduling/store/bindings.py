"""A session's bindings written as compare-and-swaps from Pending: at the end of the session (``apply_bindings``)
or while its engine runs (``BindingStream``, PostgreSQL), one ``UPDATE … FROM unnest(…)`` on PostgreSQL, one
``UPDATE`` per node elsewhere; a replayed result binds nothing twice."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from queue import Empty, SimpleQueue
from typing import Any, NamedTuple

from django.db import connection

from core.models import Revision
from engine import collector
from engine.session import decisions
from quotas.models import Namespace
from scheduling.choices import PodStatus
from scheduling.models import (
    Cluster,
    Node,
    Pod,
)
from scheduling.store.db import (
    BATCH,
    END,
    RowIds,
    SharedConnectionThread,
    is_postgres,
    pg_array,
    pg_int_array,
    split_uid,
)

logger = logging.getLogger(__name__)


def apply_bindings(
    cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime, ids: RowIds | None
) -> list[list[Any]]:
    """Pipelined pods back to Pending, then CAS each binding from Pending; returns those that took effect."""
    _pipelined_back(cluster, now)
    if not bindings:
        return []
    if is_postgres():
        if ids:
            nodes = _nodes_still_there(cluster, ids, {b.node for b in bindings})
            return _bind_by_key(_by_key(cluster, bindings, now, ids.pods, nodes))
        return _bind_postgres(cluster, bindings, now)
    return _bind_generic_by_id(cluster, bindings, now, ids) if ids else _bind_generic(cluster, bindings, now)


def _pipelined_back(cluster: Cluster, now: datetime) -> None:
    """The pods the last session pipelined are Pending again: every session decides pipelining afresh."""
    Pod.objects.filter(cluster=cluster, status=PodStatus.PIPELINED).update(
        status=PodStatus.PENDING, node=None, updated=now
    )


def _nodes_still_there(cluster: Cluster, ids: RowIds, names: Collection[str] | None = None) -> dict[str, int]:
    """``ids.nodes`` (on PostgreSQL those named in ``names`` only, when given: the nodes a batch of bindings names)
    without the nodes deleted since the read. The pod's node has no foreign key in the database (``Pod.node``), so
    the by-key writers bind only to these. Read inside ``apply_decisions``'s transaction, after it locked the
    cluster's revision: a node deleted by ``ClusterRow.delete`` (which takes that lock first, then sets its pods'
    node to NULL, then deletes it) is either gone here already or waits for this commit, so a node found here
    stays until the commit. One query of the node keys (on PostgreSQL those asked for, as one array: reading the
    20,000 keys of a big cluster cost a session after 1 % of its pods changed several milliseconds of CPU), not a
    join in the binding statement (planned on a fresh table's statistics, a join with the nodes became a nested
    loop of minutes)."""
    if names is None or not is_postgres():
        there = set(Node.objects.filter(cluster=cluster).values_list("id", flat=True))
        return {name: pk for name, pk in ids.nodes.items() if pk in there}
    wanted = {name: ids.nodes[name] for name in names if name in ids.nodes}
    if not wanted:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Node._meta.db_table} WHERE cluster_id = %s AND id = ANY(%s::bigint[])",
            [cluster.pk, pg_int_array(wanted.values())],
        )
        there = {row[0] for row in cursor.fetchall()}
    return {name: pk for name, pk in wanted.items() if pk in there}


# The pod table's change feed trigger logs the rows of a statement run with this setting on without comparing them
# with their old versions (``scheduling.feed.triggers.EVERY_ROW_CHANGED``, the same name): only for a statement
# that changes a logged column of every row it updates, as a binding's compare-and-swap from Pending does.
_EVERY_ROW_CHANGED = "fairway.feed_every_row_changed"


@contextmanager
def _every_row_changed(cursor: Any) -> Iterator[None]:
    """The statements run inside, on PostgreSQL, change a column the change feed logs in every row they update
    (the setting is transaction-local: a failed statement's transaction, or savepoint, takes it back with it)."""
    cursor.execute("SELECT set_config(%s, 'on', true)", [_EVERY_ROW_CHANGED])
    yield
    cursor.execute("SELECT set_config(%s, '', true)", [_EVERY_ROW_CHANGED])


class _ByKey(NamedTuple):
    """The parameters of one by-key compare-and-swap statement (``_by_key``), and which binding each pod's is."""

    params: list[Any]
    uid_of: dict[int, tuple[str, str, bool]]


def _by_key(
    cluster: Cluster,
    bindings: Sequence[decisions.Binding],
    now: datetime,
    pods: Mapping[str, int],
    nodes: Mapping[str, int],
) -> _ByKey:
    """``bindings`` by key: ``pods`` (task uid -> pk) and ``nodes`` (name -> pk, only the nodes still there:
    ``_nodes_still_there``); a binding whose pod or node is not among them is left out."""
    # The snapshot's own primary keys: a plain join on the pod's primary key, whatever the table statistics.
    # The rows go in primary key order, the order they were inserted in: the table's pages and its indexes are
    # then written one after the other, not at random (50,000 bindings in the engine's order took 830 ms against
    # 690 ms so; 1,050 ms shuffled). The applied bindings are reported in the engine's order.
    uid_of: dict[int, tuple[str, str, bool]] = {}
    rows: list[tuple[int, int, str]] = []
    for b in bindings:
        pk, node_pk = pods.get(b.task), nodes.get(b.node)
        if pk is None or node_pk is None:
            continue
        rows.append((pk, node_pk, PodStatus.PIPELINED.value if b.pipelined else PodStatus.BOUND.value))
        uid_of[pk] = (b.task, b.node, b.pipelined)
    rows.sort()
    params = [
        now,
        pg_int_array(r[0] for r in rows),
        pg_int_array(r[1] for r in rows),
        pg_array(r[2] for r in rows),
        cluster.pk,
        PodStatus.PENDING.value,
    ]
    return _ByKey(params, uid_of)


_BIND_BY_KEY = f"""
    UPDATE {Pod._meta.db_table} AS p
       SET status = v.status, node_id = v.node_id, updated = %s
      FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[]) AS v(id, node_id, status)
     WHERE p.id = v.id AND p.cluster_id = %s AND p.status = %s
    RETURNING p.id
"""


def _bind_by_key(prepared: _ByKey) -> list[list[Any]]:
    """Run one by-key compare-and-swap statement; the bindings that took effect, in the engine's order."""
    with connection.cursor() as cursor, _every_row_changed(cursor):
        cursor.execute(_BIND_BY_KEY, prepared.params)
        done = {pk for (pk,) in cursor.fetchall()}
    return [list(binding) for pk, binding in prepared.uid_of.items() if pk in done]


def _bind_postgres(cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime) -> list[list[Any]]:
    ns_col, name_col, node_col, status_col = [], [], [], []
    for b in bindings:
        ns, name = split_uid(b.task)
        ns_col.append(ns)
        name_col.append(name)
        node_col.append(b.node)
        status_col.append(PodStatus.PIPELINED.value if b.pipelined else PodStatus.BOUND.value)
    pod, nsp, node = Pod._meta.db_table, Namespace._meta.db_table, Node._meta.db_table
    sql = f"""
        UPDATE {pod} AS p
           SET status = v.status, node_id = n.id, updated = %s
          FROM unnest(%s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[]) AS v(ns, name, node, status)
          JOIN {nsp} AS ns ON ns.name = v.ns
          JOIN {node} AS n ON n.cluster_id = %s AND n.name = v.node
         WHERE p.cluster_id = %s AND p.namespace_id = ns.id AND p.name = v.name AND p.status = %s
        RETURNING ns.name, p.name, n.name, p.status
    """
    with connection.cursor() as cursor, _every_row_changed(cursor):
        cursor.execute(
            sql,
            [
                now,
                pg_array(ns_col),
                pg_array(name_col),
                pg_array(node_col),
                pg_array(status_col),
                cluster.pk,
                cluster.pk,
                PodStatus.PENDING.value,
            ],
        )
        rows = cursor.fetchall()
    return [[f"{ns}/{name}", node_name, status == PodStatus.PIPELINED] for ns, name, node_name, status in rows]


def _bind_generic_by_id(
    cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime, ids: RowIds
) -> list[list[Any]]:
    """SQLite and others, with the snapshot's primary keys: one prepared compare-and-swap from Pending per binding,
    each one's row count telling whether it took, rather than reading every Pending pod of the cluster and updating
    node by node (650 ms for 900 bindings on the large demo's SQLite, most of it the read; 25 ms this way)."""
    stamp = connection.ops.adapt_datetimefield_value(now)
    pending, bound, pipelined = PodStatus.PENDING.value, PodStatus.BOUND.value, PodStatus.PIPELINED.value
    sql = (
        f"UPDATE {Pod._meta.db_table} SET status = %s, node_id = %s, updated = %s "
        "WHERE id = %s AND cluster_id = %s AND status = %s"
    )
    applied: list[list[Any]] = []
    nodes = _nodes_still_there(cluster, ids)
    with connection.cursor() as cursor:
        for b in bindings:
            pk, node_pk = ids.pods.get(b.task), nodes.get(b.node)
            if pk is None or node_pk is None:
                continue
            cursor.execute(sql, [pipelined if b.pipelined else bound, node_pk, stamp, pk, cluster.pk, pending])
            if cursor.rowcount:
                applied.append([b.task, b.node, b.pipelined])
    return applied


def _bind_generic(cluster: Cluster, bindings: Sequence[decisions.Binding], now: datetime) -> list[list[Any]]:
    # SQLite and others: writers are serialised, so read the Pending pods, then update them per node.
    pending = {
        f"{ns}/{name}": pk
        for pk, ns, name in Pod.objects.filter(cluster=cluster, status=PodStatus.PENDING).values_list(
            "id", "namespace__name", "name"
        )
    }
    node_ids = dict(Node.objects.filter(cluster=cluster).values_list("name", "id"))
    groups: dict[tuple[int, bool], list[int]] = {}
    applied: list[list[Any]] = []
    for b in bindings:
        pk, node_id = pending.pop(b.task, None), node_ids.get(b.node)
        if pk is None or node_id is None:
            continue
        groups.setdefault((node_id, b.pipelined), []).append(pk)
        applied.append([b.task, b.node, b.pipelined])
    for (node_id, pipelined), pks in groups.items():
        status = PodStatus.PIPELINED if pipelined else PodStatus.BOUND
        for i in range(0, len(pks), BATCH):
            Pod.objects.filter(pk__in=pks[i : i + BATCH], status=PodStatus.PENDING).update(
                status=status, node_id=node_id, updated=now
            )
    return applied


class BindingStream:
    """A session's bindings written while its engine still runs: the engine's ``on_bindings``
    (``decisions.BindingSink``), for the PostgreSQL by-key writer.

    The engine hands over each statement's bindings as it commits them, final. A thread of this stream writes them
    with the same compare-and-swap as ``apply_decisions`` (``_bind_by_key``), a batch at a time, on the
    connection of the thread that opened the stream and in its open transaction, while the engine goes on: the
    database's work on the rows, the larger part of writing a big session, runs beside the engine instead of after
    it (Volcano too binds a job's pods when its statement commits, not when the session ends). Its first batch
    first does what ``apply_decisions`` does before its bindings: the cluster's revision locked, then the pods the
    last session pipelined back to Pending, then the nodes still there read. A session that hands over nothing
    starts no thread and writes nothing here.

    The opening thread must not use the connection from the first binding handed over until ``finish`` returns;
    leaving the ``with`` block without ``finish`` (the engine raised) stops the thread after the statement it is in,
    and the transaction's rollback takes back what it wrote. A failed statement is raised by ``finish``.
    """

    MIN_BATCH = 300  # bindings per statement at least, until the engine is done (a statement costs ~1 ms)
    MAX_BATCH = 6000

    def __init__(self, cluster: Cluster, now: datetime, ids: RowIds) -> None:
        self._cluster, self._now, self._ids = cluster, now, ids
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._thread: SharedConnectionThread | None = None
        self._stopping = False
        self._ended = False
        self._last_sent = threading.Event()
        self._error: BaseException | None = None
        self._applied: list[list[Any]] = []
        # the cluster's revision once its first batch locked it: every change logged from there until the
        # session's commit is the session's own (``ClusterMirror.own_writes``); None before the first batch
        self.revision: int | None = None

    @staticmethod
    def usable(ids: RowIds | None) -> bool:
        """Whether a session read with ``ids`` may stream its bindings (PostgreSQL's by-key writer)."""
        return ids is not None and is_postgres()

    def __enter__(self) -> BindingStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping = True
        self._join()

    def __call__(self, bindings: Sequence[decisions.Binding]) -> None:
        if self._thread is None:
            self._thread = SharedConnectionThread("fairway-bindings", self._write)
            self._thread.start()
        self._queue.put(bindings)

    def finish(self) -> list[list[Any]] | None:
        """Wait until every binding handed over is written; those that took effect, in the session's order, or
        None when none was handed over."""
        if self._thread is None:
            return None
        self._end()
        # The cyclic collector's pass over what the engine allocated (``collector.collect_young``), while the
        # thread waits on the database for its last statement, not after: it holds the interpreter for tens of
        # milliseconds, which the thread would otherwise wait for between two statements.
        while self._thread.is_alive():
            if self._last_sent.wait(0.002):
                collector.collect_young()
                break
        self._join()
        if self._error is not None:
            raise self._error
        return self._applied

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._queue.put(END)

    def _join(self) -> None:
        """End the thread (after what was handed over; when stopping, after the statement it is in) and wait."""
        if self._thread is not None:
            self._end()
            self._thread.join()

    def _write(self) -> None:
        try:
            cluster, now = self._cluster, self._now
            key = Revision.cluster_key(cluster.pk)
            Revision.objects.bump(key)
            (self.revision,) = Revision.objects.values_of(key)
            _pipelined_back(cluster, now)
            nodes: dict[str, int] = {}  # the nodes still there among those the batches so far named
            asked: set[str] = set()
            for batch, last in self._batches():
                if self._stopping:
                    return
                new = {b.node for b in batch} - asked
                if new:  # (a node found stays until the commit: ``_nodes_still_there``)
                    nodes.update(_nodes_still_there(cluster, self._ids, new))
                    asked |= new
                prepared = _by_key(cluster, batch, now, self._ids.pods, nodes)
                if last:
                    self._last_sent.set()
                self._applied += _bind_by_key(prepared)
        except BaseException as exc:  # raised again by ``finish``, in the opening thread
            self._error = exc

    def _batches(self) -> Iterator[tuple[list[decisions.Binding], bool]]:
        """What the engine handed over, ``MIN_BATCH`` to ``MAX_BATCH`` at a time, then all the rest at once (with
        True: the last)."""
        batch: list[decisions.Binding] = []
        end = False
        while batch or not end:
            wait = not end and len(batch) < self.MIN_BATCH
            while not end:  # take what has come (waiting for the first when the batch is too small)
                try:
                    item = self._queue.get() if wait else self._queue.get_nowait()
                except Empty:
                    break
                wait = False
                if item is END:
                    end = True
                else:
                    batch += item
            if end:
                if batch:
                    yield batch, True
                return
            if len(batch) >= self.MIN_BATCH:
                yield batch[: self.MAX_BATCH], False
                del batch[: self.MAX_BATCH]
