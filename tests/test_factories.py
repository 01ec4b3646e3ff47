"""The factories of tests/support build valid rows: tree nodes through the services (a rule's refusal raises), cluster
rows in people's units, pods inheriting their podgroup's cluster and namespace, users in their teams."""

from __future__ import annotations

import pytest

from engine.resources import parse_resource_list
from engine.rules import RuleViolation
from quotas import services
from tests.support import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _builtins() -> None:
    services.ensure_builtins()


def test_tree_nodes_go_through_the_rules() -> None:
    dept = f.QueueFactory(name="dept", capability={"cpu": "10"}, deserved={"cpu": "8"})
    team = f.QueueFactory(name="team", parent="dept", deserved={"cpu": "4"})
    assert team.parent == dept and team.deserved == parse_resource_list({"cpu": "4"})
    with pytest.raises(RuleViolation, match="capability"):
        f.QueueFactory(name="greedy", parent="dept", capability={"cpu": "11"})
    group = f.QuotaGroupFactory(name="qa", min={"cpu": "2"}, max={"cpu": "4"})
    assert group.max == parse_resource_list({"cpu": "4"})


def test_pods_belong_to_their_podgroup_and_users_to_their_teams() -> None:
    node = f.NodeFactory(name="n1", allocatable={"cpu": "8", "nvidia.com/gpu": "2"})
    assert node.allocatable["nvidia.com/gpu"] == 2000
    pg = f.PodGroupFactory(namespace__name="ns-a", min_member=2)
    pods = f.PodFactory.create_batch(2, podgroup=pg, request={"cpu": "500m"})
    assert {(p.cluster_id, p.namespace.name, p.request["cpu"]) for p in pods} == {(pg.cluster_id, "ns-a", 500)}
    f.QueueFactory(name="nlp")
    lead = f.UserFactory(username="nlp-lead", teams=["nlp"])
    f.TeamFactory(name="nlp", queues=["nlp"])
    assert list(lead.groups.values_list("name", flat=True)) == ["nlp"]
    assert lead.check_password(f.PASSWORD)
