"""Seed 001 (multi-hierarchy elastic quota): the design document's examples, end to end through the engine.

The document counts in whole units ("the cluster total resource is 100"). Shares are rounded per base unit, so
the examples are run with amounts of 100 base units (100 millicores of cpu here, as Koordinator's own test of
this example does); with 100 whole cores the same rules give millicore-precise shares (see the last test).
"""

from __future__ import annotations

import pytest

from engine.fairshare.elastic import ElasticQuotaTree, compute_runtimes, fits_runtime
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import ResourceList


def cpu(v: int) -> ResourceList:
    return ResourceList({"cpu": v})


# "Calculate RuntimeQuota": min, max and request of A/B/C/D, cluster total 100
MINS = {"A": 10, "B": 15, "C": 20, "D": 15}
MAXES = {"A": 40, "B": 60, "C": 50, "D": 80}
REQUESTS = {"A": 5, "B": 20, "C": 40, "D": 70}
RUNTIMES = {"A": 5, "B": 20, "C": 35, "D": 40}


@pytest.mark.parametrize(
    "weights",
    [
        None,  # the default shared-weight: max (B/C/D 60/50/80 - the same numbers as the narrative)
        {"A": 40, "B": 60, "C": 50, "D": 80},  # the narrative's weights given explicitly
        {"A": 4, "B": 6, "C": 5, "D": 8},  # only the proportions matter
    ],
)
def test_calculate_runtime_quota(weights: dict[str, int] | None) -> None:
    groups = [
        QuotaGroupSpec(n, min=cpu(MINS[n]), max=cpu(MAXES[n]), shared_weight=cpu(weights[n]) if weights else None)
        for n in "ABCD"
    ]
    result = compute_runtimes(groups, {n: cpu(r) for n, r in REQUESTS.items()}, cpu(100))
    assert {n: result[n].runtime["cpu"] for n in "ABCD"} == RUNTIMES
    # "the min part of runtime": A's request is below its min (it lends 5), B/C/D start at their mins
    assert {n: result.explain(n)["resources"]["cpu"]["floor"] for n in "ABCD"} == MINS
    assert result.explain("A")["resources"]["cpu"]["state"] == "lends"
    # "45 for B/C/D to share": 14 / 12 / 19; B needs only 5, so 9 goes round again: C 3, D 6
    first = {n: result.explain(n)["resources"]["cpu"]["rounds"][0] for n in "BCD"}
    assert {n: r["pool"] for n, r in first.items()} == dict.fromkeys("BCD", 45)
    assert {n: r["share"] for n, r in first.items()} == {"B": 14, "C": 12, "D": 19}
    second = {n: result.explain(n)["resources"]["cpu"]["rounds"][1] for n in "CD"}
    assert {n: (r["pool"], r["share"]) for n, r in second.items()} == {"C": (9, 3), "D": (9, 6)}
    assert result.unassigned(ROOT_GROUP)["cpu"] == 0


def test_hierarchy_example() -> None:
    """'Hierarchy' (koordinator.md K25): requests go up as min(request, max), runtimes come down."""
    groups = [
        QuotaGroupSpec("ParentA", is_parent=True, min=cpu(20), max=cpu(100)),
        QuotaGroupSpec("ParentB", is_parent=True, min=cpu(80), max=cpu(100)),
        QuotaGroupSpec("A-1", parent="ParentA", min=cpu(10), max=cpu(10)),
        QuotaGroupSpec("A-2", parent="ParentA", min=cpu(10), max=cpu(10)),
        QuotaGroupSpec("B-1", parent="ParentB", min=cpu(20), max=cpu(40)),
        QuotaGroupSpec("B-2", parent="ParentB", min=cpu(40), max=cpu(70)),
    ]
    requests = {n: cpu(100) for n in ("A-1", "A-2", "B-1", "B-2")}
    result = compute_runtimes(groups, requests, cpu(100))
    assert result["ParentA"].request == cpu(20)
    assert result["ParentB"].request == cpu(110)  # 40 + 70: what its children may use
    assert result["ParentB"].limited_request == cpu(100)  # what it passes upward
    runtimes = {n: result[n].runtime["cpu"] for n in ("ParentA", "ParentB", "A-1", "A-2", "B-1", "B-2")}
    assert runtimes == {"ParentA": 20, "ParentB": 80, "A-1": 10, "A-2": 10, "B-1": 27, "B-2": 53}


def test_min_guarantee_and_preemption() -> None:
    """'Min Guarantee and Preemption': A borrows everything at t0, B submits at t1 and both get 50."""
    groups = [QuotaGroupSpec("A", min=cpu(50), max=cpu(100)), QuotaGroupSpec("B", min=cpu(50), max=cpu(100))]
    tree = ElasticQuotaTree(groups, cpu(100), requests={"A": cpu(100)}, used={"A": cpu(100)})
    t0 = tree.result()
    assert (t0["A"].runtime, t0["B"].runtime) == (cpu(100), cpu(0))
    tree.set_request("B", cpu(100))
    t1 = tree.result()
    assert (t1["A"].runtime, t1["B"].runtime) == (cpu(50), cpu(50))
    # A still uses 100 > its runtime 50: the recycler's trigger; it borrowed 50 and B lent it
    assert t1["A"].used["cpu"] > t1["A"].runtime["cpu"]
    assert (t1["A"].borrowed, t1["B"].lent) == (cpu(50), cpu(50))
    # PreFilter: B's pod fits its runtime, A's does not
    assert fits_runtime(t1["B"], t1["B"].used, cpu(50))
    assert not fits_runtime(t1["A"], t1["A"].used, cpu(1))
    # t0 is a snapshot: it still says what was true then
    assert t0["A"].runtime == cpu(100)


def test_min_is_scaled_when_the_cluster_shrinks() -> None:
    """'...if the cluster resources suddenly decrease due to node failure, the sum of min may be greater...'"""
    groups = [QuotaGroupSpec(n, min=cpu(MINS[n]), max=cpu(MAXES[n])) for n in "ABCD"]
    requests = {n: cpu(MAXES[n]) for n in "ABCD"}
    tree = ElasticQuotaTree(groups, cpu(100), requests=requests)
    assert {n: tree.result()[n].auto_scaled_min["cpu"] for n in "ABCD"} == MINS
    tree.set_total(cpu(30))  # sum of mins 60 > 30: each min scaled by 30/60, rounded down
    result = tree.result()
    scaled = {n: result[n].auto_scaled_min["cpu"] for n in "ABCD"}
    assert scaled == {"A": 5, "B": 7, "C": 10, "D": 7}
    assert sum(result[n].runtime["cpu"] for n in "ABCD") == 30
    assert all(result[n].runtime["cpu"] >= scaled[n] for n in "ABCD")
    tree.set_total(cpu(100))  # nodes come back: the original mins return
    assert {n: tree.result()[n].auto_scaled_min["cpu"] for n in "ABCD"} == MINS
    off = compute_runtimes(groups, requests, cpu(30), enable_min_scale=False)
    assert {n: off[n].runtime["cpu"] for n in "ABCD"} == MINS  # without scaling the mins overcommit the 30


def test_sys_group_and_default_group() -> None:
    """The sys-group's used comes off the total and its min is never scaled; unmatched pods use default-group."""
    unlimited = (2**63 - 1) // 5
    groups = [
        QuotaGroupSpec(SYSTEM_GROUP, min=cpu(unlimited), max=cpu(unlimited)),
        QuotaGroupSpec(DEFAULT_GROUP, min=cpu(0), max=cpu(10)),
        QuotaGroupSpec("team", min=cpu(60), max=cpu(100)),
    ]
    result = compute_runtimes(groups, {"team": cpu(100)}, cpu(100), used={SYSTEM_GROUP: cpu(20), DEFAULT_GROUP: cpu(5)})
    assert result.tree_total() == cpu(75)
    assert result["team"].runtime == cpu(75)
    assert result[SYSTEM_GROUP].auto_scaled_min == cpu(unlimited)
    assert result[SYSTEM_GROUP].runtime == cpu(unlimited)
    assert result[DEFAULT_GROUP].runtime == cpu(10)


def test_child_max_may_exceed_parent_max() -> None:
    """'Configuration Limit': limiting dev-parent's max limits all its children at once."""
    groups = [
        QuotaGroupSpec("dev-parent", is_parent=True, min=cpu(20), max=cpu(100)),
        QuotaGroupSpec("production-parent", is_parent=True, min=cpu(80), max=cpu(100)),
        QuotaGroupSpec("dev-1", parent="dev-parent", min=cpu(10), max=cpu(100)),
        QuotaGroupSpec("dev-2", parent="dev-parent", min=cpu(10), max=cpu(100)),
        QuotaGroupSpec("prod-1", parent="production-parent", min=cpu(80), max=cpu(100)),
    ]
    tree = ElasticQuotaTree(groups, cpu(100), requests={"dev-1": cpu(100), "dev-2": cpu(100), "prod-1": cpu(50)})
    result = tree.result()
    assert (result["dev-parent"].runtime, result["production-parent"].runtime) == (cpu(50), cpu(50))
    tree.update_group(QuotaGroupSpec("dev-parent", is_parent=True, min=cpu(20), max=cpu(30)))
    result = tree.result()
    assert result["dev-parent"].runtime == cpu(30)
    assert (result["dev-1"].runtime, result["dev-2"].runtime) == (cpu(15), cpu(15))
    assert result.unassigned(ROOT_GROUP) == cpu(20)  # production asks only 50: the rest stays unassigned


def test_whole_cores_round_per_millicore() -> None:
    groups = [QuotaGroupSpec(n, min=cpu(MINS[n] * 1000), max=cpu(MAXES[n] * 1000)) for n in "ABCD"]
    result = compute_runtimes(groups, {n: cpu(r * 1000) for n, r in REQUESTS.items()}, cpu(100_000))
    assert {n: result[n].runtime.describe("cpu") for n in "ABCD"} == {
        "A": "5",
        "B": "20",
        "C": "35385m",
        "D": "39615m",
    }
