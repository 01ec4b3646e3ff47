"""The scheduling session: the snapshot turned into mutable state, the plugins, the actions, the decisions.

A session (Volcano ``framework/session.go``) opens on a ``Snapshot``:

* every podgroup becomes a ``JobState`` and every pod a ``TaskState`` (status, node, request as a plain dict of
  base units and as an int64 vector over the session's resource columns);
* every node becomes a row of ``NodeTable``'s int64 arrays: ``alloc``, ``idle`` (allocatable minus what its
  allocated and releasing pods hold), ``releasing`` and ``pipelined``; ``FutureIdle = idle + releasing -
  pipelined``, as in Volcano. When any node offers ``pods``, every pod needs one (the pod-count predicate);
* a caller running one cluster's sessions in a row passes a ``SessionCarry`` (``engine.session.carry``): the
  tasks, jobs, node table and pod aggregates are then the ones the last session opened with, brought up to date
  for the objects that changed, the same as building them here;
* the policy's plugins are built (``Framework``); the quota plugins compute the quota values once, here:
  queue values (proportion or capacity), namespace shares (seed 000) and elastic runtimes (seed 001);
* a pod the last session pipelined holds its request on the node it was pipelined to (``TaskInfo.nominated``,
  Kubernetes' nominated node) against every other job until its own job's turn in an action (``release_holds``):
  the room a preemption freed for it is not taken by a job that comes first in queue order meanwhile. Kubernetes
  lets a more important pod take a nominated pod's room; here no job does (measured on the demo: letting more
  important jobs in fragmented the GPU machines, and 8-GPU gangs found no machine with room in 4 of 5 one-hour
  soaks, against 1 of 5);
* the policy's actions then run in order; each changes the session only through a ``Statement``
  (allocate, pipeline, evict), whose commit turns operations into decisions;
* ``close()`` sets each podgroup's phase as Volcano's ``jobStatus`` does and gives every podgroup that is not
  Running a reason with numbers and a ``Blocker``.

Speed. The allocate loop asks "the best node for this task" tens of thousands of times. ``Placement`` keeps, per
request vector, an array of node scores with ``-inf`` for nodes whose idle cannot hold it, and per *task class*
(the same predicate signature and the same request vector) that array with ``-inf`` also for the nodes the
predicates rule out; nodes that changed since the request or the class was last used (an append-only change log)
are rescored once per request (one vectorised call, or one by one when few moved), so a placement costs an
``argmax`` plus the rescoring of the few nodes that moved. Predicate masks (node selector, node affinity, taints,
cordon) are computed once per signature. Ties between equally scored nodes go to the node whose name sorts first (Volcano
picks one at random).

Deliberate differences from Volcano are commented where they occur; the main ones: ties are broken by name,
never at random; a podgroup whose pods were bound in this session counts them as scheduled when its phase is
set (Volcano waits for the next session to see them Bound, but Fairway's decisions take effect at once); an
Inqueue podgroup whose reservation can no longer be met goes back to Pending (seed 003, see ``actions.enqueue``).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from engine.amounts import raw
from engine.fairshare.elastic import ElasticResult
from engine.fairshare.namespace import NamespaceQuota
from engine.fairshare.queues import JobUsage, QueueBook
from engine.objects import (
    ALLOCATED_STATUSES,
    NodeInfo,
    PodGroupInfo,
    PodGroupPhase,
    QuotaGroupSpec,
    Snapshot,
    TaskInfo,
    TaskStatus,
)
from engine.policy.policy import Policy
from engine.session.admission import drain
from engine.session.affinity import predicates_named, unmatched_clause
from engine.session.decisions import Binding, BindingSink, Eviction, PodGroupStatus, SessionResult, StatusChanges
from engine.session.framework import Framework
from engine.session.gangrepair import below_minimum, gang_release
from engine.session.reasons import GateRefusal, Reason, describe_job, qty, requeued_message, suspended_status
from engine.usage import advance
from engine.values import Aggregates, QuotaValues, compute_values, podgroup_usages, usage_now
from engine.vocabulary import BlockerKind

if TYPE_CHECKING:
    from engine.session.carry import SessionCarry

__all__ = ["PODS", "JobState", "NodeTable", "Placement", "Session", "TaskState", "rows_of", "same_spec"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
BOOL = npt.NDArray[np.bool_]
_Item = TypeVar("_Item", bound=np.generic)
_Made = TypeVar("_Made")

PODS = "pods"
ONE_POD = 1000  # resources.py keeps "pods" in milli-units

S = TaskStatus
# the statuses the per-pod paths read, as module names: an enum member looked up on its class costs several dict
# reads, and the gang counters are read after every placement
_BOUND, _BINDING, _RUNNING, _ALLOCATED, _SUCCEEDED, _PIPELINED, _PENDING = (
    S.BOUND,
    S.BINDING,
    S.RUNNING,
    S.ALLOCATED,
    S.SUCCEEDED,
    S.PIPELINED,
    S.PENDING,
)
_READY = (S.BOUND, S.BINDING, S.RUNNING, S.ALLOCATED, S.SUCCEEDED)
_ALLOC = (S.BOUND, S.BINDING, S.RUNNING, S.ALLOCATED)
_VALID = (*_ALLOC, S.SUCCEEDED, S.PIPELINED, S.PENDING)
_TERMINAL = frozenset({S.SUCCEEDED, S.FAILED})
_NO_COUNTS: dict[TaskStatus, int] = dict.fromkeys(TaskStatus, 0)  # copied: iterating the enum class costs more
# statuses whose resources count as "allocated" for the plugins (Volcano's AllocateFunc fires for Allocate and
# Pipeline; the snapshot's Bound/Binding/Running/Allocated are allocated at open)
_EVENT_ALLOCATED = frozenset({*ALLOCATED_STATUSES, S.PIPELINED})


def _pod_index_key(uid: str) -> tuple[str, int]:
    """Volcano orders a job's pods by the index after the last ``-`` of their name (``job-2`` before ``job-10``)."""
    head, sep, tail = uid.rpartition("-")
    if sep and tail.isdigit():
        return head, int(tail)
    return uid, -1


def add_into(acc: dict[str, int], amounts: Mapping[str, int], sign: int = 1) -> None:
    for name, amount in amounts.items():
        acc[name] = acc.get(name, 0) + sign * amount


# ------------------------------------------------------------------------------------------------------------
# Tasks and jobs
# ------------------------------------------------------------------------------------------------------------


class TaskState:
    """A pod inside a session. ``job`` is the podgroup key (str); ``pg`` the ``JobState`` (None: orphan pod)."""

    __slots__ = (
        "best_effort",
        "critical",
        "fallback_key",
        "info",
        "job",
        "name",
        "namespace",
        "node",
        "orig_node",
        "orig_status",
        "pg",
        "preemptable",
        "priority",
        "quota_group",
        "quota_preemptible",
        "req",
        "role",
        "sig",
        "start",
        "status",
        "uid",
        "vec",
        "vkey",
    )

    def __init__(self, info: TaskInfo, pg: JobState | None, vec: I64, node: int, quota_group: str) -> None:
        self.info = info
        self.uid = info.uid
        self.name = info.name
        self.namespace = info.namespace
        self.job = info.podgroup
        self.pg = pg
        self.req: dict[str, int] = {k: v for k, v in raw(info.request).items() if v}
        self.vec = vec
        self.vkey: tuple[int, ...] = tuple(vec.tolist())
        self.status: TaskStatus = info.status
        self.orig_status = info.status
        self.node = node  # row in NodeTable, -1 when none
        self.orig_node = node
        self.priority = info.priority
        self.best_effort = info.best_effort
        self.role = info.task_role
        self.preemptable = info.preemptable
        self.quota_group = quota_group
        self.quota_preemptible = info.quota_preemptible
        self.critical = info.priority_class in ("system-cluster-critical", "system-node-critical") or (
            info.namespace == "kube-system"
        )
        # what the predicates read of the pod: pods of the same signature share a node mask (``Placement``)
        self.sig: tuple[Any, ...] = (
            tuple(sorted(info.node_selector.items())),
            info.tolerations,
            info.node_affinity,
        )
        self.start = info.start_timestamp
        self.fallback_key: tuple[Any, ...] = (info.creation_timestamp or 0.0, *_pod_index_key(info.uid))

    def moved(self, info: TaskInfo, node: int, quota_group: str) -> TaskState:
        """A new state for ``info``, another info of this pod whose spec is this one's (``same_spec``: only its
        status, node and start time moved, as a binding or a completion moves them): what ``__init__`` derives from
        the spec (the request and its vector, the predicates' signature, the order key) is taken from this state,
        which stays as it is. No podgroup state yet, as ``__init__`` with ``pg`` None."""
        out = TaskState.__new__(TaskState)
        out.info = info
        out.uid, out.name, out.namespace, out.job = self.uid, self.name, self.namespace, self.job
        out.pg = None
        out.req, out.vec, out.vkey = self.req, self.vec, self.vkey
        out.status = out.orig_status = info.status
        out.node = out.orig_node = node
        out.priority, out.best_effort, out.role = self.priority, self.best_effort, self.role
        out.preemptable, out.quota_group = self.preemptable, quota_group
        out.quota_preemptible, out.critical = self.quota_preemptible, self.critical
        out.sig, out.start, out.fallback_key = self.sig, info.start_timestamp, self.fallback_key
        return out

    # the fairshare gates' TaskLike / JobTask protocols
    @property
    def queue(self) -> str:
        return self.pg.queue if self.pg is not None else ""

    @property
    def request(self) -> dict[str, int]:
        return self.req

    def __repr__(self) -> str:
        return f"TaskState({self.uid}, {self.status}, node={self.node})"


class JobState:
    """A podgroup inside a session: gang counters (kept current on every status change) and its reasons. ``like``:
    the last state of the same podgroup (a ``SessionCarry`` renewing it for a new record), whose minimums are taken
    as they are when the new record holds the same objects (they are read, never changed)."""

    __slots__ = (
        "allocate_refusal",
        "allocated",
        "backing_off",
        "base",
        "counts",
        "creation",
        "enqueue_refusal",
        "enqueued_now",
        "failed_roles",
        "fit_failure",
        "info",
        "key",
        "min_member",
        "min_resources",
        "min_task_member",
        "name",
        "namespace",
        "pending_be",
        "phase",
        "pipelined_kept",
        "placed_before_discard",
        "priority",
        "queue",
        "rollback_refusal",
        "settled",
        "skip_refusal",
        "task_min_total",
        "tasks",
        "usage",
    )

    def __init__(self, info: PodGroupInfo, like: JobState | None = None) -> None:
        self.info = info
        self.key = info.key
        self.name = info.name
        self.namespace = info.namespace
        self.queue = info.queue
        self.priority = info.priority
        self.min_member = info.min_member
        self.min_task_member: dict[str, int]
        self.task_min_total: int
        self.min_resources: dict[str, int] | None
        was = like.info if like is not None else None
        if like is not None and was is not None and was.min_task_member is info.min_task_member:
            self.min_task_member = like.min_task_member  # (read only, as the minimums below)
            self.task_min_total = like.task_min_total
        else:
            self.min_task_member = dict(info.min_task_member)
            self.task_min_total = sum(self.min_task_member.values())
        if like is not None and was is not None and was.min_resources is info.min_resources:
            self.min_resources = like.min_resources
        else:
            self.min_resources = None if info.min_resources is None else dict(raw(info.min_resources))
        self.creation = info.creation_timestamp
        self.tasks: list[TaskState] = []
        self.base: tuple[dict[TaskStatus, int], int, dict[str, int]] | None = None  # kept by a ``SessionCarry``
        self.counts: dict[TaskStatus, int] = _NO_COUNTS.copy()
        self.pending_be = 0
        self.allocated: dict[str, int] = {}  # event-based, as drf's job attribute
        # the status the last session closed it with, while nothing can change it (``Session.close``): kept across
        # sessions by a ``SessionCarry``, dropped when the podgroup or a pod of it changes
        self.settled: PodGroupStatus | None = None
        self.reopen()

    def reopen(self) -> None:
        """The state the job opens a session with: its aggregates at open (``base``, when a ``SessionCarry`` keeps
        the job between sessions) and every per-session field cleared."""
        if self.base is not None:
            counts, pending_be, allocated = self.base
            self.counts = dict(counts)
            self.pending_be = pending_be
            self.allocated = dict(allocated)
        # a suspended podgroup is Pending (it holds no reservation) whatever its row says: every action skips it
        self.phase: str = str(PodGroupPhase.PENDING if self.info.suspended else self.info.phase)
        self.usage: JobUsage | None = None
        self.enqueued_now = False
        self.enqueue_refusal: GateRefusal | None = None
        self.rollback_refusal: GateRefusal | None = None
        self.allocate_refusal: GateRefusal | None = None
        self.skip_refusal: GateRefusal | None = None
        self.fit_failure: GateRefusal | None = None
        self.failed_roles: set[str] = set()
        self.placed_before_discard = -1
        self.pipelined_kept = False
        self.backing_off = False

    # -- Volcano JobInfo counters ------------------------------------------------------------------------------
    def ready_num(self) -> int:
        c = self.counts
        return c[_BOUND] + c[_BINDING] + c[_RUNNING] + c[_ALLOCATED] + c[_SUCCEEDED]

    def waiting_num(self) -> int:
        return self.counts[_PIPELINED]

    def valid_num(self) -> int:
        c = self.counts  # _VALID, added inline: asked of every podgroup several times a session
        return c[_BOUND] + c[_BINDING] + c[_RUNNING] + c[_ALLOCATED] + c[_SUCCEEDED] + c[_PIPELINED] + c[_PENDING]

    def allocated_num(self) -> int:
        c = self.counts
        return c[_BOUND] + c[_BINDING] + c[_RUNNING] + c[_ALLOCATED]

    def is_ready(self) -> bool:
        return self.ready_num() + self.pending_be >= self.min_member

    def is_pipelined(self) -> bool:
        return self.waiting_num() + self.ready_num() + self.pending_be >= self.min_member

    def is_starving(self) -> bool:
        return self.waiting_num() + self.ready_num() < self.min_member

    def is_pending(self) -> bool:
        return self.phase in ("", PodGroupPhase.PENDING)

    # -- per role (minTaskMember) ----------------------------------------------------------------------------------
    def _role_counts(self, statuses: Iterable[TaskStatus], pending_best_effort: bool) -> dict[str, int]:
        wanted = frozenset(statuses)
        out: dict[str, int] = {}
        for t in self.tasks:
            if t.status in wanted or (pending_best_effort and t.status == S.PENDING and t.best_effort):
                out[t.role] = out.get(t.role, 0) + 1
        return out

    def _roles_meet(self, counts: Mapping[str, int]) -> bool:
        return all(counts.get(role, 0) >= n for role, n in self.min_task_member.items() if n)

    def check_task_valid(self) -> bool:
        if not self.min_task_member or self.min_member < self.task_min_total:
            return True
        return self._roles_meet(self._role_counts(_VALID, False))

    def check_task_ready(self) -> bool:
        if not self.min_task_member or self.min_member < self.task_min_total:
            return True
        return self._roles_meet(self._role_counts(_READY, True))

    def check_task_pipelined(self) -> bool:
        if not self.min_task_member or self.min_member < self.task_min_total:
            return True
        return self._roles_meet(self._role_counts((*_READY, S.PIPELINED), True))

    def need_continue_allocating(self) -> bool:
        """Volcano ``NeedContinueAllocating``: may allocation go on after a task of a failed role?"""
        if self.min_member == len(self.tasks):
            return False
        pending: dict[str, int] = {}
        for t in self.tasks:
            if t.status == S.PENDING:
                pending[t.role] = pending.get(t.role, 0) + 1
        if self.min_member < self.task_min_total:
            left = sum(n for role, n in pending.items() if role not in self.failed_roles)
            return self.ready_num() + left >= self.min_member
        allocated = self._role_counts(_READY, True)
        for role in self.failed_roles:
            need = self.min_task_member.get(role, 0)
            if need and allocated.get(role, 0) < need:
                return False
        return True

    def __repr__(self) -> str:
        return f"JobState({self.key}, {self.phase}, ready={self.ready_num()}/{self.min_member})"


# ------------------------------------------------------------------------------------------------------------
# Nodes
# ------------------------------------------------------------------------------------------------------------


class NodeTable:
    """Per-node state in int64 arrays (rows in node-name order, columns = ``resources``)."""

    def __init__(self, nodes: Iterable[NodeInfo], resources: tuple[str, ...]) -> None:
        self.infos: list[NodeInfo] = sorted(nodes, key=lambda n: n.name)
        self.names: list[str] = [n.name for n in self.infos]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.resources = resources
        self.col: dict[str, int] = {r: i for i, r in enumerate(resources)}
        n, r = len(self.infos), len(resources)
        self.alloc: I64 = np.zeros((n, r), dtype=np.int64)
        for i, node in enumerate(self.infos):
            for name, amount in raw(node.allocatable).items():
                if amount:
                    self.alloc[i, self.col[name]] = amount
        self.idle: I64 = self.alloc.copy()
        self.releasing: I64 = np.zeros((n, r), dtype=np.int64)
        self.pipelined: I64 = np.zeros((n, r), dtype=np.int64)
        # Running/Bound preemptable pods per node: an upper bound of what eviction can free (victim pre-filter)
        self.evictable: I64 = np.zeros((n, r), dtype=np.int64)
        self.ready: BOOL = np.array([node.ready for node in self.infos], dtype=np.bool_)
        self.tasks: list[dict[str, TaskState]] = [{} for _ in range(n)]
        self.log: list[int] = []  # rows changed, in order (Placement rescoring)
        self.future_ops = 0  # > 0 once any node has releasing or pipelined amounts
        self._labels: dict[str, npt.NDArray[np.object_]] = {}
        # the rows' classes of allocatable amounts (``_allocatable_classes``), made when first needed and shared with
        # the clones, like the label columns (a clone keeps ``alloc``; ``renew`` replaces both)
        self._classes: list[tuple[I64, list[int], list[list[int]]]] = []
        self._derived: dict[str, object] = {}  # ``derived``: shared with the clones, like the label columns
        self._shared: set[int] = set()  # rows whose task dict belongs to another table (``clone``)

    def __len__(self) -> int:
        return len(self.names)

    def clone(self) -> NodeTable:
        """A copy a session may change while this one stays as it is (the node infos and label columns shared)."""
        out = NodeTable.__new__(NodeTable)
        out.infos, out.names, out.index = self.infos, self.names, self.index
        out.resources, out.col, out.ready = self.resources, self.col, self.ready
        out.alloc = self.alloc
        out.idle, out.releasing = self.idle.copy(), self.releasing.copy()
        out.pipelined, out.evictable = self.pipelined.copy(), self.evictable.copy()
        out.tasks = list(self.tasks)  # each row's dict shared until the copy changes it (``own_row``)
        out._shared = set(range(len(out.tasks)))
        out.log = []
        out.future_ops = self.future_ops
        out._labels = self._labels
        out._classes = self._classes
        out._derived = self._derived
        return out

    def renew(self, nodes: Iterable[NodeInfo]) -> None:
        """Take these changed nodes (already rows of the table, same resource columns): allocatable, readiness,
        labels and taints replaced, idle moved by the allocatable's change (what the pods hold stays)."""
        self.infos = list(self.infos)
        self.alloc, self.idle, self.ready = self.alloc.copy(), self.idle.copy(), self.ready.copy()
        for node in nodes:
            row = self.index[node.name]
            self.infos[row] = node
            vec: I64 = np.zeros(len(self.resources), dtype=np.int64)
            for name, amount in raw(node.allocatable).items():
                if amount:
                    vec[self.col[name]] = amount
            self.idle[row] += vec - self.alloc[row]
            self.alloc[row] = vec
            self.ready[row] = node.ready
        self._labels = {}
        self._classes = []
        self._derived = {}

    def own_row(self, row: int) -> dict[str, TaskState]:
        """Row ``row``'s task dict, to change (copied first when still shared with the table this one cloned)."""
        if row in self._shared:
            self._shared.discard(row)
            self.tasks[row] = self.tasks[row].copy()
        return self.tasks[row]

    def _enter(self, task: TaskState, sign: int) -> tuple[int, ...]:
        """Count (``sign`` 1) or uncount (-1) ``task`` in its node row's pods and ``future_ops``; the arrays its
        request moves in (0 idle, taken away; 1 evictable, 2 releasing, 3 pipelined, added), none for a
        pod on no node or finished."""
        row, status = task.orig_node, task.orig_status
        if row < 0 or status in _TERMINAL:
            return ()
        if sign > 0:
            self.own_row(row)[task.uid] = task
        else:
            del self.own_row(row)[task.uid]
        if status in ALLOCATED_STATUSES:
            return (0, 1) if status in (S.RUNNING, S.BOUND) and task.preemptable else (0,)
        if status == S.RELEASING:
            self.future_ops += sign
            return (0, 2)
        if status == S.PIPELINED:
            self.future_ops += sign
            return (3,)
        return ()

    def place(self, task: TaskState, sign: int) -> None:
        """Count (``sign`` 1) or uncount (-1) what ``task`` holds on its node as the session opens with it."""
        into = self._enter(task, sign)
        if into:
            vec, row = (task.vec if sign > 0 else -task.vec), task.orig_node
            arrays = (self.idle, self.evictable, self.releasing, self.pipelined)
            for i in into:
                if i:
                    arrays[i][row] += vec
                else:
                    self.idle[row] -= vec

    def place_all(self, moves: Sequence[tuple[TaskState, int]]) -> None:
        """``place`` of each ``(task, sign)`` in turn, the rows' amounts moved at the end by one ``ufunc.at`` per
        array instead of a row at a time (exact integer sums, whatever their order; each row's task dict changes in
        the same order as by ``place``)."""
        rows: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])  # idle, evictable, releasing, pipe
        vecs: tuple[list[I64], list[I64], list[I64], list[I64]] = ([], [], [], [])
        for task, sign in moves:
            into = self._enter(task, sign)
            if into:
                vec = task.vec if sign > 0 else -task.vec
                for i in into:
                    rows[i].append(task.orig_node)
                    vecs[i].append(vec)
        arrays = (self.idle, self.evictable, self.releasing, self.pipelined)
        for i, array in enumerate(arrays):
            if rows[i]:
                (np.subtract if i == 0 else np.add).at(array, rows[i], np.array(vecs[i]))

    def future_idle(self, row: int) -> I64:
        out: I64 = self.idle[row] + self.releasing[row] - self.pipelined[row]
        return out

    def allocatable_classes(self) -> tuple[I64, list[int], list[list[int]]]:
        """``_allocatable_classes`` of ``alloc``, made once for this table and the clones that share its ``alloc``
        (the kept table of a ``SessionCarry`` and each session's clone of it)."""
        held = self._classes
        if not held or held[0][0] is not self.alloc:
            held[:] = [_allocatable_classes(self.alloc)]
        return held[0]

    def derived(self, key: str, make: Callable[[list[NodeInfo]], _Made]) -> _Made:
        """``make(infos)`` made once for this table's node infos and shared with its clones (the kept table of a
        ``SessionCarry`` and each session's copy) until ``renew`` changes a node: what a plugin derives from the nodes
        alone (never changed by its reader). ``key`` names it (one per ``make``)."""
        held = self._derived.get(key)
        if held is None:
            held = self._derived[key] = make(self.infos)
        return held  # type: ignore[return-value]

    def label_column(self, key: str) -> npt.NDArray[np.object_]:
        """The value of label ``key`` on every node (None where unset), cached."""
        column = self._labels.get(key)
        if column is None:
            column = np.array([node.labels.get(key) for node in self.infos], dtype=object)
            self._labels[key] = column
        return column


def rows_of(array: npt.NDArray[_Item], rows: Any) -> npt.NDArray[_Item]:
    """``array[rows]`` for a slice or an index array of rows (``take``: a fraction of fancy indexing's cost, paid for
    every batch of rows the best-node search rescores)."""
    return array[rows] if isinstance(rows, slice) else array.take(rows, axis=0)


def _allocatable_classes(alloc: I64) -> tuple[I64, list[int], list[list[int]]]:
    """``alloc``, each row's class of allocatable amounts (rows with the same amounts share one) and each class's
    amounts."""
    number: dict[tuple[int, ...], int] = {}
    amounts: list[list[int]] = []
    classes: list[int] = []
    for row in alloc.tolist():
        key = tuple(row)
        n = number.get(key)
        if n is None:
            n = number[key] = len(amounts)
            amounts.append(row)
        classes.append(n)
    return alloc, classes, amounts


_SCORED_MAX = 1 << 16  # node states a shape keeps the scalar score of


class _Shape:
    """A request vector's scores on every node, the predicates aside: the scorers' sum where the node's idle (and
    future idle) holds the request, -inf elsewhere; current up to position ``pos`` of the node change log. Shared by
    the task classes of that request (they differ by predicate signature only), so the nodes that changed are
    rescored once per request, not once per class."""

    __slots__ = ("cols", "need", "pos", "scored", "scores", "vec", "vec_cols", "vec_list")

    def __init__(self, vec: I64) -> None:
        self.vec = vec
        self.vec_list: list[int] = vec.tolist()
        self.cols: I64 = np.flatnonzero(vec > 0)
        self.vec_cols: I64 = vec[self.cols]
        self.need: list[tuple[int, int]] = [(int(c), int(vec[c])) for c in self.cols]
        self.scores: F64 = np.empty(0)
        self.pos = 0
        # (the row's allocatable class, its idle amounts) -> the scorers' sum (``Placement._compute_one``)
        self.scored: dict[tuple[int, ...], float] = {}


class _Entry:
    """A task class (predicate signature and request): its shape's scores with -inf on the nodes the predicates rule
    out (``static``), copied from the shape for the nodes that changed since position ``pos`` of the change log."""

    __slots__ = ("pos", "scores", "shape", "static", "usable")

    def __init__(self, shape: _Shape, static: BOOL, pos: int) -> None:
        self.shape = shape
        self.static = static
        self.usable: list[bool] = static.tolist()
        self.scores: F64 = np.where(static, shape.scores, -math.inf)
        self.pos = pos


class Placement:
    """Best-node search with per-request and per-class score arrays kept current from the node change log."""

    MAX_CLASSES = 512  # task classes kept, and as many request shapes (least recently used dropped first)

    def __init__(self, session: Session) -> None:
        self.session = session
        self.table = session.nodes
        self._static: dict[tuple[Any, ...], BOOL] = {}
        self._classes: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._shapes: OrderedDict[tuple[int, ...], _Shape] = OrderedDict()
        # (signature, request) -> (node table generation, refusal): ``failure`` again only after a node changed
        self._failures: dict[tuple[Any, ...], tuple[int, GateRefusal]] = {}
        fw = session.framework
        self._predicates = fw.hook_plugins("node_predicate")
        self._scorers = fw.hook_plugins("node_scores")
        scalar = fw.hook_plugins("node_score_one")
        # the scalar path is used only when every scorer provides it
        self._scalar = scalar if len(scalar) == len(self._scorers) else None
        # for the scalar path: the allocatable array it was made from, each row's allocatable class, and each class's
        # allocatable amounts (``_allocatable_classes``); made when first needed (a session never changes the
        # allocatable amounts: ``NodeTable.renew`` replaces the array between sessions)
        self._alloc_of: tuple[I64, list[int], list[list[int]]] | None = None

    # -- predicates -------------------------------------------------------------------------------------------
    def static_mask(self, sig: tuple[Any, ...]) -> BOOL:
        """Nodes a task with this (node selector, tolerations, node affinity) signature may use, resources aside."""
        mask = self._static.get(sig)
        if mask is None:
            # Volcano leaves not-ready nodes out of the session's node list
            mask = self.table.ready.copy()
            for p in self._predicates:
                mask &= p.node_predicate(self.table, sig)
            self._static[sig] = mask
        return mask

    # -- scores -------------------------------------------------------------------------------------------------
    def raw_scores(self, rows: Any, vec: I64) -> F64:
        """Sum of the node-order plugins' scores (Volcano adds them up); zeros without such plugins."""
        total: F64 | None = None
        for p in self._scorers:
            s = p.node_scores(self.table, rows, vec)
            if s is None:
                continue
            total = s if total is None else total + s
        if total is None:
            count = len(self.table) if isinstance(rows, slice) else len(rows)
            return np.zeros(count, dtype=np.float64)
        return total

    def _fits(self, s: _Shape, rows: Any) -> BOOL:
        t = self.table
        if s.cols.size == 0:
            return np.ones(len(t) if isinstance(rows, slice) else len(rows), dtype=np.bool_)
        idle = rows_of(t.idle, rows)[:, s.cols]
        fits: BOOL = np.all(idle >= s.vec_cols, axis=1)
        if t.future_ops:
            future = idle + (rows_of(t.releasing, rows)[:, s.cols] - rows_of(t.pipelined, rows)[:, s.cols])
            fits &= (future >= s.vec_cols).all(axis=1)
        return fits

    def _compute(self, s: _Shape, rows: Any) -> F64:
        """The shape's scores of ``rows`` (a slice or an index array), computed afresh."""
        fits = self._fits(s, rows)
        if not fits.any():
            return np.full(fits.shape[0], -math.inf)
        out: F64 = np.where(fits, self.raw_scores(rows, s.vec), -math.inf)
        return out

    def _compute_one(self, s: _Shape, row: int) -> float:
        """``_compute`` for one row with plain ints (used when only a few rows changed). A scalar score is a function
        of the node's allocatable and idle alone (``Plugin.node_score_one``), and nodes of one allocatable pass
        through the same idle amounts as pods of the same requests land on them, so each shape keeps its scores by
        (allocatable, idle): most are found there."""
        t = self.table
        idle = t.idle[row].tolist()
        for c, v in s.need:
            if idle[c] < v:
                return -math.inf
        if t.future_ops:
            rel = t.releasing[row].tolist()
            pip = t.pipelined[row].tolist()
            for c, v in s.need:
                if idle[c] + (rel[c] - pip[c]) < v:
                    return -math.inf
        if self._alloc_of is None or self._alloc_of[0] is not t.alloc:
            self._alloc_of = t.allocatable_classes()
        node_class = self._alloc_of[1][row]
        key = (node_class, *idle)
        total = s.scored.get(key)
        if total is None:
            if len(s.scored) >= _SCORED_MAX:  # a bound on the memory, for clusters whose nodes never repeat a state
                s.scored.clear()
            total = s.scored[key] = self._score_one(self._alloc_of[2][node_class], idle, s.vec_list)
        return total

    def _score_one(self, alloc: list[int], idle: list[int], vec: list[int]) -> float:
        assert self._scalar is not None
        total: float | None = None
        for p in self._scalar:
            s = p.node_score_one(alloc, idle, vec)
            if s is None:
                continue
            total = s if total is None else total + s
        return 0.0 if total is None else total

    def _refresh(self, s: _Shape) -> None:
        """Rescore the nodes that changed since the shape was last brought up to date."""
        log = self.table.log
        end = len(log)
        if s.pos == end:
            return
        if s.pos == end - 1 and self._scalar is not None:  # one change: the pod just placed, in a gang's turn
            row = log[s.pos]
            s.pos = end
            s.scores[row] = self._compute_one(s, row)
            return
        dirty = log[s.pos :]
        s.pos = end
        if len(dirty) > max(16, len(self.table) // 8):
            s.scores = self._compute(s, slice(None))
            return
        unique = set(dirty)
        # a row rescored alone costs about what a batch of up to ~16 rows costs vectorised when its score is not
        # kept yet, several times less when it is (``_compute_one``)
        if self._scalar is not None and len(unique) <= 16:
            scores = s.scores
            for row in unique:
                scores[row] = self._compute_one(s, row)
        else:
            rows = np.fromiter(unique, dtype=np.int64, count=len(unique))
            s.scores[rows] = self._compute(s, rows)

    def _shape(self, task: TaskState) -> _Shape:
        s = self._shapes.get(task.vkey)
        if s is None:
            s = self._shapes[task.vkey] = _Shape(task.vec)
            s.scores = self._compute(s, slice(None))
            s.pos = len(self.table.log)
            if len(self._shapes) > self.MAX_CLASSES:
                self._shapes.popitem(last=False)  # the classes of that request keep it while they live
            return s
        self._shapes.move_to_end(task.vkey)
        self._refresh(s)
        return s

    def _entry(self, task: TaskState) -> _Entry:
        key = (task.sig, task.vkey)
        e = self._classes.get(key)
        if e is None:
            e = _Entry(self._shape(task), self.static_mask(task.sig), len(self.table.log))
            self._classes[key] = e
            if len(self._classes) > self.MAX_CLASSES:
                self._classes.popitem(last=False)
            return e
        self._classes.move_to_end(key)
        s = e.shape
        self._refresh(s)
        log = self.table.log
        end = len(log)
        if e.pos < end:
            # the shape is current: take its scores of the nodes that changed, where the predicates allow (one by one
            # for a few: a copy of the whole array costs about what 32 rows one by one do)
            if end - e.pos > 32:
                e.scores = np.where(e.static, s.scores, -math.inf)
            else:
                scores, usable = e.scores, e.usable
                for row in log[e.pos : end]:
                    scores[row] = s.scores[row] if usable[row] else -math.inf
            e.pos = end
        return e

    def best(self, task: TaskState) -> tuple[int, bool] | None:
        """(row, pipelined) of the best node for ``task``: a node whose idle fits first (Volcano's first
        gradient); else a node whose future idle fits, to pipeline on; None when no node can take it."""
        e = self._entry(task)
        if e.scores.size:
            row = int(e.scores.argmax())
            if e.scores[row] > -math.inf:
                return row, False
        t = self.table
        s = e.shape
        if not t.future_ops or s.cols.size == 0:
            return None
        future = t.idle[:, s.cols] + t.releasing[:, s.cols] - t.pipelined[:, s.cols]
        fits = (future >= s.vec_cols).all(axis=1) & e.static
        if not fits.any():
            return None
        rows = np.flatnonzero(fits)
        scores = self.raw_scores(rows, s.vec)
        return int(rows[int(scores.argmax())]), True

    def candidates_by_score(self, task: TaskState, mask: BOOL) -> list[int]:
        """Rows of ``mask`` in descending score order (ties by name): Volcano's ``SortNodes`` for preempt."""
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        scores = self.raw_scores(rows, task.vec)
        order = np.lexsort((rows, -scores))
        out: list[int] = rows[order].tolist()
        return out

    # -- why not --------------------------------------------------------------------------------------------------
    def failure(self, task: TaskState) -> GateRefusal:
        """Why no node can take ``task``, with the numbers (the largest idle amount among usable nodes). The same
        for every task of the same class until a node changes (the table's change log grows), so it is kept."""
        key = (task.sig, task.vkey)
        generation = len(self.table.log)
        kept = self._failures.get(key)
        if kept is not None and kept[0] == generation:
            return kept[1]
        refusal = self._failure(task)
        self._failures[key] = (generation, refusal)
        return refusal

    def _failure(self, task: TaskState) -> GateRefusal:
        t = self.table
        static = self.static_mask(task.sig)
        usable = int(static.sum())
        if usable == 0:
            ready = int(t.ready.sum())
            return GateRefusal(
                BlockerKind.CLUSTER,
                "nodes",
                "predicates",
                message=f"no node passes the predicates ({predicates_named(task.info.node_affinity)}): 0 of {ready}"
                f" ready nodes{unmatched_clause(t, task.info.node_affinity)}",
            )
        cols = np.flatnonzero(task.vec > 0)
        if cols.size == 0:
            return GateRefusal(BlockerKind.CLUSTER, "nodes", "idle", message=f"no node fits ({usable} usable nodes)")
        future = t.idle[static][:, cols] + t.releasing[static][:, cols] - t.pipelined[static][:, cols]
        best = future.max(axis=0)
        for j, c in enumerate(cols.tolist()):
            if best[j] < task.vec[c]:
                name = t.resources[c]
                return GateRefusal(
                    BlockerKind.CLUSTER,
                    "nodes",
                    "idle",
                    name,
                    int(task.vec[c]),
                    max(0, int(best[j])),
                    message=f"the largest idle node of {usable} usable ones",
                )
        parts = " and ".join(qty(int(task.vec[c]), t.resources[c]) + " " + t.resources[c] for c in cols.tolist())
        first = int(cols[0])
        return GateRefusal(
            BlockerKind.CLUSTER,
            "nodes",
            "idle",
            t.resources[first],
            int(task.vec[first]),
            max(0, int(best[0])),
            message=f"no single node of {usable} usable ones has {parts} idle at once",
        )


# ------------------------------------------------------------------------------------------------------------
# Building the state a session opens with
# ------------------------------------------------------------------------------------------------------------


def table_columns(snapshot: Snapshot) -> tuple[tuple[str, ...], bool]:
    """The node table's resource columns and whether every pod needs a pod slot (some node offers ``pods``)."""
    resources = list(snapshot.resource_names)
    has_pods = any(PODS in raw(n.allocatable) for n in snapshot.nodes.values())
    if has_pods and PODS not in resources:
        resources.append(PODS)
        resources.sort()
    return tuple(resources), has_pods


def same_spec(a: TaskInfo, b: TaskInfo) -> bool:
    """Whether two infos of a pod differ at most in what a binding or a completion moves (status, node, start time,
    pipelined, nominated node, labels): every field ``TaskState`` derives its request, vector, signature, order key
    and flags from is equal (``TaskState.moved``)."""
    return (
        a.uid == b.uid
        and a.podgroup == b.podgroup
        and (a.request is b.request or a.request == b.request)
        and (a.node_selector is b.node_selector or a.node_selector == b.node_selector)
        and (a.tolerations is b.tolerations or a.tolerations == b.tolerations)
        and (a.node_affinity is b.node_affinity or a.node_affinity == b.node_affinity)
        and a.priority == b.priority
        and a.priority_class == b.priority_class
        and a.volcano_preemptable == b.volcano_preemptable
        and a.quota_preemptible == b.quota_preemptible
        and a.task_role == b.task_role
        and a.creation_timestamp == b.creation_timestamp
    )


def task_vector(info: TaskInfo, table: NodeTable, has_pods: bool) -> I64:
    """A pod's request over the table's columns (a row of ``Snapshot.request_matrix``, with the pod slot)."""
    vec: I64 = np.zeros(len(table.resources), dtype=np.int64)
    col = table.col
    for name, amount in raw(info.request).items():
        if amount:
            vec[col[name]] = amount
    if has_pods:
        vec[col[PODS]] = ONE_POD
    return vec


def count_job(job: JobState, members: Iterable[TaskState]) -> None:
    """A job's task list and counters from its tasks in snapshot order (as the session opens)."""
    tasks = job.tasks
    counts = job.counts
    for task in members:
        tasks.append(task)
        status = task.orig_status
        counts[status] += 1
        if status == S.PENDING and task.best_effort:
            job.pending_be += 1
        if status in _EVENT_ALLOCATED:
            add_into(job.allocated, task.req)
    tasks.sort(key=lambda t: t.fallback_key)


def build_state(snap: Snapshot, table: NodeTable, has_pods: bool) -> tuple[dict[str, TaskState], dict[str, JobState]]:
    """Every pod as a ``TaskState`` and every podgroup as a ``JobState`` (snapshot order), each pod counted on its
    node in ``table``."""
    jobs: dict[str, JobState] = {key: JobState(pg) for key, pg in snap.podgroups.items()}
    uids, matrix = snap.request_matrix()
    names = snap.resource_names
    if tuple(names) != table.resources:
        # add the pods column the matrix lacks
        vecs: I64 = np.zeros((len(uids), len(table.resources)), dtype=np.int64)
        for j, name in enumerate(names):
            vecs[:, table.col[name]] = matrix[:, j]
    else:
        vecs = matrix.copy()
    if has_pods:
        vecs[:, table.col[PODS]] = ONE_POD
    quota_of = snap.task_quota_groups
    tasks: dict[str, TaskState] = {}
    members: dict[str, list[TaskState]] = {}
    index = table.index
    for i, uid in enumerate(uids):
        info = snap.tasks[uid]
        pg = jobs.get(info.podgroup)
        row = index.get(info.node, -1) if info.node is not None else -1
        task = TaskState(info, pg, vecs[i], row, quota_of[uid])
        tasks[uid] = task
        if pg is not None:
            members.setdefault(pg.key, []).append(task)
        table.place(task, 1)
    for key, group in members.items():
        count_job(jobs[key], group)
    return tasks, jobs


# ------------------------------------------------------------------------------------------------------------
# The session
# ------------------------------------------------------------------------------------------------------------


def _no_checkpoint() -> None:
    return None


class Session:
    """One scheduling cycle on a snapshot (see the module docstring).

    ``checkpoint`` is called between actions and by every action before it turns to the next podgroup: a caller
    with a time budget passes a function that raises when the budget is spent (``engine.limits.Deadline.check``),
    and the session stops there; the engine itself never reads the clock for it."""

    def __init__(
        self,
        snapshot: Snapshot,
        policy: Policy,
        now: float,
        checkpoint: Callable[[], None] | None = None,
        carry: SessionCarry | None = None,
        on_bindings: BindingSink | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.policy = policy
        self.now = now
        self.checkpoint: Callable[[], None] = checkpoint or _no_checkpoint
        self.warnings: list[str] = list(policy.warnings)
        self.warnings.extend(snapshot.set_aside_nodes.values())  # left out of the total (one node's numbers)
        self.total: dict[str, int] = dict(raw(snapshot.total_allocatable))
        self.bindings: list[Binding] = []
        self._on_bindings = on_bindings
        self._sent = 0  # bindings handed to ``on_bindings`` so far
        self.evictions: list[Eviction] = []

        self.touched: list[TaskState] = []  # every task whose status changed in this session (with repeats)
        self._aggregates: Aggregates | None = None
        # namespace -> what its podgroups hold (event-based, as drf's namespace attribute)
        self.ns_allocated: dict[str, dict[str, int]]
        self._ns_own: set[str] | None  # the namespaces whose sums are the session's own copy (None: every one)
        self._carry = carry
        self._open_state(snapshot, carry)

        # quota values computed once, at open, by the one function pages, the what-if and simulate use
        self.values: QuotaValues = self._open_values()
        usages = podgroup_usages(self.values)
        for key, job in self.jobs.items():
            job.usage = usages[key]
        self.framework = Framework(policy, self)
        self.warnings.extend(self.framework.warnings)
        self.elastic: ElasticResult | None = self._elastic_at_open()
        self.queue_book: QueueBook | None = self.framework.queue_book()
        has_book = self.queue_book is not None
        self.queue_values_at_open: QueueBook | None = self.values.queues if has_book else None
        self.namespace_values: Mapping[tuple[str, str], NamespaceQuota] | None = (
            self.values.namespaces if has_book else None
        )
        self.holds: dict[str, list[tuple[TaskState, int]]] = {}  # per job, its pods holding their nominated rows
        self._context = self._settle_context()
        self._index_jobs(carry is not None and carry.settled_under == self._context)
        self.placement = Placement(self)
        # bumped whenever changes survive (a statement committed or merged): a failed eviction search that found
        # nothing at some epoch finds nothing again for an identical task until the epoch moves
        self.epoch = 0

    def _open_state(self, snapshot: Snapshot, carry: SessionCarry | None) -> None:
        """The nodes, pods and podgroups of the session and what each namespace's podgroups hold: the state the
        carry kept from the last session of this cluster, brought up to date (or built in full), else built here."""
        if carry is not None:
            opened = carry.open(snapshot, self.touched)
            self.nodes, self.tasks, self.jobs, self.has_pods, self._aggregates, self.ns_allocated = opened
            self._ns_own = set()
            return
        resources, self.has_pods = table_columns(snapshot)
        self.nodes = NodeTable(snapshot.nodes.values(), resources)
        self._build_state()
        self.ns_allocated = {}
        for job in self.jobs.values():
            if job.allocated:
                add_into(self.ns_allocated.setdefault(job.namespace, {}), job.allocated)
        self._ns_own = None

    @property
    def carry(self) -> SessionCarry | None:
        """The state kept from the last session of this cluster that this session opened on (None: built here)."""
        return self._carry

    # -- the podgroups to walk ------------------------------------------------------------------------------------
    def _index_jobs(self, reuse: bool) -> None:
        """The jobs per queue, the nominated pods' holds, and the podgroups the last session settled (``close``),
        unchanged since and under the same context (``reuse``): no action takes them (no pod waits) and their status
        is the one they were left with; the others in key order (``live_keys``). A ``SessionCarry`` keeps the first
        two and the podgroups left unsettled (``JobIndex``, ``SessionCarry.unsettled``): then none of this walks
        every podgroup."""
        carry = self._carry
        index = carry.index if carry is not None else None
        unsettled = carry.unsettled if carry is not None and reuse else None
        if index is None or unsettled is None:
            self._index_every_job(reuse)
            return
        self.jobs_by_queue: dict[str, list[JobState]] = dict(index.by_queue)  # (the lists are read, never changed)
        jobs = self.jobs
        for key in index.pending:
            self._hold_nominated(jobs[key])
        active = sorted(unsettled)
        self._active = active
        self._quiet: set[str] = jobs.keys() - active

    def _index_every_job(self, reuse: bool) -> None:
        """``_index_jobs`` over every podgroup."""
        self.jobs_by_queue = {}
        self._quiet = set()
        active: list[str] = []
        for key, job in self.jobs.items():
            self.jobs_by_queue.setdefault(job.queue, []).append(job)
            if job.counts[S.PENDING]:
                self._hold_nominated(job)
            if reuse and job.settled is not None:
                self._quiet.add(key)
            else:
                active.append(key)
        active.sort()
        self._active = active

    def _settle_context(self) -> tuple[Any, ...]:
        """What a settled status depends on beyond its podgroup: the policy, the queues there are and the stopped
        ones (``close``)."""
        levers = self.snapshot.admission
        return (self.policy, frozenset(self.snapshot.queues), levers.draining | levers.held)

    def live_keys(self) -> list[str]:
        """The keys, in order, of the podgroups an action's pass over every podgroup has to look at: all but the
        quiet ones (settled by the last session, unchanged since: no pod of theirs waits, the gang's checks pass,
        their status stays) whose pods this session has not touched. A pass that skips the others decides what a
        pass over every podgroup decides."""
        quiet = self._quiet
        if not quiet:
            return self._active
        woke = {t.job for t in self.touched if t.job in quiet}
        return sorted([*self._active, *woke]) if woke else self._active

    def _settles(self, job: JobState, status: PodGroupStatus, timeout: float) -> bool:
        """Whether ``close`` gives ``job`` this status again in every later session as long as neither the podgroup
        nor a pod of it changes and the context (``_settle_context``) stays: Running or Completed as its row already
        says, in an existing queue that is not stopped, not suspended, no pod waiting, the gang valid and not below
        its minimum (no release whatever the time). Called only for a job this session did not touch (its state at
        close is the one it opened with)."""
        levers = self.snapshot.admission
        counts = job.counts
        return (
            status.phase in (PodGroupPhase.RUNNING, PodGroupPhase.COMPLETED)
            and job.info.phase == status.phase
            and not job.info.suspended
            and job.queue in self.snapshot.queues
            and job.queue not in levers.draining
            and job.queue not in levers.held
            and not counts[S.PENDING]
            and not counts[_PIPELINED]
            and self.framework.job_valid(job) is None
            and not (timeout > 0 and below_minimum(job))
        )

    # -- building ---------------------------------------------------------------------------------------------
    def _hold_nominated(self, job: JobState) -> None:
        """Hold what ``job``'s nominated pending pods request on their nominated nodes, where the node is still
        there, ready, and its future idle still holds the pod (else the nomination is stale)."""
        table = self.nodes
        for task in job.tasks:
            name = task.info.nominated
            if name is None or task.status != S.PENDING:
                continue
            row = table.index.get(name, -1)
            if row < 0 or not table.ready[row] or (task.vec > table.future_idle(row)).any():
                continue
            table.pipelined[row] += task.vec
            table.future_ops += 1
            self.holds.setdefault(job.key, []).append((task, row))

    def release_holds(self, job: JobState) -> None:
        """``job``'s turn (or the end of its chances in this session): what its pods held is free for anyone."""
        held = self.holds.pop(job.key, None)
        if held:
            self._unhold(held)

    def _unhold(self, held: list[tuple[TaskState, int]]) -> None:
        table = self.nodes
        for task, row in held:
            table.pipelined[row] -= task.vec
            table.future_ops -= 1
            table.log.append(row)
        self.epoch += 1  # more room: a search that found nothing may now find some

    def _build_state(self) -> None:
        self.tasks, self.jobs = build_state(self.snapshot, self.nodes, self.has_pods)

    def _open_values(self) -> QuotaValues:
        """``compute_values`` of the snapshot under the session's policy (the elastic quota tree the carry kept
        brought up to date). A quota tree that is not a tree leaves the elastic values out (with a warning) rather
        than the session unopened."""
        self._quota_error: str | None = None
        try:
            carry = self._carry
            memo = carry.quotas if carry is not None else None  # the tree of the cluster's last computation
            return compute_values(self.snapshot, self.policy, aggregates=self._aggregates, quotas_memo=memo)
        except ValueError as exc:
            self._quota_error = f"elastic quota values not computed: {exc}"
            self.warnings.append(self._quota_error)
            snap = self.snapshot
            return compute_values(snap.without_quota_groups(list(snap.quota_groups)), self.policy)

    def quota_runtimes(self) -> ElasticResult | None:
        """The elastic quota values the session opened with (None when the quota tree could not be computed)."""
        return self.values.quotas if self._quota_error is None else None

    def _elastic_at_open(self) -> ElasticResult | None:
        """The quota runtimes the session reports: when the snapshot has quota groups of its own or a plugin reads
        them."""
        custom = [g for g in self.snapshot.quota_groups.values() if g.name not in ("root", "system", "default")]
        if not custom and not self.framework.uses_quota_runtimes:
            return None
        return self.quota_runtimes()

    def job_usage(self, job: JobState) -> JobUsage:
        """The podgroup as the fairshare computations saw it when the session opened (``engine.values``)."""
        assert job.usage is not None
        return job.usage

    def job_usages(self) -> list[JobUsage]:
        return [self.job_usage(j) for j in self.jobs.values()]

    def quota_spec(self, name: str) -> QuotaGroupSpec | None:
        return self.snapshot.quota_groups.get(name)

    # -- status changes (every one goes through here) ---------------------------------------------------------
    def _set_status(self, task: TaskState, status: TaskStatus) -> None:
        old = task.status
        task.status = status
        self.touched.append(task)
        job = task.pg
        if job is not None:
            job.counts[old] -= 1
            job.counts[status] += 1
            if task.best_effort:
                if old == S.PENDING:
                    job.pending_be -= 1
                if status == S.PENDING:
                    job.pending_be += 1

    def _event_allocate(self, task: TaskState) -> None:
        job = task.pg
        if job is not None:
            add_into(job.allocated, task.req)
            add_into(self._ns_sums(task.namespace), task.req)
        self.framework.on_allocate(task)

    def _event_deallocate(self, task: TaskState) -> None:
        job = task.pg
        if job is not None:
            add_into(job.allocated, task.req, -1)
            add_into(self._ns_sums(task.namespace), task.req, -1)
        self.framework.on_deallocate(task)

    def _ns_sums(self, namespace: str) -> dict[str, int]:
        """``namespace``'s entry of ``ns_allocated``, the session's own to change: the sums a ``SessionCarry`` keeps
        are copied on the first change (the carry's stay as they were at open)."""
        own = self._ns_own
        if own is None or namespace in own:
            return self.ns_allocated.setdefault(namespace, {})
        own.add(namespace)
        sums = self.ns_allocated[namespace] = dict(self.ns_allocated.get(namespace, {}))
        return sums

    def allocate_task(self, task: TaskState, row: int) -> None:
        """Volcano ``Statement.Allocate``: Allocated on ``row``, idle goes down, plugins told."""
        t = self.nodes
        self._set_status(task, _ALLOCATED)
        task.node = row
        t.idle[row] -= task.vec
        t.own_row(row)[task.uid] = task
        t.log.append(row)
        self._event_allocate(task)

    def unallocate_task(self, task: TaskState) -> None:
        t = self.nodes
        row = task.node
        self._set_status(task, S.PENDING)
        t.idle[row] += task.vec
        t.own_row(row).pop(task.uid, None)
        t.log.append(row)
        task.node = -1
        self._event_deallocate(task)

    def pipeline_task(self, task: TaskState, row: int) -> None:
        """Volcano ``Statement.Pipeline``: Pipelined on ``row`` (its future idle goes down)."""
        t = self.nodes
        self._set_status(task, _PIPELINED)
        task.node = row
        t.pipelined[row] += task.vec
        t.future_ops += 1
        t.own_row(row)[task.uid] = task
        t.log.append(row)
        self._event_allocate(task)

    def unpipeline_task(self, task: TaskState) -> None:
        t = self.nodes
        row = task.node
        self._set_status(task, S.PENDING)
        t.pipelined[row] -= task.vec
        t.future_ops -= 1
        t.own_row(row).pop(task.uid, None)
        t.log.append(row)
        task.node = -1
        self._event_deallocate(task)

    def evict_task(self, task: TaskState) -> TaskStatus:
        """Volcano ``Statement.Evict``: Releasing (its resources become the node's releasing amount)."""
        t = self.nodes
        row = task.node
        old = task.status
        self._set_status(task, S.RELEASING)
        t.releasing[row] += task.vec
        t.future_ops += 1
        if old in (S.RUNNING, S.BOUND) and task.preemptable:
            t.evictable[row] -= task.vec
        t.log.append(row)
        self._event_deallocate(task)
        return old

    def unevict_task(self, task: TaskState, status: TaskStatus) -> None:
        t = self.nodes
        row = task.node
        self._set_status(task, status)
        t.releasing[row] -= task.vec
        t.future_ops -= 1
        if status in (S.RUNNING, S.BOUND) and task.preemptable:
            t.evictable[row] += task.vec
        t.log.append(row)
        self._event_allocate(task)

    # -- decisions ----------------------------------------------------------------------------------------------
    def record_binding(self, task: TaskState, pipelined: bool) -> None:
        self.bindings.append(Binding(task.uid, self.nodes.names[task.node], pipelined))
        if not pipelined:
            self._set_status(task, _BINDING)

    def send_bindings(self) -> None:
        """Hand the bindings committed since the last call to the caller's ``on_bindings`` (``decisions.BindingSink``)."""
        if self._on_bindings is not None and self._sent < len(self.bindings):
            batch = self.bindings[self._sent :]
            self._sent = len(self.bindings)
            self._on_bindings(batch)

    def record_eviction(self, eviction: Eviction) -> None:
        self.evictions.append(eviction)

    # -- closing --------------------------------------------------------------------------------------------------
    def close(self) -> SessionResult:
        """Podgroup phases and reasons (Volcano ``jobStatus`` + gang ``OnSessionClose``), the release of gangs
        below their minimum for too long (``engine.session.gangrepair``), the requeue of admitted podgroups that
        could not be placed (``actions.enqueue``), then the result."""
        requeue = RequeueRule(self)
        statuses: dict[str, PodGroupStatus] = {}
        queues = self.snapshot.queues
        levers = self.snapshot.admission
        stopped = levers.draining | levers.held
        touched = {t.job for t in self.touched}
        quiet = self._quiet
        settle = self._carry is not None
        base = None
        if self._carry is not None:  # (a close that raises leaves no context: nothing is reused after it)
            self._carry.settled_under = None
            base, self._carry.statuses = self._carry.statuses, None
        timeout = requeue.args.gang_repair_timeout
        unsettled: list[str] = []  # for the carry: the podgroups this close leaves unsettled, by key
        computed: list[str] = []  # the podgroups whose status this close computes (the others: the last close's)
        for key in sorted(self.jobs):
            job = self.jobs[key]
            if job.settled is not None:
                if key in quiet and key not in touched:  # settled by the last session, nothing of it changed
                    statuses[key] = job.settled  # (the very object the last close gave: ``StatusChanges``)
                    continue
                job.settled = None
            unsettled.append(key)
            computed.append(key)
            if job.info.suspended:  # held by a person until resumed (a job action): neither released nor requeued
                statuses[key] = suspended_status(job)
                continue
            drained = drain(self, job) if stopped and job.queue in stopped else None
            if drained is not None:  # its Kueue queue is stopped (``engine.session.admission``)
                statuses[key] = drained
                continue
            released = gang_release(self, job, timeout) if job.queue in queues else None
            if released is not None:  # below its minimum for too long: let go whole (``engine.session.gangrepair``)
                statuses[key] = released
                continue
            unschedulable = self.framework.job_unschedulable(job)
            # a podgroup of a missing queue is not in Volcano's session at all: its phase is left as it was
            phase = podgroup_phase(job, unschedulable) if job.queue in queues else job.phase
            status = statuses[key] = requeue.status(job, phase)
            if settle and key not in touched and self._settles(job, status, timeout):
                job.settled = status
                unsettled.pop()
        self._hand_over(unsettled, statuses)
        trees = usage_now(self.snapshot, self.values, self.policy)  # fairness over time: empty when it is off
        return SessionResult(
            bindings=list(self.bindings),
            evictions=list(self.evictions),
            podgroups=statuses,
            queue_values=self.queue_values_at_open,
            namespace_values=self.namespace_values,
            quota_values=self.elastic,
            values_at_open=self.values if self._quota_error is None else None,
            warnings=list(dict.fromkeys(self.warnings)),
            usage_history=advance(self.snapshot.past_usage, trees, self.now) if trees else None,
            status_changes=None if base is None else StatusChanges(base, computed),
        )

    def _hand_over(self, unsettled: list[str], statuses: dict[str, PodGroupStatus]) -> None:
        """What the carry keeps of this close for the next session: the context of the settled podgroups, the ones
        left unsettled, this close's statuses, and those whose per-session state this session may have changed
        (the actions and the close leave the quiet ones untouched, but reclaim's and preempt's passes cover all)."""
        carry = self._carry
        if carry is None:
            return
        carry.settled_under = self._context
        carry.unsettled = unsettled
        carry.statuses = statuses
        carry_all = any(name in self.policy.actions for name in ("reclaim", "preempt"))
        carry.written = None if carry_all else set(self.live_keys())

    def release(self, *, keep_state: bool) -> None:
        """Let go of the session once its result is out. A session is a web of reference cycles (each pod's state
        points at its podgroup's and the podgroup's at its pods; the plugins at the session and the session at
        them), so without this its hundreds of thousands of objects outlive it until the cyclic collector walks
        them all (a quarter of a second after a 20,000-pod session). Here the cycles are cut and reference counting
        frees them at once. ``keep_state``: a carry keeps the pods' and podgroups' states for the next session of
        the cluster (``engine.session.carry``), so only the session's own references go. The session is unusable
        afterwards."""
        if not keep_state:
            for job in self.jobs.values():
                job.tasks = []
        self.__dict__.clear()


class RequeueRule:
    """Each podgroup's status at close, with Fairway's requeue rule (``actions.enqueue``): a podgroup that ends a
    session Inqueue with a reservation (``minResources``) and none of its pods placed in that session counts an
    unplaced session; after ``requeueAfterSessions`` of them in a row it goes back to Pending, gives its reservation
    back and waits a backoff before the next admission. Placing anything resets the count, and so does a session
    where its pods are awaited (``AdmissionLevers.pods_awaited``: its controller is making them); running resets the
    backoff."""

    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.args = ssn.policy.enqueue_args()
        self.on = "enqueue" in ssn.policy.actions and self.args.requeue_after_sessions > 0
        self.placed = {self.ssn.tasks[b.task].job for b in ssn.bindings if b.task in ssn.tasks}
        # admitted jobs whose pods are still being made (``AdmissionLevers.pods_awaited``): nothing to place yet
        self.placed.update(ssn.snapshot.admission.pods_awaited)

    def status(self, job: JobState, phase: str) -> PodGroupStatus:
        info = job.info
        unplaced, requeues, until = 0, info.requeues, info.backoff_until
        if phase == PodGroupPhase.RUNNING:
            return PodGroupStatus(job.key, phase)
        reason, message, blocker = describe_job(self.ssn, job, phase)
        if self.on and phase == PodGroupPhase.INQUEUE and job.min_resources is not None and job.key not in self.placed:
            unplaced = info.unplaced_sessions + 1
            if unplaced >= self.args.requeue_after_sessions:
                requeues += 1
                until = self.ssn.now + self.args.backoff(requeues)
                message = requeued_message(unplaced, until, message)
                return PodGroupStatus(
                    job.key, PodGroupPhase.PENDING, Reason.REQUEUED, message, blocker, 0, requeues, until
                )
        return PodGroupStatus(job.key, phase, reason, message, blocker, unplaced, requeues, until)


def podgroup_phase(job: JobState, unschedulable: bool) -> str:
    """Volcano ``getPodGroupPhase``. Tasks bound in this session (Binding) count as scheduled: Fairway's decisions
    take effect when the session's result is applied, while Volcano waits for the next session to see them Bound.

    Two deliberate differences: Failed pods never count as scheduled (Fairway keeps an evicted pod as Failed with
    reason Evicted, and its job controller queues a replacement, so a gang whose members were all evicted is
    waiting, not Completed), and a podgroup is Completed only when nothing of it is left to run (no pending or
    running member), so a replacement pod is never dropped with its podgroup. As in Volcano, a podgroup with
    ``minMember: 0`` and nothing scheduled is Completed (0 >= 0, all 0 finished)."""
    c = job.counts
    if c[S.RUNNING] and unschedulable:
        return PodGroupPhase.UNKNOWN
    scheduled = c[S.RUNNING] + c[S.BOUND] + c[S.BINDING] + c[S.SUCCEEDED]
    if c[S.RELEASING]:
        scheduled += sum(1 for t in job.tasks if t.status == S.RELEASING and t.node >= 0)
    if scheduled >= job.min_member:
        live = len(job.tasks) - c[S.SUCCEEDED] - c[S.FAILED]
        return PodGroupPhase.COMPLETED if live == 0 else PodGroupPhase.RUNNING
    if job.phase != PodGroupPhase.INQUEUE:
        return PodGroupPhase.PENDING
    return PodGroupPhase.INQUEUE
