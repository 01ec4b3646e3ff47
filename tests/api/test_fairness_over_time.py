"""Fairness over time through the API and the pages: the recorded past usage (the cluster's usage-history row) moves
the surplus, the explain says why with the numbers, the what-if takes it into account, the node page shows the line
under the time series; with the switch off none of it appears."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from engine.policy.policy import Policy, default_policy_with
from scheduling.models import Cluster, UsageHistory
from tests.api.test_whatif import _admin_token, cluster  # noqa: F401  (the fixtures: q1, q2 each asking 10 of 16 cpu, built once per module)

FAIR = {"name": "proportion", "arguments": {"fairnessOverTime": True}}


def _record(switch_on: bool = True) -> None:
    """q1 used 1.8x its share over the window, q2 half of its share."""
    default = Cluster.objects.get(name="default")
    if switch_on:
        default.scheduler_policy = default_policy_with(FAIR).to_yaml()
        default.save()
    UsageHistory.objects.create(
        cluster=default, updated=timezone.now(), nodes={"queue/q1": [18, 10], "queue/q2": [5, 10]}
    )


def test_the_explain_says_weight_past_usage_and_surplus_share(cluster: Any) -> None:  # noqa: F811
    _record()
    q1 = cluster.get("/api/v1/queues/q1/explain/").json()
    # effective weights 1000/1.8 = 556 and 1000/0.5 = 2000: q2 reaches its request of 10, q1 keeps the rest
    assert q1["values"]["deserved"] == {"cpu": "6"}
    assert cluster.get("/api/v1/queues/q2/explain/").json()["values"]["deserved"] == {"cpu": "10"}
    past = [s for s in q1["steps"] if s["quantity"] == "pastUsage"]
    assert past == [
        {
            "quantity": "pastUsage",
            "resource": None,
            "value": 1.8,
            "rule": "past.usage",
            "round": 0,
            "detail": "weight 1, past usage 1.8\u00d7 its share over 7 days \u2192 surplus share 0.22",
        }
    ]


def test_the_whatif_takes_the_recorded_past_usage_into_account(cluster: Any) -> None:  # noqa: F811
    _record()
    r = cluster.post(
        "/api/v1/whatif/",
        {"changes": [{"op": "update", "kind": "queue", "name": "q1", "spec": {"weight": 4}}]},
        format="json",
    )
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["before"]["queues"]["q1"]["deserved"] == {"cpu": "6"}
    # weight 4 / 1.8 against 1 / 0.5: 2222 to 2000 of 16 cpu (without the record q1 would reach its request, 10)
    assert body["after"]["queues"]["q1"]["deserved"] == {"cpu": "8421m"}
    assert body["after"]["queues"]["q2"]["deserved"] == {"cpu": "7579m"}


@pytest.mark.parametrize("switch_on", [True, False])
def test_the_node_page_shows_the_line_under_the_time_series(cluster: Any, switch_on: bool) -> None:  # noqa: F811
    _record(switch_on)
    client = Client()
    client.force_login(get_user_model().objects.get(username="ops"))  # the admin of the cluster fixture
    page = client.get(reverse("frontend:queue", args=["q1"])).content.decode()
    line = "Fairness over time: weight 1, past usage 1.8\u00d7 its share over 7 days \u2192 surplus share 0.22"
    assert (line in page) is switch_on
    explain = cluster.get("/api/v1/queues/q1/explain/").json()
    assert explain["values"]["deserved"] == ({"cpu": "6"} if switch_on else {"cpu": "8"})
    assert any(s["quantity"] == "pastUsage" for s in explain["steps"]) is switch_on


def test_the_quota_group_explain_says_it_too(cluster: Any) -> None:  # noqa: F811
    default = Cluster.objects.get(name="default")
    policy = default_policy_with(FAIR).to_dict()
    policy["tiers"][1]["plugins"].append({"name": "elasticquota", "arguments": {"fairnessOverTime": True}})
    default.scheduler_policy = Policy.from_dict(policy).to_yaml()
    default.save()
    UsageHistory.objects.create(
        cluster=default, updated=timezone.now(), nodes={"quota/g1": [18, 10], "quota/g2": [5, 10]}
    )
    g1 = cluster.get("/api/v1/quota-groups/g1/explain/").json()
    # shared weights (max 16 each) x 0.5 / 1.8 and x 0.5 / 0.5: 4444 against 16000 share the 8 cpu above the mins
    assert g1["explain"]["past_usage"]["text"] == (
        "cpu weight 16, past usage 1.8\u00d7 its share over 7 days \u2192 surplus share 0.22"
    )
    assert g1["values"]["runtime"] == {"cpu": "6"}  # g2 reaches its request of 10 first; min 4 kept either way
    assert cluster.get("/api/v1/quota-groups/g2/explain/").json()["values"]["runtime"] == {"cpu": "10"}
