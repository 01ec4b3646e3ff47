"""The fairness audit in a real headless chromium: an admin reads who is starved, who borrows, who lends and which
guarantee sat idle on one screen, and turns the suggestion into a what-if (screenshot tests/artifacts/audit-*.png)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_audit import _sample, starving
from tests.e2e.conftest import login, shot
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_an_admin_reads_the_audit_and_tries_freeing_an_idle_guarantee(site: str, page: Any) -> None:
    starving()
    _sample("quota", "a", 72, 10_000, 50_000)
    _sample("quota", "a", 24, 20_000, 50_000)
    b.user("boss", staff=True)
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{site}/")
    page.get_by_role("link", name="Audit").click()
    page.wait_for_url("**/audit/")
    starved = page.locator('[data-testid="audit-starved"]')
    assert "a" in starved.locator("tbody th").first.inner_text()
    assert "▲ 40 cores" in starved.inner_text()
    assert "▼ 40 cores" in page.locator('[data-testid="audit-lending"]').inner_text()
    waits = page.locator('[data-testid="audit-waits"]')  # the starving() jobs were submitted as the test began
    assert "Waiting to start" in waits.inner_text() and "qa" in waits.locator("tbody").inner_text()
    for section in ("audit-starved", "audit-lending", "audit-idle", "audit-usage", "audit-waits"):
        wrap = page.locator(f'[data-testid="{section}"] .table-wrap')
        assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), section  # fits 1280 px
    shot(page, "audit-1280")
    page.click('[data-testid="stage-a-cpu"]')
    page.wait_for_url("**/whatif/")
    assert "min cpu=20" in page.content()
    shot(page, "audit-whatif")
    assert page.problems == []
