"""``/api/v1/change-requests/``: the done-when scenario of issue 30 (a lead asks for 4 more GPUs of guarantee, sees
its what-if, its department lead approves, the tree changes, the history says who), and every refusal."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.core import mail

from changerequests.models import ChangeRequest
from engine.resources import ResourceList
from quotas import services as tree_services
from quotas.models import Queue, QuotaGroup
from tests.changerequests.conftest import NLP_PLUS_4
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"
BASE = "/api/v1/change-requests/"


def gpus(model: Any, name: str, field: str) -> int:
    return int(getattr(model.objects.get(name=name), field).get(GPU, 0)) // 1000


def file(client: Any, changes: list[dict[str, Any]] = NLP_PLUS_4, **extra: Any) -> Any:
    return client.post(BASE, {"changes": changes, "reason": "two more interns", **extra}, format="json")


def test_a_lead_asks_for_four_more_gpus_and_its_department_lead_approves(clients: dict[str, Any]) -> None:
    r = file(clients["nlp-lead"])
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "open" and body["requester"] == "nlp-lead" and body["needs_room"] == []
    # the what-if: the fields asked for, before and after, for people, and the computed values that change
    requested = {(c["kind"], c["name"]): c["fields"] for c in body["whatif"]["requested"]}
    assert requested[("queue", "nlp")] == [{"field": "guarantee", "before": f"{GPU} 2", "after": f"{GPU} 6"}]
    assert requested[("quota_group", "nlp")][0]["before"] == f"{GPU} 2"
    assert body["whatif"]["values"]["queues"]["nlp"]["guarantee"] == {
        "before": {GPU: "2"},
        "after": {GPU: "6"},
    }
    assert {v["name"] for v in body["versions"]} == {"nlp"} and body["may_review"] is False
    assert gpus(Queue, "nlp", "guarantee") == 2  # nothing written yet
    # the department lead and the admin are told; the requester is not among them
    assert len(mail.outbox) == 1
    assert sorted(mail.outbox[0].to) == ["boss@example.org", "research-lead@example.org"]
    assert f"/requests/{body['id']}/" in mail.outbox[0].body
    mail.outbox.clear()

    listed = clients["research-lead"].get(BASE, {"to_review": "true"}).json()
    assert [x["id"] for x in listed["results"]] == [body["id"]] and listed["results"][0]["may_review"] is True
    r = clients["research-lead"].post(f"{BASE}{body['id']}/approve/", {"comment": "ok for Q3"}, format="json")
    assert r.status_code == 200, r.content
    done = r.json()
    assert done["status"] == "applied" and done["reviewer"] == "research-lead" and done["comment"] == "ok for Q3"
    assert gpus(Queue, "nlp", "guarantee") == 6 and gpus(QuotaGroup, "nlp", "min") == 6
    # the node's history names both; the request's own history has every step
    record = Queue.history.filter(name="nlp").order_by("-history_id").first()
    assert record.history_change_reason == (
        f"change request #{body['id']}: requested by nlp-lead, approved by research-lead"
    )
    steps = list(ChangeRequest.objects.get(pk=body["id"]).history.order_by("history_id"))
    assert [(s.history_change_reason, s.history_user.username) for s in steps] == [
        ("filed", "nlp-lead"),
        ("applied", "research-lead"),
    ]
    assert [m.to for m in mail.outbox] == [["nlp-lead@example.org"]]
    assert "approved and applied by research-lead" in mail.outbox[0].body
    # decided: no second decision
    r = clients["admin"].post(f"{BASE}{body['id']}/reject/", {"comment": "too late"}, format="json")
    assert r.status_code == 409


def test_a_lead_asks_for_per_user_limits_in_its_queue(clients: dict[str, Any]) -> None:
    """``user_limits`` is among what a request may change: shown to people as the editor writes it, applied as the
    editor would store it, and a later request that sees another value goes stale like any field."""
    limits = [{"user": "*", "max_jobs": 3, "max_resources": {GPU: "2"}}]
    r = file(clients["nlp-lead"], [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"user_limits": limits}}])
    assert r.status_code == 201, r.content
    body = r.json()
    (requested,) = body["whatif"]["requested"]
    assert requested["fields"] == [{"field": "user_limits", "before": "none", "after": f"user *: jobs=3, {GPU}=2"}]
    assert Queue.objects.get(name="nlp").user_limits is None  # nothing written yet
    r = clients["research-lead"].post(f"{BASE}{body['id']}/approve/", {}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "applied", r.content
    assert Queue.objects.get(name="nlp").user_limits == [
        {"kind": "user", "name": "*", "max_jobs": 3, "max_resources": {GPU: 2000}}
    ]


def test_a_request_outside_ones_subtree_is_refused(clients: dict[str, Any]) -> None:
    changes = [{"op": "update", "kind": "queue", "name": "vision", "spec": {"weight": 3}}]
    r = file(clients["nlp-lead"], changes)
    assert r.status_code == 400
    assert "not in your team's subtree" in error_attrs(r)["changes.0.name"]
    parent = [{"op": "update", "kind": "queue", "name": "research", "spec": {"weight": 3}}]
    assert "changes.0.name" in error_attrs(file(clients["nlp-lead"], parent))
    assert ChangeRequest.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"op": "delete", "kind": "queue", "name": "nlp"}, "changes.0.op", "update a queue or create one"),
        ({"op": "update", "kind": "node", "name": "gpu-01"}, "changes.0.kind", "a queue or a quota_group"),
        ({"op": "update", "kind": "queue", "name": "nlp", "spec": {"parent": "vision"}}, "changes.0.spec.parent", ""),
        ({"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {GPU: "lots"}}}, None, ""),
        ({"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {GPU: "9"}}}, None, "deserved"),
        (
            {
                "op": "update",
                "kind": "queue",
                "name": "nlp",
                "spec": {"user_limits": [{"user": "ann", "max_jobs": -1}]},
            },
            None,
            "max_jobs",
        ),
    ],
)
def test_an_invalid_request_is_refused_naming_the_field(
    clients: dict[str, Any], change: dict[str, Any], field: str | None, words: str
) -> None:
    r = file(clients["nlp-lead"], [change])
    assert r.status_code == 400, r.content
    attrs = error_attrs(r)
    found = field if field is not None else next(iter(attrs))
    assert found in attrs and found.startswith("changes.0"), attrs
    assert words in attrs[found]
    assert ChangeRequest.objects.count() == 0


def test_the_requester_cannot_approve_its_own_request_even_as_admin(clients: dict[str, Any]) -> None:
    mine = file(clients["nlp-lead"]).json()
    r = clients["nlp-lead"].post(f"{BASE}{mine['id']}/approve/", {}, format="json")
    assert r.status_code == 403
    theirs = file(clients["admin"]).json()
    assert clients["admin"].post(f"{BASE}{theirs['id']}/approve/", {}, format="json").status_code == 403
    assert gpus(Queue, "nlp", "guarantee") == 2


def test_another_departments_lead_and_a_sibling_team_cannot_approve(clients: dict[str, Any]) -> None:
    mine = file(clients["nlp-lead"]).json()
    # the other department's lead does not even see it; the sibling team's lead neither
    assert clients["operations-lead"].post(f"{BASE}{mine['id']}/approve/", {}, format="json").status_code == 404
    assert (
        clients["vision-lead"].post(f"{BASE}{mine['id']}/reject/", {"comment": "no"}, format="json").status_code == 404
    )
    assert clients["operations-lead"].get(BASE).json()["results"] == []
    assert ChangeRequest.objects.get().status == "open" and gpus(Queue, "nlp", "guarantee") == 2


def test_a_teammate_cannot_approve(clients: dict[str, Any], people: dict[str, Any], api: Any) -> None:
    from django.contrib.auth.models import Group

    mate = type(people["admin"]).objects.create_user("nlp-second", password="pw")
    mate.groups.add(Group.objects.get(name="nlp"))
    mine = file(clients["nlp-lead"]).json()
    r = api(mate).post(f"{BASE}{mine['id']}/approve/", {}, format="json")
    assert r.status_code == 404  # may not review, so does not see it


def test_the_tree_moved_so_the_request_no_longer_fits_it_goes_stale(clients: dict[str, Any]) -> None:
    filed = file(clients["nlp-lead"]).json()
    # meanwhile an admin gives vision 4 GPUs of guarantee: nlp's 6 no longer fits in research's 8
    tree_services.save_queue(Queue.objects.get(name="vision"), {"guarantee": ResourceList({GPU: 4000})})
    mail.outbox.clear()
    r = clients["research-lead"].post(f"{BASE}{filed['id']}/approve/", {"comment": "sure"}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["status"] == "stale"
    assert "no longer passes the rules" in body["outcome"] and "guarantee" in body["outcome"]
    assert gpus(Queue, "nlp", "guarantee") == 2 and gpus(QuotaGroup, "nlp", "min") == 2  # nothing written
    assert [m.to for m in mail.outbox] == [["nlp-lead@example.org"]] and "stale" in mail.outbox[0].body


def test_a_field_the_request_changes_changed_meanwhile_it_goes_stale(clients: dict[str, Any]) -> None:
    filed = file(clients["nlp-lead"]).json()
    tree_services.save_queue(Queue.objects.get(name="nlp"), {"guarantee": ResourceList({GPU: 3000})})
    body = clients["admin"].post(f"{BASE}{filed['id']}/approve/", {}, format="json").json()
    assert body["status"] == "stale"
    assert f"guarantee of queue nlp was {GPU} 2 when the request was filed and is {GPU} 3 now" in body["outcome"]
    assert gpus(Queue, "nlp", "guarantee") == 3 and gpus(QuotaGroup, "nlp", "min") == 2


def test_an_unrelated_change_is_no_reason_to_refuse(clients: dict[str, Any]) -> None:
    filed = file(clients["nlp-lead"]).json()
    tree_services.save_queue(Queue.objects.get(name="nlp"), {"weight": 5})  # nlp's version moves, not its guarantee
    body = clients["research-lead"].post(f"{BASE}{filed['id']}/approve/", {}, format="json").json()
    assert body["status"] == "applied"
    nlp = Queue.objects.get(name="nlp")
    assert nlp.weight == 5 and gpus(Queue, "nlp", "guarantee") == 6


def test_a_request_the_parent_has_no_room_for_waits_for_the_approver_to_make_room(clients: dict[str, Any]) -> None:
    changes = [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {GPU: "8"}}}]
    r = file(clients["nlp-lead"], changes)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["needs_room"] and "guarantee" in body["needs_room"][0]["message"]
    # approving it as it is: 400, it stays open
    r = clients["research-lead"].post(f"{BASE}{body['id']}/approve/", {}, format="json")
    assert r.status_code == 400 and ChangeRequest.objects.get().status == "open"
    # the department lead makes room from vision, within its own subtree
    # (the room first: each change is checked on the tree the ones before it leave)
    amended = [{"op": "update", "kind": "queue", "name": "vision", "spec": {"guarantee": {}}}, *copy.deepcopy(changes)]
    r = clients["research-lead"].post(f"{BASE}{body['id']}/approve/", {"changes": amended}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "applied" and "amended by the approver" in r.json()["outcome"]
    assert gpus(Queue, "nlp", "guarantee") == 8 and gpus(Queue, "vision", "guarantee") == 0
    # an amendment may not reach above the approver: research itself is the admins' to change
    filed = file(clients["nlp-lead"], [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 2}}]).json()
    above = [{"op": "update", "kind": "queue", "name": "research", "spec": {"weight": 9}}]
    r = clients["research-lead"].post(f"{BASE}{filed['id']}/approve/", {"changes": above}, format="json")
    assert r.status_code == 403 and Queue.objects.get(name="research").weight == 1


def test_a_new_child_queue(clients: dict[str, Any]) -> None:
    changes = [
        {
            "op": "create",
            "kind": "queue",
            "name": "nlp-interns",
            "spec": {"name": "nlp-interns", "parent": "nlp", "deserved": {"cpu": "4"}, "weight": 2},
        }
    ]
    body = file(clients["nlp-lead"], changes).json()
    assert body["whatif"]["values"]["queues"]["nlp-interns"] == {"added": True}
    done = clients["research-lead"].post(f"{BASE}{body['id']}/approve/", {}, format="json").json()
    assert done["status"] == "applied"
    assert Queue.objects.get(name="nlp-interns").parent.name == "nlp"
    record = Queue.history.get(name="nlp-interns")
    assert "approved by research-lead" in record.history_change_reason


def test_reject_and_withdraw(clients: dict[str, Any]) -> None:
    one = file(clients["nlp-lead"]).json()
    r = clients["research-lead"].post(f"{BASE}{one['id']}/reject/", {}, format="json")
    assert r.status_code == 400 and "comment" in error_attrs(r)
    mail.outbox.clear()
    r = clients["research-lead"].post(f"{BASE}{one['id']}/reject/", {"comment": "not this quarter"}, format="json")
    assert r.json()["status"] == "rejected" and "not this quarter" in mail.outbox[0].body
    two = file(clients["nlp-lead"]).json()
    assert clients["research-lead"].post(f"{BASE}{two['id']}/withdraw/", {}, format="json").status_code == 403
    r = clients["nlp-lead"].post(f"{BASE}{two['id']}/withdraw/", {"comment": "found GPUs"}, format="json")
    assert r.json()["status"] == "withdrawn"
    assert gpus(Queue, "nlp", "guarantee") == 2
    statuses = {x["status"] for x in clients["nlp-lead"].get(BASE, {"mine": "true"}).json()["results"]}
    assert statuses == {"rejected", "withdrawn"}
    assert clients["nlp-lead"].get(BASE, {"status": "rejected"}).json()["count"] == 1


def test_anonymous_and_teamless_users_are_refused(api: Any, people: dict[str, Any], make_user: Any) -> None:
    assert api(None).get(BASE).status_code == 401
    assert api(make_user("nobody")).post(BASE, {"changes": NLP_PLUS_4}, format="json").status_code == 403


@pytest.mark.parametrize(
    "body",
    [
        {"changes": [{"op": "create", "kind": "queue", "spec": {"name": 5}}]},
        {"changes": [{"op": "create", "kind": "queue", "spec": {"name": "x", "parent": 3}}]},
        {"changes": [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": "heavy"}}]},
        {"changes": [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": 5}}]},
        {"changes": [{"op": "update", "kind": "queue", "name": "ghost", "spec": {"weight": 2}}]},
        {"changes": [{"op": "update", "kind": "quota_group", "name": "nlp", "spec": {"is_parent": "yes"}}]},
        {"changes": [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 2}}], "cluster": "nowhere"},
        {"changes": []},
        {"changes": "everything"},
    ],
)
def test_odd_bodies_are_4xx_never_5xx(clients: dict[str, Any], body: dict[str, Any]) -> None:
    r = clients["nlp-lead"].post(BASE, body, format="json")
    assert r.status_code == 400, r.content
    assert ChangeRequest.objects.count() == 0


def test_odd_addresses_and_amendments(clients: dict[str, Any]) -> None:
    assert clients["research-lead"].post(f"{BASE}abc/approve/", {}, format="json").status_code == 404
    filed = file(clients["nlp-lead"]).json()
    r = clients["research-lead"].post(f"{BASE}{filed['id']}/approve/", {"changes": [{"op": "x"}]}, format="json")
    assert r.status_code == 400 and ChangeRequest.objects.get().status == "open"
