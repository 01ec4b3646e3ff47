"""Staged entries to the services' writes: the engine reads the change language (``engine.changes``), the
frontend takes each write's values from the snapshot the engine produced, and ``quotas.services.apply_writes``
writes them all or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from engine.changes import ProposalError
from engine.resources import ResourceList
from frontend import staging
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster
from scheduling.store import load_snapshot
from tests.frontend import builders as b


def _snapshot() -> Any:
    return load_snapshot(Cluster.objects.get(name="default"))


@pytest.fixture
def tree(db: Any) -> None:
    b.cluster()
    b.node("n1", cpu="16", memory="64Gi")
    b.queue("dept", deserved={"cpu": "10"})
    b.queue("team", "dept", deserved={"cpu": "4"})
    b.group("lab", min={"cpu": "2"}, max={"cpu": "8"})
    b.namespace("ns1", 2, "team", "lab")


def test_a_queue_edit_is_written_with_the_values_the_engine_parsed(tree: None) -> None:
    team = Queue.objects.get(name="team")
    entry = staging.node_entry(
        "queue", team, {"name": "team", "parent": "dept", "deserved": ResourceList({"cpu": 6000})}
    )
    [write] = staging.writes(_snapshot(), [entry])
    assert write == services.Write("queue", "team", team.version, {"deserved": ResourceList({"cpu": 6000})})


def test_a_create_a_rename_and_a_weight_read_the_snapshot_after_each_change(tree: None) -> None:
    b.namespace("ns2")
    lab = QuotaGroup.objects.get(name="lab")
    ns1 = Namespace.objects.get(name="ns1")
    entries = [
        staging.node_entry("queue", None, {"name": "new", "parent": "dept", "weight": 3}),
        staging.node_entry("quota", lab, {"name": "lab2", "namespaces": ["ns1", "ns2"]}),
        staging.weight_entry(ns1, 5),
    ]
    created, renamed, weight = staging.writes(_snapshot(), entries)
    assert created == services.Write("queue", None, None, {"name": "new", "parent": "dept", "weight": 3})
    assert renamed == services.Write("quota_group", "lab", lab.version, {"name": "lab2", "namespaces": ["ns1", "ns2"]})
    assert weight == services.Write("namespace", "ns1", ns1.version, {"weight": 5})


def test_a_change_the_engine_refuses_is_named_by_its_place_in_the_list(tree: None) -> None:
    ns1 = Namespace.objects.get(name="ns1")
    team = Queue.objects.get(name="team")
    entries = [
        staging.weight_entry(ns1, 5),
        staging.node_entry("queue", team, {"deserved": ResourceList({"cpu": 20000})}),
    ]
    with pytest.raises(ProposalError) as caught:
        staging.writes(_snapshot(), entries)
    assert {e.field.split(".")[1] for e in caught.value.errors} == {"1"}


def test_apply_writes_everything_or_nothing(tree: None) -> None:
    ns1 = Namespace.objects.get(name="ns1")
    team = Queue.objects.get(name="team")
    entries = [staging.weight_entry(ns1, 7), staging.delete_entry("queue", team)]
    done = staging.apply(entries, _snapshot())
    assert done.count == 2
    assert Namespace.objects.get(name="ns1").weight == 7 and not Queue.objects.filter(name="team").exists()


def test_apply_reports_a_moved_version_before_a_rule(tree: None) -> None:
    """ns1 moved since it was staged and the second change breaks a rule: the conflict is what the page says."""
    ns1 = Namespace.objects.get(name="ns1")
    team = Queue.objects.get(name="team")
    entries = [
        staging.weight_entry(ns1, 7),
        staging.node_entry("queue", team, {"deserved": ResourceList({"cpu": 20000})}),
    ]
    services.set_namespace_weight(Namespace.objects.get(name="ns1"), 4)
    with pytest.raises(staging.Conflict, match="namespace ns1 was at version"):
        staging.apply(entries, _snapshot())
    assert Namespace.objects.get(name="ns1").weight == 4


def test_set_namespace_weight_refuses_less_than_one(tree: None) -> None:
    from engine.rules import RuleViolation

    with pytest.raises(RuleViolation, match="weight must be an integer >= 1"):
        services.set_namespace_weight(Namespace.objects.get(name="ns1"), 0)
    assert Namespace.objects.get(name="ns1").weight == 2


def test_apply_writes_names_the_write_a_rule_refused(tree: None) -> None:
    ns1 = Namespace.objects.get(name="ns1")
    team = Queue.objects.get(name="team")
    writes = [
        services.Write("namespace", "ns1", ns1.version, {"weight": 9}),
        services.Write("queue", "team", team.version, {"deserved": ResourceList({"cpu": 50000})}),
    ]
    with pytest.raises(services.WriteRefused) as caught:
        services.apply_writes(writes)
    assert caught.value.index == 1
    assert Namespace.objects.get(name="ns1").weight == 2
