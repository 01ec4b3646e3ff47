"""The API root lists every collection (the trees', the cluster's) and the what-if, simulate, export, trace, replays,
audit and security-log endpoints."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


def test_the_root_lists_every_collection_and_endpoint(admin_api: Any) -> None:
    response = admin_api.get("/api/v1/")
    assert response.status_code == 200
    links = response.json()
    expected = {
        "queues", "quota-groups", "namespaces", "clusters", "nodes", "podgroups", "pods", "sessions", "evictions",
        "samples", "whatif", "simulate", "export", "audit", "security-events", "change-requests", "trace", "replays",
        "resource-flavors", "local-queues",
    }  # fmt: skip
    assert set(links) == expected
    for name, url in links.items():
        assert url.endswith(f"/api/v1/{name}/"), (name, url)
        if name not in ("whatif", "simulate"):  # POST-only
            params = {"export": {"format": "volcano"}, "trace": {"since": "2020-01-01T00:00:00Z"}}.get(name)
            assert admin_api.get(url, params).status_code == 200, name


def test_the_root_needs_a_login(api: Any) -> None:
    assert api(None).get("/api/v1/").status_code in (401, 403)
