"""Records API: sessions (and their decisions), quota samples, podgroup reason history, evictions; the cluster's
scheduler policy (their paths in the OpenAPI schema: tests/test_project.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from engine.session.decisions import Binding, Blocker, Eviction, PodGroupStatus, SessionResult
from quotas.models import Queue
from scheduling import store
from scheduling.models import Pod, QuotaSample, SchedulingSession
from tests.conftest import error_attrs
from tests.scheduling.conftest import World, rl

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(world: World) -> dict[str, Any]:
    """Three sessions a minute apart: bind everything; evict a-1 for solo; pg-a waits for cpu. Plus samples."""
    t0 = timezone.now().replace(microsecond=0) - timedelta(minutes=10)
    first = store.apply_decisions(
        world.cluster,
        SessionResult(
            bindings=[Binding("ns-a/a-0", "n1"), Binding("ns-a/a-1", "n1"), Binding("ns-b/solo", "n2")],
            podgroups={"ns-a/pg-a": PodGroupStatus("ns-a/pg-a", "Running")},
        ),
        t0,
    )
    Pod.objects.filter(cluster=world.cluster).update(status="Running")
    blocker = Blocker("queue", "team-b", "cpu", 1000, 0, "deserved")
    second = store.apply_decisions(
        world.cluster,
        SessionResult(
            evictions=[Eviction("ns-a/a-1", "reclaim", "Reclaimed", "team-a over deserved cpu", "ns-b/solo", blocker)],
            podgroups={
                "ns-a/pg-a": PodGroupStatus("ns-a/pg-a", "Unknown", "Unschedulable", "1/2 tasks evicted", blocker)
            },
        ),
        t0 + timedelta(minutes=1),
    )
    store.record_skipped(world.cluster.pk)
    for minute in range(5):
        for kind, name, value in (("queue", "team-a", "4"), ("queue", "team-b", "1"), ("quota", "qa", "4")):
            QuotaSample.objects.create(
                cluster=world.cluster,
                time=t0 + timedelta(minutes=minute),
                kind=kind,
                name=name,
                allocated=dict(rl(cpu=value)),
            )
    return {"t0": t0, "first": first, "second": second}


@pytest.fixture
def member(world: World, api: Any, make_user: Any) -> Any:
    team = Group.objects.create(name="team-b")
    Queue.objects.get(name="team-b").teams.add(team)
    return api(make_user("bob", groups=("team-b",)))


def _iso(moment: Any) -> str:
    return quote(moment.isoformat())


def test_sessions_list_filters_and_detail(history: dict[str, Any], admin_api: Any) -> None:
    r = admin_api.get("/api/v1/sessions/?cluster=c1")
    assert r.status_code == 200
    rows = r.json()["results"]
    assert [row["status"] for row in rows] == ["skipped", "ok", "ok"]  # newest first
    assert rows[2]["bound"] == 3 and rows[2]["pipelined"] == 0 and rows[2]["podgroups"] == {"Running": 1}
    assert "bindings" not in rows[2] and "write_ms" in rows[2]["timings"]
    assert admin_api.get("/api/v1/sessions/?status=skipped").json()["count"] == 1
    assert admin_api.get("/api/v1/sessions/?cluster=elsewhere").json()["count"] == 0
    t0 = history["t0"]
    window = f"/api/v1/sessions/?since={_iso(t0 + timedelta(seconds=30))}&until={_iso(t0 + timedelta(minutes=2))}"
    assert [s["id"] for s in admin_api.get(window).json()["results"]] == [history["second"].pk]
    detail = admin_api.get(f"/api/v1/sessions/{history['first'].pk}/").json()
    assert detail["decisions_total"] == 4
    assert [d["kind"] for d in detail["decisions"]] == ["bind", "bind", "bind", "podgroup"]
    second = admin_api.get(f"/api/v1/sessions/{history['second'].pk}/").json()
    evict = next(d for d in second["decisions"] if d["kind"] == "evict")
    assert (evict["pod"], evict["action"], evict["preemptor"], evict["blocker"]["name"]) == (
        "ns-a/a-1",
        "reclaim",
        "ns-b/solo",
        "team-b",
    )


def test_session_decisions_endpoint(history: dict[str, Any], admin_api: Any) -> None:
    url = f"/api/v1/sessions/{history['first'].pk}/decisions/"
    body = admin_api.get(url + "?limit=2").json()
    assert body["count"] == 4 and len(body["results"]) == 2 and body["next"]
    binds = admin_api.get(url + "?kind=bind").json()["results"]
    assert sorted((d["pod"], d["node"]) for d in binds) == [("ns-a/a-0", "n1"), ("ns-a/a-1", "n1"), ("ns-b/solo", "n2")]
    r = admin_api.get(url + "?kind=teleport")
    assert r.status_code == 400 and "kind" in error_attrs(r)
    assert admin_api.get("/api/v1/sessions/999999/decisions/").status_code == 404


@pytest.mark.parametrize(
    ("query", "attr"),
    [("since=yesterday", "since"), ("until=2026-13-45", "until"), ("status=great", "status"), ("kind=x", "kind")],
)
def test_bad_session_filters_are_400(history: dict[str, Any], admin_api: Any, query: str, attr: str) -> None:
    r = admin_api.get(f"/api/v1/sessions/?{query}")
    assert r.status_code == 400 and attr in error_attrs(r)


def test_team_members_see_counts_and_only_their_decisions(
    history: dict[str, Any], member: Any, api: Any, make_user: Any
) -> None:
    assert member.get("/api/v1/sessions/").json()["count"] == 3
    decisions = member.get(f"/api/v1/sessions/{history['first'].pk}/decisions/").json()["results"]
    assert [(d["kind"], d["pod"]) for d in decisions] == [("bind", "ns-b/solo")]
    assert member.get("/api/v1/evictions/").json()["count"] == 0  # ns-a's eviction is not theirs
    assert api(make_user("carol")).get("/api/v1/sessions/").status_code == 403
    assert api(None).get("/api/v1/sessions/").status_code == 401
    assert member.post("/api/v1/sessions/", {}, format="json").status_code in (403, 405)


def test_samples_by_node_kind_and_window(history: dict[str, Any], admin_api: Any, member: Any) -> None:
    t0 = history["t0"]
    r = admin_api.get("/api/v1/samples/?node=team-a&kind=queue")
    rows = r.json()["results"]
    assert r.status_code == 200 and len(rows) == 5 and rows[0]["allocated"] == {"cpu": 4000}
    assert [row["time"] for row in rows] == sorted(row["time"] for row in rows)
    window = f"&since={_iso(t0 + timedelta(minutes=1))}&until={_iso(t0 + timedelta(minutes=3))}"
    assert admin_api.get("/api/v1/samples/?node=team-a" + window).json()["count"] == 2
    assert admin_api.get("/api/v1/samples/?kind=quota").json()["count"] == 5
    r = admin_api.get("/api/v1/samples/?kind=queues")
    assert r.status_code == 400 and "kind" in error_attrs(r)
    r = admin_api.get("/api/v1/samples/?since=noon")
    assert r.status_code == 400 and "since" in error_attrs(r)
    # a team member sees its own subtree's nodes only
    assert {row["node"] for row in member.get("/api/v1/samples/").json()["results"]} == {"team-b"}


def test_podgroup_history_newest_first(history: dict[str, Any], world: World, admin_api: Any, member: Any) -> None:
    pk = world.podgroups["ns-a/pg-a"].pk
    rows = admin_api.get(f"/api/v1/podgroups/{pk}/history/").json()["results"]
    assert [(r["phase"], r["reason"]) for r in rows] == [("Unknown", "Unschedulable"), ("Running", "")]
    assert rows[0]["blocker"]["resource"] == "cpu" and rows[0]["session"] == history["second"].pk
    assert member.get(f"/api/v1/podgroups/{pk}/history/").status_code == 404  # not their queue
    podgroup = admin_api.get(f"/api/v1/podgroups/{pk}/").json()
    assert (podgroup["phase"], podgroup["reason"], podgroup["message"]) == (
        "Unknown",
        "Unschedulable",
        "1/2 tasks evicted",
    )


def test_evictions_list_and_filters(history: dict[str, Any], admin_api: Any) -> None:
    rows = admin_api.get("/api/v1/evictions/?cluster=c1").json()["results"]
    assert [(r["pod"], r["action"], r["node"], r["session"]) for r in rows] == [
        ("ns-a/a-1", "reclaim", "n1", history["second"].pk)
    ]
    assert admin_api.get("/api/v1/evictions/?action=recycle").json()["count"] == 0
    assert admin_api.get("/api/v1/evictions/?pod=ns-a/a-1").json()["count"] == 1
    r = admin_api.get("/api/v1/evictions/?action=evaporate")
    assert r.status_code == 400 and "action" in error_attrs(r)


def test_cluster_policy_through_the_api(world: World, admin_api: Any, member: Any) -> None:
    body = admin_api.get("/api/v1/clusters/c1/").json()
    assert body["scheduler_policy"].startswith("actions: enqueue, allocate, backfill") and body["simulated"] is False
    assert body["node_heartbeat_timeout"] == 40
    policy = 'actions: "enqueue, allocate, reclaim"\ntiers:\n- plugins:\n  - name: capacity\n'
    r = admin_api.patch(
        "/api/v1/clusters/c1/", {"scheduler_policy": policy, "node_heartbeat_timeout": 60}, format="json"
    )
    assert r.status_code == 200, r.json()
    world.cluster.refresh_from_db()
    assert world.cluster.policy.actions == ("enqueue", "allocate", "reclaim")
    for bad, words in (
        ('actions: "enqueue, teleport"', "teleport"),
        ("actions: [unclosed", "YAML"),
        ("- just a list", "mapping"),
        (  # fairness over time's arguments are checked, naming the plugin and the key
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: proportion\n'
            "    arguments: {fairnessOverTime: true, usageWindow: 1h}\n",
            "proportion argument usageWindow: 1 hour is shorter than usageHalfLife (4 hours)",
        ),
    ):
        r = admin_api.patch("/api/v1/clusters/c1/", {"scheduler_policy": bad}, format="json")
        assert r.status_code == 400 and words in error_attrs(r)["scheduler_policy"], r.json()
    r = admin_api.patch("/api/v1/clusters/c1/", {"node_heartbeat_timeout": 0}, format="json")
    assert r.status_code == 400 and "node_heartbeat_timeout" in error_attrs(r)
    assert member.patch("/api/v1/clusters/c1/", {"scheduler_policy": ""}, format="json").status_code == 403
    world.cluster.refresh_from_db()
    assert world.cluster.policy.actions == ("enqueue", "allocate", "reclaim")


def test_admin_pages_of_the_records_render(client: Any, history: dict[str, Any]) -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("root-admin", password="pw")
    client.login(username="root-admin", password="pw")
    for model in (
        "schedulingsession",
        "eviction",
        "podgroupreason",
        "quotasample",
        "quotaoverstate",
        "usagehistory",
        "clusterlease",
    ):
        assert client.get(f"/admin/scheduling/{model}/").status_code == 200, model
    assert client.get(f"/admin/scheduling/schedulingsession/{history['first'].pk}/change/").status_code == 200
    assert client.get("/admin/scheduling/cluster/").status_code == 200
    assert SchedulingSession.objects.count() == 3
