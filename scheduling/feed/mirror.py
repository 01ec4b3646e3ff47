"""A cluster's snapshot kept in the process between sessions and brought up to date from what changed.

Reading a 5,000-node / 50,000-pod cluster takes about a second (``store.read_cluster``); a session every second
cannot afford it when almost nothing changed. A ``ClusterMirror`` keeps, per cluster, the rows the engine reads
as the engine's objects (nodes, podgroups, pods, the trees) and, before each use, reads only what changed since:

* **The change feed.** Database triggers (``scheduling.feed.triggers``) log every insert, delete and relevant
  update of a node, podgroup or pod as a ``RowChange`` (cluster, revision, kind, primary key) in the transaction
  of the write, whoever writes: services, API, node agents, bulk querysets, raw SQL, the session's own decisions,
  the admin, management commands, cascades. Each change carries the cluster revision of its transaction
  (``core.models.Revision``), and every writer of a cluster's rows holds that revision's row lock until it
  commits, so revisions follow commit order: once a reader sees revision ``R`` committed, every change at ``R``
  or below is committed and visible. This is Kubernetes' resourceVersion and watch, with the database as etcd.
* **Bringing the mirror up to date** (``refresh``): read the revisions (trees, cluster) and the feed's state in
  one query, then the changes above the mirror's cluster revision, then those rows by primary key (a row gone was
  deleted). The revision read first becomes the mirror's: a change that commits meanwhile may be applied already,
  and is applied again next time (re-reading a row is idempotent). A podgroup that opens, completes or is renamed
  brings its pods along (which of them the snapshot holds depends on it); a renamed node brings the pods on it.
  Tree changes (the ``trees`` revision) re-read the trees, which are small; a change that renames what the rows
  refer to (a namespace, a queue, a quota group) forces a full read.
* **Falling back to a full read** whenever the mirror cannot prove it is current: no mirror yet (a new worker, a
  restart), a different feed epoch (the feed row was recreated: the database was emptied or the cluster
  recreated), a revision lower than the mirror's, changes pruned beyond the mirror's revision (a gap),
  a tree change it cannot apply, a database without the triggers,
  or an error while refreshing (the mirror is dropped). A session on a copy kept current while another process ran
  the cluster's sessions (``ClusterFeed.last_mirror`` another generation: a standby, ``scheduling.feed.standby``)
  reads only the changes, those sessions' writes being in the feed like any other; ``Refresh.reason`` says
  ``TAKEOVER`` then. ``scheduling.feed.affinity`` sends a cluster's sessions to the process that holds its copy.

**The steady state.** When nothing the engine reads changed since the mirror's last session (no row written,
the session's own decisions included; the same policy; no requeue backoff ended), the engine would decide exactly
what it decided then, so the session reuses that result (``remember`` / ``reusable``) instead of rebuilding its
state over every pod. Its podgroup statuses are in the database already (the feed also logs a podgroup's reason,
message and blocker, so their silence proves it), so only the rest is written: the compare-and-swaps that find
nothing to do, the quota samples, the session row with the podgroups per phase (``phase_counts``).

When rows did change, the engine still does not start from nothing: the mirror holds the engine's
``SessionCarry`` (``engine.session.carry``), the state the last session opened with, which the next session
brings up to date for the pods, podgroups and nodes whose objects changed (the mirror keeps the same object for
every unchanged row, which is what lets the engine find the changes by identity). A full read empties it.

``snapshot`` then makes the engine's ``Snapshot`` from the mirror's dictionaries (shallow copies: the objects
are immutable, the copies are the only cost), in the order a full read gives: nodes by name, podgroups by
creation, pods by primary key. On a cluster whose queues name Kueue ResourceFlavors it counts the nodes and the pods
on them per flavor keeping the flavored object of every unchanged row (``engine.flavors.FlavorMemo``), and the session
keeps the flavors it gives the jobs likewise (``session_flavors``), so that the carry still finds the changes by
identity; a cluster without flavors skips both. The Kueue pod groups that wait for their pods are found anew from the
pods of each snapshot (``store.with_pod_group_waits``), so a pod that arrives or goes is counted at once. The values cache (``planning.valuecache``) and the sessions share
the process's mirror of each cluster (``mirror_of``); a lock keeps two threads from refreshing it at once.
"""

from __future__ import annotations

import math
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core.models import Revision
from engine.admission import LocalQueueSpec
from engine.flavors import FlavorMemo
from engine.manifests.kueuestored import with_stored_flavors, with_stored_levers
from engine.objects import (
    NamespaceInfo,
    NodeInfo,
    PodGroupInfo,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.session.carry import SessionCarry
from quotas.models import Queue
from scheduling import store
from scheduling.choices import PodGroupPhase as DbPhase
from scheduling.feed import affinity, triggers
from scheduling.models import ChangeKind, Cluster, ClusterFeed, Node, Pod, PodGroup, RowChange
from scheduling.store.db import JsonCache, fetch_all
from scheduling.store.read import read_namespaces, read_queues, read_quota_groups

__all__ = [
    "TAKEOVER",
    "ClusterMirror",
    "Refresh",
    "forget",
    "mirror_of",
    "prune_changes",
    "record_session",
    "supported",
]

KEEP_REVISIONS = 2000  # changes kept behind the cluster's revision (about half an hour of one-second sessions)
TAKEOVER = "taken over from another worker"  # ``Refresh.reason`` of a session on a copy another process did not run
_BATCH = 20_000  # primary keys per ``IN`` list


# The SQLite triggers: a later migration that rebuilds one of these tables on SQLite (Django copies it into a new
# table) drops its triggers, and then every read is a full read again.
_SQLITE_TRIGGERS = triggers.TRIGGER_NAMES


def supported() -> bool:
    """True where the change feed exists: PostgreSQL and SQLite when all its triggers (``triggers.TRIGGER_NAMES``)
    are there; elsewhere every read is a full read."""
    if connection.vendor == "postgresql":
        return True
    if connection.vendor != "sqlite":
        return False
    marks = ", ".join(["%s"] * len(_SQLITE_TRIGGERS))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})", _SQLITE_TRIGGERS
        )
        (found,) = cursor.fetchone()
    return bool(found == len(_SQLITE_TRIGGERS))


class _Stale(Exception):
    """The feed cannot bring the copy up to date (found while applying it, before anything was changed)."""


@dataclass(frozen=True)
class Refresh:
    """What the last ``refresh`` did: a full read (and why) or how many changed rows it applied (the reason then
    ``TAKEOVER`` when it was a session's on a copy another process did not run the last session of)."""

    full: bool
    reason: str = ""
    changes: int = 0
    ms: float = 0.0
    own: int = 0  # of the changed rows, the last session's own bindings applied without reading them back


@dataclass
class _Trees:
    ns_names: dict[int, str]
    default_queue: dict[str, str]
    namespaces: list[NamespaceInfo]
    quota_namespaces: dict[str, list[str]]
    group_names: dict[int, str]
    groups: list[QuotaGroupSpec]
    queues: list[QueueSpec]
    queue_names: dict[int, str]
    # Kueue's LocalQueues as the snapshots read them: tree rows too (a write of one moves the trees' revision, which
    # makes new ``_Trees``), read by the first snapshot at this revision instead of by every snapshot
    local_queues: list[LocalQueueSpec] | None = None

    def same_references(self, other: _Trees) -> bool:
        """Whether the names the cluster's rows refer to by key are unchanged (then the rows need no re-read)."""
        return (
            self.ns_names == other.ns_names
            and self.default_queue == other.default_queue
            and self.group_names == other.group_names
            and self.queue_names == other.queue_names
        )


def _read_trees(cache: Any, memo: store.SpecMemo) -> _Trees:
    ns = read_namespaces(cache)
    group_names, groups = read_quota_groups(cache, memo)
    return _Trees(
        ns.names,
        ns.default_queue,
        ns.infos,
        ns.by_quota_group,
        group_names,
        groups,
        read_queues(cache, memo),
        dict(Queue.objects.values_list("id", "name")),
    )


@dataclass
class _State:
    """Everything the mirror holds at (trees_rev, cluster_rev) of feed ``epoch``."""

    epoch: uuid.UUID
    trees_rev: int
    cluster_rev: int
    trees: _Trees
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    node_names: dict[int, str] = field(default_factory=dict)
    node_ids: dict[str, int] = field(default_factory=dict)
    podgroups: dict[str, PodGroupInfo] = field(default_factory=dict)
    pg_keys: dict[int, str] = field(default_factory=dict)  # open (not Completed) podgroups only
    pg_order: dict[int, tuple[float, int]] = field(default_factory=dict)
    kueue_counts: dict[str, store.KueueCount] = field(default_factory=dict)  # (``store.kueue_count``)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    pod_ids: dict[str, int] = field(default_factory=dict)  # uid -> pk
    pod_uids: dict[int, str] = field(default_factory=dict)  # pk -> uid
    own: dict[str, PodGroupInfo] = field(default_factory=dict)  # podgroups of the pods without one
    own_of: dict[int, str] = field(default_factory=dict)  # pod pk -> the key of its own podgroup
    max_pod: int = 0
    pending: int = 0  # tasks Pending (``pending_count``)
    # the uids stored or dropped since the last copy of ``tasks`` (``snapshot``), and whether that is all that
    # changed since it (not after a full read or a re-sort): the engine's carry is told (``SessionCarry.note_tasks``)
    touched: set[str] = field(default_factory=set)
    linked: bool = False
    # every store (uid, info) and drop (uid, None) of ``tasks`` since its last copy, in order: what brings an
    # earlier copy up to date without a new one (``ClusterMirror._renewed``); None: not kept (a full read, or too
    # long: ``_bound_logs``)
    log: list[tuple[str, TaskInfo | None]] | None = None
    # the same for ``pod_ids`` since its last copy (``ClusterMirror.row_ids``)
    ids_log: list[tuple[str, int | None]] | None = None
    # the same for the podgroups' keys (own podgroups included) since the last copy of ``podgroups`` (``snapshot``;
    # ``SessionCarry.note_podgroups``); not after a full read or a re-sort
    pg_touched: set[str] = field(default_factory=set)
    pg_linked: bool = False
    pg_last: tuple[float, int] = (-math.inf, 0)  # the largest ``pg_order`` stored (one gone may have had it)
    nodes_copy: dict[str, NodeInfo] | None = None  # the snapshots' copy of ``nodes`` while no node changes


@dataclass(frozen=True)
class _Own:
    """A session's own bindings, as it committed them (``ClusterMirror.own_writes``): every change the feed logged at
    revisions ``lo`` to ``hi`` is that session's, and ``pods`` (primary key -> (uid, node, pipelined)) are the pods
    its bindings moved, evicted ones left out, on the copy ``state`` from before that session's writes."""

    state: _State
    lo: int
    hi: int
    pods: dict[int, tuple[str, str, bool]]


class ClusterMirror:
    """The in-process copy of one cluster (see the module docstring)."""

    def __init__(self, cluster_id: int) -> None:
        self.cluster_id = cluster_id
        self.generation = uuid.uuid4().hex  # this process's build of the mirror; renewed on every full read
        self.last = Refresh(full=True, reason="never read")
        self._state: _State | None = None
        self._lock = threading.RLock()
        self.version = 0  # moves whenever what the mirror holds changes
        self._rows = 0  # moves whenever the cluster's rows it holds change (not for a tree change)
        self._copies: tuple[int, dict[str, TaskInfo], dict[str, PodGroupInfo]] | None = None
        # the pods' copy before the last one and the mirror's stores and drops of its pods since that copy was made
        # until the last one (``_renewed_copy``); how many copies were so renewed instead of made anew
        self._spare: tuple[dict[str, TaskInfo], list[tuple[str, TaskInfo | None]]] | None = None
        self.renewed = 0
        # the same for the pods' keys of ``row_ids`` (its last copy, and the rows' version it stands for)
        self._ids_copy: tuple[int, dict[str, int]] | None = None
        self._ids_spare: tuple[dict[str, int], list[tuple[str, int | None]]] | None = None
        self._last_snapshot: Snapshot | None = None  # its indexes of the fields unchanged since are reused
        # (version, policy, now, the engine's result, until when time alone changes nothing: ``clock.time_horizon``)
        self._memo: tuple[int, str, float, Any, float] | None = None
        self._local = threading.local()
        self._specs = store.SpecMemo()  # the tree specs of the last read, reused for the rows that did not change
        # the state the engine's last session of this cluster opened with (used under the session lock only)
        self.carry = SessionCarry()
        # Kueue's ResourceFlavors: the nodes and the pods on them counted per flavor, kept for the rows unchanged
        # (under the mirror's lock), and the flavors the session gives the jobs (under the session lock)
        self.flavored = FlavorMemo()
        self.session_flavors = FlavorMemo()
        # (base, tasks, uids changed or None): how the last copy of the pods differs from the one before, as the
        # carry is told; ``scheduling.recording`` finds a session's changed pods by it
        self.tasks_note: tuple[Any, Any, Any] | None = None
        self._own: _Own | None = None  # the last session's own bindings (``own_writes``)

    # -- public -------------------------------------------------------------------------------------------------

    def read(self, cluster: Cluster, *, session: bool = False) -> tuple[Snapshot, store.RowIds]:
        """The cluster now, as ``store.read_cluster`` would read it, and its row ids. ``session``: the caller runs
        the cluster's scheduling session (under its lock), so the mirror must be the one that ran the last one."""
        with self._lock:
            self.refresh(session=session)
            self._local.version = self.version  # what ``remember`` will stand for, in this thread
            return self.snapshot(cluster), self.row_ids()

    def refresh(self, *, session: bool = False) -> Refresh:
        """Bring the mirror up to date (a full read when it cannot prove it is current); returns what it did."""
        with self._lock:
            t0 = perf_counter()
            try:
                with transaction.atomic():
                    done = self._refresh(session)
            except BaseException:
                self._state = None  # half-applied: the next use reads in full
                self.carry.clear()
                self.version += 1
                self._rows += 1
                raise
            if self._state is not None:
                _bound_logs(self._state)
            ms = round((perf_counter() - t0) * 1000.0, 3)
            self.last = Refresh(done.full, done.reason, done.changes, ms, done.own)
            return self.last

    def snapshot(self, cluster: Cluster) -> Snapshot:
        """The engine's snapshot of the mirror as it stands (with ``cluster``'s policy)."""
        with self._lock:
            st = self._state
            if st is None:
                raise RuntimeError("the mirror has not been read yet (call refresh first)")
            # The same copies of the pods and podgroups while those rows are unchanged: after a tree change the
            # values reuse their pod aggregates (``compute_values(base=...)`` checks the dictionaries' identity).
            if self._copies is None or self._copies[0] != self._rows:
                # ``copy``, not ``dict(...)``: a dictionary that lost entries is copied one entry at a time by
                # ``dict(...)`` but cloned whole by ``copy`` (200,000 pods: 24 ms against 4)
                podgroups = st.podgroups.copy()
                for key, info in st.own.items():
                    podgroups.setdefault(key, info)
                # what changed since the last copy, for the engine's kept state (it then looks at those pods only)
                linked = st.linked and self._copies is not None
                base = self._copies[1] if self._copies else {}
                log = st.log if linked else None
                self.tasks_note = None  # (it holds the copy before the last one: ``_renewed``)
                tasks = self._renewed("_spare", log, st.tasks) or st.tasks.copy()
                self._spare = (base, log) if log is not None else None
                self.carry.note_tasks(base, tasks, st.touched if linked else None)
                self.tasks_note = (base, tasks, st.touched if linked else None)  # and for the session's recording
                st.touched, st.linked, st.log = set(), True, []
                pg_base = self._copies[2] if self._copies else {}
                self.carry.note_podgroups(pg_base, podgroups, st.pg_touched if st.pg_linked and self._copies else None)
                st.pg_touched, st.pg_linked = set(), True
                self._copies = (self._rows, tasks, podgroups)
            _, tasks, podgroups = self._copies
            if st.nodes_copy is None:
                st.nodes_copy = st.nodes.copy()
            snapshot = Snapshot(
                nodes=st.nodes_copy,
                tasks=tasks,
                podgroups=podgroups,
                queues={q.name: q for q in st.trees.queues},
                quota_groups={g.name: g for g in st.trees.groups},
                namespaces={n.name: n for n in st.trees.namespaces},
                policy=cluster.policy,
                quota_namespaces={k: tuple(v) for k, v in st.trees.quota_namespaces.items()},
                past_usage=store.read_past_usage(cluster),  # fairness over time: None (no query) when off
                node_bound=settings.FAIRWAY_LIMITS.max_node_amount,
            )
            if self._last_snapshot is not None:  # the indexes of what did not change (the nodes' totals)
                snapshot.keep_indexes_of(self._last_snapshot)
            self._last_snapshot = snapshot
            # Kueue's levers of the queues and the cluster's Kueue Configuration, its ResourceFlavors (none: the
            # snapshot as it is; the same flavored object for an unchanged node or pod)
            if st.trees.local_queues is None:
                st.trees.local_queues = store.read_local_queues()
            levered = with_stored_levers(snapshot, cluster.kueue_config, st.trees.local_queues)
            flavored = with_stored_flavors(levered, store.read_resource_flavors, self.flavored)
            # Kueue's pod groups short of their pods, from the pods as they stand (``store.with_pod_group_waits``)
            return store.with_pod_group_waits(flavored, st.kueue_counts)

    def _renewed(self, slot: str, log: list[tuple[str, Any]] | None, current: dict[str, Any]) -> dict[str, Any] | None:
        """The copy of one of the mirror's dictionaries (the pods: ``_spare``; their keys: ``_ids_spare``) that the
        reader before the last one got, brought up to ``current`` in place by the mirror's own stores and drops
        since it was made, replayed in their order (``replay_stores``: the same operations on an equal dictionary
        give an equal one, order included), instead of a new copy of every pod; None when that cannot be done (then
        a new copy, as before).

        A new copy of 200,000 entries costs its references' counts and, the pods' being a young container, the
        cyclic collector's next young and middle collections walk it entry by entry; an old one brought up to date
        by a few thousand stores is not walked again. It is renewed only when this mirror holds the last reference
        to it (the carry and the recording hold the last snapshot's pods; a values cache or any other reader still
        holding the older one keeps it from being changed), only when every store and drop since it was made is
        logged (none lost to a full read or a re-sort), and fewer than a quarter of the pods."""
        spare = getattr(self, slot)
        setattr(self, slot, None)
        if spare is None or log is None:
            return None
        mapping, before = spare
        del spare
        if len(before) + len(log) > len(mapping) // 4 or _REFCOUNT is None or _REFCOUNT(mapping) != _SOLE_OWNER:
            return None  # (someone else may still read it: never change it)
        if not replay_stores(mapping, before) or not replay_stores(mapping, log) or len(mapping) != len(current):
            return None
        self.renewed += 1
        return mapping  # type: ignore[no-any-return]

    def row_ids(self) -> store.RowIds:
        with self._lock:
            st = self._state
            if st is None:
                raise RuntimeError("the mirror has not been read yet (call refresh first)")
            # the same copy of the pods' keys while those rows are unchanged, else the one before it renewed
            copied = self._ids_copy
            if copied is None or copied[0] != self._rows:
                log = st.ids_log if copied is not None else None
                pods = self._renewed("_ids_spare", log, st.pod_ids) or st.pod_ids.copy()  # (``copy``: ``snapshot``)
                self._ids_spare = (copied[1], log) if copied is not None and log is not None else None
                st.ids_log = []
                self._ids_copy = copied = (self._rows, pods)
            return store.RowIds(pods=copied[1], nodes=st.node_ids.copy())

    def remember(self, result: Any, policy: str, now: float, until: float = math.inf) -> None:
        """The engine's ``result`` on the snapshot this thread last ``read``, under ``policy`` (its text) at
        ``now``, good until ``until`` at most (``engine.session.clock.time_horizon``)."""
        with self._lock:
            version = getattr(self._local, "version", None)
            self._memo = None if version is None else (version, policy, now, result, until)

    def reusable(self, policy: str, now: float) -> Any:
        """The remembered result when the engine would decide exactly the same now, else None.

        The session engine is a pure function of the snapshot, the policy and ``now``, and ``now`` enters through
        the requeue backoff (a podgroup is not admitted before its ``backoff_until``), a broken gang's repair time
        and the victims' minimum runtime (``engine.session.clock.time_matters``). So when the mirror
        has not changed since the result was computed (no row written since, by anyone, the session's own decisions
        included: they are read back as changes), the policy is the same text, no backoff ended in between, and
        ``now`` is before the horizon ``remember`` was given,
        running the engine again would return the same result: the steady state of a cluster with nothing to do.
        """
        with self._lock:
            memo, st = self._memo, self._state
            if memo is None or st is None or memo[0] != self.version or memo[1] != policy or now < memo[2]:
                return None
            before = memo[2]
            for pg in st.podgroups.values():
                if pg.backoff_until is not None and before < pg.backoff_until <= now:
                    return None
            if now >= memo[4]:  # a broken gang's repair time ran out, a pod's minimum runtime ended
                return None
            return memo[3]

    def phase_counts(self) -> dict[str, int]:
        """Podgroups (with a row, not Completed) per phase, as ``apply_decisions`` counts them."""
        with self._lock:
            st = self._state
            if st is None:
                return {}
            counts = Counter(st.podgroups[key].phase.value for key in st.pg_keys.values())
            return {phase: n for phase, n in sorted(counts.items()) if n > 0}

    def pending_count(self) -> int:
        """Pods waiting for a place (Pending), counted as the rows come and go."""
        with self._lock:
            st = self._state
            if st is None:
                return 0
            return st.pending

    def own_writes(self, lo: int, hi: int, bound: Iterable[Any], evicted: Iterable[str]) -> None:
        """Once a session of this mirror committed: the feed logged its own writes at revisions ``lo`` to ``hi`` (it
        held the cluster's revision from ``lo`` on, so no other writer's change is among them), and ``bound``
        (``[uid, node, pipelined]`` each) are the bindings that took effect. The next refresh makes those pods'
        objects from what it holds and the binding, as reading their rows back would give them, instead of reading
        them: a pod is Bound on its node (a pipelined one reads back Pending, nominated to the node). Only for a pod
        that nothing else changed: one the feed also logged at another revision (another writer, after the commit),
        one the session evicted, one without a podgroup, or one of a podgroup or node the refresh re-reads with
        its pods, is read as before."""
        with self._lock:
            self._own = None
            st = self._state
            if st is None or st.cluster_rev >= lo or hi < lo:
                return
            left_out = set(evicted)
            pods: dict[int, tuple[str, str, bool]] = {}
            for uid, node, pipelined in bound:
                pk = st.pod_ids.get(uid)
                if pk is not None and uid not in left_out and pk not in st.own_of:
                    pods[pk] = (uid, node, bool(pipelined))
            if pods:
                self._own = _Own(st, lo, hi, pods)

    @property
    def cluster_rev(self) -> int | None:
        return None if self._state is None else self._state.cluster_rev

    def drop(self) -> None:
        """Forget the copy (the next use reads in full)."""
        with self._lock:
            self._state = None
            self.carry.clear()

    # -- refreshing ---------------------------------------------------------------------------------------------

    def _feed(self) -> tuple[uuid.UUID, int, str, int, int]:
        """(epoch, pruned_through, last_mirror, trees revision, cluster revision), in one query."""
        key = Revision.cluster_key(self.cluster_id)
        sql = f"""
            SELECT f.epoch, f.pruned_through, f.last_mirror,
                   (SELECT value FROM {Revision._meta.db_table} WHERE key = %s),
                   (SELECT value FROM {Revision._meta.db_table} WHERE key = %s)
              FROM {ClusterFeed._meta.db_table} AS f WHERE f.cluster_id = %s
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, [Revision.TREES, key, self.cluster_id])
            row = cursor.fetchone()
        if row is None:
            ClusterFeed.objects.get_or_create(cluster_id=self.cluster_id)
            return self._feed()
        epoch, pruned, last, trees, rev = row
        return (epoch if isinstance(epoch, uuid.UUID) else uuid.UUID(str(epoch))), pruned, last, trees or 0, rev or 0

    def _why_full(self, epoch: uuid.UUID, pruned: int, trees: int, rev: int) -> str:
        st = self._state
        if not supported():
            return "no change feed on this database"
        if st is None:
            return "no copy yet"
        if epoch != st.epoch:
            return "the change feed was recreated"
        if rev < st.cluster_rev or trees < st.trees_rev:
            return "a revision went back"
        if pruned > st.cluster_rev:
            return "changes since the copy were pruned"
        return ""

    def _refresh(self, session: bool) -> Refresh:
        if not supported():
            self._full(uuid.UUID(int=0), 0, 0)
            return Refresh(True, "no change feed on this database")
        epoch, pruned, last, trees_rev, rev = self._feed()
        why = self._why_full(epoch, pruned, trees_rev, rev)
        if why:
            self._full(epoch, trees_rev, rev)
            return Refresh(True, why)
        st = self._state
        assert st is not None
        cache = JsonCache()
        if trees_rev != st.trees_rev:
            trees = _read_trees(cache, self._specs)
            if not trees.same_references(st.trees):
                self._full(epoch, trees_rev, rev)
                return Refresh(True, "a tree change renamed or moved what the rows refer to")
            st.trees, st.trees_rev = trees, trees_rev
            self.version += 1
        changes = own = 0
        if rev != st.cluster_rev:
            try:
                changes, own = self._apply_changes(st, cache, rev)
            except _Stale as stale:
                self._full(epoch, trees_rev, rev)
                return Refresh(True, str(stale))
            st.cluster_rev = rev
            if changes:
                self.version += 1
                self._rows += 1
        # A copy kept current from the feed while another process ran the sessions (a standby): it takes over with
        # the changes only, every write of those sessions being in the feed like any other.
        took_over = session and last != self.generation
        return Refresh(False, TAKEOVER if took_over else "", changes, own=own)

    def _full(self, epoch: uuid.UUID, trees_rev: int, rev: int) -> None:
        """Read everything (the revisions were read before: changes committed meanwhile are applied again)."""
        self._state = None
        self.carry.clear()  # every object is new: the next session builds its state in full
        self.version += 1
        self._rows += 1
        self.generation = uuid.uuid4().hex
        cache = JsonCache()
        st = _State(epoch=epoch, trees_rev=trees_rev, cluster_rev=rev, trees=_read_trees(cache, self._specs))
        nodes = list(Node.objects.filter(cluster_id=self.cluster_id).values_list(*store.NODE_COLUMNS))
        podgroups = list(
            PodGroup.objects.filter(cluster_id=self.cluster_id)
            .exclude(phase=DbPhase.COMPLETED)
            .values_list(*store.PODGROUP_COLUMNS)
        )
        pods = Pod.objects.filter(cluster_id=self.cluster_id).order_by("id").values_list(*store.POD_COLUMNS)
        with store.fetched_meanwhile(pods) as chunks:  # the pods come while the nodes and podgroups are made
            for row in nodes:
                _put_node(st, row, cache)
            for row in podgroups:
                _put_podgroup(st, row, cache)
            for chunk in chunks:
                for row in chunk:
                    if _included(st, row):
                        _put_pod(st, row, cache)
        self._state = st

    def _apply_changes(self, st: _State, cache: Any, rev: int) -> tuple[int, int]:
        """Apply the rows changed since the copy's revision; returns how many, and how many of them were the last
        session's own bindings, applied without reading them (``own_writes``)."""
        by_kind: dict[int, set[int]] = {ChangeKind.NODE: set(), ChangeKind.PODGROUP: set(), ChangeKind.POD: set()}
        own, self._own = self._own, None
        if own is not None and (own.state is not st or st.cluster_rev >= own.lo or rev < own.hi):
            own = None
        mine: set[int] = set()  # pods only the last session's bindings changed since the copy's revision
        table = RowChange._meta.db_table
        with connection.cursor() as cursor:
            if own is None:
                sql = f"SELECT DISTINCT kind, row_id, false FROM {table} WHERE cluster_id = %s AND rev > %s"
                cursor.execute(sql, [self.cluster_id, st.cluster_rev])
            else:
                sql = f"""
                    SELECT kind, row_id, bool_and(rev BETWEEN %s AND %s) FROM {table}
                     WHERE cluster_id = %s AND rev > %s GROUP BY kind, row_id
                """
                cursor.execute(sql, [own.lo, own.hi, self.cluster_id, st.cluster_rev])
            for kind, row_id, inside in cursor.fetchall():
                if inside and kind == ChangeKind.POD and own is not None and row_id in own.pods:
                    mine.add(row_id)
                else:
                    by_kind[kind].add(row_id)
            # A pruning that committed before the query above may have deleted some of what it should have seen.
            cursor.execute(
                f"SELECT pruned_through FROM {ClusterFeed._meta.db_table} WHERE cluster_id = %s", [self.cluster_id]
            )
            found = cursor.fetchone()
        if found is None or found[0] > st.cluster_rev:
            raise _Stale("changes since the copy were pruned")
        changes = sum(len(v) for v in by_kind.values()) + len(mine)
        pods = by_kind[ChangeKind.POD]
        renamed_nodes = self._apply_nodes(st, cache, by_kind[ChangeKind.NODE])
        reopened = self._apply_podgroups(st, cache, by_kind[ChangeKind.PODGROUP])
        if renamed_nodes:
            pods.update(_ids(Pod.objects.filter(node_id__in=renamed_nodes)))
        if reopened:
            for chunk in _chunks(sorted(reopened)):
                pods.update(_ids(Pod.objects.filter(podgroup_id__in=chunk)))
        bound = _own_bound(st, own, mine - pods) if own is not None else {}
        pods.update(mine - bound.keys())  # (a pod not as the binding found it: read)
        self._apply_pods(st, cache, pods)
        for task in bound.values():
            _store_bound(st, task)
        return changes, len(bound)

    def _apply_nodes(self, st: _State, cache: Any, pks: set[int]) -> set[int]:
        """Apply the changed nodes; returns those renamed (the pods on them name them)."""
        if not pks:
            return set()
        rows = {row[0]: row for row in _rows(Node, self.cluster_id, pks, store.NODE_COLUMNS)}
        st.nodes_copy = None
        renamed: set[int] = set()
        reorder = False
        for pk in pks:
            old = st.node_names.get(pk)
            row = rows.get(pk)
            if old is not None and (row is None or row[1] != old):
                del st.nodes[old], st.node_ids[old], st.node_names[pk]
                if row is not None:
                    renamed.add(pk)
            if row is not None:
                reorder = reorder or row[1] not in st.nodes
                _put_node(st, row, cache)
        if reorder:  # the database's order by name (its collation), as a full read gives
            order = Node.objects.filter(cluster_id=self.cluster_id).values_list("id", flat=True)
            names = [st.node_names[pk] for pk in order if pk in st.node_names]
            ordered = set(names)
            names += [n for n in st.nodes if n not in ordered]
            st.nodes = {n: st.nodes[n] for n in names}
        return renamed

    def _apply_podgroups(self, st: _State, cache: Any, pks: set[int]) -> set[int]:
        """Apply the changed podgroups; returns those that opened, completed, went or were renamed (which of their
        pods the snapshot holds, and under which key, depends on it). The podgroups keep their order by creation:
        new ones that come after every other go last, in that order; otherwise all are sorted again."""
        if not pks:
            return set()
        rows = {row[0]: row for row in _rows(PodGroup, self.cluster_id, pks, store.PODGROUP_COLUMNS)}
        moved: set[int] = set()
        fresh: list[int] = []  # new keys (not renamed ones): appended when they come after the others
        last, resort = st.pg_last, False
        for pk in pks:
            old = st.pg_keys.get(pk)
            row = rows.get(pk)
            info = (
                None
                if row is None or row[9] == DbPhase.COMPLETED
                else store.podgroup_info(row, cache, st.trees.ns_names)
            )
            if old is not None and (info is None or info.key != old):
                del st.podgroups[old], st.pg_keys[pk], st.pg_order[pk]
                st.kueue_counts.pop(old, None)
                st.pg_touched.add(old)
            if info is None:
                if old is not None:
                    moved.add(pk)
                continue
            if info.key != old:
                moved.add(pk)
                if old is None and info.key not in st.podgroups:
                    fresh.append(pk)
                else:
                    resort = True
            _put_podgroup(st, rows[pk], cache, info)
        if fresh and not resort:
            fresh.sort(key=st.pg_order.__getitem__)
            if st.pg_order[fresh[0]] > last:  # after every other: last, in their order
                for pk in fresh:
                    key = st.pg_keys[pk]
                    st.podgroups[key] = st.podgroups.pop(key)
            else:
                resort = True
        if resort:
            order = sorted(st.pg_keys, key=st.pg_order.__getitem__)
            st.podgroups = {st.pg_keys[pk]: st.podgroups[st.pg_keys[pk]] for pk in order}
            st.pg_linked = False  # a podgroup came in between the others
        return moved

    def _apply_pods(self, st: _State, cache: Any, pks: set[int]) -> None:
        if not pks:
            return
        rows = {row[0]: row for row in _rows(Pod, self.cluster_id, pks, store.POD_COLUMNS)}
        tasks: dict[int, TaskInfo] = {}
        # in primary-key order: new pods are then stored in the order a full read gives (a set's order is not it,
        # and a new pod stored after a larger one would cost a re-sort of every pod and the notes of what changed)
        for pk in sorted(pks):
            row = rows.get(pk)
            if row is not None and _included(st, row):
                tasks[pk] = _task(st, row, cache)
        # First what leaves (or changes its uid), then what comes: a pod deleted and made again under the same
        # name has a new primary key, and the new one must not be dropped with the old.
        for pk in pks:
            old = st.pod_uids.get(pk)
            if old is not None and (pk not in tasks or tasks[pk].uid != old):
                st.pending -= st.tasks.pop(old).status is TaskStatus.PENDING
                if st.linked:
                    st.touched.add(old)
                if st.log is not None:
                    st.log.append((old, None))
                if st.ids_log is not None:
                    st.ids_log.append((old, None))
                del st.pod_ids[old], st.pod_uids[pk]
                _drop_own(st, pk)
        resort = False
        for pk, task in tasks.items():
            if pk not in st.pod_uids and pk < st.max_pod:
                resort = True
            if rows[pk][3] is not None or st.own_of.get(pk) != task.podgroup:  # (else its own podgroup keeps its place)
                _drop_own(st, pk)
            _store_task(st, pk, rows[pk], task)
        if resort:
            order = sorted(st.pod_uids)
            st.tasks = {st.pod_uids[pk]: st.tasks[st.pod_uids[pk]] for pk in order}
            st.linked = False  # a pod came in between the others


_REFCOUNT = getattr(sys, "getrefcount", None)  # (an interpreter without it never renews a copy)


def _sole_owner() -> int:
    """What ``sys.getrefcount`` says of a dictionary one local name alone holds, as ``_renewed`` asks it (this
    interpreter's own count: the argument itself is counted by some versions and not by others)."""
    probe: dict[str, object] = {}
    return _REFCOUNT(probe) if _REFCOUNT is not None else -1


_SOLE_OWNER = _sole_owner()


def _bound_logs(st: _State) -> None:
    """Drop a log of stores and drops longer than a quarter of the pods (a reader that copies seldom: a copy is
    cheaper than replaying it, and the log would only grow)."""
    limit = len(st.tasks) // 4 + 64
    if st.log is not None and len(st.log) > limit:
        st.log = None
    if st.ids_log is not None and len(st.ids_log) > limit:
        st.ids_log = None


def replay_stores(mapping: dict[str, Any], log: list[tuple[str, Any]]) -> bool:
    """Apply the logged stores (``(key, value)``) and drops (``(key, None)``) to ``mapping`` in their order; False
    when a drop finds no such key (``mapping`` was not the dictionary they were made on: it is then unusable)."""
    for key, value in log:
        if value is not None:
            mapping[key] = value
        elif mapping.pop(key, None) is None:
            return False
    return True


# -- the mirror's rows ------------------------------------------------------------------------------------------


def _put_node(st: _State, row: Any, cache: Any) -> None:
    info = store.node_info(row, cache)
    st.nodes[info.name] = info
    st.node_names[row[0]] = info.name
    st.node_ids[info.name] = row[0]


def _put_podgroup(st: _State, row: Any, cache: Any, info: PodGroupInfo | None = None) -> None:
    info = info or store.podgroup_info(row, cache, st.trees.ns_names)
    st.podgroups[info.key] = info
    st.pg_touched.add(info.key)
    st.pg_keys[row[0]] = info.key
    st.pg_order[row[0]] = order = (info.creation_timestamp or 0.0, row[0])
    st.pg_last = max(st.pg_last, order)
    count = store.kueue_count(row)
    if count is None:
        st.kueue_counts.pop(info.key, None)
    else:
        st.kueue_counts[info.key] = count


def _included(st: _State, row: Any) -> bool:
    """A full read's rule: a pod not finished, or any pod of a podgroup still to schedule."""
    return row[9] in store.LIVE_POD_STATUSES or (row[3] is not None and row[3] in st.pg_keys)


def _task(st: _State, row: Any, cache: Any) -> TaskInfo:
    return store.pod_task(row, cache, st.trees.ns_names, st.trees.group_names, st.node_names, st.pg_keys)


def _store_task(st: _State, pk: int, row: Any, task: TaskInfo) -> None:
    old = st.tasks.get(task.uid)
    st.pending += (task.status is TaskStatus.PENDING) - (old is not None and old.status is TaskStatus.PENDING)
    if st.linked:  # (not during a full read)
        st.touched.add(task.uid)
    if st.log is not None:
        st.log.append((task.uid, task))
    st.tasks[task.uid] = task  # an update keeps its place
    st.pod_ids[task.uid] = pk
    if st.ids_log is not None:
        st.ids_log.append((task.uid, pk))
    st.pod_uids[pk] = task.uid
    st.max_pod = max(st.max_pod, pk)
    if row[3] is None:
        st.own[task.podgroup] = store.own_podgroup(task, st.trees.default_queue, store.pod_user(row))
        st.own_of[pk] = task.podgroup
        st.pg_touched.add(task.podgroup)


def _put_pod(st: _State, row: Any, cache: Any) -> None:
    _store_task(st, row[0], row, _task(st, row, cache))


def _drop_own(st: _State, pk: int) -> None:
    key = st.own_of.pop(pk, None)
    if key is not None:
        st.own.pop(key, None)
        st.pg_touched.add(key)


def _own_bound(st: _State, own: _Own, pks: set[int]) -> dict[int, TaskInfo]:
    """The objects of the pods ``pks`` that only the last session's bindings changed, made from the copy's own and
    the binding as ``store.pod_task`` reads such a row (Bound on its node; Pipelined reads back Pending, nominated
    to it), by primary key; a pod the copy no longer holds under that uid is left out (read)."""
    out: dict[int, TaskInfo] = {}
    for pk in sorted(pks):
        uid, node, pipelined = own.pods[pk]
        old = st.tasks.get(uid)
        if old is None or st.pod_uids.get(pk) != uid or node not in st.nodes:
            continue
        if pipelined:
            out[pk] = old.evolve(status=TaskStatus.PENDING, node=None, pipelined=True, nominated=node)
        else:
            out[pk] = old.evolve(status=TaskStatus.BOUND, node=node, pipelined=False, nominated=None)
    return out


def _store_bound(st: _State, task: TaskInfo) -> None:
    """``_store_task`` for a pod the copy holds already, under the same uid and primary key (``_own_bound``)."""
    old = st.tasks[task.uid]
    st.pending += (task.status is TaskStatus.PENDING) - (old.status is TaskStatus.PENDING)
    if st.linked:
        st.touched.add(task.uid)
    if st.log is not None:
        st.log.append((task.uid, task))
    st.tasks[task.uid] = task  # (its place kept)


def _chunks(pks: list[int]) -> Iterable[list[int]]:
    for i in range(0, len(pks), _BATCH):
        yield pks[i : i + _BATCH]


def _ids(qs: Any) -> list[int]:
    return list(qs.values_list("id", flat=True))


def _rows(model: Any, cluster_id: int, pks: set[int], columns: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The rows of these primary keys. On PostgreSQL the keys go as one array (``= ANY(%s)``): an ``IN`` list's
    thousands of placeholders cost more to prepare on the client than the rows cost to read."""
    out: list[tuple[Any, ...]] = []
    array = connection.vendor == "postgresql"
    for chunk in _chunks(sorted(pks)):
        qs = model.objects.filter(cluster_id=cluster_id).order_by().values_list(*columns)
        if array:
            qs = qs.extra(where=[f'"{model._meta.db_table}"."id" = ANY(%s::bigint[])'], params=[chunk])
        else:
            qs = qs.filter(pk__in=chunk)
        out.extend(fetch_all(qs) if model is Pod else qs)
    return out


# -- the process's mirrors --------------------------------------------------------------------------------------

_registry_lock = threading.Lock()
_mirrors: dict[int, ClusterMirror] = {}


def mirror_of(cluster_id: int) -> ClusterMirror:
    """This process's mirror of the cluster (made empty on first use: its first read is a full one)."""
    with _registry_lock:
        mirror = _mirrors.get(cluster_id)
        if mirror is None:
            mirror = _mirrors[cluster_id] = ClusterMirror(cluster_id)
        return mirror


def forget(cluster_id: int | None = None) -> None:
    """Drop the mirror of one cluster, or every mirror (tests; a deleted cluster)."""
    with _registry_lock:
        if cluster_id is None:
            _mirrors.clear()
        else:
            _mirrors.pop(cluster_id, None)


def record_session(cluster_id: int, mirror: ClusterMirror) -> None:
    """In the session's transaction: this mirror generation ran the cluster's last session, in this process (its
    own queue, for ``scheduling.feed.affinity``), now."""
    ClusterFeed.objects.filter(cluster_id=cluster_id).update(
        last_mirror=mirror.generation,
        last_mirror_rev=mirror.cluster_rev or 0,
        last_queue=affinity.own_queue(),
        last_session_at=timezone.now(),
    )


def prune_changes(cluster: Cluster, keep: int = KEEP_REVISIONS) -> int:
    """Delete the cluster's changes more than ``keep`` revisions old and record how far (a mirror older than that
    reads in full); returns how many rows went."""
    (rev,) = Revision.objects.values_of(Revision.cluster_key(cluster.pk))
    through = rev - keep
    if through <= 0:
        return 0
    with transaction.atomic():
        feed, _ = ClusterFeed.objects.select_for_update().get_or_create(cluster=cluster)
        if feed.pruned_through >= through:
            return 0
        deleted = RowChange.objects.filter(cluster_id=cluster.pk, rev__lte=through)._raw_delete(RowChange.objects.db)
        feed.pruned_through = through
        feed.save(update_fields=["pruned_through"])
    return deleted
