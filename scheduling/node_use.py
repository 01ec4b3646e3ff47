"""What the pods on nodes take of them, for the node API's ``allocated`` and ``reserved`` (the same words as the
nodes pages, ``frontend.presenters.nodes``):

* **allocated** — what the pods running on a node ask: ``Running``, and ``Releasing`` until they are gone;
* **reserved** — what pods placed on it but not running yet ask: ``Allocated``, ``Binding``, ``Bound`` and
  ``Pipelined``.

One query for any number of nodes (amounts in base units, summed per resource).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.vocabulary import PLACED_NOT_STARTED, STARTED_ON_NODE
from scheduling.models import Pod


@dataclass
class NodeTake:
    """What the pods on one node take of it (base units per resource)."""

    allocated: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)


def of_nodes(node_ids: Iterable[int]) -> dict[int, NodeTake]:
    """``node id -> NodeTake`` for each of ``node_ids`` (an empty one for a node without pods)."""
    out = {pk: NodeTake() for pk in node_ids}
    if not out:
        return out
    pods = Pod.objects.filter(node_id__in=list(out), status__in=STARTED_ON_NODE + PLACED_NOT_STARTED)
    for node_id, status, request in pods.values_list("node_id", "status", "request").iterator():
        take = out[node_id]
        into = take.allocated if status in STARTED_ON_NODE else take.reserved
        for resource, amount in (request or {}).items():
            if isinstance(amount, int):
                into[resource] = into.get(resource, 0) + amount
    return out
