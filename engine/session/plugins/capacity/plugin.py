"""``capacity``: elastic queues with deserved / capability / guarantee, flat or hierarchical (Volcano
``plugins/capacity``; seed 004; the math is ``engine.fairshare.capacity``, computed once when the session opens).

* Queue order, flat: higher priority first, then lower share, then a queue that has a deserved before a
  best-effort one. Hierarchical (``enableHierarchy``): priority, leaves before inner queues, then the shares along
  the queues' paths from the root, compared only at the first level where the paths part: the two children of
  the lowest common ancestor, as Volcano does; a tie there is a tie, which the session breaks by name
  (``CapacityResult.queue_order_key``, the one implementation the book's ``compare_queues`` uses too).
* No overused function (a capacity queue may borrow up to its realCapability; reclaim takes it back).
* Allocatable / job enqueueable: against realCapability, for the queue and (hierarchy) every ancestor.
* Preemptive: within realCapability and some requested resource still within deserved (``ancestorReclaimLevel``).
* Reclaimable: guarantee kept, immediate or exceeding victims only (``CapacityResult.reclaimable``).
* Victim queue order: a reclaimer short of its lending-limit reserve takes first from the queues holding beyond their
  realCapability (the part lent beyond its lending limit); then (hierarchy) victims from the queue sharing the
  deepest common ancestor with the reclaimer or preemptor come first: siblings before cousins (seed 004's story 4).
"""

from __future__ import annotations

import copy

from engine.fairshare.capacity import CapacityResult
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.queue_order import QueueOrderKey
from engine.policy.policy import PluginOption
from engine.session.plugins.capacity.arguments import CAPACITY
from engine.session.plugins.proportion.plugin import QueueGates
from engine.session.registry import register
from engine.session.session import Session


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
                ancestor_reclaim_level=session.policy.arguments_of(CAPACITY).ancestor_reclaim_level,
            )
        session.warnings.extend(self.book.warnings)
        session.warnings.extend(f"capacity: {p}; no queue is scheduled" for p in self.book.problems)

    def queue_order_key(self, queue: str) -> QueueOrderKey:
        return self.book.queue_order_key(queue)

    def victim_queue_order(self, preemptor_queue: str, left: str, right: str) -> int:
        if any(q not in self.book for q in (preemptor_queue, left, right)):
            return 0
        return self.book.victim_queue_order(preemptor_queue, left, right)
