"""``/metrics``: Prometheus' text format (parsed with prometheus-client's own parser) carrying each tree node's
values equal to the tree endpoints', the waiting jobs and the nodes' heartbeats; for admins and the metrics bearer
token only."""

from __future__ import annotations

from typing import Any

from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from engine.resources import parse_quantity
from security.tokens import create_token
from tests.frontend import builders as b


def scrape(client: Any, **headers: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=")
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def value(metrics: dict[str, Any], name: str, **labels: str) -> float | None:
    for key, v in metrics.get(name, {}).items():
        if all((k, labels[k]) in key for k in labels):
            return float(v)
    return None


def test_a_teams_borrowed_and_lent_equal_the_tree_endpoints(api: Any, client: Any, make_user: Any) -> None:
    b.lending()
    admin = make_user("admin", staff=True)
    admin_api = api(admin)
    token = create_token(admin, "test")[1]
    metrics = scrape(client, Authorization=f"Token {token}")
    shown = {
        "quota_group": _flat(admin_api.get("/api/v1/quota-groups/tree/").json()),
        "queue": _flat(admin_api.get("/api/v1/queues/tree/").json()),
    }
    for label, names, fields in (
        ("quota_group", ("x", "y"), ("borrowed", "lent", "used", "runtime")),
        ("queue", ("xq", "yq"), ("deserved", "allocated", "borrowed", "lent")),
    ):
        for name in names:
            for field in fields:
                page = (shown[label][name]["values"].get(field) or {}).get("cpu", "0")
                scraped = value(metrics, f"fairway_{label}_{field}", **{label: name, "resource": "cpu"}) or 0.0
                assert scraped == parse_quantity(page, "cpu") / 1000, (name, field, page, scraped)
    assert value(metrics, "fairway_quota_group_borrowed", quota_group="x", resource="cpu") == 30.0
    assert value(metrics, "fairway_quota_group_lent", quota_group="y", resource="cpu") == 30.0
    assert value(metrics, "fairway_quota_group_min", quota_group="x", resource="cpu") == 50.0
    assert value(metrics, "fairway_quota_group_lendable_resources", quota_group="y", resource="cpu") == 40.0
    assert value(metrics, "fairway_quota_group_pending_demand", quota_group="x", resource="cpu") == 20.0
    assert value(metrics, "fairway_queue_waiting_jobs", queue="xq", phase="Pending") == 1.0
    assert value(metrics, "fairway_quota_group_max", quota_group="default") is None  # unlimited: left out
    assert value(metrics, "fairway_nodes", cluster="default", ready="true") == 1.0
    assert "django_http_requests_total_by_method_total" in metrics  # the web process' own (django-prometheus)


def _flat(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A nested tree endpoint's nodes by name."""
    out = {}
    for node in nodes:
        out[node["name"]] = node
        out.update(_flat(node.get("children", [])))
    return out


def test_only_admins_and_the_bearer_token_may_scrape(client: Any, make_user: Any, db: Any) -> None:
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics")["WWW-Authenticate"].startswith("Bearer")
    b.lending()
    lead = make_user("lead", groups=("x-team",))
    lead_token = create_token(lead, "test")[1]
    assert client.get("/metrics", headers={"Authorization": f"Token {lead_token}"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer anything"}).status_code == 401
    with override_settings(FAIRWAY={**_fairway(), "METRICS_TOKEN": "s3cret-scrape"}):
        assert client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape"}).status_code == 200
        assert client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrap"}).status_code == 401
    client.force_login(make_user("boss", staff=True))
    assert client.get("/metrics").status_code == 200


def _fairway() -> dict[str, Any]:
    from django.conf import settings

    return dict(settings.FAIRWAY)


def test_the_grafana_dashboard_reads_only_metrics_that_exist() -> None:
    """The shipped per-team dashboard (deploy/grafana/fairway-team.json) is valid JSON whose every query names a
    metric /metrics exports and only labels those metrics carry."""
    import json
    import re
    from pathlib import Path

    from planning.metrics import GROUP_GAUGES, GROUP_LABELS, QUEUE_GAUGES, QUEUE_LABELS

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "deploy/grafana/fairway-team.json").read_text())
    exported = {f"fairway_queue_{k}": set(QUEUE_LABELS) for k in QUEUE_GAUGES}
    exported |= {f"fairway_quota_group_{k}": set(GROUP_LABELS) for k in GROUP_GAUGES}
    exported["fairway_queue_waiting_jobs"] = {"cluster", "queue", "phase"}
    exported["fairway_session_duration_seconds_bucket"] = {"cluster", "kind", "le"}
    exported["fairway_sessions_total"] = {"cluster", "kind", "status"}
    exported["fairway_evictions_total"] = {"cluster", "action"}
    exported["fairway_admission_blocked_jobs"] = {"cluster", "blocker_kind", "blocker", "resource"}
    exported["fairway_queue_job_wait_seconds"] = {"cluster", "queue", "quantile"}
    exported["fairway_queue_job_wait_longest_seconds"] = {"cluster", "queue"}
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    queries += [v["query"]["query"] for v in dashboard["templating"]["list"] if isinstance(v.get("query"), dict)]
    assert len(queries) >= 20
    for query in queries:
        for name, labels in re.findall(r"(fairway_[a-z_]+)(?:\{([^}]*)\})?", query):
            assert name in exported, (name, query)
            used = {part.split("=")[0].strip() for part in labels.split(",") if part.strip()}
            assert used <= exported[name], (name, used - exported[name])


def test_session_counters_count_what_the_sessions_did_and_survive_their_rows(client: Any, make_user: Any) -> None:
    """A session that binds, a skip, a failure and a lost node, then every session row deleted (retention): the
    counters, the duration histogram and the evictions by action still say what happened; a rolled-back session
    counts nothing."""
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from scheduling import agent, sessions, store
    from scheduling.models import Node, Pod, SchedulingSession
    from tests.scheduling.conftest import build_world

    world = build_world(nodes=6)
    cluster = world.cluster
    ran = sessions.run_scheduling_session(cluster)
    assert ran.bound > 0
    store.record_skipped(cluster.pk)
    store.record_failure(cluster, "session", timezone.now() - timedelta(seconds=2), RuntimeError("boom"))
    try:
        with transaction.atomic():
            sessions.run_scheduling_session(cluster)
            raise RuntimeError("rolled back after the session")
    except RuntimeError:
        pass
    node = Node.objects.get(cluster=cluster, name=Pod.objects.filter(cluster=cluster).exclude(node=None)[0].node.name)
    on_node = Pod.objects.filter(node=node).count()
    Node.objects.filter(pk=node.pk).update(ready=False, not_ready_since=timezone.now() - timedelta(hours=1))
    assert agent.evict_lost_nodes(cluster, timezone.now())["lost"] == on_node > 0
    SchedulingSession.objects.filter(cluster=cluster).delete()

    admin = make_user("admin", staff=True)
    metrics = scrape(client, Authorization=f"Token {create_token(admin, 'test')[1]}")
    c = {"cluster": "c1"}
    assert value(metrics, "fairway_sessions_total", **c, kind="session", status="ok") == 1.0
    assert value(metrics, "fairway_sessions_total", **c, kind="session", status="skipped") == 1.0
    assert value(metrics, "fairway_sessions_total", **c, kind="session", status="failed") == 1.0
    assert value(metrics, "fairway_binds_total", **c) == ran.bound
    assert value(metrics, "fairway_pipelined_total", **c) == ran.pipelined
    assert value(metrics, "fairway_evictions_total", **c, action="node-lost") == on_node
    # the session that ran and the one that failed (after 2 s) have a duration; the skip has none
    assert value(metrics, "fairway_session_duration_seconds_count", **c, kind="session") == 2.0
    assert value(metrics, "fairway_session_duration_seconds_bucket", **c, kind="session", le="+Inf") == 2.0
    assert value(metrics, "fairway_session_duration_seconds_bucket", **c, kind="session", le="1.0") == 1.0
    total = value(metrics, "fairway_session_duration_seconds_sum", **c, kind="session")
    assert total is not None and 2.0 <= total < 2.0 + ran.duration_ms / 1000 + 0.5


def test_jobs_refused_admission_are_counted_by_what_blocks_them(client: Any, make_user: Any) -> None:
    from scheduling import sessions
    from scheduling.models import PodGroup
    from tests.scheduling.conftest import build_world

    world = build_world(nodes=1, node_cpu="1")  # the gang of two 2-cpu pods cannot fit on one 1-cpu node
    sessions.run_scheduling_session(world.cluster)
    waiting = PodGroup.objects.get(cluster=world.cluster, name="pg-a")
    assert waiting.blocker and waiting.blocker["kind"] == "cluster", waiting.blocker
    admin = make_user("admin", staff=True)
    metrics = scrape(client, Authorization=f"Token {create_token(admin, 'test')[1]}")
    assert (
        value(
            metrics,
            "fairway_admission_blocked_jobs",
            cluster="c1",
            blocker_kind="cluster",
            blocker="c1",
            resource="cpu",
        )
        == 1.0
    )


def test_a_job_refused_by_its_own_rule_is_counted_under_the_rule_not_its_name(client: Any, make_user: Any) -> None:
    """A gang or enqueue-policy blocker names the job itself: the metric labels it by the rule, so that the number of
    series stays the number of rules, not of jobs."""
    from scheduling.models import PodGroup
    from tests.scheduling.conftest import build_world

    world = build_world()
    PodGroup.objects.filter(cluster=world.cluster, name="pg-a").update(
        phase="Pending", blocker={"kind": "gang", "name": "ns-a/pg-a", "limit": "minMember"}
    )
    admin = make_user("admin", staff=True)
    metrics = scrape(client, Authorization=f"Token {create_token(admin, 'test')[1]}")
    labels = {dict(k).get("blocker") for k in metrics["fairway_admission_blocked_jobs"]}
    assert labels == {"minMember"}


def test_the_waits_to_start_of_the_last_hour_per_tree_node(client: Any, make_user: Any) -> None:
    """qa's jobs submitted in the last hour waited 60 s and 600 s and one still waits (for 20 min so far); one of two
    hours ago is outside the window. The figures are counted again only once FAIRWAY_METRICS_WAITS_EVERY_SECONDS has
    passed."""
    from datetime import timedelta

    from django.utils import timezone

    from planning import metrics as module
    from scheduling.models import JobRecord, PodGroup
    from tests.api.test_audit import starving

    starving()
    now = timezone.now()
    for name, submitted, wait in (("r1", 1800, 60), ("r2", 1500, 600), ("old", 7200, 5)):
        JobRecord.objects.create(
            cluster=b.cluster(),
            namespace="a-ns",
            name=name,
            queue="qa",
            quota_group="a",
            roles=[["", 1, {"cpu": 1000}]],
            submitted=now - timedelta(seconds=submitted),
            started=now - timedelta(seconds=submitted - wait),
        )
    PodGroup.objects.exclude(name="waits").delete()  # the other builder jobs have no start: not this test's
    PodGroup.objects.filter(name="waits").update(created=now - timedelta(minutes=20))
    token = {"Authorization": f"Token {create_token(make_user('admin', staff=True), 'test')[1]}"}
    module.clear()
    metrics = scrape(client, **token)
    for name, label in (("fairway_queue", "queue"), ("fairway_quota_group", "quota_group")):
        node = {"cluster": "default", label: "qa" if label == "queue" else "a"}
        assert value(metrics, f"{name}_job_wait_seconds", quantile="0.5", **node) == 60.0
        assert value(metrics, f"{name}_job_wait_seconds", quantile="0.95", **node) == 600.0
        assert 1200 <= value(metrics, f"{name}_job_wait_longest_seconds", **node) < 1300  # type: ignore[operator]
        assert value(metrics, f"{name}_jobs_started_recently", **node) == 2.0
    assert value(metrics, "fairway_queue_jobs_started_recently", cluster="default", queue="root") == 2.0
    assert value(metrics, "fairway_queue_job_wait_seconds", cluster="default", queue="qb") is None  # no job
    built = module.BUILDS["waits"]
    scrape(client, **token)
    assert module.BUILDS["waits"] == built  # kept: younger than FAIRWAY_METRICS_WAITS_EVERY_SECONDS
    with override_settings(FAIRWAY={**_fairway(), "METRICS_WAITS_EVERY_SECONDS": 0}):
        scrape(client, **token)
    assert module.BUILDS["waits"] == built + 1
