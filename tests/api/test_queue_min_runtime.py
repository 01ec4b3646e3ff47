"""A queue's minimum runtime (issue 26 item 3, KAI's min-runtime per queue) through the API: whole seconds, 0 or more,
null = unset (the parent's, else the policy's ``minRuntime``), refused with a sentence naming the field, recorded in
the history, and in the engine's spec of the queue."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def test_min_runtime_round_trips_and_null_unsets_it(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/queues/", {"name": "team", "min_runtime": 90}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["min_runtime"] == 90
    assert Queue.objects.get(name="team").to_spec().min_runtime == 90.0
    assert admin_api.get("/api/v1/queues/default/").json()["min_runtime"] is None  # unset by default
    r = admin_api.patch("/api/v1/queues/team/", {"min_runtime": 0}, format="json")
    assert r.status_code == 200 and r.json()["min_runtime"] == 0  # 0: no minimum for this subtree (not unset)
    assert Queue.objects.get(name="team").to_spec().min_runtime == 0.0
    r = admin_api.patch("/api/v1/queues/team/", {"min_runtime": None}, format="json")
    assert r.status_code == 200 and r.json()["min_runtime"] is None
    assert Queue.objects.get(name="team").to_spec().min_runtime is None
    history = Queue.objects.get(name="team").history.order_by("history_date")
    assert [h.min_runtime for h in history] == [90, 0, None]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-5, "queue team: min_runtime -5 s must be 0 or more seconds (leave it unset for the policy's minRuntime)"),
        ("soon", "A valid integer is required."),
        (2**31, "Ensure this value is less than or equal to 2147483647."),
    ],
)
def test_a_bad_min_runtime_is_refused_naming_the_field(admin_api: Any, value: object, words: str) -> None:
    r = admin_api.post("/api/v1/queues/", {"name": "team", "min_runtime": value}, format="json")
    assert r.status_code == 400
    assert error_attrs(r)["min_runtime"] == words
    assert not Queue.objects.filter(name="team").exists()
    admin_api.post("/api/v1/queues/", {"name": "team"}, format="json")
    r = admin_api.patch("/api/v1/queues/team/", {"min_runtime": value}, format="json")
    assert r.status_code == 400 and "min_runtime" in error_attrs(r)
    assert Queue.objects.get(name="team").min_runtime is None
