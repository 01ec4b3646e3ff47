"""Plain-Python building blocks and the reference implementation of the elastic-quota engine.

Everything here works on Python ints, one sibling set and one resource at a time, in the most direct way the
rules can be written. The vectorised engine in ``elastic.py`` must agree with it exactly; it also calls the
per-set functions below for the rare sibling sets whose numbers could overflow int64, and ``explain`` replays a
sibling set with :func:`waterfill` to show the rounds. See ``elastic.py`` for the model.

Sibling lists are always given in name order (ascending), which is the Hamilton tie-break order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.resources import MAX_AMOUNT, split_unit

ROOT_GROUP = "root"
SYSTEM_GROUP = "system"
DEFAULT_GROUP = "default"

INT64_MAX = 2**63 - 1


# -- units of the split -----------------------------------------------------------------------------------------


def in_units(amount: int, unit: int) -> int:
    """``amount`` base units in whole units of ``unit`` base units, rounded up (Kubernetes' ``Quantity.Value()``)."""
    return -(-amount // unit)


def from_units(amount: int, unit: int) -> int:
    """Whole units back to base units, saturated at 2**63-1 like every sum of the engine."""
    return min(amount * unit, INT64_MAX)


def round_up(amount: int, unit: int) -> int:
    """``amount`` rounded up to a multiple of ``unit``."""
    return in_units(amount, unit) * unit


# -- one sibling set, one resource ----------------------------------------------------------------------------


def hamilton(pool: int, weights: Sequence[int]) -> list[int]:
    """Split ``pool`` in proportion to ``weights`` by largest remainder; ties go to the earlier index (name order).

    Entries with a weight <= 0 receive nothing. The parts add up to ``pool`` exactly when any weight is positive.
    """
    total = sum(w for w in weights if w > 0)
    out = [0] * len(weights)
    if pool <= 0 or total <= 0:
        return out
    remainders: list[tuple[int, int]] = []
    for i, w in enumerate(weights):
        if w <= 0:
            continue
        out[i], rem = divmod(w * pool, total)
        remainders.append((-rem, i))
    residual = pool - sum(out)
    remainders.sort()
    for _, i in remainders[:residual]:
        out[i] += 1
    return out


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


def lend_and_borrow(
    total: int, auto_mins: Sequence[int], used: Sequence[int], lends: Sequence[bool]
) -> tuple[list[int], list[int]]:
    """Borrowed and lent amounts of one sibling set, one resource (see the model in ``elastic.py``)."""
    borrowed = [max(0, u - m) for u, m in zip(used, auto_mins, strict=True)]
    unused = [max(0, m - u) if lend else 0 for u, m, lend in zip(used, auto_mins, lends, strict=True)]
    unreserved = max(0, total - sum(auto_mins))
    consumed = min(max(0, sum(borrowed) - unreserved), sum(unused))
    return borrowed, hamilton(consumed, unused)


# -- the whole forest -----------------------------------------------------------------------------------------


@dataclass
class RefGroup:
    """Reference values of one group over the forest's resource names (unmasked)."""

    name: str
    parent: str | None
    values: dict[str, dict[str, int]]  # field -> resource -> amount
    keys: tuple[str, ...]  # resources this group reports (its max's keys, or the tree's keys for a root)


def _amounts(
    rl: Mapping[str, int] | None, keys: Sequence[str], only: Mapping[str, int] | None = None
) -> dict[str, int]:
    rl = rl or {}
    return {k: (rl.get(k, 0) if only is None or k in only else 0) for k in keys}


def reference_runtimes(
    groups: Sequence[Any],
    requests: Mapping[str, Mapping[str, int]],
    total: Mapping[str, int],
    *,
    used: Mapping[str, Mapping[str, int]] | None = None,
    system_used: Mapping[str, int] | None = None,
    default_used: Mapping[str, int] | None = None,
    enable_min_scale: bool = True,
    tree_totals: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, RefGroup]:
    """The whole computation, written plainly: one recursive pass per tree, Python ints throughout.

    Semantics match :func:`engine.fairshare.elastic.compute_runtimes` (which documents them); this exists to
    test the fast path against. Configuration errors are not checked here beyond what the walk needs.
    """
    used = used or {}
    tree_totals = tree_totals or {}
    specs = {g.name: g for g in groups}
    special = {n: specs.pop(n) for n in (SYSTEM_GROUP, DEFAULT_GROUP) if n in specs}
    if ROOT_GROUP not in specs:
        from engine.fairshare.elastic import QuotaGroupSpec

        specs[ROOT_GROUP] = QuotaGroupSpec(name=ROOT_GROUP, parent=None)
    children: dict[str, list[str]] = {n: [] for n in specs}
    for g in specs.values():
        if g.parent is not None:
            children[g.parent].append(g.name)
    for kids in children.values():
        kids.sort()
    keys = sorted({k for g in specs.values() if g.parent is not None for k in g.max})
    roots = sorted(n for n, g in specs.items() if g.parent is None)

    def tree_keys(root: str) -> tuple[str, ...]:
        out: set[str] = set()
        stack = [root]
        while stack:
            n = stack.pop()
            if specs[n].parent is not None:
                out.update(specs[n].max)
            stack.extend(children[n])
        return tuple(sorted(out))

    mins = {n: _amounts(g.min, keys) for n, g in specs.items()}
    # ResourceList reads a missing name as 0, so .get(k, default) would never return the default.
    maxes = {n: {k: (g.max[k] if k in g.max else INT64_MAX) for k in keys} for n, g in specs.items()}  # noqa: SIM401
    weights: dict[str, dict[str, int]] = {}
    for n, g in specs.items():
        sw = g.shared_weight
        if not sw:  # None or empty: max (an explicit all-zero weight is kept, unlike Koordinator)
            sw = g.max
        weights[n] = {k: (sw[k] if k in sw else g.max[k]) if k in g.max else 0 for k in keys}

    req: dict[str, dict[str, int]] = {}
    lim: dict[str, dict[str, int]] = {}
    use: dict[str, dict[str, int]] = {}

    def bottom_up(n: str) -> None:
        g = specs[n]
        mask = g.max if g.parent is not None else None  # a root keeps its own pods' amounts on every key
        own = _amounts(requests.get(n), keys, mask)
        own_used = _amounts(used.get(n), keys, mask)
        for c in children[n]:
            bottom_up(c)
            for k in keys:
                own[k] = min(own[k] + lim[c][k], INT64_MAX)
                own_used[k] = min(own_used[k] + use[c][k], INT64_MAX)
        if g.parent is not None and not g.allow_lent:
            own = {k: max(own[k], mins[n][k]) for k in keys}
        req[n] = own
        lim[n] = {k: min(own[k], maxes[n][k]) for k in keys}
        use[n] = own_used

    asm: dict[str, dict[str, int]] = {}
    rt: dict[str, dict[str, int]] = {}
    bor: dict[str, dict[str, int]] = {}
    lent: dict[str, dict[str, int]] = {}

    def top_down(n: str) -> None:
        kids = children[n]
        if not kids:
            return
        for c in kids:
            asm[c], rt[c], bor[c], lent[c] = {}, {}, {}, {}
        for k in keys:
            u = split_unit(k)  # every amount of the split in whole units of u base units
            t = in_units(rt[n][k], u)
            m = [in_units(mins[c][k], u) for c in kids]
            a = scale_mins(t, m, [specs[c].min_scale_exempt for c in kids]) if enable_min_scale else m
            lends = [specs[c].allow_lent for c in kids]
            r = waterfill(
                t, a, [in_units(lim[c][k], u) for c in kids], [in_units(weights[c][k], u) for c in kids], lends
            )
            b, le = lend_and_borrow(t, a, [in_units(use[c][k], u) for c in kids], lends)
            for i, c in enumerate(kids):
                asm[c][k], rt[c][k] = from_units(a[i], u), from_units(r[i], u)
                bor[c][k], lent[c][k] = from_units(b[i], u), from_units(le[i], u)
        for c in kids:
            top_down(c)

    sys_used = dict(system_used or {}) or dict(used.get(SYSTEM_GROUP, {}))
    def_used = dict(default_used or {}) or dict(used.get(DEFAULT_GROUP, {}))
    out: dict[str, RefGroup] = {}
    for root in roots:
        bottom_up(root)
        g = specs[root]
        if root == ROOT_GROUP:
            t = {k: max(0, total.get(k, 0) - sys_used.get(k, 0) - def_used.get(k, 0)) for k in keys}
        else:
            t = _amounts(tree_totals.get(g.tree_id, g.min), keys)
        t = {k: round_up(min(v, MAX_AMOUNT), split_unit(k)) for k, v in t.items()}
        rt[root] = t
        asm[root] = dict(mins[root])
        bor[root] = dict.fromkeys(keys, 0)
        lent[root] = dict.fromkeys(keys, 0)
        top_down(root)
        rk = tree_keys(root)
        stack = [root]
        while stack:
            n = stack.pop()
            stack.extend(children[n])
            fields = {
                "request": req[n],
                "limited_request": lim[n],
                "used": use[n],
                "auto_scaled_min": asm[n],
                "runtime": rt[n],
                "borrowed": bor[n],
                "lent": lent[n],
            }
            gk = rk if specs[n].parent is None else tuple(sorted(specs[n].max))
            out[n] = RefGroup(n, specs[n].parent, fields, gk)
    for n, g in special.items():
        gk = tuple(sorted(g.max))
        r = _amounts(requests.get(n), gk, g.max)
        u = _amounts(used.get(n), gk, g.max)
        m = _amounts(g.min, gk)
        fields = {
            "request": r,
            "limited_request": {k: min(r[k], g.max[k]) for k in gk},
            "used": u,
            "auto_scaled_min": m,
            "runtime": {k: g.max[k] for k in gk},
            "borrowed": {k: max(0, u[k] - m[k]) for k in gk},
            "lent": dict.fromkeys(gk, 0),
        }
        out[n] = RefGroup(n, g.parent, fields, gk)
    return out
