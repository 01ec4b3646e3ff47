"""``POST /api/v1/simulate/`` with Kueue's Fair Sharing: a Kueue Configuration given as the ``policy`` is read with the
manifests (issue 28 item 4), and each queue's dominant resource share is in the document."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.test_simulate_kueue_fair import BASE, FAIR, PRIORITIES, USING_THE_MOST, pod

pytestmark = pytest.mark.django_db


def test_a_kueue_configuration_as_the_policy(admin_api: Any) -> None:
    manifests = PRIORITIES + BASE + USING_THE_MOST + pod("c", "incoming")
    r = admin_api.post("/api/v1/simulate/", {"manifests": manifests, "policy": FAIR}, format="json")
    assert r.status_code == 200, r.content
    document = r.json()["document"]
    assert document["evictions"] == ["b/b1"]
    assert document["queues"]["b"]["fairSharing"]["borrowing"] is True
    assert any("with Fair Sharing" in w for w in r.json()["warnings"])


def test_a_bad_fair_sharing_section_is_a_400_naming_the_field(admin_api: Any) -> None:
    policy = FAIR + "  preemptionStrategies: [Sometimes]\n"
    r = admin_api.post("/api/v1/simulate/", {"manifests": BASE, "policy": policy}, format="json")
    assert r.status_code == 400
    assert "fairSharing.preemptionStrategies" in r.content.decode()
