"""Seed 004 (Volcano ``docs/design/hierarchical-queue-on-capacity-plugin.md``): hierarchical queues.

The tree of the design's figure: ``root -> a -> {a1, a2}`` and ``root -> b``; job A runs in a1, job B in a2,
job C in b. Cluster: 12 cpu, 24Gi. a deserves 4 cpu (a1 2, a2 2), b deserves 4 cpu.
"""

from __future__ import annotations

from engine.fairshare.capacity import CapacityResult
from engine.fairshare.deserved import compute_capacity
from engine.fairshare.queues import JobUsage
from engine.fairshare.verdicts import TaskRef
from engine.objects import QueueSpec, Snapshot
from engine.policy.policy import Policy
from engine.resources import ResourceList
from engine.session.run import run_session
from tests.unit.test_session_support import Q, bound, node, plugin, pod, podgroup, policy, queue, rl, running, snapshot

CLUSTER = ResourceList.parse({"cpu": "12", "memory": "24Gi"})


def cpu(cores: int) -> ResourceList:
    return ResourceList.parse({"cpu": str(cores)})


def tree(**overrides: QueueSpec) -> list[QueueSpec]:
    queues = {
        "a": QueueSpec("a", deserved=cpu(4)),
        "a1": QueueSpec("a1", parent="a", deserved=cpu(2)),
        "a2": QueueSpec("a2", parent="a", deserved=cpu(2)),
        "b": QueueSpec("b", deserved=cpu(4)),
    }
    queues.update(overrides)
    return list(queues.values())  # no root given: the scheduler creates it


JOB_A = JobUsage("a1", "team-a", cpu(2), ResourceList(), cpu(2), "Pending", 1, 0, "job-a")
JOB_B = JobUsage("a2", "team-a", cpu(4), cpu(4), cpu(1), "Running", 1, 4, "job-b")
JOB_C = JobUsage("b", "team-b", cpu(6), cpu(6), cpu(1), "Running", 1, 6, "job-c")


def compute(queues: list[QueueSpec] | None = None, jobs: list[JobUsage] | None = None) -> CapacityResult:
    return compute_capacity(
        queues or tree(), jobs if jobs is not None else [JOB_A, JOB_B, JOB_C], CLUSTER, hierarchy=True
    )


def test_root_queue_is_the_parent_of_all_queues() -> None:
    result = compute()
    assert result.ready_to_schedule, result.problems
    assert result.ancestors("a1") == ("root", "a")
    assert result.ancestors("b") == ("root",)
    # root's deserved and guarantee are its children's sums; its capability is unlimited unless set, so it
    # is not limited by the current cluster size
    assert result["root"].deserved == cpu(8)
    assert result["root"].real_capability.to_dict() == {}  # missing = unlimited
    assert result["a1"].real_capability.to_dict() == {}


def test_only_leaf_queues_hold_jobs() -> None:
    result = compute()
    verdict = result.allocatable("a", cpu(1))
    assert not verdict and verdict.reasons[0].check == "leaf"
    assert result.allocatable("a1", cpu(1))
    # a job submitted to the inner queue a stops scheduling altogether until the tree is fixed
    stray = JobUsage("a", "team-a", cpu(1), ResourceList(), name="stray")
    broken = compute(jobs=[JOB_A, JOB_B, JOB_C, stray])
    assert broken.problems == ("the queue a of job team-a/stray is not a leaf queue",)
    assert not broken.enqueueable(JOB_A)
    assert not broken.allocatable("a1", cpu(1))
    assert not broken.preemptive("a1", cpu(1))
    assert broken.reclaimable(TaskRef("t", "a1", cpu(1)), [TaskRef("v", "b", cpu(1))]).victims == ()


def test_status_is_updated_bottom_up() -> None:
    result = compute()
    assert result["a2"].allocated == cpu(4)
    assert result["a"].allocated == cpu(4) and result["a"].request == cpu(6)
    assert result["root"].allocated == cpu(10) and result["root"].request == cpu(12)
    assert result["a"].inqueue == ResourceList()
    result.on_enqueued(JOB_A)
    assert result["a1"].inqueue == cpu(2) and result["a"].inqueue == cpu(2) and result["root"].inqueue == cpu(2)
    result.on_dequeued(JOB_A)
    assert result["a1"].inqueue.to_dict() == {"cpu": 0} and result["root"].inqueue == ResourceList()
    result.on_enqueued(JOB_A)
    result.on_allocate("a1", cpu(1))
    assert result["a1"].allocated == cpu(1) and result["a"].allocated == cpu(5) and result["root"].allocated == cpu(11)
    assert result["a"].share == 5 / 4


def order_snapshot(capacity: Policy, b_deserved: int = 4) -> Snapshot:
    """The design's tree on one 12-cpu node: job B runs 4 pods in a2, job C 6 in b, so 2 cpu are free; a2 and b
    each have a pending 2-pod gang. Whichever queue the session serves first takes the 2 free cpu."""
    return snapshot(
        nodes=[node("n1", "12", "64Gi")],
        queues=[
            queue("a", deserved=rl("4")),
            queue("a1", parent="a", deserved=rl("2")),
            queue("a2", parent="a", deserved=rl("2")),
            queue("b", deserved=rl(str(b_deserved))),
        ],
        podgroups=[
            podgroup("team-a", "job-b", "a2", 1, phase=Q.RUNNING),
            podgroup("team-b", "job-c", "b", 1, phase=Q.RUNNING),
            podgroup("team-a", "more-a2", "a2", 2),
            podgroup("team-b", "more-b", "b", 2),
        ],
        pods=[
            *(running("team-a", f"b-{i}", "job-b", "n1", "1") for i in range(4)),
            *(running("team-b", f"c-{i}", "job-c", "n1", "1") for i in range(6)),
            *(pod("team-a", f"more-a2-{i}", "more-a2", "1") for i in range(2)),
            *(pod("team-b", f"more-b-{i}", "more-b", "1") for i in range(2)),
        ],
        policy=capacity,
    )


HIERARCHY = policy("allocate", ["gang", plugin("capacity", enableHierarchy=True)], ["predicates"])
FLAT = policy("allocate", ["gang", "capacity"], ["predicates"])


def test_queue_order_compares_children_of_the_lowest_common_ancestor() -> None:
    # a2's own share is 4/2 = 2.0 and b's is 6/4 = 1.5, but a2 is compared through a (4/4 = 1.0) against b
    result = run_session(order_snapshot(HIERARCHY), now=0.0)
    assert sorted(bound(result)) == ["team-a/more-a2-0", "team-a/more-a2-1"]
    # flat, the queues' own shares decide: b (1.5) before a2 (2.0)
    flat = run_session(order_snapshot(FLAT), now=0.0)
    assert sorted(bound(flat)) == ["team-b/more-b-0", "team-b/more-b-1"]


def test_a_tie_at_the_lowest_common_ancestor_is_a_tie() -> None:
    # b deserves 6: a (4/4) and b (6/6) tie at 1.0. Volcano stops there and the queues go by name, so a2 is
    # served first; comparing on below the tie would have put b (whose path ends there) first.
    snap = order_snapshot(HIERARCHY, b_deserved=6)
    result = run_session(snap, now=0.0)
    assert sorted(bound(result)) == ["team-a/more-a2-0", "team-a/more-a2-1"]
    book = compute_capacity(list(snap.queues.values()), [JOB_B, JOB_C], CLUSTER, hierarchy=True)
    assert book.compare_queues("a2", "b") == 0 and book.compare_queues("b", "a2") == 0
    # within a the leaves themselves are compared: a1 (nothing allocated) before a2
    assert book.compare_queues("a1", "a2") < 0
    assert book.sorted_queues(["b", "a2", "a1"]) == ["a1", "a2", "b"]


def test_job_a_reclaims_job_b_of_the_same_parent_before_job_c() -> None:
    result = compute()
    assert result.preemptive("a1", cpu(2))
    # victim order for a preemptor in a1: a2 (same parent a) before b (same parent root)
    assert result.victim_queue_order("a1", "a2", "b") < 0
    assert result.sorted_victim_queues("a1", ["b", "a2"]) == ["a2", "b"]
    task_b, task_c = TaskRef("b-0", "a2", cpu(2), job="job-b"), TaskRef("c-0", "b", cpu(2), job="job-c")
    ordered = sorted([task_c, task_b], key=lambda t: result.sorted_victim_queues("a1", ["b", "a2"]).index(t.queue))
    selection = result.reclaimable(TaskRef("a-0", "a1", cpu(2), job="job-a"), ordered)
    # both queues are above what they deserve, so both are victims; the reclaim action evicts in this order
    # and stops once job A fits, after B's task
    assert [t.name for t in selection.victims] == ["b-0", "c-0"]


def test_tree_rules_block_scheduling_when_broken() -> None:
    # the sum of a's children's deserved exceeds a's: the design asks the session to refuse, not misbehave
    broken = compute(tree(a1=QueueSpec("a1", parent="a", deserved=cpu(3))))
    assert broken.problems == ("sum of queue a's children's deserved cpu 5 exceeds its deserved 4",)
    assert not broken.ready_to_schedule
    verdict = broken.enqueueable(JOB_A)
    assert not verdict
    assert "queue tree is inconsistent" in str(verdict)
    # a child capability above its parent's
    capped = compute(
        tree(
            a=QueueSpec("a", deserved=cpu(4), capability=cpu(6)),
            a2=QueueSpec("a2", parent="a", deserved=cpu(2), capability=cpu(8)),
        )
    )
    assert capped.problems == ("queue a2 capability cpu 8 exceeds its parent a's 6",)


def test_children_inherit_capability_and_real_capability_flows_down() -> None:
    queues = tree(
        a=QueueSpec("a", deserved=cpu(4), capability=cpu(6), guarantee=cpu(2)),
        a1=QueueSpec("a1", parent="a", deserved=cpu(2), guarantee=cpu(1)),
    )
    result = compute(queues)
    assert result["a1"].capability == cpu(6)  # inherited from a
    # a: min((root unlimited - 2)+ + 2, 6) = 6; a1: min((6 - 1)+ + 1, 6) = 6; a2: min((6 - 1)+ + 0, 6) = 5
    assert (
        result["a"].real_capability["cpu"],
        result["a1"].real_capability["cpu"],
        result["a2"].real_capability["cpu"],
    ) == (6000, 6000, 5000)
    verdict = result.allocatable("a2", cpu(2))  # a2 holds 4 of its 5
    assert (
        str(verdict)
        == "queue a2 realCapability: insufficient cpu, requested 2, available 1 = 5 capability − 4 allocated"
    )
    # the ancestors are checked too: a holds 4 of its 6
    assert str(result.allocatable("a1", cpu(3))) == (
        "queue a realCapability: insufficient cpu, requested 3, available 2 = 6 capability − 4 allocated"
    )
