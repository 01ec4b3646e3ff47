"""The tree pages stay readable in a real chromium with a six-level branch: no horizontal overflow of the tree
table at 1280 and 1440 px, the deep levels collapsed and reached by clicking into a subtree (and back up), and
"Find a node" outlining the match on the chart."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import charts_ready, login, shot
from tests.frontend import builders as b
from tests.frontend.deep_tree import BRANCH, LEAF, six_level_branch

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OVERFLOW = """() => {
  const wrap = document.getElementById('tree-table-wrap');
  const loans = wrap.querySelector('th.loans').getBoundingClientRect();
  const box = wrap.getBoundingClientRect();
  return {scroll: wrap.scrollWidth, client: wrap.clientWidth, loansRight: loans.right, boxRight: box.right,
          page: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth};
}"""

TRACE = """() => {
  const gd = document.querySelector('[data-figure="tree"]');
  const t = gd.data[0];
  return {ids: Array.from(t.ids), width: Array.from(t.marker.line.width), maxdepth: t.maxdepth,
          meta: gd.layout.meta};
}"""


def _click_sector(page: Any, name: str) -> None:
    """Fire the figure's own click handler as a click on the sector of ``name`` does."""
    page.evaluate(
        """(name) => {
      const gd = document.querySelector('[data-figure="tree"]');
      const t = gd.data[0];
      const i = t.ids.indexOf(name);
      gd.emit('plotly_sunburstclick', {points: [{customdata: t.customdata[i], id: name, label: t.labels[i]}]});
    }""",
        name,
    )


@pytest.mark.parametrize("width,height", [(1280, 800), (1440, 900)])
def test_a_six_level_branch_fits_and_zooms(site: str, page: Any, settings: Any, width: int, height: int) -> None:
    six_level_branch(settings)
    b.user("boss", staff=True)
    page.set_viewport_size({"width": width, "height": height})
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/trees/queues/")
    charts_ready(page)
    box = page.evaluate(OVERFLOW)
    assert box["scroll"] <= box["client"], box  # the table needs no horizontal scrolling
    assert box["loansRight"] <= box["boxRight"] + 1, box  # the Borrows / lends column is in view
    assert box["page"] <= box["viewport"], box
    trace = page.evaluate(TRACE)
    assert trace["maxdepth"] == 4 and LEAF in trace["ids"]
    chart = page.locator("#tree-chart").bounding_box()
    assert chart is not None and chart["width"] > 400 and chart["height"] > 400  # the chart keeps its card
    shot(page, f"trees-01-six-levels-{width}")
    if width != 1280:
        return
    # a click on a sector with children zooms into its subtree; the breadcrumb and the centre go back up
    _click_sector(page, BRANCH[1])
    page.wait_for_url(f"**/trees/queues/?root={BRANCH[1]}")
    charts_ready(page)
    zoomed = page.evaluate(TRACE)
    assert zoomed["ids"][0] == BRANCH[1] and "research" not in zoomed["ids"] and LEAF in zoomed["ids"]
    assert page.locator("nav.tree-crumbs").inner_text().startswith("whole tree › root › research ›")
    shot(page, "trees-02-zoomed")
    _click_sector(page, BRANCH[1])  # the centre: one level up
    page.wait_for_url("**/trees/queues/?root=research")
    charts_ready(page)
    page.locator("nav.tree-crumbs a", has_text="whole tree").click()
    page.wait_for_load_state()
    charts_ready(page)
    assert page.evaluate(TRACE)["meta"]["root"] == ""
    _click_sector(page, "platform-batch")  # a leaf opens its page
    page.wait_for_url("**/queues/platform-batch/")
    assert page.problems == []


def test_find_a_node_outlines_the_match_on_the_chart(site: str, page: Any, settings: Any) -> None:
    six_level_branch(settings)
    b.user("boss", staff=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/trees/queues/")
    charts_ready(page)
    page.fill("#pick-q", "platform-b")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=platform-b**")
    charts_ready(page)
    trace = page.evaluate(TRACE)
    width = dict(zip(trace["ids"], trace["width"], strict=True))
    assert width["platform-batch"] == 4 and width["platform"] == 2 and width["research"] == 1
    assert trace["meta"]["highlight"] == ["platform-batch"]
    assert page.locator("#tree-found").inner_text() == "1 node matching “platform-b” outlined in blue"
    shot(page, "trees-03-find-a-node")
    # a match deeper than the chart draws: the chart starts at its parent and outlines it
    page.fill("#pick-q", "very-long-name")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=very-long-name**")
    charts_ready(page)
    trace = page.evaluate(TRACE)
    assert trace["ids"][0] == BRANCH[-2] and trace["meta"]["highlight"] == [LEAF]
    shot(page, "trees-04-find-a-deep-node")
    assert page.problems == []


def test_the_new_queue_form_shows_every_problem_at_once_then_a_warning(site: str, page: Any) -> None:
    b.node("n1", cpu="1024", memory="4096Gi")
    b.queue("research", deserved={"cpu": "600"}, capability={"cpu": "800"})
    b.user("boss", staff=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/edit/new/queue/")
    page.fill("#id_name", "Bad_Name")
    page.fill("#id_weight", "0")  # a rule: 1..65535
    page.fill("#id_priority", "-1")  # the form: at least 0
    page.fill("#id_capability__cpu", "abc")
    page.fill("#id_capability__memory", "1Gi")
    page.fill("#id_deserved__memory", "2Gi")
    page.fill("#id_guarantee__memory", "4Gi")
    page.click("#save")
    page.wait_for_selector("#form-errors")
    summary = page.locator("#form-errors").inner_text()
    # five inputs, deserved memory twice: six messages, each counted
    assert summary.startswith("Not saved: 6 problems."), summary
    for field in ("name", "weight", "priority", "capability__cpu", "deserved__memory"):
        assert page.locator(f"#id_{field}-errors").is_visible(), field
    assert "must be <= capability memory 1Gi" in page.locator("#id_deserved__memory-errors").inner_text()
    shot(page, "trees-05-all-errors-at-once")
    # fixed: saved, with the warning that the top-level deserved now exceeds the cluster
    page.fill("#id_name", "serving")
    page.fill("#id_weight", "1")
    page.fill("#id_priority", "0")
    for cell in ("capability__cpu", "capability__memory", "deserved__memory", "guarantee__memory"):
        page.fill(f"#id_{cell}", "")
    page.fill("#id_deserved__cpu", "475")
    page.click("#save")
    page.wait_for_url("**/queues/serving/")
    warning = page.locator(".messages .warning").first.inner_text()
    assert "the top-level queues' deserved cpu add up to 1075, more than the cluster's 1024" in warning
    shot(page, "trees-06-saved-with-a-warning")
    assert [p for p in page.problems if "status of 400" not in p] == []  # the refused form answers 400
