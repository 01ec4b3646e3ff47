"""Kueue's scheduler table as whole ``fairway simulate`` sessions: the cases of ``TestSchedule``
(kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7, ``pkg/scheduler/scheduler_test.go``; each
row named after Kueue's case), numbers only: the ClusterQueues (nominal quota, borrowing and lending limits per
flavor, the preemption policies, ``flavorFungibility``), the Cohorts, the admitted workloads (ClusterQueue, flavor,
requests, priority), the pending ones, and what Kueue's scheduling cycle does: which pending workloads it admits and
on which flavor, which it leaves waiting, which admitted ones it preempts.

How a row becomes a session: each flavor is a ResourceFlavor with the node label ``flavor: <name>`` and one node of
that label whose capacity is the flavor's whole nominal quota in the row (Kueue counts quota only: the nodes never
hold a workload back); an admitted workload is a Running pod on its flavor's node, a pending one a ``batch/v1`` Job of
``count`` pods labelled with its ClusterQueue's LocalQueue. The answers: a pending workload is admitted when all its
pods are bound or pipelined, on the flavor of their node; the evicted pods name the preempted workloads.

Kueue's cycle admits at most one workload per ClusterQueue and leaves a preemptor waiting for its victims to go; a
session evicts and pipelines the preemptor at once (its pods wait on the node), so for a row whose preemptor Kueue
leaves waiting the session's answer is the victims and the preemptor pipelined.

Out of scope, and left out for that reason: topology-aware scheduling, MultiKueue, admission checks (the check-state
cases), workload slices, preemption gates, and the cases about the scheduler's own bookkeeping (requeue reasons,
events, error paths, integer overflow). The two LimitRange cases (a container above the range's max, requests above
limits) run in ``tests/kube/test_limit_ranges.py``, beside Kueue's integration table. Partial admission with one pod
set is in (a Job's ``kueue.x-k8s.io/job-min-parallelism``; ``counts``: the pods admitted). The workloads of several
pod sets are in (``PS``): a pending one is a JobSet of one replicated job per pod set, each pod set given its own
flavor (docs/simulate.md, "Kueue's workloads of several pod sets"), the answer each pod set's flavors; an admitted one
is a Running pod per pod set on its flavor's node. Not expressible here: the partial admission cases of several
variable pod sets (Fairway's partial admission is a Job's, one pod set) and the namespace selector (``failed to match
clusterQueue selector``: Fairway reads ``namespaceSelector`` but the rows build no namespaces), and ``multiple
preemptions skip preemption when shared limited resource``, whose ClusterQueues set ``borrowWithinCohort`` with
``reclaimWithinCohort: Never``, which Kueue's webhook (and Fairway's reader) refuses.

``KNOWN``: rows where the session differs from Kueue, each with the reason; they are run and must still differ (strict
expected failures), so a fix shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main

LP, ANY, NEVER = "LowerPriority", "Any", "Never"


@dataclass(frozen=True)
class CQ:
    """A ClusterQueue: its Cohort; its quota ``resource@flavor=nominal[/borrowingLimit[/lendingLimit]]`` per entry,
    comma-separated, in the flavors' order (an empty limit: none); the preemption policies (``borrow``: the
    ``borrowWithinCohort`` policy, with ``threshold`` its ``maxPriorityThreshold``); ``flavorFungibility``."""

    cohort: str | None
    quota: str
    within: str = NEVER
    reclaim: str = NEVER
    borrow: str = NEVER
    threshold: int | None = None
    when_can_borrow: str = ""
    when_can_preempt: str = ""
    preference: str = ""
    weight: str = ""  # ``fairSharing.weight`` (a quantity), none when ''


@dataclass(frozen=True)
class PS:
    """One pod set of a workload of several: its name, one pod's request (as ``WL.request``), its pods, and the
    flavor it is admitted on (an admitted workload's)."""

    name: str
    request: str
    count: int = 1
    flavor: str = ""


@dataclass(frozen=True)
class WL:
    """A workload (Kueue's ``namespace/name``): its ClusterQueue, one pod's request (``resource=amount``, cpu in
    cores), ``count`` pods, priority, creation (seconds, under an hour); ``flavor`` set: admitted there (one pod with the total)."""

    name: str
    queue: str
    request: str
    count: int = 1
    priority: int = 0
    flavor: str = ""
    second: int = 0
    min_count: int = 0  # partial admission: ``kueue.x-k8s.io/job-min-parallelism`` (0: none)
    # a workload of several pod sets (its ``request`` and ``count`` unused): pending, a JobSet of one replicated job
    # per pod set (``count`` Jobs of one pod); admitted (each with its ``flavor``), one Running pod per pod set
    pod_sets: tuple[PS, ...] = ()


@dataclass(frozen=True)
class Row:
    queues: dict[str, CQ]
    workloads: tuple[WL, ...]
    # pending workload -> the flavor Kueue admits it on; for one of several pod sets, each pod set's flavors
    # (``one: cpu=on-demand, example.com/gpu=model-a; two: cpu=spot``: ``pod_set_flavors``)
    admitted: dict[str, str]
    preempted: frozenset[str] = frozenset()
    cohorts: tuple[tuple[str, str | None, str], ...] = ()  # name, parent, quota (same notation)
    pipelined: frozenset[str] = frozenset()  # preemptors Kueue leaves waiting for their victims
    counts: dict[str, int] = field(default_factory=dict)  # partial admission: the pods Kueue admits (or pipelines)
    # flavor -> flavor: the first's resources on the second's node, the first's ResourceFlavor labelled as the second
    # (a pod asking for a resource in each finds a node: Kueue counts quota only)
    hosts: dict[str, str] = field(default_factory=dict)


# The ClusterQueues every case shares (TestSchedule's ``clusterQueues``; ``sales`` has the flavor ``default``).
BASE: dict[str, CQ] = {
    "sales": CQ(None, "cpu@default=50/0"),
    "eng-alpha": CQ("eng", "cpu@on-demand=50/50,cpu@spot=100/0"),
    "eng-beta": CQ("eng", "cpu@on-demand=50/10,cpu@spot=0/100,example.com/gpu@model-a=20/0", LP, ANY),
    "lend-a": CQ("lend", "cpu@default=3//2"),
    "lend-b": CQ("lend", "cpu@default=2//2"),
}


# TestSchedule's tainted flavors (``key=<value>:NoSchedule``; no workload of the table tolerates them)
TAINTS = {"spot-tainted": "val", "spot-tainted-2": "val2"}
GPU = "example.com/gpu"  # the table's bare ``gpu`` as an extended resource name


def with_base(**extra: CQ) -> dict[str, CQ]:
    return {**BASE, **extra}


def quota_entries(text: str) -> list[tuple[str, str, str, str, str]]:
    """(resource, flavor, nominal, borrowingLimit, lendingLimit) per entry, limits '' when not given."""
    out = []
    for part in filter(None, text.split(",")):
        key, value = part.split("=")
        resource, flavor = key.split("@")
        nominal, borrow, lend = [*value.split("/"), "", ""][:3]
        out.append((resource, flavor, nominal, borrow, lend))
    return out


def resource_groups(text: str) -> str:
    """One resource group per resource, its flavors in the order given."""
    by_resource: dict[str, list[tuple[str, str, str, str]]] = {}
    for resource, flavor, nominal, borrow, lend in quota_entries(text):
        by_resource.setdefault(resource, []).append((flavor, nominal, borrow, lend))
    groups = []
    for resource, flavors in by_resource.items():
        listed = []
        for flavor, nominal, borrow, lend in flavors:
            parts = [f"name: {resource}", f"nominalQuota: '{nominal}'"]
            parts += [f"borrowingLimit: '{borrow}'"] if borrow else []
            parts += [f"lendingLimit: '{lend}'"] if lend else []
            listed.append(f"{{name: {flavor}, resources: [{{{', '.join(parts)}}}]}}")
        groups.append(f"{{coveredResources: [{resource}], flavors: [{', '.join(listed)}]}}")
    return f"[{', '.join(groups)}]"


def cluster_queue(name: str, q: CQ) -> str:
    spec = [f"cohortName: {q.cohort}"] if q.cohort else []
    if q.weight:
        spec.append(f"fairSharing: {{weight: '{q.weight}'}}")
    preemption = [f"withinClusterQueue: {q.within}", f"reclaimWithinCohort: {q.reclaim}"]
    if q.borrow != NEVER:
        threshold = "" if q.threshold is None else f", maxPriorityThreshold: {q.threshold}"
        preemption.append(f"borrowWithinCohort: {{policy: {q.borrow}{threshold}}}")
    spec.append(f"preemption: {{{', '.join(preemption)}}}")
    fungibility = [f"whenCanBorrow: {q.when_can_borrow}"] if q.when_can_borrow else []
    fungibility += [f"whenCanPreempt: {q.when_can_preempt}"] if q.when_can_preempt else []
    fungibility += [f"preference: {q.preference}"] if q.preference else []
    if fungibility:
        spec.append(f"flavorFungibility: {{{', '.join(fungibility)}}}")
    spec.append(f"resourceGroups: {resource_groups(q.quota)}")
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec: {{{', '.join(spec)}}}"
        f"\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: {name}}}\n"
        f"spec: {{clusterQueue: {name}}}"
    )


def amount(resource: str, value: str) -> int:
    """A quota or request in the unit the node is written in (cpu in millicores)."""
    return round(float(value) * 1000) if resource == "cpu" else int(value)


def quantity(resource: str, value: int) -> str:
    return f"{value}m" if resource == "cpu" else str(value)


def pod_name(workload: str) -> str:
    return workload.replace("/", "--").lower()


def manifests(row: Row) -> str:
    docs: list[str] = []
    capacity: dict[str, dict[str, int]] = {}  # flavor -> resource -> nominal quota in the row
    for text in [q.quota for q in row.queues.values()] + [quota for _, _, quota in row.cohorts]:
        for resource, flavor, nominal, _, _ in quota_entries(text):
            per = capacity.setdefault(flavor, {})
            per[resource] = per.get(resource, 0) + amount(resource, nominal)
    on_node: dict[str, dict[str, int]] = {}  # each node's flavor -> resource -> capacity
    for flavor, per in sorted(capacity.items()):
        host = row.hosts.get(flavor, flavor)
        taint = TAINTS.get(flavor)
        taints = f", nodeTaints: [{{key: key, value: {taint}, effect: NoSchedule}}]" if taint else ""
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {flavor}}}\n"
            f"spec: {{nodeLabels: {{flavor: {host}}}{taints}}}"
        )
        on_node.setdefault(host, {}).update(per)
    for flavor, per in sorted(on_node.items()):
        taint = TAINTS.get(flavor)
        allocatable = ", ".join(f"{r}: '{quantity(r, max(v, 1))}'" for r, v in sorted(per.items()))
        node_taints = f"spec: {{taints: [{{key: key, value: {taint}, effect: NoSchedule}}]}}\n" if taint else ""
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{flavor}, labels: {{flavor: {flavor}}}}}\n"
            f"{node_taints}status: {{allocatable: {{{allocatable}, memory: 1Ti, pods: '1000'}}}}"
        )
    for name, parent, quota in row.cohorts:
        spec = [f"parentName: {parent}"] if parent else []
        if quota:
            spec.append(f"resourceGroups: {resource_groups(quota)}")
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\nspec: {{{', '.join(spec)}}}"
        )
    docs += [cluster_queue(name, q) for name, q in row.queues.items()]
    priorities = sorted({w.priority for w in row.workloads})
    docs += [
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: p{p + 1000}}}\nvalue: {p}"
        for p in priorities
    ]
    docs += [workload(w) for w in row.workloads]
    return "".join(f"---\n{d}\n" for d in docs)


def requests(w: WL, times: int) -> str:
    parts = []
    for part in w.request.split(","):
        resource, value = part.split("=")
        parts.append(f"{resource}: '{quantity(resource, amount(resource, value) * times)}'")
    return ", ".join(parts)


def workload(w: WL) -> str:
    created = f'"2026-01-01T00:{w.second // 60:02d}:{w.second % 60:02d}Z"'
    labels = "{kueue.x-k8s.io/queue-name: lq}"
    if w.pod_sets:
        return pod_set_workload(w, created, labels)
    if w.flavor:  # admitted: one Running pod with the workload's total on its flavor's node
        return (
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {pod_name(w.name)}, namespace: {w.queue}, "
            f"creationTimestamp: {created}, labels: {labels}}}\n"
            f"spec: {{nodeName: node-{w.flavor}, priorityClassName: p{w.priority + 1000}, containers: [{{name: c, "
            f"resources: {{requests: {{{requests(w, w.count)}}}}}}}]}}\nstatus: {{phase: Running, startTime: {created}}}"
        )
    partial = f", annotations: {{kueue.x-k8s.io/job-min-parallelism: '{w.min_count}'}}" if w.min_count else ""
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {pod_name(w.name)}, namespace: {w.queue}, "
        f"creationTimestamp: {created}, labels: {labels}{partial}}}\n"
        f"spec: {{parallelism: {w.count}, template: {{spec: {{priorityClassName: p{w.priority + 1000}, "
        f"containers: [{{name: c, resources: {{requests: {{{requests(w, 1)}}}}}}}]}}}}}}"
    )


def pod_set_workload(w: WL, created: str, labels: str) -> str:
    """A workload of several pod sets: admitted, one Running pod per pod set on its flavor's node (each its own
    workload here: the quota is the same); pending, a JobSet of one replicated job per pod set."""
    if all(p.flavor for p in w.pod_sets):
        return "\n---\n".join(
            workload(WL(f"{w.name}-{p.name}", w.queue, p.request, p.count, w.priority, p.flavor, w.second))
            for p in w.pod_sets
        )
    jobs = "".join(
        f"  - {{name: {p.name}, replicas: {p.count}, template: {{spec: {{parallelism: 1, template: {{spec: "
        f"{{priorityClassName: p{w.priority + 1000}, containers: [{{name: c, resources: {{requests: "
        f"{{{requests(WL(w.name, w.queue, p.request), 1)}}}}}}}]}}}}}}}}}}\n"
        for p in w.pod_sets
    )
    return (
        f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: {pod_name(w.name)}, "
        f"namespace: {w.queue}, creationTimestamp: {created}, labels: {labels}}}\nspec:\n  replicatedJobs:\n{jobs}"
    )


def pod_set_flavors(flavors: dict[str, dict[str, str]]) -> str:
    """``one: cpu=on-demand, example.com/gpu=model-a; two: cpu=spot``."""
    return "; ".join(
        f"{name}: " + ", ".join(f"{r}={f}" for r, f in sorted(given.items())) for name, given in flavors.items()
    )


@dataclass
class Outcome:
    admitted: dict[str, str] = field(default_factory=dict)  # pending workload -> flavor of its pods' node
    pipelined: set[str] = field(default_factory=set)
    preempted: set[str] = field(default_factory=set)


def run_row(tmp_path: Path, capsys: Any, row: Row, prefix: str = "") -> Outcome:
    """The row's session; ``prefix``: a document put before the row's (Kueue's Configuration)."""
    path = tmp_path / "in.yaml"
    path.write_text((f"---\n{prefix}" if prefix else "") + manifests(row))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    by_pod = {pod_name(w.name): w for w in row.workloads}
    by_pod.update({pod_name(f"{w.name}-{p.name}"): w for w in row.workloads for p in w.pod_sets})
    result = Outcome()
    for w in row.workloads:
        if w.flavor:
            continue
        prefix = f"{w.queue}/{pod_name(w.name)}-"
        bound = {k: v for k, v in doc["bindings"].items() if k.startswith(prefix)}
        waiting = {k: v for k, v in doc["pipelined"].items() if k.startswith(prefix)}
        count = row.counts.get(w.name, sum(p.count for p in w.pod_sets) or w.count)
        if len(bound) == count and w.pod_sets:  # each pod set's flavors
            entry = doc["podgroups"][f"{w.queue}/{pod_name(w.name)}"]
            given = entry.get("podSetFlavors") or {p.name: entry["flavors"] for p in w.pod_sets}
            result.admitted[w.name] = pod_set_flavors(given)
        elif len(bound) == count:
            result.admitted[w.name] = next(iter(bound.values())).removeprefix("node-")
        elif len(bound) + len(waiting) == count:
            result.pipelined.add(w.name)
    for key in doc["evictions"]:
        result.preempted.add(by_pod[key.split("/", 1)[1]].name)
    return result


ROWS: dict[str, Row] = {
    "single clusterQueue full": Row(
        BASE,
        (WL("sales/new", "sales", "cpu=1", 11), WL("sales/assigned", "sales", "cpu=1", 40, flavor="default")),
        {},
    ),
    "admit in different cohorts": Row(
        BASE,
        (WL("sales/new", "sales", "cpu=1"), WL("eng-alpha/new", "eng-alpha", "cpu=1", 51)),
        {"sales/new": "default", "eng-alpha/new": "on-demand"},
    ),
    "admit in same cohort with no borrowing": Row(
        BASE,
        (WL("eng-alpha/new", "eng-alpha", "cpu=1", 40), WL("eng-beta/new", "eng-beta", "cpu=1", 40)),
        {"eng-alpha/new": "on-demand", "eng-beta/new": "on-demand"},
    ),
    "can borrow if cohort was assigned and will not result in overadmission": Row(
        BASE,
        (WL("eng-alpha/new", "eng-alpha", "cpu=1", 45), WL("eng-beta/new", "eng-beta", "cpu=1", 55)),
        {"eng-alpha/new": "on-demand", "eng-beta/new": "on-demand"},
    ),
    "can borrow if needs reclaim from cohort in different flavor": Row(
        BASE,
        (
            WL("eng-alpha/can-reclaim", "eng-alpha", "cpu=100"),
            WL("eng-beta/needs-to-borrow", "eng-beta", "cpu=1"),
            WL("eng-beta/user-on-demand", "eng-beta", "cpu=50", flavor="on-demand"),
            WL("eng-beta/user-spot", "eng-beta", "cpu=1", flavor="spot"),
        ),
        {"eng-beta/needs-to-borrow": "on-demand"},
    ),
    "workload exceeds lending limit when borrow in cohort": Row(
        BASE,
        (WL("lend/a", "lend-b", "cpu=2", flavor="default"), WL("lend/b", "lend-b", "cpu=3")),
        {},
    ),
    "hierarchical cohort respects lending limit when borrowing": Row(
        with_base(
            **{
                "cq-lender": CQ("child", "cpu@on-demand=10//3"),
                "cq-borrower": CQ("child", "cpu@on-demand=5/10"),
            }
        ),
        (
            WL("eng-alpha/wl-existing", "cq-borrower", "cpu=5", flavor="on-demand"),
            WL("eng-alpha/wl-pending", "cq-borrower", "cpu=4"),
        ),
        {},
        cohorts=(("root", None, ""), ("child", "root", "")),
    ),
    "hierarchical cohort allows borrowing up to lending limit": Row(
        with_base(
            **{
                "cq-lender": CQ("child", "cpu@on-demand=10//5"),
                "cq-borrower": CQ("child", "cpu@on-demand=5/10"),
            }
        ),
        (
            WL("eng-alpha/wl-existing", "cq-borrower", "cpu=5", flavor="on-demand"),
            WL("eng-alpha/wl-borrowing", "cq-borrower", "cpu=5"),
        ),
        {"eng-alpha/wl-borrowing": "on-demand"},
        cohorts=(("root", None, ""), ("child", "root", "")),
    ),
    "preempt workloads in ClusterQueue and cohort": Row(
        BASE,
        (
            WL("eng-beta/preemptor", "eng-beta", "cpu=20"),
            WL("eng-alpha/use-all-spot", "eng-alpha", "cpu=100", flavor="spot"),
            WL("eng-beta/low-1", "eng-beta", "cpu=30", priority=-1, flavor="on-demand"),
            WL("eng-beta/low-2", "eng-beta", "cpu=10", priority=-2, flavor="on-demand"),
            WL("eng-alpha/borrower", "eng-alpha", "cpu=60", flavor="on-demand"),
        ),
        {},
        frozenset({"eng-alpha/borrower", "eng-beta/low-2"}),
        pipelined=frozenset({"eng-beta/preemptor"}),
    ),
    "multiple CQs need preemption": Row(
        with_base(
            **{
                "other-alpha": CQ("other", "cpu@on-demand=50/50"),
                "other-beta": CQ("other", "cpu@on-demand=50/10", LP, ANY),
            }
        ),
        (
            WL("eng-beta/preemptor", "other-beta", "cpu=1", priority=-1),
            WL("eng-alpha/pending", "other-alpha", "cpu=1", priority=1),
            WL("eng-alpha/use-all", "other-alpha", "cpu=100", flavor="on-demand"),
        ),
        {},
        frozenset({"eng-alpha/use-all"}),
        pipelined=frozenset({"eng-beta/preemptor"}),
    ),
    "cannot borrow resource not listed in clusterQueue": Row(
        BASE, (WL("eng-alpha/new", "eng-alpha", "example.com/gpu=1"),), {}
    ),
    "not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor": Row(
        BASE,
        (
            WL("eng-alpha/new", "eng-alpha", "cpu=1", 60),
            WL("eng-beta/existing", "eng-beta", "cpu=1", 45, flavor="on-demand"),
        ),
        {"eng-alpha/new": "spot"},
    ),
    "two workloads can borrow different resources from the same flavor in the same cycle": Row(
        {q: CQ("co", "r1@default=10/10,r2@default=10/10", LP, ANY) for q in ("cq1", "cq2", "cq3")},
        (WL("sales/wl1", "cq1", "r1=16", priority=-1), WL("sales/wl2", "cq2", "r2=16", priority=-2)),
        {"sales/wl1": "default", "sales/wl2": "default"},
    ),
    "two workloads can borrow the same resources from the same flavor in the same cycle if fits in the cohort "
    "quota": Row(
        {q: CQ("co", "r1@default=10/10,r2@default=10/10", LP, ANY) for q in ("cq1", "cq2", "cq3")},
        (WL("sales/wl1", "cq1", "r1=16", priority=-1), WL("sales/wl2", "cq2", "r1=14", priority=-2)),
        {"sales/wl1": "default", "sales/wl2": "default"},
    ),
    "only one workload can borrow one resources from the same flavor in the same cycle if cohort quota cannot fit": Row(
        {q: CQ("co", "r1@default=10/10,r2@default=10/10", LP, ANY) for q in ("cq1", "cq2", "cq3")},
        (WL("sales/wl1", "cq1", "r1=16", priority=-1), WL("sales/wl2", "cq2", "r1=16", priority=-2)),
        {"sales/wl1": "default"},
    ),
    "minimal preemptions when target queue is exhausted": Row(
        with_base(
            **{
                "other-alpha": CQ("other", "cpu@on-demand=2", LP, ANY),
                "other-beta": CQ("other", "cpu@on-demand=2"),
                "other-gamma": CQ("other", "cpu@on-demand=2"),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", "cpu=1", priority=-2, flavor="on-demand"),
            WL("eng-alpha/a2", "other-alpha", "cpu=1", priority=-2, flavor="on-demand"),
            WL("eng-alpha/a3", "other-alpha", "cpu=1", priority=-1, flavor="on-demand"),
            WL("eng-beta/b1", "other-beta", "cpu=1", flavor="on-demand"),
            WL("eng-beta/b2", "other-beta", "cpu=1", flavor="on-demand"),
            WL("eng-beta/b3", "other-beta", "cpu=1", flavor="on-demand"),
            WL("eng-alpha/incoming", "other-alpha", "cpu=2"),
        ),
        {},
        frozenset({"eng-alpha/a1", "eng-alpha/a2"}),
        pipelined=frozenset({"eng-alpha/incoming"}),
    ),
    "A workload is only eligible to do preemptions if it fits fully within nominal quota": Row(
        with_base(
            **{
                "other-alpha": CQ("other", "cpu@on-demand=2", LP, ANY),
                "other-beta": CQ("other", "cpu@on-demand=2"),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", "cpu=1", priority=-1, flavor="on-demand"),
            WL("eng-beta/b1", "other-beta", "cpu=1", priority=-1, flavor="on-demand"),
            WL("eng-alpha/incoming", "other-alpha", "cpu=3", priority=1),
        ),
        {},
    ),
    "multiple preemptions without borrowing": Row(
        with_base(
            **{
                "other-alpha": CQ("other", "cpu@default=2", LP),
                "other-beta": CQ("other", "cpu@default=2", LP),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", "cpu=2", flavor="default"),
            WL("eng-beta/b1", "other-beta", "cpu=2", flavor="default"),
            WL("eng-alpha/preemptor", "other-alpha", "cpu=2", priority=100),
            WL("eng-beta/preemptor", "other-beta", "cpu=2", priority=100),
        ),
        {},
        frozenset({"eng-alpha/a1", "eng-beta/b1"}),
        pipelined=frozenset({"eng-alpha/preemptor", "eng-beta/preemptor"}),
    ),
    "multiple preemptions preemption possible after earlier workload fits": Row(
        with_base(
            **{
                "other-alpha": CQ("other", "cpu@default=1", LP),
                "other-beta": CQ("other", "cpu@default=2", LP),
            }
        ),
        (
            WL("eng-beta/b1", "other-beta", "cpu=2", flavor="default"),
            WL("eng-alpha/fit", "other-alpha", "cpu=1", priority=100),
            WL("eng-beta/preemptor", "other-beta", "cpu=2", priority=99),
        ),
        {"eng-alpha/fit": "default"},
        frozenset({"eng-beta/b1"}),
        pipelined=frozenset({"eng-beta/preemptor"}),
    ),
    "not enough resources": Row(BASE, (WL("sales/new", "sales", "cpu=100"),), {}),
    "use second flavor when the first has no preemption candidates; WhenCanPreempt: MayStopSearch": Row(
        with_base(
            **{"other-alpha": CQ(None, "cpu@on-demand=50/50,cpu@spot=100/0", LP, when_can_preempt="MayStopSearch")}
        ),
        (
            WL("eng-alpha/admitted", "other-alpha", "cpu=50", flavor="on-demand"),
            WL("eng-alpha/new", "other-alpha", "cpu=20"),
        ),
        {"eng-alpha/new": "spot"},
    ),
    "flavors with mixed misconfiguration and insufficient quota": Row(
        with_base(**{"custom-cq": CQ(None, "cpu@spot-tainted=20/20,cpu@on-demand=15/15")}),
        (
            WL("sales/existing-on-demand-job", "custom-cq", "cpu=10", flavor="on-demand"),
            WL("sales/new-job", "custom-cq", "cpu=10"),
        ),
        {},
    ),
    "flavors with mixed taint mismatch and exceeding limits": Row(
        with_base(**{"custom-cq2": CQ(None, "cpu@spot-tainted=20/20,cpu@on-demand=5/5")}),
        (WL("sales/new-job2", "custom-cq2", "cpu=10"),),
        {},
    ),
    "flavors are structurally incompatible": Row(
        with_base(**{"custom-cq3": CQ(None, "cpu@spot-tainted=20/20,cpu@spot-tainted-2=5/5")}),
        (WL("sales/new-job3", "custom-cq3", "cpu=1"),),
        {},
    ),
    "cannot borrow if cohort was assigned and would result in overadmission": Row(
        BASE,
        (WL("eng-alpha/new", "eng-alpha", "cpu=1", 45), WL("eng-beta/new", "eng-beta", "cpu=1", 56)),
        {"eng-alpha/new": "on-demand"},
    ),
    # (Kueue's case turns PartialAdmission on; its pod sets set no minimum count, so it plays no part.) Kueue: one
    # gets cpu on-demand (60 of eng-beta's 50 + 10 borrowable) and gpu model-a, two (40 more, 100 > 60) cpu spot;
    # the gpu, whose quota is in one flavor only, is counted under its own name here (no flavor to choose), so only
    # cpu is named
    "assign multiple resources and flavors": Row(
        BASE,
        (WL("eng-beta/new", "eng-beta", "", pod_sets=(PS("one", f"cpu=6,{GPU}=1", 10), PS("two", "cpu=1", 40))),),
        {"eng-beta/new": "one: cpu=on-demand; two: cpu=spot"},
        hosts={"model-a": "on-demand"},
    ),
    "no overadmission while borrowing": Row(
        with_base(**{"eng-gamma": CQ("eng", "cpu@on-demand=50/10,cpu@spot=0/100", LP, ANY)}),
        (
            WL("eng-beta/new", "eng-beta", "cpu=1", 50, second=1),
            WL("eng-alpha/new-alpha", "eng-alpha", "cpu=1", second=2),
            WL("eng-gamma/new-gamma", "eng-gamma", "cpu=1", 50, second=3),
            WL(
                "eng-gamma/existing",
                "eng-gamma",
                "",
                pod_sets=(PS("borrow-on-demand", "cpu=1", 51, "on-demand"), PS("use-all-spot", "cpu=1", 100, "spot")),
                second=3,
            ),
        ),
        {"eng-beta/new": "on-demand", "eng-alpha/new-alpha": "on-demand"},
    ),
    "preemption while borrowing, workload waiting for preemption should not block a borrowing workload in another "
    "CQ": Row(
        with_base(
            **{
                "cq-shared": CQ("preemption-while-borrowing", "cpu@default=4/0"),
                "cq-a": CQ("preemption-while-borrowing", "cpu@default=0/3", reclaim=LP, borrow=LP),
                "cq-b": CQ("preemption-while-borrowing", "cpu@default=0", reclaim=LP, borrow=LP),
            }
        ),
        (
            WL("eng-alpha/a", "cq-a", "cpu=3", second=1),
            WL("eng-beta/b", "cq-b", "cpu=1", second=2),
            WL("eng-alpha/admitted_a", "cq-a", "cpu=2", flavor="default"),
        ),
        {"eng-beta/b": "default"},
    ),
    "prefer reclamation over cq priority based preemption": Row(
        with_base(
            **{
                "other-alpha": CQ("other", f"{GPU}@on-demand=10,{GPU}@spot=10", LP, LP),
                "other-beta": CQ("other", f"{GPU}@on-demand=0,{GPU}@spot=0", LP, LP),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", f"{GPU}=5", priority=50, flavor="on-demand"),
            WL("eng-beta/b1", "other-beta", f"{GPU}=5", priority=50, flavor="spot"),
            WL("eng-alpha/preemptor", "other-alpha", f"{GPU}=6", priority=100),
        ),
        {},
        frozenset({"eng-beta/b1"}),
        pipelined=frozenset({"eng-alpha/preemptor"}),
    ),
    "prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption": Row(
        with_base(
            **{
                "other-alpha": CQ("other", f"{GPU}@on-demand=10,{GPU}@spot=10", LP, LP),
                "other-beta": CQ("other", f"{GPU}@on-demand=0,{GPU}@spot=0"),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", f"{GPU}=5", priority=50, flavor="on-demand"),
            WL("eng-alpha/a2", "other-alpha", f"{GPU}=5", priority=50, flavor="spot"),
            WL("eng-beta/b1", "other-beta", f"{GPU}=5", priority=50, flavor="spot"),
            WL("eng-alpha/preemptor", "other-alpha", f"{GPU}=6", priority=100),
        ),
        {},
        frozenset({"eng-alpha/a1"}),
        pipelined=frozenset({"eng-alpha/preemptor"}),
    ),
    "prefer first preemption flavor when second flavor also requires cq preemption": Row(
        with_base(
            **{
                "other-alpha": CQ("other", f"{GPU}@on-demand=10,{GPU}@spot=10", LP, LP),
                "other-beta": CQ("other", f"{GPU}@on-demand=0,{GPU}@spot=0"),
            }
        ),
        (
            WL("eng-alpha/a1", "other-alpha", f"{GPU}=6", priority=50, flavor="on-demand"),
            WL("eng-alpha/a2", "other-alpha", f"{GPU}=5", priority=50, flavor="spot"),
            WL("eng-beta/b1", "other-beta", f"{GPU}=5", priority=9001, flavor="spot"),
            WL("eng-alpha/preemptor", "other-alpha", f"{GPU}=5", priority=100),
        ),
        {},
        frozenset({"eng-alpha/a1"}),
        pipelined=frozenset({"eng-alpha/preemptor"}),
    ),
    "workload requiring reclaimation prioritized over wl in another full cq": Row(
        with_base(
            **{
                "cq1": CQ("other", f"{GPU}@on-demand=10"),
                "cq2": CQ("other", f"{GPU}@on-demand=10", reclaim=ANY),
                "cq3": CQ("other", f"{GPU}@on-demand=0"),
            }
        ),
        (
            WL("eng-alpha/Admitted-Workload-1", "cq1", f"{GPU}=5", flavor="on-demand"),
            WL("eng-alpha/WL1", "cq1", f"{GPU}=10"),
            WL("eng-beta/WL2", "cq2", f"{GPU}=10", second=1),
            WL("eng-gamma/Admitted-Workload-2", "cq3", f"{GPU}=5", flavor="on-demand"),
            WL("eng-gamma/Admitted-Workload-3", "cq3", f"{GPU}=5", priority=1, flavor="on-demand"),
        ),
        {},
        frozenset({"eng-gamma/Admitted-Workload-2"}),
        pipelined=frozenset({"eng-beta/WL2"}),
    ),
    "in a hierarchical cohort, workload borrowing less is scheduled first": Row(
        with_base(**{"guaranteed": CQ("guaranteed", "cpu@default=0"), "best-effort": CQ("root", "cpu@default=0")}),
        (
            WL("eng-alpha/guaranteed", "guaranteed", "cpu=4"),
            WL("eng-alpha/best-effort", "best-effort", "cpu=4", priority=3),
        ),
        {"eng-alpha/guaranteed": "default"},
        cohorts=(("root", None, ""), ("guaranteed", "root", "cpu@default=4")),
    ),
    "don't assign flavor if there are no candidates for preemption": Row(
        with_base(
            **{
                "cq1": CQ(
                    "cohort",
                    "cpu@on-demand=0/1,cpu@spot=0/1",
                    LP,
                    ANY,
                    LP,
                    when_can_borrow="MayStopSearch",
                    when_can_preempt="MayStopSearch",
                ),
                "cq2": CQ("cohort", "cpu@on-demand=1,cpu@spot=1"),
            }
        ),
        (
            WL("eng-alpha/admitted", "cq2", "cpu=1", flavor="on-demand"),
            WL("eng-alpha/new", "cq1", "cpu=1", priority=100),
        ),
        {"eng-alpha/new": "spot"},
    ),
    "admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor": Row(
        with_base(
            **{"preempt-attempts-cq": CQ(None, "cpu@on-demand=1,cpu@spot=1", LP, when_can_preempt="TryNextFlavor")}
        ),
        (
            WL("eng-alpha/blocker", "preempt-attempts-cq", "cpu=1", priority=50, flavor="on-demand"),
            WL("eng-alpha/test-wl", "preempt-attempts-cq", "cpu=1", priority=100),
        ),
        {"eng-alpha/test-wl": "spot"},
    ),
    "admit workload with zero-quantity request for resource not in ClusterQueue": Row(
        BASE, (WL("sales/zero-resource-wl", "sales", f"cpu=1,{GPU}=0"),), {"sales/zero-resource-wl": "default"}
    ),
    "preempt when workload requests zero of a resource not defined in ClusterQueue": Row(
        with_base(**{"preempt-zero-gpu-cq": CQ(None, "cpu@default=4", LP)}),
        (
            WL("sales/preemptor", "preempt-zero-gpu-cq", f"cpu=2,{GPU}=0"),
            WL("sales/low-priority", "preempt-zero-gpu-cq", "cpu=4", priority=-1, flavor="default"),
        ),
        {},
        frozenset({"sales/low-priority"}),
        pipelined=frozenset({"sales/preemptor"}),
    ),
    "PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in second": Row(
        with_base(
            **{
                "pob-cq": CQ(
                    "pob-cohort",
                    "cpu@on-demand=5/0,cpu@spot=0/5",
                    LP,
                    when_can_borrow="TryNextFlavor",
                    when_can_preempt="TryNextFlavor",
                    preference="PreemptionOverBorrowing",
                ),
                "pob-lender": CQ("pob-cohort", "cpu@on-demand=0,cpu@spot=5"),
            }
        ),
        (
            WL("default/low-pob", "pob-cq", "cpu=5", priority=-1, flavor="on-demand"),
            WL("default/high-pob", "pob-cq", "cpu=5"),
        ),
        {},
        frozenset({"default/low-pob"}),
        pipelined=frozenset({"default/high-pob"}),
    ),
    "PreemptionOverBorrowing preference: select fitting second flavor over first flavor with no preemption "
    "candidates": Row(
        with_base(
            **{
                "nopc-cq": CQ(
                    "nopc-mid",
                    "cpu@on-demand=5/0,cpu@spot=0",
                    LP,
                    when_can_borrow="TryNextFlavor",
                    when_can_preempt="TryNextFlavor",
                    preference="PreemptionOverBorrowing",
                ),
                "nopc-sibling": CQ("nopc-mid", "cpu@on-demand=5,cpu@spot=0"),
            }
        ),
        (
            WL("default/admitted-nopc", "nopc-cq", "cpu=5", flavor="on-demand"),
            WL("default/pending-nopc", "nopc-cq", "cpu=5"),
        ),
        {"default/pending-nopc": "spot"},
        cohorts=(("nopc-root", None, "cpu@on-demand=0,cpu@spot=5"), ("nopc-mid", "nopc-root", "")),
    ),
    "BorrowingOverPreemption preference: borrow in second flavor instead of preempting in first": Row(
        with_base(
            **{
                "bop-cq": CQ(
                    "bop-cohort",
                    "cpu@on-demand=5/0,cpu@spot=0/5",
                    LP,
                    when_can_borrow="TryNextFlavor",
                    when_can_preempt="TryNextFlavor",
                    preference="BorrowingOverPreemption",
                ),
                "bop-lender": CQ("bop-cohort", "cpu@on-demand=0,cpu@spot=5"),
            }
        ),
        (
            WL("default/low-bop", "bop-cq", "cpu=5", priority=-1, flavor="on-demand"),
            WL("default/high-bop", "bop-cq", "cpu=5"),
        ),
        {"default/high-bop": "spot"},
    ),
    "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)": Row(
        with_base(
            **{
                "clusterqueuea": CQ("root", f"{GPU}@on-demand=2", reclaim=ANY),
                "clusterqueueb": CQ("root", f"{GPU}@on-demand=0"),
            }
        ),
        (
            WL("eng-alpha/a1-admitted", "clusterqueuea", f"{GPU}=1", flavor="on-demand"),
            WL("eng-alpha/a2-pending", "clusterqueuea", f"{GPU}=2"),
            WL("eng-beta/b1-pending", "clusterqueueb", f"{GPU}=1", second=1),  # Creation(now)
        ),
        {"eng-beta/b1-pending": "on-demand"},
    ),
    "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)": Row(
        with_base(
            **{
                "clusterqueuea": CQ("root", f"{GPU}@on-demand=2", reclaim=LP),
                "clusterqueueb": CQ("root", f"{GPU}@on-demand=0"),
            }
        ),
        (
            WL("eng-alpha/a1-admitted", "clusterqueuea", f"{GPU}=1", flavor="on-demand"),
            WL("eng-alpha/a2-pending", "clusterqueuea", f"{GPU}=2"),
            WL("eng-beta/b1-pending", "clusterqueueb", f"{GPU}=1", second=1),  # Creation(now)
        ),
        {},
    ),
    "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)": Row(
        with_base(
            **{
                "clusterqueuea": CQ("root", f"{GPU}@on-demand=2", reclaim=NEVER),
                "clusterqueueb": CQ("root", f"{GPU}@on-demand=0"),
            }
        ),
        (
            WL("eng-alpha/a1-admitted", "clusterqueuea", f"{GPU}=1", flavor="on-demand"),
            WL("eng-alpha/a2-pending", "clusterqueuea", f"{GPU}=2"),
            WL("eng-beta/b1-pending", "clusterqueueb", f"{GPU}=1", second=1),  # Creation(now)
        ),
        {},
    ),
    # partial admission (a Job's ``kueue.x-k8s.io/job-min-parallelism``): 50 pods of 2 cpu do not fit sales' 50
    # cpu; the most that do, from 20 up, is 25
    "partial admission single variable pod set": Row(
        BASE,
        (WL("sales/new", "sales", "cpu=2", 50, min_count=20),),
        {"sales/new": "default"},
        counts={"sales/new": 25},
    ),
    # all 20 GPUs fit by preempting old (10 of eng-beta's 20, lower priority): the whole Job first, not 10 pods now
    "partial admission single variable pod set, preempt first": Row(
        BASE,
        (
            WL("eng-beta/new", "eng-beta", f"{GPU}=1", 20, priority=4, min_count=10),
            WL("eng-beta/old", "eng-beta", f"{GPU}=1", 10, priority=-4, flavor="model-a"),
        ),
        {},
        frozenset({"eng-beta/old"}),
        pipelined=frozenset({"eng-beta/new"}),
    ),
    # 30 GPUs never fit eng-beta's 20 (it borrows none); the most that do, from 10 up, is 20, by preempting old
    "partial admission single variable pod set, preempt with partial admission": Row(
        BASE,
        (
            WL("eng-beta/new", "eng-beta", f"{GPU}=1", 30, priority=4, min_count=10),
            WL("eng-beta/old", "eng-beta", f"{GPU}=1", 10, priority=-4, flavor="model-a"),
        ),
        {},
        frozenset({"eng-beta/old"}),
        pipelined=frozenset({"eng-beta/new"}),
        counts={"eng-beta/new": 20},
    ),
}


KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, id=n, marks=[pytest.mark.xfail(reason=KNOWN[n], strict=True)] if n in KNOWN else [])
        for n in sorted(ROWS)
    ],
)
def test_kueue_schedule_case(tmp_path: Path, capsys: Any, name: str) -> None:
    row = ROWS[name]
    got = run_row(tmp_path, capsys, row)
    assert got.preempted == row.preempted
    assert got.admitted == row.admitted
    assert got.pipelined == set(row.pipelined)
