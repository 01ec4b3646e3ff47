"""A Kueue Cohort's or ClusterQueue's spec field Fairway does not read is named in a warning (issue 28: "the few
features not read are listed"), never dropped in silence; the fields it reads raise none."""

from __future__ import annotations

import yaml

from engine.manifests import load_manifests

READ = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a"},
    "spec": {
        "cohort": "all",
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "stopPolicy": "None",
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
        "fairSharing": {"weight": "2"},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 4}]}],
            }
        ],
    },
}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}}


def _warnings(*docs: dict[str, object]) -> list[str]:
    return load_manifests([("kueue.yaml", yaml.safe_dump_all([FLAVOR, *docs]))]).warnings


def test_the_fields_read_raise_no_warning() -> None:
    cohort = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort", "metadata": {"name": "all"}, "spec": {}}
    assert not [w for w in _warnings(READ, cohort) if "not read" in w]


def test_a_field_not_read_is_named_with_its_object() -> None:
    spec = {**READ["spec"], "admissionChecks": ["prov"], "concurrentAdmissionPolicy": {"mode": "Any"}}
    cohort = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Cohort",
        "metadata": {"name": "all"},
        "spec": {"futureField": 1},
    }
    found = [w for w in _warnings({**READ, "spec": spec}, cohort) if "not read" in w]
    assert len(found) == 2, found
    (queue,) = [w for w in found if "team-a" in w]
    assert queue.endswith("not read, left out: spec.admissionChecks, spec.concurrentAdmissionPolicy"), queue
    (top,) = [w for w in found if "futureField" in w]
    assert "Cohort" in top or "all" in top, top
