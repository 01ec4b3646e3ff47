"""The nodes pages, the cluster switcher, the dark theme and the admin's team cards in a real headless chromium,
with screenshots (tests/artifacts/pages-*.png) in both themes."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling.models import Cluster, Node
from tests.e2e.conftest import charts_ready, leave, login, shot
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _world(gpus: bool = True) -> None:
    b.lending()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.team("y-team", queues=["yq"], groups=["y"])
    b.user("boss", staff=True)
    for i in range(3 if gpus else 0):
        b.node(f"gpu-{i}", cpu="64", memory="512Gi", **{"nvidia.com/gpu": "8"})
    Node.objects.filter(name="gpu-2").update(ready=False, taints=[{"key": "gpu", "effect": "NoSchedule"}])


def test_nodes_page_search_and_a_node(site: str, page: Any) -> None:
    _world()
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{site}/nodes/")
    row = page.locator('[data-testid="node-n1"]')
    assert "90 of 100 cores" in row.inner_text()
    assert page.locator('[data-testid="node-gpu-2"] .badge').inner_text() == "NotReady"
    wrap = page.locator(".nodes-table").locator("xpath=..")
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # no sideways scrolling at 1280 px
    shot(page, "pages-nodes-1280")
    page.fill("#node-q", "gpu")
    page.press("#node-q", "Enter")
    page.wait_for_url("**/nodes/?q=gpu*")
    assert page.locator(".nodes-table tbody tr").count() == 3
    page.get_by_role("link", name="Last heartbeat").click()
    page.wait_for_url("**sort=heartbeat*")
    page.click('[data-testid="node-gpu-1"] a')
    page.wait_for_url("**/nodes/gpu-1/")
    assert page.get_by_role("heading", name="Node gpu-1").is_visible()
    shot(page, "pages-node-detail")
    page.goto(f"{site}/nodes/n1/")
    assert page.locator("tbody tr").count() == 9 + 2  # its 9 pods and its 2 resources
    assert page.problems == []


def test_the_cluster_switcher_moves_every_page(site: str, page: Any) -> None:
    _world()
    west = Cluster.objects.create(name="west")
    Node.objects.create(cluster=west, name="west-1", allocatable=b.rl({"cpu": "32", "memory": "128Gi"}))
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/overview/")
    charts_ready(page)
    switch = page.locator("#cluster-pick")
    assert switch.is_visible() and switch.input_value() == "default"
    switch.select_option("west")
    page.wait_for_url("**/overview/?cluster=west")
    charts_ready(page)
    shot(page, "pages-switcher-west")
    page.get_by_role("link", name="Nodes").click()
    page.wait_for_url("**/nodes/")
    assert page.locator("#cluster-pick").input_value() == "west"
    assert [t.strip() for t in page.locator("td.name a").all_inner_texts()] == ["west-1"]
    assert page.problems == []


def test_dark_theme_follows_the_browser(site: str, browser: Any) -> None:
    _world()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    tab = ctx.new_page()
    tab.set_default_timeout(15_000)
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        login(tab, site, "boss", b.PASSWORD)
        tab.goto(f"{site}/overview/")
        charts_ready(tab)
        background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)"
        ink = tab.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--ink').trim()")
        font = tab.evaluate("document.querySelector('[data-figure=\"capacity\"]').layout.font.color")
        assert font == ink == "#e6edf3"  # the figures take the theme's ink
        grid = tab.evaluate("document.querySelector('[data-figure=\"capacity\"]').layout.xaxis.gridcolor")
        assert grid == "#2a313a"
        shot(tab, "pages-dark-overview")
        for path, name in (("/trees/quotas/", "pages-dark-quota-trees"), ("/queues/xq/", "pages-dark-queue")):
            tab.goto(site + path)
            charts_ready(tab)
            shot(tab, name)
        tab.goto(f"{site}/nodes/")
        shot(tab, "pages-dark-nodes")
        tab.goto(f"{site}/team/")
        shot(tab, "pages-dark-teams")
        # switching the browser to light redraws the figures in the light theme
        tab.goto(f"{site}/overview/")
        charts_ready(tab)
        tab.emulate_media(color_scheme="light")
        tab.wait_for_function("document.querySelector('[data-figure=\"capacity\"]').layout.font.color === '#1f2328'")
        assert problems == []
    finally:
        leave(ctx)
        ctx.close()


def test_team_cards_show_every_column_at_1440(site: str, page: Any) -> None:
    """Five columns (resource, deserved, using, borrowing, lending) with a GPU row fit each card at 1440 px: the
    lending column is not cut off behind a sideways scroll."""
    _world(gpus=True)
    # GPU rows with borrowing and lending on both cards: the widest a card's table gets
    b.job("x-ns", "gpu-train", "xq", 2, {"cpu": "1", "nvidia.com/gpu": "8"}, running=2, on="gpu-0", group_name="x")
    b.job("y-ns", "gpu-serve", "yq", 1, {"cpu": "1", "nvidia.com/gpu": "2"}, running=1, on="gpu-1", group_name="y")
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{site}/team/")
    assert "nvidia.com/gpu" in page.locator(".team-cards").inner_text()
    wraps = page.locator(".team-card .table-wrap")
    assert wraps.count() >= 2
    for i in range(wraps.count()):
        assert wraps.nth(i).evaluate("el => el.scrollWidth <= el.clientWidth + 1"), i
    shot(page, "pages-team-cards-1440")


def test_admin_team_cards_and_live_pause(site: str, page: Any) -> None:
    _world(gpus=False)
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/team/")
    cards = page.locator(".team-card")
    assert cards.count() == 2
    assert page.locator('[data-testid="team-waiting-x-team"]').inner_text() == "1 waiting job"
    assert "▼ 30 cores" in page.locator('[data-testid="team-card-y-team"]').inner_text()
    shot(page, "pages-team-cards")
    page.locator('[data-testid="team-card-x-team"] h2 a').click()
    page.wait_for_url("**/team/x-team/")
    charts_ready(page)
    assert page.locator("#live-state").inner_text() == "Live, every 1 s"
    page.click("#live-pause")
    assert page.locator("#live-state").inner_text() == "Paused"
    page.click("#live-pause")
    assert page.locator("#live-state").inner_text() == "Live, every 1 s"
    assert page.problems == []
