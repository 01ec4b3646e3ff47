"""The margins reserved for the axes' labels (frontend/margins.py): never smaller than asked, as wide as the labels
the server knows, two lines for a date axis, stacked bars up to their sum, room for a legend above the plot."""

from __future__ import annotations

from datetime import UTC, datetime

from frontend.margins import MINUS, colorbar_room, numeric_tick_width, reserve_margins, text_width


def _axis(**extra: object) -> dict[str, object]:
    return {"automargin": True, **extra}


def test_wider_text_is_estimated_wider() -> None:
    assert text_width("") == 0
    assert text_width("ml-research") > text_width("nlp") > 0
    assert text_width("WWW") > text_width("iii")
    assert text_width("nvidia.com/gpu (GPUs)") >= 149  # what Chromium draws on this machine (13 px)


def test_a_category_axis_takes_its_longest_label() -> None:
    data = [{"type": "bar", "orientation": "h", "y": ["nlp", "ml-research (weight 2)"], "x": [1, 2]}]
    layout = reserve_margins({"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "yaxis": _axis()}, data)
    assert layout["margin"]["l"] >= text_width("ml-research (weight 2)") + 13
    assert layout["margin"]["t"] == 40  # no legend for one trace


def test_margins_are_never_made_smaller_and_axes_without_automargin_ask_nothing() -> None:
    data = [{"type": "bar", "orientation": "h", "y": ["a"], "x": [1]}]
    assert reserve_margins({"margin": {"l": 500}, "yaxis": _axis()}, data)["margin"]["l"] == 500
    assert reserve_margins({"margin": {"l": 10}, "yaxis": {"automargin": False}}, data)["margin"] == {"l": 10}
    assert reserve_margins({"margin": {"l": 10}, "yaxis": _axis(visible=False)}, data)["margin"] == {"l": 10}


def test_a_date_axis_takes_two_lines_and_a_title_one_more() -> None:
    times = [datetime(2026, 11, 29, 21, m, tzinfo=UTC).isoformat() for m in range(3)]
    data = [{"type": "scatter", "x": times, "y": [1, 2, 3]}]
    plain = reserve_margins({"xaxis": _axis()}, [{"type": "scatter", "x": [1, 2], "y": [1, 2]}])["margin"]["b"]
    dated = reserve_margins({"xaxis": _axis()}, data)["margin"]["b"]
    titled = reserve_margins({"xaxis": _axis(title={"text": "when"})}, data)["margin"]["b"]
    assert plain < dated < titled


def test_stacked_bars_reserve_for_their_sum_and_a_right_axis_goes_right() -> None:
    bars = [{"type": "bar", "x": ["a"], "y": [600]}, {"type": "bar", "x": ["a"], "y": [600]}]
    alone = reserve_margins({"yaxis": _axis()}, bars)["margin"]["l"]
    stacked = reserve_margins({"barmode": "stack", "yaxis": _axis()}, bars)["margin"]["l"]
    assert stacked > alone  # 1,200 has a digit more than 600
    right = reserve_margins({"yaxis2": _axis(side="right")}, [{"type": "scatter", "yaxis": "y2", "y": [5]}])
    assert right["margin"]["r"] > 0 and "l" not in right["margin"]


def test_negative_and_small_ranges_widen_the_ticks() -> None:
    assert numeric_tick_width([-20, 20]) > numeric_tick_width([0, 20])
    # plotly draws an all-zero axis from -1 to 1 by halves
    assert numeric_tick_width([0, 0]) >= text_width(MINUS + "0.5")


def test_a_legend_above_the_plot_pushes_the_top() -> None:
    data = [{"type": "bar", "x": [1], "y": [1]}, {"type": "bar", "x": [1], "y": [2]}]
    legend = {"orientation": "h", "y": 1.02, "yanchor": "bottom"}
    layout = reserve_margins({"height": 300, "margin": {"t": 10}, "legend": legend}, data)
    assert layout["margin"]["t"] >= 30 + 6


def test_the_colorbar_room_holds_its_labels() -> None:
    assert colorbar_room(["lends ▼", "balanced", "borrows ▲"], 12) >= 110  # what it pushed to in Chromium
