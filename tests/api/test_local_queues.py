"""Kueue's LocalQueues through the API (issue 28 items 5 and 9): ``/api/v1/local-queues/<namespace>/<name>/`` creates,
reads, changes and deletes them; bad input is a 400 naming the field with nothing written; the queue must be a leaf
other than the built-in root and default, and a queue LocalQueues point at is neither deleted nor given children; the
usage the live sessions keep is read per cluster, in whole cores."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from engine.resources import parse_resource_list
from quotas import services
from quotas.models import LocalQueue, Queue
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

URL = "/api/v1/local-queues/"


@pytest.fixture
def tree(db: Any) -> None:
    from quotas.models import Namespace

    services.ensure_builtins()
    services.save_queue(None, {"name": "dept", "deserved": parse_resource_list({"cpu": "8"})})
    services.save_queue(None, {"name": "team", "parent": "dept", "deserved": parse_resource_list({"cpu": "4"})})
    Namespace.objects.create(name="ns-a")


def test_a_local_queue_is_created_read_changed_and_deleted(admin_api: Any, tree: None) -> None:
    r = admin_api.post(URL, {"namespace": "ns-a", "name": "lq", "queue": "team", "weight": "500m"}, format="json")
    assert r.status_code == 201, r.json()
    body = r.json()
    assert {k: body[k] for k in ("namespace", "name", "queue", "weight", "usage")} == {
        "namespace": "ns-a", "name": "lq", "queue": "team", "weight": "0.5", "usage": {},
    }  # fmt: skip
    r = admin_api.patch(f"{URL}ns-a/lq/", {"weight": "0"}, format="json")
    assert r.status_code == 200, r.json()
    assert LocalQueue.objects.get().weight == "0"
    listed = admin_api.get(URL, {"namespace": "ns-a"}).json()
    assert [(q["namespace"], q["name"]) for q in listed["results"]] == [("ns-a", "lq")]
    assert admin_api.get(f"{URL}ns-a/nope/").status_code == 404
    assert admin_api.delete(f"{URL}ns-a/lq/").status_code == 204
    assert not LocalQueue.objects.exists()


def test_the_usage_the_sessions_keep_is_read_per_cluster_in_whole_units(admin_api: Any, tree: None) -> None:
    from scheduling.models import Cluster, LocalQueueUsage

    r = admin_api.post(URL, {"namespace": "ns-a", "name": "lq", "queue": "team"}, format="json")
    assert r.status_code == 201, r.json()
    cluster = Cluster.objects.create(name="c1")
    LocalQueueUsage.objects.create(
        cluster=cluster,
        local_queue=LocalQueue.objects.get(),
        consumed={"cpu": 2500, "memory": 2**31},
        penalty={"cpu": 250},
        sampled=timezone.now(),
    )
    assert admin_api.get(f"{URL}ns-a/lq/").json()["usage"] == {"c1": {"cpu": "2.75", "memory": "2Gi"}}


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        (
            {"namespace": "ns-a", "name": "LQ_1", "queue": "team"},
            {"name": "LocalQueue name 'LQ_1' must be lower case"},
        ),
        ({"namespace": "ns-x", "name": "lq", "queue": "team"}, {"namespace": "namespace 'ns-x' does not exist"}),
        ({"namespace": "ns-a", "name": "lq", "queue": "nope"}, {"queue": "queue 'nope' does not exist"}),
        (
            {"namespace": "ns-a", "name": "lq", "queue": "dept"},
            {
                "queue": "queue dept is not a leaf queue a LocalQueue may point at (a ClusterQueue: a leaf other than "
                "the built-in root and default)"
            },
        ),
        (
            {"namespace": "ns-a", "name": "lq", "queue": "default"},
            {
                "queue": "queue default is not a leaf queue a LocalQueue may point at (a ClusterQueue: a leaf other "
                "than the built-in root and default)"
            },
        ),
        (
            {"namespace": "ns-a", "name": "lq", "queue": "team", "weight": "-1"},
            {"weight": "weight: '-1' must not be negative (0 is admitted last)"},
        ),
        (
            {"namespace": "ns-a", "name": "lq", "queue": "team", "weight": "lots"},
            {"weight": "weight: 'lots' is not a valid quantity (examples: 500m, 2, 1.5, 4Gi, 1e3)"},
        ),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    admin_api: Any, tree: None, body: dict[str, Any], attrs: dict[str, str]
) -> None:
    r = admin_api.post(URL, body, format="json")
    assert r.status_code == 400, r.json()
    assert error_attrs(r) == attrs
    assert not LocalQueue.objects.exists()


def test_a_second_local_queue_of_the_same_name_and_a_rename_are_refused(admin_api: Any, tree: None) -> None:
    body = {"namespace": "ns-a", "name": "lq", "queue": "team"}
    assert admin_api.post(URL, body, format="json").status_code == 201
    r = admin_api.post(URL, body, format="json")
    assert r.status_code == 400 and error_attrs(r) == {"name": "LocalQueue ns-a/lq already exists"}
    r = admin_api.patch(f"{URL}ns-a/lq/", {"name": "other"}, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == {"name": "a LocalQueue keeps its namespace and name (jobs' labels name it)"}
    assert list(LocalQueue.objects.values_list("name", flat=True)) == ["lq"]


def test_a_queue_local_queues_point_at_stays_a_leaf(admin_api: Any, tree: None) -> None:
    assert admin_api.post(URL, {"namespace": "ns-a", "name": "lq", "queue": "team"}, format="json").status_code == 201
    r = admin_api.post("/api/v1/queues/", {"name": "below", "parent": "team"}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["parent"].startswith("LocalQueues point at it: ns-a/lq (team)")
    r = admin_api.delete("/api/v1/queues/team/")
    assert r.status_code == 400
    assert "LocalQueues point at it: ns-a/lq (team)" in r.content.decode()
    assert Queue.objects.filter(name="team").exists() and not Queue.objects.filter(name="below").exists()
    assert admin_api.delete("/api/v1/queues/team/?force=true").status_code == 204  # forced: its LocalQueues go too
    assert not LocalQueue.objects.exists()


def test_a_podgroup_submitted_to_a_local_queue_goes_to_its_queue(admin_api: Any, tree: None) -> None:
    from scheduling.models import Cluster, PodGroup

    Cluster.objects.get_or_create(name="default")
    services.save_queue(None, {"name": "other", "parent": "dept"})
    assert admin_api.post(URL, {"namespace": "ns-a", "name": "lq", "queue": "team"}, format="json").status_code == 201
    body = {"namespace": "ns-a", "name": "pg", "local_queue": "lq", "min_resources": {"cpu": "1"}}
    r = admin_api.post("/api/v1/podgroups/", body, format="json")
    assert r.status_code == 201, r.json()
    assert (r.json()["queue"], r.json()["local_queue"]) == ("team", "lq")
    r = admin_api.post("/api/v1/podgroups/", {**body, "name": "pg2", "local_queue": "nope"}, format="json")
    assert r.status_code == 400 and error_attrs(r) == {"local_queue": "namespace ns-a has no LocalQueue nope"}
    r = admin_api.post("/api/v1/podgroups/", {**body, "name": "pg3", "queue": "other"}, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == {"local_queue": "LocalQueue ns-a/lq points at queue team, not other"}
    assert list(PodGroup.objects.values_list("name", "queue__name", "local_queue")) == [("pg", "team", "lq")]


@pytest.mark.parametrize("weight", ["1e100", "1e999999"])
def test_a_weight_too_large_to_keep_is_refused(admin_api: Any, tree: None, weight: str) -> None:
    r = admin_api.post(URL, {"namespace": "ns-a", "name": "lq", "queue": "team", "weight": weight}, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == {"weight": f"weight: {weight!r} is too large or too fine to keep (at most 64 digits)"}
    assert not LocalQueue.objects.exists()
