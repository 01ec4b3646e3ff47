"""Per-user limits through the API (issue 30 item 5): on queues and quota groups, read back in quantities, validated
with each problem at its entry and field, nothing written on a refusal; a job submitted through the API records its
token's user and groups; a session holds the job that would go over a limit, with the limit in its reason."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from scheduling import sessions
from scheduling.models import Cluster, PodGroup
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"


def _node(api: Any) -> None:
    r = api.post(
        "/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "32", "memory": "64Gi", GPU: "8"}}, format="json"
    )
    assert r.status_code == 201, r.json()


def test_queue_user_limits_round_trip(admin_api: Any) -> None:
    _node(admin_api)
    limits = [
        {"user": "alice", "max_resources": {GPU: "4", "memory": "32Gi"}, "max_jobs": 3},
        {"user": "*", "max_jobs": 2},
        {"group": "ml-interns", "max_resources": {GPU: "8"}},
    ]
    r = admin_api.post("/api/v1/queues/", {"name": "nlp", "user_limits": limits}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["user_limits"] == [
        {"user": "alice", "max_resources": {GPU: "4", "memory": "32Gi"}, "max_jobs": 3},
        {"user": "*", "max_resources": {}, "max_jobs": 2},
        {"group": "ml-interns", "max_resources": {GPU: "8"}, "max_jobs": None},
    ]
    spec = Queue.objects.get(name="nlp").to_spec()
    assert [(x.kind, x.name, x.max_resources.to_dict(), x.max_jobs) for x in spec.user_limits] == [
        ("user", "alice", {GPU: 4000, "memory": 32 * 2**30}, 3),
        ("user", "*", {}, 2),
        ("group", "ml-interns", {GPU: 8000}, None),
    ]
    r = admin_api.patch("/api/v1/queues/nlp/", {"user_limits": None}, format="json")
    assert r.status_code == 200 and r.json()["user_limits"] is None  # null: none
    assert Queue.objects.get(name="nlp").user_limits is None
    assert admin_api.get("/api/v1/queues/default/").json()["user_limits"] is None


def test_user_limit_problems_name_the_entry_and_field_and_write_nothing(admin_api: Any) -> None:
    _node(admin_api)
    bad = [
        {"user": "alice", "max_jobs": 1},
        {"user": "alice", "max_jobs": 2},
        {"group": "ml", "max_resources": {GPU: "-1"}},
        {"user": "bob", "max_resources": {"example.com/fpga": "1"}},
        {"user": "carol"},
        {"user": "dave", "group": "x", "max_jobs": 1},
    ]
    r = admin_api.post("/api/v1/queues/", {"name": "nlp", "user_limits": bad}, format="json")
    assert r.status_code == 400
    attrs = error_attrs(r)
    assert "has a limit already (entry 0)" in attrs["user_limits.1.user"]
    assert f"user_limits.2.max_resources.{GPU}" in attrs
    assert "example.com/fpga" in attrs["user_limits.3.max_resources.example.com/fpga"]
    assert "limits nothing" in attrs["user_limits.4.non_field_errors"]
    assert "exactly one of user and group" in attrs["user_limits.5.non_field_errors"]
    assert not Queue.objects.filter(name="nlp").exists()
    r = admin_api.post(
        "/api/v1/quota-groups/", {"name": "g", "max": {"cpu": "8"}, "user_limits": {"user": "a"}}, format="json"
    )
    assert r.status_code == 400 and "expected a list" in error_attrs(r)["user_limits"]
    assert not QuotaGroup.objects.filter(name="g").exists()


def _submit(api: Any, name: str, gpus: int) -> int:
    body = {"namespace": "ml", "name": name, "queue": "nlp", "min_member": 1, "min_resources": {GPU: str(gpus)}}
    r = api.post("/api/v1/podgroups/", body, format="json")
    assert r.status_code == 201, r.json()
    pod = {"namespace": "ml", "name": f"{name}-0", "podgroup": name, "request": {"cpu": "1", GPU: str(gpus)}}
    assert api.post("/api/v1/pods/", pod, format="json").status_code == 201
    return int(r.json()["id"])


def test_a_session_holds_the_job_over_its_users_and_groups_limit(admin_api: Any, api: Any, make_user: Any) -> None:
    _node(admin_api)
    limits = [{"user": "*", "max_jobs": 2}, {"group": "ml-interns", "max_resources": {GPU: "3"}}]
    assert admin_api.post("/api/v1/queues/", {"name": "nlp", "user_limits": limits}, format="json").status_code == 201
    assert admin_api.post("/api/v1/namespaces/", {"name": "ml"}, format="json").status_code == 201
    alice = api(make_user("alice", staff=True, groups=("ml-interns",)))
    first = _submit(alice, "a1", 2)
    assert alice.get(f"/api/v1/podgroups/{first}/").json()["user"] == "alice"
    assert PodGroup.objects.get(pk=first).user_groups == ["ml-interns"]
    second = _submit(alice, "a2", 2)
    third = _submit(admin_api, "b1", 2)
    sessions.run_scheduling_session(Cluster.objects.get())
    rows = {pg.name: pg for pg in PodGroup.objects.all()}
    assert rows["a1"].phase == "Running" and rows["b1"].phase == "Running"
    waiting = admin_api.get(f"/api/v1/podgroups/{second}/").json()
    assert waiting["phase"] == "Pending"
    assert "would use 4 of at most 3 GPUs allowed to group ml-interns in queue nlp" in waiting["message"]
    assert (waiting["blocker"]["kind"], waiting["blocker"]["name"], waiting["blocker"]["limit"]) == (
        "queue",
        "nlp",
        "userLimit",
    )
    why = admin_api.get(f"/api/v1/podgroups/{second}/why/").json()  # ``fairway job why`` and the job page's source
    assert "allowed to group ml-interns in queue nlp" in why["message"]
    assert why["blocking_node"] == {"kind": "queue", "name": "nlp"}
    assert third != second
