"""The job page and the jobs list in a real headless chromium: a team lead goes from the team page to a waiting
job and reads why it waits, which node blocks it and who took its pod; an admin finds one job among a thousand
with the list's search."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace, Queue
from scheduling.models import PodGroup
from tests.e2e.conftest import login, shot
from tests.frontend import builders as b
from tests.frontend.job_builders import job_story

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def team_setup() -> None:
    b.lending()
    b.team("x-team", queues=["xq"], groups=["x"])
    b.team("y-team", queues=["yq"], groups=["y"])
    b.user("lead-x", teams=["x-team"])
    b.user("lead-y", teams=["y-team"])
    job_story()


def test_a_team_lead_clicks_a_waiting_job_and_sees_why_it_waits(site: str, page: Any) -> None:
    team_setup()
    b.job("x-ns", "sweep", "xq", 2, {"cpu": "5"}, priority=9)  # served before eval (higher priority)
    login(page, site, "lead-x", b.PASSWORD)
    assert page.get_by_role("heading", name="Team x-team").is_visible()
    team_evictions = page.get_by_test_id("team-evictions")
    assert team_evictions.get_by_role("heading", name="Your evictions").is_visible()
    listed = team_evictions.inner_text()
    assert "1 eviction kept" in listed and "x-ns/eval" in listed and "eval-0" in listed and "reclaimed" in listed
    assert team_evictions.get_by_role("link", name="x-ns/eval").get_attribute("href") == "/jobs/x-ns/eval/"
    page.locator("#frag-jobs").get_by_role("link", name="x-ns/eval").click()
    page.wait_for_url("**/jobs/x-ns/eval/")
    assert page.get_by_role("heading", name="x-ns/eval").is_visible()
    why = page.get_by_test_id("job-why").inner_text()
    assert "Why it waits" in why and "NotEnoughResources" in why
    assert "quota group x runtime: insufficient cpu, requested 20, available 10" in why
    blocking = page.get_by_test_id("blocking-node")
    assert blocking.count() == 1 and blocking.inner_text().startswith("x") and "blocks it" in blocking.inner_text()
    assert "used 80 cores" in blocking.inner_text()
    place = page.get_by_test_id("job-place").inner_text()
    assert "1 job ahead of it" in place and "x-ns/sweep" in place and "10 cores" in place
    evictions = page.get_by_test_id("job-evictions").inner_text()
    assert "1 eviction" in evictions and "y-ns/serve" in evictions and "queue yq" in evictions
    assert "more than it deserves" in evictions
    taker = page.get_by_test_id("job-evictions").get_by_role("link", name="y-ns/serve")
    assert taker.count() == 0  # another team's job: named, not linked
    assert "eval-0" in page.get_by_test_id("job-pods").inner_text()
    history = page.get_by_test_id("job-history").inner_text()
    assert history.index("Pending") < history.index("Running")  # newest first
    shot(page, "jobs-01-job-page-team-lead-1440")
    page.set_viewport_size({"width": 1280, "height": 800})
    overflow = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    assert not overflow
    shot(page, "jobs-02-job-page-team-lead-1280")
    # the job that took the room belongs to another team: named, not opened
    page.goto(f"{site}/jobs/y-ns/serve/")
    assert page.get_by_role("heading", name="You cannot open this page").is_visible()
    assert [p for p in page.problems if "403" not in p] == []


def test_an_admin_finds_a_job_among_a_thousand(site: str, page: Any) -> None:
    b.lending()
    b.user("boss", staff=True)
    cluster = b.cluster()
    ns = Namespace.objects.get(name="x-ns")
    queue = Queue.objects.get(name="xq")
    PodGroup.objects.bulk_create(
        PodGroup(cluster=cluster, namespace=ns, name=f"batch-{i:04d}", queue=queue, phase="Pending")
        for i in range(1000)
    )
    login(page, site, "boss", b.PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Jobs").click()  # click 1
    page.wait_for_url("**/jobs/")
    assert page.locator("#list-title").inner_text() == "1,003 jobs"
    assert "page 1 of 21" in page.content()
    shot(page, "jobs-03-list-admin")
    page.get_by_label("Search").fill("batch-0421")
    page.get_by_label("Search").press("Enter")
    page.wait_for_url("**/jobs/?q=batch-0421*")
    rows = page.locator("#jobs-table tbody tr")
    assert rows.count() == 1
    assert "1 job found" in page.content()
    rows.get_by_role("link", name="batch-0421").click()  # click 2
    page.wait_for_url("**/jobs/x-ns/batch-0421/")
    assert page.get_by_test_id("job-phase").inner_text() == "Pending"
    # the filters narrow the list too, and clearing them brings every job back
    page.goto(f"{site}/jobs/")
    page.get_by_label("Phase").select_option("Running")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url("**phase=Running*")
    assert page.locator("#jobs-table tbody tr").count() == 2
    shot(page, "jobs-04-list-filtered")
    page.get_by_role("link", name="Clear the filters").click()
    page.wait_for_load_state()
    assert "page 1 of 21" in page.content()
    unlabeled = page.evaluate(
        """() => Array.from(document.querySelectorAll('input:not([type=hidden]), select'))
          .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map(el => el.name)"""
    )
    assert unlabeled == []
    assert page.problems == []


def test_a_queue_among_many_is_found_by_typing_its_name(site: str, page: Any) -> None:
    """Past ``SELECT_LIMIT`` queues the queue filter is a text box: typing fills its suggestions from the server,
    and the chosen name filters the list (an unknown one says so under the box)."""
    b.lending()
    b.user("boss", staff=True)
    for i in range(45):
        b.queue(f"team-{i:02d}")
    b.namespace("t7-ns", queue_name="team-07")
    b.job("t7-ns", "probe", "team-07", 1, {"cpu": "1"})
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/jobs/")
    box = page.get_by_label("Queue")
    assert box.evaluate("el => el.tagName") == "INPUT"
    assert "type to find one of" in (box.get_attribute("placeholder") or "")
    box.fill("team-0")
    page.wait_for_function("document.querySelectorAll('#f-queue-list option').length === 10")
    suggested = page.evaluate("Array.from(document.querySelectorAll('#f-queue-list option')).map(o => o.value)")
    assert suggested == [f"team-{i:02d}" for i in range(10)]
    shot(page, "jobs-05-queue-suggestions")
    box.fill("team-07")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url("**queue=team-07*")
    assert [r.inner_text() for r in page.locator("#jobs-table tbody td.name").all()] == ["probe"]
    page.get_by_label("Queue").fill("team-99")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url("**queue=team-99*")
    assert "No queue you can read is named “team-99”." in page.locator(".filter-grid").inner_text()
    assert page.problems == []


def test_the_start_estimate_fills_in_without_a_reload(
    site: str, page: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team lead opens a waiting job while the worker still computes the start estimates: the page says
    "estimating" and the line turns into the estimate once the round is there, without a reload."""
    from datetime import timedelta

    from django.utils import timezone

    from planning import tasks
    from scheduling.models import Pod
    from tests.planning.test_start_estimates import record

    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_WORKER_WAIT_SECONDS": 600.0, "START_ESTIMATE_DRAWS": 5}
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: None)  # the worker is this test, below
    b.node("n1", cpu="8", memory="32Gi")
    b.queue("team-a")
    b.namespace("ns-a", queue_name="team-a")
    b.team("a-team", queues=["team-a"])
    b.user("lead-a", teams=["a-team"])
    cluster = b.cluster()
    b.job("ns-a", "run", "team-a", 1, {"cpu": "8"}, running=1, on="n1")
    Pod.objects.filter(name="run-0").update(started=timezone.now() - timedelta(minutes=10))
    b.job("ns-a", "wait", "team-a", 1, {"cpu": "8"})
    for i in range(3):
        record(cluster, f"old-{i}", 1800.0)
    login(page, site, "lead-a", b.PASSWORD)
    page.goto(f"{site}/jobs/ns-a/wait/")
    line = page.get_by_test_id("job-start-estimate")
    assert line.get_attribute("data-state") == "pending" and "Estimating when it will start" in line.inner_text()
    assert tasks.estimate_starts.apply(args=[cluster.pk]).get() == "ran"
    page.wait_for_selector('[data-testid="job-start-estimate"][data-state="estimated"]')
    text = page.get_by_test_id("job-start-estimate").inner_text()
    assert "Likely to start in about" in text and "(9 times in 10)" in text and "5 replays" in text
    assert page.problems == []
    shot(page, "jobs-04-start-estimate-filled-in-1440")
