"""The fairness audit (issue 13, item 4): ``GET /api/v1/audit/`` and the ``/audit/`` page answer "who is starved,
who borrows, who lends, where can I reclaim" with numbers, for admins only; an idle guarantee's suggestion stages a
what-if."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from planning.audit import AuditSerializer
from scheduling.models import QuotaSample
from security.tokens import create_token
from tests.frontend import builders as b

pytestmark = pytest.mark.django_db


def starving() -> None:
    """Quota groups a and b share 100 cpu (min 50 each): a runs 10 cpu and waits for 40 more, b runs 90 — it
    borrows 40 of a's min. Queues qa and qb (weight 1 each) likewise."""
    b.node("n1", cpu="100", memory="400Gi")
    b.group("a", min={"cpu": "50"}, max={"cpu": "100"})
    b.group("b", min={"cpu": "50"}, max={"cpu": "100"})
    b.queue("qa", weight=1)
    b.queue("qb", weight=1)
    b.namespace("a-ns", queue_name="qa", group_name="a")
    b.namespace("b-ns", queue_name="qb", group_name="b")
    b.job("a-ns", "small", "qa", 1, {"cpu": "10"}, running=1, on="n1", group_name="a")
    b.job("a-ns", "waits", "qa", 1, {"cpu": "40"}, group_name="a", reason="NotEnoughResources")
    b.job("b-ns", "big", "qb", 9, {"cpu": "10"}, running=9, on="n1", group_name="b")


def _sample(kind: str, name: str, hours_ago: float, used: int, entitled: int) -> None:
    QuotaSample.objects.create(
        cluster=b.cluster(),
        time=timezone.now() - timedelta(hours=hours_ago),
        kind=kind,
        name=name,
        allocated={"cpu": used},
        deserved={"cpu": entitled},
    )


@pytest.fixture
def admin_token(make_user: Any) -> str:
    return create_token(make_user("boss", staff=True), "test")[1]


def test_the_starved_team_is_named_next_to_the_sibling_that_borrows_its_share(client: Any, admin_token: str) -> None:
    starving()
    body = client.get("/api/v1/audit/", headers={"Authorization": f"Token {admin_token}"}).json()
    AuditSerializer(data=body).is_valid(raise_exception=True)  # the answer is what the OpenAPI schema says
    assert set(body) == set(AuditSerializer().fields)
    starved = {(s["tree"], s["name"], s["resource"]): s for s in body["starved"]}
    group = starved[("quota", "a", "cpu")]
    assert (group["waiting"], group["held"], group["entitled"], group["shortfall"]) == ("40", "10", "50", "40")
    assert group["borrowers"] == [{"name": "b", "borrowed": "40"}]
    queue = starved[("queue", "qa", "cpu")]
    assert queue["waiting"] == "40" and queue["held"] == "10"
    assert [x["name"] for x in queue["borrowers"]] == ["qb"]
    assert ("quota", "b", "cpu") not in starved  # it holds more than its min
    assert not any(s["name"] == "root" for s in body["starved"])  # the whole cluster lacks capacity, not a share
    lending = {(x["tree"], x["name"], x["resource"]): x for x in body["lending"]}
    assert lending[("quota", "a", "cpu")]["lent"] == "40"


def test_an_idle_guarantee_is_measured_against_the_peak_of_the_window(client: Any, admin_token: str) -> None:
    """a's min is 50: it used 90 cpu ten days ago, 10 from eight days ago (the state when the 7-day window opens),
    20 for the last two days; each sample stands until the next. b used 90 of a 50 share for the last three days."""
    starving()
    _sample("quota", "a", 24 * 10, 90_000, 50_000)  # superseded before the window opens: no part of it
    _sample("quota", "a", 24 * 8, 10_000, 50_000)
    _sample("quota", "a", 48, 20_000, 50_000)
    _sample("quota", "b", 72, 90_000, 50_000)
    auth = {"Authorization": f"Token {admin_token}"}
    body = client.get("/api/v1/audit/?days=7", headers=auth).json()
    assert body["window_days"] == 7
    idle = {(i["tree"], i["name"], i["resource"]): i for i in body["idle_guarantees"]}
    a = idle[("quota", "a", "cpu")]
    assert (a["guaranteed"], a["peak_used"], a["freeable"]) == ("50", "20", "30")
    assert a["average_used"] == "12857m"  # (10 cpu for 120 h + 20 cpu for 48 h) / 168 h
    assert 167.9 < a["covered_hours"] <= 168.1
    assert ("quota", "b", "cpu") not in idle  # it used more than its min
    usage = {(u["tree"], u["name"], u["resource"]): u for u in body["usage_over_time"]}
    assert usage[("quota", "b", "cpu")]["ratio"] == 1.8
    assert usage[("quota", "a", "cpu")]["ratio"] == pytest.approx(0.257, abs=0.001)
    assert body["usage_over_time"][0]["name"] == "b"  # the most over its share first
    one_day = client.get("/api/v1/audit/?days=1", headers=auth).json()
    a1 = {i["name"]: i for i in one_day["idle_guarantees"]}["a"]
    assert (a1["peak_used"], a1["average_used"]) == ("20", "20") and 23.9 < a1["covered_hours"] <= 24.1


def test_bad_parameters_name_the_field(client: Any, admin_token: str) -> None:
    b.cluster()
    auth = {"Authorization": f"Token {admin_token}"}
    for query, field in (("days=0", "days"), ("days=400", "days"), ("days=x", "days"), ("cluster=nope", "cluster")):
        response = client.get(f"/api/v1/audit/?{query}", headers=auth)
        assert response.status_code == 400, query
        assert [e["attr"] for e in response.json()["errors"]] == [field], query


def test_only_admins_see_the_audit(client: Any, make_user: Any, admin_token: str) -> None:
    starving()
    lead = make_user("lead", groups=("a-team",))
    token = create_token(lead, "test")[1]
    assert client.get("/api/v1/audit/", headers={"Authorization": f"Token {token}"}).status_code == 403
    assert client.get("/api/v1/audit/").status_code == 401
    client.force_login(lead)
    assert client.get("/audit/").status_code == 403
    assert client.post("/audit/stage/", {"kind": "quota", "name": "a", "resource": "cpu", "to": "0"}).status_code == 403


def test_the_page_answers_in_one_screen_and_stages_the_suggestion(client: Any, make_user: Any) -> None:
    starving()
    _sample("quota", "a", 72, 10_000, 50_000)
    _sample("quota", "a", 24, 20_000, 50_000)
    client.force_login(make_user("boss", staff=True))
    page = client.get("/audit/").content.decode()
    for heading in ("Starved now", "Lending now", "Idle guarantees", "Use over time"):
        assert heading in page
    assert "10 cores" in page and "▲ 40 cores" in page and "30 cores" in page
    assert 'href="/quotas/a/"' in page and 'href="/quotas/b/"' in page
    response = client.post("/audit/stage/", {"kind": "quota", "name": "a", "resource": "cpu", "to": "20000"})
    assert response.status_code == 302 and response["Location"] == "/whatif/"
    staged = client.session["fairway_staged"]
    assert len(staged) == 1 and staged[0]["change"]["spec"] == {"min": {"cpu": "20"}}
    whatif = client.get("/whatif/").content.decode()
    assert "min cpu=20" in whatif
    assert (
        client.post("/audit/stage/", {"kind": "quota", "name": "nope", "resource": "cpu", "to": "1"}).status_code == 404
    )


def test_the_tree_roots_are_left_out_and_long_tables_are_cut(
    client: Any, make_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster's roots (queue root; quota groups root, system, default: unlimited or not a team's) have no row;
    each table shows its first rows with a link to all of them."""
    from frontend.views import audit as page

    starving()
    for kind, name in (("queue", "root"), ("quota", "root"), ("quota", "system"), ("quota", "default")):
        _sample(kind, name, 24, 1_000, 2**62)
    _sample("quota", "a", 24, 10_000, 50_000)
    client.force_login(make_user("boss", staff=True))
    body = client.get("/api/v1/audit/").json()
    named = {
        (row["tree"], row["name"]) for key in ("starved", "idle_guarantees", "usage_over_time") for row in body[key]
    }
    assert not named & {("queue", "root"), ("quota", "root"), ("quota", "system"), ("quota", "default")}
    assert "unlimited" not in client.get("/audit/").content.decode()
    monkeypatch.setattr(page, "ROWS", 1)

    def starved_rows(html: str) -> int:
        section = html[html.index('data-testid="audit-starved"') : html.index('data-testid="audit-lending"')]
        return section.split("<tbody>", 1)[1].count("<tr>")

    cut = client.get("/audit/").content.decode()
    assert 'data-testid="all-starved"' in cut and "all 2 rows" in cut and starved_rows(cut) == 1
    full = client.get("/audit/?all=1").content.decode()
    assert 'data-testid="all-starved"' not in full and starved_rows(full) == 2


def test_the_last_hour_is_read_a_sample_a_minute(client: Any, admin_token: str) -> None:
    """A session a second leaves 60 samples a minute for the last hour (compaction thins them later): the audit reads
    the latest of each minute, as compaction keeps them, so a spike inside a minute that did not last to its end is
    not its peak; samples older than the hour are read as compaction left them."""
    starving()
    base = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=30)
    for second in range(0, 60, 5):  # one minute, half an hour ago: a spike to 45 cpu, then 15 at its end
        QuotaSample.objects.create(
            cluster=b.cluster(),
            time=base + timedelta(seconds=second),
            kind="quota",
            name="a",
            allocated={"cpu": 45_000 if second < 55 else 15_000},
            deserved={"cpu": 50_000},
        )
    _sample("quota", "a", 3, 10_000, 50_000)  # three hours ago, before the last hour
    body = client.get("/api/v1/audit/?days=1", headers={"Authorization": f"Token {admin_token}"}).json()
    a = {i["name"]: i for i in body["idle_guarantees"]}["a"]
    assert a["peak_used"] == "15"  # the minute's latest sample, not its spike
    assert 2.9 < a["covered_hours"] < 3.1


def test_the_waits_are_those_of_the_jobs_submitted_in_the_window_per_team(
    client: Any, admin_token: str, make_user: Any
) -> None:
    """qa's jobs in the window: two removed ones (history rows) that waited 60 s and 600 s and finished, a running
    one that waited 30 s, one waiting for two hours; a removed job submitted before the window is not counted. Each
    team's pods preempted (or reclaimed) and recycled in the window are counted; a pod lost with its node is not, nor
    an eviction older than the window. The roots have no row, nor a queue deleted since; the longest waits come
    first."""
    from scheduling.models import Eviction, JobRecord, Pod, PodGroup

    starving()
    now = timezone.now()
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    for name, submitted, wait in (("r1", 3600, 60), ("r2", 7200, 600), ("old", 8 * 86400, 5), ("gone", 60, 1)):
        JobRecord.objects.create(
            cluster=b.cluster(),
            namespace="a-ns",
            name=name,
            queue="qa" if name != "gone" else "deleted-since",  # a queue no longer in the tree: no row of its own
            quota_group="a" if name != "gone" else "deleted-too",
            roles=[["", 1, {"cpu": 1000}]],
            submitted=ago(submitted),
            started=ago(submitted - wait),
            finished=ago(submitted - wait - 10),
        )
    for name, created, wait in (("small", 1800, 30), ("waits", 7200, None), ("big", 600, 5)):
        PodGroup.objects.filter(name=name).update(created=ago(created))
        if wait is not None:
            Pod.objects.filter(podgroup__name=name).update(started=ago(created - wait))
    for job, action, seconds in (
        ("small", "preempt", 60),
        ("small", "reclaim", 60),
        ("small", "preempt", 9 * 86400),
        ("small", "node-lost", 60),
        ("big", "recycle", 60),
    ):
        ns = "b-ns" if job == "big" else "a-ns"
        Eviction.objects.create(
            cluster=b.cluster(), pod_uid=f"{ns}/{job}-0", namespace=ns, action=action, job=job, created=ago(seconds)
        )
    body = client.get("/api/v1/audit/?days=7", headers={"Authorization": f"Token {admin_token}"}).json()
    AuditSerializer(data=body).is_valid(raise_exception=True)
    rows = {(w["tree"], w["name"]): w for w in body["waits"]}
    assert [(w["tree"], w["name"]) for w in body["waits"]] == [
        ("queue", "qa"),
        ("quota", "a"),
        ("queue", "qb"),
        ("quota", "b"),
    ]
    for node in (("queue", "qa"), ("quota", "a")):
        qa = rows[node]
        assert (qa["jobs_started"], qa["jobs_finished"], qa["jobs_waiting"]) == (3, 2, 1)
        assert (qa["wait_p50_seconds"], qa["wait_p95_seconds"]) == (60.0, 600.0)  # nearest rank of 30, 60, 600
        assert 7200 <= qa["wait_max_seconds"] < 7300  # the job still waiting, its wait so far
        assert (qa["preempted_pods"], qa["recycled_pods"]) == (2, 0)
    qb = rows[("queue", "qb")]
    assert (qb["jobs_started"], qb["wait_p50_seconds"], qb["wait_max_seconds"], qb["recycled_pods"]) == (1, 5.0, 5.0, 1)
    # by when the jobs were submitted: day by day over a week, hour by hour over a day; the periods add up to the row
    trend = {(t["tree"], t["name"]): t["points"] for t in body["waits_trend"]}
    assert list(trend) == [(w["tree"], w["name"]) for w in body["waits"]]
    assert sum(p["jobs_started"] for p in trend[("queue", "qa")]) == 3
    assert sum(p["jobs_waiting"] for p in trend[("queue", "qa")]) == 1
    assert all(p["start"].endswith("T00:00:00Z") for p in trend[("queue", "qa")])
    one_day = client.get("/api/v1/audit/?days=1", headers={"Authorization": f"Token {admin_token}"}).json()
    assert {(w["tree"], w["name"]): w["jobs_started"] for w in one_day["waits"]}[("queue", "qa")] == 3
    hourly = {(t["tree"], t["name"]): t["points"] for t in one_day["waits_trend"]}[("queue", "qa")]
    assert all(p["start"].endswith(":00:00Z") for p in hourly) and sum(p["jobs_started"] for p in hourly) == 3
    assert len(hourly) >= 2  # submitted 2 h, 1 h and 30 min ago: two hours at least
    client.force_login(make_user("boss2", staff=True))
    page = client.get("/audit/").content.decode()
    waits = page[page.index('data-testid="audit-waits"') :]
    assert "Waiting to start" in waits and "<strong>10 min</strong>" in waits  # qa's 95th percentile, for people
    assert 'data-figure="waits_trend"' in waits and "submitted each day" in waits
    assert waits.index('href="/queues/qa/"') < waits.index('href="/queues/qb/"')


def test_a_name_used_again_keeps_each_jobs_own_evictions() -> None:
    """nlp/train ran in qa and was deleted, then a job of the same name went to qb: the recycling of the first (3 h
    ago) is the first's, the preemption of the second (10 min ago) the second's; a preemption of a train submitted
    before the window (9 days ago, evicted 8 days ago) counts for neither, nor for the audit of the window."""
    from planning.audit import recorded_jobs
    from scheduling.models import Eviction, JobRecord

    now = timezone.now()
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    for queue, submitted, finished in (("qa", 9 * 86400, 8 * 86400), ("qa", 4 * 3600, 2 * 3600), ("qb", 3600, 60)):
        JobRecord.objects.create(
            cluster=b.cluster(),
            namespace="nlp",
            name="train",
            queue=queue,
            quota_group="",
            roles=[["", 1, {"cpu": 1000}]],
            submitted=ago(submitted),
            started=ago(submitted - 30),
            finished=ago(finished),
        )
    for action, seconds in (("preempt", 8 * 86400), ("recycle", 3 * 3600), ("preempt", 600), ("reclaim", 590)):
        Eviction.objects.create(
            cluster=b.cluster(),
            pod_uid="nlp/train-0",
            namespace="nlp",
            action=action,
            job="train",
            created=ago(seconds),
        )
    week = recorded_jobs(b.cluster(), ago(7 * 86400), now)
    assert sorted((j.queue, j.preempted, j.recycled) for j in week) == [("qa", 0, 1), ("qb", 2, 0)]
    month = recorded_jobs(b.cluster(), ago(10 * 86400), now)
    assert sorted((j.queue, j.preempted, j.recycled) for j in month) == [("qa", 0, 1), ("qa", 1, 0), ("qb", 2, 0)]


def test_the_submitters_are_ranked_by_the_gpu_hours_their_jobs_held(
    client: Any, admin_token: str, make_user: Any
) -> None:
    """Per submitter of the window's jobs: ann's two history rows (3 and 1 GPU-hours) and bob's running job (a pod of
    2 GPUs started 30 min ago: 1 GPU-hour so far); a job of nobody known counts for its namespace. A member of qb's
    team reads only the submitters of qb's and b's jobs, and their figures from those jobs alone."""
    from django.contrib.auth.models import Group

    from quotas.models import Queue, QuotaGroup
    from scheduling.models import JobRecord, Pod, PodGroup

    starving()
    now = timezone.now()
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    for name, user, queue, group, gpu_seconds in (
        ("a1", "ann", "qa", "a", 3 * 3600.0),
        ("a2", "ann", "qb", "b", 3600.0),
        ("n1", "", "qa", "a", 0.0),
    ):
        JobRecord.objects.create(
            cluster=b.cluster(),
            namespace="a-ns",
            name=name,
            queue=queue,
            quota_group=group,
            roles=[["", 1, {"cpu": 1000}]],
            submitted=ago(7200),
            started=ago(7000),
            finished=ago(3600),
            user=user,
            gpu_seconds=gpu_seconds,
        )
    PodGroup.objects.filter(name="small").update(user="bob", created=ago(3600))
    Pod.objects.filter(podgroup__name="small").update(request={"nvidia.com/gpu": 2000}, started=ago(1800))
    PodGroup.objects.filter(name__in=("waits", "big")).update(created=ago(10 * 86400))  # not in the window
    body = client.get("/api/v1/audit/?days=1", headers={"Authorization": f"Token {admin_token}"}).json()
    AuditSerializer(data=body).is_valid(raise_exception=True)
    rows = [(s["name"], round(s["gpu_hours"], 1), s["jobs_started"]) for s in body["submitters"]]
    assert rows == [("ann", 4.0, 2), ("bob", 1.0, 1), ("namespace a-ns", 0.0, 1)]  # bob: 1 pod of 2 GPUs, 30 min
    member = make_user("qb-lead")
    team = Group.objects.create(name="team-b")
    member.groups.add(team)
    Queue.objects.get(name="qb").teams.add(team)
    QuotaGroup.objects.get(name="b").teams.add(team)
    token = create_token(member, "test")[1]
    mine = client.get("/api/v1/audit/?days=1", headers={"Authorization": f"Token {token}"}).json()
    assert [(s["name"], s["gpu_hours"], s["jobs_started"]) for s in mine["submitters"]] == [("ann", 1.0, 1)]
    client.force_login(make_user("boss3", staff=True))
    page = client.get("/audit/?days=1").content.decode()
    card = page[page.index('data-testid="audit-submitters"') :]
    assert "Who submitted" in card and card.index(">ann<") < card.index(">bob<") < card.index(">namespace a-ns<")
    assert "<strong>4.0</strong>" in card  # ann's GPU-hours
