"""Borrowing and lending limits through the API: on queues and quota groups, read back (null = unlimited), in the
tree, validated with messages naming the field, recorded in the history, and binding in a what-if."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def test_queue_limits_round_trip(admin_api: Any) -> None:
    body = {
        "name": "team",
        "deserved": {"cpu": "12", "nvidia.com/gpu": "4"},
        "borrowing_limit": {"cpu": "2"},
        "lending_limit": {"cpu": "1", "nvidia.com/gpu": "0"},
    }
    admin_api.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "16", "nvidia.com/gpu": "8"}}, format="json")
    r = admin_api.post("/api/v1/queues/", body, format="json")
    assert r.status_code == 201, r.json()
    out = r.json()
    assert out["borrowing_limit"] == {"cpu": "2"}
    assert out["lending_limit"] == {"cpu": "1", "nvidia.com/gpu": "0"}  # a zero limit is kept: it lends nothing
    stored = Queue.objects.get(name="team")
    assert stored.to_spec().lending_limit.to_dict() == {"cpu": 1000, "nvidia.com/gpu": 0}
    tree = admin_api.get("/api/v1/queues/tree/").json()
    node = next(n for n in tree[0]["children"] if n["name"] == "team")
    assert node["borrowing_limit"] == {"cpu": "2"} and node["lending_limit"]["cpu"] == "1"
    # null clears a limit (unlimited); a queue without limits reads null
    r = admin_api.patch("/api/v1/queues/team/", {"lending_limit": None}, format="json")
    assert r.status_code == 200, r.json()
    assert r.json()["lending_limit"] is None and r.json()["borrowing_limit"] == {"cpu": "2"}
    assert admin_api.get("/api/v1/queues/default/").json()["borrowing_limit"] is None
    history = Queue.objects.get(name="team").history.order_by("history_date")
    assert [h.lending_limit.to_dict() if h.lending_limit else None for h in history] == [
        {"cpu": 1000, "nvidia.com/gpu": 0},
        None,
    ]


def test_queue_limit_rules_name_the_field(admin_api: Any) -> None:
    r = admin_api.post(
        "/api/v1/queues/",
        {"name": "team", "deserved": {"cpu": "4"}, "lending_limit": {"cpu": "5", "memory": "1Gi"}},
        format="json",
    )
    assert r.status_code == 400
    attrs = error_attrs(r)
    assert attrs["lending_limit.cpu"] == (
        "queue team: lending limit cpu 5 must be <= deserved cpu 4 (it cannot lend more than it is entitled to)"
    )
    assert attrs["lending_limit.memory"].startswith(
        "queue team: lending limit memory 1Gi is set but deserved does not set memory"
    )
    r = admin_api.post("/api/v1/queues/", {"name": "x", "borrowing_limit": {"cpu": "-1"}}, format="json")
    assert r.status_code == 400 and "borrowing_limit.cpu" in error_attrs(r)
    assert not Queue.objects.filter(name__in=["team", "x"]).exists()


def test_quota_group_limits_and_rules(admin_api: Any) -> None:
    r = admin_api.post(
        "/api/v1/quota-groups/",
        {"name": "g", "min": {"cpu": "4"}, "max": {"cpu": "16"}, "borrowing_limit": {"cpu": "2"}},
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["borrowing_limit"] == {"cpu": "2"} and r.json()["lending_limit"] is None
    r = admin_api.patch("/api/v1/quota-groups/g/", {"lending_limit": {"cpu": "5"}}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["lending_limit.cpu"] == (
        "quota group g: lending limit cpu 5 must be <= min cpu 4 (it cannot lend more than it is entitled to)"
    )
    r = admin_api.patch("/api/v1/quota-groups/default/", {"borrowing_limit": {"cpu": "1"}}, format="json")
    assert r.status_code == 400
    assert QuotaGroup.objects.get(name="g").lending_limit is None


@pytest.fixture
def cluster(admin_api: Any) -> Any:
    """16 cpu; quota groups g1/g2 with min 4, max 16, each with 10 pending one-cpu pods; g3 (min 4) has none."""
    a = admin_api
    a.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "16", "memory": "64Gi"}}, format="json")
    for g in ("g1", "g2"):
        r = a.post("/api/v1/quota-groups/", {"name": g, "min": {"cpu": "4"}, "max": {"cpu": "16"}}, format="json")
        assert r.status_code == 201
        a.post("/api/v1/namespaces/", {"name": f"ns-{g}", "quota_group": g}, format="json")
        a.post("/api/v1/podgroups/", {"namespace": f"ns-{g}", "name": "job", "min_member": 1}, format="json")
        for i in range(10):
            r = a.post(
                "/api/v1/pods/",
                {"namespace": f"ns-{g}", "name": f"p{i}", "podgroup": "job", "request": {"cpu": "1"}},
                format="json",
            )
            assert r.status_code == 201, r.json()
    r = a.post("/api/v1/quota-groups/", {"name": "g3", "min": {"cpu": "4"}, "max": {"cpu": "16"}}, format="json")
    assert r.status_code == 201
    return a


def test_whatif_borrowing_limit_binds(cluster: Any) -> None:
    change = {"op": "update", "kind": "quota_group", "name": "g2", "spec": {"borrowing_limit": {"cpu": "1"}}}
    r = cluster.post("/api/v1/whatif/", {"changes": [change]}, format="json")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["before"]["quota_groups"]["g2"]["runtime"] == {"cpu": "8"}
    assert body["after"]["quota_groups"]["g2"]["runtime"] == {"cpu": "5"}  # min 4 + borrowing limit 1
    assert body["after"]["quota_groups"]["g1"]["runtime"] == {"cpu": "10"}  # all it asks
    assert QuotaGroup.objects.get(name="g2").borrowing_limit is None  # nothing written
    bad = {"op": "update", "kind": "quota_group", "name": "g2", "spec": {"lending_limit": {"cpu": "9"}}}
    r = cluster.post("/api/v1/whatif/", {"changes": [bad]}, format="json")
    assert r.status_code == 400
    assert "changes.0.spec.lending_limit.cpu" in error_attrs(r)


def test_whatif_lending_limit_keeps_the_reserve(cluster: Any) -> None:
    """g3 asks nothing and lends its whole min 4; with a lending limit of 1 it keeps 3, which g1 and g2 lose."""
    change = {"op": "update", "kind": "quota_group", "name": "g3", "spec": {"lending_limit": {"cpu": "1"}}}
    r = cluster.post("/api/v1/whatif/", {"changes": [change]}, format="json")
    assert r.status_code == 200, r.json()
    before, after = r.json()["before"]["quota_groups"], r.json()["after"]["quota_groups"]
    assert (before["g1"]["runtime"], before["g2"]["runtime"], before["g3"]["runtime"]) == (
        {"cpu": "8"},
        {"cpu": "8"},
        {},  # nothing: it lends its whole min
    )
    assert after["g3"]["runtime"] == {"cpu": "3"}
    assert (after["g1"]["runtime"], after["g2"]["runtime"]) == ({"cpu": "6500m"}, {"cpu": "6500m"})


def test_explain_names_a_binding_limit(cluster: Any) -> None:
    r = cluster.patch("/api/v1/quota-groups/g2/", {"borrowing_limit": {"cpu": "1"}}, format="json")
    assert r.status_code == 200, r.json()
    body = cluster.get("/api/v1/quota-groups/g2/explain/").json()
    assert body["values"]["runtime"] == {"cpu": "5"}
    texts = [e["text"] for e in body["explain"]["resources"].values()]
    assert len(texts) == 1 and texts[0].startswith("cpu: floor 4 (its min), asks 5;")
    assert texts[0].endswith("runtime 5, bound by its borrowing limit (min 4 + borrowing limit 1 = 5)")


def test_queue_explain_and_reason_name_a_binding_borrowing_limit(admin_api: Any) -> None:
    """Under the cluster's default policy (proportion) a borrowing limit is measured against the guarantee: the
    realCapability stops at guarantee + limit, and so does the water-filled deserved; the pod that does not fit says
    why with the numbers."""
    a = admin_api
    a.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "16", "memory": "64Gi"}}, format="json")
    body = {"name": "q", "deserved": {"cpu": "2"}, "guarantee": {"cpu": "2"}, "borrowing_limit": {"cpu": "3"}}
    assert a.post("/api/v1/queues/", body, format="json").status_code == 201
    a.post("/api/v1/namespaces/", {"name": "ns-q", "default_queue": "q"}, format="json")
    a.post("/api/v1/podgroups/", {"namespace": "ns-q", "name": "job", "min_member": 1}, format="json")
    for i in range(8):
        r = a.post(
            "/api/v1/pods/",
            {"namespace": "ns-q", "name": f"p{i}", "podgroup": "job", "request": {"cpu": "1"}},
            format="json",
        )
        assert r.status_code == 201, r.json()
    explain = a.get("/api/v1/queues/q/explain/").json()
    assert explain["values"]["real_capability"]["cpu"] == "5"
    steps = [s for s in explain["steps"] if s["quantity"] == "realCapability" and s["resource"] == "cpu"]
    assert steps[-1]["rule"] == "rc.borrowing.guarantee"
    assert steps[-1]["detail"] == "capped by guarantee 2 + borrowing limit 3"


def test_metrics_carry_the_limits_and_lendable_within_them(cluster: Any) -> None:
    from tests.api.test_metrics import scrape, value

    r = cluster.patch("/api/v1/quota-groups/g3/", {"lending_limit": {"cpu": "1"}}, format="json")
    assert r.status_code == 200, r.json()
    metrics = scrape(cluster)
    assert value(metrics, "fairway_quota_group_lending_limit", quota_group="g3", resource="cpu") == 1.0
    assert value(metrics, "fairway_quota_group_lending_limit", quota_group="g1", resource="cpu") is None
    # g3 asks nothing: it keeps 3 of its min 4 and could lend 1, not 4
    assert value(metrics, "fairway_quota_group_lendable_resources", quota_group="g3", resource="cpu") == 1.0
