"""An applied change request's page says what it did: the waits of the jobs of the nodes it changed, submitted in the
days before it was applied against as many days since (``frontend.presenters.request_effect``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from changerequests.models import ChangeRequest
from scheduling.models import JobRecord
from scheduling.serializers import default_cluster
from tests.changerequests.conftest import NLP_PLUS_4
from tests.changerequests.test_pages import login

pytestmark = pytest.mark.django_db


def _job(name: str, queue: str, group: str, submitted: timedelta, wait: float | None) -> None:
    now = timezone.now()
    JobRecord.objects.create(
        cluster=default_cluster(),
        namespace="nlp",
        name=name,
        queue=queue,
        quota_group=group,
        roles=[["", 1, {"cpu": 1000}]],
        submitted=now - submitted,
        started=None if wait is None else now - submitted + timedelta(seconds=wait),
    )


def _applied(days_ago: float, status: str = "applied") -> ChangeRequest:
    users = get_user_model().objects
    return ChangeRequest.objects.create(
        requester=users.get(username="nlp-lead"),
        reviewer=users.get(username="research-lead"),
        cluster=default_cluster().name,
        summary="more GPUs for nlp",
        changes=NLP_PLUS_4,
        trees_revision=1,
        status=status,
        decided=timezone.now() - timedelta(days=days_ago),
    )


def test_the_page_sets_the_waits_since_against_as_many_days_before(people: dict[str, Any]) -> None:
    """Applied three days ago: nlp's jobs submitted in the three days before waited 20 min and 10 min, those since
    1 min; a job of six days ago is outside the span compared, and vision's jobs are not the request's."""
    req = _applied(3)
    _job("slow", "nlp", "nlp", timedelta(days=4), 1200)
    _job("slower", "nlp", "nlp", timedelta(days=3, hours=2), 600)
    _job("long-ago", "nlp", "nlp", timedelta(days=6, hours=12), 7200)
    _job("fast", "nlp", "nlp", timedelta(days=1), 60)
    _job("other", "vision", "vision", timedelta(days=1), 5000)
    page = login("nlp-lead").get(f"/requests/{req.pk}/")
    effect = page.context["effect"]
    assert effect["span"] == "3 d" and not effect["short"]
    rows = {(r["tree"], r["name"]): r for r in effect["rows"]}
    assert list(rows) == [("queue", "nlp"), ("quota group", "nlp")]
    for row in rows.values():
        assert (row["before"]["started"], row["before"]["p50"], row["before"]["p95"]) == (2, "10 min", "20 min")
        assert (row["since"]["started"], row["since"]["p95"], row["since"]["longest"]) == (1, "1 min", "1 min")
    html = page.content.decode()
    assert 'id="request-effect"' in html and "Since it was applied" in html


def test_an_open_request_has_no_such_section_and_a_fresh_one_says_the_figures_are_few(people: dict[str, Any]) -> None:
    fresh = _applied(1 / 24)
    _job("now", "nlp", "nlp", timedelta(minutes=30), None)  # still waiting: counted with its wait so far
    effect = login("research-lead").get(f"/requests/{fresh.pk}/").context["effect"]
    assert effect["span"] == "1 h" and effect["short"]
    since = effect["rows"][0]["since"]
    assert (since["started"], since["waiting"], since["p95"], since["longest"]) == (0, 1, "—", "30 min")
    assert "few jobs yet" in login("research-lead").get(f"/requests/{fresh.pk}/").content.decode()
    open_one = _applied(1, status="open")
    open_one.decided = None
    open_one.save()
    assert login("nlp-lead").get(f"/requests/{open_one.pk}/").context["effect"] is None


def test_the_api_answers_the_same_in_seconds(people: dict[str, Any], clients: dict[str, Any]) -> None:
    req = _applied(3)
    _job("slow", "nlp", "nlp", timedelta(days=4), 1200)
    _job("fast", "nlp", "nlp", timedelta(days=1), 60)
    body = clients["nlp-lead"].get(f"/api/v1/change-requests/{req.pk}/effect/").json()
    assert body["span_seconds"] == pytest.approx(3 * 86400, abs=5) and body["applied"]
    nodes = {(n["tree"], n["name"]): n for n in body["nodes"]}
    assert list(nodes) == [("queue", "nlp"), ("quota", "nlp")]
    assert nodes[("queue", "nlp")]["before"] == {
        "jobs_started": 1,
        "jobs_waiting": 0,
        "wait_p50_seconds": 1200.0,
        "wait_p95_seconds": 1200.0,
        "wait_max_seconds": 1200.0,
    }
    assert nodes[("quota", "nlp")]["since"]["wait_p95_seconds"] == 60.0
    open_one = _applied(1, status="open")
    never = clients["nlp-lead"].get(f"/api/v1/change-requests/{open_one.pk}/effect/").json()
    assert never == {"applied": None, "span_seconds": 0.0, "nodes": []}
    assert clients["vision-lead"].get(f"/api/v1/change-requests/{req.pk}/effect/").status_code == 404  # not theirs
