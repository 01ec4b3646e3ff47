"""The values endpoints show what admitted jobs reserve and what pipelined pods request, beside allocated and
used, in the same units (Kubernetes quantities) as the other values there."""

from __future__ import annotations

from typing import Any

from tests.frontend.reservations import GPU, engineering


def _find(nodes: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for n in nodes:
        if n["name"] == name:
            return n
        found = _find(n.get("children") or [], name)
        if found:
            return found
    return {}


def test_queue_values_show_reserved_and_pipelined(admin_api: Any) -> None:
    engineering()
    tree = admin_api.get("/api/v1/queues/tree/").json()
    values = _find(tree, "engineering")["values"]
    assert values["allocated"][GPU] == "12"
    assert values["reserved"] == {"cpu": "6", "memory": "24Gi", GPU: "18"}
    assert values["reserved_jobs"] == 2
    assert values["pipelined"] == {"cpu": "1", "memory": "4Gi", GPU: "3"}
    assert values["pipelined_pods"] == 1
    explained = admin_api.get("/api/v1/queues/engineering/explain/").json()
    assert explained["values"]["reserved"][GPU] == "18" and explained["values"]["reserved_jobs"] == 2
    # a queue with nothing reserved says so with empty lists and zero counts
    assert _find(tree, "default")["values"]["reserved"] == {}
    assert _find(tree, "default")["values"]["pipelined_pods"] == 0


def test_quota_group_values_show_reserved_and_pipelined(admin_api: Any) -> None:
    engineering()
    tree = admin_api.get("/api/v1/quota-groups/tree/").json()
    values = _find(tree, "research")["values"]
    assert values["used"][GPU] == "12"
    assert values["reserved"][GPU] == "18" and values["reserved_jobs"] == 2
    assert values["pipelined"][GPU] == "3" and values["pipelined_pods"] == 1
    explained = admin_api.get("/api/v1/quota-groups/research/explain/").json()
    assert explained["values"]["reserved"][GPU] == "18"
