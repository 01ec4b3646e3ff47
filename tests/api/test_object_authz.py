"""Authorization by object, not only by endpoint (issue 9, item 2): the probe's findings on the demo organisation,
each a regression test, plus what team members may still do. The whole matrix is in test_authz_matrix.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from quotas.models import Queue
from scheduling.models import Pod, PodGroup
from tests.conftest import demo_tokens, error_attrs, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _tokens(module_db: Any) -> dict[str, str]:
    """The demo organisation, loaded once for the module (each test runs in a transaction of its own)."""
    return module_db(lambda: demo_tokens(("nlp-lead", "vision-lead", "research-lead")))


@pytest.fixture
def demo(_tokens: dict[str, str], db: Any) -> dict[str, Any]:
    return {
        "nlp": token_client(_tokens["nlp-lead"]),
        "vision": token_client(_tokens["vision-lead"]),
        "research": token_client(_tokens["research-lead"]),
        "admin": token_client(_tokens["boss"]),
    }


def _nlp_pod() -> Pod:
    return Pod.objects.filter(namespace__name="nlp").order_by("id").first()  # type: ignore[return-value]


def test_a_team_cannot_spend_another_teams_quota_group(demo: dict[str, Any]) -> None:
    before = Pod.objects.count()
    body = {"namespace": "nlp", "name": "p1", "podgroup": "tokenizer-train", "request": {"cpu": "1"}}
    r = demo["nlp"].post("/api/v1/pods/", {**body, "quota_group": "vision"}, format="json")
    assert r.status_code == 400, r.content
    assert "you may only use your namespace's quota group (nlp)" in error_attrs(r)["quota_group"]
    assert Pod.objects.count() == before
    # its own group, said or left out, is fine
    assert demo["nlp"].post("/api/v1/pods/", {**body, "quota_group": "nlp"}, format="json").status_code == 201
    r = demo["nlp"].post("/api/v1/pods/", {**body, "name": "p2"}, format="json")
    assert r.status_code == 201 and r.json()["quota_group"] == "nlp"
    # and nor can it move an existing pod over
    pod = _nlp_pod()
    r = demo["nlp"].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": "vision"}, format="json")
    assert r.status_code == 400 and "quota_group" in error_attrs(r)
    r = demo["nlp"].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": None}, format="json")  # default: no escape
    assert r.status_code == 400 and "quota_group" in error_attrs(r)
    assert Pod.objects.get(pk=pod.pk).quota_group.name == "nlp"  # type: ignore[union-attr]


def test_a_department_lead_may_use_the_leaf_groups_of_its_subtree(demo: dict[str, Any]) -> None:
    """research-lead is linked to the research queue and quota group: vision's group is in its subtree."""
    pod = _nlp_pod()
    r = demo["research"].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": "vision"}, format="json")
    assert r.status_code == 200, r.content
    r = demo["research"].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": "platform"}, format="json")
    assert r.status_code == 400 and "platform is not one" in error_attrs(r)["quota_group"]


@pytest.mark.parametrize("who", ["admin", "nlp", "research"])
@pytest.mark.parametrize("group", ["root", "research"])
def test_no_role_may_bind_a_pod_to_a_parent_group(demo: dict[str, Any], who: str, group: str) -> None:
    pod = _nlp_pod()
    r = demo[who].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": group}, format="json")
    assert r.status_code == 400, r.content
    assert "parent group" in error_attrs(r)["quota_group"]
    r = demo[who].put(
        f"/api/v1/pods/{pod.pk}/", {"namespace": "nlp", "name": pod.name, "quota_group": group}, format="json"
    )
    assert r.status_code == 400
    body = {"namespace": "nlp", "name": "px", "podgroup": "tokenizer-train", "quota_group": group}
    r = demo[who].post("/api/v1/pods/", body, format="json")
    assert r.status_code == 400 and "parent group" in error_attrs(r)["quota_group"]
    assert Pod.objects.get(pk=pod.pk).quota_group.name == "nlp"  # type: ignore[union-attr]
    assert not Pod.objects.filter(name="px").exists()


def test_podgroups_go_only_to_the_teams_namespaces(demo: dict[str, Any]) -> None:
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "vision", "name": "sneaky"}, format="json")
    assert r.status_code == 400 and "vision is not one" in error_attrs(r)["namespace"]
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "vision", "name": "s2", "queue": "nlp"}, format="json")
    assert r.status_code == 400 and "namespace" in error_attrs(r)
    r = demo["nlp"].post("/api/v1/pods/", {"namespace": "vision", "name": "sneaky"}, format="json")
    assert r.status_code == 400 and "namespace" in error_attrs(r)
    assert not PodGroup.objects.filter(name__in=["sneaky", "s2"]).exists()
    assert not Pod.objects.filter(name="sneaky").exists()
    # its own namespaces (nlp and nlp-dev) work, and moving a podgroup to vision's namespace does not
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "nlp-dev", "name": "mine"}, format="json")
    assert r.status_code == 201, r.content
    r = demo["nlp"].patch(f"/api/v1/podgroups/{r.json()['id']}/", {"namespace": "vision"}, format="json")
    assert r.status_code == 400 and "namespace" in error_attrs(r)


def test_seeing_a_job_is_not_owning_it(demo: dict[str, Any]) -> None:
    """The nlp pod counts against vision's quota group (an admin put it there): vision's lead reads it, but it
    sits in nlp's queue and namespace, so it may not change or delete it."""
    pod = _nlp_pod()
    assert demo["admin"].patch(f"/api/v1/pods/{pod.pk}/", {"quota_group": "vision"}, format="json").status_code == 200
    assert demo["vision"].get(f"/api/v1/pods/{pod.pk}/").status_code == 200
    r = demo["vision"].patch(f"/api/v1/pods/{pod.pk}/", {"priority": -5}, format="json")
    assert r.status_code == 403, r.content
    assert "you may only change jobs in your team's queues and namespaces" in r.json()["errors"][0]["detail"]
    assert demo["vision"].delete(f"/api/v1/pods/{pod.pk}/").status_code == 403
    assert Pod.objects.get(pk=pod.pk).priority != -5
    # the owner can (its priority only an admin changes: test_job_priority.py)
    assert demo["nlp"].patch(f"/api/v1/pods/{pod.pk}/", {"labels": {"owner": "nlp"}}, format="json").status_code == 200
    pg = PodGroup.objects.get(namespace__name="nlp", name="tokenizer-train")
    # its podgroup likewise: readable by vision (a pod of it counts against vision's group, as the job page shows it)
    # but not vision's to change
    assert demo["vision"].get(f"/api/v1/podgroups/{pg.pk}/").status_code == 200
    assert demo["vision"].patch(f"/api/v1/podgroups/{pg.pk}/", {"priority": 1}, format="json").status_code == 403
    body = {"min_task_member": {}}
    assert demo["nlp"].patch(f"/api/v1/podgroups/{pg.pk}/", body, format="json").status_code == 200


def _nodes(body: dict[str, Any]) -> dict[str, set[str]]:
    return {part: {f"{s}:{k}" for s, nodes in body[part].items() for k in nodes} for part in ("before", "after")}


def test_what_if_shows_a_team_member_only_what_it_may_read(demo: dict[str, Any]) -> None:
    change = {"changes": [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 4}}], "session": True}
    admin = demo["admin"].post("/api/v1/whatif/", change, format="json")
    mine = demo["nlp"].post("/api/v1/whatif/", change, format="json")
    assert admin.status_code == 200 and mine.status_code == 200, mine.content
    everything, seen = _nodes(admin.json()), _nodes(mine.json())
    assert "queues:vision" in everything["before"] and "quota_groups:vision" in everything["after"]
    assert (
        seen["before"]
        == seen["after"]
        == {"queues:nlp", "quota_groups:nlp"} | {k for k in everything["before"] if k.startswith("namespaces:nlp/")}
    )
    diff = mine.json()["diff"]
    assert set(diff["queues"]) <= {"nlp"} and set(diff["quota_groups"]) <= {"nlp"}
    assert set(admin.json()["diff"]["queues"]) >= set(diff["queues"])
    impact = mine.json()["impact"]
    assert all(key.split("/")[0] == "nlp" for key in impact["podgroups"])
    # the same nodes are what the tree endpoint shows it
    tree = demo["nlp"].get("/api/v1/queues/tree/").json()
    assert [n["name"] for n in tree] == ["nlp"]


@pytest.mark.parametrize(
    ("change", "attr"),
    [
        ({"op": "update", "kind": "queue", "name": "vision", "spec": {"weight": 4}}, "changes.0.name"),
        ({"op": "update", "kind": "queue", "name": "no-such-queue", "spec": {"weight": 4}}, "changes.0.name"),
        ({"op": "delete", "kind": "quota_group", "name": "vision"}, "changes.0.name"),
        ({"op": "move", "kind": "queue", "name": "nlp", "parent": "engineering"}, "changes.0.parent"),
        ({"op": "create", "kind": "queue", "spec": {"name": "x", "parent": "research"}}, "changes.0.spec.parent"),
        ({"op": "create", "kind": "quota_group", "spec": {"name": "x"}}, "changes.0.spec.parent"),
        ({"op": "set_weight", "kind": "namespace", "name": "vision", "weight": 3}, "changes.0.name"),
        ({"op": "add", "kind": "podgroup", "spec": {"namespace": "vision", "name": "j"}}, "changes.0.spec.namespace"),
        (
            {"op": "add", "kind": "podgroup", "spec": {"namespace": "nlp", "name": "j", "queue": "vision"}},
            "changes.0.spec.queue",
        ),
    ],
)
def test_a_team_member_proposes_only_inside_its_subtree(
    demo: dict[str, Any], change: dict[str, Any], attr: str
) -> None:
    r = demo["nlp"].post("/api/v1/whatif/", {"changes": [change]}, format="json")
    assert r.status_code == 400, r.content
    assert "is not in your team's subtree" in error_attrs(r)[attr]
    # the same proposal is the admin's to make (it may still break a rule, never with this message)
    r = demo["admin"].post("/api/v1/whatif/", {"changes": [change]}, format="json")
    assert r.status_code in (200, 400) and "is not in your team's subtree" not in r.content.decode()


def test_a_team_member_sees_what_it_creates_in_a_proposal(demo: dict[str, Any]) -> None:
    """Nodes created (or renamed) inside its subtree are its own; a node added to the cluster is fine to propose."""
    changes = [
        {"op": "update", "kind": "queue", "name": "nlp", "spec": {"name": "nlp2"}},
        {"op": "add", "kind": "node", "spec": {"name": "gpu-99", "allocatable": {"cpu": "64"}}},
        {
            "op": "add",
            "kind": "podgroup",
            "spec": {"namespace": "nlp", "name": "j", "queue": "nlp2", "request": {"cpu": "2"}},
        },
    ]
    r = demo["nlp"].post("/api/v1/whatif/", {"changes": changes}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert set(body["after"]["queues"]) == {"nlp2"} and set(body["before"]["queues"]) == {"nlp"}
    assert body["diff"]["queues"] == {"nlp": {"removed": True}, "nlp2": {"added": True}}


def test_what_if_staging_in_the_browser_stays_admin_only(demo: dict[str, Any], client: Any) -> None:
    client.force_login(get_user_model().objects.get(username="nlp-lead"))
    assert client.get("/whatif/").status_code == 403
    nlp = Queue.objects.get(name="nlp")
    r = client.post("/edit/queues/nlp/", {"name": "nlp", "parent": "research", "weight": "9", "action": "stage"})
    assert r.status_code == 403
    assert client.post("/whatif/apply/", {"fingerprint": "x"}).status_code == 403
    assert Queue.objects.get(name="nlp").version == nlp.version
