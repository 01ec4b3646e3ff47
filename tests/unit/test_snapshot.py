"""The engine snapshot: value types, built-ins, derived indexes, the pod -> quota group mapping, cheap copies."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.objects import (
    ALLOCATED_STATUSES,
    BUILTIN_QUEUES,
    BUILTIN_QUOTA_GROUPS,
    OCCUPYING_STATUSES,
    PREEMPTABLE_STATUSES,
    READY_STATUSES,
    SCHEDULED_STATUSES,
    NamespaceInfo,
    NodeInfo,
    PodGroupInfo,
    PriorityClassInfo,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
    own_podgroup_name,
)
from engine.policy.policy import DEFAULT_POLICY, ElasticQuotaArgs, Policy
from engine.resources import MAX_AMOUNT, ResourceList
from tests.support.examples import examples

GiB = 2**30


def rl(**amounts: int) -> ResourceList:
    """``rl(cpu=500, gpu=1000)``; ``gpu`` is ``nvidia.com/gpu``."""
    return ResourceList({("nvidia.com/gpu" if k == "gpu" else k): v for k, v in amounts.items()})


def task(name: str, ns: str = "ns", pg: str = "ns/pg", **kw: Any) -> TaskInfo:
    return TaskInfo(namespace=ns, name=name, podgroup=pg, **kw)


# -- value types ---------------------------------------------------------------------------------------------------


def test_task_identity_and_derived_fields() -> None:
    t = task("p1", request=rl(cpu=500))
    assert t.uid == "ns/p1"
    assert not t.best_effort
    assert task("p2").best_effort  # an empty request is best-effort, as in Volcano
    assert task("p3", request=ResourceList({"cpu": 0})).best_effort
    assert hash(t) == hash("ns/p1")
    moved = t.with_status(TaskStatus.RUNNING, "n1")
    assert (moved.status, moved.node, moved.uid) == (TaskStatus.RUNNING, "n1", "ns/p1")
    renamed = dataclasses.replace(t, name="p9")
    assert renamed.uid == "ns/p9"


@pytest.mark.parametrize(("flag", "expected"), [(None, True), (True, True), (False, False)])
def test_volcano_preemptable_defaults_to_true(flag: bool | None, expected: bool) -> None:
    assert task("p", volcano_preemptable=flag).preemptable is expected


def test_podgroup_key() -> None:
    pg = PodGroupInfo("team-a", "job1", queue="q1", min_member=3)
    assert pg.key == "team-a/job1"
    assert own_podgroup_name("web-0") == "podgroup-web-0"


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (Toleration(key="gpu", operator="Exists"), Taint("gpu", "a100", "NoSchedule"), True),
        (Toleration(key="gpu", value="a100", effect="NoSchedule"), Taint("gpu", "a100", "NoSchedule"), True),
        (Toleration(key="gpu", value="v100"), Taint("gpu", "a100", "NoSchedule"), False),
        (Toleration(key="gpu", value="a100", effect="NoExecute"), Taint("gpu", "a100", "NoSchedule"), False),
        (Toleration(operator="Exists"), Taint("anything", "x", "NoExecute"), True),  # empty key + Exists: all
        (Toleration(key="other", operator="Exists"), Taint("gpu", "", "NoSchedule"), False),
        (Toleration(key="gpu", value=""), Taint("gpu", "", "PreferNoSchedule"), True),
    ],
)
def test_toleration_matches_taint_as_kubernetes_does(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration.tolerates(taint) is expected


def test_status_groups_are_volcanos() -> None:
    s = TaskStatus
    assert {s.BOUND, s.BINDING, s.RUNNING, s.ALLOCATED} == ALLOCATED_STATUSES
    assert {s.RUNNING, s.BOUND, s.FAILED, s.SUCCEEDED} == SCHEDULED_STATUSES
    assert {s.BOUND, s.RUNNING} == PREEMPTABLE_STATUSES
    assert ALLOCATED_STATUSES | {s.SUCCEEDED} == READY_STATUSES
    assert ALLOCATED_STATUSES | {s.RELEASING} == OCCUPYING_STATUSES


# -- built-ins -----------------------------------------------------------------------------------------------------


def test_builtins_exist_even_when_not_defined() -> None:
    snap = Snapshot()
    assert set(snap.queues) == {"root", "default"}
    assert snap.queues["root"].parent is None and snap.queues["default"].parent == "root"
    assert set(snap.quota_groups) == {"root", "system", "default"}
    root = snap.quota_groups["root"]
    assert (root.parent, root.is_parent, root.allow_lent) == (None, True, False)
    assert snap.quota_groups["default"].max == ResourceList({"cpu": MAX_AMOUNT, "memory": MAX_AMOUNT})
    assert snap.priority_classes["system-cluster-critical"].value == 2_000_000_000
    assert snap.priority_classes["system-node-critical"].value == 2_000_001_000
    assert snap.policy == DEFAULT_POLICY


def test_defining_a_builtin_replaces_it() -> None:
    mine = QueueSpec(name="default", capability=rl(cpu=2000, memory=4 * 10**9))
    snap = Snapshot.build(queues=[mine, QueueSpec(name="q1")])
    assert snap.queues["default"] == mine
    assert snap.queues["root"] == BUILTIN_QUEUES["root"]
    assert list(snap.queues) == ["root", "default", "q1"]
    # Removing a built-in brings the default back.
    assert snap.without_queues(["default"]).queues["default"] == BUILTIN_QUEUES["default"]
    group = QuotaGroupSpec(name="default", max=rl(cpu=1000))
    assert Snapshot.build(quota_groups=[group]).quota_groups["default"] == group
    assert Snapshot.build(quota_groups=[group]).quota_groups["system"] == BUILTIN_QUOTA_GROUPS["system"]


def test_build_refuses_duplicate_keys() -> None:
    with pytest.raises(ValueError, match="duplicate task 'ns/p'"):
        Snapshot.build(tasks=[task("p"), task("p")])
    with pytest.raises(ValueError, match="duplicate node 'n1'"):
        Snapshot.build(nodes=[NodeInfo("n1"), NodeInfo("n1")])


# -- derived indexes -----------------------------------------------------------------------------------------------


def cluster() -> Snapshot:
    return Snapshot.build(
        nodes=[
            NodeInfo("n1", rl(cpu=8000, memory=32 * GiB, gpu=4000)),
            NodeInfo("n2", rl(cpu=4000, memory=16 * GiB)),
            NodeInfo("n3", rl(cpu=16000, memory=64 * GiB), unschedulable=True),
            NodeInfo("n4", rl(cpu=16000, memory=64 * GiB), ready=False),
        ],
        podgroups=[PodGroupInfo("ns", "pg", queue="q1"), PodGroupInfo("ns", "pg2", queue="q1")],
        tasks=[
            task("run", request=rl(cpu=1000, memory=GiB), status=TaskStatus.RUNNING, node="n1"),
            task("bound", request=rl(cpu=500), status=TaskStatus.BOUND, node="n1"),
            task("rel", request=rl(cpu=2000), status=TaskStatus.RELEASING, node="n1"),
            task("pipe", request=rl(cpu=3000), status=TaskStatus.PIPELINED, node="n2"),
            task("done", request=rl(cpu=4000), status=TaskStatus.SUCCEEDED, node="n2"),
            task("wait", pg="ns/pg2", request=rl(cpu=250)),
        ],
        queues=[QueueSpec("q1"), QueueSpec("q2", parent="q1")],
    )


def test_total_allocatable_counts_ready_schedulable_nodes_only() -> None:
    snap = cluster()
    assert snap.total_allocatable == rl(cpu=12000, memory=48 * GiB, gpu=4000)
    assert [n.name for n in snap.schedulable_nodes] == ["n1", "n2"]


def test_tasks_by_podgroup_and_node() -> None:
    snap = cluster()
    assert [t.name for t in snap.tasks_by_podgroup["ns/pg"]] == ["run", "bound", "rel", "pipe", "done"]
    assert [t.name for t in snap.podgroup_tasks("ns/pg2")] == ["wait"]
    assert snap.podgroup_tasks("ns/none") == ()
    assert [t.name for t in snap.tasks_by_node["n1"]] == ["run", "bound", "rel"]
    assert [t.name for t in snap.tasks_by_node["n2"]] == ["pipe", "done"]
    assert "n3" not in snap.tasks_by_node
    assert [pg.name for pg in snap.podgroups_by_queue["q1"]] == ["pg", "pg2"]
    assert snap.queue_children == {"root": ("default", "q1"), "q1": ("q2",)}
    assert snap.quota_children == {"root": ("default", "system")}


def test_node_used_counts_allocated_and_releasing_tasks() -> None:
    # Volcano's node.Used: allocated tasks plus those still releasing; a pipelined or finished task holds nothing.
    snap = cluster()
    assert snap.node_used["n1"] == rl(cpu=3500, memory=GiB)
    assert snap.node_used["n2"] == ResourceList()


def test_namespace_and_priority_lookups() -> None:
    snap = Snapshot.build(
        namespaces=[NamespaceInfo("team-a", weight=3, queue="q1")],
        priority_classes=[PriorityClassInfo("high", 1000), PriorityClassInfo("normal", 10, global_default=True)],
    )
    assert snap.namespace("team-a").weight == 3
    assert snap.namespace("elsewhere") == NamespaceInfo("elsewhere", weight=1, queue=None, hard=None)
    assert snap.priority_of_class("high") == 1000
    assert snap.priority_of_class("missing") == 10  # unknown -> the global default
    assert snap.priority_of_class("") == 10
    assert Snapshot().priority_of_class("missing") == 0
    assert snap.priority_of_class("system-node-critical") == 2_000_001_000


# -- pod -> quota group (koordinator.md §6) ------------------------------------------------------------------------


def quota_snapshot() -> Snapshot:
    return Snapshot.build(
        quota_groups=[
            QuotaGroupSpec("parent-a", is_parent=True),
            QuotaGroupSpec("team-a", parent="parent-a"),
            QuotaGroupSpec("batch"),  # a group named like a namespace
            QuotaGroupSpec("shared"),
            QuotaGroupSpec("another"),
        ],
        quota_namespaces={"shared": ["ml", "batch"], "another": ["ml", "web"], "missing-group": ["web"]},
    )


@pytest.mark.parametrize(
    ("namespace", "label", "expected"),
    [
        ("anything", "team-a", "team-a"),  # 1. the label, when it names a known group
        ("batch", "team-a", "team-a"),  # ... even in a namespace that has a group of its own
        ("anything", "no-such-group", "default"),  # an unknown label value falls to default
        ("batch", None, "batch"),  # 2. a group named like the namespace
        ("ml", None, "another"),  # 3. a group whose namespaces annotation lists it (first by name)
        ("web", None, "another"),  # a listing by a group that does not exist is ignored
        ("elsewhere", None, "default"),  # 4. default
        ("root", None, "default"),  # the root group never takes pods
        ("default", None, "default"),
        ("x", "system", "system"),
    ],
)
def test_quota_group_of(namespace: str, label: str | None, expected: str) -> None:
    snap = quota_snapshot()
    t = task("p", ns=namespace, pg=f"{namespace}/pg", quota_group=label)
    assert snap.quota_group_of(t) == expected
    snap = snap.with_tasks([t])
    assert snap.task_quota_groups[t.uid] == expected
    assert [x.uid for x in snap.tasks_by_quota_group[expected]] == [t.uid]


def test_effective_elastic_quota_args_precedence() -> None:
    assert Snapshot().effective_elastic_quota_args() == ElasticQuotaArgs()
    from_config = Snapshot(elastic_quota_args=ElasticQuotaArgs(monitor_all_quotas=True, delay_evict_time=30.0))
    assert from_config.effective_elastic_quota_args() == ElasticQuotaArgs(
        monitor_all_quotas=True, delay_evict_time=30.0
    )
    policy = Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "elasticquota", "arguments": {"delayEvictTime": "5s"}}]}],
        }
    )
    both = from_config.with_policy(policy)
    assert both.effective_elastic_quota_args() == ElasticQuotaArgs(monitor_all_quotas=True, delay_evict_time=5.0)


# -- numpy views ---------------------------------------------------------------------------------------------------


def test_matrices() -> None:
    snap = cluster()
    assert snap.resource_names == ("cpu", "memory", "nvidia.com/gpu")
    names, alloc = snap.allocatable_matrix()
    assert names == ("n1", "n2", "n3", "n4")
    assert alloc.dtype == np.int64
    assert alloc.tolist()[0] == [8000, 32 * GiB, 4000]
    uids, req = snap.request_matrix()
    assert uids[0] == "ns/run" and req[0].tolist() == [1000, GiB, 0]
    assert int(req[:, 0].sum()) == 1000 + 500 + 2000 + 3000 + 4000 + 250
    with pytest.raises(ValueError, match="read-only"):
        alloc[0, 0] = 1


# -- copies and caches -----------------------------------------------------------------------------------------------


def test_with_helpers_copy_and_leave_the_original_alone() -> None:
    snap = cluster()
    moved = snap.with_tasks([snap.tasks["ns/wait"].with_status(TaskStatus.RUNNING, "n2")])
    assert snap.tasks["ns/wait"].status is TaskStatus.PENDING
    assert moved.tasks["ns/wait"].status is TaskStatus.RUNNING
    assert moved.node_used["n2"] == rl(cpu=250)
    assert snap.without_tasks(["ns/run"]).tasks.keys() == snap.tasks.keys() - {"ns/run"}
    assert "n9" in snap.with_nodes([NodeInfo("n9")]).nodes
    assert "n1" not in snap.without_nodes(["n1"]).nodes
    assert "ns/pg3" in snap.with_podgroups([PodGroupInfo("ns", "pg3")]).podgroups
    assert "ns/pg" not in snap.without_podgroups(["ns/pg"]).podgroups
    assert snap.with_queues([QueueSpec("q3")]).queues["q3"].name == "q3"
    assert "team" in snap.with_quota_groups([QuotaGroupSpec("team")]).quota_groups
    assert "team" not in snap.with_quota_groups([QuotaGroupSpec("team")]).without_quota_groups(["team"]).quota_groups
    assert snap.with_namespaces([NamespaceInfo("a", weight=2)]).namespace("a").weight == 2
    assert snap.with_priority_classes([PriorityClassInfo("x", 5)]).priority_of_class("x") == 5
    assert snap.replace(nodes={}).total_allocatable == ResourceList()


def test_caches_are_computed_once_and_kept_when_still_valid() -> None:
    snap = cluster()
    total = snap.total_allocatable
    by_pg = snap.tasks_by_podgroup
    assert snap.total_allocatable is total and snap.tasks_by_podgroup is by_pg
    # A task change keeps node-only indexes, drops task indexes.
    changed = snap.with_tasks([task("new", pg="ns/pg2")])
    assert changed.total_allocatable is total
    assert changed.tasks_by_podgroup is not by_pg
    assert [t.name for t in changed.tasks_by_podgroup["ns/pg2"]] == ["wait", "new"]
    # A policy change keeps everything.
    other = snap.with_policy(DEFAULT_POLICY.with_actions("allocate"))
    assert other.tasks_by_podgroup is by_pg and other.total_allocatable is total
    # A node change drops node indexes.
    assert snap.with_nodes([NodeInfo("n5", rl(cpu=1000))]).total_allocatable == total + rl(cpu=1000)


def test_problems_name_dangling_references() -> None:
    snap = Snapshot.build(
        tasks=[task("p", pg="ns/missing", node="ghost", status=TaskStatus.RUNNING)],
        podgroups=[PodGroupInfo("ns", "pg", queue="nowhere")],
        queues=[QueueSpec("orphan", parent="lost")],
        quota_groups=[QuotaGroupSpec("g", parent="lost-group")],
    )
    assert snap.problems() == [
        "Pod ns/p: PodGroup ns/missing not found; the pod will not be scheduled",
        "Pod ns/p: node ghost not found",
        "PodGroup ns/pg: queue nowhere not found; the podgroup will not be scheduled",
        "Queue orphan: parent queue lost not found",
        "ElasticQuota g: parent quota lost-group not found",
    ]
    assert cluster().problems() == []


# -- properties ----------------------------------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c", "d", "e"])
_nodes = st.builds(
    NodeInfo,
    name=_names,
    allocatable=st.builds(rl, cpu=st.integers(0, 64000), memory=st.integers(0, 256 * GiB)),
    unschedulable=st.booleans(),
    ready=st.booleans(),
)
_tasks = st.builds(
    TaskInfo,
    namespace=st.sampled_from(["x", "y", "ml"]),
    name=_names,
    podgroup=st.sampled_from(["x/pg1", "y/pg2", "ml/pg3"]),
    request=st.builds(rl, cpu=st.integers(0, 8000), memory=st.integers(0, 16 * GiB)),
    status=st.sampled_from(list(TaskStatus)),
    node=st.one_of(st.none(), _names),
    quota_group=st.one_of(st.none(), st.sampled_from(["g1", "g2", "nope"])),
)
_groups = st.builds(QuotaGroupSpec, name=st.sampled_from(["g1", "g2", "x", "ml"]))
_edits = st.lists(
    st.one_of(
        st.tuples(st.just("with_nodes"), st.lists(_nodes, max_size=3)),
        st.tuples(st.just("without_nodes"), st.lists(_names, max_size=2)),
        st.tuples(st.just("with_tasks"), st.lists(_tasks, max_size=3)),
        st.tuples(st.just("without_tasks"), st.lists(st.sampled_from(["x/a", "y/b", "ml/c"]), max_size=2)),
        st.tuples(st.just("with_quota_groups"), st.lists(_groups, max_size=2)),
    ),
    max_size=6,
)
_DERIVED = [
    "total_allocatable",
    "schedulable_nodes",
    "tasks_by_podgroup",
    "tasks_by_node",
    "node_used",
    "podgroups_by_queue",
    "queue_children",
    "quota_children",
    "namespace_quota_groups",
    "task_quota_groups",
    "tasks_by_quota_group",
    "resource_names",
]


def _derived(snap: Snapshot) -> dict[str, Any]:
    out = {name: getattr(snap, name) for name in _DERIVED}
    out["allocatable_matrix"] = (snap.allocatable_matrix()[0], snap.allocatable_matrix()[1].tolist())
    out["request_matrix"] = (snap.request_matrix()[0], snap.request_matrix()[1].tolist())
    return out


@settings(max_examples=examples(60), deadline=None)
@given(nodes=st.lists(_nodes, max_size=4), tasks=st.lists(_tasks, max_size=6), edits=_edits)
def test_carried_caches_equal_a_fresh_computation(
    nodes: list[NodeInfo], tasks: list[TaskInfo], edits: list[tuple[str, list[Any]]]
) -> None:
    snap = Snapshot(
        nodes={n.name: n for n in nodes},
        tasks={t.uid: t for t in tasks},
        quota_namespaces={"g2": ("ml",)},
    )
    _derived(snap)  # fill every cache before editing
    for method, args in edits:
        snap = getattr(snap, method)(args)
        _derived(snap)
    fresh = Snapshot(**{f.name: getattr(snap, f.name) for f in dataclasses.fields(Snapshot) if f.init})
    assert _derived(snap) == _derived(fresh)


@given(nodes=st.lists(_nodes, max_size=5, unique_by=lambda n: n.name), tasks=st.lists(_tasks, max_size=8))
def test_indexes_partition_the_tasks(nodes: list[NodeInfo], tasks: list[TaskInfo]) -> None:
    snap = Snapshot(nodes={n.name: n for n in nodes}, tasks={t.uid: t for t in tasks})
    assert sum(len(v) for v in snap.tasks_by_podgroup.values()) == len(snap.tasks)
    assert sum(len(v) for v in snap.tasks_by_quota_group.values()) == len(snap.tasks)
    assert sum(len(v) for v in snap.tasks_by_node.values()) == sum(t.node is not None for t in snap.tasks.values())
    expected_total = ResourceList.total(n.allocatable for n in nodes if n.ready and not n.unschedulable)
    assert snap.total_allocatable == expected_total
    _, alloc = snap.allocatable_matrix()
    column = snap.resource_names.index("cpu") if "cpu" in snap.resource_names else None
    if column is not None:
        assert int(alloc[:, column].sum()) == sum(n.allocatable["cpu"] for n in nodes)
