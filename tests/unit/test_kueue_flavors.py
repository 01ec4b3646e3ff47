"""Kueue's ResourceFlavors: several flavors per resource (``engine.flavors``, issue 28 item 7).

The assignment cases are Kueue's own, numbers only, from ``pkg/scheduler/flavorassigner/flavorassigner_test.go``
(``TestAssignFlavors``, ``TestIsPreferred``) of kubernetes-sigs/kueue at ``ff69552e79ad`` (2026-08-22), each built
as manifests (ResourceFlavors labelled ``type: <flavor>``, one node per flavor, the ClusterQueue's usage as Running
pods on the flavor's node, of a lower priority than the incoming workload) and given to ``assign_flavors``. Where
Kueue's test fakes its preemption oracle to answer "there are workloads to preempt", the ClusterQueue here has a
preemption policy that finds them (``withinClusterQueue: LowerPriority``): Fairway simulates the preemption, as
Kueue's scheduler does with its real oracle; without a policy, the simulation finds none.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from engine.fairshare.drs import kueue_tree
from engine.flavors import (
    _FIT,
    _NO_CANDIDATES,
    _NO_FIT,
    _PREEMPT,
    _RECLAIM,
    _Mode,
    _preferred,
    assign_flavors,
    unflavored,
)
from engine.manifests import ManifestError, load_manifests
from engine.manifests.export import export_trees, job_manifests
from engine.objects import FlavorFungibility, NodeSelectorRequirement, Snapshot
from engine.resources import format_amount, resource_label
from engine.simulate import render_table, simulate

KUEUE = "kueue.x-k8s.io/v1beta2"


@dataclass
class Case:
    """One of Kueue's flavor assignment cases: the ClusterQueue's flavors in order (flavor -> quota row), its usage
    per flavor (cpus), a second ClusterQueue of the cohort (flavor -> nominal quota), the request (cpus), and the
    flavor Kueue gives with the flavors it tries (flavor, outcome)."""

    flavors: dict[str, dict[str, str]]
    request: str
    want: str | None
    tried: list[tuple[str, str]]
    usage: dict[str, int] = field(default_factory=dict)
    secondary: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)  # flavorFungibility, preemption
    taints: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # flavor -> its nodeTaints
    pod: dict[str, Any] = field(default_factory=dict)  # the pending pod's nodeSelector / tolerations


def flavor_docs(names: list[str], taints: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name in names:
        spec: dict[str, Any] = {"nodeLabels": {"type": name}}
        if name in taints:
            spec["nodeTaints"] = taints[name]
        docs.append({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec})
        node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{name}", "labels": {"type": name}},
            "status": {"allocatable": {"cpu": "100", "memory": "100Gi", "pods": "110"}},
        }
        if name in taints:
            node["spec"] = {"taints": taints[name]}
        docs.append(node)
    return docs


def cluster_queue(name: str, flavors: dict[str, dict[str, str]], cohort: bool, spec: dict[str, Any]) -> dict[str, Any]:
    rows = [{"name": f, "resources": [{"name": "cpu", **quota}]} for f, quota in flavors.items()]
    out: dict[str, Any] = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": rows}]}
    if cohort:
        out["cohortName"] = "test-cohort"
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {**out, **spec}}


def pod(name: str, cpu: str | int, node: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}],
        **(extra or {}),
    }
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": spec,
    }
    if node is not None:
        spec["nodeName"] = node
        doc["status"] = {"phase": "Running"}
    return doc


def manifests(case: Case) -> str:
    names = list(dict.fromkeys([*case.flavors, *case.secondary]))
    docs = flavor_docs(names, case.taints)
    cohort = bool(case.secondary)
    docs.append(cluster_queue("test-clusterqueue", case.flavors, cohort, case.spec))
    if case.secondary:
        rows = {f: {"nominalQuota": q} for f, q in case.secondary.items()}
        docs.append(cluster_queue("test-secondary-clusterqueue", rows, True, {}))
    docs.append(
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ns"},
            "spec": {"clusterQueue": "test-clusterqueue"},
        }
    )
    docs.append(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -1}
    )
    # the workloads the usage stands for are of a lower priority: what Kueue's fake oracle says preemption finds
    docs += [pod(f"used-{f}", cpus, f"node-{f}", {"priorityClassName": "low"}) for f, cpus in case.usage.items()]
    docs.append(pod("wl", case.request, extra=case.pod))
    return yaml.safe_dump_all(docs)


def snapshot_of(text: str) -> Snapshot:
    return load_manifests([("case.yaml", text)]).snapshot


def affinity(terms: list[list[tuple[str, str, list[str]]]]) -> dict[str, Any]:
    """A pod spec's required node affinity: terms (ORed) of (key, operator, values) expressions (ANDed)."""
    rows = [{"matchExpressions": [{"key": k, "operator": o, "values": v} for k, o, v in term]} for term in terms]
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": rows}}}
    }


TRY_NEXT = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
STOP = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
PREEMPTS = {"preemption": {"withinClusterQueue": "LowerPriority"}}
SPOT_TAINT = [{"key": "instance", "value": "spot", "effect": "NoSchedule"}]

CASES: dict[str, Case] = {
    "multiple flavors, fits while skipping tainted flavor": Case(
        flavors={"tainted": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="3",
        want="two",
        tried=[("tainted", "does not match"), ("two", "fits")],
        taints={"tainted": SPOT_TAINT},
    ),
    "single flavor, fits tainted flavor with toleration": Case(  # a second flavor: several flavors of cpu
        flavors={"tainted": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="3",
        want="tainted",
        tried=[("tainted", "fits")],
        taints={"tainted": SPOT_TAINT},
        pod={"tolerations": [{"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}]},
    ),
    "multiple flavors, fits a node selector": Case(
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="two",
        tried=[("one", "does not match"), ("two", "fits")],
        pod={"nodeSelector": {"type": "two"}},
    ),
    "multiple flavors, fits with node affinity": Case(  # a selector key no flavor labels is left out
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="two",
        tried=[("one", "does not match"), ("two", "fits")],
        pod={"nodeSelector": {"ignored1": "foo"}, **affinity([[("type", "In", ["two"])]])},
    ),
    "multiple flavors, node affinity fits any flavor": Case(  # the first term has no key a flavor labels
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="one",
        tried=[("one", "fits")],
        pod=affinity([[("ignored2", "In", ["bar"])], [("cpuType", "In", ["two"])]]),
    ),
    "multiple flavors, doesn't fit node affinity": Case(
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="one",  # no flavor matches: held on the group's first, so that the session says what is missing
        tried=[("one", "does not match"), ("two", "does not match")],
        pod=affinity([[("type", "In", ["three"])]]),
    ),
    "single flavor, used resources, doesn't fit": Case(
        flavors={"default": {"nominalQuota": "4"}, "two": {"nominalQuota": "0"}},
        usage={"default": 3},
        request="2",
        want="default",  # no flavor fits: the first that matches, so that the session says what is missing
        tried=[("default", "would need a preemption its ClusterQueue may not make"), ("two", "does not fit")],
    ),
    "preempt before try next flavor": Case(
        flavors={"one": {"nominalQuota": "10"}, "two": {"nominalQuota": "10"}},
        usage={"one": 2},
        request="9",
        want="one",
        tried=[("one", "fits by preempting")],
        spec={"flavorFungibility": STOP, **PREEMPTS},
    ),
    "preempt try next flavor": Case(
        flavors={"one": {"nominalQuota": "10"}, "two": {"nominalQuota": "10"}},
        usage={"one": 2},
        request="9",
        want="two",
        tried=[("one", "fits by preempting"), ("two", "fits")],
        spec=PREEMPTS,
    ),
    "borrow try next flavor, found the first flavor": Case(
        flavors={"one": {"nominalQuota": "10", "borrowingLimit": "1"}, "two": {"nominalQuota": "1"}},
        usage={"one": 2},
        secondary={"one": "1"},
        request="9",
        want="one",
        tried=[("one", "fits by borrowing"), ("two", "does not fit")],
        spec={"flavorFungibility": TRY_NEXT},
    ),
    "borrow try next flavor, found the second flavor": Case(
        flavors={"one": {"nominalQuota": "10", "borrowingLimit": "1"}, "two": {"nominalQuota": "10"}},
        usage={"one": 2},
        secondary={"one": "1"},
        request="9",
        want="two",
        tried=[("one", "fits by borrowing"), ("two", "fits")],
        spec={"flavorFungibility": TRY_NEXT},
    ),
    "borrow before try next flavor": Case(
        flavors={"one": {"nominalQuota": "10", "borrowingLimit": "1"}, "two": {"nominalQuota": "10"}},
        usage={"one": 2},
        secondary={"one": "1"},
        request="9",
        want="one",
        tried=[("one", "fits by borrowing")],
    ),
    "borrow before try next flavor; deprecated Borrow": Case(
        flavors={"one": {"nominalQuota": "10", "borrowingLimit": "1"}, "two": {"nominalQuota": "10"}},
        usage={"one": 2},
        secondary={"one": "1"},
        request="9",
        want="one",
        tried=[("one", "fits by borrowing")],
        spec={"flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}},
    ),
    "when borrowing while preemption is needed for flavor one; WhenCanBorrow=TryNextFlavor": Case(
        flavors={"one": {"nominalQuota": "0", "borrowingLimit": "12"}, "two": {"nominalQuota": "12"}},
        secondary={"one": "12"},
        request="12",
        want="two",
        tried=[("one", "fits by borrowing"), ("two", "fits")],
        spec={
            "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"},
            "preemption": {"reclaimWithinCohort": "LowerPriority", "borrowWithinCohort": {"policy": "LowerPriority"}},
        },
    ),
    "when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch": Case(
        flavors={"one": {"nominalQuota": "0", "borrowingLimit": "12"}, "two": {"nominalQuota": "12"}},
        secondary={"one": "12"},
        request="12",
        want="one",
        tried=[("one", "fits by borrowing")],
        spec={
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
            "preemption": {"reclaimWithinCohort": "LowerPriority", "borrowWithinCohort": {"policy": "LowerPriority"}},
        },
    ),
    "lend try next flavor, found the second flavor": Case(
        flavors={
            "one": {"nominalQuota": "10", "lendingLimit": "1"},
            "two": {"nominalQuota": "10", "lendingLimit": "0"},
        },
        usage={"one": 2},
        secondary={"one": "1"},
        request="9",
        want="two",
        tried=[("one", "fits by borrowing"), ("two", "fits")],
        spec={"flavorFungibility": TRY_NEXT},
    ),
    "not enough space to borrow": Case(  # a second flavor: several flavors of cpu
        flavors={"one": {"nominalQuota": "1"}, "two": {"nominalQuota": "1"}},
        secondary={"one": "10"},
        request="12",
        want="one",  # none fits: the first that matches, so that the session says what is missing
        tried=[("one", "does not fit"), ("two", "does not fit")],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kueue_flavor_assignment_cases(name: str) -> None:
    case = CASES[name]
    snap = snapshot_of(manifests(case))
    _, choices = assign_flavors(snap)
    choice = choices["ns/podgroup-wl"]
    assert [(t.flavor, t.outcome) for t in choice.tries] == case.tried
    assert dict(choice.flavors) == ({"cpu": case.want} if case.want else {})


def test_the_chosen_flavor_rewrites_the_pods_and_counts_for_the_next_workload() -> None:
    """Two workloads of 3 cpus on flavors one (4) and two (4): the first takes one, whose 1 cpu left does not hold
    the second (no preemption policy: no candidates), which takes two; the pods ask for ``cpu@<flavor>`` and get the
    flavor's tolerations."""
    case = Case(
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="3",
        want="one",
        tried=[],
        taints={"two": SPOT_TAINT},
    )
    text = manifests(case).replace(
        "type: two\n  nodeTaints", "type: two\n  tolerations:\n  - {key: instance, operator: Exists}\n  nodeTaints"
    )
    docs = list(yaml.safe_load_all(text))
    second = pod("wl2", 3)
    second["metadata"]["creationTimestamp"] = "2030-01-01T00:00:00Z"
    snap = snapshot_of(yaml.safe_dump_all([*docs, second]))
    after, choices = assign_flavors(snap)
    assert choices["ns/podgroup-wl"].flavors == {"cpu": "one"}
    assert choices["ns/podgroup-wl2"].flavors == {"cpu": "two"}
    task = after.tasks["ns/wl2"]
    assert dict(task.request) == {"cpu@two": 3000}
    assert [(t.key, t.operator) for t in task.tolerations] == [("instance", "Exists")]
    assert snap.nodes["node-one"].allocatable["cpu@one"] == 100_000 and "cpu" not in snap.nodes["node-one"].allocatable
    # given again in the next session, a flavor's tolerations are taken back before the new ones are added
    again, _ = assign_flavors(after)
    assert again.tasks["ns/wl2"].tolerations == task.tolerations


# Kueue's TestIsPreferred, its modes as (preemption, borrowing level)
PREFERRED = [
    ((_FIT, 0), (_PREEMPT, 0), {}, True),
    ((_PREEMPT, 1), (_FIT, 2), {"preference": "BorrowingOverPreemption"}, False),
    ((_PREEMPT, 1), (_FIT, 2), {"preference": "PreemptionOverBorrowing"}, True),
    ((_PREEMPT, 1), (_FIT, 1), {"preference": "PreemptionOverBorrowing"}, False),
    ((_NO_CANDIDATES, 1), (_FIT, 2), {"preference": "PreemptionOverBorrowing"}, False),
    ((_FIT, 2), (_NO_CANDIDATES, 1), {"preference": "PreemptionOverBorrowing"}, True),
    ((_NO_CANDIDATES, 1), (_NO_FIT, 0), {}, True),
    ((_NO_FIT, 0), (_NO_CANDIDATES, 1), {}, False),
    ((_NO_CANDIDATES, 1), (_NO_CANDIDATES, 2), {"preference": "PreemptionOverBorrowing"}, True),
    ((_NO_CANDIDATES, 2), (_NO_CANDIDATES, 1), {"preference": "PreemptionOverBorrowing"}, False),
    # Fairway's own rows: reclaiming in the Cohort is better than preempting by priority in the ClusterQueue
    # (Kueue's ``reclaim`` above ``preempt``), below a fit, at any borrowing level with PreemptionOverBorrowing
    ((_RECLAIM, 0), (_PREEMPT, 0), {}, True),
    ((_PREEMPT, 0), (_RECLAIM, 0), {}, False),
    ((_RECLAIM, 0), (_FIT, 0), {}, False),
    ((_RECLAIM, 1), (_PREEMPT, 0), {"preference": "PreemptionOverBorrowing"}, False),
]


@pytest.mark.parametrize(("a", "b", "config", "want"), PREFERRED)
def test_kueue_is_preferred(a: tuple[int, int], b: tuple[int, int], config: dict[str, str], want: bool) -> None:
    assert _preferred(_Mode(*a), _Mode(*b), FlavorFungibility(**config)) is want


def test_flavor_fungibility_is_read_and_checked() -> None:
    case = CASES["borrow before try next flavor"]
    text = manifests(case)
    snap = snapshot_of(
        text.replace(
            "namespaceSelector: {}",
            "namespaceSelector: {}\n  flavorFungibility: {preference: PreemptionOverBorrowing}",
            1,
        )
    )
    assert snap.kueue_flavors is not None
    assert snap.kueue_flavors.fungibility["test-clusterqueue"] == FlavorFungibility(
        preference="PreemptionOverBorrowing"
    )
    bad = text.replace(
        "namespaceSelector: {}", "namespaceSelector: {}\n  flavorFungibility: {whenCanBorrow: Sometimes}", 1
    )
    with pytest.raises(ManifestError) as err:
        snapshot_of(bad)
    assert (
        "spec.flavorFungibility.whenCanBorrow: 'Sometimes' is not one of MayStopSearch, Borrow, TryNextFlavor"
        in str(err.value)
    )


def test_one_flavor_per_resource_reads_as_before() -> None:
    """A resource in one flavor keeps its plain name: no flavors, nodes and queues as they were."""
    case = Case(flavors={"one": {"nominalQuota": "4"}}, request="1", want=None, tried=[])
    snap = snapshot_of(manifests(case))
    assert snap.kueue_flavors is None
    assert dict(snap.queues["test-clusterqueue"].deserved) == {"cpu": 4000}
    assert snap.nodes["node-one"].allocatable["cpu"] == 100_000


def test_simulate_shows_quota_usage_and_the_flavor_per_workload() -> None:
    case = CASES["preempt try next flavor"]
    snap = snapshot_of(manifests(case))
    result = simulate(snap)
    doc = json.loads(json.dumps(result.document))
    queue = doc["queues"]["test-clusterqueue"]
    assert queue["deserved"] == {"cpu@one": "10", "cpu@two": "10"}
    assert queue["allocated"] == {"cpu@one": "2", "cpu@two": "9"}
    entry = doc["podgroups"]["ns/podgroup-wl"]
    assert entry["flavors"] == {"cpu": "two"}
    assert entry["flavorAssignment"] == (
        "flavor two for cpu (tried one: fits by preempting (9 cores of cpu asked, 8 cores unused); two: fits)"
    )
    assert doc["bindings"]["ns/wl"] == "node-two"
    table = render_table(result.document)
    assert "cpu (one)=10,cpu (two)=10" in table
    assert "ns/podgroup-wl        cpu two  flavor two for cpu (tried one: fits by preempting" in table


def test_resource_keys_read_in_their_unit() -> None:
    assert resource_label("memory@spot") == "memory (spot)"
    assert format_amount(2**31, "memory@spot") == "2Gi"
    assert format_amount(1500, "nvidia.com/gpu@a100") == "1.5"


def test_kueue_export_writes_the_flavors_back() -> None:
    case = CASES["lend try next flavor, found the second flavor"]
    case = Case(**{**case.__dict__, "spec": {"flavorFungibility": TRY_NEXT}, "taints": {"two": SPOT_TAINT}})
    snap = snapshot_of(manifests(case))
    docs = export_trees(snap, "kueue")
    flavors = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "ResourceFlavor"}
    assert flavors["two"] == {
        "nodeLabels": {"type": "two"},
        "nodeTaints": [{"key": "instance", "value": "spot", "effect": "NoSchedule"}],
    }
    cq = next(d for d in docs if d["metadata"]["name"] == "test-clusterqueue")
    assert cq["spec"]["resourceGroups"] == [
        {
            "coveredResources": ["cpu"],
            "flavors": [
                {"name": "one", "resources": [{"name": "cpu", "nominalQuota": "10", "lendingLimit": "1"}]},
                {"name": "two", "resources": [{"name": "cpu", "nominalQuota": "10", "lendingLimit": "0"}]},
            ],
        }
    ]
    assert cq["spec"]["flavorFungibility"]["whenCanBorrow"] == "TryNextFlavor"
    nodes = [d for d in yaml.safe_load_all(manifests(case)) if d["kind"] in ("Node", "Pod", "LocalQueue")]
    back = snapshot_of(yaml.safe_dump_all([*docs, *nodes]))
    assert back.queues["test-clusterqueue"].deserved == snap.queues["test-clusterqueue"].deserved
    assert back.queues["test-secondary-clusterqueue"].deserved == snap.queues["test-secondary-clusterqueue"].deserved
    assert back.kueue_flavors == snap.kueue_flavors


def test_a_share_sums_the_flavors_of_a_resource() -> None:
    """Kueue's dominant resource share counts a resource over its flavors: cq1 borrows 3 cpus of flavor one and 2 of
    two; its cohort could lend 10 + 10: a share of 5 * 1000 / 20 = 250 on cpu."""
    case = Case(
        flavors={"one": {"nominalQuota": "5"}, "two": {"nominalQuota": "5"}},
        secondary={"one": "5", "two": "5"},
        request="1",
        want=None,
        tried=[],
    )
    snap = snapshot_of(manifests(case))
    tree = kueue_tree(snap, {"test-clusterqueue": {"cpu@one": 8000, "cpu@two": 7000}})
    share = tree.share("test-clusterqueue")
    assert (share.ratio, share.resource, share.borrowed, share.lendable) == (250, "cpu", 5000, 20000)


def test_unflavored_adds_the_flavors_up_for_a_store_of_one_flavor() -> None:
    """The Kubernetes adapter's rows keep one flavor per resource: a resource's flavors are added up."""
    snap = snapshot_of(manifests(CASES["preempt try next flavor"]))
    plain = unflavored(snap)
    assert plain.kueue_flavors is None
    assert dict(plain.queues["test-clusterqueue"].deserved) == {"cpu": 20_000}
    assert plain.nodes["node-one"].allocatable["cpu"] == 100_000
    assert dict(plain.tasks["ns/used-one"].request) == {"cpu": 2000}


def test_flavors_without_labels_and_bad_flavor_fields_are_named() -> None:
    case = CASES["preempt try next flavor"]
    text = (
        manifests(case).replace("nodeLabels:\n    type: one\n", "{}\n").replace("nodeLabels:\n    type: two\n", "{}\n")
    )
    result = load_manifests([("case.yaml", text)])
    assert (
        "flavors one, two of cpu have no nodeLabels: a node serves one flavor of a resource, so the nodes that match "
        "no labelled flavor serve one, and a workload given two finds no node for its cpu (give each flavor node "
        "labels)"
    ) in result.warnings
    bad = manifests(CASES["multiple flavors, fits while skipping tainted flavor"]).replace("NoSchedule", "Sometimes", 1)
    with pytest.raises(ManifestError) as err:
        snapshot_of(bad)
    assert "(ResourceFlavor tainted): spec.nodeTaints[0].effect: 'Sometimes' is not one of NoSchedule" in str(err.value)


def test_kueue_scheduler_not_enough_to_borrow_falls_back_to_the_next_flavor() -> None:
    """Kueue's ``scheduler_test.go`` "not enough resources to borrow, fallback to next flavor": cohort eng of
    eng-alpha (on-demand 50, borrowing limit 50; spot 100, borrowing limit 0) and eng-beta (on-demand 50, borrowing
    limit 10; spot 0, borrowing limit 100), eng-beta using 45 on-demand; a workload of 60 one-cpu pods in eng-alpha
    could reach 100 on-demand but finds 55 unused and may not preempt beyond its nominal 50: it is given spot, and
    its 60 pods run on the spot nodes."""

    def queue(name: str, rows: dict[str, tuple[str, str]], extra: dict[str, Any]) -> dict[str, Any]:
        flavors = {f: {"nominalQuota": n, "borrowingLimit": b} for f, (n, b) in rows.items()}
        return {**cluster_queue(name, flavors, True, extra), "metadata": {"name": name}}

    docs = flavor_docs(["on-demand", "spot"], {})
    docs = [d for d in docs if d["kind"] != "Node"]
    docs += [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"{kind}-{i}", "labels": {"type": kind}},
            "status": {"allocatable": {"cpu": "50", "pods": "110"}},
        }
        for kind in ("on-demand", "spot")
        for i in range(2)
    ]
    docs.append(queue("eng-alpha", {"on-demand": ("50", "50"), "spot": ("100", "0")}, {}))
    beta = {"preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}}
    docs.append(queue("eng-beta", {"on-demand": ("50", "10"), "spot": ("0", "100")}, beta))
    for ns, cq in (("eng-alpha", "eng-alpha"), ("eng-beta", "eng-beta")):
        docs.append(
            {
                "apiVersion": KUEUE,
                "kind": "LocalQueue",
                "metadata": {"name": "main", "namespace": ns},
                "spec": {"clusterQueue": cq},
            }
        )
    existing = pod("existing", 45, "on-demand-0")
    existing["metadata"].update(namespace="eng-beta", labels={"kueue.x-k8s.io/queue-name": "main"})
    docs.append(existing)
    docs.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "new", "namespace": "eng-alpha", "labels": {"kueue.x-k8s.io/queue-name": "main"}},
            "spec": {
                "parallelism": 60,
                "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
            },
        }
    )
    snap = snapshot_of(yaml.safe_dump_all(docs))
    doc = json.loads(json.dumps(simulate(snap).document))
    entry = doc["podgroups"]["eng-alpha/new"]
    assert entry["flavors"] == {"cpu": "spot"}
    assert entry["flavorAssignment"] == (
        "flavor spot for cpu (tried on-demand: does not fit (60 cores of cpu asked, 55 cores unused); spot: fits)"
    )
    placed = [node for p, node in doc["bindings"].items() if p.startswith("eng-alpha/new-")]
    assert len(placed) == 60 and {n.split("-")[0] for n in placed} == {"spot"}
    assert doc["queues"]["eng-alpha"]["allocated"] == {"cpu@spot": "60"}


def test_a_workload_no_flavor_fits_is_held_on_one_and_waits() -> None:
    """No flavor matches (an untolerated taint on both): the workload is held on the first flavor, whose nodes it
    cannot use, and waits, as Kueue leaves it without an assignment; the sentence says so."""
    case = Case(
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="one",
        tried=[],
        taints={"one": SPOT_TAINT, "two": SPOT_TAINT},
    )
    snap = snapshot_of(manifests(case))
    doc = json.loads(json.dumps(simulate(snap).document))
    entry = doc["podgroups"]["ns/podgroup-wl"]
    assert entry["phase"] == "Pending" and entry["flavors"] == {"cpu": "one"}
    assert entry["flavorAssignment"] == (
        "no flavor fits: held on flavor one for cpu (tried one: does not match (untolerated taint "
        "instance=spot:NoSchedule); two: does not match (untolerated taint instance=spot:NoSchedule))"
    )
    assert "ns/wl" not in doc["bindings"]


@pytest.mark.parametrize("when_can_preempt", ["MayStopSearch", "TryNextFlavor"])
def test_preemption_within_the_cluster_queue_on_the_chosen_flavor(when_can_preempt: str) -> None:
    """``withinClusterQueue: LowerPriority``: flavor one (2 cpus) is full of a low-priority workload; the incoming one
    (priority 5) fits there by preempting. With ``whenCanPreempt: MayStopSearch`` that stops the search, so the
    ``kueuefair`` plugin evicts the low one from flavor one, though flavor two (2 cpus) is free; with
    ``TryNextFlavor`` (Kueue's default) it is given two and nothing is evicted."""
    case = Case(
        flavors={"one": {"nominalQuota": "2"}, "two": {"nominalQuota": "2"}},
        secondary={"one": "0", "two": "0"},  # a cohort, as Kueue's preemption tests have
        request="2",
        want="one",
        tried=[],
        spec={
            "flavorFungibility": {"whenCanPreempt": when_can_preempt},
            "preemption": {"withinClusterQueue": "LowerPriority"},
        },
    )
    docs = list(yaml.safe_load_all(manifests(case)))
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "wl":
            d["spec"]["priorityClassName"] = "p5"
            d["metadata"]["creationTimestamp"] = "2026-01-01T00:00:10Z"
        if d["kind"] == "Node":  # the nodes as large as the flavors' quota, as in Kueue's preemption tests
            d["status"]["allocatable"]["cpu"] = "2"
    low = pod("low", 2, "node-one")
    low["spec"]["priorityClassName"] = "p1"
    low["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
        for v in (1, 5)
    ]
    snap = snapshot_of(yaml.safe_dump_all([*classes, *docs, low]))
    doc = json.loads(json.dumps(simulate(snap, sessions=2).document))
    if when_can_preempt == "MayStopSearch":
        assert doc["podgroups"]["ns/podgroup-wl"]["flavors"] == {"cpu": "one"}
        assert doc["evictions"] == ["ns/low"]
        assert doc["pipelined"] == {"ns/wl": "node-one"}  # on the node the eviction frees
    else:
        assert doc["podgroups"]["ns/podgroup-wl"]["flavors"] == {"cpu": "two"}
        assert doc["evictions"] == []
        assert doc["bindings"] == {"ns/wl": "node-two"}


def _borrowers(fair: bool) -> str:
    """ClusterQueue ``test-clusterqueue`` (nominal 0 in flavor one, ``reclaimWithinCohort: Any``) in a Cohort with
    ``borrower`` (nominal 0, running 4 cpus of flavor one) and ``lender`` (nominal 4); the incoming workload asks 2."""
    docs = flavor_docs(["one", "two"], {})
    none = {"nominalQuota": "0"}
    docs.append(cluster_queue("test-clusterqueue", {"one": none, "two": none}, True, {
        "preemption": {"reclaimWithinCohort": "Any"}}))  # fmt: skip
    docs.append(cluster_queue("borrower", {"one": none, "two": none}, True, {}))
    docs.append(cluster_queue("lender", {"one": {"nominalQuota": "4"}, "two": none}, True, {}))
    for ns, cq in (("ns", "test-clusterqueue"), ("other", "borrower")):
        docs.append({"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
                     "spec": {"clusterQueue": cq}})  # fmt: skip
    running = pod("big", 4, "node-one")
    running["metadata"]["namespace"] = "other"
    docs += [running, pod("wl", 2)]
    if fair:
        docs.append({"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
                     "fairSharing": {"enable": True}})  # fmt: skip
    return yaml.safe_dump_all(docs)


@pytest.mark.parametrize("fair", [False, True])
def test_a_flavor_above_the_nominal_quota_looks_for_victims_with_fair_sharing(fair: bool) -> None:
    """Kueue's ``canPreemptWhileBorrowing``: above its nominal quota, a ClusterQueue looks for victims with
    ``borrowWithinCohort`` or, with fair sharing, ``reclaimWithinCohort``. Flavor two has no quota anywhere. Without
    fair sharing flavor one does not fit either (the workload is held there and waits); with it, the simulated preemption finds the borrower's workload (its
    share, 4 cpus borrowed, above the incoming one's, 2): it fits by reclaiming, and the session evicts it."""
    snap = snapshot_of(_borrowers(fair))
    _, choices = assign_flavors(snap)
    choice = choices["ns/podgroup-wl"]
    if fair:
        tried = [("one", "fits by reclaiming from other ClusterQueues"), ("two", "does not fit")]
        assert [(t.flavor, t.outcome) for t in choice.tries] == tried
        assert choice.held == ()
        doc = json.loads(json.dumps(simulate(snap).document))
        assert doc["evictions"] == ["other/big"]
        assert doc["pipelined"] == {"ns/wl": "node-one"}
    else:
        assert [(t.flavor, t.outcome) for t in choice.tries] == [("one", "does not fit"), ("two", "does not fit")]
        assert choice.held == ("one",)


@pytest.mark.parametrize(
    ("operator", "values", "labels", "want"),
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("In", ["a"], {"k": "b"}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["b"], {"k": "b"}, False),
        ("Exists", [], {"k": ""}, True),
        ("Exists", [], {}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["4"], {"k": "5"}, True),
        ("Gt", ["5"], {"k": "5"}, False),
        ("Gt", ["4"], {"k": "five"}, False),
        ("Lt", ["-1"], {"k": "-2"}, True),
        ("Lt", ["4"], {}, False),
    ],
)
def test_node_selector_requirement_reads_as_kubernetes(
    operator: str, values: list[str], labels: dict[str, str], want: bool
) -> None:
    assert NodeSelectorRequirement("k", operator, tuple(values)).matches(labels) is want


def test_a_flavor_is_checked_against_each_term_of_the_required_node_affinity() -> None:
    """Terms are ORed, expressions ANDed, and only the keys the flavor labels count (Kueue's ``flavorSelector``):
    ``NotIn [one]`` excludes flavor one, ``zone`` (no flavor labels it) is left out."""
    case = Case(
        flavors={"one": {"nominalQuota": "4"}, "two": {"nominalQuota": "4"}},
        request="1",
        want="two",
        tried=[],
        pod=affinity([[("type", "NotIn", ["one"]), ("zone", "In", ["z1"])]]),
    )
    _, choices = assign_flavors(snapshot_of(manifests(case)))
    choice = choices["ns/podgroup-wl"]
    assert [(t.flavor, t.outcome, t.reason) for t in choice.tries] == [
        ("one", "does not match", "required node affinity excludes it"),
        ("two", "fits", ""),
    ]
    assert dict(choice.flavors) == {"cpu": "two"}


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ({"key": "k", "operator": "Near", "values": ["a"]}, "matchExpressions[0].operator: 'Near' is not one of"),
        ({"key": "k", "operator": "In"}, "matchExpressions[0].values: must be non-empty with operator In"),
        ({"key": "k", "operator": "Exists", "values": ["a"]}, "values: must be empty with operator Exists"),
        ({"key": "k", "operator": "Gt", "values": ["1.5"]}, "values: operator Gt takes one integer"),
        ({"operator": "Exists"}, "nodeSelectorTerms[0].matchExpressions[0].key: missing"),
    ],
)
def test_a_bad_node_affinity_is_refused_naming_the_field(expression: dict[str, Any], message: str) -> None:
    spec = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]
            }
        }
    }
    case = Case(flavors={"one": {"nominalQuota": "4"}}, request="1", want="one", tried=[], pod={"affinity": spec})
    with pytest.raises(ManifestError, match=re.escape(message)):
        snapshot_of(manifests(case))


def test_export_writes_the_required_node_affinity_back() -> None:
    pod_spec = affinity([[("type", "In", ["two"])], [("gpu", "Exists", [])]])
    case = Case(flavors={"one": {"nominalQuota": "4"}}, request="1", want="one", tried=[], pod=pod_spec)
    snap = snapshot_of(manifests(case))
    task = snap.tasks["ns/wl"]
    again = snapshot_of(yaml.safe_dump_all(job_manifests(snap.podgroups[task.podgroup], [task], None)))
    assert again.tasks["ns/wl"].node_affinity == task.node_affinity != ()
