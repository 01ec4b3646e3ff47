"""Amounts as dictionaries of base-unit integers (``{"cpu": 4000, "nvidia.com/gpu": 2000}``): adding, viewing and
converting them, and Volcano's comparisons of two resource lists (``api.Resource``: ``Less``, ``LessEqual``, their
*partly* forms, with a missing scalar read as zero or as infinity), which every fair-share policy and gate uses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal, cast

from engine.resources import MAX_AMOUNT, ResourceList, resource_sort_key

__all__ = [
    "IGNORED_SCALARS",
    "INFINITY",
    "STANDARD_RESOURCES",
    "ZERO",
    "ShapedSums",
    "add_into",
    "dominant_share",
    "exceeded_part",
    "greater_partly_with_relevant_dimensions",
    "insufficient_resources",
    "intersection",
    "is_empty",
    "less",
    "less_equal",
    "less_equal_partly",
    "less_equal_partly_with_dimension_zero_filtered",
    "less_partly",
    "plain",
    "raw",
    "to_resource_list",
    "trusted_resource_list",
]

STANDARD_RESOURCES = ("cpu", "memory")


IGNORED_SCALARS = frozenset({"pods"})


Default = Literal["zero", "infinity"]


ZERO: Default = "zero"


INFINITY: Default = "infinity"


def raw(rl: Mapping[str, int]) -> Mapping[str, int]:
    """The underlying dict of a ResourceList (read-only use), or the mapping itself.

    ``ResourceList.items()`` goes through ``collections.abc.Mapping`` and costs ~4x a dict's; the engine
    walks tens of thousands of jobs per computation, so it reads the backing dict directly.
    """
    kind = type(rl)
    if kind is dict:
        return rl
    if kind is ResourceList:  # the exact type first: isinstance with an abstract base class is slow
        return cast(ResourceList, rl).raw
    return rl.raw if isinstance(rl, ResourceList) else rl


def add_into(acc: dict[str, int], amounts: Mapping[str, int], sign: int = 1) -> None:
    for name, amount in raw(amounts).items():
        acc[name] = acc.get(name, 0) + sign * amount


def exceeded_part(left: Mapping[str, int], right: Mapping[str, int]) -> dict[str, int]:
    """Volcano's ``ExceededPart``: the positive part of ``left - right`` (missing reads as 0)."""
    rr = raw(right)
    out: dict[str, int] = {}
    for name, amount in raw(left).items():
        d = amount - rr.get(name, 0)
        if d > 0:
            out[name] = d
    return out


def trusted_resource_list(data: dict[str, int]) -> ResourceList:
    """Wrap a dict of int amounts the engine computed itself as a ResourceList, without re-validating it.

    ``ResourceList(...)`` copies and type-checks every entry; the engine exports tens of thousands of lists
    per computation (every queue and namespace snapshot), all made of ints it summed itself.
    """
    out = ResourceList.__new__(ResourceList)
    out._data = data
    out._hash = None
    return out


class ShapedSums:
    """Sums of resource amounts kept by adding and removing contributions, per dict of a total, with the name orders
    (*shapes*) of the contributions counted: a dict built by adding contributions in some order has its names in the
    order they first appear, which is the longest shape whatever the order when every shape is a prefix of it
    (``made`` None otherwise: the caller adds the contributions up again). Exact integers."""

    __slots__ = ("shapes", "sums")

    def __init__(self, dicts: int) -> None:
        self.shapes: tuple[dict[tuple[str, ...], int], ...] = tuple({} for _ in range(dicts))
        self.sums: tuple[dict[str, int], ...] = tuple({} for _ in range(dicts))

    def _add(self, i: int, shape: tuple[str, ...], amounts: Mapping[str, int], sign: int) -> None:
        shapes = self.shapes[i]
        n = shapes.get(shape, 0) + sign
        if n:
            shapes[shape] = n
        else:
            del shapes[shape]
        sums = self.sums[i]
        for name, amount in amounts.items():
            sums[name] = sums.get(name, 0) + sign * amount

    def made(self) -> list[dict[str, int]] | None:
        """Each dict as adding the contributions up would build it (a new dict), or None when its order depends on
        theirs."""
        out: list[dict[str, int]] = []
        for shapes, sums in zip(self.shapes, self.sums, strict=True):
            if not shapes:
                out.append({})
                continue
            longest = max(shapes, key=len)
            if any(shape != longest[: len(shape)] for shape in shapes):
                return None
            out.append({name: sums[name] for name in longest})
        return out


def plain(amounts: Mapping[str, int]) -> dict[str, int]:
    """``to_resource_list(amounts, drop_zero=True)``'s entries as a plain dict."""
    return {n: a for n, a in raw(amounts).items() if a and a < MAX_AMOUNT}


def to_resource_list(amounts: Mapping[str, int], *, drop_zero: bool = False) -> ResourceList:
    """Export: unlimited entries are left out (missing = unlimited), zeros kept unless ``drop_zero``."""
    # ``is_unlimited`` spelled out: this runs for every amount of every queue snapshot
    if drop_zero:
        return trusted_resource_list({n: a for n, a in raw(amounts).items() if a and a < MAX_AMOUNT})
    return trusted_resource_list({n: a for n, a in raw(amounts).items() if a is not None and a < MAX_AMOUNT})


def _scalars(rl: Mapping[str, int]) -> Iterator[tuple[str, int]]:
    for name, amount in raw(rl).items():
        if name not in STANDARD_RESOURCES:
            yield name, amount


def less(left: Mapping[str, int], right: Mapping[str, int], default: Default = ZERO) -> bool:
    """Every dimension of ``left`` is strictly less than ``right``'s (``Resource.Less``)."""
    lr, rr = raw(left), raw(right)
    for name in STANDARD_RESOURCES:
        if not lr.get(name, 0) < rr.get(name, 0):
            return False
    if default == INFINITY:
        # a scalar the right side has but the left lacks is "infinite" on the left
        for name, _ in _scalars(rr):
            if name not in lr:
                return False
    for name, amount in _scalars(lr):
        if name not in rr and default == INFINITY:
            continue
        if not amount < rr.get(name, 0):
            return False
    return True


def less_equal(left: Mapping[str, int], right: Mapping[str, int], default: Default = ZERO) -> bool:
    """Every dimension of ``left`` is <= ``right``'s (``Resource.LessEqual``; Volcano's 0.1 epsilon is exact
    equality on integers)."""
    lr, rr = raw(left), raw(right)
    for name in STANDARD_RESOURCES:
        if not lr.get(name, 0) <= rr.get(name, 0):
            return False
    if default == INFINITY:
        for name, _ in _scalars(rr):
            if name not in lr:
                return False
    for name, amount in _scalars(lr):
        if name not in rr and default == INFINITY:
            continue
        if not amount <= rr.get(name, 0):
            return False
    return True


def less_partly(left: Mapping[str, int], right: Mapping[str, int], default: Default = ZERO) -> bool:
    """Some dimension of ``left`` is strictly less than ``right``'s (``Resource.LessPartly``)."""
    lr, rr = raw(left), raw(right)
    if any(lr.get(name, 0) < rr.get(name, 0) for name in STANDARD_RESOURCES):
        return True
    if default == ZERO:
        for name, _ in _scalars(rr):
            if name not in lr:
                return True
    for name, amount in _scalars(lr):
        if name not in rr and default == INFINITY:
            return True
        if amount < rr.get(name, 0):
            return True
    return False


def less_equal_partly(left: Mapping[str, int], right: Mapping[str, int], default: Default = ZERO) -> bool:
    """Some dimension of ``left`` is <= ``right``'s (``Resource.LessEqualPartly``)."""
    lr, rr = raw(left), raw(right)
    if any(lr.get(name, 0) <= rr.get(name, 0) for name in STANDARD_RESOURCES):
        return True
    if default == ZERO:
        for name, _ in _scalars(rr):
            if name not in lr:
                return True
    for name, amount in _scalars(lr):
        if name not in rr and default == INFINITY:
            return True
        if amount <= rr.get(name, 0):
            return True
    return False


def insufficient_resources(used: Mapping[str, int], limit: Mapping[str, int], request: Mapping[str, int]) -> list[str]:
    """Volcano's ``LessEqualWithDimensionAndResourcesName``: the resources the request asks for (> 0) where
    ``used > limit`` (strict, no epsilon; a limit missing from ``limit`` reads as 0; ``pods`` is skipped).
    Empty means it fits."""
    ur, lr = raw(used), raw(limit)
    out: list[str] = []
    for name, amount in raw(request).items():
        if amount > 0 and name not in IGNORED_SCALARS and ur.get(name, 0) > lr.get(name, 0):
            out.append(name)
    out.sort(key=resource_sort_key)
    return out


def less_equal_partly_with_dimension_zero_filtered(
    left: Mapping[str, int], right: Mapping[str, int], request: Mapping[str, int]
) -> tuple[bool, list[str]]:
    """``LessEqualPartlyWithDimensionZeroFiltered``: among the dimensions the request asks for, ignoring those
    that are zero on both sides, is any ``left <= right``? Returns the answer and those dimensions."""
    lr, rr = raw(left), raw(right)
    names: list[str] = []
    for name, amount in raw(request).items():
        if amount <= 0 or name in IGNORED_SCALARS:
            continue
        lv, rv = lr.get(name, 0), rr.get(name, 0)
        if lv <= 0 and rv <= 0:
            continue
        if lv <= rv:
            names.append(name)
    names.sort(key=resource_sort_key)
    return bool(names), names


def greater_partly_with_relevant_dimensions(
    left: Mapping[str, int], right: Mapping[str, int], request: Mapping[str, int]
) -> tuple[bool, list[str]]:
    """``GreaterPartlyWithRelevantDimensions``: among the dimensions the request asks for that ``right``
    "has" (cpu/memory: > 0; a scalar: present in ``right``, even with 0), is any ``left > right``?"""
    lr, rr = raw(left), raw(right)
    names: list[str] = []
    for name, amount in raw(request).items():
        if amount <= 0 or name in IGNORED_SCALARS:
            continue
        if name in STANDARD_RESOURCES:
            if rr.get(name, 0) <= 0:
                continue
        elif name not in rr:
            continue
        if lr.get(name, 0) > rr.get(name, 0):
            names.append(name)
    names.sort(key=resource_sort_key)
    return bool(names), names


def intersection(left: Mapping[str, int], right: Mapping[str, int], *, ignore_pods: bool = False) -> list[str]:
    """Resource names that are > 0 on both sides (``Intersection`` / ``IntersectionWithIgnoredScalarResources``)."""
    rr = raw(right)
    names = [n for n, a in raw(left).items() if a > 0 and rr.get(n, 0) > 0]
    if ignore_pods:
        names = [n for n in names if n not in IGNORED_SCALARS]
    names.sort(key=resource_sort_key)
    return names


def is_empty(amounts: Mapping[str, int]) -> bool:
    """``Resource.IsEmpty``: nothing above zero except possibly ``pods``."""
    return not any(a > 0 for n, a in raw(amounts).items() if n not in IGNORED_SCALARS)


def dominant_share(allocated: Mapping[str, int], base: Mapping[str, int]) -> tuple[str, float]:
    """The largest ``allocated / base`` over the resources ``base`` has (> 0), with Volcano's
    ``Share(a, d) = d == 0 ? (a == 0 ? 0 : 1) : a / d``. Returns (resource, share); ("", 0.0) if none."""
    ar = raw(allocated)
    best_name, best = "", 0.0
    for name, d in raw(base).items():
        if d <= 0:
            continue
        s = ar.get(name, 0) / d
        if not best_name or s > best or (s == best and name < best_name):
            best_name, best = name, s
    return best_name, best
