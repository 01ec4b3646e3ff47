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
        return {key: el.dataset.figure, drawn: Boolean(el.querySelector(".main-svg, .chart-note")),
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
  drawn: Boolean(gd.querySelector(".main-svg, .chart-note")),
  note: gd.querySelector(".chart-note") ? gd.querySelector(".chart-note").textContent : null,
  types: (gd.data || []).map((t) => t.type || "scatter"),
  drawnAs: (gd._fullData || []).map((t) => t.type),
  given: (gd.layout && gd.layout.margin) || {},
  used: gd._fullLayout ? gd._fullLayout._size : {l: 0, r: 0, t: 0, b: 0},
}))"""
# A figure with nothing to draw but a sentence (figures._empty: layout.meta.note), by key.
NOTES = """() => Object.fromEntries(Array.from(document.querySelectorAll("[data-figure]")).map((el) => {
  const source = document.getElementById("fig-" + el.dataset.figure);
  const meta = source ? JSON.parse(source.textContent).layout.meta || {} : {};
  return [el.dataset.figure, meta.note || null];
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


def test_an_empty_figure_is_its_sentence_without_a_plotly_drawing(site: str, page: Any) -> None:
    """An empty figure (nobody borrows or lends, no session yet) is shown as its sentence, where plotly put its
    annotation, without drawing a plotly figure (as costly as a chart's) before the mark; a refresh that brings
    data draws the chart in its place."""
    world()
    page.add_init_script(AT_MARK)
    login(page, site, "boss", b.PASSWORD)
    page.goto(site + "/overview/")
    page.wait_for_function(MARKED)
    charts_ready(page)
    notes = {key: note for key, note in page.evaluate(NOTES).items() if note}
    assert notes, "the overview of this world has an empty figure (no session has run)"
    for f in page.evaluate(ALL_DRAWN):
        if f["key"] in notes:
            assert f["note"] == notes[f["key"]] and f["types"] == [], f
            assert page.locator(f'[data-figure="{f["key"]}"] .main-svg').count() == 0
        else:
            assert f["note"] is None and f["types"], f
    key, note = next(iter(notes.items()))
    box = page.evaluate(
        """(key) => { const el = document.querySelector(`[data-figure="${key}"] .chart-note`);
                      const s = getComputedStyle(el); return [el.getBoundingClientRect().height, s.paddingTop]; }""",
        key,
    )
    source = page.evaluate(f"JSON.parse(document.getElementById('fig-{key}').textContent).layout")
    assert box == [source["height"], f"{source['margin']['t']}px"]
    # a live refresh with data: the sentence goes, the chart is drawn (the builders' figure of a bar chart)
    page.evaluate(
        """(key) => window.FairwayCharts.redraw(document.querySelector(`[data-figure="${key}"]`),
             {data: [{type: "bar", x: ["a"], y: [1]}], layout: {height: 200}})""",
        key,
    )
    page.wait_for_selector(f'[data-figure="{key}"] .main-svg')
    assert page.locator(f'[data-figure="{key}"] .chart-note').count() == 0
    # and back to a sentence: plotly draws the empty figure as before (its annotation)
    page.evaluate(
        """(key) => { const el = document.querySelector(`[data-figure="${key}"]`);
                      return window.FairwayCharts.redraw(el, JSON.parse(document.getElementById("fig-" + key).textContent)); }""",
        key,
    )
    page.wait_for_selector(f'[data-figure="{key}"] .annotation-text')
    assert note in page.locator(f'[data-figure="{key}"] .annotation-text').text_content()
    assert page.problems == []
