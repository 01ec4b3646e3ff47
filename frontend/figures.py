"""The dashboard's Plotly figures: pure functions of plain data that return the figure as plain JSON data.

Nothing here reads the database or the clock. Amounts come in base units and are plotted in each resource's
display unit (``frontend.presenters.units``). Colours are colour-blind safe: the borrowed/lent scale is ColorBrewer's
diverging PuOr (orange = borrows, purple = lends, grey = balanced) and the series use the Okabe-Ito palette;
every chart also encodes the sign by position and carries the numbers in its hover text, and each page shows
the same numbers in a table beside the chart.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from engine.resources import resource_label
from engine.wording import duration as duration_words
from engine.wording import plural
from frontend.margins import colorbar_room, reserve_margins
from frontend.presenters import units
from frontend.presenters.trees import TERMS, Tree, TreeNode, depth_below, sizes

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
INK = "#1f2328"
MUTED = "#59636e"
GRID = "#e6e9ed"
# ColorBrewer PuOr, purple (lends) -> grey -> orange (borrows).
DIVERGING = [
    [0.0, "#542788"],
    [0.15, "#8073ac"],
    [0.3, "#b2abd2"],
    [0.43, "#d8daeb"],
    [0.5, "#f1f1f1"],
    [0.57, "#fee0b6"],
    [0.7, "#fdb863"],
    [0.85, "#e08214"],
    [1.0, "#b35806"],
]
BORROWED = "#e08214"
LENT = "#8073ac"
SERIES = {
    "floor": "#56b4e9",  # sky blue
    "entitled": "#0072b2",  # blue
    "used": "#009e73",  # bluish green
    "cap": "#a0a7b0",  # grey
    "request": "#1f2328",  # ink, dotted
    "borrowed": BORROWED,
    "lent": LENT,
    "before": "#a0a7b0",
    "after": "#0072b2",
    # beside allocated (bluish green): a lighter, hatched green for what admitted jobs reserve and a sand yellow,
    # dotted, for what pipelined pods wait for; neither is near the borrow (orange) or lend (purple) colours
    "reserved": "#9fd8c4",
    "pipelined": "#e3cf6a",
}
HOLDING_PATTERNS = {"reserved": "/", "pipelined": "."}
HOLDING_INK = {"reserved": "#3f8f73", "pipelined": "#8a7a1f"}
# A legend pinned to the top of the figure (above subplot titles), right-aligned.
TOP_LEGEND = {
    "orientation": "h",
    "yref": "container",
    "y": 0.995,
    "yanchor": "top",
    "x": 1,
    "xanchor": "right",
    "traceorder": "normal",
}
COLORBAR_TEXT = ["lends ▼", "balanced", "borrows ▲"]  # the tree figures' colour scale, from -1 to 1
COLORBAR_THICKNESS = 12
DEEP_TREE = 150  # above this many nodes a tree figure shows three levels at a time
MAX_LEVELS = 4  # levels (rings) a tree figure draws at a time; deeper ones collapse until zoomed into
HIGHLIGHT = "#0b57d0"  # the outline of the nodes "Find a node" matched (not a borrow/lend colour)
CONFIG = {"responsive": True, "displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def _layout(height: int, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "template": {},  # an empty template: none of plotly.py's default theme
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 44, "b": 10},
        "font": {"family": FONT, "size": 13, "color": INK},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "hoverlabel": {"font": {"family": FONT}},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "traceorder": "normal"},
    }
    layout.update(extra)
    return layout


def _axis(**extra: Any) -> dict[str, Any]:
    axis = {"gridcolor": GRID, "zerolinecolor": "#c4cad1", "linecolor": "#c4cad1", "automargin": True}
    axis.update(extra)
    return axis


def _plain(value: Any) -> Any:
    """``value`` as plotly.py would serialise it: dicts without their None entries, tuples as lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """plotly.py's update: nested dicts merge, anything else replaces."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


class Figure:
    """The part of ``go.Figure``'s interface these builders use, on plain JSON data. plotly.py's object tree and
    its validators took most of a chart page's server time (``make_subplots`` alone about 20 ms a call); this
    builds the same JSON (tests/frontend/test_figures.py has plotly validate every figure), with the subplot
    grid's layout computed by ``make_subplots`` once per shape (``subplots``)."""

    def __init__(self, layout: Mapping[str, Any] | None = None, cols: int = 1, grid: bool = False) -> None:
        self.data: list[dict[str, Any]] = []
        self.layout: dict[str, Any] = _plain(layout or {})
        self._cols, self._grid = cols, grid

    def _cell(self, row: int, col: int) -> str:
        index = (row - 1) * self._cols + col
        return "" if index == 1 else str(index)

    def add_trace(self, trace: Mapping[str, Any], row: int | None = None, col: int | None = None) -> None:
        out = _plain(trace)
        if self._grid and row is not None and col is not None:
            out["xaxis"], out["yaxis"] = f"x{self._cell(row, col)}", f"y{self._cell(row, col)}"
        self.data.append(out)

    def update_layout(self, patch: Mapping[str, Any] | None = None, **more: Any) -> None:
        _merge(self.layout, _plain({**(patch or {}), **more}))

    def _update_axes(self, letter: str, patch: Mapping[str, Any], row: int | None, col: int | None) -> None:
        if row is not None and col is not None:
            names = [f"{letter}axis{self._cell(row, col)}"]
        else:
            names = [k for k in self.layout if (k[:5] == f"{letter}axis" and k[5:].isdigit()) or k == f"{letter}axis"]
            names = names or [f"{letter}axis"]
        for name in names:
            _merge(self.layout.setdefault(name, {}), _plain(patch))

    def update_xaxes(self, patch: Mapping[str, Any], row: int | None = None, col: int | None = None) -> None:
        self._update_axes("x", patch, row, col)

    def update_yaxes(self, patch: Mapping[str, Any], row: int | None = None, col: int | None = None) -> None:
        self._update_axes("y", patch, row, col)

    def update_annotations(self, **patch: Any) -> None:
        for note in self.layout.get("annotations", []):
            _merge(note, _plain(patch))

    def add_annotation(self, **note: Any) -> None:
        self.layout.setdefault("annotations", []).append(_plain(note))

    def add_vline(self, x: float, line: Mapping[str, Any]) -> None:
        shape = {
            "line": _plain(line),
            "type": "line",
            "x0": x,
            "x1": x,
            "xref": "x",
            "y0": 0,
            "y1": 1,
            "yref": "y domain",
        }
        self.layout.setdefault("shapes", []).append(shape)

    def to_dict(self) -> dict[str, Any]:
        return {"data": self.data, "layout": reserve_margins(self.layout, self.data)}


@lru_cache(maxsize=256)
def _grid_layout(rows: int, cols: int, options: str) -> str:
    # imported here: plotly (with numpy and narwhals) is about a second of CPU to import, which every process that
    # loads the pages' modules without drawing a chart paid (each Celery worker and management command)
    from plotly.subplots import make_subplots

    return json.dumps(json.loads(make_subplots(rows=rows, cols=cols, **json.loads(options)).to_json())["layout"])


def subplots(rows: int, cols: int, **options: Any) -> Figure:
    """``make_subplots(rows, cols, **options)`` as a plain :class:`Figure` (its layout cached per shape)."""
    layout = json.loads(_grid_layout(rows, cols, json.dumps(options, sort_keys=True)))
    layout.pop("template", None)
    return Figure(layout, cols=cols, grid=True)


def bar(**trace: Any) -> dict[str, Any]:
    return {**trace, "type": "bar"}


def scatter(**trace: Any) -> dict[str, Any]:
    return {**trace, "type": "scatter"}


def _empty(message: str, height: int = 220) -> Figure:
    """A figure with nothing to draw but a sentence. ``layout.meta.note`` names it so: the page shows the sentence
    where the annotation would be without drawing a plotly figure (``js/charts.js``, first paint); the rest is the
    same figure as plotly would draw it, for ``Plotly.react`` when a refresh empties a drawn figure."""
    fig = Figure(layout=_layout(height))
    fig.update_layout(
        xaxis={"visible": False},
        yaxis={"visible": False},
        annotations=[{"text": message, "showarrow": False, "font": {"color": MUTED, "size": 14}}],
        meta={"note": message},
    )
    return fig


def to_json(fig: Figure | dict[str, Any]) -> dict[str, Any]:
    """The figure as plain JSON data for ``json_script`` (``data`` and ``layout``)."""
    return fig if isinstance(fig, dict) else fig.to_dict()


# -- trees --------------------------------------------------------------------------------------------------------


def balance_ratio(node: TreeNode, resource: str) -> float:
    """(borrowed - lent) / entitlement of one resource, clipped to [-1, 1] (0: neither borrows nor lends)."""
    borrowed, lent = node.borrowed.get(resource, 0), node.lent.get(resource, 0)
    base = max(node.entitled.get(resource, 0), node.floor.get(resource, 0), borrowed, lent, 1)
    if units.is_unlimited(base):
        return 0.0
    return max(-1.0, min(1.0, (borrowed - lent) / base))


def _hover(tree: Tree, node: TreeNode, resource: str) -> str:
    t = TERMS[tree.kind]
    cap = node.cap.get(resource)
    lines = [
        f"<b>{node.name}</b>",
        f"{t['cap']}: {units.human(cap, resource) if cap is not None else 'unlimited'}",
        f"{t['floor']}: {units.human(node.floor.get(resource, 0), resource)}",
        f"{t['entitled']}: {units.human(node.entitled.get(resource, 0), resource)}",
        f"{t['used']}: {units.human(node.used.get(resource, 0), resource)}",
    ]
    held = node.reserved.get(resource, 0), node.pipelined.get(resource, 0)
    if held[0]:
        jobs = node.reserving.get(resource, 0)
        lines.append(f"reserved: {units.human(held[0], resource)} by {plural(jobs, 'admitted job')}")
    if held[1]:
        pods = node.pipelined_pods
        lines.append(f"pipelined: {units.human(held[1], resource)} in {plural(pods, 'pod')}")
    b, lent = node.borrowed.get(resource, 0), node.lent.get(resource, 0)
    if b:
        lines.append(f"borrows {units.human(b, resource)}")
    if lent:
        lines.append(f"lends {units.human(lent, resource)}")
    if not b and not lent:
        lines.append("neither borrows nor lends")
    return "<br>".join(lines)


def tree_levels(tree: Tree, root: str | None = None) -> int:
    """How many rings (levels) the figure of ``tree`` (or of the subtree under ``root``) has."""
    tops = [root] if root is not None else list(tree.roots)
    return 1 + max((depth_below(tree, t) for t in tops), default=0)


def tree_figure(
    tree: Tree,
    resource: str,
    urls: Mapping[str, str],
    *,
    size_by: str = "cap",
    style: str = "sunburst",
    height: int = 560,
    root: str | None = None,
    highlight: Collection[str] = (),
    zoom: Mapping[str, str] | None = None,
    up: str = "",
) -> dict[str, Any]:
    """The tree (or the subtree under ``root``) as a sunburst or icicle: sectors sized by ``size_by`` of
    ``resource`` (capability/max by default), coloured by borrowed minus lent relative to the node's entitlement;
    ``customdata`` is each node's page so a click can open it.

    At most ``MAX_LEVELS`` levels are drawn at a time (``maxdepth``; three for trees of more than ``DEEP_TREE``
    nodes, whose thousand labelled sectors take the browser too long): deeper levels collapse into their
    ancestor's ring. ``zoom`` maps a node with children to the URL of the page zoomed into it (``layout.meta``:
    a click on such a sector zooms there, a click on the centre goes ``up``), so every level can be reached.
    ``highlight`` (the nodes "Find a node" matched) get a dark outline, their ancestors a thinner one."""
    if not tree.nodes:
        return _empty("Nothing to show in this tree.")
    value = sizes(tree, resource, size_by)
    order = tree.subtree(root) if root is not None else tree.order
    if root is not None:
        top = value.get(root, 0.0)
        value = {n: value.get(n, 0.0) / top for n in order} if top > 0 else {}
    ids = [n for n in order if value.get(n, 0.0) > 0]
    if not ids:
        return _empty(f"No node of this tree has any {resource} to size by.")
    shown = set(ids)
    nodes = [tree.nodes[n] for n in ids]
    colors = [balance_ratio(n, resource) for n in nodes]
    marked = set(highlight) & shown
    path = {a for n in marked for a in tree.ancestors(n)} & shown
    line_colors = [HIGHLIGHT if n in marked else (INK if n in path else "#ffffff") for n in ids]
    line_widths = [4 if n in marked else (2 if n in path else 1) for n in ids]
    levels = tree_levels(tree, root)
    limit = 3 if len(ids) > DEEP_TREE else MAX_LEVELS
    trace_args: dict[str, Any] = {
        "ids": ids,
        "labels": [f"<b>{n}</b>" if n in marked else n for n in ids],
        "parents": [n.parent if n.parent in shown and n.name != root else "" for n in nodes],
        "values": [value[n] for n in ids],
        "branchvalues": "total",
        "customdata": [urls.get(n, "") for n in ids],
        "hovertext": [_hover(tree, n, resource) for n in nodes],
        "hoverinfo": "text",
        "marker": {
            "colors": colors,
            "colorscale": DIVERGING,
            "cmin": -1,
            "cmax": 1,
            "cmid": 0,
            "line": {"color": line_colors, "width": line_widths},
            "colorbar": {
                "tickvals": [-1, 0, 1],
                "ticktext": COLORBAR_TEXT,
                "thickness": COLORBAR_THICKNESS,
                "len": 0.7,
            },
            "showscale": True,
        },
        "maxdepth": limit if levels > limit or len(ids) > DEEP_TREE else -1,
        "sort": False,
    }
    if style != "icicle":
        trace_args["insidetextorientation"] = "radial"
    trace = {"type": "icicle" if style == "icicle" else "sunburst", **trace_args}
    tops = {n for n, p in zip(ids, trace_args["parents"], strict=True) if not p}
    meta = {
        "root": root or "",
        "up": up,
        "zoom": {n: url for n, url in (zoom or {}).items() if n in shown and n != root and n not in tops},
        "highlight": sorted(marked),
    }
    # Plain JSON data: plotly's validators and its deep copy of every array took about 100 ms of a 1,000-node tree
    # page; tests/frontend/test_figures.py has plotly validate what this builds.
    # the colorbar's room asked beforehand: plotly would otherwise draw the tree twice (frontend/margins.py)
    right = colorbar_room(COLORBAR_TEXT, COLORBAR_THICKNESS)
    layout = _layout(height, margin={"l": 0, "r": right, "t": 10, "b": 10}, meta=meta)
    return {"data": [trace], "layout": layout}


# -- capacity and nodes --------------------------------------------------------------------------------------------


def capacity_figure(
    total: Mapping[str, int], allocated: Mapping[str, int], requested: Mapping[str, int], resources: Sequence[str]
) -> Figure:
    """Cluster capacity per resource: allocated, the rest of the requests (waiting) and what is idle, as
    percentages of the total, with the amounts in the hover text."""
    rows = [r for r in resources if total.get(r, 0) > 0]
    if not rows:
        return _empty("The cluster has no ready node yet.")

    def waiting(r: str) -> int:
        return max(0, requested.get(r, 0) - allocated.get(r, 0))

    widest = max(100.0, *(100.0 * (allocated.get(r, 0) + waiting(r)) / total[r] for r in rows))
    # The legend sits at the top of the figure; the "cluster" label of the 100 % line (when requests go beyond it)
    # gets its own band between the legend and the bars, so that the two never overlap (1280 px and up).
    label_band = 22 if widest > 100.0 else 0
    fig = Figure(
        layout=_layout(
            90 + 44 * len(rows) + label_band,
            barmode="stack",
            legend={**TOP_LEGEND, "x": 0, "xanchor": "left"},
            margin={"l": 10, "r": 10, "t": 40 + label_band, "b": 10},
        )
    )

    parts = (
        ("allocated", SERIES["used"], lambda r: allocated.get(r, 0)),
        ("requested, waiting", BORROWED, waiting),
        ("not requested", "#e6e9ed", lambda r: max(0, total.get(r, 0) - allocated.get(r, 0) - waiting(r))),
    )
    for name, color, amount in parts:
        xs = [100.0 * amount(r) / total[r] for r in rows]
        fig.add_trace(
            bar(
                name=name,
                y=[units.label(r) for r in rows],
                x=xs,
                orientation="h",
                marker={"color": color},
                text=[units.human(amount(r), r) if amount(r) else "" for r in rows],
                textposition="inside",
                insidetextanchor="middle",
                hovertemplate="%{y}: " + name + " %{text} (%{x:.1f}% of total)<extra></extra>",
            )
        )
    fig.update_layout(
        xaxis=_axis(title={"text": "% of the cluster"}, range=[0, round(widest, 1)], ticksuffix="%"),
        yaxis=_axis(autorange="reversed"),
    )
    if widest > 100.0:
        fig.add_vline(x=100, line={"color": INK, "width": 1.5, "dash": "dash"})
        fig.add_annotation(x=100, y=1.0, yref="paper", text="cluster", showarrow=False, yanchor="bottom")
    return fig


def _holding_hover(node: TreeNode, r: str, key: str, amount: int) -> str:
    """Hover text of one segment of the usage bar, in people's units."""
    what = units.human(amount, r)
    if key == "reserved":
        jobs = node.reserving.get(r, 0)
        return f"{what} of {resource_label(r)} reserved by {plural(jobs, 'admitted job')} not yet fully placed"
    if key == "pipelined":
        pods = node.pipelined_pods
        return f"{what} of {resource_label(r)} requested by {plural(pods, 'pipelined pod')}, waiting for resources being freed"
    return f"{TERMS[node.kind]['used']} of {resource_label(r)}: {what}"


def resources_figure(node: TreeNode, resources: Sequence[str], effective_caps: Mapping[str, int]) -> Figure:
    """Per resource, the node's floor, entitlement, usage and cap side by side: one small panel per resource,
    each on its own axis and unit. A cap the node does not set itself is drawn hatched at what it could reach;
    a cap far above the other bars is cut at the panel's edge and labelled with its value.

    The usage bar is stacked: what is allocated, then (lighter, hatched) what admitted jobs reserve, then
    (dotted) what pipelined pods request, each with its own legend entry and hover text."""
    rows = list(resources)
    if not rows:
        return _empty("This node names no resource yet.")

    t = TERMS[node.kind]
    order = ("floor", "entitled", "used", "cap")
    holding = ("reserved", "pipelined")
    fig = subplots(
        rows=len(rows), cols=1, subplot_titles=[units.label(r) for r in rows], vertical_spacing=0.32 / len(rows)
    )
    for i, r in enumerate(rows, start=1):
        own = node.cap.get(r)
        limited = own is not None and not units.is_unlimited(own)
        cap_amount = own if limited else effective_caps.get(r, 0)
        amounts = {key: getattr(node, key).get(r, 0) for key in order if key != "cap"}
        amounts["cap"] = cap_amount or 0
        extra = {key: getattr(node, key).get(r, 0) for key in holding}
        shown = {key: units.to_display(a, r) or 0.0 for key, a in amounts.items()}
        stacked = {key: units.to_display(a, r) or 0.0 for key, a in extra.items()}
        in_use = shown["used"] + sum(stacked.values())
        others = max(shown["floor"], shown["entitled"], in_use)
        clipped = others > 0 and shown["cap"] > 4 * others
        top = others * 1.35 if clipped else max(*shown.values(), in_use) * 1.18 or 1.0
        last_held = next((k for k in reversed(holding) if extra[k]), None)
        for key in order:
            text = units.human(amounts[key], r)
            if key == "cap" and not limited:
                text += " (no own cap)" if own is None else ""
            if key == "cap" and clipped:
                text = "→ " + text
            used_stack = key == "used" and last_held is not None
            fig.add_trace(
                bar(
                    name=t[key],
                    y=[t[key]],
                    x=[min(shown[key], top) if key == "cap" else shown[key]],
                    orientation="h",
                    offsetgroup=key,
                    marker={
                        "color": SERIES[key],
                        "pattern": {
                            "shape": "/" if key == "cap" and not limited else "",
                            "fgcolor": "#ffffff",
                            "fillmode": "overlay",
                        },
                    },
                    text=[""] if used_stack else [text],
                    textposition="inside" if key == "cap" and clipped else "outside",
                    insidetextanchor="end",
                    # the bars are thin: plotly would shrink a label to the bar's height, out of reading size
                    constraintext="none",
                    textfont={"size": 11},
                    cliponaxis=False,
                    legendgroup="used" if key == "used" else None,
                    showlegend=key == "used" and i == 1,
                    hovertemplate=(
                        _holding_hover(node, r, "used", amounts[key])
                        if key == "used"
                        else f"{t[key]} of {resource_label(r)}: {units.human(amounts[key], r)}"
                    )
                    + "<extra></extra>",
                ),
                row=i,
                col=1,
            )
        base = shown["used"]
        for key in holding:
            label = "reserved by admitted jobs" if key == "reserved" else "pipelined pods"
            parts = [units.human(amounts["used"], r)] + [
                f"{units.human(extra[k], r, unit=False)} {k}" for k in holding if extra[k]
            ]
            fig.add_trace(
                bar(
                    name=label,
                    y=[t["used"]],
                    x=[stacked[key]],
                    base=[base],
                    orientation="h",
                    offsetgroup="used",
                    marker={
                        "color": SERIES[key],
                        "line": {"color": SERIES["used"], "width": 1} if key == "reserved" else {"width": 0},
                        "pattern": {"shape": HOLDING_PATTERNS[key], "fgcolor": HOLDING_INK[key], "fillmode": "overlay"},
                    },
                    text=[" + ".join(parts)] if key == last_held else [""],
                    textposition="outside",
                    constraintext="none",
                    textfont={"size": 11},
                    cliponaxis=False,
                    legendgroup=key,
                    showlegend=i == 1,
                    hovertemplate=_holding_hover(node, r, key, extra[key]) + "<extra></extra>",
                ),
                row=i,
                col=1,
            )
            base += stacked[key]
        fig.update_xaxes(_axis(range=[0, top]), row=i, col=1)
        fig.update_yaxes(_axis(autorange="reversed", showgrid=False), row=i, col=1)
    fig.update_layout(
        _layout(
            86 + 125 * len(rows),
            barmode="group",
            bargap=0.18,
            margin={"l": 10, "r": 70, "t": 56, "b": 10},
            legend={**TOP_LEGEND, "font": {"size": 12}},
        )
    )
    fig.update_annotations(font={"size": 12, "color": MUTED}, x=0, xanchor="left")
    return fig


def borrow_lend_figure(
    items: Sequence[tuple[str, Mapping[str, int], Mapping[str, int]]], resources: Sequence[str], *, title: str = ""
) -> Figure:
    """Diverging bars: what each item (a child, a top borrower) borrows to the right and lends to the left,
    one panel per resource, in each resource's unit."""
    rows = [r for r in resources if any(b.get(r, 0) or out.get(r, 0) for _, b, out in items)]
    if not items or not rows:
        return _empty(f"{title + ': n' if title else 'N'}obody borrows or lends here right now.", height=160)
    names = [name for name, _, _ in items]

    fig = subplots(
        rows=1,
        cols=len(rows),
        shared_yaxes=True,
        subplot_titles=[units.label(r) for r in rows],
        horizontal_spacing=0.06,
    )
    for col, r in enumerate(rows, start=1):
        borrowed_x = [units.to_display(b.get(r, 0), r) or 0.0 for _, b, _ in items]
        lent_x = [-(units.to_display(out.get(r, 0), r) or 0.0) for _, _, out in items]
        fig.add_trace(
            bar(
                name="borrows",
                y=names,
                x=borrowed_x,
                orientation="h",
                marker={"color": BORROWED},
                legendgroup="borrowed",
                showlegend=col == 1,
                customdata=[units.human(b.get(r, 0), r) for _, b, _ in items],
                hovertemplate="%{y} borrows %{customdata}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            bar(
                name="lends",
                y=names,
                x=lent_x,
                orientation="h",
                marker={"color": LENT, "pattern": {"shape": "/", "fgcolor": "#ffffff", "fillmode": "overlay"}},
                legendgroup="lent",
                showlegend=col == 1,
                customdata=[units.human(out.get(r, 0), r) for _, _, out in items],
                hovertemplate="%{y} lends %{customdata}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        # a panel per resource is narrow: at most four ticks keep its labels upright (rotated ones would take a
        # second draw for the room they need, frontend/margins.py)
        fig.update_xaxes(_axis(zeroline=True, zerolinewidth=2, zerolinecolor="#59636e", nticks=4), row=1, col=col)
    fig.update_yaxes(_axis(autorange="reversed"))
    fig.update_layout(
        _layout(
            110 + 28 * len(items),
            barmode="relative",
            title={"text": title, "x": 0.01, "y": 0.99, "yanchor": "top", "yref": "container", "font": {"size": 14}},
            legend=TOP_LEGEND,
            margin={"l": 10, "r": 10, "t": 74, "b": 10},
        )
    )
    return fig


# -- time series ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One sample of a node: time and the amounts in base units per resource."""

    time: datetime
    request: Mapping[str, int]
    used: Mapping[str, int]
    entitled: Mapping[str, int]
    borrowed: Mapping[str, int]
    lent: Mapping[str, int]


def timeseries_figure(points: Sequence[Point], resource: str, kind: str) -> Figure:
    """Entitlement, usage and request over time (top) and borrowed / lent (bottom, lent below zero)."""
    if not points:
        return _empty("No session has sampled this node in the selected window yet.", height=300)

    t = TERMS[kind]
    xs = [p.time.isoformat() for p in points]

    def series(attr: str, sign: float = 1.0) -> list[float]:
        return [sign * (units.to_display(getattr(p, attr).get(resource, 0), resource) or 0.0) for p in points]

    fig = subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.68, 0.32], vertical_spacing=0.06)
    for attr, name, dash in (("entitled", t["entitled"], "solid"), ("used", t["used"], "solid")):
        fig.add_trace(
            scatter(
                x=xs,
                y=series(attr),
                name=name,
                mode="lines",
                line={"color": SERIES[attr], "width": 2.5, "dash": dash, "shape": "hv"},
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        scatter(
            x=xs,
            y=series("request"),
            name="request",
            mode="lines",
            line={"color": SERIES["request"], "width": 1.5, "dash": "dot", "shape": "hv"},
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        scatter(
            x=xs,
            y=series("borrowed"),
            name="borrowed",
            mode="lines",
            fill="tozeroy",
            line={"color": BORROWED, "width": 1.5, "shape": "hv"},
        ),
        row=2,
        col=1,
    )
    fig.add_trace(
        scatter(
            x=xs,
            y=series("lent", -1.0),
            name="lent (below 0)",
            mode="lines",
            fill="tozeroy",
            fillpattern={"shape": "/", "fgcolor": "#ffffff", "fillmode": "overlay"},
            line={"color": LENT, "width": 1.5, "shape": "hv"},
        ),
        row=2,
        col=1,
    )
    fig.update_layout(_layout(380, hovermode="x unified"))
    fig.update_xaxes(_axis())
    fig.update_yaxes(_axis(title={"text": units.label(resource)}, rangemode="tozero"), row=1, col=1)
    fig.update_yaxes(_axis(title={"text": "± borrowed / lent"}, zeroline=True), row=2, col=1)
    return fig


# -- namespaces, sessions, what-if -------------------------------------------------------------------------------


def namespaces_figure(rows: Sequence[Mapping[str, Any]], resources: Sequence[str]) -> Figure:
    """Namespaces of one queue (seed 000): their weight and, per resource, deserved vs allocated vs request."""
    if not rows:
        return _empty("No namespace has jobs in this queue.", height=160)
    res = [r for r in resources if any(row["deserved"].get(r, 0) or row["request"].get(r, 0) for row in rows)]
    res = res or list(resources[:1])

    fig = subplots(rows=1, cols=len(res), shared_yaxes=True, subplot_titles=[units.label(r) for r in res])
    labels = [f"{row['namespace']} (weight {row['weight']})" for row in rows]
    for col, r in enumerate(res, start=1):
        for key, name, color in (
            ("deserved", "deserved", SERIES["entitled"]),
            ("allocated", "allocated", SERIES["used"]),
            ("request", "request", "#c4cad1"),
        ):
            amounts = [row[key].get(r, 0) for row in rows]
            fig.add_trace(
                bar(
                    name=name,
                    y=labels,
                    x=[units.to_display(a, r) or 0.0 for a in amounts],
                    orientation="h",
                    marker={"color": color},
                    legendgroup=key,
                    showlegend=col == 1,
                    customdata=[units.human(a, r) for a in amounts],
                    hovertemplate="%{y}: " + name + " %{customdata}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(
        _layout(130 + 64 * len(rows), barmode="group", legend=TOP_LEGEND, margin={"l": 10, "r": 10, "t": 70, "b": 10})
    )
    fig.update_xaxes(_axis(rangemode="tozero"))
    fig.update_yaxes(_axis(autorange="reversed"))
    return fig


SESSIONS_MIN_SPAN = timedelta(minutes=1)  # the sessions figure's narrowest time axis


def sessions_figure(sessions: Sequence[Mapping[str, Any]]) -> Figure:
    """Recent scheduling sessions: duration (line) and decisions (bars: bound, pipelined, evicted)."""
    if not sessions:
        return _empty("No scheduling session has run yet.", height=200)
    starts = [s["started"] for s in sessions]
    xs = [t.isoformat() for t in starts]
    # bars 0.8 of the closest two sessions apart (1 s when there is one), on an axis at least a minute wide: a lone
    # session, or a few close together, would otherwise fill the axis and get ticks a fraction of a millisecond apart
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(sorted(starts)) if b > a]
    width_ms = 800.0 * min(gaps, default=1.0)
    pad = max(timedelta(0), (SESSIONS_MIN_SPAN - (max(starts) - min(starts))) / 2) + timedelta(milliseconds=width_ms)
    fig = Figure(layout=_layout(240, barmode="stack", hovermode="x unified"))
    for key, name, color in (
        ("bound", "bound", SERIES["used"]),
        ("pipelined", "pipelined", SERIES["floor"]),
        ("evicted", "evicted", BORROWED),
    ):
        fig.add_trace(bar(x=xs, y=[s[key] for s in sessions], name=name, marker={"color": color}, width=width_ms))
    fig.add_trace(
        scatter(
            x=xs,
            y=[s["duration_ms"] for s in sessions],
            name="duration (ms)",
            yaxis="y2",
            mode="lines+markers",
            line={"color": INK, "width": 1.5},
            marker={"size": 4},
        )
    )
    fig.update_layout(
        xaxis=_axis(type="date", range=[(min(starts) - pad).isoformat(), (max(starts) + pad).isoformat()], nticks=5),
        yaxis=_axis(title={"text": "decisions"}, rangemode="tozero"),
        # ticks of its own (round milliseconds), not the decisions' grid scaled
        yaxis2=_axis(
            title={"text": "ms"}, overlaying="y", side="right", rangemode="tozero", showgrid=False, tickmode="auto"
        ),
    )
    return fig


def whatif_figure(rows: Sequence[tuple[str, int, int]], resource: str, term: str) -> Figure:
    """Before and after of one value (``term``) of the nodes a proposal changes, as paired bars."""
    if not rows:
        return _empty("The staged changes move no value of this resource.", height=160)
    names = [name for name, _, _ in rows]
    fig = Figure(layout=_layout(100 + 40 * len(rows), barmode="group"))
    for idx, (label, color, pattern) in enumerate((("before", SERIES["before"], "/"), ("after", SERIES["after"], ""))):
        amounts = [row[1 + idx] for row in rows]
        fig.add_trace(
            bar(
                name=label,
                y=names,
                x=[units.to_display(a, resource) or 0.0 for a in amounts],
                orientation="h",
                marker={"color": color, "pattern": {"shape": pattern, "fgcolor": "#ffffff", "fillmode": "overlay"}},
                customdata=[units.human(a, resource) for a in amounts],
                hovertemplate="%{y}: " + term + " " + label + " %{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        xaxis=_axis(title={"text": f"{term}, {units.label(resource)}"}, rangemode="tozero"),
        yaxis=_axis(autorange="reversed"),
    )
    return fig


# -- replay (planning.replay: the last days replayed with proposed changes) -------------------------------------------


def _wait_unit(seconds: Sequence[float]) -> tuple[float, str]:
    """Minutes for waits up to three hours, else hours."""
    return (3600.0, "hours") if max(seconds, default=0.0) > 3 * 3600 else (60.0, "minutes")


def replay_waits_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """Waiting time per team, p50 and p95, before (the baseline, grey, hatched) and after (the proposal) as paired
    bars. ``rows``: ``{"team", "p50": (before, after), "p95": (before, after)}`` in seconds (None: no job started)."""
    if not rows:
        return _empty("No team started a job in the window.", height=160)
    values = [v for r in rows for k in ("p50", "p95") for v in r[k] if v is not None]
    scale, unit = _wait_unit(values)
    names = [r["team"] for r in rows]
    fig = Figure(layout=_layout(110 + 34 * len(rows), barmode="group"))
    for key, pale in (("p50", "#56b4e9"), ("p95", SERIES["after"])):
        for idx, (label, color, pattern) in enumerate((("before", SERIES["before"], "/"), ("after", pale, ""))):
            seconds = [r[key][idx] for r in rows]
            fig.add_trace(
                bar(
                    name=f"{key} {label}",
                    y=names,
                    x=[None if s is None else round(s / scale, 2) for s in seconds],
                    orientation="h",
                    marker={"color": color, "pattern": {"shape": pattern, "fgcolor": "#ffffff", "fillmode": "overlay"}},
                    customdata=["no job started" if s is None else duration_words(s) for s in seconds],
                    hovertemplate="%{y}: " + f"{key} wait {label}" + " %{customdata}<extra></extra>",
                )
            )
    # at least one unit wide: waits of a few seconds are drawn as the slivers they are, not stretched across the chart
    top = max(values, default=0.0) / scale
    xaxis = _axis(title={"text": f"waiting time, {unit}"}, rangemode="tozero")
    if top < 1:
        xaxis["range"] = [0, 1]
    fig.update_layout(xaxis=xaxis, yaxis=_axis(autorange="reversed"))
    return fig


# Okabe-Ito, for a few lines told apart by colour (and by their markers' shapes, for those who cannot)
LINES = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00")
MARKERS = ("circle", "square", "diamond", "triangle-up", "x", "star")


def waits_trend_figure(series: Sequence[Mapping[str, Any]], step: float, window: tuple[str, str]) -> Figure:
    """The 95th percentile wait of the jobs submitted in each period (an hour or a day), a line per node, across the
    whole ``window`` (its start and end, ISO; one period is not stretched across the chart): ``series``:
    ``{"name", "points": [(start ISO, p95 seconds or None, jobs started, jobs still waiting)]}``."""
    values = [p[1] for s in series for p in s["points"] if p[1] is not None]
    if not values:
        return _empty("No job submitted in the window has started yet.", height=160)
    scale, unit = _wait_unit(values)
    period = "hour" if step < 86400 else "day"
    fig = Figure(layout=_layout(300, hovermode="x unified", legend=TOP_LEGEND))
    for i, s in enumerate(series):
        points = s["points"]
        fig.add_trace(
            scatter(
                x=[p[0] for p in points],
                y=[None if p[1] is None else round(p[1] / scale, 2) for p in points],
                name=s["name"],
                mode="lines+markers",
                line={"color": LINES[i % len(LINES)], "width": 2},
                marker={"symbol": MARKERS[i % len(MARKERS)], "size": 7},
                customdata=[[("none started" if p[1] is None else duration_words(p[1])), p[2], p[3]] for p in points],
                hovertemplate=s["name"]
                + ": p95 %{customdata[0]} (%{customdata[1]} started, %{customdata[2]} still waiting)<extra></extra>",
            )
        )
    yaxis = _axis(title={"text": f"95th percentile wait, {unit}"}, rangemode="tozero")
    if max(values) / scale < 1:
        yaxis["range"] = [0, 1]
    xaxis = _axis(title={"text": f"submitted in the {period} from"}, type="date", range=list(window))
    fig.update_layout(xaxis=xaxis, yaxis=yaxis)
    return fig


def replay_utilisation_figure(series: Mapping[str, Mapping[str, Sequence[Sequence[Any]]]]) -> Figure:
    """Utilisation over time per resource: ``{resource: {"before": [[time, fraction], ...], "after": [...]}}``, one
    row per resource, the baseline grey and dashed, the proposal blue, in per cent of the schedulable nodes'
    allocatable."""
    resources = [r for r in series if series[r].get("before") or series[r].get("after")]
    if not resources:
        return _empty("Nothing ran in the window.", height=200)
    fig = subplots(rows=len(resources), cols=1, shared_xaxes=True, vertical_spacing=0.08, subplot_titles=[
        units.label(r) if r != "memory" else "memory" for r in resources
    ])  # fmt: skip
    for i, r in enumerate(resources, start=1):
        for key, name, color, dash in (
            ("before", "baseline", SERIES["before"], "dash"),
            ("after", "with the changes", SERIES["after"], "solid"),
        ):
            points = series[r].get(key) or []
            fig.add_trace(
                scatter(
                    x=[p[0] for p in points],
                    y=[round(100 * p[1], 1) for p in points],
                    name=name,
                    legendgroup=key,
                    showlegend=i == 1,
                    mode="lines",
                    line={"color": color, "width": 2, "dash": dash, "shape": "hv"},
                    hovertemplate=f"{resource_label(r)} {name}: " + "%{y}%<extra></extra>",
                ),
                row=i,
                col=1,
            )
        fig.update_yaxes(_axis(title={"text": "% used"}, range=[0, 100]), row=i, col=1)
    fig.update_layout(_layout(90 + 170 * len(resources), hovermode="x unified", legend=TOP_LEGEND))
    fig.update_xaxes(_axis())
    return fig


def replay_borrow_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """GPU-hours borrowed and lent per team, before (hatched) and after: ``{"team", "borrowed": (before, after),
    "lent": (before, after)}``."""
    if not rows:
        return _empty("No team borrowed or lent GPUs in the window.", height=160)
    names = [r["team"] for r in rows]
    fig = Figure(layout=_layout(110 + 34 * len(rows), barmode="group"))
    for key, color in (("borrowed", BORROWED), ("lent", LENT)):
        for idx, (label, pattern) in enumerate((("before", "/"), ("after", ""))):
            amounts = [r[key][idx] for r in rows]
            fig.add_trace(
                bar(
                    name=f"{key} {label}",
                    y=names,
                    x=amounts,
                    orientation="h",
                    marker={"color": color, "pattern": {"shape": pattern, "fgcolor": "#ffffff", "fillmode": "overlay"}},
                    opacity=0.55 if label == "before" else 1.0,
                    hovertemplate="%{y}: " + f"{key} {label}" + " %{x} GPU-hours<extra></extra>",
                )
            )
    fig.update_layout(xaxis=_axis(title={"text": "GPU-hours"}, rangemode="tozero"), yaxis=_axis(autorange="reversed"))
    return fig
