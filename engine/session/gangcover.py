"""Which whole gangs to take when a gang's spare pods are not enough: a cover of the need with little waste.

Victims are chosen with gangs in mind (recycling, and reclaim / preempt with ``wholeGangs``): first the pods a
gang can spare (above its ``minMember`` and each role's ``minTaskMember``), least important first; when more is
needed, **whole gangs** — never a piece of one that leaves it below its minimum while it keeps the rest. Which
gangs: each candidate (a ``Unit``: the gang's pods that would go) has a priority (its most important pod), the
**work it loses** (``work``: pod-seconds, each pod's whole seconds running plus one, so a pod that never started
costs 1; a gang already below its minimum runs nothing and loses 0) and what it **frees** of the need. The rule,
least important first (a set's priority is its most important gang's):

* **exact** when there are at most ``EXACT_LIMIT`` (12) candidates: of every set that covers the need (2^12 = 4096
  sets at most), the one of the lowest priority, then the least work lost, then the least freed beyond the need
  (summed over the needed resources, each in units of its need), then the fewest gangs, then by name;
* **greedy** above that: repeatedly the candidate of the lowest priority, then the least work lost per part of
  the still-needed amount it frees (``work / Σ_r min(freed_r, need_r) / need_r``, compared exactly), until the
  need is covered or nothing left frees any of it.

No cover exists: every candidate is taken (the caller's "could not get under" case). The resulting set has no
candidate it can do without in the exact case; in the greedy case the caller's walk-back puts back what is not
needed. The exact least-waste cover over several resources is NP-hard, hence the bound.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["EXACT_LIMIT", "Gang", "GangBook", "Unit", "least_waste_cover", "pod_work"]

EXACT_LIMIT = 12


@dataclass(frozen=True, slots=True)
class Unit:
    """A candidate taken whole: ``key`` names it (the podgroup), ``freed`` what taking it frees, ``work`` the
    pod-seconds it loses, ``priority`` its most important pod's."""

    key: str
    freed: Mapping[str, int]
    work: int
    priority: int


@dataclass(frozen=True, slots=True)
class Gang:
    """What a gang can lose before it breaks: its ready pods (Volcano's ``ReadyTaskNum``, wherever they run) and
    its ``minMember`` and ``minTaskMember``."""

    ready: int
    min_member: int
    ready_by_role: Mapping[str, int]
    min_by_role: Mapping[str, int]


class GangBook:
    """The ready counts of the gangs (podgroup key -> ``Gang``) while pods are taken out and put back; a pod is
    named by its podgroup key and its role. The one spare rule of recycling, reclaim and preempt."""

    __slots__ = ("by_role", "gangs", "ready")

    def __init__(self, gangs: Mapping[str, Gang]) -> None:
        self.gangs = gangs
        self.ready = {k: g.ready for k, g in gangs.items()}
        self.by_role = {k: dict(g.ready_by_role) for k, g in gangs.items()}

    def can_spare(self, key: str, role: str) -> bool:
        """Whether a ready pod of ``role`` of podgroup ``key`` can go alone and leave its gang whole: the gang keeps
        more than ``minMember`` ready pods and the role more than its ``minTaskMember`` (a pod outside any gang
        always can)."""
        gang = self.gangs.get(key)
        if gang is None:
            return True
        need = gang.min_by_role.get(role, 0)
        return self.ready[key] > gang.min_member and self.by_role[key].get(role, 0) > need

    def intact(self, key: str) -> bool:
        """Whether gang ``key`` holds its minimum now (``minMember`` and each role's ``minTaskMember``)."""
        gang = self.gangs[key]
        roles = self.by_role[key]
        return self.ready[key] >= gang.min_member and all(roles.get(r, 0) >= n for r, n in gang.min_by_role.items())

    def whole_with(self, key: str, role: str) -> bool:
        """Whether gang ``key`` holds at least its minimum with a pod of ``role`` back in it."""
        gang = self.gangs.get(key)
        return gang is None or (
            self.ready[key] + 1 >= gang.min_member
            and self.by_role[key].get(role, 0) + 1 >= gang.min_by_role.get(role, 0)
        )

    def move(self, members: Iterable[tuple[str, str]], sign: int) -> None:
        """Take out (``sign`` -1) or put back (+1) ready pods, each named ``(podgroup key, role)``."""
        for key, role in members:
            if key in self.gangs:
                self.ready[key] += sign
                roles = self.by_role[key]
                roles[role] = roles.get(role, 0) + sign


def pod_work(start: float | None, now: float | None) -> int:
    """The pod-seconds a pod loses when it is evicted at ``now``: its whole seconds running plus one."""
    if start is None or now is None or now <= start:
        return 1
    return math.floor(now - start) + 1


def _covers(need: Mapping[str, int], freed: Mapping[str, int]) -> bool:
    return all(freed.get(r, 0) >= n for r, n in need.items())


def _sum(units: Sequence[Unit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in units:
        for r, v in u.freed.items():
            out[r] = out.get(r, 0) + v
    return out


def _exact(need: Mapping[str, int], units: Sequence[Unit]) -> list[Unit] | None:
    """The least-waste covering set of ``units`` (see the module doc), None when none covers."""
    best: tuple[object, ...] | None = None
    chosen: list[Unit] | None = None
    for size in range(1, len(units) + 1):
        for combo in itertools.combinations(units, size):
            freed = _sum(combo)
            if not _covers(need, freed):
                continue
            over = sum((Fraction(freed.get(r, 0) - n, n) for r, n in need.items()), Fraction(0))
            key = (max(u.priority for u in combo), sum(u.work for u in combo), over, size, sorted(u.key for u in combo))
            if best is None or key < best:
                best, chosen = key, list(combo)
    return chosen


def _part(need: Mapping[str, int], freed: Mapping[str, int]) -> Fraction:
    """The part of ``need`` that ``freed`` covers: ``Σ_r min(freed_r, need_r) / need_r``."""
    return sum((Fraction(min(freed.get(r, 0), n), n) for r, n in need.items() if n > 0), Fraction(0))


def _greedy(need: Mapping[str, int], units: Sequence[Unit]) -> list[Unit]:
    left = {r: n for r, n in need.items() if n > 0}
    pool = sorted(units, key=lambda u: u.key)
    chosen: list[Unit] = []
    while left and pool:
        scored = [(u.priority, Fraction(u.work) / part, u.key, u) for u in pool if (part := _part(left, u.freed)) > 0]
        if not scored:
            break
        pick = min(scored, key=lambda s: s[:3])[3]
        chosen.append(pick)
        pool.remove(pick)
        left = {r: n - pick.freed.get(r, 0) for r, n in left.items() if n - pick.freed.get(r, 0) > 0}
    return chosen


def least_waste_cover(need: Mapping[str, int], units: Sequence[Unit], exact_limit: int = EXACT_LIMIT) -> list[Unit]:
    """The units to take to free ``need`` (positive amounts per resource), by the rule of the module doc; every
    unit when no set of them covers it."""
    need = {r: n for r, n in need.items() if n > 0}
    if not need or not units:
        return []
    if not _covers(need, _sum(units)):
        return list(units)
    if len(units) <= exact_limit:
        found = _exact(need, units)
        assert found is not None  # all of them cover
        return found
    return _greedy(need, units)
