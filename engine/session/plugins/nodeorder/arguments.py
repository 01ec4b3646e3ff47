"""``nodeorder`` plugin arguments (Volcano ``plugins/nodeorder``): the weights of its scores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.policy.arguments import declare, get_int

__all__ = ["NODEORDER", "NodeOrderWeights", "read_nodeorder_weights"]


@dataclass(frozen=True, slots=True)
class NodeOrderWeights:
    """``nodeorder`` plugin weights, with Volcano's defaults (``plugins/nodeorder/nodeorder.go``)."""

    least_requested: int = 1
    most_requested: int = 0
    node_affinity: int = 2
    pod_affinity: int = 2
    balanced_resource: int = 1
    taint_toleration: int = 3
    image_locality: int = 1
    pod_topology_spread: int = 2

    KEYS: ClassVar[dict[str, str]] = {
        "leastrequested.weight": "least_requested",
        "mostrequested.weight": "most_requested",
        "nodeaffinity.weight": "node_affinity",
        "podaffinity.weight": "pod_affinity",
        "balancedresource.weight": "balanced_resource",
        "tainttoleration.weight": "taint_toleration",
        "imagelocality.weight": "image_locality",
        "podtopologyspread.weight": "pod_topology_spread",
    }


def read_nodeorder_weights(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> NodeOrderWeights:
    if arguments is None:
        return NodeOrderWeights()
    defaults = NodeOrderWeights()
    values = {
        attr: get_int(arguments, key, getattr(defaults, attr), warnings, "nodeorder")
        for key, attr in NodeOrderWeights.KEYS.items()
    }
    return NodeOrderWeights(**values)


NODEORDER = declare("nodeorder", read_nodeorder_weights)
