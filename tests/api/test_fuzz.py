"""Random JSON against every writing endpoint: bad input is always a 4xx with the error envelope, never a 500, and
a refused request writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup
from scheduling.models import Node, Pod, PodGroup
from tests.support.examples import examples

pytestmark = pytest.mark.django_db

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=80),
    st.sampled_from(["root", "default", "q1", "ns1", "2", "500m", "-1", "1e40", "4Gi", "Open", "true", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "CPU", "é", "", "a" * 300]), inner, max_size=3
        )
    ),
    max_leaves=6,
)

FIELDS = {
    "/api/v1/queues/": ["name", "parent", "weight", "capability", "deserved", "guarantee", "reclaimable", "priority"],
    "/api/v1/quota-groups/": [
        "name",
        "parent",
        "is_parent",
        "min",
        "max",
        "shared_weight",
        "allow_lent",
        "tree_id",
        "namespaces",
    ],
    "/api/v1/namespaces/": ["name", "weight", "default_queue", "quota_group", "hard"],
    "/api/v1/nodes/": ["name", "allocatable", "labels", "taints", "unschedulable", "ready"],
    "/api/v1/podgroups/": [
        "namespace",
        "name",
        "queue",
        "min_member",
        "min_task_member",
        "min_resources",
        "priority",
        "local_queue",
    ],
    "/api/v1/local-queues/": ["namespace", "name", "queue", "weight"],
    "/api/v1/pods/": [
        "namespace",
        "name",
        "podgroup",
        "request",
        "priority",
        "quota_group",
        "labels",
        "node_selector",
        "node_affinity",
        "tolerations",
        "duration_seconds",
    ],
    "/api/v1/whatif/": ["changes", "cluster", "session"],
    "/api/v1/simulate/": ["manifests", "policy", "sessions", "recycle"],
}


def bodies(url: str) -> st.SearchStrategy[Any]:
    known = st.dictionaries(st.sampled_from(FIELDS[url]), values, max_size=len(FIELDS[url]))
    return st.one_of(known, values)


def _counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Queue, QuotaGroup, Namespace, Node, PodGroup, Pod, LocalQueue))


@pytest.mark.parametrize("url", sorted(FIELDS))
def test_random_bodies_never_cause_a_server_error(admin_api: Any, url: str) -> None:
    admin_api.post("/api/v1/namespaces/", {"name": "ns1"}, format="json")
    admin_api.post("/api/v1/queues/", {"name": "q1"}, format="json")

    @settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(body=bodies(url))
    def check(body: Any) -> None:
        before = _counts()
        # sent as text: NaN and Infinity go out as the literals some clients write
        response = admin_api.post(url, json.dumps(body, allow_nan=True), content_type="application/json")
        assert response.status_code < 500, (url, body, response.content[:300])
        if response.status_code >= 400:
            envelope = response.json()
            assert envelope["type"] in ("validation_error", "client_error"), envelope
            assert envelope["errors"] and all("detail" in e for e in envelope["errors"])
            assert _counts() == before, (url, body)

    check()
