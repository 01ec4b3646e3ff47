"""``elasticquota``: Koordinator's elastic quota groups inside the session (koordinator.md section 7, seed 001).

The runtimes are computed once when the session opens (``quotas.fairshare.elastic.compute_runtimes``, with the
plugin's ``enableMinQuotaScale``); the session then keeps each group's ``used`` current as it places and evicts
pods (a group's used includes its subtree's, as Koordinator aggregates it).

* Allocatable (Koordinator's PreFilter): a pod of group ``g`` fits when ``used(g) + request <= runtime(g)`` on
  the resources the runtime names (``max(g)`` instead when ``enableRuntimeQuota`` is false); a non-preemptible
  pod (label ``quota.scheduling.koordinator.sh/preemptible: "false"``) also needs ``non-preemptible used +
  request <= min(g)``; with ``enableCheckParentQuota`` every ancestor below the tree root must pass the first
  test as well. Resources the limit does not name are not governed.
* Preemptable (Koordinator's ``SelectVictimsOnNode``): only pods of the *same* quota group, of strictly lower
  priority, never non-preemptible ones, and not in the default group while ``disableDefaultQuotaPreemption``.
  Whether the evictions make room within the runtime is the allocatable test above, which the preempt action
  re-runs after each eviction (``existUsed - preempted + preemptor <= runtime``).
* No cross-group reclaim: borrowed quota is taken back by the revoke pass (``scheduling.engine.recycle``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quotas.fairshare.elastic import DEFAULT_GROUP, ElasticResult
from scheduling.engine.framework import GateRefusal, Plugin
from scheduling.engine.plugins.proportion import sorted_resources
from scheduling.engine.policy import PluginOption
from scheduling.engine.session import Session, TaskState, add_into
from scheduling.engine.snapshot import ALLOCATED_STATUSES


class ElasticQuotaPlugin(Plugin):
    name = "elasticquota"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        self.args = session.snapshot.effective_elastic_quota_args()
        self.result: ElasticResult | None = session.elastic
        self.used: dict[str, dict[str, int]] = {}
        self.np_used: dict[str, dict[str, int]] = {}
        self._paths: dict[str, list[str]] = {}
        if self.result is None:
            return
        for name in self.result:
            self.used[name] = dict(self.result[name].used)
        for t in session.tasks.values():
            if t.status in ALLOCATED_STATUSES and not t.quota_preemptible:
                add_into(self.np_used.setdefault(t.quota_group, {}), t.req)

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
        return spec.max if spec is not None else {}

    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        result = self.result
        g = task.quota_group
        if result is None or g not in result:
            return None
        limit = self._limit(g)
        used = self.used.get(g, {})
        check = "runtime" if self.args.enable_runtime_quota else "max"
        for r in sorted_resources(task.req):
            if r in limit and used.get(r, 0) + task.req[r] > limit[r]:
                return GateRefusal("quota", g, check, r, task.req[r], max(0, limit[r] - used.get(r, 0)))
        if not task.quota_preemptible:
            spec = self.session.quota_spec(g)
            if spec is not None:
                np_used = self.np_used.get(g, {})
                for r in sorted_resources(task.req):
                    if r in spec.min and np_used.get(r, 0) + task.req[r] > spec.min[r]:
                        return GateRefusal(
                            "quota",
                            g,
                            "min",
                            r,
                            task.req[r],
                            max(0, spec.min[r] - np_used.get(r, 0)),
                            message="non-preemptible pods are held to the group's min",
                        )
        if self.args.enable_check_parent_quota:
            masked = {r: v for r, v in task.req.items() if r in limit}
            for ancestor in self.path(g)[1:]:
                if result.parent(ancestor) is None:
                    break  # the tree root is not checked
                runtime = result[ancestor].runtime
                a_used = self.used.get(ancestor, {})
                for r in sorted_resources(masked):
                    if r in runtime and a_used.get(r, 0) + masked[r] > runtime[r]:
                        return GateRefusal(
                            "quota",
                            ancestor,
                            "runtime",
                            r,
                            masked[r],
                            max(0, runtime[r] - a_used.get(r, 0)),
                            message=f"parent of quota group {g} (enableCheckParentQuota)",
                        )
        return None

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        g = preemptor.quota_group
        if self.args.disable_default_quota_preemption and g == DEFAULT_GROUP:
            return []
        return [t for t in preemptees if t.quota_group == g and t.priority < preemptor.priority and t.quota_preemptible]

    def _move(self, task: TaskState, sign: int) -> None:
        if self.result is None or task.quota_group not in self.result:
            return
        for g in self.path(task.quota_group):
            add_into(self.used.setdefault(g, {}), task.req, sign)
        if not task.quota_preemptible:
            add_into(self.np_used.setdefault(task.quota_group, {}), task.req, sign)

    def on_allocate(self, task: TaskState) -> None:
        self._move(task, 1)

    def on_deallocate(self, task: TaskState) -> None:
        self._move(task, -1)
