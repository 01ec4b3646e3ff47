"""Elastic quota groups (Koordinator's multi-hierarchy ElasticQuota, seed 001): the runtime engine.

The model, per resource, for a forest of quota groups (one tree per root; ``root`` is the default tree's root):

* **request** (bottom-up). A group's *child request* is its own pods' request (given per group by the caller,
  masked to the keys of the group's ``max``; a tree root's own pods count in its request, as in Koordinator,
  but never change what it distributes) plus the *limited requests* of its children. Its **request** is the
  child request, or ``max(child request, min)`` when the group does not lend (``allow_lent=False``: it claims its
  whole guarantee). Its **limited request** is ``min(request, max)`` on the keys ``max`` names; it is the only
  request a parent ever sees (Koordinator ``getLimitRequestNoLock``).
* **tree total**. The default tree distributes ``total - used(system) - used(default)`` (clamped at 0): the
  built-in ``system`` and ``default`` groups are outside the distribution and their runtime is their ``max``,
  as in Koordinator. Another tree's root (``parent=None``, a ``tree_id``) distributes ``tree_totals[tree_id]``,
  or its own ``min`` when none is given (Koordinator's profile controller writes the tree total there).
* **auto-scaled min** (``enable_min_scale``, default on; Koordinator ``ScaleMinQuotaManager``). When a parent's
  runtime is below the sum of its children's mins in a resource, the exempt children (``min_scale_exempt``) keep
  their min and the others get ``floor((runtime - exempt sum) * min / non-exempt sum)`` (0 when nothing is
  left). Koordinator computes this in float64 and truncates; here it is the exact integer floor, which can only
  differ where float64 rounding crossed an integer. Scaling is applied eagerly to all siblings of every set (not
  lazily per refreshed path as in Koordinator, whose siblings can be stale), and also to resources missing from
  the total (Koordinator only scales the resources the total lists, leaving a min on an absent resource
  unscaled).
* **runtime** (top-down; Koordinator ``quotaTree.redistribution``). Each parent splits its runtime among its
  children: the floor is the auto-scaled min; a child asking more than its floor starts at its floor and is
  *hungry*; a lender asking less gets its request (lending the rest of its floor); a non-lender keeps its whole
  floor. The remaining pool is split among the hungry by shared-weight in rounds, with largest-remainder
  (Hamilton) rounding and ties to the name that sorts first; whatever passes a child's limited request spills
  into the next round for those still hungry; leftover stays unassigned. A weight of 0 keeps a child at its
  floor. When the floors already exceed the parent's runtime (scaling off), runtimes overcommit, as in
  Koordinator. ``shared_weight`` defaults to ``max``; a given one is normalised to max's keys (missing keys copied
  from max, extra keys dropped). Unlike Koordinator's ``GetSharedWeight``, an explicit all-zero weight is kept
  (Koordinator reads it as "use max"); importers that want that reading should pass ``None``.
* **units of the split**: as Koordinator's calculator (``getQuantityValue``: cpu with ``MilliValue()``, every other
  resource with ``Value()``), cpu is split in millicores, memory and other byte amounts in bytes, and every other
  resource in whole units (a GPU runtime is whole GPUs, never 8300m): for those, the tree total, mins, limited
  requests, shared weights and used are first rounded up to whole units (``Value()`` rounds up), the scaling, the
  sharing rounds and the lending below run on whole units, and the results are converted back
  (:func:`engine.resources.split_unit`). Requests and used are reported exactly as given.
* **borrowed** = ``max(0, used - auto-scaled min)``: usage above the guarantee.
* **lent**, per sibling set and resource: what the borrowers take of the lenders' unused min, by the lending rule
  of :mod:`engine.fairshare.lending` (who lends, what a lending limit keeps, how the lent amount is split). A tree
  root neither borrows nor lends.

**Borrowing and lending limits** (Kueue's meaning, per resource the group's max governs; a resource left out is
unlimited; a tree root ignores them). ``borrowing_limit``: the group is computed as if its max were ``min(max, min +
limit)``, so its limited request and runtime never pass ``min + limit`` (``effective_max`` is that bound, for the
gates when runtime quotas are off). ``lending_limit``: a lender keeps ``(min - limit)+`` of its min unasked and lends
at most ``limit`` (:mod:`engine.fairshare.lending`).
The explanations name a binding limit with its numbers.

Reported values of a group are restricted to the resources its ``max`` names (Koordinator masks the runtime the
same way: a resource the max leaves out is not governed); a tree root reports every resource of its tree.
Used is aggregated like request (own + children's), without capping. Amounts are exact ints (at most 2**62 on
input); a sum of requests that would pass 2**63-1 saturates there.

Speed: the forest is laid out breadth-first (siblings contiguous, in name order) in flat int64 arrays
``(resource, group)``; a whole tree level, all sibling sets and all resources, is one vectorised call of
:mod:`engine.fairshare._elastic_kernel`. :class:`ElasticQuotaTree` keeps that state and, after a small change,
recomputes only the request path it touches and the sibling sets whose inputs or parent runtime changed.
:mod:`engine.fairshare.elastic_sets` holds the plain-Python steps of one sibling set; the tests compare the engine
with the whole-forest reference in ``tests/support/elastic_reference.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.fairshare import _elastic_kernel as kern
from engine.fairshare import elastic_sets as ref
from engine.fairshare import lending
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import MAX_AMOUNT, UNLIMITED_INT64, ResourceList, format_amount, split_unit
from engine.wording import plural

__all__ = [
    "ElasticQuotaTree",
    "ElasticResult",
    "GroupQuota",
    "check_ancestors",
    "compute_runtimes",
    "effective_max",
    "fits_ancestors",
    "fits_non_preemptible",
    "fits_runtime",
    "protected_non_preemptible",
    "runtime_excess",
]

OUTSIDE_GROUPS = frozenset({SYSTEM_GROUP, DEFAULT_GROUP})

I64 = npt.NDArray[np.int64]
BOOL = npt.NDArray[np.bool_]
FIELDS = ("request", "limited_request", "used", "auto_scaled_min", "runtime", "borrowed", "lent")
_ARRAY_FIELDS = {
    "request": "_req",
    "limited_request": "_lim",
    "used": "_used",
    "auto_scaled_min": "_asm",
    "runtime": "_rt",
    "borrowed": "_bor",
    "lent": "_lent",
}
_EMPTY = ResourceList()
_STATE = (
    "_mn",
    "_mx",
    "_smx",
    "_keep",
    "_lcap",
    "_hm",
    "_w",
    "_sreq",
    "_sused",
    "_lend",
    "_exempt",
    "_creq",
    *_ARRAY_FIELDS.values(),
)
_UNLIMITED_FILL = frozenset({"_mx", "_smx", "_lcap"})  # arrays whose missing entries are unlimited


@dataclass(frozen=True)
class GroupQuota:
    """One group's computed values."""

    name: str
    request: ResourceList
    limited_request: ResourceList
    used: ResourceList
    auto_scaled_min: ResourceList
    runtime: ResourceList
    borrowed: ResourceList
    lent: ResourceList


# -- layout -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Breadth-first order of the forest: roots first, then each level with siblings contiguous in name order."""

    names: tuple[str, ...]
    pos: Mapping[str, int]
    parent: I64  # position of the parent, -1 for a root; non-decreasing
    depth: I64
    cs: I64  # children of position p are positions cs[p] .. ce[p]-1
    ce: I64
    levels: tuple[tuple[int, int], ...]  # depth -> [lo, hi)
    root_of: I64


def _cycle_message(names: Sequence[str], par: I64, start: int) -> str:
    seen: list[int] = []
    cur = start
    while cur not in seen:
        seen.append(cur)
        cur = int(par[cur])
    loop = [*seen[seen.index(cur) :], cur]
    return "quota groups form a cycle: " + " -> ".join(repr(names[i]) for i in loop)


def _make_layout(specs: Mapping[str, QuotaGroupSpec]) -> _Layout:
    names = list(specs)
    n = len(names)
    index = {nm: i for i, nm in enumerate(names)}
    par = np.full(n, -1, np.int64)
    for i, nm in enumerate(names):
        p = specs[nm].parent
        if p is not None:
            j = index.get(p)
            if j is None:
                raise ValueError(f"quota group {nm!r}: parent {p!r} does not exist")
            par[i] = j
    rank = np.empty(n, np.int64)
    rank[np.argsort(np.array(names), kind="stable")] = np.arange(n, dtype=np.int64)
    newpos = np.full(n, -1, np.int64)
    frontier = np.flatnonzero(par < 0)
    frontier = frontier[np.argsort(rank[frontier])]
    newpos[frontier] = np.arange(frontier.size, dtype=np.int64)
    parts = [frontier]
    levels = [(0, int(frontier.size))]
    offset = int(frontier.size)
    rest = np.flatnonzero(par >= 0)
    while rest.size:
        pp = newpos[par[rest]]
        ready = pp >= 0
        if not ready.any():
            raise ValueError(_cycle_message(names, par, int(rest[0])))
        lvl = rest[ready]
        lvl = lvl[np.lexsort((rank[lvl], pp[ready]))]
        newpos[lvl] = offset + np.arange(lvl.size, dtype=np.int64)
        parts.append(lvl)
        levels.append((offset, offset + int(lvl.size)))
        offset += int(lvl.size)
        rest = rest[~ready]
    perm = np.concatenate(parts)
    parent = np.where(par[perm] >= 0, newpos[np.maximum(par[perm], 0)], -1).astype(np.int64)
    depth = np.zeros(n, np.int64)
    root_of = np.arange(n, dtype=np.int64)
    for d, (lo, hi) in enumerate(levels[1:], start=1):
        depth[lo:hi] = d
        root_of[lo:hi] = root_of[parent[lo:hi]]
    ids = np.arange(n, dtype=np.int64)
    bfs_names = tuple(names[i] for i in perm.tolist())
    return _Layout(
        names=bfs_names,
        pos={nm: i for i, nm in enumerate(bfs_names)},
        parent=parent,
        depth=depth,
        cs=np.searchsorted(parent, ids, "left").astype(np.int64),
        ce=np.searchsorted(parent, ids, "right").astype(np.int64),
        levels=tuple(levels),
        root_of=root_of,
    )


def _children_of(layout: _Layout, parents: I64) -> tuple[I64, I64, I64]:
    """The parents that have children, their child counts, and the children's positions (concatenated)."""
    parents = parents[layout.ce[parents] > layout.cs[parents]]
    counts = layout.ce[parents] - layout.cs[parents]
    first = np.cumsum(counts) - counts
    kids = np.repeat(layout.cs[parents] - first, counts) + np.arange(int(counts.sum()), dtype=np.int64)
    return parents, counts, kids


# -- inputs -------------------------------------------------------------------------------------------------------


def _split_specs(groups: Iterable[QuotaGroupSpec]) -> tuple[dict[str, QuotaGroupSpec], dict[str, QuotaGroupSpec]]:
    specs: dict[str, QuotaGroupSpec] = {}
    special: dict[str, QuotaGroupSpec] = {}
    for g in groups:
        if g.name in specs or g.name in special:
            raise ValueError(f"quota group {g.name!r} is given twice")
        (special if g.name in OUTSIDE_GROUPS else specs)[g.name] = g
    specs.setdefault(ROOT_GROUP, QuotaGroupSpec(name=ROOT_GROUP, parent=None, is_parent=True))
    tree_ids: dict[str, str] = {}
    for g in specs.values():
        _check_spec(g, specs)
        if g.parent is None:
            if g.tree_id in tree_ids:
                raise ValueError(
                    f"quota groups {tree_ids[g.tree_id]!r} and {g.name!r} are both roots of tree {g.tree_id!r}"
                )
            tree_ids[g.tree_id] = g.name
    return specs, special


def _check_spec(g: QuotaGroupSpec, specs: Mapping[str, QuotaGroupSpec]) -> None:
    if g.name == ROOT_GROUP:
        if g.parent is not None:
            raise ValueError(f"quota group {ROOT_GROUP!r} is the default tree's root and cannot have a parent")
        if g.tree_id:
            raise ValueError(f"quota group {ROOT_GROUP!r} belongs to the default tree (tree_id '')")
        return
    if g.parent is None:
        if not g.tree_id:
            raise ValueError(f"quota group {g.name!r} has no parent, so it must be a tree root with a tree_id")
        return
    if g.parent in OUTSIDE_GROUPS:
        raise ValueError(f"quota group {g.name!r}: parent {g.parent!r} is outside the quota tree")
    if g.parent == g.name:
        raise ValueError(f"quota groups form a cycle: {g.name!r} -> {g.name!r}")
    if g.parent not in specs:
        raise ValueError(f"quota group {g.name!r}: parent {g.parent!r} does not exist")


def _as_rl(rl: Mapping[str, int]) -> ResourceList:
    return rl if isinstance(rl, ResourceList) else ResourceList(rl)


def _vector(rl: Mapping[str, int] | None, index: Mapping[str, int], what: str) -> list[int]:
    out = [0] * len(index)
    if rl:
        for k, v in rl.items():
            r = index.get(k)
            if r is not None:
                out[r] = _checked(v, what, k)
    return out


def _checked(v: int, what: str, key: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > MAX_AMOUNT:
        raise ValueError(f"{what}.{key}: {v!r} must be an integer between 0 and {MAX_AMOUNT}")
    return v


def _in_units(x: I64, unit: I64) -> I64:
    """Non-negative base amounts in whole units of ``unit`` (per element), rounded up like ``Quantity.Value()``."""
    out: I64 = -((-x) // unit)
    return out


def _from_units(x: I64, unit: I64) -> I64:
    """Whole units back to base units, saturated at 2**63-1 (as every sum of the engine is)."""
    out: I64 = x * unit
    big = x > UNLIMITED_INT64 // unit
    if big.any():
        out[big] = UNLIMITED_INT64
    return out


# -- results ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Snapshot:
    keys: tuple[str, ...]
    layout: _Layout
    arrays: Mapping[str, Any]
    tree_ids: Mapping[int, str]  # root position -> tree id
    special: Mapping[str, GroupQuota]
    enable_min_scale: bool


class ElasticResult(Mapping[str, GroupQuota]):
    """The computed values of every group: ``result[name]`` is a :class:`GroupQuota` (built on first access).

    It is a snapshot: later changes to the :class:`ElasticQuotaTree` that produced it do not affect it.
    ``explain(name)`` tells how each of the group's values was reached.
    """

    def __init__(self, snap: _Snapshot) -> None:
        self._s = snap
        self._cache: dict[str, GroupQuota] = {}
        self._tree_masks: dict[int, BOOL] = {}

    # -- mapping ------------------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> GroupQuota:
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        special = self._s.special.get(name)
        if special is not None:
            return special
        if name not in self._s.layout.pos:
            raise KeyError(name)
        self._build_all()
        return self._cache[name]

    def _build_all(self) -> None:
        """Every group's ``GroupQuota`` at once: each field's array turned into Python ints in one call instead of
        a fancy index per group and field (whoever reads one group reads most: the pages, the what-if, a session's
        samples)."""
        s = self._s
        names = s.layout.names
        keys = s.keys
        columns = {f: s.arrays[f].T.tolist() for f in FIELDS}  # per group: its amounts, one per resource
        masks: list[list[bool]] = s.arrays["has_max"].T.tolist()
        for i, name in enumerate(names):
            if s.layout.parent[i] >= 0:
                wanted = [c for c, on in enumerate(masks[i]) if on]
            else:
                wanted = np.flatnonzero(self._mask(i)).tolist()
            named = [keys[c] for c in wanted]
            lists = {
                f: ResourceList.trusted(dict(zip(named, [columns[f][i][c] for c in wanted], strict=True)))
                for f in FIELDS
            }
            self._cache[name] = GroupQuota(name=name, **lists)

    def __iter__(self) -> Iterator[str]:
        yield from self._s.layout.names
        yield from self._s.special

    def __len__(self) -> int:
        return len(self._s.layout.names) + len(self._s.special)

    def __contains__(self, name: object) -> bool:
        return name in self._s.layout.pos or name in self._s.special

    def amounts(self, field: str) -> dict[str, dict[str, int]]:
        """One field (a name of ``FIELDS``) of every group at once, ``name -> {resource: amount}``: what
        ``result[name].<field>`` holds, without building each group's ``GroupQuota`` (a document of every group
        reads a few fields of ten thousand groups). The groups come in the mapping's order."""
        if field not in FIELDS:
            raise KeyError(field)
        lay, keys = self._s.layout, self._s.keys
        values: list[list[int]] = self._s.arrays[field].T.tolist()
        kept: list[list[bool]] = self._s.arrays["has_max"].T.tolist()
        parents: list[int] = lay.parent.tolist()
        out: dict[str, dict[str, int]] = {}
        for i, name in enumerate(lay.names):
            row = values[i]
            mask = kept[i] if parents[i] >= 0 else self._mask(i).tolist()
            out[name] = {keys[c]: row[c] for c, keep in enumerate(mask) if keep}
        for name, quota in self._s.special.items():
            out[name] = dict(getattr(quota, field).raw)
        return out

    # -- structure ----------------------------------------------------------------------------------------------
    @property
    def resources(self) -> tuple[str, ...]:
        """Every resource name the forest's groups govern (the union of their max keys), sorted."""
        return self._s.keys

    def parent(self, name: str) -> str | None:
        """The parent of ``name`` (None for a tree root and for the built-in system/default groups)."""
        if name in self._s.special:
            return None
        p = int(self._s.layout.parent[self._s.layout.pos[name]])
        return None if p < 0 else self._s.layout.names[p]

    def children(self, name: str) -> tuple[str, ...]:
        """The children of ``name`` in name order."""
        lay = self._s.layout
        i = lay.pos[name]
        return lay.names[int(lay.cs[i]) : int(lay.ce[i])]

    def path(self, name: str) -> list[str]:
        """``[name, parent, ..., tree root]``."""
        out = [name]
        p = self.parent(name)
        while p is not None:
            out.append(p)
            p = self.parent(p)
        return out

    def tree_total(self, tree_id: str = "") -> ResourceList:
        """What the tree's root distributes (for the default tree: total minus system and default used)."""
        for r, tid in self._s.tree_ids.items():
            if tid == tree_id:
                return self[self._s.layout.names[r]].runtime
        raise KeyError(tree_id)

    def unassigned(self, name: str) -> ResourceList:
        """The part of ``name``'s runtime that its children's runtimes leave unassigned (negative = overcommit)."""
        lay = self._s.layout
        i = lay.pos[name]
        rt = self._s.arrays["runtime"]
        cols = np.flatnonzero(self._mask(i))
        left = rt[cols, i] - rt[cols, int(lay.cs[i]) : int(lay.ce[i])].sum(axis=1)
        return ResourceList(dict(zip([self._s.keys[c] for c in cols.tolist()], left.tolist(), strict=True)))

    def _mask(self, i: int) -> BOOL:
        lay = self._s.layout
        if lay.parent[i] >= 0:
            hm: BOOL = self._s.arrays["has_max"][:, i]
            return hm
        mask = self._tree_masks.get(i)
        if mask is None:
            members = (lay.root_of == i) & (lay.parent >= 0)
            mask = np.asarray(self._s.arrays["has_max"][:, members].any(axis=1), dtype=np.bool_)
            self._tree_masks[i] = mask
        return mask

    # -- explanation --------------------------------------------------------------------------------------------
    def explain(self, name: str) -> dict[str, Any]:
        """How each value of ``name`` was reached, per resource: floor and why, rounds, the bound that held.

        Computed on request by replaying the group's sibling set; nothing is stored per group beforehand.
        """
        if name in self._s.special:
            return {
                "group": name,
                "outside_tree": True,
                "text": f"{name} is a built-in group outside the quota tree: its runtime is its max, and its used "
                "is taken off the default tree's total.",
            }
        return _explain(self._s, self._s.layout.pos[name], self._mask(self._s.layout.pos[name]))


def _fmt(amount: int, resource: str) -> str:
    return format_amount(amount, resource)


def _explain(s: _Snapshot, i: int, mask: BOOL) -> dict[str, Any]:
    """How group ``i``'s runtime came about, per resource of ``mask``: its values, then (below a tree root) the
    replay of its sibling set's water-filling, the rounds it took part in, its state and what bounds it, in words."""
    lay, a = s.layout, s.arrays
    p = int(lay.parent[i])
    out: dict[str, Any] = {
        "group": lay.names[i],
        "parent": None if p < 0 else lay.names[p],
        "tree_root": lay.names[int(lay.root_of[i])],
        "depth": int(lay.depth[i]),
        "allow_lent": bool(a["lend"][i]),
        "min_scale_exempt": bool(a["exempt"][i]),
        "min_scale_enabled": s.enable_min_scale,
        "resources": {},
    }
    for r in np.flatnonzero(mask).tolist():
        key = s.keys[r]
        e = _explained_values(s, r, i)
        if p < 0:
            e["bound_by"] = "tree total"
            e["text"] = f"{key}: tree root; distributes {_fmt(e['runtime'], key)}"
        else:
            _explain_in_parent(s, r, i, e)
        out["resources"][key] = e
    return out


def _explained_values(s: _Snapshot, r: int, i: int) -> dict[str, Any]:
    """Group ``i``'s values of resource ``r``, where its request comes from and what limits it."""
    lay, a = s.layout, s.arrays
    e: dict[str, Any] = {
        "request": int(a["request"][r, i]),
        "child_request": int(a["child_request"][r, i]),
        "own_request": int(a["own_request"][r, i]),
        "limited_request": int(a["limited_request"][r, i]),
        "max": int(a["max"][r, i]) if a["has_max"][r, i] else None,
        "min": int(a["min"][r, i]),
        "auto_scaled_min": int(a["auto_scaled_min"][r, i]),
        "runtime": int(a["runtime"][r, i]),
        "used": int(a["used"][r, i]),
        "borrowed": int(a["borrowed"][r, i]),
        "lent": int(a["lent"][r, i]),
    }
    e["request_from"] = "own pods and children's limited requests" if lay.ce[i] > lay.cs[i] else "own pods"
    e["raised_to_min"] = (not a["lend"][i]) and int(lay.parent[i]) >= 0 and e["request"] > e["child_request"]
    e["limited_by"] = "max" if e["max"] is not None and e["request"] > e["max"] else "request"
    cap = int(a["effective_max"][r, i])
    borrowing = e["max"] is not None and cap < e["max"]
    e["borrowing_limit"] = cap - e["min"] if borrowing else None
    if borrowing and e["request"] > cap:
        e["limited_by"] = "borrowing limit"
    lending = int(a["lending_limit"][r, i])
    e["lending_limit"] = lending if lending < MAX_AMOUNT else None
    e["kept_by_lending_limit"] = int(a["keep"][r, i])
    e["raised_to_keep"] = bool(a["lend"][i]) and e["kept_by_lending_limit"] > 0 and e["request"] > e["child_request"]
    return e


def _explain_in_parent(s: _Snapshot, r: int, i: int, e: dict[str, Any]) -> None:
    """Replays the water-filling of group ``i``'s sibling set on resource ``r`` (checking that it gives the
    runtime the kernel computed) and adds the rounds, the floor, the state and the text to ``e``."""
    lay, a = s.layout, s.arrays
    key, p = s.keys[r], int(lay.parent[i])
    lo, hi = int(lay.cs[p]), int(lay.ce[p])
    k = i - lo
    u = split_unit(key)  # the sibling set is split in whole units of u base units (1: millicores, bytes)
    total = int(a["runtime"][r, p])
    mins = [int(v) for v in a["min"][r, lo:hi]]
    floors = [int(v) for v in a["auto_scaled_min"][r, lo:hi]]
    weights = [int(v) for v in a["weight"][r, lo:hi]]
    lends = [bool(v) for v in a["lend"][lo:hi]]
    trace = ref.Trace()
    replay = ref.waterfill(
        ref.in_units(total, u),
        [ref.in_units(v, u) for v in floors],
        [ref.in_units(int(v), u) for v in a["limited_request"][r, lo:hi]],
        [ref.in_units(v, u) for v in weights],
        lends,
        trace,
    )
    if ref.from_units(replay[k], u) != e["runtime"]:  # pragma: no cover - the kernels and the reference disagree
        raise RuntimeError(f"explanation of {lay.names[i]}/{key} does not reproduce its runtime")
    scaled = s.enable_min_scale and ref.in_units(total, u) < sum(ref.in_units(m, u) for m in mins)
    e.update(parent_runtime=total, split_unit=u, weight=weights[k], sum_min=sum(mins), min_scaled=scaled)
    if scaled:
        e["exempt_min_sum"] = sum(m for m, x in zip(mins, a["exempt"][lo:hi].tolist(), strict=True) if x)
    e["floor"] = floors[k]
    e["rounds"] = [
        {
            "round": n,
            "pool": rnd.pool * u,
            "weight": weights[k],
            "total_weight": sum(weights[j] for j in rnd.shares),
            "share": rnd.shares[k] * u,
            "capped": k in rnd.capped,
        }
        for n, rnd in enumerate(trace.rounds, start=1)
        if k in rnd.shares
    ]
    e["unassigned_in_parent"] = trace.leftover * u
    _explain_state(e, lends[k])
    e["text"] = _explain_text(key, e, exempt=bool(a["exempt"][i]))


def _explain_state(e: dict[str, Any], lends: bool) -> None:
    """A group's state in its sibling set (hungry, lends, keeps its floor) and what bounds its runtime."""
    if e["limited_request"] <= e["floor"]:
        e["state"] = "lends" if lends else "keeps floor"
        e["bound_by"] = "request below floor" if lends else "floor (does not lend)"
        return
    e["state"] = "hungry"
    if e["runtime"] >= e["limited_request"]:
        e["bound_by"] = e["limited_by"] if e["limited_by"] in ("max", "borrowing limit") else "request"
    elif e["weight"] <= 0:
        e["bound_by"] = "weight 0"
    else:
        e["bound_by"] = "parent runtime"


def _explain_text(key: str, e: dict[str, Any], *, exempt: bool) -> str:
    """The explanation of one resource of a group below a tree root, in words."""
    f, q, scaled = e["floor"], e["limited_request"], e["min_scaled"]
    why = "its min" if not scaled else ("its min (exempt from scaling)" if exempt else "its min scaled down")
    text = f"{key}: floor {_fmt(f, key)} ({why}"
    if scaled:
        text += f"; parent runtime {_fmt(e['parent_runtime'], key)} < sum of mins {_fmt(e['sum_min'], key)}"
    text += ")"
    if e.get("raised_to_keep"):
        text += (
            f", keeps {_fmt(e['kept_by_lending_limit'], key)} of its min {_fmt(e['min'], key)} by its lending limit "
            f"{_fmt(e['lending_limit'] or 0, key)} (its pods ask {_fmt(e['child_request'], key)})"
        )
    if e["state"] == "hungry":
        got = sum(rd["share"] for rd in e["rounds"])
        text += f", asks {_fmt(q, key)}; received {_fmt(got, key)} in {plural(len(e['rounds']), 'round')} of sharing"
        if e["split_unit"] > 1:
            text += " (in whole units, as Koordinator splits every resource but cpu)"
    elif e["state"] == "lends":
        text += f", asks only {_fmt(q, key)} and lends the rest"
    else:
        text += f", asks {_fmt(q, key)} but keeps its floor (does not lend)"
    bound = e["bound_by"]
    if bound == "borrowing limit":
        limit = e["borrowing_limit"] or 0
        bound = (
            f"its borrowing limit (min {_fmt(e['min'], key)} + borrowing limit {_fmt(limit, key)} = "
            f"{_fmt(e['min'] + limit, key)})"
        )
    return f"{text}; runtime {_fmt(e['runtime'], key)}, bound by {bound}"


# -- the engine ---------------------------------------------------------------------------------------------------


class ElasticQuotaTree:
    """The elastic-quota state of a forest of quota groups, recomputed incrementally.

    Build it once, then report changes (``set_request``, ``set_used``, ``update_group``, ``remove_group``,
    ``set_total``); ``result()`` recomputes only the request paths and sibling sets those changes touched.
    Configuration errors that would make the computation meaningless (a missing parent, a cycle, two roots of one
    tree, amounts outside 0..2**62) raise ``ValueError`` naming the group and leave the tree unchanged.
    """

    # (resource, group) int64 arrays in layout order; see _fill and _recompute_all
    _mn: I64
    _mx: I64  # max, lowered to min + borrowing limit where that is smaller: what the computation caps at
    _smx: I64  # max as set (for the explanations)
    _keep: I64  # what a lending limit keeps of the min, (min - lending limit)+; 0 without one
    _lcap: I64  # the lending limit (what others may take of the unused min), UNLIMITED_INT64 without one
    _hm: BOOL
    _w: I64
    _sreq: I64
    _sused: I64
    _lend: BOOL
    _exempt: BOOL
    _creq: I64
    _req: I64
    _lim: I64
    _used: I64
    _asm: I64
    _rt: I64
    _bor: I64
    _lent: I64
    _keys: tuple[str, ...]
    _kidx: dict[str, int]
    _unit: I64  # per resource: base units of the smallest amount the split hands out (split_unit)
    _lay: _Layout
    _full: bool
    _roots_dirty: bool
    _dirty: set[int]
    _used_dirty: set[int]

    def __init__(
        self,
        groups: Iterable[QuotaGroupSpec],
        total: Mapping[str, int],
        *,
        enable_min_scale: bool = True,
        system_used: Mapping[str, int] = _EMPTY,
        default_used: Mapping[str, int] = _EMPTY,
        requests: Mapping[str, Mapping[str, int]] | None = None,
        used: Mapping[str, Mapping[str, int]] | None = None,
        tree_totals: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        self._enable = enable_min_scale
        self._specs, self._special = _split_specs(groups)
        self._total = ResourceList(total)
        self._system_used = ResourceList(system_used)
        self._default_used = ResourceList(default_used)
        self._tree_totals = {tid: ResourceList(t) for tid, t in (tree_totals or {}).items()}
        self._requests: dict[str, ResourceList] = {}
        self._used_in: dict[str, ResourceList] = {}
        for name, rl in (requests or {}).items():
            self._check_target(name, "request")
            self._requests[name] = _as_rl(rl)
        for name, rl in (used or {}).items():
            self._check_target(name, "used")
            self._used_in[name] = _as_rl(rl)
        self._check_totals()
        self._shared: set[str] = set()
        # system/default -> (spec, request, used) and the values made of them (``_special_quota``)
        self._specials: dict[
            str, tuple[tuple[QuotaGroupSpec, ResourceList | None, ResourceList | None], GroupQuota]
        ] = {}
        self._rebuild()

    # -- public changes -----------------------------------------------------------------------------------------
    def set_request(self, name: str, request: Mapping[str, int]) -> None:
        """The pods of group ``name`` now request ``request`` in total (pending and assigned)."""
        i = self._write_request(name, request)
        if i is not None:
            self._refresh_request(i)

    def set_used(self, name: str, used: Mapping[str, int]) -> None:
        """The assigned pods of group ``name`` now use ``used`` in total."""
        i = self._write_used(name, used)
        if i is not None:
            self._refresh_used(i)

    def set_requests(self, requests: Mapping[str, Mapping[str, int]]) -> None:
        """``set_request`` for several groups: their rows written, then each group above them brought up to date
        once, deepest first (not once for each group below it); the same values."""
        rows = [i for name, request in requests.items() if (i := self._write_request(name, request)) is not None]
        self._refresh_rows(rows, self._request_step, self._dirty)

    def set_used_of(self, used: Mapping[str, Mapping[str, int]]) -> None:
        """``set_used`` for several groups, each group above them brought up to date once (as ``set_requests``)."""
        rows = [i for name, amounts in used.items() if (i := self._write_used(name, amounts)) is not None]
        self._refresh_rows(rows, self._used_step, self._used_dirty)

    def _write_request(self, name: str, request: Mapping[str, int]) -> int | None:
        """Group ``name``'s own request row set to ``request``; its position, for the groups above it to be brought
        up to date (None: a group outside the trees, which has no row)."""
        self._check_target(name, "request")
        rl = ResourceList(request)
        if name in OUTSIDE_GROUPS:
            self._requests[name] = rl
            return None
        i = self._lay.pos[name]
        row = _vector(self._masked(rl, name), self._kidx, f"request of {name}")
        self._requests[name] = rl
        self._own("_sreq", "_creq", "_req", "_lim")
        self._sreq[:, i] = row
        return i

    def _write_used(self, name: str, used: Mapping[str, int]) -> int | None:
        """Group ``name``'s own used row set to ``used`` (as ``_write_request``)."""
        self._check_target(name, "used")
        rl = ResourceList(used)
        if name in OUTSIDE_GROUPS:
            self._used_in[name] = rl
            self._roots_dirty = True
            return None
        i = self._lay.pos[name]
        row = _vector(self._masked(rl, name), self._kidx, f"used of {name}")
        self._used_in[name] = rl
        self._own("_sused", "_used")
        self._sused[:, i] = row
        return i

    def set_total(self, total: Mapping[str, int], tree_id: str = "") -> None:
        """The cluster total (``tree_id=""``) or the total of another tree changed."""
        rl = ResourceList(total)
        old = (self._total, dict(self._tree_totals))
        if tree_id:
            self._tree_totals[tree_id] = rl
        else:
            self._total = rl
        try:
            self._check_totals()
        except ValueError:
            self._total, self._tree_totals = old
            raise
        self._roots_dirty = True

    def update_group(self, spec: QuotaGroupSpec) -> None:
        """Add a group or change one (min, max, weight, lending, exemption, parent)."""
        name = spec.name
        if name in OUTSIDE_GROUPS:
            self._special[name] = spec
            return
        old = self._specs.get(name)
        specs = dict(self._specs)
        specs[name] = spec
        _check_spec(spec, specs)
        if spec.parent is None:
            for g in self._specs.values():
                if g.parent is None and g.tree_id == spec.tree_id and g.name != name:
                    raise ValueError(f"quota groups {g.name!r} and {name!r} are both roots of tree {spec.tree_id!r}")
        cur = spec.parent
        while cur is not None:  # refuse a cycle before changing anything
            if cur == name:
                raise ValueError(_cycle_message_names(specs, name))
            cur = specs[cur].parent
        self._check_row_amounts(spec)
        new_keys = {k for k in spec.max} - set(self._keys)
        if new_keys and spec.parent is not None:
            self._specs = specs
            self._rebuild()
            return
        if old is None or old.parent != spec.parent:
            self._specs = specs
            old_parent = old.parent if old is not None else None
            self._relayout(name, old_parent)
            return
        self._specs = specs
        self._own(*_STATE)
        i = self._lay.pos[name]
        self._write_row(i, spec)
        self._refresh_request(i, force_parent=True)
        self._refresh_used(i, force_parent=True)
        if spec.parent is None:
            self._roots_dirty = True

    def remove_group(self, name: str) -> None:
        """Delete a group; it must have no children (Koordinator's webhook forbids it too)."""
        if name in OUTSIDE_GROUPS and name in self._special:
            del self._special[name]
            self._requests.pop(name, None)
            self._used_in.pop(name, None)
            self._roots_dirty = True
            return
        if name == ROOT_GROUP:
            raise ValueError(f"quota group {ROOT_GROUP!r} cannot be removed")
        if name not in self._specs:
            raise KeyError(name)
        kids = [g.name for g in self._specs.values() if g.parent == name]
        if kids:
            raise ValueError(f"quota group {name!r} still has child groups: {', '.join(sorted(kids))}")
        old_parent = self._specs[name].parent
        specs = dict(self._specs)
        del specs[name]
        self._specs = specs
        self._requests.pop(name, None)
        self._used_in.pop(name, None)
        self._relayout(None, old_parent)

    def recompute_all(self) -> ElasticResult:
        """Recompute every value from scratch (the incremental path gives the same numbers) and return them."""
        self._full = True
        return self.result()

    def result(self, *, copy: bool = True) -> ElasticResult:
        """Bring every value up to date (only what changed is recomputed) and return them.

        The result is a snapshot: the arrays it reads are copied before the tree next changes them (an O(groups)
        copy of the arrays a change touches). With ``copy=False`` nothing is copied and the result is only valid
        until the next change to the tree: for callers that read it at once, in a loop of small changes.
        """
        self._flush()
        if copy:
            self._shared = set(_STATE)
        arrays = {
            "request": self._req,
            "limited_request": self._lim,
            "used": self._used,
            "auto_scaled_min": self._asm,
            "runtime": self._rt,
            "borrowed": self._bor,
            "lent": self._lent,
            "child_request": self._creq,
            "own_request": self._sreq,
            "min": self._mn,
            "max": self._smx,
            "effective_max": self._mx,
            "keep": self._keep,
            "lending_limit": self._lcap,
            "has_max": self._hm,
            "weight": self._w,
            "lend": self._lend,
            "exempt": self._exempt,
        }
        roots = np.flatnonzero(self._lay.parent < 0).tolist()
        tree_ids = {r: self._specs[self._lay.names[r]].tree_id for r in roots}
        special = {n: self._special_quota(n, g) for n, g in self._special.items()}
        return ElasticResult(_Snapshot(self._keys, self._lay, arrays, tree_ids, special, self._enable))

    def groups_over_runtime(self) -> list[str] | None:
        """The groups of the trees (their roots aside) whose used exceeds their runtime on a resource their max names,
        as ``result`` would show them (``GroupQuota.used`` against ``runtime``), read from the values as they stand:
        a change of used alone leaves every runtime as it was (the used moves only what is borrowed and lent, which
        this leaves for ``result`` to bring up to date). None when a runtime may have to be recomputed (a request,
        total or spec changed since the last ``result``): ``result`` then."""
        if self._full or self._dirty or self._roots_dirty:
            return None
        over = ((self._used > self._rt) & self._hm).any(axis=0) & (self._lay.parent >= 0)
        names = self._lay.names
        return [names[i] for i in np.flatnonzero(over).tolist()]

    # -- building -----------------------------------------------------------------------------------------------
    def _check_target(self, name: str, what: str) -> None:
        if name in OUTSIDE_GROUPS:
            return
        if name not in self._specs:
            raise ValueError(f"{what} given for unknown quota group {name!r}")

    def _check_totals(self) -> None:
        for what, rl in (
            [("total", self._total), ("system_used", self._system_used)]
            + [("default_used", self._default_used)]
            + [(f"tree_totals[{t!r}]", v) for t, v in self._tree_totals.items()]
        ):
            for k, v in rl.items():
                _checked(v, what, k)

    def _check_row_amounts(self, g: QuotaGroupSpec) -> None:
        lists: tuple[tuple[str, Mapping[str, int]], ...] = (
            ("min", g.min),
            ("max", g.max),
            ("shared_weight", g.shared_weight or _EMPTY),
        )
        for what, rl in lists:
            for k, v in rl.items():
                _checked(v, f"quota group {g.name!r} {what}", k)

    def _masked(self, rl: Mapping[str, int], name: str) -> dict[str, int]:
        g = self._specs[name]
        keep: Mapping[str, int] = g.max if g.parent is not None else self._kidx  # a root: every resource
        return {k: v for k, v in rl.items() if k in keep}

    def _rebuild(self) -> None:
        """Lay the forest out and fill every array from the specs and inputs (then recompute everything)."""
        lay = _make_layout(self._specs)
        keys = tuple(sorted({k for g in self._specs.values() if g.parent is not None for k in g.max}))
        self._keys = keys
        self._kidx = {k: r for r, k in enumerate(keys)}
        self._unit = np.array([split_unit(k) for k in keys], np.int64)
        self._lay = lay
        self._fill()
        self._full = True
        self._roots_dirty = True
        self._dirty = set()
        self._used_dirty = set()

    def _fill(self) -> None:
        """Build every input array in one pass over the specs (Python lists, then one conversion each)."""
        names, kidx, nk = self._lay.names, self._kidx, len(self._keys)
        n = len(names)
        cols: dict[str, list[list[int]]] = {a: [[0] * n for _ in range(nk)] for a in ("mn", "mx", "w", "sreq", "sused")}
        hm = [[False] * n for _ in range(nk)]
        lend = [True] * n
        exempt = [False] * n
        mn_c, mx_c, w_c, rq_c, us_c = (cols[a] for a in ("mn", "mx", "w", "sreq", "sused"))
        for row in mx_c:
            row[:] = [UNLIMITED_INT64] * n
        requests, used = self._requests, self._used_in
        limit_rows: list[tuple[int, QuotaGroupSpec]] = []
        for i, nm in enumerate(names):
            g = self._specs[nm]
            mx = g.max
            for k, v in g.min.items():
                r = kidx.get(k)
                if r is not None:
                    mn_c[r][i] = v
            sw = g.shared_weight or mx
            for k, v in mx.items():
                r = kidx.get(k)
                if r is not None:
                    mx_c[r][i] = v
                    hm[r][i] = True
                    w_c[r][i] = sw[k] if k in sw else v  # noqa: SIM401 - ResourceList.get never defaults
            is_root = g.parent is None
            for src, dst in ((requests.get(nm), rq_c), (used.get(nm), us_c)):
                if src:
                    for k, v in src.items():
                        r = kidx.get(k)
                        if r is not None and (is_root or k in mx):
                            dst[r][i] = v
            lend[i] = lending.lends(g)
            exempt[i] = g.min_scale_exempt
            if (g.borrowing_limit or g.lending_limit) and not is_root:
                limit_rows.append((i, g))
        what = {"mn": "min", "mx": "max", "w": "shared_weight", "sreq": "request", "sused": "used"}
        self._hm = np.array(hm, dtype=np.bool_).reshape(nk, n)
        for a, lists in cols.items():
            try:
                arr = np.array(lists, dtype=np.int64).reshape(nk, n)
            except (OverflowError, TypeError):
                arr = None
            if arr is None or (arr < 0).any() or ((arr > MAX_AMOUNT) & (self._hm if a == "mx" else True)).any():
                self._raise_bad_amount(lists, what[a])
            setattr(self, f"_{a}", arr)
        self._lend = np.array(lend, dtype=np.bool_)
        self._exempt = np.array(exempt, dtype=np.bool_)
        self._smx = self._mx.copy()
        self._keep = np.zeros((nk, n), np.int64)
        self._lcap = np.full((nk, n), UNLIMITED_INT64, np.int64)
        for i, g in limit_rows:
            self._write_limits(i, g)
        for attr in ("_creq", *_ARRAY_FIELDS.values()):
            setattr(self, attr, np.zeros((nk, n), np.int64))
        self._shared = set()

    def _raise_bad_amount(self, lists: list[list[int]], what: str) -> None:
        for r, row in enumerate(lists):
            for i, v in enumerate(row):
                if what == "max" and not self._hm[r, i]:
                    continue
                _checked(v, f"quota group {self._lay.names[i]!r} {what}", self._keys[r])
        raise AssertionError("unreachable")  # pragma: no cover

    def _write_row(self, i: int, g: QuotaGroupSpec) -> None:
        keys, kidx = self._keys, self._kidx
        mx = g.max
        sw = g.shared_weight if g.shared_weight else mx
        self._mn[:, i] = _vector(g.min, kidx, f"quota group {g.name!r} min")
        # ResourceList reads a missing name as 0, so .get(k, UNLIMITED_INT64) would never return UNLIMITED_INT64.
        self._mx[:, i] = [mx[k] if k in mx else UNLIMITED_INT64 for k in keys]  # noqa: SIM401
        self._hm[:, i] = [k in mx for k in keys]
        self._w[:, i] = [(sw[k] if k in sw else mx[k]) if k in mx else 0 for k in keys]
        req = self._requests.get(g.name)
        used = self._used_in.get(g.name)
        self._sreq[:, i] = _vector(self._masked(req, g.name), kidx, f"request of {g.name}") if req else 0
        self._sused[:, i] = _vector(self._masked(used, g.name), kidx, f"used of {g.name}") if used else 0
        self._lend[i] = lending.lends(g)
        self._exempt[i] = g.min_scale_exempt
        self._smx[:, i] = self._mx[:, i]
        self._write_limits(i, g)

    def _write_limits(self, i: int, g: QuotaGroupSpec) -> None:
        """Group ``i``'s borrowing and lending limits (Kueue's meaning), on the resources its max governs: the
        computation caps it at ``min + borrowing limit`` where that is below its max, and it keeps
        ``(min - lending limit)+`` of its min even unasked (a group that does not lend keeps all of it anyway).
        A tree root has neither: it has nothing to borrow from and no one to lend to."""
        self._keep[:, i] = 0
        self._lcap[:, i] = UNLIMITED_INT64
        if g.parent is None:
            return
        for k, b in g.borrowing_limit.items():
            r = self._kidx.get(k)
            if r is not None and self._hm[r, i]:
                cap = min(int(self._mn[r, i]) + _checked(b, "borrowing_limit", k), UNLIMITED_INT64)
                self._mx[r, i] = min(int(self._mx[r, i]), cap)
        for k, v in g.lending_limit.items():
            r = self._kidx.get(k)
            if r is not None and self._hm[r, i]:
                self._lcap[r, i] = _checked(v, "lending_limit", k)
                self._keep[r, i] = lending.kept(int(self._mn[r, i]), v)

    def _relayout(self, changed: str | None, old_parent: str | None) -> None:
        """Re-order after a structural change, keeping every computed value; then fix the touched paths."""
        old_lay = self._lay
        lay = _make_layout(self._specs)
        src = np.array([old_lay.pos.get(nm, -1) for nm in lay.names], np.int64)
        have = src >= 0
        take = src[have]
        for attr in _STATE:
            old = getattr(self, attr)
            if old.ndim == 1:
                new = np.ones(len(lay.names), np.bool_) if attr == "_lend" else np.zeros(len(lay.names), old.dtype)
                new[have] = old[take]
            else:
                fill = UNLIMITED_INT64 if attr in _UNLIMITED_FILL else 0
                new = np.full((old.shape[0], len(lay.names)), fill, old.dtype)
                new[:, have] = old[:, take]
            setattr(self, attr, new)
        self._shared = set()
        self._lay = lay
        self._dirty = {lay.pos[old_lay.names[p]] for p in self._dirty if old_lay.names[p] in lay.pos}
        self._used_dirty = {lay.pos[old_lay.names[p]] for p in self._used_dirty if old_lay.names[p] in lay.pos}
        self._roots_dirty = True
        if old_parent is not None and old_parent in lay.pos:
            j = lay.pos[old_parent]
            self._dirty.add(j)
            self._used_dirty.add(j)
            self._refresh_request(j)
            self._refresh_used(j)
        if changed is not None:
            i = lay.pos[changed]
            self._write_row(i, self._specs[changed])
            self._refresh_request(i, force_parent=True, whole_path=True)
            self._refresh_used(i, force_parent=True, whole_path=True)
            if lay.parent[i] < 0:
                self._dirty.add(i)

    def _own(self, *attrs: str) -> None:
        """Copy the arrays named before changing them if a result still refers to them (copy-on-write)."""
        for attr in attrs:
            if attr in self._shared:
                setattr(self, attr, getattr(self, attr).copy())
                self._shared.discard(attr)

    # -- incremental paths --------------------------------------------------------------------------------------
    def _kid_sum(self, arr: I64, i: int) -> I64:
        lo, hi = int(self._lay.cs[i]), int(self._lay.ce[i])
        if lo == hi:
            return np.zeros(arr.shape[0], np.int64)
        block = arr[:, lo:hi]
        if hi - lo == 1:
            return block[:, 0].copy()
        if block.size == 0 or int(block.max()) <= MAX_AMOUNT // (hi - lo):
            return np.asarray(block.sum(axis=1), dtype=np.int64)
        return np.array([min(sum(int(v) for v in row), UNLIMITED_INT64) for row in block], np.int64)

    def _request_step(self, i: int) -> bool:
        """Recompute group ``i``'s request and limited request from its own and its children's; whether the limited
        request changed."""
        creq = kern.sat_add(self._sreq[:, i], self._kid_sum(self._lim, i))
        req = (
            creq
            if self._lay.parent[i] < 0
            else lending.request_floor(creq, self._keep[:, i], self._mn[:, i], self._lend[i])
        )
        lim = np.minimum(req, self._mx[:, i])
        changed = not np.array_equal(lim, self._lim[:, i])
        self._creq[:, i] = creq
        self._req[:, i] = req
        self._lim[:, i] = lim
        return changed

    def _used_step(self, i: int) -> bool:
        """Recompute group ``i``'s used from its own and its children's; whether it changed."""
        used = kern.sat_add(self._sused[:, i], self._kid_sum(self._used, i))
        changed = not np.array_equal(used, self._used[:, i])
        self._used[:, i] = used
        return changed

    def _refresh_rows(self, rows: list[int], step: Callable[[int], bool], dirty: set[int]) -> None:
        """``step`` on ``rows`` and, while it changes something, on their parents: each group once, deepest first (a
        parent's position is below its children's), its parent marked in ``dirty`` when it changed."""
        par = self._lay.parent
        todo = set(rows)
        while todo:
            i = max(todo)
            todo.discard(i)
            if step(i):
                p = int(par[i])
                if p >= 0:
                    dirty.add(p)
                    todo.add(p)

    def _refresh_request(self, i: int, force_parent: bool = False, whole_path: bool = False) -> None:
        """Recompute request and limited request from ``i`` up while the limited request keeps changing."""
        self._refresh_path(i, self._request_step, self._dirty, force_parent, whole_path)

    def _refresh_used(self, i: int, force_parent: bool = False, whole_path: bool = False) -> None:
        self._refresh_path(i, self._used_step, self._used_dirty, force_parent, whole_path)

    def _refresh_path(
        self, i: int, step: Callable[[int], bool], dirty: set[int], force_parent: bool, whole_path: bool
    ) -> None:
        par = self._lay.parent
        first = True
        while i >= 0:
            changed = step(i)
            p = int(par[i])
            if p >= 0 and (changed or (first and force_parent)):
                dirty.add(p)
            if not changed and not whole_path:
                break
            first = False
            i = p

    # -- recomputation ------------------------------------------------------------------------------------------
    def _root_total(self, i: int) -> list[int]:
        """What tree root ``i`` distributes, rounded up to the whole units of the split (:func:`split_unit`)."""
        name = self._lay.names[i]
        keys = self._keys
        if name == ROOT_GROUP:
            sys_used = self._system_used or self._used_in.get(SYSTEM_GROUP) or ResourceList()
            def_used = self._default_used or self._used_in.get(DEFAULT_GROUP) or ResourceList()
            amounts = [max(0, self._total[k] - sys_used[k] - def_used[k]) for k in keys]
        else:
            g = self._specs[name]
            t = self._tree_totals.get(g.tree_id)
            src = t if t is not None else g.min
            amounts = [min(src[k], MAX_AMOUNT) for k in keys]
        return [ref.round_up(v, split_unit(k)) for k, v in zip(keys, amounts, strict=True)]

    def _update_roots(self) -> None:
        if not self._roots_dirty:
            return
        self._roots_dirty = False
        for i in np.flatnonzero(self._lay.parent < 0).tolist():
            t = np.array(self._root_total(i), np.int64)
            if self._full or not np.array_equal(t, self._rt[:, i]):
                self._rt[:, i] = t
                self._dirty.add(i)
            self._asm[:, i] = self._mn[:, i]
            self._bor[:, i] = 0
            self._lent[:, i] = 0

    def _flush(self) -> None:
        if self._full:
            self._own("_creq", "_req", "_lim", "_used", *_ARRAY_FIELDS.values())
        elif self._roots_dirty or self._dirty:
            self._own("_asm", "_rt", "_bor", "_lent")
        elif self._used_dirty:
            self._own("_bor", "_lent")
        if self._full:
            self._recompute_all()
            return
        self._update_roots()
        depth = self._lay.depth
        pending = self._dirty
        while pending:
            d = min(int(depth[p]) for p in pending)
            now = sorted(p for p in pending if depth[p] == d)
            pending.difference_update(now)
            self._used_dirty.difference_update(now)
            parents, counts, kids = _children_of(self._lay, np.array(now, np.int64))
            if parents.size:
                pending.update(self._solve(parents, counts, kids).tolist())
        if self._used_dirty:
            parents, counts, kids = _children_of(self._lay, np.array(sorted(self._used_dirty), np.int64))
            self._used_dirty.clear()
            if parents.size:
                self._solve(parents, counts, kids, lent_only=True)

    def _recompute_all(self) -> None:
        lay, nk = self._lay, len(self._keys)
        self._creq[:] = self._sreq
        self._used[:] = self._sused
        for d in range(len(lay.levels) - 1, -1, -1):
            lo, hi = lay.levels[d]
            cr = self._creq[:, lo:hi]
            req = lending.request_floor(cr, self._keep[:, lo:hi], self._mn[:, lo:hi], self._lend[lo:hi])
            self._req[:, lo:hi] = req
            self._lim[:, lo:hi] = np.minimum(req, self._mx[:, lo:hi])
            if d == 0 or nk == 0:
                continue
            par = lay.parent[lo:hi]
            st = kern.run_starts(par)
            parents = par[st]
            m, s = hi - lo, st.size
            flat_st = (np.arange(nk, dtype=np.int64)[:, None] * m + st[None, :]).ravel()
            flat_cn = np.tile(kern.counts_of(st, m), nk)
            for src, dst in ((self._lim, self._creq), (self._used, self._used)):
                sums, _ = kern.segsum(np.ascontiguousarray(src[:, lo:hi]).ravel(), flat_st, flat_cn)
                dst[:, parents] = kern.sat_add(dst[:, parents], sums.reshape(nk, s))
        self._full = False
        self._roots_dirty = True
        self._update_roots()
        for d in range(1, len(lay.levels)):
            lo, hi = lay.levels[d]
            par = lay.parent[lo:hi]
            st = kern.run_starts(par)
            self._solve(par[st], kern.counts_of(st, hi - lo), np.arange(lo, hi, dtype=np.int64), full=True)
        self._dirty.clear()
        self._used_dirty.clear()

    def _solve(
        self, parents: I64, counts: I64, kids: I64, *, full: bool = False, lent_only: bool = False
    ) -> npt.NDArray[np.intp]:
        """Recompute the sibling sets of ``parents`` (children ``kids``); return children to cascade into."""
        nk, m, s = len(self._keys), int(kids.size), int(parents.size)
        if nk == 0 or m == 0:
            return np.zeros(0, np.intp)
        cols: slice | I64 = slice(int(kids[0]), int(kids[-1]) + 1) if full else kids
        rows = np.arange(nk, dtype=np.int64)[:, None]
        seg_local = np.repeat(np.arange(s, dtype=np.int64), counts)
        seg = (rows * s + seg_local[None, :]).ravel()
        starts = (rows * m + (np.cumsum(counts) - counts)[None, :]).ravel()
        cnts = np.tile(counts, nk)
        total = self._rt[:, parents].ravel()
        lend = np.tile(self._lend[cols], nk)
        used = self._used[:, cols].ravel()
        whole = bool((self._unit > 1).any())  # some resource is split in whole units: work in those units
        if whole:
            unit = np.repeat(self._unit, m)
            total = _in_units(total, np.repeat(self._unit, s))
            used = _in_units(used, unit)
        if lent_only:
            asm = self._asm[:, cols].ravel()
            if whole:
                asm = asm // unit  # stored auto-scaled mins are whole units already
        else:
            mins = self._mn[:, cols].ravel()
            lim = self._lim[:, cols].ravel()
            weight = self._w[:, cols].ravel()
            if whole:
                mins, lim, weight = _in_units(mins, unit), _in_units(lim, unit), _in_units(weight, unit)
            if self._enable:
                asm = kern.scale_mins(total, mins, np.tile(self._exempt[cols], nk), seg, starts, cnts)
            else:
                asm = mins
            runtime = kern.waterfill(total, asm, lim, weight, lend, seg, starts, cnts)
            if whole:
                runtime = _from_units(runtime, unit)
            runtime = runtime.reshape(nk, m)
        caps = self._lcap[:, cols].ravel()
        if whole:
            # a lending limit is read in whole units like the min it limits (rounded up, ``Quantity.Value()``):
            # a limit equal to the min lends all of it
            caps = np.where(caps >= UNLIMITED_INT64, caps, _in_units(caps, unit))
        bor, lent = lending.lend_and_borrow_sets(total, asm, used, lend, seg, starts, cnts, caps)
        if whole:
            bor, lent = _from_units(bor, unit), _from_units(lent, unit)
        self._bor[:, cols] = bor.reshape(nk, m)
        self._lent[:, cols] = lent.reshape(nk, m)
        if lent_only:
            return np.zeros(0, np.intp)
        self._asm[:, cols] = (_from_units(asm, unit) if whole else asm).reshape(nk, m)
        if full:
            self._rt[:, cols] = runtime
            return np.zeros(0, np.intp)
        changed = (self._rt[:, cols] != runtime).any(axis=0) & (self._lay.ce[kids] > self._lay.cs[kids])
        self._rt[:, cols] = runtime
        return np.asarray(kids[changed], dtype=np.intp)

    def _special_quota(self, name: str, g: QuotaGroupSpec) -> GroupQuota:
        """The values of ``system`` or ``default`` (outside the trees), kept while their spec, request and used are
        equal to those they were made of (a result of every session and recycling pass reads them)."""
        request, used = self._requests.get(name), self._used_in.get(name)
        kept = self._specials.get(name)
        if kept is not None and kept[0] == (g, request, used):
            return kept[1]
        made = _special_quota(name, g, request or ResourceList(), used or ResourceList())
        self._specials[name] = ((g, request, used), made)
        return made


def _special_quota(name: str, g: QuotaGroupSpec, req: ResourceList, used: ResourceList) -> GroupQuota:
    keys = sorted(g.max)

    def rl(values: Iterable[int]) -> ResourceList:
        return ResourceList(dict(zip(keys, values, strict=True)))

    return GroupQuota(
        name=name,
        request=rl(req[k] for k in keys),
        limited_request=rl(min(req[k], g.max[k]) for k in keys),
        used=rl(used[k] for k in keys),
        auto_scaled_min=rl(g.min[k] for k in keys),
        runtime=rl(g.max[k] for k in keys),
        borrowed=rl(max(0, used[k] - g.min[k]) for k in keys),
        lent=rl(0 for _ in keys),
    )


def _cycle_message_names(specs: Mapping[str, QuotaGroupSpec], name: str) -> str:
    chain = [name]
    cur = specs[name].parent
    while cur is not None and cur != name:
        chain.append(cur)
        cur = specs[cur].parent
    chain.append(name)
    return "quota groups form a cycle: " + " -> ".join(repr(c) for c in chain)


def compute_runtimes(
    groups: Sequence[QuotaGroupSpec],
    requests: Mapping[str, ResourceList],
    total: ResourceList,
    *,
    used: Mapping[str, ResourceList] | None = None,
    system_used: ResourceList = _EMPTY,
    default_used: ResourceList = _EMPTY,
    enable_min_scale: bool = True,
    tree_totals: Mapping[str, ResourceList] | None = None,
) -> ElasticResult:
    """Compute every group's request, runtime, auto-scaled min, borrowed and lent in one go (see the module doc).

    ``requests`` and ``used`` are per group (each group's own pods, already summed); ``system_used`` and
    ``default_used`` default to the ``used`` entries of the built-in system and default groups.
    """
    tree = ElasticQuotaTree(
        groups,
        total,
        enable_min_scale=enable_min_scale,
        system_used=system_used,
        default_used=default_used,
        requests=requests,
        used=used,
        tree_totals=tree_totals,
    )
    return tree.result()


# -- scheduling-side checks -----------------------------------------------------------------------------------


def _limit_of(group: GroupQuota | Mapping[str, int]) -> Mapping[str, int]:
    return group.runtime if isinstance(group, GroupQuota) else group


def effective_max(spec: QuotaGroupSpec) -> Mapping[str, int]:
    """The group's max, lowered to ``min + borrowing limit`` on the resources where that is smaller: the most it may
    use when runtime quotas are off (with them on, its runtime is never above it)."""
    if not spec.borrowing_limit:
        return spec.max
    out = dict(spec.max.items())
    for k, b in spec.borrowing_limit.items():
        if k in out:
            out[k] = min(out[k], spec.min[k] + b)
    return out


def runtime_excess(
    group: GroupQuota | Mapping[str, int], used: Mapping[str, int], request: Mapping[str, int]
) -> dict[str, int]:
    """By how much ``used + request`` passes the runtime, per resource; only the runtime's keys are compared.

    Koordinator's PreFilter compares with ``quotav1.LessThanOrEqual`` over the limit's keys, so a resource the
    runtime does not list (not in the group's max) is never refused.
    """
    limit = _limit_of(group)
    out: dict[str, int] = {}
    for k, cap in limit.items():
        over = used.get(k, 0) + request.get(k, 0) - cap
        if over > 0:
            out[k] = over
    return out


def fits_runtime(group: GroupQuota | Mapping[str, int], used: Mapping[str, int], request: Mapping[str, int]) -> bool:
    """``used + request <= runtime`` on the runtime's keys (Koordinator's PreFilter check)."""
    return not runtime_excess(group, used, request)


def fits_non_preemptible(
    min_quota: QuotaGroupSpec | Mapping[str, int], non_preemptible_used: Mapping[str, int], request: Mapping[str, int]
) -> bool:
    """A non-preemptible pod fits when ``non_preemptible_used + request <= min`` on min's keys (original min)."""
    limit = min_quota.min if isinstance(min_quota, QuotaGroupSpec) else min_quota
    return all(non_preemptible_used.get(k, 0) + request.get(k, 0) <= cap for k, cap in limit.items())


NonPreemptiblePod = tuple[str, int, float | None, Mapping[str, int]]  # uid, priority, start time, request


def protected_non_preemptible(min_quota: Mapping[str, int], pods: Iterable[NonPreemptiblePod]) -> set[str]:
    """The uids of the allocated non-preemptible pods of one group that the label protects: the most important
    ones (higher priority first; on equal priority the earliest started, a pod without a start time last; then by
    uid) while together they stay within the group's (original) ``min`` on min's keys. The first that would pass
    it and every less important one are not protected: recycling and the ``elasticquota`` victim choice treat them
    as preemptible.

    Koordinator checks ``non-preemptible used <= min`` only when a pod is placed, so a pod that became
    non-preemptible after it was placed (or a min lowered since) could hold more than min for good; here the rule
    holds whatever the order of events (docs/model.md, "Priority and preemptibility")."""
    ordered = sorted(pods, key=lambda p: (-p[1], p[2] if p[2] is not None else float("inf"), p[0]))
    held: dict[str, int] = {}
    out: set[str] = set()
    for uid, _, _, request in ordered:
        if not all(held.get(k, 0) + request.get(k, 0) <= cap for k, cap in min_quota.items()):
            break
        for k, v in request.items():
            held[k] = held.get(k, 0) + v
        out.add(uid)
    return out


def check_ancestors(
    result: ElasticResult,
    name: str,
    request: Mapping[str, int],
    used: Mapping[str, Mapping[str, int]] | None = None,
) -> str | None:
    """Koordinator's optional parent check (``EnableCheckParentQuota``): the first ancestor that cannot take it.

    The request is first masked to the group's own governed resources; each ancestor below the tree root must
    then have ``used + request <= runtime`` on the resources both name. ``used`` overrides the result's used
    per group (e.g. a session's running totals). Returns the failing ancestor's name, or None.
    """
    own = result[name].runtime
    req = {k: v for k, v in request.items() if k in own}
    for anc in result.path(name)[1:]:
        if result.parent(anc) is None:
            break
        gq = result[anc]
        u = used.get(anc, gq.used) if used is not None else gq.used
        if any(u.get(k, 0) + v > gq.runtime[k] for k, v in req.items() if k in gq.runtime):
            return anc
    return None


def fits_ancestors(
    result: ElasticResult,
    name: str,
    request: Mapping[str, int],
    used: Mapping[str, Mapping[str, int]] | None = None,
) -> bool:
    """True when no ancestor below the tree root refuses ``request`` (see :func:`check_ancestors`)."""
    return check_ancestors(result, name, request, used) is None
