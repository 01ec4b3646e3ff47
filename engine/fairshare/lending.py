"""When a quota group may lend, and how much (Koordinator's elastic quota, with Kueue's lending limit).

Per resource, within each sibling set of a quota tree:

* a group **lends** when it allows it (``allow_lent``, Koordinator's ``allow-lent-resource``) or is a tree root
  (which has no sibling to keep anything from): :func:`lends`;
* a group that does not lend asks for its **whole min** (``request = max(child request, min)``), so its runtime keeps
  it; a lender asks its pods' request and leaves the rest of its min to the hungry siblings, except what its
  **lending limit** keeps, ``keep = (min - limit)+``: :func:`request_floor`, :func:`kept`;
* **lent** is what the borrowers take beyond the parent's *unreserved* capacity (``parent runtime - sum of the
  children's auto-scaled mins``): ``min((sum borrowed - unreserved)+, sum unused)``, out of the lenders' *unused* min
  (``(auto-scaled min - used)+``, at most their lending limit; 0 for a group that does not lend), split among them by
  largest remainder in proportion to it: :func:`lend_and_borrow` (one sibling set, exact Python ints) and
  :func:`lend_and_borrow_sets` (every sibling set of a tree level at once, the engine's path). So ``sum lent <= sum
  borrowed`` in every sibling set and no group lends more than it leaves unused.

What a group could lend *now* (metrics, pages, audit) is ``engine.lending``'s; the runtime these feed is
``engine.fairshare.elastic``'s; the rule's page is docs/rules/quota-group-lending.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engine.fairshare import _elastic_kernel as kern
from engine.fairshare.elastic_sets import hamilton
from engine.objects import QuotaGroupSpec

__all__ = ["kept", "lend_and_borrow", "lend_and_borrow_sets", "lends", "request_floor"]

I64 = npt.NDArray[np.int64]
BOOL = npt.NDArray[np.bool_]


def lends(group: QuotaGroupSpec) -> bool:
    """Whether ``group`` lends the part of its min its pods do not ask for."""
    return group.allow_lent or group.parent is None


def kept(min_amount: int, lending_limit: int) -> int:
    """What a lending limit keeps of a lender's min, asked or not: ``(min - limit)+``."""
    return max(0, min_amount - lending_limit)


def request_floor(child_request: I64, keep: I64, mins: I64, lend: BOOL) -> I64:
    """A group's request from its child request: at least what its lending limit keeps when it lends, its whole
    min when it does not (arrays broadcast: one column per group, one row per resource)."""
    return np.maximum(child_request, np.where(lend, keep, mins))


def lend_and_borrow(
    total: int,
    auto_mins: Sequence[int],
    used: Sequence[int],
    lends: Sequence[bool],
    caps: Sequence[int] | None = None,
) -> tuple[list[int], list[int]]:
    """Borrowed and lent amounts of one sibling set, one resource; ``caps``: the lending limits (none: unlimited)."""
    borrowed = [max(0, u - m) for u, m in zip(used, auto_mins, strict=True)]
    unused = [max(0, m - u) if lend else 0 for u, m, lend in zip(used, auto_mins, lends, strict=True)]
    if caps is not None:
        unused = [min(x, c) for x, c in zip(unused, caps, strict=True)]
    unreserved = max(0, total - sum(auto_mins))
    consumed = min(max(0, sum(borrowed) - unreserved), sum(unused))
    return borrowed, hamilton(consumed, unused)


def lend_and_borrow_sets(
    total: I64, auto_mins: I64, used: I64, lends: BOOL, seg: I64, starts: I64, counts: I64, caps: I64 | None = None
) -> tuple[I64, I64]:
    """:func:`lend_and_borrow` for every sibling set of a level at once (segments as in ``_elastic_kernel``); a set
    whose sums may pass int64 is computed exactly by the one-set function."""
    borrowed = np.maximum(used - auto_mins, 0)
    unused = np.where(lends, np.maximum(auto_mins - used, 0), 0)
    if caps is not None:
        unused = np.minimum(unused, caps)
    lent = np.zeros(used.shape, np.int64)
    b_sum, b_big = kern.segsum(borrowed, starts, counts)
    u_sum, u_big = kern.segsum(unused, starts, counts)
    m_sum, m_big = kern.segsum(auto_mins, starts, counts)
    unreserved = np.maximum(total - m_sum, 0)
    consumed = np.minimum(np.maximum(b_sum - unreserved, 0), u_sum)
    slow = b_big | u_big | m_big  # a sum may be saturated: redo those sets exactly
    for j in np.flatnonzero(slow):
        a, k = int(starts[j]), int(counts[j])
        _, part = lend_and_borrow(
            int(total[j]),
            [int(v) for v in auto_mins[a : a + k]],
            [int(v) for v in used[a : a + k]],
            [bool(v) for v in lends[a : a + k]],
            None if caps is None else [int(v) for v in caps[a : a + k]],
        )
        lent[a : a + k] = part
    need = (consumed > 0) & ~slow
    idx = np.flatnonzero(need[seg] & (unused > 0))
    if idx.size:
        s = seg[idx]
        st = kern.run_starts(s)
        cn = kern.counts_of(st, idx.size)
        lent[idx] = kern.hamilton(consumed[s[st]], unused[idx], st, cn)
    return borrowed, lent
