"""The pure parts of the dashboard: display units, the pro-rata loan ledger, sector sizes and the figures
(no database). Properties with hypothesis where the statement is general."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontend import figures
from frontend.presenters import balances, units
from frontend.presenters.ledger import POOL, attribute
from frontend.presenters.trees import Tree, TreeNode, effective_cap, sizes
from tests.support.examples import examples

GI = 2**30


@pytest.mark.parametrize(
    ("amount", "resource", "text"),
    [
        (35_385, "cpu", "35.4 cores"),
        (1_000, "cpu", "1 core"),
        (500, "cpu", "0.5 cores"),
        (20, "cpu", "0.02 cores"),
        (1_024_000, "cpu", "1024 cores"),
        (96 * GI, "memory", "96 GiB"),
        (int(1.5 * GI), "memory", "1.5 GiB"),
        (8_000, "nvidia.com/gpu", "8 GPUs"),
        (1_000, "nvidia.com/gpu", "1 GPU"),
        (3_200, "nvidia.com/gpu", "3.2 GPUs"),
        (2**62, "cpu", "unlimited"),
        (1 << 120, "memory", "unlimited"),
        (0, "cpu", "0 cores"),
    ],
)
def test_human_readings(amount: int, resource: str, text: str) -> None:
    assert units.human(amount, resource) == text


def test_quantities_and_order() -> None:
    assert units.quantity(35_385, "cpu") == "35.385" and units.quantity(None, "cpu") == "unlimited"
    assert units.quantity(3_000, "nvidia.com/gpu") == "3" and units.quantity(3_200, "nvidia.com/gpu") == "3.2"
    assert units.quantity(2**62, "memory") == "unlimited" and units.quantity(168 * GI, "memory") == "168Gi"
    assert (
        units.human(-2_000, "cpu", signed=True) == "-2 cores" and units.human(2_000, "cpu", signed=True) == "+2 cores"
    )
    assert units.resource_order(["pods", "nvidia.com/gpu", "memory", "cpu", "a/b"]) == [
        "cpu",
        "memory",
        "a/b",
        "nvidia.com/gpu",
    ]


# -- the ledger ------------------------------------------------------------------------------------------------


def test_a_single_lender_lends_exactly_what_the_borrower_takes_beyond_the_pool() -> None:
    loans = attribute({"x": {"cpu": 30}}, {"y": {"cpu": 30}}, ["x", "y"])
    assert [(x.borrower, x.lender, x.amount) for x in loans] == [("x", "y", 30.0)]


def test_borrowing_beyond_the_lenders_comes_from_the_unreserved_pool() -> None:
    # two borrowers take 60 and 20; two lenders give 30 and 10: 40 comes from capacity nobody is entitled to
    loans = attribute({"a": {"cpu": 60}, "b": {"cpu": 20}}, {"c": {"cpu": 30}, "d": {"cpu": 10}}, "abcd")
    got = {(x.borrower, x.lender): x.amount for x in loans}
    assert got == {
        ("a", "c"): 22.5,
        ("a", "d"): 7.5,
        ("a", POOL): 30.0,
        ("b", "c"): 7.5,
        ("b", "d"): 2.5,
        ("b", POOL): 10.0,
    }


def test_gpu_loans_read_in_whole_gpus_that_add_up_to_what_was_borrowed() -> None:
    # 13 GPUs borrowed: 9.29 from the pool and 3.71 from vision pro rata; a person reads 9 and 4 (still 13), while
    # cores keep their decimals
    gpu = "nvidia.com/gpu"
    loans = attribute(
        {"ml": {gpu: 13_000, "cpu": 3_000}}, {"vision": {gpu: 3_710}, "nlp": {"cpu": 2_260}}, ["ml", "vision", "nlp"]
    )
    rows = balances.loan_rows([x for x in loans if x.borrower == "ml"], True, "quota", None)
    got = {(r["resource"], r["other"]): r["amount"] for r in rows}
    assert got == {
        (gpu, "unreserved capacity"): "≈ 9 GPUs",
        (gpu, "vision"): "≈ 4 GPUs",
        ("cpu", "nlp"): "≈ 2.26 cores",
        ("cpu", "unreserved capacity"): "≈ 0.74 cores",
    }
    # a lender whose pro-rata part rounds to no whole GPU is still named
    small = attribute({"ml": {gpu: 13_000}}, {"vision": {gpu: 400}}, ["ml", "vision"])
    rows = balances.loan_rows(small, True, "quota", None)
    assert [r["amount"] for r in rows] == ["≈ 13 GPUs", "< 1 GPU"]


@settings(max_examples=examples(200), deadline=None)
@given(
    borrowed=st.lists(st.integers(0, 10_000), min_size=1, max_size=5),
    lent=st.lists(st.integers(0, 10_000), min_size=0, max_size=5),
)
def test_ledger_rows_and_columns_add_up(borrowed: list[int], lent: list[int]) -> None:
    """Each borrower's loans add up to what it borrowed and each lender's to what it lent (the engines never
    report more lent than borrowed in a sibling set, nor a member that does both); ``only`` picks exactly the
    loans of one member."""
    total_b, total_l = sum(borrowed), sum(lent)
    if total_l > total_b:
        lent = [v * total_b // total_l for v in lent]
    b = {f"b{i}": {"cpu": v} for i, v in enumerate(borrowed)}
    l_ = {f"l{i}": {"cpu": v} for i, v in enumerate(lent)}
    members = [*b, *l_]
    loans = attribute(b, l_, members)
    assert all(x.amount > 0 for x in loans)
    for name, amount in b.items():
        assert sum(x.amount for x in loans if x.borrower == name) == pytest.approx(amount["cpu"], abs=1e-6)
    for name, amount in l_.items():
        assert sum(x.amount for x in loans if x.lender == name) == pytest.approx(amount["cpu"], abs=1e-6)
    pool = sum(x.amount for x in loans if x.lender == POOL)
    assert pool == pytest.approx(sum(borrowed) - sum(lent), abs=1e-6)
    for name in members:
        mine = attribute(b, l_, members, only=name)
        assert sorted((x.borrower, x.lender, round(x.amount, 6)) for x in mine) == sorted(
            (x.borrower, x.lender, round(x.amount, 6)) for x in loans if name in (x.borrower, x.lender)
        )


# -- sector sizes ------------------------------------------------------------------------------------------------


def node(name: str, parent: str | None, children: tuple[str, ...] = (), **lists: dict[str, int]) -> TreeNode:
    base = {k: {} for k in ("floor", "entitled", "used", "cap", "request", "borrowed", "lent")}
    base.update(lists)
    return TreeNode(kind="quota", name=name, parent=parent, depth=0, children=children, **base)  # type: ignore[arg-type]


def make_tree(spec: dict[str, tuple[str | None, int | None]], total: int = 100) -> Tree:
    kids: dict[str, list[str]] = {n: [] for n in spec}
    for n, (p, _) in spec.items():
        if p is not None:
            kids[p].append(n)
    order: list[str] = []

    def walk(n: str) -> None:
        order.append(n)
        for c in sorted(kids[n]):
            walk(c)

    roots = [n for n, (p, _) in spec.items() if p is None]
    for r in roots:
        walk(r)
    nodes = {
        n: node(n, p, tuple(sorted(kids[n])), cap={} if cap is None else {"cpu": cap}) for n, (p, cap) in spec.items()
    }
    return Tree("quota", nodes, tuple(order), tuple(roots), {"cpu": total})


def test_sizes_follow_caps_and_fit_in_the_parent() -> None:
    tree = make_tree({"root": (None, None), "a": ("root", 40), "b": ("root", 80), "a1": ("a", 10), "a2": ("a", 10)})
    s = sizes(tree, "cpu")
    assert s["root"] == 100
    # a and b claim 120 of root's 100: scaled to fit, 40 : 80
    assert s["a"] == pytest.approx(100 * 40 / 120) and s["b"] == pytest.approx(100 * 80 / 120)
    # a1 and a2 claim 20 of a's 40: each a quarter of a's sector, the rest of it stays empty
    assert s["a1"] == pytest.approx(s["a"] / 4)
    assert effective_cap(tree, "a1", "cpu") == 10 and effective_cap(tree, "b", "memory") == 0


def test_a_chain_of_unlimited_nodes_that_claim_nothing_keeps_every_level() -> None:
    """root > a (unlimited, claims nothing: a sliver) > b > c, each the only child and unlimited: every level has a
    sector (b fills a's, c fills b's), so the figure zoomed into a or b still draws the levels below."""
    tree = make_tree({"root": (None, None), "a": ("root", None), "b": ("a", None), "c": ("b", None), "d": ("root", 50)})
    s = sizes(tree, "cpu")
    assert s["a"] > 0 and s["b"] == pytest.approx(s["a"]) and s["c"] == pytest.approx(s["b"])
    assert s["b"] < s["a"] and s["c"] < s["b"]  # within its parent (branchvalues="total")
    zoomed = figures.tree_figure(tree, "cpu", {}, root="b")
    assert isinstance(zoomed, dict) and list(zoomed["data"][0]["ids"]) == ["b", "c"]


caps = st.one_of(st.none(), st.integers(0, 1_000))
_TOTAL = st.integers(0, 2_000)


@cache
def _parents(names: tuple[str, ...]) -> st.SearchStrategy[str]:
    """The parent drawn among the nodes so far, made once per list rather than at every draw (same values)."""
    return st.sampled_from(names)


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), n=st.integers(1, 25))
def test_children_never_outgrow_their_parent(data: st.DataObject, n: int) -> None:
    spec: dict[str, tuple[str | None, int | None]] = {"root": (None, data.draw(caps))}
    for i in range(n):
        parent = data.draw(_parents(tuple(sorted(spec))))
        spec[f"n{i}"] = (parent, data.draw(caps))
    tree = make_tree(spec, total=data.draw(_TOTAL))
    s = sizes(tree, "cpu")
    for name in tree.order:
        kids = tree.nodes[name].children
        assert all(s[k] >= 0 for k in kids)
        assert sum(s[k] for k in kids) <= s[name] * (1 + 1e-9) + 1e-9


# -- figures ----------------------------------------------------------------------------------------------------


def test_the_tree_figure_colours_borrowers_orange_and_lenders_purple() -> None:
    tree = make_tree({"root": (None, None), "x": ("root", 100_000), "y": ("root", 100_000)}, total=100_000)
    nodes = dict(tree.nodes)
    nodes["x"] = node(
        "x", "root", cap={"cpu": 100_000}, entitled={"cpu": 90_000}, floor={"cpu": 50_000}, borrowed={"cpu": 30_000}
    )
    nodes["y"] = node(
        "y", "root", cap={"cpu": 100_000}, entitled={"cpu": 10_000}, floor={"cpu": 50_000}, lent={"cpu": 30_000}
    )
    tree = Tree("quota", nodes, tree.order, tree.roots, tree.total)
    fig = figures.to_json(figures.tree_figure(tree, "cpu", {"x": "/quotas/x/"}))
    trace = fig["data"][0]
    colour = dict(zip(trace["ids"], trace["marker"]["colors"], strict=True))
    assert colour["x"] == pytest.approx(30 / 90) and colour["y"] == pytest.approx(-30 / 50) and colour["root"] == 0
    assert trace["marker"]["cmid"] == 0 and trace["marker"]["colorscale"][0][1] == "#542788"
    assert "borrows 30 cores" in dict(zip(trace["ids"], trace["hovertext"], strict=True))["x"]
    icicle = figures.to_json(figures.tree_figure(tree, "cpu", {}, style="icicle"))
    assert icicle["data"][0]["type"] == "icicle"


@pytest.mark.parametrize("style", ["sunburst", "icicle"])
def test_the_tree_figure_built_unvalidated_passes_plotlys_validation(style: str) -> None:
    """The tree figure skips plotly's validators for speed: validating what it built gives the same figure."""
    import plotly.graph_objects as go

    tree = make_tree({"root": (None, None), "x": ("root", 100_000), "y": ("root", 60_000)}, total=100_000)
    fig = figures.tree_figure(tree, "cpu", {"x": "/quotas/x/"}, style=style, highlight=["y"], zoom={"x": "/z/"})
    validated = go.Figure(fig)  # raises on any property plotly does not accept
    ours, theirs = figures.to_json(fig), figures.to_json(validated)
    assert not ours["layout"].pop("template").get("data")  # the plain template, as validation starts from
    theirs["layout"].pop("template")  # validation fills its defaults in
    assert ours == theirs


def test_big_trees_show_three_levels_at_a_time() -> None:
    spec: dict[str, tuple[str | None, int | None]] = {"root": (None, None)}
    for i in range(figures.DEEP_TREE + 5):
        spec[f"n{i}"] = ("root" if i < 10 else f"n{i % 10}", 10)
    fig = figures.to_json(figures.tree_figure(make_tree(spec, 10_000), "cpu", {}))
    assert fig["data"][0]["maxdepth"] == 3
    small = figures.to_json(figures.tree_figure(make_tree({"root": (None, None), "a": ("root", 5)}), "cpu", {}))
    assert small["data"][0]["maxdepth"] == -1


def every_figure() -> list[dict[str, Any]]:
    """One figure of each builder (and each of their shapes: subplot grids, the empty figure), as JSON."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    tree = make_tree({"root": (None, None), "a": ("root", 60), "b": ("root", 40)})
    held = node("a", "root", used={"cpu": 2_000}, borrowed={"cpu": 1_000}, reserving={"cpu": 1}, reserved={"cpu": 500})
    points = [
        figures.Point(t0 + timedelta(minutes=i), {"cpu": 9}, {"cpu": 8}, {"cpu": 6}, {"cpu": 2}, {"cpu": 1})
        for i in range(2)
    ]
    namespace = {"namespace": "ns", "weight": 1, "deserved": {"cpu": 1}, "allocated": {"cpu": 1}, "request": {"cpu": 1}}
    built = [
        figures.tree_figure(tree, "cpu", {}),
        figures.tree_figure(tree, "cpu", {}, style="icicle"),
        figures.capacity_figure({"cpu": 100_000}, {"cpu": 60_000}, {"cpu": 130_000}, ["cpu", "memory"]),
        figures.capacity_figure({}, {}, {}, ["cpu"]),
        figures.resources_figure(held, ["cpu", "memory"], {"cpu": 800_000}),
        figures.borrow_lend_figure(
            [("a", {"cpu": 1_000}, {}), ("b", {}, {"memory": GI})], ["cpu", "memory"], title="T"
        ),
        figures.timeseries_figure(points, "cpu", "quota"),
        figures.namespaces_figure([namespace, {**namespace, "namespace": "other"}], ["cpu", "memory"]),
        figures.sessions_figure([{"started": t0, "bound": 1, "pipelined": 0, "evicted": 0, "duration_ms": 5}]),
        figures.whatif_figure([("a", 1_000, 2_000)], "cpu", "deserved"),
        figures.replay_waits_figure([{"team": "a", "p50": (60.0, None), "p95": (600.0, 30.0)}]),
        figures.replay_waits_figure([]),
        figures.replay_utilisation_figure(
            {
                "cpu": {"before": [["2026-01-01T00:00:00Z", 0.5]], "after": [["2026-01-01T00:00:00Z", 0.25]]},
                "nvidia.com/gpu": {"before": [["2026-01-01T00:00:00Z", 1.0]], "after": []},
            }
        ),
        figures.replay_borrow_figure([{"team": "a", "borrowed": (2.5, 0.0), "lent": (0.0, 1.0)}]),
        figures.waits_trend_figure(
            [
                {
                    "name": "nlp",
                    "points": [("2026-01-01T00:00:00+00:00", 600.0, 3, 0), ("2026-01-02T00:00:00+00:00", None, 0, 2)],
                },
                {"name": "vision", "points": [("2026-01-01T00:00:00+00:00", 30.0, 1, 0)]},
            ],
            86400.0,
            ("2025-12-26T00:00:00+00:00", "2026-01-02T12:00:00+00:00"),
        ),
        figures.waits_trend_figure(
            [{"name": "nlp", "points": [("2026-01-01T00:00:00+00:00", None, 0, 1)]}],
            3600.0,
            ("2026-01-01T00:00:00+00:00", "2026-01-01T23:00:00+00:00"),
        ),
    ]
    return [figures.to_json(fig) for fig in built]


def test_every_figure_built_as_plain_data_passes_plotlys_validation() -> None:
    """The figures skip plotly.py's object tree for speed: plotly validates what they build, subplot axes
    included (a trace on an axis the layout lacks, or a property plotly does not know, raises)."""
    import plotly.graph_objects as go

    for fig in every_figure():
        validated = json.loads(go.Figure(fig).to_json())
        assert validated["data"] == json.loads(json.dumps(fig["data"]))
        for trace in fig["data"]:
            for axis in ("xaxis", "yaxis"):
                if axis in trace:
                    assert f"{axis[0]}axis{trace[axis][1:]}" in fig["layout"], (trace["name"], trace[axis])


def test_the_resources_figure_cuts_a_far_cap_and_says_its_value() -> None:
    x = node("x", None, cap={}, floor={"cpu": 24_000}, entitled={"cpu": 32_000}, used={"cpu": 30_000})
    fig = figures.to_json(figures.resources_figure(x, ["cpu"], {"cpu": 800_000}))
    cap = next(t for t in fig["data"] if t["name"] == "max")
    assert cap["text"] == ["→ 800 cores (no own cap)"] and cap["x"][0] < 800
    assert cap["marker"]["pattern"]["shape"] == "/"


def test_the_time_series_puts_lent_below_zero() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    points = [
        figures.Point(t0 + timedelta(minutes=i), {"cpu": 9_000}, {"cpu": 8_000}, {"cpu": 6_000}, {"cpu": 2_000}, {})
        for i in range(3)
    ] + [figures.Point(t0 + timedelta(minutes=3), {}, {"cpu": 1_000}, {"cpu": 6_000}, {}, {"cpu": 5_000})]
    fig = figures.to_json(figures.timeseries_figure(points, "cpu", "quota"))
    by_name = {t["name"]: t for t in fig["data"]}
    assert by_name["runtime"]["y"] == [6.0, 6.0, 6.0, 6.0]
    assert by_name["borrowed"]["y"] == [2.0, 2.0, 2.0, 0.0]
    assert by_name["lent (below 0)"]["y"] == [0.0, 0.0, 0.0, -5.0]
    empty = figures.to_json(figures.timeseries_figure([], "cpu", "queue"))
    assert "No session has sampled" in empty["layout"]["annotations"][0]["text"]


def test_capacity_figure_stacks_to_the_whole_cluster() -> None:
    fig = figures.to_json(
        figures.capacity_figure({"cpu": 100_000}, {"cpu": 60_000}, {"cpu": 130_000}, ["cpu", "memory"])
    )
    parts = [t["x"][0] for t in fig["data"]]
    assert parts == [60.0, 70.0, 0.0]  # allocated, waiting, not requested: demand beyond the cluster shows
    assert fig["layout"]["xaxis"]["range"] == [0, 130.0]


def test_the_sessions_figure_spans_a_minute_at_least_with_bars_as_wide_as_their_spacing() -> None:
    """A lone session (a cluster just loaded) got an axis a fraction of a millisecond wide with one bar across it,
    and the duration axis ticks scaled from the decisions' grid (36.4, 72.7)."""
    t0 = datetime(2026, 11, 29, 18, 38, 44, tzinfo=UTC)

    def session(at: datetime) -> dict[str, object]:
        return {"started": at, "bound": 55, "pipelined": 0, "evicted": 0, "duration_ms": 96.8}

    fig = figures.sessions_figure([session(t0)]).to_dict()
    start, end = (datetime.fromisoformat(x) for x in fig["layout"]["xaxis"]["range"])
    assert end - start >= timedelta(minutes=1) and start < t0 < end
    assert {t["width"] for t in fig["data"] if t["type"] == "bar"} == {800.0}  # ms: 0.8 of a second
    assert fig["layout"]["yaxis2"]["tickmode"] == "auto"
    steady = [session(t0 + timedelta(seconds=2 * i)) for i in range(60)]  # one every 2 s over two minutes
    fig = figures.sessions_figure(steady).to_dict()
    start, end = (datetime.fromisoformat(x) for x in fig["layout"]["xaxis"]["range"])
    assert start <= t0 and end >= t0 + timedelta(seconds=118) and end - start < timedelta(minutes=2, seconds=5)
    assert {t["width"] for t in fig["data"] if t["type"] == "bar"} == {1600.0}


def test_the_replay_waits_axis_is_a_minute_wide_at_least() -> None:
    """Waits under a second (a cluster replayed right after it was loaded) drew every bar across the whole chart on an
    axis 0.01 minutes wide; longer waits keep the axis plotly fits to them."""
    short = figures.replay_waits_figure([{"team": "a", "p50": (0.4, 0.3), "p95": (0.5, 0.5)}]).to_dict()
    assert short["layout"]["xaxis"]["range"] == [0, 1]
    assert short["layout"]["xaxis"]["title"]["text"] == "waiting time, minutes"
    long = figures.replay_waits_figure([{"team": "a", "p50": (600.0, None), "p95": (900.0, 30.0)}]).to_dict()
    assert "range" not in long["layout"]["xaxis"] and long["layout"]["xaxis"]["rangemode"] == "tozero"
