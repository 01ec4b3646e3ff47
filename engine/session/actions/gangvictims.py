"""Reclaim and preempt victims chosen with gangs in mind (``wholeGangs: true`` in the action's ``configurations``).

Volcano chooses reclaim and preempt victims pod by pod: with the ``gang`` plugin only a job's pods above its
``minMember`` may go (so a gang that cannot spare a pod is never a victim, even when taking it whole would place the
preemptor), and without it (or with ``enablePreemptable: false``, as in the demo) a gang can lose a piece and keep
the rest, holding nodes for a job that cannot run. With ``wholeGangs: true`` on ``reclaim`` (resp. ``preempt``) the
victims on a node are chosen by the rule recycling uses (``engine.session.gangcover``), among the candidates the
action and the plugins allow (every filter stays: priorities, queues, ``reclaimable``, non-preemptible pods, the
minimum runtime, conformance, proportion / capacity / drf); only the ``gang`` plugin's victim rule is replaced by it:

1. **Spare pods first**: the candidates in victim order, each taken if its job can spare it (``GangBook``: the
   job keeps more than ``minMember`` ready pods and the pod's role more than its ``minTaskMember``; a pod without
   a podgroup always can), until the preemptor fits.
2. **Then whole gangs**, when the spare pods are not enough: the least-waste cover
   (``gangcover.least_waste_cover``: exact up to 12 candidates, else greedy by work lost per part of the need
   freed; then any gang the others cover without is put back) of what the node still lacks.
3. The spare pods are then taken again, in victim order, only until the preemptor fits with the gangs gone (the
   walk-back: a spare pod the gangs made unnecessary is kept). For ``preempt`` "fits" also means the queue's
   allocatable gates pass, as pod by pod.

The nodes whose future idle already holds the pod are tried first (then the action's order: reclaim's names,
preempt's scores), so what a whole gang freed elsewhere serves the job's next pods before anything more is evicted.
Which plugins still filter: the others, combined as Volcano combines them (tiers) with ``gang`` left out; keep the
victim filters in one tier (the demo's and the recommended policy do) so that proportion / capacity always apply.

**The need, per node.** A preemptor pod is placed on one node, so what counts toward it is what is freed *there*:
the need on node n is the pod's request minus n's future idle (idle + releasing - pipelined), per resource, the
positive parts, less what the spare pods of n free. A whole gang is a candidate on n when it has a candidate pod on
n and *every* pod it holds resources with (on every node; Bound/Binding/Running/Allocated/Pipelined) is one the
action and the plugins would take for this preemptor (a gang with a pod just placed or pipelined, protected by its
minimum runtime, in a non-reclaimable queue, ... is never taken, so never broken). Its ``freed`` is what its pods on
n free; its ``work`` (the cost) is the pod-seconds of all its pods wherever they run (each pod's whole seconds
running plus one; 0 for a gang already below its minimum: it runs nothing). Taking it evicts all its pods: those
elsewhere free their nodes for the preemptor job's next pods or anyone, but never count toward the need on n. No
cover: the node is passed over (nothing is evicted there). A node that ends up unused keeps its pods; the job's
statement is committed only when the job is pipelined (its gang minimum met), so evictions never outlive their
beneficiary.

*Worked example* (``tests/unit/test_gang_victims_actions.py``): node n1 has 10 GPUs, all used: ``c`` (2 pods x 1 GPU,
minMember 1, running 5 s: one pod spare, 6 pod-seconds for the other), ``a`` (2 pods x 2 GPUs, minMember 2, running 100 s: 202 pod-seconds) and two pods of ``b``
(4 pods x 2 GPUs, minMember 4, running 10 s: 44 pod-seconds), whose other two pods run on n2. A preemptor pod that
may run on n1 only asks 4 GPUs. Need on n1: 4. Spare pods: one of c's (1 GPU); need 3. Whole jobs: c frees 1 for 6,
a 4 on n1 for 202, b 4 on n1 (and 4 on n2) for 44: the cover is {b} (c cannot cover 3 alone; {b, c} loses more
work). Walking back, the preemptor fits on b's 4 GPUs alone, so c's pods are kept.
Evicted: all four pods of b (two on n2); a and c run on; n2 has 4 GPUs free. Pod by pod, Volcano's ``gang`` plugin
lets only c's spare pod go (1 GPU: the pod is not placed); without it, c's pods and one pod of a or b go, and that
gang keeps its other pods holding GPUs that run nothing.

Every job counts with its ``minMember`` here, as Volcano's ``gang`` plugin counts it (recycling, after Koordinator,
treats a podgroup of ``minMember`` 1 as no gang): a job of one pod keeps it unless the job is taken whole, as any
gang. Work lost is counted at the session's ``now``; it orders the covers, never whether one exists, so a reused
result (``engine.session.clock``) stays right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.objects import ALLOCATED_STATUSES, TaskStatus
from engine.session.actions.common import fits
from engine.session.gangcover import Gang, GangBook, Unit, least_waste_cover, pod_work
from engine.session.session import JobState, Session, TaskState
from engine.vocabulary import READY_STATUSES

__all__ = ["GANG_RULE", "GangVictims", "NodePlan", "free_first", "gang_met", "whole_gang_words"]

I64 = npt.NDArray[np.int64]

# the plugin whose victim rule this one replaces (left out of the plugins' victim choice when it applies)
GANG_RULE = frozenset({"gang"})
_HOLDING = frozenset({*ALLOCATED_STATUSES, TaskStatus.PIPELINED})


def _gang(job: JobState) -> Gang:
    roles: dict[str, int] = {}
    ready = 0
    for t in job.tasks:
        if t.status in READY_STATUSES:
            ready += 1
            roles[t.role] = roles.get(t.role, 0) + 1
    return Gang(ready, job.min_member, roles, {r: n for r, n in job.min_task_member.items() if n})


@dataclass(frozen=True, slots=True)
class NodePlan:
    """The victims of one node: ``gangs`` taken whole (each with every pod it holds resources with, on any node),
    then ``spare`` pods in victim order, evicted only until the preemptor fits."""

    gangs: tuple[tuple[TaskState, ...], ...]
    spare: tuple[TaskState, ...]


def _covers(need: dict[str, int], units: Sequence[Unit]) -> bool:
    return all(sum(u.freed.get(r, 0) for u in units) >= n for r, n in need.items())


def _walk_back(need: dict[str, int], cover: list[Unit]) -> list[Unit]:
    """Put back, the most important (then the most work) first, every gang the others cover the need without."""
    kept = list(cover)
    for unit in sorted(cover, key=lambda u: (-u.priority, -u.work, u.key)):
        rest = [u for u in kept if u is not unit]
        if rest and _covers(need, rest):
            kept = rest
    return kept


class GangVictims:
    """The gang-aware victim choice for one preemptor pod, node by node (see the module doc). ``statuses``: the
    action's victim statuses; ``holds``: the action's own test of a victim for this preemptor (queue, status,
    preemptable, minimum runtime, ...); ``accept``: the plugins' choice among pods (``reclaimable`` /
    ``preemptable`` without the ``gang`` plugin). The session's state must be the same at every ``plan`` (each
    node's trial is discarded before the next)."""

    __slots__ = ("_gangs", "accept", "holds", "sort", "ssn", "statuses", "task")

    def __init__(
        self,
        ssn: Session,
        task: TaskState,
        statuses: frozenset[TaskStatus],
        holds: Callable[[TaskState], bool],
        accept: Callable[[Sequence[TaskState]], list[TaskState]],
        sort: Callable[[Sequence[TaskState]], list[TaskState]],
    ) -> None:
        self.ssn = ssn
        self.task = task
        self.statuses = statuses
        self.holds = holds
        self.accept = accept
        self.sort = sort
        self._gangs: dict[str, Gang] = {}

    def _book(self, victims: Sequence[TaskState]) -> GangBook:
        """Every job of ``victims`` with its minimum (Volcano's ``gang`` plugin keeps any job's ``minMember``
        pods, a job of one pod included: here too, unless the job goes whole)."""
        gangs = self._gangs
        for v in victims:
            job = v.pg
            if job is not None and job.key not in gangs:
                gangs[job.key] = _gang(job)
        return GangBook({v.job: gangs[v.job] for v in victims if v.job in gangs})

    def _whole(self, job: JobState) -> list[TaskState] | None:
        """Every pod ``job`` holds resources with, if the action would take each of them; else None."""
        pods = [t for t in job.tasks if t.node >= 0 and t.status in _HOLDING]
        if all(t.status in self.statuses and self.holds(t) for t in pods):
            return pods
        return None

    def plan(self, row: int, victims: Sequence[TaskState]) -> NodePlan | None:
        """The victims on node ``row`` among ``victims`` (the plugins' choice there, in victim order); None when no
        set of them that leaves every gang whole or gone makes room."""
        task = self.task
        avail: I64 = self.ssn.nodes.future_idle(row)
        book = self._book(victims)
        spare: list[TaskState] = []
        for v in victims:
            if book.can_spare(v.job, v.role):
                spare.append(v)
                book.move(((v.job, v.role),), -1)
                avail = avail + v.vec
        if fits(task, avail):
            return NodePlan((), tuple(spare))
        resources = self.ssn.nodes.resources
        short = np.flatnonzero((task.vec > 0) & (task.vec > avail)).tolist()
        need = {resources[c]: int(task.vec[c] - avail[c]) for c in short}
        units, members = self._units(row, victims, book, need, {id(t) for t in spare})
        return self._choose(need, units, members, spare)

    def _units(
        self, row: int, victims: Sequence[TaskState], book: GangBook, need: dict[str, int], taken: set[int]
    ) -> tuple[dict[str, Unit], dict[str, list[TaskState]]]:
        """The gangs of ``victims`` that could go whole, what their pods on ``row`` (but those ``taken``) free of the
        needed resources, the work all their pods lose; and their pods."""
        col = self.ssn.nodes.col
        units: dict[str, Unit] = {}
        members: dict[str, list[TaskState]] = {}
        for v in victims:
            job = v.pg
            if job is None or job.key in units or job.key not in book.gangs:
                continue
            pods = self._whole(job)
            if pods is None:
                continue
            here = [t for t in pods if t.node == row and id(t) not in taken]
            freed = {r: sum(int(t.vec[col[r]]) for t in here) for r in need}
            if not any(freed.values()):
                continue
            work = sum(pod_work(t.start, self.ssn.now) for t in pods) if book.intact(job.key) else 0
            units[job.key] = Unit(job.key, freed, work, max(t.priority for t in pods))
            members[job.key] = pods
        return units, members

    def _choose(
        self, need: dict[str, int], units: dict[str, Unit], members: dict[str, list[TaskState]], spare: list[TaskState]
    ) -> NodePlan | None:
        """The least-waste cover of ``need`` among ``units`` whose pods the plugins take together with the spare
        pods (a gang they refuse beside the others is dropped and the cover chosen again)."""
        taken = {id(t) for t in spare}
        while units:
            cover = least_waste_cover(need, sorted(units.values(), key=lambda u: u.key))
            if not _covers(need, cover):
                return None
            cover = _walk_back(need, cover)
            gang_pods = [t for u in cover for t in members[u.key]]
            chosen = {id(t) for t in self.accept(self.sort([*spare, *(t for t in gang_pods if id(t) not in taken)]))}
            refused = [u.key for u in cover if any(id(t) not in chosen for t in members[u.key])]
            if not refused:
                if any(id(t) not in chosen for t in spare):
                    return None  # the plugins' running totals refuse a spare pod beside these gangs
                gone = {id(t) for t in gang_pods}
                order = sorted(cover, key=lambda u: (u.priority, u.work, u.key))
                return NodePlan(
                    tuple(tuple(self.sort(members[u.key])) for u in order),
                    tuple(t for t in spare if id(t) not in gone),
                )
            for key in refused:
                del units[key]
        return None


def gang_met(job: JobState) -> bool:
    """Whether ``job`` holds its gang minimum with its pipelined pods (``minMember`` and each role's
    ``minTaskMember``), whatever the policy's ``job_pipelined`` votes say: with ``wholeGangs`` an action commits its
    evictions only for a beneficiary that can run."""
    return job.is_pipelined() and job.check_task_pipelined()


def free_first(ssn: Session, task: TaskState, rows: Sequence[int]) -> list[int]:
    """``rows`` with those whose future idle already holds ``task`` first (order kept otherwise): what a whole gang
    freed on other nodes serves the preemptor job's next pods before anything more is evicted."""
    table = ssn.nodes
    room = [r for r in rows if fits(task, table.future_idle(r))]
    if not room:
        return list(rows)
    first = set(room)
    return room + [r for r in rows if r not in first]


def whole_gang_words(pods: Sequence[TaskState]) -> str:
    """What an eviction of a whole gang adds to its message."""
    job = pods[0].pg
    assert job is not None
    nodes = len({t.node for t in pods})
    where = "on 1 node" if nodes == 1 else f"on {nodes} nodes"
    return (
        f"; evicted with its whole gang {job.key} ({len(pods)} pods {where}): taken whole rather than left below "
        f"minMember {job.min_member}"
    )
