"""/api/v1/pods: a pod's required node affinity is checked before anything is written, stored in Kubernetes' shape,
shown, read into the session (which places the pod only on a node it matches) and written back in the job's
manifests."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling import sessions, store
from scheduling.models import Cluster, Pod
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

ZONE_C_OR_NOT_N1 = [
    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]}]},
    {
        "matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}],
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}],
    },
]


@pytest.fixture
def world(admin_api: Any) -> Any:
    admin_api.post("/api/v1/queues/", {"name": "team"}, format="json")
    admin_api.post("/api/v1/namespaces/", {"name": "ns1", "default_queue": "team"}, format="json")
    for name, labels in (("n1", {"zone": "a", "gen": "5"}), ("n2", {"zone": "b", "gen": "3"}), ("n3", {"gen": "9"})):
        r = admin_api.post(
            "/api/v1/nodes/", {"name": name, "allocatable": {"cpu": "8", "memory": "32Gi"}, "labels": labels}, "json"
        )
        assert r.status_code == 201, r.json()
    return admin_api


def _pod(name: str, affinity: Any, group: str | None = None) -> dict[str, Any]:
    body = {"namespace": "ns1", "name": name, "request": {"cpu": "1"}, "node_affinity": affinity}
    if group is not None:
        body["podgroup"] = group
    return body


def test_a_pod_keeps_its_affinity_and_the_session_places_it_on_a_node_it_matches(world: Any) -> None:
    assert world.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "job"}, format="json").status_code == 201
    r = world.post("/api/v1/pods/", _pod("p0", ZONE_C_OR_NOT_N1, "job"), format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["node_affinity"] == ZONE_C_OR_NOT_N1
    pod = Pod.objects.get(name="p0")
    assert pod.node_affinity == ZONE_C_OR_NOT_N1
    assert world.get(f"/api/v1/pods/{pod.pk}/").json()["node_affinity"] == ZONE_C_OR_NOT_N1

    cluster = Cluster.objects.get(name="default")
    task = store.load_snapshot(cluster).tasks["ns1/p0"]
    assert [[(e.key, e.operator, e.values, e.match_field) for e in term] for term in task.node_affinity] == [
        [("zone", "In", ("c",), False)],
        [("gen", "Gt", ("4",), False), ("metadata.name", "NotIn", ("n1",), True)],
    ]
    # n1 is the first of the empty nodes by name: only n3 (gen 9, not n1) matches a term
    assert sessions.run_scheduling_session(cluster).status == "ok"
    pod.refresh_from_db()
    assert (pod.status, pod.node.name if pod.node else None) == ("Bound", "n3")

    docs = world.get(f"/api/v1/podgroups/{pod.podgroup_id}/manifest/?output=json").json()
    spec = next(d for d in docs if d["kind"] == "Pod")["spec"]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": ZONE_C_OR_NOT_N1
    }


def test_a_pod_no_node_matches_waits_and_says_why(world: Any) -> None:
    affinity = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]}]
    assert world.post("/api/v1/podgroups/", {"namespace": "ns1", "name": "lost"}, format="json").status_code == 201
    assert world.post("/api/v1/pods/", _pod("p1", affinity, "lost"), format="json").status_code == 201
    cluster = Cluster.objects.get(name="default")
    assert sessions.run_scheduling_session(cluster).status == "ok"
    pod = Pod.objects.select_related("podgroup").get(name="p1")
    assert pod.status == "Pending" and pod.podgroup is not None
    assert "node affinity: 3 nodes do not match" in pod.podgroup.message, pod.podgroup.message


@pytest.mark.parametrize(
    ("affinity", "detail"),
    [
        (
            [{"matchExpressions": []}, {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}],
            "node_affinity[1].matchExpressions[0].operator: 'Near' is not one of In, NotIn, Exists",
        ),
        (
            [{"matchExpressions": [{"key": "zone", "operator": "In"}]}],
            "node_affinity[0].matchExpressions[0].values: must be non-empty with operator In",
        ),
        (
            [{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["a"]}]}],
            "node_affinity[0].matchFields[0].key: 'metadata.labels' is not a valid field selector key",
        ),
        ({"matchExpressions": []}, "node_affinity: expected a list, got"),
        (
            [{"matchExpressions": [{"key": {"zone": 1}, "operator": "In", "values": [1.5]}]}],
            "node_affinity[0].matchExpressions[0].key: expected a string, got",
        ),
    ],
)
def test_a_bad_term_is_a_400_naming_the_field_and_nothing_is_written(world: Any, affinity: Any, detail: str) -> None:
    r = world.post("/api/v1/pods/", _pod("bad", affinity), format="json")
    assert r.status_code == 400, r.json()
    assert detail in error_attrs(r)["node_affinity"]
    assert not Pod.objects.filter(name="bad").exists()


def test_no_affinity_is_an_empty_list_and_a_patch_changes_it(world: Any) -> None:
    r = world.post("/api/v1/pods/", {"namespace": "ns1", "name": "plain"}, format="json")
    assert r.status_code == 201 and r.json()["node_affinity"] == []
    r = world.patch(f"/api/v1/pods/{r.json()['id']}/", {"node_affinity": ZONE_C_OR_NOT_N1[:1]}, format="json")
    assert r.status_code == 200, r.json()
    assert Pod.objects.get(name="plain").node_affinity == ZONE_C_OR_NOT_N1[:1]
