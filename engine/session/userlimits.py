"""The one computation of per-user limits (``engine.userlimits``): what each user and group runs and uses in each
limited queue and quota group, and whether a job may be admitted or a pod placed without taking its user or one of
its user's groups over a limit of its queue, its quota group, or any of their ancestors.

``UserLimitBook`` is kept current by the session (``Framework``: ``job_enqueued`` at admission, ``release_reservation``
when an admission is undone, ``on_allocate`` / ``on_deallocate`` for every pod placed or taken back, statements
discarded included), and asked by ``enqueue`` (``admission``) and by the ``allocatable`` gate every action uses
(``allocatable``). The pages build one from a snapshot (``UserLimitBook.of_snapshot``) to show each user's use
against the limits: the same counting. A snapshot without any limit has no book (``open`` returns None), so a session
without limits does exactly what it did before.

What counts, per limited node and per subject (the job's user, each of its user's groups):

* **running jobs**: the jobs admitted (Inqueue, Running, Unknown) or holding a placed pod, in the node's subtree;
* **resources**: what the placed pods (allocated, pipelined, binding, bound, running) of those jobs request in the
  node's subtree, plus the ``minResources`` of each admitted job with nothing placed yet (its reservation).

Amounts are exact integers (base units).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.objects import QueueSpec, QuotaGroupSpec, Snapshot
from engine.session.reasons import GateRefusal
from engine.userlimits import EVERYONE, UserLimit, job_refusal_text, resource_refusal_text
from engine.vocabulary import ALLOCATED_STATUSES, BlockerKind, PodGroupPhase, TaskStatus

__all__ = ["LimitRefusal", "NodeRef", "UsageRow", "UserLimitBook"]

Tree = Literal["queue", "quota"]
NodeRef = tuple[Tree, str]
_HOLDING = frozenset({*ALLOCATED_STATUSES, TaskStatus.PIPELINED})
_NOT_ADMITTED = frozenset({"", PodGroupPhase.PENDING, PodGroupPhase.COMPLETED})
_TREE_WORDS = {"queue": "queue", "quota": "quota group"}


@dataclass(frozen=True, slots=True)
class LimitRefusal(GateRefusal):
    """A refusal by a user limit: its message is the whole sentence people read (``user alice runs 3 of at most 3
    jobs in queue nlp``); the blocker keeps the node, the resource and the numbers."""

    def __str__(self) -> str:
        return self.message


@dataclass(slots=True)
class _Use:
    jobs: set[str] = field(default_factory=set)
    held: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One limit of a node with what its subject runs and uses there now (one row per user or group a wildcard
    binds; a named subject that runs nothing has a row with zeros)."""

    limit: UserLimit
    subject: str  # the user or group the row counts (a wildcard's row names the one it binds)
    jobs: int
    used: Mapping[str, int]  # held + reserved, per resource the limit names


@dataclass(frozen=True, slots=True)
class _Job:
    key: str
    queue: str
    user: str
    groups: tuple[str, ...]
    min_resources: Mapping[str, int] | None


def _chains(specs: Mapping[str, QueueSpec] | Mapping[str, QuotaGroupSpec]) -> dict[str, tuple[str, ...]]:
    """Per node, the limited nodes from itself up to its root (a loop or a missing parent ends the walk)."""
    out: dict[str, tuple[str, ...]] = {}
    for name in specs:
        chain: list[str] = []
        seen: set[str] = set()
        at: str | None = name
        while at is not None and at in specs and at not in seen:
            seen.add(at)
            if specs[at].user_limits:
                chain.append(at)
            at = specs[at].parent
        out[name] = tuple(chain)
    return out


class _NodeLimits:
    __slots__ = ("groups", "users")

    def __init__(self, limits: Iterable[UserLimit]) -> None:
        self.users: dict[str, UserLimit] = {}
        self.groups: dict[str, UserLimit] = {}
        for limit in limits:
            (self.users if limit.kind == "user" else self.groups).setdefault(limit.name, limit)

    def subjects(self, user: str, groups: Sequence[str]) -> list[tuple[UserLimit, str]]:
        """The limits that bind ``user`` here, each with the user or group it counts: the user's own limit, else
        each user's; each of its groups' own limit, else each group's."""
        out: list[tuple[UserLimit, str]] = []
        limit = self.users.get(user) or self.users.get(EVERYONE)
        if limit is not None:
            out.append((limit, user))
        for group in groups:
            limit = self.groups.get(group) or self.groups.get(EVERYONE)
            if limit is not None:
                out.append((limit, group))
        return out


class UserLimitBook:
    """See the module docstring."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._limits: dict[NodeRef, _NodeLimits] = {}
        for tree, specs in (("queue", snapshot.queues), ("quota", snapshot.quota_groups)):
            for name, spec in specs.items():
                if spec.user_limits:
                    self._limits[(tree, name)] = _NodeLimits(spec.user_limits)  # type: ignore[index]
        self._queue_chain = _chains(snapshot.queues)
        self._quota_chain = _chains(snapshot.quota_groups)
        self._uses: dict[tuple[NodeRef, str, str], _Use] = {}
        self._jobs: dict[str, _Job] = {}
        self._job_nodes: dict[str, set[NodeRef]] = {}
        self._admitted: set[str] = set()
        self._held: dict[str, int] = {}

    @classmethod
    def open(cls, snapshot: Snapshot) -> UserLimitBook | None:
        """A book for ``snapshot``, or None when no queue or quota group has a user limit."""
        if not any(s.user_limits for s in snapshot.queues.values()) and not any(
            g.user_limits for g in snapshot.quota_groups.values()
        ):
            return None
        return cls(snapshot)

    @classmethod
    def of_snapshot(cls, snapshot: Snapshot) -> UserLimitBook:
        """The book of what ``snapshot``'s jobs run and use now (the pages' view; a session keeps its own)."""
        book = cls(snapshot)
        quota_of = snapshot.task_quota_groups
        for key, pg in snapshot.podgroups.items():
            tasks = snapshot.podgroup_tasks(key)
            book.add_job(
                key,
                pg.queue,
                pg.user or pg.namespace,
                pg.user_groups,
                None if pg.min_resources is None else pg.min_resources.raw,
                admitted=pg.phase not in _NOT_ADMITTED and not pg.suspended,
                tasks=[(quota_of[t.uid], t.request.raw, t.status in _HOLDING) for t in tasks],
            )
        return book

    # -- building ------------------------------------------------------------------------------------------------
    def add_job(
        self,
        key: str,
        queue: str,
        user: str,
        groups: Sequence[str],
        min_resources: Mapping[str, int] | None,
        *,
        admitted: bool,
        tasks: Iterable[tuple[str, Mapping[str, int], bool]],
    ) -> None:
        """Count a job as the session opens: its queue, user and groups, its minimum, whether it is admitted, and
        its pods as (quota group, request, holding)."""
        job = _Job(key, queue, user, tuple(groups), min_resources)
        nodes = {("queue", n) for n in self._queue_chain.get(queue, ())}
        task_list = list(tasks)
        for group, _req, _holding in task_list:
            nodes.update(("quota", n) for n in self._quota_chain.get(group, ()))
        if not nodes:
            return  # under no limit: nothing to count
        self._jobs[key] = job
        self._job_nodes[key] = nodes  # type: ignore[assignment]
        if admitted:
            self._set(job, admitted=True)
        for group, req, holding in task_list:
            if holding:
                self._place(job, group, req, 1)

    def open_session(self, jobs: Iterable[Any]) -> None:
        """Count the session's jobs (``JobState``) as it opens."""
        for job in jobs:
            info = job.info
            self.add_job(
                job.key,
                job.queue,
                info.user or job.namespace,
                info.user_groups,
                job.min_resources,
                admitted=job.phase not in _NOT_ADMITTED,
                tasks=[(t.quota_group, t.req, t.status in _HOLDING) for t in job.tasks],
            )

    # -- the session's events --------------------------------------------------------------------------------------
    def admitted(self, key: str) -> None:
        job = self._jobs.get(key)
        if job is not None:
            self._set(job, admitted=True)

    def unadmitted(self, key: str) -> None:
        job = self._jobs.get(key)
        if job is not None:
            self._set(job, admitted=False)

    def placed(self, key: str, quota_group: str, request: Mapping[str, int], sign: int) -> None:
        """A pod of job ``key`` in ``quota_group`` placed (``sign`` 1) or taken back (-1)."""
        job = self._jobs.get(key)
        if job is not None:
            self._place(job, quota_group, request, sign)

    def _task_nodes(self, job: _Job, quota_group: str) -> list[NodeRef]:
        out: list[NodeRef] = [("queue", n) for n in self._queue_chain.get(job.queue, ())]
        out.extend(("quota", n) for n in self._quota_chain.get(quota_group, ()))
        return out

    def _keys(self, job: _Job, nodes: Iterable[NodeRef]) -> list[tuple[NodeRef, UserLimit, str]]:
        out = []
        for node in nodes:
            for limit, subject in self._limits[node].subjects(job.user, job.groups):
                out.append((node, limit, subject))
        return out

    def _use(self, node: NodeRef, limit: UserLimit, subject: str) -> _Use:
        k = (node, limit.kind, subject)
        use = self._uses.get(k)
        if use is None:
            use = self._uses[k] = _Use()
        return use

    def _state(self, job: _Job) -> tuple[bool, bool]:
        """(running, reserving) of a job."""
        held = self._held.get(job.key, 0) > 0
        admitted = job.key in self._admitted
        return admitted or held, admitted and not held and job.min_resources is not None

    def _apply(self, job: _Job, before: tuple[bool, bool]) -> None:
        after = self._state(job)
        if after == before:
            return
        for node, limit, subject in self._keys(job, self._job_nodes[job.key]):
            use = self._use(node, limit, subject)
            if before[0] != after[0]:
                (use.jobs.add if after[0] else use.jobs.discard)(job.key)
            if before[1] != after[1] and job.min_resources:
                sign = 1 if after[1] else -1
                for r, a in job.min_resources.items():
                    use.reserved[r] = use.reserved.get(r, 0) + sign * a

    def _set(self, job: _Job, *, admitted: bool) -> None:
        before = self._state(job)
        (self._admitted.add if admitted else self._admitted.discard)(job.key)
        self._apply(job, before)

    def _place(self, job: _Job, quota_group: str, request: Mapping[str, int], sign: int) -> None:
        before = self._state(job)
        self._held[job.key] = self._held.get(job.key, 0) + sign
        self._apply(job, before)
        for node, limit, subject in self._keys(job, self._task_nodes(job, quota_group)):
            held = self._use(node, limit, subject).held
            for r, a in request.items():
                held[r] = held.get(r, 0) + sign * a

    # -- the questions --------------------------------------------------------------------------------------------
    def admission(self, key: str, queue: str) -> LimitRefusal | None:
        """May job ``key`` be admitted (become running) with its ``minResources``? None when it may."""
        job = self._jobs.get(key)
        if job is None:
            return None
        running, reserving = self._state(job)
        want = job.min_resources or {}
        for node, limit, subject in self._keys(job, sorted(self._job_nodes[key])):
            use = self._use(node, limit, subject)
            if not running and limit.max_jobs is not None and len(use.jobs) >= limit.max_jobs:
                return self._jobs_refusal(node, queue, limit, subject, len(use.jobs))
            for r, a in sorted(want.items()):
                most = limit.max_resources.get(r) if r in limit.max_resources else None
                if most is None or a <= 0:
                    continue
                mine = a if reserving else 0
                total = use.held.get(r, 0) + use.reserved.get(r, 0) - mine + a
                if total > most:
                    return self._resource_refusal(node, queue, limit, subject, r, a, total, use, mine)
        return None

    def allocatable(self, key: str, queue: str, quota_group: str, request: Mapping[str, int]) -> LimitRefusal | None:
        """May a pod of job ``key`` requesting ``request`` be placed in ``quota_group``? None when it may."""
        job = self._jobs.get(key)
        if job is None:
            return None
        running, reserving = self._state(job)
        own = job.min_resources or {}
        for node, limit, subject in self._keys(job, self._task_nodes(job, quota_group)):
            use = self._use(node, limit, subject)
            if not running and limit.max_jobs is not None and len(use.jobs) >= limit.max_jobs:
                return self._jobs_refusal(node, queue, limit, subject, len(use.jobs))
            for r, a in request.items():
                most = limit.max_resources.get(r) if r in limit.max_resources else None
                if most is None or a <= 0:
                    continue
                mine = own.get(r, 0) if reserving else 0
                total = use.held.get(r, 0) + use.reserved.get(r, 0) - mine + a
                if total > most:
                    return self._resource_refusal(node, queue, limit, subject, r, a, total, use, mine)
        return None

    def _blocker_kind(self, node: NodeRef, queue: str) -> BlockerKind:
        if node[0] == "quota":
            return BlockerKind.QUOTA
        return BlockerKind.QUEUE if node[1] == queue else BlockerKind.ANCESTOR

    def _jobs_refusal(self, node: NodeRef, queue: str, limit: UserLimit, subject: str, running: int) -> LimitRefusal:
        where = f"{_TREE_WORDS[node[0]]} {node[1]}"
        return LimitRefusal(
            self._blocker_kind(node, queue),
            node[1],
            "userLimit",
            message=job_refusal_text(limit, subject, running, where),
        )

    def _resource_refusal(
        self,
        node: NodeRef,
        queue: str,
        limit: UserLimit,
        subject: str,
        r: str,
        want: int,
        total: int,
        use: _Use,
        mine: int,
    ) -> LimitRefusal:
        where = f"{_TREE_WORDS[node[0]]} {node[1]}"
        most = limit.max_resources[r]
        free = max(0, most - (use.held.get(r, 0) + use.reserved.get(r, 0) - mine))
        return LimitRefusal(
            self._blocker_kind(node, queue),
            node[1],
            "userLimit",
            r,
            want,
            free,
            message=resource_refusal_text(limit, subject, r, total, where),
        )

    # -- the pages ------------------------------------------------------------------------------------------------
    def rows(self, tree: Tree, name: str) -> list[UsageRow]:
        """The node's limits, in their order, each with what its subject runs and uses (a wildcard: one row per user
        or group it binds now, by name; none when it binds nobody yet)."""
        limits = self._limits.get((tree, name))
        if limits is None:
            return []
        out: list[UsageRow] = []
        node: NodeRef = (tree, name)
        for limit in [*limits.users.values(), *limits.groups.values()]:
            if limit.name != EVERYONE:
                use = self._uses.get((node, limit.kind, limit.name)) or _Use()
                out.append(self._row(limit, limit.name, use))
                continue
            named = limits.users if limit.kind == "user" else limits.groups
            for (n, kind, subject), use in sorted(self._uses.items()):
                if n == node and kind == limit.kind and subject not in named and (use.jobs or any(use.held.values())):
                    out.append(self._row(limit, subject, use))
        return out

    @staticmethod
    def _row(limit: UserLimit, subject: str, use: _Use) -> UsageRow:
        used = {r: use.held.get(r, 0) + use.reserved.get(r, 0) for r in limit.max_resources}
        return UsageRow(limit, subject, len(use.jobs), used)
