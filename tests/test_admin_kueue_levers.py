"""A queue's Kueue levers in the Django admin (issue 28 item 9): a bad ``kueue`` value is refused with the rules'
sentence at the field and nothing written; a good one is saved normalized, as the API and the editor save it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.html_forms import form_data

pytestmark = pytest.mark.django_db


def test_the_admin_refuses_a_bad_lever_and_saves_a_good_one_normalized(admin_client: Any) -> None:
    from quotas import services
    from quotas.models import Queue

    services.ensure_builtins()
    queue = services.save_queue(None, {"name": "nlp"})
    url = f"/admin/quotas/queue/{queue.pk}/change/"
    page = form_data(admin_client.get(url).content.decode(), "queue_form")
    bad = admin_client.post(url, {**page, "kueue": json.dumps({"queueingStrategy": "LIFO"}), "_save": "Save"})
    assert bad.status_code == 200
    assert "kueue.queueingStrategy: &#x27;LIFO&#x27; is not one of BestEffortFIFO, StrictFIFO" in bad.content.decode()
    assert Queue.objects.get(pk=queue.pk).kueue is None
    given = {"queueingStrategy": "StrictFIFO", "stopPolicy": "None", "fairSharing": {"weight": 0.5}}
    good = admin_client.post(url, {**page, "kueue": json.dumps(given), "_save": "Save"})
    assert good.status_code == 302
    assert Queue.objects.get(pk=queue.pk).kueue == {"queueingStrategy": "StrictFIFO", "fairSharing": {"weight": "0.5"}}
