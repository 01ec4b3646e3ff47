"""``fairway simulate`` with Kueue's Fair Sharing (a ``config.kueue.x-k8s.io`` Configuration with ``fairSharing``) and
the ClusterQueue preemption policies (issue 28 items 4 and 6): the ``kueuefair`` plugin and the evicting actions are
turned on by the input, and the admissions and preemptions come out as Kueue's.

The preemption scenarios are cases of Kueue's ``TestFairPreemptions`` (kubernetes-sigs/kueue at commit ff69552,
``pkg/scheduler/preemption/preemption_fair_test.go``, case names quoted) run as whole sessions: one 1-cpu node per cpu
of the cohort's quota, each admitted workload a Running pod on its own node, so that the pod Kueue preempts is the
one the session must evict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main

FLAVOR = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""
FAIR = """---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing:
  enable: true
"""
POLICY = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}"


def nodes(count: int) -> str:
    return "".join(
        f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i:02d}}}
status: {{allocatable: {{cpu: "1", memory: 8Gi, pods: "110"}}}}
"""
        for i in range(count)
    )


def cluster_queue(name: str, cpu: int, extra: str = "", cohort: str = "all") -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  cohortName: {cohort}
  {extra}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: {cpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: {name}}}
spec: {{clusterQueue: {name}}}
"""


PRIORITIES = "".join(
    f"""---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: p{value}}}
value: {value}
"""
    for value in (0, 1, 5, 10)
)


def pod(
    namespace: str, name: str, node: int | str | None = None, priority: int = 0, second: int = 0, cpu: int = 1
) -> str:
    """A pod labelled with its namespace's LocalQueue; its workload's priority is its PriorityClass's (``p<value>``,
    one of ``PRIORITIES``)."""
    placed = "" if node is None else f"nodeName: {node}, " if isinstance(node, str) else f"nodeName: n{node:02d}, "
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "2026-01-01T00:00:{second:02d}Z"
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {{{placed}priorityClassName: p{priority}, containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
{"status: {phase: Running}" if node is not None else ""}
"""


def running(placements: list[tuple[str, str]], priority: dict[str, int] | None = None) -> str:
    """Running pods, one per node in order: (namespace, name)."""
    return "".join(pod(ns, n, i, (priority or {}).get(n, 0)) for i, (ns, n) in enumerate(placements))


def simulate(tmp_path: Path, capsys: Any, text: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "in.yaml"
    path.write_text(PRIORITIES + text)
    code = main(["simulate", "-f", str(path), "-o", "json", *extra])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out else {}, out.err


def evicted(doc: dict[str, Any]) -> set[str]:
    return {key.split("/", 1)[1] for key in doc["evictions"]}


def placed(doc: dict[str, Any], namespace: str) -> int:
    return sum(1 for key in [*doc["bindings"], *doc["pipelined"]] if key.startswith(f"{namespace}/"))


BASE = nodes(9) + FLAVOR + cluster_queue("a", 3, POLICY) + cluster_queue("b", 3, POLICY) + cluster_queue("c", 3, POLICY)
USING_THE_MOST = running([("a", "a1"), ("a", "a2"), ("a", "a3"), *(("b", f"b{i}") for i in range(1, 6)), ("c", "c1")])


@pytest.mark.parametrize(
    ("case", "incoming", "want"),
    [
        ("reclaim nominal from user using the most", "c", {"b1"}),
        ("reclaim borrowable quota from user using the most", "a", {"b1"}),
    ],
)
def test_fair_preemption_cases_as_sessions(tmp_path: Path, capsys: Any, case: str, incoming: str, want: set[str]):
    code, doc, err = simulate(tmp_path, capsys, BASE + USING_THE_MOST + FAIR + pod(incoming, "incoming"))
    assert code == 0, err
    assert evicted(doc) == want, case
    assert doc["pipelined"] == {f"{incoming}/incoming": "n03"}
    assert "with Fair Sharing" in err


def test_cant_preempt_when_everyone_under_nominal(tmp_path: Path, capsys: Any) -> None:
    """TestFairPreemptions "can't preempt when everyone under nominal": nobody borrows, nothing is evicted."""
    at_nominal = running([(q, f"{q}{i}") for q in "abc" for i in (1, 2, 3)])
    code, doc, err = simulate(tmp_path, capsys, BASE + at_nominal + FAIR + pod("c", "incoming"))
    assert code == 0, err
    assert doc["evictions"] == []
    assert doc["podgroups"]["c/podgroup-incoming"]["phase"] == "Pending"


def test_fair_sharing_admits_by_dominant_resource_share(tmp_path: Path, capsys: Any) -> None:
    """Two ClusterQueues of nominal 2 and a lender of 4 share 6 nodes; a has fairSharing.weight 3. Once both are at
    their nominal quota, each next admission goes to the lower share with the workload admitted: a borrowing 1 is
    1000/8/3 = 41.7 against b's 125, then 83.3 against 125, so a takes both (4 and 2). Without fair sharing the
    capacity policy alternates (3 and 3). The shares are in the output, and the table's FAIRSHARE column."""
    text = (
        nodes(6)
        + FLAVOR
        + cluster_queue("a", 2, "fairSharing: {weight: 3}")
        + cluster_queue("b", 2)
        + cluster_queue("lender", 4)
        + "".join(pod("a", f"a{i}", second=i) for i in range(1, 5))
        + "".join(pod("b", f"b{i}", second=i) for i in range(1, 5))
    )
    code, doc, err = simulate(tmp_path, capsys, text + FAIR, "--sessions", "2")
    assert code == 0, err
    assert (placed(doc, "a"), placed(doc, "b")) == (4, 2)
    # the values of the second session's opening: a borrows 2 of the 8 cpu its cohort could lend, weight 3
    assert doc["queues"]["a"]["fairSharing"] == {
        "weightedShare": 84,
        "preciseShare": "83.333",
        "dominantResource": "cpu",
        "borrowing": True,
    }
    assert doc["queues"]["b"]["fairSharing"]["weightedShare"] == 0
    code, off, err = simulate(tmp_path, capsys, text, "--sessions", "2")
    assert code == 0, err
    assert (placed(off, "a"), placed(off, "b")) == (3, 3)
    assert "fairSharing" not in off["queues"]["a"]


def test_reclaim_within_cohort_without_fair_sharing(tmp_path: Path, capsys: Any) -> None:
    """Kueue's classical preemption: cqa (nominal 4, reclaimWithinCohort: Any) takes back the 4 cpu cqb (nominal 4)
    borrows; without a preemption policy (Kueue's default, Never) nothing is evicted and the policy is Fairway's Kueue
    default, unchanged."""
    head = nodes(8) + FLAVOR + cluster_queue("cqb", 4) + running([("cqb", f"b{i}") for i in range(8)])
    waiting = "".join(pod("cqa", f"a{i}") for i in range(4))
    code, doc, err = simulate(tmp_path, capsys, head + cluster_queue("cqa", 4, POLICY) + waiting)
    assert code == 0, err
    assert len(doc["evictions"]) == 4 and all(e.startswith("cqb/") for e in doc["evictions"])
    assert placed(doc, "cqa") == 4
    assert "kueuefair plugin enforces the ClusterQueues' preemption policies;" in err
    code, doc, err = simulate(tmp_path, capsys, head + cluster_queue("cqa", 4) + waiting)
    assert code == 0, err
    assert doc["evictions"] == [] and placed(doc, "cqa") == 0
    assert "kueuefair" not in err


def test_borrow_within_cohort_needs_lower_priority(tmp_path: Path, capsys: Any) -> None:
    """A ClusterQueue at its nominal quota that would borrow to admit more reclaims only with
    ``borrowWithinCohort: LowerPriority``, and then only workloads of a lower priority than the preemptor's, at most
    ``maxPriorityThreshold``."""
    head = nodes(4) + FLAVOR + cluster_queue("lender", 2)
    lent = running([("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")], {"b1": 5, "b2": 1})
    incoming = pod("a", "incoming", priority=10)
    never = cluster_queue("a", 2, "preemption: {reclaimWithinCohort: Any}") + cluster_queue("b", 0)
    code, doc, err = simulate(tmp_path, capsys, head + never + lent + incoming)
    assert code == 0, err
    assert doc["evictions"] == []
    lower = (
        "preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 3}}"
    )
    code, doc, err = simulate(
        tmp_path, capsys, head + cluster_queue("a", 2, lower) + cluster_queue("b", 0) + lent + incoming
    )
    assert code == 0, err
    assert evicted(doc) == {"b2"}  # b1's priority 5 is above the threshold


@pytest.mark.parametrize(
    ("policy", "low", "want"),
    [
        ("Never", True, set()),
        ("LowerPriority", True, {"old_low"}),
        ("LowerPriority", False, set()),
        ("LowerOrNewerEqualPriority", False, {"new_equal"}),
    ],
)
def test_within_cluster_queue(tmp_path: Path, capsys: Any, policy: str, low: bool, want: set[str]) -> None:
    """``withinClusterQueue``: Never (Kueue's default) evicts nothing; LowerPriority a strictly lower priority;
    LowerOrNewerEqualPriority also an equal priority created after the preemptor (the older equal one is kept)."""
    text = (
        nodes(3 if low else 2)
        + FLAVOR
        + cluster_queue("a", 3 if low else 2, f"preemption: {{withinClusterQueue: {policy}}}")
        + pod("a", "old_equal", 0, priority=5, second=0)
        + pod("a", "new_equal", 1, priority=5, second=30)
        + (pod("a", "old_low", 2, priority=1, second=0) if low else "")
        + pod("a", "incoming", priority=5, second=10)
    )
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0, err
    assert evicted(doc) == want


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("preemption: {reclaimWithinCohort: Sometimes}", "spec.preemption.reclaimWithinCohort: 'Sometimes' is not one"),
        ("preemption: {withinClusterQueue: Any}", "spec.preemption.withinClusterQueue: 'Any' is not one"),
        (
            "preemption: {borrowWithinCohort: {policy: LowerPriority}}",
            "spec.preemption.borrowWithinCohort.policy: LowerPriority needs reclaimWithinCohort",
        ),
        (
            "preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: x}}",
            "maxPriorityThreshold: 'x' is not an integer",
        ),
    ],
)
def test_bad_preemption_policies_are_refused(tmp_path: Path, capsys: Any, extra: str, message: str) -> None:
    code, _, err = simulate(tmp_path, capsys, FLAVOR + cluster_queue("a", 2, extra))
    assert code == 2
    assert "ClusterQueue a" in err and message in err


def test_bad_fair_sharing_strategies_are_refused(tmp_path: Path, capsys: Any) -> None:
    config = FAIR + "  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n"
    code, _, err = simulate(tmp_path, capsys, FLAVOR + cluster_queue("a", 2) + config)
    assert code == 2
    assert "Configuration" in err and "fairSharing.preemptionStrategies" in err and "is not one Kueue accepts" in err


def test_a_given_policy_without_the_plugin_is_warned_about(tmp_path: Path, capsys: Any) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('actions: "enqueue, allocate, reclaim"\ntiers:\n- plugins:\n  - name: capacity\n')
    code, _, err = simulate(tmp_path, capsys, FLAVOR + cluster_queue("a", 2, POLICY) + FAIR, "--policy", str(policy))
    assert code == 0, err
    assert "not enforced: the given policy does not name the kueuefair plugin" in err


def test_a_kueue_configuration_as_the_policy_file(tmp_path: Path, capsys: Any) -> None:
    """``--policy`` may be Kueue's Configuration: it is read with the manifests (fair sharing on), not as a
    scheduler policy."""
    config = tmp_path / "kueue-config.yaml"
    config.write_text(FAIR)
    code, doc, err = simulate(tmp_path, capsys, BASE + USING_THE_MOST + pod("c", "incoming"), "--policy", str(config))
    assert code == 0, err
    assert evicted(doc) == {"b1"}
    assert "with Fair Sharing" in err
    assert doc["queues"]["b"]["fairSharing"]["borrowing"] is True


def test_classical_preemption_with_hierarchical_advantage(tmp_path: Path, capsys: Any) -> None:
    """TestHierarchicalPreemptions "preempt with hierarchical advantage" as a session (fair sharing off): q (no quota
    of its own, reclaimWithinCohort: Any, borrowWithinCohort Never) sits in Cohort c (2 cpu) under r; q-borrowing,
    straight under r, runs 2 cpu of c's quota. The incoming 2 cpu fit c's quota, so Kueue takes them back although q
    borrows: q-borrowing's workload is evicted and the incoming one placed on its node."""
    group = "resourceGroups: [{coveredResources: [cpu], flavors: [{name: default-flavor, resources: [{name: cpu, "
    cohorts = "".join(
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\n"
        f"spec: {{{parent}{group}nominalQuota: {cpu}}}]}}]}}]}}\n"
        for name, parent, cpu in (("r", "", 0), ("c", "parentName: r, ", 2))
    )
    big = "---\napiVersion: v1\nkind: Node\nmetadata: {name: big}\nstatus: {allocatable: {cpu: '2', pods: '110'}}\n"
    text = (
        big
        + FLAVOR
        + cohorts
        + cluster_queue("q", 0, "preemption: {reclaimWithinCohort: Any}", cohort="c")
        + cluster_queue("q-borrowing", 0, cohort="r")
        + pod("q-borrowing", "admitted2", "big", cpu=2)
        + pod("q", "incoming", second=40, cpu=2)
    )
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0, err
    assert evicted(doc) == {"admitted2"}
    assert doc["pipelined"] == {"q/incoming": "big"}


def test_classical_preemption_reclaims_from_other_cluster_queues_before_its_own(tmp_path: Path, capsys: Any) -> None:
    """TestPreemption "reclaim quota from borrower" as a session (fair sharing off): c1 and c2 (6 cpu each,
    borrowingLimit 6) share one 12-cpu node; c1 runs c1-low (3 cpu, the lowest priority), c2 runs c2-mid (3) and
    c2-high (6), borrowing 3. The incoming 3 cpu of c1 (priority above c1-low's and c2-mid's) could take c1-low's place
    (withinClusterQueue: LowerPriority) or c2-mid's (reclaimWithinCohort: LowerPriority): Kueue tries the other
    ClusterQueues' candidates first and preempts c2-mid."""
    big = "---\napiVersion: v1\nkind: Node\nmetadata: {name: big}\nstatus: {allocatable: {cpu: '12', pods: '110'}}\n"
    limit = "nominalQuota: 6\n        borrowingLimit: 6"
    c1 = cluster_queue("c1", 6, "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority}")
    c2 = cluster_queue("c2", 6, "preemption: {withinClusterQueue: Never, reclaimWithinCohort: Any}")
    text = (
        big
        + FLAVOR
        + (c1 + c2).replace("nominalQuota: 6", limit)
        + pod("c1", "c1-low", "big", priority=0, cpu=3)
        + pod("c2", "c2-mid", "big", priority=1, cpu=3)
        + pod("c2", "c2-high", "big", priority=5, cpu=6)
        + pod("c1", "incoming", priority=5, second=30, cpu=3)
    )
    code, doc, err = simulate(tmp_path, capsys, text)
    assert code == 0, err
    assert evicted(doc) == {"c2-mid"}
    assert doc["pipelined"] == {"c1/incoming": "big"}
