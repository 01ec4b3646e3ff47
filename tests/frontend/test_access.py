"""Who may open which page: anonymous users go to the login page, team members see only their subtrees, only
admins edit (the same matrix as the API's, ``quotas/access.py``)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from quotas.models import Namespace, Queue
from tests.conftest import ensure_migrated_rows
from tests.frontend import builders as b
from tests.frontend.conftest import build_lending, login

READ_PAGES = [
    "/",
    "/overview/",
    "/trees/queues/",
    "/trees/quotas/",
    "/queues/xq/",
    "/quotas/x/",
    "/team/",
    "/history/",
    "/history/queues/xq/",
]
EDIT_PAGES = ["/edit/", "/edit/queues/xq/", "/edit/new/queue/", "/edit/quotas/x/", "/edit/new/quota/", "/whatif/"]


@pytest.fixture(scope="module")
def _lending(module_db: Any) -> None:
    """``lending`` built once for the module (each test runs in a transaction of its own)."""

    def build() -> None:
        ensure_migrated_rows()
        build_lending()

    module_db(build)


@pytest.fixture
def lending(_lending: None, db: Any) -> None:
    """The two-group lending example plus a team for each side (x-team: lead-x; y-team: lead-y)."""


@pytest.mark.parametrize("path", READ_PAGES + EDIT_PAGES)
def test_anonymous_users_are_sent_to_the_login_page(client: Any, lending: None, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_the_login_page_logs_in_and_lands_on_the_start_page(client: Any, lending: None) -> None:
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b'name="username"' in page.content
    wrong = client.post("/accounts/login/", {"username": "lead-x", "password": "nope"})
    assert wrong.status_code == 200 and b"did not match" in wrong.content
    response = client.post("/accounts/login/", {"username": "lead-x", "password": b.PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/" and response.context["team"].name == "x-team"


@pytest.mark.parametrize("path", ["/", "/overview/", "/trees/queues/", "/team/", "/edit/"])
def test_users_without_a_team_are_refused(client: Any, lending: None, path: str) -> None:
    b.user("drifter")
    response = login(client, "drifter").get(path)
    assert response.status_code == 403
    assert b"not linked to any team" in response.content or b"Only admins" in response.content


def test_a_team_member_lands_on_the_team_page(client: Any, lending: None) -> None:
    start = login(client, "lead-x").get("/")
    assert start.status_code == 200 and start.context["team"].name == "x-team"
    html = start.content.decode()
    # the other team's queue named nowhere: as a word (the page's random CSRF token may hold the letters "yq")
    assert "Team x-team" in html and not re.search(r"(?<![A-Za-z0-9])yq(?![A-Za-z0-9])", html)
    assert [url for url, _ in client.get("/team/", follow=True).redirect_chain] == ["/team/x-team/"]


def test_a_member_of_several_teams_picks_one(client: Any, lending: None) -> None:
    b.user("both", teams=["x-team", "y-team"])
    page = login(client, "both").get("/")
    assert page.status_code == 200 and [t.name for t in page.context["teams"]] == ["x-team", "y-team"]


def test_an_admin_lands_on_the_overview(admin_client: Any, lending: None) -> None:
    response = admin_client.get("/")
    assert response.status_code == 200 and response.context["nav"] == "overview"


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/queues/xq/", 200),
        ("/quotas/x/", 200),
        ("/queues/yq/", 404),
        ("/quotas/y/", 404),
        ("/queues/root/", 404),
        ("/history/queues/xq/", 200),
        ("/history/queues/yq/", 404),
        ("/history/namespaces/x-ns/", 404),
        ("/team/x-team/", 200),
        ("/team/y-team/", 404),
    ],
)
def test_a_team_member_reads_only_their_subtree(client: Any, lending: None, path: str, status: int) -> None:
    assert login(client, "lead-x").get(path).status_code == status


def test_the_tree_pages_of_a_team_member_list_only_their_nodes(client: Any, lending: None) -> None:
    login(client, "lead-x")
    queues = client.get("/trees/queues/").context["rows"]
    groups = client.get("/trees/quotas/").context["rows"]
    assert [r["name"] for r in queues] == ["xq"]
    assert [r["name"] for r in groups] == ["x"]
    waiting = client.get("/overview/").context["waiting"]
    assert {j["queue"] for j in waiting} == {"xq"}


def test_admins_see_every_node(admin_client: Any, lending: None) -> None:
    names = {r["name"] for r in admin_client.get("/trees/queues/").context["rows"]}
    assert names == {"root", "default", "xq", "yq"}
    assert admin_client.get("/queues/yq/").status_code == 200


@pytest.mark.parametrize("path", EDIT_PAGES)
def test_a_team_member_cannot_open_the_editor(client: Any, lending: None, path: str) -> None:
    response = login(client, "lead-x").get(path)
    assert response.status_code == 403
    assert b"Only admins can change the trees" in response.content


def test_a_team_member_cannot_write(client: Any, lending: None) -> None:
    login(client, "lead-x")
    xq = Queue.objects.get(name="xq")
    ns = Namespace.objects.get(name="x-ns")
    posts = [
        ("/edit/queues/xq/", {"name": "xq", "parent": "root", "weight": "9", "priority": "0", "version": xq.version}),
        ("/edit/queues/xq/close/", {"version": xq.version}),
        ("/edit/namespaces/x-ns/weight/", {f"ns-{ns.pk}-weight": "7", f"ns-{ns.pk}-version": ns.version}),
        ("/edit/delete/queues/xq/", {"version": xq.version}),
        ("/whatif/apply/", {"fingerprint": "x"}),
        ("/whatif/discard/", {}),
    ]
    for path, data in posts:
        assert client.post(path, data).status_code == 403, path
    xq.refresh_from_db()
    ns.refresh_from_db()
    assert (xq.weight, xq.state, xq.version, ns.weight) == (1, "Open", 1, 1)


def test_admins_open_every_editor_page(admin_client: Any, lending: None) -> None:
    for path in EDIT_PAGES:
        assert admin_client.get(path).status_code == 200, path


def test_unknown_nodes_are_404(admin_client: Any, lending: None) -> None:
    assert admin_client.get("/queues/nope/").status_code == 404
    assert admin_client.get("/trees/nope/").status_code == 404
    assert admin_client.get("/edit/queues/nope/").status_code == 404
