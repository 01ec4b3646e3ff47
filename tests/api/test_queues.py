"""/api/v1/queues/: the queue tree through the API, its rules, actions, ETags and atomicity."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def make_tree(admin_api: Any) -> None:
    """root -> eng (deserved 8 cpu) -> {team-a, team-b}; team-a -> {a-batch}."""
    for body in (
        {
            "name": "eng",
            "weight": 2,
            "deserved": {"cpu": "8", "memory": "16Gi"},
            "guarantee": {"cpu": "2", "memory": "4Gi"},
            "capability": {"cpu": "12", "memory": "24Gi"},
        },
        {
            "name": "team-a",
            "parent": "eng",
            "deserved": {"cpu": "5", "memory": "8Gi"},
            "guarantee": {"cpu": "1", "memory": "2Gi"},
        },
        {
            "name": "team-b",
            "parent": "eng",
            "deserved": {"cpu": "3", "memory": "8Gi"},
            "guarantee": {"cpu": "1", "memory": "2Gi"},
        },
        {"name": "a-batch", "parent": "team-a", "deserved": {"cpu": "2", "memory": "4Gi"}},
    ):
        r = admin_api.post("/api/v1/queues/", body, format="json")
        assert r.status_code == 201, r.json()


def test_create_three_level_tree_and_read_it_nested(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.get("/api/v1/queues/eng/")
    assert r.status_code == 200
    body = r.json()
    assert body["parent"] == "root" and body["weight"] == 2 and body["state"] == "Open"
    assert body["deserved"] == {"cpu": "8", "memory": "16Gi"}
    assert sorted(body["children"]) == ["team-a", "team-b"]
    assert r["ETag"]
    tree = admin_api.get("/api/v1/queues/tree/").json()
    assert [n["name"] for n in tree] == ["root"]
    root = tree[0]
    assert [c["name"] for c in root["children"]] == ["default", "eng"]
    eng = root["children"][1]
    assert [c["name"] for c in eng["children"]] == ["team-a", "team-b"]
    assert eng["children"][0]["children"][0]["name"] == "a-batch"


def test_list_is_paginated_ordered_and_filterable(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.get("/api/v1/queues/?limit=2")
    body = r.json()
    assert body["count"] == 6 and len(body["results"]) == 2 and body["next"]
    assert [q["name"] for q in body["results"]] == ["a-batch", "default"]
    names = [q["name"] for q in admin_api.get("/api/v1/queues/?parent=eng").json()["results"]]
    assert names == ["team-a", "team-b"]
    leaves = [q["name"] for q in admin_api.get("/api/v1/queues/?leaf=true").json()["results"]]
    assert leaves == ["a-batch", "default", "team-b"]
    by_weight = [q["name"] for q in admin_api.get("/api/v1/queues/?ordering=-weight,name").json()["results"]]
    assert by_weight[0] == "eng"


@pytest.mark.parametrize(
    ("body", "attr", "needle"),
    [
        ({"name": "q", "capability": {"cpu": "abc"}}, "capability.cpu", "not a valid quantity"),
        ({"name": "q", "capability": {"cpu": "-1"}}, "capability.cpu", "greater than or equal to 0"),
        ({"name": "q", "deserved": {"memory": "1e40"}}, "deserved.memory", "too large"),
        ({"name": "q", "guarantee": "lots"}, "guarantee", "expected an object"),
        ({"name": "q", "weight": "heavy"}, "weight", "valid integer"),
        ({"name": "q", "weight": 0}, "weight", "greater than or equal to 1"),
        ({"name": "q", "weight": 70000}, "weight", "less than or equal to 65535"),
        ({"name": "q", "priority": -1}, "priority", "greater than or equal to 0"),
        ({"name": "q", "parent": "nowhere"}, "parent", "does not exist"),
        ({"name": "Q_upper"}, "name", "lower case"),
        ({"name": "équipe"}, "name", "non-ascii"),
        ({"name": "x" * 64}, "name", "63"),
        ({"name": ""}, "name", "blank"),
        ({"weight": 2}, "name", "required"),
        ({"name": "q", "deserved": {"cpu": "2"}, "capability": {"cpu": "1"}}, "deserved.cpu", "capability"),
        ({"name": "q", "guarantee": {"cpu": "2"}, "deserved": {"cpu": "1"}}, "deserved.cpu", "guarantee"),
        ({"name": "q", "reclaimable": "perhaps"}, "reclaimable", "valid boolean"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(admin_api: Any, body: dict, attr: str, needle: str) -> None:
    before = Queue.objects.count()
    r = admin_api.post("/api/v1/queues/", body, format="json")
    assert r.status_code == 400, r.json()
    errors = error_attrs(r)
    assert attr in errors, errors
    assert needle.lower() in errors[attr].lower(), errors
    assert Queue.objects.count() == before


def test_not_json_and_wrong_shapes_are_400(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/queues/", "not json", content_type="application/json")
    assert r.status_code == 400
    r = admin_api.post("/api/v1/queues/", ["a", "list"], format="json")
    assert r.status_code == 400


def test_duplicate_name_is_refused(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.post("/api/v1/queues/", {"name": "eng"}, format="json")
    assert r.status_code == 400 and "name" in error_attrs(r)


def test_cycle_and_self_parent_are_refused(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.patch("/api/v1/queues/eng/", {"parent": "a-batch"}, format="json")
    assert r.status_code == 400
    assert "parent" in error_attrs(r)
    r = admin_api.patch("/api/v1/queues/eng/", {"parent": "eng"}, format="json")
    assert r.status_code == 400 and "parent" in error_attrs(r)
    assert Queue.objects.get(name="eng").parent.name == "root"


def test_children_sums_and_capability_are_checked(admin_api: Any) -> None:
    make_tree(admin_api)
    # deserved of eng's children would be 5 + 4 > 8
    r = admin_api.patch("/api/v1/queues/team-b/", {"deserved": {"cpu": "4", "memory": "8Gi"}}, format="json")
    assert r.status_code == 400
    assert any(a.startswith("deserved") for a in error_attrs(r)), error_attrs(r)
    # a child's capability above its ancestor's
    r = admin_api.post("/api/v1/queues/", {"name": "big", "parent": "eng", "capability": {"cpu": "20"}}, format="json")
    assert r.status_code == 400 and any(a.startswith("capability") for a in error_attrs(r))


def test_a_queue_with_podgroups_cannot_become_a_parent(admin_api: Any) -> None:
    make_tree(admin_api)
    admin_api.post("/api/v1/namespaces/", {"name": "ns1"}, format="json")
    r = admin_api.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "j1", "queue": "team-b"}, format="json")
    assert r.status_code == 201, r.json()
    r = admin_api.post("/api/v1/queues/", {"name": "under-b", "parent": "team-b"}, format="json")
    assert r.status_code == 400 and "parent" in error_attrs(r)


def test_root_and_default_are_protected(admin_api: Any) -> None:
    assert admin_api.delete("/api/v1/queues/root/").status_code == 400
    assert admin_api.delete("/api/v1/queues/default/").status_code == 400
    r = admin_api.patch("/api/v1/queues/root/", {"capability": {"cpu": "4"}}, format="json")
    assert r.status_code == 400
    r = admin_api.post("/api/v1/queues/root/close/")
    assert r.status_code == 400
    assert Queue.objects.get(name="root").state == "Open"


def test_delete_parent_needs_cascade_and_podgroups_need_force(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.delete("/api/v1/queues/team-a/")
    assert r.status_code == 400 and "a-batch" in str(r.json())
    admin_api.post("/api/v1/namespaces/", {"name": "ns1"}, format="json")
    assert (
        admin_api.post(
            "/api/v1/podgroups/", {"namespace": "ns1", "name": "j", "queue": "a-batch"}, format="json"
        ).status_code
        == 201
    )
    r = admin_api.delete("/api/v1/queues/team-a/?cascade=true")
    assert r.status_code == 400 and "force" in str(r.json()).lower()
    assert Queue.objects.filter(name="a-batch").exists()
    r = admin_api.delete("/api/v1/queues/team-a/?cascade=true&force=true")
    assert r.status_code == 204
    assert not Queue.objects.filter(name__in=["team-a", "a-batch"]).exists()
    from scheduling.models import PodGroup

    assert not PodGroup.objects.filter(name="j").exists()
    assert admin_api.delete("/api/v1/queues/team-b/?cascade=maybe").status_code == 400


def test_close_and_open_follow_the_hierarchy(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.post("/api/v1/queues/eng/close/")
    assert r.status_code == 200, r.json()
    states = dict(Queue.objects.values_list("name", "state"))
    assert states["eng"] == states["team-a"] == states["team-b"] == states["a-batch"] == "Closed"
    assert Queue.objects.get(name="team-b").closed_by_parent
    r = admin_api.post("/api/v1/queues/team-b/open/")
    assert r.status_code == 400 and "parent" in str(r.json()).lower()
    r = admin_api.post("/api/v1/queues/eng/open/")
    assert r.status_code == 200
    states = dict(Queue.objects.values_list("name", "state"))
    assert states["eng"] == states["team-a"] == states["team-b"] == states["a-batch"] == "Open"
    assert not Queue.objects.get(name="team-b").closed_by_parent


def test_a_queue_with_podgroups_is_closing_until_they_are_gone(admin_api: Any) -> None:
    make_tree(admin_api)
    admin_api.post("/api/v1/namespaces/", {"name": "ns1"}, format="json")
    pg = admin_api.post(
        "/api/v1/podgroups/", {"namespace": "ns1", "name": "j", "queue": "team-b"}, format="json"
    ).json()
    admin_api.post("/api/v1/queues/team-b/close/")
    assert Queue.objects.get(name="team-b").state == "Closing"
    r = admin_api.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "j2", "queue": "team-b"}, format="json")
    assert r.status_code == 400 and "queue" in error_attrs(r)
    assert admin_api.delete(f"/api/v1/podgroups/{pg['id']}/").status_code == 204
    assert Queue.objects.get(name="team-b").state == "Closed"


def test_status_counts_podgroups_per_phase(admin_api: Any) -> None:
    make_tree(admin_api)
    admin_api.post("/api/v1/namespaces/", {"name": "ns1"}, format="json")
    for i in range(3):
        admin_api.post("/api/v1/podgroups/", {"namespace": "ns1", "name": f"j{i}", "queue": "team-b"}, format="json")
    from scheduling.models import PodGroup

    PodGroup.objects.filter(name="j0").update(phase="Running")
    status = admin_api.get("/api/v1/queues/team-b/").json()["status"]
    assert status == {"pending": 2, "inqueue": 0, "running": 1, "unknown": 0, "completed": 0}
    listed = {q["name"]: q["status"] for q in admin_api.get("/api/v1/queues/").json()["results"]}
    assert listed["team-b"]["pending"] == 2


def test_etag_and_if_match(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.get("/api/v1/queues/team-b/")
    etag = r["ETag"]
    r = admin_api.patch("/api/v1/queues/team-b/", {"weight": 3}, format="json", HTTP_IF_MATCH=etag)
    assert r.status_code == 200 and r["ETag"] != etag
    r = admin_api.patch("/api/v1/queues/team-b/", {"weight": 4}, format="json", HTTP_IF_MATCH=etag)
    assert r.status_code == 412
    assert r.json()["errors"][0]["code"] == "precondition_failed"
    assert Queue.objects.get(name="team-b").weight == 3
    r = admin_api.delete("/api/v1/queues/team-b/", HTTP_IF_MATCH=etag)
    assert r.status_code == 412 and Queue.objects.filter(name="team-b").exists()


def test_rename_and_move_keep_the_tree_consistent(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.patch("/api/v1/queues/a-batch/", {"parent": "team-b", "deserved": {"cpu": "0"}}, format="json")
    assert r.status_code == 200, r.json()
    assert Queue.objects.get(name="a-batch").parent.name == "team-b"
    r = admin_api.patch("/api/v1/queues/team-b/", {"name": "team-bee"}, format="json")
    assert r.status_code == 200, r.json()
    assert Queue.objects.get(name="a-batch").parent.name == "team-bee"


def test_history_records_who_changed_what(admin_api: Any) -> None:
    make_tree(admin_api)
    admin_api.patch("/api/v1/queues/team-b/", {"weight": 7}, format="json")
    history = Queue.objects.get(name="team-b").history.order_by("history_date")
    assert [h.weight for h in history] == [1, 7]
    assert history.last().history_user.username == "admin"
