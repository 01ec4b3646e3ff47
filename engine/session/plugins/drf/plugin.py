"""``drf``: dominant-resource fairness between jobs, and seed 000's namespace fair share (Volcano ``plugins/drf``).

* Job order: lower dominant share first, ``share = max over the cluster's resources of allocated / total``
  (allocated includes pipelined pods, as drf's event handlers count them).
* Namespace order (``enableNamespaceOrder``, off unless set; Volcano removed it in v1.8): lower weighted share
  first, ``namespace-wide dominant share / namespace weight`` (``engine.fairshare.namespace``). With it the
  allocate action picks a namespace first, then that namespace's best queue, then a job (seed 000).
* Preemptable: with namespace order on, seed 000's rule first (a pod of a namespace that would stay richer than
  the preemptor's after the move is a victim; a poorer one is protected; ties and pods of the same namespace
  go on), then job DRF on the rest: a victim when the preemptor job's share after the move is below the
  victim job's share after it, or within 1e-6 (``drf_preemptable``).
* ``enableHierarchy`` (hierarchical DRF over the ``volcano.sh/hierarchy`` annotations) is not provided: the
  plugin works as plain drf and the session says so in its warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.amounts import dominant_share
from engine.fairshare.namespace import drf_preemptable, namespace_share
from engine.policy.policy import PluginOption
from engine.session.framework import Plugin
from engine.session.registry import register
from engine.session.session import JobState, Session, TaskState


@register
class DrfPlugin(Plugin):
    name = "drf"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        self.total = session.total
        self._weights: dict[str, int] = {}
        if option.hierarchy:
            session.warnings.append(
                "drf: enableHierarchy (hierarchical DRF) is not provided by Fairway's engine; drf works without it"
            )

    def weight(self, namespace: str) -> int:
        w = self._weights.get(namespace)
        if w is None:
            w = self._weights[namespace] = self.session.snapshot.namespace(namespace).weight
        return w

    def job_order_key(self, job: JobState) -> float:
        return dominant_share(job.allocated, self.total)[1]

    def namespace_order_key(self, namespace: str) -> float:
        return namespace_share(self.session.ns_allocated.get(namespace, {}), self.total, self.weight(namespace))

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        if preemptor.pg is None:
            return []
        jobs: dict[str, Mapping[str, int]] = {preemptor.job: preemptor.pg.allocated}
        for t in preemptees:
            if t.pg is not None:
                jobs[t.job] = t.pg.allocated
        candidates = [t for t in preemptees if t.pg is not None]
        weights = {t.namespace: self.weight(t.namespace) for t in (preemptor, *candidates)}
        return drf_preemptable(
            preemptor,
            candidates,
            self.session.ns_allocated,
            jobs,
            weights,
            self.total,
            namespace_order_enabled=self.option.namespace_order,
        )
