"""Warnings, not refusals: deserved, guarantees or min adding up to more than the cluster has, and a field the
cluster's queue policy ignores, are saved and said, in the editor (after save and after staging) and in the API's
write responses (a ``warnings`` list)."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from scheduling.models import Cluster
from tests.frontend import builders as b
from tests.frontend.test_editor import queue_form

CAPACITY = 'actions: "enqueue, allocate, reclaim"\ntiers:\n- plugins:\n  - name: capacity\n'


@pytest.fixture
def cluster(db: Any) -> None:
    b.node("n1", cpu="1024", memory="4096Gi")
    b.queue("research", deserved={"cpu": "600"})


def _messages(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_the_editor_saves_overcommitted_deserved_and_warns(admin_client: Any, cluster: None) -> None:
    Cluster.objects.filter(name="default").update(scheduler_policy=CAPACITY)
    form = queue_form("serving", 0, deserved_cpu="475")
    form["version"] = ""
    response = admin_client.post("/edit/new/queue/", form, follow=True)
    assert Queue.objects.get(name="serving").deserved["cpu"] == 475_000  # saved
    shown = _messages(response)
    assert shown[0] == "Saved queue serving (version 1)."
    assert (
        "Warning: queue serving: the top-level queues' deserved cpu add up to 1075, more than the cluster's 1024: "
        "not all of it can be served at once." in shown
    )
    # a weight under the capacity policy moves no value: saved, and said
    response = admin_client.post("/edit/queues/serving/", {**form, "version": "1", "weight": "7"}, follow=True)
    assert Queue.objects.get(name="serving").weight == 7
    assert any("weight has no effect under the cluster's capacity policy" in m for m in _messages(response))
    # staged for the what-if: the same warnings on the what-if page
    response = admin_client.post(
        "/edit/queues/serving/", {**form, "version": "2", "weight": "9", "action": "stage"}, follow=True
    )
    assert any("weight has no effect" in m for m in _messages(response))


def test_the_editor_warns_that_deserved_does_not_count_under_proportion(admin_client: Any, cluster: None) -> None:
    form = queue_form("batch", 0, deserved_cpu="8")
    form["version"] = ""
    response = admin_client.post("/edit/new/queue/", form, follow=True)
    assert any("deserved has no effect under the cluster's proportion policy" in m for m in _messages(response))


def test_the_api_returns_the_warnings_of_a_write(admin_api: Any, cluster: None) -> None:
    r = admin_api.post("/api/v1/queues/", {"name": "serving", "deserved": {"cpu": "475"}}, format="json")
    assert r.status_code == 201, r.json()
    codes = {(w["attr"], w["code"]) for w in r.json()["warnings"]}
    assert codes == {("deserved.cpu", "overcommitted"), ("deserved", "no_effect")}
    r = admin_api.patch("/api/v1/queues/serving/", {"weight": 3}, format="json")
    assert r.status_code == 200 and r.json()["warnings"] == []
    assert "warnings" not in admin_api.get("/api/v1/queues/serving/").json()  # reads carry none
    r = admin_api.post(
        "/api/v1/quota-groups/", {"name": "big", "min": {"cpu": "1100"}, "max": {"cpu": "1100"}}, format="json"
    )
    assert r.status_code == 201, r.json()
    assert [(w["attr"], w["code"]) for w in r.json()["warnings"]] == [("min.cpu", "overcommitted")]
    assert QuotaGroup.objects.filter(name="big").exists()


def test_the_schema_describes_the_warnings_of_a_write(admin_api: Any) -> None:
    """``warnings`` is in the schema of both tree objects, as a list of (code, detail, attr), and not required:
    reads do not carry it."""
    schema = admin_api.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    for name in ("Queue", "QuotaGroup"):
        field = components[name]["properties"]["warnings"]
        assert field["items"] == {"$ref": "#/components/schemas/WriteWarning"} and field["readOnly"]
        assert "warnings" not in components[name]["required"]
        assert "warnings" not in components.get(f"{name}Request", {}).get("properties", {})
    assert set(components["WriteWarning"]["required"]) == {"code", "detail", "attr"}
