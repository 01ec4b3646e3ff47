"""Property tests of the elastic-quota engine (hypothesis): fast path == reference, incremental == full, invariants."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fairshare import elastic_sets as ref
from engine.fairshare.elastic import FIELDS, ElasticQuotaTree, ElasticResult, compute_runtimes
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import MAX_AMOUNT, ResourceList, split_unit
from tests.support.elastic_reference import reference_quotas
from tests.support.examples import examples

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
HUGE = MAX_AMOUNT


@dataclass
class Case:
    groups: list[QuotaGroupSpec]
    requests: dict[str, ResourceList]
    used: dict[str, ResourceList]
    total: ResourceList
    tree_totals: dict[str, ResourceList]
    system_used: ResourceList
    enable_min_scale: bool

    def kwargs(self) -> dict[str, Any]:
        return {
            "used": self.used,
            "system_used": self.system_used,
            "enable_min_scale": self.enable_min_scale,
            "tree_totals": self.tree_totals,
        }


# The strategies the composites draw from, made once (by their arguments): a strategy built inside a composite is
# looked up again in Hypothesis's cache, or built and checked again, at every draw, which cost more than the values
# themselves. The same strategies, so the same values are drawn.
_integers = cache(st.integers)
_BOOLEANS = st.booleans()
_HUGE_AMOUNTS = st.sampled_from([HUGE, HUGE - 1, HUGE // 3, 2**61 + 7, 2**40 + 3, 3037000500, 10**15 + 1])
_KEYS_ALL = st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True)
_NAME = st.from_regex(r"[a-d][a-d0-2]{0,2}", fullmatch=True)


@cache
def _names(n: int) -> st.SearchStrategy[list[str]]:
    return st.lists(_NAME, min_size=n, max_size=n, unique=True)


@cache
def _keys(keys_all: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(keys_all), min_size=0, max_size=3, unique=True)


@lru_cache(maxsize=1024)  # the parents so far: a new tuple at most examples
def _parent(parents: tuple[tuple[str, int], ...]) -> st.SearchStrategy[tuple[str, int]]:
    return st.sampled_from(parents)


def _amount(draw: st.DrawFn, huge: bool, hi: int = 100) -> int:
    if huge and draw(_integers(0, 3)) == 0:
        return draw(_HUGE_AMOUNTS)
    return draw(_integers(0, hi))


@st.composite
def cases(draw: st.DrawFn, *, huge: bool = False, valid: bool = False, max_groups: int = 14) -> Case:
    n = draw(_integers(1, max_groups))
    keys_all = draw(_KEYS_ALL)
    parents: list[tuple[str, int]] = [(ROOT_GROUP, 0)]
    second_tree = draw(_BOOLEANS)
    groups: list[QuotaGroupSpec] = []
    if second_tree:
        groups.append(QuotaGroupSpec(name="t2", parent=None, tree_id="tree-2", min=ResourceList({keys_all[0]: 50})))
        parents.append(("t2", 0))
    names = draw(_names(n))
    for name in names:
        parent, depth = draw(_parent(tuple(parents)))
        keys = keys_all if valid else draw(_keys(tuple(keys_all)))
        mx = {k: _amount(draw, huge, 120) for k in keys}
        mn = {k: (draw(_integers(0, mx[k])) if valid else _amount(draw, huge, 60)) for k in keys}
        sw: ResourceList | None = None
        mode = draw(_integers(0, 3))
        if mode == 1:
            sw = ResourceList({k: _amount(draw, huge, 10) for k in keys})
        elif mode == 2:
            sw = ResourceList({k: draw(_integers(0, 3)) for k in keys[:1]})
        groups.append(
            QuotaGroupSpec(
                name=name,
                parent=parent,
                min=ResourceList(mn),
                max=ResourceList(mx),
                shared_weight=sw,
                allow_lent=draw(_BOOLEANS),
                min_scale_exempt=draw(_integers(0, 4)) == 0,
            )
        )
        if depth < 3:
            parents.append((name, depth + 1))
    requests = {g.name: ResourceList({k: _amount(draw, huge, 150) for k in keys_all}) for g in groups if g.parent}
    if draw(_BOOLEANS):  # a root's own pods: counted in its request, never distributed
        requests[ROOT_GROUP] = ResourceList({keys_all[0]: draw(_integers(0, 50))})
    used = {g.name: ResourceList({k: _amount(draw, huge, 80) for k in keys_all}) for g in groups if g.parent}
    total = ResourceList({k: _amount(draw, huge, 300) for k in keys_all})
    tree_totals = {"tree-2": ResourceList({k: _amount(draw, huge, 200) for k in keys_all})} if draw(_BOOLEANS) else {}
    system_used = ResourceList({keys_all[0]: draw(_integers(0, 30))}) if draw(_BOOLEANS) else ResourceList()
    return Case(groups, requests, used, total, tree_totals, system_used, draw(_BOOLEANS))


def as_plain(result: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    return {name: {f: dict(getattr(result[name], f)) for f in FIELDS} for name in result}


def assert_same(fast: ElasticResult, expected: Mapping[str, Any]) -> None:
    got = as_plain(fast)
    want = as_plain(expected)
    assert set(got) == set(want)
    for name in want:
        assert got[name] == want[name], name


FAST = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(cases())
def test_fast_path_equals_reference(case: Case) -> None:
    fast = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    assert_same(fast, reference_quotas(case.groups, case.requests, case.total, **case.kwargs()))


@FAST
@given(cases(huge=True))
def test_fast_path_equals_reference_with_huge_amounts(case: Case) -> None:
    """Amounts near 2**62 push products and sums past int64: the exact fallbacks must agree with Python ints."""
    fast = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    assert_same(fast, reference_quotas(case.groups, case.requests, case.total, **case.kwargs()))


@settings(max_examples=examples(60), deadline=None)
@given(cases(max_groups=10), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_input_order(case: Case, rnd: random.Random) -> None:
    first = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    shuffled = list(case.groups)
    rnd.shuffle(shuffled)
    again = compute_runtimes(shuffled, dict(reversed(case.requests.items())), case.total, **case.kwargs())
    assert as_plain(first) == as_plain(again)
    assert list(first) == list(again)  # deterministic order too


# -- incremental == full ---------------------------------------------------------------------------------------

EDITS = ("request", "used", "total", "update", "reparent", "add", "remove", "tree_total", "system")


_CASES = {huge: cases(huge=huge) for huge in (False, True)}
_SCRIPTS = st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 10**6), st.integers(0, 200)), max_size=8)


@st.composite
def edit_scripts(draw: st.DrawFn) -> tuple[Case, list[tuple[str, int, int]]]:
    case = draw(_CASES[draw(_BOOLEANS)])
    script = draw(_SCRIPTS)
    return case, script


def _apply(tree: ElasticQuotaTree, model: dict[str, Any], kind: str, pick: int, value: int) -> None:
    specs: dict[str, QuotaGroupSpec] = model["specs"]
    members = sorted(n for n, g in specs.items() if g.parent is not None)
    keys = model["keys"]
    if kind in ("request", "used") and members:
        name = members[pick % len(members)]
        rl = ResourceList({k: (value * (i + 1)) % 157 for i, k in enumerate(keys)})
        model[kind][name] = rl
        (tree.set_request if kind == "request" else tree.set_used)(name, rl)
    elif kind == "total":
        model["total"] = ResourceList({k: value + 40 * i for i, k in enumerate(keys)})
        tree.set_total(model["total"])
    elif kind == "tree_total" and "t2" in specs:
        model["tree_totals"]["tree-2"] = ResourceList({keys[0]: value})
        tree.set_total(model["tree_totals"]["tree-2"], tree_id="tree-2")
    elif kind == "system":
        model["used"][SYSTEM_GROUP] = ResourceList({keys[0]: value % 50})
        tree.set_used(SYSTEM_GROUP, model["used"][SYSTEM_GROUP])
    elif kind == "update" and members:
        name = members[pick % len(members)]
        g = specs[name]
        k = keys[pick % len(keys)]
        new = replace(
            g,
            min=ResourceList({**g.min, k: value % 70}),
            max=ResourceList({**g.max, k: 40 + value % 90}),
            allow_lent=not g.allow_lent if value % 3 == 0 else g.allow_lent,
            min_scale_exempt=value % 5 == 0,
            shared_weight=None if value % 2 else ResourceList({k: value % 4}),
        )
        specs[name] = new
        tree.update_group(new)
    elif kind == "reparent" and members:
        name = members[pick % len(members)]
        below = {name}
        changed = True
        while changed:  # the group's subtree cannot become its parent
            changed = False
            for n, g in specs.items():
                if g.parent in below and n not in below:
                    below.add(n)
                    changed = True
        choices = sorted(n for n in [*specs, ROOT_GROUP] if n not in below)
        new = replace(specs[name], parent=choices[value % len(choices)])
        specs[name] = new
        tree.update_group(new)
    elif kind == "add":
        name = f"n{pick % 1000}"
        if name in specs:
            return
        parents = sorted([*specs, ROOT_GROUP])
        new = QuotaGroupSpec(
            name=name,
            parent=parents[value % len(parents)],
            min=ResourceList({keys[0]: value % 30}),
            max=ResourceList({k: 20 + value % 100 for k in keys}),
            allow_lent=value % 2 == 0,
        )
        specs[name] = new
        tree.update_group(new)
    elif kind == "remove":
        leaves = [n for n in members if not any(g.parent == n for g in specs.values())]
        if leaves:
            name = leaves[pick % len(leaves)]
            del specs[name]
            model["request"].pop(name, None)
            model["used"].pop(name, None)
            tree.remove_group(name)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_scripts())
def test_incremental_equals_full_recompute(data: tuple[Case, list[tuple[str, int, int]]]) -> None:
    case, script = data
    tree = ElasticQuotaTree(
        case.groups,
        case.total,
        requests=case.requests,
        used=case.used,
        system_used=ResourceList(),
        tree_totals=case.tree_totals,
        enable_min_scale=case.enable_min_scale,
    )
    keys = sorted({k for g in case.groups for k in g.max} | set(case.total)) or ["cpu"]
    model: dict[str, Any] = {
        "specs": {g.name: g for g in case.groups},
        "request": dict(case.requests),
        "used": dict(case.used),
        "total": case.total,
        "tree_totals": dict(case.tree_totals),
        "keys": keys,
    }
    snapshots = []
    for step, (kind, pick, value) in enumerate(script):
        _apply(tree, model, kind, pick, value)
        if step % 2 == 0:
            res = tree.result()
            snapshots.append((res, as_plain(res)))
        full = compute_runtimes(
            list(model["specs"].values()),
            model["request"],
            model["total"],
            used=model["used"],
            tree_totals=model["tree_totals"],
            enable_min_scale=case.enable_min_scale,
        )
        assert as_plain(tree.result()) == as_plain(full), (step, kind)
    for res, plain in snapshots:  # earlier results are snapshots: later edits did not change them
        assert as_plain(res) == plain


_BATCHES = st.lists(
    st.tuples(st.sampled_from(("request", "used")), st.integers(0, 10**6), st.integers(0, 200)), max_size=10
)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES[False], _BATCHES, _BATCHES)
def test_several_groups_set_at_once_equal_full_recompute(
    case: Case, first: list[tuple[str, int, int]], second: list[tuple[str, int, int]]
) -> None:
    """``set_requests`` / ``set_used_of`` (several groups, each group above them refreshed once, deepest first) give
    the numbers of a tree built on the new inputs, batch after batch (siblings and cousins changed together, amounts
    that cancel out on a parent)."""
    tree = ElasticQuotaTree(
        case.groups,
        case.total,
        requests=case.requests,
        used=case.used,
        tree_totals=case.tree_totals,
        enable_min_scale=case.enable_min_scale,
    )
    requests, used = dict(case.requests), dict(case.used)
    members = sorted(g.name for g in case.groups if g.parent is not None)
    keys = sorted({k for g in case.groups for k in g.max} | set(case.total)) or ["cpu"]
    for batch in (first, second):
        if not members:
            return
        changes: dict[str, dict[str, ResourceList]] = {"request": {}, "used": {}}
        for kind, pick, value in batch:
            name = members[pick % len(members)]
            changes[kind][name] = ResourceList({k: (value * (i + 1)) % 157 for i, k in enumerate(keys)})
        tree.set_requests(changes["request"])
        tree.set_used_of(changes["used"])
        requests.update(changes["request"])
        used.update(changes["used"])
        full = compute_runtimes(
            case.groups,
            requests,
            case.total,
            used=used,
            tree_totals=case.tree_totals,
            enable_min_scale=case.enable_min_scale,
        )
        assert as_plain(tree.result()) == as_plain(full)


# -- invariants ---------------------------------------------------------------------------------------------------


def _sets(case: Case) -> dict[str, list[QuotaGroupSpec]]:
    kids: dict[str, list[QuotaGroupSpec]] = {}
    for g in case.groups:
        if g.parent is not None:
            kids.setdefault(g.parent, []).append(g)
    return kids


@FAST
@given(cases(valid=True))
def test_runtime_invariants(case: Case) -> None:
    """The invariants hold in the units of the split: millicores, bytes, whole units of every other resource
    (``split_unit``; a request or min of 1500m GPUs counts as 2 GPUs, as Koordinator's ``Value()`` reads it)."""
    res = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    specs = {g.name: g for g in case.groups}
    for parent, kids in _sets(case).items():
        p_rt = res[parent].runtime
        for k in res[parent].runtime:
            u = split_unit(k)

            def up(amount: int, u: int = u) -> int:
                return ref.round_up(amount, u)

            assert p_rt[k] % u == 0
            floors = {g.name: res[g.name].auto_scaled_min[k] for g in kids if k in g.max}
            for g in kids:
                if k not in g.max:
                    continue
                q = res[g.name]
                rt, lim, asm = q.runtime[k], q.limited_request[k], q.auto_scaled_min[k]
                assert rt % u == 0 and asm % u == 0  # whole GPUs, never 8300m
                # never above the limited request or max unless it is a non-lender's floor
                if up(lim) > asm or g.allow_lent:
                    assert rt <= up(lim) <= up(g.max[k])
                # the guarantee: at least min(request, auto-scaled min); a non-lender always keeps its floor
                assert rt >= min(up(lim), asm)
                if not g.allow_lent:
                    assert rt >= asm
                # auto-scaled min: the min itself when the parent's runtime covers the sum of mins
                if not case.enable_min_scale or p_rt[k] >= sum(up(specs[c.name].min[k]) for c in kids):
                    assert asm == up(g.min[k])
                else:
                    assert asm <= up(g.min[k])
            if case.enable_min_scale and all(not g.min_scale_exempt for g in kids):
                assert sum(floors.values()) <= max(p_rt[k], 0) or not floors
            # all hungry with positive weights and enough asked: the children share the parent's runtime exactly
            members = [g for g in kids if k in g.max]
            if members and len(members) == len(kids):
                hungry = all(up(res[g.name].limited_request[k]) > res[g.name].auto_scaled_min[k] for g in members)
                weights = [
                    g.shared_weight[k] if g.shared_weight and k in g.shared_weight else g.max[k] for g in members
                ]
                asked = sum(up(res[g.name].limited_request[k]) for g in members)
                floor_sum = sum(res[g.name].auto_scaled_min[k] for g in members)
                if hungry and all(w > 0 for w in weights) and asked >= p_rt[k] >= floor_sum:
                    assert sum(res[g.name].runtime[k] for g in members) == p_rt[k]


@FAST
@given(cases(huge=True, valid=True))
def test_lent_never_exceeds_borrowed(case: Case) -> None:
    res = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    for kids in _sets(case).values():
        for k in RESOURCES:
            lent = sum(res[g.name].lent[k] for g in kids)
            borrowed = sum(res[g.name].borrowed[k] for g in kids)
            assert lent <= borrowed
            for g in kids:
                q = res[g.name]
                assert q.lent[k] <= max(0, q.auto_scaled_min[k] - q.used[k])
                if not g.allow_lent:
                    assert q.lent[k] == 0


@FAST
@given(cases(valid=True), st.integers(0, 1000), st.integers(1, 500))
def test_raising_shared_weight_never_lowers_runtime(case: Case, pick: int, extra: int) -> None:
    """Monotone up to rounding: the exact split by weights never gives less to a heavier group, but no integer
    apportionment that stays within one unit of the exact shares is free of the population paradox (Balinski and
    Young): raising a weight may move a largest remainder to a sibling. Found by this test: under a parent of 45
    bytes, b (weight 2) and c (weight 69 -> 70) share the last byte, which goes from c to b. So the runtime may drop
    by at most one base unit per level of rounding (the group's depth), never more."""
    members = [g for g in case.groups if g.parent is not None and g.max]
    if not members:
        return
    g = members[pick % len(members)]
    base = dict(g.shared_weight) if g.shared_weight else dict(g.max)
    k = sorted(g.max)[pick % len(g.max)]
    heavier = replace(g, shared_weight=ResourceList({**base, k: base.get(k, g.max[k]) + extra}))
    groups = [heavier if x.name == g.name else x for x in case.groups]
    before = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    after = compute_runtimes(groups, case.requests, case.total, **case.kwargs())
    parents = {x.name: x.parent for x in case.groups}
    depth, node = 0, g.name
    while node in parents and parents[node] is not None:
        depth, node = depth + 1, parents[node]
    assert after[g.name].runtime[k] >= before[g.name].runtime[k] - depth


@settings(max_examples=examples(100), deadline=None)
@given(cases(huge=True))
def test_explanations_reproduce_runtimes(case: Case) -> None:
    res = compute_runtimes(case.groups, case.requests, case.total, **case.kwargs())
    for name in res:
        if name in (SYSTEM_GROUP, DEFAULT_GROUP):
            continue
        ex = res.explain(name)
        for k, e in ex["resources"].items():
            assert e["runtime"] == res[name].runtime[k]
            if ex["parent"] is not None:
                assert e["floor"] + sum(r["share"] for r in e["rounds"]) >= e["runtime"] or e["state"] != "hungry"


def test_reference_waterfill_terminates_on_zero_weights() -> None:
    assert ref.waterfill(100, [10, 10], [50, 50], [0, 0], [True, True]) == [10, 10]
