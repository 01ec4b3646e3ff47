"""Resource names and units through the API: only known resources (standard Kubernetes ones and those some node
offers) are accepted outside nodes; nodes introduce names; an unbounded amount is JSON null, never a sentinel."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

KNOWN_STANDARD = "cpu, memory, ephemeral-storage, storage, pods, hugepages-<size>"


@pytest.fixture
def world(admin_api: Any) -> Any:
    """A leaf queue ``team``, a namespace ``ns1`` in it and a podgroup ``job``; one node with cpu and memory."""
    a = admin_api
    assert a.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "8", "memory": "32Gi"}}).status_code == 201
    assert a.post("/api/v1/queues/", {"name": "team"}, format="json").status_code == 201
    assert a.post("/api/v1/namespaces/", {"name": "ns1", "default_queue": "team"}, format="json").status_code == 201
    assert a.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "job"}, format="json").status_code == 201
    return a


def refused(r: Any, attr: str, name: str) -> str:
    assert r.status_code == 400, r.json()
    body = r.json()
    assert body["type"] == "validation_error"
    errors = error_attrs(r)
    assert attr in errors, errors
    detail = errors[attr]
    assert detail.startswith(f"unknown resource '{name}'"), detail
    assert f"known: {KNOWN_STANDARD}" in detail, detail
    return detail


@pytest.mark.parametrize(
    ("path", "body", "attr"),
    [
        ("/api/v1/queues/", {"name": "q", "deserved": {"foo.bar/baz": "1"}}, "deserved.foo.bar/baz"),
        ("/api/v1/queues/", {"name": "q", "capability": {"cpu": "4", "foo.bar/baz": "1"}}, "capability.foo.bar/baz"),
        ("/api/v1/queues/", {"name": "q", "guarantee": {"foo.bar/baz": "1"}}, "guarantee.foo.bar/baz"),
        ("/api/v1/quota-groups/", {"name": "g", "max": {"foo.bar/baz": "1"}}, "max.foo.bar/baz"),
        ("/api/v1/quota-groups/", {"name": "g", "min": {"foo.bar/baz": "1"}, "max": {"cpu": "1"}}, "min.foo.bar/baz"),
        (
            "/api/v1/quota-groups/",
            {"name": "g", "max": {"cpu": "1"}, "shared_weight": {"foo.bar/baz": "1"}},
            "shared_weight.foo.bar/baz",
        ),
        ("/api/v1/namespaces/", {"name": "ns2", "hard": {"foo.bar/baz": "1"}}, "hard.foo.bar/baz"),
        (
            "/api/v1/podgroups/",
            {"namespace": "ns1", "name": "j2", "min_resources": {"foo.bar/baz": "1"}},
            "min_resources.foo.bar/baz",
        ),
        (
            "/api/v1/pods/",
            {"namespace": "ns1", "name": "p", "podgroup": "job", "request": {"nvidia.com/gpu": "1"}},
            "request.nvidia.com/gpu",
        ),
    ],
)
def test_an_unknown_resource_is_refused_naming_the_field(world: Any, path: str, body: dict, attr: str) -> None:
    counts = (Queue.objects.count(), QuotaGroup.objects.count(), Namespace.objects.count(), PodGroup.objects.count())
    refused(world.post(path, body, format="json"), attr, attr.split(".", 1)[1])
    assert (
        Queue.objects.count(),
        QuotaGroup.objects.count(),
        Namespace.objects.count(),
        PodGroup.objects.count(),
    ) == counts
    assert not Pod.objects.exists()


def test_an_update_with_an_unknown_resource_changes_nothing(world: Any) -> None:
    before = Queue.objects.get(name="team").version
    refused(
        world.patch("/api/v1/queues/team/", {"deserved": {"foo.bar/baz": "1"}}, format="json"),
        "deserved.foo.bar/baz",
        "foo.bar/baz",
    )
    assert Queue.objects.get(name="team").version == before
    assert "foo.bar/baz" not in json.dumps(world.get("/api/v1/queues/tree/").json())


def test_standard_resources_need_no_node(world: Any) -> None:
    r = world.post(
        "/api/v1/queues/",
        {
            "name": "std",
            "deserved": {
                "cpu": "1",
                "memory": "1Gi",
                "ephemeral-storage": "10Gi",
                "pods": "10",
                "hugepages-2Mi": "64Mi",
                "storage": "1Ti",
            },
        },
        format="json",
    )
    assert r.status_code == 201, r.json()


def test_nodes_introduce_names_and_then_every_object_may_use_them(world: Any) -> None:
    detail = refused(
        world.post("/api/v1/quota-groups/", {"name": "fpga", "max": {"example.com/fpga": "2"}}, format="json"),
        "max.example.com/fpga",
        "example.com/fpga",
    )
    assert "example.com/fpga" not in detail.split("known:")[1]
    # a node (registration) may carry any syntactically valid name; a bad name is still refused
    r = world.post(
        "/api/v1/nodes/", {"name": "f1", "allocatable": {"cpu": "4", "example.com/fpga": "2"}}, format="json"
    )
    assert r.status_code == 201, r.json()
    r = world.post("/api/v1/nodes/", {"name": "f2", "allocatable": {"Not A Name": "2"}}, format="json")
    assert r.status_code == 400 and "allocatable.Not A Name" in error_attrs(r)
    r = world.post("/api/v1/quota-groups/", {"name": "fpga", "max": {"example.com/fpga": "2"}}, format="json")
    assert r.status_code == 201, r.json()
    # a heartbeat too: another cluster's node offers a GPU; trees are global, so the queue may name it at once
    world.post("/api/v1/clusters/", {"name": "other"}, format="json")
    r = world.post("/api/v1/nodes/", {"name": "g1", "cluster": "other", "allocatable": {"cpu": "4"}}, format="json")
    assert r.status_code == 201, r.json()
    refused(
        world.patch("/api/v1/queues/team/", {"deserved": {"nvidia.com/gpu": "1"}}, format="json"),
        "deserved.nvidia.com/gpu",
        "nvidia.com/gpu",
    )
    r = world.post("/api/v1/nodes/g1/heartbeat/", {"allocatable": {"cpu": "4", "nvidia.com/gpu": "8"}}, format="json")
    assert r.status_code in (200, 204), r.content
    assert Node.objects.get(name="g1").allocatable["nvidia.com/gpu"] == 8000
    r = world.patch("/api/v1/queues/team/", {"deserved": {"nvidia.com/gpu": "1"}}, format="json")
    assert r.status_code == 200, r.json()


def test_whatif_changes_name_only_known_resources(world: Any) -> None:
    r = world.post(
        "/api/v1/whatif/",
        {
            "changes": [
                {"op": "create", "kind": "queue", "spec": {"name": "q9", "deserved": {"foo.bar/baz": "1"}}},
            ]
        },
        format="json",
    )
    refused(r, "changes.0.spec.deserved.foo.bar/baz", "foo.bar/baz")
    r = world.post(
        "/api/v1/whatif/",
        {
            "changes": [
                {
                    "op": "add",
                    "kind": "podgroup",
                    "spec": {"namespace": "ns1", "name": "w", "request": {"x.io/tpu": "1"}},
                },
            ]
        },
        format="json",
    )
    refused(r, "changes.0.spec.request.x.io/tpu", "x.io/tpu")
    # a node added earlier in the proposal offers its names to the changes after it
    r = world.post(
        "/api/v1/whatif/",
        {
            "changes": [
                {"op": "add", "kind": "node", "spec": {"name": "t1", "allocatable": {"cpu": "8", "x.io/tpu": "4"}}},
                {
                    "op": "add",
                    "kind": "podgroup",
                    "spec": {"namespace": "ns1", "name": "w", "request": {"x.io/tpu": "1"}},
                },
            ]
        },
        format="json",
    )
    assert r.status_code == 200, r.json()


HIERARCHY = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
    enableHierarchy: true
"""
SENTINEL = re.compile(r"4611686018427387904|1329227995784915872903807060280344576|9223372036854775807|\bEi\b|\d+Ei")


def test_unbounded_amounts_are_null_in_the_api(world: Any) -> None:
    system = world.get("/api/v1/quota-groups/system/").json()
    assert system["max"] == {"cpu": None, "memory": None}
    for path in (
        "/api/v1/quota-groups/",
        "/api/v1/quota-groups/tree/",
        "/api/v1/queues/tree/",
        "/api/v1/quota-groups/default/explain/",
        "/api/v1/quota-groups/root/explain/",
        "/api/v1/queues/team/explain/",
        "/api/v1/queues/root/explain/",
    ):
        r = world.get(path)
        assert r.status_code == 200, (path, r.content[:300])
        text = r.content.decode()
        assert not SENTINEL.search(text), (path, SENTINEL.search(text))

    def walk(nodes: list[dict]) -> dict[str, dict]:
        out = {}
        for node in nodes:
            out[node["name"]] = node
            out.update(walk(node.get("children") or []))
        return out

    groups = walk(world.get("/api/v1/quota-groups/tree/").json())
    assert groups["default"]["values"]["runtime"] == {"cpu": None, "memory": None}
    assert groups["default"]["max"] == {"cpu": None, "memory": None}
    # hierarchical capacity: a capability nobody set is unlimited, inherited down the tree
    Cluster.objects.filter(name="default").update(scheduler_policy=HIERARCHY)
    world.post(
        "/api/v1/pods/", {"namespace": "ns1", "name": "p", "podgroup": "job", "request": {"cpu": "1"}}, format="json"
    )
    r = world.get("/api/v1/queues/team/explain/")
    assert not SENTINEL.search(r.content.decode())
    capability = [s for s in r.json()["steps"] if s["quantity"] == "capability"]
    assert capability and all(s["value"] is None for s in capability), r.json()["steps"]  # inherited from root
    r = world.post(
        "/api/v1/whatif/",
        {"changes": [{"op": "set_weight", "kind": "namespace", "name": "ns1", "weight": 3}]},
        format="json",
    )
    assert r.status_code == 200 and not SENTINEL.search(r.content.decode())


def test_the_schema_documents_null_as_unbounded_in_responses(admin_api: Any) -> None:
    schema = admin_api.get("/api/schema/?format=json").json()
    group = schema["components"]["schemas"]["QuotaGroup"]["properties"]["max"]
    assert group["additionalProperties"] == {"type": "string", "nullable": True}
    request = schema["components"]["schemas"]["QuotaGroupRequest"]["properties"]["max"]
    assert "nullable" not in json.dumps(request["additionalProperties"])
    assert "offered by some node" in request["description"]


def test_the_admin_refuses_unknown_resources_but_nodes_introduce_them(client: Any) -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("root-admin", password="pw")
    client.login(username="root-admin", password="pw")
    root = Queue.objects.get(name="root")
    form = {
        "name": "q1",
        "parent": root.pk,
        "weight": 1,
        "priority": 0,
        "reclaimable": "on",
        "state": "Open",
        "capability": "{}",
        "deserved": '{"example.com/fpga": "1"}',
        "guarantee": "{}",
    }
    r = client.post("/admin/quotas/queue/add/", form)
    assert r.status_code == 200 and "unknown resource &#x27;example.com/fpga&#x27;" in r.content.decode()
    assert not Queue.objects.filter(name="q1").exists()
    Node.objects.create(cluster=Cluster.objects.get(name="default"), name="f1", allocatable={"example.com/fpga": 2000})
    r = client.post("/admin/quotas/queue/add/", form)
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Queue.objects.get(name="q1").deserved == {"example.com/fpga": 1000}
    # the admin's node form is where names come from: any valid name there
    assert Node._meta.get_field("allocatable").formfield().any_name is True
    assert Queue._meta.get_field("deserved").formfield().any_name is False
