"""The editor's queue form edits the minimum runtime (whole seconds; blank: unset) through the services, with the
API's message at the field."""

from __future__ import annotations

from typing import Any

from quotas.models import Queue
from tests.frontend.test_editor import errors_of, org, queue_form

__all__ = ["org"]  # the fixture, shared with the editor's tests


def test_the_queue_form_sets_shows_and_clears_the_min_runtime(admin_client: Any, org: None) -> None:
    saved = admin_client.post("/edit/queues/nlp/", {**queue_form("nlp", 1, "research", 1), "min_runtime": "90"})
    assert saved.status_code == 302
    assert Queue.objects.get(name="nlp").min_runtime == 90
    form = admin_client.get("/edit/queues/nlp/").context["form"]
    assert form["min_runtime"].value() == 90
    assert "Minimum runtime (seconds)" in admin_client.get("/edit/queues/nlp/").content.decode()
    cleared = admin_client.post("/edit/queues/nlp/", {**queue_form("nlp", 2, "research", 1), "min_runtime": ""})
    assert cleared.status_code == 302 and Queue.objects.get(name="nlp").min_runtime is None


def test_a_negative_min_runtime_shows_the_apis_message(admin_client: Any, org: None) -> None:
    response = admin_client.post("/edit/queues/nlp/", {**queue_form("nlp", 1, "research", 1), "min_runtime": "-1"})
    assert response.status_code == 400
    assert errors_of(response)["min_runtime"] == [
        "queue nlp: min_runtime -1 s must be 0 or more seconds (leave it unset for the policy's minRuntime)"
    ]
    assert Queue.objects.get(name="nlp").min_runtime is None
