"""Kueue's LocalQueues in the Django admin (issue 28 items 5 and 9): a negative weight and a queue that is not a leaf
are refused with the API's sentences at their fields and nothing written; a good LocalQueue is saved with its weight
kept as every writer keeps it; the usage the live sessions keep is listed, read only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.html_forms import form_data

pytestmark = pytest.mark.django_db


def test_the_admin_adds_a_local_queue_and_refuses_bad_ones(admin_client: Any) -> None:
    from engine.resources import parse_resource_list
    from quotas import services
    from quotas.models import LocalQueue, Namespace, Queue

    services.ensure_builtins()
    services.save_queue(None, {"name": "dept", "deserved": parse_resource_list({"cpu": "8"})})
    services.save_queue(None, {"name": "team", "parent": "dept"})
    ns = Namespace.objects.create(name="ns-a")
    url = "/admin/quotas/localqueue/add/"
    page = form_data(admin_client.get(url).content.decode(), "localqueue_form")
    team = Queue.objects.get(name="team").pk
    bad = {**page, "namespace": ns.pk, "name": "lq", "queue": team, "weight": "-1", "_save": "Save"}
    refused = admin_client.post(url, bad)
    assert refused.status_code == 200
    assert "weight: &#x27;-1&#x27; must not be negative (0 is admitted last)" in refused.content.decode()
    inner = admin_client.post(url, {**bad, "weight": "1", "queue": Queue.objects.get(name="dept").pk})
    assert inner.status_code == 200
    assert "queue dept is not a leaf queue a LocalQueue may point at" in inner.content.decode()
    assert not LocalQueue.objects.exists()
    assert admin_client.post(url, {**bad, "weight": "750m"}).status_code == 302
    assert LocalQueue.objects.get().weight == "0.75"
    listing = admin_client.get("/admin/scheduling/localqueueusage/")
    assert listing.status_code == 200
