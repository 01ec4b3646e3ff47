"""Borrowing and lending limits in the editor (two more columns of the resource matrix, blank: unlimited) and on the
node and tree pages, beside the capability (``borrows ≤ 2 · lends ≤ 1``)."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from tests.frontend import builders as b
from tests.frontend.test_editor import errors_of, queue_form


@pytest.fixture
def org(db: Any) -> None:
    b.node("n1", cpu="64", memory="256Gi")
    b.queue("research", deserved={"cpu": "32"}, guarantee={"cpu": "8"}, capability={"cpu": "48"})
    b.queue("nlp", "research", deserved={"cpu": "8"}, guarantee={"cpu": "2"})
    b.group("team-a", min={"cpu": "8"}, max={"cpu": "16"})


def test_the_editor_sets_and_clears_queue_limits(admin_client: Any, org: None) -> None:
    cells = {"deserved_cpu": "8", "guarantee_cpu": "2", "borrowing_limit_cpu": "2", "lending_limit_cpu": "1"}
    response = admin_client.post("/edit/queues/nlp/", queue_form("nlp", 1, "research", 1, **cells))
    assert response.status_code == 302, errors_of(response)
    spec = Queue.objects.get(name="nlp").to_spec()
    assert (spec.borrowing_limit["cpu"], spec.lending_limit["cpu"]) == (2_000, 1_000)
    form = admin_client.get("/edit/queues/nlp/").context["form"]
    assert form["lending_limit__cpu"].value() == "1" and form["borrowing_limit__cpu"].value() == "2"
    page = admin_client.get("/queues/nlp/")
    rows = {r["resource"]: r for r in page.context["resource_rows"]}
    assert rows["cpu"]["limits"] == "borrows ≤ 2 cores · lends ≤ 1 core"
    assert "borrows ≤ 2 cores · lends ≤ 1 core" in page.content.decode()
    table = {r["name"]: r for r in admin_client.get("/trees/queues/").context["rows"]}
    assert table["nlp"]["limits"] == "borrows ≤ 2 · lends ≤ 1" and table["research"]["limits"] == ""
    cleared = {"deserved_cpu": "8", "guarantee_cpu": "2", "borrowing_limit_cpu": "2"}
    response = admin_client.post("/edit/queues/nlp/", queue_form("nlp", 2, "research", 1, **cleared))
    assert response.status_code == 302, errors_of(response)
    assert Queue.objects.get(name="nlp").lending_limit is None


def test_the_editor_shows_the_rules_message_at_the_limit_cell(admin_client: Any, org: None) -> None:
    cells = {"deserved_cpu": "8", "guarantee_cpu": "2", "lending_limit_cpu": "9"}
    response = admin_client.post("/edit/queues/nlp/", queue_form("nlp", 1, "research", 1, **cells))
    assert response.status_code == 400  # the form again, with the message at the cell
    assert errors_of(response)["lending_limit__cpu"] == [
        "queue nlp: lending limit cpu 9 must be <= deserved cpu 8 (it cannot lend more than it is entitled to)"
    ]
    assert Queue.objects.get(name="nlp").lending_limit is None


def test_quota_group_page_shows_its_limits(admin_client: Any, org: None) -> None:
    group = QuotaGroup.objects.get(name="team-a")
    group.lending_limit = {"cpu": "0"}
    group.save()
    page = admin_client.get("/quotas/team-a/")
    rows = {r["resource"]: r for r in page.context["resource_rows"]}
    assert rows["cpu"]["limits"] == "lends ≤ 0 cores"
