"""Kueue's ResourceFlavors through the API (issue 28 item 7): ``/api/v1/resource-flavors/`` creates, reads, changes
and deletes them, refusing bad input with 400 naming the field and writing nothing; a queue's quota per flavor is
under the flavored key (``deserved: {"cpu@spot": "8"}``) and must name a stored flavor; a flavor a queue names
cannot be deleted; a podgroup's ``flavors`` and ``flavor_assignment`` are read-only."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, ResourceFlavor
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

SPOT = {
    "name": "spot",
    "node_labels": {"type": "spot"},
    "node_taints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
    "tolerations": [{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
}


def test_a_flavor_is_created_read_changed_and_deleted(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/resource-flavors/", SPOT, format="json")
    assert r.status_code == 201, r.json()
    assert r.json() | {"version": 0, "created": "", "updated": ""} == {
        **SPOT, "topology_name": "", "used_by": [], "version": 0, "created": "", "updated": "",
    }  # fmt: skip
    r = admin_api.patch("/api/v1/resource-flavors/spot/", {"topology_name": "default"}, format="json")
    assert r.status_code == 200, r.json()
    assert ResourceFlavor.objects.get(name="spot").to_spec().topology_name == "default"
    listed = admin_api.get("/api/v1/resource-flavors/").json()
    assert [f["name"] for f in listed["results"]] == ["spot"]
    assert admin_api.delete("/api/v1/resource-flavors/spot/").status_code == 204
    assert not ResourceFlavor.objects.exists()


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({**SPOT, "name": "Spot_1"}, {"name": "'Spot_1' is not a ResourceFlavor name (a DNS-1123 subdomain)"}),
        (
            {**SPOT, "node_taints": [{"key": "spot", "effect": "Sometimes"}]},
            {"node_taints": "node_taints[0].effect: 'Sometimes' is not one of NoSchedule, PreferNoSchedule, NoExecute"},
        ),
        ({**SPOT, "node_labels": {"type": 3}}, {"node_labels": "node_labels.type: 3 is not a string"}),
        ({**SPOT, "node_labels": ["type"]}, {"node_labels": "node_labels: expected a mapping, got a list"}),
        (
            {**SPOT, "tolerations": [{"key": "spot", "operator": "Weird"}]},
            {"tolerations": "tolerations[0].operator: 'Weird' is not one of Equal, Exists"},
        ),
    ],
)
def test_bad_input_is_refused_naming_the_field(admin_api: Any, body: dict[str, Any], attrs: dict[str, str]) -> None:
    r = admin_api.post("/api/v1/resource-flavors/", body, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == attrs
    assert not ResourceFlavor.objects.exists()


def test_a_queue_quota_per_flavor_names_a_stored_flavor_and_keeps_it(admin_api: Any) -> None:
    groups = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": ["on-demand", "spot"]}]}
    body = {"name": "nlp", "deserved": {"cpu@on-demand": "4", "cpu@spot": "8"}, "kueue": groups}
    r = admin_api.post("/api/v1/queues/", body, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == {
        "deserved.cpu@on-demand": "queue nlp: deserved.cpu@on-demand: no ResourceFlavor 'on-demand': create it first (resource-flavors)",
        "deserved.cpu@spot": "queue nlp: deserved.cpu@spot: no ResourceFlavor 'spot': create it first (resource-flavors)",
        "kueue.resourceGroups.0.flavors.0": "queue nlp: kueue.resourceGroups.0.flavors.0: no ResourceFlavor 'on-demand': create it first (resource-flavors)",
        "kueue.resourceGroups.0.flavors.1": "queue nlp: kueue.resourceGroups.0.flavors.1: no ResourceFlavor 'spot': create it first (resource-flavors)",
    }
    assert not Queue.objects.filter(name="nlp").exists()
    for flavor in ({"name": "on-demand"}, SPOT):
        assert admin_api.post("/api/v1/resource-flavors/", flavor, format="json").status_code == 201
    r = admin_api.post("/api/v1/queues/", body, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["deserved"] == {"cpu@on-demand": "4", "cpu@spot": "8"}
    assert r.json()["kueue"] == groups
    assert admin_api.get("/api/v1/resource-flavors/spot/").json()["used_by"] == ["nlp"]
    # a bad flavor name in a resource key is refused at the key
    r = admin_api.patch("/api/v1/queues/nlp/", {"deserved": {"cpu@Spot!": "8"}}, format="json")
    assert r.status_code == 400
    assert list(error_attrs(r)) == ["deserved.cpu@Spot!"]
    # a flavor a queue names stays
    r = admin_api.delete("/api/v1/resource-flavors/spot/")
    assert r.status_code == 400
    assert error_attrs(r) == {
        "name": "ResourceFlavor spot is in use: the quota of nlp names it (remove it from their quotas and resource "
        "groups first)"
    }
    assert ResourceFlavor.objects.filter(name="spot").exists()


def test_a_podgroups_flavors_are_read_only(admin_api: Any) -> None:
    from scheduling.models import PodGroup

    admin_api.post("/api/v1/namespaces/", {"name": "team-a"}, format="json")
    r = admin_api.post(
        "/api/v1/podgroups/",
        {"name": "j", "namespace": "team-a", "queue": "default", "flavors": {"cpu": "spot"}},
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["flavors"] is None and r.json()["flavor_assignment"] is None
    assert PodGroup.objects.get(name="j").flavors is None


def test_a_plain_quota_beside_a_quota_per_flavor_is_accepted_with_a_warning(admin_api: Any) -> None:
    assert admin_api.post("/api/v1/resource-flavors/", SPOT, format="json").status_code == 201
    r = admin_api.post("/api/v1/queues/", {"name": "kueue-a", "deserved": {"cpu@spot": "8"}}, format="json")
    assert r.status_code == 201, r.json()
    assert not [w for w in r.json().get("warnings", []) if w["code"] == "plain_beside_flavored"]
    r = admin_api.post("/api/v1/queues/", {"name": "volcano-b", "deserved": {"cpu": "2"}}, format="json")
    assert r.status_code == 201, r.json()
    [warning] = [w for w in r.json()["warnings"] if w["code"] == "plain_beside_flavored"]
    assert warning["attr"] == "deserved.cpu"
    assert warning["detail"] == (
        "cpu has quota per ResourceFlavor in kueue-a: the nodes offer it per flavor, so a plain cpu quota admits "
        "nothing (give it per flavor, cpu@<flavor>)"
    )
