"""Kueue's classical preemption table (``tests/unit/test_kueue_preemption_table.py``: ``TestPreemption`` and
``TestHierarchicalPreemptions`` of kubernetes-sigs/kueue at commit ff69552) run as whole ``fairway simulate`` sessions.

Each row of the table becomes Kueue manifests: its ClusterQueues (those of the preemptor's tree: nominal quota,
borrowing and lending limits, the three preemption policies), its Cohorts (with their quota and parents), one
LocalQueue per ClusterQueue, a PriorityClass per priority, the admitted workloads as Running pods on one node, and
the incoming workload as a pending pod. The node's capacity is the whole tree's nominal quota (what the cohort could
ever run), so that the room a pod finds on it is the room the tree has; the session must then evict exactly the set
Kueue preempts and place the incoming pod (or, when Kueue preempts nothing, evict nothing and leave it pending).

Names: Kubernetes names have no ``_``, so a name of the table is written with ``-`` (``a_standard`` is the
ClusterQueue ``a-standard``); the answers are compared in the table's spelling. Times: a workload's creation and
admission are one instant in a session (its pod's ``creationTimestamp`` and, for a Running pod, ``startTime``), the
table's ``admitted`` or ``created`` seconds after a base instant.

Rows the sessions cannot carry, and why (``LEFT_OUT``): the two of several flavors per resource (a flavor selects
nodes by labels: ``tests/unit/test_kueue_flavors.py`` covers those), and the rows whose request asks a resource the
tree has no quota for in the session's flavor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from tests.unit.test_kueue_preemption_table import CASES, HIERARCHICAL, QUEUES, Case, Q, W, amounts, run

LEFT_OUT = {
    "only preempt workloads using the chosen flavor": "two flavors of memory (alpha, beta) select nodes by labels",
    "each podset preempts a different flavor": "two flavors of memory (alpha, beta) select nodes by labels",
}
BASE_SECOND = 30  # the instant every workload is created and admitted at, unless the row says otherwise


def k8s(name: str) -> str:
    return name.replace("_", "-").lower()


def quantity(fr: tuple[str, str], value: int) -> str:
    """A table amount (cpu in millicores, memory in MiB) as a Kubernetes quantity."""
    return f"{value}m" if fr[1] == "cpu" else f"{value}Mi"


def resource_groups(nominal: str, borrow: str = "", lend: str = "", covered: tuple[str, ...] = ()) -> str:
    """A ``resourceGroups`` list of one group, flavor ``default``, covering ``covered`` (0 where not given)."""
    quota, borrowing, lending = amounts(nominal), amounts(borrow), amounts(lend)
    resources = []
    for r in covered:
        fr = ("default", r)
        parts = [f"name: {r}", f"nominalQuota: {quantity(fr, quota.get(fr, 0))}"]
        if fr in borrowing:
            parts.append(f"borrowingLimit: {quantity(fr, borrowing[fr])}")
        if fr in lending:
            parts.append(f"lendingLimit: {quantity(fr, lending[fr])}")
        resources.append("{" + ", ".join(parts) + "}")
    return f"[{{coveredResources: [{', '.join(covered)}], flavors: [{{name: default, resources: [{', '.join(resources)}]}}]}}]"


def preemption(q: Q) -> str:
    parts = [f"withinClusterQueue: {q.within}", f"reclaimWithinCohort: {q.reclaim}"]
    if q.threshold is not None:
        parts.append(f"borrowWithinCohort: {{policy: LowerPriority, maxPriorityThreshold: {q.threshold}}}")
    return "{" + ", ".join(parts) + "}"


def tree_members(spec: Case) -> tuple[dict[str, Q], dict[str, tuple[str | None, str]]]:
    """The ClusterQueues and Cohorts of the preemptor's tree (a ClusterQueue without a Cohort: itself alone)."""
    queues = dict(spec.queues) or QUEUES
    cohorts = {name: (parent, nominal) for name, parent, nominal in spec.cohorts}
    for q in queues.values():
        if q.cohort and q.cohort not in cohorts:
            cohorts[q.cohort] = (None, "")

    def top(node: str | None) -> str | None:
        while node is not None and cohorts[node][0] is not None:
            node = cohorts[node][0]
        return node

    root = top(queues[spec.queue].cohort)
    if root is None:
        return {spec.queue: queues[spec.queue]}, {}
    return (
        {n: q for n, q in queues.items() if q.cohort and top(q.cohort) == root},
        {n: c for n, c in cohorts.items() if top(n) == root},
    )


def manifests(spec: Case) -> str:
    queues, cohorts = tree_members(spec)
    used = {fr for w in spec.admitted for fr in amounts(w.request)} | set(amounts(spec.request))
    covered = tuple(sorted({r for _, r in used} | {"cpu"}))
    docs = ["apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}"]
    capacity: dict[str, int] = {r: 0 for r in covered}
    for name, (parent, nominal) in cohorts.items():
        spec_parts = [f"parentName: {k8s(parent)}"] if parent else []
        if nominal:
            spec_parts.append(f"resourceGroups: {resource_groups(nominal, covered=covered)}")
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {k8s(name)}}}\n"
            f"spec: {{{', '.join(spec_parts)}}}"
        )
        for (flavor, r), v in amounts(nominal).items():
            if flavor == "default" and r in capacity:
                capacity[r] += v
    for name, q in queues.items():
        cohort = f"cohortName: {k8s(q.cohort)}, " if q.cohort else ""
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {k8s(name)}}}\n"
            f"spec: {{{cohort}preemption: {preemption(q)}, "
            f"resourceGroups: {resource_groups(q.nominal, q.borrow, q.lend, covered)}}}"
        )
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {k8s(name)}}}\n"
            f"spec: {{clusterQueue: {k8s(name)}}}"
        )
        for (flavor, r), v in amounts(q.nominal).items():
            if flavor == "default" and r in capacity:
                capacity[r] += v
    for w in spec.admitted:  # a tree whose quota is all borrowed from outside still holds what runs
        for (_, r), v in amounts(w.request).items():
            capacity[r] = max(capacity[r], v)
    allocatable = ", ".join(f"{r}: {quantity(('default', r), max(v, 1))}" for r, v in capacity.items())
    docs.append(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: big}}\nstatus: {{allocatable: {{{allocatable}, pods: '110'}}}}"
    )
    priorities = {w.priority for w in spec.admitted} | {spec.priority}
    docs += [
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: p{p + 100}}}\nvalue: {p}"
        for p in sorted(priorities)
    ]
    for w in spec.admitted:
        second = BASE_SECOND + int(w.admitted or w.created)
        docs.append(pod(w.queue, w.name, w.request, w.priority, second, node="big"))
    docs.append(pod(spec.queue, "incoming", spec.request, spec.priority, BASE_SECOND + int(spec.created)))
    return "".join(f"---\n{d}\n" for d in docs)


def pod(queue: str, name: str, request: str, priority: int, second: int, node: str | None = None) -> str:
    total: dict[str, int] = {}
    for (_, r), v in amounts(request).items():
        total[r] = total.get(r, 0) + v
    requests = ", ".join(f"{r}: {quantity(('default', r), v)}" for r, v in total.items())
    placed = f"nodeName: {node}, " if node else ""
    status = f'\nstatus: {{phase: Running, startTime: "2026-01-01T00:00:{second:02d}Z"}}' if node else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {k8s(name)}\n  namespace: {k8s(queue)}\n"
        f'  creationTimestamp: "2026-01-01T00:00:{second:02d}Z"\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n'
        f"spec: {{{placed}priorityClassName: p{priority + 100}, containers: [{{name: c, resources: "
        f"{{requests: {{{requests}}}}}}}]}}{status}"
    )


def run_session(tmp_path: Path, capsys: Any, spec: Case) -> tuple[set[str], dict[str, Any]]:
    path = tmp_path / "in.yaml"
    path.write_text(manifests(spec))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    names = {k8s(w.name): w.name for w in spec.admitted}
    return {names[key.split("/", 1)[1]] for key in doc["evictions"]}, doc


ROWS = {**CASES, **HIERARCHICAL}


@pytest.mark.parametrize("name", sorted(set(ROWS) - set(LEFT_OUT)))
def test_the_table_as_sessions(tmp_path: Path, capsys: Any, name: str) -> None:
    spec = ROWS[name]
    evicted, doc = run_session(tmp_path, capsys, spec)
    assert evicted == spec.want
    incoming = f"{k8s(spec.queue)}/incoming"
    placed = {**doc["bindings"], **doc["pipelined"]}
    if spec.want:  # Kueue admits the workload once the set is gone
        assert incoming in placed


# Fairway's own rows (not Kueue's table): within one ClusterQueue the session evicts Kueue's minimal set, the lowest
# priorities taken first and every one the pod still fits without given back, which is not always the fewest
# workloads nor the least work lost (the whole-gang cover the preempt action would otherwise choose).
SOLO = (("solo", Q(None, "cpu=4", within="LowerPriority")),)
WITHIN: dict[str, Case] = {
    "within a ClusterQueue: the lowest priorities first, not the fewest workloads": Case(
        (W("a", "solo", "cpu=1", -2), W("b", "solo", "cpu=1", -1), W("c", "solo", "cpu=2", 0, admitted=20)),
        "solo",
        "cpu=2",
        1,
        frozenset({"a", "b"}),
        queues=SOLO,
    ),
    "within a ClusterQueue: the newest admitted first, not the least work lost": Case(
        # c, admitted first, has run the longest: alone it loses less work than a and b together
        (W("a", "solo", "cpu=1", 0, admitted=20), W("b", "solo", "cpu=1", 0, admitted=10), W("c", "solo", "cpu=2", 0)),
        "solo",
        "cpu=2",
        1,
        frozenset({"a", "b"}),
        queues=SOLO,
    ),
    "within a ClusterQueue: a victim the pod fits without is given back": Case(
        (W("a", "solo", "cpu=1", -2), W("b", "solo", "cpu=2", -1), W("c", "solo", "cpu=1", 0)),
        "solo",
        "cpu=2",
        1,
        frozenset({"b"}),
        queues=SOLO,
    ),
}


@pytest.mark.parametrize("name", sorted(WITHIN))
def test_within_a_cluster_queue_the_minimal_set(tmp_path: Path, capsys: Any, name: str) -> None:
    spec = WITHIN[name]
    assert run(spec) == spec.want  # Kueue's classical preemption on the numbers alone
    evicted, doc = run_session(tmp_path, capsys, spec)
    assert evicted == spec.want
    assert "solo/incoming" in {**doc["bindings"], **doc["pipelined"]}
