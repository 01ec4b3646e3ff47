"""Quota overuse revoke ("recycling", seed 001; Koordinator ``quota_overuse_revoke.go``, koordinator.md section 8).

A quota group whose ``used`` exceeds its ``runtime`` (on the resources the runtime names) has borrowed what its
lenders now want back. Koordinator watches every group (but the root and the system group) once per
``revokePodInterval``; a group must stay over **continuously for longer than** ``delayEvictTime`` (120 s by
default) before anything happens, and after a trigger the clock restarts, so the next trigger needs another full
delay. ``over_since`` carries that state between passes (group -> the time it was first seen over).

On a trigger, the group's own assigned pods are taken **least important first** (lower priority first; on equal
priority the most recently started first, Kubernetes' ``MoreImportantPod`` reversed; a pod without a start time
counts as just started; then by pod uid, for a deterministic order), skipping the protected non-preemptible pods
(label ``quota.scheduling.koordinator.sh/preemptible: "false"``), until ``used <= runtime``. Protected are only the
most important non-preemptible pods that fit within the group's ``min`` together
(``engine.fairshare.elastic.protected_non_preemptible``): Koordinator checks that rule only when a pod is placed, so a
pod flipped to non-preemptible afterwards (or a min lowered since) would hold borrowed resources for good; here
non-preemptible usage above min is taken back like any other (Fairway's difference). If that never happens, every pod taken is evicted. Otherwise the pods taken
are walked back from the most important and each one that still fits (``used + request <= runtime``) is kept:
only the rest are evicted. (Koordinator narrows ``used`` to the resources of the pod just removed while walking;
Fairway keeps every resource of ``used``, which can only keep more pods.)

Gangs (Fairway's ``revokeWholeGangs: true`` on the elasticquota arguments; off by default, Koordinator's pod by
pod): Koordinator takes pods one by one, which can leave a gang below its ``minMember`` with its other pods still
holding their nodes for a job that cannot run. Here victims are chosen with gangs in mind, priority by priority
from the lowest: at each priority, first the pods their gang can spare (above its minimum: Volcano's ready count —
bound, binding, running, allocated and succeeded pods, wherever they run — and each role's ``minTaskMember``), one
at a time, least important first; when that is not enough, whole gangs of that priority (a gang's priority is its
most important pod's here), the least-waste cover of what is still over (``engine.session.gangcover``: exact up to
12 gangs, else greedy by work lost per part of the need freed). A gang holding a protected pod is never broken.
Walking back, a whole gang is kept or evicted whole, and a pod is kept only if its gang is whole with it. Podgroups
of ``minMember`` 1 without role minimums are not gangs: their pods go as Koordinator's do.

The runtimes are computed afresh from the snapshot by ``engine.values.compute_quotas``, the computation the pages
and the session use (with the elasticquota arguments' ``enableMinQuotaScale``); ``used`` is the requests of the
allocated pods (a Releasing pod is leaving and is not counted), ``request`` those of every pod not finished. A parent group owns no pods, so it never loses any directly: its children
are over whenever it is.

One victim choice, two callers: ``recycle_plan`` lists the groups over their runtime with the pods a pass at ``now``
takes from each; ``recycle`` evicts those of the groups due, and ``recycle_outlook`` is the same plan for every group
over, due or not, which the warnings before recycling show (``scheduling.recycle_outlook``: "3 pods will be recycled
in about 20 s unless usage falls to 124 cores"), so a warning and the pass cannot disagree.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from engine.fairshare.elastic import ElasticResult, GroupQuota, protected_non_preemptible
from engine.objects import ALLOCATED_STATUSES, DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, Snapshot, TaskInfo
from engine.resources import sorted_resources
from engine.session.decisions import Blocker, Eviction
from engine.session.gangcover import Gang, GangBook, Unit, least_waste_cover, pod_work
from engine.session.reasons import qty
from engine.session.session import add_into
from engine.values import GroupUsage, QuotaTreeMemo, compute_quotas, groups_over_runtime
from engine.vocabulary import READY_STATUSES, BlockerKind

__all__ = ["Gang", "Overuse", "gangs_of", "recycle", "recycle_outlook", "recycle_plan", "revoke_victims"]


def _within(used: Mapping[str, int], runtime: Mapping[str, int]) -> bool:
    return all(used.get(r, 0) <= cap for r, cap in runtime.items())


def _least_important_first(task: TaskInfo) -> tuple[int, float, str]:
    start = task.start_timestamp if task.start_timestamp is not None else math.inf
    return (task.priority, -start, task.uid)


def _named(pods: Sequence[TaskInfo]) -> list[tuple[str, str]]:
    return [(p.podgroup, p.task_role) for p in pods]


def _take(
    pods: Sequence[TaskInfo],
    used: Mapping[str, int],
    runtime: Mapping[str, int],
    gangs: GangBook,
    protected: Collection[str],
    now: float | None,
) -> tuple[dict[str, int], list[tuple[TaskInfo, ...]]]:
    """Take pods out until ``used`` fits, priority by priority from the lowest: at each priority, the pods their
    gang can spare (above its ``minMember`` and their role's ``minTaskMember``; every pod outside a gang) one at a
    time, least important first; then, if that was not enough, whole gangs of that priority (a gang's priority is
    its most important pod's), the least-waste cover of what is still over (``engine.session.gangcover``)."""
    remaining = dict(used)
    taken: list[tuple[TaskInfo, ...]] = []
    ordered = sorted(pods, key=_least_important_first)
    for priority in sorted({p.priority for p in pods}):
        for pod in ordered:
            if _within(remaining, runtime):
                return remaining, taken
            if pod.priority != priority or pod.uid in protected or not gangs.can_spare(pod.podgroup, pod.task_role):
                continue
            add_into(remaining, pod.request, -1)
            gangs.move(_named((pod,)), -1)
            taken.append((pod,))
        if not _within(remaining, runtime) and gangs.gangs:
            _take_whole(ordered, remaining, runtime, taken, gangs, protected, now, priority)
    return remaining, taken


def _whole_units(
    pods: Sequence[TaskInfo], gone: Collection[str], gangs: GangBook, protected: Collection[str], now: float | None
) -> dict[str, tuple[Unit, tuple[TaskInfo, ...]]]:
    """The gangs that could go whole: per podgroup, its pods here not taken yet (none of them protected), what
    they free and the work they lose (none for a gang already below its minimum: it runs nothing)."""
    mates: dict[str, list[TaskInfo]] = {}
    for pod in pods:
        if pod.podgroup in gangs.gangs and pod.uid not in gone:
            mates.setdefault(pod.podgroup, []).append(pod)
    out: dict[str, tuple[Unit, tuple[TaskInfo, ...]]] = {}
    for key, members in mates.items():
        if any(t.uid in protected for t in members):
            continue
        freed: dict[str, int] = {}
        for t in members:
            add_into(freed, t.request)
        work = sum(pod_work(t.start_timestamp, now) for t in members) if gangs.intact(key) else 0
        out[key] = (Unit(key, freed, work, max(t.priority for t in members)), tuple(members))
    return out


def _take_whole(
    pods: Sequence[TaskInfo],
    remaining: dict[str, int],
    runtime: Mapping[str, int],
    taken: list[tuple[TaskInfo, ...]],
    gangs: GangBook,
    protected: Collection[str],
    now: float | None,
    priority: int,
) -> None:
    """When the spare pods were not enough: take whole gangs of ``priority``, the least-waste cover of what is
    still over (``engine.session.gangcover``; all of them when they cannot cover it)."""
    gone = {t.uid for unit in taken for t in unit}
    units = {k: v for k, v in _whole_units(pods, gone, gangs, protected, now).items() if v[0].priority == priority}
    need = {r: remaining.get(r, 0) - cap for r, cap in runtime.items() if remaining.get(r, 0) > cap}
    chosen = least_waste_cover(need, [u for u, _ in units.values()])
    for unit in sorted(chosen, key=lambda u: (u.priority, u.work, u.key)):
        members = units[unit.key][1]
        for t in members:
            add_into(remaining, t.request, -1)
        gangs.move(_named(members), -1)
        taken.append(members)


def revoke_victims(
    pods: Sequence[TaskInfo],
    used: Mapping[str, int],
    runtime: Mapping[str, int],
    gangs: Mapping[str, Gang] | None = None,
    protected: Collection[str] | None = None,
    now: float | None = None,
) -> list[TaskInfo]:
    """Koordinator's ``getToRevokePodList``: the pods to evict so that ``used <= runtime`` (see the module doc).
    With ``gangs`` (podgroup key -> ``Gang``) no gang is left below its minimum: the pods gangs can spare go
    first, then whole gangs (the least-waste cover, work lost counted at ``now``), and a pod is put back only if
    its gang is whole with it. ``protected``: the uids that may not be evicted (None: every non-preemptible pod,
    Koordinator's rule)."""
    if protected is None:
        protected = {p.uid for p in pods if not p.quota_preemptible}
    book = GangBook(gangs or {})
    remaining, taken = _take(pods, used, runtime, book, protected, now)
    if not _within(remaining, runtime):
        return [pod for unit in taken for pod in unit]
    evict: list[TaskInfo] = []
    for unit in reversed(taken):
        for pod in unit:
            add_into(remaining, pod.request)
        if _within(remaining, runtime) and (len(unit) > 1 or book.whole_with(unit[0].podgroup, unit[0].task_role)):
            book.move(_named(unit), 1)
            continue
        for pod in unit:
            add_into(remaining, pod.request, -1)
        evict.extend(reversed(unit))
    evict.reverse()
    return evict


def gangs_of(snapshot: Snapshot) -> dict[str, Gang]:
    """The gangs of ``snapshot`` (podgroups asking for more than one pod or for pods of given roles) with their
    ready pods now."""
    out: dict[str, Gang] = {}
    by_podgroup = snapshot.tasks_by_podgroup
    for key, pg in snapshot.podgroups.items():
        if pg.min_member <= 1 and not any(pg.min_task_member.values()):
            continue
        ready = [t for t in by_podgroup.get(key, ()) if t.status in READY_STATUSES]
        roles: dict[str, int] = {}
        for t in ready:
            roles[t.task_role] = roles.get(t.task_role, 0) + 1
        out[key] = Gang(len(ready), pg.min_member, roles, {r: n for r, n in pg.min_task_member.items() if n})
    return out


def _broken_gangs(victims: Sequence[TaskInfo], gangs: Mapping[str, Gang] | None) -> dict[str, str]:
    """podgroup key -> the words added to its pods' messages, for the gangs the victims leave below minMember."""
    out: dict[str, str] = {}
    if not gangs:
        return out
    counts: dict[str, int] = {}
    for pod in victims:
        counts[pod.podgroup] = counts.get(pod.podgroup, 0) + 1
    for key, n in counts.items():
        gang = gangs.get(key)
        if gang is not None and gang.ready - n < gang.min_member:
            out[key] = (
                f"; evicted with its gang {key} ({n} of its {gang.ready} ready pods): fewer than minMember "
                f"{gang.min_member} cannot run"
            )
    return out


def _first_over(gq: GroupQuota) -> str:
    for r in sorted_resources(gq.runtime):
        if gq.used[r] > gq.runtime[r]:
            return r
    return next(r for r in gq.runtime if gq.used[r] > gq.runtime[r])


@dataclass(frozen=True, slots=True)
class Overuse:
    """A quota group over its runtime and what recycling takes from it (:func:`recycle_plan`).

    ``since``: since when it is over (the recorded time, ``now`` when no pass has seen it over yet); ``due``:
    ``since + delay``, recycling takes ``victims`` at its first pass later than that (at once with ``delay`` 0).
    ``over``: the resources it uses above its runtime (``resource``: the first of them, in the resource order, the
    one its evictions name); ``runtime`` on those is what ``used`` must fall to. ``victims``: the pods recycling
    would evict now, as :func:`revoke_victims` chooses them (``None`` when they were not asked for: a group not
    due yet in a pass); ``broken``: podgroup -> the words a victim's message adds when its gang goes with it."""

    group: str
    used: Mapping[str, int]
    runtime: Mapping[str, int]
    over: tuple[str, ...]
    resource: str
    since: float
    due: float
    delay: float
    victims: tuple[TaskInfo, ...] | None
    broken: Mapping[str, str]

    def is_due(self, now: float) -> bool:
        """Whether a pass at ``now`` evicts (over for longer than the delay, Koordinator's strict comparison)."""
        return not (self.delay > 0 and not now - self.since > self.delay)

    def seconds_left(self, now: float) -> float:
        """Seconds until the group is due (0 once it is)."""
        return max(0.0, self.due - now)


def recycle_plan(
    snapshot: Snapshot,
    *,
    now: float,
    over_since: Mapping[str, float],
    delay: float | None = None,
    quotas: ElasticResult | None = None,
    due_only: bool = False,
    memo: QuotaTreeMemo | None = None,
    usage: GroupUsage | None = None,
) -> list[Overuse]:
    """Every quota group over its runtime in ``snapshot`` (but the root, ``system``, ``default`` and the tree roots),
    by name, with the victims recycling would take from it at ``now`` (the one victim choice, used by
    :func:`recycle` and by the warnings that pages show before it acts). ``quotas``: the snapshot's quota values
    when the caller has them (``compute_quotas(snapshot)``), else computed, with ``memo``'s tree when given
    (``QuotaTreeMemo``), and with ``usage`` as the snapshot's ``group_usage`` when the caller has it; ``due_only``:
    choose victims only for the groups a pass at ``now`` evicts (the others get ``victims=None``)."""
    args = snapshot.effective_elastic_quota_args()
    wait = args.delay_evict_time if delay is None else delay
    # a pass after a session mostly finds no group over its runtime: the memo's tree tells so without the values the
    # used alone moves (a group over needs them all: its entry's numbers, its victims)
    if quotas is None and memo is not None and usage is not None and groups_over_runtime(snapshot, usage, memo) == []:
        return []
    result = compute_quotas(snapshot, usage=usage, memo=memo) if quotas is None else quotas
    gangs: dict[str, Gang] | None = None  # read at the first choice: most passes find no group over for long
    plan: list[Overuse] = []
    for name in sorted(result):
        if name in (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP) or result.parent(name) is None:
            continue
        gq = result[name]
        if _within(gq.used, gq.runtime):
            continue
        since = over_since.get(name, now)
        over = tuple(r for r in sorted_resources(gq.runtime) if gq.used[r] > gq.runtime[r])
        entry = Overuse(
            group=name,
            used=gq.used,
            runtime=gq.runtime,
            over=over,
            resource=_first_over(gq),
            since=since,
            due=since + wait,
            delay=wait,
            victims=None,
            broken={},
        )
        if due_only and not entry.is_due(now):
            plan.append(entry)
            continue
        if gangs is None and args.revoke_whole_gangs:
            gangs = gangs_of(snapshot)
        victims = _victims_of(snapshot, name, gq, gangs, now)
        plan.append(dataclasses.replace(entry, victims=tuple(victims), broken=_broken_gangs(victims, gangs)))
    return plan


def _victims_of(
    snapshot: Snapshot, name: str, gq: GroupQuota, gangs: dict[str, Gang] | None, now: float
) -> list[TaskInfo]:
    """What recycling takes from group ``name`` (``revoke_victims``): of its placed pods, the least important first,
    never its non-preemptible ones within its min."""
    pods = [
        t
        for t in snapshot.tasks_by_quota_group.get(name, ())  # (made at the first choice, as the gangs)
        if t.node is not None and t.status in ALLOCATED_STATUSES
    ]
    spec = snapshot.quota_groups.get(name)
    protected = protected_non_preemptible(
        spec.min if spec is not None else {},
        [(t.uid, t.priority, t.start_timestamp, t.request) for t in pods if not t.quota_preemptible],
    )
    return revoke_victims(pods, gq.used, gq.runtime, gangs, protected, now)


def recycle_outlook(
    snapshot: Snapshot,
    *,
    now: float,
    over_since: Mapping[str, float],
    delay: float | None = None,
    quotas: ElasticResult | None = None,
) -> list[Overuse]:
    """What recycling will do unless usage falls: :func:`recycle_plan` with the victims of every group over its
    runtime, due or not (a dry run of the victim choice on ``snapshot``; nothing is evicted)."""
    return recycle_plan(snapshot, now=now, over_since=over_since, delay=delay, quotas=quotas)


def recycle(
    snapshot: Snapshot,
    *,
    now: float,
    over_since: Mapping[str, float],
    delay: float | None = None,
    memo: QuotaTreeMemo | None = None,
    usage: GroupUsage | None = None,
) -> tuple[list[Eviction], dict[str, float]]:
    """One overuse-revoke pass: the evictions (with reasons and numbers) and the new ``over_since`` map (``memo``:
    the quota tree to bring up to date, ``QuotaTreeMemo``; ``usage``: the snapshot's ``group_usage`` when the caller
    has it)."""
    evictions: list[Eviction] = []
    since_map: dict[str, float] = {}
    plan = recycle_plan(snapshot, now=now, over_since=over_since, delay=delay, due_only=True, memo=memo, usage=usage)
    for entry in plan:
        name, since, wait = entry.group, entry.since, entry.delay
        if not entry.is_due(now) or entry.victims is None:
            since_map[name] = since
            continue
        since_map[name] = now  # Koordinator resets lastUnderUsedTime on a trigger
        r = entry.resource
        used, runtime = entry.used[r], entry.runtime[r]
        blocker = Blocker(BlockerKind.QUOTA, name, r, used, runtime, "runtime")
        for pod in entry.victims:
            start = "never started" if pod.start_timestamp is None else f"running for {now - pod.start_timestamp:.0f}s"
            gang = entry.broken.get(pod.podgroup, "")
            if not pod.quota_preemptible:
                gang += "; non-preemptible, but above the group's min with its more important non-preemptible pods"
            evictions.append(
                Eviction(
                    task=pod.uid,
                    action="recycle",
                    reason="QuotaOverused",
                    message=(
                        f"quota group {name} uses {qty(used, r)} {r}, above its runtime "
                        f"{qty(runtime, r)}, for {now - since:.1f}s (delayEvictTime {wait:g}s); "
                        f"pod priority {pod.priority}, {start}{gang}"
                    ),
                    blocker=blocker,
                )
            )
    return evictions, since_map
