"""``capacity``: elastic queues with deserved / capability / guarantee, flat or hierarchical (Volcano
``plugins/capacity``; seed 004; the math is ``engine.fairshare.capacity``, computed once when the session opens).

* Queue order, flat: higher priority first, then lower share, then a queue that has a deserved before a
  best-effort one. Hierarchical (``enableHierarchy``): priority, leaves before inner queues, then the shares along
  the queues' paths from the root, compared at the first level where the paths part (Volcano compares the two
  children of the lowest common ancestor and stops there on a tie; here a tie goes on to the next level, then to
  the name).
* No overused function (a capacity queue may borrow up to its realCapability; reclaim takes it back).
* Allocatable / job enqueueable: against realCapability, for the queue and (hierarchy) every ancestor.
* Preemptive: within realCapability and some requested resource still within deserved (``ancestorReclaimLevel``).
* Reclaimable: guarantee kept, immediate or exceeding victims only (``CapacityResult.reclaimable``).
* Victim queue order (hierarchy): victims from the queue sharing the deepest common ancestor with the
  reclaimer or preemptor come first: siblings before cousins (seed 004's story 4).
"""

from __future__ import annotations

import copy
from typing import Any

from engine.fairshare.capacity import CapacityResult, compute_capacity
from engine.fairshare.queues import QueueState, is_empty
from engine.session.framework import GateRefusal
from engine.session.plugins.proportion import QueueGates
from engine.session.policy import PluginOption
from engine.session.registry import register
from engine.session.session import Session, TaskState


@register
class CapacityPlugin(QueueGates):
    name = "capacity"

    def __init__(self, option: PluginOption, session: Session) -> None:
        super().__init__(option, session)
        opened = session.values.queues
        if isinstance(opened, CapacityResult) and opened.hierarchy == bool(option.hierarchy):
            # a copy: the session's allocations move this book, the values it opened with stay as they were
            self.book: CapacityResult = copy.deepcopy(opened)
        else:  # a second capacity entry with another enableHierarchy: its own book, from the same usages
            snap = session.snapshot
            self.book = compute_capacity(
                list(snap.queues.values()),
                session.job_usages(),
                snap.total_allocatable,
                hierarchy=option.hierarchy,
                ancestor_reclaim_level=session.policy.capacity_args().ancestor_reclaim_level,
            )
        session.warnings.extend(self.book.warnings)
        session.warnings.extend(f"capacity: {p}; no queue is scheduled" for p in self.book.problems)
        self._chains: dict[str, list[QueueState]] = {}

    def _chain(self, queue: str) -> list[QueueState]:
        chain = self._chains.get(queue)
        if chain is None:
            st = self.book.state(queue)
            chain = [st]
            if self.book.hierarchy:
                chain.extend(self.book.state(a) for a in reversed(st.ancestors))
            self._chains[queue] = chain
        return chain

    def allocatable(self, queue: str, task: TaskState) -> GateRefusal | None:
        # Fast path for the common "yes", the same test as CapacityResult.allocatable (a consistent tree, an Open
        # leaf, allocated + request <= realCapability on the queue and every ancestor); a "no" asks the book.
        book = self.book
        if book.ready_to_schedule and queue in book:
            chain = self._chain(queue)
            st = chain[0]
            if st.is_open and not (book.hierarchy and st.children):
                ok = True
                for node in chain:
                    allocated, limit = node.allocated, node.real_capability
                    for r, v in task.req.items():
                        if r != "pods" and allocated.get(r, 0) + v > limit.get(r, 0):
                            ok = False
                            break
                    if not ok:
                        break
                if ok:
                    return None
        return super().allocatable(queue, task)

    def _share_key(self, name: str) -> tuple[float, int]:
        st = self.book.state(name)
        return (st.share, 0 if not is_empty(st.deserved) else 1)

    def queue_order_key(self, queue: str) -> Any:
        if queue not in self.book:
            return (0,)
        st = self.book.state(queue)
        if not self.book.hierarchy:
            return (-st.spec.priority, *self._share_key(queue))
        if st.children:
            return (-st.spec.priority, 1, (self._share_key(queue),))
        path = (*st.ancestors[1:], queue)
        return (-st.spec.priority, 0, tuple(self._share_key(n) for n in path))

    def victim_queue_order(self, preemptor_queue: str, left: str, right: str) -> int:
        if not self.book.hierarchy or any(q not in self.book for q in (preemptor_queue, left, right)):
            return 0
        return self.book.victim_queue_order(preemptor_queue, left, right)
