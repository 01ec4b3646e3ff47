"""``conformance``: never evict critical pods (Volcano ``plugins/conformance``).

Pods of the ``system-cluster-critical`` or ``system-node-critical`` priority classes, and every pod of the
``kube-system`` namespace, are never victims of reclaim or preemption; every other pod is. Like Volcano, the
plugin always votes (it never abstains), so in a tier above the quota plugins its list alone decides.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from engine.session.framework import Plugin, VictimTest
from engine.session.registry import register
from engine.session.session import TaskState


def _critical(task: TaskState) -> Hashable:
    return task.critical


def _not_critical(task: TaskState) -> bool:
    return not task.critical


@register
class ConformancePlugin(Plugin):
    name = "conformance"

    def _evictable(self, evictees: Sequence[TaskState]) -> list[TaskState]:
        return [t for t in evictees if not t.critical]

    def reclaimable(self, reclaimer: TaskState, reclaimees: Sequence[TaskState]) -> list[TaskState] | None:
        return self._evictable(reclaimees)

    def preemptable(self, preemptor: TaskState, preemptees: Sequence[TaskState]) -> list[TaskState] | None:
        return self._evictable(preemptees)

    def victim_bound(self, hook: str, preemptor: TaskState) -> VictimTest | None:
        return ("conformance",), _not_critical

    def victim_class(self, hook: str) -> Callable[[TaskState], Hashable] | None:
        return _critical
