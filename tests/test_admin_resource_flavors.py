"""Kueue's ResourceFlavors in the Django admin (issue 28 item 7): a bad taint is refused with the same sentence as the
API's at the field and nothing written; a good flavor is saved; a flavor a queue's quota names is not deleted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.html_forms import form_data

pytestmark = pytest.mark.django_db


def test_the_admin_adds_a_flavor_refuses_a_bad_one_and_keeps_one_in_use(admin_client: Any) -> None:
    from engine.resources import ResourceList
    from quotas import services
    from quotas.models import ResourceFlavor

    services.ensure_builtins()
    url = "/admin/quotas/resourceflavor/add/"
    page = form_data(admin_client.get(url).content.decode(), "resourceflavor_form")
    bad = {**page, "name": "spot", "node_taints": json.dumps([{"key": "spot", "effect": "Sometimes"}]), "_save": "Save"}
    refused = admin_client.post(url, bad)
    assert refused.status_code == 200
    assert (
        "node_taints[0].effect: &#x27;Sometimes&#x27; is not one of NoSchedule, PreferNoSchedule, NoExecute"
        in refused.content.decode()
    )
    assert not ResourceFlavor.objects.exists()
    good = {**bad, "node_labels": json.dumps({"type": "spot"}), "node_taints": "[]"}
    assert admin_client.post(url, good).status_code == 302
    flavor = ResourceFlavor.objects.get(name="spot")
    assert flavor.node_labels == {"type": "spot"}
    services.save_queue(None, {"name": "nlp", "deserved": ResourceList({"cpu@spot": 4_000})})
    delete = admin_client.post(f"/admin/quotas/resourceflavor/{flavor.pk}/delete/", {"post": "yes"}, follow=True)
    assert "ResourceFlavor spot is in use: the quota of nlp names it" in delete.content.decode()
    assert ResourceFlavor.objects.filter(name="spot").exists()
