"""Plain-Python steps of the elastic-quota engine for one sibling set and one resource, on Python ints.

The vectorised kernels (``_elastic_kernel.py``) call these for the rare sibling sets whose numbers could
overflow int64, and ``explain`` replays a sibling set with :func:`waterfill` to show the rounds. See
``elastic.py`` for the model; the whole-forest reference the tests compare the engine with is
``tests/support/elastic_reference.py``.

Sibling lists are always given in name order (ascending), which is the Hamilton tie-break order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.fairshare.waterfill import hamilton as waterfill_hamilton
from engine.resources import UNLIMITED_INT64

# -- units of the split -----------------------------------------------------------------------------------------


def in_units(amount: int, unit: int) -> int:
    """``amount`` base units in whole units of ``unit`` base units, rounded up (Kubernetes' ``Quantity.Value()``)."""
    return -(-amount // unit)


def from_units(amount: int, unit: int) -> int:
    """Whole units back to base units, saturated at 2**63-1 like every sum of the engine."""
    return min(amount * unit, UNLIMITED_INT64)


def round_up(amount: int, unit: int) -> int:
    """``amount`` rounded up to a multiple of ``unit``."""
    return in_units(amount, unit) * unit


# -- one sibling set, one resource ----------------------------------------------------------------------------


def hamilton(pool: int, weights: Sequence[int]) -> list[int]:
    """Split ``pool`` in proportion to ``weights`` by largest remainder; ties go to the earlier index (name order).

    Entries with a weight <= 0 receive nothing, and a pool <= 0 gives zeros: the engine's one Hamilton rounding
    (:func:`engine.fairshare.waterfill.hamilton`) on the clamped values.
    """
    return waterfill_hamilton(max(pool, 0), [max(w, 0) for w in weights])


def scale_mins(available: int, mins: Sequence[int], exempt: Sequence[bool]) -> list[int]:
    """Koordinator's min scaling for one resource of one sibling set (exact integer floor).

    When ``available`` < sum of mins, exempt groups keep their min and the others share what is left,
    ``floor((available - exempt sum) * min / non-exempt sum)``; otherwise every min is kept.
    """
    total = sum(mins)
    if available >= total:
        return list(mins)
    exempt_sum = sum(m for m, e in zip(mins, exempt, strict=True) if e)
    enabled_sum = total - exempt_sum
    left = available - exempt_sum
    out = []
    for m, e in zip(mins, exempt, strict=True):
        if e:
            out.append(m)
        elif left <= 0 or enabled_sum <= 0:
            out.append(0)
        else:
            out.append(left * m // enabled_sum)
    return out


@dataclass
class Round:
    """One water-filling round of one sibling set (for explanations)."""

    pool: int
    total_weight: int
    shares: dict[int, int] = field(default_factory=dict)  # index -> amount received
    capped: list[int] = field(default_factory=list)  # indexes that reached their limited request
    spill: int = 0


@dataclass
class Trace:
    """What :func:`waterfill` did, when asked to record it."""

    initial_pool: int = 0
    rounds: list[Round] = field(default_factory=list)
    leftover: int = 0


def waterfill(
    total: int,
    floors: Sequence[int],
    requests: Sequence[int],
    weights: Sequence[int],
    lends: Sequence[bool],
    trace: Trace | None = None,
) -> list[int]:
    """Koordinator's runtime distribution of ``total`` among one sibling set, one resource.

    A child asking more than its floor starts at the floor and is hungry; a lender asking less gets its request;
    a non-lender keeps its floor. What is left is shared by shared-weight among the hungry in rounds (Hamilton
    rounding), each capped at its (limited) request, until the pool or the hungry run out.
    """
    runtime: list[int] = []
    hungry: list[int] = []
    for i, (f, q, lend) in enumerate(zip(floors, requests, lends, strict=True)):
        if q > f:
            runtime.append(f)
            hungry.append(i)
        else:
            runtime.append(q if lend else f)
    pool = total - sum(runtime)
    if trace is not None:
        trace.initial_pool = pool
    active = [i for i in hungry if weights[i] > 0]
    while pool > 0 and active:
        shares = hamilton(pool, [weights[i] for i in active])
        spill = 0
        still: list[int] = []
        rnd = Round(pool=pool, total_weight=sum(weights[i] for i in active))
        for i, d in zip(active, shares, strict=True):
            rnd.shares[i] = d
            runtime[i] += d
            if runtime[i] < requests[i]:
                still.append(i)
            else:
                spill += runtime[i] - requests[i]
                runtime[i] = requests[i]
                rnd.capped.append(i)
        rnd.spill = spill
        if trace is not None:
            trace.rounds.append(rnd)
        pool, active = spill, still
    if trace is not None:
        trace.leftover = total - sum(runtime)
    return runtime
