"""``GET /api/v1/evictions/``: a team's evictions (``?team=``, the team page's definition of its jobs), the other
filters (queue, quota group, job, node, action, time, removed), whose each eviction was, and who may list what."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from quotas.models import Queue, QuotaGroup
from scheduling import evictions
from scheduling.models import Eviction, Pod, PodGroup, RemovalCause
from tests.conftest import error_attrs
from tests.scheduling.conftest import World, build_world, rl

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db: Any) -> World:
    """``build_world`` plus ns-b/pg-b (queue team-b) with one pod; teams team-a (queue team-a and quota group qa),
    team-b (queue team-b) and money (quota group qb only); an eviction of a-0 (reclaim, 10 min ago), of a-1
    (recycle, 2 min ago) and of b-0 (preempt, 1 min ago)."""
    w = build_world()
    pg = PodGroup.objects.create(
        cluster=w.cluster,
        namespace_id=w.pods["ns-b/solo"].namespace_id,
        name="pg-b",
        queue=Queue.objects.get(name="team-b"),
    )
    b0 = Pod.objects.create(
        cluster=w.cluster,
        namespace_id=pg.namespace_id,
        name="b-0",
        podgroup=pg,
        request=rl(cpu="1"),
        quota_group=QuotaGroup.objects.get(name="qb"),
    )
    w.podgroups["ns-b/pg-b"], w.pods["ns-b/b-0"] = pg, b0
    for name, queue, group in (("team-a", "team-a", "qa"), ("team-b", "team-b", None), ("money", None, "qb")):
        team = Group.objects.create(name=name)
        if queue:
            Queue.objects.get(name=queue).teams.add(team)
        if group:
            QuotaGroup.objects.get(name=group).teams.add(team)
    now = timezone.now()
    for uid, action, node, minutes in (
        ("ns-a/a-0", "reclaim", "n1", 10),
        ("ns-a/a-1", "recycle", "n2", 2),
        ("ns-b/b-0", "preempt", "n3", 1),
    ):
        Eviction.objects.create(
            cluster=w.cluster,
            pod=w.pods[uid],
            pod_uid=uid,
            namespace=uid.split("/")[0],
            node=node,
            action=action,
            message=f"{action} in a test",
            created=now - timedelta(minutes=minutes),
        )
    return w


def _pods(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["pod"] for row in response.json()["results"]]


def test_a_teams_evictions_are_those_of_its_queues_jobs(world: World, admin_api: Any) -> None:
    assert _pods(admin_api.get("/api/v1/evictions/?team=team-a")) == ["ns-a/a-1", "ns-a/a-0"]  # newest first
    assert _pods(admin_api.get("/api/v1/evictions/?team=team-b")) == ["ns-b/b-0"]


def test_a_team_without_queues_has_the_evictions_counted_against_its_quota_groups(world: World, admin_api: Any) -> None:
    assert _pods(admin_api.get("/api/v1/evictions/?team=money")) == ["ns-b/b-0"]


def test_a_team_owning_a_parent_queue_has_its_subtrees_evictions(world: World, admin_api: Any) -> None:
    Queue.objects.get(name="dept").teams.add(Group.objects.create(name="dept-team"))
    assert _pods(admin_api.get("/api/v1/evictions/?team=dept-team")) == ["ns-b/b-0", "ns-a/a-1", "ns-a/a-0"]


def test_each_eviction_says_whose_it_was(world: World, admin_api: Any) -> None:
    row = admin_api.get("/api/v1/evictions/?pod=ns-a/a-0").json()["results"][0]
    assert (row["job"], row["queue"], row["quota_group"], row["job_removed_at"]) == ("pg-a", "team-a", "qa", None)


def test_the_other_filters(world: World, admin_api: Any) -> None:
    get = admin_api.get
    assert _pods(get("/api/v1/evictions/?queue=team-b")) == ["ns-b/b-0"]
    assert _pods(get("/api/v1/evictions/?quota_group=qa")) == ["ns-a/a-1", "ns-a/a-0"]
    assert _pods(get("/api/v1/evictions/?namespace=ns-a&job=pg-a&action=reclaim")) == ["ns-a/a-0"]
    assert _pods(get("/api/v1/evictions/?node=n2")) == ["ns-a/a-1"]
    since = quote((timezone.now() - timedelta(minutes=5)).isoformat())
    assert _pods(get(f"/api/v1/evictions/?team=team-a&since={since}")) == ["ns-a/a-1"]
    assert _pods(get(f"/api/v1/evictions/?until={since}")) == ["ns-a/a-0"]


def test_evictions_of_a_removed_job_are_listed_with_the_removal_time(world: World, admin_api: Any) -> None:
    now = timezone.now()
    evictions.remove_podgroups(PodGroup.objects.filter(name="pg-a"), now, RemovalCause.DELETED, "in a test")
    assert _pods(admin_api.get("/api/v1/evictions/?team=team-a")) == ["ns-a/a-1", "ns-a/a-0"]
    rows = admin_api.get("/api/v1/evictions/?removed=true").json()["results"]
    assert [r["pod"] for r in rows] == ["ns-a/a-1", "ns-a/a-0"]
    assert rows[0]["pod_id"] is None and rows[0]["job"] == "pg-a" and rows[0]["job_removed_at"] is not None
    assert _pods(admin_api.get("/api/v1/evictions/?removed=false")) == ["ns-b/b-0"]


def test_a_lead_lists_its_own_teams_evictions_and_nothing_of_another_team(
    world: World, api: Any, make_user: Any
) -> None:
    lead_a = api(make_user("lead-a", groups=("team-a",)))
    assert _pods(lead_a.get("/api/v1/evictions/?team=team-a")) == ["ns-a/a-1", "ns-a/a-0"]
    assert _pods(lead_a.get("/api/v1/evictions/")) == ["ns-a/a-1", "ns-a/a-0"]  # its namespaces only
    other = lead_a.get("/api/v1/evictions/?team=team-b")
    assert other.status_code == 400
    assert error_attrs(other) == {
        "team": "'team-b' is not one of your teams: you may list the evictions of your own teams only"
    }
    # a team that does not exist reads the same, so the answer says nothing of other teams
    nobody = lead_a.get("/api/v1/evictions/?team=nobody")
    assert nobody.status_code == 400 and "is not one of your teams" in error_attrs(nobody)["team"]
    lead_b = api(make_user("lead-b", groups=("team-b",)))
    assert _pods(lead_b.get("/api/v1/evictions/?queue=team-a")) == []
    assert lead_b.get(f"/api/v1/evictions/{Eviction.objects.get(pod_uid='ns-a/a-0').pk}/").status_code == 404
    assert api(None).get("/api/v1/evictions/?team=team-a").status_code == 401


def test_an_admin_naming_no_team_is_told_so(world: World, admin_api: Any) -> None:
    r = admin_api.get("/api/v1/evictions/?team=nobody")
    assert r.status_code == 400 and error_attrs(r) == {"team": "no team is named 'nobody'"}
