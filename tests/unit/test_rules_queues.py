"""Queue rules of ``engine.rules``: names, limits, hierarchy, root protection, delete, open/close.

Numbers and situations follow Volcano's ``pkg/webhooks/admission/queues/validate/validate_queue_test.go``
("Volcano test: <case name>") and ``pkg/controllers/queue`` state machine, plus seeds 002 and 004.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.resources import ResourceList
from engine.rules import (
    CODES,
    FieldError,
    QueueFacts,
    RuleViolation,
    check,
    plan_queue_action,
    plan_queue_delete,
    settle_queue_state,
    validate_dns_label,
    validate_dns_subdomain,
    validate_queue,
    validate_queue_action,
    validate_queue_delete,
    validate_queue_tree,
)
from tests.support.examples import examples


def rl(data: Mapping[str, object] | None = None) -> ResourceList:
    return ResourceList.parse(data or {})


Limits = Mapping[str, object] | None


def q(
    name: str, parent: str | None = ROOT_QUEUE, *, cap: Limits = None, des: Limits = None, gua: Limits = None, **kw: Any
) -> QueueSpec:
    return QueueSpec(name, parent=parent, capability=rl(cap), deserved=rl(des), guarantee=rl(gua), **kw)


def tree_of(*specs: QueueSpec, root: QueueSpec | None = None) -> dict[str, QueueSpec]:
    out = {ROOT_QUEUE: root or QueueSpec(ROOT_QUEUE, parent=None), DEFAULT_QUEUE: QueueSpec(DEFAULT_QUEUE)}
    out.update({s.name: s for s in specs})
    return out


def codes(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.field, e.code) for e in errors]


# --------------------------------------------------------------------------------------------------------
# FieldError, RuleViolation, check
# --------------------------------------------------------------------------------------------------------


def test_check_raises_with_all_errors_and_groups_by_field() -> None:
    errors = [
        FieldError("weight", "queue a: weight 0 must be between 1 and 65535", "out_of_range"),
        FieldError(
            "deserved.cpu", "queue a: deserved cpu 2 must be <= capability cpu 1", "deserved_exceeds_capability"
        ),
        FieldError("weight", "second", "out_of_range"),
    ]
    check([])  # no error, no exception
    with pytest.raises(RuleViolation) as info:
        check(errors)
    assert info.value.errors == errors
    assert "deserved cpu 2 must be <= capability cpu 1" in str(info.value)
    assert info.value.by_field() == {
        "weight": ["queue a: weight 0 must be between 1 and 65535", "second"],
        "deserved.cpu": ["queue a: deserved cpu 2 must be <= capability cpu 1"],
    }


def test_every_emitted_code_is_documented() -> None:
    tree = tree_of(q("p", cap={"cpu": "1"}), q("c", "p", cap={"cpu": "2"}))
    emitted = validate_queue_tree(tree) + validate_queue(tree, q("Bad_Name", weight=0), None)
    assert emitted
    assert {e.code for e in emitted} <= set(CODES)


# --------------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "code", "fragment"),
    [
        ("team-a", None, None),
        ("a", None, None),
        ("0abc9", None, None),
        ("a" * 63, None, None),
        ("", "required", "queue name is required"),
        ("Team-A", "uppercase", "must be lower case (for example 'team-a')"),
        ("TEAM_A", "uppercase", "must be lower case"),
        ("équipe", "non_ascii", "non-ASCII character 'é'"),
        ("队列", "non_ascii", "non-ASCII character '队'"),
        ("a" * 64, "too_long", "is 64 characters long; at most 63 are allowed"),
        ("team_a", "invalid", "use only lowercase letters a-z, digits 0-9 and '-'"),
        ("-team", "invalid", "start and end with a letter or digit"),
        ("team-", "invalid", "start and end with a letter or digit"),
        ("team.a", "invalid", "use only lowercase letters"),
        ("team a", "invalid", "use only lowercase letters"),
        ("team\n", "whitespace", "starts or ends with whitespace; names are DNS labels"),  # refused, never trimmed
    ],
)
def test_queue_names_are_dns_labels(value: str, code: str | None, fragment: str | None) -> None:
    errors = validate_dns_label(value, what="queue name")
    if code is None:
        assert errors == []
    else:
        assert codes(errors)[0] == ("name", code)
        assert fragment is not None and fragment in errors[0].message


def test_over_long_and_malformed_name_reports_both() -> None:
    errors = validate_dns_label("A" * 70, what="queue name")
    assert [e.code for e in errors] == ["too_long", "uppercase"]


def test_non_string_name_is_refused() -> None:
    assert codes(validate_dns_label(12, what="queue name")) == [("name", "invalid")]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("team-a.batch", None),
        ("a" * 63 + "." + "b" * 63, None),
        ("a" * 254, "too_long"),
        ("team..a", "invalid"),
        (".team", "invalid"),
        ("Team.A", "uppercase"),
        ("tëam", "non_ascii"),
    ],
)
def test_subdomain_names(value: str, code: str | None) -> None:
    errors = validate_dns_subdomain(value, what="quota group name")
    assert [e.code for e in errors][:1] == ([] if code is None else [code])


def test_validate_queue_reports_bad_name_on_name_field() -> None:
    errors = validate_queue(tree_of(), q("Team-A"), None)
    assert codes(errors) == [("name", "uppercase")]
    assert errors[0].message == "queue name 'Team-A' must be lower case (for example 'team-a')"


# --------------------------------------------------------------------------------------------------------
# Scalars: weight, priority, state
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"weight": 1}, []),
        ({"weight": 65535}, []),
        ({"weight": 0}, [("weight", "out_of_range")]),
        ({"weight": 65536}, [("weight", "out_of_range")]),
        ({"weight": -3}, [("weight", "out_of_range")]),
        ({"priority": 0}, []),
        ({"priority": 2**31 - 1}, []),
        ({"priority": -1}, [("priority", "negative")]),
        ({"priority": 2**31}, [("priority", "out_of_range")]),
        ({"state": "Open"}, []),
        ({"state": "Closed"}, []),
        ({"state": "Closing"}, []),
        ({"state": "Unknown"}, []),
        ({"state": "wrong"}, [("state", "invalid_choice")]),  # Volcano test: Abnormal Case Wrong State Configured
        ({"state": "open"}, [("state", "invalid_choice")]),
    ],
)
def test_scalar_fields(kwargs: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert codes(validate_queue(tree_of(), q("team-a", **kwargs), None)) == expected


def test_scalar_messages_name_queue_field_and_numbers() -> None:
    errors = validate_queue(tree_of(), q("team-a", weight=0, priority=-1, state="Paused"), None)
    assert [e.message for e in errors] == [
        "queue team-a: weight 0 must be between 1 and 65535",
        "queue team-a: priority -1 must be greater than or equal to 0",
        "queue team-a: state 'Paused' must be one of Open, Closing, Closed, Unknown",
    ]


# --------------------------------------------------------------------------------------------------------
# Volcano rules 1-3: quantities >= 0, guarantee <= deserved <= capability
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Volcano test: Create queue without resource
        (q("resource-not-set"), []),
        # Volcano test: Create queue with deserved resource
        (q("only-deserved-set", des={"cpu": "1", "memory": "1Gi"}), []),
        # Volcano test: Create queue with guarantee but no deserved should be rejected
        (
            q("only-guarantee-set", gua={"cpu": "1"}),
            [("deserved.cpu", "guarantee_exceeds_deserved", "deserved cpu must be set and >= guarantee cpu 1")],
        ),
        # Volcano test: Create queue with capability less deserved
        (
            q("capability-less-deserved", cap={"cpu": "1", "memory": "1Gi"}, des={"cpu": "2", "memory": "1Gi"}),
            [("deserved.cpu", "deserved_exceeds_capability", "deserved cpu 2 must be <= capability cpu 1")],
        ),
        # Volcano test: Create queue with deserved less guarantee
        (
            q("deserved-less-guarantee", des={"cpu": "2", "memory": "1Gi"}, gua={"cpu": "2", "memory": "3Gi"}),
            [("deserved.memory", "guarantee_exceeds_deserved", "deserved memory 1Gi must be >= guarantee memory 3Gi")],
        ),
        # deserved unrestricted where capability leaves a resource unset (Volcano rule 3)
        (q("cap-cpu-only", cap={"cpu": "4"}, des={"cpu": "4", "memory": "100Gi"}), []),
        # equal everywhere is fine
        (q("equal", cap={"cpu": "500m"}, des={"cpu": "500m"}, gua={"cpu": "500m"}), []),
        # an explicit capability of 0 limits the resource
        (
            q("zero-cap", cap={"nvidia.com/gpu": "0"}, des={"nvidia.com/gpu": "1"}),
            [
                (
                    "deserved.nvidia.com/gpu",
                    "deserved_exceeds_capability",
                    "deserved nvidia.com/gpu 1 must be <= capability nvidia.com/gpu 0",
                )
            ],
        ),
    ],
)
def test_limit_ordering(spec: QueueSpec, expected: list[tuple[str, str, str]]) -> None:
    errors = validate_queue(tree_of(), spec, None)
    assert [(e.field, e.code) for e in errors] == [(f, c) for f, c, _ in expected]
    for error, (_, _, fragment) in zip(errors, expected, strict=True):
        assert error.message == f"queue {spec.name}: {fragment}"


@pytest.mark.parametrize(
    ("name", "field", "amount", "expected_fields", "message"),
    [
        # Volcano test: Queue with negative capability should be rejected (-10)
        ("queue-negative-capability", "capability", -10_000, ["capability.cpu"], "capability cpu -10"),
        # Volcano test: Queue with negative deserved should be rejected (-5)
        ("queue-negative-deserved", "deserved", -5_000, ["deserved.cpu"], "deserved cpu -5"),
        # Volcano test: Queue with negative guarantee (-2); as in Volcano, "deserved must be set" follows
        ("queue-negative-guarantee", "guarantee", -2_000, ["guarantee.cpu", "deserved.cpu"], "guarantee cpu -2"),
    ],
)
def test_negative_quantities(name: str, field: str, amount: int, expected_fields: list[str], message: str) -> None:
    # ResourceList.parse refuses negatives already; the rules check again for lists built in code.
    bad = QueueSpec(name, **{field: ResourceList({"cpu": amount})})  # type: ignore[arg-type]
    errors = validate_queue(tree_of(), bad, None)
    assert [e.field for e in errors] == expected_fields
    assert errors[0].code == "negative"
    assert errors[0].message == f"queue {name}: {message} must be greater than or equal to 0"


# --------------------------------------------------------------------------------------------------------
# Structure: parent, cycles, depth, podgroups on the parent
# --------------------------------------------------------------------------------------------------------


def test_self_parent() -> None:
    # Volcano test: Queue cannot use itself as parent
    errors = validate_queue(tree_of(), q("self-referencing-queue", "self-referencing-queue"), None)
    assert codes(errors) == [("parent", "self_parent")]
    assert errors[0].message == "queue self-referencing-queue: a queue cannot use itself as its parent"


def test_parent_must_exist() -> None:
    errors = validate_queue(tree_of(), q("child", "nowhere"), None)
    assert codes(errors) == [("parent", "parent_not_found")]
    assert errors[0].message == "queue child: parent queue nowhere does not exist"
    assert validate_queue(tree_of(q("somewhere")), q("child", "somewhere"), None) == []


def test_root_is_implicit_when_absent_from_the_tree() -> None:
    assert validate_queue({}, q("team-a"), None) == []


def test_reparenting_under_own_descendant_is_a_cycle() -> None:
    tree = tree_of(q("a"), q("b", "a"), q("c", "b"))
    errors = validate_queue(tree, q("a", "c"), tree["a"])
    assert codes(errors) == [("parent", "cycle")]
    assert errors[0].message == (
        "queue a: parent c makes the parent chain loop (a -> c -> b -> a): a queue cannot be placed under its own "
        "descendant"
    )
    # moving b under a sibling of its parent is fine
    tree["x"] = q("x")
    assert validate_queue(tree, q("b", "x"), tree["b"]) == []


def test_only_root_has_no_parent() -> None:
    assert codes(validate_queue(tree_of(), q("team-a", None), None)) == [("parent", "required")]
    assert codes(validate_queue({}, q(ROOT_QUEUE, "default"), None)) == [("parent", "protected")]
    assert validate_queue({}, q(ROOT_QUEUE, None), None) == []


# Volcano test TestValidateQueueDepthDynamic: root -> q1 -> q2 -> q3; q3 is at depth 3.
@pytest.mark.parametrize(("max_depth", "ok"), [(5, True), (3, True), (2, False)])
def test_depth(max_depth: int, ok: bool) -> None:
    tree = tree_of(q("q1"), q("q2", "q1"))
    errors = validate_queue(tree, q("q3", "q2"), None, max_depth=max_depth)
    if ok:
        assert errors == []
    else:
        assert codes(errors) == [("parent", "depth")]
        assert errors[0].message == "queue q3: depth 3 under parent q2 exceeds the maximum allowed depth of 2"


def test_default_depth_allows_five_levels_below_root() -> None:
    tree = tree_of(q("l1"), q("l2", "l1"), q("l3", "l2"), q("l4", "l3"))
    assert validate_queue(tree, q("l5", "l4"), None) == []
    tree["l5"] = q("l5", "l4")
    assert codes(validate_queue(tree, q("l6", "l5"), None)) == [("parent", "depth")]


def test_moving_a_subtree_counts_its_depth() -> None:
    # Volcano checks only the moved queue; here its deepest descendant must fit too.
    tree = tree_of(q("a"), q("b", "a"), q("m"), q("m1", "m"), q("m2", "m1"))
    errors = validate_queue(tree, q("m", "b"), tree["m"], max_depth=3)
    assert codes(errors) == [("parent", "depth")]
    assert errors[0].message == (
        "queue m: under parent b its descendant queue m2 would be at depth 5, beyond the maximum allowed depth of 3"
    )
    assert codes(validate_queue(tree, q("m", "b"), tree["m"], max_depth=4)) == [("parent", "depth")]
    assert validate_queue(tree, q("m", "b"), tree["m"], max_depth=5) == []


def _jobs_tree() -> tuple[dict[str, QueueSpec], dict[str, QueueFacts]]:
    # Volcano TestAdmitHierarchicalQueues fixtures.
    tree = tree_of(
        q("queue-with-jobs"),
        q("queue-without-jobs"),
        q("queue-with-child-queues"),
        q("child-queue", "queue-with-child-queues"),
        q("queue-without-child-queues"),
        q("parent-queue-has-child-with-jobs"),
        q("child-queue-a-with-jobs", "parent-queue-has-child-with-jobs"),
    )
    facts = {
        "queue-with-jobs": QueueFacts(allocated_pods=1),
        "queue-without-jobs": QueueFacts(allocated_pods=0),
        "parent-queue-has-child-with-jobs": QueueFacts(allocated_pods=1),  # aggregated from its child
        "child-queue-a-with-jobs": QueueFacts(podgroups=1, allocated_pods=1),
    }
    return tree, facts


@pytest.mark.parametrize(
    ("name", "parent", "expected"),
    [
        ("parent-queue-with-jobs", "queue-with-jobs", [("parent", "has_podgroups")]),  # Parent Queue has jobs
        ("parent-queue-without-jobs", "queue-without-jobs", []),  # Parent Queue has no jobs
        ("child-queue-b", "parent-queue-has-child-with-jobs", []),  # Parent Queue has child with jobs
        ("grandchild", "child-queue-a-with-jobs", [("parent", "has_podgroups")]),  # a leaf with podgroups
    ],
)
def test_a_queue_with_podgroups_cannot_become_a_parent(name: str, parent: str, expected: list[tuple[str, str]]) -> None:
    tree, facts = _jobs_tree()
    errors = validate_queue(tree, q(name, parent), None, facts=facts)
    assert codes(errors) == expected


def test_has_podgroups_message() -> None:
    tree, facts = _jobs_tree()
    errors = validate_queue(tree, q("parent-queue-with-jobs", "queue-with-jobs"), None, facts=facts)
    assert errors[0].message == (
        "queue parent-queue-with-jobs: queue queue-with-jobs cannot become its parent because it has 0 podgroups "
        "and 1 allocated pod; only a queue without podgroups can have child queues"
    )


# --------------------------------------------------------------------------------------------------------
# Hierarchy resources (Volcano rule 8)
# --------------------------------------------------------------------------------------------------------


def _resource_tree() -> dict[str, QueueSpec]:
    return tree_of(
        q("parent-queue-resource-test", cap={"cpu": "10", "memory": "20Gi"}, gua={"cpu": "8", "memory": "16Gi"}),
        q(
            "sibling-queue-resource-test",
            "parent-queue-resource-test",
            cap={"cpu": "3", "memory": "6Gi"},
            gua={"cpu": "2", "memory": "4Gi"},
        ),
    )


def test_child_capability_exceeds_parent() -> None:
    # Volcano test: Child capability exceeds parent capability (20 > 10)
    spec = q("child-capability-exceeds-parent", "parent-queue-resource-test", cap={"cpu": "20", "memory": "40Gi"})
    errors = validate_queue(_resource_tree(), spec, None)
    assert codes(errors) == [
        ("capability.cpu", "capability_exceeds_ancestor"),
        ("capability.memory", "capability_exceeds_ancestor"),
    ]
    assert errors[0].message == (
        "queue child-capability-exceeds-parent: capability cpu 20 exceeds the capability cpu 10 "
        "of its ancestor queue parent-queue-resource-test"
    )


def test_messages_print_both_sides_in_the_same_units() -> None:
    """A fractional sum and a whole limit read alike (cores, Gi): never ``519700m`` beside ``20``."""
    spec = q(
        "fractional-child",
        "parent-queue-resource-test",
        cap={"cpu": "7", "memory": "14Gi"},
        des={"cpu": "7", "memory": "14Gi"},
        gua={"cpu": "6500m", "memory": "13824Mi"},
    )
    errors = validate_queue(_resource_tree(), spec, None)
    assert errors[0].message == (
        "queue parent-queue-resource-test: the sum of its children's guarantee cpu 8.5 exceeds its guarantee cpu 8"
    )
    assert errors[1].message == (
        "queue parent-queue-resource-test: the sum of its children's guarantee memory 17.5Gi exceeds "
        "its guarantee memory 16Gi"
    )


def test_siblings_guarantee_sum_exceeds_parent() -> None:
    # Volcano test: Siblings guarantee sum exceeds parent guarantee (2 + 7 = 9 > 8 cpu, 4Gi + 14Gi > 16Gi).
    # Volcano stops at guarantee; the parent sets no deserved, so deserved is refused too (missing = 0).
    spec = q(
        "siblings-guarantee-exceeds",
        "parent-queue-resource-test",
        cap={"cpu": "7", "memory": "14Gi"},
        des={"cpu": "7", "memory": "14Gi"},
        gua={"cpu": "7", "memory": "14Gi"},
    )
    errors = validate_queue(_resource_tree(), spec, None)
    assert codes(errors) == [
        ("guarantee.cpu", "children_sum_exceeds_parent"),
        ("guarantee.memory", "children_sum_exceeds_parent"),
        ("deserved.cpu", "children_sum_exceeds_parent"),
        ("deserved.memory", "children_sum_exceeds_parent"),
    ]
    assert errors[0].message == (
        "queue parent-queue-resource-test: the sum of its children's guarantee cpu 9 exceeds its guarantee cpu 8"
    )
    assert errors[1].message == (
        "queue parent-queue-resource-test: the sum of its children's guarantee memory 18Gi exceeds "
        "its guarantee memory 16Gi"
    )
    assert errors[2].message == (
        "queue parent-queue-resource-test: the sum of its children's deserved cpu 7 exceeds its deserved cpu 0 "
        "(it does not set deserved cpu)"
    )


def test_siblings_guarantee_sum_within_parent_is_accepted() -> None:
    spec = q("fits", "parent-queue-resource-test", cap={"cpu": "6"}, gua={"cpu": "6", "memory": "12Gi"})
    spec = QueueSpec(
        spec.name, parent=spec.parent, capability=spec.capability, deserved=spec.guarantee, guarantee=spec.guarantee
    )
    tree = _resource_tree()
    tree["parent-queue-resource-test"] = q(
        "parent-queue-resource-test",
        cap={"cpu": "10", "memory": "20Gi"},
        des={"cpu": "8", "memory": "16Gi"},
        gua={"cpu": "8", "memory": "16Gi"},
    )
    tree["sibling-queue-resource-test"] = q(
        "sibling-queue-resource-test",
        "parent-queue-resource-test",
        cap={"cpu": "3", "memory": "6Gi"},
        des={"cpu": "2", "memory": "4Gi"},
        gua={"cpu": "2", "memory": "4Gi"},
    )
    assert validate_queue(tree, spec, None) == []  # 2 + 6 = 8 cpu, 4Gi + 12Gi = 16Gi: exactly at the limit


def _update_tree() -> dict[str, QueueSpec]:
    return tree_of(
        q(
            "parent-queue-to-update",
            cap={"cpu": "20", "memory": "40Gi"},
            gua={"cpu": "15", "memory": "30Gi"},
            des={"cpu": "20", "memory": "40Gi"},
        ),
        q(
            "child-queue-a",
            "parent-queue-to-update",
            cap={"cpu": "12", "memory": "24Gi"},
            gua={"cpu": "8", "memory": "16Gi"},
            des={"cpu": "8", "memory": "16Gi"},
        ),
        q(
            "child-queue-b-for-update",
            "parent-queue-to-update",
            cap={"cpu": "8", "memory": "16Gi"},
            gua={"cpu": "5", "memory": "10Gi"},
            des={"cpu": "5", "memory": "10Gi"},
        ),
    )


def test_parent_capability_below_child_on_update() -> None:
    # Volcano test: Parent capability less than child capability on UPDATE (10 < 12)
    tree = _update_tree()
    new = q(
        "parent-queue-to-update",
        cap={"cpu": "10", "memory": "20Gi"},
        des={"cpu": "10", "memory": "20Gi"},
        gua={"cpu": "8", "memory": "16Gi"},
    )
    errors = validate_queue(tree, new, tree["parent-queue-to-update"])
    assert ("capability.cpu", "capability_below_descendants") in codes(errors)
    assert errors[0].message == (
        "queue parent-queue-to-update: capability cpu 10 is smaller than its descendants' largest capability "
        "cpu 12 (queue child-queue-a)"
    )
    # the children's guarantee (8 + 5 = 13) and deserved (13) no longer fit either
    assert ("guarantee.cpu", "children_sum_exceeds_parent") in codes(errors)
    assert ("deserved.cpu", "children_sum_exceeds_parent") in codes(errors)


def test_children_guarantee_sum_above_parent_on_update() -> None:
    # Volcano test: Sum of children's guarantee exceeds parent guarantee on UPDATE (8 + 5 = 13 > 10)
    tree = _update_tree()
    new = q(
        "parent-queue-to-update",
        cap={"cpu": "20", "memory": "40Gi"},
        des={"cpu": "20", "memory": "40Gi"},
        gua={"cpu": "10", "memory": "20Gi"},
    )
    errors = validate_queue(tree, new, tree["parent-queue-to-update"])
    assert codes(errors) == [
        ("guarantee.cpu", "children_sum_exceeds_parent"),
        ("guarantee.memory", "children_sum_exceeds_parent"),
    ]
    assert errors[1].message == (
        "queue parent-queue-to-update: the sum of its children's guarantee memory 26Gi exceeds "
        "its guarantee memory 20Gi"
    )


def test_update_with_empty_parent_validates_children() -> None:
    # Volcano test: Update queue with empty parent - should validate child constraints (30 < 50)
    tree = tree_of(
        q("parent-queue-empty-parent", cap={"cpu": "100", "memory": "100Gi"}),
        q("child-of-empty-parent", "parent-queue-empty-parent", cap={"cpu": "50", "memory": "50Gi"}),
    )
    new = q("parent-queue-empty-parent", cap={"cpu": "30", "memory": "30Gi"})
    errors = validate_queue(tree, new, tree["parent-queue-empty-parent"])
    assert codes(errors) == [
        ("capability.cpu", "capability_below_descendants"),
        ("capability.memory", "capability_below_descendants"),
    ]
    assert "capability cpu 30 is smaller than its descendants' largest capability cpu 50" in errors[0].message


def _ancestor_tree() -> dict[str, QueueSpec]:
    # Volcano TestValidateChildAgainstAncestorForCapability
    return tree_of(
        q("ancestor-gp", cap={"cpu": "100", "memory": "100Gi", "nvidia.com/gpu": "8"}),
        q("ancestor-p", "ancestor-gp", cap={"cpu": "50", "memory": "50Gi"}),
        q("ancestor-p-nocap", "ancestor-gp"),
    )


@pytest.mark.parametrize(
    ("name", "parent", "cap", "expected"),
    [
        (
            "child-exceed-cpu",
            "ancestor-p",
            {"cpu": "60"},
            "capability cpu 60 exceeds the capability cpu 50 of its ancestor queue ancestor-p",
        ),
        (
            "child-exceed-mem",
            "ancestor-p",
            {"memory": "55Gi"},
            "capability memory 55Gi exceeds the capability memory 50Gi of its ancestor queue ancestor-p",
        ),
        (
            "child-exceed-gpu",
            "ancestor-p",
            {"nvidia.com/gpu": "10"},
            "capability nvidia.com/gpu 10 exceeds the capability nvidia.com/gpu 8 of its ancestor queue ancestor-gp",
        ),
        ("child-within-limits", "ancestor-p", {"cpu": "40", "memory": "40Gi", "nvidia.com/gpu": "4"}, None),
        ("child-no-cap", "ancestor-p", {}, None),
        (
            "child-under-nocap",
            "ancestor-p-nocap",
            {"cpu": "200"},
            "capability cpu 200 exceeds the capability cpu 100 of its ancestor queue ancestor-gp",
        ),
        ("child-under-nocap-ok", "ancestor-p-nocap", {"cpu": "80"}, None),
    ],
)
def test_capability_against_nearest_ancestor(name: str, parent: str, cap: dict[str, str], expected: str | None) -> None:
    errors = validate_queue(_ancestor_tree(), q(name, parent, cap=cap), None)
    if expected is None:
        assert errors == []
    else:
        assert codes(errors) == [(f"capability.{next(iter(cap))}", "capability_exceeds_ancestor")]
        assert errors[0].message == f"queue {name}: {expected}"


def _children_constraints_tree() -> dict[str, QueueSpec]:
    # Volcano TestValidateChildrenConstraintsForCapability
    return tree_of(
        q(
            "vc-parent-a",
            cap={"cpu": "20", "memory": "20Gi", "nvidia.com/gpu": "4"},
            gua={"cpu": "20", "memory": "20Gi"},
            des={"cpu": "20", "memory": "20Gi"},
        ),
        q("vc-child-a1", "vc-parent-a", cap={"memory": "15Gi"}),
        q("vc-grandchild-a1-1", "vc-child-a1", cap={"cpu": "25"}),
        q("vc-child-a2", "vc-parent-a", cap={"cpu": "10", "memory": "10Gi", "nvidia.com/gpu": "3"}),
        q(
            "vc-parent-b",
            cap={"cpu": "50", "memory": "50Gi"},
            gua={"cpu": "50", "memory": "50Gi"},
            des={"cpu": "50", "memory": "50Gi"},
        ),
        q("vc-child-b1", "vc-parent-b", cap={"cpu": "30"}),
        q("vc-child-b2", "vc-parent-b", cap={"cpu": "20"}),
        q("vc-parent-c"),
        q("vc-child-c1", "vc-parent-c", cap={"cpu": "100"}),
    )


def test_grandchild_capability_through_uncapped_child() -> None:
    # Volcano case "Grandchild CPU exceeds parent capability via subtree (child has no CPU cap)": 25 > 20.
    tree = _children_constraints_tree()
    parent = tree["vc-parent-a"]
    bumped = QueueSpec(
        parent.name, capability=parent.capability, deserved=parent.deserved, guarantee=parent.guarantee, weight=2
    )
    # a weight-only update does not re-run the hierarchy checks (Volcano's needsValidateHierarchicalQueue)...
    assert validate_queue(tree, bumped, parent) == []
    # ...a capability change does,
    new = QueueSpec(
        parent.name,
        capability=rl({"cpu": "21", "memory": "20Gi", "nvidia.com/gpu": "4"}),
        deserved=parent.deserved,
        guarantee=parent.guarantee,
    )
    errors = validate_queue(tree, new, parent)
    assert codes(errors) == [("capability.cpu", "capability_below_descendants")]
    assert "largest capability cpu 25 (queue vc-grandchild-a1-1)" in errors[0].message
    # ...and so does the whole-tree check, from both ends of the violation.
    tree_errors = validate_queue_tree(tree)
    assert [(e.field, e.code) for e in tree_errors] == [
        ("capability.cpu", "capability_exceeds_ancestor"),
        ("capability.cpu", "capability_below_descendants"),
    ]
    assert tree_errors[0].message == (
        "queue vc-grandchild-a1-1: capability cpu 25 exceeds the capability cpu 20 of its ancestor queue vc-parent-a"
    )


@pytest.mark.parametrize(
    ("parent", "child_cap", "ok"),
    [
        ("vc-parent-b", {"cpu": "30"}, True),  # All children within parent capability (30, 20 <= 50)
        ("vc-parent-c", {"cpu": "100"}, True),  # Parent without capability skips capability check
        ("vc-parent-a", {"nvidia.com/gpu": "3"}, True),  # Child GPU capability within parent GPU limit
        ("vc-parent-a", {"nvidia.com/gpu": "5"}, False),  # Child GPU capability exceeds parent GPU limit
    ],
)
def test_children_capability_cases(parent: str, child_cap: dict[str, str], ok: bool) -> None:
    tree = _children_constraints_tree()
    del tree["vc-grandchild-a1-1"]
    errors = validate_queue(tree, q("new-child", parent, cap=child_cap), None)
    assert (errors == []) is ok
    if not ok:
        assert codes(errors) == [("capability.nvidia.com/gpu", "capability_exceeds_ancestor")]


def test_setting_an_explicit_zero_capability_is_a_change() -> None:
    # Found by the property test below: ResourceList reads a missing name as 0, so {} == {"memory": 0}.
    tree = tree_of(q("a"), q("b", "a", cap={"memory": "1Gi"}))
    errors = validate_queue(tree, q("a", cap={"memory": "0"}), tree["a"])
    assert codes(errors) == [("capability.memory", "capability_below_descendants")]


def test_moved_subtree_is_checked_against_new_ancestors() -> None:
    tree = tree_of(q("small", cap={"cpu": "10"}), q("big"), q("mover", "big"), q("leaf", "mover", cap={"cpu": "50"}))
    errors = validate_queue(tree, q("mover", "small"), tree["mover"])
    assert codes(errors) == [("capability.cpu", "capability_exceeds_ancestor")]
    assert errors[0].message == (
        "queue mover: capability cpu 50 of its descendant queue leaf exceeds the capability cpu 10 of its ancestor "
        "queue small"
    )


def test_root_without_limits_is_unlimited() -> None:
    tree = tree_of(q("a", des={"cpu": "1000"}, gua={"cpu": "1000"}))
    assert validate_queue(tree, q("b", cap={"cpu": "5000"}, des={"cpu": "900"}, gua={"cpu": "900"}), None) == []


def test_root_limits_bind_where_root_sets_them() -> None:
    root = q(ROOT_QUEUE, None, cap={"cpu": "100"}, des={"cpu": "100"})
    tree = tree_of(q("a", des={"cpu": "60", "memory": "1Ti"}), root=root)
    errors = validate_queue(tree, q("b", cap={"cpu": "200"}, des={"cpu": "50", "memory": "1Ti"}), None)
    # cpu is bounded by root; memory is not set on root and stays unlimited
    assert codes(errors) == [
        ("capability.cpu", "capability_exceeds_ancestor"),
        ("deserved.cpu", "children_sum_exceeds_parent"),
    ]
    assert errors[1].message == "queue root: the sum of its children's deserved cpu 110 exceeds its deserved cpu 100"


def test_child_cannot_deserve_a_resource_its_parent_leaves_unset() -> None:
    tree = tree_of(q("p", des={"cpu": "4"}))
    assert codes(validate_queue(tree, q("c", "p", des={"nvidia.com/gpu": "1"}), None)) == [
        ("deserved.nvidia.com/gpu", "children_sum_exceeds_parent")
    ]
    assert validate_queue(tree, q("c", "p", des={"cpu": "4"}), None) == []


# --------------------------------------------------------------------------------------------------------
# Root and default protection, create/rename
# --------------------------------------------------------------------------------------------------------


def test_root_limits_are_immutable() -> None:
    root = q(ROOT_QUEUE, None)
    tree = tree_of(root=root)
    changed = q(ROOT_QUEUE, None, cap={"cpu": "100"})
    errors = validate_queue(tree, changed, root)
    assert codes(errors) == [("non_field_errors", "protected")]
    assert errors[0].message == "queue root: the root queue's capability, deserved and guarantee cannot be modified"
    assert validate_queue(tree, changed, root, protect_root=False) == []
    assert validate_queue(tree, q(ROOT_QUEUE, None, weight=3), root) == []  # other fields may change


@pytest.mark.parametrize("name", [ROOT_QUEUE, DEFAULT_QUEUE])
def test_root_and_default_cannot_be_renamed(name: str) -> None:
    tree = tree_of()
    new = QueueSpec("renamed", parent=tree[name].parent)
    errors = validate_queue(tree, new, tree[name])
    assert codes(errors) == [("name", "protected")]
    assert errors[0].message == f"the {name} queue cannot be renamed"


def test_create_existing_and_rename_onto_existing() -> None:
    tree = tree_of(q("a"), q("b"))
    assert codes(validate_queue(tree, q("a"), None)) == [("name", "exists")]
    errors = validate_queue(tree, q("b"), tree["a"])
    assert codes(errors) == [("name", "exists")]
    assert errors[0].message == "queue a cannot be renamed to b: that queue already exists"


def test_rename_carries_children() -> None:
    tree = tree_of(q("old", cap={"cpu": "10"}, des={"cpu": "4"}), q("kid", "old", cap={"cpu": "8"}, des={"cpu": "4"}))
    assert validate_queue(tree, q("new", cap={"cpu": "10"}, des={"cpu": "4"}), tree["old"]) == []
    errors = validate_queue(tree, q("new", cap={"cpu": "5"}, des={"cpu": "4"}), tree["old"])
    assert codes(errors) == [("capability.cpu", "capability_below_descendants")]


# --------------------------------------------------------------------------------------------------------
# State against the parent
# --------------------------------------------------------------------------------------------------------


def test_cannot_create_or_reopen_open_child_under_closed_parent() -> None:
    tree = tree_of(q("p", state="Closed"), q("c", "p", state="Closed"))
    errors = validate_queue(tree, q("new", "p"), None)
    assert codes(errors) == [("state", "parent_closed")]
    assert (
        errors[0].message == "queue new: cannot be Open while its parent queue p is Closed; open the parent queue first"
    )
    assert validate_queue(tree, q("new", "p", state="Closed"), None) == []
    assert codes(validate_queue(tree, q("c", "p", state="Open"), tree["c"])) == [("state", "parent_closed")]
    tree["p"] = q("p", state="Closing")
    assert codes(validate_queue(tree, q("c", "p", state="Open"), tree["c"])) == [("state", "parent_closed")]


# --------------------------------------------------------------------------------------------------------
# Delete (Volcano rule 9, seeds 002 and 004)
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [ROOT_QUEUE, DEFAULT_QUEUE])
def test_root_and_default_cannot_be_deleted(name: str) -> None:
    # Volcano test: Abnormal Case default Queue Can Not Be Deleted
    errors = validate_queue_delete(tree_of(), name, cascade=True, force=True)
    assert codes(errors) == [("non_field_errors", "protected")]
    assert errors[0].message == f"the {name} queue cannot be deleted"


def test_delete_unknown_queue() -> None:
    assert codes(validate_queue_delete(tree_of(), "ghost")) == [("name", "not_found")]


def test_delete_parent_needs_cascade() -> None:
    # Volcano test: Delete queue with child queue
    tree, facts = _jobs_tree()
    errors = validate_queue_delete(tree, "queue-with-child-queues", facts=facts)
    assert codes(errors) == [("non_field_errors", "has_children")]
    assert errors[0].message == (
        "queue queue-with-child-queues cannot be deleted because it has 1 child queue: child-queue; "
        "delete it first or delete with cascade"
    )
    assert validate_queue_delete(tree, "queue-with-child-queues", facts=facts, cascade=True) == []


def test_delete_without_children() -> None:
    # Volcano test: Delete queue without child queue
    tree, facts = _jobs_tree()
    assert validate_queue_delete(tree, "queue-without-child-queues", facts=facts) == []


def test_delete_queue_with_pods_needs_force() -> None:
    # Volcano test: Delete queue with allocated pods (allocated pods: 1)
    tree, facts = _jobs_tree()
    errors = validate_queue_delete(tree, "queue-with-jobs", facts=facts)
    assert codes(errors) == [("non_field_errors", "has_podgroups")]
    assert errors[0].message == (
        "queue queue-with-jobs still has 0 podgroups and 1 allocated pod; delete them first or delete with force "
        "(which deletes those podgroups and their pods)"
    )
    assert validate_queue_delete(tree, "queue-with-jobs", facts=facts, force=True) == []


def test_cascade_delete_with_busy_descendant_needs_force() -> None:
    tree, facts = _jobs_tree()
    errors = validate_queue_delete(tree, "parent-queue-has-child-with-jobs", facts=facts, cascade=True)
    messages = [e.message for e in errors]
    assert [e.code for e in errors] == ["has_podgroups", "has_podgroups"]
    assert (
        "queue parent-queue-has-child-with-jobs's descendant queue child-queue-a-with-jobs still has 1 podgroup "
        "and 1 allocated pod; delete them first or delete with force (which deletes those podgroups and their pods)"
    ) in messages
    assert validate_queue_delete(tree, "parent-queue-has-child-with-jobs", facts=facts, cascade=True, force=True) == []


def test_cascade_cannot_take_the_default_queue() -> None:
    tree = tree_of(q("p"))
    tree[DEFAULT_QUEUE] = q(DEFAULT_QUEUE, "p")
    assert codes(validate_queue_delete(tree, "p", cascade=True)) == [("non_field_errors", "protected")]


def test_plan_queue_delete_orders_deepest_first() -> None:
    tree = tree_of(q("p"), q("b", "p"), q("a", "p"), q("a1", "a"), q("b2", "b"), q("b1", "b"), q("a1x", "a1"))
    assert plan_queue_delete(tree, "p", cascade=True) == ["a1x", "a1", "b1", "b2", "a", "b", "p"]
    assert plan_queue_delete(tree, "p") == ["p"]
    assert plan_queue_delete(tree, "a1x", cascade=True) == ["a1x"]
    with pytest.raises(RuleViolation):
        plan_queue_delete(tree, "ghost", cascade=True)


# --------------------------------------------------------------------------------------------------------
# Open / close (volcano.md §7.1, seed 004)
# --------------------------------------------------------------------------------------------------------


def _state_tree() -> dict[str, QueueSpec]:
    return tree_of(q("p"), q("c1", "p"), q("c2", "p"), q("g1", "c1"), q("other"))


def test_close_leaf_without_podgroups_is_closed() -> None:
    assert plan_queue_action(_state_tree(), {}, {}, "other", "close") == {"other": ("Closed", False)}


def test_close_leaf_with_podgroups_is_closing() -> None:
    facts = {"other": QueueFacts(podgroups=2)}
    assert plan_queue_action(_state_tree(), {}, {}, "other", "close", facts) == {"other": ("Closing", False)}


def test_close_parent_closes_open_descendants_and_marks_them() -> None:
    facts = {"g1": QueueFacts(podgroups=1)}
    plan = plan_queue_action(_state_tree(), {"c2": "Closed"}, {}, "p", "close", facts)
    assert plan == {
        "p": ("Closed", False),
        "c1": ("Closed", True),
        "g1": ("Closing", True),
        # c2 was already Closed by an admin: untouched, not marked
    }


def test_open_parent_reopens_only_what_it_closed() -> None:
    states = {"p": "Closed", "c1": "Closed", "g1": "Closing", "c2": "Closed"}
    flags = {"c1": True, "g1": True, "c2": False}
    plan = plan_queue_action(_state_tree(), states, flags, "p", "open")
    assert plan == {"p": ("Open", False), "c1": ("Open", False), "g1": ("Open", False)}


def test_closed_by_parent_falls_back_to_facts() -> None:
    states = {"p": "Closed", "c1": "Closed", "c2": "Closed", "g1": "Closed"}
    facts = {"c1": QueueFacts(closed_by_parent=True)}
    plan = plan_queue_action(_state_tree(), states, {}, "p", "open", facts)
    assert plan == {"p": ("Open", False), "c1": ("Open", False)}


def test_explicit_close_clears_closed_by_parent() -> None:
    # Deliberate difference from Volcano: an admin's explicit close wins over the parent's mark.
    plan = plan_queue_action(_state_tree(), {"c1": "Closed", "p": "Open"}, {"c1": True}, "c1", "close")
    assert plan == {"c1": ("Closed", False), "g1": ("Closed", True)}


def test_child_cannot_open_under_closed_parent() -> None:
    states = {"p": "Closing", "c1": "Closed"}
    errors = validate_queue_action(_state_tree(), states, "c1", "open")
    assert codes(errors) == [("state", "parent_closed")]
    assert errors[0].message == (
        "queue c1 cannot be opened because its parent queue p is Closing; open the parent queue first"
    )
    with pytest.raises(RuleViolation):
        plan_queue_action(_state_tree(), states, {}, "c1", "open")


@pytest.mark.parametrize(
    ("name", "action", "expected"),
    [
        (ROOT_QUEUE, "close", ("state", "protected")),
        ("ghost", "close", ("name", "not_found")),
        ("p", "pause", ("action", "invalid_choice")),
    ],
)
def test_action_refusals(name: str, action: str, expected: tuple[str, str]) -> None:
    assert codes(validate_queue_action(_state_tree(), {}, name, action)) == [expected]
    with pytest.raises(RuleViolation):
        plan_queue_action(_state_tree(), {}, {}, name, action)


# Volcano's state machine (pkg/controllers/queue/state/*.go): current state x action -> next state.
@pytest.mark.parametrize(
    ("current", "podgroups", "action", "expected"),
    [
        ("Open", 0, "open", None),
        ("Open", 0, "close", "Closed"),
        ("Open", 3, "close", "Closing"),
        ("Closed", 0, "open", "Open"),
        ("Closed", 0, "close", None),
        ("Closed", 2, "close", None),  # closedState.CloseQueueAction: stays Closed whatever the podgroups
        ("Closing", 0, "open", "Open"),
        ("Closing", 0, "close", "Closed"),
        ("Closing", 1, "close", None),
        ("Unknown", 0, "open", "Open"),
        ("Unknown", 0, "close", "Closed"),
        ("Unknown", 4, "close", "Closing"),
    ],
)
def test_state_machine(current: str, podgroups: int, action: str, expected: str | None) -> None:
    tree = tree_of(q("leaf", state=current))
    plan = plan_queue_action(tree, {}, {}, "leaf", action, {"leaf": QueueFacts(podgroups=podgroups)})
    assert plan == ({} if expected is None else {"leaf": (expected, False)})


@pytest.mark.parametrize(
    ("state", "podgroups", "expected"),
    [
        ("Open", 0, "Open"),
        ("Open", 5, "Open"),
        ("", 0, "Open"),
        ("Closed", 0, "Closed"),
        ("Closing", 0, "Closed"),
        ("Closing", 1, "Closing"),
        ("Unknown", 0, "Unknown"),
    ],
)
def test_settle_queue_state(state: str, podgroups: int, expected: str) -> None:
    assert settle_queue_state(state, podgroups) == expected


# --------------------------------------------------------------------------------------------------------
# Whole-tree validation
# --------------------------------------------------------------------------------------------------------


def test_tree_reports_cycles_and_missing_parents() -> None:
    queues = tree_of(q("a", "b"), q("b", "a"), q("orphan", "gone"), q("under-orphan", "orphan"))
    errors = validate_queue_tree(queues)
    assert codes(errors) == [
        ("parent", "cycle"),
        ("parent", "cycle"),
        ("parent", "parent_not_found"),
        ("parent", "parent_not_found"),
    ]
    assert errors[2].message == "queue orphan: parent queue gone does not exist"
    assert errors[3].message == "queue under-orphan: ancestor queue gone (parent of orphan) does not exist"


def test_tree_reports_key_mismatch_bad_names_and_field_errors() -> None:
    queues = {"x": q("y"), "Big": q("Big"), "w": q("w", weight=0)}
    errors = validate_queue_tree(queues)
    assert ("name", "invalid") in codes(errors)
    assert ("name", "uppercase") in codes(errors)
    assert ("weight", "out_of_range") in codes(errors)


def test_tree_reports_a_shared_violation_once() -> None:
    queues = tree_of(q("p", des={"cpu": "4"}), q("a", "p", des={"cpu": "3"}), q("b", "p", des={"cpu": "3"}))
    errors = validate_queue_tree(queues)
    assert errors == [
        FieldError(
            "deserved.cpu",
            "queue p: the sum of its children's deserved cpu 6 exceeds its deserved cpu 4",
            "children_sum_exceeds_parent",
        )
    ]


def test_tree_of_volcano_fixture_shape_is_valid() -> None:
    assert validate_queue_tree(_update_tree()) == []
    assert validate_queue_tree(_ancestor_tree()) == []
    assert validate_queue_tree({}) == []


def test_tree_checks_podgroups_and_depth() -> None:
    queues = tree_of(q("l1"), q("l2", "l1"), q("l3", "l2"))
    assert codes(validate_queue_tree(queues, max_depth=2)) == [("parent", "depth")]
    assert codes(validate_queue_tree(queues, facts={"l2": QueueFacts(podgroups=1)})) == [("parent", "has_podgroups")]


# --------------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------------

_NAMES = ["a", "b", "c", "d", "e", "f"]
# The strategies the composites draw from, made once: a strategy built inside a composite is looked up again in
# Hypothesis's cache at every draw, which cost more than the values themselves. The same strategies, the same values.
_UP_TO_3 = st.integers(0, 3)
_UP_TO_4 = st.integers(0, 4)
_BOOLEANS = st.booleans()
_OPERATION_COUNTS = st.integers(1, 30)
_NAME = st.sampled_from(_NAMES)
_PARENT = st.sampled_from([ROOT_QUEUE, *_NAMES])


@st.composite
def _limits(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """capability >= deserved >= guarantee per resource by construction, each list sometimes leaving it unset."""
    cap: dict[str, int] = {}
    des: dict[str, int] = {}
    gua: dict[str, int] = {}
    for name in ("cpu", "memory"):
        g = draw(_UP_TO_3)
        d = g + draw(_UP_TO_3)
        c = d + draw(_UP_TO_4)
        if draw(_BOOLEANS):
            des[name] = d
            if draw(_BOOLEANS):
                gua[name] = g
        if draw(_BOOLEANS):
            cap[name] = c
    return cap, des, gua


_LIMITS = _limits()


@st.composite
def _operations(draw: st.DrawFn) -> list[tuple[str, str, dict[str, int], dict[str, int], dict[str, int]]]:
    ops = []
    for _ in range(draw(_OPERATION_COUNTS)):
        name = draw(_NAME)
        parent = draw(_PARENT)
        ops.append((name, parent, *draw(_LIMITS)))
    return ops


def _scaled(amounts: dict[str, int]) -> ResourceList:
    return ResourceList({n: a * (1000 if n == "cpu" else 2**30) for n, a in amounts.items()})


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_operations(), st.integers(2, 5))
def test_accepted_changes_always_leave_a_valid_tree(ops, max_depth: int) -> None:  # type: ignore[no-untyped-def]
    """Whatever sequence of creates, updates and moves validate_queue accepts, the whole tree stays valid."""
    tree: dict[str, QueueSpec] = tree_of()
    accepted = 0
    for name, parent, cap, des, gua in ops:
        spec = QueueSpec(name, parent=parent, capability=_scaled(cap), deserved=_scaled(des), guarantee=_scaled(gua))
        before = dict(tree)  # specs are frozen: checking the mapping is enough
        errors = validate_queue(tree, spec, tree.get(name), max_depth=max_depth)
        assert tree == before  # validators never mutate their inputs
        if not errors:
            tree[name] = spec
            accepted += 1
    assert validate_queue_tree(tree, max_depth=max_depth) == []


_FOREST_PARENTS = [st.sampled_from([ROOT_QUEUE, *_NAMES[:i]]) for i in range(len(_NAMES))]
_STATES = st.sampled_from(["Open", "Open", "Closed", "Unknown"])


@st.composite
def _forest(draw: st.DrawFn) -> dict[str, QueueSpec]:
    tree = tree_of()
    for i, name in enumerate(_NAMES):
        parent = draw(_FOREST_PARENTS[i])
        state = draw(_STATES)
        tree[name] = QueueSpec(name, parent=parent, state=state)
    return tree


@settings(max_examples=examples(150), deadline=None)
@given(_forest(), st.sampled_from(_NAMES), st.dictionaries(st.sampled_from(_NAMES), st.integers(0, 2)))
def test_close_leaves_no_open_queue_below(tree: dict[str, QueueSpec], name: str, pgs: dict[str, int]) -> None:
    facts = {n: QueueFacts(podgroups=c) for n, c in pgs.items()}
    states = {n: s.state for n, s in tree.items()}
    plan = plan_queue_action(tree, states, {}, name, "close", facts)
    after = {n: plan.get(n, (states[n], False))[0] for n in tree}
    below = [n for n, _ in _descendants(tree, name)]
    assert after[name] in ("Closed", "Closing")
    assert all(after[n] in ("Closed", "Closing") for n in below)
    # Closing only where podgroups remain
    assert all(after[n] != "Closing" or facts.get(n, QueueFacts()).podgroups > 0 for n in plan)


@settings(max_examples=examples(150), deadline=None)
@given(_forest(), st.sampled_from(_NAMES))
def test_close_then_open_restores_an_open_subtree(tree: dict[str, QueueSpec], name: str) -> None:
    subtree = [name, *(n for n, _ in _descendants(tree, name))]
    tree = {n: (QueueSpec(n, parent=s.parent) if n in subtree else s) for n, s in tree.items()}
    states = {n: s.state for n, s in tree.items()}
    flags: dict[str, bool] = {}
    closed = plan_queue_action(tree, states, flags, name, "close")
    states.update({n: v[0] for n, v in closed.items()})
    flags.update({n: v[1] for n, v in closed.items()})
    if any(states.get(a) in ("Closed", "Closing") for a in _ancestors(tree, name)):
        return  # opening is refused under a closed ancestor
    opened = plan_queue_action(tree, states, flags, name, "open")
    states.update({n: v[0] for n, v in opened.items()})
    flags.update({n: v[1] for n, v in opened.items()})
    assert all(states[n] == "Open" and not flags.get(n, False) for n in subtree)


@settings(max_examples=examples(100), deadline=None)
@given(_forest(), st.sampled_from(_NAMES))
def test_delete_plan_puts_children_before_parents(tree: dict[str, QueueSpec], name: str) -> None:
    order = plan_queue_delete(tree, name, cascade=True)
    assert set(order) == {name, *(n for n, _ in _descendants(tree, name))}
    assert order[-1] == name
    position = {n: i for i, n in enumerate(order)}
    for n in order[:-1]:
        parent = tree[n].parent
        assert parent is not None and position[n] < position[parent]


def _descendants(tree: Mapping[str, QueueSpec], name: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    frontier = [(name, 0)]
    while frontier:
        node, dist = frontier.pop()
        for child in sorted(n for n, s in tree.items() if s.parent == node):
            out.append((child, dist + 1))
            frontier.append((child, dist + 1))
    return out


def _ancestors(tree: Mapping[str, QueueSpec], name: str) -> list[str]:
    out = []
    parent = tree[name].parent
    while parent is not None and parent != ROOT_QUEUE:
        out.append(parent)
        parent = tree[parent].parent
    return out
