"""Names are refused, never trimmed, when they start or end with whitespace (issue 25, item 7): ``"nlp "`` was
accepted (trimmed into ``nlp``). Kubernetes' rule: names are DNS labels or subdomains. One field
(``core.fields.ObjectNameField``) keeps the name as sent, and the name rules answer 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/v1/queues/", {"name": "nlp ", "weight": 1}),
        ("/api/v1/queues/", {"name": " nlp", "weight": 1}),
        ("/api/v1/quota-groups/", {"name": "nlp ", "parent": "root", "max": {"cpu": "1"}}),
        ("/api/v1/namespaces/", {"name": "nlp "}),
        ("/api/v1/clusters/", {"name": "west "}),
        ("/api/v1/nodes/", {"name": "n1 ", "allocatable": {"cpu": "1"}}),
        ("/api/v1/podgroups/", {"name": "pg ", "namespace": "ns"}),
        ("/api/v1/pods/", {"name": "p0\t", "namespace": "ns"}),
    ],
)
def test_a_name_with_surrounding_whitespace_is_a_400_naming_the_field(admin_api: Any, url: str, body: dict) -> None:
    from quotas.models import Namespace

    Namespace.objects.get_or_create(name="ns")
    r = admin_api.post(url, body, format="json")
    assert r.status_code == 400, r.content
    assert "whitespace" in error_attrs(r)["name"]
