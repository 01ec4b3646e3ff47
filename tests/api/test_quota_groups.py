"""/api/v1/quota-groups/: elastic quota trees through the API and their rules."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace, QuotaGroup
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def make_tree(admin_api: Any) -> None:
    """root -> dept (parent, min 10 cpu) -> {team-a min 6, team-b min 4}."""
    for body in (
        {
            "name": "dept",
            "is_parent": True,
            "min": {"cpu": "10", "memory": "20Gi"},
            "max": {"cpu": "40", "memory": "80Gi"},
        },
        {
            "name": "team-a",
            "parent": "dept",
            "min": {"cpu": "6", "memory": "12Gi"},
            "max": {"cpu": "20", "memory": "40Gi"},
            "namespaces": ["team-a-prod", "team-a-dev"],
        },
        {
            "name": "team-b",
            "parent": "dept",
            "min": {"cpu": "4", "memory": "8Gi"},
            "max": {"cpu": "20", "memory": "40Gi"},
            "shared_weight": {"cpu": "3"},
        },
    ):
        r = admin_api.post("/api/v1/quota-groups/", body, format="json")
        assert r.status_code == 201, r.json()


def test_create_tree_with_defaults(admin_api: Any) -> None:
    make_tree(admin_api)
    a = admin_api.get("/api/v1/quota-groups/team-a/").json()
    assert a["parent"] == "dept" and a["is_parent"] is False and a["allow_lent"] is True
    assert a["shared_weight"] == {"cpu": "20", "memory": "40Gi"}  # defaults to max
    assert a["namespaces"] == ["team-a-dev", "team-a-prod"]
    b = admin_api.get("/api/v1/quota-groups/team-b/").json()
    assert b["shared_weight"] == {"cpu": "3", "memory": "40Gi"}  # normalised to max's keys
    assert Namespace.objects.get(name="team-a-prod").quota_group.name == "team-a"
    tree = admin_api.get("/api/v1/quota-groups/tree/").json()
    root = tree[0]
    assert root["name"] == "root"
    assert [c["name"] for c in root["children"]] == ["default", "dept", "system"]
    dept = root["children"][1]
    assert [c["name"] for c in dept["children"]] == ["team-a", "team-b"]


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({"name": "g", "min": {"cpu": "-1"}, "max": {"cpu": "2"}}, "min.cpu"),
        ({"name": "g", "min": {"cpu": "3"}, "max": {"cpu": "2"}}, "min.cpu"),
        ({"name": "g", "min": {"memory": "1Gi"}, "max": {"cpu": "2"}}, "min.memory"),
        ({"name": "g", "max": {"cpu": "lots"}}, "max.cpu"),
        ({"name": "g", "parent": "missing"}, "parent"),
        ({"name": "g", "parent": "team-a"}, "parent"),  # team-a is not a parent group
        ({"name": "g", "parent": "dept", "min": {"cpu": "1"}, "max": {"cpu": "2"}}, "min.cpu"),  # siblings' sum
        ({"name": "Bad Name"}, "name"),
        ({"name": "g", "namespaces": ["team-a-prod"]}, "namespaces"),  # already bound to team-a
        ({"name": "g", "is_parent": "maybe"}, "is_parent"),
    ],
)
def test_invalid_groups_are_refused(admin_api: Any, body: dict, attr: str) -> None:
    make_tree(admin_api)
    before = QuotaGroup.objects.count()
    r = admin_api.post("/api/v1/quota-groups/", body, format="json")
    assert r.status_code == 400, r.json()
    assert attr in error_attrs(r), error_attrs(r)
    assert QuotaGroup.objects.count() == before
    assert Namespace.objects.get(name="team-a-prod").quota_group.name == "team-a"


def test_reparenting_into_own_subtree_is_a_cycle(admin_api: Any) -> None:
    make_tree(admin_api)
    admin_api.post("/api/v1/quota-groups/", {"name": "sub", "parent": "dept", "is_parent": True}, format="json")
    r = admin_api.patch("/api/v1/quota-groups/dept/", {"parent": "sub"}, format="json")
    assert r.status_code == 400
    assert "cycle" in str(r.json()).lower()
    assert QuotaGroup.objects.get(name="dept").parent.name == "root"


def test_is_parent_cannot_flip_with_children_or_pods(admin_api: Any) -> None:
    make_tree(admin_api)
    r = admin_api.patch("/api/v1/quota-groups/dept/", {"is_parent": False}, format="json")
    assert r.status_code == 400 and "is_parent" in error_attrs(r)


def test_builtins_are_protected_and_delete_needs_an_empty_group(admin_api: Any) -> None:
    make_tree(admin_api)
    for name in ("root", "system", "default"):
        assert admin_api.delete(f"/api/v1/quota-groups/{name}/").status_code == 400
    assert admin_api.patch("/api/v1/quota-groups/system/", {"max": {"cpu": "1"}}, format="json").status_code == 400
    r = admin_api.delete("/api/v1/quota-groups/dept/")
    assert r.status_code == 400 and "team-a" in str(r.json())
    assert admin_api.delete("/api/v1/quota-groups/team-b/").status_code == 204
    assert not QuotaGroup.objects.filter(name="team-b").exists()


def test_etag_on_quota_groups(admin_api: Any) -> None:
    make_tree(admin_api)
    etag = admin_api.get("/api/v1/quota-groups/team-a/")["ETag"]
    assert (
        admin_api.patch(
            "/api/v1/quota-groups/team-a/", {"allow_lent": False}, format="json", HTTP_IF_MATCH=etag
        ).status_code
        == 200
    )
    assert (
        admin_api.patch(
            "/api/v1/quota-groups/team-a/", {"allow_lent": True}, format="json", HTTP_IF_MATCH=etag
        ).status_code
        == 412
    )
