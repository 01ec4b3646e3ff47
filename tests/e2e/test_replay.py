"""A replay run's page in a real headless chromium (issue 29 item 5): while the run is queued its progress bar polls
the status answer; when the worker finishes it, the page reloads by itself and draws the three Plotly charts and the
table per team (screenshot tests/artifacts/replay-run.png)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from planning import replay
from scheduling.models import PodGroup
from tests.e2e.conftest import charts_ready, login, shot
from tests.frontend import builders as b
from tests.scheduling.conftest import build_world

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DRAWN = """() => Array.from(document.querySelectorAll('.chart[data-figure]'))
  .filter(el => el.querySelector('.main-svg, .chart-note')).map(el => el.dataset.figure).sort()"""


def test_the_run_page_follows_the_run_and_then_draws_its_charts(site: str, page: Any, monkeypatch: Any) -> None:
    build_world()
    PodGroup.objects.update(created=timezone.now() - timedelta(minutes=30))
    boss = b.user("boss", staff=True)
    monkeypatch.setattr(replay, "send", lambda pk: None)  # the test plays the worker
    no_nodes = [{"op": "remove", "kind": "node", "name": n} for n in ("n1", "n2", "n3")]
    run = replay.start(boss, no_nodes, window="1h", cluster="c1", summary="remove n1, n2 and n3")
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{site}/replays/{run.pk}/")
    assert page.locator("#replay-progress").get_attribute("value") == "0"
    assert page.locator("#replay-state").inner_text() == "queued"
    assert replay.execute(run.pk) == "done"
    page.wait_for_selector("#replay-table", timeout=20_000)  # the poll saw "done" and reloaded the page
    charts_ready(page)
    assert page.evaluate(DRAWN) == ["replay_borrow", "replay_utilisation", "replay_waits"]
    assert page.locator("#replay-progress").count() == 0 and page.locator("#replay-cancel").count() == 0
    team_a = page.locator("#replay-table tbody tr", has_text="team-a").first.inner_text()
    assert "1 → 0" in team_a  # started as it happened → with the changes
    shot(page, "replay-run")
    assert page.problems == []
