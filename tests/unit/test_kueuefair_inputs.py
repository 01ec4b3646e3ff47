"""Kueue's preemption policies and Fair Sharing as inputs (issue 28 items 4 and 6): the ClusterQueue reader, the
policy a Kueue input gets, the plugin's arguments, the export back to Kueue, the shares in the values and in a
queue's explain."""

from __future__ import annotations

import pytest
import yaml

from engine.changes import node_values
from engine.manifests import load_manifests
from engine.manifests.export import export_trees
from engine.manifests.kueue import KUEUE_POLICY
from engine.manifests.kueuefair import kueue_fair_policy
from engine.objects import KueuePreemption
from engine.policy.arguments import PolicyError
from engine.session.plugins.kueuefair.arguments import KUEUEFAIR, KueueFairArgs, read_kueuefair_args
from engine.values import compute_values
from planning.values_api import explain_queue

FLAVOR = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""


def cluster_queue(name: str, cpu: int, extra: str = "") -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  cohortName: all
  {extra}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: {cpu}
"""


def load(text: str):  # type: ignore[no-untyped-def]
    return load_manifests([("in.yaml", text)])


FULL = (
    "preemption: {reclaimWithinCohort: LowerPriority, withinClusterQueue: LowerOrNewerEqualPriority, "
    "borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}"
)


def test_the_preemption_policies_are_read_by_queue_identity() -> None:
    """A ClusterQueue named like a built-in keeps its policies under its queue identity."""
    result = load(FLAVOR + cluster_queue("default", 2, FULL) + cluster_queue("plain", 2))
    assert result.snapshot.kueue_preemption == {
        "default-clusterqueue": KueuePreemption("LowerPriority", "LowerPriority", 100, "LowerOrNewerEqualPriority")
    }


def test_no_policy_and_no_configuration_keep_fairways_kueue_policy() -> None:
    """Kueue's defaults evict nothing: the input without preemption policies or fairSharing runs the policy it ran
    before (the golden corpus's Kueue cases are unchanged), and so does one whose policies are all Never."""
    for extra in ("", "preemption: {reclaimWithinCohort: Never, withinClusterQueue: Never}"):
        assert load(FLAVOR + cluster_queue("a", 2, extra)).snapshot.policy == KUEUE_POLICY


def test_a_kueue_input_that_may_preempt_gets_the_plugin_and_the_evicting_actions() -> None:
    policy = load(FLAVOR + cluster_queue("a", 2, "preemption: {withinClusterQueue: LowerPriority}")).snapshot.policy
    # fair sharing off: Kueue's classical preemption tries the other ClusterQueues' workloads before its own
    assert policy.actions == ("enqueue", "allocate", "reclaim", "preempt", "backfill")
    assert policy.tiers[0][0].name == "kueuefair"
    for name in ("priority", "drf", "capacity"):
        option = policy.plugin(name)
        assert option is not None and not option.preemptable and not option.reclaimable, name
    capacity = policy.plugin("capacity")
    assert capacity is not None and capacity.hierarchy and not capacity.preemptive
    assert policy.whole_gangs("reclaim") and policy.whole_gangs("preempt")
    assert not policy.arguments_of(KUEUEFAIR).enable  # no Configuration: the policies alone


def test_the_configurations_fair_sharing_section_is_the_plugins_arguments() -> None:
    config = """---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing:
  enable: true
  preemptionStrategies: [LessThanInitialShare]
"""
    policy = load(FLAVOR + cluster_queue("a", 2) + config).snapshot.policy
    kueuefair = policy.plugin("kueuefair")
    assert kueuefair is not None
    assert dict(kueuefair.arguments) == {"enable": True, "preemptionStrategies": ["LessThanInitialShare"]}
    # with fair sharing too, reclaim chooses the one set from the ClusterQueue's own workloads and the others'
    assert policy.actions == ("enqueue", "allocate", "reclaim", "preempt", "backfill")
    # built again over a policy that already has the plugin: one entry, the new arguments
    again = kueue_fair_policy(policy, {"enable": False})
    assert [p.name for tier in again.tiers for p in tier].count("kueuefair") == 1
    assert dict(again.plugin("kueuefair").arguments) == {"enable": False}  # type: ignore[union-attr]
    assert again.actions == ("enqueue", "allocate", "reclaim", "preempt", "backfill")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"enable": "yes"}, "kueuefair: enable: expected true or false"),
        ({"preemptionStrategies": "LessThanInitialShare"}, "expected a list of strategy names"),
        ({"preemptionStrategies": ["LessThanInitialShare", "LessThanInitialShare"]}, "is not one Kueue accepts"),
        ({"weight": 2}, "unknown argument 'weight'"),
    ],
)
def test_bad_arguments_are_refused(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        read_kueuefair_args(arguments)


def test_arguments_defaults() -> None:
    assert read_kueuefair_args(None) == KueueFairArgs(False, ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
    assert read_kueuefair_args({"preemptionStrategies": []}).strategies == KueueFairArgs().strategies


def test_the_export_writes_the_policies_back() -> None:
    snapshot = load(FLAVOR + cluster_queue("default", 2, FULL) + cluster_queue("plain", 2)).snapshot
    docs = {d["metadata"]["name"]: d for d in export_trees(snapshot, "kueue") if d["kind"] == "ClusterQueue"}
    assert docs["default"]["spec"]["preemption"] == {
        "reclaimWithinCohort": "LowerPriority",
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
        "withinClusterQueue": "LowerOrNewerEqualPriority",
    }
    assert "preemption" not in docs["plain"]["spec"]
    again = load(yaml.safe_dump_all(export_trees(snapshot, "kueue"))).snapshot
    assert again.kueue_preemption == snapshot.kueue_preemption


def test_the_values_and_a_queues_explain_carry_the_share() -> None:
    """With fair sharing on, the values hold each node's dominant resource share (the trees' ``values`` too, as
    ``fair_share``), and a ClusterQueue's explain ends with it: a borrows 3 of the 10 cpu its cohort could lend (Kueue's "usage above nominal" numbers, cpu only)."""
    pods = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: a, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
spec: {{nodeName: n, containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
status: {{phase: Running}}
"""
        for i in range(5)
    )
    text = (
        FLAVOR
        + cluster_queue("a", 2)
        + cluster_queue("lender", 8)
        + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: a}
spec: {clusterQueue: a}
---
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "16", memory: 8Gi, pods: "110"}}
---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true}
"""
        + pods
    )
    snapshot = load(text).snapshot
    values = compute_values(snapshot, snapshot.policy)
    assert values.fair_shares["a"].rounded() == 300
    assert values.fair_shares["lender"].rounded() == 0
    step = explain_queue(values, "a")[-1]
    assert step["quantity"] == "fairSharing" and step["value"] == 300
    assert step["detail"] == "cpu: 3 above its quota x 1000 / 10 its parent could lend / weight 1 = 300"
    assert node_values(values)["queues"]["a"]["fair_share"] == 300  # the trees' and explain's values
    off = compute_values(snapshot, KUEUE_POLICY)
    assert off.fair_shares == {}
    assert "fair_share" not in node_values(off)["queues"]["a"]
    assert all(s["quantity"] != "fairSharing" for s in explain_queue(off, "a"))
