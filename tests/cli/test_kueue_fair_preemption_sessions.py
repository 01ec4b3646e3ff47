"""Kueue's Fair Sharing preemption table (``tests/unit/test_kueue_fair_preemption.py``: ``TestFairPreemptions`` of
kubernetes-sigs/kueue at commit ff69552, ``pkg/scheduler/preemption/preemption_fair_test.go``) run as whole
``fairway simulate`` sessions.

Each row becomes Kueue manifests: a Configuration with ``fairSharing`` (``enable: true`` and the row's strategies),
the ClusterQueues and Cohorts of the row (nominal cpu, ``fairSharing.weight``, parents; the preemptor's preemption
policy on every ClusterQueue, as the table gives every one of its ClusterQueues the same, except Kueue's
``preemptible``, which has none), one LocalQueue per ClusterQueue, a PriorityClass per priority, the admitted
workloads as Running pods on one node and the incoming workload as a pending pod. The node holds the whole tree's
nominal quota (what the cohort could ever run, and at least what runs), so the room a pod finds there is the room the
tree has: the session must evict exactly the set Kueue preempts and place the incoming pod, or, when Kueue preempts
nothing, evict nothing and leave it pending.

The rows whose set holds workloads of the preemptor's own ClusterQueue and of others (``MIXED``) need both in one
set: the reclaim action offers the plugin the queue's own pods with the others' (``Framework.reclaims_within_queue``)
and evicts the set whole. Those rows run through the live Celery session too
(``tests/scheduling/test_kueue_victims_live.py``).

The one row with two flavors of cpu (``TWO_FLAVORS``: a flavor selects nodes by labels) runs with the scheduler table's
manifests instead (``tests/cli/test_kueue_scheduler_table.py``: a ResourceFlavor and a node per flavor), its incoming
workload asking for its flavor by a node selector, as Kueue's table gives it that flavor.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from engine.fairshare.drs import FairNode, FairTree
from engine.fairshare.kueue_preemption import Candidate, fair_targets, find_candidates
from engine.objects import KueuePreemption
from tests.unit.test_kueue_fair_preemption import BASE, BASE_POLICY, CASES, CHEAP, CPU, PREMIUM, M

TWO_FLAVORS = "nominal first: workload fitting within nominal can preempt despite high aggregate DRS"
LEFT_OUT = {TWO_FLAVORS}  # run by ``test_the_two_flavor_row_as_a_session``
# the rows whose set mixes the preemptor's own workloads and other ClusterQueues'
MIXED = [
    "can preempt a combination of same CQ and highest user",
    "preempt from target and others even if over nominal",
]
BASE_SECOND = 30


def units_of(queue: str, *named: tuple[str, int]) -> list[tuple[str, str, float, int]]:
    """One-cpu workloads of ``queue``: (name, priority) each."""
    return [(n, queue, 1, p) for n, p in named]


def fair_set(spec: dict[str, Any]) -> set[str]:
    """What ``fair_targets`` preempts for the row on the numbers alone (nothing when the request does not fit)."""
    tree = FairTree(spec.get("nodes", BASE))
    admitted = []
    seconds = spec.get("seconds", {})
    for name, queue, cpu, priority in spec["admitted"]:
        usage = {CPU: int(cpu * M)}
        tree.add_usage(queue, usage)
        at = float(seconds.get(name, 0))
        admitted.append(Candidate(name, queue, usage, priority, admitted=at, created=at))
    queue, cpu, priority = spec["incoming"]
    request = {CPU: int(cpu * M)}
    candidates = find_candidates(tree, queue, request, admitted, spec.get("policy", BASE_POLICY), priority)
    targets, fits = fair_targets(tree, queue, request, candidates)
    return {c.name for c in targets} if fits else set()


def k8s(name: str) -> str:
    return name.replace("_", "-").lower()


def millis(value: int) -> str:
    return f"{value}m"


def weight(w: Fraction) -> str:
    """A weight as a Kubernetes quantity (``0.99`` as ``990m``)."""
    return str(w.numerator) if w.denominator == 1 else f"{int(w * 1000)}m"


def _policy(p: KueuePreemption) -> str:
    parts = [f"withinClusterQueue: {p.within_cluster_queue}", f"reclaimWithinCohort: {p.reclaim_within_cohort}"]
    if p.borrow_within_cohort == "LowerPriority":
        threshold = "" if p.max_priority_threshold is None else f", maxPriorityThreshold: {p.max_priority_threshold}"
        parts.append(f"borrowWithinCohort: {{policy: LowerPriority{threshold}}}")
    return "{" + ", ".join(parts) + "}"


def _groups(cpu: int) -> str:
    return (
        "[{coveredResources: [cpu], flavors: [{name: default, resources: "
        f"[{{name: cpu, nominalQuota: {millis(cpu)}}}]}}]}}]"
    )


def manifests(spec: dict[str, Any]) -> str:
    nodes: list[FairNode] = spec.get("nodes", BASE)
    policy: KueuePreemption = spec.get("policy", BASE_POLICY)
    strategies = spec.get("strategies") or ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    docs = [
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
        f"fairSharing: {{enable: true, preemptionStrategies: [{', '.join(strategies)}]}}",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}",
    ]
    capacity = 0
    for n in nodes:
        cpu = n.nominal.get(CPU, 0)
        capacity += cpu
        fair = f"fairSharing: {{weight: {weight(n.weight)}}}"
        if n.cohort:
            parts = [fair] + ([f"parentName: {k8s(n.parent)}"] if n.parent else [])
            if cpu:
                parts.append(f"resourceGroups: {_groups(cpu)}")
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {k8s(n.name)}}}\n"
                f"spec: {{{', '.join(parts)}}}"
            )
            continue
        cohort = f"cohortName: {k8s(n.parent)}, " if n.parent else ""
        # Kueue's table gives its "preemptible" ClusterQueue no preemption policy
        preemption = "" if n.name == "preemptible" else f"preemption: {_policy(policy)}, "
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {k8s(n.name)}}}\n"
            f"spec: {{{cohort}{preemption}{fair}, resourceGroups: {_groups(cpu)}}}"
        )
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {k8s(n.name)}}}\n"
            f"spec: {{clusterQueue: {k8s(n.name)}}}"
        )
    admitted = spec["admitted"]
    capacity = max(capacity, sum(int(cpu * M) for _, _, cpu, _ in admitted))
    docs.append(
        "apiVersion: v1\nkind: Node\nmetadata: {name: big}\n"
        f"status: {{allocatable: {{cpu: {millis(capacity)}, memory: 64Gi, pods: '110'}}}}"
    )
    queue, cpu, priority = spec["incoming"]
    priorities = {p for *_, p in admitted} | {priority}
    docs += [
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: p{p + 2000}}}\nvalue: {p}"
        for p in sorted(priorities)
    ]
    seconds = spec.get("seconds", {})
    for name, q, c, p in admitted:
        docs.append(pod(q, name, int(c * M), p, node="big", second=seconds.get(name, 0)))
    docs.append(pod(queue, "incoming", int(cpu * M), priority, second=max(seconds.values(), default=-1) + 1))
    return "".join(f"---\n{d}\n" for d in docs)


def pod(queue: str, name: str, cpu: int, priority: int, node: str | None = None, second: int = 0) -> str:
    """A workload created (and, admitted, started) ``second`` seconds after the base instant: every one at the same
    instant, as in Kueue's table, unless the row says otherwise."""
    placed = f"nodeName: {node}, " if node else ""
    stamp = f'"2026-01-01T00:00:{BASE_SECOND + second:02d}Z"'
    status = f"\nstatus: {{phase: Running, startTime: {stamp}}}" if node else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {k8s(name)}\n  namespace: {k8s(queue)}\n"
        f"  creationTimestamp: {stamp}\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n"
        f"spec: {{{placed}priorityClassName: p{priority + 2000}, containers: [{{name: c, resources: "
        f"{{requests: {{cpu: {millis(cpu)}}}}}}}]}}{status}"
    )


def run_session(tmp_path: Path, capsys: Any, spec: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    path = tmp_path / "in.yaml"
    path.write_text(manifests(spec))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    names = {k8s(name): name for name, *_ in spec["admitted"]}
    return {names[key.split("/", 1)[1]] for key in doc["evictions"]}, doc


def _incoming(spec: dict[str, Any]) -> str:
    return f"{k8s(spec['incoming'][0])}/incoming"


def test_the_mixed_rows_are_the_table_s_mixed_sets() -> None:
    """Every row named in ``MIXED`` needs victims of both kinds, and no other row of the table does."""
    mixed = set()
    for name, spec in CASES.items():
        queues = {n: q for n, q, *_ in spec["admitted"] if n in spec["want"]}
        own = spec["incoming"][0]
        if own in queues.values() and set(queues.values()) - {own}:
            mixed.add(name)
    assert mixed == set(MIXED)


@pytest.mark.parametrize("name", sorted(set(CASES) - set(LEFT_OUT)))
def test_the_fair_table_as_sessions(tmp_path: Path, capsys: Any, name: str) -> None:
    spec = CASES[name]
    evicted, doc = run_session(tmp_path, capsys, spec)
    assert evicted == spec["want"]
    placed = {**doc["bindings"], **doc["pipelined"]}
    if spec["want"]:  # Kueue admits the workload once the set is gone
        assert _incoming(spec) in placed
    else:
        assert _incoming(spec) not in placed


# Fairway's own rows (not Kueue's table), on Kueue's numbers: the set is one among the preemptor's own workloads and
# the others', by share, even when its own lower-priority workloads alone would make room. Here ``a`` would borrow
# 1 cpu with the request, ``b`` borrows 2: ``b`` is the target (its share is the higher) and, without b1, no higher
# than ``a``'s with the request, so Kueue preempts b1, not a's own a_low.
OWN: dict[str, dict[str, Any]] = {
    "the higher share is the target, not the preemptor's own lower priority": {
        "admitted": units_of("a", ("a_low", -1), ("a2", 0), ("a3", 0))
        + units_of("b", *((f"b{i}", 0) for i in range(1, 6)))
        + units_of("c", ("c1", 0)),
        "incoming": ("a", 1, 0),
        "want": {"b1"},
    },
    "the preemptor's own lower priority when nobody else borrows": {
        "admitted": units_of("a", ("a_low", -1), ("a2", 0), ("a3", 0))
        + units_of("b", *((f"b{i}", 0) for i in range(1, 4)))
        + units_of("c", *((f"c{i}", 0) for i in range(1, 4))),
        "incoming": ("a", 1, 0),
        "want": {"a_low"},
    },
}


@pytest.mark.parametrize("name", sorted(OWN))
def test_one_set_by_share_across_the_own_queue_and_the_others(tmp_path: Path, capsys: Any, name: str) -> None:
    spec = OWN[name]
    assert fair_set(spec) == spec["want"]  # Kueue's fair preemption on the numbers alone
    evicted, doc = run_session(tmp_path, capsys, spec)
    assert evicted == spec["want"]
    assert _incoming(spec) in {**doc["bindings"], **doc["pipelined"]}


def in_name_order(spec: dict[str, Any], want: set[str]) -> dict[str, Any]:
    """The row with its workloads admitted one second apart in name order, and the set Kueue then preempts: the live
    adapter dates a plain pod's workload when it first stores it, in name order, so Kueue's tie at one instant (by
    UID: b1 before b6) is not one it can carry."""
    names = sorted(name for name, *_ in spec["admitted"])
    return {**spec, "seconds": {name: i for i, name in enumerate(names)}, "want": want}


# The mixed rows and Fairway's own row above, admitted one second apart: the newest of equal priority goes first (b6
# rather than b1; a2_low, 1 cpu, before a1_low, 2 cpu: with b2's 3 cpu it frees the 4 asked); the live session
# takes these.
LIVE: dict[str, dict[str, Any]] = {
    "can preempt a combination of same CQ and highest user": in_name_order(
        CASES["can preempt a combination of same CQ and highest user"], {"a_low", "b6"}
    ),
    "preempt from target and others even if over nominal": in_name_order(
        CASES["preempt from target and others even if over nominal"], {"a2_low", "b2"}
    ),
    "the higher share is the target, not the preemptor's own lower priority": in_name_order(
        OWN["the higher share is the target, not the preemptor's own lower priority"], {"b5"}
    ),
}


@pytest.mark.parametrize("name", sorted(LIVE))
def test_the_rows_the_live_session_takes(tmp_path: Path, capsys: Any, name: str) -> None:
    spec = LIVE[name]
    assert fair_set(spec) == spec["want"]
    evicted, doc = run_session(tmp_path, capsys, spec)
    assert evicted == spec["want"]
    assert _incoming(spec) in {**doc["bindings"], **doc["pipelined"]}


def test_the_two_flavor_row_as_a_session(tmp_path: Path, capsys: Any) -> None:
    """a (3 cpu premium, 0 cheap) runs 2 premium and 5 cheap (borrowed from b: its dominant share is high); b (0
    premium, 6 cheap) borrows 1 premium. a's incoming 1 cpu on premium is within a's nominal premium quota, so fair
    sharing lets it take any candidate: b's premium workload, whatever the shares."""
    from tests.cli.test_kueue_clauses import FAIR_CONFIGURATION
    from tests.cli.test_kueue_scheduler_table import ANY, CQ, WL, Row
    from tests.cli.test_kueue_scheduler_table import manifests as table_manifests

    spec = CASES[TWO_FLAVORS]
    assert spec["want"] == {"b_prem1"} and spec["incoming"] == ("a", 1, 0, PREMIUM)
    queues = {
        "a": CQ("all", "cpu@premium=3,cpu@cheap=0", reclaim=ANY),
        "b": CQ("all", "cpu@premium=0,cpu@cheap=6", reclaim=ANY),
    }
    flavor_of = {PREMIUM: "premium", CHEAP: "cheap"}
    workloads = [
        WL(f"{queue}/{k8s(name)}", queue, f"cpu={cpu}", flavor=flavor_of[flavor])
        for name, queue, cpu, _, flavor in spec["admitted"]
    ]
    workloads.append(WL("a/incoming", "a", "cpu=1", second=1))
    text = table_manifests(Row(queues, tuple(workloads), {})) + FAIR_CONFIGURATION
    job = "spec: {parallelism: 1, template: {spec: {"
    assert text.count(job) == 1
    text = text.replace(job, job + "nodeSelector: {flavor: premium}, ")  # Kueue's table gives it premium
    path = tmp_path / "in.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["evictions"] == ["b/b--b-prem1"]
    assert doc["pipelined"] == {"a/a--incoming-0": "node-premium"}
    assert doc["podgroups"]["a/a--incoming"]["flavors"] == {"cpu": "premium"}
