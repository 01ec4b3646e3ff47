"""``binpack``: pack pods onto the fullest nodes (Volcano ``plugins/binpack``).

For each resource the pod requests that has a weight (``binpack.cpu``, ``binpack.memory``,
``binpack.resources.<name>``; 1 by default): ``(used + request) * weight / allocatable``; a node where the pod
would not fit scores 0 altogether. The sum is divided by the weights' sum and scaled to 100 times
``binpack.weight``, as in Volcano.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from engine.policy.policy import PluginOption
from engine.session.framework import Plugin
from engine.session.plugins.binpack.arguments import BINPACK
from engine.session.plugins.nodeorder.plugin import MAX_NODE_SCORE
from engine.session.registry import register
from engine.session.session import NodeTable, Session

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@register
class BinpackPlugin(Plugin):
    name = "binpack"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        weights = session.policy.arguments_of(BINPACK)
        self.weight = weights.weight
        self.resource_weights = weights.resource_weights()
        col = session.nodes.col
        self._cols = [(col[name], w) for name, w in self.resource_weights.items() if name in col and name != "pods"]

    def node_scores(self, table: NodeTable, rows: Any, vec: I64) -> F64 | None:
        if not self.weight:
            return None
        score: F64 | None = None
        weight_sum = 0
        broken: npt.NDArray[np.bool_] | None = None
        for name, w in self.resource_weights.items():
            c = table.col.get(name)
            if c is None or name == "pods" or vec[c] <= 0:
                continue
            weight_sum += w
            if w == 0:
                continue
            cap = table.alloc[rows, c]
            final = cap - table.idle[rows, c] + vec[c]
            has = cap > 0
            over = has & (final > cap)
            part = np.where(has, final * w / np.where(has, cap, 1), 0.0)
            score = part if score is None else score + part
            broken = over if broken is None else broken | over
        if score is None or broken is None:
            return None
        if weight_sum:
            score = score / weight_sum
        out: F64 = np.where(broken, 0.0, score * (MAX_NODE_SCORE * self.weight))
        return out

    def node_score_one(self, alloc: list[int], idle: list[int], vec: list[int]) -> float | None:
        # the arithmetic of node_scores, operation for operation, on plain numbers
        if not self.weight:
            return None
        score: float | None = None
        weight_sum = 0
        broken = False
        for c, w in self._cols:
            if vec[c] <= 0:
                continue
            weight_sum += w
            if w == 0:
                continue
            cap = alloc[c]
            final = cap - idle[c] + vec[c]
            part = float(final * w) / float(cap) if cap > 0 else 0.0
            broken = broken or (cap > 0 and final > cap)
            score = part if score is None else score + part
        if score is None:
            return None
        if weight_sum:
            score = score / weight_sum
        return 0.0 if broken else score * (MAX_NODE_SCORE * self.weight)
