"""A department lead's teams side by side (issue 30, item 3): ``GET /api/v1/teams/{name}/department/`` on the demo
organisation. research-lead (team research-dept, linked to the research queue and quota group) reads its three teams;
a lead of another department, or of a team below, is answered 404 with a sentence; a team with none below has an empty
list."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from planning.department import DepartmentSerializer
from scheduling.models import Cluster, Eviction, Pod

pytestmark = pytest.mark.django_db

RESEARCH = ["ml-research", "nlp", "vision"]


@pytest.fixture
def demo(api: Any) -> dict[str, Any]:
    call_command("load_demo", stdout=StringIO())
    users = get_user_model().objects
    clients = {name: api(users.get(username=f"{name}-lead")) for name in ("research", "engineering", "nlp")}
    clients["admin"] = api(users.create_user("boss", is_staff=True))
    return clients


def test_a_department_lead_reads_its_teams_side_by_side(demo: dict[str, Any]) -> None:
    nlp_pod = Pod.objects.filter(cluster__name="default", namespace__name="nlp").order_by("id").first()
    assert nlp_pod is not None
    Eviction.objects.create(
        cluster=Cluster.objects.get(name="default"),
        pod=nlp_pod,
        pod_uid=f"nlp/{nlp_pod.name}",
        namespace="nlp",
        queue="nlp",
        node="cpu-01",
        action="reclaim",
        created=timezone.now(),
    )
    r = demo["research"].get("/api/v1/teams/research-dept/department/")
    assert r.status_code == 200, r.content
    body = r.json()
    DepartmentSerializer(data=body).is_valid(raise_exception=True)  # the answer is what the schema says
    assert body["team"] == "research-dept" and body["cluster"] == "default"
    lines = {t["name"]: t for t in body["teams"]}
    assert sorted(lines) == RESEARCH  # its teams, and no other department's
    # no session ran yet: every demo job waits (ml-research has two, nlp and vision one each)
    assert {n: t["waiting_jobs"] for n, t in lines.items()} == {"ml-research": 2, "nlp": 1, "vision": 1}
    assert {n: t["evictions"] for n, t in lines.items()} == {"ml-research": 0, "nlp": 1, "vision": 0}
    nlp = lines["nlp"]
    assert nlp["tree"] == "queue" and nlp["nodes"] == ["nlp"] and nlp["past_usage"] == []  # fairness over time off
    # the numbers are the engine's, as the queue's own explain gives them
    explain = demo["research"].get("/api/v1/queues/nlp/explain/").json()["values"]
    cpu = next(x for x in nlp["resources"] if x["resource"] == "cpu")
    assert cpu["deserved"] == explain["deserved"]["cpu"] and cpu["unit"] == "cores"
    assert cpu["using"] == "0" and cpu["borrowing"] == "0" and cpu["lending"] == "0"
    assert {x["resource"] for x in nlp["resources"]} <= {"cpu", "memory", "nvidia.com/gpu"}


def test_the_admin_reads_any_department_and_a_team_without_teams_below_has_none(demo: dict[str, Any]) -> None:
    r = demo["admin"].get("/api/v1/teams/engineering-dept/department/")
    assert r.status_code == 200
    assert [t["name"] for t in r.json()["teams"]] == ["data-eng", "platform", "search"]
    r = demo["nlp"].get("/api/v1/teams/nlp/department/")
    assert r.status_code == 200 and r.json()["teams"] == []


@pytest.mark.parametrize(
    ("who", "team"),
    [("engineering", "research-dept"), ("nlp", "research-dept"), ("research", "engineering-dept"), ("research", "x")],
)
def test_other_departments_are_a_404_with_a_sentence(demo: dict[str, Any], who: str, team: str) -> None:
    r = demo[who].get(f"/api/v1/teams/{team}/department/")
    assert r.status_code == 404
    detail = r.json()["errors"][0]["detail"]
    assert detail == (
        f"There is no team named '{team}' whose department you may read: your own teams and the teams below them only."
    )


def test_an_unknown_cluster_is_a_400_naming_the_field(demo: dict[str, Any]) -> None:
    r = demo["research"].get("/api/v1/teams/research-dept/department/?cluster=nope")
    assert r.status_code == 400
    assert r.json()["errors"][0]["attr"] == "cluster"
