"""``predicates``: the node filters besides resources (Volcano ``plugins/predicates``, kube-scheduler's filters).

A node passes when it is not cordoned (``spec.unschedulable``), its labels match the pod's ``nodeSelector``, it
passes the pod's required node affinity (``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``,
kube-scheduler's ``NodeAffinity`` filter: ``engine.session.affinity``), and the pod tolerates each of its
``NoSchedule`` / ``NoExecute`` taints (``PreferNoSchedule`` never blocks). The preferred node affinity is not read.
Not-ready nodes are never used (Volcano leaves them out of the session). Resource fit (the task's request
against a node's idle and future idle, and the pod count when nodes declare ``pods``) is checked by the session
for every placement, as Volcano's allocate does, whether this plugin is enabled or not.

Masks are computed once per (node selector, tolerations, node affinity) signature, vectorised over the nodes: one
label column per selector or affinity key, one tolerance check per distinct set of taints; a pod without an affinity
adds nothing to its mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from engine.objects import NodeInfo, Taint, Toleration
from engine.policy.policy import PluginOption
from engine.session.affinity import affinity_mask
from engine.session.framework import Plugin
from engine.session.registry import register
from engine.session.session import NodeTable, Session

_BLOCKING = ("NoSchedule", "NoExecute")


def tolerated(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> bool:
    """Every blocking taint is tolerated by some toleration (kube-scheduler ``TaintToleration`` filter)."""
    return all(any(tol.tolerates(t) for tol in tolerations) for t in taints if t.effect in _BLOCKING)


_TaintGroups = list[tuple[tuple[Taint, ...], npt.NDArray[np.int64]]]


def _node_filters(infos: list[NodeInfo]) -> tuple[npt.NDArray[np.bool_], _TaintGroups]:
    """The cordoned rows, and the rows of each set of blocking taints (read only)."""
    cordoned = np.array([n.unschedulable for n in infos], dtype=np.bool_)
    groups: dict[tuple[Taint, ...], list[int]] = {}
    for i, n in enumerate(infos):
        blocking = tuple(t for t in n.taints if t.effect in _BLOCKING)
        groups.setdefault(blocking, []).append(i)
    return cordoned, [(taints, np.asarray(rows, dtype=np.int64)) for taints, rows in groups.items()]


@register
class PredicatesPlugin(Plugin):
    name = "predicates"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        # made once per node table: a session opened on a kept table (``SessionCarry``) reads the kept ones
        self._cordoned, self._taint_groups = session.nodes.derived("predicates", _node_filters)

    def node_predicate(self, table: NodeTable, signature: Any) -> npt.NDArray[np.bool_]:
        selector, tolerations, affinity = signature
        mask: npt.NDArray[np.bool_] = ~self._cordoned
        for key, value in selector:
            mask &= table.label_column(key) == value
        if affinity:
            mask &= affinity_mask(table, affinity)
        for taints, rows in self._taint_groups:
            if taints and not tolerated(taints, tolerations):
                mask[rows] = False
        return mask
