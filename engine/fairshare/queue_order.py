"""Which queue is served first, and which gives back first: the queue order of each queue policy (Volcano's
QueueOrderFn) and the capacity policy's victim queue order (its VictimQueueOrderFn), written once here; the policies'
books (``proportion``, ``capacity``) answer through these, and the session combines the plugins' answers in tier
order (``docs/rules/which-queue-first.md``).

* **proportion**: higher priority first, then the lower share, then (fairness over time) the lower past-usage ratio.
* **capacity**: a ``QueueOrderKey``: higher priority first; in a hierarchy leaves before inner queues; then the
  shares along the two queues' paths compared at the first step where they part (lower share, a queue with a
  deserved before a best-effort one, less past usage); nothing after that step counts, so a tie there is a tie.
* **victims** (capacity): a lender short of its lending-limit reserve takes back first from the queues holding
  more than their realCapability on what it is short of; then, in a hierarchy, from the queue sharing the deeper
  common ancestor with the reclaimer (siblings before cousins).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from engine.amounts import is_empty

if TYPE_CHECKING:
    from engine.fairshare.queues import QueueAccount

__all__ = [
    "QueueOrderKey",
    "Step",
    "capacity_order_key",
    "common_level",
    "order_step",
    "proportion_compare",
    "victim_order",
]

# one step of a capacity path: (queue, share, 1 when best effort, past-usage ratio)
Step = tuple[str, float, int, float]


class QueueOrderKey:
    """The capacity policy's queue order as a sort key.

    ``head`` is compared first: the negated queue priority and, in a hierarchy, 0 for a leaf and 1 for an inner
    queue. Then the two paths of ``(queue, share, best effort, past ratio)`` steps are compared at the first step
    where they name different queues; nothing after that step counts. Two keys that tie there are equal, as
    Volcano's comparison returns 0 (the session then orders such queues by name).

    Built from the shares of one moment: a key taken before an allocation does not follow it.
    """

    __slots__ = ("head", "path")

    def __init__(self, head: tuple[int, ...], path: tuple[Step, ...]) -> None:
        self.head = head
        self.path = path

    # ``__eq__`` and ``__lt__`` each walk the two paths to the first step naming different queues, written out in
    # both (no shared helper): a heap compares keys with one then the other, hundreds of thousands of times a day
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueueOrderKey):
            return NotImplemented
        if self.head != other.head:
            return False
        for mine, theirs in zip(self.path, other.path, strict=False):
            if mine[0] != theirs[0]:
                return mine[1:] == theirs[1:]
        return True

    def __lt__(self, other: QueueOrderKey) -> bool:
        if self.head != other.head:
            return self.head < other.head
        for mine, theirs in zip(self.path, other.path, strict=False):
            if mine[0] != theirs[0]:
                return mine[1:] < theirs[1:]
        return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"QueueOrderKey({self.head!r}, {self.path!r})"


def proportion_compare(left: QueueAccount, right: QueueAccount, past_ratio: Callable[[str], Fraction]) -> int:
    """Negative when ``left`` goes first under proportion, 0 when it has no preference."""
    if left.spec.priority != right.spec.priority:
        return right.spec.priority - left.spec.priority
    if left.share == right.share:
        # fairness over time (off: every ratio is 1): less past usage first
        lr, rr = past_ratio(left.name), past_ratio(right.name)
        return 0 if lr == rr else (-1 if lr < rr else 1)
    return -1 if left.share < right.share else 1


def order_step(st: QueueAccount, past_ratio: Callable[[str], Fraction]) -> Step:
    """One queue's step of a capacity path, from its current share."""
    return (st.name, st.share, 1 if is_empty(st.deserved) else 0, float(past_ratio(st.name)))


def capacity_order_key(
    st: QueueAccount | None,
    path: tuple[QueueAccount, ...],
    *,
    hierarchy: bool,
    past_ratio: Callable[[str], Fraction],
    step: Callable[[QueueAccount], Step] | None = None,
) -> QueueOrderKey:
    """``st``'s key under capacity. Flat, and for an inner queue of a hierarchy, the path is the queue alone; for a
    leaf of a hierarchy ``path`` runs from the level below root down to the leaf, so two leaves are compared through
    the children of their lowest common ancestor that lie on their paths. ``step``: a queue's step as
    ``order_step`` gives it (a book passes its kept steps; by default each is computed)."""
    if st is None:
        return QueueOrderKey((0,), ())
    if step is None:
        step = functools.partial(order_step, past_ratio=past_ratio)
    if not hierarchy:
        return QueueOrderKey((-st.spec.priority,), (step(st),))
    if st.children:
        return QueueOrderKey((-st.spec.priority, 1), (step(st),))
    return QueueOrderKey((-st.spec.priority, 0), tuple(step(s) for s in path))


def common_level(a: QueueAccount, b: QueueAccount) -> int:
    """Volcano's ``getQueueLevel``: the index (in the root-first ancestor lists) of the deepest common ancestor;
    compares ancestors only, not the queues themselves."""
    level = 0
    for i in range(min(len(a.ancestors), len(b.ancestors))):
        if a.ancestors[i] != b.ancestors[i]:
            return level
        level = i
    return level


def victim_order(
    preemptor: QueueAccount,
    left: QueueAccount,
    right: QueueAccount,
    *,
    hierarchy: bool,
    beyond: Callable[[str], bool] | None,
) -> int:
    """Negative when victims come from ``left`` before ``right`` for ``preemptor`` under capacity. ``beyond``: when
    the preemptor is short of its lending-limit reserve, whether a queue holds more than its realCapability on a
    resource it is short of (None when it is not short)."""
    if beyond is not None:
        lb, rb = beyond(left.name), beyond(right.name)
        if lb != rb:
            return -1 if lb else 1
    if not hierarchy:
        return 0
    llevel, rlevel = common_level(left, preemptor), common_level(right, preemptor)
    if llevel == rlevel:
        return 0
    return -1 if llevel > rlevel else 1
