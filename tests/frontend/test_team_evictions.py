"""The team page's evictions (newest first, capped, the rest one link away) and the page of a removed job ("finished
and removed at T" and its evictions), for the team's lead and not for another team's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from frontend.presenters.evictions import TEAM_EVICTION_ROWS, ago
from scheduling import agent
from scheduling.models import Eviction, Pod, PodGroup, RemovedJob
from tests.frontend import builders as b
from tests.frontend.conftest import login
from tests.frontend.job_builders import job_story

pytestmark = pytest.mark.django_db


@pytest.fixture
def story(lending: None) -> PodGroup:
    """x-ns/eval waiting, a pod of it reclaimed two minutes ago by y-ns/serve (``job_story``)."""
    return job_story()


def _gc_eval(now: Any) -> None:
    """eval finishes and the garbage collection removes it at ``now``."""
    Pod.objects.filter(podgroup__name="eval").update(status="Succeeded", finished=timezone.now())
    PodGroup.objects.filter(name="eval").update(phase="Completed")
    assert agent.collect_garbage(b.cluster(), now, 300) == 1


def test_the_team_page_lists_the_teams_evictions(client: Any, story: PodGroup) -> None:
    response = login(client, "lead-x").get("/team/x-team/")
    assert response.status_code == 200
    rows = response.context["evictions"]
    assert [(r["job"], r["pod"], r["node"], r["what"]) for r in rows] == [("x-ns/eval", "eval-0", "n1", "reclaimed")]
    assert rows[0]["job_url"] == "/jobs/x-ns/eval/" and rows[0]["ago"].startswith("2 min")
    html = response.content.decode()
    assert 'data-testid="team-evictions"' in html and "Your evictions" in html
    assert "its queue held more than it deserves" in html and "reclaimed for y-ns/serve-0" in html
    assert "1 eviction kept" in html and "kept 7 days after a job is removed" in html
    # the other team's page lists none of them, and x's page is not for y's lead
    y = login(client, "lead-y").get("/team/y-team/")
    assert y.status_code == 200 and y.context["evictions"] == []
    assert "None of your jobs' pods has been evicted." in y.content.decode()
    assert client.get("/team/x-team/").status_code == 404


def test_times_read_as_people_say_them() -> None:
    now = timezone.now()
    assert ago(now - timedelta(seconds=135), now) == "2 min 15 s ago"
    assert ago(now - timedelta(days=3, hours=4), now) == "3 d 4 h ago"


def test_the_list_is_capped_and_links_to_the_rest(admin_client: Any, story: PodGroup) -> None:
    pod = story.pods.get()
    now = timezone.now()
    Eviction.objects.bulk_create(
        Eviction(
            cluster=b.cluster(),
            pod=pod,
            pod_uid="x-ns/eval-0",
            namespace="x-ns",
            job="eval",
            queue="xq",
            quota_group="x",
            action="preempt",
            created=now - timedelta(seconds=i),
        )
        for i in range(TEAM_EVICTION_ROWS + 4)
    )
    response = admin_client.get("/team/x-team/")
    assert len(response.context["evictions"]) == TEAM_EVICTION_ROWS
    assert response.context["evictions_total"] == TEAM_EVICTION_ROWS + 5
    html = response.content.decode()
    assert f"newest {TEAM_EVICTION_ROWS} shown" in html and "5 more:" in html
    assert 'href="/api/v1/evictions/?team=x-team&amp;cluster=default"' in html
    assert "fairway eviction list --team x-team --cluster default" in html
    live = admin_client.get("/team/x-team/?live=1").json()
    assert "5 more:" in live["fragments"]["frag-evictions"]


def test_a_removed_jobs_page_says_when_and_lists_its_evictions(client: Any, story: PodGroup) -> None:
    removed_at = timezone.now() + timedelta(seconds=301)
    _gc_eval(removed_at)
    login(client, "lead-x")
    team = client.get("/team/x-team/")
    row = team.context["evictions"][0]
    assert row["job_url"] == "/jobs/x-ns/eval/" and row["job_removed_at"] == removed_at
    assert "finished and removed" in team.content.decode()
    response = client.get("/jobs/x-ns/eval/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"finished and removed at {removed_at:%Y-%m-%d %H:%M:%S} UTC" in html
    assert "finished jobs are removed 5 min after they finish" in html
    assert 'data-testid="job-evictions"' in html and "eval-0" in html and "reclaimed for y-ns/serve-0" in html
    assert f"kept until {removed_at + timedelta(days=7):%Y-%m-%d %H:%M} UTC" in html
    assert RemovedJob.objects.get(name="eval").evictions.count() == 1


def test_a_removed_job_of_another_team_is_forbidden_and_an_unknown_one_not_found(client: Any, story: PodGroup) -> None:
    _gc_eval(timezone.now() + timedelta(seconds=301))
    response = login(client, "lead-y").get("/jobs/x-ns/eval/")
    assert response.status_code == 403 and "belonged to another team" in response.content.decode()
    assert client.get("/jobs/x-ns/never-was/").status_code == 404


def test_a_new_job_of_the_same_name_does_not_inherit_the_removed_ones_evictions(
    admin_client: Any, story: PodGroup
) -> None:
    _gc_eval(timezone.now() + timedelta(seconds=301))
    b.job("x-ns", "eval", "xq", 1, {"cpu": "1"}, group_name="x")  # submitted again: its pod is eval-0 again
    response = admin_client.get("/jobs/x-ns/eval/")
    assert response.status_code == 200 and response.context["evictions"] == []
