"""What decides fairness is not the tenant's to change on running work (issue 25, item 3): ``priority`` and
``preemptible`` are set at creation within the range the job's queue allows (``max_priority``,
``allow_non_preemptible``, set by admins; the strictest along the queue's path), only admins change them on existing
pods and podgroups, and a team's waiting pods and podgroups are capped (``FAIRWAY_MAX_PENDING_*_PER_TEAM``)."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue
from scheduling.models import Pod, PodGroup
from tests.conftest import demo_tokens, error_attrs, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _tokens(module_db: Any) -> dict[str, str]:
    """The demo organisation, loaded once for the module (each test runs in a transaction of its own)."""
    return module_db(lambda: demo_tokens(("nlp-lead",)))


@pytest.fixture
def demo(_tokens: dict[str, str], db: Any) -> dict[str, Any]:
    return {"nlp": token_client(_tokens["nlp-lead"]), "admin": token_client(_tokens["boss"])}


def _nlp_pod() -> Pod:
    pod = Pod.objects.filter(namespace__name="nlp", podgroup__name="tokenizer-train").order_by("id").first()
    assert pod is not None and pod.preemptible and pod.priority < 2147483647
    return pod


def _detail(r: Any) -> str:
    return str(r.json()["errors"][0]["detail"])


def test_a_team_member_cannot_make_its_running_pods_irrevocable(demo: dict[str, Any]) -> None:
    """The probe: PATCH a running pod to ``preemptible: false, priority: 2147483647`` was a 200."""
    pod = _nlp_pod()
    Pod.objects.filter(pk=pod.pk).update(status="Running")
    before = (pod.priority, pod.preemptible)
    for body in (
        {"preemptible": False, "priority": 2147483647},
        {"preemptible": False},
        {"priority": pod.priority + 1},
    ):
        r = demo["nlp"].patch(f"/api/v1/pods/{pod.pk}/", body, format="json")
        assert r.status_code == 403, (body, r.content)
        assert _detail(r) == (
            f"pod nlp/{pod.name}: priority and preemptible are set when a job is created and only admins may change "
            f"them afterwards (it has priority {pod.priority}, preemptible true); a request that repeats the current "
            "values is accepted"
        )
    r = demo["nlp"].put(
        f"/api/v1/pods/{pod.pk}/", {"namespace": "nlp", "name": pod.name, "priority": 99}, format="json"
    )
    assert r.status_code in (400, 403)  # PUT cannot resend namespace/name (immutable: 400) or changes priority (403)
    fresh = Pod.objects.get(pk=pod.pk)
    assert (fresh.priority, fresh.preemptible) == before
    # repeating the same values is fine
    same = {"priority": pod.priority, "preemptible": pod.preemptible, "labels": {"a": "b"}}
    assert demo["nlp"].patch(f"/api/v1/pods/{pod.pk}/", same, format="json").status_code == 200


def test_a_team_member_cannot_raise_its_podgroups_priority(demo: dict[str, Any]) -> None:
    pg = PodGroup.objects.get(namespace__name="nlp", name="tokenizer-train")
    r = demo["nlp"].patch(f"/api/v1/podgroups/{pg.pk}/", {"priority": 2147483647}, format="json")
    assert r.status_code == 403 and "only admins may change them" in _detail(r)
    body = {"namespace": "nlp", "name": pg.name, "queue": "nlp", "priority": 2147483647}
    assert demo["nlp"].put(f"/api/v1/podgroups/{pg.pk}/", body, format="json").status_code == 403
    assert PodGroup.objects.get(pk=pg.pk).priority == pg.priority
    body["priority"] = pg.priority
    assert demo["nlp"].put(f"/api/v1/podgroups/{pg.pk}/", body, format="json").status_code == 200


def test_an_admin_changes_them_within_the_queues_range(demo: dict[str, Any]) -> None:
    pod = _nlp_pod()
    pg = PodGroup.objects.get(namespace__name="nlp", name="tokenizer-train")
    r = demo["admin"].patch(f"/api/v1/pods/{pod.pk}/", {"preemptible": False, "priority": 1000}, format="json")
    assert r.status_code == 200, r.content
    assert demo["admin"].patch(f"/api/v1/podgroups/{pg.pk}/", {"priority": 1000}, format="json").status_code == 200
    Queue.objects.filter(name="nlp").update(max_priority=1000, allow_non_preemptible=False)
    r = demo["admin"].patch(f"/api/v1/pods/{pod.pk}/", {"priority": 1001}, format="json")
    assert r.status_code == 400 and "maximum 1000" in error_attrs(r)["priority"]
    r = demo["admin"].patch(f"/api/v1/podgroups/{pg.pk}/", {"priority": 1001}, format="json")
    assert r.status_code == 400 and "priority" in error_attrs(r)
    # lowering the range leaves existing jobs as they are (a Kubernetes pod keeps the priority it was admitted with)
    assert Pod.objects.get(pk=pod.pk).priority == 1000 and not Pod.objects.get(pk=pod.pk).preemptible


def test_creation_is_held_to_the_range_of_the_queue_and_its_ancestors(demo: dict[str, Any]) -> None:
    r = demo["admin"].patch("/api/v1/queues/nlp/", {"max_priority": 100, "allow_non_preemptible": False}, format="json")
    assert r.status_code == 200, r.content
    assert (r.json()["max_priority"], r.json()["allow_non_preemptible"]) == (100, False)
    base = {"namespace": "nlp", "podgroup": "tokenizer-train", "request": {"cpu": "1"}}
    r = demo["nlp"].post("/api/v1/pods/", {**base, "name": "p1", "priority": 101}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["priority"] == (
        "pod nlp/p1: priority 101 is above the maximum 100 that queue nlp allows (its max_priority, set by admins)"
    )
    r = demo["nlp"].post("/api/v1/pods/", {**base, "name": "p1", "preemptible": False}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["preemptible"] == (
        "pod nlp/p1: queue nlp allows no non-preemptible pods (its allow_non_preemptible is false, set by admins)"
    )
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "nlp", "name": "g1", "priority": 101}, format="json")
    assert r.status_code == 400 and "queue nlp allows" in error_attrs(r)["priority"]
    assert not Pod.objects.filter(name="p1").exists() and not PodGroup.objects.filter(name="g1").exists()
    # admins create within the range too
    r = demo["admin"].post("/api/v1/pods/", {**base, "name": "p1", "priority": 101}, format="json")
    assert r.status_code == 400
    assert demo["nlp"].post("/api/v1/pods/", {**base, "name": "p1", "priority": 100}, format="json").status_code == 201
    # the strictest along the path: a limit on research holds for nlp below it
    assert demo["admin"].patch("/api/v1/queues/research/", {"max_priority": 50}, format="json").status_code == 200
    r = demo["nlp"].post("/api/v1/pods/", {**base, "name": "p2", "priority": 60}, format="json")
    assert r.status_code == 400
    assert "maximum 50 that queue research (above queue nlp) allows" in error_attrs(r)["priority"]
    # team members cannot set the range itself
    assert demo["nlp"].patch("/api/v1/queues/nlp/", {"max_priority": None}, format="json").status_code == 403


def test_a_podgroup_moves_only_to_a_queue_whose_range_holds_it(demo: dict[str, Any]) -> None:
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "nlp", "name": "g1", "priority": 40}, format="json")
    assert r.status_code == 201, r.content
    Queue.objects.filter(name="vision").update(max_priority=10)
    r = demo["admin"].patch(f"/api/v1/podgroups/{r.json()['id']}/", {"queue": "vision"}, format="json")
    assert r.status_code == 400 and "moving it to queue vision is refused" in error_attrs(r)["queue"]


def _limit(settings: Any, **values: int) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, **values}


def test_a_teams_waiting_pods_are_capped(demo: dict[str, Any], settings: Any) -> None:
    """One team's flood cannot grow the pending set every session works through: 429 naming the limit."""
    mine = Pod.objects.filter(namespace__name__in=["nlp", "nlp-dev"], status__in=["Pending", "Pipelined"]).count()
    _limit(settings, MAX_PENDING_PODS_PER_TEAM=mine + 1)
    base = {"namespace": "nlp", "podgroup": "tokenizer-train", "request": {"cpu": "1"}}
    assert demo["nlp"].post("/api/v1/pods/", {**base, "name": "f1"}, format="json").status_code == 201
    r = demo["nlp"].post("/api/v1/pods/", {**base, "name": "f2"}, format="json")
    assert r.status_code == 429, r.content
    assert r.json()["errors"][0]["code"] == "too_many_pending"
    assert _detail(r) == (
        f"your team's namespaces already hold {mine + 1:,} waiting pods, the most one team may have "
        "(FAIRWAY_MAX_PENDING_PODS_PER_TEAM); wait until some are placed or delete some before creating more"
    )
    assert not Pod.objects.filter(name="f2").exists()
    # placed pods no longer count; admins are not limited
    Pod.objects.filter(name="f1").update(status="Running")
    assert demo["nlp"].post("/api/v1/pods/", {**base, "name": "f2"}, format="json").status_code == 201
    assert demo["admin"].post("/api/v1/pods/", {**base, "name": "f3"}, format="json").status_code == 201


def test_a_teams_waiting_podgroups_are_capped(demo: dict[str, Any], settings: Any) -> None:
    mine = PodGroup.objects.filter(namespace__name__in=["nlp", "nlp-dev"], phase__in=["Pending", "Inqueue"]).count()
    _limit(settings, MAX_PENDING_PODGROUPS_PER_TEAM=mine)
    r = demo["nlp"].post("/api/v1/podgroups/", {"namespace": "nlp", "name": "g1"}, format="json")
    assert r.status_code == 429
    assert "FAIRWAY_MAX_PENDING_PODGROUPS_PER_TEAM" in _detail(r)
    assert not PodGroup.objects.filter(name="g1").exists()
    assert (
        demo["admin"].post("/api/v1/podgroups/", {"namespace": "nlp", "name": "g1"}, format="json").status_code == 201
    )
