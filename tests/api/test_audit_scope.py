"""The fairness audit of a lead's own subtree (issue 30, item 3): on the demo organisation, research-lead reads the
audit's rows of the research subtree only (the API and the page, without the admin's what-if buttons); a lead of
another department asking for research's is a 403 that says why; a user in no team is refused; an admin reads
everything, or one team's subtrees with ``?team=``."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from engine.audit import Audit, Starved
from planning.audit import NOT_A_MEMBER, within
from scheduling.models import Cluster, QuotaSample

pytestmark = pytest.mark.django_db

RESEARCH = {"research", "ml-research", "nlp", "vision"}
SAMPLED = ("research", "nlp", "vision", "engineering", "platform", "analytics")


@pytest.fixture
def demo(api: Any) -> dict[str, Any]:
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    for hours in (20, 2):  # each node held twice its share over the day: a row of "use over time" per node
        for name in SAMPLED:
            QuotaSample.objects.create(
                cluster=cluster,
                time=timezone.now() - timedelta(hours=hours),
                kind="queue",
                name=name,
                allocated={"cpu": 8000},
                deserved={"cpu": 4000},
            )
    users = get_user_model().objects
    clients = {name: api(users.get(username=f"{name}-lead")) for name in ("research", "platform")}
    clients["admin"] = api(users.create_user("boss", is_staff=True))
    clients["nobody"] = api(users.create_user("carol"))
    return clients


def _usage_names(body: dict[str, Any]) -> set[str]:
    return {row["name"] for row in body["usage_over_time"]}


def test_a_department_lead_gets_its_subtrees_rows_only(demo: dict[str, Any]) -> None:
    for query in ("?days=1", "?days=1&team=research-dept"):
        r = demo["research"].get(f"/api/v1/audit/{query}")
        assert r.status_code == 200, r.content
        assert _usage_names(r.json()) == {"research", "nlp", "vision"}, query  # the sampled nodes of its subtree
        every_row = [row for key in ("starved", "lending", "idle_guarantees", "waits") for row in r.json()[key]]
        assert {row["name"] for row in every_row} <= RESEARCH
        assert {row["name"] for row in r.json()["waits"]} >= {"nlp", "vision"}  # the demo's jobs, submitted now
    everything = demo["admin"].get("/api/v1/audit/?days=1").json()
    assert _usage_names(everything) == set(SAMPLED)
    assert {row["name"] for row in everything["waits"]} - RESEARCH  # other departments' waits too
    one_team = demo["admin"].get("/api/v1/audit/?days=1&team=nlp").json()
    assert _usage_names(one_team) == {"nlp"}


def test_a_lead_of_another_department_gets_a_403_that_says_why(demo: dict[str, Any]) -> None:
    r = demo["platform"].get("/api/v1/audit/?team=research-dept")
    assert r.status_code == 403
    assert r.json()["errors"][0]["detail"] == (
        "You may not read the audit of team 'research-dept': you may read the audit of your own teams and of the "
        "teams below them only."
    )
    assert _usage_names(demo["platform"].get("/api/v1/audit/?days=1").json()) == {"platform"}  # its own: fine
    nobody = demo["nobody"].get("/api/v1/audit/")
    assert nobody.status_code == 403 and nobody.json()["errors"][0]["detail"] == NOT_A_MEMBER
    unknown = demo["admin"].get("/api/v1/audit/?team=nope")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["attr"] == "team"


def test_the_page_shows_the_subtree_without_the_admins_suggestions(demo: dict[str, Any]) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username="research-lead"))
    html = client.get("/audit/?days=1").content.decode()
    assert 'data-testid="audit-scope"' in html and "Your teams' subtrees only" in html
    assert 'href="/queues/nlp/"' in html and 'href="/queues/platform/"' not in html
    assert 'data-testid="stage-' not in html and "Try it" not in html
    assert 'href="/audit/"' in html  # the navigation offers the audit to a team member
    client.force_login(get_user_model().objects.get(username="platform-lead"))
    refused = client.get("/audit/?team=research-dept")
    assert refused.status_code == 403
    assert "you may read the audit of your own teams and of the teams below them only" in refused.content.decode()


def test_borrowers_outside_the_scope_are_left_out() -> None:
    """A department's own row keeps the siblings it may read among its borrowers, not the other departments."""
    starved = Starved("queue", "research", "root", "cpu", 1000, 0, 2000, (("engineering", 500), ("nlp", 300)))
    audit = Audit(86400.0, (starved, Starved("queue", "platform", "engineering", "cpu", 1, 0, 1, ())), (), (), ())
    kept = within(audit, {"queue": {"research", "nlp"}, "quota": set()})
    assert [(s.name, s.borrowers) for s in kept.starved] == [("research", (("nlp", 300),))]
    assert within(audit, None) is audit
