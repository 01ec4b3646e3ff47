"""The elastic-quota engine written plainly, for the tests to compare the vectorised engine with.

One recursive pass per tree over Python ints, using the engine's per-sibling-set steps
(``engine.fairshare.elastic_sets``); semantics match :func:`engine.fairshare.elastic.compute_runtimes`, which
documents them. It is a test oracle: the product never calls it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.fairshare.elastic import FIELDS, GroupQuota
from engine.fairshare.elastic_sets import (
    from_units,
    in_units,
    round_up,
    scale_mins,
    waterfill,
)
from engine.fairshare.lending import lend_and_borrow
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import MAX_AMOUNT, UNLIMITED_INT64, ResourceList, split_unit

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
    maxes = {n: {k: (g.max[k] if k in g.max else UNLIMITED_INT64) for k in keys} for n, g in specs.items()}  # noqa: SIM401
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
                own[k] = min(own[k] + lim[c][k], UNLIMITED_INT64)
                own_used[k] = min(own_used[k] + use[c][k], UNLIMITED_INT64)
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


def reference_quotas(
    groups: Sequence[QuotaGroupSpec],
    requests: Mapping[str, Mapping[str, int]],
    total: Mapping[str, int],
    **kwargs: Any,
) -> dict[str, GroupQuota]:
    """The plain-Python reference computation (:func:`reference_runtimes`), as GroupQuota values."""
    out: dict[str, GroupQuota] = {}
    for name, g in reference_runtimes(groups, requests, total, **kwargs).items():
        lists = {f: ResourceList({k: g.values[f][k] for k in g.keys}) for f in FIELDS}
        out[name] = GroupQuota(name=name, **lists)
    return out
