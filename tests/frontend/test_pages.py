"""The read pages show the engine's numbers: the seeds' examples as rows in the database, then the pages."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from scheduling.models import Cluster, QuotaSample, SchedulingSession
from tests.frontend import builders as b
from tests.frontend.conftest import login


def live(client: Any, path: str) -> dict[str, Any]:
    response = client.get(path, {"live": "1"} if "?" not in path else None)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def explain_texts(response: Any) -> dict[str, str]:
    return {e["resource"]: e["text"] for e in response.context["explain"].get("quota", [])}


# -- seed 001 ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("m", {"a": "runtime 0.005", "b": "runtime 0.02", "c": "runtime 0.035", "d": "runtime 0.04"}),
        ("", {"a": "runtime 5,", "b": "runtime 20,", "c": "runtime 35.385", "d": "runtime 39.615"}),
    ],
    ids=["quota-units", "whole-cpus"],
)
def test_seed_001_runtime_example_on_the_quota_pages(admin_client: Any, unit: str, expected: dict[str, str]) -> None:
    """Seed 001: cluster 100, A/B/C/D min 10/15/20/15, max 40/60/50/80, request 5/20/40/70; B/C/D share the 45
    left by their shared weights (= max) 60/50/80. In millicores the seed's numbers come out exactly (5/20/35/40);
    in whole cpus the split is to the millicore (35.385 / 39.615 cores), as Koordinator computes. The explanations
    read cores (0.005 is 5 millicores)."""
    b.seed001_runtime(unit)
    for name, text in expected.items():
        response = admin_client.get(f"/quotas/{name}/")
        assert response.status_code == 200
        assert text in explain_texts(response)["cpu"], (name, explain_texts(response))
    rows = {r["name"]: r for r in admin_client.get("/trees/quotas/").context["rows"]}
    if unit == "":
        assert {n: rows[n]["entitled"] for n in "abcd"} == {"a": "5", "b": "20", "c": "35.4", "d": "39.6"}
        assert {n: rows[n]["cap"] for n in "abcd"} == {"a": "40", "b": "60", "c": "50", "d": "80"}
    page = admin_client.get("/quotas/c/")
    cpu = next(r for r in page.context["resource_rows"] if r["resource"] == "cpu")
    assert cpu["floor"] == ("20 cores" if unit == "" else "0.02 cores")
    assert page.context["explain"]["quota"][0]["state"] == "hungry"


def test_seed_001_tree_example(admin_client: Any) -> None:
    """Seed 001's hierarchy: parent-a 20 / parent-b 80; a-1, a-2 10 each; b-1 27 and b-2 53 (millicores)."""
    b.seed001_tree()
    expected = {"parent-a": "0.02", "parent-b": "0.08", "a-1": "0.01", "a-2": "0.01", "b-1": "0.027", "b-2": "0.053"}
    for name, runtime in expected.items():
        texts = explain_texts(admin_client.get(f"/quotas/{name}/"))
        assert f"runtime {runtime}" in texts["cpu"] or f"distributes {runtime}" in texts["cpu"], (name, texts)
    parent = admin_client.get("/quotas/parent-b/")
    assert [c["name"] for c in parent.context["children"]] == ["b-1", "b-2"]
    assert "subtree" in parent.context["figures"] and "children" in parent.context["figures"]


def test_the_quota_tree_figure_is_sized_by_max_and_links_every_node(admin_client: Any) -> None:
    b.seed001_tree()
    figure = admin_client.get("/trees/quotas/").context["figures"]["tree"]
    trace = figure["data"][0]
    assert trace["type"] == "sunburst"
    values = dict(zip(trace["ids"], trace["values"], strict=True))
    parents = dict(zip(trace["ids"], trace["parents"], strict=True))
    # the children never add up to more than their parent (branchvalues "total")
    for parent in set(parents.values()) - {""}:
        kids = [v for n, v in values.items() if parents[n] == parent]
        assert sum(kids) <= values[parent] * (1 + 1e-9)
    # b-1 and b-2 split parent-b's sector by their max 40 : 70, scaled to fit in its 100
    assert values["b-2"] / values["b-1"] == pytest.approx(70 / 40)
    assert dict(zip(trace["ids"], trace["customdata"], strict=True))["b-1"] == "/quotas/b-1/"


# -- seed 000 ---------------------------------------------------------------------------------------------------


def test_seed_000_table_2_on_the_queue_page(admin_client: Any) -> None:
    """Seed 000, table 2: q1 (weight 1) deserves 4 of 16 cpu and q2 (weight 3) 12; inside q1, ns1 (weight 3, asks
    5) gets 3 and ns2 (weight 1, asks 10) gets 1; inside q2, ns3 (w2, asks 10) 10 and ns4 (w6, asks 2) 2."""
    b.seed000_table2()
    q1 = admin_client.get("/queues/q1/")
    rows = {r["namespace"]: r for r in q1.context["namespaces"]}
    assert {ns: (r["weight"], r["deserved_h"]) for ns, r in rows.items()} == {
        "ns1": (3, "3 cores"),
        "ns2": (1, "1 core"),
    }
    q2 = admin_client.get("/queues/q2/")
    assert {r["namespace"]: r["deserved_h"] for r in q2.context["namespaces"]} == {"ns3": "10 cores", "ns4": "2 cores"}
    entitled = {r["name"]: r["entitled"] for r in admin_client.get("/trees/queues/").context["rows"]}
    assert (entitled["q1"], entitled["q2"]) == ("4", "12")
    fig = q1.context["figures"]["namespaces"]
    deserved = next(t for t in fig["data"] if t["name"] == "deserved" and t["xaxis"] == "x")
    assert deserved["x"] == [3.0, 1.0]


# -- borrowing and lending, team view ----------------------------------------------------------------------------


def test_the_team_page_shows_runtime_and_who_lends_to_whom(client: Any, lending: None) -> None:
    page = login(client, "lead-x").get("/team/x-team/")
    assert page.status_code == 200
    quota = next(s for s in page.context["sections"] if s["kind"] == "quota")
    cpu = next(r for r in quota["resource_rows"] if r["resource"] == "cpu")
    assert (cpu["entitled"], cpu["used"], cpu["floor"], cpu["borrowed"]) == (
        "90 cores",
        "80 cores",
        "50 cores",
        "30 cores",
    )
    # y belongs to another team: named, not linked
    assert quota["borrows"] == [{"other": "y", "url": "", "resource": "cpu", "amount": "≈ 30 cores"}]
    assert quota["lends"] == []
    html = page.content.decode()
    assert "▲ borrows 30 cores" in html and "from y" in html
    jobs = {j["name"]: j for j in page.context["jobs"]}
    assert jobs["eval"]["waiting"] and jobs["eval"]["reason"] == "NotEnoughResources"
    assert "requested 20, available 10" in html


def test_the_lender_sees_whom_it_lends_to(client: Any, lending: None) -> None:
    page = login(client, "lead-y").get("/quotas/y/")
    assert page.context["lends"] == [{"other": "x", "url": "", "resource": "cpu", "amount": "≈ 30 cores"}]
    assert "▼ lends 30 cores" in page.content.decode()


def test_the_overview_ranks_borrowers_and_lists_waiting_jobs(admin_client: Any, lending: None) -> None:
    page = admin_client.get("/overview/")
    top = [(row["kind"], row["name"]) for row in page.context["top_rows"]]
    assert ("quota group", "x") in top and ("quota group", "y") in top
    assert [j["key"] for j in page.context["waiting"]] == ["x-ns/eval"]
    capacity = {r["resource"]: r for r in page.context["capacity_rows"]}
    assert (capacity["cpu"]["total"], capacity["cpu"]["allocated"], capacity["cpu"]["pct"]) == (
        "100 cores",
        "90 cores",
        90.0,
    )
    assert page.context["health"] == {"ran": False, "recent": []}


def test_pipelined_pods_are_counted_as_pipelined_not_running(
    client: Any, admin_client: Any, admin: Any, lending: None
) -> None:
    """A gang whose pods are Running, Bound, Pipelined and Pending: each page counts them as the API does."""
    from rest_framework.test import APIClient

    from scheduling.models import Node, Pod

    pg = b.job("x-ns", "sweep", "xq", 5, {"cpu": "1"}, group_name="x", phase="Inqueue")
    pods = list(Pod.objects.filter(podgroup=pg).order_by("name"))
    n1 = Node.objects.get(name="n1")
    for p, status in zip(pods, ("Running", "Bound", "Pipelined", "Pipelined", "Pending"), strict=True):
        p.status = status
        p.node = n1 if status in ("Running", "Bound") else None
        p.save()
    api = APIClient()
    api.force_authenticate(admin)
    by_status = {
        s: api.get("/api/v1/pods/", {"status": s, "namespace": "x-ns"}).json()["count"]
        for s in ("Running", "Bound", "Pipelined", "Pending")
    }
    assert by_status == {"Running": 9, "Bound": 1, "Pipelined": 2, "Pending": 2}  # x-ns: train 8 + eval 1 + sweep 5

    overview = admin_client.get("/overview/")
    assert overview.context["pods"] == {"running": 10, "bound": 1, "pipelined": 2, "releasing": 0, "pending": 2}
    html = overview.content.decode()
    assert "1 bound · 2 pipelined · 2 pending" in html
    sweep = next(j for j in overview.context["waiting"] if j["name"] == "sweep")
    assert (sweep["running"], sweep["bound"], sweep["pipelined"], sweep["pods"]) == (1, 1, 2, 5)
    assert '1 running · 1 bound · <span class="pipelined">2 pipelined</span>' in html

    team = login(client, "lead-x").get("/team/x-team/")
    assert team.context["pod_counts"] == {"running": 9, "bound": 1, "pipelined": 2, "releasing": 0, "pending": 2}
    assert 'pods: <span class="pod-counts">9 running · 1 bound · 2 pipelined · 2 pending</span>' in (
        team.content.decode()
    )
    sweep = next(j for j in team.context["jobs"] if j["name"] == "sweep")
    assert (sweep["running"], sweep["pipelined"]) == (1, 2)
    queue_page = admin_client.get("/queues/xq/")
    assert queue_page.context["pod_counts"]["pipelined"] == 2 and queue_page.context["pod_counts"]["running"] == 9


def test_session_health_and_time_series_come_from_the_session_records(admin_client: Any, lending: None) -> None:
    cluster = Cluster.objects.get(name="default")
    now = timezone.now()
    for i in range(5):
        t = now - timedelta(minutes=5 - i)
        SchedulingSession.objects.create(cluster=cluster, started=t, finished=t, duration_ms=10.0 + i, bound=i)
        QuotaSample.objects.create(
            cluster=cluster,
            time=t,
            kind="quota",
            name="x",
            request={"cpu": 100_000},
            allocated={"cpu": 70_000 + 2_000 * i},
            deserved={"cpu": 90_000},
            borrowed={"cpu": 20_000 + 2_000 * i},
            lent={},
        )
    QuotaSample.objects.create(
        cluster=cluster,
        time=now - timedelta(hours=3),
        kind="quota",
        name="x",
        request={},
        allocated={},
        deserved={},
        borrowed={},
        lent={},
    )
    health = admin_client.get("/overview/").context["health"]
    assert health["ran"] and health["last"]["bound"] == 4 and health["mean_ms"] == 12.0
    fig = admin_client.get("/quotas/x/", {"window": "1h"}).context["figures"]["timeseries"]
    used = next(t for t in fig["data"] if t["name"] == "used")
    borrowed = next(t for t in fig["data"] if t["name"] == "borrowed")
    assert used["y"] == [70.0, 72.0, 74.0, 76.0, 78.0]
    assert borrowed["y"] == [20.0, 22.0, 24.0, 26.0, 28.0]
    longer = admin_client.get("/quotas/x/", {"window": "6h"}).context["figures"]["timeseries"]
    assert len(next(t for t in longer["data"] if t["name"] == "used")["y"]) == 6


def test_every_page_answers_its_live_json(admin_client: Any, lending: None) -> None:
    for path, figures, fragments in (
        ("/overview/", {"capacity", "sessions", "top_queues", "top_quotas"}, {"frag-kpis", "frag-waiting"}),
        ("/trees/queues/", {"tree"}, {"frag-tree-table"}),
        ("/queues/xq/", {"resources", "timeseries", "namespaces"}, {"frag-resources", "frag-jobs", "frag-explain"}),
        ("/quotas/x/", {"resources", "timeseries"}, {"frag-loans"}),
        ("/team/x-team/", {"quota-x", "queue-xq"}, {"frag-team", "frag-jobs"}),
    ):
        data = live(admin_client, path)
        assert figures <= set(data["figures"]), path
        assert fragments <= set(data["fragments"]), path
        for fig in data["figures"].values():
            assert {"data", "layout"} <= set(fig)


def test_the_live_json_follows_the_database(admin_client: Any, lending: None) -> None:
    before = live(admin_client, "/quotas/x/")["fragments"]["frag-loans"]
    assert "30 cores" in before
    from scheduling.models import Pod

    Pod.objects.filter(name="train-7").update(status="Succeeded", updated=timezone.now())
    after = live(admin_client, "/quotas/x/")["fragments"]["frag-loans"]
    assert "20 cores" in after and "30 cores" not in after


def test_the_queue_explanation_lists_the_engines_steps(admin_client: Any, lending: None) -> None:
    steps = admin_client.get("/queues/xq/").context["explain"]["queue"]
    quantities = [s["quantity"] for s in steps]
    assert "deserved" in quantities and "realCapability" in quantities
    text = " ".join(" ".join(s["steps"]) for s in steps)
    assert "deserved[cpu]" in text


def test_the_history_page_says_who_changed_what(admin_client: Any, admin: Any, lending: None) -> None:
    response = admin_client.post(
        "/edit/queues/xq/",
        {
            "name": "xq",
            "parent": "root",
            "weight": "4",
            "priority": "0",
            "reclaimable": "on",
            "version": "1",
            "action": "save",
        },
    )
    assert response.status_code == 302
    rows = admin_client.get("/history/queues/xq/").context["rows"]
    assert rows[0]["who"] == "boss" and rows[0]["what"] == "changed"
    assert {"field": "weight", "old": "1", "new": "4"} in rows[0]["changes"]
    assert rows[-1]["what"] == "created"
    recent = admin_client.get("/history/").context["sections"]
    assert any(r["node"] == "xq" and r["who"] == "boss" for s in recent for r in s["rows"])


def test_pages_without_a_cluster_still_render(admin_client: Any) -> None:
    Cluster.objects.all().delete()
    for path in ("/overview/", "/trees/queues/", "/trees/quotas/"):
        response = admin_client.get(path)
        assert response.status_code == 200
    assert json.dumps(admin_client.get("/trees/queues/").context["figures"]["tree"])


def test_the_team_page_says_when_a_min_was_scaled_down(client: Any, db: Any) -> None:
    """Two groups whose mins (80 + 80) claim more than the cluster's 100 cpu are scaled to 50 each: x uses 60 and
    borrows 10 above its scaled min, and its page says the min it reads was scaled (it would not add up to 80)."""
    b.node("n1", cpu="100", memory="400Gi")
    b.group("x", min={"cpu": "80"}, max={"cpu": "100"})
    b.group("y", min={"cpu": "80"}, max={"cpu": "100"})
    b.queue("xq")
    b.namespace("x-ns", queue_name="xq", group_name="x")
    b.job("x-ns", "train", "xq", 6, {"cpu": "10"}, running=6, on="n1", group_name="x")
    b.team("x-team", queues=["xq"], groups=["x"])
    b.user("lead-x", teams=["x-team"])
    page = login(client, "lead-x").get("/team/x-team/")
    quota = next(s for s in page.context["sections"] if s["kind"] == "quota")
    cpu = next(r for r in quota["resource_rows"] if r["resource"] == "cpu")
    assert (cpu["floor"], cpu["floor_scaled"], cpu["used"], cpu["borrowed"]) == (
        "80 cores",
        "scaled to 50 cores",
        "60 cores",
        "10 cores",
    )
    assert "scaled to 50 cores" in page.content.decode()
    queue = next(s for s in page.context["sections"] if s["kind"] == "queue")
    assert all(not r["floor_scaled"] for r in queue["resource_rows"])
