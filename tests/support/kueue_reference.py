"""Kueue's quota arithmetic of one resource over a cohort tree, written plainly: a test oracle, never the product.

Per node (Kueue's ``resourceNode``, read at kubernetes-sigs/kueue ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/cache/scheduler/resource_node.go``; the code here is ours):

* ``local = max(0, subtree - lendingLimit)`` when the node has a lending limit, else 0: quota only its subtree sees;
* ``subtree = nominal + sum over children of (child subtree - child local)``: a parent's pool takes from each child
  only what the child may lend;
* usage: a ClusterQueue's usage is what its workloads hold; what passes a node's ``local`` counts in its parent;
* ``available`` (what one more workload in a node may take): the top of a tree has ``subtree - usage``; below it,
  ``max(0, local - usage)`` plus the parent's available, this last at most ``subtree - local - max(0, usage -
  local) + borrowingLimit`` where the node has a borrowing limit.

``admit`` places a workload the way Kueue's scheduler does when it fits (``request <= available``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


@dataclass
class KueueNode:
    """A Cohort (has children) or a ClusterQueue (a leaf): its parent, nominal quota and limits of one resource."""

    name: str
    parent: str | None
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    children: list[str] = field(default_factory=list)


class KueueTree:
    """A forest of Kueue nodes and their usage; amounts are plain integers of one resource."""

    def __init__(self, nodes: list[KueueNode], usage: Mapping[str, int] | None = None) -> None:
        self.nodes = {n.name: KueueNode(n.name, n.parent, n.nominal, n.borrowing_limit, n.lending_limit) for n in nodes}
        for n in nodes:
            if n.parent is not None:
                self.nodes[n.parent].children.append(n.name)
        self.subtree: dict[str, int] = {}
        for top in (n for n in nodes if n.parent is None):
            self._sum(top.name)
        self.usage = dict.fromkeys(self.nodes, 0)
        for leaf, amount in (usage or {}).items():
            self._add(leaf, amount)

    def _sum(self, name: str) -> int:
        node = self.nodes[name]
        total = node.nominal
        for child in node.children:
            total += self._sum(child) - self.local(child)
        self.subtree[name] = total
        return total

    def local(self, name: str) -> int:
        limit = self.nodes[name].lending_limit
        return 0 if limit is None else max(0, self.subtree[name] - limit)

    def _add(self, name: str, amount: int) -> None:
        free = max(0, self.local(name) - self.usage[name])
        self.usage[name] += amount
        parent = self.nodes[name].parent
        if parent is not None and amount > free:
            self._add(parent, amount - free)

    def available(self, name: str) -> int:
        node = self.nodes[name]
        if node.parent is None:
            return self.subtree[name] - self.usage[name]
        from_parent = self.available(node.parent)
        local = self.local(name)
        if node.borrowing_limit is not None:
            stored = self.subtree[name] - local
            used = max(0, self.usage[name] - local)
            from_parent = min(stored - used + node.borrowing_limit, from_parent)
        return max(0, local - self.usage[name]) + from_parent

    def admit(self, leaf: str, request: int) -> bool:
        """Kueue's admission of one workload of ``request`` in the ClusterQueue ``leaf``: whether it fits (then
        its usage is added)."""
        if request > self.available(leaf):
            return False
        self._add(leaf, request)
        return True

    def leaves(self) -> Iterator[str]:
        return (name for name, node in self.nodes.items() if not node.children)

    def subtree_nominal(self, name: str) -> int:
        """The nominal quota of a node and everything below it (Fairway's ``deserved`` of the node)."""
        node = self.nodes[name]
        return node.nominal + sum(self.subtree_nominal(c) for c in node.children)
