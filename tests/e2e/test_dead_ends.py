"""No dead ends in a real chromium (issue 30 item 7): the sunburst of a single-child chain, the navigation and the
overview's legend at 1280 px, and no request leaving the server from any page or the API docs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import charts_ready, login, shot
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHAIN = ("chain-a", "chain-b", "chain-c", "chain-d")

DRAWN = """() => {
  const gd = document.querySelector('[data-figure="tree"]');
  return {ids: Array.from(gd.data[0].ids), values: Array.from(gd.data[0].values),
          slices: gd.querySelectorAll('g.slice').length};
}"""


def single_child_chain() -> None:
    """root > chain-a (32 cores) > chain-b (28) > chain-c > chain-d, each the only child of its parent, the last two
    unlimited and claiming nothing (a sliver of chain-b's sector, then all of it), beside ``other``."""
    b.node("n1", cpu="64", memory="256Gi")
    b.queue("chain-a", "root", capability={"cpu": "32"})
    b.queue("chain-b", "chain-a", capability={"cpu": "28"})
    b.queue("chain-c", "chain-b")
    b.queue("chain-d", "chain-c")
    b.queue("other", "root", capability={"cpu": "16"})


# the whole tree and each depth of the chain, each figure style once (tests/frontend/test_figures.py checks the sizes
# of every level without a browser)
@pytest.mark.parametrize(("style", "root"), [("sunburst", ""), ("sunburst", "chain-c"), ("icicle", "chain-b")])
def test_zooming_into_a_single_child_chain_draws_every_level(site: str, page: Any, root: str, style: str) -> None:
    single_child_chain()
    b.user("boss", staff=True)
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/trees/queues/?style={style}" + (f"&root={root}" if root else ""))
    charts_ready(page)
    drawn = page.evaluate(DRAWN)
    expected = CHAIN[CHAIN.index(root) :] if root else ("root", *CHAIN)
    assert all(n in drawn["ids"] for n in expected), drawn
    assert drawn["slices"] >= len(expected), drawn  # a sector for every level, not an empty chart
    shot(page, f"dead-ends-chain-{style}-{root or 'whole'}")
    if root == "chain-c":  # the node page's subtree figure: the same sectors
        page.goto(f"{site}/queues/chain-c/")
        charts_ready(page)
        subtree = page.evaluate(DRAWN.replace('"tree"', '"subtree"'))
        assert subtree["ids"] == ["chain-c", "chain-d"] and subtree["slices"] == 2, subtree
    assert page.problems == []


# -- the header and the overview at 1280 px ---------------------------------------------------------------------

BOXES = """() => {
  const box = e => { const b = e.getBoundingClientRect(); return {l: b.left, t: b.top, r: b.right, b: b.bottom}; };
  const hit = (a, b) => a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
  const links = Array.from(document.querySelectorAll('nav.main a')).map(box);
  const nav = box(document.querySelector('nav.main'));
  const others = ['.cluster-switch', '.userbox', '.brand'].map(s => document.querySelector(s)).filter(Boolean).map(box);
  const overlaps = [];
  document.querySelectorAll('.js-plotly-plot').forEach(gd => {
    const legend = gd.querySelector('g.legend');
    if (!legend) return;
    const lb = box(legend);
    gd.querySelectorAll('.annotation-text, .gtitle, .xtitle, .ytitle').forEach(label => {
      const b = box(label);
      if (b.r > b.l && hit(lb, b)) overlaps.push(`${gd.dataset.figure}: "${label.textContent}" and the legend`);
    });
  });
  return {tops: [...new Set(links.map(l => Math.round(l.t)))], count: links.length,
          navHits: others.filter(o => hit(nav, o)).length, overlaps,
          capacityLabels: Array.from(document.querySelectorAll('[data-figure="capacity"] .annotation-text')).map(a => a.textContent),
          pageWidth: document.documentElement.scrollWidth};
}"""


def busy_two_clusters() -> None:
    """The lending example with jobs asking more than the cluster has (the capacity figure's 100 % line and its
    "cluster" label), and a second cluster (the header's cluster switcher)."""
    b.lending()
    b.job("x-ns", "huge", "xq", 4, {"cpu": "100"}, group_name="x")
    b.cluster("second")
    b.user("boss", staff=True)


@pytest.mark.parametrize("width", [1280, 1440, 1920])
def test_the_navigation_is_one_row_and_no_label_overlaps_a_legend(site: str, page: Any, width: int) -> None:
    busy_two_clusters()
    page.set_viewport_size({"width": width, "height": 900})
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/overview/")
    charts_ready(page)
    boxes = page.evaluate(BOXES)
    assert boxes["count"] == 11 and len(boxes["tops"]) == 1, boxes  # every link of an admin's menu, one row
    assert boxes["navHits"] == 0, boxes  # the switcher and the user box are beside or under it, never on it
    assert boxes["capacityLabels"] == ["cluster"], boxes  # the 100 % line is labelled …
    assert boxes["overlaps"] == [], boxes  # … and no label of a figure overlaps its legend
    assert boxes["pageWidth"] <= width, boxes
    shot(page, f"dead-ends-overview-{width}")
    assert page.problems == []


# -- nothing is fetched from another host -----------------------------------------------------------------------

# one page of each kind of assets (the base template and its styles; Plotly's figures; the editor's forms; the error
# template; DRF's browsable API; Swagger UI; ReDoc): every other page of the dashboard loads a subset of these
PAGES = (
    "/overview/",
    "/trees/quotas/?style=icicle",
    "/jobs/x-ns/train/",
    "/edit/queues/xq/",
    "/no/such/page/",
    "/api/v1/",
    "/api/docs/",
    "/api/redoc/",
)
DOCS_READY = {
    "/api/docs/": "#swagger-ui .opblock",  # Swagger UI drew the operations from the schema
    "/api/redoc/": "#redoc-container .api-content h1",  # ReDoc drew the schema
}


def test_no_page_asks_anything_of_another_host(site: str, page: Any, context: Any) -> None:
    """Every page, the API's browsable root and the API docs (Swagger UI, ReDoc) load their scripts, styles, fonts
    and images from this server only: a request to any other host fails the test (ReDoc's web fonts and logo came
    from the internet)."""
    from urllib.parse import urlsplit

    b.lending()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.user("boss", staff=True, teams=["x-team"])
    ours = urlsplit(site).netloc
    elsewhere: list[str] = []

    def note(request: Any) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("data", "blob", "about") and parts.netloc != ours:
            elsewhere.append(f"{page.url} -> {request.url}")

    context.on("request", note)
    login(page, site, "boss", b.PASSWORD)
    for path in PAGES:
        page.goto(site + path)
        page.wait_for_load_state("networkidle")
        if path in DOCS_READY:
            page.wait_for_selector(DOCS_READY[path])  # the page's timeout: FAIRWAY_E2E_TIMEOUT_MS
            page.wait_for_load_state("networkidle")
            # drawn with the system's fonts (a page waiting for web fonts cannot be shot); its first screen: the whole
            # reference is tens of thousands of pixels tall, more than a busy machine rendered within 30 s
            shot(page, "dead-ends-" + path.strip("/").replace("/", "-"), full_page=False)
    assert elsewhere == []
    assert [p for p in page.problems if "404" not in p] == []  # the missing pages answer 404 on purpose
