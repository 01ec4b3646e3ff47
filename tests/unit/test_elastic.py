"""Unit tests of the elastic-quota engine with Koordinator's test numbers.

Koordinator cases are named after their Go test (``pkg/scheduler/plugins/elasticquota/core``:
``runtime_quota_calculator_test.go`` = RQC, ``group_quota_manager_test.go`` = GQM,
``scale_minquota_when_over_root_res_test.go`` = SMQ) and, where koordinator.md names them, its K-id. Koordinator
counts cpu in cores in its tests; here cpu is in millicores (x1000) and memory in bytes.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.fairshare import _elastic_kernel as kern
from engine.fairshare import elastic_sets as ref
from engine.fairshare.elastic import (
    ElasticQuotaTree,
    GroupQuota,
    check_ancestors,
    compute_runtimes,
    fits_ancestors,
    fits_non_preemptible,
    fits_runtime,
    runtime_excess,
)
from engine.objects import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.resources import MAX_AMOUNT, ResourceList
from tests.support.elastic_reference import reference_quotas

GI = 2**30
GPU = "nvidia.com/gpu"


def res(cpu: float | None = None, mem: int | None = None, gpu: int | None = None) -> ResourceList:
    """Koordinator's createResourceList: cpu in cores (stored as millicores), memory in bytes."""
    out: dict[str, int] = {}
    if cpu is not None:
        out["cpu"] = round(cpu * 1000)
    if mem is not None:
        out["memory"] = mem
    if gpu is not None:
        out[GPU] = gpu
    return ResourceList(out)


def group(
    name: str, parent: str | None, mx: ResourceList, mn: ResourceList, lend: bool = True, **kw: object
) -> QuotaGroupSpec:
    """Koordinator's AddQuotaToManager/CreateQuota: shared weight = max."""
    return QuotaGroupSpec(name=name, parent=parent, max=mx, min=mn, allow_lent=lend, **kw)  # type: ignore[arg-type]


def runtimes(result: object, names: str) -> dict[str, ResourceList]:
    return {n: result[n].runtime for n in names.split()}  # type: ignore[index]


# -- one sibling set (RQC) ---------------------------------------------------------------------------------------

DOC_MIN = (10, 15, 20, 15)
DOC_MAX = (40, 60, 50, 80)
DOC_REQ = (5, 20, 40, 70)


@pytest.mark.parametrize(
    ("case", "weights", "expected"),
    [
        # K01, RQC case1-no-guarantee: the design document's example, weights = max (40/60/50/80)
        ("K01 weights=max", (40, 60, 50, 80), (5, 20, 35, 40)),
        # K02, RQC case2-node4.sharedWeight=0: D stays at its floor, C gets what D would have had
        ("K02 D weight 0", (40, 60, 50, 0), (5, 20, 40, 15)),
        # all weights 0: the pool (45) stays unassigned
        ("all weights 0", (0, 0, 0, 0), (5, 15, 20, 15)),
    ],
)
def test_calculator_sibling_set(case: str, weights: tuple[int, ...], expected: tuple[int, ...]) -> None:
    got = ref.waterfill(100, DOC_MIN, DOC_REQ, weights, [True] * 4)
    assert tuple(got) == expected, case

    def cpu(v: int) -> ResourceList:  # base units, as Koordinator's test (100 millicores): rounding is per unit
        return ResourceList({"cpu": v})

    groups = [
        QuotaGroupSpec(n, min=cpu(mi), max=cpu(ma), shared_weight=cpu(w) if w != ma else None)
        for n, mi, ma, w in zip("ABCD", DOC_MIN, DOC_MAX, weights, strict=True)
    ]
    # weight 0 via an explicit all-zero shared_weight (kept as 0 here; see the module doc)
    result = compute_runtimes(groups, {n: cpu(r) for n, r in zip("ABCD", DOC_REQ, strict=True)}, cpu(100))
    assert tuple(result[n].runtime["cpu"] for n in "ABCD") == expected


def test_k01_in_whole_cores_rounds_per_millicore() -> None:
    """The same example with 100 cores: shares are rounded per millicore, so C/D get 35.385/39.615 cores."""
    groups = [QuotaGroupSpec(n, min=res(mi), max=res(ma)) for n, mi, ma in zip("ABCD", DOC_MIN, DOC_MAX, strict=True)]
    result = compute_runtimes(groups, {n: res(r) for n, r in zip("ABCD", DOC_REQ, strict=True)}, res(100))
    assert tuple(result[n].runtime["cpu"] for n in "ABCD") == (5000, 20000, 35385, 39615)


def test_k04_integer_distribution_of_gpus() -> None:
    """RQC IntegerDistribution: 3 GPUs lent by a donor go to 10 equal borrowers; nothing is lost (PR #2876)."""
    names = ["donor"] + [f"borrower-{i:02d}" for i in range(10)]
    mins = [3, 8, 8, 8, 8, 8, 8, 8, 8, 7, 7]
    reqs = [0] + [100] * 10
    got = ref.waterfill(81, mins, reqs, [1] * 11, [True] * 11)
    assert sum(got) == 81
    assert got[0] == 0
    # pool 3 split 0.3 each: the +1s go to the three names that sort first
    assert got[1:] == [9, 9, 9, 8, 8, 8, 8, 8, 7, 7]
    # in base units (milli-GPUs): Koordinator's calculator reads GPUs with Value(), so the split is in whole GPUs
    groups = [
        QuotaGroupSpec(
            n,
            min=ResourceList({GPU: m * 1000}),
            max=ResourceList({GPU: 100_000}),
            shared_weight=ResourceList({GPU: 1000}),
        )
        for n, m in zip(names, mins, strict=True)
    ]
    requests = {n: ResourceList({GPU: r * 1000}) for n, r in zip(names, reqs, strict=True)}
    result = compute_runtimes(groups, requests, ResourceList({GPU: 81_000}))
    assert [result[n].runtime[GPU] for n in names] == [g * 1000 for g in got]


def test_hamilton_tie_break_is_name_order() -> None:
    """K15-style tie: equal remainders, the +1 goes to the names that sort first, whatever the input order."""
    groups = [QuotaGroupSpec(n, min=res(0), max=res(10)) for n in ("c", "a", "b")]
    result = compute_runtimes(groups, {n: res(10) for n in "abc"}, ResourceList({"cpu": 2}))
    assert [result[n].runtime["cpu"] for n in "abc"] == [1, 1, 0]
    assert ref.hamilton(2, [5, 5, 5]) == [1, 1, 0]
    assert ref.hamilton(7, [1, 2, 4]) == [1, 2, 4]
    assert ref.hamilton(10, [1, 0, 1]) == [5, 0, 5]


def test_rqc_update_one_group_runtime_quota() -> None:
    """RQC UpdateOneGroupRuntimeQuota / DeleteOneGroup: total 100, test1 min 60 max 80, test2 min 50 max 100."""
    specs = [
        group("test1", ROOT_GROUP, res(80, 800), res(60, 600), shared_weight=res(1, 1)),
        group("test2", ROOT_GROUP, res(100, 1000), res(50, 500), shared_weight=res(1, 1)),
    ]
    # Koordinator's calculator test sets autoScaleMin = min directly: no scaling (sum of mins 110 > 100)
    tree = ElasticQuotaTree(specs, res(100, 1000), enable_min_scale=False, requests={"test2": res(90, 900)})
    assert runtimes(tree.result(), "test1 test2") == {"test1": res(0, 0), "test2": res(90, 900)}
    tree.set_request("test1", res(30, 300))
    assert runtimes(tree.result(), "test1 test2") == {"test1": res(30, 300), "test2": res(70, 700)}
    tree.set_request("test1", res(60, 600))
    assert runtimes(tree.result(), "test1 test2") == {"test1": res(60, 600), "test2": res(50, 500)}
    tree.remove_group("test1")
    assert tree.result()["test2"].runtime == res(90, 900)


def test_rqc_update_one_group_runtime_quota_2() -> None:
    """RQC UpdateOneGroupRuntimeQuota2: a lone borrower is capped by max (80); a second one halves the rest."""
    t1 = group("test1", ROOT_GROUP, res(80, 800), res(50, 500), shared_weight=res(1, 1))
    tree = ElasticQuotaTree([t1], res(120, 1200), requests={"test1": res(100, 1000)})
    assert tree.result()["test1"].runtime == res(80, 800)
    tree.update_group(group("test2", ROOT_GROUP, res(100, 1000), res(50, 500), shared_weight=res(1, 1)))
    tree.set_request("test2", res(150, 1500))
    assert runtimes(tree.result(), "test1 test2") == {"test1": res(60, 600), "test2": res(60, 600)}


# -- trees (GQM) -------------------------------------------------------------------------------------------------


def test_gqm_update_quota_request() -> None:
    """GQM UpdateQuotaDeltaRequest / UpdateQuotaRequest: 96 cpu, 160Gi; mins 50/40 cpu, 80/80Gi."""
    specs = [
        group("test1", ROOT_GROUP, res(96, 160 * GI), res(50, 80 * GI)),
        group("test2", ROOT_GROUP, res(96, 160 * GI), res(40, 80 * GI)),
    ]
    tree = ElasticQuotaTree(specs, res(96, 160 * GI))
    tree.set_request("test1", res(60, 100 * GI))
    assert tree.result()["test1"].runtime == res(60, 100 * GI)
    tree.set_request("test1", res(120, 200 * GI))
    assert tree.result()["test1"].runtime == res(96, 160 * GI)
    tree.set_request("test2", res(150, 210 * GI))
    assert runtimes(tree.result(), "test1 test2") == {"test1": res(53, 80 * GI), "test2": res(43, 80 * GI)}


@pytest.mark.parametrize("scale", [False, True])
def test_k08_not_allow_lent(scale: bool) -> None:
    """K08, GQM NotAllowLentResource: test2 (min 40) does not lend, so test1 gets 60 of 100, not 100."""
    specs = [
        group("test1", ROOT_GROUP, res(96, 0), res(60, 0)),
        group("test2", ROOT_GROUP, res(96, 0), res(40, 0), lend=False),
    ]
    result = compute_runtimes(specs, {"test1": res(120, 0)}, res(100, 0), enable_min_scale=scale)
    assert result["test1"].runtime["cpu"] == 60_000
    assert result["test2"].runtime["cpu"] == 40_000
    assert result["test2"].request["cpu"] == 40_000  # its request is raised to its min


# K09-K11, GQM NotAllowLentResource_2/_3/_4: parent test-root (min 60), children min 20; child1 asks 0, 40, 60.
NOT_LENT = [
    # (parent lends, child1 lends, child2 lends, expected [(root, child1, child2) after 0, 40, 60 requested])
    ("K09", False, False, False, [(60, 20, 20), (60, 40, 20), (80, 60, 20)]),
    ("K10", True, False, True, [(20, 20, 0), (40, 40, 0), (60, 60, 0)]),
    ("K11", True, False, False, [(40, 20, 20), (60, 40, 20), (80, 60, 20)]),
]


@pytest.mark.parametrize(("kid", "p_lend", "c1_lend", "c2_lend", "expected"), NOT_LENT)
@pytest.mark.parametrize("scale", [False, True])
def test_k09_k11_not_allow_lent_tree(
    kid: str, p_lend: bool, c1_lend: bool, c2_lend: bool, expected: list[tuple[int, int, int]], scale: bool
) -> None:
    specs = [
        group("test-root", ROOT_GROUP, res(96, 0), res(60, 0), lend=p_lend, is_parent=True),
        group("test-child1", "test-root", res(96, 0), res(20, 0), lend=c1_lend),
        group("test-child2", "test-root", res(96, 0), res(20, 0), lend=c2_lend),
    ]
    tree = ElasticQuotaTree(specs, res(100, 0), enable_min_scale=scale)
    for asked, want in zip((0, 40, 60), expected, strict=True):
        tree.set_request("test-child1", res(asked, 0))
        result = tree.result()
        got = tuple(result[n].runtime["cpu"] // 1000 for n in ("test-root", "test-child1", "test-child2"))
        assert got == want, (kid, asked)
    if kid == "K09":  # a non-lending parent keeps its unused capacity inside its subtree: 20 of 60 unassigned
        tree.set_request("test-child1", res(0, 0))
        assert tree.result().unassigned("test-root")["cpu"] == 20_000


def test_k12_request_is_capped_by_max_on_the_way_up() -> None:
    """K12, GQM MultiUpdateQuotaRequest2: a-123 asks 10/30, 25/45, then 55/75 -> its parents see 30/60 (its max)."""
    specs = [
        group("test1", ROOT_GROUP, res(96, 160 * GI), res(80, 80 * GI), is_parent=True),
        group("test1-a", "test1", res(60, 80 * GI), res(50, 80 * GI), is_parent=True),
        group("a-123", "test1-a", res(30, 60 * GI), res(20, 40 * GI)),
    ]
    tree = ElasticQuotaTree(specs, res(96, 160 * GI))
    for asked, runtime, parent_request in [
        (res(10, 30 * GI), res(10, 30 * GI), res(10, 30 * GI)),
        (res(25, 45 * GI), res(25, 45 * GI), res(25, 45 * GI)),
        (res(55, 75 * GI), res(30, 60 * GI), res(30, 60 * GI)),
    ]:
        tree.set_request("a-123", asked)
        result = tree.result()
        assert result["a-123"].runtime == runtime
        assert result["a-123"].request == asked
        assert result["test1-a"].request == parent_request
        assert result["test1"].request == parent_request


def test_gqm_multi_update_quota_request_max_change() -> None:
    """GQM MultiUpdateQuotaRequest: lowering a-123's max to 64/128 caps its parents' request and its runtime."""
    specs = [
        group("test1", ROOT_GROUP, res(96, 160 * GI), res(50, 80 * GI), is_parent=True),
        group("test1-a", "test1", res(96, 160 * GI), res(50, 80 * GI), is_parent=True),
        group("a-123", "test1-a", res(96, 160 * GI), res(50, 80 * GI)),
    ]
    tree = ElasticQuotaTree(specs, res(96, 160 * GI), requests={"a-123": res(96, 130 * GI)})
    assert {tree.result()[n].runtime for n in ("a-123", "test1-a", "test1")} == {res(96, 130 * GI)}
    tree.update_group(group("a-123", "test1-a", res(64, 128 * GI), res(50, 80 * GI)))
    result = tree.result()
    assert result["a-123"].runtime == res(64, 128 * GI)
    assert result["test1-a"].request == res(64, 128 * GI)
    assert result["a-123"].request == res(96, 130 * GI)
    tree.update_group(group("a-123", "test1-a", res(100, 200 * GI), res(90, 160 * GI)))
    result = tree.result()
    assert result["test1-a"].request == res(96, 130 * GI)
    assert result["a-123"].runtime == res(96, 130 * GI)


def test_k13_child_max_above_parent_max_and_total() -> None:
    """K13, GQM MultiChildMaxGreaterParentMax_MaxGreaterThanTotalRes (memory in bytes)."""
    specs = [
        group("test1", ROOT_GROUP, res(600, 4096), res(100, 100), is_parent=True),
        group("test1-sub1", "test1", res(500, 2048), res(100, 100)),
    ]
    tree = ElasticQuotaTree(specs, res(300, 8000), requests={"test1-sub1": res(500, 4096)})
    assert tree.result()["test1-sub1"].runtime == res(300, 2048)
    tree.set_request("test1-sub1", res(1050, 8192))
    result = tree.result()
    assert result["test1"].request == res(500, 2048)
    assert result["test1"].limited_request == res(500, 2048)
    assert result["test1"].runtime == res(300, 2048)
    assert result["test1-sub1"].request == res(1050, 8192)
    assert result["test1-sub1"].limited_request == res(500, 2048)
    assert result["test1-sub1"].runtime == res(300, 2048)


def test_k14_child_max_above_parent_max() -> None:
    """K14, GQM MultiChildMaxGreaterParentMax: the parent's max (300/1024Gi) bounds the child via its runtime."""
    specs = [
        group("test1", ROOT_GROUP, res(300, 1024 * GI), res(176, 756 * GI), is_parent=True),
        group("test1-sub1", "test1", res(500, 2048 * GI), res(100, 512 * GI)),
    ]
    tree = ElasticQuotaTree(specs, res(350, 1800 * GI), requests={"test1-sub1": res(400, 1500 * GI)})
    result = tree.result()
    assert result["test1"].request == res(400, 1500 * GI)
    assert result["test1"].limited_request == res(300, 1024 * GI)
    assert result["test1-sub1"].runtime == res(300, 1024 * GI)
    tree.set_request("test1-sub1", res(800, 3000 * GI))
    assert tree.result()["test1-sub1"].runtime == res(300, 1024 * GI)


def _scaled_tree(scale: bool, total: ResourceList, b_request: ResourceList) -> ElasticQuotaTree:
    specs = [
        group("p", ROOT_GROUP, res(1000, 1000 * GI), res(300, 300 * GI), is_parent=True),
        group("a", "p", res(1000, 1000 * GI), res(100, 100 * GI)),
        group("b", "p", res(1000, 1000 * GI), res(100, 100 * GI)),
        group("c", "p", res(1000, 1000 * GI), res(100, 100 * GI)),
    ]
    req = {"a": res(200, 200 * GI), "b": b_request, "c": res(200, 200 * GI)}
    return ElasticQuotaTree(specs, total, requests=req, enable_min_scale=scale)


def test_k15_scaled_min_and_recovery() -> None:
    """K15, GQM MultiUpdateQuotaRequest_WithScaledMinQuota1: total 200 < sum of mins 300, then 600."""
    tree = _scaled_tree(True, res(200, 200 * GI), res(200, 200 * GI))
    result = tree.result()
    assert result["p"].runtime == res(200, 200 * GI)
    assert result["p"].auto_scaled_min == res(200, 200 * GI)
    third = ResourceList({"cpu": 66666, "memory": 200 * GI // 3})
    plus_one = ResourceList({"cpu": 66667, "memory": 200 * GI // 3 + 1})
    for n in "abc":
        assert result[n].auto_scaled_min == third
    # 2 units left after the floors: Hamilton gives them to a and b (name order), not c
    assert result["a"].runtime == plus_one
    assert result["b"].runtime == plus_one
    assert result["c"].runtime == third
    tree.set_total(res(600, 600 * GI))
    result = tree.result()
    assert result["p"].runtime == res(600, 600 * GI)
    assert result["p"].auto_scaled_min == res(300, 300 * GI)
    for n in "abc":
        assert result[n].runtime == res(200, 200 * GI)
        assert result[n].auto_scaled_min == res(100, 100 * GI)  # min restored when capacity comes back


def test_k16_scaled_min_with_an_idle_sibling() -> None:
    """GQM MultiUpdateQuotaRequest_WithScaledMinQuota2: b asks nothing, a and c share 200 after scaled floors."""
    result = _scaled_tree(True, res(200, 200 * GI), res(0, 0)).result()
    assert result["p"].runtime == res(200, 200 * GI)
    assert runtimes(result, "a b c") == {"a": res(100, 100 * GI), "b": res(0, 0), "c": res(100, 100 * GI)}
    for n in "abc":
        assert result[n].auto_scaled_min == ResourceList({"cpu": 66666, "memory": 200 * GI // 3})


def test_k17_no_scaling_overcommits() -> None:
    """K17, GQM MultiUpdateQuotaRequest_WithScaledMinQuota3: scaling off, runtimes = mins even above the total."""
    tree = _scaled_tree(False, res(200, 200 * GI), res(200, 200 * GI))
    result = tree.result()
    assert result["p"].runtime == res(300, 300 * GI)
    assert runtimes(result, "a b c") == dict.fromkeys("abc", res(100, 100 * GI))
    assert result["p"].auto_scaled_min == res(300, 300 * GI)
    assert result.unassigned(ROOT_GROUP) == res(-100, -100 * GI)


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        # K18, SMQ GetScaledMinQuota: "1" exempt (min 50), "2" and "3" scaled (min 50 each)
        (200, (50, 50, 50)),
        (100, (50, 25, 25)),
        (50, (50, 0, 0)),
        (0, (50, 0, 0)),
    ],
)
def test_k18_min_scaling_with_an_exempt_group(available: int, expected: tuple[int, int, int]) -> None:
    assert tuple(ref.scale_mins(available * 1000, [50_000] * 3, [True, False, False])) == tuple(
        v * 1000 for v in expected
    )
    specs = [
        QuotaGroupSpec("t", parent=None, tree_id="t1", is_parent=True),
        group("1", "t", res(100, 100), res(50, 50), min_scale_exempt=True),
        group("2", "t", res(100, 100), res(50, 50)),
        group("3", "t", res(100, 100), res(50, 50)),
    ]
    result = compute_runtimes(specs, {}, res(0), tree_totals={"t1": res(available, available)})
    assert tuple(result[n].auto_scaled_min["cpu"] for n in "123") == tuple(v * 1000 for v in expected)
    assert tuple(result[n].auto_scaled_min["memory"] for n in "123") == expected


def test_scaling_uses_exact_integer_floor() -> None:
    """Koordinator truncates float64 products; here floor((avail - exempt) * min / sum) is exact."""
    big = 2**53 + 1
    got = ref.scale_mins(big, [big, big], [False, False])
    assert got == [big // 2, big // 2]
    mins = kern.scale_mins(
        *(__import__("numpy").array(x, "int64") for x in ([big], [big, big], [False, False], [0, 0], [0], [2]))
    )
    assert mins.tolist() == got


def test_k22_system_and_default_used_come_off_the_total() -> None:
    """K22, GQM UpdateClusterTotalResource: total 96/160Gi -> 64/360Gi -> 100/540Gi, then system/default used."""
    specs = [group("q", ROOT_GROUP, res(1000, 1000 * GI), res(0, 0))]
    tree = ElasticQuotaTree(specs, res(96, 160 * GI))
    assert tree.result().tree_total() == res(96, 160 * GI)
    tree.set_total(res(64, 360 * GI))
    assert tree.result().tree_total() == res(64, 360 * GI)
    tree.set_total(res(100, 540 * GI))
    assert tree.result().tree_total() == res(100, 540 * GI)
    tree.set_used(SYSTEM_GROUP, res(10, 30 * GI))
    assert tree.result().tree_total() == res(90, 510 * GI)
    tree.set_used(SYSTEM_GROUP, res(20, 30 * GI + 30))
    assert tree.result().tree_total() == res(80, 510 * GI - 30)
    tree.set_used(DEFAULT_GROUP, res(10, 30))
    assert tree.result().tree_total() == res(70, 510 * GI - 60)
    tree.set_used(DEFAULT_GROUP, res(20, 60))
    assert tree.result().tree_total() == res(60, 510 * GI - 90)
    # the same through compute_runtimes' explicit arguments
    result = compute_runtimes(
        specs, {}, res(100, 540 * GI), system_used=res(20, 30 * GI + 30), default_used=res(20, 60)
    )
    assert result.tree_total() == res(60, 510 * GI - 90)


def test_k23_request_of_non_lending_groups() -> None:
    """K23, GQM ChildRequestAndRequest_All_not_allowLent: request = max(child request, min) at every level."""
    specs = [
        group("1", ROOT_GROUP, res(40, 40), res(20, 20), lend=False, is_parent=True),
        group("2", "1", res(40, 40), res(10, 10), lend=False),
        group("3", "1", res(40, 40), res(5, 5), lend=False),
    ]
    tree = ElasticQuotaTree(specs, res(50, 50))
    expect = [
        # (pods of "2", request of "2", child request of "1", request of "1")
        (res(0, 0), res(10, 10), res(15, 15), res(20, 20)),
        (res(5, 5), res(10, 10), res(15, 15), res(20, 20)),
        (res(15, 15), res(15, 15), res(20, 20), res(20, 20)),
        (res(25, 25), res(25, 25), res(30, 30), res(30, 30)),
    ]
    for pods, req2, child1, req1 in expect:
        tree.set_request("2", pods)
        result = tree.result()
        assert result["2"].request == req2
        assert result["3"].request == res(5, 5)
        assert result["1"].request == req1
        assert result.explain("1")["resources"]["cpu"]["child_request"] == child1["cpu"]


def test_gqm_refresh_runtime_parent_without_children() -> None:
    """GQM RefreshAndGetRuntimeQuota case5: "1" (min 10) and "2" (min 0) both ask 30 of 50 -> 30 and 20."""
    specs = [
        group("1", ROOT_GROUP, res(40, 40), res(10, 10), is_parent=True),
        group("2", ROOT_GROUP, res(40, 40), res(0, 0)),
    ]
    tree = ElasticQuotaTree(specs, res(50, 50))
    assert tree.result()["1"].runtime == res(0, 0)
    tree.set_request("1", res(5, 5))
    tree.set_request("2", res(5, 5))
    assert runtimes(tree.result(), "1 2") == {"1": res(5, 5), "2": res(5, 5)}
    tree.set_request("1", res(30, 30))
    tree.set_request("2", res(30, 30))
    assert runtimes(tree.result(), "1 2") == {"1": res(30, 30), "2": res(20, 20)}


def test_gqm_update_max_and_min() -> None:
    """GQM UpdateOneGroupMaxQuota_UpdateQuota and UpdateOneGroupMinQuota_UpdateQuota (weights stay 40)."""
    w = res(40, 40)
    specs = [
        group("1", ROOT_GROUP, res(40, 40), res(10, 10), shared_weight=w),
        group("2", ROOT_GROUP, res(40, 40), res(10, 10), shared_weight=w),
    ]
    tree = ElasticQuotaTree(specs, res(50, 50), requests={"1": res(35, 35), "2": res(35, 35)})
    assert runtimes(tree.result(), "1 2") == dict.fromkeys("12", res(25, 25))
    for mx, limited in ((30, 30), (50, 35)):
        for n in "12":
            tree.update_group(group(n, ROOT_GROUP, res(mx, mx), res(10, 10), shared_weight=w))
        result = tree.result()
        assert runtimes(result, "1 2") == dict.fromkeys("12", res(25, 25))
        assert result["1"].limited_request == res(limited, limited)
    tree = ElasticQuotaTree(specs, res(50, 50), requests={"1": res(15, 15), "2": res(15, 15)})
    for mn in (10, 15, 20, 5):
        for n in "12":
            tree.update_group(group(n, ROOT_GROUP, res(40, 40), res(mn, mn), shared_weight=w))
        assert runtimes(tree.result(), "1 2") == dict.fromkeys("12", res(15, 15))
    tree.update_group(group("1", ROOT_GROUP, res(40, 40), res(40, 40), shared_weight=w))
    tree.update_group(group("2", ROOT_GROUP, res(40, 40), res(5, 5), shared_weight=w))
    tree.set_request("1", res(115, 115))
    tree.set_request("2", res(115, 115))
    result = tree.result()
    assert runtimes(result, "1 2") == {"1": res(40, 40), "2": res(10, 10)}
    assert result["2"].limited_request == res(40, 40)


def test_k26_parent_change_moves_request_and_used() -> None:
    """K26, GQM UpdateQuotaParentName: a-123 (asking and using 60/100Gi) moves from test1-a to test2."""
    specs = [
        group("test1", ROOT_GROUP, res(96, 160 * GI), res(100, 160 * GI), is_parent=True),
        group("test1-a", "test1", res(96, 160 * GI), res(50, 80 * GI), is_parent=True),
        group("a-123", "test1-a", res(96, 160 * GI), res(50, 80 * GI)),
        group("test2", ROOT_GROUP, res(96, 160 * GI), res(100, 160 * GI), is_parent=True),
        group("test2-a", "test2", res(96, 160 * GI), res(50, 80 * GI)),
    ]
    tree = ElasticQuotaTree(
        specs,
        res(96, 160 * GI),
        requests={"a-123": res(60, 100 * GI), "test2-a": res(20, 40 * GI)},
        used={"a-123": res(60, 100 * GI), "test2-a": res(20, 40 * GI)},
        enable_min_scale=False,
    )
    result = tree.result()
    for n in ("a-123", "test1-a", "test1"):
        assert result[n].runtime == res(60, 100 * GI)
        assert result[n].used == res(60, 100 * GI)
    tree.update_group(group("a-123", "test2", res(96, 160 * GI), res(50, 80 * GI)))
    result = tree.result()
    for n in ("test1-a", "test1"):
        assert (result[n].request, result[n].used, result[n].runtime) == (res(0, 0),) * 3
    assert result["a-123"].runtime == res(60, 100 * GI)
    assert result.parent("a-123") == "test2"
    assert result["test2-a"].runtime == res(20, 40 * GI)
    assert (result["test2"].request, result["test2"].used, result["test2"].runtime) == (res(80, 140 * GI),) * 3


def test_k26_parent_change_with_a_parents_own_pods() -> None:
    """GQM UpdateQuotaNoLockWhenParentChange: 11 has its own pods (20) besides 111's (15); moves twice."""
    specs = [
        group("1", ROOT_GROUP, res(100, 100), res(80, 80), is_parent=True),
        group("2", ROOT_GROUP, res(100, 100), res(60, 60), is_parent=True),
        group("11", "1", res(50, 50), res(30, 30), is_parent=True),
        group("21", "2", res(50, 50), res(40, 40), is_parent=True),
        group("111", "11", res(50, 50), res(20, 20), is_parent=True),
        group("211", "21", res(50, 50), res(15, 15), is_parent=True),
    ]
    pods = {"111": res(15, 15), "11": res(20, 20)}
    tree = ElasticQuotaTree(specs, res(200, 200), requests=pods, used=pods)
    result = tree.result()
    assert [result[n].request for n in ("111", "11", "1")] == [res(15, 15), res(35, 35), res(35, 35)]
    assert [result[n].runtime for n in ("111", "11", "1")] == [res(15, 15), res(35, 35), res(35, 35)]
    tree.update_group(replace(specs[2], parent="2"))
    result = tree.result()
    assert (result["2"].request, result["2"].used, result["2"].runtime) == (res(35, 35),) * 3
    assert (result["1"].request, result["1"].used, result["1"].runtime) == (res(0, 0),) * 3
    assert result["11"].runtime == res(35, 35)
    tree.update_group(replace(specs[4], parent="21"))
    result = tree.result()
    assert (result["11"].request, result["11"].used, result["11"].runtime) == (res(20, 20),) * 3
    assert (result["21"].request, result["21"].used, result["21"].runtime) == (res(15, 15),) * 3
    assert result["2"].request == res(35, 35)
    assert result["111"].runtime == res(15, 15)


# -- model details -----------------------------------------------------------------------------------------------


def test_requests_and_runtimes_are_masked_to_max_keys() -> None:
    specs = [QuotaGroupSpec("a", max=res(10), min=res(5))]
    result = compute_runtimes(specs, {"a": res(20, 7 * GI, 3)}, res(100, 100 * GI, 8))
    assert dict(result["a"].request) == {"cpu": 20_000}
    assert dict(result["a"].runtime) == {"cpu": 10_000}
    assert fits_runtime(result["a"], {}, res(10, 999 * GI, 999))  # memory and GPU are not governed for "a"
    assert dict(result[ROOT_GROUP].runtime) == {"cpu": 100_000}  # a root reports its tree's resources


def test_shared_weight_defaults_and_normalisation() -> None:
    base = {"a": res(0, 0), "b": res(0, 0)}
    mx = res(100, 100)

    def run(wa: ResourceList | None, wb: ResourceList | None) -> tuple[int, int]:
        specs = [
            QuotaGroupSpec("a", max=mx, shared_weight=wa),
            QuotaGroupSpec("b", max=res(100, 300), shared_weight=wb),
        ]
        result = compute_runtimes(specs, {n: res(100, 100) for n in base}, res(40, 40))
        return result["a"].runtime["memory"], result["b"].runtime["memory"]

    assert run(None, None) == (10, 30)  # weight = max: 100 vs 300
    assert run(res(1), ResourceList({"cpu": 1, "other": 5})) == (10, 30)  # memory weight copied from max
    assert run(ResourceList({"cpu": 1, "memory": 3}), ResourceList({"memory": 1})) == (30, 10)
    assert run(ResourceList({"memory": 0}), None) == (0, 40)  # an explicit 0 is kept: "a" stays at its floor


def test_lent_and_borrowed() -> None:
    """Seed 001 'Min Guarantee and Preemption': A borrowed B's idle guarantee; B comes back."""
    specs = [QuotaGroupSpec("A", min=res(50), max=res(100)), QuotaGroupSpec("B", min=res(50), max=res(100))]
    tree = ElasticQuotaTree(specs, res(100), requests={"A": res(100)}, used={"A": res(100)})
    result = tree.result()
    assert result["A"].runtime == res(100)
    assert (result["A"].borrowed, result["B"].lent) == (res(50), res(50))
    tree.set_request("B", res(100))
    result = tree.result()
    assert runtimes(result, "A B") == {"A": res(50), "B": res(50)}
    assert not fits_runtime(result["A"], result["A"].used, res(1))
    assert runtime_excess(result["A"], result["A"].used, res(1)) == {"cpu": 51_000}
    # unreserved capacity is consumed first: with a total of 130, 30 of A's 50 borrowed is nobody's min
    result = compute_runtimes(specs, {"A": res(100)}, res(130), used={"A": res(100), "B": res(10)})
    assert (result["A"].borrowed, result["B"].lent) == (res(50), res(20))


def test_lent_split_by_unused_min() -> None:
    specs = [
        QuotaGroupSpec("b", min=res(10), max=res(100)),
        QuotaGroupSpec("l1", min=res(30), max=res(100)),
        QuotaGroupSpec("l2", min=res(10), max=res(100)),
        QuotaGroupSpec("nl", min=res(20), max=res(100), allow_lent=False),
    ]
    used = {"b": res(50), "l1": res(0), "l2": res(0), "nl": res(0)}
    result = compute_runtimes(specs, {"b": res(100)}, res(70), used=used)
    assert result["b"].borrowed == res(40)
    # sum of mins 70 = total: nothing unreserved; 40 borrowed out of l1/l2's unused 30/10 -> 30 + 10
    assert (result["l1"].lent, result["l2"].lent, result["nl"].lent) == (res(30), res(10), res(0))
    result = compute_runtimes(specs, {"b": res(100)}, res(70), used={**used, "b": res(30)})
    assert (result["l1"].lent["cpu"], result["l2"].lent["cpu"]) == (15_000, 5_000)


def test_multiple_trees() -> None:
    specs = [
        QuotaGroupSpec("gpu-pool", parent=None, tree_id="gpu", min=ResourceList({GPU: 8000})),
        QuotaGroupSpec("x", parent="gpu-pool", min=ResourceList({GPU: 2000}), max=ResourceList({GPU: 8000})),
        QuotaGroupSpec("y", min=res(10), max=res(100)),
    ]
    result = compute_runtimes(specs, {"x": ResourceList({GPU: 9000}), "y": res(50)}, res(30))
    assert result["x"].runtime == ResourceList({GPU: 8000})  # the tree total defaults to its root's min
    assert result["y"].runtime == res(30)
    result = compute_runtimes(
        specs, {"x": ResourceList({GPU: 9000})}, res(30), tree_totals={"gpu": ResourceList({GPU: 4000})}
    )
    assert result.tree_total("gpu") == ResourceList({GPU: 4000})
    assert result["x"].runtime == ResourceList({GPU: 4000})


# -- whole units: Koordinator splits every resource but cpu in whole units (getQuantityValue: Value()) -------------


def gpus(n: int) -> ResourceList:
    return ResourceList({GPU: n * 1000})


def test_gpus_are_split_in_whole_gpus_and_cpu_in_millicores() -> None:
    """25 GPUs and 25 cpus among three equal hungry groups: 9/8/8 GPUs (not 8333m), 8334m/8333m/8333m cpu."""
    both = ResourceList({"cpu": 100_000, GPU: 100_000})
    groups = [QuotaGroupSpec(n, max=both) for n in "abc"]
    result = compute_runtimes(groups, dict.fromkeys("abc", both), ResourceList({"cpu": 25_000, GPU: 25_000}))
    assert [result[n].runtime[GPU] for n in "abc"] == [9000, 8000, 8000]
    assert [result[n].runtime["cpu"] for n in "abc"] == [8334, 8333, 8333]
    assert sum(result[n].runtime[GPU] for n in "abc") == 25_000


def test_the_demo_shape_gives_whole_gpu_runtimes() -> None:
    """The reported case: 64 GPUs, four teams with mins 16/16/8/8 GPUs and weights by max; before, a runtime of
    8300m GPUs. Every runtime, auto-scaled min, borrowed and lent amount is whole GPUs; nothing is lost."""
    spec = {"nlp": (16, 40), "vision": (16, 40), "speech": (8, 24), "data-eng": (8, 16)}
    groups = [QuotaGroupSpec(n, min=gpus(mi), max=gpus(ma)) for n, (mi, ma) in spec.items()]
    requests = {"nlp": gpus(37), "vision": gpus(29), "speech": gpus(3), "data-eng": gpus(11)}
    used = {"nlp": gpus(30), "vision": gpus(16), "speech": gpus(2), "data-eng": gpus(11)}
    result = compute_runtimes(groups, requests, gpus(64), used=used)
    for name in spec:
        gq = result[name]
        for values in (gq.runtime, gq.auto_scaled_min, gq.borrowed, gq.lent):
            assert values[GPU] % 1000 == 0, (name, values)
    assert sum(result[n].runtime[GPU] for n in spec) == 64_000  # every GPU handed out (all ask more than they get)
    assert result["speech"].runtime == gpus(3)  # asks 3, lends the rest of its min
    assert sum(result[n].lent[GPU] for n in spec) <= sum(result[n].borrowed[GPU] for n in spec)


def test_a_fractional_gpu_amount_counts_as_the_next_whole_gpu() -> None:
    """Value() rounds up: a request of 1500m GPUs is split as 2 GPUs, a min of 500m as 1, a total of 7.5 as 8."""
    groups = [QuotaGroupSpec("a", min=ResourceList({GPU: 500}), max=gpus(10)), QuotaGroupSpec("b", max=gpus(10))]
    result = compute_runtimes(groups, {"a": ResourceList({GPU: 1500}), "b": gpus(10)}, ResourceList({GPU: 7500}))
    assert result["a"].request == ResourceList({GPU: 1500})  # requests are reported as given
    assert result["a"].auto_scaled_min == gpus(1)
    assert result["a"].runtime == gpus(2)
    assert result["b"].runtime == gpus(6)
    assert result.tree_total() == gpus(8)


def test_gpu_mins_are_scaled_in_whole_gpus() -> None:
    """Parent runtime 10 GPUs below the children's mins 4+4+4: each floor is floor(10 * 4 / 12) = 3 whole GPUs."""
    groups = [
        QuotaGroupSpec("p", is_parent=True, min=gpus(10), max=gpus(10)),
        *(QuotaGroupSpec(n, parent="p", min=gpus(4), max=gpus(10)) for n in "xyz"),
    ]
    result = compute_runtimes(groups, dict.fromkeys("xyz", gpus(10)), gpus(10))
    assert [result[n].auto_scaled_min for n in "xyz"] == [gpus(3)] * 3
    assert [result[n].runtime for n in "xyz"] == [gpus(4), gpus(3), gpus(3)]  # the spare GPU to the first name


def test_gpu_lending_is_in_whole_gpus() -> None:
    """A borrower uses 3 GPUs above its min; two lenders with 3 unused GPUs each lend 2 and 1 (not 1500m each)."""
    groups = [
        QuotaGroupSpec("b", min=gpus(2), max=gpus(10)),
        QuotaGroupSpec("l1", min=gpus(4), max=gpus(10)),
        QuotaGroupSpec("l2", min=gpus(4), max=gpus(10)),
    ]
    used = {"b": gpus(5), "l1": gpus(1), "l2": gpus(1)}
    result = compute_runtimes(groups, {"b": gpus(5), "l1": gpus(1), "l2": gpus(1)}, gpus(10), used=used)
    assert result["b"].borrowed == gpus(3)
    assert (result["l1"].lent, result["l2"].lent) == (gpus(2), gpus(1))


def test_explain_gpus_in_whole_units() -> None:
    groups = [QuotaGroupSpec(n, max=gpus(100)) for n in "abc"]
    result = compute_runtimes(groups, dict.fromkeys("abc", gpus(100)), gpus(25))
    e = result.explain("a")["resources"][GPU]
    assert e["split_unit"] == 1000 and e["runtime"] == 9000
    assert [(r["pool"], r["share"]) for r in e["rounds"]] == [(25_000, 9000)]
    assert "in whole units" in e["text"] and e["text"].endswith("runtime 9, bound by parent runtime")


def test_builtin_groups_stay_outside() -> None:
    huge = (2**63 - 1) // 5
    specs = [
        QuotaGroupSpec(ROOT_GROUP, parent=None, is_parent=True, allow_lent=False),
        QuotaGroupSpec(SYSTEM_GROUP, max=ResourceList({"cpu": huge})),
        QuotaGroupSpec(DEFAULT_GROUP, max=res(10), min=res(2)),
        QuotaGroupSpec("a", max=res(100)),
    ]
    result = compute_runtimes(
        specs, {"a": res(100), DEFAULT_GROUP: res(4)}, res(100), used={SYSTEM_GROUP: res(30), DEFAULT_GROUP: res(4)}
    )
    assert result["a"].runtime == res(66)
    assert result[SYSTEM_GROUP].runtime == ResourceList({"cpu": huge})
    assert result[DEFAULT_GROUP] == GroupQuota(DEFAULT_GROUP, res(4), res(4), res(4), res(2), res(10), res(2), res(0))
    assert result.explain(SYSTEM_GROUP)["outside_tree"] is True
    assert set(result) == {ROOT_GROUP, "a", SYSTEM_GROUP, DEFAULT_GROUP}


def test_builtin_groups_values_kept_only_while_their_inputs_are_equal() -> None:
    """A tree keeps the values of ``system`` and ``default`` between results while their spec, request and used are
    equal; any of the three changed gives new values, as a new tree's."""
    specs = [
        QuotaGroupSpec(ROOT_GROUP, parent=None, is_parent=True, allow_lent=False),
        QuotaGroupSpec(DEFAULT_GROUP, max=res(10), min=res(2)),
        QuotaGroupSpec("a", max=res(100)),
    ]
    tree = ElasticQuotaTree(specs, res(100), requests={DEFAULT_GROUP: res(4)}, used={DEFAULT_GROUP: res(4)})
    first = tree.result()[DEFAULT_GROUP]
    tree.set_request("a", res(50))
    assert tree.result()[DEFAULT_GROUP] is first  # nothing of default moved: kept
    tree.set_used(DEFAULT_GROUP, res(3))
    assert tree.result()[DEFAULT_GROUP] == GroupQuota(
        DEFAULT_GROUP, res(4), res(4), res(3), res(2), res(10), res(1), res(0)
    )
    tree.set_request(DEFAULT_GROUP, res(12))
    assert tree.result()[DEFAULT_GROUP].request == res(12)
    assert tree.result()[DEFAULT_GROUP].limited_request == res(10)
    tree.update_group(QuotaGroupSpec(DEFAULT_GROUP, max=res(20), min=res(2)))
    assert tree.result()[DEFAULT_GROUP].runtime == res(20)
    assert tree.result()[DEFAULT_GROUP].limited_request == res(12)
    new = ElasticQuotaTree(
        [*specs[:1], QuotaGroupSpec(DEFAULT_GROUP, max=res(20), min=res(2)), specs[2]],
        res(100),
        requests={DEFAULT_GROUP: res(12), "a": res(50)},
        used={DEFAULT_GROUP: res(3)},
    )
    assert tree.result()[DEFAULT_GROUP] == new.result()[DEFAULT_GROUP]


def test_explain_k01() -> None:
    def cpu(v: int) -> ResourceList:
        return ResourceList({"cpu": v})

    groups = [QuotaGroupSpec(n, min=cpu(mi), max=cpu(ma)) for n, mi, ma in zip("ABCD", DOC_MIN, DOC_MAX, strict=True)]
    result = compute_runtimes(groups, {n: cpu(r) for n, r in zip("ABCD", DOC_REQ, strict=True)}, cpu(100))
    d = result.explain("D")["resources"]["cpu"]
    assert (d["floor"], d["state"], d["bound_by"], d["runtime"]) == (15, "hungry", "parent runtime", 40)
    # the design document's rounds: 45 shared 60/50/80 (B 14, C 12, D 19), then B's spare 9 shared 50/80 (3, 6)
    assert [(r["pool"], r["total_weight"], r["share"]) for r in d["rounds"]] == [(45, 190, 19), (9, 130, 6)]
    c = result.explain("C")["resources"]["cpu"]
    assert [r["share"] for r in c["rounds"]] == [12, 3]
    b = result.explain("B")["resources"]["cpu"]
    assert (b["bound_by"], b["rounds"][0]["share"], b["rounds"][0]["capped"]) == ("request", 14, True)
    a = result.explain("A")["resources"]["cpu"]
    assert (a["state"], a["bound_by"], a["rounds"]) == ("lends", "request below floor", [])
    assert d["text"].endswith("runtime 0.04, bound by parent runtime")  # 40 millicores, in cores


def test_explain_scaled_min_and_limits() -> None:
    result = _scaled_tree(True, res(200, 200 * GI), res(200, 200 * GI)).result()
    e = result.explain("a")["resources"]["cpu"]
    assert e["min_scaled"] and e["min"] == 100_000 and e["auto_scaled_min"] == 66_666
    assert "scaled down" in e["text"] and "sum of mins" in e["text"]
    specs = [group("p", ROOT_GROUP, res(10), res(0), is_parent=True), group("c", "p", res(50), res(0))]
    result = compute_runtimes(specs, {"c": res(80)}, res(100))
    assert result.explain("c")["resources"]["cpu"]["limited_by"] == "max"
    assert result.explain("p")["resources"]["cpu"]["bound_by"] == "max"
    assert result.explain(ROOT_GROUP)["resources"]["cpu"]["bound_by"] == "tree total"
    nl = compute_runtimes([group("n", ROOT_GROUP, res(50), res(20), lend=False)], {}, res(100))
    e = nl.explain("n")["resources"]["cpu"]
    assert (e["raised_to_min"], e["state"], e["runtime"]) == (True, "keeps floor", 20_000)
    zero = compute_runtimes(
        [QuotaGroupSpec("z", min=res(5), max=res(50), shared_weight=ResourceList({"cpu": 0}))], {"z": res(30)}, res(100)
    )
    assert zero.explain("z")["resources"]["cpu"]["bound_by"] == "weight 0"


def test_scheduling_checks() -> None:
    assert fits_runtime(res(10), res(4), res(6))
    assert not fits_runtime(res(10), res(4), res(7))
    assert fits_runtime(res(10), res(4, 99 * GI), res(6, GI))  # memory not in the runtime: not compared
    spec = QuotaGroupSpec("a", min=res(4, GI), max=res(10, 2 * GI))
    assert fits_non_preemptible(spec, res(2, 0), res(2, GI))
    assert not fits_non_preemptible(spec, res(3, 0), res(2, 0))
    assert fits_non_preemptible(res(4), res(2), res(2, 99 * GI))
    specs = [
        group("p", ROOT_GROUP, res(20), res(10), is_parent=True),
        group("c1", "p", res(20), res(5)),
        group("c2", "p", res(20), res(5)),
    ]
    result = compute_runtimes(specs, {"c1": res(20), "c2": res(20)}, res(15), used={"c1": res(4), "c2": res(10)})
    assert result["p"].runtime == res(15)
    assert result["p"].used == res(14)
    assert check_ancestors(result, "c1", res(1)) is None  # p: 14 + 1 <= 15
    assert check_ancestors(result, "c1", res(2)) == "p"
    assert fits_ancestors(result, "c1", res(1)) and not fits_ancestors(result, "c1", res(2))
    assert check_ancestors(result, "c1", res(1), used={"p": res(13)}) is None
    assert check_ancestors(result, "c1", res(3), used={"p": res(13)}) == "p"
    assert check_ancestors(result, "c1", ResourceList({"memory": GI})) is None  # not governed by c1


# -- errors and robustness ---------------------------------------------------------------------------------------


def test_configuration_errors_name_the_group() -> None:
    with pytest.raises(ValueError, match="'a': parent 'nope' does not exist"):
        compute_runtimes([QuotaGroupSpec("a", parent="nope")], {}, res(1))
    with pytest.raises(ValueError, match="cycle"):
        compute_runtimes([QuotaGroupSpec("a", parent="b"), QuotaGroupSpec("b", parent="a")], {}, res(1))
    with pytest.raises(ValueError, match="cycle: 'a' -> 'a'"):
        compute_runtimes([QuotaGroupSpec("a", parent="a")], {}, res(1))
    with pytest.raises(ValueError, match="given twice"):
        compute_runtimes([QuotaGroupSpec("a"), QuotaGroupSpec("a")], {}, res(1))
    with pytest.raises(ValueError, match="both roots of tree 't'"):
        compute_runtimes(
            [QuotaGroupSpec("x", parent=None, tree_id="t"), QuotaGroupSpec("y", parent=None, tree_id="t")], {}, res(1)
        )
    with pytest.raises(ValueError, match="must be a tree root with a tree_id"):
        compute_runtimes([QuotaGroupSpec("x", parent=None)], {}, res(1))
    with pytest.raises(ValueError, match="'system' is outside the quota tree"):
        compute_runtimes([QuotaGroupSpec(SYSTEM_GROUP), QuotaGroupSpec("a", parent=SYSTEM_GROUP)], {}, res(1))
    with pytest.raises(ValueError, match=r"'a' max\.cpu"):
        compute_runtimes([QuotaGroupSpec("a", max=ResourceList({"cpu": MAX_AMOUNT + 1}))], {}, res(1))
    with pytest.raises(ValueError, match=r"'a' min\.cpu"):
        compute_runtimes([QuotaGroupSpec("a", min=ResourceList({"cpu": 2**70}), max=res(1))], {}, res(1))
    with pytest.raises(ValueError, match="request given for unknown quota group 'zz'"):
        compute_runtimes([QuotaGroupSpec("a")], {"zz": res(1)}, res(1))
    with pytest.raises(ValueError, match=r"total\.cpu"):
        compute_runtimes([QuotaGroupSpec("a")], {}, ResourceList({"cpu": -1}))


def test_tree_edits_refuse_bad_changes_and_stay_usable() -> None:
    specs = [group("p", ROOT_GROUP, res(10), res(5), is_parent=True), group("c", "p", res(10), res(5))]
    tree = ElasticQuotaTree(specs, res(10), requests={"c": res(10)})
    before = tree.result()
    with pytest.raises(ValueError, match="cycle: 'p' -> 'c' -> 'p'"):
        tree.update_group(replace(specs[0], parent="c"))
    with pytest.raises(ValueError, match="still has child groups: c"):
        tree.remove_group("p")
    with pytest.raises(ValueError, match="cannot be removed"):
        tree.remove_group(ROOT_GROUP)
    with pytest.raises(ValueError, match="does not exist"):
        tree.update_group(group("d", "nope", res(1), res(0)))
    with pytest.raises(KeyError):
        tree.remove_group("nope")
    assert tree.result()["c"] == before["c"]
    tree.update_group(group("d", "p", res(10, GI), res(0)))  # a new resource key: rebuilt, still consistent
    tree.set_request("d", res(10, GI))
    assert tree.result()["d"].runtime == res(2.5, 0)  # p's 10 cores: floors 5/0, the other 5 split 10:10


def test_pods_of_a_tree_root_count_in_its_request_only() -> None:
    """Koordinator adds a root's own pods to its request; what the root distributes does not change."""
    specs = [QuotaGroupSpec("a", max=res(10), min=res(2))]
    result = compute_runtimes(specs, {"a": res(4), ROOT_GROUP: res(3, GI)}, res(10), used={ROOT_GROUP: res(1)})
    assert result[ROOT_GROUP].request == res(7)  # the root reports the tree's resources (cpu only here)
    assert result[ROOT_GROUP].used == res(1)
    assert result[ROOT_GROUP].runtime == res(10)
    assert result["a"].runtime == res(4)


def test_results_are_snapshots() -> None:
    specs = [QuotaGroupSpec("a", max=res(10)), QuotaGroupSpec("b", max=res(10))]
    tree = ElasticQuotaTree(specs, res(10), requests={"a": res(10)})
    first = tree.result()
    assert first["a"].runtime == res(10)
    tree.set_request("b", res(10))
    tree.set_used("a", res(3))
    second = tree.result()
    assert first["a"].runtime == res(10) and first["a"].used == res(0)
    assert second["a"].runtime == res(5) and second["a"].used == res(3)
    live = tree.result(copy=False)
    assert live["b"].runtime == res(5)


def test_huge_weights_stay_exact() -> None:
    """Weights and amounts near 2**62: products need 124 bits; the result matches Python ints."""
    big = MAX_AMOUNT
    specs = [
        QuotaGroupSpec("a", max=ResourceList({"memory": big}), shared_weight=ResourceList({"memory": big})),
        QuotaGroupSpec("b", max=ResourceList({"memory": big}), shared_weight=ResourceList({"memory": big - 1})),
        QuotaGroupSpec("c", max=ResourceList({"memory": big}), shared_weight=ResourceList({"memory": 3})),
    ]
    reqs = {n: ResourceList({"memory": big}) for n in "abc"}
    total = ResourceList({"memory": big - 7})
    result = compute_runtimes(specs, reqs, total)
    expected = reference_quotas(specs, reqs, total)
    assert [result[n].runtime for n in "abc"] == [expected[n].runtime for n in "abc"]
    assert sum(result[n].runtime["memory"] for n in "abc") == big - 7


def test_every_groups_field_at_once_is_what_each_group_holds() -> None:
    """``ElasticResult.amounts(field)``: the document of ten thousand groups reads them this way."""
    from engine.fairshare.elastic import FIELDS, compute_runtimes
    from engine.objects import DEFAULT_GROUP, SYSTEM_GROUP

    def rl(cpu: int, gpu: int | None = None) -> ResourceList:
        return ResourceList({"cpu": cpu * 1000, **({"nvidia.com/gpu": gpu * 1000} if gpu is not None else {})})

    groups = [
        QuotaGroupSpec("a", min=rl(4, 1), max=rl(10, 2), is_parent=True),
        QuotaGroupSpec("a1", parent="a", min=rl(2), max=rl(8)),
        QuotaGroupSpec("a2", parent="a", min=rl(2, 1), max=rl(6, 2), allow_lent=False),
        QuotaGroupSpec("b", min=rl(4), max=rl(12)),
        QuotaGroupSpec("t", parent=None, min=rl(3), max=rl(3, 1), tree_id="other", is_parent=True),
        QuotaGroupSpec("t1", parent="t", min=rl(1), max=rl(3), tree_id="other"),
        QuotaGroupSpec(SYSTEM_GROUP, parent=None, min=rl(0), max=rl(100)),
        QuotaGroupSpec(DEFAULT_GROUP, parent=None, min=rl(0), max=rl(100)),
    ]
    requests = {"a1": rl(9), "a2": rl(3, 2), "b": rl(2), "t1": rl(5), SYSTEM_GROUP: rl(1)}
    used = {"a1": rl(5), "b": rl(1), SYSTEM_GROUP: rl(1)}
    result = compute_runtimes(groups, requests, rl(16, 2), used=used, system_used=rl(1))
    assert SYSTEM_GROUP in result and "t1" in result
    for field in FIELDS:
        every = result.amounts(field)
        assert list(every) == list(result)
        assert every == {name: dict(getattr(result[name], field).items()) for name in result}
    with pytest.raises(KeyError):
        result.amounts("min")
