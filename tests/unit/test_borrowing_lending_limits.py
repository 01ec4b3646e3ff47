"""Borrowing and lending limits on queues and quota groups, with Kueue's meaning (issue 13).

``borrowingLimit`` bounds what a node may take beyond its own entitlement (a queue's deserved, a quota group's min);
``lendingLimit`` bounds how much of its unused entitlement others may take, the rest staying reserved for it. The
numbers are those of Kueue's documentation (``site/content/en/docs/concepts/cluster_queue.md`` "Borrowing example"
and "BorrowingLimit", ``cohort.md`` "Configuring Quotas", KEP-1224's lending limit): two cohort members with nominal
quotas 9 and 12 cpu; with the second lending at most 1, the first reaches 10 and the second 21; with the first
borrowing at most 1, the first reaches 10 and the second 12+9=21; without limits the first reaches 12+9=21 cpu and
48+36=84Gi. A ClusterQueue with nominal 0 in a Cohort holding 12 may use those 12.

A cohort is mapped onto an inner queue whose deserved and capability are the sum of its members' nominal quotas (a
quota group's parent whose runtime is their sum), as the Kueue importer does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.fairshare.deserved import compute_capacity
from engine.fairshare.elastic import compute_runtimes, effective_max
from engine.fairshare.proportion import compute_proportion
from engine.fairshare.queues import JobUsage
from engine.fairshare.verdicts import TaskRef
from engine.objects import QueueSpec, QuotaGroupSpec
from engine.resources import ResourceList
from engine.session.run import run_session
from tests.unit.test_session_support import evicted, node, pipelined, plugin, pod, podgroup, policy, queue, snapshot
from tests.unit.test_session_support import rl as cpu
from tests.unit.test_session_support import running as placed

CPU = 1000  # millicores
GI = 1024**3


def rl(**quantities: Any) -> ResourceList:
    return ResourceList.parse(dict(quantities))


def running(queue: str, request: ResourceList, name: str = "j") -> JobUsage:
    return JobUsage(
        queue=queue,
        namespace="ns",
        request=request,
        allocated=request,
        phase="Running",
        min_member=1,
        allocated_tasks=1,
        name=name,
    )


def cohort(*members: QueueSpec, extra: str = "0") -> list[QueueSpec]:
    """Root, a cohort ``ab`` with the members' deserved summed (plus ``extra`` cpu of its own), the members."""
    total: dict[str, int] = {}
    for m in members:
        for r, v in m.deserved.items():
            total[r] = total.get(r, 0) + v
    total["cpu"] = total.get("cpu", 0) + ResourceList.parse({"cpu": extra})["cpu"]
    size = ResourceList(total)
    return [
        QueueSpec("root", parent=None, reclaimable=False),
        QueueSpec("ab", deserved=size, capability=size),
        *members,
    ]


# -- queues, hierarchical capacity -----------------------------------------------------------------------------


def test_lending_limit_kueue_example_hierarchy() -> None:
    queues = cohort(
        QueueSpec("a", parent="ab", deserved=rl(cpu="9")),
        QueueSpec("b", parent="ab", deserved=rl(cpu="12"), lending_limit=rl(cpu="1")),
    )
    result = compute_capacity(queues, [], rl(cpu="100"), hierarchy=True)
    assert result["a"].real_capability["cpu"] == 10 * CPU
    assert result["b"].real_capability["cpu"] == 21 * CPU
    assert not result.problems
    steps = [str(s) for s in result.explain("a").for_quantity("realCapability", "cpu")]
    assert steps == [
        "realCapability[cpu] = 10 (rc.tree.kept): (parent ab realCapability 21 - siblings' guarantees and "
        "lending-limit reserves 11)+ + own reserve 0"
    ]
    assert not result.allocatable("a", rl(cpu="11"))
    assert result.allocatable("a", rl(cpu="10"))
    assert result.allocatable("b", rl(cpu="21"))


def test_lending_limit_reserve_is_not_available_to_any_sibling() -> None:
    """With a third member, the two others together cannot eat into what b keeps (11 of its 12)."""
    queues = cohort(
        QueueSpec("a", parent="ab", deserved=rl(cpu="9")),
        QueueSpec("b", parent="ab", deserved=rl(cpu="12"), lending_limit=rl(cpu="1")),
        QueueSpec("c", parent="ab", deserved=rl(cpu="5")),
    )
    result = compute_capacity(queues, [running("a", rl(cpu="10"))], rl(cpu="100"), hierarchy=True)
    # c alone could reach 26 - 11 = 15, but a already holds 10 of the 15 others may share
    assert result["c"].real_capability["cpu"] == 15 * CPU
    verdict = result.allocatable("c", rl(cpu="6"))
    assert not verdict
    assert str(verdict) == (
        "queue ab lendingLimit: insufficient cpu, requested 6, available 5 = 26 realCapability − 10 allocated "
        "− 11 kept for b by its lending limit"
    )
    assert result.allocatable("c", rl(cpu="5"))
    assert not result.fits("c", {"cpu": 6 * CPU})
    assert result.fits("c", {"cpu": 5 * CPU})
    # b itself may use its reserve and what is left
    assert result.allocatable("b", rl(cpu="16"))
    # as b uses its reserve, the reserve left to keep shrinks: after b takes 11, c may take 5 still, not more
    result.on_allocate("b", {"cpu": 11 * CPU})
    assert result.allocatable("c", rl(cpu="5"))
    assert not result.allocatable("c", rl(cpu="6"))


def test_lending_limit_binds_enqueue() -> None:
    queues = cohort(
        QueueSpec("a", parent="ab", deserved=rl(cpu="9")),
        QueueSpec("b", parent="ab", deserved=rl(cpu="12"), lending_limit=rl(cpu="1")),
        QueueSpec("c", parent="ab", deserved=rl(cpu="5")),
    )
    held = JobUsage(
        "a", "ns", rl(cpu="10"), rl(cpu="10"), min_resources=rl(cpu="10"), phase="Running", min_member=1, name="held"
    )
    result = compute_capacity(queues, [held], rl(cpu="100"), hierarchy=True)
    job = JobUsage("c", "ns", rl(cpu="6"), ResourceList(), min_resources=rl(cpu="6"), name="big")
    verdict = result.enqueueable(job)
    assert not verdict and verdict.reason is not None and verdict.reason.check == "lendingLimit"
    assert str(verdict) == (
        "queue ab lendingLimit: insufficient cpu, requested 6, available 5 = 26 realCapability − 10 allocated "
        "− 11 kept for b by its lending limit"
    )
    small = JobUsage("c", "ns", rl(cpu="5"), ResourceList(), min_resources=rl(cpu="5"), name="small")
    assert result.enqueueable(small)


def test_borrowing_limit_kueue_example_hierarchy() -> None:
    queues = cohort(
        QueueSpec("a", parent="ab", deserved=rl(cpu="9"), borrowing_limit=rl(cpu="1")),
        QueueSpec("b", parent="ab", deserved=rl(cpu="12")),
    )
    result = compute_capacity(queues, [running("a", rl(cpu="10"))], rl(cpu="100"), hierarchy=True)
    assert result["a"].real_capability["cpu"] == 10 * CPU
    assert result["b"].real_capability["cpu"] == 21 * CPU
    verdict = result.allocatable("a", rl(cpu="1"))
    assert str(verdict) == (
        "queue a realCapability: insufficient cpu, requested 1, available 0 = 9 deserved + 1 borrowing limit "
        "− 10 allocated"
    )
    assert [str(s) for s in result.explain("a").for_quantity("realCapability", "cpu")][-1] == (
        "realCapability[cpu] = 10 (rc.borrowing.deserved): capped by deserved 9 + borrowing limit 1"
    )


def test_no_limits_kueue_borrowing_example() -> None:
    queues = cohort(
        QueueSpec("a", parent="ab", deserved=rl(cpu="9", memory="36Gi")),
        QueueSpec("b", parent="ab", deserved=rl(cpu="12", memory="48Gi")),
    )
    result = compute_capacity(queues, [], rl(cpu="100", memory="1000Gi"), hierarchy=True)
    assert result["a"].real_capability["cpu"] == 21 * CPU
    assert result["a"].real_capability["memory"] == 84 * GI


def test_cohort_quota_shared_by_member_with_nominal_zero() -> None:
    queues = cohort(QueueSpec("a", parent="ab", deserved=rl(cpu="0")), extra="12")
    result = compute_capacity(queues, [], rl(cpu="100"), hierarchy=True)
    assert result["a"].real_capability["cpu"] == 12 * CPU


def test_borrowing_limit_on_a_cohort_bounds_its_subtree() -> None:
    """A cohort with a parent may take at most its deserved + borrowing limit from outside its subtree."""
    queues = [
        QueueSpec("root", parent=None, reclaimable=False, capability=rl(cpu="30")),
        QueueSpec("org", deserved=rl(cpu="10"), borrowing_limit=rl(cpu="5")),
        QueueSpec("team", parent="org", deserved=rl(cpu="10")),
        QueueSpec("other", deserved=rl(cpu="20")),
    ]
    result = compute_capacity(queues, [running("team", rl(cpu="15"))], rl(cpu="100"), hierarchy=True)
    assert result["org"].real_capability["cpu"] == 15 * CPU
    assert result["team"].real_capability["cpu"] == 15 * CPU  # what its parent may reach
    assert result["other"].real_capability["cpu"] == 30 * CPU
    assert not result.allocatable("team", rl(cpu="1"))
    assert result.explain("org").for_quantity("realCapability", "cpu")[-1].rule == "rc.borrowing.deserved"


# -- queues, flat capacity and proportion --------------------------------------------------------------------------


def test_lending_limit_kueue_example_flat() -> None:
    queues = [
        QueueSpec("a", deserved=rl(cpu="9")),
        QueueSpec("b", deserved=rl(cpu="12"), lending_limit=rl(cpu="1")),
        QueueSpec("c", deserved=rl(cpu="0")),
    ]
    result = compute_capacity(queues, [running("a", rl(cpu="10"))], rl(cpu="21"))
    assert result["a"].real_capability["cpu"] == 10 * CPU
    assert result["b"].real_capability["cpu"] == 21 * CPU
    # c could reach 10 too, but a holds all that b lends: nothing is left for c
    verdict = result.allocatable("c", rl(cpu="1"))
    assert str(verdict) == (
        "queue c lendingLimit: insufficient cpu, requested 1, available 0 = 21 cluster − 10 allocated "
        "− 11 kept for b by its lending limit"
    )
    refusal = result.allocatable("a", rl(cpu="1")).reason
    assert refusal is not None
    assert refusal.breakdown == "10 capability (after 11 kept by other queues' lending limits) − 10 allocated"


def test_borrowing_limit_flat_capacity() -> None:
    queues = [QueueSpec("a", deserved=rl(cpu="9"), borrowing_limit=rl(cpu="1")), QueueSpec("b", deserved=rl(cpu="12"))]
    result = compute_capacity(queues, [], rl(cpu="21"))
    assert result["a"].real_capability["cpu"] == 10 * CPU
    assert result["b"].real_capability["cpu"] == 21 * CPU


def test_borrowing_limit_proportion_is_measured_against_the_guarantee() -> None:
    queues = [
        QueueSpec("a", guarantee=rl(cpu="2"), borrowing_limit=rl(cpu="3")),
        QueueSpec("b"),
    ]
    jobs = [
        running("a", rl(cpu="1")),
        JobUsage("a", "ns", rl(cpu="20"), ResourceList(), name="w"),
        running("b", rl(cpu="1")),
    ]
    result = compute_proportion(queues, jobs, rl(cpu="20"))
    assert result["a"].real_capability["cpu"] == 5 * CPU
    assert result["a"].deserved["cpu"] == 5 * CPU  # the water-filling stops at realCapability
    steps = [str(s) for s in result.explain("a").for_quantity("realCapability", "cpu")]
    assert steps[-1] == "realCapability[cpu] = 5 (rc.borrowing.guarantee): capped by guarantee 2 + borrowing limit 3"
    result.on_allocate("a", {"cpu": 4 * CPU})
    assert str(result.allocatable("a", rl(cpu="1"))) == (
        "queue a deserved: insufficient cpu, requested 1, available 0 = 5 deserved (capped by 2 guarantee + 3 "
        "borrowing limit) − 5 allocated"
    )


def test_lent_is_bounded_by_the_lending_limit() -> None:
    queues = [
        QueueSpec("a", deserved=rl(cpu="4")),
        QueueSpec("b", deserved=rl(cpu="6"), lending_limit=rl(cpu="2")),
        QueueSpec("c", deserved=rl(cpu="6")),
    ]
    jobs = [running("a", rl(cpu="10")), running("b", rl(cpu="1")), running("c", rl(cpu="1"))]
    result = compute_capacity(queues, jobs, rl(cpu="16"))
    assert result["a"].borrowed["cpu"] == 6 * CPU
    # b's unused 5 is lendable up to 2; c's unused 5 in full: 6 borrowed split 2/5 → b 2 (capped share), c 4
    assert result["b"].lent["cpu"] + result["c"].lent["cpu"] == 6 * CPU
    assert result["b"].lent["cpu"] <= 2 * CPU


def test_lender_short_of_its_reserve_reclaims_from_a_queue_above_its_real_capability() -> None:
    """b's lending limit was set while a held 15 (a's deserved 15 as set): flat capacity caps a's deserved at its
    realCapability, which b's reserve lowers to 21 - 11 = 10, so b may take back what a holds beyond 10."""
    queues = [
        QueueSpec("a", deserved=rl(cpu="15")),
        QueueSpec("b", deserved=rl(cpu="12"), lending_limit=rl(cpu="1")),
    ]
    result = compute_capacity(queues, [running("a", rl(cpu="15"))], rl(cpu="21"))
    assert result["a"].real_capability["cpu"] == 10 * CPU
    assert result["a"].deserved["cpu"] == 10 * CPU
    reclaimer = TaskRef("b-0", "b", rl(cpu="5"))
    victims = [TaskRef(f"a-{i}", "a", rl(cpu="1")) for i in range(3)]
    selection = result.reclaimable(reclaimer, victims)
    assert [t.name for t in selection.victims] == ["a-0", "a-1", "a-2"]
    # without the lending limit a is within its deserved and nothing may be taken
    plain = compute_capacity(
        [QueueSpec("a", deserved=rl(cpu="15")), QueueSpec("b", deserved=rl(cpu="12"))],
        [running("a", rl(cpu="15"))],
        rl(cpu="21"),
    )
    assert plain.reclaimable(reclaimer, victims).victims == ()


def test_lender_short_of_its_reserve_reclaims_in_a_hierarchy() -> None:
    """In a hierarchy deserved is not capped by realCapability. Cohort ab (capability 21) has a (deserved 15) and b
    (deserved 12, lending at most 1: it keeps 11); a holds 13, within its deserved but above its realCapability 10:
    b takes back the 3 beyond 10, and no more; without the limit nothing is taken."""
    members = [
        QueueSpec("root", parent=None, reclaimable=False),
        QueueSpec("ab", deserved=rl(cpu="27"), capability=rl(cpu="21")),
        QueueSpec("a", parent="ab", deserved=rl(cpu="15")),
    ]
    lender = QueueSpec("b", parent="ab", deserved=rl(cpu="12"), lending_limit=rl(cpu="1"))
    result = compute_capacity([*members, lender], [running("a", rl(cpu="13"))], rl(cpu="100"), hierarchy=True)
    assert not result.problems
    assert (result["a"].real_capability["cpu"], result["a"].deserved["cpu"]) == (10 * CPU, 15 * CPU)
    reclaimer = TaskRef("b-0", "b", rl(cpu="4"))
    victims = [TaskRef(f"a-{i}", "a", rl(cpu="1")) for i in range(5)]
    selection = result.reclaimable(reclaimer, victims)
    assert [t.name for t in selection.victims] == ["a-0", "a-1", "a-2"]
    assert [reason for _, reason in selection.skipped] == [
        "queue a is not above its deserved on what the task uses"
    ] * 2
    plain = compute_capacity(
        [*members, QueueSpec("b", parent="ab", deserved=rl(cpu="12"))],
        [running("a", rl(cpu="13"))],
        rl(cpu="100"),
        hierarchy=True,
    )
    assert plain.reclaimable(reclaimer, victims).victims == ()


# -- quota groups (elastic quota) ----------------------------------------------------------------------------------


def groups(a: dict[str, Any], b: dict[str, Any]) -> list[QuotaGroupSpec]:
    big = rl(cpu="100")
    return [QuotaGroupSpec("a", min=rl(cpu="9"), max=big, **a), QuotaGroupSpec("b", min=rl(cpu="12"), max=big, **b)]


def test_elastic_lending_limit_kueue_example() -> None:
    specs = groups({}, {"lending_limit": rl(cpu="1")})
    alone_a = compute_runtimes(specs, {"a": rl(cpu="30")}, rl(cpu="21"))
    assert alone_a["a"].runtime["cpu"] == 10 * CPU
    assert alone_a["b"].runtime["cpu"] == 11 * CPU  # kept, though its pods ask nothing
    alone_b = compute_runtimes(specs, {"b": rl(cpu="30")}, rl(cpu="21"))
    assert alone_b["b"].runtime["cpu"] == 21 * CPU
    text = alone_a.explain("b")["resources"]["cpu"]["text"]
    assert "keeps 11 of its min 12 by its lending limit 1" in text


def test_elastic_borrowing_limit_kueue_example() -> None:
    specs = groups({"borrowing_limit": rl(cpu="1")}, {})
    alone_a = compute_runtimes(specs, {"a": rl(cpu="30")}, rl(cpu="21"))
    assert alone_a["a"].runtime["cpu"] == 10 * CPU
    alone_b = compute_runtimes(specs, {"b": rl(cpu="30")}, rl(cpu="21"))
    assert alone_b["b"].runtime["cpu"] == 21 * CPU
    text = alone_a.explain("a")["resources"]["cpu"]["text"]
    assert text.endswith("runtime 10, bound by its borrowing limit (min 9 + borrowing limit 1 = 10)")
    assert effective_max(specs[0])["cpu"] == 10 * CPU


def test_elastic_lent_is_bounded_by_the_lending_limit() -> None:
    specs = groups({}, {"lending_limit": rl(cpu="1")})
    result = compute_runtimes(specs, {"a": rl(cpu="30")}, rl(cpu="21"), used={"a": rl(cpu="10")})
    assert result["a"].borrowed["cpu"] == 1 * CPU
    assert result["b"].lent["cpu"] == 1 * CPU
    over = compute_runtimes(specs, {"a": rl(cpu="30")}, rl(cpu="21"), used={"a": rl(cpu="13")})
    assert over["b"].lent["cpu"] == 1 * CPU  # never more than its limit, whatever a uses


def test_elastic_limits_absent_change_nothing() -> None:
    specs = groups({}, {})
    limited = groups({"borrowing_limit": rl(memory="1Gi")}, {"lending_limit": rl(memory="1Gi")})
    requests = {"a": rl(cpu="30"), "b": rl(cpu="5")}
    plain, other = compute_runtimes(specs, requests, rl(cpu="21")), compute_runtimes(limited, requests, rl(cpu="21"))
    for name in ("a", "b"):
        assert plain[name] == other[name]  # limits on a resource the max does not govern are ignored


# -- rules ---------------------------------------------------------------------------------------------------------


def test_rules_refuse_limits_that_cannot_mean_anything() -> None:
    from engine import rules

    queue = QueueSpec("a", deserved=rl(cpu="4"), lending_limit=rl(cpu="5"), borrowing_limit=rl(memory="1Gi"))
    errors = {e.field: e.message for e in rules.queue_field_errors(queue)}
    assert errors == {
        "lending_limit.cpu": "queue a: lending limit cpu 5 must be <= deserved cpu 4 (it cannot lend more than it is "
        "entitled to)",
        "borrowing_limit.memory": "queue a: borrowing limit memory 1Gi is set but deserved does not set memory; a limit "
        "is measured against the deserved, so set deserved memory (0 is allowed) or drop the limit",
    }
    root = QueueSpec("root", parent=None, borrowing_limit=rl(cpu="1"))
    assert [e.message for e in rules.queue_field_errors(root)] == [
        "queue root: the root queue has no borrowing or lending limit"
    ]
    group = QuotaGroupSpec(
        "g", min=rl(cpu="4"), max=rl(cpu="8"), lending_limit=rl(cpu="4"), borrowing_limit=rl(cpu="0")
    )
    assert rules.group_field_errors(group) == []
    tree_root = QuotaGroupSpec(
        "t", parent=None, tree_id="t", min=rl(cpu="4"), max=rl(cpu="8"), lending_limit=rl(cpu="1")
    )
    assert [e.message for e in rules.group_field_errors(tree_root)] == [
        "quota group t: a tree root has no borrowing or lending limit"
    ]


def test_lendable_now_is_bounded_by_the_lending_limit() -> None:
    """``engine.lending``'s "lendable now" (metrics, pages) never passes a lending limit."""
    from types import SimpleNamespace

    from engine.lending import lendable_groups, lendable_queues

    queues = [QueueSpec("a", deserved=rl(cpu="9")), QueueSpec("b", deserved=rl(cpu="12"), lending_limit=rl(cpu="1"))]
    book = compute_capacity(queues, [running("a", rl(cpu="2"))], rl(cpu="21"))
    specs = {g.name: g for g in groups({}, {"lending_limit": rl(cpu="1")})}
    values: Any = SimpleNamespace(
        queues=book,
        quotas=compute_runtimes(list(specs.values()), {}, rl(cpu="21")),
        reservations=SimpleNamespace(amounts={}),
    )
    assert (lendable_queues(values)["a"]["cpu"], lendable_queues(values)["b"]["cpu"]) == (7 * CPU, 1 * CPU)
    lendable = lendable_groups(values, specs)
    assert (lendable["a"]["cpu"], lendable["b"]["cpu"]) == (9 * CPU, 1 * CPU)


def test_a_lending_limit_under_proportion_is_said_to_have_no_effect() -> None:
    from engine import rules

    old = QueueSpec("a", deserved=rl(cpu="8"))
    new = replace(old, lending_limit=rl(cpu="1"))
    tree = {"root": QueueSpec("root", parent=None), "a": new}
    found = rules.queue_warnings(tree, new, old, total={"cpu": 64_000}, policy="proportion")
    assert [(w.field, w.code) for w in found] == [("lending_limit", "no_effect")]
    assert "lending_limit has no effect under the cluster's proportion policy" in found[0].message
    assert rules.queue_warnings(tree, new, old, total={"cpu": 64_000}, policy="capacity") == []


def test_elastic_tree_follows_limit_changes_incrementally() -> None:
    from engine.fairshare.elastic import ElasticQuotaTree

    specs = groups({}, {})
    requests = {"a": rl(cpu="30"), "b": rl(cpu="2")}
    tree = ElasticQuotaTree(specs, rl(cpu="21"), requests=requests)
    assert tree.result()["a"].runtime["cpu"] == 19 * CPU  # b lends what it does not ask
    limited = replace(specs[1], lending_limit=rl(cpu="1"))
    tree.update_group(limited)
    after = tree.result()
    fresh = compute_runtimes([specs[0], limited], requests, rl(cpu="21"))
    assert after["a"] == fresh["a"] and after["b"] == fresh["b"]
    assert (after["a"].runtime["cpu"], after["b"].runtime["cpu"]) == (10 * CPU, 11 * CPU)
    borrowing = replace(specs[0], borrowing_limit=rl(cpu="0"))
    tree.update_group(borrowing)
    assert tree.result()["a"].runtime["cpu"] == 9 * CPU
    tree.update_group(specs[0])
    tree.update_group(specs[1])
    assert tree.result()["a"].runtime["cpu"] == 19 * CPU  # limits removed: the first numbers again


def test_limits_survive_export_and_reading_back() -> None:
    """``fairway export`` writes the limits as the annotations ``simulate`` reads (a zero lending limit included)."""
    from engine.manifests import load_manifests
    from engine.objects import Snapshot
    from tests.support.manifest_dump import dump_yaml

    base = Snapshot()
    queue = QueueSpec("a", deserved=rl(cpu="4"), lending_limit=rl(cpu="0"), borrowing_limit=rl(cpu="2"))
    group = QuotaGroupSpec("g", min=rl(cpu="4"), max=rl(cpu="8"), lending_limit=rl(cpu="1"))
    snap = base.replace(queues={**base.queues, "a": queue}, quota_groups={**base.quota_groups, "g": group})
    back = load_manifests([("export.yaml", dump_yaml(snap))]).snapshot
    assert back.queues["a"] == queue and back.quota_groups["g"] == group


def test_a_lender_reclaims_what_it_lent_beyond_its_limit_first() -> None:
    """Flat capacity, 20 cpu. l (deserved 4, lending at most 1) keeps a reserve of 3; b1 (deserved 10) holds 18, one
    beyond its realCapability 20 - 3 = 17; b2 (deserved 1) holds 2. By share alone b2 (2/1) is reclaimed before b1
    (18/10); l short of its reserve takes its 3 cpu from b1, the queue holding what was lent beyond the limit."""

    def session(lending_limit: ResourceList) -> tuple[list[str], dict[str, str]]:
        snap = snapshot(
            nodes=[node("n1", "20", "256Gi")],
            queues=[
                replace(queue("l", deserved=cpu("4")), lending_limit=lending_limit),
                queue("b1", deserved=cpu("10")),
                queue("b2", deserved=cpu("1")),
            ],
            podgroups=[
                podgroup("b1", "x", "b1", 1, phase="Running"),
                podgroup("b2", "y", "b2", 1, phase="Running"),
                podgroup("l", "z", "l", 1, phase="Inqueue"),
            ],
            pods=[placed("b1", f"x-{i}", "x", "n1", "1") for i in range(18)]
            + [placed("b2", f"y-{i}", "y", "n1", "1") for i in range(2)]
            + [pod("l", "z-0", "z", "3")],
            policy=policy(
                "enqueue, allocate, reclaim", ["priority", "gang", "conformance"], [plugin("capacity"), "predicates"]
            ),
        )
        result = run_session(snap, now=0.0)
        assert result.queue_values["b1"].real_capability["cpu"] == (17 if lending_limit else 20) * CPU
        return evicted(result), pipelined(result)

    assert session(rl(cpu="1")) == (["b1/x-17", "b1/x-16", "b1/x-15"], {"l/z-0": "n1"})
    # without the lending limit nothing is held beyond a realCapability: the share order, b2 first
    assert session(ResourceList()) == (["b2/y-1", "b1/x-17", "b1/x-16"], {"l/z-0": "n1"})
