"""The state a scheduling session opens with, kept between the sessions of one cluster and brought up to date.

Opening a session on 50,000 pods builds a ``TaskState`` per pod, a ``JobState`` per podgroup, the node table and
the pod aggregates the quota values start from (per podgroup and per quota group), and that is most of a
session's time when only a few pods changed since the last one. A ``SessionCarry`` keeps that state as it was
when the last session opened (the caller holds it, one per cluster: ``scheduling.feed.mirror`` does; the engine keeps
no global state) and, for the next snapshot, redoes only what changed:

* **What changed** is found by identity: snapshot objects are immutable, and a caller that keeps a cluster in
  memory hands the same ``TaskInfo`` / ``PodGroupInfo`` object for what did not change. A pod whose info is a
  different object (or that is new, or gone) is uncounted from its node row, its podgroup and its quota group with
  its old info and counted with its new one; a podgroup whose info changed gets a new ``JobState``. Podgroups
  and quota groups with a changed member are recounted over their members in snapshot order, with the same
  functions as a full build (``session.count_job``, ``values.job_usage``, ``values.group_totals``), so every sum,
  list order and dict order is the one a full build gives. A podgroup whose record alone changed (its phase, its
  condition's time: every podgroup after each session in a replay) takes its counters and member list at open from
  its last state, and its usage too when the fields the usage reads are equal; a usage equal name for name to the
  last one moves none of the per-queue and per-namespace sums. Node rows are exact integer sums. A caller that knows
  which pods it re-read says so (``note_tasks``): then only those are looked at, not every pod of the snapshot,
  and the podgroups' and quota groups' orders are re-sorted only when a first pod left or a new one does not come
  last.
* **What the last session changed** is undone: every ``TaskState`` whose status changed is put back as it opened
  (``Session.touched``), every ``JobState`` reopens from its counters at open (``JobState.reopen``), and the
  session works on a copy of the node table (``NodeTable.clone``).
* **A changed node** (allocatable, labels, taints, cordon, readiness) keeps its row: its allocatable row is
  replaced and its idle row moves by the same amount (idle is allocatable minus what its pods hold).
* **A full build** (``build_state``) whenever equivalence cannot be shown cheaply: no state yet, a node added or
  gone (rows move), the pod slots appearing or going, the quota groups' names or the namespaces they list changed
  (the pods' quota groups move), the snapshot's task order moved (beyond appended and removed pods), the resource
  columns changed, or more than half of the pods changed (measured on the small demo's replay, where about a third
  of the pods change between two sessions: the update then costs about two thirds of a full build). An error while
  updating drops the kept state, so the next session builds in full.

``last`` says what the last ``open`` did and ``opened`` counts them (for benchmarks and tests). The randomized test
``tests/unit/test_session_carry.py`` compares, over many random change sequences, the decisions and values of
sessions opened through a carry with sessions built from scratch.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from typing import NamedTuple

from engine.amounts import ShapedSums, raw
from engine.fairshare.namespace import NamespacePairs, PairTable
from engine.fairshare.queues import JobSummary, JobUsage, QueueTotals, summarize_jobs
from engine.objects import (
    ALLOCATED_STATUSES,
    NodeInfo,
    PodGroupInfo,
    PodGroupPhase,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.resources import ResourceList
from engine.session.decisions import PodGroupStatus
from engine.session.session import (
    PODS,
    JobState,
    NodeTable,
    TaskState,
    build_state,
    count_job,
    same_spec,
    table_columns,
    task_vector,
)
from engine.values import (
    Aggregates,
    GroupTotals,
    GroupUsage,
    QuotaTreeMemo,
    aggregates_of,
    group_totals,
    group_usage_of,
    job_usage,
)
from engine.wording import plural

__all__ = ["JobIndex", "KeptDerived", "SessionCarry"]

FULL_BUILD_SHARE = 2  # more than half of the pods changed: build in full
LINKS = 4  # the caller's notes of what changed between task mappings (``note_tasks``) kept at most
_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_QUEUE_OF = attrgetter("queue")


@dataclass
class _Kept:
    """The state as the last session opened with it (before any action ran)."""

    nodes: Mapping[str, NodeInfo]
    quota_names: frozenset[str]
    quota_namespaces: Mapping[str, tuple[str, ...]]
    node_resources: frozenset[str]
    task_resources: dict[str, int]  # resource name -> number of pods whose request names it
    snapshot_resources: tuple[str, ...]
    has_pods: bool
    table: NodeTable
    infos: Mapping[str, TaskInfo]  # the last snapshot's tasks
    rank: dict[str, int]  # task uid -> a number that grows in snapshot order
    quota_of: dict[str, str]  # task uid -> quota group, in snapshot order (``Snapshot.task_quota_groups``)
    next_rank: int
    states: dict[str, TaskState]  # snapshot order
    members: dict[str, list[TaskState]]  # podgroup key -> its pods in snapshot order (a key without podgroup too)
    groups: dict[str, _GroupSums]  # quota group -> what its pods add up to
    group_first: dict[str, int]  # quota group -> the rank of its first pod (the groups' order)
    jobs: dict[str, JobState]  # snapshot podgroup order
    usages: dict[str, JobUsage]
    podgroups: Mapping[str, PodGroupInfo] = field(default_factory=dict)  # the last snapshot's podgroups
    by_podgroup: dict[str, tuple[TaskInfo, ...]] = field(default_factory=dict)
    unlisted: set[str] | None = None  # the keys of ``members`` missing from ``by_podgroup`` (None: any)
    # what ``summarize_jobs`` adds up per queue, kept by adding and removing jobs (None: not yet)
    queue_sums: dict[str, _QueueSums] | None = None
    ns_pairs: NamespacePairs | None = None  # the (queue, namespace) pairs' sums, kept likewise (None: not yet)
    usage_moves: list[tuple[JobUsage, int]] = field(default_factory=list)  # usages out (-1) and in (+1) since
    # what the podgroups hold at open per namespace (the session's ``ns_allocated``), kept by adding and removing the
    # podgroups recounted (None: not yet); and per namespace, how many podgroups name each resource in what they hold
    ns_sums: dict[str, dict[str, int]] | None = None
    ns_names: dict[str, dict[str, int]] = field(default_factory=dict)
    ns_moves: list[tuple[str, dict[str, int], int]] = field(default_factory=list)  # held at open, out and in since
    index: JobIndex | None = None  # the session's indexes of the podgroups (None: to build over every podgroup)


class Opened(NamedTuple):
    """What ``SessionCarry.open`` gives a session (by name: callers that want one part do not count positions)."""

    nodes: NodeTable
    tasks: dict[str, TaskState]
    jobs: dict[str, JobState]
    has_pods: bool
    aggregates: Aggregates
    ns_allocated: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class _Link:
    """``tasks`` differs from ``base`` only at the keys in ``changed`` (``SessionCarry.note_tasks``, and
    ``note_podgroups`` for the podgroups' mappings)."""

    base: Mapping[str, object]
    tasks: Mapping[str, object]
    changed: frozenset[str]


class SessionCarry:
    """The session state kept between the sessions of one cluster (see the module docstring). Not thread-safe:
    one session of a cluster at a time uses it (the caller's session lock)."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self._touched: list[TaskState] = []
        self._links: tuple[_Link, ...] = ()  # replaced whole, never changed in place (``note_tasks``)
        self._pg_links: tuple[_Link, ...] = ()  # the same for the podgroups (``note_podgroups``)
        self.last = "nothing kept yet"
        self.opened = 0  # sessions opened through this carry
        # what the last session's settled statuses depend on beyond their podgroups (``Session.close``)
        self.settled_under: tuple[object, ...] | None = None
        self._lent: weakref.ref[_Lent] | None = None  # the kept quota groups of the pods, lent to a snapshot
        # the podgroups whose per-session state the last session may have changed (None: any; ``Session.close``)
        self.written: set[str] | None = None
        # the podgroups the last session left unsettled, by key (None: not known; ``Session.close``)
        self.unsettled: list[str] | None = None
        # the statuses the last close gave, every settled one the object a later close gives again while it stays
        # settled (None: none; ``Session.close``, ``StatusChanges``)
        self.statuses: Mapping[str, PodGroupStatus] | None = None
        self.index: JobIndex | None = None  # the podgroups' indexes for the session opened last (``JobIndex``)
        # the podgroup keys whose ``JobState`` the last ``open`` made or recounted, and those gone: every other
        # podgroup opens as the session before opened it (None: not known, after a full build)
        self.moved_jobs: set[str] | None = None
        # what a plugin derives from the podgroups at open, kept by it between sessions (``KeptDerived``)
        self.derived: dict[str, KeptDerived] = {}
        # the elastic quota tree of the cluster's last values, kept current by its sessions and recycling passes
        self.quotas = QuotaTreeMemo()

    def clear(self) -> None:
        """Forget the kept state (the next session builds in full)."""
        _let_go(self._kept)
        self._kept = None
        self._touched = []
        self._links = ()
        self._pg_links = ()
        self.settled_under = None
        self.written = None
        self.unsettled = None
        self.statuses = None
        self.index = None
        self.moved_jobs = None
        self.derived = {}

    def note_tasks(
        self, base: Mapping[str, TaskInfo], tasks: Mapping[str, TaskInfo], changed: Collection[str] | None
    ) -> None:
        """What the caller knows of a task mapping it will hand in a snapshot: ``tasks`` differs from ``base`` (the
        mapping of an earlier snapshot) only at the uids in ``changed`` (new, replaced by another info object, or
        gone); every other uid is in both with the same info object, and the uids in both are in the same relative
        order. With such notes leading from the kept snapshot's tasks to the next snapshot's, ``open`` looks at those
        uids only instead of comparing every pod (a caller that keeps a cluster in memory knows which rows it
        re-read). ``None``: not known (the notes so far are dropped; ``open`` compares every pod).

        The notes are kept in a tuple replaced whole, so a caller's thread may note while a session opens (a note
        lost to that race only costs the comparison of every pod)."""
        if changed is None:
            self._links = ()
            return
        self._links = (*self._links[-(LINKS - 1) :], _Link(base, tasks, frozenset(changed)))

    def note_podgroups(
        self, base: Mapping[str, PodGroupInfo], podgroups: Mapping[str, PodGroupInfo], changed: Collection[str] | None
    ) -> None:
        """``note_tasks`` for the podgroups: ``podgroups`` differs from ``base`` only at the keys in ``changed`` (new,
        replaced by another info object, or gone), every other key in both with the same object in the same relative
        order. With notes leading from the kept snapshot's podgroups to the next snapshot's, ``open`` renews the
        podgroups' states at those keys (and those with a changed pod) only, instead of walking every podgroup."""
        if changed is None:
            self._pg_links = ()
            return
        self._pg_links = (*self._pg_links[-(LINKS - 1) :], _Link(base, podgroups, frozenset(changed)))

    def _changed_since(self, kept: Mapping[str, TaskInfo], tasks: Mapping[str, TaskInfo]) -> set[str] | None:
        """The uids that may differ between the kept snapshot's task mapping and ``tasks``, by the notes (None when
        the notes do not lead from one to the other); the notes followed are dropped."""
        out, self._links = _follow(self._links, kept, tasks)
        return out

    def open(self, snapshot: Snapshot, touched: list[TaskState]) -> Opened:
        """The node table (a copy the session may change), tasks, jobs, pod-slot flag and aggregates a session on
        ``snapshot`` opens with; ``touched`` is the session's list of tasks whose status it changes."""
        self.opened += 1
        for task in self._touched:  # undo what the last session did to the kept tasks
            task.status = task.orig_status
            task.node = task.orig_node
        self._touched = touched
        written, self.written = self.written, None  # (a session that does not close leaves None: reopen all)
        self.index = None
        self.moved_jobs = None
        try:
            kept = self._kept
            why = "nothing kept yet" if kept is None else _why_full(kept, snapshot)
            if kept is None or why:
                return self._full(snapshot, why)
            hint = self._changed_since(kept.infos, snapshot.tasks)
            pg_hint, self._pg_links = _follow(self._pg_links, kept.podgroups, snapshot.podgroups)
            return self._update(kept, snapshot, hint, written, pg_hint)
        except BaseException:
            self.clear()
            raise

    def group_usage(self, snap: Snapshot) -> GroupUsage | None:
        """``values.group_usage(snap)`` from the quota groups' sums kept at the last open, moved by the pods that
        differ (by identity) between that session's snapshot and ``snap`` (a recycling pass right after the session:
        the pods it bound or evicted), without changing the kept state; None when nothing is kept or the quota groups
        changed (the caller adds every pod up). The groups in the order of their first pods in ``snap``."""
        kept = self._kept
        if kept is None or _why_full(kept, snap):
            return None
        infos, quota_of = kept.infos, kept.quota_of
        order: dict[str, None] = {}
        moved: list[tuple[TaskInfo | None, TaskInfo | None, str | None, str | None]] = []
        for uid, info in snap.tasks.items():
            was = infos.get(uid)
            if was is info:
                group = quota_of[uid]
            else:
                group = snap.quota_group_of(info)
                moved.append((was, info, quota_of.get(uid) if was is not None else None, group))
            if group not in order:
                order[group] = None
        if len(infos) != len(snap.tasks) - sum(1 for was, _, _, _ in moved if was is None):
            tasks = snap.tasks
            moved.extend((infos[uid], None, quota_of[uid], None) for uid in infos if uid not in tasks)
        return group_usage_of(_moved_totals(kept.groups, moved, order, snap))

    # -- the full build ------------------------------------------------------------------------------------------

    def _full(self, snap: Snapshot, why: str) -> Opened:
        _let_go(self._kept)
        self._kept = None
        resources, has_pods = table_columns(snap)
        table = NodeTable(snap.nodes.values(), resources)
        tasks, jobs = build_state(snap, table, has_pods)
        members: dict[str, list[TaskState]] = {}
        groups: dict[str, _GroupSums] = {}
        task_resources: dict[str, int] = {}
        group_first: dict[str, int] = {}
        for i, task in enumerate(tasks.values()):
            group_first.setdefault(task.quota_group, i)
            members.setdefault(task.job, []).append(task)
            sums = groups.get(task.quota_group)
            if sums is None:
                sums = groups[task.quota_group] = _GroupSums()
            sums.add(task.info, 1)
            for name in task.info.request:
                task_resources[name] = task_resources.get(name, 0) + 1
        for job in jobs.values():
            job.base = (dict(job.counts), job.pending_be, dict(job.allocated))
        usages = {key: job_usage(pg, [t.info for t in members.get(key, ())]) for key, pg in snap.podgroups.items()}
        kept = _Kept(
            nodes=snap.nodes,
            quota_names=frozenset(snap.quota_groups),
            quota_namespaces=snap.quota_namespaces,
            node_resources=frozenset(name for n in snap.nodes.values() for name in n.allocatable),
            task_resources=task_resources,
            snapshot_resources=snap.resource_names,
            has_pods=has_pods,
            table=table,
            infos=snap.tasks,
            rank={uid: i for i, uid in enumerate(tasks)},
            quota_of={uid: t.quota_group for uid, t in tasks.items()},
            next_rank=len(tasks),
            states=tasks,
            members=members,
            groups=groups,
            group_first=group_first,
            jobs=jobs,
            usages=usages,
            podgroups=snap.podgroups,
        )
        self._kept = kept
        self.last = f"full build: {why}"
        aggregates = self._aggregates(kept, snap, True, True)
        self.unsettled = None
        self.index = kept.index = JobIndex.build(jobs)
        return Opened(table.clone(), tasks, jobs, has_pods, aggregates, _ns_allocated(kept))

    # -- the update --------------------------------------------------------------------------------------------

    def _update(
        self, kept: _Kept, snap: Snapshot, hint: set[str] | None, written: set[str] | None, pg_hint: set[str] | None
    ) -> Opened:
        """Bring the kept state up to ``snap`` by redoing only what changed, or build in full when the changes
        cannot be shown equivalent cheaply (checked before the kept state is touched). ``hint``: the uids that
        may have changed, by the caller's notes (None: compare every pod); ``written``: the podgroups whose state the
        last session may have changed (None: any); ``pg_hint``: the podgroup keys that may have changed, by the
        caller's notes (None: walk every podgroup)."""
        noted = hint is not None and snap.tasks is not kept.infos  # (the same mapping needs no note)
        ch = _changes(kept, snap, hint)
        if isinstance(ch, str):
            return self._full(snap, ch)
        # from here on the kept state changes (an error drops it: ``open``)
        lent = self._lent() if self._lent is not None else None
        if lent is not None:  # a snapshot still reads the pods' quota groups as they were: its own copy now
            lent.detach()
        self._lent = None
        boundary = _last_first(kept)
        table = kept.table
        if ch.nodes:
            table.renew(ch.nodes)
            kept.node_resources = ch.node_resources
        added, dirty_jobs, new_rows, new_group = _replace_tasks(kept, snap, ch.removed, ch.changed)
        tasks, regrouped = _reorder(kept, ch, added, new_group)
        pos = kept.rank
        for row in new_rows:  # a row's pods in snapshot order, as a full build inserts them
            if not _in_order(table.tasks[row], pos):
                table.tasks[row] = dict(sorted(table.tasks[row].items(), key=lambda item: pos[item[0]]))
        resort = _regroup(kept.members, dirty_jobs, tasks, added, pos, boundary if ch.at_end else None)
        groups = kept.groups
        for group in [g for g, sums in groups.items() if not sums.pods]:
            del groups[group]
            kept.group_first.pop(group, None)
            regrouped = True
        jobs, recount, moved, renewed = self._renew(kept, snap, dirty_jobs, written, pg_hint)
        kept.nodes = snap.nodes
        kept.infos = snap.tasks
        kept.podgroups = snap.podgroups
        kept.task_resources = ch.task_resources
        kept.states = tasks
        _let_go_jobs(kept.jobs, jobs, moved)
        kept.jobs = jobs
        self.moved_jobs = moved
        self.last = (
            f"update: {len(ch.changed)} pods new or changed, {len(ch.removed)} gone, "
            f"{len(recount)} podgroups recounted"
            + (" (those noted)" if renewed else "")
            + (f", {plural(len(ch.nodes), 'node')} changed" if ch.nodes else "")
            + (", by the caller's notes" if noted and ch.order is None else "")
        )
        aggregates = self._aggregates(kept, snap, resort, regrouped)
        return Opened(table.clone(), tasks, jobs, kept.has_pods, aggregates, _ns_allocated(kept))

    def _renew(
        self, kept: _Kept, snap: Snapshot, dirty_jobs: set[str], written: set[str] | None, pg_hint: set[str] | None
    ) -> tuple[dict[str, JobState], set[str], set[str], bool]:
        """The podgroups' states brought up to ``snap`` (by the caller's notes ``pg_hint`` when they show it, else
        over every podgroup), recounted, and their kept indexes moved; returns the states, the keys recounted, those
        recounted or gone, and whether the notes were used."""
        renewed = _renew_noted(kept, snap, dirty_jobs, pg_hint) if pg_hint is not None else None
        jobs, recount, gone, appended = renewed or _renew_jobs(kept, snap, dirty_jobs)
        _recount_jobs(kept, jobs, recount, dirty_jobs, written, gone, appended)
        index = kept.index
        kept.index = None  # (an error below leaves none)
        known = (gone, appended) if appended is not None else None
        kept.index = (index.moved(kept.jobs, jobs, recount, known) if index is not None else None) or JobIndex.build(
            jobs
        )
        self.index = kept.index
        if self.unsettled is not None:  # a recounted podgroup is unsettled until a close settles it again
            self.unsettled = [key for key in dict.fromkeys([*self.unsettled, *recount]) if key in jobs]
        return jobs, recount, recount | gone, renewed is not None

    # -- the snapshot's indexes and the values' aggregates ----------------------------------------------------

    def _aggregates(self, kept: _Kept, snap: Snapshot, resort: bool, regrouped: bool) -> Aggregates:
        """The aggregates ``compute_values`` starts from, and the snapshot's indexes the session reads (the ones a
        full build would compute by walking every pod), in the snapshot's orders. ``resort``: the podgroup keys'
        order may have moved; ``regrouped``: the quota groups' order may have."""
        if resort:  # podgroup keys in the order of their first pod, as ``Snapshot``'s grouping gives
            first = kept.rank.__getitem__
            kept.members = dict(sorted(kept.members.items(), key=lambda item: first(item[1][0].uid)))
        if regrouped:  # quota groups likewise (the order of their first pods)
            order = sorted(kept.groups, key=kept.group_first.__getitem__)
            if order != list(kept.groups):
                kept.groups = {group: kept.groups[group] for group in order}
        by_podgroup, members = kept.by_podgroup, kept.members
        for key in members if kept.unlisted is None else kept.unlisted:
            ours = members.get(key)
            if ours is not None and key not in by_podgroup:
                by_podgroup[key] = tuple(t.info for t in ours)
        kept.unlisted = set()
        cache = snap._cache  # the snapshot's own indexes, as it would compute them
        cache.setdefault("resource_names", kept.snapshot_resources)
        if "task_quota_groups" not in cache:  # lent, not copied (the next update detaches it first)
            lent = cache["task_quota_groups"] = _Lent(kept.quota_of)
            self._lent = weakref.ref(lent)
        cache.setdefault("tasks_by_podgroup", {key: kept.by_podgroup[key] for key in kept.members})
        totals: dict[str, GroupTotals] = {}
        for group, sums in kept.groups.items():
            made = sums.totals()
            totals[group] = made if made is not None else group_totals(snap.tasks_by_quota_group[group])
        jobs = list(kept.usages.values())
        pairs = _pairs(kept, jobs)  # (before ``_summary``, which takes the moves)
        return aggregates_of(snap, jobs, group_usage_of(totals), _summary(kept, jobs), pairs)


class KeptDerived:
    """What a plugin derives from the podgroups at open, kept on the carry between sessions: per podgroup key its
    part (only the podgroups with a part), and their sum. ``opened``: the carry's ``opened`` when it was last
    brought up to date; it is valid for the next session only when that session is the very next one opened
    (``SessionCarry.moved_jobs`` then names every podgroup whose part may differ)."""

    __slots__ = ("opened", "parts", "total")

    def __init__(self, opened: int, parts: dict[str, dict[str, int]], total: dict[str, int]) -> None:
        self.opened = opened
        self.parts = parts
        self.total = total

    @classmethod
    def current(
        cls,
        carry: SessionCarry | None,
        name: str,
        jobs: Mapping[str, JobState],
        part: Callable[[JobState], dict[str, int] | None],
    ) -> dict[str, int]:
        """The sum over ``jobs`` of ``part(job)`` (resource -> amount; None or empty: no part), as a pass over every
        podgroup adds it up, kept on ``carry`` under ``name`` and redone only for the podgroups the carry's last
        open moved. A resource whose sum came back to zero may stay with 0 (read it with ``get(r, 0)``)."""
        kept = carry.derived.get(name) if carry is not None else None
        moved = carry.moved_jobs if carry is not None else None
        if kept is None or moved is None or carry is None or kept.opened != carry.opened - 1:
            parts: dict[str, dict[str, int]] = {}
            total: dict[str, int] = {}
            for key, job in jobs.items():
                ours = part(job)
                if ours:
                    parts[key] = ours
                    for r, v in ours.items():
                        total[r] = total.get(r, 0) + v
            kept = cls(0, parts, total)
        else:
            parts, total = kept.parts, kept.total
            for key in moved:
                old = parts.pop(key, None)
                if old:
                    for r, v in old.items():
                        total[r] -= v
                now = jobs.get(key)
                ours = part(now) if now is not None else None
                if ours:
                    parts[key] = ours
                    for r, v in ours.items():
                        total[r] = total.get(r, 0) + v
        if carry is not None:
            kept.opened = carry.opened
            carry.derived[name] = kept
        return dict(total)


class JobIndex:
    """What ``Session`` indexes over the podgroups at open, kept between sessions: the podgroups per queue (the
    queues in the order of their first podgroup, each queue's podgroups in snapshot order) and the keys of the
    podgroups with a pending pod at open (snapshot order). ``moved`` brings them up to date for the podgroups
    recounted, new or gone when the kept ones stay in their order and the new ones come last (the usual case);
    otherwise they are built again over every podgroup (``build``), as a fresh session does."""

    __slots__ = ("by_queue", "next_rank", "pending", "rank")

    def __init__(self, by_queue: dict[str, list[JobState]], pending: dict[str, None], rank: dict[str, int]) -> None:
        self.by_queue = by_queue  # the sessions read the lists, never change them
        self.pending = pending
        self.rank = rank  # podgroup key -> a number that grows in snapshot order (the queues' order)
        self.next_rank = len(rank)

    @classmethod
    def build(cls, jobs: Mapping[str, JobState]) -> JobIndex:
        by_queue: dict[str, list[JobState]] = {}
        pending: dict[str, None] = {}
        for key, job in jobs.items():
            by_queue.setdefault(job.queue, []).append(job)
            if job.counts[TaskStatus.PENDING]:
                pending[key] = None
        return cls(by_queue, pending, {key: i for i, key in enumerate(jobs)})

    def moved(
        self,
        old: dict[str, JobState],
        jobs: dict[str, JobState],
        recount: set[str],
        known: tuple[set[str], list[str]] | None = None,
    ) -> JobIndex | None:
        """The index for ``jobs`` (``old``'s podgroups with ``recount``'s new or changed), or None when it is not
        shown cheaply: the kept podgroups moved in the order or a recounted one changed queue. A queue whose first
        podgroup left moves to the place of its next one among the queues. ``known``: the podgroups gone and the new
        ones in snapshot order, the kept ones in their order (the caller's notes showed it: ``_renew_noted``)."""
        if known is not None:
            gone, new_keys = known
            new: list[str] | None = new_keys
        else:
            gone = old.keys() - jobs.keys() if len(old) != len(jobs) or recount else set()
            new = _appended(old, jobs, recount, gone)
        if new is None:
            return None
        touched: set[str] = {old[key].queue for key in gone}
        for key in recount:
            job, before = jobs[key], old.get(key)
            if before is not None and before.queue != job.queue:
                return None
            touched.add(job.queue)
        by_queue = self.by_queue  # (changed in place, as ``pending``: the session copies the mapping, not the lists)
        first_left = self._drop(touched, gone, jobs)
        rank = self.rank
        for key in gone:
            del rank[key]
        for key in new:
            rank[key] = self.next_rank
            self.next_rank += 1
            job = jobs[key]
            ours = by_queue.get(job.queue)
            if ours is None:
                by_queue[job.queue] = [job]
            else:
                ours.append(job)
        pending = self._pending(old, jobs, recount, gone, new)
        if first_left:  # the queues in the order of their first podgroups again
            order = sorted(by_queue, key=lambda queue: rank[by_queue[queue][0].key])
            if order != list(by_queue):
                by_queue = {queue: by_queue[queue] for queue in order}
        index = JobIndex(by_queue, pending, rank)
        index.next_rank = self.next_rank
        return index

    def _drop(self, touched: set[str], gone: set[str], jobs: dict[str, JobState]) -> bool:
        """The touched queues' lists without the podgroups gone, with this session's job states; whether a queue's
        first podgroup left."""
        by_queue = self.by_queue
        first_left = False
        for queue in touched:
            ours = by_queue.get(queue)
            if ours is None:
                continue
            first_left = first_left or ours[0].key in gone
            ours = [jobs[j.key] for j in ours if j.key not in gone]
            if ours:
                by_queue[queue] = ours
            else:
                del by_queue[queue]
        return first_left

    def _pending(
        self, old: dict[str, JobState], jobs: dict[str, JobState], recount: set[str], gone: set[str], new: list[str]
    ) -> dict[str, None]:
        """The podgroups with a pending pod, in snapshot order (changed in place: the session that read it is
        over)."""
        pending = self.pending
        woke = False
        for key in recount:
            if not jobs[key].counts[TaskStatus.PENDING]:
                pending.pop(key, None)
            elif key in old and key not in pending:
                woke = True
        for key in gone:
            pending.pop(key, None)
        if woke:  # a kept podgroup has a pending pod now: the keys in snapshot order again
            return {key: None for key, job in jobs.items() if job.counts[TaskStatus.PENDING]}
        for key in new:
            if jobs[key].counts[TaskStatus.PENDING]:
                pending[key] = None
        return pending


def _appended(
    old: dict[str, JobState], jobs: dict[str, JobState], recount: set[str], gone: set[str]
) -> list[str] | None:
    """The new podgroups in snapshot order when they are the last ones and the kept ones keep their order, else
    None."""
    new = [key for key in recount if key not in old]
    if len(jobs) != len(old) - len(gone) + len(new):
        return None
    tail = list(islice(reversed(jobs), len(new)))
    if set(tail) != set(new):
        return None
    if gone:
        order = list(filter(jobs.__contains__, old))  # (the kept keys; a loop in C)
        if list(islice(jobs, len(order))) != order:
            return None
    elif list(islice(jobs, len(old))) != list(old):
        return None
    return tail[::-1]


def _ns_allocated(kept: _Kept) -> dict[str, dict[str, int]]:
    """What the podgroups hold at open per namespace, as ``Session`` adds it up over every podgroup (a namespace
    where one holds something; its resources those some podgroup of it names), kept by adding and removing the
    podgroups recounted since (``ns_moves``): the same exact sums, in an order of namespaces and resources no decision
    reads (they are looked up by name, and a share is the largest of its resources'). The session gets a shallow
    copy: it copies a namespace's sums before it changes them (``Session._ns_sums``)."""
    sums, names, moves = kept.ns_sums, kept.ns_names, kept.ns_moves
    kept.ns_moves = []
    if sums is None:
        sums = kept.ns_sums = {}
        names.clear()
        moves = [(job.namespace, job.base[2], 1) for job in kept.jobs.values() if job.base is not None]
    for ns, held, sign in moves:
        if not held:
            continue
        ours, named = sums.get(ns), names.get(ns)
        if ours is None or named is None:
            ours, named = sums[ns], names[ns] = {}, {}
        for name, amount in held.items():
            n = named.get(name, 0) + sign
            if n:
                named[name] = n
                ours[name] = ours.get(name, 0) + sign * amount
            else:
                del named[name], ours[name]
        if not named:
            del sums[ns], names[ns]
    return sums.copy()


class _Lent(Mapping[str, str]):
    """The carry's own mapping (task uid -> quota group), read-only, in a snapshot's indexes: a copy of every pod's
    entry each session would cost more than the rest of an update. Before the carry changes its mapping, a lent one
    still alive takes a copy (``detach``), so the snapshot keeps reading what it opened with."""

    __slots__ = ("__weakref__", "_data")

    def __init__(self, data: dict[str, str]) -> None:
        self._data = data

    def detach(self) -> None:
        self._data = self._data.copy()  # (cloned whole, where ``dict(...)`` copies entry by entry)

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class _GroupSums(ShapedSums):
    """What the pods of one quota group add up to (``values.group_totals``), kept by adding and removing pods.

    ``group_totals`` builds its dicts in the order resource names first appear among the group's pods. When the
    requests' name orders (their *shapes*) of a class of pods are all prefixes of the longest one, that order is
    the longest shape whatever the pods' order, so the sums can be kept by delta; otherwise (``totals`` None) the
    group is added up again from its pods."""

    __slots__ = ("pods",)

    def __init__(self) -> None:
        super().__init__(4)  # per class (live, used, releasing, pipelined): shape -> pods, resource -> amount
        self.pods = 0  # every pod of the group, finished ones too (the group is in the snapshot's grouping)

    @classmethod
    def copy_of(cls, other: _GroupSums | None) -> _GroupSums:
        """A copy of ``other`` (None: empty sums) to move while ``other`` stays as it is."""
        out = cls()
        if other is not None:
            out.pods = other.pods
            out.shapes = tuple(dict(d) for d in other.shapes)
            out.sums = tuple(dict(d) for d in other.sums)
        return out

    def add(self, info: TaskInfo, sign: int) -> None:
        self.pods += sign
        status = info.status
        if status in _DONE:
            return
        amounts = info.request.raw
        shape = tuple(amounts)
        self._add(0, shape, amounts, sign)
        if info.pipelined or status == TaskStatus.PIPELINED:
            self._add(3, shape, amounts, sign)
        if status in ALLOCATED_STATUSES:
            self._add(1, shape, amounts, sign)
        elif status == TaskStatus.RELEASING:
            self._add(2, shape, amounts, sign)

    def move(self, old: TaskInfo, new: TaskInfo) -> None:
        """``add(old, -1)`` then ``add(new, 1)`` for two infos of one pod with the same request in the same order
        (``_same_shape``): only the classes the pod's status moved it into or out of change (the sums are exact
        integers and the shapes' counts the same either way; ``made`` does not read the order of the shapes)."""
        was, now = _classes(old), _classes(new)
        if was == now:
            return
        amounts = new.request.raw
        shape = tuple(amounts)
        for i in range(4):
            if was[i] != now[i]:
                self._add(i, shape, amounts, 1 if now[i] else -1)

    def totals(self) -> GroupTotals | None:
        made = self.made()
        if made is None:
            return None
        live, used, leaving, waiting = made
        trusted = ResourceList.trusted
        n_waiting = sum(self.shapes[3].values())
        return (
            trusted(live),
            trusted(used),
            trusted(leaving) if leaving else None,
            trusted(waiting) if n_waiting else None,
            n_waiting,
        )


def _moved_totals(
    groups: Mapping[str, _GroupSums],
    moved: list[tuple[TaskInfo | None, TaskInfo | None, str | None, str | None]],
    order: Mapping[str, None],
    snap: Snapshot,
) -> dict[str, GroupTotals]:
    """Each group of ``order`` (in that order): its ``group_totals`` from the kept sums of ``groups`` moved by the pods
    of ``moved`` (old info and group, new info and group; copies of the sums they touch, the kept ones unchanged), or
    added up from ``snap``'s pods when the sums cannot give its dicts' order."""
    copies: dict[str, _GroupSums] = {}

    def ours(group: str) -> _GroupSums:
        sums = copies.get(group)
        if sums is None:
            sums = copies[group] = _GroupSums.copy_of(groups.get(group))
        return sums

    for was, info, old_group, group in moved:
        if was is not None and old_group is not None:
            ours(old_group).add(was, -1)
        if info is not None and group is not None:
            ours(group).add(info, 1)
    out: dict[str, GroupTotals] = {}
    for group in order:
        sums = copies.get(group) or groups.get(group)
        made = sums.totals() if sums is not None else None
        out[group] = made if made is not None else group_totals(snap.tasks_by_quota_group[group])
    return out


def _classes(info: TaskInfo) -> tuple[bool, bool, bool, bool]:
    """The classes of ``_GroupSums`` a pod counts in (live, used, releasing, pipelined), as ``_GroupSums.add``."""
    status = info.status
    if status in _DONE:
        return (False, False, False, False)
    used = status in ALLOCATED_STATUSES
    return (True, used, not used and status == TaskStatus.RELEASING, info.pipelined or status == TaskStatus.PIPELINED)


def _pairs(kept: _Kept, jobs: list[JobUsage]) -> PairTable | None:
    """The namespaces' pairs of ``jobs`` (the kept usages) from the sums kept by adding and removing the jobs that
    changed since (``usage_moves``, left for ``_summary``); None when a pair's name orders depend on its jobs' order
    (``compute_namespace_shares`` then adds them up from the jobs)."""
    pairs, moves = kept.ns_pairs, kept.usage_moves
    if pairs is None:
        pairs = kept.ns_pairs = NamespacePairs()
        moves = [(job, 1) for job in jobs]
    for usage, sign in moves:
        pairs.add(usage, sign)
    return pairs.table()


def _summary(kept: _Kept, jobs: list[JobUsage]) -> JobSummary:
    """``summarize_jobs(jobs)`` (``jobs``: the kept usages in snapshot order) from the per-queue sums kept by adding
    and removing the jobs that changed since (``usage_moves``); a queue whose sums cannot give its dicts' orders
    whatever the jobs' order (``_QueueSums.totals``) is summed again from its jobs. The queues' order is that of
    their first jobs."""
    sums, moves = kept.queue_sums, kept.usage_moves
    kept.usage_moves = []
    if sums is None:
        sums = kept.queue_sums = {}
        moves = [(job, 1) for job in jobs]
    for usage, sign in moves:
        queue = sums.get(usage.queue)
        if queue is None:
            queue = sums[usage.queue] = _QueueSums()
        queue.add(usage, sign)
    totals: dict[str, QueueTotals] = {}
    again: list[str] = []
    for name in dict.fromkeys(map(_QUEUE_OF, jobs)):
        made = sums[name].totals()
        if made is None:
            again.append(name)
        totals[name] = made  # type: ignore[assignment]  # (filled in below)
    if again:
        wanted = set(again)
        totals.update(summarize_jobs([job for job in jobs if job.queue in wanted]).totals)
    for name in [name for name, queue in sums.items() if not queue.jobs]:
        del sums[name]
    return JobSummary(totals, len(jobs))


class _QueueSums(ShapedSums):
    """What ``summarize_jobs`` adds up for the jobs of one queue, kept by adding and removing jobs (exact integers).

    ``summarize_jobs`` builds each dict in the order resource names first appear among the queue's jobs. When the
    name orders (*shapes*) of one dict's contributions are all prefixes of the longest one, that order is the
    longest shape whatever the jobs' order, so the sums can be kept by delta (as ``_GroupSums`` does for the quota
    groups); otherwise (``totals`` None) the queue is summed again from its jobs."""

    __slots__ = ("first", "jobs", "names", "pipelined_pods", "reserved_jobs")

    def __init__(self) -> None:
        super().__init__(6)  # per dict (allocated, request, pipelined, elastic, inqueue, reserving)
        self.jobs = 0
        self.names: dict[tuple[str, str], int] = {}  # (namespace, name) -> jobs so named
        self.first: tuple[str, str] | None = None  # the smallest of ``names`` (None: to find again)
        self.pipelined_pods = 0
        self.reserved_jobs = 0

    def add(self, job: JobUsage, sign: int) -> None:
        """Count ``job`` in (``sign`` 1) or out (-1), with ``summarize_jobs``' own rules."""
        self.jobs += sign
        key = (job.namespace, job.name)
        n = self.names.get(key, 0) + sign
        if n:
            self.names[key] = n
        else:
            del self.names[key]
        if sign > 0 and self.first is not None and key < self.first:
            self.first = key
        elif sign < 0 and key == self.first and not n:
            self.first = None
        allocated, request = raw(job.allocated), raw(job.request)
        self._put(0, allocated, sign)
        self._put(1, request, sign)
        if job.pipelined_tasks:
            self.pipelined_pods += sign * job.pipelined_tasks
            self._put(2, raw(job.pipelined or {}), sign)
        if job.min_resources is None:
            self._put(3, {name: amount for name, amount in allocated.items() if amount > 0}, sign)
            return
        minimum = raw(job.min_resources)
        extra = {name: amount - minimum.get(name, 0) for name, amount in allocated.items()}
        self._put(3, {name: amount for name, amount in extra.items() if amount > 0}, sign)
        phase = job.phase
        if phase == PodGroupPhase.INQUEUE or (phase == PodGroupPhase.RUNNING and job.allocated_tasks >= job.min_member):
            reserve = {name: amount - allocated.get(name, 0) for name, amount in minimum.items()}
            reserve = {name: amount for name, amount in reserve.items() if amount > 0}
            self._put(4, reserve, sign)
            self._put(5, dict.fromkeys(reserve, 1), sign)
            if reserve:
                self.reserved_jobs += sign

    def _put(self, i: int, amounts: Mapping[str, int], sign: int) -> None:
        if amounts:  # (an empty contribution moves no sum, and its empty name order is a prefix of every other)
            self._add(i, tuple(amounts), amounts, sign)

    def totals(self) -> QueueTotals | None:
        made = self.made()
        if made is None:
            return None
        if self.first is None:
            self.first = min(self.names)
        allocated, request, pipelined, elastic, inqueue, reserving = made
        return QueueTotals(
            allocated=allocated,
            request=request,
            inqueue=inqueue,
            elastic=elastic,
            reserving=reserving,
            reserved_jobs=self.reserved_jobs,
            pipelined=pipelined,
            pipelined_pods=self.pipelined_pods,
            jobs=self.jobs,
            first_job=self.first,
        )


def _follow(
    links: tuple[_Link, ...], kept: Mapping[str, object], at: Mapping[str, object]
) -> tuple[set[str] | None, tuple[_Link, ...]]:
    """The keys that may differ between the kept mapping and ``at`` by the notes ``links`` (None when they do not
    lead from one to the other), and the notes left (those followed are dropped)."""
    if at is kept:
        return set(), links
    by_at = {id(link.tasks): link for link in links}
    out: set[str] = set()
    used: list[_Link] = []
    for _ in range(len(links)):
        link = by_at.get(id(at))
        if link is None or link.tasks is not at:
            return None, links
        out |= link.changed
        used.append(link)
        at = link.base
        if at is kept:
            return out, tuple(link for link in links if all(link is not u for u in used))
    return None, links


def _why_full(kept: _Kept, snap: Snapshot) -> str:
    """Why the kept state cannot be updated to ``snap`` ('' when it can)."""
    nodes = snap.nodes
    if nodes is not kept.nodes and (len(nodes) != len(kept.nodes) or nodes.keys() != kept.nodes.keys()):
        return "nodes were added or removed"
    if frozenset(snap.quota_groups) != kept.quota_names or snap.quota_namespaces != kept.quota_namespaces:
        return "the quota groups changed"
    return ""


def _changed_nodes(kept: _Kept, snap: Snapshot) -> list[NodeInfo]:
    """The nodes whose info changed (the same names as the kept ones: ``_why_full``); an equal copy is no change."""
    if snap.nodes is kept.nodes:
        return []
    before = kept.nodes
    return [info for name, info in snap.nodes.items() if before[name] is not info and before[name] != info]


def _let_go(kept: _Kept | None) -> None:
    """Cut the cycles of a kept state being dropped (each podgroup's state lists its pods' states, each pod's points
    at its podgroup's), as ``Session.release`` does for a session's own: reference counting frees it at once instead
    of the cyclic collector later, which walked it and everything it held (on a small cluster, where most sessions
    build in full, most of the collector's time in a replay)."""
    if kept is not None:
        for job in kept.jobs.values():
            job.tasks = []


def _count_names(counts: dict[str, int], info: TaskInfo, sign: int) -> None:
    for name in info.request:
        counts[name] = counts.get(name, 0) + sign


@dataclass(slots=True)
class _Changes:
    """What changed between the kept state and a snapshot it can be brought up to."""

    changed: list[TaskInfo]  # new pods and changed pods, in snapshot order
    fresh: set[str]  # of those, the new ones
    removed: list[str]  # pods gone, in any order (uncounting commutes)
    order: list[str] | None  # task uids in snapshot order (None when the new pods are at the end: not needed)
    at_end: bool  # the new pods all come after the others (the usual case)
    task_resources: dict[str, int]
    nodes: list[NodeInfo]  # the nodes whose info changed
    node_resources: frozenset[str]


def _changes(kept: _Kept, snap: Snapshot, hint: set[str] | None) -> _Changes | str:
    """What changed since the kept state, or why a full build is needed instead: too many pods changed, the pods'
    order moved, the pod slots or the resource columns changed. ``hint``: the uids that may have changed (only
    those are looked at when the new pods are at the end), or None (every pod is compared)."""
    states = kept.states
    infos = snap.tasks
    found = None if hint is None else _hinted(kept, infos, hint)
    order: list[str] | None = None
    if found is not None:
        changed, fresh, removed = found
        at_end: bool | None = True
    else:
        before = kept.infos.get
        changed = [info for uid, info in infos.items() if before(uid) is not info]
        fresh = {info.uid for info in changed if info.uid not in states}
        gone = len(states) - (len(infos) - len(fresh))
        removed = list(states.keys() - infos.keys()) if gone else []
    if len(changed) + len(removed) > max(16, len(infos) // FULL_BUILD_SHARE):
        return f"{len(changed) + len(removed)} of {len(infos)} pods changed"
    if found is None:
        order = list(infos)
        at_end = _new_pods_at_end(kept, order, fresh, removed)
    if at_end is None:
        return "the pods' order moved"
    task_resources = _task_resources(kept, removed, changed)
    nodes = _changed_nodes(kept, snap)
    node_resources = kept.node_resources
    if nodes:
        node_resources = frozenset(name for n in snap.nodes.values() for name in n.allocatable)
        if any(PODS in raw(n.allocatable) for n in snap.nodes.values()) != kept.has_pods:
            return "the pod slots changed"
    names = tuple(sorted(node_resources | {n for n, c in task_resources.items() if c > 0}))
    if names != kept.snapshot_resources:
        return "the resource columns changed"
    return _Changes(changed, fresh, removed, order, at_end, task_resources, nodes, node_resources)


def _hinted(
    kept: _Kept, infos: Mapping[str, TaskInfo], hint: set[str]
) -> tuple[list[TaskInfo], set[str], list[str]] | None:
    """``_changes``'s new or changed pods (in snapshot order), new uids and pods gone, looking only at the uids of
    ``hint`` (the caller's notes: every other pod is the same object, in the same relative order); None when the
    new pods are not all at the end of ``infos`` (or the count shows the notes missed a pod): compare every pod."""
    if not isinstance(infos, dict):
        return None
    states = kept.states
    before = kept.infos.get
    existing: list[TaskInfo] = []
    fresh: set[str] = set()
    removed: list[str] = []
    for uid in hint:
        info = infos.get(uid)
        if info is None:
            if uid in states:
                removed.append(uid)
        elif uid not in states:
            fresh.add(uid)
        elif before(uid) is not info:
            existing.append(info)
    if len(infos) != len(states) - len(removed) + len(fresh):
        return None
    tail = list(islice(reversed(infos), len(fresh)))
    if len(tail) != len(fresh) or not fresh.issuperset(tail):
        return None
    tail.reverse()
    rank = kept.rank
    existing.sort(key=lambda info: rank[info.uid])
    existing.extend(infos[uid] for uid in tail)
    return existing, fresh, removed


def _new_pods_at_end(kept: _Kept, order: list[str], fresh: set[str], removed: list[str]) -> bool | None:
    """Whether the new pods all come after the others in ``order``; None when the pods that stay are no longer in
    their kept order (the kept rows and lists could not be updated in place)."""
    left = set(removed)
    kept_order = [u for u in kept.states if u not in left] if removed else list(kept.states)
    surviving = len(order) - len(fresh)
    at_end = not fresh or set(order[surviving:]) == fresh
    rest = order[:surviving] if at_end else [u for u in order if u not in fresh]
    return at_end if rest == kept_order else None


def _task_resources(kept: _Kept, removed: list[str], changed: list[TaskInfo]) -> dict[str, int]:
    """How many pods name each resource in their request, with the removed and changed pods counted again: the
    resource columns a full build would find."""
    states = kept.states
    task_resources = dict(kept.task_resources)
    for uid in removed:
        _count_names(task_resources, states[uid].info, -1)
    for info in changed:
        old = states.get(info.uid)
        if old is not None:
            if old.info.request.raw.keys() == info.request.raw.keys():  # the same names (a status moved): no change
                continue
            _count_names(task_resources, old.info, -1)
        _count_names(task_resources, info, 1)
    return task_resources


def _replace_tasks(
    kept: _Kept, snap: Snapshot, removed: list[str], changed: list[TaskInfo]
) -> tuple[list[TaskState], set[str], set[int], bool]:
    """Uncount the removed and changed pods from their node rows and quota groups, and count a new ``TaskState``
    for each changed or new pod. Returns the new states, the podgroup keys whose members changed, the node rows
    that gained a pod, and whether a quota group appeared."""
    states = kept.states
    table = kept.table
    groups = kept.groups
    dirty_jobs: set[str] = set()
    new_rows: set[int] = set()
    moves: list[tuple[TaskState, int]] = []  # the node rows' changes, in order (``NodeTable.place_all``)
    for uid in removed:
        gone = states.pop(uid)
        moves.append((gone, -1))
        dirty_jobs.add(gone.job)
        groups[gone.quota_group].add(gone.info, -1)
    added: list[TaskState] = []
    new_group = False
    for info in changed:
        old = states.get(info.uid)
        group = snap.quota_group_of(info)
        kept_spec = old is not None and same_spec(old.info, info)  # a binding or a completion
        moved = False
        if old is not None:
            moves.append((old, -1))
            dirty_jobs.add(old.job)
            moved = kept_spec and old.quota_group == group and _same_shape(old.info, info)
            if moved:  # the same request in the same group: only the classes its status moved it between
                groups[group].move(old.info, info)
            else:
                groups[old.quota_group].add(old.info, -1)
        row = table.index.get(info.node, -1) if info.node is not None else -1
        if old is not None and kept_spec:  # the vector and so on kept
            task = old.moved(info, row, group)
        else:
            task = TaskState(info, None, task_vector(info, table, kept.has_pods), row, group)
        states[info.uid] = task
        moves.append((task, 1))
        if task.orig_node >= 0 and task.orig_status not in _DONE:  # (a finished pod is not in its row: ``place``)
            new_rows.add(task.orig_node)
        dirty_jobs.add(task.job)
        if not moved:
            sums = groups.get(group)
            if sums is None:
                sums = groups[group] = _GroupSums()
                new_group = True
            sums.add(info, 1)
        added.append(task)
    table.place_all(moves)
    return added, dirty_jobs, new_rows, new_group


def _same_shape(a: TaskInfo, b: TaskInfo) -> bool:
    """Whether two equal requests (``same_spec``) also name their resources in the same order (the sums' shapes)."""
    return a.request is b.request or tuple(raw(a.request)) == tuple(raw(b.request))


def _reorder(kept: _Kept, ch: _Changes, added: list[TaskState], new_group: bool) -> tuple[dict[str, TaskState], bool]:
    """The tasks in snapshot order, with the kept quota groups and ranks of the pods brought up to date (in place
    when the new pods were appended, rebuilt otherwise), and whether the quota groups' order (that of their first
    pods) may have moved."""
    quota_of, rank, first = kept.quota_of, kept.rank, kept.group_first
    removed, fresh, order = ch.removed, ch.fresh, ch.order
    regrouped = bool(removed) or not ch.at_end or new_group
    if ch.at_end:
        tasks = kept.states
        stale: set[str] = set()  # groups whose first pod left
        for uid in removed:
            group, at = quota_of.pop(uid), rank.pop(uid)
            if first.get(group) == at:
                stale.add(group)
        for task in added:
            uid, group = task.uid, task.quota_group
            old = quota_of.get(uid)
            if old is not None and old != group:
                regrouped = True
                if first.get(old) == rank[uid]:
                    stale.add(old)
            quota_of[uid] = group
            if uid in fresh:
                rank[uid] = kept.next_rank
                kept.next_rank += 1
            at = rank[uid]
            if at < first.get(group, at + 1):
                first[group] = at
        if stale:
            _first_pods(kept, stale)
    else:
        assert order is not None  # the new pods not at the end: ``_changes`` compared every pod
        states = kept.states
        tasks = {uid: states[uid] for uid in order}
        kept.quota_of = {uid: t.quota_group for uid, t in tasks.items()}
        kept.rank = {uid: i for i, uid in enumerate(order)}
        kept.next_rank = len(order)
        kept.group_first = {}
        for i, group in enumerate(kept.quota_of.values()):
            kept.group_first.setdefault(group, i)
    return tasks, regrouped


def _first_pods(kept: _Kept, stale: set[str]) -> None:
    """The rank of the first pod of each quota group of ``stale`` (whose first pod left), found in snapshot order;
    a group with no pod left loses its entry."""
    need = set(stale)
    rank, first = kept.rank, kept.group_first
    for uid, group in kept.quota_of.items():
        if group in need:
            first[group] = rank[uid]
            need.discard(group)
            if not need:
                break
    for group in need:
        first.pop(group, None)


def _let_go_jobs(old: Mapping[str, JobState], jobs: Mapping[str, JobState], moved: set[str]) -> None:
    """Empty the member lists of the podgroup states replaced or gone: each member points back at its state, so
    the pair would otherwise be a cycle that only the cyclic collector frees (and never, once frozen)."""
    for key in moved:
        state = old.get(key)
        if state is not None and jobs.get(key) is not state:
            state.tasks = []


def _in_order(row: Mapping[str, object], rank: Mapping[str, int]) -> bool:
    """Whether a node row's pods are in snapshot order already (most rows that gained a pod: it came last)."""
    last = -1
    for uid in row:
        at = rank[uid]
        if at < last:
            return False
        last = at
    return True


def _last_first(kept: _Kept) -> int:
    """The rank of the first pod of the last podgroup key (the largest such rank: the keys are in that order)."""
    members = kept.members
    if not members:
        return -1
    return kept.rank[members[next(reversed(members))][0].uid]


def _renew_jobs(
    kept: _Kept, snap: Snapshot, dirty_jobs: set[str]
) -> tuple[dict[str, JobState], set[str], set[str], list[str] | None]:
    """The podgroups' states in snapshot order: a new ``JobState`` for a new or changed podgroup, the kept one
    otherwise; the keys to recount (new, changed, or with a member changed) and the podgroups gone. The pods of a
    podgroup that is gone become orphans. (None: the order of the new podgroups among the others is not known.)"""
    old_jobs = kept.jobs
    jobs: dict[str, JobState] = {}
    recount: set[str] = set()
    for key, pg in snap.podgroups.items():
        job = old_jobs.get(key)
        if job is None or job.info is not pg:
            job = JobState(pg, job)
            recount.add(key)
        elif key in dirty_jobs:
            job.tasks = []
            recount.add(key)
        jobs[key] = job
    gone: set[str] = set()
    if len(jobs) != len(old_jobs) or recount:
        gone = old_jobs.keys() - jobs.keys()
        _orphans(kept, gone)
    return jobs, recount, gone, None


def _renew_noted(
    kept: _Kept, snap: Snapshot, dirty_jobs: set[str], hint: set[str]
) -> tuple[dict[str, JobState], set[str], set[str], list[str]] | None:
    """``_renew_jobs`` looking only at the podgroups of ``hint`` (the caller's notes: every other key is the same
    object in the same relative order) and those with a changed pod, with the new podgroups in snapshot order; None
    when the new ones are not the last of the snapshot (or the count shows the notes missed one): walk them all."""
    old_jobs, podgroups = kept.jobs, snap.podgroups
    if not isinstance(podgroups, dict):
        return None
    gone = {key for key in hint if key in old_jobs and key not in podgroups}
    new = {key for key in hint if key in podgroups and key not in old_jobs}
    if len(podgroups) != len(old_jobs) - len(gone) + len(new):
        return None
    tail = list(islice(reversed(podgroups), len(new)))
    if len(tail) != len(new) or not new.issuperset(tail):
        return None
    tail.reverse()
    jobs = old_jobs.copy()  # (the kept mapping stays as the last session opened with it)
    recount: set[str] = set()
    for key in gone:
        del jobs[key]
    for key in hint:
        pg = podgroups.get(key)
        if pg is not None and key not in new and jobs[key].info is not pg:
            jobs[key] = JobState(pg, jobs[key])  # (its place kept)
            recount.add(key)
    for key in tail:
        jobs[key] = JobState(podgroups[key])
        recount.add(key)
    for key in dirty_jobs:
        job = jobs.get(key)
        if job is not None and key not in recount:
            job.tasks = []
            recount.add(key)
    _orphans(kept, gone)
    return jobs, recount, gone, tail


def _orphans(kept: _Kept, gone: Collection[str]) -> None:
    """The kept pods of the podgroups gone have no podgroup state any more."""
    for key in gone:
        for task in kept.members.get(key, ()):
            task.pg = None


def _recount_jobs(
    kept: _Kept,
    jobs: dict[str, JobState],
    recount: set[str],
    dirty_jobs: set[str],
    written: set[str] | None,
    gone: set[str],
    appended: list[str] | None,
) -> None:
    """Count the podgroups in ``recount`` over their members again, with the functions of a full build, forget
    the member indexes of every dirty key, and reopen from its counters at open every podgroup recounted or whose
    state the last session may have changed (``written``; None: every podgroup). ``gone``: the podgroups gone;
    ``appended``: the new ones, the last in ``jobs`` in this order, the others in their kept order (None: not
    known, the usages are put in ``jobs``' order again)."""
    moves = kept.ns_moves
    for key in recount:
        _recount_job(kept, jobs[key], kept.jobs.get(key), key not in dirty_jobs)
    for key in dirty_jobs - recount:  # pods of a key without podgroup
        kept.by_podgroup.pop(key, None)
    if kept.unlisted is not None:
        kept.unlisted |= recount | dirty_jobs
    for key in gone:  # podgroups gone: out of their namespaces' sums and their queues' sums
        base = kept.jobs[key].base
        if base is not None:
            moves.append((kept.jobs[key].namespace, base[2], -1))
        if key in kept.usages:
            kept.usage_moves.append((kept.usages.pop(key), -1))
    if appended is None:
        kept.usages = {key: kept.usages[key] for key in jobs}  # snapshot order
    else:  # the kept ones in their order (a recounted one kept its place), the new ones last in snapshot order
        for key in appended:
            kept.usages[key] = kept.usages.pop(key)
    if written is None:
        for job in jobs.values():
            job.reopen()
        return
    for key in written | recount:
        state = jobs.get(key)
        if state is not None:
            state.reopen()


def _recount_job(kept: _Kept, job: JobState, old_job: JobState | None, same_members: bool) -> None:
    """Count ``job`` (new, or with its members changed) over its members, with the functions of a full build, and
    move the kept sums by the difference. ``same_members``: none of its pods changed since ``old_job`` (the kept
    state of the key) was counted, only the podgroup's own record (a phase, a condition's time): the counters and
    the member list are then ``old_job``'s at open, and its usage is kept when the podgroup's fields the usage reads
    are equal (``job_usage`` would give an equal one); what did not change moves no sum."""
    key = job.key
    job.settled = None  # its status is computed again (``Session.close``)
    ours = kept.members.get(key, [])
    for task in ours:
        task.pg = job
    old_base = old_job.base if old_job is not None else None
    if same_members and old_job is not None and old_base is not None:
        job.tasks = list(old_job.tasks)
        job.base = old_base  # (read only: ``reopen`` copies it)
    else:
        job.base = None
        job.counts = dict.fromkeys(job.counts, 0)
        job.pending_be = 0
        job.allocated = {}
        count_job(job, ours)
        job.base = (dict(job.counts), job.pending_be, dict(job.allocated))
    moves = kept.ns_moves
    if old_job is None or old_base is None:
        moves.append((job.namespace, job.base[2], 1))
    elif job.base is not old_base and (
        old_job.namespace != job.namespace or not _same_amounts(old_base[2], job.base[2])
    ):
        moves.append((old_job.namespace, old_base[2], -1))
        moves.append((job.namespace, job.base[2], 1))
    old = kept.usages.get(key)
    if old is not None and same_members and old_job is not None and _same_usage_fields(old_job.info, job.info):
        return  # (the member index stays: the same pods)
    usage = job_usage(job.info, [t.info for t in ours])
    if old is not None and _same_usage(old, usage):
        usage = old
    else:
        if old is not None:
            kept.usage_moves.append((old, -1))
        kept.usage_moves.append((usage, 1))
    kept.usages[key] = usage
    if not same_members:
        kept.by_podgroup.pop(key, None)


def _same_amounts(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> bool:
    """Equal amounts under the same names in the same order (the kept sums' shapes read the order), or both None."""
    if a is None or b is None:
        return a is b
    return list(raw(a).items()) == list(raw(b).items())


def _same_usage(a: JobUsage, b: JobUsage) -> bool:
    """Whether two usages of one podgroup are the same field for field, their amounts' name orders included (the
    kept queue and pair sums read them)."""
    return (
        a.queue == b.queue
        and a.namespace == b.namespace
        and a.name == b.name
        and a.phase == b.phase
        and a.min_member == b.min_member
        and a.allocated_tasks == b.allocated_tasks
        and a.pipelined_tasks == b.pipelined_tasks
        and _same_amounts(a.request, b.request)
        and _same_amounts(a.allocated, b.allocated)
        and _same_amounts(a.pipelined, b.pipelined)
        and (a.min_resources is b.min_resources or _same_amounts(a.min_resources, b.min_resources))
    )


def _same_usage_fields(a: PodGroupInfo, b: PodGroupInfo) -> bool:
    """Whether ``job_usage`` reads the same of two records of one podgroup (its queue, minimum, phase, minMember)."""
    return (
        a.queue == b.queue
        and (a.min_resources is b.min_resources or _same_amounts(a.min_resources, b.min_resources))
        and a.phase == b.phase
        and a.min_member == b.min_member
        and a.namespace == b.namespace
        and a.name == b.name
    )


def _regroup(
    lists: dict[str, list[TaskState]],
    dirty: set[str],
    tasks: Mapping[str, TaskState],
    added: list[TaskState],
    pos: dict[str, int],
    boundary: int | None,
) -> bool:
    """The dirty podgroups' member lists without the pods that left or changed, with the new ones, in snapshot
    order. Returns whether the keys' order (that of their first pods) may have moved: a kept key's first pod is
    another, or a new key's first pod does not come after the first pods of the keys before it (``boundary``: the
    largest first-pod rank before the update, None when the ranks were renumbered)."""
    firsts: dict[str, str] = {}
    for key in dirty:
        ours = lists.get(key)
        if ours is not None:
            firsts[key] = ours[0].uid
            lists[key] = [t for t in ours if tasks.get(t.uid) is t]
    grown: set[str] = set()
    new_keys: list[str] = []
    for task in added:
        ours = lists.get(task.job)
        if ours is None:
            ours = lists[task.job] = []
            new_keys.append(task.job)
        ours.append(task)
        grown.add(task.job)
    for key in grown:
        lists[key].sort(key=lambda t: pos[t.uid])
    for key in dirty:
        if not lists.get(key, True):
            del lists[key]
    if boundary is None:
        return True
    for key, uid in firsts.items():
        ours = lists.get(key)
        if ours and ours[0].uid != uid:
            return True
    last = boundary
    for key in new_keys:
        at = pos[lists[key][0].uid]
        if at <= last:
            return True
        last = at
    return False
