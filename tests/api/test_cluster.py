"""/api/v1/clusters|nodes|podgroups|pods: the cluster the control plane keeps, and the job admission rules."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling.models import Node, Pod, PodGroup
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(admin_api: Any) -> Any:
    admin_api.post("/api/v1/queues/", {"name": "dept"}, format="json")
    admin_api.post("/api/v1/queues/", {"name": "team", "parent": "dept"}, format="json")
    admin_api.post(
        "/api/v1/namespaces/",
        {"name": "ns1", "default_queue": "team", "hard": {"cpu": "10", "memory": "20Gi"}},
        format="json",
    )
    return admin_api


def test_register_and_update_nodes(world: Any) -> None:
    r = world.post(
        "/api/v1/nodes/",
        {
            "name": "n1",
            "allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"},
            "labels": {"zone": "a"},
            "taints": [{"key": "gpu", "effect": "NoSchedule"}],
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["cluster"] == "default"
    assert world.patch("/api/v1/nodes/n1/", {"ready": False}, format="json").status_code == 200
    assert Node.objects.get(name="n1").ready is False
    r = world.post("/api/v1/nodes/", {"name": "n1"}, format="json")
    assert r.status_code == 400 and "name" in error_attrs(r)
    r = world.post("/api/v1/nodes/", {"name": "n2", "taints": [{"key": "x", "effect": "Sometimes"}]}, format="json")
    assert r.status_code == 400 and "taints.0.effect" in error_attrs(r)
    r = world.post("/api/v1/nodes/", {"name": "n3", "allocatable": {"cpu": "-4"}}, format="json")
    assert r.status_code == 400 and "allocatable.cpu" in error_attrs(r)
    assert world.get("/api/v1/nodes/?ready=false").json()["count"] == 1


def test_podgroup_defaults_to_the_namespace_queue(world: Any) -> None:
    r = world.post(
        "/api/v1/podgroups/",
        {"namespace": "ns1", "name": "job", "min_member": 2, "min_resources": {"cpu": "4"}},
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["queue"] == "team" and r.json()["phase"] == "Pending"


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({"namespace": "ns1", "name": "j", "queue": "dept"}, "queue"),  # not a leaf
        ({"namespace": "ns1", "name": "j", "queue": "root"}, "queue"),
        ({"namespace": "ns1", "name": "j", "queue": "ghost"}, "queue"),
        ({"namespace": "nope", "name": "j"}, "namespace"),
        ({"namespace": "ns1", "name": "j", "min_member": -1}, "min_member"),
        ({"namespace": "ns1", "name": "J!"}, "name"),
        ({"namespace": "ns1", "name": "j", "min_resources": {"cpu": "11"}}, "min_resources.cpu"),  # over quota
    ],
)
def test_invalid_podgroups(world: Any, body: dict, attr: str) -> None:
    r = world.post("/api/v1/podgroups/", body, format="json")
    assert r.status_code == 400, r.json()
    assert attr in error_attrs(r), error_attrs(r)
    assert not PodGroup.objects.exists()


def test_namespace_quota_counts_every_podgroup(world: Any) -> None:
    assert (
        world.post(
            "/api/v1/podgroups/", {"namespace": "ns1", "name": "a", "min_resources": {"cpu": "6"}}, format="json"
        ).status_code
        == 201
    )
    r = world.post(
        "/api/v1/podgroups/", {"namespace": "ns1", "name": "b", "min_resources": {"cpu": "5"}}, format="json"
    )
    assert r.status_code == 400
    detail = error_attrs(r)["min_resources.cpu"]
    assert ("10" in detail and "11" in detail) or "6" in detail, detail


def test_pods_join_their_podgroup_and_quota_group(world: Any) -> None:
    world.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "job"}, format="json")
    r = world.post(
        "/api/v1/pods/",
        {
            "namespace": "ns1",
            "name": "job-0",
            "podgroup": "job",
            "request": {"cpu": "500m", "memory": "1Gi"},
            "priority": 5,
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["podgroup"] == "job" and body["quota_group"] == "default" and body["status"] == "Pending"
    assert body["request"] == {"cpu": "500m", "memory": "1Gi"}
    r = world.post("/api/v1/pods/", {"namespace": "ns1", "name": "x", "podgroup": "missing"}, format="json")
    assert r.status_code == 400 and "podgroup" in error_attrs(r)
    r = world.post("/api/v1/pods/", {"namespace": "ns1", "name": "y", "quota_group": "root"}, format="json")
    assert r.status_code == 400 and "quota_group" in error_attrs(r)
    r = world.patch(f"/api/v1/pods/{body['id']}/", {"request": {"cpu": "1"}}, format="json")
    assert r.status_code == 400 and "request" in error_attrs(r)
    assert Pod.objects.count() == 1
    assert world.get("/api/v1/pods/?queue=team").json()["count"] == 1
    assert world.get("/api/v1/pods/?status=Pending&status=Running").json()["count"] == 1
