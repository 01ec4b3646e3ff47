"""Kueue's partial admission: a Job admitted with fewer pods than it asks for when all of them cannot be.

A ``batch/v1`` Job annotated ``kueue.x-k8s.io/job-min-parallelism: "M"`` (the Kueue reader keeps M in the snapshot's
admission levers, ``AdmissionLevers.partial_admission``) may run with any count of pods between M and its count N.
Kueue admits it with the most pods that can be admitted and sets the Job's parallelism to that count, so the other
pods are never created (``pkg/scheduler/scheduler.go`` ``getInitialAssignments``,
``pkg/scheduler/flavorassigner/podset_reducer.go``). Before each session ``PartialAdmission.before`` sizes each such
waiting Job on the quota as the session opens, asking Kueue's questions in Kueue's order
(``engine.flavors.admission_oracle``):

1. all N pods fit: N;
2. all N fit by preempting workloads that exist: N (the preemption first: Kueue prefers the whole Job to a part);
3. otherwise the largest count from N - 1 down to M that fits, or fits by a preemption that finds workloads to
   preempt, found by bisection as Kueue's reducer finds it (it takes fewer pods never to fit worse than more);
4. none: N, and the Job waits whole.

A suspended Job (a live cluster's: it has no pods until it is resumed) is sized on its template
(``AdmissionLevers.templates``): N pods like the template's, of which the count it is tried with then asks for its
flavors; the session admitting it (Inqueue) is its admission, and the adapter resumes it with that parallelism.

A Job sized below N enters the session with the pods it keeps (its first ones; the podgroup's minimum and its
minimum resources are theirs), the others left out. ``PartialAdmission.after`` keeps the cut of a Job the session
admitted (some pod bound or pipelined: the pods left out are never created, as Kueue's parallelism) and gives every
other Job its pods back, to be sized again at the next session, as Kueue sizes a workload again at each cycle; an
admitted Job that is evicted later and waits again gets its pods back too, as Kueue restores the Job's parallelism.

A live cluster runs each session on its own (``scheduling.sessions``): the Jobs admitted in part by an earlier one come
in the snapshot (``AdmissionLevers.partial_admitted``, stored on their rows), and ``before`` keeps each to its count as
simulate's run keeps its cut: its pods on a node first, then its others up to the count; the pods beyond it are left
out (the adapter lowered the Job's parallelism: the Job controller deletes them). ``cuts`` gives the counts to store.

Each Job's workloads are sized on the quota as the session opens, none counting another (Kueue nominates the heads
of a cycle on one snapshot): two that each fit alone may not both be admitted, and the session leaves the second
waiting, whole again. Plain Python on the snapshot; counts and amounts are exact integers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from engine.flavors import admission_oracle
from engine.objects import PodGroupInfo, Snapshot, TaskInfo
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase, TaskStatus


class Binding(Protocol):
    """A session's binding, as ``after_session`` reads it: the pod's uid."""

    @property
    def task(self) -> str: ...


class Phased(Protocol):
    """A session's podgroup status, as ``after_session`` reads it: its phase."""

    @property
    def phase(self) -> str: ...


__all__ = ["PartialAdmission", "Sizing"]

_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})

Oracle = Callable[[PodGroupInfo, list[TaskInfo]], tuple[bool, str]]


@dataclass(frozen=True, slots=True)
class Sizing:
    """How a Job that may be admitted in part was sized for a session: ``count`` of its ``full`` pods (at least
    ``least``), what the quota answered for all of them and for that count, and the pods left out."""

    key: str
    full: int
    least: int
    count: int
    whole: str  # the answer for all ``full`` pods ("does not fit", "fits by preempting", ...)
    answer: str  # the answer for ``count`` pods ("" when no count from ``least`` up may be admitted)
    left_out: tuple[TaskInfo, ...] = ()

    def sentence(self) -> str:
        """For people: ``all 50 pods: does not fit; 25 pods (the most from 20 up): fits``."""
        head = f"all {self.full} pods: {self.whole}"
        if not self.answer:
            return head + f"; no count from {self.least} up may be admitted: it waits for all {self.full}"
        if self.count == self.full:
            return head
        return head + "; " + f"{self.count} pods (the most from {self.least} up): {self.answer}"

    def entry(self, admitted: int | None) -> dict[str, object]:
        """The podgroup's ``partialAdmission`` in ``fairway simulate``'s document."""
        return {"count": self.full, "minCount": self.least, "admittedCount": admitted, "sizing": self.sentence()}


def _largest(full: int, least: int, admits: Callable[[int], tuple[bool, str]]) -> tuple[int, str]:
    """The largest count from ``full - 1`` down to ``least`` that ``admits``, by bisection over the cut (Kueue's
    ``PodSetReducer.Search``, one pod set): (0, '') when even ``least`` is not admitted."""
    lo, hi = 1, full - least  # cuts: the smallest that admits lies in [lo, hi], if any
    found: tuple[int, str] = (0, "")
    while lo <= hi:
        cut = (lo + hi) // 2
        ok, answer = admits(full - cut)
        if ok:
            found, hi = (full - cut, answer), cut - 1
        else:
            lo = cut + 1
    return found


class PartialAdmission:
    """The partial admission of one run of sessions (``fairway simulate``): the Jobs that may be admitted in part,
    each one's sizing at its last session, and the cuts kept for those admitted in part."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.least = dict(snapshot.admission.partial_admission)
        self.sized: dict[str, Sizing] = {}  # the latest sizing of each Job looked at
        self.admitted: dict[str, int] = {}  # Jobs admitted (whole or in part) by a session: their count
        self._tried: dict[str, Sizing] = {}  # this session's sizings, until ``after``
        self._kept: set[str] = set()  # this session's cuts, until ``after``
        self._given: dict[str, tuple[Sizing, PodGroupInfo]] = {}  # cuts kept for admitted Jobs, with their podgroup
        self._templated: dict[str, TaskInfo] = {}  # this session's Jobs sized on their template, until ``after``

    def __bool__(self) -> bool:
        return bool(self.least)

    def before(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with each waiting Job that may be admitted in part cut to the count it is tried with. A
        suspended Job without pods is sized on its template (``AdmissionLevers.templates``: as many pods as its count,
        each the template's), and its template then asks for the count it is tried with."""
        if not self.least:
            return snapshot
        snapshot = self._resumed(snapshot)
        snapshot = self._evicted_back(snapshot)
        oracle: Oracle | None = None
        by_podgroup = snapshot.tasks_by_podgroup
        templates = dict(snapshot.admission.templates)
        cut_pods: list[str] = []
        cut_groups: list[PodGroupInfo] = []
        for key, least in sorted(self.least.items()):
            pg = snapshot.podgroups.get(key)
            if pg is None or key in self._given or not _waiting(pg, by_podgroup.get(key, ())):
                continue
            pods = [t for t in by_podgroup.get(key, ()) if t.status not in _DONE]
            template = templates.get(key) if not pods else None
            if template is not None:
                pods = _template_pods(pg, template)
            if len(pods) <= least:
                continue
            oracle = oracle or admission_oracle(snapshot)
            sizing = _size(pg, pods, least, oracle)
            if template is not None:
                sizing = dataclasses.replace(sizing, left_out=())  # (its template's pods: not the cluster's)
                self._templated[key] = template
            self.sized[key] = sizing
            self._tried[key] = sizing
            if sizing.count < sizing.full:
                kept = _summed(pods[: sizing.count])
                self._kept.add(key)
                self._given[key] = (sizing, pg)
                cut_pods.extend(t.uid for t in sizing.left_out)
                cut_groups.append(pg.evolve(min_member=sizing.count, min_resources=kept))
                if template is not None:
                    templates[key] = dataclasses.replace(template, request=kept)
        if not cut_groups:
            return snapshot
        out = snapshot.without_tasks(cut_pods).with_podgroups(cut_groups)
        return _with_templates(out, templates)

    def after(self, snapshot: Snapshot, admitted: Collection[str]) -> Snapshot:
        """``snapshot`` after the session: the cuts of the Jobs it admitted (``admitted``: podgroup keys with a pod
        bound or pipelined) kept, the other Jobs given their pods back."""
        for key, sizing in self._tried.items():
            if key in admitted:
                self.admitted[key] = sizing.count
        back = [key for key in self._kept if key not in admitted]
        self._tried, self._kept = {}, set()
        out = self._whole_again(snapshot, back)
        templates = {key: self._templated[key] for key in back if key in self._templated}
        self._templated = {}
        return _with_templates(out, {**dict(out.admission.templates), **templates}) if templates else out

    def after_session(
        self, snapshot: Snapshot, bindings: Iterable[Binding], phases: Mapping[str, Phased] | None = None
    ) -> Snapshot:
        """``after`` for a session's ``bindings`` (bound or pipelined), on the snapshot with its result applied: the
        Jobs admitted are those with a pod among them, and a Job sized on its template (it has no pods yet) that
        the session admitted (``phases``: the session's podgroup statuses, Inqueue or Running)."""
        tasks = snapshot.tasks
        admitted = {tasks[b.task].podgroup for b in bindings if b.task in tasks}
        for key in self._templated:
            status = (phases or {}).get(key)
            if status is not None and status.phase in (PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING):
                admitted.add(key)
        return self.after(snapshot, admitted)

    def _resumed(self, snapshot: Snapshot) -> Snapshot:
        """The Jobs an earlier session admitted in part (``AdmissionLevers.partial_admitted``, a live cluster's) kept
        to their count, as ``before`` keeps a cut it made: their pods on a node (or being placed) first, then the
        others in order, the pods beyond the count left out. Read once; one that waits again is sized afresh."""
        cuts = [(k, n) for k, n in snapshot.admission.partial_admitted if k in self.least and k not in self._given]
        by_podgroup = snapshot.tasks_by_podgroup
        cut_pods: list[str] = []
        cut_groups: list[PodGroupInfo] = []
        for key, count in cuts:
            pg = snapshot.podgroups.get(key)
            pods = [t for t in by_podgroup.get(key, ()) if t.status not in _DONE]
            if pg is None or _waiting(pg, pods) or count >= pg.min_member:
                continue
            pods.sort(key=lambda t: t.node is None)  # (stable: the others in order)
            sizing = Sizing(key, pg.min_member, self.least[key], count, "admitted in part", "admitted",
                            tuple(pods[count:]))  # fmt: skip
            self._given[key] = (sizing, pg)
            self.admitted[key] = count
            cut_pods.extend(t.uid for t in sizing.left_out)
            # (its pods are alike, made from one template: ``count`` of them, those that exist or not)
            whole = pg.min_resources.raw if pg.min_resources is not None else {}
            least = ResourceList({r: v * count // pg.min_member for r, v in whole.items()})
            cut_groups.append(pg.evolve(min_member=count, min_resources=least))
        if not cut_groups:
            return snapshot
        out = snapshot.without_tasks(cut_pods) if cut_pods else snapshot
        return out.with_podgroups(cut_groups)

    def cuts(self) -> dict[str, int]:
        """The Jobs admitted in part as things stand (after ``after``): podgroup key -> its count, what a live
        cluster stores (``PodGroup.kueue_admitted_count``) for the next session and the adapter."""
        return {key: sizing.count for key, (sizing, _) in sorted(self._given.items())}

    def _evicted_back(self, snapshot: Snapshot) -> Snapshot:
        """A Job admitted in part that waits again (evicted): its pods back, to be sized afresh (Kueue restores the
        Job's parallelism when it evicts the workload)."""
        by_podgroup = snapshot.tasks_by_podgroup
        back = [
            key
            for key in self._given
            if (pg := snapshot.podgroups.get(key)) is not None and _waiting(pg, by_podgroup.get(key, ()))
        ]
        for key in back:
            self.admitted.pop(key, None)
        return self._whole_again(snapshot, back)

    def _whole_again(self, snapshot: Snapshot, keys: list[str]) -> Snapshot:
        """``snapshot`` with the Jobs ``keys`` whole again: the pods their cut left out back, their podgroups' minimum
        and minimum resources as before the cut; their cuts forgotten."""
        pods: list[TaskInfo] = []
        groups: list[PodGroupInfo] = []
        for key in keys:
            sizing, before = self._given.pop(key)
            pods.extend(sizing.left_out)
            now = snapshot.podgroups.get(key)
            if now is not None:
                groups.append(now.evolve(min_member=before.min_member, min_resources=before.min_resources))
        out = snapshot.with_tasks(pods) if pods else snapshot
        return out.with_podgroups(groups) if groups else out

    def entries(self) -> dict[str, dict[str, object]]:
        """Each Job looked at: its ``partialAdmission`` entry (``Sizing.entry``)."""
        return {key: sizing.entry(self.admitted.get(key)) for key, sizing in sorted(self.sized.items())}


def _waiting(pg: PodGroupInfo, pods: Iterable[TaskInfo]) -> bool:
    """Not admitted yet: Pending, not suspended, none of its pods on a node."""
    return pg.phase == PodGroupPhase.PENDING and not pg.suspended and all(t.node is None for t in pods)


def _size(pg: PodGroupInfo, pods: list[TaskInfo], least: int, oracle: Oracle) -> Sizing:
    full = len(pods)
    ok, whole = oracle(pg, pods)
    if ok:
        return Sizing(pg.key, full, least, full, whole, whole)
    count, answer = _largest(full, least, lambda n: oracle(pg, pods[:n]))
    if not count:
        return Sizing(pg.key, full, least, full, whole, "")
    return Sizing(pg.key, full, least, count, whole, answer, tuple(pods[count:]))


def _template_pods(pg: PodGroupInfo, template: TaskInfo) -> list[TaskInfo]:
    """A suspended Job's pods as its template makes them: its count of pods, each asking for its template's share
    (the template's pod asks for the whole Job, ``count`` times a pod's request, so the division is exact)."""
    count = max(pg.min_member, 1)
    each = ResourceList({r: v // count for r, v in template.request.raw.items()})
    return [dataclasses.replace(template, name=f"{pg.name}-{i}", request=each) for i in range(count)]


def _with_templates(snapshot: Snapshot, templates: Mapping[str, TaskInfo]) -> Snapshot:
    """``snapshot`` with these templates (``AdmissionLevers.templates``), when they differ."""
    items = tuple(sorted(templates.items(), key=lambda item: item[0]))
    if items == snapshot.admission.templates:
        return snapshot
    return snapshot.replace(admission=dataclasses.replace(snapshot.admission, templates=items))


def _summed(pods: Iterable[TaskInfo]) -> ResourceList:
    out: dict[str, int] = {}
    for task in pods:
        for key, amount in task.request.raw.items():
            out[key] = out.get(key, 0) + amount
    return ResourceList(out)
