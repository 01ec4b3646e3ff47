"""Issue 25, item 2 over the API: a 20,000-level chain is a 400 naming the first node past the depth (simulate and
what-if), and the request budget counts from the request's start: reading the body, the tree rules, the engine.

Statuses and messages only, no timings: where a budget must run out in a given phase, the clock is moved.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from engine import rules
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


def _chain(kind: str, n: int) -> str:
    docs: list[dict[str, Any]] = []
    parent = "root" if kind == "Queue" else "koordinator-root-quota"
    for i in range(n):
        name = f"c{i:05d}"
        if kind == "Queue":
            docs.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                         "metadata": {"name": name}, "spec": {"parent": parent}})  # fmt: skip
        else:
            labels = {
                "quota.scheduling.koordinator.sh/parent": parent,
                "quota.scheduling.koordinator.sh/is-parent": "true",
            }
            docs.append({"apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota",
                         "metadata": {"name": name, "labels": labels},
                         "spec": {"min": {"cpu": "1"}, "max": {"cpu": "10"}}})  # fmt: skip
        parent = name
    # libyaml's emitter writes the same text as ``yaml.safe_dump_all`` six times faster (the pure-Python one took
    # 7 s of CPU for the queue chain and 14 s for the quota group chain, the test's own work, not what it checks)
    return yaml.dump_all(docs, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def test_a_20000_queue_chain_is_a_400_naming_the_first_queue_past_the_depth(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/simulate/", {"manifests": _chain("Queue", 20_000)}, format="json")
    assert r.status_code == 400, r.content[:300]
    assert error_attrs(r) == {
        "manifests": "manifests: document 6 (Queue c00005): parent: queue c00005: depth 6 under parent c00004 exceeds "
        "the maximum allowed depth of 5"
    }


def test_a_20000_quota_group_chain_is_a_400_naming_the_first_group_past_the_depth(admin_api: Any) -> None:
    r = admin_api.post("/api/v1/simulate/", {"manifests": _chain("ElasticQuota", 20_000)}, format="json")
    assert r.status_code == 400, r.content[:300]
    assert (
        "(ElasticQuota c00010): parent: quota group c00010: depth 11 under parent c00009" in error_attrs(r)["manifests"]
    )


def test_whatif_refuses_a_quota_group_past_the_depth(admin_api: Any, settings: Any) -> None:
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, max_quota_group_depth=3)
    admin_api.post("/api/v1/nodes/", {"name": "n1", "allocatable": {"cpu": "16"}}, format="json")
    changes = []
    parent = "root"
    for i in range(5):
        spec = {"name": f"d{i}", "parent": parent, "is_parent": True, "min": {"cpu": "1"}, "max": {"cpu": "4"}}
        changes.append({"op": "create", "kind": "quota_group", "spec": spec})
        parent = f"d{i}"
    r = admin_api.post("/api/v1/whatif/", {"changes": changes}, format="json")
    assert r.status_code == 400, r.content[:300]
    assert error_attrs(r)["changes.3.spec.parent"] == (
        "quota group d3: depth 4 under parent d2 exceeds the maximum allowed depth of 3"
    )


def test_the_api_refuses_a_quota_group_past_the_depth(admin_api: Any, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "MAX_QUOTA_GROUP_DEPTH": 2}
    parent = None
    for i in range(3):
        body = {"name": f"e{i}", "is_parent": True, "min": {"cpu": "1"}, "max": {"cpu": "4"}}
        if parent:
            body["parent"] = parent
        r = admin_api.post("/api/v1/quota-groups/", body, format="json")
        parent = f"e{i}"
    assert r.status_code == 400
    assert error_attrs(r)["parent"] == "quota group e2: depth 3 under parent e1 exceeds the maximum allowed depth of 2"


def test_a_tiny_budget_stops_simulate_while_it_reads_the_request(admin_api: Any, settings: Any) -> None:
    """The budget starts when the request comes in: with a budget shorter than reading the body takes, the 422 comes
    from the reading, before any rule or session."""
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, request_budget_seconds=1e-9)
    r = admin_api.post("/api/v1/simulate/", {"manifests": _chain("Queue", 3)}, format="json")
    assert r.status_code == 422, r.content[:300]
    [error] = r.json()["errors"]
    assert error["code"] == "budget_exceeded"
    assert "(while reading the request) (FAIRWAY_REQUEST_BUDGET_SECONDS)" in error["detail"]


def test_the_budget_runs_out_inside_the_tree_rules(admin_api: Any, settings: Any, monkeypatch: Any) -> None:
    """The rules call the deadline as they go: a budget that runs out while they check a wide tree stops them there
    (the clock moves on once they start, as a slow rule would make it)."""
    import time

    from engine.limits import Deadline
    from planning import values_api

    shift = [0.0]

    class MovedClock(Deadline):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, clock=lambda: time.monotonic() + shift[0], **kwargs)

    monkeypatch.setattr(values_api, "Deadline", MovedClock)
    checked = rules.queue_tree_errors

    def slow_rules(*args: Any, **kwargs: Any) -> Any:
        shift[0] = 3600.0  # an hour passes as the rules start
        return checked(*args, **kwargs)

    monkeypatch.setattr(rules, "queue_tree_errors", slow_rules)
    docs = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": f"w{i}"},
             "spec": {"parent": "root"}} for i in range(10)]  # fmt: skip
    r = admin_api.post("/api/v1/simulate/", {"manifests": yaml.safe_dump_all(docs)}, format="json")
    assert r.status_code == 422, r.content[:300]
    [error] = r.json()["errors"]
    assert error["code"] == "budget_exceeded"
    assert "(checking the queue and quota trees)" in error["detail"]
