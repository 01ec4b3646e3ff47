"""A queue's Kueue levers on the dashboard (issue 28 item 9): its page names the Kueue object it stands for (a
ClusterQueue named ``root`` is the queue ``root-clusterqueue``) and its levers in one line; the editor saves the
``kueue`` field as a JSON object and refuses a bad one with the rules' sentence at the field, writing nothing."""

from __future__ import annotations

import json
from typing import Any

from quotas.models import Queue
from tests.frontend.test_editor import errors_of, org, queue_form

__all__ = ["org"]  # the fixture, shared with the editor's tests

LEVERS = {
    "kind": "ClusterQueue",
    "name": "root",
    "queueingStrategy": "StrictFIFO",
    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
}


def test_the_page_shows_the_kueue_name_and_levers(admin_client: Any, org: None) -> None:
    assert 'id="node-kueue-name"' not in admin_client.get("/queues/nlp/").content.decode()  # none: no line
    Queue.objects.filter(name="nlp").update(kueue=LEVERS)
    page = admin_client.get("/queues/nlp/").content.decode()
    assert """<p class="sub" id="node-kueue-name">Kueue's ClusterQueue root</p>""" in page
    assert "StrictFIFO: later jobs wait behind the first that cannot be admitted" in page
    assert "reclaimWithinCohort Any, borrowWithinCohort Never, withinClusterQueue LowerPriority" in page


def test_the_editor_saves_and_keeps_the_levers_and_refuses_a_bad_one(admin_client: Any, org: None) -> None:
    form = queue_form("nlp", 1, "research", 1, deserved_cpu="8", guarantee_cpu="2")
    saved = admin_client.post("/edit/queues/nlp/", {**form, "kueue": json.dumps(LEVERS)})
    assert saved.status_code == 302, errors_of(saved)
    assert Queue.objects.get(name="nlp").kueue == LEVERS
    shown = admin_client.get("/edit/queues/nlp/").context["form"]["kueue"].value()
    assert json.loads(shown) == LEVERS
    form = queue_form("nlp", 2, "research", 1, deserved_cpu="8", guarantee_cpu="2")
    refused = admin_client.post("/edit/queues/nlp/", {**form, "kueue": '{"stopPolicy": "Drain"}'})
    assert refused.status_code == 400
    assert errors_of(refused) == {
        "kueue": ["queue nlp: kueue.stopPolicy: 'Drain' is not one of None, Hold, HoldAndDrain"]
    }
    assert Queue.objects.get(name="nlp").kueue == LEVERS


def test_a_queue_without_levers_shows_an_empty_box_and_saves_as_none(admin_client: Any, org: None) -> None:
    """Django's JSON field wrote ``null`` in the box of a queue without levers."""
    import re

    page = admin_client.get("/edit/queues/nlp/").content.decode()
    box = re.search(r'<textarea name="kueue"[^>]*>(.*?)</textarea>', page, re.S)
    assert box is not None and box.group(1).strip() == "", box
    form = queue_form("nlp", 1, "research", 1, deserved_cpu="8", guarantee_cpu="2")
    saved = admin_client.post("/edit/queues/nlp/", {**form, "kueue": ""})
    assert saved.status_code == 302, errors_of(saved)
    assert Queue.objects.get(name="nlp").kueue is None
