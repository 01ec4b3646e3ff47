"""While a Kubernetes cluster owns the trees (``Cluster.tree_source = kubernetes``) the dashboard offers no form that
would change them: every editing page says where the trees are edited instead, and a POST to any of them is refused
with that sentence (409, nothing written, never a 500). The tree pages and the what-if evaluation stay."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from core import facts
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.facts import DatabaseFacts
from scheduling.models import Cluster
from tests.frontend import builders as b
from tests.frontend.test_editor import queue_form

SENTENCE = (
    "The trees are owned by cluster east: edit its Volcano Queues / Koordinator ElasticQuotas in Kubernetes; "
    "Fairway mirrors them."
)
# every form of the dashboard that writes the trees posts to one of these
EDITING_ACTIONS = re.compile(r'<form[^>]*method="post"[^>]*action="/(edit|whatif/apply)/')


@pytest.fixture
def org(db: Any) -> None:
    b.cluster()
    b.node("n1", cpu="64", memory="256Gi")
    b.queue("research", deserved={"cpu": "32"}, capability={"cpu": "48"})
    b.queue("nlp", "research", deserved={"cpu": "8"})
    b.group("dept", is_parent=True, min={"cpu": "32"}, max={"cpu": "64"})
    b.group("team-a", "dept", min={"cpu": "8"}, max={"cpu": "16"})
    b.namespace("nlp-ns", 2, queue_name="nlp", group_name="team-a")


def own_trees() -> Cluster:
    return Cluster.objects.create(name="east", source="kubernetes", tree_source="kubernetes")


def versions() -> dict[str, int]:
    rows = [*Queue.objects.all(), *QuotaGroup.objects.all(), *Namespace.objects.all()]
    return {f"{type(r).__name__} {r.name}": r.version for r in rows}


def shown(response: Any) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_the_editor_lists_the_trees_without_a_form(admin_client: Any, org: None) -> None:
    own_trees()
    response = admin_client.get("/edit/")
    assert response.status_code == 200
    html = shown(response)
    assert SENTENCE in html
    assert not EDITING_ACTIONS.search(html), EDITING_ACTIONS.search(html)
    assert "New queue" not in html and "Add child" not in html and ">Delete<" not in html
    assert 'href="/queues/nlp/"' in html and 'data-testid="ns-weight-nlp-ns">2<' in html  # still readable


def test_the_editor_offers_its_forms_while_fairway_owns_the_trees(admin_client: Any, org: None) -> None:
    Cluster.objects.create(name="east", source="kubernetes")  # tree_source=fairway: its adapter writes them out
    html = shown(admin_client.get("/edit/"))
    assert SENTENCE not in html and EDITING_ACTIONS.search(html) and "New queue" in html


@pytest.mark.parametrize(
    "path",
    [
        "/edit/new/queue/",
        "/edit/queues/nlp/",
        "/edit/new/quota/",
        "/edit/quotas/team-a/",
        "/edit/delete/queues/nlp/",
        "/edit/delete/quotas/team-a/",
    ],
)
def test_every_form_page_says_where_the_trees_are_edited(admin_client: Any, org: None, path: str) -> None:
    own_trees()
    response = admin_client.get(path)
    assert response.status_code == 200
    html = shown(response)
    assert SENTENCE in html and 'name="version"' not in html
    assert not EDITING_ACTIONS.search(html)


def _posts() -> list[tuple[str, dict[str, Any]]]:
    nlp, team = Queue.objects.get(name="nlp"), QuotaGroup.objects.get(name="team-a")
    ns = Namespace.objects.get(name="nlp-ns")
    return [
        ("/edit/queues/nlp/", queue_form("nlp", nlp.version, "research", 3)),
        ("/edit/queues/nlp/", {**queue_form("nlp", nlp.version, "research", 3), "action": "stage"}),
        ("/edit/new/queue/", queue_form("fresh", 0)),
        ("/edit/quotas/team-a/", {"name": "team-a", "parent": "dept", "version": str(team.version)}),
        ("/edit/new/quota/", {"name": "fresh-group", "parent": "dept"}),
        ("/edit/delete/queues/nlp/", {"version": str(nlp.version), "action": "delete", "cascade": "on"}),
        ("/edit/delete/quotas/team-a/", {"version": str(team.version), "action": "delete"}),
        ("/edit/queues/nlp/close/", {"version": str(nlp.version)}),
        ("/edit/namespaces/nlp-ns/weight/", {f"ns-{ns.pk}-weight": "5", f"ns-{ns.pk}-version": ns.version}),
        (
            "/edit/namespaces/nlp-ns/weight/",
            {f"ns-{ns.pk}-weight": "5", f"ns-{ns.pk}-version": ns.version, "action": "stage"},
        ),
    ]


def test_every_edit_posted_is_refused_with_the_sentence(admin_client: Any, org: None) -> None:
    own_trees()
    before = versions()
    for path, data in _posts():
        response = admin_client.post(path, data)
        assert response.status_code == 409, (path, response.status_code)
        assert SENTENCE in shown(response), path
        assert "Nothing was changed" in shown(response)
    assert versions() == before
    assert not Queue.objects.filter(name="fresh").exists() and not QuotaGroup.objects.filter(name="fresh-group")
    assert Queue.objects.get(name="nlp").state == "Open"
    assert admin_client.get("/whatif/").context["entries"] == []  # nothing was staged either


def test_a_staged_what_if_is_evaluated_but_not_applied(admin_client: Any, org: None) -> None:
    ns = Namespace.objects.get(name="nlp-ns")
    staged = admin_client.post(
        "/edit/namespaces/nlp-ns/weight/",
        {f"ns-{ns.pk}-weight": "5", f"ns-{ns.pk}-version": ns.version, "action": "stage"},
    )
    assert staged.status_code == 302  # staged while Fairway owned the trees
    own_trees()
    page = admin_client.get("/whatif/")
    html = shown(page)
    assert page.status_code == 200 and len(page.context["entries"]) == 1
    assert SENTENCE in html and 'id="apply"' not in html and not EDITING_ACTIONS.search(html)
    assert 'id="discard"' in html  # the staged list is the user's own: it can still be dropped
    refused = admin_client.post("/whatif/apply/", {"fingerprint": page.context["fingerprint"]})
    assert refused.status_code == 409 and SENTENCE in shown(refused)
    assert Namespace.objects.get(name="nlp-ns").weight == 2
    assert len(admin_client.get("/whatif/").context["entries"]) == 1  # kept, as a refused apply keeps it


def test_the_queue_page_offers_no_edit_button_nor_weight_form(admin_client: Any, org: None) -> None:
    html = shown(admin_client.get("/queues/nlp/"))
    assert 'id="edit-link"' in html and 'action="/edit/queues/nlp/close/"' in html  # Fairway's trees: offered
    assert 'action="/edit/namespaces/nlp-ns/weight/"' in html
    own_trees()
    html = shown(admin_client.get("/queues/nlp/"))
    assert SENTENCE in html
    assert 'id="edit-link"' not in html and not EDITING_ACTIONS.search(html)
    live = admin_client.get("/queues/nlp/", {"live": "1"}).json()["fragments"]["frag-namespaces"]
    assert "weight-form" not in live  # the live refresh brings no form back either


def test_a_team_member_sees_no_sentence(client: Any, org: None) -> None:
    b.team("nlp-team", queues=["nlp"], groups=["team-a"])
    client.force_login(b.user("lead", teams=["nlp-team"]))
    own_trees()
    html = shown(client.get("/queues/nlp/"))
    assert SENTENCE not in html and not EDITING_ACTIONS.search(html)
    assert client.post("/edit/queues/nlp/close/", {"version": "1"}).status_code == 403  # not an admin: as before


@pytest.fixture
def owner_taken_after_the_page_checked() -> Iterator[None]:
    """The owner as a race shows it: nobody when the page asks, cluster east when the service asks under the tree
    write lock (another request took the trees in between)."""
    answers = iter([None])

    class Racing(DatabaseFacts):
        def tree_owner(self) -> str | None:
            return next(answers, "east")

    facts.provide(Racing())
    yield
    facts.provide(DatabaseFacts())


def test_a_cluster_taking_the_trees_during_the_request_is_a_409_not_a_500(
    admin_client: Any, org: None, owner_taken_after_the_page_checked: None
) -> None:
    nlp = Queue.objects.get(name="nlp")
    response = admin_client.post("/edit/queues/nlp/", queue_form("nlp", nlp.version, "research", 3))
    assert response.status_code == 409 and SENTENCE in shown(response)
    assert Queue.objects.get(name="nlp").weight == 1


def test_the_django_admin_shows_the_trees_read_only_but_their_teams(client: Any, org: None) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    client.force_login(get_user_model().objects.create_superuser("root-admin", password="pw"))
    own_trees()
    nlp, ns = Queue.objects.get(name="nlp"), Namespace.objects.get(name="nlp-ns")
    before = versions()
    assert SENTENCE in shown(client.get("/admin/quotas/queue/"))
    assert client.get("/admin/quotas/queue/add/").status_code == 403
    assert client.post(f"/admin/quotas/queue/{nlp.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.post(f"/admin/quotas/namespace/{ns.pk}/change/", {"weight": "7"}).status_code == 403
    history = nlp.history.first()
    revert = client.post(f"/admin/quotas/queue/{nlp.pk}/history/{history.history_id}/", {"weight": "9"})
    assert revert.status_code == 403
    page = shown(client.get(f"/admin/quotas/queue/{nlp.pk}/change/"))
    assert 'name="teams"' in page and 'name="weight"' not in page and 'name="parent"' not in page
    team = Group.objects.create(name="nlp-team")
    saved = client.post(
        f"/admin/quotas/queue/{nlp.pk}/change/",
        {"teams": [team.pk], "weight": "9", "read_version": str(nlp.version)},  # the version the form was read at
    )
    assert saved.status_code == 302, shown(saved)[:3000]
    nlp.refresh_from_db()
    assert list(nlp.teams.values_list("name", flat=True)) == ["nlp-team"] and nlp.weight == 1
    assert {k: v for k, v in versions().items() if k != "Queue nlp"} == {
        k: v for k, v in before.items() if k != "Queue nlp"
    }
