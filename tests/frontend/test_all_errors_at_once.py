"""Every problem of a form or a request at once: inputs that do not parse and the rules' violations together,
in the editor's queue and quota group forms and in the API, instead of one problem per attempt."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from tests.conftest import error_attrs
from tests.frontend import builders as b
from tests.frontend.test_editor import errors_of


@pytest.fixture
def org(db: Any) -> None:
    b.node("n1", cpu="64", memory="256Gi")
    b.queue("research", deserved={"cpu": "32"}, guarantee={"cpu": "8"}, capability={"cpu": "48"})
    b.group("dept", is_parent=True, min={"cpu": "32"}, max={"cpu": "64"})


def test_the_new_queue_form_reports_every_problem_at_once(admin_client: Any, org: None) -> None:
    form = {
        "name": "Bad_Name",  # rule: not a DNS label
        "parent": "research",
        "weight": "lots",  # does not parse
        "priority": "-1",  # below the minimum
        "reclaimable": "on",
        "version": "",
        "action": "save",
        "capability__cpu": "abc",  # does not parse
        "capability__memory": "1Gi",
        "deserved__memory": "2Gi",  # rule: above capability
        "guarantee__memory": "4Gi",  # rule: above deserved
        "deserved__cpu": "40",  # rule: research's children deserve more than research (32)
        "guarantee__cpu": "lots",  # does not parse
    }
    response = admin_client.post("/edit/new/queue/", form)
    assert response.status_code == 400
    errors = errors_of(response)
    assert {"name", "weight", "priority", "capability__cpu", "guarantee__cpu", "deserved__memory"} <= set(errors)
    assert any("must be <= capability memory 1Gi" in e for e in errors["deserved__memory"])
    assert any("must be >= guarantee memory 4Gi" in e for e in errors["deserved__memory"])
    assert any("deserved cpu" in e and "32" in e for e in errors.get("__all__", []) + errors.get("deserved__cpu", []))
    html = response.content.decode()
    # every message counts, not every field: deserved__memory shows two (issue 30: "4 problems" over five messages)
    assert len(errors["deserved__memory"]) > 1
    assert f"Not saved: {sum(len(m) for m in errors.values())} problems." in html
    assert not Queue.objects.filter(name__iexact="bad_name").exists()


def test_the_quota_group_form_reports_every_problem_at_once(admin_client: Any, org: None) -> None:
    form = {
        "name": "team-x",
        "parent": "dept",
        "allow_lent": "on",
        "version": "",
        "action": "save",
        "namespaces": "Bad NS",  # does not parse
        "min__cpu": "40",  # rule: min above max; and the children's min above dept's 32
        "max__cpu": "20",
        "min__memory": "-1Gi",  # does not parse (negative)
        "max__memory": "lots",  # does not parse
    }
    response = admin_client.post("/edit/new/quota/", form)
    assert response.status_code == 400
    errors = errors_of(response)
    assert {"namespaces", "min__memory", "max__memory", "min__cpu"} <= set(errors)
    assert any("min cpu 40 must be <= max cpu 20" in e for e in errors["min__cpu"])
    assert not QuotaGroup.objects.filter(name="team-x").exists()


def test_the_api_reports_field_and_rule_errors_together(admin_api: Any, org: None) -> None:
    body = {
        "name": "team-q",
        "parent": "research",
        "weight": 0,  # field: below the minimum
        "capability": {"cpu": "-1", "memory": "1Gi", "foo.example/bar": "1"},  # two bad entries
        "deserved": {"memory": "2Gi", "cpu": "40"},  # rules: above capability; above research's 32
        "guarantee": {"memory": "4Gi"},  # rule: above deserved
    }
    r = admin_api.post("/api/v1/queues/", body, format="json")
    assert r.status_code == 400
    attrs = error_attrs(r)
    assert {"weight", "capability.cpu", "capability.foo.example/bar", "deserved.memory"} <= set(attrs), r.json()
    messages = [e["detail"] for e in r.json()["errors"]]
    assert any("must be >= guarantee memory 4Gi" in m for m in messages)
    assert any("must be <= capability memory 1Gi" in m for m in messages)
    assert not Queue.objects.filter(name="team-q").exists()
    group = {"name": "g", "parent": "dept", "min": {"cpu": "40", "memory": "x"}, "max": {"cpu": "20"}}
    r = admin_api.post("/api/v1/quota-groups/", group, format="json")
    assert r.status_code == 400
    assert {"min.memory", "min.cpu"} <= set(error_attrs(r)), r.json()
