"""Reservations in a real headless chromium: a team lead opens the team page and the queue's page and sees what is
allocated, what admitted jobs reserve and what pipelined pods request, in the bar (with its legend and hover text)
and in the table, beside the waiting job's reason whose available amount they add up to."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import charts_ready, login, shot
from tests.frontend import builders as b
from tests.frontend.reservations import GPU, MINUS, engineering

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEGMENTS = """(key) => {
  const gd = document.querySelector(`[data-figure="${key}"]`);
  if (!gd || !gd.data) return null;
  return gd.data.filter(t => t.name && t.showlegend !== false || (t.base && t.base.length))
    .map(t => ({name: t.name, x: Array.from(t.x || []), base: t.base ? Array.from(t.base) : null}));
}"""


def test_a_team_lead_sees_allocated_reserved_and_pipelined_apart(site: str, page: Any) -> None:
    engineering()
    b.user("eng-lead", teams=["eng-team"])
    login(page, site, "eng-lead", b.PASSWORD)
    page.goto(f"{site}/team/eng-team/")
    charts_ready(page)
    cell = page.get_by_test_id(f"queue-engineering-reserved-{GPU}")
    assert cell.inner_text().split() == ["18", "GPUs", "+3", "pipelined"]
    assert cell.get_attribute("title") == "18 GPUs by 2 admitted jobs; pipelined: 3 GPUs in 1 pod"
    note = page.get_by_test_id("holding-queue-engineering").inner_text()
    assert (
        note
        == "Beside what is allocated: reserved by 2 admitted jobs not fully placed yet; 1 pipelined pod waiting for resources being freed."
    )
    assert page.locator(".legendtext", has_text="reserved by admitted jobs").first.is_visible()
    assert page.locator(".legendtext", has_text="pipelined pods").first.is_visible()
    shot(page, "reserve-01-team-1440")

    page.goto(f"{site}/queues/engineering/?resource={GPU}")
    charts_ready(page)
    assert page.get_by_test_id(f"reserved-{GPU}").inner_text() == "18 GPUs by 2 admitted jobs"
    assert page.get_by_test_id(f"pipelined-{GPU}").inner_text() == "3 GPUs in 1 pod"
    body = page.locator("body").inner_text()
    assert f"available 2 = 32 capability {MINUS} 12 allocated {MINUS} 18 reserved by 2 admitted jobs" in body
    bars = page.evaluate(SEGMENTS, "resources")
    stacked = {s["name"]: s for s in bars if s["base"]}
    assert stacked["reserved by admitted jobs"]["x"] and stacked["pipelined pods"]["x"]
    # the hover text of the reserved segment, in people's units (the pointer over each bar in turn)
    segments = page.locator('[data-figure="resources"] .barlayer .point path')
    hovered = ""
    for i in range(segments.count()):
        box = segments.nth(i).bounding_box()
        if not box or box["width"] < 2:
            continue
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_timeout(50)
        label = page.locator('[data-figure="resources"] .hoverlayer').text_content() or ""
        if "reserved by" in label:
            hovered = label
            break
    assert "reserved by 2 admitted jobs" in hovered, hovered
    shot(page, "reserve-02-queue-hover-1440")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.mouse.move(0, 0)
    shot(page, "reserve-03-queue-1280")
    assert not page.problems
