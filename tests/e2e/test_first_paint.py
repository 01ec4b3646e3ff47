"""First paint (issue 30 item 8) in a real headless chromium: every page that draws charts sets
``performance.mark('fairway:charts-ready')`` once the figures on screen are drawn (bench/bench_paint.py measures
up to it), draws the figures below the fold after that, and flags ``data-chart-ready`` when all are drawn, every
trace of the partial plotly.js bundle drawn as the type it was given, each figure drawn once (its margins hold its
labels)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import charts_ready, login
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Installed before the page's scripts: what was drawn, and what was on screen, at the moment of the mark.
AT_MARK = """
(() => {
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    if (name === "fairway:charts-ready") {
      window.__atMark = Array.from(document.querySelectorAll("[data-figure]")).map((el) => {
        const box = el.getBoundingClientRect();
        const source = document.getElementById("fig-" + el.dataset.figure);
        const layout = source ? JSON.parse(source.textContent).layout || {} : {};
        return {key: el.dataset.figure, drawn: Boolean(el.querySelector(".main-svg")),
                onScreen: box.width > 0 && box.bottom > 0 && box.top < window.innerHeight,
                hasBox: box.width > 0, height: Math.round(box.height), figureHeight: layout.height || null};
      });
    }
    return mark(name, options);
  };
})();
"""
MARKED = "() => performance.getEntriesByName('fairway:charts-ready').length === 1"
ALL_DRAWN = """() => Array.from(document.querySelectorAll("[data-figure]")).map((gd) => ({
  key: gd.dataset.figure,
  drawn: Boolean(gd.querySelector(".main-svg")),
  types: (gd.data || []).map((t) => t.type || "scatter"),
  drawnAs: (gd._fullData || []).map((t) => t.type),
  given: gd.layout.margin || {},
  used: gd._fullLayout._size,
}))"""
CHART_PAGES = ["/overview/", "/trees/queues/", "/trees/quotas/", "/queues/q1/", "/quotas/x/", "/team/x-team/"]


def world() -> None:
    b.lending()
    b.seed000_table2()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.user("boss", staff=True)


def test_every_chart_page_marks_when_the_figures_on_screen_are_drawn(site: str, page: Any) -> None:
    world()
    page.add_init_script(AT_MARK)
    login(page, site, "boss", b.PASSWORD)
    for path in CHART_PAGES:
        page.goto(site + path)
        page.wait_for_function(MARKED)
        at_mark = page.evaluate("window.__atMark")
        assert any(f["onScreen"] for f in at_mark), path
        assert [f["key"] for f in at_mark if f["onScreen"] and not f["drawn"]] == [], path
        charts_ready(page)
        figures = page.evaluate(ALL_DRAWN)
        assert figures and all(f["drawn"] for f in figures), (path, figures)
        for f in figures:  # a trace type missing from the partial bundle would be drawn as a scatter
            assert f["drawnAs"] == f["types"], (path, f)
        # drawn once: the margins the server reserved held every label, so plotly's automargin grew none of them
        # (it draws the whole figure again when it does; frontend/margins.py)
        grown = {
            f["key"]: {side: (f["given"].get(side), round(f["used"][side], 1)) for side in "lrtb"}
            for f in figures
            if any(f["used"][side] - f["given"].get(side, 0) > 1 for side in "lrtb")
        }
        assert grown == {}, (path, grown)
    assert page.problems == []


def test_every_figure_takes_its_height_before_it_is_drawn(site: str, page: Any) -> None:
    """At the mark, a figure not drawn yet already takes (at least: a grid row is as tall as its tallest figure)
    the height it will have: what is on screen is decided where the figures will be (the CSS's 160 px placeholder
    put figures below the fold on screen and drew them first), and nothing moves when they are drawn."""
    world()
    page.add_init_script(AT_MARK)
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 600})
    for path in ["/overview/", "/queues/q1/", "/quotas/x/"]:
        page.goto(site + path)
        page.wait_for_function(MARKED)
        at_mark = page.evaluate("window.__atMark")
        waiting = [f for f in at_mark if f["hasBox"] and not f["drawn"] and f["figureHeight"]]
        assert waiting, (path, at_mark)  # a figure below the fold at 1280 x 600
        assert [f["key"] for f in waiting if f["height"] < f["figureHeight"]] == [], (path, waiting)
        charts_ready(page)
    assert page.problems == []


def test_figures_below_the_fold_are_drawn_after_the_mark(site: str, page: Any) -> None:
    world()
    page.add_init_script(AT_MARK)
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 600})
    page.goto(f"{site}/queues/q1/")
    page.wait_for_function(MARKED)
    at_mark = {f["key"]: f for f in page.evaluate("window.__atMark")}
    assert at_mark["resources"]["onScreen"] and at_mark["resources"]["drawn"]
    assert not at_mark["namespaces"]["onScreen"] and not at_mark["namespaces"]["drawn"]
    charts_ready(page)  # the rest are drawn while the browser is idle, without scrolling
    assert all(f["drawn"] for f in page.evaluate(ALL_DRAWN))
    page.locator('[data-figure="namespaces"]').scroll_into_view_if_needed()
    assert page.locator('[data-figure="namespaces"] .main-svg').count() > 0
    assert page.problems == []
