"""/api/v1/whatif/, /api/v1/simulate/, computed values on the tree endpoints and explanations."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace, Queue
from tests.acceptance import manifests as m
from tests.conftest import ensure_migrated_rows, error_attrs, token_client, user_token

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _admin_token(module_db: Any) -> str:
    """The cluster below, built once for the module (each test runs in a transaction of its own)."""

    def build() -> str:
        ensure_migrated_rows()
        token = user_token("ops", staff=True)  # not "admin": test_simulate_endpoint makes that one (admin_api)
        _build_cluster(token_client(token))
        return token

    return module_db(build)


@pytest.fixture
def cluster(_admin_token: str, db: Any) -> Any:
    """16 cpu; q1 and q2 under root, each with a 10-cpu pending job; quota groups g1/g2 with min 4 / 4 (an admin's
    client)."""
    return token_client(_admin_token)


def _build_cluster(a: Any) -> None:
    a.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "16", "memory": "64Gi"}}, format="json")
    for q in ("q1", "q2"):
        assert a.post("/api/v1/queues/", {"name": q}, format="json").status_code == 201
    for g in ("g1", "g2"):
        assert (
            a.post(
                "/api/v1/quota-groups/", {"name": g, "min": {"cpu": "4"}, "max": {"cpu": "16"}}, format="json"
            ).status_code
            == 201
        )
    for q, g in (("q1", "g1"), ("q2", "g2")):
        a.post("/api/v1/namespaces/", {"name": f"ns-{q}", "default_queue": q, "quota_group": g}, format="json")
        a.post("/api/v1/podgroups/", {"namespace": f"ns-{q}", "name": "job", "min_member": 1}, format="json")
        for i in range(10):
            r = a.post(
                "/api/v1/pods/",
                {"namespace": f"ns-{q}", "name": f"p{i}", "podgroup": "job", "request": {"cpu": "1"}},
                format="json",
            )
            assert r.status_code == 201, r.json()


def test_tree_endpoints_carry_computed_values(cluster: Any) -> None:
    tree = cluster.get("/api/v1/queues/tree/").json()
    nodes = {n["name"]: n for n in tree[0]["children"]}
    assert nodes["q1"]["values"]["deserved"] == {"cpu": "8"}
    assert nodes["q1"]["values"]["request"] == {"cpu": "10"}
    groups = cluster.get("/api/v1/quota-groups/tree/").json()
    g = {n["name"]: n for n in groups[0]["children"]}
    assert g["g1"]["values"]["runtime"] == {"cpu": "8"}
    assert g["g1"]["values"]["request"] == {"cpu": "10"}


def test_explain_endpoints(cluster: Any) -> None:
    r = cluster.get("/api/v1/queues/q1/explain/")
    assert r.status_code == 200
    body = r.json()
    assert body["values"]["deserved"] == {"cpu": "8"}
    assert any(step["quantity"] == "deserved" for step in body["steps"])
    r = cluster.get("/api/v1/quota-groups/g1/explain/")
    assert r.status_code == 200 and r.json()["values"]["runtime"] == {"cpu": "8"}
    assert r.json()["explain"]


def test_whatif_weight_change_shows_the_diff_and_writes_nothing(cluster: Any) -> None:
    before_version = Queue.objects.get(name="q2").version
    r = cluster.post(
        "/api/v1/whatif/",
        {"changes": [{"op": "update", "kind": "queue", "name": "q2", "spec": {"weight": 3}}]},
        format="json",
    )
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["before"]["queues"]["q2"]["deserved"] == {"cpu": "8"}
    assert body["after"]["queues"]["q2"]["deserved"] == {"cpu": "10"}  # 12 by weight, capped by its request
    assert body["diff"]["queues"]["q1"]["deserved"] == {"cpu": "-2"}
    assert body["diff"]["queues"]["q2"]["deserved"] == {"cpu": "2"}
    q2 = Queue.objects.get(name="q2")
    assert q2.weight == 1 and q2.version == before_version


def test_whatif_several_changes_nodes_groups_and_weights(cluster: Any) -> None:
    r = cluster.post(
        "/api/v1/whatif/",
        {
            "changes": [
                {"op": "add", "kind": "node", "spec": {"name": "n2", "allocatable": {"cpu": "8"}}},
                {"op": "update", "kind": "quota_group", "name": "g2", "spec": {"min": {"cpu": "8"}}},
                {"op": "set_weight", "kind": "namespace", "name": "ns-q1", "weight": 4},
                {
                    "op": "add",
                    "kind": "podgroup",
                    "spec": {"namespace": "ns-q1", "name": "big", "replicas": 2, "request": {"cpu": "2"}},
                },
            ]
        },
        format="json",
    )
    assert r.status_code == 200, r.json()
    after = r.json()["after"]
    assert after["queues"]["q1"]["request"] == {"cpu": "14"}
    assert after["quota_groups"]["g2"]["runtime"]["cpu"] != r.json()["before"]["quota_groups"]["g2"]["runtime"]["cpu"]
    assert Namespace.objects.get(name="ns-q1").weight == 1


@pytest.mark.parametrize(
    ("changes", "attr"),
    [
        ([{"op": "update", "kind": "queue", "name": "q1", "spec": {"weight": 0}}], "changes.0.spec.weight"),
        (
            [{"op": "update", "kind": "queue", "name": "q1", "spec": {"deserved": {"cpu": "-1"}}}],
            "changes.0.spec.deserved.cpu",
        ),
        ([{"op": "move", "kind": "queue", "name": "q1", "parent": "q1"}], "changes.0.spec.parent"),
        ([{"op": "delete", "kind": "queue", "name": "root"}], "changes.0.non_field_errors"),
        ([{"op": "update", "kind": "queue", "name": "ghost", "spec": {}}], "changes.0.name"),
        ([{"op": "explode", "kind": "queue"}], "changes.0.op"),
        ([{"op": "set_weight", "kind": "namespace", "name": "ns-q1", "weight": "heavy"}], "changes.0.weight"),
        ([{"op": "add", "kind": "node", "spec": {"name": "n1"}}], "changes.0.spec.name"),
        ([], "changes"),
    ],
)
def test_whatif_invalid_proposals_get_the_rules_errors(cluster: Any, changes: list, attr: str) -> None:
    r = cluster.post("/api/v1/whatif/", {"changes": changes}, format="json")
    assert r.status_code == 400, r.json()
    assert attr in error_attrs(r), error_attrs(r)


def test_simulate_endpoint(admin_api: Any) -> None:
    text = m.dump(
        m.node("n1", cpu="16", memory="64Gi"),
        m.queue("q1"),
        m.namespace("ns"),
        m.podgroup("ns", "j", "q1"),
        *[m.pod("ns", f"p{i}", group="j", cpu="1") for i in range(4)],
    )
    r = admin_api.post("/api/v1/simulate/", {"manifests": text}, format="json")
    assert r.status_code == 200, r.json()
    assert r.json()["document"]["queues"]["q1"]["request"] == {"cpu": "4"}
    assert r.json()["notes"] == []
    r = admin_api.post("/api/v1/simulate/", {"manifests": m.dump(m.queue("q1"))}, format="json")
    assert r.json()["notes"] == [
        "the input has no nodes; every job waits for capacity (add Node documents to place pods)"
    ]
    r = admin_api.post("/api/v1/simulate/", {"manifests": "kind: Queue\nmetadata: {name: Bad_Q}\n"}, format="json")
    assert r.status_code == 400 and "manifests" in error_attrs(r)
    r = admin_api.post("/api/v1/simulate/", {"manifests": text, "policy": "actions: fly"}, format="json")
    assert r.status_code == 400 and "policy" in error_attrs(r)


def test_whatif_needs_a_team_or_admin(cluster: Any, api: Any, make_user: Any) -> None:
    assert api(None).post("/api/v1/whatif/", {"changes": []}, format="json").status_code == 401
    assert api(make_user("loner")).post("/api/v1/whatif/", {"changes": []}, format="json").status_code == 403
