"""Kueue's levers on the dashboard's queues through the API (issue 28 item 9): the ``kueue`` field takes each lever
in Kueue's spelling, reads it back normalized, is cleared with null, and refuses a bad value at its place
(``kueue.preemption.reclaimWithinCohort``) with nothing written; the schema documents it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotas.models import Queue
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

EACH = [
    {"queueingStrategy": "StrictFIFO"},
    {"stopPolicy": "HoldAndDrain"},
    {"stopPolicy": "Hold"},
    {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In", "values": ["nlp", "cv"]}]}},
    {
        "preemption": {
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            "withinClusterQueue": "LowerOrNewerEqualPriority",
        }
    },
    {"admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}},
    {"fairSharing": {"weight": "0.75"}},
    {"kind": "ClusterQueue", "name": "root"},
]


def test_each_lever_is_created_patched_read_back_and_cleared(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/queues/", {"name": "nlp", "kueue": EACH[0]}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["kueue"] == EACH[0] and r.json()["display_name"] == "nlp"
    for value in EACH[1:]:
        r = admin_api.patch("/api/v1/queues/nlp/", {"kueue": value}, format="json")
        assert r.status_code == 200, r.json()
        assert r.json()["kueue"] == value
        assert Queue.objects.get(name="nlp").kueue == value
        assert Queue.objects.get(name="nlp").to_spec().kueue == value
    assert r.json()["display_name"] == "root"  # the Kueue name (the last value: a ClusterQueue named root)
    # Kueue's defaults are left out, a number weight is kept as a quantity
    r = admin_api.patch(
        "/api/v1/queues/nlp/",
        {"kueue": {"queueingStrategy": "BestEffortFIFO", "stopPolicy": "None", "fairSharing": {"weight": 2}}},
        format="json",
    )
    assert r.status_code == 200 and r.json()["kueue"] == {"fairSharing": {"weight": "2"}}
    r = admin_api.patch("/api/v1/queues/nlp/", {"kueue": None}, format="json")
    assert r.status_code == 200 and r.json()["kueue"] is None
    assert Queue.objects.get(name="nlp").kueue is None
    assert admin_api.get("/api/v1/queues/default/").json()["kueue"] is None


def test_bad_levers_are_refused_at_their_place_and_nothing_is_written(admin_api: Any) -> None:
    bad = {
        "queueingStrategy": "LIFO",
        "preemption": {"reclaimWithinCohort": "Sometimes", "borrowWithinCohort": {"maxPriorityThreshold": "high"}},
        "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Has"}]},
        "fairSharing": {"weight": "-1"},
    }
    r = admin_api.post("/api/v1/queues/", {"name": "nlp", "deserved": {"cpu": "4"}, "kueue": bad}, format="json")
    assert r.status_code == 400
    attrs = error_attrs(r)
    assert "'LIFO' is not one of BestEffortFIFO, StrictFIFO" in attrs["kueue.queueingStrategy"]
    assert "'Sometimes' is not one of Never, LowerPriority, Any" in attrs["kueue.preemption.reclaimWithinCohort"]
    assert "not a 32-bit integer" in attrs["kueue.preemption.borrowWithinCohort.maxPriorityThreshold"]
    assert (
        "'Has' is not one of In, NotIn, Exists, DoesNotExist"
        in attrs["kueue.namespaceSelector.matchExpressions.0.operator"]
    )
    assert "must be 0 or greater than 10^-9" in attrs["kueue.fairSharing.weight"]
    assert not Queue.objects.filter(name="nlp").exists()

    good = {"queueingStrategy": "StrictFIFO"}
    assert admin_api.post("/api/v1/queues/", {"name": "nlp", "kueue": good}, format="json").status_code == 201
    r = admin_api.patch(
        "/api/v1/queues/nlp/", {"weight": 5, "kueue": {"stopPolicy": "Drain"}}, format="json"
    )  # one bad field: the other is not written either
    assert r.status_code == 400
    assert "'Drain' is not one of None, Hold, HoldAndDrain" in error_attrs(r)["kueue.stopPolicy"]
    row = Queue.objects.get(name="nlp")
    assert (row.kueue, row.weight) == (good, 1)
    r = admin_api.patch("/api/v1/queues/nlp/", {"kueue": "StrictFIFO"}, format="json")
    assert r.status_code == 400 and "expected an object" in error_attrs(r)["kueue"]


def test_the_schema_documents_the_field(admin_api: Any) -> None:
    schema = admin_api.get("/api/schema/", {"format": "json"}).json()
    field = schema["components"]["schemas"]["Queue"]["properties"]["kueue"]
    assert field["type"] == "object" and field["nullable"] is True
    assert "borrowWithinCohort" in field["description"] and "HoldAndDrain" in field["description"]


CONFIGURATION = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: 10m}
"""


def test_a_clusters_kueue_configuration_is_checked_and_applied_to_its_sessions(admin_api: Any) -> None:
    from scheduling import store
    from scheduling.models import Cluster

    assert admin_api.post("/api/v1/clusters/", {"name": "c1"}, format="json").status_code == 201
    bad = CONFIGURATION.replace("10m", "ten minutes")
    r = admin_api.patch("/api/v1/clusters/c1/", {"kueue_configuration": bad}, format="json")
    assert r.status_code == 400
    assert "kueue_configuration: waitForPodsReady.timeout" in error_attrs(r)["kueue_configuration"]
    assert Cluster.objects.get(name="c1").kueue_configuration == ""
    r = admin_api.patch("/api/v1/clusters/c1/", {"kueue_configuration": CONFIGURATION}, format="json")
    assert r.status_code == 200 and r.json()["kueue_configuration"] == CONFIGURATION.strip()
    policy = store.load_snapshot(Cluster.objects.get(name="c1")).policy
    assert policy.action_arguments("enqueue")["gangRepairTimeout"] == "600s"  # waitForPodsReady's timeout


def test_the_kueue_and_volcano_exports_write_the_stored_levers(admin_api: Any) -> None:
    from scheduling.models import Cluster

    Cluster.objects.get_or_create(name="default")  # the export's cluster
    levers = {
        "kind": "ClusterQueue",
        "name": "root",
        "queueingStrategy": "StrictFIFO",
        "stopPolicy": "HoldAndDrain",
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
        "fairSharing": {"weight": "0.5"},
    }
    body = {"name": "root-clusterqueue", "deserved": {"cpu": "4"}, "kueue": levers}
    assert admin_api.post("/api/v1/queues/", body, format="json").status_code == 201
    docs = admin_api.get("/api/v1/export/", {"format": "kueue", "output": "json"}).json()
    (queue,) = [d for d in docs if d["kind"] == "ClusterQueue"]
    assert queue["metadata"]["name"] == "root"  # its Kueue name
    spec = queue["spec"]
    assert (spec["queueingStrategy"], spec["stopPolicy"]) == ("StrictFIFO", "HoldAndDrain")
    assert spec["preemption"]["reclaimWithinCohort"] == "Any"
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert spec["admissionScope"] == {"admissionMode": "UsageBasedAdmissionFairSharing"}
    assert spec["fairSharing"] == {"weight": "0.5"}
    docs = admin_api.get("/api/v1/export/", {"format": "volcano", "output": "json"}).json()
    (volcano,) = [d for d in docs if d["kind"] == "Queue" and d["metadata"]["name"] == "root-clusterqueue"]
    assert json.loads(volcano["metadata"]["annotations"]["fairway.io/kueue"]) == levers
