"""Margins reserved on the server for the axes' labels, so that a figure is drawn once.

Every axis of the dashboard's figures has plotly's ``automargin`` on: labels are never cut. But plotly learns how
much room they take only by drawing them, and when that is more than the layout's margins it grows the margins and
draws the whole figure a second time (``Plots.doAutoMargin``: a third to a half of a chart page's first paint). It
does not redraw when the margins given already hold every label. So the layout asks beforehand for an estimate of
that room, from the labels the server knows (categories) or can foresee (the longest tick of a numeric axis, a date
axis's two lines), on the generous side: a wider estimate costs a few pixels of white, a narrower one the second
draw, never a cut label. ``tests/e2e`` checks that the demo's pages draw each figure with the margins it was given.

Widths are those of the dashboard's 13 px font as Chromium draws it on Debian (DejaVu Sans behind ``system-ui``),
among the widest of the usual sans-serif faces, so that other systems' fonts fit within them as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

# Pixel widths at 13 px, by class of character (measured: digits 8.3, the minus sign 10.9, "capability" 64 px, "ml-research" 77)
_DIGIT, _WIDE, _UPPER, _LOWER, _MID, _NARROW = 8.4, 11.5, 9.4, 8.1, 5.6, 3.9
_NARROW_CHARS = frozenset(".,:;'|!ijl")
_MID_CHARS = frozenset(" tfr()[]/-")
MINUS = "\u2212"  # plotly's minus sign in tick labels
_WIDE_CHARS = frozenset("mwMW%@" + MINUS)
TICK_ROOM = 13  # between a tick label and the plot area, plus the label's own padding
TICK_LINE = 17  # the height of one line of tick labels
TITLE_ROOM = 19  # an axis title's line
LEGEND_ROW = 30  # a horizontal legend's row
LEGEND_PAD = 10  # around a legend
SPARE = 4  # on top of every estimate


def text_width(text: str) -> float:
    """The estimated width in pixels of ``text`` in the figures' font (13 px)."""
    width = 0.0
    for ch in text:
        if ch.isdigit():
            width += _DIGIT
        elif ch in _WIDE_CHARS:
            width += _WIDE
        elif ch in _NARROW_CHARS:
            width += _NARROW
        elif ch in _MID_CHARS:
            width += _MID
        elif ch.isupper():
            width += _UPPER
        else:
            width += _LOWER
    return width


def colorbar_room(ticktext: Sequence[str], thickness: int) -> int:
    """The right margin a vertical colorbar at the figure's right edge takes: its bar, its pads and its labels."""
    return int(thickness + 30 + max((text_width(t) for t in ticktext), default=0.0) + SPARE + 0.999)


def _numbers(values: Iterable[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def _is_time(values: Sequence[Any]) -> bool:
    first = next((v for v in values if v is not None), None)
    if isinstance(first, datetime | date):
        return True
    return isinstance(first, str) and len(first) >= 10 and first[4] == "-" and first[7] == "-" and first[:4].isdigit()


def numeric_tick_width(values: Sequence[Any], suffix: str = "") -> float:
    """The width of the widest tick label plotly is likely to draw for ``values``: the largest magnitude rounded up
    to the next tick, with thousands separators, a minus when there are negative values, and one decimal when
    the range is small (plotly's ticks of a range under 5 step by halves)."""
    numbers = _numbers(values)
    top = max((abs(v) for v in numbers), default=0.0)
    digits = len(f"{int(top * 1.1) + 1:,}") if top >= 1 else 1  # the autorange's padding may reach the next tick
    text = "8" * digits
    if top < 5:
        text += ".5"  # 0.5, 1.5, ... (and an all-zero axis draws -1 to 1 by halves)
    if not numbers or min(numbers) < 0 or top == 0:
        text = MINUS + text
    return text_width(text + suffix)


def _axis_traces(data: Sequence[Mapping[str, Any]], letter: str, axis_id: str) -> list[Mapping[str, Any]]:
    return [t for t in data if t.get(f"{letter}axis", letter) == axis_id]


def _title(axis: Mapping[str, Any]) -> bool:
    title = axis.get("title")
    return bool(title.get("text") if isinstance(title, Mapping) else title)


def _y_need(axis: Mapping[str, Any], traces: Sequence[Mapping[str, Any]], stacked: bool) -> float:
    labels: list[str] = []
    values: list[Any] = []
    stack = 0.0
    for trace in traces:
        ys = list(trace.get("y") or ())
        if trace.get("orientation") == "h" or any(isinstance(v, str) for v in ys):
            labels.extend(str(v) for v in ys)
        elif stacked and trace.get("type") == "bar":
            stack += max((abs(v) for v in _numbers(ys)), default=0.0)  # stacked bars reach the sum (at most)
        else:
            values.extend(ys)
    if stack:
        values.append(stack)
    if labels:
        width = max(text_width(label) for label in labels)
    else:
        width = numeric_tick_width(values, str(axis.get("ticksuffix", "")))
    return width + TICK_ROOM + (TITLE_ROOM if _title(axis) else 0) + SPARE


def _x_need(axis: Mapping[str, Any], traces: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The bottom margin an x axis's labels take, and the right one its last numeric label may overhang."""
    values = [v for t in traces for v in (t.get("x") or ())]
    if _is_time(values):  # a date axis writes the day under the first time of each day
        return 2 * TICK_LINE + TICK_ROOM + (TITLE_ROOM if _title(axis) else 0) + SPARE, 0.0
    bottom = TICK_LINE + TICK_ROOM + (TITLE_ROOM if _title(axis) else 0) + SPARE
    if any(isinstance(v, str) for v in values):
        return bottom, 0.0
    return bottom, numeric_tick_width(values, str(axis.get("ticksuffix", ""))) / 2 + SPARE


def _legend_need(layout: Mapping[str, Any], data: Sequence[Mapping[str, Any]]) -> float:
    """The top margin a horizontal legend above the plot pushes to: one row (the dashboard's legends are short)."""
    legend = layout.get("legend")
    shown = [t for t in data if t.get("showlegend", True) is not False]
    if not isinstance(legend, Mapping) or legend.get("orientation") != "h" or layout.get("showlegend") is False:
        return 0.0
    if len(shown) < 2 and layout.get("showlegend") is not True:
        return 0.0  # plotly draws no legend for a single trace
    y = float(legend.get("y", 1.02))
    height = float(layout.get("height", 450))
    if legend.get("yref") == "container" and legend.get("yanchor") == "top":
        return (1 - y) * height + LEGEND_ROW + LEGEND_PAD + SPARE
    if y >= 1 and legend.get("yanchor") == "bottom":
        return (y - 1) * height + LEGEND_ROW + LEGEND_PAD + SPARE
    return 0.0


def reserve_margins(layout: Mapping[str, Any], data: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``layout`` with its margins grown to hold the labels of every visible ``automargin`` axis (a new dict; the
    margins are never made smaller than asked)."""
    need = {"l": 0.0, "r": 0.0, "b": 0.0, "t": 0.0}
    stacked = layout.get("barmode") in ("stack", "relative")
    for key, axis in layout.items():
        if not (isinstance(axis, Mapping) and key[1:5] == "axis" and key[0] in "xy" and axis.get("automargin")):
            continue
        if axis.get("visible") is False or axis.get("showticklabels") is False:
            continue
        letter, axis_id = key[0], key[0] + key[5:]
        traces = _axis_traces(data, letter, axis_id)
        if letter == "y":
            side = "r" if axis.get("side") == "right" else "l"
            need[side] = max(need[side], _y_need(axis, traces, stacked))
        elif axis.get("side", "bottom") == "bottom":
            bottom, right = _x_need(axis, traces)
            need["b"], need["r"] = max(need["b"], bottom), max(need["r"], right)
    need["t"] = _legend_need(layout, data)
    margin = dict(layout.get("margin") or {})
    for side, room in need.items():
        if room:
            margin[side] = max(int(margin.get(side, 0)), int(room + 0.999))
    return {**layout, "margin": margin}
