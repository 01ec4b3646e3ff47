"""Quota-group rules of ``engine.rules`` (Koordinator's elastic quota webhook, seed 001 "Configuration Limit").

Numbers and situations follow Koordinator's ``pkg/webhook/elasticquota/quota_topology_test.go``
("Koordinator test: <case>"): ``CPU(n)`` there is n cores, ``Mem(n)`` n bytes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import ResourceList
from engine.rules import (
    CODES,
    FieldError,
    GroupFacts,
    fill_quota_group_defaults,
    validate_pod_quota_group,
    validate_quota_group,
    validate_quota_group_delete,
    validate_quota_tree,
)
from tests.support.examples import examples


def res(cpu: int | None = None, mem: int | None = None, **other: str) -> ResourceList:
    """Koordinator's MakeResourceList().CPU(cpu).Mem(mem): cores and bytes."""
    data: dict[str, object] = dict(other)
    if cpu is not None:
        data["cpu"] = cpu
    if mem is not None:
        data["memory"] = mem
    return ResourceList.parse(data)


def g(
    name: str,
    parent: str | None = ROOT_GROUP,
    *,
    is_parent: bool = False,
    min: ResourceList | None = None,
    max: ResourceList | None = None,
    shared_weight: ResourceList | None = None,
    tree_id: str = "",
) -> QuotaGroupSpec:
    return QuotaGroupSpec(
        name,
        parent=parent,
        is_parent=is_parent,
        min=min or ResourceList(),
        max=max or ResourceList(),
        shared_weight=shared_weight,
        tree_id=tree_id,
    )


def builtins() -> dict[str, QuotaGroupSpec]:
    return {
        ROOT_GROUP: g(ROOT_GROUP, None, is_parent=True),
        SYSTEM_GROUP: g(SYSTEM_GROUP),
        DEFAULT_GROUP: g(DEFAULT_GROUP, max=res(cpu=100, mem=2**30)),
    }


def tree_of(*specs: QuotaGroupSpec) -> dict[str, QuotaGroupSpec]:
    out = builtins()
    out.update({s.name: s for s in specs})
    return out


def codes(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.field, e.code) for e in errors]


MAX = res(cpu=120, mem=1048576)


# --------------------------------------------------------------------------------------------------------
# Self checks (Koordinator validateQuotaSelfItem)
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected", "message"),
    [
        # Koordinator test: admit
        (g("temp", max=res(cpu=120, mem=1048576)), [], None),
        # Koordinator test: max < 0
        (
            g("temp", max=ResourceList({"cpu": -1000, "memory": 1048576})),
            [("max.cpu", "negative")],
            "quota group temp: max cpu -1 must be greater than or equal to 0",
        ),
        # Koordinator test: min < 0
        (
            g("temp", min=ResourceList({"cpu": -1000, "memory": 1048576}), max=res(cpu=1, mem=1048576)),
            [("min.cpu", "negative")],
            "quota group temp: min cpu -1 must be greater than or equal to 0",
        ),
        # Koordinator test: min dimension larger than max (memory in min, not in max)
        (
            g("temp", min=res(cpu=1, mem=1048576), max=res(cpu=10)),
            [("min.memory", "min_key_not_in_max")],
            "quota group temp: min sets memory 1Mi but max does not set memory; every resource in min must also "
            "be in max",
        ),
        # Koordinator test: min > max (12 > 10)
        (
            g("temp", min=res(cpu=12), max=res(cpu=10)),
            [("min.cpu", "min_exceeds_max")],
            "quota group temp: min cpu 12 must be <= max cpu 10",
        ),
        # Koordinator test: annotation sharedWeight < 0
        (
            g("temp", max=res(cpu=0, mem=1048576), shared_weight=ResourceList({"cpu": -1000, "memory": 1048576})),
            [("shared_weight.cpu", "negative")],
            "quota group temp: shared_weight cpu -1 must be greater than or equal to 0",
        ),
        (g("temp", min=res(cpu=10), max=res(cpu=10)), [], None),
        (g("temp", min=res(cpu=0), max=res(cpu=0)), [], None),
    ],
)
def test_self_checks(spec: QuotaGroupSpec, expected: list[tuple[str, str]], message: str | None) -> None:
    errors = validate_quota_group(tree_of(), spec, None)
    assert codes(errors) == expected
    if message is not None:
        assert errors[0].message == message


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("team-a.batch", None),
        ("Team-A", "uppercase"),
        ("équipe", "non_ascii"),
        ("a" * 254, "too_long"),
        ("team_a", "invalid"),
    ],
)
def test_group_names_are_dns_subdomains(name: str, code: str | None) -> None:
    errors = validate_quota_group(tree_of(), g(name), None)
    assert [e.code for e in errors] == ([] if code is None else [code])


def test_every_emitted_code_is_documented() -> None:
    emitted = validate_quota_tree(tree_of(g("p", min=res(cpu=1)), g("c", "p", min=res(cpu=2), max=res(cpu=1))))
    assert emitted
    assert {e.code for e in emitted} <= set(CODES)


# --------------------------------------------------------------------------------------------------------
# Mutating defaults (Koordinator fillQuotaDefaultInformation)
# --------------------------------------------------------------------------------------------------------


def test_fill_defaults_parent_and_shared_weight() -> None:
    # Koordinator test: parent quota without treeID
    temp2 = fill_quota_group_defaults(tree_of(), g("temp2", "", max=MAX))
    assert temp2.parent == ROOT_GROUP
    assert temp2.shared_weight == MAX and temp2.shared_weight is not None
    assert temp2.shared_weight.to_dict() == MAX.to_dict()
    assert temp2.tree_id == ""
    bu1 = fill_quota_group_defaults({"temp2": temp2}, g("temp2-bu1", "temp2", max=MAX))
    assert bu1.tree_id == ""


def test_fill_defaults_inherits_tree_id() -> None:
    # Koordinator test: parent quota with treeID
    tree = {"temp2": g("temp2", max=MAX, tree_id="tree-1", is_parent=True)}
    assert fill_quota_group_defaults(tree, g("temp2-bu1", "temp2", max=MAX)).tree_id == "tree-1"
    # an explicit tree_id is kept (validation then compares it with the parent's)
    assert fill_quota_group_defaults(tree, g("x", "temp2", tree_id="other")).tree_id == "other"
    # an unknown parent is left for validation to report
    assert fill_quota_group_defaults(tree, g("y", "ghost")).tree_id == ""


@pytest.mark.parametrize(
    ("given_weight", "max_", "expected"),
    [
        # Koordinator test: SharedWeight.keys == maxQuota.keys -> kept
        ({"cpu": 0, "memory": 0}, {"cpu": 120, "memory": 1048576}, {"cpu": 0, "memory": 0}),
        # Koordinator test: SharedWeight.keys > maxQuota.keys -> extra key dropped
        ({"cpu": 0, "memory": 0}, {"memory": 1048576}, {"memory": 0}),
        # Koordinator test: SharedWeight.keys < maxQuota.keys -> missing key copied from max
        ({"cpu": 0}, {"cpu": 120, "memory": 1048576}, {"cpu": 0, "memory": 1048576}),
        # Koordinator test: same length, different keys -> max's key with max's value
        ({"cpu": 0}, {"memory": 1048576}, {"memory": 1048576}),
    ],
)
def test_fill_defaults_normalises_shared_weight(
    given_weight: dict[str, int], max_: dict[str, int], expected: dict[str, int]
) -> None:
    spec = g(
        "temp2",
        max=ResourceList.parse(max_),
        shared_weight=ResourceList.parse(given_weight),
        tree_id="tree-1",
    )
    filled = fill_quota_group_defaults({}, spec)
    assert filled.shared_weight is not None
    expected_base = ResourceList.parse(expected).to_dict()
    assert filled.shared_weight.to_dict() == expected_base


def test_fill_defaults_leaves_root_and_input_alone() -> None:
    root = g(ROOT_GROUP, None, is_parent=True)
    assert fill_quota_group_defaults({}, root) is root
    spec = g("a", "", max=MAX)
    fill_quota_group_defaults({}, spec)
    assert spec.parent == "" and spec.shared_weight is None  # frozen input untouched


# --------------------------------------------------------------------------------------------------------
# Parent, keys, tree id, min sums
# --------------------------------------------------------------------------------------------------------


def test_parent_must_exist_and_be_a_parent() -> None:
    # Koordinator test: checkParentQuotaInfoExist
    tree = tree_of(g("temp", max=MAX, min=res(cpu=64, mem=51200), is_parent=False))
    errors = validate_quota_group(tree, g("sub", "temp"), None)
    assert codes(errors) == [("parent", "parent_not_parent")]
    assert errors[0].message == (
        "quota group sub: quota group temp is not a parent group (is_parent false) and cannot have child groups"
    )
    errors = validate_quota_group(tree, g("sub", "ghost"), None)
    assert codes(errors) == [("parent", "parent_not_found")]
    assert errors[0].message == "quota group sub: parent quota group ghost does not exist"
    # root is a parent by definition, even when absent from the mapping
    assert validate_quota_group({}, g("first"), None) == []


@pytest.mark.parametrize(
    ("parent_max", "child_max", "ok"),
    [
        # Koordinator checkSubAndParentGroupQuotaKey with ElasticQuotaEnableUpdateResourceKey on
        (res(cpu=10, mem=120), res(cpu=120), True),  # child's keys included in the parent's
        (res(mem=120), res(cpu=120), False),  # not included
        (res(cpu=10), res(cpu=120), True),  # same keys; max may exceed the parent's (seed 001)
        (ResourceList(), res(cpu=1), False),
    ],
)
def test_max_keys_within_parent(parent_max: ResourceList, child_max: ResourceList, ok: bool) -> None:
    tree = tree_of(g("temp", max=parent_max, is_parent=True))
    errors = validate_quota_group(tree, g("temp-bu1", "temp", max=child_max), None)
    assert codes(errors) == ([] if ok else [("max.cpu", "resource_keys")])
    if not ok:
        assert errors[0].message == (
            "quota group temp-bu1: max sets cpu but its parent quota group temp's max does not; "
            "add the resource to the parent first"
        )


def test_parent_max_keys_must_cover_children() -> None:
    tree = tree_of(g("temp", max=res(cpu=10, mem=120), is_parent=True), g("kid", "temp", max=res(cpu=1, mem=1)))
    errors = validate_quota_group(tree, g("temp", max=res(cpu=10), is_parent=True), tree["temp"])
    assert codes(errors) == [("max.memory", "resource_keys")]


_TEN = res(cpu=10, mem=20)


@pytest.mark.parametrize(
    ("parent_tree", "self_tree", "child_tree", "expected"),
    [
        ("", "", "", []),  # Koordinator test: satisfy no tree id
        ("tree-1", "tree-1", "tree-1", []),  # satisfy with tree id
        ("", "tree-1", "tree-1", [("tree_id", "tree_id")]),  # parent no tree id
        ("tree-1", "", "tree-1", [("tree_id", "tree_id"), ("tree_id", "tree_id")]),  # self no tree id
        ("tree-1", "tree-1", "", [("tree_id", "tree_id")]),  # child no tree id
    ],
)
def test_tree_id_matches_parent_and_children(
    parent_tree: str, self_tree: str, child_tree: str, expected: list[tuple[str, str]]
) -> None:
    tree = tree_of(
        g("parent", max=_TEN, min=_TEN, is_parent=True, tree_id=parent_tree),
        g("child", "temp", max=_TEN, min=_TEN, tree_id=child_tree),
    )
    errors = validate_quota_group(
        tree, g("temp", "parent", max=_TEN, min=_TEN, is_parent=True, tree_id=self_tree), None
    )
    assert codes(errors) == expected


def test_tree_id_messages_and_immutability() -> None:
    tree = tree_of(g("parent", is_parent=True, tree_id="tree-1"), g("sub-1"))
    errors = validate_quota_group(tree, g("x", "parent"), None)
    assert errors[0].message == "quota group x: tree_id '' differs from its parent parent's 'tree-1'"
    # Koordinator test (ValidUpdateQuota): add tree id, reject
    errors = validate_quota_group(tree, g("sub-1", tree_id="tree-1"), tree["sub-1"])
    assert codes(errors) == [("tree_id", "immutable")]
    assert errors[0].message == "quota group sub-1: tree_id cannot change (from '' to 'tree-1')"


def test_first_level_group_may_carry_a_tree_id() -> None:
    # Koordinator test (ValidAddQuota): temp2 with tree id under root
    assert (
        validate_quota_group(
            tree_of(), g("temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True, tree_id="tree-1"), None
        )
        == []
    )


def test_tree_root_needs_a_tree_id_and_skips_min_sums() -> None:
    errors = validate_quota_group(tree_of(), g("pool-a", None, is_parent=True), None)
    assert codes(errors) == [("tree_id", "tree_id")]
    assert errors[0].message == "quota group pool-a: a quota tree root (no parent) must have a tree_id"
    tree = tree_of(g("kid", "pool-a", min=res(cpu=50), max=res(cpu=50), tree_id="pool-a"))
    # Koordinator rule 8: a tree root's own min is not held against its children
    assert validate_quota_group(tree, g("pool-a", None, is_parent=True, tree_id="pool-a", max=res(cpu=100)), None) == []


# Koordinator TestQuotaTopology_checkMinQuotaSum
def test_min_sum_quota_info_not_satisfied() -> None:
    tree = tree_of(g("sub-1", "temp", max=MAX, min=res(cpu=16, mem=12800)))
    errors = validate_quota_group(tree, g("temp", max=MAX, min=res(cpu=10, mem=51200), is_parent=True), None)
    assert codes(errors) == [("min.cpu", "children_sum_exceeds_parent")]
    assert errors[0].message == "quota group temp: the sum of its children's min cpu 16 exceeds its min cpu 10"


def test_min_sum_parent_quota_info_not_satisfied() -> None:
    tree = tree_of(g("temp", max=MAX, min=res(cpu=10, mem=51200), is_parent=True))
    errors = validate_quota_group(tree, g("sub-1", "temp", max=MAX, min=res(cpu=16, mem=12800)), None)
    assert codes(errors) == [("min.cpu", "children_sum_exceeds_parent")]


def test_min_sum_child_quota_info_not_satisfied() -> None:
    tree = tree_of(g("sub-1", "temp", max=res(cpu=120, mem=12800), min=res(cpu=16, mem=12801)))
    errors = validate_quota_group(tree, g("temp", max=MAX, min=res(cpu=16, mem=12800), is_parent=False), None)
    assert codes(errors) == [("is_parent", "is_parent"), ("min.memory", "children_sum_exceeds_parent")]
    assert errors[1].message == (
        "quota group temp: the sum of its children's min memory 12801 exceeds its min memory 12800"
    )


def test_min_sum_satisfied() -> None:
    tree = tree_of(g("sub-1", "temp", max=MAX, min=res(cpu=16, mem=12800)))
    assert validate_quota_group(tree, g("temp", max=MAX, min=res(cpu=19, mem=51200), is_parent=True), None) == []


def test_min_sum_parent_without_resources() -> None:
    tree = tree_of(g("temp-no-min", is_parent=True))
    errors = validate_quota_group(tree, g("sub-1", "temp-no-min", max=MAX, min=res(cpu=19, mem=51200)), None)
    assert ("min.cpu", "children_sum_exceeds_parent") in codes(errors)
    assert ("min.memory", "children_sum_exceeds_parent") in codes(errors)
    assert errors[-1].message == (
        "quota group temp-no-min: the sum of its children's min memory 50Ki exceeds its min memory 0 "
        "(it does not set min memory)"
    )


def test_first_level_siblings_are_exempt_but_own_children_are_not() -> None:
    # Seed 001: "Except for the first level quota group, ... sum of min of all sub quota groups <= parent's min"
    tree = tree_of(g("a", max=res(cpu=1000), min=res(cpu=900)))
    assert validate_quota_group(tree, g("b", max=res(cpu=1000), min=res(cpu=900)), None) == []
    tree = tree_of(g("dept", is_parent=True, max=res(cpu=100), min=res(cpu=10)))
    errors = validate_quota_group(tree, g("team", "dept", max=res(cpu=100), min=res(cpu=11)), None)
    assert codes(errors) == [("min.cpu", "children_sum_exceeds_parent")]


def test_child_max_may_exceed_parent_max() -> None:
    # Seed 001: "The max of child quota group can be larger than the max of parent group."
    tree = tree_of(g("dev-parent", is_parent=True, max=res(cpu=10), min=res(cpu=10)))
    assert validate_quota_group(tree, g("dev-team", "dev-parent", max=res(cpu=50), min=res(cpu=5)), None) == []


# --------------------------------------------------------------------------------------------------------
# Koordinator's add / update sequences
# --------------------------------------------------------------------------------------------------------


def _apply(tree: dict[str, QuotaGroupSpec], spec: QuotaGroupSpec, *, fill: bool = True) -> list[FieldError]:
    if fill:
        spec = fill_quota_group_defaults(tree, spec)
    errors = validate_quota_group(tree, spec, tree.get(spec.name) if spec.name in tree else None)
    if not errors:
        tree[spec.name] = spec
    return errors


def test_valid_add_quota_sequence() -> None:
    # Koordinator test: TestQuotaTopology_ValidAddQuota
    tree = tree_of()
    temp = g("temp", "", max=MAX, min=res(cpu=64, mem=51200), is_parent=True)
    assert _apply(tree, temp) == []
    assert tree["temp"].parent == ROOT_GROUP and tree["temp"].shared_weight == MAX
    # add repeated quota
    filled = fill_quota_group_defaults(tree, temp)
    assert codes(validate_quota_group(tree, filled, None)) == [("name", "exists")]
    assert _apply(tree, g("sub-1", "temp", max=MAX, min=res(cpu=16, mem=12800))) == []
    assert _apply(tree, g("sub-2", "temp", max=MAX, min=res(cpu=16, mem=12800))) == []
    assert _apply(tree, g("temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True, tree_id="tree-1")) == []
    # child has no tree id (added without the mutating defaults)
    errors = _apply(tree, g("sub-3", "temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True), fill=False)
    assert codes(errors) == [("tree_id", "tree_id")]
    # with the defaults it inherits tree-1 and fits
    assert _apply(tree, g("sub-3", "temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True)) == []
    assert tree["sub-3"].tree_id == "tree-1"


def test_valid_update_quota_sequence() -> None:
    # Koordinator test: TestQuotaTopology_ValidUpdateQuota
    tree = tree_of()
    assert _apply(tree, g("temp", max=MAX, min=res(cpu=64, mem=51200), is_parent=True)) == []
    assert validate_quota_group(tree, tree["temp"], tree["temp"]) == []  # no-op update
    new_weight = QuotaGroupSpec(**{**tree["temp"].__dict__, "shared_weight": res(cpu=96, mem=655360)})
    assert validate_quota_group(tree, new_weight, tree["temp"]) == []
    assert _apply(tree, g("temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True)) == []
    assert _apply(tree, g("sub-1", "temp", max=MAX, min=res(cpu=60, mem=12800))) == []
    # move sub-1 to temp2
    old_sub1 = tree["sub-1"]
    moved = QuotaGroupSpec(**{**old_sub1.__dict__, "parent": "temp2"})
    assert validate_quota_group(tree, moved, old_sub1) == []
    tree["sub-1"] = moved
    # back to temp with min 121 cpu: over its own max and over temp's min
    back = QuotaGroupSpec(**{**moved.__dict__, "parent": "temp", "min": res(cpu=121, mem=1048576)})
    errors = validate_quota_group(tree, back, moved)
    assert ("min.cpu", "min_exceeds_max") in codes(errors)
    assert ("min.cpu", "children_sum_exceeds_parent") in codes(errors)
    # temp (no children any more) may become a leaf
    assert (
        validate_quota_group(tree, QuotaGroupSpec(**{**tree["temp"].__dict__, "is_parent": False}), tree["temp"]) == []
    )
    # temp2 has sub-1: cannot become a leaf
    errors = validate_quota_group(tree, QuotaGroupSpec(**{**tree["temp2"].__dict__, "is_parent": False}), tree["temp2"])
    assert codes(errors) == [("is_parent", "is_parent")]
    assert errors[0].message == "quota group temp2: is_parent cannot be set to false while it has 1 child group: sub-1"
    # sub-1 with a bound pod cannot become a parent
    facts = {"sub-1": GroupFacts(pods=1)}
    errors = validate_quota_group(tree, QuotaGroupSpec(**{**moved.__dict__, "is_parent": True}), moved, facts=facts)
    assert codes(errors) == [("is_parent", "is_parent")]
    assert errors[0].message == "quota group sub-1: is_parent cannot be set to true while 1 pod is bound to it"
    assert validate_quota_group(tree, QuotaGroupSpec(**{**moved.__dict__, "is_parent": True}), moved) == []


def test_reparenting_cycle_is_refused() -> None:
    # Koordinator has no cycle check: a and b with equal min and keys would pass there and loop the scheduler.
    tree = tree_of(
        g("a", is_parent=True, max=res(cpu=10), min=res(cpu=10)),
        g("b", "a", is_parent=True, max=res(cpu=10), min=res(cpu=10)),
        g("c", "b", max=res(cpu=10), min=res(cpu=10)),
    )
    errors = validate_quota_group(tree, QuotaGroupSpec(**{**tree["a"].__dict__, "parent": "c"}), tree["a"])
    assert ("parent", "cycle") in codes(errors)
    errors = validate_quota_group(tree, QuotaGroupSpec(**{**tree["a"].__dict__, "parent": "b"}), tree["a"])
    assert codes(errors) == [("parent", "cycle")]
    assert errors[0].message == (
        "quota group a: parent b makes the parent chain loop (a -> b -> a): a quota group cannot be placed under its "
        "own descendant"
    )
    assert codes(validate_quota_group(tree, QuotaGroupSpec(**{**tree["a"].__dict__, "parent": "a"}), tree["a"])) == [
        ("parent", "self_parent")
    ]


# --------------------------------------------------------------------------------------------------------
# Namespaces (Koordinator TestQuotaTopology_AnnotationNamespaces)
# --------------------------------------------------------------------------------------------------------


def test_namespace_belongs_to_one_group() -> None:
    tree = tree_of(g("temp"), g("temp5"))
    facts = {"temp": GroupFacts(namespaces=("test1", "test2"))}
    errors = validate_quota_group(tree, g("temp2"), None, facts={**facts, "temp2": GroupFacts(namespaces=("test1",))})
    assert codes(errors) == [("namespaces", "namespace_taken")]
    assert errors[0].message == "quota group temp2: namespace test1 is already bound to quota group temp"
    # temp itself may keep or change its own namespaces
    assert (
        validate_quota_group(
            tree, tree["temp"], tree["temp"], facts={"temp": GroupFacts(namespaces=("test2", "test3"))}
        )
        == []
    )
    errors = validate_quota_group(
        tree, tree["temp5"], tree["temp5"], facts={**facts, "temp5": GroupFacts(namespaces=("test2",))}
    )
    assert errors[0].message == "quota group temp5: namespace test2 is already bound to quota group temp"


def test_namespace_names_are_labels_and_unique() -> None:
    facts = {"a": GroupFacts(namespaces=("Team-A", "ok", "ok"))}
    errors = validate_quota_group(tree_of(), g("a"), None, facts=facts)
    assert codes(errors) == [("namespaces", "uppercase"), ("namespaces", "invalid")]
    assert errors[0].message == "namespace 'Team-A' must be lower case (for example 'team-a')"
    assert errors[1].message == "quota group a: namespace ok is listed twice"


# --------------------------------------------------------------------------------------------------------
# Built-ins
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [ROOT_GROUP, SYSTEM_GROUP])
def test_root_and_system_cannot_be_modified(name: str) -> None:
    tree = tree_of()
    old = tree[name]
    changed = QuotaGroupSpec(**{**old.__dict__, "max": res(cpu=1)})
    errors = validate_quota_group(tree, changed, old)
    assert codes(errors) == [("non_field_errors", "protected")]
    assert errors[0].message == f"the {name} quota group cannot be modified"
    assert validate_quota_group(tree, old, old) == []  # a no-op update passes, as in Koordinator


def test_explicit_zero_is_a_modification_of_system() -> None:
    tree = tree_of()
    changed = QuotaGroupSpec(**{**tree[SYSTEM_GROUP].__dict__, "max": ResourceList({"cpu": 0})})
    assert codes(validate_quota_group(tree, changed, tree[SYSTEM_GROUP])) == [("non_field_errors", "protected")]


def test_default_group_edits() -> None:
    tree = tree_of()
    old = tree[DEFAULT_GROUP]
    ok = QuotaGroupSpec(**{**old.__dict__, "min": res(cpu=10), "max": res(cpu=200, mem=2**31), "allow_lent": False})
    assert validate_quota_group(tree, ok, old) == []
    tree["dept"] = g("dept", is_parent=True, max=res(cpu=1000, mem=2**40), min=res(cpu=100))
    bad = QuotaGroupSpec(**{**old.__dict__, "parent": "dept", "is_parent": True, "tree_id": "t"})
    errors = validate_quota_group(tree, bad, old)
    assert [e.field for e in errors if e.code == "protected"] == [
        "parent",
        "is_parent",
        "tree_id",
        "parent",
        "is_parent",
    ]
    assert errors[0].message == (
        "quota group default: the default quota group's parent cannot be changed "
        "(only min, max, shared_weight, allow_lent, min_scale_exempt can)"
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (g(ROOT_GROUP, None, is_parent=True), []),
        (g(ROOT_GROUP, "x"), [("parent", "protected")]),
        (g(SYSTEM_GROUP), []),
        (g(SYSTEM_GROUP, is_parent=True), [("is_parent", "protected")]),
        (g(DEFAULT_GROUP, None), [("parent", "protected"), ("tree_id", "tree_id")]),
    ],
)
def test_creating_builtins_in_their_shape(spec: QuotaGroupSpec, expected: list[tuple[str, str]]) -> None:
    assert codes(validate_quota_group({}, spec, None)) == expected


@pytest.mark.parametrize("name", [ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP])
def test_builtins_cannot_be_renamed_or_deleted(name: str) -> None:
    tree = tree_of()
    renamed = QuotaGroupSpec(**{**tree[name].__dict__, "name": "other"})
    assert codes(validate_quota_group(tree, renamed, tree[name])) == [("name", "protected")]
    errors = validate_quota_group_delete(tree, name)
    assert codes(errors) == [("non_field_errors", "protected")]
    assert errors[0].message == f"the {name} quota group cannot be deleted"


def test_rename_onto_existing_and_rename_with_children() -> None:
    tree = tree_of(
        g("a", is_parent=True, max=res(cpu=10), min=res(cpu=5)), g("kid", "a", max=res(cpu=1), min=res(cpu=5))
    )
    assert codes(validate_quota_group(tree, QuotaGroupSpec(**{**tree["a"].__dict__, "name": "kid"}), tree["a"])) == [
        ("name", "exists")
    ]
    assert validate_quota_group(tree, QuotaGroupSpec(**{**tree["a"].__dict__, "name": "b"}), tree["a"]) == []
    lowered = QuotaGroupSpec(**{**tree["a"].__dict__, "name": "b", "min": res(cpu=4)})
    assert codes(validate_quota_group(tree, lowered, tree["a"])) == [("min.cpu", "children_sum_exceeds_parent")]


# --------------------------------------------------------------------------------------------------------
# Delete (Koordinator TestQuotaTopology_ValidDeleteQuota) and pods
# --------------------------------------------------------------------------------------------------------


def test_delete_sequence() -> None:
    tree = tree_of(
        g("temp", max=MAX, min=res(cpu=64, mem=51200), is_parent=True),
        g("temp2", max=MAX, min=res(cpu=64, mem=51200), is_parent=True),
        g("sub-1", "temp", max=MAX, min=res(cpu=60, mem=12800)),
    )
    errors = validate_quota_group_delete(tree, "temp")
    assert codes(errors) == [("non_field_errors", "has_children")]
    assert errors[0].message == "quota group temp cannot be deleted because it has 1 child group: sub-1"
    assert validate_quota_group_delete(tree, "temp2") == []
    errors = validate_quota_group_delete(tree, "sub-1", facts={"sub-1": GroupFacts(pods=1)})
    assert codes(errors) == [("non_field_errors", "has_pods")]
    assert errors[0].message == "quota group sub-1 cannot be deleted because 1 pod is still bound to it"
    assert validate_quota_group_delete(tree, "sub-1") == []
    assert codes(validate_quota_group_delete(tree, "notFound")) == [("name", "not_found")]


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("sub-1", []),
        ("temp", [("quota_group", "parent_group")]),  # Koordinator TestQuotaTopology_AddPod_UpdatePod
        (ROOT_GROUP, [("quota_group", "parent_group")]),
        ("", []),
        (DEFAULT_GROUP, []),
        (SYSTEM_GROUP, []),
        ("ghost", [("quota_group", "not_found")]),
    ],
)
def test_pod_quota_group(group: str, expected: list[tuple[str, str]]) -> None:
    tree = tree_of(g("temp", max=MAX, min=res(cpu=64, mem=51200), is_parent=True), g("sub-1", "temp", max=MAX))
    errors = validate_pod_quota_group(tree, group)
    assert codes(errors) == expected
    if group == "temp":
        assert errors[0].message == (
            "pods cannot be bound to quota group temp because it is a parent group; use one of its leaf groups"
        )


# --------------------------------------------------------------------------------------------------------
# Whole tree
# --------------------------------------------------------------------------------------------------------


def test_quota_tree_reports_cycles_missing_parents_and_shared_violations_once() -> None:
    groups = tree_of(
        g("a", "b", is_parent=True),
        g("b", "a", is_parent=True),
        g("orphan", "gone"),
        g("p", is_parent=True, max=res(cpu=10), min=res(cpu=4)),
        g("p1", "p", max=res(cpu=10), min=res(cpu=3)),
        g("p2", "p", max=res(cpu=10), min=res(cpu=3)),
    )
    errors = validate_quota_tree(groups)
    assert codes(errors) == [
        ("parent", "cycle"),
        ("parent", "cycle"),
        ("parent", "parent_not_found"),
        ("min.cpu", "children_sum_exceeds_parent"),
    ]


def test_quota_tree_checks_namespaces_and_names() -> None:
    groups = {**tree_of(g("a"), g("b")), "x": g("y")}
    facts = {"a": GroupFacts(namespaces=("ns",)), "b": GroupFacts(namespaces=("ns",))}
    errors = validate_quota_tree(groups, facts=facts)
    assert ("name", "invalid") in codes(errors)
    assert [e.message for e in errors if e.code == "namespace_taken"] == [
        "quota group a: namespace ns is already bound to quota group b",
        "quota group b: namespace ns is already bound to quota group a",
    ]


def test_quota_tree_of_builtins_is_valid() -> None:
    assert validate_quota_tree(builtins()) == []
    assert validate_quota_tree({}) == []


# --------------------------------------------------------------------------------------------------------
# Property: whatever the validator accepts step by step, the whole tree accepts
# --------------------------------------------------------------------------------------------------------

_NAMES = ["a", "b", "c", "d", "e"]
# The strategies the composite draws from, made once: one built inside the composite is looked up again in
# Hypothesis's cache, or built and checked again, at every draw. The same strategies, so the same values are drawn.
_OPS = st.integers(1, 30)
_NAME = st.sampled_from(_NAMES)
_PARENT = st.sampled_from([ROOT_GROUP, *_NAMES])
_BOOLEANS = st.booleans()
_TOP = st.integers(0, 6)
_MINS = [st.integers(0, top) for top in range(7)]  # the min of a resource is at most its max (0-6)


@st.composite
def _group_ops(draw: st.DrawFn) -> list[QuotaGroupSpec]:
    ops = []
    for _ in range(draw(_OPS)):
        name = draw(_NAME)
        parent = draw(_PARENT)
        mx: dict[str, int] = {}
        mn: dict[str, int] = {}
        for resource in ("cpu", "memory"):
            if draw(_BOOLEANS):
                top = draw(_TOP)
                mx[resource] = top
                if draw(_BOOLEANS):
                    mn[resource] = draw(_MINS[top])
        ops.append(
            QuotaGroupSpec(
                name,
                parent=parent,
                is_parent=draw(_BOOLEANS),
                min=ResourceList({k: v * 1000 for k, v in mn.items()}),
                max=ResourceList({k: v * 1000 for k, v in mx.items()}),
            )
        )
    return ops


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_group_ops())
def test_accepted_changes_always_leave_a_valid_quota_tree(ops: list[QuotaGroupSpec]) -> None:
    tree = builtins()
    for spec in ops:
        spec = fill_quota_group_defaults(tree, spec)
        before = dict(tree)  # specs are frozen: checking the mapping is enough
        errors = validate_quota_group(tree, spec, tree.get(spec.name))
        assert tree == before
        if not errors:
            tree[spec.name] = spec
    assert validate_quota_tree(tree) == []
