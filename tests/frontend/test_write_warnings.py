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


def test_a_min_or_deserved_below_a_jobs_minimum_is_saved_and_said(admin_api: Any, cluster: None) -> None:
    """Issue 26: a gang larger than its team's min (or deserved) starts only while others lend and is released whole
    when they take it back; the admin who sets such a quota is told, with the job and what would fix it. A finished
    job does not count; a job of another team does not either."""
    from tests.support.factories import PodGroupFactory

    gpu = "nvidia.com/gpu"
    b.node("g1", cpu="64", **{gpu: "64"})
    b.queue("ml", deserved={"cpu": "64", gpu: "32"})
    b.group("ml", min={"cpu": "64", gpu: "32"}, max={"cpu": "128", gpu: "64"})
    b.group("other", min={"cpu": "8"}, max={"cpu": "8"})
    ml, other = b.namespace("ml", queue_name="ml", group_name="ml"), b.namespace("x", group_name="other")
    queue = Queue.objects.get(name="ml")
    PodGroupFactory(namespace=ml, queue=queue, name="llm", min_member=8, min_resources={"cpu": "128", gpu: "32"})
    PodGroupFactory(namespace=ml, queue=queue, name="old", min_resources={gpu: "48"}, phase="Completed")
    PodGroupFactory(namespace=other, name="big", min_resources={"cpu": "512"})

    r = admin_api.patch("/api/v1/quota-groups/ml/", {"min": {"cpu": "128", gpu: "24"}}, format="json")
    assert r.status_code == 200, r.json()
    assert QuotaGroup.objects.get(name="ml").min[gpu] == 24_000  # saved: a warning, not a refusal
    assert r.json()["warnings"] == [
        {
            "code": "below_job_minimum",
            "attr": f"min.{gpu}",
            "detail": f"quota group ml: min {gpu} 24 is below the minimum of job ml/llm (32): however fair the "
            "division, it starts only while other groups lend at least 8, and is released whole when they take it "
            "back; a min of 32 or a smaller gang would let it start without borrowing",
        }
    ]
    # a min that covers the job: nothing to say
    r = admin_api.patch("/api/v1/quota-groups/ml/", {"min": {"cpu": "128", gpu: "32"}}, format="json")
    assert r.status_code == 200 and r.json()["warnings"] == [], r.json()
    r = admin_api.patch("/api/v1/queues/ml/", {"deserved": {"cpu": "128", gpu: "16"}}, format="json")
    assert r.status_code == 200, r.json()
    below = [w for w in r.json()["warnings"] if w["code"] == "below_job_minimum"]
    assert [w["attr"] for w in below] == [f"deserved.{gpu}"]
    assert below[0]["detail"].startswith(f"queue ml: deserved {gpu} 16 is below the minimum of job ml/llm (32): ")
    assert "other queues lend at least 16" in below[0]["detail"]
    # the other group's own job is its concern, not ml's; and the other group hears of it
    r = admin_api.patch("/api/v1/quota-groups/other/", {"max": {"cpu": "16"}}, format="json")
    assert [w["attr"] for w in r.json()["warnings"]] == ["min.cpu"]


def test_the_editor_says_a_deserved_is_below_a_jobs_minimum(admin_client: Any, cluster: None) -> None:
    from tests.support.factories import PodGroupFactory

    b.queue("ml", deserved={"cpu": "64"})
    PodGroupFactory(namespace=b.namespace("ml", queue_name="ml"), queue=Queue.objects.get(name="ml"), name="llm",
                    min_member=8, min_resources={"cpu": "128"})  # fmt: skip
    response = admin_client.post("/edit/queues/ml/", queue_form("ml", 1, deserved_cpu="96"), follow=True)
    assert Queue.objects.get(name="ml").deserved["cpu"] == 96_000
    assert any(
        m.startswith("Warning: queue ml: deserved cpu 96 is below the minimum of job ml/llm (128): ")
        for m in _messages(response)
    ), _messages(response)
