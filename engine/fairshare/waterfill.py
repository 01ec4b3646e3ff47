"""Weighted water-filling over exact integers, and largest-remainder (Hamilton) apportionment.

The model
---------
An integer ``amount`` of one resource is shared among claimants, each with a ``weight`` (>= 0), an optional
``cap`` (the most it may receive: its request, its real capability, ...) and a ``floor`` (the least it is
held at: its guarantee). The result is the classic *water level*: there is a level ``L`` (amount per unit of
weight) such that every claimant receives ``clamp(L * weight, floor, max(cap, floor))`` and, unless every
claimant is capped, the values add up to ``amount``. A floor wins over a cap (a guarantee is honoured even
above the request), and when the floors alone exceed the amount every claimant is simply held at its floor.

It is computed in rounds, the way Volcano's proportion plugin distributes a cluster among queues: in each round
the budget still to share is split by weight among the claimants that are still open; if the split would push
some of them past their cap, those are settled at their cap and leave (their unused part goes back to the
others); if it would leave some of them under their floor, those are settled at their floor and leave. A round
settles at least one claimant, so there are at most ``len(claimants)`` rounds. Comparisons against the level
are made on exact rationals (cross-multiplied integers), so nothing is lost to floating point.

Volcano differences, on purpose:

* Volcano adds ``remaining * weight / total_weight`` to each queue in float64 and stops when the remainder is
  below its 0.1 epsilon; the rounds converge to the level above, which is computed here exactly. Where the
  split has fractions, the open claimants of the last round receive their share by largest remainder so the
  values add up to the amount exactly; ties go to the claimant whose name sorts first.
* Volcano applies the guarantee floor *after* each round's share, which can hand out more than the cluster
  has when guarantees are large (two queues, 10 cpu, one guaranteed 8: Volcano's first round gives 8 + 5);
  here a floor only raises a claimant to its guarantee out of the shared amount (8 + 2).

The result of every claimant records how it settled (``share``, ``cap`` or ``floor``) and in which round, which
the policies turn into explanations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "SETTLED_CAP",
    "SETTLED_FLOOR",
    "SETTLED_SHARE",
    "FillResult",
    "hamilton",
    "water_fill",
]

SETTLED_SHARE = "share"  # received its weighted share of the final level
SETTLED_CAP = "cap"  # stopped at its cap (request, real capability, ...)
SETTLED_FLOOR = "floor"  # held at its floor (guarantee)


def hamilton(amount: int, weights: Sequence[int], names: Sequence[str] | None = None) -> list[int]:
    """Split ``amount`` into integers proportional to ``weights`` that add up to ``amount`` exactly.

    Largest-remainder (Hamilton) rounding: everyone gets the floor of their exact quota, and the units left
    over go to the largest remainders; a tie goes to the name that sorts first (or the lower index without
    names). All weights zero (or an amount of 0) gives zeros.
    """
    if amount < 0:
        raise ValueError(f"amount must be >= 0, got {amount}")
    total_weight = 0
    for w in weights:
        if w < 0:
            raise ValueError(f"weights must be >= 0, got {w}")
        total_weight += w
    count = len(weights)
    if amount == 0 or total_weight == 0:
        return [0] * count
    out = [0] * count
    remainders = [0] * count
    given = 0
    for i, w in enumerate(weights):
        q, rem = divmod(amount * w, total_weight)
        out[i] = q
        remainders[i] = rem
        given += q
    left = amount - given
    if left:
        # largest remainder first, then the name (or index) that sorts first; plain tuples sort in C
        negated = [-r for r in remainders]
        if names is None:
            chosen = [i for _, i in sorted(zip(negated, range(count), strict=True))[:left]]
        else:
            chosen = [i for _, _, i in sorted(zip(negated, names, range(count), strict=True))[:left]]
        for i in chosen:
            out[i] += 1
    return out


@dataclass(frozen=True)
class FillResult:
    """The outcome of one water-filling, in the claimants' input order."""

    amount: int
    names: tuple[str, ...]
    weights: tuple[int, ...]
    caps: tuple[int | None, ...]
    floors: tuple[int, ...]
    values: tuple[int, ...]
    settled: tuple[str, ...]  # SETTLED_SHARE | SETTLED_CAP | SETTLED_FLOOR
    settled_round: tuple[int, ...]
    rounds: int
    # the final water level as a fraction (budget shared in the last round / the open weight), if any
    level: tuple[int, int] | None

    @property
    def given(self) -> int:
        """The sum of all values (may exceed ``amount`` only when floors do)."""
        return sum(self.values)

    @property
    def leftover(self) -> int:
        """What nobody could take: ``amount - given`` when everybody was capped (>= 0 unless floors exceed)."""
        return self.amount - self.given

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.names, self.values, strict=True))

    def index(self, name: str) -> int:
        return self.names.index(name)

    def explain(self, i: int) -> str:
        """One claimant's value and how it settled, in words."""
        how = self.settled[i]
        rnd = self.settled_round[i]
        if how == SETTLED_CAP:
            return f"{self.values[i]}: stopped at its cap {self.caps[i]} in round {rnd}"
        if how == SETTLED_FLOOR:
            return f"{self.values[i]}: held at its floor {self.floors[i]} in round {rnd}"
        if self.level is None:  # pragma: no cover - a share always comes with a level
            return f"{self.values[i]}: weighted share in round {rnd}"
        budget, weight = self.level
        return (
            f"{self.values[i]}: weight {self.weights[i]} of {weight} sharing {budget} in round {rnd} "
            "(largest remainder)"
        )


def water_fill(
    amount: int,
    names: Sequence[str],
    weights: Sequence[int],
    caps: Sequence[int | None] | None = None,
    floors: Sequence[int] | None = None,
) -> FillResult:
    """Share ``amount`` among claimants by weight, each capped by ``caps[i]`` (``None`` = no cap) and held
    at least at ``floors[i]``; see the module docstring for the model.

    The value of a claimant depends only on the set of claimants, not on their order.
    """
    cap_list, floor_list = _checked_bounds(names, weights, caps, floors)
    fill = _Fill(amount, weights, cap_list, floor_list)
    while fill.open:
        fill.round(names)
    return FillResult(
        amount=amount,
        names=tuple(names),
        weights=tuple(weights),
        caps=tuple(cap_list),
        floors=tuple(floor_list),
        values=tuple(fill.values),
        settled=tuple(fill.settled),
        settled_round=tuple(fill.settled_round),
        rounds=fill.rounds,
        level=fill.level,
    )


def _checked_bounds(
    names: Sequence[str], weights: Sequence[int], caps: Sequence[int | None] | None, floors: Sequence[int] | None
) -> tuple[list[int | None], list[int]]:
    """The caps and floors as lists, one entry per claimant, with a cap below its floor raised to the floor (a floor
    wins over a cap); ``ValueError`` names the first claimant with a negative weight, floor or cap."""
    count = len(names)
    if len(weights) != count:
        raise ValueError("names and weights differ in length")
    cap_list: list[int | None] = list(caps) if caps is not None else [None] * count
    floor_list: list[int] = list(floors) if floors is not None else [0] * count
    if len(cap_list) != count or len(floor_list) != count:
        raise ValueError("caps and floors must have one entry per claimant")
    if len(set(names)) != count:
        raise ValueError("claimant names must be unique")
    for i in range(count):
        if weights[i] < 0:
            raise ValueError(f"weight of {names[i]!r} must be >= 0")
        if floor_list[i] < 0:
            raise ValueError(f"floor of {names[i]!r} must be >= 0")
        cap = cap_list[i]
        if cap is not None:
            if cap < 0:
                raise ValueError(f"cap of {names[i]!r} must be >= 0")
            if cap < floor_list[i]:
                cap_list[i] = floor_list[i]
    return cap_list, floor_list


class _Fill:
    """The state of one water-filling between rounds: what each claimant has, how and when it settled, the budget
    still to share and the claimants still open."""

    def __init__(self, amount: int, weights: Sequence[int], caps: list[int | None], floors: list[int]) -> None:
        count = len(weights)
        self.weights, self.caps, self.floors = weights, caps, floors
        self.values = [0] * count
        self.settled = [SETTLED_SHARE] * count
        self.settled_round = [0] * count
        self.rounds = 0
        self.level: tuple[int, int] | None = None
        self.budget = amount
        self.open: list[int] = []
        for i in range(count):
            if weights[i] > 0:
                self.open.append(i)
            else:  # no weight: nothing beyond the floor
                self._settle(i, floors[i], SETTLED_FLOOR)
                self.budget -= floors[i]

    def _settle(self, i: int, value: int, how: str) -> None:
        self.values[i] = value
        self.settled[i] = how
        self.settled_round[i] = self.rounds

    def round(self, names: Sequence[str]) -> None:
        """One round: split the budget by weight among the open claimants; the split settles everyone when nobody
        passes a cap or falls under a floor, else the capped or the floored ones settle and leave."""
        self.rounds += 1
        weights, caps, floors, budget = self.weights, self.caps, self.floors, self.budget
        open_weight = sum(weights[i] for i in self.open)
        capped: list[int] = []
        floored: list[int] = []
        capped_sum = capped_weight = floored_sum = floored_weight = 0
        for i in self.open:
            share_num = budget * weights[i]  # exact share = share_num / open_weight
            cap = caps[i]
            if cap is not None and share_num >= cap * open_weight:
                capped.append(i)
                capped_sum += cap
                capped_weight += weights[i]
            elif share_num <= floors[i] * open_weight:
                floored.append(i)
                floored_sum += floors[i]
                floored_weight += weights[i]
        if not capped and not floored:
            shares = hamilton(budget, [weights[i] for i in self.open], [names[i] for i in self.open])
            for i, v in zip(self.open, shares, strict=True):
                self._settle(i, v, SETTLED_SHARE)
            self.level = (budget, open_weight)
            self.open = []
            return
        # Sign of (what the clamped split would hand out) - budget, times open_weight: > 0 means the level
        # must drop, so the floored ones stay floored; < 0 means it must rise, so the capped ones stay capped.
        excess = (capped_sum + floored_sum) * open_weight - budget * (capped_weight + floored_weight)
        done: set[int] = set()
        if excess >= 0:
            for i in floored:
                self._settle(i, floors[i], SETTLED_FLOOR)
                done.add(i)
            self.budget -= floored_sum
        if excess <= 0:
            for i in capped:
                cap = caps[i]
                assert cap is not None
                self._settle(i, cap, SETTLED_CAP)
                done.add(i)
            self.budget -= capped_sum
        if not done:  # pragma: no cover - excess > 0 implies a floored claimant, < 0 a capped one
            raise RuntimeError("water_fill made no progress")
        self.open = [i for i in self.open if i not in done]
