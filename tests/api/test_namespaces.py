"""/api/v1/namespaces/: weights (seed 000), default queue, quota group, resource quota."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def test_create_and_edit_weight_with_history(admin_api: Any) -> None:
    r = admin_api.post(
        "/api/v1/namespaces/",
        {"name": "ns1", "weight": 3, "default_queue": "default", "hard": {"cpu": "16", "memory": "64Gi"}},
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["hard"] == {"cpu": "16", "memory": "64Gi"}
    etag = admin_api.get("/api/v1/namespaces/ns1/")["ETag"]
    assert (
        admin_api.patch("/api/v1/namespaces/ns1/", {"weight": 5}, format="json", HTTP_IF_MATCH=etag).status_code == 200
    )
    assert [h.weight for h in Namespace.objects.get(name="ns1").history.order_by("history_date")] == [3, 5]


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({"name": "ns", "weight": 0}, "weight"),
        ({"name": "ns", "weight": "x"}, "weight"),
        ({"name": "NS"}, "name"),
        ({"name": "n" * 64}, "name"),
        ({"name": "ns", "default_queue": "nope"}, "default_queue"),
        ({"name": "ns", "quota_group": "root"}, "quota_group"),  # a parent group cannot hold pods
        ({"name": "ns", "hard": {"cpu": "-2"}}, "hard.cpu"),
    ],
)
def test_invalid_namespaces(admin_api: Any, body: dict, attr: str) -> None:
    r = admin_api.post("/api/v1/namespaces/", body, format="json")
    assert r.status_code == 400
    assert attr in error_attrs(r), error_attrs(r)
    assert not Namespace.objects.filter(name=body["name"]).exists()
