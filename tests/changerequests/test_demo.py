"""The done-when of issue 30 on the demo organisation itself (``load_demo``): nlp-lead asks for 4 more GPUs of
guarantee; research's guarantee is all handed out, so the request waits for room; research-lead approves it with the
room taken from ml-research (the example of docs/change-requests.md), and the tree changes."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from quotas.models import Queue

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"
NLP = {
    "op": "update",
    "kind": "queue",
    "name": "nlp",
    "spec": {"guarantee": {"cpu": "24", "memory": "144Gi", GPU: "6"}},
}
ROOM = {
    "op": "update",
    "kind": "queue",
    "name": "ml-research",
    "spec": {"guarantee": {"cpu": "48", "memory": "288Gi", GPU: "0"}},
}


def test_the_demo_request_for_four_more_gpus(api: Any) -> None:
    call_command("load_demo", stdout=StringIO())
    users = get_user_model().objects
    lead, dept = api(users.get(username="nlp-lead")), api(users.get(username="research-lead"))
    r = lead.post("/api/v1/change-requests/", {"changes": [NLP], "reason": "two interns"}, format="json")
    assert r.status_code == 201, r.content
    filed = r.json()
    assert "queue research" in filed["needs_room"][0]["message"]
    assert filed["whatif"]["requested"][0]["fields"][0]["after"] == f"cpu 24, memory 144Gi, {GPU} 6"
    assert api(users.get(username="engineering-lead")).get(f"/api/v1/change-requests/{filed['id']}/").status_code == 404
    r = dept.post(f"/api/v1/change-requests/{filed['id']}/approve/", {"changes": [ROOM, NLP]}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "applied"
    nlp, ml = Queue.objects.get(name="nlp"), Queue.objects.get(name="ml-research")
    assert (nlp.guarantee[GPU], ml.guarantee[GPU], nlp.guarantee["cpu"], ml.guarantee["cpu"]) == (6000, 0, 24000, 48000)
