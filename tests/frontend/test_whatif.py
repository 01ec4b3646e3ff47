"""What-if before apply: staged edits are only evaluated (``engine.changes``) until applied, all in one
transaction, through the services; a conflict or a broken rule applies nothing."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from quotas.models import Namespace, Queue
from tests.frontend import builders as b
from tests.frontend.test_editor import queue_form


@pytest.fixture
def table2(db: Any) -> None:
    b.seed000_table2()


def stage_weight(client: Any, ns: str, weight: int) -> Any:
    obj = Namespace.objects.get(name=ns)
    return client.post(
        f"/edit/namespaces/{ns}/weight/",
        {f"ns-{obj.pk}-weight": str(weight), f"ns-{obj.pk}-version": obj.version, "action": "stage"},
    )


def diff_rows(response: Any) -> dict[tuple[str, str], tuple[str, str]]:
    return {(r["node"], r["field"]): (r["before"], r["after"]) for r in response.context["rows"]}


def test_staging_writes_nothing_and_shows_before_and_after(admin_client: Any, table2: None) -> None:
    """Seed 000, table 2: ns1's weight 3 -> 1 makes q1's two namespaces equal: 3 + 1 becomes 2 + 2."""
    response = stage_weight(admin_client, "ns1", 1)
    assert response.status_code == 302 and response["Location"] == "/whatif/"
    assert Namespace.objects.get(name="ns1").weight == 3
    page = admin_client.get("/whatif/")
    assert [e["summary"] for e in page.context["entries"]] == ["namespace ns1: weight 3 → 1"]
    rows = diff_rows(page)
    assert rows[("q1/ns1", "deserved · cpu")] == ("3 cores", "2 cores")
    assert rows[("q1/ns2", "deserved · cpu")] == ("1 core", "2 cores")
    assert ("q1/ns1", "weight") in rows
    assert not page.context["errors"]


def test_an_edit_staged_from_the_form_shows_its_impact(admin_client: Any, table2: None) -> None:
    """q2's weight 3 -> 1 gives q1 and q2 8 cpu each: q1's namespaces get room, q2's ns3 loses some."""
    q2 = Queue.objects.get(name="q2")
    staged = admin_client.post("/edit/queues/q2/", {**queue_form("q2", q2.version, "root", 1), "action": "stage"})
    assert staged.status_code == 302
    assert Queue.objects.get(name="q2").weight == 3
    page = admin_client.get("/whatif/")
    rows = diff_rows(page)
    assert rows[("q1", "deserved · cpu")] == ("4 cores", "8 cores")
    assert rows[("q2", "deserved · cpu")] == ("12 cores", "8 cores")
    impact = page.context["impact"]
    assert impact["source"] == "session"
    figs = page.context["figures"]
    queues = figs["whatif_queues"]["data"]
    assert {t["name"] for t in queues} == {"before", "after"}


def test_apply_writes_every_staged_change_in_one_go(admin_client: Any, table2: None) -> None:
    stage_weight(admin_client, "ns1", 1)
    q2 = Queue.objects.get(name="q2")
    admin_client.post("/edit/queues/q2/", {**queue_form("q2", q2.version, "root", 2), "action": "stage"})
    page = admin_client.get("/whatif/")
    applied = admin_client.post("/whatif/apply/", {"fingerprint": page.context["fingerprint"]}, follow=True)
    assert "Applied 2 changes in one transaction" in applied.content.decode()
    assert Namespace.objects.get(name="ns1").weight == 1
    assert Queue.objects.get(name="q2").weight == 2
    assert admin_client.get("/whatif/").context["entries"] == []
    assert Queue.objects.get(name="q2").history.first().history_user.username == "boss"


def test_a_conflict_applies_nothing(admin_client: Any, table2: None) -> None:
    stage_weight(admin_client, "ns1", 1)
    stage_weight(admin_client, "ns4", 2)
    fingerprint = admin_client.get("/whatif/").context["fingerprint"]
    ns4 = Namespace.objects.get(name="ns4")
    ns4.weight = 9
    ns4.save()  # someone else changed ns4 after it was staged
    response = admin_client.post("/whatif/apply/", {"fingerprint": fingerprint}, follow=True)
    text = response.content.decode()
    assert "Nothing was applied" in text and "namespace ns4 was at version 1" in text
    assert Namespace.objects.get(name="ns1").weight == 3 and Namespace.objects.get(name="ns4").weight == 9
    assert len(response.context["entries"]) == 2


def test_a_broken_rule_applies_nothing(admin_client: Any, table2: None) -> None:
    """The services check every change again when applying: a queue that got a job after its deletion was
    staged cannot be deleted without force, and the weight change staged before it is rolled back too."""
    b.queue("spare")
    stage_weight(admin_client, "ns1", 2)
    spare = Queue.objects.get(name="spare")
    admin_client.post("/edit/delete/queues/spare/", {"version": spare.version, "action": "stage"})
    fingerprint = admin_client.get("/whatif/").context["fingerprint"]
    b.job("ns1", "late", "spare", 1, {"cpu": "1"})  # the queue's own row (and version) does not change
    response = admin_client.post("/whatif/apply/", {"fingerprint": fingerprint}, follow=True)
    text = response.content.decode()
    assert "Nothing was applied" in text and "change 2" in text
    assert Namespace.objects.get(name="ns1").weight == 3
    assert Queue.objects.filter(name="spare").exists()


def test_staged_changes_that_break_the_rules_together_are_shown(admin_client: Any, db: Any) -> None:
    b.queue("dept", deserved={"cpu": "10"})
    b.queue("team", "dept", deserved={"cpu": "5"})
    dept = Queue.objects.get(name="dept")
    ok = admin_client.post(
        "/edit/queues/dept/", {**queue_form("dept", dept.version, "root", 1, deserved_cpu="6"), "action": "stage"}
    )
    assert ok.status_code == 302
    team = Queue.objects.get(name="team")
    refused = admin_client.post(
        "/edit/queues/team/", {**queue_form("team", team.version, "dept", 1, deserved_cpu="8"), "action": "stage"}
    )
    assert refused.status_code == 400
    assert any("exceeds" in e for e in refused.context["form"].non_field_errors()) or refused.context["form"].errors
    assert len(admin_client.get("/whatif/").context["entries"]) == 1


def test_apply_refuses_a_list_it_did_not_show(admin_client: Any, table2: None) -> None:
    stage_weight(admin_client, "ns1", 1)
    response = admin_client.post("/whatif/apply/", {"fingerprint": "stale"}, follow=True)
    assert "changed since this page was shown" in response.content.decode()
    assert Namespace.objects.get(name="ns1").weight == 3


def test_remove_and_discard(admin_client: Any, table2: None) -> None:
    stage_weight(admin_client, "ns1", 1)
    stage_weight(admin_client, "ns2", 4)
    admin_client.post("/whatif/remove/0/")
    assert [e["name"] for e in admin_client.get("/whatif/").context["entries"]] == ["ns2"]
    admin_client.post("/whatif/discard/")
    assert admin_client.get("/whatif/").context["entries"] == []
    assert Namespace.objects.get(name="ns2").weight == 1


def test_staging_a_deletion(admin_client: Any, table2: None) -> None:
    b.queue("spare")
    spare = Queue.objects.get(name="spare")
    response = admin_client.post("/edit/delete/queues/spare/", {"version": spare.version, "action": "stage"})
    assert response.status_code == 302 and Queue.objects.filter(name="spare").exists()
    page = admin_client.get("/whatif/")
    assert ("spare", "node") in diff_rows(page)
    admin_client.post("/whatif/apply/", {"fingerprint": page.context["fingerprint"]})
    assert not Queue.objects.filter(name="spare").exists()


# -- one what-if service (``planning.whatif``): the Stage button checks on the page's cluster, with the limits ------


def _quota_form(name: str, parent: str) -> dict[str, Any]:
    return {"name": name, "parent": parent, "allow_lent": "on", "min__cpu": "1", "max__cpu": "2", "action": "stage"}


def test_stage_checks_on_the_cluster_the_pages_show_not_the_default_one(
    admin_client: Any, db: Any, settings: Any
) -> None:
    """The editor's Stage button evaluated the change on ``FAIRWAY_DEFAULT_CLUSTER`` whatever cluster was shown, and
    failed (500) where no cluster bears that name; it now runs on the cluster of the what-if page that shows it."""
    settings.FAIRWAY = {**settings.FAIRWAY, "DEFAULT_CLUSTER": "gone"}
    b.cluster("west")
    b.queue("research", deserved={"cpu": "4"})
    research = Queue.objects.get(name="research")
    form = {**queue_form("research", research.version, "root", 2, deserved_cpu="4"), "action": "stage"}
    staged = admin_client.post("/edit/queues/research/?cluster=west", form)
    assert staged.status_code == 302 and staged["Location"] == "/whatif/"
    page = admin_client.get("/whatif/")
    assert page.context["cluster"].name == "west"
    assert [e["summary"] for e in page.context["entries"]] == ["edit queue research: weight 2"]
    assert not page.context["errors"]


def test_stage_refuses_what_the_api_refuses_under_the_configured_limits(
    admin_client: Any, db: Any, settings: Any
) -> None:
    """The Stage button's check ran with the default limits (a quota tree 10 levels deep) while the API and the
    services use the configured ones: a group too deep was staged and only refused at Apply. Now the form says so."""
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, max_quota_group_depth=2)
    settings.FAIRWAY = {**settings.FAIRWAY, "MAX_QUOTA_GROUP_DEPTH": 2}
    b.cluster()
    b.group("dept", is_parent=True, min={"cpu": "8"}, max={"cpu": "16"})
    b.group("team", "dept", is_parent=True, min={"cpu": "4"}, max={"cpu": "8"})
    response = admin_client.post("/edit/new/quota/", _quota_form("deep", "team"))
    assert response.status_code == 400
    assert "deep" not in [e["name"] for e in admin_client.get("/whatif/").context["entries"]]
    assert any("deep" in str(err) or "level" in str(err) for err in response.context["form"].errors.values())
