"""The dashboard in a real headless chromium: log in, a team's runtime quota and loans, an admin's weight
change moving a chart live, inline rule errors, what-if before apply, and a stale edit refused."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace, Queue
from tests.e2e.conftest import charts_ready, login, shot
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NAMESPACE_DESERVED = """() => {
  const gd = document.querySelector('[data-figure="namespaces"]');
  const trace = gd && gd.data && gd.data.find(t => t.name === 'deserved' && (t.xaxis || 'x') === 'x');
  return trace ? Array.from(trace.x) : null;
}"""


def admin_user() -> Any:
    return b.user("boss", staff=True)


def test_login_and_every_page_renders(site: str, page: Any) -> None:
    b.lending()
    b.seed000_table2()
    admin_user()
    page.goto(f"{site}/overview/")
    assert "/accounts/login/" in page.url
    login(page, site, "boss", "wrong")
    assert page.get_by_role("alert").inner_text().startswith("Your username and password did not match")
    shot(page, "01-login-error")
    login(page, site, "boss", b.PASSWORD)
    assert page.url == f"{site}/"  # an admin starts on the overview
    charts_ready(page)
    assert page.get_by_role("heading", name="Overview").is_visible()
    shot(page, "02-overview")
    for path, name in (
        ("/trees/queues/", "03-queue-tree"),
        ("/trees/quotas/", "04-quota-trees"),
        ("/trees/quotas/?style=icicle", "05-quota-trees-icicle"),
        ("/quotas/x/", "06-quota-group-x"),
        ("/queues/q1/", "07-queue-q1"),
    ):
        page.goto(site + path)
        charts_ready(page)
        assert page.locator(".main-svg").count() > 0, path
        shot(page, name)
    for path, name in (("/edit/", "08-editor"), ("/edit/queues/q1/", "09-edit-queue"), ("/history/", "10-history")):
        page.goto(site + path)
        shot(page, name)
    assert page.problems == []


def test_clicking_a_sector_opens_the_node(site: str, page: Any) -> None:
    b.lending()
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/trees/quotas/")
    charts_ready(page)
    # the figure's own click handler, as a click on the sector for "x" fires it
    page.evaluate(
        """() => {
      const gd = document.querySelector('[data-figure="tree"]');
      const trace = gd.data[0];
      const i = trace.ids.indexOf('x');
      gd.emit('plotly_sunburstclick', {points: [{customdata: trace.customdata[i], id: 'x'}]});
    }"""
    )
    page.wait_for_url("**/quotas/x/")
    assert page.get_by_role("heading", name="Quota group x").is_visible()


def test_keyboard_reaches_the_controls_and_every_input_has_a_label(site: str, page: Any) -> None:
    b.seed000_table2()
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/trees/queues/")
    charts_ready(page)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    focused = set()
    for _ in range(25):
        page.keyboard.press("Tab")
        focused.add(page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()"))
    assert {"pick-resource", "pick-size", "pick-style"} <= focused
    for path in ("/edit/", "/edit/queues/q1/", "/trees/queues/", "/queues/q1/"):
        page.goto(site + path)
        unlabeled = page.evaluate(
            """() => Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
              .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
              .map(el => el.name)"""
        )
        assert unlabeled == [], (path, unlabeled)


def test_a_team_member_sees_their_runtime_quota_and_what_they_borrow(site: str, page: Any) -> None:
    b.lending()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.user("lead-x", teams=["x-team"])
    login(page, site, "lead-x", b.PASSWORD)
    assert page.url == f"{site}/" and page.get_by_role("heading", name="Team x-team").is_visible()
    charts_ready(page)
    runtime = page.get_by_test_id("quota-x-entitled-cpu")
    assert runtime.inner_text() == "90 cores"
    section = page.get_by_test_id("team-quota-x")
    assert "▲ borrows 30 cores" in section.inner_text()
    assert "≈ 30 cores cpu from y" in page.get_by_test_id("borrows-x").inner_text()
    jobs = page.locator("#frag-jobs").inner_text()
    assert "eval" in jobs and "NotEnoughResources" in jobs and "requested 20, available 10" in jobs
    shot(page, "11-team-x")
    # and nothing of the other team
    page.goto(f"{site}/quotas/y/")
    assert "Not found" in page.content()
    assert [p for p in page.problems if "404" not in p] == []


def test_the_team_page_warns_before_recycling(site: str, page: Any) -> None:
    """y asks for its min back: x (runtime 50) uses 80 and a recycling pass recorded it over 20 s ago; the team
    page says what recycling will take, and keeps saying it after a live refresh of its sections."""
    from datetime import timedelta

    from django.utils import timezone

    from scheduling.models import Cluster, QuotaOverState

    b.lending()
    b.job("y-ns", "burst", "yq", 4, {"cpu": "10"}, group_name="y")
    cluster = Cluster.objects.get(name="default")
    cluster.scheduler_policy = (
        'actions: "enqueue, allocate, backfill, reclaim"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
        "- plugins:\n  - name: predicates\n  - name: elasticquota\n"
        "    arguments: {monitorAllQuotas: true, delayEvictTime: 120s}\n"
    )
    cluster.save()
    QuotaOverState.objects.create(cluster=cluster, name="x", over_since=timezone.now() - timedelta(seconds=20))
    b.team("x-team", queues=["xq"], groups=["x"])
    b.user("lead-x", teams=["x-team"])
    login(page, site, "lead-x", b.PASSWORD)
    charts_ready(page)
    warning = page.get_by_test_id("recycle-warning-x")
    assert warning.is_visible()
    text = warning.inner_text()
    assert text.startswith("3 pods will be recycled in about 1 min ")  # 1 min 40 s less the seconds gone since
    assert "unless usage falls to 50 cores" in text and "uses 80 cores, above its runtime 50 cores" in text
    shot(page, "11b-team-x-recycling")
    with page.expect_response(lambda r: "live=1" in r.url):  # the live refresh redraws the sections
        pass
    assert page.get_by_test_id("recycle-warning-x").is_visible()


def test_an_admin_changes_a_weight_and_the_chart_follows(site: str, context: Any, page: Any) -> None:
    """Seed 000, table 2: q1 deserves 4 cpu, ns1 (weight 3) gets 3 and ns2 (weight 1) 1. With ns1's weight at 1
    they get 2 and 2: the open queue page redraws its chart on its own."""
    b.seed000_table2()
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/queues/q1/")
    charts_ready(page)
    assert page.evaluate(NAMESPACE_DESERVED) == [3, 1]
    assert page.get_by_test_id("ns-deserved-ns1").inner_text() == "3 cores"
    shot(page, "12-queue-q1-before")
    editor = context.new_page()
    editor.goto(f"{site}/edit/")
    editor.get_by_label("Weight of ns1", exact=True).fill("1")
    editor.get_by_role("button", name="Save the weight of ns1").click()
    editor.wait_for_load_state()
    assert "Namespace ns1: weight 3 → 1." in editor.content()
    assert Namespace.objects.get(name="ns1").weight == 1
    page.wait_for_function(f"JSON.stringify(({NAMESPACE_DESERVED})()) === '[2,2]'", timeout=15_000)
    assert page.get_by_test_id("ns-deserved-ns1").inner_text() == "2 cores"
    assert page.get_by_test_id("ns-weight-ns1").inner_text() == "1"
    shot(page, "13-queue-q1-after-weight-change")
    assert page.problems == []


def test_an_invalid_edit_shows_its_message(site: str, page: Any) -> None:
    b.queue("research", deserved={"cpu": "32"}, guarantee={"cpu": "16"})
    b.queue("nlp", "research", deserved={"cpu": "8"}, guarantee={"cpu": "2"})
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/edit/queues/nlp/")
    page.get_by_label("Guarantee of cpu").fill("12")
    page.get_by_role("button", name="Save now").click()
    page.wait_for_load_state()
    message = page.locator("#id_deserved__cpu-errors").inner_text()
    assert "queue nlp: deserved cpu 8 must be >= guarantee cpu 12" in message
    assert page.get_by_label("Deserved of cpu").get_attribute("aria-invalid") == "true"
    assert page.get_by_role("alert").first.inner_text().startswith("Not saved")
    shot(page, "14-invalid-edit")
    page.get_by_label("Deserved of cpu").fill("-1")
    page.get_by_label("Guarantee of cpu").fill("2")
    page.get_by_role("button", name="Save now").click()
    # the same message as the API's (whose error envelope names the field in "attr")
    assert "'-1' must be greater than or equal to 0" in page.locator("#id_deserved__cpu-errors").inner_text()
    assert Queue.objects.get(name="nlp").version == 1


def test_what_if_shows_the_diff_and_apply_persists_it(site: str, page: Any) -> None:
    b.seed000_table2()
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/edit/")
    page.get_by_label("Weight of ns1", exact=True).fill("1")
    page.get_by_role("button", name="Stage the weight of ns1 for what-if").click()
    page.wait_for_url("**/whatif/")
    page.goto(f"{site}/edit/queues/q2/")
    page.get_by_label("Weight", exact=True).fill("1")
    page.get_by_role("button", name="Stage for what-if").click()
    page.wait_for_url("**/whatif/")
    charts_ready(page)
    assert Namespace.objects.get(name="ns1").weight == 3 and Queue.objects.get(name="q2").weight == 3
    staged = page.locator("#staged").inner_text()
    assert "namespace ns1: weight 3 → 1" in staged and "edit queue q2: weight 1" in staged
    diff = page.locator("#diff-table").inner_text()
    assert "q1/ns1" in diff and "q2" in diff
    row = page.locator("#diff-table tr", has_text="q1").filter(has_text="deserved · cpu").first.inner_text()
    assert "4 cores" in row and "8 cores" in row
    assert page.locator("#impact").is_visible()
    shot(page, "15-whatif")
    page.get_by_role("button", name="Apply 2 changes").click()
    page.wait_for_load_state()
    assert "Applied 2 changes in one transaction" in page.content()
    assert Namespace.objects.get(name="ns1").weight == 1 and Queue.objects.get(name="q2").weight == 1
    shot(page, "16-whatif-applied")


def test_a_stale_edit_is_refused(site: str, context: Any, page: Any) -> None:
    b.queue("research", deserved={"cpu": "32"})
    b.queue("nlp", "research", deserved={"cpu": "8"})
    admin_user()
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/edit/queues/nlp/")  # read at version 1
    other = context.new_page()
    other.goto(f"{site}/edit/queues/nlp/")
    other.get_by_label("Weight", exact=True).fill("3")
    other.get_by_role("button", name="Save now").click()
    other.wait_for_url("**/queues/nlp/")
    page.get_by_label("Weight", exact=True).fill("5")
    page.get_by_role("button", name="Save now").click()
    page.wait_for_load_state()
    conflict = page.locator("#conflict").inner_text()
    assert "was changed by boss" in conflict and "Your change was NOT saved" in conflict
    assert "weight is 3 (yours: 5)" in conflict
    assert Queue.objects.get(name="nlp").weight == 3
    shot(page, "17-stale-edit-refused")
