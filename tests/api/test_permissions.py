"""Who may do what: admin, a team member of this subtree, a team member elsewhere, a user in no team, anonymous."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from quotas.models import Queue, QuotaGroup
from tests.conftest import ensure_migrated_rows, token_client, user_token

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _tokens(module_db: Any) -> dict[str, str | None]:
    """The trees and users of ``setup``, built once for the module (each test runs in a transaction of its own)."""

    def build() -> dict[str, str | None]:
        ensure_migrated_rows()
        admin = user_token("admin", staff=True)
        a = token_client(admin)
        for body in (
            {"name": "dept-a"},
            {"name": "team-a1", "parent": "dept-a"},
            {"name": "team-a2", "parent": "dept-a"},
            {"name": "dept-b"},
            {"name": "team-b", "parent": "dept-b"},
        ):
            assert a.post("/api/v1/queues/", body, format="json").status_code == 201
        for body in (
            {"name": "g-dept-a", "is_parent": True, "min": {"cpu": "4"}, "max": {"cpu": "8"}},
            {"name": "g-team-a1", "parent": "g-dept-a", "min": {"cpu": "2"}, "max": {"cpu": "8"}},
            {"name": "g-team-b", "min": {"cpu": "2"}, "max": {"cpu": "8"}},
        ):
            assert a.post("/api/v1/quota-groups/", body, format="json").status_code == 201, body
        namespace = {"name": "ns-a", "default_queue": "team-a1", "quota_group": "g-team-a1"}
        a.post("/api/v1/namespaces/", namespace, format="json")
        namespace = {"name": "ns-b", "default_queue": "team-b", "quota_group": "g-team-b"}
        a.post("/api/v1/namespaces/", namespace, format="json")
        a.post("/api/v1/podgroups/", {"namespace": "ns-b", "name": "b-job"}, format="json")
        team_a, team_b = Group.objects.create(name="team-a"), Group.objects.create(name="team-b")
        Queue.objects.get(name="dept-a").teams.add(team_a)
        QuotaGroup.objects.get(name="g-dept-a").teams.add(team_a)
        Queue.objects.get(name="team-b").teams.add(team_b)
        return {
            "admin": admin,
            "member": user_token("alice", groups=("team-a",)),
            "elsewhere": user_token("bob", groups=("team-b",)),
            "nobody": user_token("carol"),
            "anonymous": None,
        }

    return module_db(build)


@pytest.fixture
def setup(_tokens: dict[str, str | None], db: Any) -> dict[str, Any]:
    """Queues dept-a/{team-a1, team-a2} and dept-b/team-b; quota groups likewise; team 'a' owns dept-a. A client for
    each role: admin, member (team a), elsewhere (team b), nobody (no team), anonymous."""
    return {who: token_client(token) for who, token in _tokens.items()}


READS = [
    "/api/v1/queues/",
    "/api/v1/quota-groups/",
    "/api/v1/namespaces/",
    "/api/v1/nodes/",
    "/api/v1/podgroups/",
    "/api/v1/pods/",
    "/api/v1/clusters/",
    "/api/v1/queues/tree/",
    "/api/v1/quota-groups/tree/",
]


@pytest.mark.parametrize("url", READS)
def test_read_matrix(setup: dict[str, Any], url: str) -> None:
    assert setup["admin"].get(url).status_code == 200
    assert setup["member"].get(url).status_code == 200
    assert setup["elsewhere"].get(url).status_code == 200
    assert setup["nobody"].get(url).status_code == 403
    assert setup["anonymous"].get(url).status_code == 401


def _names(resp: Any) -> list[str]:
    body = resp.json()
    return sorted(x["name"] for x in (body["results"] if isinstance(body, dict) else body))


def test_team_members_see_only_their_subtree(setup: dict[str, Any]) -> None:
    assert _names(setup["member"].get("/api/v1/queues/")) == ["dept-a", "team-a1", "team-a2"]
    assert _names(setup["elsewhere"].get("/api/v1/queues/")) == ["team-b"]
    assert _names(setup["member"].get("/api/v1/quota-groups/")) == ["g-dept-a", "g-team-a1"]
    assert _names(setup["member"].get("/api/v1/namespaces/")) == ["ns-a"]
    tree = setup["member"].get("/api/v1/queues/tree/").json()
    assert [n["name"] for n in tree] == ["dept-a"]
    assert setup["member"].get("/api/v1/queues/team-b/").status_code == 404
    assert setup["member"].get("/api/v1/podgroups/").json()["count"] == 0
    assert setup["elsewhere"].get("/api/v1/podgroups/").json()["count"] == 1


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("post", "/api/v1/queues/", {"name": "new"}),
        ("patch", "/api/v1/queues/team-a1/", {"weight": 3}),
        ("delete", "/api/v1/queues/team-a2/", None),
        ("post", "/api/v1/queues/team-a1/close/", None),
        ("post", "/api/v1/quota-groups/", {"name": "g-new"}),
        ("patch", "/api/v1/namespaces/ns-a/", {"weight": 9}),
        ("post", "/api/v1/nodes/", {"name": "n9"}),
        ("post", "/api/v1/clusters/", {"name": "c2"}),
    ],
)
def test_only_admins_change_the_trees(setup: dict[str, Any], method: str, url: str, body: Any) -> None:
    for who, expected in (("member", 403), ("elsewhere", 403), ("nobody", 403), ("anonymous", 401)):
        r = getattr(setup[who], method)(url, body, format="json")
        assert r.status_code == expected, (who, r.status_code, r.content)
    assert Queue.objects.get(name="team-a1").weight == 1 and Queue.objects.get(name="team-a1").state == "Open"
    r = getattr(setup["admin"], method)(url, body, format="json")
    assert r.status_code in (200, 201, 204), r.content


def test_team_members_submit_jobs_to_their_leaf_queues_only(setup: dict[str, Any]) -> None:
    member = setup["member"]
    r = member.post("/api/v1/podgroups/", {"namespace": "ns-a", "name": "mine", "queue": "team-a2"}, format="json")
    assert r.status_code == 201, r.json()
    r = member.post("/api/v1/podgroups/", {"namespace": "ns-a", "name": "theirs", "queue": "team-b"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["attr"] == "queue"
    r = member.post("/api/v1/podgroups/", {"namespace": "ns-a", "name": "top", "queue": "dept-a"}, format="json")
    assert r.status_code == 400
    r = member.post(
        "/api/v1/pods/", {"namespace": "ns-a", "name": "p0", "podgroup": "mine", "request": {"cpu": "1"}}, format="json"
    )
    assert r.status_code == 201, r.json()
    assert (
        setup["nobody"].post("/api/v1/podgroups/", {"namespace": "ns-a", "name": "x"}, format="json").status_code == 403
    )
    b_job = setup["elsewhere"].get("/api/v1/podgroups/").json()["results"][0]
    assert member.delete(f"/api/v1/podgroups/{b_job['id']}/").status_code == 404
