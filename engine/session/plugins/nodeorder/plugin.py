"""``nodeorder``: kube-scheduler's resource scores, weighted (Volcano ``plugins/nodeorder``).

For a node with allocatable ``cap`` that already holds ``used`` and a pod requesting ``req`` (cpu and memory,
each weighted 1, as kube-scheduler's defaults):

* least allocated: ``(cap - (used + req)) * 100 // cap`` per resource (0 when the pod does not fit or the node
  has none), averaged with integer division: spreads pods (``leastrequested.weight``, default 1);
* most allocated: ``(used + req) * 100 // cap``, the same way: packs pods (``mostrequested.weight``, default 0);
* balanced allocation: ``int((1 - |f_cpu - f_mem| / 2) * 100)`` with ``f = min(1, (used + req) / cap)``
  (``balancedresource.weight``, default 1).

The node's score is the weighted sum, as Volcano adds the plugin scores. Affinity, topology spread and image
locality scores are constant for the pods Fairway models and are left out. ``pods`` never enters the scores.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.policy.policy import PluginOption
from engine.session.framework import Plugin
from engine.session.plugins.nodeorder.arguments import NODEORDER
from engine.session.registry import register
from engine.session.session import NodeTable, Session, rows_of

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
MAX_NODE_SCORE = 100


def _column_sum(parts: I64) -> I64:
    """The sum of the rows of a (resources, nodes) array, added one by one."""
    total: I64 = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


@register
class NodeOrderPlugin(Plugin):
    name = "nodeorder"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        self.weights = session.policy.arguments_of(NODEORDER)
        col = session.nodes.col
        self._cols = [col[name] for name in ("cpu", "memory") if name in col]

    def node_scores(self, table: NodeTable, rows: Any, vec: I64) -> F64 | None:
        # cpu and memory as the two rows of one (2, nodes) array, so each step is one array operation for both
        # (the search rescores a few dozen nodes at a time and pays more per operation than per node), and the sums
        # over the two added row by row (a reduction along a short axis costs more than the arithmetic)
        w = self.weights
        if not (w.least_requested or w.most_requested or w.balanced_resource) or not self._cols:
            return None
        cols = self._cols
        cap = rows_of(table.alloc, rows)[:, cols].T
        req = cap - rows_of(table.idle, rows)[:, cols].T + vec[cols, None]
        count = cap.shape[1]
        total: F64 = np.zeros(count, dtype=np.float64)
        has = cap > 0
        safe = np.where(has, cap, 1)
        if w.least_requested or w.most_requested:
            ok = has & (req <= cap)
            # kube-scheduler divides by the weight sum of the resources it scores (cpu and memory, 1 each)
            divisor = 2
            if w.least_requested:
                least = _column_sum(np.where(ok, (cap - req) * MAX_NODE_SCORE // safe, 0))
                total += (least // divisor).astype(np.float64) * w.least_requested
            if w.most_requested:
                most = _column_sum(np.where(ok, req * MAX_NODE_SCORE // safe, 0))
                total += (most // divisor).astype(np.float64) * w.most_requested
        if w.balanced_resource:
            if len(cols) == 2:
                fractions = np.minimum(req / safe, 1.0)
                std = np.where(has[0] & has[1], np.abs(fractions[0] - fractions[1]) / 2, 0.0)
            else:
                std = np.zeros(count, dtype=np.float64)
            balanced = np.floor((1.0 - std) * MAX_NODE_SCORE)
            total += balanced * w.balanced_resource
        return total

    def node_score_one(self, alloc: list[int], idle: list[int], vec: list[int]) -> float | None:
        # the arithmetic of node_scores, operation for operation, on plain numbers
        w = self.weights
        if not (w.least_requested or w.most_requested or w.balanced_resource) or not self._cols:
            return None
        pairs = [(alloc[c], alloc[c] - idle[c] + vec[c]) for c in self._cols]
        total = 0.0
        if w.least_requested or w.most_requested:
            least = most = 0
            for cap, req in pairs:
                if cap > 0 and req <= cap:
                    least += (cap - req) * MAX_NODE_SCORE // cap
                    most += req * MAX_NODE_SCORE // cap
            if w.least_requested:
                total += float(least // 2) * w.least_requested
            if w.most_requested:
                total += float(most // 2) * w.most_requested
        if w.balanced_resource:
            fractions = [min(float(req) / float(cap if cap > 0 else 1), 1.0) for cap, req in pairs]
            std = 0.0
            if len(fractions) == 2 and pairs[0][0] > 0 and pairs[1][0] > 0:
                std = abs(fractions[0] - fractions[1]) / 2
            total += float(math.floor((1.0 - std) * MAX_NODE_SCORE)) * w.balanced_resource
        return total
