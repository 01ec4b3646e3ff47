"""``elasticquota``: Koordinator's elastic quota groups inside the session (koordinator.md section 7, seed 001).

The runtimes are computed once when the session opens (``engine.fairshare.elastic.compute_runtimes``, with the
plugin's ``enableMinQuotaScale``); the session then keeps each group's ``used`` current as it places and evicts
pods (a group's used includes its subtree's, as Koordinator aggregates it).

* Allocatable (Koordinator's PreFilter): a pod of group ``g`` fits when ``used(g) + request <= runtime(g)`` on
  the resources the runtime names (``max(g)`` instead when ``enableRuntimeQuota`` is false); a non-preemptible
  pod (label ``quota.scheduling.koordinator.sh/preemptible: "false"``) also needs ``non-preemptible used +
  request <= min(g)``; with ``enableCheckParentQuota`` every ancestor below the tree root must pass the first
  test as well. Resources the limit does not name are not governed.
* Preemptable (Koordinator's ``SelectVictimsOnNode``): only pods of the *same* quota group, of strictly lower
  priority, never protected non-preemptible ones, and not in the default group while
  ``disableDefaultQuotaPreemption``. Protected are the most important non-preemptible pods that fit within the
  group's min together (``engine.fairshare.elastic.protected_non_preemptible``, as the revoke pass counts them),
  plus those this session placed (they passed the min test); non-preemptible usage above min, left by a pod flipped
  after it was placed, is preemptable like any other (Fairway's difference: Koordinator checks min only at
  placement).
  Whether the evictions make room within the runtime is the allocatable test above, which the preempt action
  re-runs after each eviction (``existUsed - preempted + preemptor <= runtime``).
* No cross-group reclaim: borrowed quota is taken back by the revoke pass (``engine.session.recycle``).
* Admission (Fairway's addition; Koordinator has no enqueue step): a podgroup is admitted only when the quota
  groups of its pods can take its minimum, ``used + reserved + demand <= runtime`` (``max`` without runtime quota;
  every ancestor too with ``enableCheckParentQuota``), and never when the demand exceeds a group's ``max``, which
  it can never reach. ``demand`` is, per quota group, the podgroup's ``minResources`` capped by what its live pods
  in that group request; ``reserved`` is the demand of the podgroups already admitted but not yet placed (minus
  what they already use). An admitted podgroup whose group's runtime shrank below what the group uses and
  reserves gives its reservation back (``reservation_excess``), as for queues. The reservations the session opens
  with are the values' (``engine.values.reservations``, the ``reserved`` of every quota group on the pages); a
  refusal says how its available amount was reached (``10 runtime - 6 used - 2 reserved by 1 admitted job``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from engine.fairshare.elastic import ElasticResult, effective_max, protected_non_preemptible
from engine.fairshare.queues import MINUS
from engine.objects import ALLOCATED_STATUSES, DEFAULT_GROUP
from engine.policy.policy import PluginOption
from engine.resources import sorted_resources
from engine.session.framework import Plugin, VictimTest
from engine.session.reasons import GateRefusal, qty
from engine.session.registry import register
from engine.session.session import JobState, Session, TaskState, add_into
from engine.values import podgroup_demand
from engine.vocabulary import FINISHED_STATUSES, BlockerKind
from engine.wording import plural


def _nobody(task: TaskState) -> bool:
    return False


@register
class ElasticQuotaPlugin(Plugin):
    name = "elasticquota"
    uses_quota_runtimes = True

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        self.args = session.snapshot.effective_elastic_quota_args()
        self.result: ElasticResult | None = session.quota_runtimes()
        self.used: dict[str, dict[str, int]] = {}
        self.np_used: dict[str, dict[str, int]] = {}
        self.protected: set[str] = set()  # uids of the non-preemptible pods no victim choice may take
        self.reserved: dict[str, dict[str, int]] = {}
        self.reserving: dict[str, dict[str, int]] = {}  # per group and resource, how many podgroups reserve
        self._paths: dict[str, list[str]] = {}
        self._demands: dict[str, dict[str, dict[str, int]]] = {}
        if self.result is None:
            return
        for name in self.result:
            self.used[name] = dict(self.result[name].used)
        non_preemptible: dict[str, list[tuple[str, int, float | None, dict[str, int]]]] = {}
        for t in session.tasks.values():
            if t.status in ALLOCATED_STATUSES and not t.quota_preemptible:
                add_into(self.np_used.setdefault(t.quota_group, {}), t.req)
                non_preemptible.setdefault(t.quota_group, []).append((t.uid, t.priority, t.start, t.req))
        for g, pods in non_preemptible.items():
            spec = session.quota_spec(g)
            self.protected |= protected_non_preemptible(spec.min if spec is not None else {}, pods)
        # the reservations of the podgroups admitted before the session, as the values computed them
        opened = session.values.reservations
        self.reserved = {g: dict(v) for g, v in opened.amounts.items()}
        self.reserving = {g: dict(v) for g, v in opened.reserving.items()}

    def path(self, group: str) -> list[str]:
        """``[group, parent, ..., tree root]`` (only the group itself for the built-in system/default)."""
        p = self._paths.get(group)
        if p is None:
            assert self.result is not None
            p = self._paths[group] = self.result.path(group) if group in self.result else [group]
        return p

    def _limit(self, group: str) -> Mapping[str, int]:
        assert self.result is not None
        if self.args.enable_runtime_quota:
            return self.result[group].runtime
        spec = self.session.quota_spec(group)
        return effective_max(spec) if spec is not None else {}  # max, or min + borrowing limit where lower

    def _bound(self, group: str, resource: str) -> str:
        """Words for a borrowing limit that binds the group's max (runtime quotas off), else nothing."""
        spec = self.session.quota_spec(group)
        if self.args.enable_runtime_quota or spec is None or resource not in spec.borrowing_limit:
            return ""
        cap = spec.min[resource] + spec.borrowing_limit[resource]
        if resource not in spec.max or cap >= spec.max[resource]:
            return ""
        return (
            f"max {qty(spec.max[resource], resource)} lowered to min {qty(spec.min[resource], resource)} + "
            f"borrowing limit {qty(spec.borrowing_limit[resource], resource)}"
        )

    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        result = self.result
        g = task.quota_group
        if result is None or g not in result:
            return None
        limit = self._limit(g)
        used = self.used.get(g, {})
        check = "runtime" if self.args.enable_runtime_quota else "max"
        r = _first_over(task.req, used, limit)
        if r is not None:
            return GateRefusal(
                BlockerKind.QUOTA,
                g,
                check,
                r,
                task.req[r],
                max(0, limit[r] - used.get(r, 0)),
                message=self._bound(g, r),
                breakdown=_less_used(limit[r], check, used.get(r, 0), r),
            )
        if not task.quota_preemptible:
            spec = self.session.quota_spec(g)
            if spec is not None:
                np_used = self.np_used.get(g, {})
                r = _first_over(task.req, np_used, spec.min)
                if r is not None:
                    return GateRefusal(
                        BlockerKind.QUOTA,
                        g,
                        "min",
                        r,
                        task.req[r],
                        max(0, spec.min[r] - np_used.get(r, 0)),
                        message="non-preemptible pods are held to the group's min",
                        breakdown=_less_used(spec.min[r], "min", np_used.get(r, 0), r, "used by non-preemptible pods"),
                    )
        if self.args.enable_check_parent_quota:
            masked = {r: v for r, v in task.req.items() if r in limit}
            for ancestor in self.path(g)[1:]:
                if result.parent(ancestor) is None:
                    break  # the tree root is not checked
                runtime = result[ancestor].runtime
                a_used = self.used.get(ancestor, {})
                r = _first_over(masked, a_used, runtime)
                if r is not None:
                    return GateRefusal(
                        BlockerKind.QUOTA,
                        ancestor,
                        "runtime",
                        r,
                        masked[r],
                        max(0, runtime[r] - a_used.get(r, 0)),
                        message=f"parent of quota group {g} (enableCheckParentQuota)",
                        breakdown=_less_used(runtime[r], "runtime", a_used.get(r, 0), r),
                    )
        return None

    # -- admission ------------------------------------------------------------------------------------------------
    def demand(self, job: JobState) -> dict[str, dict[str, int]]:
        """Per quota group of the podgroup's live pods, the part of ``minResources`` it must hold there: the
        minimum capped by what those pods request (no ``minResources``: no demand, as Volcano admits such a
        podgroup at once)."""
        hit = self._demands.get(job.key)
        if hit is not None:
            return hit
        out: dict[str, dict[str, int]] = {}
        mr = job.min_resources
        if mr is not None and self.result is not None:
            asked: dict[str, dict[str, int]] = {}
            for t in job.tasks:
                if t.status not in FINISHED_STATUSES and t.quota_group in self.result:
                    add_into(asked.setdefault(t.quota_group, {}), t.req)
            out = podgroup_demand(mr, asked)
        self._demands[job.key] = out
        return out

    def _held(self, job: JobState, group: str) -> dict[str, int]:
        """What the podgroup's pods of ``group`` already use (their share of the demand is no longer reserved)."""
        held: dict[str, int] = {}
        for t in job.tasks:
            if t.quota_group == group and t.status in ALLOCATED_STATUSES:
                add_into(held, t.req)
        return held

    def _reserve(self, job: JobState, sign: int, *, outstanding: bool = False) -> None:
        touched: dict[str, set[str]] = {}
        for g, amounts in self.demand(job).items():
            part = amounts
            if outstanding:
                held = self._held(job, g)
                part = {r: v - held.get(r, 0) for r, v in amounts.items() if v > held.get(r, 0)}
            for node in self.path(g):
                add_into(self.reserved.setdefault(node, {}), part, sign)
                touched.setdefault(node, set()).update(part)
        for node, names in touched.items():
            counts = self.reserving.setdefault(node, {})
            for name in names:
                counts[name] = counts.get(name, 0) + sign

    def _gated_groups(self, group: str) -> list[str]:
        """The group, plus its ancestors below the tree root with ``enableCheckParentQuota``."""
        assert self.result is not None
        out = [group]
        if self.args.enable_check_parent_quota:
            for ancestor in self.path(group)[1:]:
                if self.result.parent(ancestor) is None:
                    break
                out.append(ancestor)
        return out

    def _none_over(self, demand: dict[str, dict[str, int]], include_job: bool) -> bool:
        """True when ``_over`` finds nothing: no gated group's ``used + reserved`` (plus the demand when
        ``include_job``) exceeds its limit on a resource the demand names (``pods`` aside), tested in any order
        without sorting or words (the gate is asked for every podgroup tried, and it mostly lets it through)."""
        used_of, reserved_of = self.used, self.reserved
        for g, amounts in demand.items():
            for node in self._gated_groups(g):
                limit = self._limit(node)
                used, reserved = used_of.get(node, {}), reserved_of.get(node, {})
                for r, v in amounts.items():
                    own = v if include_job else 0
                    if r != "pods" and r in limit and used.get(r, 0) + reserved.get(r, 0) + own > limit[r]:
                        return False
        return True

    def _over(self, job: JobState, *, include_job: bool) -> GateRefusal | None:
        assert self.result is not None
        demand = self.demand(job)
        if self._none_over(demand, include_job):
            return None
        check = "runtime" if self.args.enable_runtime_quota else "max"
        for g, amounts in sorted(demand.items()):
            for node in self._gated_groups(g):
                limit = self._limit(node)
                used, reserved = self.used.get(node, {}), self.reserved.get(node, {})
                for r in sorted_resources(amounts):
                    if r not in limit:
                        continue
                    held = used.get(r, 0) + reserved.get(r, 0)
                    want = held + (amounts[r] if include_job else 0)
                    if want <= limit[r]:
                        continue
                    others = held - (0 if include_job else amounts[r])
                    note = f"parent of quota group {g} (enableCheckParentQuota)" if node != g else ""
                    if node == g and include_job and check == "runtime":
                        note = self._above_min(g, r, amounts[r])
                    return GateRefusal(
                        BlockerKind.QUOTA,
                        node,
                        check,
                        r,
                        amounts[r],
                        max(0, limit[r] - others),
                        message=note,
                        breakdown=self._breakdown(node, check, limit[r], r, 0 if include_job else amounts[r]),
                    )
        return None

    def _above_min(self, group: str, r: str, demand: int) -> str:
        """Words for a job whose minimum is larger than its group's min (guarantee): however fair the division, it
        starts only while the group's siblings lend it the rest (say so in advance), else nothing."""
        spec = self.session.quota_spec(group)
        floor = spec.min.get(r) if spec is not None else None
        if floor is None or demand <= floor:
            return ""
        return (
            f"its minimum alone is above quota group {group}'s min {qty(floor, r)}: however fair the division, it "
            f"starts only while other groups lend at least {qty(demand - floor, r)}; a min of {qty(demand, r)} or a "
            "smaller gang would let it start without borrowing"
        )

    def _breakdown(self, group: str, check: str, limit: int, r: str, own: int) -> str:
        """``10 runtime - 6 used - 2 reserved by 1 admitted job`` (zero terms left out); ``own``: the reservation of
        an admitted podgroup that is not counted against itself (``reservation_excess``)."""
        used = self.used.get(group, {}).get(r, 0)
        reserved = self.reserved.get(group, {}).get(r, 0) - own
        jobs = self.reserving.get(group, {}).get(r, 0) - (1 if own else 0)
        parts = [f"{qty(limit, r)} {check}"]
        if used:
            parts.append(f"{MINUS} {qty(used, r)} used")
        if reserved:
            by = f" by {plural(jobs, 'admitted job')}" if jobs > 0 else ""
            parts.append(f"{MINUS} {qty(reserved, r)} reserved{by}")
        text = " ".join(parts)
        return text if limit - used - reserved >= 0 else f"max(0, {text})"

    def job_admissible(self, job: JobState) -> GateRefusal | None:
        result = self.result
        if result is None:
            return None
        for g, amounts in sorted(self.demand(job).items()):
            spec = self.session.quota_spec(g)
            if spec is None or not any(r in spec.max and v > spec.max[r] for r, v in amounts.items() if r != "pods"):
                continue
            for r in sorted_resources(amounts):
                if r in spec.max and amounts[r] > spec.max[r]:
                    return GateRefusal(
                        BlockerKind.QUOTA,
                        g,
                        "max",
                        r,
                        amounts[r],
                        spec.max[r],
                        message="its minimum exceeds the group's max, so it can never run there",
                    )
        return self._over(job, include_job=True)

    def job_enqueued(self, job: JobState) -> None:
        if self.result is not None:
            self._reserve(job, 1)

    def reservation_excess(self, job: JobState) -> GateRefusal | None:
        if self.result is None:
            return None
        return self._over(job, include_job=False)

    def release_reservation(self, job: JobState) -> None:
        if self.result is not None:
            self._reserve(job, -1, outstanding=True)

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        g = preemptor.quota_group
        if self.args.disable_default_quota_preemption and g == DEFAULT_GROUP:
            return []
        protected = self.protected
        return [
            t
            for t in preemptees
            if t.quota_group == g
            and t.priority < preemptor.priority
            and (t.quota_preemptible or t.uid not in protected)
        ]

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        if hook != "preemptable":
            return None
        g = preemptor.quota_group
        if self.args.disable_default_quota_preemption and g == DEFAULT_GROUP:
            return ("elasticquota", None), _nobody
        priority = preemptor.priority
        protected = self.protected

        def same_group_lower(t: TaskState) -> bool:
            return t.quota_group == g and t.priority < priority and (t.quota_preemptible or t.uid not in protected)

        return ("elasticquota", g, priority), same_group_lower

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        protected = self.protected

        def group_priority_preemptible(t: TaskState) -> Hashable:
            """What ``victim_bound``'s test reads of a pod."""
            return t.quota_group, t.priority, t.quota_preemptible or t.uid not in protected

        return group_priority_preemptible

    def _move(self, task: TaskState, sign: int) -> None:
        if self.result is None or task.quota_group not in self.result:
            return
        for g in self.path(task.quota_group):
            add_into(self.used.setdefault(g, {}), task.req, sign)
        if not task.quota_preemptible:
            add_into(self.np_used.setdefault(task.quota_group, {}), task.req, sign)
            if sign > 0:
                self.protected.add(task.uid)  # placed past the min test this session

    def on_allocate(self, task: TaskState) -> None:
        self._move(task, 1)

    def on_deallocate(self, task: TaskState) -> None:
        self._move(task, -1)


def _first_over(amounts: Mapping[str, int], held: Mapping[str, int], limit: Mapping[str, int]) -> str | None:
    """The first resource in the order refusals name them (``sorted_resources``: cpu, memory, then by name; never
    pods) where ``held + amount`` exceeds a limit ``limit`` names; None when there is none, found without sorting:
    the gate is asked for every pod placed, and it nearly always lets it through."""
    if not any(r != "pods" and r in limit and held.get(r, 0) + v > limit[r] for r, v in amounts.items()):
        return None
    return next(r for r in sorted_resources(amounts) if r in limit and held.get(r, 0) + amounts[r] > limit[r])


def _less_used(limit: int, check: str, used: int, r: str, what: str = "used") -> str:
    """How an allocation gate's ``available`` was reached: ``13 runtime - 13 used`` (``max(0, …)`` below zero)."""
    text = f"{qty(limit, r)} {check} {MINUS} {qty(used, r)} {what}" if used else f"{qty(limit, r)} {check}"
    return text if used <= limit else f"max(0, {text})"
