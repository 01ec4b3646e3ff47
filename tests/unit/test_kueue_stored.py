"""Kueue's levers as the dashboard's trees store them (issue 28 item 9): a queue's ``kueue`` field
(``engine.kueuepolicy``) is checked with every problem at its place, the manifest readers keep what they read on the
queue's spec, and ``engine.manifests.kueuestored.with_stored_levers`` gives a snapshot read from stored trees the
same admission levers, preemption policies, weights, names and policy as ``fairway simulate`` gives the manifests."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.kueuepolicy import parse_kueue_policy
from engine.manifests import ManifestError, load_manifests
from engine.manifests.export import export_trees
from engine.manifests.kueue import KUEUE_POLICY
from engine.manifests.kueuelevers import FAIRWAY_KUEUE
from engine.manifests.kueuestored import read_stored_configuration, with_stored_levers
from engine.objects import QueueSpec, Snapshot
from engine.policy.policy import Policy
from engine.resources import ResourceList

TREE = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: root}
spec:
  cohortName: org
  queueingStrategy: StrictFIFO
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
  fairSharing: {weight: "0.75"}
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
    withinClusterQueue: LowerPriority
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohortName: org
  stopPolicy: HoldAndDrain
  fairSharing: {weight: "0.25"}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "4"}
"""
CONFIGURATION = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}
admissionFairSharing: {usageHalfLifeTime: 168h}
waitForPodsReady: {timeout: 10m}
"""


def _stored(simulated: Snapshot) -> Snapshot:
    """What the dashboard holds after an import of the same input: the queues' specs (the state is set by actions,
    not by an import: Open) and no side table, the cluster's scheduler policy Kueue's (capacity, hierarchical)."""
    queues = [dataclasses.replace(q, state="Open") for q in simulated.queues.values()]
    return Snapshot.build(queues=queues, policy=KUEUE_POLICY)


@pytest.mark.parametrize("configured", [True, False])
def test_the_stored_levers_give_the_snapshot_simulate_gives(configured: bool) -> None:
    text = TREE + ("---\n" + CONFIGURATION if configured else "")
    simulated = load_manifests([("in.yaml", text)]).snapshot
    live = with_stored_levers(_stored(simulated), read_stored_configuration(CONFIGURATION) if configured else None)
    assert live.kueue_preemption == simulated.kueue_preemption and live.kueue_preemption
    assert live.kueue_weights == simulated.kueue_weights and live.kueue_weights
    assert live.kueue_names == simulated.kueue_names and live.kueue_names
    for lever in ("strict_fifo", "draining", "held", "namespace_selectors", "fair_sharing", "fair_sharing_queues"):
        assert getattr(live.admission, lever) == getattr(simulated.admission, lever), lever
    assert live.admission.fair_sharing_queues == ({"root-clusterqueue"} if configured else set())
    assert {n: q.state for n, q in live.queues.items()} == {n: q.state for n, q in simulated.queues.items()}
    assert live.queues["team-b"].state == "Closed"
    assert live.policy.to_dict() == simulated.policy.to_dict()
    assert live.policy.plugins()[0].name == "kueuefair"


def test_a_tree_without_levers_is_the_snapshot_itself() -> None:
    snapshot = Snapshot.build(policy=KUEUE_POLICY)
    assert with_stored_levers(snapshot, None) is snapshot


def test_a_scheduler_policy_naming_kueuefair_is_used_as_written() -> None:
    simulated = load_manifests([("in.yaml", TREE)]).snapshot
    own = Policy.from_yaml(
        'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: kueuefair\n  - name: capacity\n'
    )
    assert with_stored_levers(_stored(simulated).replace(policy=own)).policy.to_dict() == own.to_dict()
    turned_on = with_stored_levers(_stored(simulated)).policy.to_dict()
    assert "preempt" in turned_on["actions"] and "reclaim" in turned_on["actions"]


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        ({"queueingStrategy": "LIFO"}, [("kueue.queueingStrategy", "'LIFO' is not one of BestEffortFIFO, StrictFIFO")]),
        ({"stopPolicy": "Drain"}, [("kueue.stopPolicy", "'Drain' is not one of None, Hold, HoldAndDrain")]),
        (
            {"preemption": {"reclaimWithinCohort": "Sometimes"}},
            [("kueue.preemption.reclaimWithinCohort", "'Sometimes' is not one of Never, LowerPriority, Any")],
        ),
        (
            {"preemption": {"borrowWithinCohort": {"policy": "LowerPriority"}}},
            [
                (
                    "kueue.preemption.borrowWithinCohort.policy",
                    "LowerPriority needs reclaimWithinCohort other than Never (Kueue refuses the ClusterQueue)",
                )
            ],
        ),
        (
            {"preemption": {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"maxPriorityThreshold": "high"}}},
            [("kueue.preemption.borrowWithinCohort.maxPriorityThreshold", "'high' is not a 32-bit integer")],
        ),
        (
            {"preemption": {"withinClusterQueue": "Always"}},
            [
                (
                    "kueue.preemption.withinClusterQueue",
                    "'Always' is not one of Never, LowerPriority, LowerOrNewerEqualPriority",
                )
            ],
        ),
        (
            {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In"}]}},
            [("kueue.namespaceSelector.matchExpressions.0.values", "operator In needs at least one value")],
        ),
        (
            {"admissionScope": {"admissionMode": "Usage"}},
            [
                (
                    "kueue.admissionScope.admissionMode",
                    "'Usage' is not one of UsageBasedAdmissionFairSharing, NoAdmissionFairSharing",
                )
            ],
        ),
        (
            {"fairSharing": {"weight": "-1"}},
            [("kueue.fairSharing.weight", "'-1' must be 0 or greater than 10^-9 (Kueue's bounds)")],
        ),
        (
            {"fairSharing": {"weight": "1e-10"}},
            [("kueue.fairSharing.weight", "'1e-10' must be 0 or greater than 10^-9 (Kueue's bounds)")],
        ),
        ({"kind": "LocalQueue"}, [("kueue.kind", "'LocalQueue' is not one of ClusterQueue, Cohort")]),
        (
            {"stopPolicies": "Hold"},
            [
                (
                    "kueue.stopPolicies",
                    "unknown field (known: kind, name, queueingStrategy, "
                    "stopPolicy, namespaceSelector, preemption, admissionScope, fairSharing, resourceGroups, "
                    "flavorFungibility)",
                )
            ],
        ),
        ("StrictFIFO", [("kueue", "expected an object, got 'StrictFIFO'")]),
        # Kueue's flavored resource groups and flavorFungibility (ResourceFlavors stored on the trees)
        (
            {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": ["Spot_1"]}]},
            [
                (
                    "kueue.resourceGroups.0.flavors.0",
                    "'Spot_1' is not a ResourceFlavor name (a DNS-1123 subdomain, e.g. spot)",
                )
            ],
        ),
        (
            {"resourceGroups": [{"coveredResources": ["cpu@spot"], "flavors": ["spot"]}]},
            [
                (
                    "kueue.resourceGroups.0.coveredResources.0",
                    "'cpu@spot': name the resource (cpu), not one of its flavors",
                )
            ],
        ),
        (
            {
                "resourceGroups": [
                    {"coveredResources": ["cpu"], "flavors": ["a"]},
                    {"coveredResources": ["cpu"], "flavors": ["b"]},
                ]
            },
            [("kueue.resourceGroups.1.coveredResources", "cpu is covered by an earlier resource group too")],
        ),
        (
            {"resourceGroups": [{"coveredResources": [], "flavors": ["a"]}]},
            [("kueue.resourceGroups.0.coveredResources", "expected a list of resource names, got []")],
        ),
        (
            {"flavorFungibility": {"whenCanBorrow": "Always"}},
            [("kueue.flavorFungibility.whenCanBorrow", "'Always' is not one of MayStopSearch, TryNextFlavor")],
        ),
    ],
)
def test_a_bad_lever_is_refused_at_its_place(value: Any, problems: list[tuple[str, str]]) -> None:
    parsed, found = parse_kueue_policy(value, "kueue")
    assert parsed is None
    assert [(p.field, p.message) for p in found] == problems


def test_a_lever_is_kept_normalized() -> None:
    value = {
        "queueingStrategy": "BestEffortFIFO",  # Kueue's default: left out
        "stopPolicy": "None",
        "fairSharing": {"weight": 0.5},
        "preemption": {"withinClusterQueue": "LowerPriority"},
        "namespaceSelector": {},
    }
    assert parse_kueue_policy(value) == (
        {"preemption": {"withinClusterQueue": "LowerPriority"}, "fairSharing": {"weight": "0.5"}},
        [],
    )
    assert parse_kueue_policy({"queueingStrategy": "BestEffortFIFO"}) == (None, [])


def test_a_bad_configuration_is_refused_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"kueue_configuration: .*waitForPodsReady.timeout"):
        read_stored_configuration(CONFIGURATION.replace("10m", "ten minutes"))
    with pytest.raises(ValueError, match="expected a Kueue Configuration"):
        read_stored_configuration("apiVersion: v1\nkind: ConfigMap\n")
    assert read_stored_configuration("  ") is None


def test_a_volcano_queue_carries_the_levers_in_an_annotation_through_export_and_simulate() -> None:
    levers = {
        "stopPolicy": "Hold",
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ml"}},
        "preemption": {"withinClusterQueue": "LowerPriority"},
        "queueingStrategy": "StrictFIFO",
    }
    queue = QueueSpec(name="ml", deserved=ResourceList({"cpu": 4000}), kueue=parse_kueue_policy(levers)[0])
    docs = export_trees(Snapshot.build(queues=[queue]), "volcano")
    text = yaml.safe_dump_all(docs, sort_keys=False)
    assert FAIRWAY_KUEUE in text
    read = load_manifests([("volcano.yaml", text)]).snapshot
    assert read.queues["ml"].kueue == queue.kueue and read.queues["ml"].state == "Closed"
    assert read.admission.strict_fifo == {"ml"} and read.admission.held == {"ml"}
    assert read.admission.selector_mismatch("ml", "other") is not None
    assert read.kueue_preemption["ml"].within_cluster_queue == "LowerPriority"
    assert read.policy.plugins()[0].name == "kueuefair"  # no scheduler policy given: Kueue's preemption enforced
    bad = text.replace('"LowerPriority"', '"Sometimes"')
    with pytest.raises(ManifestError, match=r"fairway.io/kueue\]\.preemption\.withinClusterQueue: 'Sometimes'"):
        load_manifests([("volcano.yaml", bad)])


def test_levers_made_again_follow_a_changed_field() -> None:
    """A what-if that clears a queue's levers (``planning.whatif.apply`` makes the levers again): they are gone."""
    live = with_stored_levers(_stored(load_manifests([("in.yaml", TREE)]).snapshot))
    assert live.kueue_preemption and "root-clusterqueue" in live.admission.strict_fifo
    cleared = live.with_queues([dataclasses.replace(live.queues["root-clusterqueue"], kueue=None)])
    again = with_stored_levers(cleared)
    assert not again.kueue_preemption and not again.admission.strict_fifo
    assert "root-clusterqueue" not in again.kueue_names and again.admission.draining == {"team-b"}
