"""The warnings of an accepted tree change (engine.rules.warnings): overcommitted deserved, guarantee and min, and
fields the cluster's queue policy ignores."""

from __future__ import annotations

from engine import rules
from engine.objects import QueueSpec, QuotaGroupSpec
from engine.resources import ResourceList

CLUSTER = {"cpu": 1_024_000, "memory": 4096 * 2**30}


def q(name: str, parent: str | None = "root", weight: int = 1, **lists: dict[str, int]) -> QueueSpec:
    return QueueSpec(name=name, parent=parent, weight=weight, **{k: ResourceList(v) for k, v in lists.items()})


def test_overcommitted_deserved_warns_with_the_numbers() -> None:
    tree = {"root": q("root", None), "a": q("a", deserved={"cpu": 600_000}), "default": q("default")}
    new = q("b", deserved={"cpu": 475_000}, guarantee={"cpu": 100_000})
    after = {**tree, "b": new}
    found = rules.queue_warnings(after, new, None, total=CLUSTER, policy="capacity")
    assert [(w.field, w.code) for w in found] == [("deserved.cpu", "overcommitted")]
    assert found[0].message == (
        "queue b: the top-level queues' deserved cpu add up to 1075, more than the cluster's 1024: "
        "not all of it can be served at once"
    )
    # within the cluster: nothing to say; a change that does not touch deserved: nothing either
    fits = q("b", deserved={"cpu": 400_000})
    assert rules.queue_warnings({**tree, "b": fits}, fits, None, total=CLUSTER, policy="capacity") == []
    renamed_weight = q("b", deserved={"cpu": 475_000}, guarantee={"cpu": 100_000})
    assert rules.queue_warnings(after, renamed_weight, new, total=CLUSTER, policy="capacity") == []


def test_fields_the_policy_ignores_are_named() -> None:
    tree = {"root": q("root", None), "a": q("a")}
    heavier = q("a", weight=5)
    found = rules.queue_warnings({**tree, "a": heavier}, heavier, tree["a"], total=CLUSTER, policy="capacity")
    assert [(w.field, w.code) for w in found] == [("weight", "no_effect")]
    assert "weight has no effect under the cluster's capacity policy" in found[0].message
    assert rules.queue_warnings({**tree, "a": heavier}, heavier, tree["a"], total=CLUSTER, policy="proportion") == []
    deserving = q("a", deserved={"cpu": 8_000})
    found = rules.queue_warnings({**tree, "a": deserving}, deserving, tree["a"], total=CLUSTER, policy="proportion")
    assert [(w.field, w.code) for w in found] == [("deserved", "no_effect")]
    assert "deserved has no effect under the cluster's proportion policy" in found[0].message
    named = rules.queue_warnings(
        {**tree, "a": heavier}, heavier, tree["a"], total=CLUSTER, policy="capacity-hierarchy", cluster="gpu"
    )
    assert "under the cluster gpu's capacity-hierarchy policy" in named[0].message


def test_first_level_quota_groups_min_over_the_cluster_warns() -> None:
    def g(name: str, low: int) -> QuotaGroupSpec:
        return QuotaGroupSpec(name=name, parent="root", min=ResourceList({"cpu": low}), max=ResourceList({"cpu": low}))

    tree = {"a": g("a", 700_000), "default": g("default", 900_000)}  # default is outside the distribution
    new = g("b", 400_000)
    found = rules.quota_group_warnings({**tree, "b": new}, new, None, total=CLUSTER)
    assert [(w.field, w.code) for w in found] == [("min.cpu", "overcommitted")]
    assert "first-level groups' min cpu add up to 1100, more than the cluster's 1024" in found[0].message
    small = g("b", 300_000)
    assert rules.quota_group_warnings({**tree, "b": small}, small, None, total=CLUSTER) == []
